"""MCP both ways, over real stdio processes: the SDK's servers through funccall's client, funccall's server through
the SDK's client, funccall's server through funccall's client, and an installed server (`mcp-server-time`)."""
import asyncio, inspect, socket, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Literal

import jsonschema
import pytest

pytest.importorskip('mcp')
import anyio  # noqa: E402
from anyio.from_thread import start_blocking_portal  # noqa: E402
from mcp import Client, MCPError, StdioServerParameters  # noqa: E402

from funccall import ToolInputError, ToolNotFound, call_func, call_func_async, get_schema  # noqa: E402
from funccall.mcp import MCPClient, MCPToolError, mk_server  # noqa: E402

SERVERS = Path(__file__).parent / 'mcp_servers'
sys.path.insert(0, str(SERVERS))
import plain_tools  # noqa: E402
import sdk_server  # noqa: E402

T = 20  # seconds: the most any one exchange with a server may take
PLAIN = [getattr(plain_tools, nm) for nm in plain_tools.__all__]
SDK_CMD = [sys.executable, str(SERVERS / 'sdk_server.py')]
OURS_CMD = [sys.executable, '-m', 'funccall.mcp', 'serve', str(SERVERS / 'plain_tools.py')]

def arun(coro):
    "Run `coro` to completion within `T` seconds"
    return asyncio.run(asyncio.wait_for(coro, T))

@pytest.fixture(scope='module')
def sdk():
    "funccall's sync client, connected to the SDK-written test server"
    with MCPClient(SDK_CMD, timeout=T) as c: yield c

@pytest.fixture(scope='module')
def ours():
    "funccall's sync client, connected to funccall's own server serving `plain_tools`"
    with MCPClient(OURS_CMD, timeout=T) as c: yield c

@pytest.fixture(scope='module')
def raw():
    "The SDK's own client, connected to funccall's server; `raw(method, *args)` calls it from sync code"
    async def timed(fn, *args):
        with anyio.fail_after(T): return await fn(*args)
    params = StdioServerParameters(command=OURS_CMD[0], args=OURS_CMD[1:])
    with ExitStack() as stack:
        portal = stack.enter_context(start_blocking_portal())
        c = stack.enter_context(portal.wrap_async_context_manager(Client(params, read_timeout_seconds=T)))
        yield lambda method, *args: portal.call(partial(timed, getattr(c, method), *args))

# --- the SDK's server, through funccall's client --------------------------------------------------------

def test_tools_are_callables_with_the_schemas_signatures(sdk):
    ts = sdk.tools()
    assert list(ts) == [t.name for t in sdk_server.TOOLS]
    assert str(inspect.signature(ts['greet'])) == "(name: str, *, greeting: str = 'Hello')"
    assert str(inspect.signature(ts['odd-names'])) == '(user_id: str, *, class_: int = None, _2nd: bool = None, self: str = None)'
    assert inspect.signature(ts['order']).parameters['size'].annotation == Literal['S', 'M', 'L']
    assert ts['echo'].__doc__ == 'Echo `text` back' and ts['odd-names'].__name__ == 'odd-names'

def test_schemas_are_the_servers_in_funccalls_format(sdk):
    assert sdk.schemas() == [{'name': t.name, 'description': t.description, 'input_schema': t.input_schema} for t in sdk_server.TOOLS]

def test_text_comes_back_as_str(sdk):
    assert sdk.tools()['echo']('hi') == 'hi'

def test_structured_content_comes_back_as_its_value(sdk):
    assert sdk.tools()['stats']([1, 2, 3]) == {'n': 3, 'mean': 2.0}

def test_error_result_raises_mcp_tool_error(sdk):
    with pytest.raises(MCPToolError, match='^boom: why not$') as e: sdk.tools()['fail']('why not')
    assert isinstance(e.value, RuntimeError) and e.value.tool == 'fail'

def test_property_called_name_is_an_argument(sdk):
    assert sdk.tools()['greet'](name='Bob') == 'Hello, Bob!'
    assert sdk.tools()['greet']('Al', greeting='Hi') == 'Hi, Al!'

def test_odd_property_names_are_sent_as_the_schema_spells_them(sdk):
    assert sdk.tools()['odd-names']('u', class_=2, _2nd=True, self='me') == {'user-id': 'u', 'class': 2, '2nd': True, 'self': 'me'}

def test_enum_and_nested_object_are_checked_before_sending(sdk):
    order = sdk.tools()['order']
    assert order({'sku': 'a', 'qty': 3}, 'M') == {'item': {'sku': 'a', 'qty': 3}, 'size': 'M'}  # checked, then sent
    with pytest.raises(ToolInputError, match="'S', 'M', 'L'"): order({'sku': 'a'}, 'XL')
    with pytest.raises(ToolInputError, match="'sku'"): order({'qty': 2}, 'S')
    with pytest.raises(ToolInputError, match='missing'): order(size='S')

