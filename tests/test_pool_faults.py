"""funccall's worker pool survives an exception raised into one of its threads from outside (as a `python` tool's late
timeout can be): the next sync tools still run, none waits forever."""
import asyncio, ctypes, threading, time

from funccall import _run


def _raise_in(thread: threading.Thread):
    assert ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(TimeoutError)) == 1


def _pool_threads() -> list:
    return [t for t in threading.enumerate() if t.name == 'funccall-tool' and t.is_alive()]


async def _calls(n: int) -> list:
    return await asyncio.wait_for(asyncio.gather(*[_run.to_thread(lambda i=i: i * 2) for i in range(n)]), 10)


def test_pool_threads_hit_from_outside_while_idle_leave_no_call_waiting():
    assert asyncio.run(_calls(4)) == [0, 2, 4, 6]  # some threads now wait, idle, for work
    idle = _pool_threads()
    assert idle
    for t in idle: _raise_in(t)  # delivered when each wakes with a job: the job was taken and never run
    # without the repair: the jobs handed to those threads are never run, and `wait_for` times out
    assert asyncio.run(_calls(8)) == [i * 2 for i in range(8)]
    assert asyncio.run(_calls(8)) == [i * 2 for i in range(8)]
    w = _run._workers  # a thread counts its call done just after it hands back the result: give the counts a moment
    deadline = time.monotonic() + 5
    while w.running and time.monotonic() < deadline: time.sleep(0.01)
    with w.lock: assert w.running == 0 and w.threads >= w.idle >= 0
