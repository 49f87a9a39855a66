"""funccall's MCP client as complete as the server: answering a server's questions and sampling requests, headers and
auth for servers behind a gate, prefixes so several servers share one toolbox, tolerating structured output that
doesn't fit, errors in the server's words, a byte stream that breaks, and `funccall mcp list URL`."""
import asyncio, contextlib, io, json, sys, time, warnings
from pathlib import Path

import pytest

pytest.importorskip('mcp')
import httpx2  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server import Server  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from funccall import Tool, Toolbox, call_func  # noqa: E402
from funccall.mcp import MCPClient, MCPConnectionError, MCPToolError, mk_asgi_app, mk_server  # noqa: E402

SERVERS = Path(__file__).parent / 'mcp_servers'
sys.path.insert(0, str(SERVERS))
from loopback import serving  # noqa: E402

T = 20

def _deleter(log):
    def delete(path: str) -> str:  # what was deleted
        "Delete a file"
        log.append(path)
        return f'deleted {path}'
    return Tool(delete, requires_confirmation=True)

def add(a: int, b: int = 1) -> int:  # the sum
    "Add two numbers"
    return a + b

def mul(a: int, b: int = 2) -> int:  # the product
    "Multiply two numbers"
    return a * b

# --- the server's questions and sampling requests ------------------------------------------------------

def test_funccalls_client_confirms_funccalls_tools():
    log, asked = [], []
    def yes(message, schema):
        asked.append((message, list(schema['properties'])))
        return {'confirm': True}
    async def no(message, schema): return None  # async callbacks too; None declines
    with MCPClient(mk_server([_deleter(log)]), timeout=T, on_elicit=yes) as c:
        assert c.tools()['delete']('a.txt') == 'deleted a.txt'
    with MCPClient(mk_server([_deleter(log)]), timeout=T, on_elicit=no) as c:
        with pytest.raises(MCPToolError, match='declined'): c.tools()['delete']('b.txt')
    with MCPClient(mk_server([_deleter(log)]), timeout=T) as c:  # no callback: the client declares no elicitation
        with pytest.raises(MCPToolError, match="can't ask"): c.tools()['delete']('c.txt')
    assert log == ['a.txt'] and asked == [("Allow delete(path='a.txt')?", ['confirm'])]

def test_a_callback_over_stdio_on_a_server_that_never_asks():
    cmd = [sys.executable, '-m', 'funccall', 'mcp', 'serve', f'{SERVERS / "plain_tools.py"}']
    with MCPClient(cmd, timeout=T, on_elicit=lambda m, s: {'confirm': True}) as c:
        assert c.tools()['add'](1) == 3  # a callback on a server that never asks changes nothing

def _sampling_server() -> Server:
    "A server whose tool asks the client's model (sampling) through a 2026-07-28 input-required round trip"
    tool = types.Tool(name='ask_model', description='Ask the model', input_schema={'type': 'object', 'properties': {'q': {'type': 'string'}}})
    async def list_tools(ctx, params): return types.ListToolsResult(tools=[tool])
    async def call_tool(ctx, params):
        got = (params.input_responses or {}).get('s')
        if isinstance(got, types.CreateMessageResult): return types.CallToolResult(content=[types.TextContent(text=f'model said {got.content.text}')])
        req = types.CreateMessageRequest(params=types.CreateMessageRequestParams(
            messages=[types.SamplingMessage(role='user', content=types.TextContent(text=params.arguments['q']))], max_tokens=10))
        return types.InputRequiredResult(request_state='s', input_requests={'s': req})
    return Server('sampler', on_list_tools=list_tools, on_call_tool=call_tool)

def test_sampling_callback_answers_the_servers_model_requests():
    seen = []
    def on_sample(params):
        seen.append(params.messages[0].content.text)
        return 'forty-two'
    with MCPClient(_sampling_server(), timeout=T, on_sample=on_sample) as c:
        assert c.tools()['ask_model'](q='meaning?') == 'model said forty-two'
    assert seen == ['meaning?']

# --- headers, auth ------------------------------------------------------------------------------------------

def _gated(app, header: str, value: str):
    "`app` behind a gate: requests without `header: value` get 401"
    async def gate(scope, receive, send):
        if scope['type'] == 'http' and dict(scope['headers']).get(header.encode()) != value.encode():
            await send({'type': 'http.response.start', 'status': 401, 'headers': [(b'content-type', b'text/plain')]})
            return await send({'type': 'http.response.body', 'body': b'no key'})
        await app(scope, receive, send)
    return gate

def test_headers_reach_a_gated_server():
    with serving(_gated(mk_asgi_app([add]), 'x-api-key', 'k1')) as url:
        with MCPClient(url, timeout=T, headers={'x-api-key': 'k1'}) as c: assert c.tools()['add'](2) == 3
        with pytest.raises(MCPConnectionError, match='HTTP 401 .*: no key'), MCPClient(url, timeout=T): pass

