"""Running tools: telling async from sync, awaiting from sync code, and running sync tools off the event loop.

`call.py`, `tools.py` and `mcp.py` all run tools; this module is the one place that decides how.

Sync tools run in funccall's own pool of worker threads, not asyncio's default executor (a handful of threads
shared with everything else on the loop). At most `max_workers` of them run at once (default 64, I/O-bound
tools are the common case; `set_max_workers` or the `FUNCCALL_MAX_WORKERS` environment variable change it).
A Python thread can't be stopped, so a call whose caller stopped waiting (a timeout, a cancelled task, an MCP
client that hung up) gives its slot back at once while its thread runs on, a straggler: it counts against no
new call's slot or thread. Stragglers have their own budget: at most `16 * max_workers` run at once, and at
most half of those (`8 * max_workers`) are one tool's, so one stuck or slow tool never stops the others.
A new call that would pass either bound fails at once with `WorkersExhausted` rather than waiting behind
tools that may never return. The threads are daemons: leaving the program never waits for a straggler.
"""
from __future__ import annotations

import collections, contextvars, inspect, os, queue, sys, threading
from typing import Any, Callable

# `asyncio` and `concurrent.futures` are imported when first needed: `import funccall` doesn't pay for them (a third of
# its time), and no event loop can run before `asyncio` is imported

from ._async_exc import drop_pending_exception
from ._types import is_callable_object

__all__ = ['is_async', 'loop_running', 'run_sync', 'to_thread', 'in_threads', 'in_threads_async', 'settle', 'stop_iteration', 'call_tool',
           'set_max_workers', 'max_workers', 'WorkersExhausted']

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
    aw,                                     # a coroutine (or other awaitable) to run to completion
    instead: str='await call_func_async(...)',  # what to use inside a running event loop
    what: str='An async tool',              # what `aw` is, for the error
) -> Any:                                   # its result
    "Await `aw` from sync code: only possible when no event loop is running in this thread; else say what to use `instead`"
    if loop_running():
        if hasattr(aw, 'close'): aw.close()  # never awaited: close it, so Python doesn't warn about it
        raise RuntimeError(f"{what} can't run synchronously inside a running event loop; use `{instead}`")
    import asyncio
    loop = _thread_loop()
    try: return loop.run_until_complete(_await(aw))
    finally:
        if left := asyncio.all_tasks(loop):  # what the call started and left running (it never outlives the call)
            for task in left: task.cancel()
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))

