"""funccall's worker threads' event loops survive a fork from another thread: the next sync tools still run and none
waits forever."""
import queue, subprocess, sys, textwrap, time

import pytest
from conftest import untraced_env


def _run_script(script: str, *args: str, timeout: float=30) -> list:
    "Run `script` in a Python process of its own, untraced (a fork under coverage's trace function is slow)"
    try: p = subprocess.run([sys.executable, '-c', textwrap.dedent(script), *args], capture_output=True, text=True, timeout=timeout, env=untraced_env())
    except subprocess.TimeoutExpired: pytest.fail('a call waited forever')
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


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
        from funccall.core._run import run_sync, to_thread
        async def from_a_thread(): return await to_thread(lambda: 'answered')
        print(run_sync(from_a_thread()))  # the main thread's loop is made, and kept
        def fork():
            FORK
        t = threading.Thread(target=fork); t.start(); t.join()
        print(run_sync(from_a_thread()))
        ''').replace('FORK', fork)
    assert _run_script(script) == ['answered', 'answered']


def test_the_python_tools_timeouts_land_in_its_own_threads_never_in_a_pool_thread():
    # `python` run as a sync tool in the pool's threads, its deadline racing its code's end (the riskiest moment: a
    # timeout raised as the code returns): the timeout is raised only in the code's own thread, so the pool's threads
    # never meet it: every later call runs once and answers, no pool thread dies, and all the slots come back
    out = _run_script('''
        import threading, time
        from funccall import python
        from funccall.core._run import _workers, in_threads
        died = []
        threading.excepthook = lambda a: died.append(a.thread.name)
        code = 'import time\\nt = time.monotonic()\\nwhile time.monotonic() - t < 0.02: pass\\n1'
        for _ in range(10): outs = [job.result() for _, job in in_threads([lambda: python(code, timeout=0.02)] * 16, 8)]
        print(all(o == 1 or 'TimeoutError' in o for o in outs))
        print(sorted(job.result() for _, job in in_threads([lambda i=i: i for i in range(500)], 64)) == list(range(500)))
        deadline = time.monotonic() + 5
        while _workers.running and time.monotonic() < deadline: time.sleep(0.01)
        print(_workers.running == 0 and _workers.stragglers == 0 and not [d for d in died if d == 'funccall-tool'])
        ''')
    assert out == ['True'] * 3


def test_idle_threads_end_and_a_call_handed_over_as_one_gives_up_still_runs():
    # calls spaced around the idle wait, so some reach a thread just as it gives up waiting: each runs once and
    # answers, and once they are all done every thread ends and the counts are back to nothing
    from funccall.core._run import _Workers
    pool, done = _Workers(4), queue.SimpleQueue()
    pool.IDLE_SECS = 0.001
    for i in range(400):
        pool.submit(lambda i=i: i, done.put)
        time.sleep((0, 0.0005, 0.001, 0.0015)[i % 4])
    assert sorted(done.get(timeout=10).result() for _ in range(400)) == list(range(400))
    deadline = time.monotonic() + 10
    while pool.threads and time.monotonic() < deadline: time.sleep(0.01)
    assert (pool.threads, pool.idle, pool.running, pool.stragglers) == (0, 0, 0, 0)
