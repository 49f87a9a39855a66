"""Exceptions raised into a thread from outside (`PyThreadState_SetAsyncExc`): raising one, and dropping one still pending.

The `python` tool raises its timeout in the thread running the code; the worker pool drops what was raised into a thread
once its code ended. A module of its own, importing nothing of funccall: `python_isolated`'s child loads it beside
`pytool.py` alone."""
from __future__ import annotations

import threading

__all__ = ['raise_in_thread', 'drop_pending_exception']

def raise_in_thread(
    ident: int,  # a thread's `threading.get_ident()`
    exc,         # an exception class (or instance) to raise there
) -> None:
    "Raise `exc` in thread `ident` where it next calls, jumps back or enters a function (replacing one still pending there)"
    import ctypes
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc))

class _Dropped(BaseException):
    "Raised in a thread by itself, to take the place of (and so drop) an exception pending for it"

def drop_pending_exception() -> None:
    """An exception raised into this thread from outside and still pending is dropped here, so it never lands later, anywhere:
    pending for a thread blocked in C, it may have been unsignalled (another thread taking its own clears the flag on
    3.11 and 3.12), and then waits for any later check"""
    try:  # (it may land as soon as the call that raises it returns)
        raise_in_thread(threading.get_ident(), _Dropped)  # (not `SetAsyncExc(NULL)`: on 3.11 it can leave the interpreter spinning)
        for _ in range(1000): pass
    except _Dropped: pass
