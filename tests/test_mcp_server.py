"""funccall's MCP server as a user meets it: Tools, groups and toolboxes served with their pipeline, output schemas
and structured content, annotations, confirmation through elicitation, stdout kept off the protocol, streamable HTTP,
and the client's timeout, skipped tools and caches. Checked with the official SDK client (in-process, over stdio,
and over HTTP on loopback)."""
import asyncio, gc, socket, subprocess, sys, time, warnings
from dataclasses import dataclass
from typing import Literal, TypedDict

import pytest

pytest.importorskip('mcp')
import anyio  # noqa: E402
import jsonschema  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client, StdioServerParameters, stdio_client  # noqa: E402
from mcp.server import Server  # noqa: E402

from funccall import Tool, ToolGroup, Toolbox, get_schema  # noqa: E402
from funccall.mcp import MCPClient, mk_server  # noqa: E402

T = 20  # seconds: the most any one exchange may take

def arun(coro): return asyncio.run(asyncio.wait_for(coro, T))

async def _listed(server, **kw) -> dict:
    async with Client(server, **kw) as c: return {t.name: t for t in (await c.list_tools()).tools}

async def _call(server, name, args, **kw):
    async with Client(server, **kw) as c: return await c.call_tool(name, args)

# --- tools to serve --------------------------------------------------------------------------------------

ORDERS = {'c1': ['o1', 'o2'], 'c2': ['o3']}

def list_orders(
    customer_id: str,  # whose orders: the application's, never the model's
    limit: int = 10,   # at most this many
) -> list[str]:        # order ids
    "List a customer's orders"
    return ORDERS[customer_id][:limit]

@dataclass
class Point:
    "A point"
    x: float  # across
    y: float  # up

class Totals(TypedDict):
    n: int        # how many
    total: float  # their sum

def where(p: Point) -> Point:  # the point itself
    "Echo a point"
    return p

def totals(xs: list[float]) -> Totals:  # count and sum
    "Count and sum numbers"
    return {'n': len(xs), 'total': sum(xs)}

def pick(k: Literal['a', 'b']) -> Literal['a', 'b']:  # the choice
    "Pick a letter"
    return k

def maybe(x: int) -> int | None:  # x, or nothing for 0
    "x, unless it is 0"
    return x or None

def text(n: int) -> str:  # n letters
    "A long text"
    return 'x' * n

class Shop:
    "A shop's tools"
    def price(self, item: str) -> float:  # its price
        "The price of an item"
        return {'tea': 2.5}.get(item, 0.0)

class Adder:
    "Adds"
    def __call__(self, a: int, b: int) -> int:  # the sum
        "Add two integers"
        return a + b

# --- anything funccall calls a tool is served --------------------------------------------------------------

def test_tools_groups_toolboxes_and_callable_objects_are_served_under_their_names():
    box = Toolbox([where, ToolGroup(Shop)])
    server = mk_server([Tool(list_orders, inject=('customer_id',)), Adder(), box], injected={'customer_id': 'c1'})
    tools = arun(_listed(server))
    assert list(tools) == ['list_orders', 'Adder', 'where', 'shop-price']
    lo = tools['list_orders']
    assert lo.description == get_schema(Tool(list_orders, inject=('customer_id',)))['description']
    assert 'customer_id' not in lo.input_schema['properties'] and lo.input_schema['properties']['limit']['type'] == 'integer'
    assert tools['Adder'].input_schema['required'] == ['a', 'b']
    r = arun(_call(server, 'list_orders', {'limit': 1}))
    assert not r.is_error and r.structured_content == {'result': ['o1']}
    assert arun(_call(server, 'shop-price', {'item': 'tea'})).structured_content == {'result': 2.5}
    assert arun(_call(server, 'Adder', {'a': 2, 'b': 3})).structured_content == {'result': 5}

def test_get_schema_of_a_tool_describes_its_function_named_as_it():
    s = get_schema(Tool(list_orders, inject=('customer_id',)))
    assert s['name'] == 'list_orders' and list(s['input_schema']['properties']) == ['limit']
    assert s['input_schema']['properties']['limit']['description'] == 'at most this many'
    assert get_schema(Tool(Adder()))['name'] == 'Adder'

