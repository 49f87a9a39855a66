"""The one place a tool's call runs: `Tool.execute`/`aexecute`, `Toolbox.call`, batches, streams, code mode and the
MCP server all come here.

A call runs in this order: injected parameters (left out of the schema, supplied by the application), the pre-hook,
confirmation (of the arguments that will run: at once by a `confirm` callback, or pending until `Toolbox.resume`),
coercion, the cache, middleware wrapping the call (each attempt bounded by the tool's `timeout`, failures of the tool
retried with backoff), the post-hook; and around it all a trace (`_trace`: an OpenTelemetry span and the `funccall`
logger). `StopRun`, raised by a tool or hook, ends the call with a result whose `stop` is set. A model's mistake or a
tool's failure comes back as a failure `ToolResult`, never as an exception; a missing injected value (the developer's
mistake) is raised.

This module sits below `tools.py` and never imports it: what it reads of a tool is `PipelineTool`, a `Protocol` of its
options (`name`, `description`, `fn`, `is_async`, `inject`, `fold`, `pre_hook`, `requires_confirmation`, `confirm`,
`middleware`, `timeout`, `retries`, `retry_on`, `retry_delay`, `hints`, `post_hook`, `max_chars`, `stop_after`) and its
`plan`, the `Plan` this module defines: what the pipeline works out once when the tool is made. A `Tool` is one; so is
any object with those attributes.
"""
from __future__ import annotations

import inspect, json, os, time
from collections.abc import Collection, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Callable, Literal, Protocol, Union

from . import _trace
from ..core._typing import JsonDict, R, ToolFn
from ..core._json import jsonable
from ..core._seal import Approvals, SealError
from ..core._inputs import ToolInputError, read_arguments
from ..core._run import call_tool, is_async, run_sync, settle, stop_iteration, to_thread
from ..core.call import ToolNotFound, call_args, coerce_inputs, error_text
from ..core.expr import ExprError
from .results import MAX_RESULT_CHARS, StopRun, ToolResult, ToolTimeout, call_str, to_text

__all__ = ['PipelineTool', 'Hook', 'Middleware', 'Args', 'Failure', 'Cache', 'Plan', 'Opts', 'OPTS', 'THREAD', 'Declined', 'run',
           'execute', 'drive', 'threadable', 'not_found', 'refused', 'timed_out', 'failure_kind', 'pending', 'unseal']

# --- what the pipeline keeps of a tool ----------------------------------------------------------------

Hook = Callable[..., Any]  # `confirm(tool, args)`, `pre_hook(tool, args)`, `post_hook(tool, args, value)`: sync, or async
Middleware = Callable[[Any, JsonDict, Callable[..., Any]], Any]  # `mw(tool, args, call_next)`: sync, or async
Args = Union[JsonDict, str, None]  # a model's arguments: a dict, JSON text (a text-input tool's text), or nothing
Failure = Literal['name', 'arguments', 'tool', 'timeout']  # whose failure an exception is (`failure_kind`)

