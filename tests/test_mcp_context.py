"""Served tools that use the protocol through an `MCPContext` parameter: progress, log lines, questions for the user
(a request inside the call before 2026-07-28, an input-required round trip from it), and cancellation; icons and the
tool list's cache hint. Checked with the SDK client, in-process and over HTTP on loopback."""
import asyncio, logging, sys, threading, time
from pathlib import Path

import pytest

pytest.importorskip('mcp')
import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402

from funccall import Tool  # noqa: E402
from funccall.mcp import MCPClient, MCPContext, mk_asgi_app, mk_server  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / 'mcp_servers'))
from loopback import serving  # noqa: E402

T = 20
NAME = {'type': 'object', 'properties': {'name': {'type': 'string', 'description': 'your name'}}, 'required': ['name']}
AGE = {'type': 'object', 'properties': {'age': {'type': 'integer', 'description': 'your age'}}, 'required': ['age']}

def arun(coro): return asyncio.run(asyncio.wait_for(coro, T))

async def count(n: int, ctx: MCPContext) -> int:  # n
    "Count to n, reporting progress"
    for i in range(1, n + 1): await ctx.report_progress(i, n, f'{i} of {n}')
    return n

def count_sync(n: int, ctx: MCPContext) -> int:  # n
    "Count to n in a worker thread, reporting progress"
    for i in range(1, n + 1): ctx.report_progress(i, n)
    return n

RUNS = []  # each run of `greet`: an input-required round trip runs the tool again from the start

async def greet(greeting: str, ctx: MCPContext) -> str:  # the greeting
    "Ask the user's name and age, then greet them"
    RUNS.append(greeting)
    a = await ctx.elicit('Who are you?', NAME)
    if a.action != 'accept': return f'no name ({a.action})'
    b = await ctx.elicit('How old are you?', AGE)
    return f"{greeting}, {a.content['name']} ({b.content['age']})"

def greet_sync(greeting: str, ctx: MCPContext) -> str:  # the greeting
    "The same, from a sync tool"
    a = ctx.elicit('Who are you?', NAME)
    return f"{greeting}, {a.content['name']}" if a.action == 'accept' else 'nobody'

def _answers(*actions, asked=None):
    "An elicitation callback answering each question in turn"
    it = iter(actions)
    async def cb(ctx, params):
        if asked is not None: asked.append(params.message)
        action = next(it)
        content = {'name': 'Ada'} if 'Who' in params.message else {'age': 36}
        return types.ElicitResult(action=action, content=content if action == 'accept' else None)
    return cb

def test_context_parameter_is_not_in_the_schema():
    async def main():
        async with Client(mk_server([count, Tool(greet, inject=('ctx',))])) as c: return (await c.list_tools()).tools
    for t in arun(main()):
        assert 'ctx' not in t.input_schema['properties'] and 'ctx' not in t.input_schema.get('required', [])
    def plain(ctx: MCPContext) -> int:  # nothing
        "A Tool made without naming its context in inject=: the annotation is enough"
        return 1
    assert Tool(plain).inject == ('ctx',) and Tool(plain).schema['input_schema']['properties'] == {}
    mk_server([Tool(plain)])  # served: its context injected per call

@pytest.mark.parametrize('mode', ['auto', 'legacy'])
@pytest.mark.parametrize('tool', ['count', 'count_sync'])
def test_progress_reaches_the_client(mode, tool):
    seen = []
    async def on_progress(progress, total, message): seen.append((progress, total, message))
    async def main():
        async with Client(mk_server([count, count_sync]), mode=mode) as c: return await c.call_tool(tool, {'n': 3}, progress_callback=on_progress)
    r = arun(main())
    assert r.structured_content == {'result': 3}
    assert [(p, t) for p, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]

def test_progress_over_http():
    seen = []
    async def on_progress(progress, total, message): seen.append(progress)
    async def main(url):
        async with Client(url, read_timeout_seconds=T) as c: return await c.call_tool('count', {'n': 2}, progress_callback=on_progress)
    with serving(mk_asgi_app([count])) as url: r = anyio.run(main, url)
    assert r.structured_content == {'result': 2} and seen == [1, 2]

