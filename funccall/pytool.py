"""The `python` code tool: run code like a notebook cell, returning the last expression's value.

The timeout works in three places:
- on the main thread with no running event loop: `SIGALRM` (POSIX), which also interrupts blocking calls
  such as `time.sleep`;
- elsewhere (another thread, inside a running event loop, or where there is no `SIGALRM`): the code runs in a
  worker thread; at the deadline the caller gets the `TimeoutError` report at once, and `TimeoutError` is
  raised inside the worker at its next Python instruction.
Limit: in the second case, code blocked inside one long C call (a `time.sleep(60)`, a socket read) keeps
running in the background until that call returns, and only then stops. There is no sandbox: run untrusted
code in a separate process or container.
"""
from __future__ import annotations

import ast, contextlib, ctypes, io, itertools, linecache, os, re, signal, sys, threading, traceback
from typing import Optional

__all__ = ['python']

class _ThreadStdout(io.TextIOBase):
    "`sys.stdout` while code runs: each running thread's prints go to its own buffer, other threads' pass through"
    def __init__(self, orig): self.orig, self.bufs = orig, {}
    def write(self, s: str) -> int: return self.bufs.get(threading.get_ident(), self.orig).write(s)
    def flush(self): self.orig.flush()
    def __getattr__(self, nm): return getattr(self.orig, nm)

_out_lock = threading.Lock()

@contextlib.contextmanager
def _capture():
    "Capture what this thread prints, without touching what other threads print"
    buf, me = io.StringIO(), threading.get_ident()
    with _out_lock:
        if not isinstance(sys.stdout, _ThreadStdout): sys.stdout = _ThreadStdout(sys.stdout)
        proxy = sys.stdout
        proxy.bufs[me] = buf
    try: yield buf
    finally:
        with _out_lock:
            proxy.bufs.pop(me, None)
            if not proxy.bufs and sys.stdout is proxy: sys.stdout = proxy.orig

def _run(
    code:str,           # Python statements; the value of a final expression is returned
    glb:dict=None,      # globals to run in (default: a new namespace)
    loc:dict=None,      # locals to run in (default: `glb`)
):                      # the last expression's value, else what the code printed, else None
    "Run `code`, returning its final expression's value (like IPython), or its printed output"
    glb = {} if glb is None else glb
    fn = _remember(code)
    tree = ast.parse(code, fn)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    with _capture() as out:
        exec(compile(tree, fn, 'exec'), glb, loc)  # noqa: S102 - running code is this tool's purpose
        res = eval(compile(ast.Expression(last.value), fn, 'eval'), glb, loc) if last else None  # noqa: S307
    printed = out.getvalue()
    return printed.rstrip('\n') if res is None and printed else res  # a value wins over what was printed, as in a notebook

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

_pkg_dir = os.path.dirname(__file__)

def _tb_text(e: BaseException) -> str:
    "A traceback of an error in the code, without funccall's own frames"
    frames = [fr for fr in traceback.extract_tb(e.__traceback__) if os.path.dirname(fr.filename) != _pkg_dir]
    tb = 'Traceback (most recent call last):\n' + ''.join(traceback.format_list(frames)) + ''.join(traceback.format_exception_only(type(e), e))
    return _code_name_re.sub('"<code>"', tb)  # each run has its own name in `linecache`; the model needn't see it

def _timeout_report(code: str, timeout: float) -> str:
    "What a timeout returns when the worker can't be stopped at once (blocked in a C call)"
    return (f"Traceback (most recent call last):\n  File \"<code>\", in <module>\n"
            f"    (stopped after {timeout:g} s; still finishing a blocking call in the background)\nTimeoutError")

def _with_alarm(code, glb, loc, timeout):
    def handler(*args): raise TimeoutError()
    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try: return _run(code, glb, loc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)

def _raise_in(thread: threading.Thread, exc: type) -> None:
    "Raise `exc` in `thread` at its next Python instruction"
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exc))

def _in_thread(code, glb, loc, timeout):
    box = {}
    def work():
        try: box['res'] = _run(code, glb, loc)
        except BaseException as e:  # noqa: BLE001 - reported to the caller as text, like any error in the code
            box['err'] = _tb_text(e)
    t = threading.Thread(target=work, name='funccall-python', daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        _raise_in(t, TimeoutError)
        t.join(0.2)  # pure Python code stops at once and leaves its own traceback
        if t.is_alive() or 'err' not in box: return _timeout_report(code, timeout)
    if 'err' in box: return box['err']
    return box.get('res')

def _can_use_alarm() -> bool:
    if not hasattr(signal, 'SIGALRM') or threading.current_thread() is not threading.main_thread(): return False
    try: __import__('asyncio').get_running_loop()
    except RuntimeError: return True
    return False  # the loop owns signal handling here

_tool_globals: dict = {'__name__': '__python_tool__'}  # where code runs when no user code called `python`
_machinery = ('asyncio', 'concurrent', 'threading', 'funccall')

def _caller_globals() -> dict:
    "The globals of the code that called `python`, looking past funccall and the thread/loop machinery"
    f = sys._getframe(2)
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
    if not _can_use_alarm(): return _in_thread(code, glb, loc, timeout)
    try: return _with_alarm(code, glb, loc, timeout)
    except KeyboardInterrupt: raise
    except BaseException as e:  # noqa: BLE001 - an error in the code (a timeout, `exit()`) is the tool's result, as text
        return _tb_text(e)
