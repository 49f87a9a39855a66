"""funccall's worker pool and its threads' event loops survive what a process does around them: an exception raised
into a pool thread from outside (as a `python` tool's late timeout can be), and a fork from another thread. Either way
the next sync tools still run and none waits forever."""
import asyncio, ctypes, subprocess, sys, textwrap, threading, time

import pytest

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


FORKS = {
    'subprocess-preexec_fn': "subprocess.run([sys.executable, '-c', 'pass'], preexec_fn=lambda: None)",
    'os.fork': "pid = os.fork()\n    if pid == 0: os._exit(0)\n    os.waitpid(pid, 0)",
    'multiprocessing-fork': "p = multiprocessing.get_context('fork').Process(target=print); p.start(); p.join()",
}

@pytest.mark.parametrize('fork', FORKS.values(), ids=FORKS.keys())
def test_a_fork_in_another_thread_leaves_run_sync_able_to_wake(fork):
    # The forked child drops the main thread's state, and with it its `run_sync` loop: closing that loop there would
    # unregister its wake-up socket from the epoll selector the parent shares, and the parent's next `run_sync` of a
    # call that ends in a worker thread would sleep forever (CI hung on it: code mode's isolated run used `preexec_fn`)
    script = textwrap.dedent('''
        import multiprocessing, os, subprocess, sys, threading
        from funccall._run import run_sync, to_thread
        async def from_a_thread(): return await to_thread(lambda: 'answered')
        print(run_sync(from_a_thread()))  # the main thread's loop is made, and kept
        def fork():
            FORK
        t = threading.Thread(target=fork); t.start(); t.join()
        print(run_sync(from_a_thread()))
        ''').replace('FORK', fork)
    try: p = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired: pytest.fail('run_sync never woke for a call that ended in a worker thread, after a fork')
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ['answered', 'answered']