def test_auth_is_an_httpx_auth_such_as_the_sdks_oauth_provider():
    with serving(_gated(mk_asgi_app([add]), 'authorization', 'Basic dTpw')) as url:  # u:p
        with MCPClient(url, timeout=T, auth=httpx2.BasicAuth('u', 'p')) as c: assert c.tools()['add'](4) == 5

# --- prefixes: several servers in one toolbox ---------------------------------------------------------------

def test_prefixes_let_several_servers_share_one_toolbox():
    with MCPClient(mk_server([add, mul]), timeout=T, prefix='one_') as a, MCPClient(mk_server({'add': mul}), timeout=T, prefix='two_') as b:
        box = Toolbox([*a.tools().values(), *b.tools().values()])
        assert list(box.tools) == ['one_add', 'one_mul', 'two_add']
        assert [s['name'] for s in a.schemas()] == ['one_add', 'one_mul']
        assert box.call('one_add', {'a': 2}).value == 3 and box.call('two_add', {'a': 2}).value == 4
        assert call_func('one_mul', {'a': 3}, a.tools()) == 6

# --- output that doesn't fit, errors in the server's words ---------------------------------------------------

def _misfit_server() -> Server:
    "A server whose structured output breaks its own output schema, and one tool that answers with a JSON-RPC error"
    out = {'type': 'object', 'properties': {'n': {'type': 'integer'}}, 'required': ['n']}
    tools = [types.Tool(name='count', description='Count', input_schema={'type': 'object'}, output_schema=out),
             types.Tool(name='refuse', description='Refuse', input_schema={'type': 'object'})]
    async def list_tools(ctx, params): return types.ListToolsResult(tools=tools)
    async def call_tool(ctx, params):
        if params.name == 'refuse': raise MCPError(types.INVALID_PARAMS, 'the server says no: quota spent')
        return types.CallToolResult(content=[types.TextContent(text='three')], structured_content={'n': 'three'})
    return Server('misfit', on_list_tools=list_tools, on_call_tool=call_tool)

def test_output_that_does_not_fit_raises_warns_or_passes():
    with MCPClient(_misfit_server(), timeout=T) as c:
        with pytest.raises(MCPToolError, match='Invalid structured content'): c.tools()['count']()
    with MCPClient(_misfit_server(), timeout=T, validate_output='warn') as c:
        with pytest.warns(UserWarning, match='Invalid structured content'): assert c.tools()['count']() == {'n': 'three'}
    with MCPClient(_misfit_server(), timeout=T, validate_output=False) as c, warnings.catch_warnings():
        warnings.simplefilter('error')
        assert c.tools()['count']() == {'n': 'three'}
    with pytest.raises(ValueError, match='validate_output'): MCPClient(_misfit_server(), validate_output='maybe')

def test_a_protocol_error_is_an_mcp_tool_error_in_the_servers_words():
    with MCPClient(_misfit_server(), timeout=T) as c:
        with pytest.raises(MCPToolError, match='^the server says no: quota spent$') as e: c.tools()['refuse']()
    assert e.value.code == types.INVALID_PARAMS and e.value.tool == 'refuse'

def test_a_reply_that_is_not_utf8_fails_the_pending_call_at_once_and_closes_cleanly():
    start = time.monotonic()
    with MCPClient([sys.executable, str(SERVERS / 'bad_bytes_server.py')], timeout=T) as c:
        assert c.tools()['echo'](t='x') == 'x'
        with pytest.raises(MCPConnectionError, match='garble'): c.tools()['garble']()
        with pytest.raises(MCPConnectionError) as e: c.tools()['echo'](t='y')  # the connection is gone: no waiting either
        assert isinstance(e.value, ConnectionError) and isinstance(e.value, MCPError)
    assert time.monotonic() - start < T / 2  # not the call's timeout: at once, and leaving `with` raised nothing

async def _async_bad():
    async with MCPClient([sys.executable, str(SERVERS / 'bad_bytes_server.py')], timeout=T) as c:
        with pytest.raises(MCPConnectionError): await c.tools()['garble']()

def test_the_async_client_too():
    asyncio.run(asyncio.wait_for(_async_bad(), T))

# --- the command line -----------------------------------------------------------------------------------------

def test_funccall_mcp_list_url():
    from funccall.cli import main
    out = io.StringIO()
    with serving(mk_asgi_app([add, mul])) as url, contextlib.redirect_stdout(out): assert main(['mcp', 'list', url]) == 0
    assert [s['name'] for s in json.loads(out.getvalue())] == ['add', 'mul']