class PipelineTool(Protocol):
    """What the pipeline reads of a tool: a `Tool` is one (its options, as `Tool.__init__` sets them), so is any object with
    these. Read-only members: the pipeline never sets them, so a frozen dataclass fits, and a type more precise than these too"""
    @property
    def name(self) -> str: ...  # the tool's name, as the model calls it
    @property
    def description(self) -> str: ...  # what the model reads of it (for the trace)
    @property
    def fn(self) -> ToolFn: ...  # what runs: a function, method, async function or callable object
    @property
    def is_async(self) -> bool: ...  # calling `fn` gives a coroutine to await
    @property
    def inject(self) -> Collection[str]: ...  # parameters the application supplies (`injected`), never the model
    @property
    def fold(self) -> str | None: ...  # the one parameter whose fields the model's object gives (None: no folding)
    @property
    def requires_confirmation(self) -> bool: ...  # a call waits for `confirm` (or is pending until `Toolbox.resume`)
    @property
    def confirm(self) -> Hook | None: ...  # `confirm(tool, args) -> bool`, may be async; may raise `Declined`
    @property
    def pre_hook(self) -> Hook | None: ...  # `pre_hook(tool, args)`: new arguments or None; may be async
    @property
    def post_hook(self) -> Hook | None: ...  # `post_hook(tool, args, value)`: a new value or None; may be async
    @property
    def middleware(self) -> Sequence[Middleware]: ...  # each `mw(tool, args, call_next)` wraps the call, the first outermost
    @property
    def timeout(self) -> float | None: ...  # seconds each run may take (None: no bound)
    @property
    def retries(self) -> int: ...  # runs again after a failure of the tool, at most this many times
    @property
    def retry_on(self) -> tuple[type[BaseException], ...] | None: ...  # the failures retried (None: any, for an idempotent
                                                                         #   or read-only tool)
    @property
    def retry_delay(self) -> float: ...  # seconds before the first retry, doubled before each next one
    @property
    def hints(self) -> Mapping[str, Any]: ...  # 'read_only', 'idempotent', ...: what the developer declared
    @property
    def max_chars(self) -> int | None: ...  # the result text the model reads is cut to this length (None: never)
    @property
    def stop_after(self) -> bool: ...  # the agent loop stops after a call of this tool
    @property
    def plan(self) -> Plan: ...  # what the pipeline worked out once when the tool was made

class Cache:
    "Results by arguments for `ttl` seconds, in memory and, with `folder`, on disk as JSON (a disk hit is the JSON form)"
    def __init__(self, ttl: float, folder: str | Path | None):
        self.ttl: float = ttl
        self.mem: dict[str, tuple[float, Any]] = {}  # key -> (when it expires, the value)
        self.folder: Path | None = Path(folder) if folder else None

    def _path(self, key: str) -> Path: return self.folder / f'{key}.json'  # type: ignore[operator]  # (called only with a folder)

    def get(self, key: str) -> tuple[bool, Any]:
        now = time.time()
        hit = self.mem.get(key)
        if hit is not None:
            if hit[0] > now: return True, hit[1]
            del self.mem[key]  # expired
        if self.folder is not None and (p := self._path(key)).exists():
            try: expires, value = json.loads(p.read_text())
            except (OSError, ValueError): return False, None
            if expires > now:
                self.mem[key] = (expires, value)
                return True, value
        return False, None

    def put(self, key: str, value: Any) -> None:
        expires = time.time() + self.ttl
        self.mem[key] = (expires, value)
        if self.folder is None: return
        try: data = json.dumps([expires, jsonable(value)])
        except (TypeError, ValueError, RecursionError): return  # only JSON values go to disk; the rest stays in memory
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self._path(key).with_suffix(f'.{os.getpid()}.tmp')
        tmp.write_text(data)
        os.replace(tmp, self._path(key))

def _cache_key(name: str, kw: JsonDict) -> str:
    "A key for the arguments the tool runs with (coerced, so `'1'` and `1` are one entry; injected values count too)"
    try: s = json.dumps(jsonable(kw), sort_keys=True)
    except (TypeError, ValueError, RecursionError): s = repr(sorted(kw.items(), key=lambda kv: kv[0]))
    import hashlib  # (imported when first needed: not by `import funccall`)
    return hashlib.sha256(f'{name}\0{s}'.encode()).hexdigest()[:32]

class Plan:
    "What the pipeline needs of a tool beyond its options, worked out once when the tool is made"
    __slots__ = ('checker', 'spread', 'text_param', 'cache', 'async_hooks')
    def __init__(
        self,
        checker: ToolFn,         # what the model's arguments are coerced against: the function, its injected parameters left out
        spread: bool,            # calling the function needs more than keywords (`call_args`)
        text_param: str | None,  # the one parameter a free-form text input fills
        cache: Cache | None,     # the tool's results by arguments
        hooks: tuple[Any, ...],  # confirm, pre-hook, post-hook and middleware (None where absent)
    ):
        self.checker: ToolFn = checker
        self.spread: bool = spread
        self.text_param: str | None = text_param
        self.cache: Cache | None = cache
        self.async_hooks: bool = any(h is not None and is_async(h) for h in hooks)

