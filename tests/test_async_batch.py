"""An async batch of sync tools (`Toolbox.abatch`, `run_tool_calls_async`) runs each call's whole pipeline in a worker
thread, as the sync batch does, and the loop only hands the calls over and takes their results (issue 22: a turn of 8
sync tools at most 1.2x `asyncio.to_thread` + `gather`). It answers every call as the loop's way (`batches._gathered`,
each call's pipeline a task on the loop) answers it, keeps the batch's concurrency limit, the caller's context and
`on_result` (on the loop's thread), awaits what a sync tool hands back on the caller's loop, gives the slots of calls
left behind back, and leaves to the loop's way every tool with something around it and every batch with a deadline."""
import asyncio
import contextlib
import contextvars
import threading
import time

import pytest
from test_sync_batch import CALLS, _seen, _tools, add, boom

from funccall import Tool, Toolbox, run_tool_calls, run_tool_calls_async
from funccall.loop import batches
from funccall.core._run import WorkersExhausted, _workers, set_max_workers, to_thread


def _threaded(tb: Toolbox, calls) -> bool: return batches._thread_jobs(tb._batch(calls, None)) is not None


def test_every_call_is_answered_as_the_loop_s_way_answers_it():
    tb, seen = _tools(), []
    assert _threaded(tb, CALLS)
    threaded = asyncio.run(tb.abatch(CALLS))
    looped = asyncio.run(batches._gathered(tb._batch(CALLS, None), 8, None))
    assert [_seen(r) for r in threaded] == [_seen(r) for r in looped] == [_seen(r) for r in tb.batch(CALLS)]
    assert [r.value for r in threaded[:2]] == [3, 9] and threaded[11].value == [0, 1, 2] and threaded[12].value == 8
    assert threaded[13].value == [0, 1] and threaded[14].status == 'pending' and threaded[6].stop and threaded[7].stop
    assert threaded[5].failure == 'name' and threaded[3].failure == 'arguments' and threaded[4].failure == 'tool'
    tb.on_result = seen.append
    asyncio.run(tb.abatch(CALLS))
    assert len(seen) == len(CALLS) and {r.call_id for r in seen} == {c[2] for c in CALLS}

def test_each_call_runs_in_a_worker_thread_in_the_caller_s_context_and_on_result_sees_each_on_the_loop():
    var = contextvars.ContextVar('var', default='unset')
    def where(i: int) -> tuple:
        "The thread and the context the call runs in"
        return threading.get_ident(), var.get()
    seen = []
    tb = Toolbox([where], on_result=lambda r: seen.append((r, threading.get_ident())))
    async def main():
        var.set('caller')
        return threading.get_ident(), await tb.abatch([('where', {'i': i}) for i in range(4)] + [('nope', {})])
    loop_thread, rs = asyncio.run(main())
    assert all(r.value[1] == 'caller' and r.value[0] != loop_thread for r in rs[:4])
    assert sorted(id(r) for r, _ in seen) == sorted(map(id, rs)) and seen[0][0] is rs[4]  # each once; a refused name first
    assert {th for _, th in seen} == {loop_thread}

def test_a_coroutine_a_sync_tool_hands_back_is_awaited_on_the_caller_s_loop():
    "What it holds of the caller's loop (a lock, a client's connection) works, as when the loop awaited it itself"
    async def main():
        loop, lock = asyncio.get_running_loop(), asyncio.Lock()
        async def guarded(v):
            async with lock: return asyncio.get_running_loop() is loop, v
        def deferred(v: int):
            "Hands back a coroutine of the caller's loop"
            return guarded(v)
        async def items(n):
            for _ in range(n): yield asyncio.get_running_loop() is loop
        def gen(n: int):
            "Hands back an async generator"
            return items(n)
        tb = Toolbox([deferred, gen, add])
        calls = [('deferred', {'v': 1}), ('gen', {'n': 2}), ('add', {'a': 1, 'b': 2})]
        assert _threaded(tb, calls)
        return [r.value for r in await tb.abatch(calls)], [r.value for r in await batches._gathered(tb._batch(calls, None), 8, None)]
    threaded, looped = asyncio.run(main())
    assert threaded == looped == [(True, 1), [True, True], 3]

