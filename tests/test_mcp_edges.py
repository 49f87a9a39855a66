"Issue 30's server edges, each against the real client that showed it: the SDK's `Client`, fastmcp's `Client`, openai-agents' strict conversion, the command line"
import asyncio, json, math, subprocess, sys, textwrap
from dataclasses import dataclass
from typing import NamedTuple, TypedDict

import pytest

pytest.importorskip('mcp')
import jsonschema  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from funccall import Tool  # noqa: E402
from funccall.mcp import MCPContext, mk_server  # noqa: E402

T = 30  # seconds: a generous bound for one in-process conversation

def arun(coro): return asyncio.run(asyncio.wait_for(coro, T))

@dataclass
class Stop:
    "A stop on the way"
    city: str  # where

class Trip(TypedDict):
    stops: list[Stop]  # the stops

class Seat(NamedTuple):
    row: int  # the row

class Note(BaseModel):  # pydantic ignores a key it doesn't have: its schema stays open
    text: str

def not_a_number(x: float) -> float:
    "Gives NaN"
    return math.nan

def infinite(x: int) -> dict:
    "Gives a dict holding infinity"
    return {'big': math.inf}

def fine(x: float) -> float:
    "Gives x"
    return x

def word(x: int) -> str:
    "Gives a word"
    return 'word' * x

def with_ctx(x: int, ctx: MCPContext) -> int:
    "Uses its context"
    return x

def book(trip: Trip, seat: Seat, note: Note) -> str:
    "Books a trip"
    return f'{len(trip["stops"])} {seat.row} {note.text}'

def pictures(n: int) -> list[types.TextContent | types.ImageContent]:
    "Pictures and words"
    return [types.TextContent(text='a picture'), types.ImageContent(data='iVBORw0K', mime_type='image/png')][:n]

SERVER = mk_server([not_a_number, infinite, fine, word, with_ctx, book, pictures])

async def _session(fn):
    async with Client(SERVER) as c: return await fn(c)

async def _tools(c) -> dict: return {t.name: t for t in (await c.list_tools()).tools}

@pytest.mark.parametrize('name', ['not_a_number', 'infinite'])
def test_nan_is_an_error_result_the_sdk_client_reads(name):  # was {"result": null}, isError false: "Invalid structured content"
    r = arun(_session(lambda c: c.call_tool(name, {'x': 1})))  # the SDK client checks structured content against the schema
    assert r.is_error and r.structured_content is None
    assert r.content[0].text == f"The value of tool {name!r} can't be sent as JSON: it holds NaN or infinity, which JSON has no number for"

def test_a_finite_float_still_goes_as_structured_content():
    r = arun(_session(lambda c: c.call_tool('fine', {'x': 1.5})))
    assert not r.is_error and r.structured_content == {'result': 1.5}

def test_an_injected_context_leaves_nothing_in_the_schema_and_openai_agents_strict_takes_it():
    from agents.strict_schema import ensure_strict_json_schema
    tools = arun(_session(_tools))
    s = tools['with_ctx'].input_schema
    assert '$defs' not in s and 'MCPContext' not in json.dumps(s)
    strict = ensure_strict_json_schema(json.loads(json.dumps(s)), _reject_open_objects=True)  # what openai-agents' MCPUtil runs
    assert strict['required'] == ['x']
    r = arun(_session(lambda c: c.call_tool('with_ctx', {'x': 3})))
    assert not r.is_error and r.structured_content == {'result': 3}

def test_fastmcp_client_data_is_the_bare_value(tmp_path):  # was Root(result='...')
    fastmcp = pytest.importorskip('fastmcp', reason='fastmcp is in the dev extra')
    from fastmcp.client.transports import StdioTransport
    (tmp_path / 'few.py').write_text('def word(x: int) -> str:\n    "Gives a word"\n    return "word" * x\n\n'
                                     'def fine(x: float) -> float:\n    "Gives x"\n    return x\n')
    served = StdioTransport(sys.executable, ['-m', 'funccall', 'mcp', 'serve', str(tmp_path / 'few.py')], cwd=str(tmp_path))
    async def main():
        async with fastmcp.Client(served) as c:
            return await c.call_tool('word', {'x': 2}), await c.call_tool('fine', {'x': 2.5})
    w, f = arun(main())
    assert w.data == 'wordword' and f.data == 2.5

def test_nested_classes_that_refuse_unknown_keys_say_so_in_the_served_schema():
    tools = arun(_session(_tools))
    s = tools['book'].input_schema
    for nm in ('Stop', 'Trip', 'Seat'): assert s['$defs'][nm]['additionalProperties'] is False, nm
    assert 'additionalProperties' not in s['$defs']['Note']  # pydantic takes (and drops) other keys: the schema must not refuse them
    good = {'trip': {'stops': [{'city': 'Oslo'}]}, 'seat': {'row': 3}, 'note': {'text': 'hi', 'more': 1}}
    jsonschema.validate(good, s)
    for bad in ({**good, 'trip': {'stops': [{'city': 'Oslo', 'extra': 1}]}}, {**good, 'seat': {'row': 3, 'col': 1}},
                {**good, 'trip': {'stops': [], 'extra': 1}}):
        with pytest.raises(jsonschema.ValidationError): jsonschema.validate(bad, s)  # the schema refuses ...
        r = arun(_session(lambda c, bad=bad: c.call_tool('book', bad)))
        assert r.is_error and 'unknown field' in r.content[0].text  # ... what the server refuses
    r = arun(_session(lambda c: c.call_tool('book', good)))
    assert not r.is_error and r.content[0].text == '1 3 hi'

