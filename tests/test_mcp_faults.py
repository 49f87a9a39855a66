"""The shared store failing under the MCP server, on a real redis-server of each test's own (loopback, a free port):
restarted with and without persistence, flushed, evicting, full, stopped (SIGSTOP), and a task's worker gone. What must
hold: no answer taken twice, nothing left `working`, no call that needs no store slowed, and every failure a clear error
(never -32603). The servers run in-process here; `test_mcp_faults_cli.py` runs the same faults on `--workers 2`."""
import asyncio, json, shutil, signal, subprocess, time

import pytest

pytest.importorskip('mcp')
if shutil.which('redis-server') is None: pytest.skip('redis-server is not installed (Debian: apt-get install redis-server)', allow_module_level=True)
redis = pytest.importorskip('redis', reason="the redis client is in the dev extra: pip install 'funccall[dev]'")
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from funccall import Tool  # noqa: E402
from funccall.mcp import RedisStore, mk_server  # noqa: E402
from funccall.mcp._store import LOST, STORE_ERROR, WORKER_LOST  # noqa: E402
from test_mcp_tasks import TasksExt, send, start, wait, _free_port  # noqa: E402

T = 30
SECRET = 'a shared secret of at least thirty-two characters'
DURABLE = ('--appendonly', 'yes', '--appendfsync', 'always')  # every write on disk before Redis answers it
YES = {'funccall-confirm': types.ElicitResult(action='accept', content={'confirm': True})}

def arun(coro): return asyncio.run(asyncio.wait_for(coro, 2 * T))

