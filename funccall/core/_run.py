"""Running tools: telling async from sync, awaiting from sync code, and running sync tools off the event loop.

`call.py`, `tools.py` and `mcp.py` all run tools; this module is the one place that decides how.

Sync tools run in funccall's own pool of worker threads, not asyncio's default executor (a handful of threads
shared with everything else on the loop). At most `max_workers` of them run at once (default 64, I/O-bound
tools are the common case; `set_max_workers` or the `FUNCCALL_MAX_WORKERS` environment variable change it),
besides the calls a running call makes (a tool that runs a batch): those start at once, as a slot they waited for
could be held by the very call waiting for them. A forked child starts with an empty pool.
A Python thread can't be stopped, so a call whose caller stopped waiting (a timeout, a cancelled task, an MCP
client that hung up) gives its slot back at once while its thread runs on, a straggler: it counts against no
new call's slot or thread. Stragglers have their own budget: at most `16 * max_workers` run at once, and at
most half of those (`8 * max_workers`) are one tool's, so one stuck or slow tool never stops the others.
A new call that would pass either bound fails at once with `WorkersExhausted` rather than waiting behind
tools that may never return. The threads are daemons: leaving the program never waits for a straggler (the one
thing `concurrent.futures.ThreadPoolExecutor` can't give: it joins its threads at exit). The pool is an admission
layer (slots, stragglers) over daemon threads fed through a `queue.SimpleQueue`; nothing raises into its threads
from outside (the `python` tool's timeout lands in a thread of its own), so it carries no repair for that.
"""
from __future__ import annotations

import collections, contextvars, inspect, os, queue, sys, threading
from typing import Any, Callable

# `asyncio` and `concurrent.futures` are imported when first needed: `import funccall` doesn't pay for them (a third of
# its time), and no event loop can run before `asyncio` is imported

from ._types import is_callable_object

__all__ = ['is_async', 'loop_running', 'run_sync', 'in_own_thread', 'held', 'to_thread', 'in_threads', 'in_threads_async', 'settle', 'stop_iteration',
           'call_tool', 'set_max_workers', 'max_workers', 'WorkersExhausted']

def is_async(
    f,  # a tool, hook or middleware
) -> bool:  # whether calling it gives a coroutine to await
    "Whether `f` is a coroutine function, or a callable object whose `__call__` is one"
    if is_callable_object(f): return inspect.iscoroutinefunction(type(f).__call__)  # read off the class: no `__class__` of the caller's runs
    return inspect.iscoroutinefunction(f)

def loop_running() -> bool:
    "Whether an event loop runs in this thread (then sync code can't wait for a coroutine)"
    return (aio := sys.modules.get('asyncio')) is not None and aio._get_running_loop() is not None

def run_sync(
    aw,  # a coroutine (or other awaitable) to run to completion
) -> Any:  # its result
    """Await `aw` from sync code, on this thread's own event loop. Inside a running event loop (a notebook cell, an async
    handler), which can't wait for it, `aw` runs on a loop of its own in a thread of its own (`in_own_thread`) while
    the caller's thread, its loop included, waits; interrupted there (Ctrl+C, a notebook's interrupt), the work is
    cancelled as it would be here, never left running on"""
    if loop_running():
        run = _Cancellable(aw)
        return in_own_thread(run_sync, run.run(), stop=run.stop)
    import asyncio
    loop = _thread_loop()
    try: return loop.run_until_complete(_await(aw))
    finally:
        if left := asyncio.all_tasks(loop):  # what the call started and left running (it never outlives the call)
            for task in left: task.cancel()
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))