async def _await(aw): return await aw

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
    or the caller's for a job the pool can't start). Not a `concurrent.futures.Future`: its `Condition`, taken by each of
    the six steps of a call's life, cost more than a batch's calls; a job has one listener, known before it is queued"""
    __slots__ = ('fn', 'ended', 'key', 'counted', 'state', 'told', 'value', 'error')
    def __init__(self, fn: Callable, ended: Callable, key=None):  # `key`: the tool it runs (its stragglers have a share of their own)
        self.fn, self.ended, self.key = fn, ended, key
        self.counted, self.state, self.told, self.value, self.error = False, 'pending', False, None, None

    def run(self):
        try: self.value = self.fn()
        except BaseException as e: self.error = e  # noqa: BLE001 - the awaiting caller re-raises it
        self.state = 'done'  # from here on an exception raised into the thread can't make it run again
        drop_pending_exception()  # one still pending was meant for the call that ended: it must not cut its listener short
        self.tell()

    def fail(self, error: BaseException):
        "It could not start: its listener hears of `error`"
        self.error, self.state = error, 'done'
        self.tell()

    def tell(self):
        "Its listener hears that it ended, once (again, by the pool, when an exception raised into the thread landed before)"
        if self.told: return
        self.told = True
        try: self.ended(self)
        except Exception: pass  # noqa: BLE001, S110 - a listener's failure (its loop closed meanwhile) must not end the worker thread

    def exception(self) -> BaseException | None: return self.error

    def result(self):
        if self.error is not None: raise self.error
        return self.value

class _Worker:
    "A worker thread of the pool, and the job it holds: taken, running, or just run (None while it waits for one)"
    __slots__ = ('thread', 'job')
    def __init__(self): self.thread, self.job = None, None

class _Workers:
    """A pool of daemon threads that counts calls, not threads: `size` calls run at once, a call that timed out
    stops counting (`abandon`) while its thread runs on (a straggler), and a new call fails while `limit` stragglers run
    (or `per_key` of its own tool's). A job goes to an idle thread
    through a deque, and a `SimpleQueue` (in C: no `Condition` to notify and wait on) wakes it. The counts are kept
    under one lock.

    An exception raised into a worker thread from outside (`PyThreadState_SetAsyncExc`: a timeout meant for code that
    ended there) lands only where the thread's code calls something, jumps back, or enters a function; landing in the
    pool's own code, it never loses or repeats a job, nor its listener's hearing of it. A job moves between the deques
    and a thread's record with no call in between; an exception raised into a waiting thread is dropped; one landing
    anywhere else ends the thread, and `_lost` puts its job back if it never ran (or tells its listener if it did), and
    makes the counts again from the jobs and threads there are. `tests/pool_landing.py` lands one at each such place"""
    IDLE_SECS = 30.0  # an idle thread waits this long for work, then ends

    def __init__(self, size: int):
        self.lock = threading.Lock()
        self.pending = collections.deque()  # waiting for a slot
        self.ready = collections.deque()    # given a slot, waiting for a thread to take it
        self.wake = queue.SimpleQueue()     # a token per job put in `ready` for an idle thread: wakes a waiting one
        self.workers = set()                # every worker thread's record
        self.running = self.idle = 0        # jobs holding a slot; waiting threads no job in `ready` is meant for
        self.resize(size)

    @property
    def threads(self) -> int: return len(self.workers)

    @property
    def stragglers(self) -> int:
        "Threads running (or about to run) jobs no caller waits for any more"
        return len(self.workers) - self.idle - self.running

    def resize(self, size: int):
        if type(size) is not int or size < 1: raise ValueError(f"max_workers must be a positive int, not {size!r}")
        with self.lock:
            self.size, self.limit, self.per_key = size, 16 * size, 8 * size
            self._dispatch()

    def submit(
        self,
        fn: Callable,     # a sync callable of no arguments
        ended: Callable,  # `ended(job)` when it has run, in the worker thread: `job.result()` is its outcome
        key=None,         # the tool `fn` runs: its stragglers count against its own share too
    ) -> _Job:
        job = _Job(fn, ended, key)
        with self.lock:
            self.pending.append(job)
            self._dispatch()
        return job

    def drop(self, jobs):
        """The caller no longer waits for `jobs`: those waiting for a slot never start (all marked before any slot is
        given back, so none takes one), the others give their slots back while their threads run on"""
        with self.lock:
            for job in jobs:
                if job.state == 'pending': job.state = 'dropped'
            for job in jobs: self._uncount(job)
            self._dispatch()

    def abandon(self, job: _Job):
        """The caller stopped waiting for `job` (a timeout, a cancelled task, a client that hung up): one still waiting for a
        slot never starts (started later, nobody could give its slot back); else its slot goes to the next call while its
        thread runs on"""
        self.drop([job])

    def _uncount(self, job: _Job):
        "`job` no longer holds a slot (holding `lock`)"
        if job.counted:
            job.counted = False
            self.running -= 1

    def _dispatch(self):
        "Start pending jobs while slots are free (holding `lock`)"
        try:
            while self.running < self.size and self.pending:
                job = self.pending[0]
                if job.state != 'pending':  # its caller gave up before it started (or it failed, below, and is left here)
                    del self.pending[0]
                    if job.state == 'done': job.tell()
                    continue
                if (why := self._crowded(job.key)) is not None:
                    job.fail(WorkersExhausted(why))
                    del self.pending[0]
                    continue
                job.state, job.counted = 'running', True
                self.running += 1
                self.ready += (job,)  # (`+=` and `del`, not calls: nothing raised into this thread from outside lands between)
                del self.pending[0]
                if self.idle:  # an idle thread takes it
                    self.idle -= 1
                    self.wake.put(None)
                else: self._start()  # a new one takes it
        except BaseException:  # noqa: BLE001 - raised into this thread from outside: in a caller, a timeout meant for its code
            self._recount()
            raise

    def _crowded(self, key) -> str | None:
        "Why a new job of tool `key` can't start: too many stragglers, in all or of `key` (holding `lock`); None when it can"
        n = self.stragglers
        if n >= self.limit:
            return (f"funccall can't start this sync tool: {n} worker threads still run calls whose callers stopped waiting "
                    f"(timed out, cancelled, or a client that hung up); fix those tools (a served tool can watch MCPContext.cancelled), "
                    f"or raise the limit with funccall.set_max_workers()")
        if key is None or n < self.per_key: return None
        mine = sum(j is not None and j.key is key and not j.counted for j in [*self.ready, *(w.job for w in self.workers)])
        if mine < self.per_key: return None
        return (f"funccall can't start {getattr(key, '__name__', 'this sync tool')!r}: {mine} of its calls still run in worker threads "
                f"after their callers stopped waiting; fix that tool (a served tool can watch MCPContext.cancelled), or raise "
                f"the limit with funccall.set_max_workers()")

    def _start(self):
        "A new worker thread, which takes the next job in `ready` (holding `lock`)"
        w = _Worker()
        w.thread = threading.Thread(target=self._work, args=(w,), name='funccall-tool', daemon=True)
        self.workers.add(w)
        w.thread.start()

    def _work(self, w: _Worker):
        try:
            while self._next(w):
                w.job.run()
                with self.lock:
                    self._uncount(w.job)  # (unless its caller timed out and gave the slot back already)
                    w.job = None  # an idle thread holds no finished call's result
                    self.idle += 1
                    self._dispatch()
        except BaseException:  # noqa: BLE001 - raised into this thread from outside (a timeout meant for code that ended here)
            self._lost(w)

    def _next(self, w: _Worker) -> bool:
        "Whether this thread took a job (`w.job`); False when none came for `IDLE_SECS` (the thread is counted out then)"
        while True:
            with self.lock:
                if self._take(w): return True
            try:
                self.wake.get(timeout=self.IDLE_SECS)
                drop_pending_exception()  # one pending for this thread, unannounced, would land later anywhere
            except queue.Empty:
                with self.lock:  # a job put as it timed out is still taken; else it ends, counted out
                    if self._take(w): return True
                    self.idle -= 1
                    self.workers.discard(w)
                drop_pending_exception()  # (not to land as the thread ends, printed by `threading.excepthook`)
                return False
            except BaseException: pass  # noqa: BLE001, S110 - raised into this waiting thread, for code that ended here: dropped

    def _take(self, w: _Worker) -> bool:
        "Whether this thread took the next job in `ready` (holding `lock`)"
        if not self.ready: return False
        w.job = self.ready[0]  # (not `popleft()`: an exception raised in from outside could land after the call, and lose it)
        del self.ready[0]
        return True

    def _lost(self, w: _Worker):
        """A thread ended by an exception raised into it from outside, wherever it landed: its job goes on if it never
        ran (or its listener hears of it, if it ran), and the counts are made again"""
        with self.lock:
            self.workers.discard(w)
            if w.job is not None and w.job.state != 'done': self.ready.appendleft(w.job)  # taken, never run: another thread runs it
            elif w.job is not None:
                self._uncount(w.job)
                w.job.tell()
            self._recount()
            self._dispatch()

    def _recount(self):
        """The counts made again from the jobs and the threads there are, after an exception raised into a thread from
        outside cut a step short (holding `lock`); a job in `ready` no waiting thread is meant for gets a new one"""
        self.workers = {o for o in self.workers if o.thread.is_alive()}  # (one a thread was starting may never have)
        self.running = sum(j.counted for j in self.ready) + sum(o.job.counted for o in self.workers if o.job is not None)
        self.idle = sum(o.job is None for o in self.workers) - len(self.ready)
        for _ in range(len(self.ready)): self.wake.put(None)  # (one may not have been put; a spare one wakes a thread that waits again)
        while self.idle < 0:
            self.idle += 1
            self._start()

def _default_size() -> int:
    v = os.environ.get('FUNCCALL_MAX_WORKERS', '')
    return int(v) if v.strip().isdigit() and int(v) > 0 else 64

_workers = _Workers(_default_size())

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
    done = queue.SimpleQueue()
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
