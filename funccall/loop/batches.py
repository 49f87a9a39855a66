"""Running a batch of resolved calls concurrently, each through the pipeline (`funccall.loop.pipeline`).

`Toolbox.batch`/`abatch` resolve the model's names and hand the calls down as a `Batch`; this module decides how they
run. Async tools are awaited on the loop, sync tools run in worker threads, and one failure never loses the others.
Without a deadline, a batch of sync tools with nothing around them that needs the loop (`pipeline.threadable`) runs
each call whole in its worker thread, and the caller (sync code, or the loop) only takes the results; one such call
from sync code runs right here, with no thread or loop at all. A call the pool can't start (`WorkersExhausted`) runs
the loop's way, which fails it as it would any call.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any, Callable, Optional, Tuple

from ..core._run import WorkersExhausted, in_threads, in_threads_async, loop_running, run_sync
from .pipeline import OPTS, THREAD, Args, Opts, PipelineTool, drive, execute, not_found, run, threadable, timed_out
from .results import ToolResult
from ..core._typing import JsonDict

__all__ = ['Call', 'Batch', 'batch', 'abatch']

Call = Tuple[Optional[PipelineTool], Any, Args, Optional[str]]  # (the tool, or None for an unknown name; the name sent; its arguments; the call's id)

class Batch:
    "A toolbox's calls, resolved, and what they run with: its tools' names, the injected values, how it runs calls, who sees each result"
    __slots__ = ('calls', 'known', 'injected', 'opts', 'on_result')
    def __init__(
        self,
        calls: list[Call],                 # (tool or None for an unknown name, name, args, call_id) per call
        known: Iterable[str],              # the toolbox's tool names, for a refused call's message
        injected: JsonDict,                # the application's values for injected parameters
        opts: Opts=OPTS,                   # what failures say, what a trace records
        on_result: Callable[[ToolResult], Any] | None=None,  # sees every call's result
    ):
        self.calls: list[Call] = calls
        self.known: Iterable[str] = known
        self.injected: JsonDict = injected
        self.opts: Opts = opts
        self.on_result: Callable[[ToolResult], Any] | None = on_result

    def seen(self, r: ToolResult) -> ToolResult:
        "`r`, once the toolbox's `on_result` has seen it"
        if self.on_result is not None: self.on_result(r)
        return r

    def refused(self, name: Any, args: Any, call_id: str | None) -> ToolResult:
        "The answer to a call of a name the toolbox doesn't hold (traced, and seen)"
        return self.seen(not_found(name, args, call_id, self.known, self.opts))

    async def acall(
        self,
        c: Call,                     # one of `calls`
        approved: bool | None=None,  # None for a model's call; True/False to resume a pending one (`pipeline.run`)
    ) -> ToolResult:
        "One call the loop's way: its pipeline awaited, sync code in worker threads"
        t, name, args, call_id = c
        if t is None: return self.refused(name, args, call_id)
        return self.seen(await run(t, args, self.injected, call_id, t.confirm, False, self.opts, approved))

def batch(
    b: Batch,                # the calls
    limit: int,              # at most this many at once
    timeout: float | None,   # seconds per call
) -> list[ToolResult]:       # one result per call, in order
    "Run a batch from sync code: one call here; sync tools with nothing around them in worker threads, without a loop; else on a loop"
    if timeout is None and not loop_running():
        if len(b.calls) == 1:  # one call, no deadline, from sync code: nothing to run beside it, so no loop or thread either
            t, name, args, call_id = b.calls[0]
            return [b.refused(name, args, call_id) if t is None else b.seen(execute(t, args, b.injected, call_id, b.opts))]
        if (res := _in_threads(b, limit)) is not None: return res
    return run_sync(abatch(b, limit, timeout))

async def abatch(
    b: Batch,                # the calls
    limit: int,              # at most this many at once
    timeout: float | None,   # seconds per call
) -> list[ToolResult]:       # one result per call, in order
    "Run a batch from async code: without a deadline, sync tools with nothing around them whole in worker threads; else each a task"
    if timeout is None and (res := await _in_threads_async(b, limit)) is not None: return res
    return await _gathered(b, limit, timeout)

def _thread_jobs(b: Batch) -> tuple[list[ToolResult | None], list[tuple[int, Callable[[], ToolResult]]]] | None:
    """A batch of tools that run whole in worker threads (`threadable`), each call's pipeline in its thread, without an
    event loop: (the results, the refused names' filled in and seen first, as in the loop's way; for each call to run,
    its index and its job); None when a call needs the loop's way (or a missing injected value is to be raised as it
    raises it)"""
    inj, opts = b.injected, b.opts
    for t, _, _, _ in b.calls:
        if t is not None and (not threadable(t) or (t.inject and any(k not in inj for k in t.inject))): return None
    res = [b.refused(name, args, call_id) if t is None else None for t, name, args, call_id in b.calls]
    def job(t: PipelineTool, args: Args, call_id: str | None) -> Callable[[], ToolResult]:
        return lambda: drive(run(t, args, inj, call_id, t.confirm, THREAD, opts))
    # (a call left to run is one with a tool: the refused ones, of no tool, are filled in above)
    return res, [(i, job(t, args, call_id)) for i, (t, _, args, call_id) in enumerate(b.calls) if res[i] is None]  # type: ignore[arg-type]

def _in_threads(b: Batch, limit: int) -> list[ToolResult] | None:
    "`_thread_jobs` run from sync code, at most `limit` at once; None when a call needs the loop's way"
    if (plan := _thread_jobs(b)) is None: return None
    res, jobs = plan
    for j, f in in_threads([fn for _, fn in jobs], limit):
        i = jobs[j][0]
        if (e := f.exception()) is None: res[i] = b.seen(f.result())
        elif isinstance(e, WorkersExhausted): res[i] = run_sync(b.acall(b.calls[i]))  # it never began: run as the loop's way runs it
        else: raise e  # escaped the pipeline (a `BaseException` of the tool's), as it escapes the loop's way
    return res  # type: ignore[return-value]  # (each filled in)

async def _in_threads_async(b: Batch, limit: int) -> list[ToolResult] | None:
    "`_thread_jobs` run from a loop, at most `limit` at once (a turn of sync tools: the loop only hands calls over); None for the loop's way"
    if (plan := _thread_jobs(b)) is None: return None
    res, jobs = plan
    async with contextlib.aclosing(in_threads_async([fn for _, fn in jobs], limit)) as ended:
        async for j, f in ended:
            i = jobs[j][0]
            if (e := f.exception()) is None: res[i] = b.seen(f.result())
            elif isinstance(e, WorkersExhausted): res[i] = await b.acall(b.calls[i])  # it never began: the loop's way fails it so
            else: raise e  # escaped the pipeline (a `BaseException` of the tool's), as it escapes the loop's way
    return res  # type: ignore[return-value]  # (each filled in)

async def _gathered(b: Batch, limit: int, timeout: float | None) -> list[ToolResult]:
    "The loop's way of a batch: each call's pipeline a task on the loop, sync tools and sync middleware in worker threads"
    import asyncio  # (imported when first needed: not by `import funccall`)
    sem = asyncio.Semaphore(limit) if len(b.calls) > limit else contextlib.nullcontext()  # (all at once: nobody waits for a slot)
    async def one(c: Call) -> ToolResult:
        async with sem:
            if timeout is None: return await b.acall(c)  # what `wait_for` does without a deadline
            try: return await asyncio.wait_for(b.acall(c), timeout)
            except asyncio.TimeoutError: return b.seen(timed_out(c[1], c[2], c[3], timeout))  # a sync tool's thread finishes in the background
    return list(await asyncio.gather(*(one(c) for c in b.calls)))