def in_own_thread(
    f: Callable,          # a sync callable: what the caller would run were no event loop running in its thread
    *args,                # its arguments
    stop: Callable | None=None,  # `stop()` asks `f` to end early: called when the caller is interrupted while it waits
) -> Any:                 # what it returned; what it raised is raised here
    """Run `f(*args)` in a new thread, in a copy of the caller's context (its context variables), and wait for it: how sync
    code runs async work inside a running event loop without re-entering it (no `nest_asyncio`). The caller's loop is
    held until `f` returns, so work that needs that loop (a client or lock made on it, a future of it) can't run
    this way: await the async form instead, which keeps the work on the caller's loop. Interrupted while it waits
    (`KeyboardInterrupt`), the caller calls `stop()` and waits for `f` to end before raising it (a second interrupt
    stops that wait)"""
    ctx, out = contextvars.copy_context(), []
    def work():
        try: out.append((True, ctx.run(f, *args)))
        except BaseException as e: out.append((False, e))  # noqa: BLE001 - raised in the caller's thread
    t = threading.Thread(target=work, name='funccall-sync-in-loop', daemon=True)
    caller = sys.modules['asyncio']._get_running_loop() if loop_running() else None
    if caller is not None: _held.add(caller)
    try:
        t.start()
        try: t.join()
        except BaseException:
            if stop is not None: stop()
            t.join()
            raise
    finally:
        if caller is not None: _held.discard(caller)
    ok, v = out[0]
    if ok: return v
    raise v

_held: set = set()  # the loops whose thread waits in `in_own_thread`

def held(
    loop,  # an event loop
) -> bool:  # whether its thread waits in `in_own_thread`: what is handed to it to run waits until that returns
    """Whether `loop` is held by sync code waiting for work in a thread of its own: a coroutine handed to it from that
    work (`run_coroutine_threadsafe(...).result()`) would wait for ever, so say so instead"""
    return loop in _held

async def _await(aw): return await aw

class _Cancellable:
    "An awaitable run on another thread's loop (`run()`), which the thread waiting for it cancels with `stop()`, even before it starts"
    def __init__(self, aw):
        self.aw, self.lock, self.task, self.stopped = aw, threading.Lock(), None, False

    async def run(self):
        import asyncio
        with self.lock:
            if self.stopped:
                if hasattr(self.aw, 'close'): self.aw.close()  # never awaited: closed, so Python doesn't warn about it
                raise asyncio.CancelledError
            self.task = asyncio.current_task()
        return await self.aw

    def stop(self):
        with self.lock:
            self.stopped = True
            if self.task is None: return
            try: self.task.get_loop().call_soon_threadsafe(self.task.cancel)
            except RuntimeError: pass  # its loop closed already: nothing of it runs on

class _Loop:
    """A thread's event loop for `run_sync`, kept from call to call (making and closing one costs more than a sync
    batch's calls), and closed when its thread ends (this holder, kept per thread, goes then). Not `asyncio.run`'s:
    that one waits for the loop's default executor at the end, which user code may have used with a stuck call.
    A forked child (`os.fork`, `multiprocessing`, a `subprocess` with `preexec_fn`) drops the other threads' holders
    and must not close their loops: it shares their epoll selector with the parent, where closing one unregisters the
    loop's wake-up socket, and the parent's loop then sleeps through every call that ends in another thread. So every
    loop is also held in `_opened` until its own process closes it: a child never frees (and so never closes) one"""
    __slots__ = ('loop', 'pid')
    def __init__(self, loop, pid: int):
        self.loop, self.pid = loop, pid
        _opened[id(loop)] = loop

    def __del__(self):
        if self.pid != os.getpid(): return  # the parent's loop, in a forked child: left alone
        try:
            _opened.pop(id(self.loop), None)
            if not self.loop.is_closed() and not self.loop.is_running(): self.loop.close()  # its default executor: not waited for
        except Exception: pass  # noqa: BLE001, S110 - at interpreter exit, what it needs may be gone already

_opened: dict = {}  # id -> every `run_sync` loop not yet closed by the process that made it
_loops = threading.local()