class Opts:
    "How a toolbox runs its tools' calls: what failures say, what a trace records, what seals its pending calls"
    __slots__ = ('frames', 'trace_content', 'approvals')
    def __init__(self, frames: bool=False, trace_content: bool=False, approvals: Approvals | None=None):
        self.frames: bool = frames
        self.trace_content: bool = trace_content
        self.approvals: Approvals | None = approvals

OPTS = Opts()  # a tool's own calls: the exception's type and message, no arguments or results in the trace

THREAD: Literal['thread'] = 'thread'  # `inline` for a call run whole in a batch's worker thread (`batches`)

# --- results ------------------------------------------------------------------------------------------

def _error(e: BaseException, opts: Opts) -> str:
    "What the model reads of failure `e`"
    return f"TimeoutError: {e}" if isinstance(e, ToolTimeout) else error_text(e, frames=opts.frames)

def failure_kind(
    e: BaseException,  # why a call failed
) -> Failure:          # 'name', 'arguments', 'timeout' or 'tool'
    "Whose failure `e` is: the model's call ('name', 'arguments'), a 'timeout', or the tool's"
    if isinstance(e, ToolNotFound): return 'name'
    if isinstance(e, (ToolInputError, ExprError)): return 'arguments'
    return 'timeout' if isinstance(e, ToolTimeout) else 'tool'

def _result(t: PipelineTool, args: JsonDict, call_id: str | None, **kw: Any) -> ToolResult:
    return ToolResult(t.name, args, call_id=call_id, limit=t.max_chars, **kw)

def _failure(t: PipelineTool, args: Any, call_id: str | None, e: BaseException, opts: Opts) -> ToolResult:
    """A failure result: the exception's type and message for the model (the tool's frames too when the toolbox says so),
    cut as a value's text is (a hostile server's 200 MB error is no smaller than its result), though never below the
    default bound: a tool whose values are cut short still says in full what was wrong with the model's call"""
    limit = None if t.max_chars is None else max(t.max_chars, MAX_RESULT_CHARS)
    return _result(t, args if isinstance(args, dict) else {}, call_id, status='failure', failure=failure_kind(e), exception=e,
                   error=to_text(_error(e, opts), limit))

class Declined(Exception):
    "Raised by a `confirm` callback to refuse a call with its own reason (nobody can be asked): the call is declined, `str(e)` its error"

def _declined(t: PipelineTool, args: JsonDict, call_id: str | None, why: str | None=None) -> ToolResult:
    return _result(t, args, call_id, status='failure', failure='declined', error=why or f"The user declined to run {call_str(t.name, args)}")

def not_found(
    name: Any,         # the name the model sent, of no tool
    args: Any,         # its arguments
    call_id: str | None,  # the provider's id of the call
    known: Iterable[str],  # the tools' names, for the message
    opts: Opts=OPTS,   # what the trace records
) -> ToolResult:       # a failure of kind 'name', traced
    "The answer to a call of a tool nobody holds"
    return refused(ToolNotFound(name if isinstance(name, str) else repr(name), known), name, args, call_id, opts)

def refused(
    e: Exception,      # why no tool runs: a `ToolNotFound`, an `ExprError` (a call expression that doesn't parse)
    name: Any,         # the name the model sent ('' when there is none)
    args: Any,         # its arguments
    call_id: str | None,  # the provider's id of the call
    opts: Opts=OPTS,   # what the trace records
) -> ToolResult:       # a failure of the kind `failure_kind` gives, traced
    "The answer to a call refused before any tool ran"
    tr = _trace.start(str(name), call_id, '', opts.trace_content)  # a refused call is traced too
    r = ToolResult(str(name), args if isinstance(args, dict) else {}, 'failure', error=error_text(e), call_id=call_id,
                   failure=failure_kind(e), exception=e)
    _trace.end(tr, r)
    return r

