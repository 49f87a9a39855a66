"""Faults a user's agent will meet: stuck and slow sync tools, timeouts, leaving the program, and the `python`
tool's timeout nested, beside the caller's own timers, against code that swallows it, and in a process of its own.

Every test is bounded in time: a watchdog ends the test process with a traceback if one hangs, and the tools
that get stuck wait on an event the test sets before it ends.
"""
import asyncio
import contextlib
import faulthandler
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from conftest import untraced_env

from funccall import Toolbox, call_func_async, python
from funccall.core._run import WorkersExhausted, _workers, set_max_workers, to_thread
from funccall.toolsets.pytool import python_isolated

WATCHDOG = 60  # seconds: no test here comes near it; a hang ends the run with every thread's traceback


@pytest.fixture(autouse=True)
def watchdog():
    faulthandler.dump_traceback_later(WATCHDOG, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def release():
    "An event stuck tools wait on; set when the test ends, so their threads finish"
    ev = threading.Event()
    yield ev
    ev.set()


@pytest.fixture
def workers():
    "Restore the default pool size after a test that changes it"
    size = _workers.size
    yield
    set_max_workers(size)


def _toolbox(release):
    def stuck(s: float) -> str:
        "Wait for the test to end, or `s` seconds"
        release.wait(s)
        return 'late'
    def quick(n: int) -> int:
        "Return n"
        return n
    return Toolbox([stuck, quick])


# ---------------------------------------------------------------------------------------------------------
# Sync tools in worker threads
# ---------------------------------------------------------------------------------------------------------

def test_timed_out_tools_do_not_starve_the_calls_after_them(release):
    tb = _toolbox(release)
    calls = [('stuck', {'s': 30})] * 6 + [('quick', {'n': i}) for i in range(20)]
    start = time.monotonic()
    rs = tb.batch(calls, timeout=1, max_concurrency=len(calls))
    assert [r.status for r in rs[:6]] == ['failure'] * 6 and all('did not finish within 1 s' in r.error for r in rs[:6])
    assert [r.value for r in rs[6:]] == list(range(20))
    assert time.monotonic() - start < 5
    later = tb.batch([('quick', {'n': i}) for i in range(5)], timeout=1)  # the stuck threads still run
    assert [r.value for r in later] == list(range(5))


def test_io_bound_tools_run_many_at_once():
    async def main():
        start = time.monotonic()
        await asyncio.gather(*(to_thread(time.sleep, 0.05) for _ in range(500)))
        return time.monotonic() - start
    elapsed = asyncio.run(main())
    # six at a time (asyncio's default executor here) can't take less than 500 / 6 * 0.05 = 4.2 s; 64 at a time take 0.4 s
    assert elapsed < 4, f'500 tools sleeping 0.05 s took {elapsed:.2f} s: they ran a few at a time'


def test_max_workers_bounds_how_many_run_at_once(workers):
    set_max_workers(2)
    running, peak, lock = [0], [0], threading.Lock()
    def tool():
        with lock: running[0] += 1; peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock: running[0] -= 1
    async def main(): await asyncio.gather(*(to_thread(tool) for _ in range(10)))
    asyncio.run(main())
    assert peak[0] == 2


def test_a_cancelled_call_gives_its_slot_to_the_next(release, workers):
    set_max_workers(1)
    async def main():
        with pytest.raises(asyncio.TimeoutError): await asyncio.wait_for(to_thread(release.wait, 30), 0.2)
        return await asyncio.wait_for(to_thread(lambda: 'next'), 2)
    assert asyncio.run(main()) == 'next'


def test_past_the_thread_limit_a_call_fails_at_once_and_clearly(release, workers):
    set_max_workers(1)  # one call at a time, 16 stragglers in all
    async def main():
        for _ in range(16):  # each times out and keeps its thread
            with pytest.raises(asyncio.TimeoutError): await asyncio.wait_for(to_thread(release.wait, 30), 0.02)
        start = time.monotonic()
        with pytest.raises(WorkersExhausted, match='16 worker threads still run calls whose callers stopped waiting'): await to_thread(lambda: 1)
        assert time.monotonic() - start < 1
        release.set()  # the stuck tools return: their threads serve new calls again
        await asyncio.sleep(0.1)
        return await asyncio.wait_for(to_thread(lambda: 'served'), 2)
    assert asyncio.run(main()) == 'served'


def test_set_max_workers_refuses_nonsense():
    for bad in (0, -1, 2.5, '8'):
        with pytest.raises(ValueError, match='max_workers must be a positive int'): set_max_workers(bad)


def test_errors_and_context_pass_through_the_worker_thread():
    import contextvars
    var = contextvars.ContextVar('var', default='unset')
    def boom(): raise KeyError(var.get())
    async def main():
        var.set('caller')
        with pytest.raises(KeyError, match='caller'): await call_func_async(boom, {})
    asyncio.run(main())


def _run_script(code: str, env=None, limit: float = 20) -> tuple[float, subprocess.CompletedProcess]:
    start = time.monotonic()
    p = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True, timeout=limit,
                       env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
    return time.monotonic() - start, p


@pytest.mark.parametrize('tool', ['time.sleep(s)', 'threading.Event().wait()'], ids=['sleeps-30-s', 'never-returns'])
def test_leaving_the_program_does_not_wait_for_a_timed_out_tool(tool):
    elapsed, p = _run_script(f'''
        import threading, time
        from funccall import Toolbox
        def nap(s: float) -> float:
            "Sleep"
            {tool}
            return s
        r = Toolbox([nap]).batch([('nap', {{'s': 30}})], timeout=0.5)[0]
        print(r.status, r.error)
    ''')
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "failure TimeoutError: tool 'nap' did not finish within 0.5 s"
    assert elapsed < 10, f'the program took {elapsed:.1f} s to end'


def test_the_pool_size_comes_from_the_environment():
    _, p = _run_script('from funccall.core._run import _workers; print(_workers.size, _workers.limit)', env={'FUNCCALL_MAX_WORKERS': '3'})
    assert p.stdout.split() == ['3', '48'], p.stderr


# ---------------------------------------------------------------------------------------------------------
# The python tool's timeout
# ---------------------------------------------------------------------------------------------------------

BUSY = 'while True: pass'
SWALLOW = 'while True:\n    try:\n        while True: pass\n    except BaseException: pass'
SWALLOW_SLEEP = 'import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except BaseException:\n        pass'


def _in_thread(fn, *args, **kw):
    box = {}
    t = threading.Thread(target=lambda: box.setdefault('r', fn(*args, **kw)))
    t.start()
    t.join(30)
    assert not t.is_alive()
    return box['r']


def _in_loop(fn, *args, **kw):
    async def main(): return fn(*args, **kw)
    return asyncio.run(main())


def _in_main(fn, *args, **kw):
    assert threading.current_thread() is threading.main_thread()
    return fn(*args, **kw)


PLACES = [_in_main, _in_thread, _in_loop]
PLACE_IDS = ['main-thread', 'other-thread', 'event-loop']


def _is_timeout(r) -> bool: return isinstance(r, str) and r.rstrip('\n').splitlines()[-1] == 'TimeoutError'


def _python_threads():
    "The `python` tool's threads still running: seen by the interpreter, not by `is_alive`, which a thread wrongly marked stopped fools"
    running = sys._current_frames()
    return {t for t in threading.enumerate() if t.name == 'funccall-python' and t.ident in running}


def _line_tracer(frame, event, arg):
    "A trace function that sees every line and does nothing, as coverage or a debugger between breakpoints"
    return _line_tracer


@pytest.fixture(params=['untraced', 'settrace', 'setprofile'])
def traced(request):
    "The test's threads, and the threads they start, run with a trace or profile function set (put back afterwards)"
    if request.param == 'untraced': yield; return  # (under coverage, still traced by coverage)
    mod_set, mod_get = (sys.settrace, sys.gettrace) if request.param == 'settrace' else (sys.setprofile, sys.getprofile)
    thr_set, thr_get = (threading.settrace, threading.gettrace) if request.param == 'settrace' else (threading.setprofile, threading.getprofile)
    old, old_thr = mod_get(), thr_get()
    mod_set(_line_tracer); thr_set(_line_tracer)
    try: yield
    finally: mod_set(old); thr_set(old_thr)


@pytest.mark.parametrize('place', PLACES, ids=PLACE_IDS)
def test_nested_calls_keep_the_outer_deadline(place, traced):
    code = 'python("while True: pass", glb={}, timeout=30)\n"not stopped"'
    before = _python_threads()
    start = time.monotonic()
    r = place(python, code, glb={'python': python}, timeout=1)
    elapsed = time.monotonic() - start
    assert _is_timeout(r), r
    assert elapsed < 4, f'an outer timeout of 1 s took {elapsed:.1f} s'
    deadline = time.monotonic() + 2
    while _python_threads() - before and time.monotonic() < deadline: time.sleep(0.05)
    assert _python_threads() <= before  # the inner call's code is stopped too, not left burning a core


@pytest.mark.parametrize('place', PLACES, ids=PLACE_IDS)
def test_an_inner_timeout_is_the_inner_calls_result(place):
    code = 'r = python("while True: pass", glb={}, timeout=0.3)\nr.splitlines()[-1]'
    assert place(python, code, glb={'python': python}, timeout=10) == 'TimeoutError'


@pytest.mark.parametrize('place', PLACES, ids=PLACE_IDS)
@pytest.mark.parametrize('code', [SWALLOW, SWALLOW_SLEEP], ids=['busy', 'sleeping'])
def test_code_that_swallows_the_timeout_is_stopped(place, code, traced):
    before = _python_threads()
    start = time.monotonic()
    r = place(python, code, glb={}, timeout=0.5)
    assert _is_timeout(r), r
    assert time.monotonic() - start < 5  # the deadline + 0.3 s when a core is free: CI's two busy cores, traced, took 3.0 s once
    deadline = time.monotonic() + 5
    while _python_threads() - before and time.monotonic() < deadline: time.sleep(0.05)
    assert _python_threads() <= before  # really stopped, not left burning a core


@contextlib.contextmanager
def _callers_alarm(secs: float):
    "The caller's own `SIGALRM` handler and timer of `secs`, as the test's code sets them: yields the times it fired"
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *a: fired.append(time.monotonic()))
    try:
        signal.setitimer(signal.ITIMER_REAL, secs)
        yield fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_the_callers_own_alarm_timer_and_handler_are_kept():
    start = time.monotonic()
    with _callers_alarm(1.5) as fired:
        assert python('1 + 1', glb={}, timeout=5) == 2
        assert _is_timeout(python(BUSY, glb={}, timeout=0.3))
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 0.5 < left < 1.3, left  # still running, minus the time spent
        while not fired and time.monotonic() - start < 5: time.sleep(0.02)
        assert len(fired) == 1 and 1.3 < fired[0] - start < 2.5


