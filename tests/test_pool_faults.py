"""funccall's worker threads' event loops survive a fork from another thread: the next sync tools still run and none
waits forever."""
import subprocess, sys, textwrap

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
        from funccall._run import run_sync, to_thread
        async def from_a_thread(): return await to_thread(lambda: 'answered')
        print(run_sync(from_a_thread()))  # the main thread's loop is made, and kept
        def fork():
            FORK
        t = threading.Thread(target=fork); t.start(); t.join()
        print(run_sync(from_a_thread()))
        ''').replace('FORK', fork)
    assert _run_script(script) == ['answered', 'answered']
