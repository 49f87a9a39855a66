"""A sync batch of sync tools (`Toolbox.batch`, `run_tool_calls`) runs each call's whole pipeline in a worker thread,
without an event loop (issue 22): it answers every call as `abatch` does, keeps the batch's concurrency limit, the
caller's context and `on_result`, and leaves to `abatch` every tool with something that runs on the caller's thread
or needs a loop (hooks, confirmation, the cache, timeouts, retries, middleware, async tools)."""
import asyncio
import contextvars
import threading
import time

import pytest

from funccall import StopRun, Tool, Toolbox, run_tool_calls
from funccall.loop import batches
from funccall.core._run import _workers, set_max_workers, to_thread

def add(a: int, b: int) -> int:
    "Add"
    return a + b

def boom(x: int = 0) -> int:
    "Fails"
    raise ValueError(f'boom {x}')

def halt() -> str:
    "Stops the run"
    raise StopRun('enough')

def done() -> str:
    "The last step"
    return 'finished'

def shout(text: str) -> str:
    "Free-form text in"
    return text.upper()

def owned(user_id: int, n: int) -> str:
    "The application says whose"
    return f'{user_id}:{n}'

def count(n: int):
    "Yields its numbers"
    yield from range(n)

async def _later(v): return v

def deferred(v: int):  # a sync callable that hands back a coroutine
    "Hands back a coroutine"
    return _later(v * 2)

async def agen(n: int):
    "An async generator"
    for i in range(n): yield i

def _tools(**kw) -> Toolbox:
    return Toolbox([add, boom, halt, Tool(done, stop_after=True), Tool(shout, text_input=True), Tool(owned, inject='user_id'),
                    count, deferred, agen, Tool(add, name='asked', requires_confirmation=True)], injected={'user_id': 7}, **kw)

CALLS = [('add', {'a': 1, 'b': 2}, 'c0'), ('add', '{"a": "4", "b": 5}', 'c1'), ('add', '{"a": 1', 'c2'), ('add', {'a': 'x', 'b': 1}, 'c3'),
         ('boom', {'x': 3}, 'c4'), ('nope', {}, 'c5'), ('halt', {}, 'c6'), ('done', {}, 'c7'), ('shout', 'hi there', 'c8'),
         ('owned', {'n': 2}, 'c9'), ('owned', {'n': 2, 'user_id': 1}, 'c10'), ('count', {'n': 3}, 'c11'), ('deferred', {'v': 4}, 'c12'),
         ('agen', {'n': 2}, 'c13'), ('asked', {'a': 1, 'b': 1}, 'c14'), (None, {}, 'c15')]

def _seen(r) -> tuple:
    return (r.name, r.arguments, r.status, r.value, r.error, r.call_id, r.failure, r.stop, r.cached, r.attempts, r.limit, type(r.exception))

def test_every_call_is_answered_as_abatch_answers_it():
    tb = _tools()
    assert batches._in_threads(tb._batch(CALLS, None), tb.max_concurrency) is not None  # the batch takes the threads' way
    threaded, looped = tb.batch(CALLS), asyncio.run(tb.abatch(CALLS))
    assert [_seen(r) for r in threaded] == [_seen(r) for r in looped]
    assert [r.value for r in threaded[:2]] == [3, 9] and threaded[11].value == [0, 1, 2] and threaded[12].value == 8
    assert threaded[13].value == [0, 1] and threaded[14].status == 'pending' and threaded[6].stop and threaded[7].stop

def test_run_tool_calls_answers_as_its_async_form():
    from funccall import run_tool_calls_async
    tb = _tools()
    resp = {'role': 'assistant', 'tool_calls': [{'id': f'c{i}', 'type': 'function', 'function': {'name': n, 'arguments': a}}
                                               for i, (n, a) in enumerate([('add', '{"a": 1, "b": 2}'), ('boom', '{}'), ('count', '{"n": 2}')])]}
    sync, asyn = run_tool_calls(tb, resp), asyncio.run(run_tool_calls_async(tb, resp))
    assert list(sync) == list(asyn) and [_seen(r) for r in sync.results] == [_seen(r) for r in asyn.results]
    assert sync[0] == {'role': 'tool', 'tool_call_id': 'c0', 'content': '3'}

