"""The `python` code tool: run code like a notebook cell, returning the last expression's value.

How the timeout stops code: the code always runs in a thread of its own (a daemon), wherever `python` is called
from (the main thread, another thread, an event loop's thread), and the caller waits for it until the deadline. Then
`TimeoutError` is raised in the code's thread at its next Python instruction, and again at every line it runs, so
code that catches it (`except BaseException` in a loop, in a `__del__`) still stops. Nested calls keep their deadlines.
On Python before 3.12 it is never raised while a thread the code's thread is starting doesn't run yet (`_unborn_child`:
it would land in that thread, and the code's thread would wait for good in `Thread.start`): the caller waits for it, up to
`_BIRTH_WAIT` (20 ms) a try; a timeout still held back at the caller's answer is raised by a thread of its own, which
tries every millisecond until it does or the code ends.
It lands wherever that thread is, inside functions of yours the code called too (their `finally` blocks included): pass
in only functions that can take an exception at any line (code mode runs each tool call in a thread of its own for this).
(So the code never runs on the main thread: what only works there, `signal.signal`, fails in it.)

What the deadline holds, and what it can't:
- the caller gets its answer by the deadline plus `_GRACE` (0.3 s): the code's traceback, or a report that the code is
  inside a blocking call or refused to stop, and then runs on in the background (a daemon: the program still exits);
- code blocked in a C call that releases the GIL (`time.sleep`, a socket read) stops when that call returns; meanwhile
  the caller, the application's event loop and its other threads run;
- C code that holds the GIL (a backtracking regular expression, `collections.deque(itertools.count(), maxlen=0)`) can't
  be stopped in this process: until it returns no other thread runs Python, the caller, the event loop and the rest of
  the application included (for good, if it never returns). Only a process of its own stops it (`python_isolated`,
  code mode's isolated modes);
- called synchronously on an event loop's thread, `python` holds that loop until it returns (deadline + 0.3 s at
  most); through `await toolbox.acall(...)` or an awaited `run_tool_calls`, a sync tool, it runs in a worker thread
  and the loop runs on.
On Python 3.11 other threads under a trace function pause while a timeout is pending for code blocked in C, up to the
report (`_unsignal`).
`python_isolated` runs the code in a fresh Python process under `_sandbox`'s supervisor instead, its whole tree
killed at the deadline: it always stops, but sees none of the caller's globals (nor its environment, files open,
processes, files but the Python runtime's, or the network), and a value comes back as itself only when it is a Python
literal (else as its `repr`, at most 100,000 characters). It needs a filesystem of its own (Linux with user
namespaces): elsewhere it refuses, saying so (`code_tool(isolate=True, accept=...)` runs without). `python` is no sandbox.
"""
from __future__ import annotations

import ast, io, itertools, json, linecache, re, sys, threading, time, traceback  # (ctypes, subprocess: when needed)
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from types import FrameType

from ..core._package import PACKAGE_DIR, is_own

__all__ = ['python', 'python_isolated', 'run_in_process']

# --- exceptions raised into a thread from outside (`PyThreadState_SetAsyncExc`): how the timeout stops code --------

def _raise_in_thread(
    ident: int,  # a thread's `threading.get_ident()`
    exc,         # an exception class (or instance) to raise there
) -> None:
    "Raise `exc` in thread `ident` where it next calls, jumps back or enters a function (replacing one still pending there)"
    import ctypes
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc))

class _Dropped(BaseException):
    "Raised in a thread by itself, to take the place of (and so drop) an exception pending for it"

def _drop_pending() -> None:
    """An exception raised into this thread from outside and still pending is dropped here, so it never lands later, anywhere:
    pending for a thread blocked in C, it may have been unsignalled (another thread taking its own clears the flag on
    3.11 and 3.12), and then waits for any later check"""
    try:  # (it may land as soon as the call that raises it returns)
        _raise_in_thread(threading.get_ident(), _Dropped)  # (not `SetAsyncExc(NULL)`: on 3.11 it can leave the interpreter spinning)
        for _ in range(1000): pass
    except _Dropped: pass

_THREAD_START = threading.Thread.start.__code__
_STARTS_SHARE_IDENT = sys.version_info < (3, 12)

