"""`pytool`'s rare branches, each for what it exists for: a run in a process of its own reporting any error as text, a
`KeyboardInterrupt` in the code reaching the caller, clean-up retried, a timeout raised before its code starts or
landing in the clean-up after it ended, and which frames the timeout's tracer counts as the code's.

(What runs while the caller waits, `_Untraced`'s block in `_in_thread`, runs with coverage's tracer off by design and
shows as not run: `test_pytool`'s timeout tests are its tests.)"""
import inspect, sys, threading, time

import pytest

from funccall import python
from funccall.toolsets import pytool
from funccall.toolsets.pytool import _capture_end, _capture_start, _guarded, _Level, _raise_timeout, _ThreadStdout, run_in_process

def _in_thread(fn, *args):
    "`fn(*args)` in a thread of its own (a timeout raised in a thread starts tracing there: never in the test's)"
    box = {}
    t = threading.Thread(target=lambda: box.setdefault('r', fn(*args)), daemon=True)
    t.start(); t.join(10)
    assert not t.is_alive()
    return box['r']

@pytest.mark.parametrize('code,last', [
    ('1/0', 'ZeroDivisionError: division by zero'),
    ('raise SystemExit(3)', 'SystemExit: 3'),
    ('raise KeyboardInterrupt', 'KeyboardInterrupt'),
])
def test_run_in_process_reports_any_error_as_the_programs_text(code, last):
    "In a process of its own (killed from outside) the program's error, even one that ends programs, is its result"
    r = run_in_process(code, glb={})
    assert r.startswith('Traceback (most recent call last):\n  File "<code>", line 1') and r.rstrip('\n').splitlines()[-1] == last
    assert 'funccall' not in r  # (none of funccall's frames)

def test_run_in_process_returns_the_value_else_what_was_printed():
    assert run_in_process('print("a")\n2', glb={}) == 2 and run_in_process('print("a")', glb={}) == 'a'

def test_a_keyboard_interrupt_in_the_code_reaches_the_caller():
    "Ctrl-C (or code raising it) interrupts the application rather than becoming the tool's text"
    with pytest.raises(KeyboardInterrupt): python('raise KeyboardInterrupt', glb={}, timeout=5)
    assert python('1 + 1', glb={}, timeout=5) == 2  # (and the tool still works after)

def test_capture_end_may_be_repeated():
    "Clean-up retried (a timeout landing in it) ends this thread's capture once, leaving `sys.stdout` as it was"
    start = sys.stdout  # (the proxy already, while a timed-out call of an earlier test still runs in the background)
    buf = _capture_start()
    print('captured')
    _capture_end(); _capture_end()
    assert sys.stdout is start and buf.getvalue() == 'captured\n'
    assert not isinstance(start, _ThreadStdout) or threading.get_ident() not in start.bufs

def test_capture_end_leaves_other_threads_capturing():
    "Ending one thread's capture while another's runs keeps the proxy for the other, and its prints"
    start, other = sys.stdout, {}
    _capture_start()
    started, stop = threading.Event(), threading.Event()
    def run():
        other['buf'] = _capture_start(); started.set(); stop.wait(5); print('theirs'); _capture_end()
    t = threading.Thread(target=run); t.start()
    try:
        started.wait(5)
        _capture_end()
        assert isinstance(sys.stdout, _ThreadStdout) and sys.stdout.bufs.get(t.ident) is other['buf']
    finally: stop.set(); t.join(5)
    assert other['buf'].getvalue() == 'theirs\n' and sys.stdout is start

def test_a_timeout_landing_where_no_call_expired_is_a_plain_timeout_error():
    "A timeout landing after its call ended (its level gone) stops nothing and starts no tracing"
    def make():
        before = sys.gettrace()
        e = pytool._Timeout()
        return e.level, sys.gettrace() is before, type(e).__name__, isinstance(e, TimeoutError)
    assert _in_thread(make) == (None, True, 'TimeoutError', True)

def test_a_deadline_passed_before_the_code_starts_keeps_it_from_starting():
    "The deadline reached while the code's thread was still starting: marked expired, nothing raised, the code never runs"
    lv, ran = _Level(60), []
    _raise_timeout(lv, threading.current_thread())  # (not running yet: nothing may be raised into this thread)
    assert lv.expired
    out, printed = _in_thread(_guarded, 'ran.append(1)', {'ran': ran}, None, lv)
    assert out[0] == 'err' and type(out[1]).__name__ == 'TimeoutError' and ran == [] and printed == ''
    assert not lv.active and not lv.running

def test_raising_the_timeout_into_running_code_stops_it():
    "Raised while the code runs: it lands there, even in code that swallows it once"
    lv, started = _Level(60), threading.Event()
    code = 'started.set()\ntry:\n    while True: pass\nexcept TimeoutError: pass\nwhile True: pass'
    box = {}
    t = threading.Thread(target=lambda: box.setdefault('r', _guarded(code, {'started': started}, None, lv)), daemon=True)
    t.start()
    assert started.wait(5)
    end = time.monotonic() + 5
    while t.is_alive() and time.monotonic() < end:
        _raise_timeout(lv, t)
        t.join(0.01)
    assert not t.is_alive() and lv.refused
    (kind, e), _ = box['r']
    assert kind == 'err' and type(e).__name__ == 'TimeoutError'

def test_a_timeout_landing_in_the_clean_up_never_reaches_the_caller():
    """The deadline passing just as the code ends: its timeout lands in `_guarded`'s clean-up (here: held at the lock
    it takes there), which absorbs it and retries, and the caller gets the code's value"""
    lv, started, go = _Level(60), threading.Event(), threading.Event()
    box = {}
    t = threading.Thread(target=lambda: box.setdefault('r', _guarded("started.set(); go.wait(5)\n'the value'",
                                                                      {'started': started, 'go': go}, None, lv)), daemon=True)
    t.start()
    assert started.wait(5)
    with lv.lock:
        go.set()
        end = time.monotonic() + 5
        lines, first = inspect.getsourcelines(_guarded)
        clean_up = first + next(i for i, ln in enumerate(lines) if 'lv.running = False' in ln)
        def at_clean_up():  # the code's thread waiting for the lock after the code ended
            f = sys._current_frames().get(t.ident)
            return f is not None and f.f_code is _guarded.__code__ and f.f_lineno == clean_up
        while not at_clean_up() and time.monotonic() < end: time.sleep(0.001)
        assert at_clean_up()
        lv.expired = True
        pytool._raise_in_thread(t.ident, pytool._Timeout)  # (pending: it lands as the lock is taken)
    t.join(5)
    assert not t.is_alive()
    assert box['r'] == (('res', 'the value'), '')
    assert not lv.active and lv.refused  # (it did land: its level was marked as seen)

def test_which_frames_count_as_the_codes():
    "The tracer stops the code and what it called, never the frames of the call's own caller (above `_guarded`'s frame)"
    lv = _Level(60)
    lv.fn = '<code-test>'
    ns = {'inner': lambda: sys._getframe()}
    exec(compile('def code(): return inner()', lv.fn, 'exec'), ns)
    called = ns['code']()  # a frame of a function the code called, defined elsewhere
    assert pytool._in_code(called, lv)
    assert not pytool._in_code(sys._getframe(), lv)  # (no frame of the code below it)
    lv.frame = called.f_back  # its walk ends at the call's own frame: the code above it isn't this call's
    assert not pytool._in_code(called, lv)