def test_each_call_runs_in_a_worker_thread_in_the_caller_s_context_and_on_result_sees_each():
    var = contextvars.ContextVar('var', default='unset')
    def where(i: int) -> tuple:
        "The thread and the context the call runs in"
        return threading.get_ident(), var.get()
    seen = []
    tb = Toolbox([where], on_result=seen.append)
    var.set('caller')
    rs = tb.batch([('where', {'i': i}) for i in range(4)] + [('nope', {})])
    assert all(r.value[1] == 'caller' and r.value[0] != threading.get_ident() for r in rs[:4])
    assert sorted(map(id, seen)) == sorted(map(id, rs)) and seen[0] is rs[4]  # each once; a refused name first, as in `abatch`

def test_at_most_max_concurrency_run_at_once():
    running, peak, lock, gate = [0], [0], threading.Lock(), threading.Event()
    def work(i: int) -> int:
        "Holds its slot a moment"
        with lock: running[0] += 1; peak[0] = max(peak[0], running[0])
        gate.wait(0.02)
        with lock: running[0] -= 1
        return i
    rs = Toolbox([work], max_concurrency=8).batch([('work', {'i': i}) for i in range(20)], max_concurrency=3)
    assert [r.value for r in rs] == list(range(20)) and 1 < peak[0] <= 3

@pytest.mark.parametrize('kw', [{'pre_hook': lambda t, a: None}, {'post_hook': lambda t, a, v: v}, {'timeout': 5},
                                {'retries': 1, 'idempotent': True}, {'middleware': (lambda t, a, nxt: nxt(),)}, {'cache_ttl': 60},
                                {'requires_confirmation': True, 'confirm': lambda t, a: True}],
                         ids=['pre_hook', 'post_hook', 'timeout', 'retries', 'middleware', 'cache', 'confirm'])
def test_a_tool_with_more_around_it_goes_through_abatch(kw):
    tb = Toolbox([Tool(add, **kw), boom])
    assert batches._in_threads(tb._batch([('add', {'a': 1, 'b': 2}), ('boom', {})], None), tb.max_concurrency) is None
    assert [r.ok for r in tb.batch([('add', {'a': 1, 'b': 2}), ('boom', {})])] == [True, False]

def test_hooks_still_run_on_the_caller_s_thread():
    ran = []
    tb = Toolbox([Tool(add, pre_hook=lambda t, a: ran.append(threading.get_ident())), boom])
    tb.batch([('add', {'a': 1, 'b': 2}), ('boom', {})])
    assert ran == [threading.get_ident()]

def test_a_missing_injected_value_is_raised_as_abatch_raises_it():
    tb = Toolbox([Tool(owned, inject='user_id'), add])
    calls = [('owned', {'n': 1}), ('add', {'a': 1, 'b': 2})]
    with pytest.raises(TypeError, match="needs 'user_id'"): tb.batch(calls)
    with pytest.raises(TypeError, match="needs 'user_id'"): asyncio.run(tb.abatch(calls))
    assert [r.value for r in tb.batch(calls, injected={'user_id': 3})] == ['3:1', 3]

def test_what_escapes_a_tool_escapes_the_batch():
    def leave() -> int:
        "Leaves the program"
        raise SystemExit(3)
    tb = Toolbox([leave, add])
    with pytest.raises(SystemExit): tb.batch([('leave', {}), ('add', {'a': 1, 'b': 2})])

def test_a_call_the_pool_cannot_start_fails_as_in_abatch():
    size, release = _workers.size, threading.Event()
    set_max_workers(1)  # one call at a time, 16 stragglers in all
    try:
        async def stick():
            for _ in range(_workers.limit):  # each times out and keeps its thread
                with pytest.raises(asyncio.TimeoutError): await asyncio.wait_for(to_thread(release.wait, 30), 0.02)
        asyncio.run(stick())
        rs = Toolbox([add, boom]).batch([('add', {'a': 1, 'b': 2}), ('boom', {})])
        assert [r.failure for r in rs] == ['tool', 'tool'] and all('WorkersExhausted' in r.error for r in rs)
        release.set()  # the stuck tools return: their threads serve new calls again
        deadline = time.monotonic() + 10
        while _workers.stragglers >= _workers.limit and time.monotonic() < deadline: time.sleep(0.01)
        assert [r.ok for r in Toolbox([add, boom]).batch([('add', {'a': 1, 'b': 2}), ('boom', {})])] == [True, False]
    finally:
        release.set()
        set_max_workers(size)

