"""Running tools: telling async from sync, awaiting from sync code, and running sync tools off the event loop.

`call.py`, `tools.py` and `mcp.py` all run tools; this module is the one place that decides how.
"""
from __future__ import annotations

import asyncio, inspect
from typing import Any, Callable

from ._types import is_callable_object

__all__ = ['is_async', 'run_sync', 'to_thread', 'call_tool']

def is_async(
    f,  # a tool, hook or middleware
) -> bool:  # whether calling it gives a coroutine to await
    "Whether `f` is a coroutine function, or a callable object whose `__call__` is one"
    return inspect.iscoroutinefunction(f) or is_callable_object(f) and inspect.iscoroutinefunction(type(f).__call__)

def run_sync(
    aw,                                     # a coroutine (or other awaitable) to run to completion
    instead: str='await call_func_async(...)',  # what to use inside a running event loop
    what: str='An async tool',              # what `aw` is, for the error
) -> Any:                                   # its result
    "Await `aw` from sync code: only possible when no event loop is running in this thread; else say what to use `instead`"
    try: asyncio.get_running_loop()
    except RuntimeError: pass
    else:
        if hasattr(aw, 'close'): aw.close()  # never awaited: close it, so Python doesn't warn about it
        raise RuntimeError(f"{what} can't run synchronously inside a running event loop; use `{instead}`")
    # not `asyncio.run`: it waits for every worker thread, so a sync tool that timed out would still hold us up
    loop = asyncio.new_event_loop()
    try: return loop.run_until_complete(_await(aw))
    finally:
        for task in asyncio.all_tasks(loop): task.cancel()
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()  # shuts its thread pool down without waiting: a timed-out tool's thread finishes in the background

async def _await(aw): return await aw

def call_tool(f: Callable, args, kw: dict):
    "Call `f`: the last funccall frame of a traceback, so a report shows the tool's own frames only"
    return f(*args, **kw)

async def to_thread(
    f: Callable,   # a sync callable
    *args,         # its positional arguments
    **kw,          # its keyword arguments
) -> Any:          # what it returned
    "Run sync `f` in a worker thread and await it, so it never blocks the event loop"
    return await asyncio.to_thread(f, *args, **kw)