def test_the_model_may_not_send_an_injected_value():
    server = mk_server([Tool(list_orders, inject=('customer_id',))], injected={'customer_id': 'c1'})
    r = arun(_call(server, 'list_orders', {'customer_id': 'c2'}))
    assert r.is_error and 'supplied by the application' in r.content[0].text

def test_a_missing_injected_value_is_the_developers_error_before_serving():
    with pytest.raises(TypeError, match="'customer_id'.*injected"): mk_server([Tool(list_orders, inject=('customer_id',))])
    box = Toolbox([Tool(list_orders, inject=('customer_id',))], injected={'customer_id': 'c2'})
    assert arun(_call(mk_server(box), 'list_orders', {})).structured_content == {'result': ['o3']}  # the toolbox's own values

def test_hooks_cache_and_max_chars_run_on_every_served_call():
    seen, calls = [], []
    def counted(n: int) -> str:  # n letters
        "Count calls"
        calls.append(n)
        return 'x' * n
    t = Tool(counted, pre_hook=lambda tool, a: {'n': a['n'] + 1}, post_hook=lambda tool, a, v: seen.append(v) or v.upper(),
             cache_ttl=60, max_chars=3)
    server = mk_server([t])
    out = arun(_listed(server))['counted'].output_schema
    assert out is None  # a result cut for the model is text: no structured value to promise
    for _ in range(2):
        r = arun(_call(server, 'counted', {'n': 4}))
        assert [c.text for c in r.content] == ['XXX\n[... cut: 3 of 5 characters shown]'] and r.structured_content is None
    assert calls == [5] and seen == ['xxxxx']  # the second call came from the cache

def test_middleware_runs_around_served_calls():
    log = []
    async def mw(tool, args, call_next):
        log.append(('before', args))
        return await call_next({'n': 2})
    r = arun(_call(mk_server([Tool(text, middleware=(mw,))]), 'text', {'n': 9}))
    assert r.structured_content == {'result': 'xx'} and log == [('before', {'n': 9})]

# --- output schemas, structured content, annotations ----------------------------------------------------

@pytest.mark.parametrize('f,args,structured', [
    (where, {'p': {'x': 1, 'y': 2}}, {'x': 1, 'y': 2}),       # a dataclass: an object as it is
    (totals, {'xs': [1, 2]}, {'n': 2, 'total': 3}),          # a TypedDict
    (pick, {'k': 'b'}, {'result': 'b'}),                     # anything else: wrapped
    (maybe, {'x': 0}, {'result': None}),
    (maybe, {'x': 5}, {'result': 5}),
    (list_orders, {'customer_id': 'c2'}, {'result': ['o3']}),
])
@pytest.mark.parametrize('mode', ['auto', 'legacy'])
def test_structured_content_fits_the_output_schema(f, args, structured, mode):
    server = mk_server([f])
    async def main():
        async with Client(server, mode=mode) as c:  # the SDK client validates structured content against the output schema
            [tool] = (await c.list_tools()).tools
            r = await c.call_tool(f.__name__, args)
            return tool.output_schema, r
    out, r = arun(main())
    assert out['type'] == 'object' and not r.is_error and r.structured_content == structured
    jsonschema.validate(r.structured_content, out)

def test_no_output_schema_without_a_return_annotation():
    def plain(a: int):
        "No annotation"
        return a
    assert arun(_listed(mk_server([plain])))['plain'].output_schema is None

def test_title_and_annotations_come_from_tool_options():
    t = Tool(text, title='Make text', read_only=True, idempotent=True, open_world=False)
    tools = arun(_listed(mk_server([t, where])))
    a = tools['text'].annotations
    assert tools['text'].title == 'Make text' and a.title == 'Make text'
    assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (True, None, True, False)
    assert tools['where'].annotations is None and tools['where'].title is None  # nothing said, nothing sent

# --- confirmation through elicitation ---------------------------------------------------------------------

def _answering(action: str, confirm=True, asked=None):
    async def cb(ctx, params):
        if asked is not None: asked.append(params.message)
        return types.ElicitResult(action=action, content={'confirm': confirm} if action == 'accept' else None)
    return cb

def _deleter(log):
    def delete(path: str) -> str:  # what was deleted
        "Delete a file"
        log.append(path)
        return f'deleted {path}'
    return Tool(delete, requires_confirmation=True, destructive=True)