def test_a_batch_left_early_gives_its_calls_slots_back():
    size, release = _workers.size, threading.Event()
    set_max_workers(2)
    try:
        def leave() -> int:
            "Leaves the program"
            raise SystemExit(3)
        def stuck() -> str:
            "Waits for the test"
            release.wait(30)
            return 'late'
        with pytest.raises(SystemExit): Toolbox([leave, stuck]).batch([('stuck', {}), ('leave', {})])
        deadline = time.monotonic() + 10
        while _workers.running and time.monotonic() < deadline: time.sleep(0.01)
        assert _workers.running == 0  # the stuck call's slot is free, though its thread runs on, as after a timeout
        assert [r.value for r in Toolbox([add]).batch([('add', {'a': 1, 'b': 2})] * 2)] == [3, 3]
    finally:
        release.set()
        set_max_workers(size)

def test_a_sync_tool_raising_stopiteration_fails_its_call_and_hangs_nothing():
    def stop() -> int:
        "Raises StopIteration, which no asyncio future can hold"
        raise StopIteration('none left')
    tb = Toolbox([stop, add])
    async def main(): return await asyncio.wait_for(tb.abatch([('stop', {}), ('add', {'a': 1, 'b': 2})]), 10)
    for rs in (tb.batch([('stop', {}), ('add', {'a': 1, 'b': 2})]), asyncio.run(main())):
        assert rs[0].failure == 'tool' and 'StopIteration' in rs[0].error and rs[1].value == 3

def test_run_tool_calls_of_one_call_runs_it_as_abatch_does():
    def where() -> int:
        "The thread that runs the tool"
        return threading.get_ident()
    resp = {'role': 'assistant', 'tool_calls': [{'id': 'c0', 'type': 'function', 'function': {'name': 'where', 'arguments': '{}'}},
                                                {'id': 'c1', 'type': 'function', 'function': {'name': 'deferred', 'arguments': '{"v": 2}'}}]}
    tb = Toolbox([where, deferred])
    for calls in (resp['tool_calls'][:1], resp['tool_calls'][1:], resp['tool_calls']):
        msgs = run_tool_calls(tb, {**resp, 'tool_calls': calls})
        assert all(r.ok for r in msgs.results) and all(r.value != threading.get_ident() for r in msgs.results)  # in a worker thread
        assert [r.value for r in msgs.results if r.name == 'deferred'] in ([], [4])  # a coroutine handed back is awaited

def test_built_tools_called_at_once_in_many_threads_answer_as_one_at_a_time():
    "Coercion and a built tool's first calls (counted, then its own code made) now run in worker threads side by side"
    from funccall import mk_tool
    def disp(name, /, **kw): return kw
    schema = {'type': 'object', 'required': ['q', 'n'], 'properties': {
        'q': {'type': 'string'}, 'n': {'type': 'integer', 'minimum': 1}, 'tags': {'type': 'array', 'items': {'type': 'string'}},
        'sort': {'enum': ['asc', 'desc']}, 'point': {'type': 'object', 'properties': {'x': {'type': 'number'}}, 'required': ['x']}}}
    args = [{'q': 'x', 'n': 2}, {'q': 'x', 'n': '3', 'sort': 'asc'}, {'q': 'x', 'n': 0}, {'q': 'x', 'n': 2, 'tags': ['a', 'b']},
            {'q': 'x', 'n': 2, 'point': {'x': 1.5}}, {'q': 1, 'n': 2}, {'q': 'x', 'n': 2, 'sort': 'up'}, {'q': 'x', 'n': 2, 'point': {}}]
    def answers(rs): return [(r.status, r.value, r.error) for r in rs]
    calls = [(f'find{i % 4}', a) for i, a in enumerate(args * 2)]
    one_by_one = Toolbox([mk_tool(disp, {'name': f'find{i}', 'inputSchema': schema}) for i in range(4)])
    expected = answers(one_by_one.call(*c) for c in calls)
    tb = Toolbox([mk_tool(disp, {'name': f'find{i}', 'inputSchema': schema}) for i in range(4)], max_concurrency=16)
    for _ in range(40):  # past the calls after which each tool gets code of its own
        assert answers(batches._in_threads(tb._batch(calls, None), tb.max_concurrency)) == expected
