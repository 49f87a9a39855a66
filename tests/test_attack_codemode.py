"""Code mode and the in-process `python` tool attacked on their deadlines and their default (issue 28, items 2, 3, 5).

Each test runs a program a hostile model could write and asserts the caller returned within the deadline plus one
second, or, where this process can't stop the code (C code holding the GIL), that the documented behaviour is what
happens: run in a child process the test kills."""
import asyncio, os, subprocess, sys, textwrap, threading, time

import pytest

from funccall import Toolbox, python
from funccall.toolsets.codemode import code_tool, safest_mode

try: import pydantic_monty  # noqa: F401
except ImportError: pydantic_monty = None
needs_monty = pytest.mark.skipif(pydantic_monty is None, reason='pydantic-monty is not installed (a dev dependency off Windows)')

def _slow(secs: float):
    "A tool that takes `secs` and counts its calls (`.calls`)"
    calls = []
    def slow(x: int) -> int:
        "Echo x, slowly"
        calls.append(x)
        time.sleep(secs)
        return x
    slow.calls = calls
    return slow

def _timed(tool, code: str):
    start = time.monotonic()
    r = tool.execute({'code': code})
    return r, time.monotonic() - start

def _python_threads() -> set:
    running = sys._current_frames()
    return {t for t in threading.enumerate() if t.name == 'funccall-python' and t.ident in running}

# --- monty: the deadline includes tool calls ---------------------------------------------------------------------

@needs_monty
def test_monty_loop_over_tool_calls_stops_at_the_deadline():
    "monty's own clock stops while the host answers a call: this loop ran for good; now the run ends at the deadline"
    slow = _slow(0.02)
    r, secs = _timed(code_tool(Toolbox([slow]), isolate='monty', timeout=2), 'n = 0\nwhile True:\n    n += slow(1)')
    assert secs < 3, f'timeout=2 returned after {secs:.1f} s'
    assert not r.ok and r.error.endswith('TimeoutError') and 'stopped after 2 s' in r.error
    n = len(slow.calls)
    assert n > 5  # it did loop over tool calls
    time.sleep(0.3)
    assert len(slow.calls) == n  # and nothing calls tools after the run returned

@needs_monty
def test_monty_slow_tool_is_bounded_by_what_is_left_of_the_deadline():
    release = threading.Event()
    def stuck() -> str:
        "Wait for the test"
        release.wait(30)
        return 'late'
    try:
        r, secs = _timed(code_tool(Toolbox([stuck]), isolate='monty', timeout=1), "print('before')\nstuck()")
        assert secs < 2, f'timeout=1 returned after {secs:.1f} s'
        assert not r.ok and 'stopped after 1 s; in a call of stuck, which runs on in the background' in r.error
        assert r.error.startswith('CodeError: before\n')  # what it printed before is kept
    finally: release.set()

@needs_monty
def test_monty_program_catching_the_timeout_after_tool_calls_is_killed():
    "Tool calls use up the wall clock but not monty's: a loop that swallows its TimeoutError still ends at the deadline"
    code = 'for i in range(15): slow(i)\nwhile True:\n    try:\n        while True: pass\n    except BaseException: pass'
    r, secs = _timed(code_tool(Toolbox([_slow(0.05)]), isolate='monty', timeout=2), code)
    assert secs < 3, f'timeout=2 returned after {secs:.1f} s'
    assert not r.ok and 'TimeoutError' in r.error

@needs_monty
def test_monty_sleep_is_bounded_by_the_deadline():
    "monty's sleeps don't count toward its own time limit (and were capped at 10 s only): one of 100 s ended after 10 s with timeout=1.5"
    tool = code_tool(Toolbox([_slow(0)]), isolate='monty', timeout=1.5)
    r, secs = _timed(tool, 'import time\ntime.sleep(100)')
    assert secs < 2.5 and not r.ok and 'stopped after 1.5 s; asleep' in r.error
    r, secs = _timed(tool, 'import asyncio\nasyncio.run(asyncio.sleep(100))')
    assert secs < 2.5 and not r.ok and 'stopped after 1.5 s; asleep' in r.error
    assert tool.execute({'code': 'import time\ntime.sleep(0.1)\n"awake"'}).text == 'awake'  # a short one still sleeps
    r = tool.execute({'code': 'import time\ntime.sleep(-1)'})
    assert not r.ok and 'ValueError' in r.error