def _thread_loop():
    "This thread's loop for `run_sync` (a new one in a forked child: the parent's shares its selector)"
    h = getattr(_loops, 'held', None)
    if h is None or h.pid != os.getpid() or h.loop.is_closed():
        import asyncio
        h = _loops.held = _Loop(asyncio.new_event_loop(), os.getpid())
    return h.loop

def call_tool(f: Callable, args, kw: dict):
    "Call `f`: the last funccall frame of a traceback, so a report shows the tool's own frames only"
    return f(*args, **kw)

class WorkersExhausted(RuntimeError):
    "Too many worker threads still run calls whose callers stopped waiting (in all, or of one tool): no new sync call of it can start"

class _Job:
    """A call for a worker thread and its outcome, which `ended(job)` hears of in the thread that ends it (the worker's,
    or the caller's for a job that could not start). Not a `concurrent.futures.Future`: its `Condition`, taken at each
    step of a call's life, costs more than a batch's calls; a job has one listener, known before it is queued.
    `state`: 'pending' (waiting for a slot), 'running' (holding one), 'straggling' (running, its caller gone),
    'dropped' (its caller left before it started: it never runs), 'done'"""
    __slots__ = ('fn', 'ended', 'key', 'state', 'value', 'error')
    value: Any
    error: BaseException | None
    def __init__(self, fn: Callable, ended: Callable, key=None):  # `key`: the tool it runs (its stragglers have a share of their own)
        self.fn, self.ended, self.key, self.state, self.value, self.error = fn, ended, key, 'pending', None, None

    def run(self):
        try: self.value = self.fn()
        except BaseException as e: self.error = e  # noqa: BLE001 - the awaiting caller re-raises it
        self.tell()

    def tell(self):
        "Its listener hears that it ended"
        try: self.ended(self)
        except Exception: pass  # noqa: BLE001, S110 - a listener's failure (its loop closed meanwhile) must not end the worker thread

    def exception(self) -> BaseException | None: return self.error

    def result(self):
        if self.error is not None: raise self.error
        return self.value

_worker = threading.local()  # `active` in the pool's own threads