def timed_out(
    name: Any,         # the tool's name, as the model sent it
    args: Any,         # its arguments
    call_id: str | None,  # the provider's id of the call
    timeout: float,    # the seconds it had
) -> ToolResult:       # a failure of kind 'timeout'
    "The answer to a call its batch stopped waiting for (a sync tool's thread can't be stopped: it finishes in the background)"
    e = ToolTimeout(f"tool {name!r} did not finish within {timeout:g} s")
    return ToolResult(str(name), args if isinstance(args, dict) else {}, 'failure', call_id=call_id, error=_error(e, OPTS),
                      failure='timeout', exception=e)

def pending(
    result: ToolResult | JsonDict,  # a pending `ToolResult`, or its `to_dict()` data (read back from JSON)
) -> ToolResult:     # it, as a `ToolResult`
    "The call a user's answer resumes (`run` with `approved`); a `ValueError` for a result that is not pending"
    r = result if isinstance(result, ToolResult) else ToolResult.from_dict(result)
    if r.status != 'pending': raise ValueError(f"Only a pending result can be resumed; the call of {r.name!r} is already {r.status!r}")
    return r

def unseal(
    r: ToolResult,      # a pending result, as `pending` gives it
    t: PipelineTool | None,  # the tool its name resolves to (None: none)
    injected: JsonDict,  # the application's values for injected parameters, as the resumed call will run with them
    opts: Opts,         # the toolbox's: its `approvals` hold the key
    approve: bool,      # the user's answer: an approval spends the record
) -> None:
    "`SealError` unless `r` is a record this toolbox made, unchanged (tool, arguments, call id, injected values), unexpired and unspent"
    if opts.approvals is None: raise SealError("Only a toolbox resumes a pending call: this one has no key")
    opts.approvals.check(r.seal, r.name, r.arguments, r.call_id, _injected(t, injected) if t is not None else {}, approve)

# --- the pipeline -------------------------------------------------------------------------------------

def _injected(t: PipelineTool, injected: JsonDict | None) -> JsonDict:
    "The application's values for the injected parameters; one missing is the developer's mistake, raised, never the model's to read"
    if not t.inject: return {}
    injected = injected or {}
    if missing := [k for k in t.inject if k not in injected]:
        raise TypeError(f"Tool {t.name!r} needs {', '.join(map(repr, missing))}: pass it in `injected` (the application's values)")
    return {k: injected[k] for k in t.inject}

def _read(t: PipelineTool, args: Any) -> JsonDict:
    "The model's arguments as a dict, none of them injected ones; a text-input tool takes a `str` as its text"
    if t.plan.text_param is not None and isinstance(args, str): return {t.plan.text_param: args}
    args = read_arguments(args)
    # (folded, the arguments are the model's object's fields: one named as an injected parameter fills that field, never it)
    if t.fold is None and (given := [k for k in t.inject if k in args]):
        raise ToolInputError(f"Tool {t.name!r}: {', '.join(map(repr, given))} is supplied by the application, not by you")
    return args

def _kwargs(t: PipelineTool, args: JsonDict, injected: JsonDict) -> JsonDict:
    kw = coerce_inputs(t.plan.checker, args, t.name, fold=t.fold)
    return {**kw, **injected} if injected else kw

