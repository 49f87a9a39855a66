"""The sync forms inside a running event loop, as a notebook cell or an async handler calls them (issue 35): `run_tool_calls`,
`Toolbox.call`/`batch`/`resume`, `Tool.execute` and `call_func` run the work on a loop of their own in a thread of their own
(`core._run.run_sync` -> `in_own_thread`) and give what the async forms give: values, failures as results, the
developer's exceptions raised, timeouts kept, the caller's context variables copied in (and never written back), nested
calls, no thread or loop left behind. The caller's loop waits meanwhile: work bound to it fails (in bounded time) where
the async form runs it. The real kernel's case is `tests/test_readme.py`'s README pasted into a Jupyter kernel."""
import asyncio, contextvars, threading, time

import pytest

from funccall import StopRun, Tool, Toolbox, call_func, run_tool_calls, run_tool_calls_async
from funccall.core import _run
from funccall.core._run import in_own_thread, run_sync

USER = contextvars.ContextVar('user', default='nobody')

def response(*calls) -> dict:
    "An Anthropic message (its JSON form) asking for `calls`: (name, arguments, id)"
    return {'id': 'msg_1', 'type': 'message', 'role': 'assistant', 'model': 'claude', 'stop_reason': 'tool_use',
            'stop_sequence': None, 'usage': {'input_tokens': 1, 'output_tokens': 1},
            'content': [{'type': 'tool_use', 'id': i, 'name': n, 'input': a} for n, a, i in calls]}

def add(a: int, b: int) -> int:
    "Add"
    return a + b

async def aadd(a: int, b: int) -> int:
    "Add, asynchronously"
    await asyncio.sleep(0.01)
    return a + b

async def where() -> list:
    "The thread it runs in, and the user it runs for"
    await asyncio.sleep(0)
    return [threading.get_ident(), USER.get()]

async def nap(s: float) -> str:
    "Sleeps"
    await asyncio.sleep(s)
    return 'woke'

def snooze(s: float) -> str:
    "Sleeps, synchronously"
    time.sleep(s)
    return 'woke'

def run(coro): return asyncio.run(asyncio.wait_for(coro, 60))

def texts(msgs) -> list: return [b['content'] for b in msgs[0]['content']]

def test_run_tool_calls_inside_a_running_loop_answers_as_the_async_form():
    box = Toolbox([add, aadd, Tool(nap, timeout=5), where])
    turn = response(('add', {'a': 1, 'b': 2}, 't1'), ('aadd', {'a': 3, 'b': 4}, 't2'), ('nap', {'s': 0.01}, 't3'),
                    ('nope', {}, 't4'), ('aadd', {'a': 'x', 'b': 1}, 't5'))
    async def main():
        return run_tool_calls(box, turn), await run_tool_calls_async(box, turn), threading.get_ident()
    sync, awaited, loop_thread = run(main())
    assert sync == awaited
    assert texts(sync)[:3] == ['3', '7', 'woke'] and 'nope' in texts(sync)[3] and texts(sync)[4].startswith('ToolInputError')
    async def thread_of_async_tool(): return run_tool_calls(box, response(('where', {}, 't1'))), threading.get_ident()
    [m], caller = run(thread_of_async_tool())
    assert str(caller) not in m['content'][0]['content']  # the async tool ran off the caller's thread (its loop waits)

def test_every_sync_form_runs_inside_a_loop():
    "Each place that refused with 'can't run synchronously inside a running event loop' now runs the work"
    box = Toolbox([aadd, Tool(add, timeout=5), Tool(add, name='guarded', requires_confirmation=True)])
    async def main():
        pending = box.call('guarded', {'a': 5, 'b': 5}, 'g1')
        return (call_func('aadd', {'a': 1, 'b': 1}, [aadd]), Tool(aadd).execute({'a': 2, 'b': 2}).value,
                box.call('aadd', {'a': 3, 'b': 3}).value, box.call('add', {'a': 4, 'b': 4}).value,  # a timeout needs a loop
                [r.value for r in box.batch([('aadd', {'a': 1, 'b': 0}), ('add', {'a': 2, 'b': 0})], timeout=5)],
                pending.status, box.resume(pending).value)
    assert run(main()) == (2, 4, 6, 8, [1, 2], 'pending', 10)