def test_at_most_max_concurrency_run_at_once():
    active, sizes = set(), []
    def work(i: int) -> int:
        "Holds its slot a moment"
        active.add(i)
        sizes.append(len(active))
        time.sleep(0.02)
        active.discard(i)
        return i
    for tb, limit in ((Toolbox([work], max_concurrency=3), None), (Toolbox([work]), 3)):
        sizes.clear()
        rs = asyncio.run(tb.abatch([('work', {'i': i}) for i in range(20)], max_concurrency=limit))
        assert [r.value for r in rs] == list(range(20)) and 1 < max(sizes) <= 3

def test_the_loop_runs_on_while_the_calls_run():
    def slow(s: float) -> str:
        "Sleeps"
        time.sleep(s)
        return 'slept'
    async def main():
        ticks = 0
        async def tick():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1
        t = asyncio.ensure_future(tick())
        rs = await Toolbox([slow]).abatch([('slow', {'s': 0.2})] * 3)
        t.cancel()
        return [r.value for r in rs], ticks
    values, ticks = asyncio.run(main())
    assert values == ['slept'] * 3 and ticks >= 5

@pytest.mark.parametrize('kw', [{'pre_hook': lambda t, a: None}, {'post_hook': lambda t, a, v: v}, {'timeout': 5},
                                {'retries': 1, 'idempotent': True}, {'middleware': (lambda t, a, nxt: nxt(),)}, {'cache_ttl': 60},
                                {'requires_confirmation': True, 'confirm': lambda t, a: True}],
                         ids=['pre_hook', 'post_hook', 'timeout', 'retries', 'middleware', 'cache', 'confirm'])
def test_a_tool_with_more_around_it_goes_the_loop_s_way(kw):
    ran = []
    tb = Toolbox([Tool(add, **kw), boom], on_result=lambda r: ran.append(threading.get_ident()))
    assert not _threaded(tb, [('add', {'a': 1, 'b': 2}), ('boom', {})])
    async def main(): return threading.get_ident(), await tb.abatch([('add', {'a': 1, 'b': 2}), ('boom', {})])
    loop_thread, rs = asyncio.run(main())
    assert [r.ok for r in rs] == [True, False] and set(ran) == {loop_thread}

def test_hooks_run_on_the_loop_s_thread():
    ran = []
    tb = Toolbox([Tool(add, pre_hook=lambda t, a: ran.append(threading.get_ident())), boom])
    async def main():
        await tb.abatch([('add', {'a': 1, 'b': 2}), ('boom', {})])
        return threading.get_ident()
    assert ran == [asyncio.run(main())]

def test_a_deadline_still_ends_a_slow_call():
    def slow() -> str:
        "Sleeps"
        time.sleep(0.5)
        return 'late'
    for tb, timeout in ((Toolbox([slow, add], timeout=0.05), None), (Toolbox([slow, add]), 0.05)):
        rs = asyncio.run(tb.abatch([('slow', {}), ('add', {'a': 1, 'b': 2})], timeout=timeout))
        assert rs[0].failure == 'timeout' and rs[1].value == 3

def test_a_missing_injected_value_is_raised():
    def owned(user_id: int, n: int) -> str:
        "Whose"
        return f'{user_id}:{n}'
    tb = Toolbox([Tool(owned, inject='user_id'), add])
    calls = [('owned', {'n': 1}), ('add', {'a': 1, 'b': 2})]
    with pytest.raises(TypeError, match="needs 'user_id'"): asyncio.run(tb.abatch(calls))
    assert [r.value for r in asyncio.run(tb.abatch(calls, injected={'user_id': 3}))] == ['3:1', 3]