def run(
    t: PipelineTool,             # the tool
    args: Args,                  # the model's arguments: a dict or JSON text
    injected: JsonDict | None,   # the application's values for injected parameters (the tool's are picked out)
    call_id: str | None,         # the provider's id of this call
    confirm: Hook | None,        # who confirms a call of a tool that requires it (None: the call is pending)
    inline: bool | Literal['thread'],  # run sync code here, never in a thread (`THREAD`: inside a batch's worker thread)
    opts: Opts=OPTS,             # what failures say, what the trace records
    approved: bool | None=None,  # None for a model's call; True/False to resume a pending one
) -> Coroutine[Any, Any, ToolResult]:  # a coroutine giving the `ToolResult`
    """The pipeline (a coroutine to await or `drive`), traced when anyone listens. Resuming (`approved` True/False), no
    pre-hook or confirmation runs: they ran when the call became pending. `inline`: with sync hooks and a sync tool,
    nothing then suspends, so `execute` drives it without an event loop. A missing injected value raises here"""
    inj = _injected(t, injected)
    if not _trace.listening(): return _steps(t, args, inj, call_id, confirm, inline, opts, approved, None)  # no coroutine more
    return _traced(t, args, inj, call_id, confirm, inline, opts, approved)

async def _traced(t: PipelineTool, args: Args, inj: JsonDict, call_id: str | None, confirm: Hook | None, inline: bool | str,
                  opts: Opts, approved: bool | None) -> ToolResult:
    "The steps in a trace begun where they run (a coroutine closed unrun leaves none open)"
    tr = _trace.start(t.name, call_id, t.description, opts.trace_content)
    _trace.enter(tr)
    try: r = await _steps(t, args, inj, call_id, confirm, inline, opts, approved, tr)
    except BaseException as e:  # cancelled (a batch's timeout), or the developer's mistake
        _trace.end(tr, None, e)
        raise
    _trace.end(tr, r)
    return r

async def _steps(t: PipelineTool, args: Any, inj: JsonDict, call_id: str | None, confirm: Hook | None, inline: bool | str,
                 opts: Opts, approved: bool | None, tr: _trace._Call | None) -> ToolResult:
    "Injected values, pre-hook, confirmation, coercion, cache, middleware around the call (bounded, retried), post-hook"
    n = 0
    try:
        args = _read(t, args)
        if approved is False: return _declined(t, args, call_id)
        if approved is None:
            if t.pre_hook is not None and (new := await _maybe_await(t.pre_hook(t, args))) is not None: args = new
            if t.requires_confirmation:
                if confirm is None:  # nobody to ask now: the application asks its user, then `Toolbox.resume`s it
                    _trace.event(tr, 'funccall.pending', {})
                    seal = opts.approvals.seal(t.name, args, call_id, inj) if opts.approvals else None
                    return _result(t, args, call_id, status='pending', seal=seal)
                try: ok = await _maybe_await(confirm(t, args))
                except Declined as e: return _declined(t, args, call_id, str(e))
                if not ok: return _declined(t, args, call_id)
        kw = _kwargs(t, args, inj)
        if tr is not None: _repairs(tr, args, kw)
        cache = t.plan.cache
        key = _cache_key(t.name, kw) if cache else None
        if key is not None and (hit := cache.get(key))[0]:  # type: ignore[union-attr]  # (a key only with a cache)
            return _result(t, args, call_id, status='success', value=hit[1], cached=True, stop=t.stop_after)
        while True:
            n += 1
            try:
                value = await (_attempt(t, args, inj, kw, inline) if t.timeout is None else _bounded(t, args, inj, kw))
                break
            except (StopRun, ToolInputError): raise  # the model's arguments (changed by middleware) are no better a second time
            except Exception as e:
                if n > t.retries or not _retryable(t, e): raise
                _trace.event(tr, 'funccall.retry', {'funccall.attempt': n, 'error.type': type(e).__qualname__})
                import asyncio  # (imported when first needed: not by `import funccall`)
                await asyncio.sleep(t.retry_delay * 2 ** (n - 1))
        if t.post_hook is not None and (new := await _maybe_await(t.post_hook(t, args, value))) is not None: value = new
        if key is not None: cache.put(key, value)  # type: ignore[union-attr]  # (a key only with a cache)
        return _result(t, args, call_id, status='success', value=value, stop=t.stop_after, attempts=n)
    except StopRun as e:  # the loop stops after this call; the call is still answered
        return _result(t, args if isinstance(args, dict) else {}, call_id, status='success', stop=True, exception=e,
                       value=str(e) or f"{t.name} stopped the run", attempts=max(n, 1))
    except Exception as e:
        r = _failure(t, args, call_id, e, opts)
        r.attempts = max(n, 1)
        if tr is not None and r.failure in ('name', 'arguments'): _trace.event(tr, 'funccall.problem', {'funccall.message': r.error})
        return r