@pytest.mark.parametrize('mode', ['auto', 'legacy'])  # an input_required round trip (2026-07-28), or a request inside the call
def test_confirmation_asks_the_clients_user(mode):
    log, asked = [], []
    server = mk_server([_deleter(log)])
    r = arun(_call(server, 'delete', {'path': 'a.txt'}, mode=mode, elicitation_callback=_answering('accept', asked=asked)))
    assert not r.is_error and r.content[0].text == 'deleted a.txt' and log == ['a.txt']
    assert asked == ["Allow delete(path='a.txt')?"]
    for cb in (_answering('decline'), _answering('cancel'), _answering('accept', confirm=False)):
        r = arun(_call(server, 'delete', {'path': 'b.txt'}, mode=mode, elicitation_callback=cb))
        assert r.is_error and r.content[0].text == "The user declined to run delete(path='b.txt')"
    assert log == ['a.txt']

def test_a_client_that_cannot_ask_gets_the_call_refused():
    log = []
    r = arun(_call(mk_server([_deleter(log)]), 'delete', {'path': 'a.txt'}))
    assert r.is_error and "needs the user's confirmation" in r.content[0].text and 'elicitation' in r.content[0].text
    assert log == []

# --- the client: timeout, tools it can't build, caches across reconnects ---------------------------------

def test_client_timeout_is_the_time_the_user_waits():
    start = time.monotonic()
    with pytest.raises(TimeoutError, match='did not answer within 2 s'):
        with MCPClient([sys.executable, '-c', 'import time; time.sleep(60)'], timeout=2): pass
    assert time.monotonic() - start < 3.5  # the SDK's client alone takes 15 s: it tries again, then waits for the process

def _sdk_server_with_a_broken_tool() -> Server:
    good = types.Tool(name='echo', description='Echo', input_schema={'type': 'object', 'properties': {'t': {'type': 'string'}}})
    bad = types.Tool(name='bad', description='Bad', input_schema={'type': 'object', 'properties': {'a': {'$ref': '#/$defs/Nope'}}})
    async def list_tools(ctx, params): return types.ListToolsResult(tools=[good, bad])
    async def call_tool(ctx, params): return types.CallToolResult(content=[types.TextContent(text=params.arguments['t'])])
    return Server('broken', on_list_tools=list_tools, on_call_tool=call_tool)

def test_a_tool_that_cant_be_built_is_skipped_and_reported():
    with pytest.warns(UserWarning, match=r"1 tool\(s\).*'bad'.*points at nothing"):
        with MCPClient(_sdk_server_with_a_broken_tool(), timeout=T) as c:
            assert list(c.tools()) == ['echo'] and c.tools()['echo'](t='hi') == 'hi'
            assert [nm for nm, _ in c.skipped] == ['bad'] and 'points at nothing' in c.skipped[0][1]
            assert [s['name'] for s in c.schemas()] == ['echo']

def test_reconnecting_grows_no_cache():
    from funccall.core import call, inverse, schema
    server = mk_server([where, totals, list_orders])
    def sizes():
        gc.collect()
        return len(schema._cache), len(call._plans), len(getattr(inverse, '_typeddicts', {}))
    def connect():
        with MCPClient(server, timeout=T) as c:
            ts = c.tools()
            assert ts['totals']([1.0, 2.0]) == {'n': 2, 'total': 3.0} and ts['where']({'x': 1, 'y': 2}) == {'x': 1, 'y': 2}
            get_schema(ts['where'])
    for _ in range(2): connect()
    before = sizes()
    for _ in range(8): connect()
    # a cache that grows with each connection holds at least 8 more entries now; other tests' threads still running in
    # this worker may add or drop an entry meanwhile, which made an exact comparison fail now and then
    assert all(n - b < 8 for n, b in zip(sizes(), before)), (before, sizes())

# --- over stdio: stdout stays off the protocol ------------------------------------------------------------

NOISY = '''
import os
print("printed at import")
os.system("echo echoed at import")
def shout(
    text: str,  # what to shout
) -> str:       # the text, upper case
    "Shout a text"
    print("printed inside the tool")
    os.system("echo echoed inside the tool")
    return text.upper()
'''