class _Workers:
    """Sync calls in daemon threads, admitted by slot: `size` calls run at once and the others wait in `pending`; a call
    whose caller stopped waiting (`drop`) gives its slot back while its thread runs on (a straggler); a call fails with
    `WorkersExhausted` when it would start while `limit` stragglers run (or `per_key` of its own tool's). A thread that
    ends a call waits `IDLE_SECS` on `work` for the next, then ends. One lock guards the counts"""
    IDLE_SECS = 30.0  # an idle thread waits this long for work, then ends

    def __init__(self, size: int):
        self.lock = threading.Lock()
        self.pending: collections.deque[_Job] = collections.deque()  # waiting for a slot (a dropped one is skipped when reached)
        self.work: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()  # calls handed to idle threads
        self.threads = self.idle = 0        # threads alive; those waiting on `work` no call put there is meant for
        self.running = self.stragglers = 0  # calls holding a slot; calls running whose callers stopped waiting
        self.straggling: collections.Counter[Any] = collections.Counter()  # tool -> its stragglers
        self.resize(size)

    def forked(self):
        """In a forked child: the parent's threads aren't here, nor their calls, and `lock` may have been held as it forked;
        the pool starts empty (else a call handed to an idle thread of the parent's waits for ever)"""
        self.lock = threading.Lock()
        _worker.active = False  # (forked from one of the pool's threads, this one now is the child's main thread)
        self.pending, self.work = collections.deque(), queue.SimpleQueue()
        self.threads = self.idle = self.running = self.stragglers = 0
        self.straggling = collections.Counter()

    def resize(self, size: int):
        if type(size) is not int or size < 1: raise ValueError(f"max_workers must be a positive int, not {size!r}")
        with self.lock:
            self.size, self.limit, self.per_key = size, 16 * size, 8 * size
            out = self._dispatch()
        self._hand(out)

    def submit(
        self,
        fn: Callable,     # a sync callable of no arguments
        ended: Callable,  # `ended(job)` when it has run, in the worker thread: `job.result()` is its outcome
        key=None,         # the tool `fn` runs: its stragglers count against its own share too
    ) -> _Job:
        job = _Job(fn, ended, key)
        with self.lock:
            # a call made by a call this pool runs (a tool running a batch) starts at once, past `size`: waiting for a slot
            # that its own caller holds could never end once every slot's call waits so
            if getattr(_worker, 'active', False): out = self._dispatch(job)
            else:
                self.pending.append(job)
                out = self._dispatch()
        self._hand(out)
        return job

    def drop(self, jobs):
        """The caller no longer waits for `jobs`: those waiting for a slot never start, the others give their slots back
        while their threads run on (all at once: no dropped call takes a slot another gave back)"""
        with self.lock:
            for job in jobs:
                if job.state == 'pending': job.state = 'dropped'
                elif job.state == 'running': self._straggle(job)
            out = self._dispatch()
        self._hand(out)

    def abandon(self, job: _Job):
        """The caller stopped waiting for `job` (a timeout, a cancelled task, a client that hung up): one still waiting for a
        slot never starts (started later, nobody could give its slot back); else its slot goes to the next call while its
        thread runs on"""
        self.drop([job])

    def _straggle(self, job: _Job):
        "`job` runs on with no caller: its slot is free, it counts as a straggler (holding `lock`)"
        job.state = 'straggling'
        self.running -= 1
        self.stragglers += 1
        self.straggling[job.key] += 1

    def _dispatch(self, nested: _Job | None=None) -> list:
        """Give free slots to pending calls (and `nested`, a call of a running call's, one at once), each to an idle thread
        if there is one (holding `lock`): gives the calls that need a new thread, or failed to start, for `_hand` once
        `lock` is released"""
        out: list[_Job] = []
        if nested is not None: self._admit(nested, out)
        while self.running < self.size and self.pending:
            job = self.pending.popleft()
            if job.state != 'pending': continue  # its caller gave up before it started
            self._admit(job, out)
        return out

    def _admit(self, job: _Job, out: list):
        "Start `job` in a slot, on an idle thread or (through `out`) a new one; or fail it when stragglers crowd it out (holding `lock`)"
        if (why := self._crowded(job.key)) is not None:
            job.state, job.error = 'done', WorkersExhausted(why)
            out.append(job)
            return
        job.state = 'running'
        self.running += 1
        if self.idle:
            self.idle -= 1
            self.work.put(job)
        else:
            self.threads += 1
            out.append(job)

    def _crowded(self, key) -> str | None:
        "Why a new call of tool `key` can't start: too many stragglers, in all or of `key` (holding `lock`); None when it can"
        if (n := self.stragglers) >= self.limit:
            return (f"funccall can't start this sync tool: {n} worker threads still run calls whose callers stopped waiting "
                    f"(timed out, cancelled, or a client that hung up); fix those tools (a served tool can watch MCPContext.cancelled), "
                    f"or raise the limit with funccall.set_max_workers()")
        if key is None or (mine := self.straggling[key]) < self.per_key: return None
        return (f"funccall can't start {getattr(key, '__name__', 'this sync tool')!r}: {mine} of its calls still run in worker threads "
                f"after their callers stopped waiting; fix that tool (a served tool can watch MCPContext.cancelled), or raise "
                f"the limit with funccall.set_max_workers()")

    def _hand(self, jobs: list):
        "A new thread for each started call in `jobs`; a refused one's listener hears of its error (not holding `lock`)"
        while jobs:
            job = jobs.pop()
            if job.state == 'done':
                job.tell()
                continue
            try: threading.Thread(target=self._serve, args=(job,), name='funccall-tool', daemon=True).start()
            except RuntimeError as e:  # the system can't start another thread: the call fails, its slot goes to the next
                with self.lock:
                    self.threads -= 1
                    self._release(job)
                    job.error = e
                    jobs += self._dispatch()
                job.tell()

    def _release(self, job: _Job):
        "`job` ended: its slot, or its place as a straggler, is free (holding `lock`)"
        if job.state == 'running': self.running -= 1
        elif job.state == 'straggling':
            self.stragglers -= 1
            if n := self.straggling.pop(job.key) - 1: self.straggling[job.key] = n
        job.state = 'done'

    def _serve(self, job: _Job | None):
        "A worker thread: runs `job`, then each call handed to it, until none comes for `IDLE_SECS`"
        _worker.active = True
        while job is not None:
            job.run()
            with self.lock:
                self._release(job)
                self.idle += 1  # waiting for the next call: `_dispatch` may hand it one at once
                out = self._dispatch()
            self._hand(out)
            job = self._next()

    def _next(self) -> _Job | None:
        "The next call handed to this idle thread; None when none came for `IDLE_SECS` (the thread is counted out then)"
        while True:
            try: return self.work.get(timeout=self.IDLE_SECS)
            except queue.Empty:
                with self.lock:
                    if not self.idle: continue  # every waiting thread is spoken for: a call is on its way to this one
                    self.idle -= 1
                    self.threads -= 1
                    return None