@needs_monty
def test_monty_program_makes_at_most_1000_calls():
    slow = _slow(0)
    r = code_tool(Toolbox([slow]), isolate='monty').execute({'code': 'for i in range(1200): slow(i)'})
    assert not r.ok and 'suspension limit 1000 exceeded' in r.error and len(slow.calls) <= 1000

@needs_monty
def test_monty_tool_errors_and_values_still_reach_the_program():
    code = "try:\n    slow('one')\nexcept ToolCallError as e:\n    print('caught', str(e).split(':')[0])\n[slow(i) for i in range(3)]"
    r = code_tool(Toolbox([_slow(0)]), isolate='monty', timeout=10).execute({'code': code})
    assert r.ok and r.text == 'caught ToolInputError\n[0, 1, 2]'

@needs_monty
def test_monty_printed_output_is_capped_and_the_cut_is_said():
    r = code_tool(Toolbox([_slow(0)]), isolate='monty').execute({'code': "for i in range(50_000): print('0123456789')\n'end'"})
    assert r.ok and len(r.text) < 100_100 and r.text.endswith('[... printed output cut at 100000 characters]\nend')

@needs_monty
def test_monty_program_sees_no_secret_no_network_and_is_memory_limited(monkeypatch):
    monkeypatch.setenv('FUNCCALL_TEST_SECRET', 'only the application has this')
    tool = code_tool(Toolbox([_slow(0)]), isolate='monty', memory_mb=50)
    r = tool.execute({'code': "import os\nos.getenv('FUNCCALL_TEST_SECRET')"})
    assert 'only the application has this' not in (r.text if r.ok else r.error)
    r = tool.execute({'code': 'import socket'})
    assert not r.ok and 'ModuleNotFoundError' in r.error
    r = tool.execute({'code': 'x = [0] * (200 * 2 ** 20)\nlen(x)'})  # 1.6 GB of list, under a 50 MB limit
    assert not r.ok and 'MemoryError' in r.error
    assert os.environ['FUNCCALL_TEST_SECRET'] == 'only the application has this'  # (it was there to be found)

@needs_monty
@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads the worker process in /proc')
def test_monty_worker_process_starts_with_an_empty_environment(monkeypatch):
    "The worker is this process's child: while the program waits for a tool, the tool reads the worker's environment"
    monkeypatch.setenv('FUNCCALL_TEST_SECRET', 'only the application has this')
    def workers() -> list:
        "The environments of this process's monty workers"
        found = []
        for pid in filter(str.isdigit, os.listdir('/proc')):
            try:
                status, cmd = open(f'/proc/{pid}/status').read(), open(f'/proc/{pid}/cmdline', 'rb').read()
                if f'PPid:\t{os.getpid()}\n' in status and b'monty' in cmd: found.append(open(f'/proc/{pid}/environ', 'rb').read().decode())
            except OSError: continue
        return found
    r = code_tool(Toolbox([workers]), isolate='monty').execute({'code': 'workers()'})
    assert r.ok and r.text == '[""]', r.text  # one worker, and not one variable of this process's environment

# --- the default is the safest mode installed ---------------------------------------------------------------

@needs_monty
def test_default_mode_is_monty_when_installed():
    tool = code_tool(Toolbox([_slow(0)]))
    assert safest_mode() == 'monty' and tool.fn.isolate == 'monty'
    assert tool.execute({'code': 'import sys\nsys.version'}).text.endswith('(Monty)')  # run by monty, not CPython
    r = tool.execute({'code': "open('/etc/hostname').read()"})
    assert not r.ok and 'PermissionError' in r.error  # no file of the host

@pytest.mark.skipif(os.name == 'nt', reason='isolate=True needs POSIX')
def test_default_mode_without_monty_is_a_process_of_its_own(monkeypatch):
    monkeypatch.setitem(sys.modules, 'pydantic_monty', None)  # `import pydantic_monty` now fails, as when not installed
    tool = code_tool(Toolbox([_slow(0)]))
    assert tool.fn.isolate is True
    r = tool.execute({'code': 'import os\nos.getpid()'})
    assert r.ok and int(r.text) != os.getpid()

def test_without_any_sandbox_the_default_refuses_rather_than_run_in_process(monkeypatch):
    import funccall.toolsets.codemode as cm
    monkeypatch.setitem(sys.modules, 'pydantic_monty', None)
    monkeypatch.setattr(cm.os, 'name', 'nt')  # (only for this call: no process isolation there)
    with pytest.raises(NotImplementedError, match='isolate=False'): code_tool(Toolbox([_slow(0)]))