class RedisServer:
    "A redis-server of the test's own on a free loopback port: started, killed (-9), restarted, paused"
    def __init__(self, folder, *opts: str):
        self.port, self.folder, self.opts = _free_port(), folder, opts
        self.url = f'redis://127.0.0.1:{self.port}/0'
        self.start()

    def start(self) -> None:
        self.p = subprocess.Popen(['redis-server', '--port', str(self.port), '--bind', '127.0.0.1', '--dir', str(self.folder),
                                   '--save', '', '--appendonly', 'no', *self.opts], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + T
        while True:
            try:
                if self.cli().ping(): return
            except redis.ConnectionError:
                assert self.p.poll() is None and time.monotonic() < deadline, 'redis-server did not start'
                time.sleep(0.05)

    def cli(self): return redis.Redis(port=self.port, socket_timeout=T)

    def kill(self) -> None:
        self.p.kill()
        self.p.wait(T)

    def restart(self) -> None:
        self.kill()
        self.start()

    def fill(self) -> None:
        "Fill it to its maxmemory (noeviction): writes are refused from now on"
        c = self.cli()
        c.config_set('maxmemory', c.info('memory')['used_memory'] + 200_000)
        try:
            for i in range(10_000): c.set(f'junk:{i}', 'x' * 1000)
        except redis.ResponseError as e: assert 'maxmemory' in str(e)
        else: raise AssertionError('Redis never filled')
        c.config_set('maxmemory', c.info('memory')['used_memory'] // 2)  # full for sure: freed client buffers make no room

@pytest.fixture
def rs(tmp_path):
    s = RedisServer(tmp_path)
    yield s
    s.p.send_signal(signal.SIGCONT)
    s.kill()

ran = []

def record(x: int) -> int:
    "Records that it ran with x"
    ran.append(x)
    return x

async def quick(x: int) -> int:
    "Doubles x"
    return 2 * x

async def hold(s: float) -> str:
    "Waits s seconds"
    await asyncio.sleep(s)
    return 'held to the end'

stopped = []

async def watched(s: float) -> str:
    "Waits s seconds, noting whether it was stopped"
    try: await asyncio.sleep(s)
    except asyncio.CancelledError:
        stopped.append(s)
        raise
    return 'ran to the end'

def big(n: int) -> str:
    "A text of n characters"
    return 'x' * n

def _server(url: str, **kw):
    return mk_server([Tool(record, requires_confirmation=True), quick, hold, watched, big], tasks=['hold', 'watched', 'big'], secret=SECRET,
                     store=RedisStore(url, **kw))

async def _never(ctx, params): raise AssertionError('asked through requestState, never directly')

def client(server): return Client(server, extensions=[TasksExt()], elicitation_callback=_never)  # a client that can be asked (2026-07-28)

async def ask(c, x: int) -> str:
    "A confirmation asked: its requestState"
    q = await c.session.call_tool('record', {'x': x}, allow_input_required=True)
    assert isinstance(q, types.InputRequiredResult), q
    return q.request_state

async def answer(c, x: int, state: str):
    "The answer yes to question `state`: the result, or the MCPError it raised"
    try: return await c.session.call_tool('record', {'x': x}, input_responses=YES, request_state=state)
    except MCPError as e: return e

@pytest.fixture(autouse=True)
def _clear(): ran.clear()

# --- restarts and flushes: an answer sealed before is refused, never taken twice -------------------------------

@pytest.mark.parametrize('opts', [(), DURABLE], ids=['no persistence', 'appendfsync always'])
def test_answers_sealed_before_a_redis_restart_are_refused_and_run_nothing(tmp_path, opts):
    # attack (issue 37): Redis restarted without persistence forgot every used nonce, and 10 of 10 answers already
    # taken were taken again (their tools ran twice). Persistence or not, a state names the epoch it was sealed in
    r = RedisServer(tmp_path, *opts)
    server = _server(r.url)
    async def main():
        async with client(server) as c:
            used, pending = await ask(c, 1), await ask(c, 2)
            first = await answer(c, 1, used)
            await asyncio.to_thread(r.restart)
            replayed, late = await answer(c, 1, used), await answer(c, 2, pending)
            fresh = await ask(c, 3)  # asked after the restart: good once, as ever
            return first, replayed, late, await answer(c, 3, fresh), await answer(c, 3, fresh)
    try: first, replayed, late, again, twice = arun(main())
    finally: r.kill()
    assert first.structured_content == {'result': 1} and again.structured_content == {'result': 3}
    for e in (replayed, late):
        assert isinstance(e, MCPError) and e.code == types.INVALID_PARAMS and 'restarted' in e.message, e
    assert isinstance(twice, MCPError) and 'already used' in twice.message
    assert ran == [1, 3]  # each ran once, the answers in flight over the restart not at all

def test_without_persistence_a_restart_loses_the_tasks_and_their_workers_stop_them(rs):
    server = _server(rs.url)
    async def main():
        async with client(server) as c:
            h = await start(c, 'watched', {'s': 20})
            await asyncio.sleep(0.3)
            await asyncio.to_thread(rs.restart)
            with pytest.raises(MCPError, match='Task not found'): await send(c.session, 'tasks/get', taskId=h.task_id)
            deadline = time.monotonic() + 5
            while not stopped and time.monotonic() < deadline: await asyncio.sleep(0.1)
    stopped.clear()
    arun(main())
    assert stopped == [20]  # its worker's next look found no record: the tool was stopped, not left running unseen

def test_an_unreachable_redis_is_a_clear_error_for_an_answer_and_a_read(rs):
    server = _server(rs.url)
    async def main():
        async with client(server) as c:
            state, h = await ask(c, 1), await start(c, 'hold', {'s': 0})
            await wait(c.session, h.task_id)
            rs.kill()
            with pytest.raises(MCPError) as e: await send(c.session, 'tasks/get', taskId=h.task_id)
            return await answer(c, 1, state), e.value, await c.session.call_tool('quick', {'x': 1})
    taken, read, plain = arun(main())
    for e in (taken, read): assert e.code == STORE_ERROR and 'is unreachable: try again in a few seconds' in e.message
    assert plain.structured_content == {'result': 2} and ran == []

def test_a_flush_of_redis_also_refuses_every_answer_sealed_before(rs):
    server = _server(rs.url)
    async def main():
        async with client(server) as c:
            used = await ask(c, 1)
            await answer(c, 1, used)
            rs.cli().flushall()  # the same run_id: the epoch's token is what changed
            return await answer(c, 1, used)
    e = arun(main())
    assert isinstance(e, MCPError) and 'restarted' in e.message and ran == [1]

def test_with_persistence_a_finished_task_is_read_after_a_restart(tmp_path):
    r = RedisServer(tmp_path, *DURABLE)
    server = _server(r.url)
    async def main():
        async with client(server) as c:
            done = await wait(c.session, (await start(c, 'hold', {'s': 0.1})).task_id)
            await asyncio.to_thread(r.restart)
            return done, await send(c.session, 'tasks/get', taskId=done['taskId'])
    try: done, after = arun(main())
    finally: r.kill()
    assert done['status'] == after['status'] == 'completed' and after['result'] == done['result']

def test_a_redis_that_evicts_keys_takes_no_answer_and_says_what_to_set(rs):
    # a used nonce evicted (allkeys-lru, or volatile-*: nonces have a TTL) is an answer taken twice
    server = _server(rs.url)
    async def main():
        async with client(server) as c:
            state = await ask(c, 1)
            rs.cli().config_set('maxmemory-policy', 'allkeys-lru')
            return await answer(c, 1, state), await c.session.call_tool('record', {'x': 2}, allow_input_required=True)
    taken, asked = arun(main())
    assert isinstance(taken, MCPError) and taken.code == STORE_ERROR and 'noeviction' in taken.message and 'nothing was run' in taken.message
    assert isinstance(asked, types.CallToolResult) and asked.is_error and 'noeviction' in asked.content[0].text
    assert ran == []

# --- full: every answer a clear error, nothing recorded, and taken once it has room again ----------------------

def test_a_full_redis_is_a_clear_error_for_every_answer_never_an_internal_error(rs):
    # attack (issue 37): Redis at maxmemory (noeviction) made a confirmation's answer a bare -32603 Internal server error
    server = _server(rs.url)
    async def main():
        async with client(server) as c:
            state = await ask(c, 1)
            running = await start(c, 'hold', {'s': 1.5})
            rs.fill()
            full = await answer(c, 1, state)
            task = await c.session.call_tool('hold', {'s': 0.1}, allow_claimed=True)
            plain = await c.session.call_tool('quick', {'x': 4})
            polled = await send(c.session, 'tasks/get', taskId=running.task_id)  # reading needs no room
            rs.cli().config_set('maxmemory', 0)
            return full, task, plain, polled, await answer(c, 1, state), await wait(c.session, running.task_id)
    full, task, plain, polled, later, ended = arun(main())
    assert isinstance(full, MCPError) and full.code == STORE_ERROR and full.code != types.INTERNAL_ERROR
    assert 'is full' in full.message and 'nothing ran' in full.message and 'maxmemory' in full.message
    assert task.is_error and 'is full' in task.content[0].text and 'try again later' in task.content[0].text
    assert plain.structured_content == {'result': 8} and polled['status'] == 'working'
    assert later.structured_content == {'result': 1} and ran == [1]  # the full store took nothing: the answer counts once, later
    assert ended['status'] == 'completed'  # its end was recorded once Redis had room again

# --- stalled: no call that needs no store waits; one that needs it errs by its deadline -------------------------

def test_a_stalled_redis_holds_no_plain_call_and_a_task_read_errs_by_its_deadline(rs):
    # attack (issue 37): Redis stopped (SIGSTOP) froze the whole worker: the store's calls were synchronous on the event
    # loop (10 s socket timeout), and three `tasks/get` held a plain call 29 s
    server = _server(rs.url, timeout=1.0)
    async def main():
        async with client(server) as c:
            h = await start(c, 'hold', {'s': 0.1})
            await wait(c.session, h.task_id)
            rs.p.send_signal(signal.SIGSTOP)
            try:
                async def poll():
                    t0 = time.monotonic()
                    try: await send(c.session, 'tasks/get', taskId=h.task_id)
                    except MCPError as e: return e, time.monotonic() - t0
                polls = [asyncio.ensure_future(poll()) for _ in range(3)]
                await asyncio.sleep(0.1)
                plain = []
                for i in range(10):
                    t0 = time.monotonic()
                    r = await c.session.call_tool('quick', {'x': i})
                    plain.append((r.structured_content, time.monotonic() - t0))
                return plain, await asyncio.gather(*polls)
            finally: rs.p.send_signal(signal.SIGCONT)
    plain, polls = arun(main())
    assert [v for v, _ in plain] == [{'result': 2 * i} for i in range(10)] and max(s for _, s in plain) < 0.5
    for e, took in polls:
        assert e.code == STORE_ERROR and 'did not answer within 1 s' in e.message and took < 3

# --- caps across workers ------------------------------------------------------------------------------------

def test_a_clients_share_of_redis_holds_across_workers(rs):
    # attack (issue 37): one client with max_tasks=2 per process left 400 records (+249 MB) in Redis for an hour
    a, b = (_server(rs.url, per_client=3) for _ in range(2))
    async def main():
        async with Client(a, extensions=[TasksExt()]) as ca, Client(b, extensions=[TasksExt()]) as cb:
            hs = [await start(c, 'hold', {'s': 1.5}) for c in (ca, cb, ca)]
            over = await cb.session.call_tool('hold', {'s': 0.1}, allow_claimed=True)
            for h in hs: await wait(ca.session, h.task_id)
            again = await start(cb, 'hold', {'s': 0.1})
            await wait(cb.session, again.task_id)
            return over, again, rs.cli().zcard('funccall:mcp:client:this process')
    over, again, kept = arun(main())
    assert over.is_error and 'you hold 3 tasks' in over.content[0].text
    assert again.status == 'working' and kept == 3  # the oldest finished record made room: never more than 3 kept

def test_redis_holds_at_most_max_tasks_records_in_all(rs):
    a, b = (_server(rs.url, max_tasks=4) for _ in range(2))
    async def main():
        async with Client(a, extensions=[TasksExt()]) as ca, Client(b, extensions=[TasksExt()]) as cb:
            for i in range(10): await wait(ca.session, (await start((ca, cb)[i % 2], 'hold', {'s': 0})).task_id)
    arun(main())
    assert rs.cli().zcard('funccall:mcp:tasks') == 4 and len(rs.cli().keys('funccall:mcp:task:*')) == 4

def test_a_result_larger_than_the_store_keeps_fails_the_task_saying_so(rs):
    server = mk_server([big], tasks=['big'], store=RedisStore(rs.url), max_result_bytes=10_000)
    async def main():
        async with client(server) as c:
            return [await wait(c.session, (await start(c, 'big', {'n': n})).task_id) for n in (100, 20_000)]
    small, large = arun(main())
    assert small['status'] == 'completed' and large['status'] == 'failed' and 'larger than this server keeps (10000)' in large['statusMessage']
    assert max(len(v) for v in rs.cli().hvals(f"funccall:mcp:task:{large['taskId']}")) < 10_000

# --- leases: a task whose worker is gone is failed, saying why; a live one never is ----------------------------

def test_a_task_whose_worker_is_gone_is_failed_saying_why_and_a_live_one_runs_on(rs):
    # attack (issue 37): kill -9 of a worker left its tasks `working` for an hour: nothing noticed its worker was gone
    gone = RedisStore(rs.url, lease=1)
    rec = {'taskId': 'orphan' * 4, 'status': 'working', 'createdAt': 'x', 'lastUpdatedAt': 'x', 'ttlMs': 60_000,
           'pollIntervalMs': 500, 'owner': None, 'client': 'this process'}
    asyncio.run(gone.create(rec['taskId'], rec, 60))  # a worker that recorded its task, then died: no beat ever again
    server = _server(rs.url, lease=1)
    async def main():
        async with client(server) as c:
            live = await start(c, 'hold', {'s': 3})  # three leases long: its worker renews it
            first = await send(c.session, 'tasks/get', taskId=rec['taskId'])
            await asyncio.sleep(1.5)
            return first, await send(c.session, 'tasks/get', taskId=rec['taskId']), await wait(c.session, live.task_id)
    first, orphan, live = arun(main())
    assert first['status'] == 'working'
    assert orphan['status'] == 'failed' and orphan['statusMessage'] == LOST and orphan['error'] == {'code': WORKER_LOST, 'message': LOST}
    assert live['status'] == 'completed' and live['result']['structuredContent'] == {'result': 'held to the end'}
    assert json.loads(rs.cli().hget(f"funccall:mcp:task:{rec['taskId']}", 'task'))['status'] == 'failed'  # once, for every worker
    assert not asyncio.run(gone.finish(rec['taskId'], {**rec, 'status': 'completed'}))  # a late end changes nothing

again_runs = []

async def again(x: int) -> int:
    "Doubles x, noting each run (idempotent: a second run does no harm)"
    again_runs.append(x)
    await asyncio.sleep(0.2)
    return 2 * x

def _orphan(store: RedisStore, tid: str, job: dict | None = None) -> None:
    "A task recorded by a worker that then died: no beat ever renews its lease"
    rec = {'taskId': tid, 'status': 'working', 'createdAt': 'x', 'lastUpdatedAt': 'x', 'ttlMs': 60_000, 'pollIntervalMs': 500,
           'owner': None, 'client': 'this process'}
    asyncio.run(store.create(tid, rec, 60, job))

def test_an_idempotent_tools_task_whose_worker_is_gone_runs_again_where_it_is_read(rs):
    # FastMCP redelivers a task after its redelivery timeout; here a tool marked idempotent (Tool(idempotent=True)) has its
    # job in a Redis Stream's consumer group, and the worker reading it after its lease lapsed claims it (XCLAIM) and runs it
    again_runs.clear()
    tid = 'redo' * 6
    _orphan(RedisStore(rs.url, lease=1), tid, {'tool': 'again', 'args': {'x': 21}, 'version': '2026-07-28'})
    server = mk_server([Tool(again, idempotent=True)], tasks=['again'], store=RedisStore(rs.url, lease=1))
    async def main():
        async with client(server) as c:
            await asyncio.sleep(1.3)
            return await send(c.session, 'tasks/get', taskId=tid), await wait(c.session, tid)
    first, done = arun(main())
    assert first['status'] == 'working' and 'redo' not in first  # claimed, not failed
    assert done['status'] == 'completed' and done['result']['structuredContent'] == {'result': 42} and again_runs == [21]
    assert rs.cli().xlen('funccall:mcp:jobs') == 0 and rs.cli().xpending('funccall:mcp:jobs', 'workers')['pending'] == 0  # acked, deleted

def test_an_idempotent_task_runs_at_most_three_times_then_fails_saying_why(rs):
    # a job that kills every worker it lands on must not go round the workers for ever
    tid = 'doom' * 6
    _orphan(RedisStore(rs.url, lease=0.3), tid, {'tool': 'again', 'args': {'x': 1}, 'version': '2026-07-28'})
    seen = []
    for _ in range(3):
        time.sleep(0.5)  # the lease lapses: the worker that last took it is gone too
        got = asyncio.run(RedisStore(rs.url, lease=0.3).get(tid))
        seen.append((got['status'], got.get('redo', {}).get('tool')))
    assert seen == [('working', 'again'), ('working', 'again'), ('failed', None)]
    assert rs.cli().xpending('funccall:mcp:jobs', 'workers')['pending'] == 0

def test_the_store_names_no_url_in_its_repr():
    assert 'hunter2' not in repr(RedisStore('redis://:hunter2@127.0.0.1:1/0'))

# --- a second review's attacks: failovers, clocks, slow answers, replicas, jobs no worker may run again ---------

def _replica(tmp_path, of: RedisServer) -> RedisServer:
    "A redis-server replicating `of`, once it is in sync"
    (tmp_path / 'replica').mkdir(exist_ok=True)
    r = RedisServer(tmp_path / 'replica', '--replicaof', '127.0.0.1', str(of.port))
    _synced(r)
    return r

def _synced(r: RedisServer) -> None:
    deadline = time.monotonic() + T
    while r.cli().info('replication').get('master_link_status') != 'up':
        assert time.monotonic() < deadline, 'the replica never synced'
        time.sleep(0.05)

def test_a_read_only_replica_at_the_url_is_a_clear_error_never_an_internal_one(tmp_path, rs):
    # attack: a failover that left the URL on a replica; its READONLY reply was re-raised: a bare -32603 and a traceback
    r = _replica(tmp_path, rs)
    server = _server(r.url)
    async def main():
        async with client(server) as c:
            return (await c.session.call_tool('record', {'x': 1}, allow_input_required=True),
                    await c.session.call_tool('hold', {'s': 0}, allow_claimed=True), await c.session.call_tool('quick', {'x': 1}))
    try: asked, task, plain = arun(main())
    finally: r.kill()
    for e in (asked, task): assert e.is_error and 'read-only replica' in e.content[0].text and 'try again later' in e.content[0].text
    assert plain.structured_content == {'result': 2} and ran == []

def test_a_failover_and_back_to_the_same_redis_refuses_an_answer_its_write_lost(tmp_path, rs):
    # attack: an answer taken on the old primary after its replica was promoted (a write the failover loses), then the old
    # primary resynced from the new one and promoted again, unrestarted: the same run_id and token, the used nonce gone
    r = _replica(tmp_path, rs)
    server = _server(rs.url)
    async def main():
        async with client(server) as c:
            state = await ask(c, 1)
            r.cli().replicaof('NO', 'ONE')                       # the replica promoted; the old primary still takes writes
            first = await answer(c, 1, state)                    # ... and this one is lost with it
            rs.cli().replicaof('127.0.0.1', r.port)
            await asyncio.to_thread(_synced, rs)                 # the old primary resynced from the new one
            rs.cli().replicaof('NO', 'ONE')                      # and promoted back
            return first, await answer(c, 1, state)
    try: first, replayed = arun(main())
    finally: r.kill()
    assert first.structured_content == {'result': 1}
    assert isinstance(replayed, MCPError) and replayed.code == types.INVALID_PARAMS and 'restarted' in replayed.message
    assert ran == [1]

def test_a_worker_whose_clock_is_behind_takes_no_answer_redis_has_forgotten(rs, monkeypatch):
    # attack: a used nonce is kept until the state expires, by the spending worker's clock; a worker 2 s behind still
    # found the state unexpired after Redis had dropped the nonce, and took it again. Redis's clock decides both now
    from funccall.mcp._state import Sealer, StateError
    sealer, store = Sealer(SECRET, ttl=1), RedisStore(rs.url)
    state = sealer.seal('t', {}, {'epoch': asyncio.run(store.epoch())})
    asyncio.run(sealer.spend(sealer.check(state, 't', {}), store))
    time.sleep(1.3)  # the state expired, and Redis forgot its nonce
    real = time.time
    monkeypatch.setattr(time, 'time', lambda: real() - 2)  # another worker, its clock 2 s behind
    p = sealer.check(state, 't', {})  # unexpired by its clock
    with pytest.raises(StateError, match='expired'): asyncio.run(sealer.spend(p, store))

def test_a_spend_redis_takes_after_the_deadline_runs_nothing_and_never_counts_twice(rs):
    # attack: Redis stalled past the deadline with the spend in its socket: the client gave up, Redis then took the nonce.
    # Neither the late 'ok' nor the answer sent again may run the tool; the reused connection reads no stale reply
    server = _server(rs.url, timeout=0.5)
    async def main():
        async with client(server) as c:
            state = await ask(c, 1)
            rs.p.send_signal(signal.SIGSTOP)
            try: late = await answer(c, 1, state)
            finally:
                await asyncio.sleep(0.5)
                rs.p.send_signal(signal.SIGCONT)
            await asyncio.sleep(0.3)  # Redis ran the spend it had queued
            again, fresh = await answer(c, 1, state), await ask(c, 2)
            return late, again, await answer(c, 2, fresh)
    late, again, fresh = arun(main())
    assert isinstance(late, MCPError) and late.code == STORE_ERROR and 'nothing ran' in late.message and 'call the tool again' in late.message
    assert isinstance(again, MCPError) and 'already used' in again.message
    assert fresh.structured_content == {'result': 2} and ran == [2]

once_runs = []

async def once(x: int) -> int:
    "Notes that it ran (not idempotent: a second run would do it twice)"
    once_runs.append(x)
    return x

def test_a_job_left_for_a_tool_not_idempotent_here_is_failed_never_run_again(rs):
    # attack: a job in the stream names a task tool that is not idempotent on this worker (a deploy changed it, or
    # another server shares the prefix): it was run again all the same, or claimed and left `working` for 3 leases
    once_runs.clear()
    tid = 'nope' * 6
    _orphan(RedisStore(rs.url, lease=0.3), tid, {'tool': 'once', 'args': {'x': 1}, 'version': '2026-07-28'})
    server = mk_server([once], tasks=['once'], store=RedisStore(rs.url, lease=0.3))
    async def main():
        async with client(server) as c:
            await asyncio.sleep(0.5)
            got = await send(c.session, 'tasks/get', taskId=tid)
            await asyncio.sleep(0.3)
            return got
    got = arun(main())
    assert got['status'] == 'failed' and got['error']['code'] == WORKER_LOST and 'not idempotent' in got['statusMessage']
    assert once_runs == [] and rs.cli().xpending('funccall:mcp:jobs', 'workers')['pending'] == 0

def test_a_malformed_url_is_refused_at_once_without_its_password():
    with pytest.raises(ValueError) as e: RedisStore('redis://:hunter2@127.0.0.1:notaport/0')
    assert 'hunter2' not in str(e.value) and 'Redis URL' in str(e.value)

def test_a_wrong_password_is_a_clear_error_naming_no_password(tmp_path, caplog):
    class Locked(RedisServer):
        def cli(self): return redis.Redis(port=self.port, password='right-one', socket_timeout=T)
    r = Locked(tmp_path, '--requirepass', 'right-one')
    server = _server(f'redis://:hunter2@127.0.0.1:{r.port}/0')
    async def main():
        async with client(server) as c: return await c.session.call_tool('record', {'x': 1}, allow_input_required=True)
    caplog.set_level('INFO')
    try: asked = arun(main())
    finally: r.kill()
    assert asked.is_error and 'refused the credentials' in asked.content[0].text
    assert 'hunter2' not in asked.content[0].text and 'hunter2' not in caplog.text

async def stall(s: float) -> str:
    "Holds its event loop (and the GIL between bytecodes) s seconds: no beat of any task on it renews a lease meanwhile"
    time.sleep(s)
    return 'finished after all'

def test_a_task_failed_while_its_worker_stalled_stays_failed_when_the_tool_ends(rs):
    # attack: a long GIL- or loop-holding tool stops its worker's beats; another read finds the lease lapsed and fails the
    # task. The tool then ends: its result must not land as `completed` after `failed` (the first end wins)
    server = mk_server([stall], tasks=['stall'], store=RedisStore(rs.url, lease=0.3))
    async def main():
        async with client(server) as c:
            h = await start(c, 'stall', {'s': 1.5})
            await asyncio.sleep(0.8)  # the lease lapsed while the tasks' loop is held
            failed = await send(c.session, 'tasks/get', taskId=h.task_id)
            await asyncio.sleep(1.5)  # the tool ended, and its worker tried to record that
            return failed, await send(c.session, 'tasks/get', taskId=h.task_id)
    failed, after = arun(main())
    assert failed['status'] == 'failed' and failed['statusMessage'] == LOST
    assert after == failed  # unchanged: never completed after failed

def test_a_redis_whose_name_never_resolves_holds_no_plain_call_and_errs_by_the_deadline(monkeypatch):
    # attack: the Redis URL's host name whose DNS lookup hangs (getaddrinfo runs in a thread: the wait must not)
    import socket
    real = socket.getaddrinfo
    def hangs(host, *a, **kw):
        if host == 'redis.hangs.invalid': time.sleep(3)
        return real(host, *a, **kw)
    monkeypatch.setattr(socket, 'getaddrinfo', hangs)
    server = _server('redis://redis.hangs.invalid:6379/0', timeout=0.5)
    async def main():
        async with client(server) as c:
            t0 = time.monotonic()
            asked = await c.session.call_tool('record', {'x': 1}, allow_input_required=True)
            took = time.monotonic() - t0
            t0 = time.monotonic()
            plain = await c.session.call_tool('quick', {'x': 1})
            return asked, took, plain, time.monotonic() - t0
    asked, took, plain, fast = arun(main())
    assert asked.is_error and 'did not answer within 0.5 s' in asked.content[0].text and took < 2
    assert plain.structured_content == {'result': 2} and fast < 0.5

def test_every_key_but_the_epoch_expires_and_gone_workers_leave_no_consumer(rs):
    # attack: each worker (each process start) joined the jobs' consumer group as a consumer of its own and never left it,
    # and the jobs' stream had no expiry: a server restarted often grew its Redis for ever
    async def main():
        for i in range(5):  # five workers, one after another, each with an idempotent task it ran to the end
            s = RedisStore(rs.url)
            rec = {'taskId': f'task{i}', 'status': 'working', 'owner': None, 'client': 'c'}
            await s.create(rec['taskId'], rec, 60, {'tool': 'again', 'args': {}, 'version': 'v'})
            await s.finish(rec['taskId'], {**rec, 'status': 'completed'})
        await s.spend('n', time.time() + 30, await s.epoch())
    arun(main())
    c = rs.cli()
    assert len(c.xinfo_consumers('funccall:mcp:jobs', 'workers')) <= 1  # only the latest worker's, none of the gone ones
    assert {k.decode() for k in c.keys('*') if c.pttl(k) < 0} == {'funccall:mcp:epoch'}  # which must outlive every state

def test_one_answer_sent_to_two_workers_at_once_runs_once(rs):
    # attack: the same state raced on two workers sharing Redis: the epoch check and the nonce taken in one script
    a, b = _server(rs.url), _server(rs.url)
    async def main():
        async with client(a) as ca, client(b) as cb:
            states = [await ask(ca, x) for x in range(10)]
            return [await asyncio.gather(answer(ca, x, s), answer(cb, x, s)) for x, s in enumerate(states)]
    pairs = arun(main())
    for got in pairs: assert sorted(isinstance(g, MCPError) and 'already used' in g.message for g in got) == [False, True]
    assert sorted(ran) == list(range(10))