def _unborn_child(frame: Optional[FrameType]) -> bool:
    """Whether the thread whose current frame is `frame` may be starting a thread that doesn't run yet, on Python before
    3.12: that thread has its starter's ident until it first runs, so an exception raised into the starter by ident (the
    first thread state with it) can land in it instead, which dies before it says it started: `Thread.start` waits for
    good. Seen under `_active_limbo_lock` (which `Thread.start` takes to list a thread before making it) it stays true
    only until that thread runs, and a false one holds until the lock is released"""
    if not _STARTS_SHARE_IDENT: return False
    while frame is not None and frame.f_code is not _THREAD_START: frame = frame.f_back
    starting = frame.f_locals.get('self') if frame is not None else None
    limbo = threading._limbo  # type: ignore[attr-defined]  # (CPython's threads being started, before 3.12 as since)
    return starting is not None and starting in limbo and starting._ident is None  # (set by the new thread once it runs)

# --- printed output, captured per thread -------------------------------------------------------------

class _ThreadStdout(io.TextIOBase):
    "`sys.stdout` while code runs: each running thread's prints go to its own buffer, other threads' pass through"
    orig: Any                 # the stream it replaced
    bufs: dict[int, Any]      # thread id -> its buffer
    def __init__(self, orig: Any): self.orig, self.bufs = orig, {}
    def write(self, s: str) -> int: return self.bufs.get(threading.get_ident(), self.orig).write(s)
    def flush(self): self.orig.flush()
    def __getattr__(self, nm): return getattr(self.orig, nm)

_out_lock = threading.Lock()

def _capture_start() -> io.StringIO:
    "Start capturing what this thread prints, without touching what other threads print"
    buf = io.StringIO()
    with _out_lock:
        if not isinstance(sys.stdout, _ThreadStdout): sys.stdout = _ThreadStdout(sys.stdout)
        sys.stdout.bufs[threading.get_ident()] = buf
    return buf

def _capture_end() -> None:
    "Stop capturing this thread's prints (idempotent: clean-up may be retried)"
    with _out_lock:
        if isinstance(proxy := sys.stdout, _ThreadStdout):  # (else ended already)
            proxy.bufs.pop(threading.get_ident(), None)
            if not proxy.bufs: sys.stdout = proxy.orig

# --- running code --------------------------------------------------------------------------------------

_runs = itertools.count(1)
_code_name_re = re.compile(r'"<code-\d+>"')
_KEEP = 200  # recent runs whose source tracebacks (and schemas of functions they define) can still show

def _remember(code: str) -> str:
    "Register `code` in `linecache` under a name of its own, so tracebacks and docments read its lines"
    n = next(_runs)
    fn = f'<code-{n}>'
    linecache.cache[fn] = (len(code), None, code.splitlines(True), fn)
    linecache.cache.pop(f'<code-{n - _KEEP}>', None)
    return fn

def _exec(code: str, glb: dict, loc: Optional[dict], lv=None):
    "Run `code`, returning its final expression's value (like IPython), or None"
    fn = _remember(code)
    if lv is not None: lv.fn = fn
    tree = ast.parse(code, fn)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, fn, 'exec'), glb, loc)  # noqa: S102 - running code is this tool's purpose
    return eval(compile(ast.Expression(last.value), fn, 'eval'), glb, loc) if last else None  # type: ignore[attr-defined]  # noqa: S307 - (an `ast.Expr`)

def _result(res, printed: str):
    return printed.rstrip('\n') if res is None and printed else res  # a value wins over what was printed, as in a notebook

def _run(
    code:str,           # Python statements; the value of a final expression is returned
    glb:Optional[dict]=None,  # globals to run in (default: a new namespace)
    loc:Optional[dict]=None,  # locals to run in (default: `glb`)
):                      # the last expression's value, else what the code printed, else None
    "Run `code`, returning its final expression's value (like IPython), or its printed output; no timeout"
    buf = _capture_start()
    try: res = _exec(code, {} if glb is None else glb, loc)
    finally: _capture_end()
    return _result(res, buf.getvalue())

def run_in_process(
    code:str,        # Python statements; the value of a final expression is returned
    glb:Optional[dict[str, Any]]=None,  # globals to run in (default: a new namespace)
) -> Any:             # the value, what the code printed, or its traceback as text
    """`python` for a process whose deadline is kept from outside (it is killed): the code runs on this thread, the main
    one, so the process's name, its signals and its memory limit are the program's own, with no thread to stop it"""
    try: return _run(code, glb)
    except BaseException as e: return _tb_text(e)  # noqa: BLE001 - the program's error is its result

def _tb_text(e: BaseException) -> str:
    "A traceback of an error in the code, without funccall's own frames (of any subpackage: a code-mode tool's are in core/)"
    frames = [fr for fr in traceback.extract_tb(e.__traceback__) if not is_own(fr.filename)]
    tb = 'Traceback (most recent call last):\n' + ''.join(traceback.format_list(frames)) + ''.join(traceback.format_exception_only(type(e), e))
    return _code_name_re.sub('"<code>"', tb)  # each run has its own name in `linecache`; the model needn't see it

