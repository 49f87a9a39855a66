"""Results that fit their schema, always: funccall's server through the SDK client, which checks every structured
result against the tool's `outputSchema` and raises when it doesn't fit; and the served `inputSchema` saying what
the server refuses."""
import asyncio
from dataclasses import dataclass

import pytest

pytest.importorskip('mcp')
import jsonschema  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field  # noqa: E402
from pydantic.alias_generators import to_camel  # noqa: E402

from funccall import Tool  # noqa: E402
from funccall.mcp import MCPClient, mk_server, output_schema  # noqa: E402

T = 20
PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

def arun(coro): return asyncio.run(asyncio.wait_for(coro, T))

class Spot(BaseModel):
    x_pos: int = Field(alias='xPos')  # across

class Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel)
    first_name: str
    middle_name: str | None = None

@dataclass
class Pin:
    "A pin on a map"
    spot: Spot     # where
    label: str     # what

def spot(x: int) -> Spot:  # the spot
    "A spot"
    return Spot(xPos=x)

def camel(name: str) -> Camel:  # the person
    "A person"
    return Camel(firstName=name)

def pin(x: int) -> Pin:  # the pin
    "A pin: a dataclass holding a model with an alias"
    return Pin(Spot(xPos=x), 'here')

def spots(n: int) -> list[Spot]:  # the spots
    "Spots"
    return [Spot(xPos=i) for i in range(n)]

def images(n: int) -> list[types.ImageContent]:  # the images
    "Images"
    return [types.ImageContent(data=PNG, mime_type='image/png') for _ in range(n)]

def image() -> types.ImageContent:  # one image
    "One image"
    return types.ImageContent(data=PNG, mime_type='image/png')

def maybe(x: int) -> dict | None:  # a dict, or nothing
    "Maybe a dict"
    return {'x': x} if x else None

def broken(x: int) -> dict:  # promised a dict
    "Returns None despite its annotation"
    return None

def liar(x: int) -> int:  # promised an int
    "Returns text despite its annotation"
    return 'seven'

def built(x: int) -> types.CallToolResult:  # the result, as MCP has it
    "Builds its own MCP result"
    return types.CallToolResult(content=[types.TextContent(text=str(x))])

def open_kw(a: int, **extra: int) -> int:  # a
    "Takes other integers, in `extra`"
    return a + sum(extra.values())

SERVER = mk_server([spot, camel, pin, spots, images, image, maybe, broken, liar, built, open_kw])

async def _both(name, args, mode='auto'):
    async with Client(SERVER, mode=mode) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        return tools[name], await c.call_tool(name, args)

@pytest.mark.parametrize('mode', ['auto', 'legacy'])
@pytest.mark.parametrize('name,args,structured', [
    ('spot', {'x': 1}, {'xPos': 1}),                                   # a field alias: sent as the schema spells it
    ('camel', {'name': 'Ada'}, {'firstName': 'Ada', 'middleName': None}),  # an alias generator
    ('pin', {'x': 2}, {'spot': {'xPos': 2}, 'label': 'here'}),         # a model inside a dataclass
    ('spots', {'n': 2}, {'result': [{'xPos': 0}, {'xPos': 1}]}),
    ('maybe', {'x': 0}, {'result': None}),                             # None for an optional return
    ('maybe', {'x': 3}, {'result': {'x': 3}}),
])
def test_structured_content_is_made_as_the_output_schema_says(name, args, structured, mode):
    tool, r = arun(_both(name, args, mode))  # the SDK client validates structured content against the output schema
    assert not r.is_error and r.structured_content == structured
    jsonschema.validate(r.structured_content, tool.output_schema)

@pytest.mark.parametrize('mode', ['auto', 'legacy'])
def test_mcp_content_goes_as_content_only(mode):  # no outputSchema, no structured copy of the base64 payload (issue 30, 8)
    tool, r = arun(_both('images', {'n': 2}, mode))
    assert [(c.type, c.data, c.mime_type) for c in r.content] == [('image', PNG, 'image/png')] * 2
    assert tool.output_schema is None and r.structured_content is None
    tool, r = arun(_both('image', {}, mode))
    assert [c.type for c in r.content] == ['image'] and r.structured_content is None and tool.output_schema is None

def test_funccalls_client_gets_the_images_back():
    with MCPClient(SERVER, timeout=T) as c:
        assert c.tools()['images'](2) == [{'type': 'image', 'data': PNG, 'mimeType': 'image/png'}] * 2
        assert c.tools()['images'](1) == {'type': 'image', 'data': PNG, 'mimeType': 'image/png'}  # content: one item on its own

@pytest.mark.parametrize('name,args,words', [
    ('broken', {'x': 1}, "expected an object, got null"),
    ('liar', {'x': 1}, "expected an integer"),
])
def test_a_value_that_breaks_its_own_schema_is_an_error_result(name, args, words):
    tool, r = arun(_both(name, args))
    assert r.is_error and r.structured_content is None
    assert r.content[0].text.startswith(f"The value of tool {name!r} does not fit its output schema") and words in r.content[0].text

def test_served_schemas_hold_no_sdk_internal_keys_and_no_protocol_types():
    async def main():
        async with Client(SERVER) as c: return {t.name: t for t in (await c.list_tools()).tools}
    tools = arun(main())
    for t in tools.values():
        if t.output_schema: assert t.output_schema.get('x-fastmcp-wrap-result', False) == ('result' in t.output_schema.get('properties', {}))
        assert 'CallToolResult' not in t.description and 'ImageContent' not in t.description
    assert tools['built'].description == 'Builds its own MCP result' and tools['built'].output_schema is None
    assert tools['images'].description == 'Images'
    assert tools['spots'].description.endswith('Returns:\n- the spots (type: array[Spot])')  # a return comment still reads as one
    assert output_schema(Tool(spots)) == tools['spots'].output_schema

def test_input_schema_refuses_what_the_call_refuses():
    async def main():
        async with Client(SERVER) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            return (tools, await c.call_tool('spot', {'x': 1, 'y': 2}), await c.call_tool('open_kw', {'a': 1, 'extra': {'b': 2}}),
                    await c.call_tool('open_kw', {'a': 1, 'b': 2}))
    tools, extra, kw, flat = arun(main())
    assert tools['spot'].input_schema['additionalProperties'] is False
    assert tools['open_kw'].input_schema['additionalProperties'] is False  # **extra: int is a property, `extra`
    assert tools['open_kw'].input_schema['properties']['extra']['additionalProperties'] == {'type': 'integer'}
    assert extra.is_error and "'y'" in extra.content[0].text
    assert not kw.is_error and kw.structured_content == {'result': 3}
    assert flat.is_error and "'b'" in flat.content[0].text  # never slipped into `**extra`
    jsonschema.validate({'x': 1}, tools['spot'].input_schema)
    with pytest.raises(jsonschema.ValidationError): jsonschema.validate({'x': 1, 'y': 2}, tools['spot'].input_schema)
