"""Long-running tools served as MCP tasks (the 2026-07-28 tasks extension), through the SDK's own client: its
`Client(extensions=[...])` with a `ResultClaim` for `resultType: "task"`, and `session.send_request` for the
extension's methods. Across workers: two servers sharing one real `redis-server` on loopback."""
import asyncio, json, os, re, shutil, socket, subprocess, sys, textwrap, threading, time
from typing import Any, Literal

import pytest

pytest.importorskip('mcp')
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

from funccall import Tool  # noqa: E402
from funccall.mcp._store import STORE_ERROR, MemoryTaskStore, StoreError, TasksFull  # noqa: E402
from funccall.mcp import TASKS, MCPClient, MCPContext, MCPToolError, RedisStore, mk_server  # noqa: E402

T = 30  # seconds: a generous bound for one conversation

def arun(coro): return asyncio.run(asyncio.wait_for(coro, T))

# --- the client side, as small as the SDK's extension API allows ------------------------------------------

class Handle(types.Result):
    result_type: Literal['task'] = 'task'
    task_id: str
    status: str
    poll_interval_ms: int | None = None

class _Req(types.Request[Any, str]):
    method: str
    params: dict

async def send(session, method: str, **params) -> dict:
    return await session.send_request(_Req(method=method, params=params), TypeAdapter(dict))

async def _resolve(h: Handle, ctx: ClaimContext) -> types.CallToolResult:
    while (r := await send(ctx.session, 'tasks/get', taskId=h.task_id))['status'] == 'working': await asyncio.sleep(0.05)
    assert r['status'] == 'completed', r
    return types.CallToolResult.model_validate(r['result'])

class TasksExt(ClientExtension):
    identifier = TASKS
    def claims(self): return [ResultClaim(result_type='task', model=Handle, resolve=_resolve)]

async def start(c, name: str, args: dict) -> Handle:
    "A task-augmented call: the handle, unresolved"
    h = await c.session.call_tool(name, args, allow_claimed=True)
    assert isinstance(h, Handle), h
    return h

async def wait(session, tid: str, until=('completed', 'failed', 'cancelled')) -> dict:
    while (r := await send(session, 'tasks/get', taskId=tid))['status'] not in until: await asyncio.sleep(0.05)
    return r

# --- the tools --------------------------------------------------------------------------------------------

gate = threading.Event()  # released by a test: until then `held` runs on

def held(n: int) -> int:
    "Doubles n once the gate opens"
    assert gate.wait(T)
    return n * 2

stopped = threading.Event()

def patient(ctx: MCPContext) -> str:
    "Runs until cancelled"
    deadline = time.monotonic() + T
    while not ctx.cancelled and time.monotonic() < deadline: time.sleep(0.02)
    stopped.set()
    return 'ran to the end'  # never the task's result once it was cancelled

async def quick(x: int) -> int:
    "Doubles x"
    return 2 * x

def fails(x: int) -> int:
    "Always fails"
    raise ZeroDivisionError('secret detail')

def _server(**kw): return mk_server([held, patient, quick, fails], tasks=['held', 'patient', 'quick', 'fails'], **kw)

@pytest.fixture(autouse=True)
def _reset():
    gate.clear(); stopped.clear()
    yield
    gate.set()  # no test leaves a tool thread waiting

def test_a_task_comes_back_at_once_and_its_result_when_done():
    server = _server()
    async def main():
        async with Client(server, extensions=[TasksExt()]) as c:
            caps = c.session.server_capabilities if hasattr(c.session, 'server_capabilities') else None
            h = await start(c, 'held', {'n': 21})  # the tool is blocked: the handle can't be waiting for it
            first = await send(c.session, 'tasks/get', taskId=h.task_id)
            gate.set()
            done = await wait(c.session, h.task_id)
            return caps, h, first, done
    _, h, first, done = arun(main())
    assert h.status == 'working' and first['status'] == 'working' and 'result' not in first
    assert done['status'] == 'completed' and done['result']['structuredContent'] == {'result': 42} and 'owner' not in done

def test_the_sdk_client_resolves_a_task_as_a_plain_call():
    async def main():
        async with Client(_server(), extensions=[TasksExt()]) as c: return await c.call_tool('quick', {'x': 4})
    r = arun(main())
    assert r.structured_content == {'result': 8} and not r.is_error

def test_a_client_without_the_extension_gets_the_plain_result_and_no_task_methods():
    async def main():
        async with Client(_server()) as c:
            r = await c.call_tool('quick', {'x': 5})
            with pytest.raises(MCPError) as e: await send(c.session, 'tasks/get', taskId='x' * 20)
            return r, e.value
    r, e = arun(main())
    assert r.structured_content == {'result': 10}
    assert e.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY

def test_a_failing_tool_completes_with_an_error_result_that_keeps_its_secret():
    async def main():
        async with Client(_server(), extensions=[TasksExt()]) as c: return await wait(c.session, (await start(c, 'fails', {'x': 1})).task_id)
    r = arun(main())
    assert r['status'] == 'completed' and r['result']['isError'] is True  # the tool's failure is a result, not a failed task
    assert r['result']['content'][0]['text'] == 'ZeroDivisionError' and 'secret detail' not in str(r)

def test_bad_input_to_a_task_tool_completes_as_an_error_result():
    async def main():
        async with Client(_server(), extensions=[TasksExt()]) as c: return await wait(c.session, (await start(c, 'quick', {'x': 'many'})).task_id)
    r = arun(main())
    assert r['status'] == 'completed' and r['result']['isError'] is True and "'x'" in r['result']['content'][0]['text']

def test_cancel_stops_the_tool_and_the_task_stays_cancelled():
    async def main():
        async with Client(_server(), extensions=[TasksExt()]) as c:
            h = await start(c, 'patient', {})
            ack = await send(c.session, 'tasks/cancel', taskId=h.task_id)
            got = await send(c.session, 'tasks/get', taskId=h.task_id)
            assert await asyncio.to_thread(stopped.wait, T)  # the sync tool saw `ctx.cancelled` and returned
            await asyncio.sleep(0.7)  # past a look of the runner at its record: its result must not replace `cancelled`
            return ack, got, await send(c.session, 'tasks/get', taskId=h.task_id)
    ack, got, later = arun(main())
    assert ack['resultType'] == 'complete'
    assert got['status'] == later['status'] == 'cancelled' and 'result' not in later

def test_cancelling_a_finished_task_changes_nothing():
    async def main():
        async with Client(_server(), extensions=[TasksExt()]) as c:
            h = await start(c, 'quick', {'x': 1})
            done = await wait(c.session, h.task_id)
            await send(c.session, 'tasks/cancel', taskId=h.task_id)
            return done, await send(c.session, 'tasks/get', taskId=h.task_id)
    done, after = arun(main())
    assert done['status'] == after['status'] == 'completed' and after['result'] == done['result']

def test_the_result_is_fetched_after_reconnecting():
    server = _server()
    async def main():
        async with Client(server, extensions=[TasksExt()]) as c: h = await start(c, 'held', {'n': 5})
        gate.set()  # the first connection is gone; the task ran on
        async with Client(server, extensions=[TasksExt()]) as c: return await wait(c.session, h.task_id)
    assert arun(main())['result']['structuredContent'] == {'result': 10}

@pytest.mark.parametrize('tid', ['nope', '', 'x' * 101, '../../etc'])
def test_an_unknown_or_malformed_task_id_is_invalid_params(tid):
    async def main():
        async with Client(_server(), extensions=[TasksExt()]) as c:
            errs = []
            for m in ('tasks/get', 'tasks/cancel', 'tasks/update'):
                with pytest.raises(MCPError) as e: await send(c.session, m, taskId=tid, inputResponses={})
                errs.append(e.value.code)
            return errs
    assert arun(main()) == [types.INVALID_PARAMS] * 3

def test_one_servers_task_is_unknown_to_another_with_its_own_store():
    async def main():
        async with Client(_server(), extensions=[TasksExt()]) as c: h = await start(c, 'quick', {'x': 1})
        async with Client(_server(), extensions=[TasksExt()]) as c:
            with pytest.raises(MCPError) as e: await send(c.session, 'tasks/get', taskId=h.task_id)
        return e.value
    assert arun(main()).code == types.INVALID_PARAMS

def test_task_tools_are_checked_when_the_server_is_made():
    with pytest.raises(ValueError, match="no tool named 'nope'"): mk_server([quick], tasks=['nope'])
    with pytest.raises(ValueError, match='requires confirmation'): mk_server([Tool(quick, requires_confirmation=True)], tasks=['quick'])

def test_a_server_without_tasks_offers_no_task_methods():
    async def main():
        async with Client(mk_server([quick]), extensions=[TasksExt()]) as c:
            r = await c.call_tool('quick', {'x': 2})
            with pytest.raises(MCPError) as e: await send(c.session, 'tasks/get', taskId='abc')
            return r, e.value
    r, e = arun(main())
    assert r.structured_content == {'result': 4} and e.code == types.METHOD_NOT_FOUND

# --- across workers: a real redis-server on loopback ------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