# --- deadlines -----------------------------------------------------------------------------------------

class _Level:
    "One `python` call: its deadline, and whether its code runs now: started and not yet ended (guarded by `lock`)"
    __slots__ = ('deadline', 'expired', 'running', 'active', 'refused', 'owed', 'frame', 'fn', 'lock')
    frame: Optional[FrameType]
    fn: Optional[str]
    def __init__(self, timeout: float):
        self.deadline, self.expired, self.running, self.active, self.refused = time.monotonic() + timeout, False, False, True, False
        self.owed = False  # its timeout was held back (`_unborn_child`) and not raised since
        self.frame, self.fn, self.lock = None, None, threading.Lock()  # `_guarded`'s frame, the code's file name

_tls = threading.local()  # per thread: `levels`, the calls whose code runs in it; `prev_trace` while stopping

def _levels() -> list:
    try: return _tls.levels
    except AttributeError: _tls.levels = []; return _tls.levels

def _expired_level() -> Optional[_Level]:
    "The outermost call running in this thread whose deadline has passed"
    return next((lv for lv in _levels() if lv.expired), None)

class _Timeout(TimeoutError):
    "The timeout of one `python` call, `level`; reported as a plain `TimeoutError`"
    def __init__(self, *args):
        super().__init__(*args)
        self.level = _expired_level()
        if self.level is not None:
            self.level.refused = True  # seen by the code: if it still runs later, it caught this
            _start_stopping(sys._getframe(1), self.level)

_Timeout.__name__ = _Timeout.__qualname__ = 'TimeoutError'; _Timeout.__module__ = 'builtins'
_own_files = {__file__, threading.__file__}

def _in_code(frame, lv: _Level) -> bool:
    "Whether `frame` runs on behalf of `lv`'s code: the code itself, or something it called"
    while frame is not None and frame is not lv.frame:
        if frame.f_code.co_filename == lv.fn: return True
        frame = frame.f_back
    return False

def _tracer(frame, event, arg):
    "While an expired call's code runs: raise its `TimeoutError` again at every line, so code that swallows it still stops"
    if event == 'line' and (lv := _expired_level()) is not None and lv.running and _in_code(frame, lv) and not _unborn_child(frame):
        # (it lands in here as this call returns, measured on 3.10 to 3.13: tracing goes off, and the code takes it at this line)
        _raise_in_thread(threading.get_ident(), _Timeout)
    return _tracer

def _start_stopping(frame, lv: _Level) -> None:
    "Trace this thread's frames below `lv`'s, as a debugger does, so each line raises the timeout again"
    if getattr(_tls, 'tracing', False) is False:
        _tls.prev_trace, _tls.tracing = sys.gettrace(), True
        sys.settrace(_tracer)
    while frame is not None and frame is not lv.frame:
        if frame.f_code.co_filename not in _own_files: frame.f_trace = _tracer
        frame = frame.f_back

def _stop_stopping() -> None:
    "Tracing off, once no expired call runs in this thread"
    if _expired_level() is None and getattr(_tls, 'tracing', False):
        sys.settrace(_tls.prev_trace)
        _tls.tracing, _tls.prev_trace = False, None

_TRACE_SPINS = sys.version_info[:2] == (3, 11)

def _unsignal() -> None:
    """Python 3.11: clear the interpreter-wide "an exception is pending" flag that a timeout raised in code blocked in
    C leaves set: while it is set every thread with a trace or profile function (coverage, a debugger, a profiler)
    spins at its next call. The code's thread keeps its exception, signalled again when it next takes the GIL"""
    _drop_pending()  # taking an exception of its own clears the flag, not the other thread's exception