def test_what_escapes_a_tool_escapes_the_batch():
    def leave() -> int:
        "Leaves the program"
        raise SystemExit(3)
    tb = Toolbox([leave, add])
    assert _threaded(tb, [('leave', {})])
    with pytest.raises(SystemExit): asyncio.run(tb.abatch([('leave', {}), ('add', {'a': 1, 'b': 2})]))

def test_a_sync_tool_raising_stopiteration_fails_as_in_the_loop_s_way():
    def stop() -> int:
        "Raises StopIteration, which no asyncio future can hold"
        raise StopIteration('none left')
    tb = Toolbox([stop, add])
    calls = [('stop', {}), ('add', {'a': 1, 'b': 2})]
    async def both(): return await asyncio.wait_for(tb.abatch(calls), 10), await asyncio.wait_for(batches._gathered(tb._batch(calls, None), 8, None), 10)
    threaded, looped = asyncio.run(both())
    assert [_seen(r) for r in threaded] == [_seen(r) for r in looped] == [_seen(r) for r in tb.batch(calls)]
    assert threaded[0].error == 'RuntimeError: StopIteration raised in a worker thread: none left' and threaded[1].value == 3

@contextlib.contextmanager
def _pool(n: int):
    "The pool at `n` calls at once (stragglers in all: `16 * n`) for the block; the event it yields releases the calls it leaves stuck"
    size, release = _workers.size, threading.Event()
    set_max_workers(n)
    try: yield release
    finally:
        release.set()
        set_max_workers(size)

def test_a_call_the_pool_cannot_start_fails_as_in_the_loop_s_way():
    with _pool(1) as release:
        async def main():
            for _ in range(_workers.limit):  # each times out and keeps its thread (or finds them all kept: a slow tool of a test before)
                with pytest.raises((asyncio.TimeoutError, WorkersExhausted)): await asyncio.wait_for(to_thread(release.wait, 30), 0.02)
            return await Toolbox([add, boom]).abatch([('add', {'a': 1, 'b': 2}), ('boom', {})])
        rs = asyncio.run(main())
        assert [r.failure for r in rs] == ['tool', 'tool'] and all('WorkersExhausted' in r.error for r in rs)

def test_a_batch_cancelled_gives_its_calls_slots_back():
    with _pool(2) as release:
        started = []
        def stuck() -> str:
            "Waits for the test"
            started.append(1)
            return release.wait(30) and 'late'
        async def main():
            with pytest.raises(asyncio.TimeoutError): await asyncio.wait_for(Toolbox([stuck]).abatch([('stuck', {})] * 3), 0.1)
        asyncio.run(main())
        deadline = time.monotonic() + 10
        while _workers.running and time.monotonic() < deadline: time.sleep(0.01)
        assert _workers.running == 0  # the stuck calls' slots are free, their threads run on
        time.sleep(0.2)
        assert len(started) == 2  # the third, still waiting for a slot, never starts
        assert [r.value for r in asyncio.run(Toolbox([add]).abatch([('add', {'a': 1, 'b': 2})] * 2))] == [3, 3]

def test_run_tool_calls_async_answers_as_run_tool_calls():
    tb = _tools()
    resp = {'role': 'assistant', 'tool_calls': [{'id': f'c{i}', 'type': 'function', 'function': {'name': n, 'arguments': a}}
                                               for i, (n, a) in enumerate([('add', '{"a": 1, "b": "2"}'), ('boom', '{}'), ('count', '{"n": 2}'),
                                                                           ('nope', '{}'), ('add', '{"a": 1')])]}
    sync, asyn = run_tool_calls(tb, resp), asyncio.run(run_tool_calls_async(tb, resp))
    assert list(sync) == list(asyn) and [_seen(r) for r in sync.results] == [_seen(r) for r in asyn.results]
    assert [m['content'] for m in asyn][:3] == ['3', 'ValueError: boom 0', '[0, 1]']