def _retryable(t: PipelineTool, e: Exception) -> bool:
    "Retry `e`? The developer's `retry_on`, else any failure of a tool declared idempotent or read-only"
    # not a timeout by default for other tools: the run that timed out may still finish, and do its work twice
    if t.retry_on is not None: return isinstance(e, t.retry_on)
    return bool(t.hints.get('idempotent') or t.hints.get('read_only'))

async def _attempt(t: PipelineTool, args: JsonDict, inj: JsonDict, kw: JsonDict, inline: bool | str) -> Any:
    "One run: middleware around the function, and all a generator yields"
    value = await (_chain(t, args, inj, kw, inline)() if t.middleware else _call(t, kw, inline))
    if inspect.isasyncgen(value): value = [x async for x in value]  # the model reads all it yields
    elif inspect.isgenerator(value): value = list(value) if inline else await to_thread(list, value)
    return value

async def _bounded(t: PipelineTool, args: JsonDict, inj: JsonDict, kw: JsonDict) -> Any:
    "One run within `timeout` seconds; a sync tool runs in a worker thread, the only way to stop waiting for it"
    import asyncio  # (imported when first needed: not by `import funccall`)
    task = asyncio.ensure_future(_attempt(t, args, inj, kw, False))
    done, _ = await asyncio.wait((task,), timeout=t.timeout)
    if done: return task.result()
    task.cancel()  # a worker thread can't be stopped: its slot is given back, and its result, whenever it comes, dropped
    task.add_done_callback(_drop)
    raise ToolTimeout(f"tool {t.name!r} did not finish within {t.timeout:g} s")

def _drop(task: Any) -> None:
    "Read a dropped task's outcome, so asyncio doesn't log it as never retrieved"
    if not task.cancelled(): task.exception()

_SETTLED = frozenset({int, float, str, bool, type(None), list, dict, tuple})  # never awaitable (`isawaitable` costs ~0.4 µs)

async def _call(t: PipelineTool, kw: JsonDict, inline: bool | str) -> Any:
    "The function itself: awaited when async; a sync one right here (`inline`) or in a worker thread"
    args, kw = call_args(t.fn, kw) if t.plan.spread else ((), kw)
    if t.is_async: return await t.fn(*args, **kw)
    if inline == THREAD:  # a batch's worker thread: what a sync callable hands back to await is settled, as the loop's way does
        try: res = call_tool(t.fn, args, kw)
        except StopIteration as e: raise stop_iteration(e) from e  # what the loop's way makes of it (a coroutine can't let it out)
        return settle(_settle(res)) if type(res) not in _SETTLED and (inspect.isawaitable(res) or inspect.isasyncgen(res)) else res
    if inline: return call_tool(t.fn, args, kw)
    res = await to_thread(call_tool, t.fn, args, kw)
    return await res if inspect.isawaitable(res) else res  # a sync callable that hands back a coroutine

async def _settle(v: Any) -> Any:
    "What a sync callable handed back, awaited, and an async generator's items gathered (as the loop's own `_attempt` does)"
    if inspect.isawaitable(v): v = await v
    return [x async for x in v] if inspect.isasyncgen(v) else v

_Next = Callable[..., Coroutine[Any, Any, Any]]  # the rest of a middleware chain: `(new_args=None)`, a coroutine

def _chain(t: PipelineTool, args: JsonDict, inj: JsonDict, kw: JsonDict, inline: bool | str) -> _Next:
    "The call wrapped in the middleware, the first outermost; `call_next(new_args)` runs it with other arguments"
    async def innermost(new_args: JsonDict | None=None) -> Any: return await _call(t, kw if new_args is None else _kwargs(t, new_args, inj), inline)
    call: _Next = innermost
    for mw in reversed(t.middleware): call = _wrap(t, args, mw, call, inline)
    return call

