"""funccall tools named and shaped as the official MCP conformance suite's server scenarios ask
(`@modelcontextprotocol/conformance`: tools-*, elicitation-sep1034-defaults, elicitation-sep1330-enums, json-schema-2020-12)."""
import asyncio

import mcp_types as types

from funccall import mk_tool
from funccall.mcp import MCPContext

PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='  # 1x1 red
WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA='  # an empty WAV

def test_simple_text() -> str:  # the text
    "A simple text"
    return 'This is a simple text response for testing.'

def test_image_content() -> types.ImageContent:  # a 1x1 PNG
    "An image"
    return types.ImageContent(data=PNG, mime_type='image/png')

def test_audio_content() -> types.AudioContent:  # an empty WAV
    "A sound"
    return types.AudioContent(data=WAV, mime_type='audio/wav')

def _resource(uri: str, text: str) -> types.EmbeddedResource:
    return types.EmbeddedResource(resource=types.TextResourceContents(uri=uri, mime_type='text/plain', text=text))

def test_embedded_resource() -> types.EmbeddedResource:  # a text resource
    "An embedded resource"
    return _resource('test://embedded-resource', 'This is an embedded resource content.')

def test_multiple_content_types() -> list[types.TextContent | types.ImageContent | types.EmbeddedResource]:  # three kinds
    "Text, an image and a resource"
    return [types.TextContent(text='Multiple content types test:'), types.ImageContent(data=PNG, mime_type='image/png'),
            _resource('test://mixed-content-resource', '{"test":"data","value":123}')]

def test_error_handling() -> str:  # never
    "Always fails"
    raise RuntimeError('This tool intentionally returns an error for testing')

async def test_tool_with_progress(ctx: MCPContext) -> str:  # done
    "Report progress 0, 50, 100"
    for p in (0, 50, 100):
        await ctx.report_progress(p, 100)
        if p < 100: await asyncio.sleep(0.05)
    return 'Progress test completed'

def _said(a) -> str: return f'action={a.action}, content={a.content}'

async def test_elicitation(message: str, ctx: MCPContext) -> str:  # what the user said
    "Ask the user for a name and an email"
    schema = {'type': 'object', 'required': ['username', 'email'], 'properties': {
        'username': {'type': 'string', 'description': "User's response"}, 'email': {'type': 'string', 'description': "User's email address"}}}
    return f'User response: {_said(await ctx.elicit(message, schema))}'

async def test_elicitation_sep1034_defaults(ctx: MCPContext) -> str:  # what the user said
    "Ask with a default for each kind of field"
    schema = {'type': 'object', 'required': [], 'properties': {
        'name': {'type': 'string', 'description': 'User name', 'default': 'John Doe'},
        'age': {'type': 'integer', 'description': 'User age', 'default': 30},
        'score': {'type': 'number', 'description': 'User score', 'default': 95.5},
        'status': {'type': 'string', 'description': 'User status', 'enum': ['active', 'inactive', 'pending'], 'default': 'active'},
        'verified': {'type': 'boolean', 'description': 'Verification status', 'default': True}}}
    return f'Elicitation completed: {_said(await ctx.elicit("Please review and update the form fields with defaults", schema))}'

def _titled(*pairs): return [{'const': v, 'title': t} for v, t in pairs]

async def test_elicitation_sep1330_enums(ctx: MCPContext) -> str:  # what the user said
    "Ask with each kind of enum"
    schema = {'type': 'object', 'properties': {
        'untitledSingle': {'type': 'string', 'enum': ['option1', 'option2', 'option3']},
        'titledSingle': {'type': 'string', 'oneOf': _titled(('value1', 'First Option'), ('value2', 'Second Option'), ('value3', 'Third Option'))},
        'legacyEnum': {'type': 'string', 'enum': ['opt1', 'opt2', 'opt3'], 'enumNames': ['Option One', 'Option Two', 'Option Three']},
        'untitledMulti': {'type': 'array', 'items': {'type': 'string', 'enum': ['option1', 'option2', 'option3']}},
        'titledMulti': {'type': 'array', 'items': {'anyOf': _titled(('value1', 'First Choice'), ('value2', 'Second Choice'), ('value3', 'Third Choice'))}}}}
    return f'Elicitation completed: {_said(await ctx.elicit("Please select options", schema))}'

# a tool defined by its JSON Schema, as a proxy of another server's tool is: served exactly as written, `$schema` included
# (a schema made from Python annotations has none: 2020-12 is MCP's default dialect)
SCHEMA_2020_12 = {'$schema': 'https://json-schema.org/draft/2020-12/schema', 'type': 'object',
                  '$defs': {'address': {'type': 'object', 'properties': {'street': {'type': 'string'}, 'city': {'type': 'string'}}}},
                  'properties': {'name': {'type': 'string'}, 'address': {'$ref': '#/$defs/address'}},
                  'additionalProperties': False}
json_schema_2020_12_tool = mk_tool(lambda name, /, **args: f"{args.get('name')} at {args.get('address')}",
                                   {'name': 'json_schema_2020_12_tool', 'description': 'Tool with JSON Schema 2020-12 features',
                                    'inputSchema': SCHEMA_2020_12})

TOOLS = [test_simple_text, test_image_content, test_audio_content, test_embedded_resource, test_multiple_content_types,
         test_error_handling, test_tool_with_progress, test_elicitation, test_elicitation_sep1034_defaults,
         test_elicitation_sep1330_enums, json_schema_2020_12_tool]