def test_a_streamed_turn_inside_a_loop():
    "A stream's events, read and answered from sync code inside a loop"
    events = [{'type': 'message_start', 'message': {**response(), 'content': [], 'stop_reason': None}},
              {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'tool_use', 'id': 't1', 'name': 'aadd', 'input': {}}},
              {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': '{"a": 2, '}},
              {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': '"b": 5}'}},
              {'type': 'content_block_stop', 'index': 0}, {'type': 'message_stop'}]
    async def main(): return run_tool_calls(Toolbox([aadd]), iter(events))
    assert texts(run(main())) == ['7']

def test_the_callers_context_variables_are_copied_in_and_never_written_back():
    seen = []
    async def mark() -> str:
        "Reads and writes the context"
        seen.append(USER.get())
        USER.set('tool')
        return 'ok'
    def smark() -> str:
        "The same, synchronously, under a deadline"
        seen.append(USER.get())
        USER.set('tool')
        return 'ok'
    box = Toolbox([mark, Tool(smark, timeout=5)])
    async def main():
        USER.set('ada')
        msgs = run_tool_calls(box, response(('mark', {}, 't1'), ('smark', {}, 't2')))
        one = box.call('mark').value
        return texts(msgs), one, USER.get()
    assert run(main()) == (['ok', 'ok'], 'ok', 'ada') and seen == ['ada', 'ada', 'ada']

def test_exceptions_propagate_as_the_same_object_with_the_tools_frames():
    class Halt(BaseException): pass  # escapes the pipeline, as it escapes the async form
    async def bail() -> str:
        "Stops everything"
        raise Halt('now')
    box = Toolbox([bail, add])
    async def main():
        with pytest.raises(Halt, match='now') as e: run_tool_calls(box, response(('bail', {}, 't1')))
        with pytest.raises(TypeError, match="'user'.*injected"):  # the developer's mistake: raised, in the caller
            run_tool_calls(Toolbox([Tool(lambda user, n: n, name='owned', inject='user', description='d')]), response(('owned', {'n': 1}, 't')))
        return e
    e = run(main())
    assert 'bail' in [f.name for f in e.traceback]  # raised where the tool raised it
    async def stop():
        def finish() -> str:
            "Done"
            raise StopRun('all done')
        return run_tool_calls(Toolbox([finish]), response(('finish', {}, 't1'))).stop
    assert run(stop())  # a StopRun is a result's, as in the async form

def test_timeouts_still_hold_inside_a_loop():
    box = Toolbox([Tool(nap, timeout=0.2), Tool(snooze, timeout=0.2)])
    async def main():
        t0 = time.monotonic()
        msgs = run_tool_calls(box, response(('nap', {'s': 30}, 't1'), ('snooze', {'s': 3}, 't2')))
        one = box.call('nap', {'s': 30})
        return msgs.results, one, time.monotonic() - t0
    results, one, took = run(main())
    assert [r.failure for r in results] == ['timeout', 'timeout'] and one.failure == 'timeout'
    assert took < 2.5, took  # two deadlines of 0.2 s, not the tools' 30 s (the straggling sync tool isn't waited for)

def test_nested_sync_calls_each_in_a_thread_of_their_own():
    "A tool that itself runs a sync turn (inside the loop its own call runs on), three deep; and a sync tool doing so"
    inner = Toolbox([aadd])
    async def outer(n: int) -> int:
        "Runs a turn of its own, from sync code, inside its loop"
        return int(texts(run_tool_calls(inner, response(('aadd', {'a': n, 'b': 1}, 'i1'))))[0])
    async def outermost(n: int) -> int:
        "Two levels down"
        return Toolbox([outer]).call('outer', {'n': n}).value * 10
    def sync_outer(n: int) -> int:
        "A sync tool running a sync turn (no loop in its worker thread)"
        return int(texts(run_tool_calls(inner, response(('aadd', {'a': n, 'b': 2}, 'i1'))))[0])
    box = Toolbox([outer, outermost, sync_outer])
    async def main(): return texts(run_tool_calls(box, response(('outer', {'n': 1}, 't1'), ('outermost', {'n': 2}, 't2'), ('sync_outer', {'n': 3}, 't3'))))
    assert run(main()) == ['2', '30', '5']

def test_the_callers_loop_waits_and_work_bound_to_it_fails_in_bounded_time():
    """What the docstrings say: the caller's loop is held while the sync form waits, so a tool awaiting a future of that
    loop can't run there (it fails, at once, naming the other loop); awaited, the async form runs it"""
    ticks = []
    async def main():
        loop = asyncio.get_running_loop()
        futs = [loop.create_future() for _ in range(2)]  # one for each call below (a failed await spoils its future)
        for f in futs: loop.call_later(0.1, f.set_result, 'from your loop')  # due while the loop is held below
        async def bound() -> str:
            "Awaits a future of the caller's loop"
            return await futs.pop(0)
        async def ticker():
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)
        task = asyncio.create_task(ticker())
        await asyncio.sleep(0.05)
        box = Toolbox([bound, Tool(nap, timeout=5)])
        t0 = time.monotonic()
        held = run_tool_calls(box, response(('nap', {'s': 0.3}, 't0')))  # the loop's ticker can't tick meanwhile
        t1 = time.monotonic()
        r = box.call('bound')
        awaited = await box.acall('bound')
        task.cancel()
        return texts(held), t0, t1, r, awaited
    held, t0, t1, r, awaited = run(main())
    assert held == ['woke'] and t1 - t0 >= 0.3 and not [t for t in ticks if t0 < t < t1]
    assert not r.ok and 'different loop' in r.error
    assert awaited.ok and awaited.value == 'from your loop'

def test_no_thread_or_loop_is_left_behind():
    box = Toolbox([aadd])
    async def main():
        for i in range(30): assert box.call('aadd', {'a': i, 'b': 0}).value == i
    def open_loops() -> int: return len([lp for lp in list(_run._opened.values()) if not lp.is_closed()])
    base, loops = threading.active_count(), open_loops()
    run(main())
    deadline = time.monotonic() + 5
    while (threading.active_count() > base or open_loops() > loops) and time.monotonic() < deadline: time.sleep(0.01)
    assert threading.active_count() <= base
    assert not [t for t in threading.enumerate() if t.name == 'funccall-sync-in-loop']
    assert open_loops() <= loops  # each thread's loop closed when its thread ended

def test_in_own_thread_outside_a_loop_and_run_sync_inside_one():
    "The helper itself: a value, the raised object, and the caller's thread never the one that runs it"
    assert in_own_thread(threading.get_ident) != threading.get_ident()
    err = KeyError('k')
    def raises(): raise err
    with pytest.raises(KeyError) as e: in_own_thread(raises)
    assert e.value is err
    async def main(): return run_sync(aadd(20, 22))
    assert run(main()) == 42