def test_image_and_several_items_come_back_as_a_list(sdk):
    assert sdk.tools()['picture']() == [{'type': 'image', 'data': sdk_server.PNG, 'mimeType': 'image/png'}, 'a tiny image']

def test_no_content_is_none(sdk):
    assert sdk.tools()['nothing']() is None

def test_tools_are_a_namespace_for_call_func(sdk):
    ns = sdk.tools()
    assert call_func('odd-names', {'user-id': 'u'}, ns) == {'user-id': 'u'}
    assert call_func('greet', '{"name": "Al"}', ns) == 'Hello, Al!'
    assert 'boom: no' in call_func('fail', {'why': 'no'}, ns, raise_on_err=False)
    with pytest.raises(ToolNotFound): call_func('nope', {}, ns)

def test_sync_tools_may_be_called_from_many_threads(sdk):
    with ThreadPoolExecutor(8) as ex: res = list(ex.map(sdk.tools()['echo'], map(str, range(32))))
    assert res == list(map(str, range(32)))

def test_async_client_gives_async_tools():
    async def main():
        async with MCPClient(SDK_CMD, timeout=T) as c:
            ts = c.tools()
            assert inspect.iscoroutinefunction(ts['echo'])
            assert await ts['greet'](name='Bob') == 'Hello, Bob!'
            assert await call_func_async('stats', {'values': [2, 4]}, ts) == {'n': 2, 'mean': 3.0}
            with pytest.raises(MCPToolError, match='boom'): await ts['fail']('x')
            with pytest.raises(ToolInputError): await ts['order']({'sku': 'a'}, 'XL')
        return ts
    ts = arun(main())
    with pytest.raises(RuntimeError, match='closed'): arun(ts['echo']('late'))

def test_a_server_that_exits_raises_the_sdks_error():
    with pytest.raises(MCPError, match='Connection closed'), MCPClient([sys.executable, '-c', 'pass'], timeout=T): pass
    with pytest.raises(MCPError, match='Connection closed'): arun(MCPClient([sys.executable, '-c', 'pass'], timeout=T).__aenter__())

def test_a_command_line_is_split_like_a_shells():
    s = MCPClient("mcp-server-time --local-timezone 'Europe/Lisbon'").server
    assert (s.command, s.args) == ('mcp-server-time', ['--local-timezone', 'Europe/Lisbon'])
    assert MCPClient('http://localhost:8000/mcp').server == 'http://localhost:8000/mcp'

def test_tools_need_an_open_connection():
    with pytest.raises(RuntimeError, match='not connected'): MCPClient(SDK_CMD).tools()

# --- funccall's server, through the SDK's client --------------------------------------------------------

def _served(s: dict) -> dict:
    "Input schema `s` as served: saying what the call refuses, arguments the function doesn't take and keys a dataclass doesn't have"
    s = {**s, 'additionalProperties': False}
    if '$defs' in s: s['$defs'] = {k: {**d, 'additionalProperties': False} for k, d in s['$defs'].items()}  # (dataclasses, in plain_tools)
    return s

def test_server_lists_get_schemas_schemas(raw):
    tools = raw('list_tools').tools
    assert [t.name for t in tools] == plain_tools.__all__
    for t, f in zip(tools, PLAIN):
        s = get_schema(f, evalable=True)
        assert (t.name, t.description, t.input_schema) == (s['name'], s['description'], _served(s['input_schema']))

@pytest.mark.parametrize('nm,args,text,structured', [
    ('greet', {'name': 'Al'}, 'Hello, Al!', {'result': 'Hello, Al!'}),  # not an object: wrapped, as the output schema says
    ('add', {'a': 1}, '3', {'result': 3}),
    ('shout', {'words': ['a', 'B'], 'mode': 'lower'}, '["a", "b"]', {'result': ['a', 'b']}),
    ('where', {'p': {'x': 1, 'y': 2}, 'scale': 2}, '{"x": 2.0, "y": 4.0}', {'x': 2, 'y': 4}),  # a dataclass: an object, as it is
    ('nap', {'text': 'zz'}, 'zz', {'result': 'zz'}),           # an async tool
])
def test_server_results_fit_their_output_schemas(raw, nm, args, text, structured):
    r = raw('call_tool', nm, args)
    assert not r.is_error
    assert [c.text for c in r.content] == [text] and r.structured_content == structured
    out = {t.name: t.output_schema for t in raw('list_tools').tools}[nm]
    jsonschema.validate(r.structured_content, out)  # the SDK client checks it too, on every call

def test_server_none_is_no_content(raw):
    r = raw('call_tool', 'nothing', {})
    assert (r.content, r.structured_content, r.is_error) == ([], None, False)