def test_prints_in_the_served_module_and_its_tools_go_to_stderr(tmp_path):
    f = tmp_path / 'noisy.py'
    f.write_text(NOISY)
    err = tmp_path / 'err.txt'
    async def main():
        params = StdioServerParameters(command=sys.executable, args=['-m', 'funccall', 'mcp', 'serve', str(f)])
        with open(err, 'w') as errlog, anyio.fail_after(T):
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=T) as c:
                return await c.call_tool('shout', {'text': 'hi'})
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # a line the client can't parse would only be logged: make sure none came
        r = arun(main())
    assert r.content[0].text == 'HI' and r.structured_content == {'result': 'HI'}
    logged = err.read_text()
    assert all(s in logged for s in ('printed at import', 'echoed at import', 'printed inside the tool', 'echoed inside the tool'))

BOX = '''
from funccall import Tool, Toolbox

def my_orders(
    customer_id: str,  # whose
) -> list[str]:        # order ids
    "The customer's orders"
    return [f'{customer_id}-1']

def cancel(
    order: str,  # which order
) -> str:        # what happened
    "Cancel an order"
    return f'cancelled {order}'

box = Toolbox([Tool(my_orders, inject=('customer_id',), read_only=True),
               Tool(cancel, requires_confirmation=True, title='Cancel an order')], injected={'customer_id': 'c7'})
'''

def test_a_toolbox_served_from_the_command_line_keeps_its_pipeline(tmp_path):
    f = tmp_path / 'box_tools.py'
    f.write_text(BOX)
    asked = []
    async def main():
        params = StdioServerParameters(command=sys.executable, args=['-m', 'funccall', 'mcp', 'serve', f'{f}:box'])
        with anyio.fail_after(T):
            async with Client(stdio_client(params), read_timeout_seconds=T, elicitation_callback=_answering('accept', asked=asked)) as c:
                tools = {t.name: t for t in (await c.list_tools()).tools}
                return tools, await c.call_tool('my_orders', {}), await c.call_tool('cancel', {'order': 'c7-1'})
    tools, orders, cancelled = arun(main())
    assert list(tools) == ['my_orders', 'cancel'] and tools['my_orders'].input_schema['properties'] == {}
    assert tools['my_orders'].annotations.read_only_hint is True and tools['cancel'].title == 'Cancel an order'
    assert orders.structured_content == {'result': ['c7-1']}  # the toolbox's own injected value
    assert cancelled.content[0].text == 'cancelled c7-1' and asked == ["Allow cancel(order='c7-1')?"]

# --- streamable HTTP on loopback --------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

def test_serve_over_streamable_http(tmp_path):
    f = tmp_path / 'shop_tools.py'
    f.write_text('def price(\n    item: str,  # what\n) -> float:  # its price\n    "The price of an item"\n    return 2.5\n')
    port = _free_port()
    p = subprocess.Popen([sys.executable, '-m', 'funccall', 'mcp', 'serve', str(f), '--http', f'127.0.0.1:{port}'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + T
        while True:
            try:
                socket.create_connection(('127.0.0.1', port), timeout=1).close()
                break
            except OSError:
                assert p.poll() is None and time.monotonic() < deadline, p.stderr.read() if p.poll() is not None else 'no server'
                time.sleep(0.05)
        url = f'http://127.0.0.1:{port}/mcp'
        async def sdk():
            async with Client(url, read_timeout_seconds=T) as c:
                [t] = (await c.list_tools()).tools
                return t, await c.call_tool('price', {'item': 'tea'})
        t, r = arun(sdk())
        assert t.name == 'price' and t.output_schema['properties']['result']['type'] == 'number'
        assert r.structured_content == {'result': 2.5}
        with MCPClient(url, timeout=T) as c: assert c.tools()['price']('tea') == 2.5  # funccall's client unwraps it
    finally:
        p.kill()
        p.wait(T)

def test_bad_http_address_is_one_line(tmp_path):
    r = subprocess.run([sys.executable, '-m', 'funccall.mcp', 'serve', 'funccall.example', '--http', 'localhost'],
                       capture_output=True, text=True, timeout=T)
    assert r.returncode == 2 and 'HOST:PORT' in r.stderr and r.stderr.count('\n') == 1