def _wrap(t: PipelineTool, args: JsonDict, mw: Middleware, nxt: _Next, inline: bool | str) -> _Next:
    "`nxt` wrapped in middleware `mw`; `call_next(new_args)` may change the arguments. Sync middleware gets a sync `call_next`"
    mw_async = is_async(mw)
    async def wrapped(new_args: JsonDict | None=None) -> Any:
        # `None` all the way down means "the arguments as they came", already coerced: only changed ones are coerced again
        def call_next(x: JsonDict | None=None) -> Coroutine[Any, Any, Any]: return nxt(new_args if x is None else x)
        a = args if new_args is None else new_args
        if mw_async: return await mw(t, a, call_next)
        if inline: return mw(t, a, lambda x=None: drive(call_next(x)))
        import asyncio  # (imported when first needed: not by `import funccall`)
        loop = asyncio.get_running_loop()  # sync middleware runs in a thread and calls the rest of the chain on the loop
        return await to_thread(mw, t, a, lambda x=None: asyncio.run_coroutine_threadsafe(call_next(x), loop).result())
    return wrapped

def _repairs(tr: _trace._Call, args: JsonDict, kw: JsonDict) -> None:
    "Trace events for the arguments coercion changed from the JSON type the model sent (`'5'` for 5, JSON text for a list)"
    for k, v in args.items():
        if k in kw and type(kw[k]) is not type(v) and isinstance(kw[k], (bool, int, float, str, list, dict)) and not (
                type(v) is int and type(kw[k]) is float):
            _trace.event(tr, 'funccall.repair', {'funccall.argument': k, 'funccall.sent': type(v).__name__, 'funccall.made': type(kw[k]).__name__})

async def _maybe_await(v: Any) -> Any: return await v if inspect.isawaitable(v) else v

# --- driving it ---------------------------------------------------------------------------------------

def drive(
    coro: Coroutine[Any, Any, R],  # a coroutine that never suspends (`run` of a tool whose pipeline can't)
) -> R:    # its value
    "The value of a coroutine that never suspends, without an event loop: the path of sync tools with sync hooks"
    try: coro.send(None)
    except StopIteration as e: return e.value
    coro.close()
    raise RuntimeError("A sync hook or middleware returned something to await; make it an async function and call `aexecute`")

def _never_suspends(t: PipelineTool) -> bool:
    "Whether the pipeline can't suspend (a sync tool, no async hook, no timeout or retries): driven without an event loop"
    return not (t.is_async or t.plan.async_hooks or t.timeout or t.retries)

def threadable(
    t: PipelineTool,  # the tool
) -> bool:    # whether a batch may run a call of it whole in one worker thread
    """Whether a sync batch may run a call of this tool whole in one worker thread, without an event loop: a pipeline
    that never suspends, with nothing around it that the loop's way runs on the caller's thread (hooks, confirmation,
    the cache) or on a loop (middleware)"""
    return _never_suspends(t) and not (t.middleware or t.plan.cache or t.pre_hook is not None or t.post_hook is not None
                                       or (t.requires_confirmation and t.confirm is not None))

def execute(
    t: PipelineTool,             # the tool
    args: Args,                  # the model's arguments: a dict or JSON text
    injected: JsonDict | None,   # the application's values for injected parameters
    call_id: str | None,         # the provider's id of this call
    opts: Opts=OPTS,             # what failures say, what the trace records
    approved: bool | None=None,  # None for a model's call; True/False to resume a pending one
) -> ToolResult:
    "The pipeline from sync code: without an event loop when nothing in it can suspend"
    if _never_suspends(t): return drive(run(t, args, injected, call_id, t.confirm, True, opts, approved))
    return run_sync(run(t, args, injected, call_id, t.confirm, False, opts, approved))