def _default_size() -> int:
    v = os.environ.get('FUNCCALL_MAX_WORKERS', '')
    return int(v) if v.strip().isdigit() and int(v) > 0 else 64

_workers = _Workers(_default_size())
if hasattr(os, 'register_at_fork'): os.register_at_fork(after_in_child=_workers.forked)

def set_max_workers(
    n: int,  # how many sync tools may run at once (and up to `16 * n` stragglers: calls whose callers stopped waiting)
) -> None:
    "Set how many sync tools run at once in worker threads; the `FUNCCALL_MAX_WORKERS` environment variable sets the default, 64"
    _workers.resize(n)

def max_workers() -> int:  # how many sync tools may run at once
    "The pool's size, as `set_max_workers` (or `FUNCCALL_MAX_WORKERS`) set it"
    return _workers.size

async def to_thread(
    f: Callable,   # a sync callable
    *args,         # its positional arguments
    **kw,          # its keyword arguments
) -> Any:          # what it returned
    "Run sync `f` in a worker thread and await it, so it never blocks the event loop; cancelling the await frees its slot"
    import asyncio
    loop, ctx = asyncio.get_running_loop(), contextvars.copy_context()
    done = loop.create_future()  # (not `asyncio.wrap_future`: its two-way chain costs a sixth of a turn's handoffs)
    key = args[0] if f is call_tool and args else None  # a tool's call: its stragglers have a share of their own
    ended = lambda j: None if loop.is_closed() else loop.call_soon_threadsafe(_hand_back, j, done)  # noqa: E731
    job = _workers.submit(lambda: ctx.run(f, *args, **kw), ended, key)
    try: return await done
    except asyncio.CancelledError:
        _workers.abandon(job)
        raise

def stop_iteration(
    e: StopIteration,  # raised by a sync tool in a worker thread
) -> RuntimeError:     # what the caller gets instead
    "A worker thread's `StopIteration` as the error its caller gets: a future can't hold one, nor a coroutine let it out"
    err = RuntimeError(f'{type(e).__name__} raised in a worker thread: {e}')
    err.__cause__ = e
    return err

def _hand_back(job: _Job, done) -> None:
    "A worker's outcome to the awaiting loop's future (on the loop), unless its caller stopped waiting"
    if done.cancelled(): return
    if type(e := job.error) is StopIteration: done.set_exception(stop_iteration(e))
    elif e is not None: done.set_exception(e)
    else: done.set_result(job.value)