def test_mcp_content_returns_get_no_output_schema_no_structured_copy_and_no_type_names():
    tools = arun(_session(_tools))
    t = tools['pictures']
    assert t.output_schema is None and t.description == 'Pictures and words'
    assert 'Content' not in t.description
    r = arun(_session(lambda c: c.call_tool('pictures', {'n': 2})))
    assert [c.type for c in r.content] == ['text', 'image'] and r.structured_content is None
    assert 'iVBORw0K' not in json.dumps(r.model_dump(mode='json', by_alias=True, exclude={'content'}))  # the payload once, in content

TOOLS = textwrap.dedent('''
    from funccall.mcp import MCPContext

    def shout(text: str, ctx: MCPContext) -> str:
        "Shout `text`"
        ctx.report_progress(1, 2)
        ctx.log('shouting')
        return text.upper()

    async def whisper(text: str, ctx: MCPContext) -> str:
        "Whisper `text`"
        await ctx.report_progress(1, 2)
        assert not ctx.can_elicit and not ctx.cancelled
        return text.lower()
''')

def _cli(tmp_path, *args) -> subprocess.CompletedProcess:
    (tmp_path / 'ctxtools.py').write_text(TOOLS)
    return subprocess.run([sys.executable, '-m', 'funccall', *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)

def test_the_command_line_treats_mcp_context_as_injected_like_the_server(tmp_path):
    p = _cli(tmp_path, 'schema', 'ctxtools.py')
    assert p.returncode == 0, p.stderr
    for s in json.loads(p.stdout): assert list(s['input_schema']['properties']) == ['text'] and s['input_schema']['required'] == ['text']
    p = _cli(tmp_path, 'check', 'ctxtools.py')
    assert 'ctx' not in p.stdout, p.stdout
    assert _cli(tmp_path, 'call', 'ctxtools.py:shout', '{"text": "hi"}').stdout.strip() == 'HI'
    assert _cli(tmp_path, 'call', 'ctxtools.py:whisper', '{"text": "HI"}').stdout.strip() == 'hi'
    p = _cli(tmp_path, 'call', 'ctxtools.py:shout', '{"text": "hi", "ctx": {}}')  # the model can't send the context itself
    assert p.returncode == 1 and 'ctx' in p.stdout

def test_a_context_outside_a_served_call_asks_nothing():
    ctx = MCPContext()
    with pytest.raises(RuntimeError, match='no MCP client to ask'): ctx.elicit('Sure?', {'type': 'object', 'properties': {}})
    assert ctx.report_progress(1) is None and ctx.log('x') is None and not ctx.can_elicit

def test_served_schemas_are_what_tool_says():
    assert '$defs' not in Tool(with_ctx, inject='ctx').schema['input_schema']  # the Tool itself drops the injected class's def

# --- the MCP Inspector's CLI (npm, installed into the test run's own folder) ------------------------------------

INSPECTOR = '@modelcontextprotocol/inspector@2.12.0'

@pytest.fixture(scope='module')
def inspector(tmp_path_factory):
    import shutil
    if shutil.which('npm') is None or shutil.which('node') is None: pytest.skip('npm and node are needed for the MCP Inspector')
    d = tmp_path_factory.mktemp('inspector')
    p = subprocess.run(['npm', 'install', '--silent', '--no-audit', '--no-fund', '--prefix', str(d), INSPECTOR],
                       capture_output=True, text=True, timeout=600)
    if p.returncode: pytest.skip(f"npm could not install {INSPECTOR} (offline?): {p.stderr[-300:]}")
    return d / 'node_modules' / '.bin' / 'mcp-inspector'

EDGE_TOOLS = textwrap.dedent('''
    import math
    from dataclasses import dataclass
    import mcp_types as types
    from funccall.mcp import MCPContext

    @dataclass
    class Stop:
        "A stop"
        city: str  # where

    def not_a_number(x: float) -> float:
        "Gives NaN"
        return math.nan

    def pictures(n: int) -> list[types.TextContent | types.ImageContent]:
        "Pictures and words"
        return [types.TextContent(text='a picture'), types.ImageContent(data='iVBORw0KGgo=', mime_type='image/png')][:n]

    def route(stops: list[Stop], ctx: MCPContext) -> str:
        "Plans a route"
        return ' -> '.join(s.city for s in stops)
''')

def _inspect(inspector, tmp_path, *args) -> subprocess.CompletedProcess:
    (tmp_path / 'edgetools.py').write_text(EDGE_TOOLS)
    return subprocess.run([str(inspector), '--cli', sys.executable, '-m', 'funccall', 'mcp', 'serve', 'edgetools.py', *args],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)

@pytest.mark.npm  # installs the Inspector with npm
def test_the_inspector_reads_nan_as_an_error_result_and_finds_nothing_to_report_in_strict_mode(inspector, tmp_path):
    p = _inspect(inspector, tmp_path, '--method', 'tools/call', '--tool-name', 'not_a_number', '--tool-arg', 'x=1')
    assert 'must be number' not in p.stdout + p.stderr  # what the Inspector said of {"result": null}
    assert '"isError": true' in p.stdout and "it holds NaN or infinity, which JSON has no number for" in p.stdout
    p = _inspect(inspector, tmp_path, '--method', 'tools/list', '--strict')
    assert p.returncode == 0 and p.stderr.strip() == '', p.stderr  # no portability problem, of any severity
    tools = {t['name']: t for t in json.loads(p.stdout)['tools']}
    assert 'outputSchema' not in tools['pictures'] and tools['route']['inputSchema']['$defs']['Stop']['additionalProperties'] is False