def _guarded(code, glb, loc, lv: _Level) -> tuple[tuple[str, Any], str]:
    """Run `code` as call `lv` in this thread: ('res', value) or ('err', exception), and what it printed.
    A timeout landing after the code finished (in this clean-up) is absorbed here, never reaching the caller's code."""
    levels, out = _levels(), None
    levels.append(lv)
    buf = _capture_start()
    lv.frame = sys._getframe()
    while True:
        try:
            if out is None:
                try:
                    with lv.lock: lv.running = True  # from here on a timeout raised in this thread lands where it is caught
                    if lv.expired: raise _Timeout()  # the deadline passed before the code started (a slow thread start)
                    out = ('res', _exec(code, glb, loc, lv))
                except BaseException as e: out = ('err', e)  # noqa: BLE001 - reported to the caller as text, like any error in the code
            with lv.lock: lv.running = False  # from here on no one raises the timeout in this thread for `lv`
            if lv in levels: levels.remove(lv)
            lv.active = False
            _stop_stopping()
            _drop_pending()  # a timeout still pending for this thread never lands outside `_guarded` (its clean-up, `threading.excepthook`)
            _capture_end()
            break
        except BaseException as e:  # noqa: BLE001 - a timeout landing late; an enclosing call's must still stop its code
            if out is None: out = ('err', e.__context__ if isinstance(e, _Timeout) and e.__context__ is not None else e)
            elif isinstance(e, _Timeout) and e.level is not lv and e.level is not None: out = ('err', e)
    return out, buf.getvalue()

def _outcome(out: tuple, printed: str, lv: _Level):
    kind, v = out
    if kind == 'res': return _result(v, printed)
    if isinstance(v, _Timeout) and v.level is not None and v.level is not lv and v.level.active: raise v  # an enclosing call's
    if isinstance(v, KeyboardInterrupt): raise v
    return _tb_text(v)

# --- in a thread of its own -------------------------------------------------------------------------

_GRACE = 0.3  # seconds to keep raising the timeout before reporting the code as not stopped

def _stop_report(timeout: float, lv: _Level) -> str:
    why = ('it caught the TimeoutError and could not be stopped; it keeps running in the background' if lv.refused
           else 'it is inside a blocking call and stops when that returns')
    return f"Traceback (most recent call last):\n  File \"<code>\", in <module>\n    (stopped after {timeout:g} s; {why})\nTimeoutError"

_LIMBO_LOCK = threading._active_limbo_lock  # type: ignore[attr-defined]  # (CPython's: `Thread.start` takes it to list a new thread)
_BIRTH_WAIT = 0.02  # seconds a try to raise the timeout waits for a thread the code is starting to run (`_unborn_child`)

def _raise_timeout(lv: _Level, t: threading.Thread) -> None:
    # under `_active_limbo_lock` (`Thread.start` takes it first) the code's thread makes no new thread: waiting here lets the
    # one it is starting run, and holds it in its next start before it makes one (it lets go of the GIL inside `Thread.start`:
    # looked at without waiting, a program starting threads in a loop is found there nearly always)
    with lv.lock, _LIMBO_LOCK:
        lv.expired = True  # code that hasn't started yet sees it and doesn't start
        if not lv.running or t.ident is None: return  # (started: it has an ident)
        end = time.monotonic() + _BIRTH_WAIT
        while (owed := _unborn_child(sys._current_frames().get(t.ident))) and time.monotonic() < end: time.sleep(0.0005)
        lv.owed = owed
        if not owed: _raise_in_thread(t.ident, _Timeout)

def _raise_when_out(lv: _Level, t: threading.Thread, box: dict) -> None:
    "After the caller's answer: raise a timeout it held back (`_unborn_child`), trying every millisecond while the code runs"
    while lv.owed and 'ended' not in box:
        time.sleep(0.001)
        _raise_timeout(lv, t)

class _Untraced:
    """The caller's trace and profile functions (a debugger, coverage, a profiler) off while it waits for its code:
    on Python 3.11 a traced thread spins at its next call while an exception raised in another thread is pending
    there, so a caller that raised the timeout in code blocked in C would wait for the C call to return"""
    def __enter__(self):
        self.trace, self.prof = sys.gettrace(), sys.getprofile()
        sys.settrace(None); sys.setprofile(None)
    def __exit__(self, *exc):
        if _TRACE_SPINS: _unsignal()  # before tracing resumes: the code may still be blocked with its timeout pending
        sys.settrace(self.trace); sys.setprofile(self.prof)

