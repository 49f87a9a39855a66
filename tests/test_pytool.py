"""The `python` code tool: results, errors, globals, print capture and the timeout in its three places.

The three places are the main thread, another thread, and inside a running event loop (the code runs in a worker
thread of its own in each, so the caller returns at the deadline wherever it is). Print-capture tests come before the timeout tests: a `time.sleep(10)` timed
out in a worker thread keeps running in the background for 10 s, as documented.

"""
import asyncio
import signal
import sys
import threading
import time

import pytest

import funccall.core.call
from funccall import call_func, call_func_async, python
from funccall.toolsets.pytool import _ThreadStdout



def _in_main(code, **kw):
    assert threading.current_thread() is threading.main_thread()
    return python(code, **kw)


def _in_thread(code, **kw):
    box = {}
    t = threading.Thread(target=lambda: box.setdefault('r', python(code, **kw)))
    t.start()
    t.join(10)
    assert not t.is_alive()
    return box['r']


def _in_loop(code, **kw):
    async def main():
        asyncio.get_running_loop()
        return python(code, **kw)
    return asyncio.run(main())


PLACES = [_in_main, _in_thread, _in_loop]
PLACE_IDS = ['main-thread', 'other-thread', 'event-loop']


# ---------------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('code,expected', [
    ('1+1', 2),
    ('import math;math.factorial(12)', 479001600),
    ('x = 5\nx * 2', 10),
    ('[i * i for i in range(3)]', [0, 1, 4]),
    ('print(1+1)', '2'),
    ('print("a")\nprint("b")', 'a\nb'),
    ('print("x", end="")', 'x'),
    ('print("a\\n\\n")', 'a'),
    ('x = 1', None),
    ('None', None),
    ('', None),
    ('# just a comment', None),
    ('def factorial(n):\n    if n == 0 or n == 1: return 1\n    else: return n * factorial(n-1)\nfactorial(5)', 120),
    ('class K:\n    def m(self):\n        return "m"\n\nK().m()', 'm'),
    ('if True:\n    y = 3\ny', 3),
    ('for i in range(3):\n    print(i)', '0\n1\n2'),
    ('async def f(): return 1\nimport asyncio\nasyncio.run(f())', 1),
    ('0', 0),
    ('""', ''),
], ids=['expr', 'import-expr', 'assign-expr', 'listcomp', 'print', 'two-prints', 'print-no-newline', 'print-trailing-newlines',
        'statement', 'None', 'empty', 'comment', 'recursive-def', 'class-def', 'if-block', 'for-print', 'asyncio-inside', 'zero', 'empty-str'])
@pytest.mark.parametrize('place', PLACES, ids=PLACE_IDS)
def test_result(place, code, expected):
    r = place(code, glb={})
    assert (type(r), r) == (type(expected), expected)


@pytest.mark.parametrize('code,last,frame', [
    ('1/0', 'ZeroDivisionError: division by zero', '  File "<code>", line 1, in <module>\n    1/0\n'),
    ('x = 1\nundefined_name', "NameError: name 'undefined_name' is not defined", '  File "<code>", line 2, in <module>\n    undefined_name\n'),
    ('def f():\n    raise ValueError("inner")\nf()', 'ValueError: inner', '  File "<code>", line 2, in f\n    raise ValueError("inner")\n'),
    ('raise SystemExit(3)', 'SystemExit: 3', '  File "<code>", line 1, in <module>\n    raise SystemExit(3)\n'),
    ('def (', 'SyntaxError: invalid syntax', None),
], ids=['zero-division', 'name-error', 'in-function', 'system-exit', 'syntax-error'])
@pytest.mark.parametrize('place', PLACES, ids=PLACE_IDS)
def test_error_is_returned_as_traceback_text(place, code, last, frame):
    r = place(code, glb={})
    assert isinstance(r, str)
    assert r.startswith('Traceback (most recent call last):\n')
    assert r.rstrip('\n').splitlines()[-1] == last
    if frame: assert frame in r
    assert 'pytool.py' not in r and '/funccall/' not in r


def test_error_text_is_the_same_in_all_places():
    code = 'def g(n):\n    return {}[n]\ng("key")'
    assert _in_main(code, glb={}) == _in_thread(code, glb={}) == _in_loop(code, glb={})


# ---------------------------------------------------------------------------------------------------------
# Globals
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('place', PLACES, ids=PLACE_IDS)
def test_callers_globals_are_the_default(place):
    assert '_pytool_probe' not in globals()
    try:
        assert place('_pytool_probe = 41\n_pytool_probe + 1') == 42
        assert globals()['_pytool_probe'] == 41
        assert place('_in_loop') is _in_loop  # the module's own names are visible
    finally:
        globals().pop('_pytool_probe', None)


def test_explicit_globals_and_locals():
    glb, loc = {'a': 1}, {}
    assert python('b = a + 1\nb', glb=glb, loc=loc) == 2
    assert ({k: v for k, v in glb.items() if k != '__builtins__'}, loc) == ({'a': 1}, {'b': 2})
    assert '_pytool_probe2' not in globals()
    python('_pytool_probe2 = 1', glb={})
    assert '_pytool_probe2' not in globals()


def test_state_persists_across_calls_in_one_namespace():
    glb = {}
    python('def double(n):\n    return 2 * n', glb=glb)
    assert python('double(21)', glb=glb) == 42