class _Jobs:
    "Sync callables run in worker threads, at most `limit` at once, each in a copy of the caller's context; `ended(i, job)` hears of each"
    def __init__(self, fns: list, limit: int, ended: Callable, loop=None):
        self.jobs: dict[int, _Job]
        self.todo, self.jobs, self.ended, self.loop = iter(enumerate(fns)), {}, ended, loop
        self.running = sum(self.start() for _ in range(min(max(1, limit), len(fns))))

    def start(self) -> bool:
        if (nxt := next(self.todo, None)) is None: return False
        i, fn = nxt
        ctx = contextvars.copy_context()
        ctx.run(_batch_loop.set, self.loop)  # (None from sync code, even inside an async batch's call: no loop awaits this one)
        self.jobs[i] = _workers.submit(lambda: ctx.run(fn), lambda job: self.ended(i, job))  # (in this thread: one the pool can't start)
        return True

    def took(self, i: int) -> None:
        "Job `i`'s outcome was taken: the next job starts in its slot"
        del self.jobs[i]
        self.running += self.start() - 1

    def close(self) -> None:
        "The caller stopped waiting (interrupted, or it raised): the calls still waiting for a slot never start, the running ones give theirs back"
        _workers.drop(list(self.jobs.values()))

def in_threads(
    fns: list,   # sync callables of no arguments
    limit: int,  # at most this many run at once
):               # yields (index, its job: `.result()`, `.exception()`), as each ends
    """Run sync callables in worker threads from sync code, each in a copy of the caller's context, and yield their
    outcomes as they end: no event loop, and a finished call wakes the caller once, not a loop's selector. A job the pool
    can't start ends at once with `WorkersExhausted`"""
    done: queue.SimpleQueue[tuple[int, _Job]] = queue.SimpleQueue()
    jobs = _Jobs(fns, limit, lambda i, job: done.put((i, job)))
    try:
        while jobs.running:
            i, job = done.get()
            jobs.took(i)
            yield i, job
    finally: jobs.close()

async def in_threads_async(
    fns: list,   # sync callables of no arguments
    limit: int,  # at most this many run at once
):               # yields (index, its job: `.result()`, `.exception()`), as each ends
    """`in_threads` for async code: the loop is woken once for the calls that ended while it was busy, not once per call
    (each wake-up costs a turn of the loop's selector). An awaitable that a call hands back to `settle` is awaited on
    this loop. Close it (`contextlib.aclosing`) when leaving early, so the calls left give their slots back at once"""
    import asyncio
    done: collections.deque[tuple[int, _Job]]
    waiting: list[Any]
    loop, lock, done, waiting = asyncio.get_running_loop(), threading.Lock(), collections.deque(), []
    def ended(i, job):  # in the worker thread: the loop is woken only when it waits
        with lock:
            done.append((i, job))
            w = waiting.pop() if waiting else None
        if w is not None and not loop.is_closed(): loop.call_soon_threadsafe(_wake, w)
    jobs = _Jobs(fns, limit, ended, loop)
    try:
        while jobs.running:
            with lock:
                if not done: waiting.append(w := loop.create_future())
                else: w = None
            if w is not None: await w
            i, job = done.popleft()
            jobs.took(i)
            yield i, job
    finally: jobs.close()

def _wake(w) -> None:
    if not w.done(): w.set_result(None)

_batch_loop = contextvars.ContextVar('funccall_batch_loop', default=None)  # the loop awaiting an async batch's call, where it runs

def settle(
    aw,  # a coroutine a call in a batch's worker thread must await (what a sync tool handed back)
) -> Any:  # its result
    """Await `aw` from a batch's worker thread: on the loop that awaits the batch (`in_threads_async`), so what it holds of
    that loop works as it would had the loop run the call; else (a sync batch) on this thread's own loop"""
    if (loop := _batch_loop.get()) is None: return run_sync(aw)
    import asyncio
    return asyncio.run_coroutine_threadsafe(_await(aw), loop).result()