def test_in_process_only_when_asked_for():
    tool = code_tool(Toolbox([_slow(0)]), isolate=False)
    assert tool.fn.isolate is False and tool.execute({'code': 'import threading\nthreading.current_thread().name'}).text == 'funccall-python'

# --- in process: the caller returns, the event loop runs on ----------------------------------------------------

SWALLOW_DEL = 'class D:\n    def __del__(self):\n        x = 1\nwhile True:\n    try: D()\n    except BaseException: pass\n'

@pytest.mark.slow  # timed against a deadline: run on the one Python CI doesn't share a core with three others
@pytest.mark.filterwarnings('ignore::pytest.PytestUnraisableExceptionWarning')  # the timeout landing in `__del__`: Python reports it as unraisable, as designed
def test_a_loop_swallowing_the_timeout_around_del_returns_on_the_main_thread():
    "The timeout lands in `__del__`, where Python ignores it, at every line: on the main thread this never returned"
    assert threading.current_thread() is threading.main_thread()
    before = _python_threads()
    start = time.monotonic()
    r = python(SWALLOW_DEL, glb={}, timeout=0.5)
    assert time.monotonic() - start < 1.5 and r.rstrip().endswith('TimeoutError')
    deadline = time.monotonic() + 2
    while _python_threads() - before and time.monotonic() < deadline: time.sleep(0.05)
    assert not _python_threads() - before  # stopped, not left burning a core

@pytest.mark.filterwarnings('ignore::pytest.PytestUnraisableExceptionWarning')  # the timeout landing in `__del__`: Python reports it as unraisable, as designed
def test_in_process_code_tool_returns_at_the_deadline_from_the_main_thread():
    r, secs = _timed(code_tool(Toolbox([_slow(0)]), isolate=False, timeout=0.5), SWALLOW_DEL)
    assert secs < 1.5 and not r.ok and 'TimeoutError' in r.error

@pytest.mark.slow  # timed against a deadline: run on the one Python CI doesn't share a core with three others
@pytest.mark.parametrize('isolate', [False, pytest.param('monty', marks=needs_monty)])
def test_a_program_swallowing_its_timeout_calls_no_tool_after_the_deadline(isolate):
    "The timeout landed inside the tool call, came back as a ToolCallError, was caught: the loop called tools for good"
    slow, before = _slow(0.02), _python_threads()
    code = 'n = 0\nwhile True:\n    try: n += slow(1)\n    except BaseException: pass'
    r, secs = _timed(code_tool(Toolbox([slow]), isolate=isolate, timeout=1), code)
    assert secs < 2 and not r.ok and 'TimeoutError' in r.error
    n = len(slow.calls)
    time.sleep(0.3)
    assert n > 5 and len(slow.calls) == n  # no call after it returned
    end = time.monotonic() + 5  # and in process, the program's thread stops (it raises at every line: soon, however busy the cores)
    while _python_threads() - before and time.monotonic() < end: time.sleep(0.05)
    assert not _python_threads() - before
    assert len(slow.calls) == n  # still no call after it returned

@pytest.mark.slow  # ten programs, each past its deadline
def test_a_timeout_raised_while_the_program_starts_a_thread_lands_in_the_program(monkeypatch):
    "Before 3.12 a thread being started has its starter's ident: the timeout landed in it, and `Thread.start` waited for good"
    dropped = []
    monkeypatch.setattr(sys, 'unraisablehook', dropped.append)  # (where an exception a thread dies of at its start is reported)
    before = _python_threads()
    for _ in range(10):
        r = python('import threading\nfor _ in range(10 ** 6): threading.Thread(target=int).start()', glb={}, timeout=0.3)
        assert r.startswith('Traceback')  # (the timeout, or what it broke in `threading` where it landed)
        end = time.monotonic() + 3  # (its last thread started runs at once, however busy the cores: then the program stops)
        while _python_threads() - before and time.monotonic() < end: time.sleep(0.02)
        assert not _python_threads() - before, 'the program waits in Thread.start for a thread that took its timeout'
    assert not [u for u in dropped if isinstance(u.exc_value, TimeoutError)]