@pytest.mark.parametrize('nm,args,start', [
    ('divide', {'a': 1, 'b': 0}, 'ZeroDivisionError'),  # a tool's own exception: its type only, by default (`errors=`)
    ('add', {'a': 'one'}, "ToolInputError: Tool 'add', argument 'a': expected an integer, got 'one'"),
    ('add', {}, "ToolInputError: Tool 'add', argument 'a': missing (required)"),
    ('nope', {}, "ToolNotFound: Unknown tool 'nope'"),
])
def test_server_errors_are_error_results(raw, nm, args, start):
    r = raw('call_tool', nm, args)
    assert r.is_error and r.content[0].text.startswith(start)
    assert str(SERVERS) not in r.content[0].text and 'Traceback' not in r.content[0].text  # the frames stay in the server's log
    if nm == 'divide': assert r.content[0].text == 'ZeroDivisionError'

def test_without_a_return_annotation_structured_content_before_2026_only_for_objects():
    def plain(a: int):
        "Unannotated result"
        return a
    def pair(a: int):
        "Unannotated result"
        return {'a': a}
    async def main():
        async with Client(mk_server([plain, pair]), mode='legacy') as c:  # in-process, over the handshake-era protocol
            assert (await c.list_tools()).tools[0].output_schema is None
            assert (await c.call_tool('plain', {'a': 1})).structured_content is None
            assert (await c.call_tool('pair', {'a': 1})).structured_content == {'a': 1}
        async with Client(mk_server([plain])) as c:
            assert (await c.call_tool('plain', {'a': 1})).structured_content == 1  # any JSON value from 2026-07-28
    arun(main())

# --- funccall's server, through funccall's client -------------------------------------------------------

def test_round_trip_gives_the_functions_back(ours):
    ts = ours.tools()
    assert list(ts) == plain_tools.__all__
    for f in PLAIN:
        g = ts[f.__name__]
        s = get_schema(f, evalable=True)
        assert get_schema(g) == {**s, 'input_schema': _served(s['input_schema'])}
        ps, qs = inspect.signature(f).parameters, inspect.signature(g).parameters
        assert [(p.name, p.default) for p in ps.values()] == [(q.name, q.default) for q in qs.values()]

def test_round_trip_results(ours):
    ts = ours.tools()
    assert ts['add'](1) == 3 and ts['add'](1, b=5) == 6
    assert ts['greet']('Al', greeting='Hey') == 'Hey, Al!'
    assert ts['shout'](['a']) == ['A']
    assert ts['where']({'x': 1, 'y': 2}, scale=2) == {'x': 2, 'y': 4}
    assert ts['nap']('zz') == 'zz' and ts['nothing']() is None
    with pytest.raises(MCPToolError, match='^ZeroDivisionError'): ts['divide'](1, 0)

def test_in_process_server_and_tool_names_from_a_dict():
    with MCPClient(mk_server({'plus': plain_tools.add}, name='calc'), timeout=T) as c:
        assert c.tools()['plus'](2, b=3) == 5
        assert c.schemas()[0]['name'] == 'plus'

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

def _wait_for(port: int):
    deadline = time.monotonic() + T
    while True:
        try: return socket.create_connection(('127.0.0.1', port), timeout=1).close()
        except OSError:
            if time.monotonic() > deadline: raise
            time.sleep(0.05)

def test_streamable_http_url():
    port = _free_port()
    p = subprocess.Popen([sys.executable, str(SERVERS / 'http_server.py'), str(port)])
    try:
        _wait_for(port)
        with MCPClient(f'http://127.0.0.1:{port}/mcp', timeout=T) as c:
            assert list(c.tools()) == plain_tools.__all__
            assert c.tools()['greet'](name='Al') == 'Hello, Al!'
    finally:
        p.terminate()
        p.wait(T)

# --- an installed server ----------------------------------------------------------------------------------

def test_mcp_server_time():
    with MCPClient([sys.executable, '-m', 'mcp_server_time'], timeout=T) as c:
        ts = c.tools()
        assert {'get_current_time', 'convert_time'} <= set(ts)
        assert list(inspect.signature(ts['convert_time']).parameters) == ['source_timezone', 'time', 'target_timezone']
        now = ts['get_current_time'](timezone='UTC')
        assert now['timezone'] == 'UTC' and now['datetime'].endswith('+00:00')
        with pytest.raises(MCPToolError, match='Nowhere/Land'): ts['get_current_time']('Nowhere/Land')

# --- the command line and the optional dependency ---------------------------------------------------------

def test_serve_bad_target_is_one_line_and_exit_2():
    r = subprocess.run([sys.executable, '-m', 'funccall.mcp', 'serve', 'no_such_module_xyz'], capture_output=True, text=True, timeout=T)
    assert r.returncode == 2 and 'no_such_module_xyz' in r.stderr and r.stderr.count('\n') == 1

def test_without_mcp_import_error_says_how_to_install():
    code = "import sys; sys.modules['mcp'] = None\ntry: import funccall.mcp\nexcept ImportError as e: print(e)"
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=T)
    assert "pip install 'funccall[mcp]'" in r.stdout, r.stderr