@pytest.mark.parametrize('how', ['call_func', 'call_func_async'])
def test_default_globals_through_call_func_are_not_funccalls(how):
    import concurrent.futures.thread as cft
    try:
        if how == 'call_func': call_func('python', {'code': '_pytool_leak = 1'}, {'python': python})
        else: asyncio.run(call_func_async('python', {'code': '_pytool_leak = 1'}, {'python': python}))
        assert '_pytool_leak' not in vars(funccall.core.call) and '_pytool_leak' not in vars(cft)
    finally:
        vars(funccall.core.call).pop('_pytool_leak', None)
        vars(cft).pop('_pytool_leak', None)


# ---------------------------------------------------------------------------------------------------------
# Printed output: captured per thread
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('place', [_in_thread, _in_loop], ids=['other-thread', 'event-loop'])
def test_prints_in_worker_thread_do_not_leak(place, capsys):
    assert place('print("hello from code")\nprint("again")', glb={}) == 'hello from code\nagain'
    assert capsys.readouterr().out == ''
    assert not isinstance(sys.stdout, _ThreadStdout)


@pytest.mark.parametrize('place', [_in_thread, _in_loop], ids=['other-thread', 'event-loop'])
def test_prints_with_a_value_in_worker_thread_do_not_leak(place, capsys):
    assert place('print("side output")\n5', glb={}) == 5
    assert capsys.readouterr().out == ''


def test_prints_of_other_threads_are_not_captured_main_thread(capsys):
    started = threading.Event()
    def other():
        started.wait(2)
        time.sleep(0.05)
        print('other-thread')
    t = threading.Thread(target=other)
    t.start()
    r = python('started.set()\nimport time\ntime.sleep(0.3)', glb={'started': started})
    t.join()
    assert r is None
    assert capsys.readouterr().out == 'other-thread\n'


def test_prints_of_other_threads_are_not_captured_worker_thread(capsys):
    started, box = threading.Event(), {}
    t = threading.Thread(target=lambda: box.setdefault('r', python('started.set()\nimport time\ntime.sleep(0.3)', glb={'started': started})))
    t.start()
    started.wait(2)
    print('main-thread')
    t.join()
    assert box['r'] is None
    assert capsys.readouterr().out == 'main-thread\n'


def test_concurrent_calls_capture_only_their_own_prints(capsys):
    code = 'import time\nfor i in range(5):\n    print(k)\n    time.sleep(0.01)'
    box = {}
    ts = [threading.Thread(target=lambda k=k: box.__setitem__(k, python(code, glb={'k': k}))) for k in range(4)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert box == {k: '\n'.join([str(k)] * 5) for k in range(4)}
    assert capsys.readouterr().out == ''
    assert not isinstance(sys.stdout, _ThreadStdout)


def test_traceback_shows_its_own_source_while_another_run_happens():
    box = {}
    t = threading.Thread(target=lambda: box.setdefault('r', python('import time\ntime.sleep(0.3)\n1/0', glb={})))
    t.start()
    time.sleep(0.1)
    python('x = 1\ny = 2\nz = 3', glb={})
    t.join()
    assert '  File "<code>", line 3, in <module>\n    1/0\n' in box['r']


# ---------------------------------------------------------------------------------------------------------
# Timeouts: main thread, another thread, inside a running event loop; a busy loop and a blocking sleep
# ---------------------------------------------------------------------------------------------------------

BUSY, SLEEP = 'while True: pass', 'import time\ntime.sleep(10)'


@pytest.mark.parametrize('code', [BUSY, SLEEP], ids=['busy-loop', 'sleep'])
@pytest.mark.parametrize('place', PLACES, ids=PLACE_IDS)
def test_timeout(place, code):
    before, handler = {t for t in threading.enumerate() if t.name == 'funccall-python'}, signal.getsignal(signal.SIGALRM)
    start = time.monotonic()
    r = place(code, glb={}, timeout=1)
    elapsed = time.monotonic() - start
    assert 0.9 < elapsed < 3, f'timeout=1 took {elapsed:.2f} s'
    assert isinstance(r, str) and r.startswith('Traceback (most recent call last):\n')
    assert r.rstrip('\n').splitlines()[-1] == 'TimeoutError'
    if code == BUSY:  # stopped at once, with the code's own traceback
        assert '  File "<code>", line ' in r and 'stopped after' not in r
        time.sleep(0.05)
        assert {t for t in threading.enumerate() if t.name == 'funccall-python' and t.is_alive()} <= before
    if place is _in_main:
        assert (signal.getitimer(signal.ITIMER_REAL), signal.getsignal(signal.SIGALRM)) == ((0.0, 0.0), handler)  # untouched
    if code == SLEEP: assert 'stopped after 1 s; it is inside a blocking call and stops when that returns' in r


@pytest.mark.parametrize('place', PLACES, ids=PLACE_IDS)
def test_no_timeout_when_code_finishes_in_time(place):
    assert place('import time\ntime.sleep(0.05)\n"done"', glb={}, timeout=1) == 'done'
    if place is _in_main: assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_main_thread_alarm_handler_is_restored():
    seen = []
    old = signal.signal(signal.SIGALRM, lambda *a: seen.append(a))
    try:
        assert python('1', glb={}, timeout=1) == 1
        assert python(BUSY, glb={}, timeout=0.2).rstrip('\n').splitlines()[-1] == 'TimeoutError'
        assert signal.getsignal(signal.SIGALRM) is not None and seen == []
        signal.raise_signal(signal.SIGALRM)
        assert len(seen) == 1
    finally:
        signal.signal(signal.SIGALRM, old)