def test_a_thread_an_in_process_program_leaves_running_calls_no_tool_after_its_answer():
    "The program started a thread looping over a tool and returned: the thread called the tool on after the model had its answer"
    slow = _slow(0.01)
    code = ('import threading, time\ndef loop():\n    for _ in range(100):  # (ends: no thread left spinning in the tests)\n'
            '        try: slow(1)\n        except BaseException: time.sleep(0.01)\n'
            'threading.Thread(target=loop, daemon=True).start()\n"started"')
    r = code_tool(Toolbox([slow]), isolate=False, timeout=5).execute({'code': code})
    assert r.ok and r.text == 'started'
    time.sleep(0.1)  # a call begun before the answer runs on to its end
    n = len(slow.calls)
    time.sleep(0.5)  # well before the deadline
    assert len(slow.calls) == n and n <= 1

def test_an_in_process_timeout_never_lands_inside_a_tool():
    "The timeout, raised at every line the program's thread ran, interrupted the tool's own cleanup: the application's lock stayed held"
    lock, log = threading.Lock(), []
    def write(x: int) -> int:
        "Write x under the application's lock"
        lock.acquire()
        try:
            log.append(('begin', x))
            time.sleep(0.2)
        finally:
            log.append(('end', x))
            lock.release()
        return x
    r, secs = _timed(code_tool(Toolbox([write]), isolate=False, timeout=0.5), 'for i in range(10): write(i)')
    assert secs < 1.5 and not r.ok and 'TimeoutError' in r.error
    assert lock.acquire(timeout=2), 'the lock was left held'  # the call running at the deadline ran on to its end
    lock.release()
    assert log[-1][0] == 'end' and [e for e in log if e[0] == 'begin'] == [('begin', i) for i in range(len(log) // 2)]

def test_the_python_tools_timeout_lands_inside_a_function_it_was_given_as_documented():
    "README: a function passed in to `python` takes the timeout at any line, its `finally` included; code mode's tools don't"
    lock = threading.Lock()
    def write() -> None:
        lock.acquire()
        try: time.sleep(0.5)
        finally:
            time.sleep(0.01)  # a line before the release: the timeout raised here again
            lock.release()
    assert 'TimeoutError' in python('write()', glb={'write': write}, timeout=0.2)
    assert not lock.acquire(timeout=1.5)  # its sleep over long ago: the release was never reached

def _ticking(run):
    "Run coroutine function `run` beside a ticker on the same loop: (its result, seconds it took, longest gap between ticks)"
    async def main():
        ticks, stop = [], asyncio.Event()
        async def ticker():
            while True:
                ticks.append(time.monotonic())
                if stop.is_set(): break
                await asyncio.sleep(0.01)
        t = asyncio.ensure_future(ticker())
        await asyncio.sleep(0.05)
        start = time.monotonic()
        res = await run()
        secs = time.monotonic() - start
        stop.set(); await t
        return res, secs, max(b - a for a, b in zip(ticks, ticks[1:]))
    return asyncio.run(main())

@pytest.mark.parametrize('how', ['code_tool', 'python'])
def test_the_event_loop_keeps_running_while_a_program_blocks_in_c_past_its_deadline(how):
    "Awaited, a program blocked in a C call (one that lets the GIL go) holds neither the loop nor its caller past the deadline"
    release = threading.Event()
    def wait() -> str:
        "Block until the test is done"
        release.wait(30)
        return 'released'
    if how == 'code_tool': box, args = Toolbox([code_tool(Toolbox([wait]), isolate=False, timeout=1)]), {'code': 'wait()'}
    else: box, args = Toolbox([python]), {'code': 'import time\ntime.sleep(2)', 'glb': {}, 'timeout': 1}
    try: r, secs, gap = _ticking(lambda: box.acall(next(iter(box)).name, args))
    finally: release.set()
    assert secs < 2, f'timeout=1 returned after {secs:.1f} s'
    assert 'TimeoutError' in (r.error or r.text)
    if how == 'python': assert 'inside a blocking call' in r.text  # (code mode's tool call blocks its own thread: the program stops)
    assert gap < 0.5, f'the event loop stood still for {gap:.2f} s'

def test_called_synchronously_on_the_loop_thread_python_holds_the_loop_until_its_report():
    "Documented: a sync call on the loop's thread holds the loop, until the deadline plus 0.3 s at most"
    release = threading.Event()
    async def run(): return python('release.wait(30)', glb={'release': release}, timeout=0.5)
    try: r, secs, gap = _ticking(run)
    finally: release.set()
    assert secs < 1.5 and 'TimeoutError' in r
    assert 0.4 < gap < 1.5  # held, and only until the report

# --- in process: what can't be stopped, shown in a child process ------------------------------------------------

GIL_HELD = textwrap.dedent('''
    import sys, threading, time
    from funccall import python
    ticks = []
    def tick():
        while True: ticks.append(time.monotonic()); time.sleep(0.01)
    threading.Thread(target=tick, daemon=True).start()
    time.sleep(0.1)
    start = time.monotonic()
    print('start', flush=True)
    r = python(sys.argv[1], glb={}, timeout=0.2)
    secs = time.monotonic() - start
    time.sleep(0.05)  # (a tick after it returned)
    during = [t for t in ticks if t >= start - 0.05]
    gap = max(b - a for a, b in zip(during, during[1:]))
    print('returned', round(secs, 2), round(gap, 2), r.splitlines()[-1], flush=True)
''')

@pytest.mark.slow  # timed: seconds of a backtracking regex holding the GIL
def test_c_code_holding_the_gil_freezes_every_thread_until_it_returns():
    "Documented: a backtracking regex holds the GIL; no thread runs until it returns, and `python` returns only then"
    code = "import re\nre.match(r'(a+)+$', 'a' * 26 + 'b')\nwhile True: pass"
    p = subprocess.run([sys.executable, '-c', GIL_HELD, code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    _, secs, gap, last = p.stdout.split('\n')[1].split()
    assert float(secs) > 0.2 + 1, f'returned after {secs} s: the regex did not hold it'  # past the deadline plus one second
    assert float(gap) > 0.7 * float(secs)  # the other thread stood still the while
    assert last == 'TimeoutError'  # and the code stopped once the C call returned, before its endless loop

@pytest.mark.slow  # timed: watches a frozen process for two seconds
def test_c_code_that_never_returns_freezes_the_process_for_good():
    "Documented: `deque(itertools.count(), maxlen=0)` never returns nor lets the GIL go: nothing in the process runs again"
    code = 'import collections, itertools\ncollections.deque(itertools.count(), maxlen=0)'
    p = subprocess.Popen([sys.executable, '-c', GIL_HELD, code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == 'start'
        time.sleep(2)  # the deadline (0.2 s), plus more than a second
        assert p.poll() is None  # still stuck: `python` never returned
    finally:
        p.kill()
        out = p.communicate()[0]
    assert 'returned' not in out

# --- what a program hands back is capped, in every mode ------------------------------------------------------------

from funccall.toolsets.codemode import MAX_VALUE  # noqa: E402

MODES = [False, pytest.param('monty', marks=needs_monty), pytest.param(True, marks=pytest.mark.skipif(os.name == 'nt', reason='POSIX'))]

def _capped(text: str, what: str) -> bool: return len(text) <= MAX_VALUE + 200 and f'[... {what} cut at ' in text

@pytest.mark.parametrize('isolate', MODES)
def test_a_huge_final_value_is_cut_and_the_cut_said(isolate):
    "The program's last expression went to the model whole: 100 MB of text from one line of code"
    r = code_tool(Toolbox([_slow(0)]), isolate=isolate, timeout=20).execute({'code': "print('hi')\n'x' * 5_000_000"})
    assert r.ok and r.text.startswith('hi\nxxx') and _capped(r.text, 'value') and r.text.endswith('[... value cut at 100000 characters]')

@pytest.mark.parametrize('isolate', MODES)
def test_a_huge_error_message_is_cut(isolate):
    r = code_tool(Toolbox([_slow(0)]), isolate=isolate, timeout=20).execute({'code': "raise ValueError('x' * 5_000_000)"})
    assert not r.ok and 'ValueError' in r.error and _capped(r.error, 'value')

@pytest.mark.parametrize('isolate', [False, pytest.param('monty', marks=needs_monty)])
def test_a_value_sharing_one_list_many_times_is_cut_without_being_written_out(isolate):
    """8 MB in the program (monty hands it back shared), 300 MB of text once written out: writing it took 90 s past a
    2 s deadline, and a million copies would take the host's memory. Now only what is shown is written"""
    code = 'x = list(range(1000))\n[x] * 100_000'
    r, secs = _timed(code_tool(Toolbox([_slow(0)]), isolate=isolate, timeout=5), code)
    assert secs < 5 + 1, f'returned after {secs:.1f} s'
    assert r.ok and r.text.startswith('[[0, 1, 2') and _capped(r.text, 'value')

@pytest.mark.parametrize('isolate', [False, pytest.param('monty', marks=needs_monty)])
def test_a_self_containing_or_deeply_nested_value_is_shown_bounded(isolate):
    tool = code_tool(Toolbox([_slow(0)]), isolate=isolate, timeout=10)
    r = tool.execute({'code': 'x = [1]\nfor _ in range(200_000): x = [x, x]\nx'})  # shared: 2 ** 200_000 leaves
    assert (r.ok and len(r.text) <= MAX_VALUE + 200) or (not r.ok and 'Error' in r.error), (r.text or r.error)[:200]
    if isolate is False:  # monty has no way to build a cycle it can hand back
        r = tool.execute({'code': 'x = []\nx.append(x)\nd = {"a": x}\nd'})
        assert r.ok and len(r.text) < 1000

@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='finds the channel in /proc/self/fd')
def test_an_isolated_program_forging_its_last_message_can_not_send_more_than_the_caps():
    "The program's process is hostile: it writes the 'done' message itself, 5 MB printed and 5 MB of value (under the channel's 16 MB a line)"
    code = textwrap.dedent('''
        import json, os
        line = (json.dumps({'done': True, 'printed': 'p' * 5_000_000, 'value': 'v' * 5_000_000, 'failed': False}) + '\\n').encode()
        for fd in map(int, os.listdir('/proc/self/fd')):
            if fd > 2 and os.readlink(f'/proc/self/fd/{fd}').startswith(('pipe:', 'socket:')):
                try: os.write(fd, line)
                except OSError: pass
        import time; time.sleep(5)
    ''')
    r, secs = _timed(code_tool(Toolbox([_slow(0)]), isolate=True, timeout=10), code)
    assert r.ok and secs < 5, (secs, (r.text or r.error)[:200])  # the forged message was taken as the program's end
    assert len(r.text) <= 100_000 + MAX_VALUE + 200, len(r.text)
    assert '[... printed output cut at 100000 characters]' in r.text and r.text.endswith('[... value cut at 100000 characters]')

# --- what a program reaches of the tools ---------------------------------------------------------------------------

def _guarded_box(ran: list) -> Toolbox:
    "A transfer that needs the user's approval (always declined) and takes the account from the application"
    from funccall import Tool
    def transfer(to: str, amount: int, account: str) -> str:
        "Move money"
        ran.append((to, amount, account))
        return 'moved'
    return Toolbox([Tool(transfer, requires_confirmation=True, confirm=lambda tool, args: False, inject='account')], injected={'account': 'alice'})

SANDBOXED = [pytest.param('monty', marks=needs_monty), pytest.param(True, marks=pytest.mark.skipif(os.name == 'nt', reason='POSIX'))]

@pytest.mark.parametrize('isolate', SANDBOXED)
@pytest.mark.parametrize('code', ["transfer(to='m', amount=1, account='evil')", "transfer(**{'to': 'm', 'amount': 1, 'account': 'evil'})",
                                  "transfer('m', 1, 'evil')", "transfer(to='m', amount=1)", "transfer(to='m', amount=1, Account='evil')",
                                  "transfer.__globals__", "transfer.__closure__[0].cell_contents", "transfer.__wrapped__",
                                  "import gc\n[o for o in gc.get_objects() if type(o).__name__ == 'Toolbox'][0].tools['transfer'].fn('m', 1, 'evil')"])
def test_a_sandboxed_program_reaches_a_tool_only_through_its_pipeline(isolate, code):
    "The model writes the injected account, spreads it in with **, names it otherwise, digs into the function: nothing runs"
    ran = []
    r = code_tool(_guarded_box(ran), isolate=isolate, timeout=10).execute({'code': code})
    text = r.text if r.ok else r.error
    assert ran == [] and 'alice' not in text and 'moved' not in text, text
    if code.startswith('transfer('): assert not r.ok and ('supplied by the application' in text or 'declined' in text or 'positional' in text)

def test_an_in_process_program_reaches_the_application_as_documented(monkeypatch):
    "README: in process, the program reads the environment and calls a tool's own function, skipping confirmation and injection"
    monkeypatch.setenv('FUNCCALL_TEST_SECRET', 'the application has this')
    ran = []
    box = _guarded_box(ran)
    tool = code_tool(box, isolate=False, timeout=10)
    assert tool.execute({'code': "__import__('os').environ['FUNCCALL_TEST_SECRET']"}).text == 'the application has this'
    code = f"import gc\n[o for o in gc.get_objects() if id(o) == {id(box)}][0].tools['transfer'].fn('m', 1, 'evil')"  # (this test's toolbox)
    assert tool.execute({'code': code}).text == 'moved' and ran == [('m', 1, 'evil')]