def _in_thread(code, glb, loc, lv: _Level, timeout: float):
    box: dict[str, Any] = {}
    # the wait is one C call on a bare lock, released when the code's thread ends: a timeout landing in the wait (an
    # enclosing call's) must find no Python-level state to break (inside `Thread.join` it can mark the thread as
    # stopped while it runs on, inside `Event.wait` it leaves a lock released twice)
    ended = threading.Lock()
    ended.acquire()
    def run():
        try: box.update(out=_guarded(code, glb, loc, lv))
        finally:
            box['ended'] = True
            ended.release()
    t = threading.Thread(target=run, name='funccall-python', daemon=True)
    t.start()
    with _Untraced():
        try:  # short waits: an enclosing call's timeout gets in
            while 'ended' not in box and (left := lv.deadline - time.monotonic()) > 0: ended.acquire(timeout=min(left, 0.05))
            end = time.monotonic() + _GRACE
            while 'ended' not in box and time.monotonic() < end:
                _raise_timeout(lv, t)
                ended.acquire(timeout=0.01)
        finally:  # the caller is leaving (an enclosing call's timeout): stop this code too, even as that timeout lands again here
            while 'ended' not in box:
                try: _raise_timeout(lv, t); break
                except BaseException: continue  # noqa: BLE001, S112 - the exception on its way out is still raised after this
            if lv.owed: threading.Thread(target=_raise_when_out, args=(lv, t, box), name='funccall-python-stop', daemon=True).start()
    if 'out' not in box: return _stop_report(timeout, lv)
    return _outcome(*box['out'], lv)  # type: ignore[call-arg]  # (`_guarded`'s pair: two arguments)

# --- in a process of its own ------------------------------------------------------------------------------

_CHILD = r'''
import ast, importlib.util, json, os, sys, types
chan = os.fdopen(os.dup(1), 'w'); os.dup2(2, 1)  # the channel: what else writes to stdout goes to stderr
pkg = types.ModuleType('funccall_isolated'); pkg.__path__ = [sys.argv[1]]; sys.modules[pkg.__name__] = pkg
tool = importlib.import_module('funccall_isolated.toolsets.pytool')  # this module and what it imports: not all of funccall
res = tool.run_in_process(json.loads(sys.stdin.readline())['code'], glb={'__name__': '__main__'})
r, cap = repr(res), int(sys.argv[2])
literal = False
if len(r) <= cap:
    try: ast.literal_eval(r); literal = True
    except Exception: pass
if len(r) > cap: r = r[:cap] + f'\n[... {len(r) - cap} more characters cut]'
chan.write(json.dumps({'repr': r, 'literal': literal}) + '\n'); chan.flush()
'''

_MAX_RESULT = 100_000  # characters of `python_isolated`'s value (its repr) kept; a longer one is cut, and comes back as text

def python_isolated(
    code:str,          # Code to execute
    timeout:int=3600,  # Maximum run time in seconds
):
    "Executes python `code` in a new process, killed after `timeout` seconds, returning its final expression (as a literal or its repr)."
    from ._sandbox import Sandbox, SandboxError, failure, for_model
    argv = [sys.executable, '-S', '-c', _CHILD, PACKAGE_DIR, str(_MAX_RESULT)]  # (host paths: the sandbox gives the program's own)
    sb = None
    try:
        with Sandbox(argv, timeout) as sb:
            sb.send({'code': code})
            if (res := sb.receive()) is None:
                sb.finish()
                raise sb.ended_error()
    except SandboxError as e: return failure(e, sb, timeout)
    return _isolated_value(res, for_model)

def _isolated_value(res, for_model):
    """The value `python_isolated`'s process sent: a literal as itself, else its repr (`for_model`: host paths scrubbed, cut,
    valid UTF-8; a literal's paths too, as its repr); a forged one as text"""
    if not (isinstance(res, dict) and isinstance(r := res.get('repr'), str) and isinstance(res.get('literal'), bool)):
        return f"The program's process broke its channel's protocol: it sent something that is not its result: {json.dumps(res)[:100]}"
    limit = _MAX_RESULT + 100  # (room for the child's own note of what it cut)
    if res['literal'] and len(r) <= _MAX_RESULT:
        try: v = ast.literal_eval(for_model(r, limit))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError): return for_model(r, limit)
        return for_model(v, limit) if isinstance(v, str) else v  # (a traceback is text)
    return for_model(r, limit)

# --- the tool -------------------------------------------------------------------------------------------

_tool_globals: dict = {'__name__': '__python_tool__'}  # where code runs when no user code called `python`
_machinery = ('asyncio', 'concurrent', 'threading', 'funccall')

def _caller_globals() -> dict:
    "The globals of the code that called `python`, looking past funccall and the thread/loop machinery"
    f: Optional[FrameType] = sys._getframe(2)
    while f is not None and f.f_globals.get('__name__', '').split('.')[0] in _machinery: f = f.f_back
    return f.f_globals if f is not None else _tool_globals

def python(
    code:str, # Code to execute
    glb:Optional[dict]=None, # Globals namespace
    loc:Optional[dict]=None, # Locals namespace
    timeout:int=3600, # Maximum run time in seconds
):
    "Executes python `code` with `timeout` and returning final expression (similar to IPython)."
    if glb is None: glb = _caller_globals()
    return _in_thread(code, glb, loc, _Level(timeout), timeout)