def test_the_callers_timer_fires_on_time_while_code_runs():
    start = time.monotonic()
    with _callers_alarm(0.3) as fired:
        assert python('import time\ntime.sleep(0.8)\n"finished"', glb={}, timeout=5) == 'finished'
        assert len(fired) == 1 and 0.2 < fired[0] - start < 0.7
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_timeout_never_lands_after_the_code_finished(traced):
    "Code finishing right at its deadline, many times over: no exception escapes into threading or the caller"
    seen, old = [], threading.excepthook
    threading.excepthook = lambda args: seen.append(args.exc_type)
    try:
        results = []
        def run():
            for n in (20_000, 40_000, 80_000):
                results.append(python(f'for i in range({n}): pass\n"done"', glb={}, timeout=0.002))
        threads = [threading.Thread(target=run) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join(30)
        time.sleep(0.2)
    finally: threading.excepthook = old
    assert seen == []
    assert len(results) == 24 and all(r == 'done' or _is_timeout(r) for r in results), results


def test_a_blocking_call_off_the_main_thread_is_reported_honestly(traced):
    "Reported at the deadline even by a traced caller (Python 3.11 made it wait for the blocking call), and nothing escapes"
    seen, old = [], threading.excepthook
    threading.excepthook = lambda args: seen.append(args.exc_type)
    try:
        before = _python_threads()  # (other tests' stuck code may still be finishing: only this call's thread counts)
        start = time.monotonic()
        r = _in_thread(python, 'import time\ntime.sleep(2)\nwhile True: pass', glb={}, timeout=0.3)
        assert time.monotonic() - start < 1.5
        assert _is_timeout(r) and 'inside a blocking call' in r
        deadline = time.monotonic() + 5
        while _python_threads() - before and time.monotonic() < deadline: time.sleep(0.05)
        assert not _python_threads() - before  # it stopped once the call returned, before its endless loop
    finally: threading.excepthook = old
    assert seen == []


def test_a_deadline_passed_before_the_code_started_stops_it_cleanly():
    "A timeout of 0 off the main thread: the deadline passes while the code's thread starts; nothing lands in threading"
    seen, old = [], threading.excepthook
    threading.excepthook = lambda args: seen.append(args.exc_type)
    try: results = [_in_thread(python, 'import time\ntime.sleep(5)\n"late"', glb={}, timeout=0) for _ in range(20)]
    finally: threading.excepthook = old
    assert seen == [] and all(_is_timeout(r) for r in results), results


COVERED = textwrap.dedent('''
    import json, threading, time
    from funccall import python
    seen, res = [], {}
    threading.excepthook = lambda args: seen.append(args.exc_type.__name__)
    def blocked():
        start = time.monotonic()
        res['text'] = python('import time\\ntime.sleep(2)', glb={}, timeout=0.3)
        res['secs'] = time.monotonic() - start
    def at_deadline():
        for n in (20_000, 40_000, 80_000): python(f'for i in range({n}): pass', glb={}, timeout=0.002)
    for target in [blocked] + [at_deadline] * 4: threading.Thread(target=target).start()
    for t in threading.enumerate():
        if t is not threading.current_thread() and t.name != 'funccall-python': t.join()
    time.sleep(2)
    print(json.dumps({**res, 'seen': seen}))
''')


def test_the_timeout_holds_under_coverage(tmp_path):
    "Under `coverage run` (every thread traced): the caller gets the timeout at the deadline and nothing escapes"
    script = tmp_path / 'covered.py'
    script.write_text(COVERED)
    r = subprocess.run([sys.executable, '-m', 'coverage', 'run', '--branch', f'--data-file={tmp_path / "cov"}', str(script)],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path,
                       env=untraced_env())  # its own measurement, not CI's
    assert r.returncode == 0, r.stderr
    out = __import__('json').loads(r.stdout.splitlines()[-1])
    assert out['secs'] < 1.5 and 'inside a blocking call' in out['text'], out
    assert out['seen'] == []


# ---------------------------------------------------------------------------------------------------------
# In a process of its own
# ---------------------------------------------------------------------------------------------------------

def test_isolated_code_returns_values_text_and_errors():
    assert python_isolated('import math\nmath.factorial(12)') == 479001600
    assert python_isolated('print("hi")') == 'hi'
    assert python_isolated('{"a": [1, 2.5, None]}') == {'a': [1, 2.5, None]}
    assert python_isolated('object') == "<class 'object'>"  # not a literal: its repr
    r = python_isolated('1/0')
    assert r.startswith('Traceback (most recent call last):\n') and r.rstrip().endswith('ZeroDivisionError: division by zero')


def test_isolated_code_sees_none_of_the_callers_globals():
    secret = 'in the caller'  # noqa: F841
    assert python_isolated('secret').rstrip().endswith("NameError: name 'secret' is not defined")


@pytest.mark.parametrize('code', [BUSY, SWALLOW, 'import time\ntime.sleep(30)'], ids=['busy', 'swallows', 'blocked'])
def test_isolated_code_is_always_stopped(code):
    start = time.monotonic()
    r = python_isolated(code, timeout=1)
    assert time.monotonic() - start < 4
    assert _is_timeout(r) and 'its process was killed' in r
