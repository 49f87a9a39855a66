"""funccall's worker pool and its threads' event loops survive what a process does around them: an exception raised
into a pool thread from outside (as a `python` tool's late timeout can be), and a fork from another thread. Either way
the next sync tools still run and none waits forever."""
import os, subprocess, sys, textwrap

import pytest
from conftest import untraced_env


def _run_script(script: str, *args: str, timeout: float=30) -> list:
    """Run `script` in a Python process of its own (what it leaves pending in its threads ends with it), untraced: on
    Python 3.11 a thread under a trace function (coverage's) spins while another thread's exception is pending"""
    try: p = subprocess.run([sys.executable, '-c', textwrap.dedent(script), *args], capture_output=True, text=True, timeout=timeout, env=untraced_env())
    except subprocess.TimeoutExpired: pytest.fail('a call waited forever')
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_pool_threads_hit_from_outside_while_idle_leave_no_call_waiting():
    # In a process of its own: an exception raised into a thread stays pending there until it lands, and on Python
    # 3.11 one thread taking its own can leave another's pending unannounced, to land much later anywhere in that thread
    # (inside asyncio's wake-up of a loop, say). The test's own process must not keep such threads.
    out = _run_script('''
        import ctypes, threading, time
        from funccall._run import _Workers
        pool = _Workers(4)
        def calls(n):  # (each job's own state, not its listener: a TimeoutError landing late in a thread may skip a listener)
            jobs = [pool.submit(lambda i=i: i * 2, lambda job: None) for i in range(n)]
            deadline = time.monotonic() + 10
            while any(j.state != 'done' for j in jobs) and time.monotonic() < deadline: time.sleep(0.001)
            return [j.result() for j in jobs]
        print(calls(4) == [0, 2, 4, 6])  # some threads now wait, idle, for work
        idle = [t for t in threading.enumerate() if t.name == 'funccall-tool']
        # as a `python` tool's late timeout would: delivered when each wakes with a job, taken and never run
        hit = [ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident), ctypes.py_object(TimeoutError)) for t in idle]
        print(len(hit) > 0 and all(h == 1 for h in hit))
        # without the repair: the jobs handed to those threads are never run, and `result` times out
        print(calls(8) == [i * 2 for i in range(8)], calls(8) == [i * 2 for i in range(8)])
        deadline = time.monotonic() + 5  # a thread counts its call done just after it hands back the result
        while pool.running and time.monotonic() < deadline: time.sleep(0.01)
        with pool.lock: print(pool.running == 0 and pool.threads >= pool.idle >= 0)
        ''')
    assert out == ['True'] * 5


LANDING = {  # pool_landing.py's scenarios: the two that reach most of the pool on every Python, the others once
    'batches-nested': pytest.param(['batches', 'nested']),
    'abandon-drop-idle-exhausted': pytest.param(['abandon', 'drop', 'idle', 'exhausted'], marks=pytest.mark.slow),
}

@pytest.mark.parametrize('kinds', LANDING.values(), ids=LANDING.keys())
def test_an_exception_landing_anywhere_in_the_pool_loses_no_job_runs_none_twice_and_tells_each_caller_once(kinds):
    # Landing late, an exception raised into a worker thread may meet the pool's own code at any place CPython checks for
    # one, in the thread's own work or as a caller of the pool (a tool that submits to it): in turn at each of them (some
    # 150-350 a scenario, by Python version), jobs before, during and after all run once, or end with that exception where
    # it landed in their run; each job's listener hears of it once; then no job is left waiting and the counts are right
    out = _run_script('''
        import runpy, sys
        sys.argv = sys.argv[1:]  # as when run as a script
        runpy.run_path(sys.argv[0], run_name='__main__')
        ''', os.path.join(os.path.dirname(__file__), 'pool_landing.py'), *kinds, timeout=400)
    hit = dict(zip(out[0::3], map(int, out[1::3])))
    assert list(hit) == kinds and min(hit.values()) >= 100, out  # (each stops when a run passes fewer places than the next target)


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
    assert _run_script(script) == ['answered', 'answered']