@pytest.fixture(scope='module')
def redis_url(tmp_path_factory):
    if shutil.which('redis-server') is None: pytest.skip('redis-server is not installed (Debian: apt-get install redis-server)')
    pytest.importorskip('redis', reason="the redis client is in the dev extra: pip install 'funccall[dev]'")
    import redis
    port = _free_port()
    p = subprocess.Popen(['redis-server', '--port', str(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
                          '--dir', str(tmp_path_factory.mktemp('redis'))], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f'redis://127.0.0.1:{port}/0'
    deadline = time.monotonic() + T
    while True:
        try:
            redis.Redis.from_url(url).ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or p.poll() is not None: raise
            time.sleep(0.05)
    yield url
    p.terminate()
    p.wait(T)

SECRET = 'a shared secret of at least thirty-two characters'

def test_a_task_started_on_one_worker_is_polled_cancelled_and_fetched_through_another(redis_url):
    a, b = (_server(store=RedisStore(redis_url, prefix='t1:'), secret=SECRET) for _ in range(2))
    async def main():
        async with Client(a, extensions=[TasksExt()]) as ca, Client(b, extensions=[TasksExt()]) as cb:
            h = await start(ca, 'held', {'n': 4})
            seen = await send(cb.session, 'tasks/get', taskId=h.task_id)
            gate.set()
            done = await wait(cb.session, h.task_id)
            p = await start(ca, 'patient', {})
            await send(cb.session, 'tasks/cancel', taskId=p.task_id)  # through the other worker ...
            assert await asyncio.to_thread(stopped.wait, T)  # ... the one running it stops the tool
            return seen, done, await send(ca.session, 'tasks/get', taskId=p.task_id)
    seen, done, cancelled = arun(main())
    assert seen['status'] == 'working' and done['result']['structuredContent'] == {'result': 8}
    assert cancelled['status'] == 'cancelled'

def test_a_confirmation_answer_is_good_once_across_workers(redis_url):
    store = RedisStore(redis_url, prefix='t2:')
    def mk(): return mk_server([Tool(quick, requires_confirmation=True)], secret=SECRET, store=store)
    a, b, c = mk(), mk(), mk()
    yes = {'funccall-confirm': types.ElicitResult(action='accept', content={'confirm': True})}
    async def main():
        async def never(ctx, params): raise AssertionError('asked through requestState, never directly')
        async with Client(a, elicitation_callback=never) as ca, Client(b, elicitation_callback=never) as cb, \
                   Client(c, elicitation_callback=never) as cc:  # 2026-07-28: the question travels as requestState
            q = await ca.session.call_tool('quick', {'x': 3}, allow_input_required=True)
            assert isinstance(q, types.InputRequiredResult)
            ok = await cb.session.call_tool('quick', {'x': 3}, input_responses=yes, request_state=q.request_state)
            refused = []
            for cl in (ca, cc, cb):  # the same answer again, to every worker
                with pytest.raises(MCPError) as e: await cl.session.call_tool('quick', {'x': 3}, input_responses=yes, request_state=q.request_state)
                refused.append((e.value.code, 'already used' in e.value.message))
            return ok, refused
    ok, refused = arun(main())
    assert ok.structured_content == {'result': 6}
    assert refused == [(types.INVALID_PARAMS, True)] * 3

def test_a_state_store_of_the_developers_takes_each_answer_once():
    class Shared:  # anything with add(nonce, expiry) -> bool
        def __init__(self): self.seen = {}
        def add(self, nonce, expiry):
            if nonce in self.seen: return False
            self.seen[nonce] = expiry
            return True
    shared = Shared()
    def mk(): return mk_server([Tool(quick, requires_confirmation=True)], secret=SECRET, state_store=shared)
    a, b = mk(), mk()
    yes = {'funccall-confirm': types.ElicitResult(action='accept', content={'confirm': True})}
    async def main():
        async def never(ctx, params): raise AssertionError('asked through requestState, never directly')
        async with Client(a, elicitation_callback=never) as ca, Client(b, elicitation_callback=never) as cb:
            q = await ca.session.call_tool('quick', {'x': 5}, allow_input_required=True)
            ok = await cb.session.call_tool('quick', {'x': 5}, input_responses=yes, request_state=q.request_state)
            with pytest.raises(MCPError, match='already used'):
                await ca.session.call_tool('quick', {'x': 5}, input_responses=yes, request_state=q.request_state)
            return ok
    assert arun(main()).structured_content == {'result': 10} and len(shared.seen) == 1

@pytest.mark.slow  # worker processes take seconds to start on a loaded machine
def test_the_command_line_serves_tasks_over_http_with_workers_sharing_redis(redis_url, tmp_path):
    (tmp_path / 'slowtools.py').write_text('import time\n\ndef nap(s: float) -> str:\n    "Sleeps s seconds"\n'
                                           '    time.sleep(s)\n    return "rested"\n')
    port = _free_port()
    env = {**os.environ, 'FUNCCALL_MCP_SECRET': SECRET}
    p = subprocess.Popen([sys.executable, '-m', 'funccall.mcp', 'serve', 'slowtools.py', '--http', f'127.0.0.1:{port}', '--workers', '2',
                          '--task', 'nap', '--redis', redis_url], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f'http://127.0.0.1:{port}/mcp'
    async def main():
        deadline = time.monotonic() + 3 * T
        while True:  # until the workers listen
            try:
                async with Client(url, extensions=[TasksExt()]) as c:
                    h = await start(c, 'nap', {'s': 0.2})
                    # stateless workers: each request may land on either, and every one of them knows the task
                    return h, [await send(c.session, 'tasks/get', taskId=h.task_id) for _ in range(6)], await wait(c.session, h.task_id)
            except Exception:
                if time.monotonic() > deadline or p.poll() is not None: raise
                await asyncio.sleep(0.2)
    try: h, polls, done = asyncio.run(main())
    finally:
        p.terminate()
        p.wait(T)
    assert h.status == 'working' and all(x['taskId'] == h.task_id for x in polls)
    assert done['result']['structuredContent'] == {'result': 'rested'}

def test_the_command_line_refuses_tasks_on_workers_without_a_shared_store(tmp_path, capsys):
    from funccall.mcp import main
    (tmp_path / 'one.py').write_text('def one() -> int:\n    "One"\n    return 1\n')
    assert main(['serve', str(tmp_path / 'one.py'), '--http', '127.0.0.1:1', '--workers', '2', '--task', 'one']) == 2
    assert '--redis' in capsys.readouterr().err

def test_tasks_in_memory_are_bounded_and_the_call_past_the_bound_is_an_error_result():
    server = mk_server([held, quick], tasks=['held', 'quick'], store=MemoryTaskStore(max_tasks=2))
    async def main():
        async with Client(server, extensions=[TasksExt()]) as c:
            hs = [await start(c, 'held', {'n': i}) for i in range(2)]  # both running: the gate is shut
            r = await c.session.call_tool('quick', {'x': 9}, allow_claimed=True)
            gate.set()
            return hs, r
    hs, r = arun(main())
    assert len({h.task_id for h in hs}) == 2
    assert isinstance(r, types.CallToolResult) and r.is_error and 'holds 2 running tasks already' in r.content[0].text

def test_one_clients_share_of_the_memory_store_is_bounded_and_its_oldest_finished_record_makes_room():
    store = MemoryTaskStore(per_client=2)
    def rec(tid, client): return {'taskId': tid, 'status': 'working', 'client': client}
    async def main():
        for t in ('a1', 'a2'): await store.create(t, rec(t, 'a'), 60)
        with pytest.raises(TasksFull, match='you run 2 tasks'): await store.create('a3', rec('a3', 'a'), 60)
        await store.create('b1', rec('b1', 'b'), 60)  # another client's share is its own
        await store.finish('a1', {**rec('a1', 'a'), 'status': 'completed'})
        await store.create('a3', rec('a3', 'a'), 60)  # the finished a1 made room
        return [await store.get(t) is not None for t in ('a1', 'a2', 'a3', 'b1')]
    assert arun(main()) == [False, True, True, True]

def test_a_flood_of_finished_tasks_does_not_lock_the_store_until_they_expire():
    # attack: one client ran max_tasks quick tasks; their finished records filled the store, and every client's new
    # task was refused for task_ttl (an hour); the oldest finished record makes room now
    server = mk_server([quick], tasks=['quick'], store=MemoryTaskStore(max_tasks=3))
    async def main():
        async with Client(server, extensions=[TasksExt()]) as c:
            ends = [await wait(c.session, (await start(c, 'quick', {'x': i})).task_id) for i in range(6)]
            with pytest.raises(MCPError, match='not found'): await send(c.session, 'tasks/get', taskId=ends[0]['taskId'])
            return ends, await send(c.session, 'tasks/get', taskId=ends[-1]['taskId'])
    ends, last = arun(main())
    assert [e['result']['structuredContent'] for e in ends] == [{'result': 2 * i} for i in range(6)]
    assert last['result']['structuredContent'] == {'result': 10}

# --- load: four workers, one Redis, fifty clients --------------------------------------------------------------

LOAD_TOOLS = '''import asyncio, os
from funccall import Tool

async def double(x: int) -> int:
    "Doubles x after a moment"
    await asyncio.sleep(0.05)
    return 2 * x

async def hold(s: float) -> str:
    "Waits s seconds"
    await asyncio.sleep(s)
    return 'held to the end'

def _record(x: int) -> int:
    "Records that x ran"
    with open(os.environ['RUNS_FILE'], 'a') as f: f.write(f'{x}\\n')
    return x

TOOLS = [double, hold, Tool(_record, name='record', requires_confirmation=True)]
'''

@pytest.mark.slow  # four worker processes and 3,000 requests on loopback
def test_load_four_workers_fifty_clients_500_tasks_200_confirmations(redis_url, tmp_path):
    # two servers of `--workers 2` (uvicorn's supervisor, the kernel spreading connections over the workers), their
    # addresses alternating among each client's four connections: a neighbour's connection is always another process
    (tmp_path / 'loadtools.py').write_text(LOAD_TOOLS)
    runs = tmp_path / 'runs.txt'
    env = {**os.environ, 'FUNCCALL_MCP_SECRET': SECRET, 'RUNS_FILE': str(runs)}
    ports = [_free_port() for _ in range(2)]
    procs = [subprocess.Popen([sys.executable, '-m', 'funccall.mcp', 'serve', 'loadtools.py:TOOLS', '--http', f'127.0.0.1:{p}',
                               '--workers', '2', '--task', 'double', '--task', 'hold', '--redis', redis_url], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for p in ports]
    urls = [f'http://127.0.0.1:{p}/mcp' for p in ports * 2]
    yes = {'funccall-confirm': types.ElicitResult(action='accept', content={'confirm': True})}
    async def never(ctx, params): raise AssertionError('asked through requestState, never directly')

    async def up(url):
        deadline = time.monotonic() + 6 * T
        while True:
            try:
                async with Client(url) as c: return await c.list_tools()
            except Exception:
                if time.monotonic() > deadline: raise
                await asyncio.sleep(0.3)

    async def client(k: int, out: dict):
        async with AsyncExitStack() as stack:  # one connection to each worker
            cs = [await stack.enter_async_context(Client(u, extensions=[TasksExt()], elicitation_callback=never, read_timeout_seconds=3 * T))
                  for u in urls]
            for j in range(10):  # ten tasks: started on one worker, polled, cancelled and fetched through the others
                n, w = k * 10 + j, (k + j) % 4
                if j % 5 == 0:  # a fifth is cancelled: it would run a minute
                    h = await start(cs[w], 'hold', {'s': 60})
                    await send(cs[(w + 1) % 4].session, 'tasks/cancel', taskId=h.task_id)
                else: h = await start(cs[w], 'double', {'x': n})
                await wait(cs[(w + 2) % 4].session, h.task_id)
                out['tasks'][n] = (j % 5 == 0, [await send(c.session, 'tasks/get', taskId=h.task_id) for c in cs])
            for j in range(4):  # four confirmations: asked by one worker, answered through another, replayed on all
                n, w = k * 4 + j, (k + j) % 4
                q = await cs[w].session.call_tool('record', {'x': n}, allow_input_required=True)
                ok = await cs[(w + 1) % 4].session.call_tool('record', {'x': n}, input_responses=yes, request_state=q.request_state)
                refused = 0
                for c in cs:
                    try: await c.session.call_tool('record', {'x': n}, input_responses=yes, request_state=q.request_state)
                    except MCPError as e: refused += e.code == types.INVALID_PARAMS and 'already used' in e.message
                out['confirmed'][n] = (ok.structured_content, refused)

    async def main():
        for u in urls: await up(u)
        out = {'tasks': {}, 'confirmed': {}}
        errors = [e for e in await asyncio.gather(*(client(k, out) for k in range(50)), return_exceptions=True) if e is not None]
        assert not errors, errors[:3]
        return out
    from contextlib import AsyncExitStack
    try: out = asyncio.run(main())
    finally:
        for p in procs: p.terminate()
        for p in procs: p.wait(T)
    assert len(out['tasks']) == 500 and len(out['confirmed']) == 200  # none lost
    for n, (cancelled, views) in out['tasks'].items():
        assert all(v == views[0] for v in views), n  # every worker tells the same end
        if cancelled: assert views[0]['status'] == 'cancelled' and 'result' not in views[0], n
        else: assert views[0]['status'] == 'completed' and views[0]['result']['structuredContent'] == {'result': 2 * n}, n
    assert all(v == ({'result': n}, 4) for n, v in out['confirmed'].items())  # each answered once, each replay refused by all four
    assert sorted(map(int, runs.read_text().split())) == list(range(200))  # and each confirmed call ran exactly once

def test_running_tasks_are_bounded_per_process():
    server = mk_server([held, quick], tasks=['held', 'quick'], max_tasks=2)
    async def main():
        async with Client(server, extensions=[TasksExt()]) as c:
            hs = [await start(c, 'held', {'n': i}) for i in range(2)]  # both running: the gate is shut
            over = await c.session.call_tool('quick', {'x': 1}, allow_claimed=True)
            gate.set()
            for h in hs: await wait(c.session, h.task_id)
            await asyncio.sleep(0.2)  # the slots come back on the server's loop
            return over, await start(c, 'quick', {'x': 1})
    over, again = arun(main())
    assert over.is_error and 'runs 2 tasks already' in over.content[0].text
    assert again.status == 'working'

# --- funccall's own client (MCPClient) against the served tasks ---------------------------------------------

class Counting(MemoryTaskStore):
    "The in-memory store, counting the tasks made and remembering the last"
    def __init__(self): super().__init__(); self.made = []
    async def create(self, tid, rec, ttl):
        self.made.append(tid)
        return await super().create(tid, rec, ttl)

async def hold(s: float) -> str:
    "Waits s seconds"
    await asyncio.sleep(s)
    return 'held to the end'

def test_mcpclient_calls_a_served_task_as_a_plain_function():
    store = Counting()
    with MCPClient(mk_server([quick], tasks=['quick'], store=store), timeout=T) as c: got = c.tools()['quick'](4)
    assert got == 8 and len(store.made) == 1  # it went as a task

def test_mcpclient_giving_up_on_a_task_cancels_it_at_the_server():
    store = Counting()
    with MCPClient(mk_server([hold], tasks=['hold'], store=store), timeout=T, task_timeout=0.5) as c:
        with pytest.raises(TimeoutError): c.tools()['hold'](60)
    deadline = time.monotonic() + T
    while asyncio.run(store.get(store.made[0]))['status'] == 'working' and time.monotonic() < deadline: time.sleep(0.05)
    assert asyncio.run(store.get(store.made[0]))['status'] == 'cancelled'

# --- fastmcp's client (with fastmcp-tasks) against `funccall mcp serve --task` ---------------------------------

def test_fastmcp_client_runs_polls_fetches_and_cancels_a_served_task(tmp_path):
    fastmcp = pytest.importorskip('fastmcp', reason='fastmcp is in the dev extra')
    call_tool_task = pytest.importorskip('fastmcp_tasks.client', reason='fastmcp-tasks is in the dev extra').call_tool_task
    from fastmcp.client.transports import StdioTransport
    (tmp_path / 'naps.py').write_text('import asyncio\n\nasync def nap(s: float) -> str:\n    "Sleeps s seconds"\n'
                                      '    await asyncio.sleep(s)\n    return "rested"\n')
    served = StdioTransport(sys.executable, ['-m', 'funccall', 'mcp', 'serve', 'naps.py', '--task', 'nap'], cwd=str(tmp_path))
    async def main():
        async with fastmcp.Client(served) as c:
            plain = await c.call_tool('nap', {'s': 0.1})  # resolved by fastmcp as a plain call
            t = await call_tool_task(c, 'nap', {'s': 0.1})  # a task handle, at once
            first = (await t.status()).status
            done = (await t.result()).data
            long = await call_tool_task(c, 'nap', {'s': 60})
            await long.cancel()
            return plain.data, first, done, (await long.status()).status
    plain, first, done, cancelled = arun(main())
    assert plain == done == 'rested' and first in ('working', 'completed') and cancelled == 'cancelled'

@pytest.mark.parametrize('where', ['memory', 'redis'])
def test_a_task_record_expires_after_its_ttl(where, request):
    store = RedisStore(request.getfixturevalue('redis_url'), prefix='t3:') if where == 'redis' else MemoryTaskStore()
    server = mk_server([quick], tasks=['quick'], store=store, task_ttl=0.5)
    async def main():
        async with Client(server, extensions=[TasksExt()]) as c:
            h = await start(c, 'quick', {'x': 1})
            done = await wait(c.session, h.task_id)
            await asyncio.sleep(1.0)
            with pytest.raises(MCPError) as e: await send(c.session, 'tasks/get', taskId=h.task_id)
            return done, e.value
    done, gone = arun(main())
    assert done['ttlMs'] == 500 and done['status'] == 'completed' and gone.code == types.INVALID_PARAMS

# --- pydantic-ai's MCPToolset (over fastmcp's client), its TestModel calling every tool -------------------------

def test_pydantic_ai_calls_every_tool_and_the_task_tool_runs_as_a_task(tmp_path):
    pytest.importorskip('pydantic_ai.mcp', reason="pydantic-ai-slim[mcp] is in the dev extra")
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.test import TestModel
    (tmp_path / 'mixed.py').write_text(textwrap.dedent('''
        import threading
        from dataclasses import dataclass
        from funccall.mcp import MCPContext

        @dataclass
        class Stop:
            "A stop"
            city: str  # where

        async def where_ran(n: int) -> str:
            "Says which thread ran it"
            return threading.current_thread().name

        def route(stops: list[Stop], ctx: MCPContext) -> str:
            "Plans a route"
            return ' -> '.join(s.city for s in stops)
    '''))
    served = StdioTransport(sys.executable, ['-m', 'funccall', 'mcp', 'serve', 'mixed.py', '--task', 'where_ran'], cwd=str(tmp_path))
    out = Agent(TestModel(), toolsets=[MCPToolset(served)]).run_sync('go').output
    assert json.loads(out) == {'where_ran': 'funccall-mcp-tasks', 'route': 'a'}  # the task ran on the tasks' loop

# --- a hostile server against MCPClient: a store that lies about the task (what any server may send) ----------

class Liar(MemoryTaskStore):
    "The in-memory store, each record read back with `patch` over it: the server then says what the patch says"
    def __init__(self, patch: dict): super().__init__(); self.patch = patch
    async def get(self, tid):
        rec = await super().get(tid)
        return None if rec is None else {**rec, **self.patch}

@pytest.mark.parametrize('code', [types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT])
def test_a_failed_tasks_error_code_is_not_read_as_a_lost_connection_or_a_timeout(code):
    # attack: a failed task whose error carries -32000 or -32001 came out of MCPClient as MCPConnectionError or a
    # TimeoutError ("got no answer"): the server's own words, dressed as the client's transport failing
    liar = Liar({'status': 'failed', 'error': {'code': code, 'message': 'the server says so'}})
    with MCPClient(mk_server([hold], tasks=['hold'], store=liar), timeout=T) as c:
        with pytest.raises(MCPToolError, match="'hold': the server says so") as e: c.tools()['hold'](0.1)
    assert type(e.value) is MCPToolError and e.value.code == code

def test_a_reply_naming_another_task_does_not_redirect_the_polls():
    # attack: a `tasks/get` reply with another `taskId` sent the next polls (and the cancel) to that task
    with MCPClient(mk_server([hold], tasks=['hold'], store=Liar({'taskId': 'someone-elses'})), timeout=T) as c:
        assert c.tools()['hold'](0.6) == 'held to the end'

def test_a_server_asking_again_and_again_is_answered_at_the_polls_pace():
    # attack: a task that says `input_required` with the same question after every answer had the user's callback
    # asked 1,600 times in 1.5 s (4 million in the default task_timeout)
    asked = []
    form = {'message': 'Which?', 'requestedSchema': {'type': 'object', 'properties': {'c': {'type': 'string'}}}}
    liar = Liar({'status': 'input_required', 'inputRequests': {'q': {'method': 'elicitation/create', 'params': form}}})
    def answer(message, schema):
        asked.append(message)
        return {'c': 'teal'}
    with MCPClient(mk_server([hold], tasks=['hold'], store=liar), timeout=T, task_timeout=1.5, on_elicit=answer) as c:
        with pytest.raises(TimeoutError, match='did not end within 1.5 s'): c.tools()['hold'](5)
    assert 1 <= len(asked) <= 6  # polls 0.1, 0.2, 0.4, 0.8 s apart: at most five fit

def test_a_status_that_never_ends_is_bounded_by_task_timeout():
    with MCPClient(mk_server([hold], tasks=['hold'], store=Liar({'status': 'dawdling', 'pollIntervalMs': -1})), timeout=T, task_timeout=1) as c:
        start = time.monotonic()
        with pytest.raises(TimeoutError, match='did not end within 1 s'): c.tools()['hold'](0.1)
        assert time.monotonic() - start < 1 + T / 2

# --- the store failing under a running task (Redis down for a while) --------------------------------------------

class Flaky(MemoryTaskStore):
    "The in-memory store, failing every look and every change while `down` (as Redis does when it is unreachable)"
    down = False
    def _check(self):
        if self.down: raise ConnectionError('Error 111 connecting to 10.0.0.7:6379. Connection refused.')
    async def create(self, tid, rec, ttl): self._check(); return await super().create(tid, rec, ttl)
    async def get(self, tid): self._check(); return await super().get(tid)
    async def beat(self, tid): self._check(); return await super().beat(tid)
    async def finish(self, tid, rec): self._check(); return await super().finish(tid, rec)

def test_a_task_outlives_its_store_failing_and_its_end_is_recorded_once_the_store_is_back():
    # attack: Redis down while a task ran killed the task's watcher at its first look: the tool ran on unwatched,
    # its result was dropped and its record said `working` until it expired (an hour), so no worker could cancel it
    store = Flaky()
    async def main():
        async with Client(mk_server([hold], tasks=['hold'], store=store), extensions=[TasksExt()]) as c:
            h = await start(c, 'hold', {'s': 0.8})
            store.down = True
            await asyncio.sleep(2)  # the watcher's looks fail, and so does recording the end
            store.down = False
            return await wait(c.session, h.task_id)
    done = arun(main())
    assert done['status'] == 'completed' and done['result']['structuredContent'] == {'result': 'held to the end'}

def test_a_store_down_when_a_task_starts_is_an_error_result_that_names_no_host():
    # attack: Redis unreachable at tools/call was a bare "Internal server error" protocol error
    store = Flaky()
    store.down = True
    async def main():
        async with Client(mk_server([quick], tasks=['quick'], store=store), extensions=[TasksExt()]) as c:
            return await c.session.call_tool('quick', {'x': 1}, allow_claimed=True)
    r = arun(main())
    assert isinstance(r, types.CallToolResult) and r.is_error
    assert r.content[0].text == "Tool 'quick': the server could not record its task: try again later"

class Stalled(Flaky):
    "The in-memory store, failing as `RedisStore` fails (`StoreError`) while `down`"
    def _check(self):
        if self.down: raise StoreError("the server's shared store (Redis) did not answer within 2 s: try again in a few seconds")

def test_mcpclient_rides_out_a_store_failing_a_while_and_gets_the_tasks_result():
    # a Redis restart or stall under a running task failed the caller's call at its first poll, though the task ran on
    store = Stalled()
    def blip():
        time.sleep(0.3)
        store.down = True
        time.sleep(1.5)
        store.down = False
    th = threading.Thread(target=blip)
    with MCPClient(mk_server([hold], tasks=['hold'], store=store), timeout=T) as c:
        th.start()
        got = c.tools()['hold'](1.0)
    th.join()
    assert got == 'held to the end'

def test_mcpclient_gives_up_on_a_store_that_stays_down_saying_so(monkeypatch):
    import funccall.mcp._tasks as tasks_mod
    monkeypatch.setattr(tasks_mod, '_STORE_GRACE', 1.0)
    store = Stalled()
    with MCPClient(mk_server([hold], tasks=['hold'], store=store), timeout=T) as c:
        hold_ = c.tools()['hold']
        threading.Timer(0.3, lambda: setattr(store, 'down', True)).start()
        t0 = time.monotonic()
        with pytest.raises(MCPToolError, match='did not answer within 2 s') as e: hold_(30)
    store.down = False  # (the task runs on, and records its end)
    assert e.value.code == STORE_ERROR and time.monotonic() - t0 < 10

def test_a_task_whose_store_failed_for_a_while_can_still_be_cancelled():
    store = Flaky()
    async def main():
        async with Client(mk_server([patient], tasks=['patient'], store=store), extensions=[TasksExt()]) as c:
            h = await start(c, 'patient', {})
            store.down = True
            await asyncio.sleep(1.2)  # two of the watcher's looks fail
            store.down = False
            await send(c.session, 'tasks/cancel', taskId=h.task_id)
            return await wait(c.session, h.task_id)
    assert arun(main())['status'] == 'cancelled'
    assert stopped.wait(10)  # the tool heard of it through its context (unwatched, it ran on for T s)

# --- a task tool's calls hold no more of the pool than a plain tool's -------------------------------------------

def other(x: int) -> int:
    "Adds one (a sync tool, served plainly)"
    return x + 1

def test_sync_tasks_of_one_tool_leave_pool_slots_for_the_other_tools():
    # attack: calls run as tasks skipped the per-tool share of the worker pool: three blocked `held` tasks took both
    # slots of a 2-thread pool, and every other sync tool's call waited for them
    from funccall.core._run import max_workers, set_max_workers
    was = max_workers()
    set_max_workers(2)
    async def main():
        async with Client(mk_server([held, other], tasks=['held']), extensions=[TasksExt()]) as c:
            hs = [await start(c, 'held', {'n': i}) for i in range(3)]
            await asyncio.sleep(0.5)  # the tasks are on their loop, holding what they may
            r = await asyncio.wait_for(c.session.call_tool('other', {'x': 1}), 10)  # starved, it waited for the gate (T s)
            gate.set()
            return r, [(await wait(c.session, h.task_id))['status'] for h in hs]
    try: r, ends = arun(main())
    finally: set_max_workers(was)
    assert r.structured_content == {'result': 2} and ends == ['completed'] * 3

# --- whose task is it: another caller (OAuth) sees none of it, and ids can't be guessed --------------------------

def _user(cid: str):
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken
    return AuthenticatedUser(AccessToken(token='t-' + cid, client_id=cid, scopes=[], subject=cid))

def test_another_authenticated_caller_can_not_get_cancel_or_update_a_task_it_knows_the_id_of():
    from mcp.server.auth.middleware.auth_context import auth_context_var
    server = mk_server([held], tasks=['held'])
    async def main():
        alice = auth_context_var.set(_user('alice'))
        async with Client(server, extensions=[TasksExt()]) as a:
            h = await start(a, 'held', {'n': 1})
            mallory = auth_context_var.set(_user('mallory'))
            async with Client(server, extensions=[TasksExt()]) as m:
                for method in ('tasks/get', 'tasks/cancel', 'tasks/update'):
                    with pytest.raises(MCPError, match='Task not found'): await send(m.session, method, taskId=h.task_id)
            auth_context_var.reset(mallory)
            gate.set()
            done = await wait(a.session, h.task_id)
        auth_context_var.reset(alice)
        return done
    assert arun(main())['status'] == 'completed'  # mallory's cancel changed nothing

def test_task_ids_are_unguessable():
    # without OAuth, a task's id is all that guards it: 192 random bits, never repeated
    store = Counting()
    server = mk_server([quick], tasks=['quick'], store=store)
    async def main():
        async with Client(server, extensions=[TasksExt()]) as c:
            for i in range(50): await start(c, 'quick', {'x': i})
    arun(main())
    assert len(set(store.made)) == 50 and all(re.fullmatch(r'[A-Za-z0-9_-]{32}', t) for t in store.made)

def test_a_task_the_server_fails_to_finish_keeps_the_failures_words_in_the_log(monkeypatch):
    # attack: a failure of the server's own (past the tool) put its message in the task's error, which any poller reads,
    # where a plain call's gives only "Internal server error"
    import funccall.mcp.server as m
    def broken(*a, **kw): raise RuntimeError('sk-secret-1234 in the server')
    monkeypatch.setattr(m, '_result', broken)
    async def main():
        async with Client(mk_server([quick], tasks=['quick']), extensions=[TasksExt()]) as c:
            return await wait(c.session, (await start(c, 'quick', {'x': 1})).task_id)
    r = arun(main())
    assert r['status'] == 'failed' and r['error']['message'] == 'RuntimeError' and 'sk-secret' not in json.dumps(r)