@pytest.mark.parametrize('mode', ['auto', 'legacy'])  # an input-required round trip per question, or requests inside the call
def test_a_tool_asks_the_user(mode):
    RUNS.clear()
    asked = []
    async def main():
        async with Client(mk_server([greet]), mode=mode, elicitation_callback=_answers('accept', 'accept', asked=asked)) as c:
            return await c.call_tool('greet', {'greeting': 'Hi'})
    r = arun(main())
    assert r.content[0].text == 'Hi, Ada (36)' and asked == ['Who are you?', 'How old are you?']
    assert len(RUNS) == (3 if mode == 'auto' else 1)  # 2026-07-28 runs the tool again with each answer

@pytest.mark.parametrize('mode', ['auto', 'legacy'])
def test_a_declined_question(mode):
    async def main():
        async with Client(mk_server([greet, greet_sync]), mode=mode, elicitation_callback=_answers('decline', 'accept')) as c:
            return await c.call_tool('greet', {'greeting': 'Hi'}), await c.call_tool('greet_sync', {'greeting': 'Yo'})
    r, s = arun(main())
    assert r.content[0].text == 'no name (decline)' and s.content[0].text == 'Yo, Ada'

def test_questions_over_http_from_funccalls_own_client():
    answers = []
    def on_elicit(message, schema):  # a plain function: the user's answers
        answers.append(message)
        return {'name': 'Bo'} if 'Who' in message else {'age': 7}
    with serving(mk_asgi_app([greet])) as url, MCPClient(url, timeout=T, on_elicit=on_elicit) as c:
        assert c.tools()['greet']('Hey') == 'Hey, Bo (7)'
    assert answers == ['Who are you?', 'How old are you?']

def test_log_lines_go_to_the_servers_log(caplog):
    async def noisy(x: int, ctx: MCPContext) -> int:  # x
        "Log a line"
        await ctx.log(f'working on {x}', 'warning')
        return x
    got = []
    async def on_log(params): got.append((params.level, params.data))
    caplog.set_level(logging.INFO, logger='funccall.mcp')
    async def main():
        async with Client(mk_server([noisy]), logging_callback=on_log, log_level='info') as c: return await c.call_tool('noisy', {'x': 4})
    assert arun(main()).structured_content == {'result': 4}
    assert 'noisy: working on 4' in caplog.text
    assert got == [('warning', 'working on 4')]  # a 2026-07-28 client that asked for log lines gets them

def test_cancelling_a_call_reaches_async_and_sync_tools():
    started, stopped, told = threading.Event(), threading.Event(), threading.Event()
    async def wait_async(ctx: MCPContext) -> str:  # never
        "Wait until cancelled"
        started.set()
        try: await anyio.sleep(60)
        finally: stopped.set()
        return 'done'
    def wait_sync(ctx: MCPContext) -> str:  # how it ended
        "Wait in a thread until told the call was cancelled"
        started.set()
        deadline = time.monotonic() + 10
        while not ctx.cancelled and time.monotonic() < deadline: time.sleep(0.01)
        if ctx.cancelled: told.set()
        return 'stopped'
    async def main(url, name):
        async with Client(url, read_timeout_seconds=T) as c:
            with anyio.move_on_after(1): await c.call_tool(name, {})  # abandoning the call sends notifications/cancelled
            await anyio.sleep(0.5)
            return await c.list_tools()  # the connection lives on
    with serving(mk_asgi_app([wait_async, wait_sync])) as url:
        anyio.run(main, url, 'wait_async')
        assert started.is_set() and stopped.wait(5)
        started.clear()
        anyio.run(main, url, 'wait_sync')
        assert started.is_set() and told.wait(5)

def test_icons_and_cache_hint_on_the_tool_list():
    icon = {'src': 'https://example.com/i.png', 'mimeType': 'image/png', 'sizes': ['48x48']}
    async def main():
        async with Client(mk_server([Tool(count, inject=('ctx',), icons=[icon])], list_ttl=120)) as c: return await c.list_tools()
    r = arun(main())
    assert [i.model_dump(by_alias=True, exclude_none=True) for i in r.tools[0].icons] == [icon]
    assert r.ttl_ms == 120_000 and r.cache_scope == 'public'
