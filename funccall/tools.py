"""Tool objects, tool groups and toolboxes: the agent loop around `call_func`.

A `Tool` wraps one callable. `execute`/`aexecute` never raise for a model's mistake or a tool's failure:
they return a `ToolResult` (status, value, error message for the model, the exception, which kind of failure).
One pipeline runs every call, in this order: injected parameters (left out of the schema, supplied by the
application), the pre-hook, confirmation (of the arguments that will run: at once by a `confirm` callback, or
pending until `Toolbox.resume`), coercion, the cache, middleware wrapping the call (each attempt bounded by the
tool's `timeout`, failures of the tool retried with backoff), the post-hook; and around it all a trace
(`_trace`: an OpenTelemetry span and the `funccall` logger). `StopRun`, raised by a tool or hook, ends the call
with a result whose `stop` is set: the agent loop stops after answering every call.

A `ToolGroup` exposes the public methods of an object as tools named `group-method`, a form `resolve_nm`
maps back to `group.method`. A `Toolbox` holds tools and groups: definitions for any provider, calls by
name, call expressions, and batches of calls run concurrently.
"""
from __future__ import annotations

import contextlib, inspect, json, os, re, time, warnings
from pathlib import Path
from typing import Any, Callable, Literal

from . import _trace, providers
from ._json import jsonable
from ._ns import Sealed, ToolHolder, public_methods
from ._types import Default, empty, is_callable_object, signature
from ._inputs import ToolInputError, read_arguments
from .results import StopRun, ToolResult, ToolTimeout, call_str
from ._run import WorkersExhausted, call_tool, in_threads, in_threads_async, loop_running, settle, stop_iteration, to_thread, is_async, run_sync
from .call import ToolNotFound, call_args, coerce_inputs, error_text
from .expr import ExprError, parse_calls
from .schema import SchemaError, get_schema

__all__ = ['Tool', 'ToolGroup', 'Toolbox', 'as_toolbox']

# --- the cache ----------------------------------------------------------------------------------------

class _Cache:
    "Results by arguments for `ttl` seconds, in memory and, with `folder`, on disk as JSON (a disk hit is the JSON form)"
    def __init__(self, ttl: float, folder: str | Path | None):
        self.ttl, self.mem, self.folder = ttl, {}, Path(folder) if folder else None

    def _path(self, key: str) -> Path: return self.folder / f'{key}.json'

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

    def put(self, key: str, value) -> None:
        expires = time.time() + self.ttl
        self.mem[key] = (expires, value)
        if self.folder is None: return
        try: data = json.dumps([expires, jsonable(value)])
        except (TypeError, ValueError, RecursionError): return  # only JSON values go to disk; the rest stays in memory
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self._path(key).with_suffix(f'.{os.getpid()}.tmp')
        tmp.write_text(data)
        os.replace(tmp, self._path(key))

def _cache_key(name: str, kw: dict) -> str:
    "A key for the arguments the tool runs with (coerced, so `'1'` and `1` are one entry; injected values count too)"
    try: s = json.dumps(jsonable(kw), sort_keys=True)
    except (TypeError, ValueError, RecursionError): s = repr(sorted(kw.items(), key=lambda kv: kv[0]))
    import hashlib  # (imported when first needed: not by `import funccall`)
    return hashlib.sha256(f'{name}\0{s}'.encode()).hexdigest()[:32]

# --- tools --------------------------------------------------------------------------------------------

_name_re = re.compile(r'[a-zA-Z0-9_-]{1,64}')

class _Opts:
    "How a toolbox runs its tools' calls: what failures say, who sees each result, what a trace records"
    __slots__ = ('frames', 'trace_content')
    def __init__(self, frames: bool=False, trace_content: bool=False): self.frames, self.trace_content = frames, trace_content

_OPTS = _Opts()

def _error(e: BaseException, opts: _Opts) -> str:
    "What the model reads of failure `e`"
    return f"TimeoutError: {e}" if isinstance(e, ToolTimeout) else error_text(e, frames=opts.frames)

def _kind(e: BaseException) -> str:
    "Whose failure `e` is: the model's call ('name', 'arguments'), a 'timeout', or the tool's"
    if isinstance(e, ToolNotFound): return 'name'
    if isinstance(e, (ToolInputError, ExprError)): return 'arguments'
    return 'timeout' if isinstance(e, ToolTimeout) else 'tool'

def _names(x) -> tuple:
    "Parameter names given as one name or several: `inject='user_id'` is `inject=('user_id',)`, never its letters"
    return (x,) if isinstance(x, str) else tuple(x)

class Tool(Sealed):
    "One callable offered to a model, with what runs around each call (sealed: a model's name never reaches its attributes)"
    __funccall_named__ = True  # (`call.NAMED`) `call_func` calls it with the model's arguments by name: its own pipeline spreads them
    def __init__(
        self,
        fn: Callable,                        # the function, method, async function or callable object
        name: str | None=None,               # the tool's name (default: the function's; a callable object's class)
        description: str | None=None,        # what the model reads (default: the docstring)
        strict: bool=False,                  # render in strict mode (OpenAI Structured Outputs)
        inject: str | tuple=(),              # parameters the application supplies at call time, left out of the schema: a name or names
        requires_confirmation: bool=False,   # ask `confirm` before each call
        confirm: Callable | None=None,       # `confirm(tool, args) -> bool`, may be async; a refusal is a failure result
        pre_hook: Callable | None=None,      # `pre_hook(tool, args)`: may return new args; may be async
        post_hook: Callable | None=None,     # `post_hook(tool, args, value)`: may return a new value; may be async
        middleware: tuple=(),                # each `mw(tool, args, call_next)` wraps the call, first outermost; may be async
        cache_ttl: float | None=None,        # cache results by arguments for this many seconds
        cache_dir: str | Path | None=None,   # also keep cached results on disk, as JSON
        max_chars: int | None=None,          # cut the result text the model reads to this length
        instructions: str | None=None,       # how to use the tool, for the system prompt (not sent with the definition)
        stop_after: bool=False,              # the agent loop should stop after a call of this tool
        title: str | None=None,              # a human-readable name, for the MCP clients' user interfaces
        read_only: bool | None=None,         # hint: the tool changes nothing (MCP's `readOnlyHint`)
        destructive: bool | None=None,       # hint: the tool may delete or overwrite (MCP's `destructiveHint`)
        idempotent: bool | None=None,        # hint: calling it again with the same arguments changes nothing more (`idempotentHint`)
        open_world: bool | None=None,        # hint: the tool reaches outside systems such as the web (`openWorldHint`)
        timeout: float | None=None,          # seconds each run of the tool may take (a sync tool's thread runs on in the background)
        retries: int=0,                      # run again this many times after a failure of the tool (not of the model's call)
        retry_on: tuple=None,                # retry only these exception types (`TimeoutError` for timeouts); default: any failure
                                             #   of the tool or timeout, for tools declared idempotent or read-only only
        retry_delay: float=0.5,              # seconds before the first retry, doubling before each next one
        text_input: bool=False,              # free-form text in (OpenAI custom tools): the function's one `str` parameter takes it
        grammar: dict | None=None,           # constrain that text: `{'syntax': 'lark' or 'regex', 'definition': ...}` (implies `text_input`)
        examples: list | None=None,          # example arguments, checked against the schema (Anthropic's `input_examples`)
        provider_options: dict | None=None,  # provider -> keys added to its definition, e.g. `{'anthropic': {'cache_control': {...}}}`
        icons: list | None=None,             # icons for MCP clients' user interfaces: `mcp_types.Icon`s or dicts (`src`, `mimeType`, `sizes`)
        fold: bool=False,                    # the one parameter, a pydantic model/TypedDict/dataclass: its fields are the tool's own
    ):
        if isinstance(fn, Sealed):  # its pipeline inside this one: its confirmation a pending text, its injected values never given
            raise TypeError(f"Tool of a {type(fn).__name__}: use the {type(fn).__name__} itself, or make the Tool from its function")
        self.fn, self.strict, self.inject = fn, strict, _names(inject)
        self.requires_confirmation, self.confirm = requires_confirmation, confirm
        self.pre_hook, self.post_hook, self.middleware = pre_hook, post_hook, tuple(middleware)
        self.max_chars, self.instructions, self.stop_after = max_chars, instructions, stop_after
        self.title, self.icons = title, icons
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if type(retries) is not int or retries < 0: raise ValueError(f"retries must be a non-negative int, not {retries!r}")
        self.timeout, self.retries, self.retry_delay = timeout, retries, retry_delay
        self.retry_on = tuple(retry_on) if isinstance(retry_on, (list, tuple)) else (retry_on,) if retry_on else None
        if retries and self.retry_on is None and not (idempotent or read_only):  # else `retries` would silently do nothing
            raise ValueError(f"retries={retries}: a retried call of a tool that may change things can do it twice; declare it "
                             "idempotent=True or read_only=True, or name the exceptions that are safe to retry with retry_on=")
        self.grammar, self.text_input = grammar, bool(text_input or grammar)
        self.provider_options = {k: dict(v) for k, v in (provider_options or {}).items()}  # read by the renderers
        self.hints = {k: v for k, v in dict(read_only=read_only, destructive=destructive, idempotent=idempotent,
                                             open_world=open_world).items() if v is not None}  # only what the developer said
        gen = inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn)
        self._cache = _Cache(cache_ttl, cache_dir) if cache_ttl and not gen else None  # a generator's values can't be replayed
        if name is None and is_callable_object(fn): name = type(fn).__name__  # not the reference's `__call__`
        if unknown := [k for k in self.inject if k not in inspect.signature(fn).parameters]:
            raise SchemaError(f"Tool {name or getattr(fn, '__name__', '?')!r} has no parameter {', '.join(map(repr, unknown))} to inject")
        # injected parameters are left out unread: their types are the application's (a database connection, a run context)
        s = get_schema(fn, evalable=True, name=name, inject=self.inject, fold=fold, **({'description': description} if description else {}))
        self.schema = s  # the canonical schema, injected parameters left out
        ps = signature(fn, skip=self.inject).params
        self.fold = next(p.name for p in ps if p.name not in self.inject) if fold else None  # the parameter the model's object builds
        # whether calling `fn` needs more than keywords: positional-only or `*args` by position, `**kwargs` spread, `Field` defaults
        self._spread = any(p.kind not in _BY_KEYWORD or type(p.default) is Default for p in ps)
        self.name, self.description = s['name'], s['description']
        self._checker = _shadow(fn, self.inject, self.name) if self.inject else fn  # what the model's arguments are checked against
        hooks = (confirm, pre_hook, post_hook, *self.middleware)
        self._async_hooks = any(h is not None and is_async(h) for h in hooks)
        self.is_async = is_async(fn)
        # what `get_schema`, `mk_ns` and `call_func` read: the tool shows the face of its function, named as the tool
        self.__name__, self.__doc__ = self.name, self.description
        self.__wrapped__ = type(fn).__call__ if is_callable_object(fn) else fn  # where its annotations and comments are
        self.__signature__ = inspect.signature(self._checker)
        self._text_param = self._text_parameter() if self.text_input else None
        self.examples = list(examples or [])
        if self.examples: self._check_examples()

    def _text_parameter(self) -> str:
        "The one parameter that takes a free-form tool's text"
        props = self.schema['input_schema']['properties']
        if len(props) != 1 or next(iter(props.values())).get('type') != 'string':
            raise SchemaError(f"Tool {self.name!r} takes free-form text (text_input/grammar): it needs exactly one str parameter, not {list(props)}")
        if self.grammar is not None and not (isinstance(self.grammar, dict) and self.grammar.get('syntax') in ('lark', 'regex')
                                             and isinstance(self.grammar.get('definition'), str)):
            raise SchemaError(f"Tool {self.name!r}: grammar must be {{'syntax': 'lark' or 'regex', 'definition': str}}, not {self.grammar!r:.80}")
        return next(iter(props))

    def _check_examples(self) -> None:
        "Each example must be arguments the schema accepts: a model learns from them"
        from ._jsonschema import compile_schema  # (here: the validator imports the schema module; once per tool, never per call)
        v = compile_schema(jsonable(self.schema['input_schema']), where=f"Tool {self.name!r}")
        for i, ex in enumerate(self.examples):
            try: ok = v.is_valid(jsonable(ex))
            except TypeError: ok = False
            if not ok:
                why = '; '.join(map(str, v.problems(ex))) if isinstance(ex, dict) else 'not an object'
                raise SchemaError(f"Tool {self.name!r}: example {i} doesn't fit its schema ({why}): {ex!r:.100}")


    def name_ok(self, pattern: re.Pattern = _name_re) -> bool:
        "Whether the name meets OpenAI's and Anthropic's rule, `^[a-zA-Z0-9_-]{1,64}$`"
        return bool(pattern.fullmatch(self.name))

    def definition(
        self,
        fmt: str='openai',         # 'openai', 'responses', 'anthropic', 'gemini', 'mcp' or 'canonical'
        strict: bool | None=None,  # OpenAI strict mode (default: this tool's `strict`)
        rename: bool=False,        # rewrite a name the provider rejects (the toolbox maps it back)
        report=None,               # a `providers.Report` to fill, 'raise' on a lossy change, or None to warn
    ) -> dict:                     # the definition, ready for the SDK call
        "The tool for provider `fmt`: 'openai', 'responses', 'anthropic', 'gemini', 'mcp' (see `funccall.providers`)"
        return _render([self], fmt, strict, rename, report)[0]

    def to_dict(self) -> dict:
        "The model-facing definition and the flags an agent loop reads"
        return {**self.schema, 'strict': self.strict, 'requires_confirmation': self.requires_confirmation, 'stop_after': self.stop_after,
                **({'title': self.title} if self.title else {}), **self.hints}

    def call_str(self, args: dict) -> str: return call_str(self.name, args)

    def __call__(self, args=None, /, **kw) -> str:
        "Run with the model's arguments (a dict or JSON text, or as keywords) and give what the model reads back: JSON in, text out"
        return self.execute(kw if args is None and kw else args).text

    def __repr__(self): return f"Tool({self.name!r}{', async' if self.is_async else ''})"

    # -- running: one pipeline (`_run`) for `execute`, `aexecute`, batches and the MCP server

    def _injected(self, injected: dict | None) -> dict:
        "The application's values for the injected parameters; one missing is the developer's mistake, raised, never the model's to read"
        if not self.inject: return {}
        injected = injected or {}
        if missing := [k for k in self.inject if k not in injected]:
            raise TypeError(f"Tool {self.name!r} needs {', '.join(map(repr, missing))}: pass it in `injected` (the application's values)")
        return {k: injected[k] for k in self.inject}

    def _read(self, args) -> dict:
        "The model's arguments as a dict, none of them injected ones; a text-input tool takes a `str` as its text"
        if self._text_param is not None and isinstance(args, str): return {self._text_param: args}
        args = read_arguments(args)
        # (folded, the arguments are the model's object's fields: one named as an injected parameter fills that field, never it)
        if self.fold is None and (given := [k for k in self.inject if k in args]):
            raise ToolInputError(f"Tool {self.name!r}: {', '.join(map(repr, given))} is supplied by the application, not by you")
        return args

    def _kwargs(self, args: dict, injected: dict) -> dict:
        kw = coerce_inputs(self._checker, args, self.name, fold=self.fold)
        return {**kw, **injected} if injected else kw

    def _result(self, args: dict, call_id, **kw) -> ToolResult:
        return ToolResult(self.name, args, call_id=call_id, limit=self.max_chars, **kw)

    def _failure(self, args, call_id, e: BaseException, opts: _Opts=_OPTS) -> ToolResult:
        "A failure result: the exception's type and message for the model (the tool's frames too when the toolbox says so)"
        return self._result(args if isinstance(args, dict) else {}, call_id, status='failure', failure=_kind(e), exception=e,
                            error=_error(e, opts))

    def _declined(self, args, call_id) -> ToolResult:
        return self._result(args, call_id, status='failure', failure='declined', error=f"The user declined to run {self.call_str(args)}")

    def _run(self, args, injected, call_id, confirm, inline: bool, opts: _Opts=_OPTS, approved: bool | None=None):
        """The pipeline (a coroutine to await or `_drive`), traced when anyone listens. `approved`: None for a model's call;
        True/False to resume a pending one (no pre-hook, no confirmation: they ran when it became pending). `inline`: run
        sync code (tool, middleware, generators) right here, never in a thread; with sync hooks and a sync tool, nothing
        then suspends, so `execute` drives it without an event loop (`_drive`)."""
        inj = self._injected(injected)
        if not _trace.listening(): return self._steps(args, inj, call_id, confirm, inline, opts, approved, None)  # no coroutine more
        return self._traced(args, inj, call_id, confirm, inline, opts, approved)

    async def _traced(self, args, inj: dict, call_id, confirm, inline: bool, opts: _Opts, approved) -> ToolResult:
        "The steps in a trace begun where they run (a coroutine closed unrun, as `run_sync` does inside a loop, leaves none open)"
        tr = _trace.start(self.name, call_id, self.description, opts.trace_content)
        _trace.enter(tr)
        try: r = await self._steps(args, inj, call_id, confirm, inline, opts, approved, tr)
        except BaseException as e:  # cancelled (a batch's timeout), or the developer's mistake
            _trace.end(tr, None, e)
            raise
        _trace.end(tr, r)
        return r

    async def _steps(self, args, inj: dict, call_id, confirm, inline: bool, opts: _Opts, approved, tr) -> ToolResult:
        "Injected values, pre-hook, confirmation, coercion, cache, middleware around the call (bounded, retried), post-hook"
        n = 0
        try:
            args = self._read(args)
            if approved is False: return self._declined(args, call_id)
            if approved is None:
                if self.pre_hook is not None and (new := await _maybe_await(self.pre_hook(self, args))) is not None: args = new
                if self.requires_confirmation:
                    if confirm is None:  # nobody to ask now: the application asks its user, then `Toolbox.resume`s it
                        _trace.event(tr, 'funccall.pending', {})
                        return self._result(args, call_id, status='pending')
                    if not await _maybe_await(confirm(self, args)): return self._declined(args, call_id)
            kw = self._kwargs(args, inj)
            if tr is not None: _repairs(tr, args, kw)
            key = _cache_key(self.name, kw) if self._cache else None
            if key is not None and (hit := self._cache.get(key))[0]:
                return self._result(args, call_id, status='success', value=hit[1], cached=True, stop=self.stop_after)
            while True:
                n += 1
                try:
                    value = await (self._attempt(args, inj, kw, inline) if self.timeout is None else self._bounded(args, inj, kw))
                    break
                except (StopRun, ToolInputError): raise  # the model's arguments (changed by middleware) are no better a second time
                except Exception as e:
                    if n > self.retries or not self._retryable(e): raise
                    _trace.event(tr, 'funccall.retry', {'funccall.attempt': n, 'error.type': type(e).__qualname__})
                    import asyncio  # (imported when first needed: not by `import funccall`)
                    await asyncio.sleep(self.retry_delay * 2 ** (n - 1))
            if self.post_hook is not None and (new := await _maybe_await(self.post_hook(self, args, value))) is not None: value = new
            if key is not None: self._cache.put(key, value)
            return self._result(args, call_id, status='success', value=value, stop=self.stop_after, attempts=n)
        except StopRun as e:  # the loop stops after this call; the call is still answered
            return self._result(args if isinstance(args, dict) else {}, call_id, status='success', stop=True, exception=e,
                                value=str(e) or f"{self.name} stopped the run", attempts=max(n, 1))
        except Exception as e:
            r = self._failure(args, call_id, e, opts)
            r.attempts = max(n, 1)
            if tr is not None and r.failure in ('name', 'arguments'): _trace.event(tr, 'funccall.problem', {'funccall.message': r.error})
            return r

    def _retryable(self, e: Exception) -> bool:
        "Retry `e`? The developer's `retry_on`, else any failure of a tool declared idempotent or read-only"
        # not a timeout by default for other tools: the run that timed out may still finish, and do its work twice
        if self.retry_on is not None: return isinstance(e, self.retry_on)
        return bool(self.hints.get('idempotent') or self.hints.get('read_only'))

    async def _attempt(self, args: dict, inj: dict, kw: dict, inline: bool):
        "One run: middleware around the function, and all a generator yields"
        value = await (self._chain(args, inj, kw, inline)() if self.middleware else self._call(kw, inline))
        if inspect.isasyncgen(value): value = [x async for x in value]  # the model reads all it yields
        elif inspect.isgenerator(value): value = list(value) if inline else await to_thread(list, value)
        return value

    async def _bounded(self, args: dict, inj: dict, kw: dict):
        "One run within `timeout` seconds; a sync tool runs in a worker thread, the only way to stop waiting for it"
        import asyncio  # (imported when first needed: not by `import funccall`)
        task = asyncio.ensure_future(self._attempt(args, inj, kw, False))
        done, _ = await asyncio.wait((task,), timeout=self.timeout)
        if done: return task.result()
        task.cancel()  # a worker thread can't be stopped: its slot is given back, and its result, whenever it comes, dropped
        task.add_done_callback(_drop)
        raise ToolTimeout(f"tool {self.name!r} did not finish within {self.timeout:g} s")

    async def _call(self, kw: dict, inline: bool):
        "The function itself: awaited when async; a sync one right here (`inline`) or in a worker thread"
        args, kw = call_args(self.fn, kw) if self._spread else ((), kw)
        if self.is_async: return await self.fn(*args, **kw)
        if inline == _THREAD:  # a batch's worker thread: what a sync callable hands back to await is settled, as the loop's way does
            try: res = call_tool(self.fn, args, kw)
            except StopIteration as e: raise stop_iteration(e) from e  # what the loop's way makes of it (a coroutine can't let it out)
            return settle(_settle(res)) if type(res) not in _SETTLED and (inspect.isawaitable(res) or inspect.isasyncgen(res)) else res
        if inline: return call_tool(self.fn, args, kw)
        res = await to_thread(call_tool, self.fn, args, kw)
        return await res if inspect.isawaitable(res) else res  # a sync callable that hands back a coroutine

    def _chain(self, args: dict, inj: dict, kw: dict, inline: bool):
        "The call wrapped in the middleware, the first outermost; `call_next(new_args)` runs it with other arguments"
        async def call(new_args=None): return await self._call(kw if new_args is None else self._kwargs(new_args, inj), inline)
        for mw in reversed(self.middleware): call = _wrap(self, args, mw, call, inline)
        return call

    def _never_suspends(self) -> bool:
        "Whether the pipeline can't suspend (a sync tool, no async hook, no timeout or retries): driven without an event loop"
        return not (self.is_async or self._async_hooks or self.timeout or self.retries)

    def _threadable(self) -> bool:
        """Whether a sync batch may run a call of this tool whole in one worker thread, without an event loop: a pipeline
        that never suspends, with nothing around it that `abatch` runs on the caller's thread (hooks, confirmation, the
        cache) or on a loop (middleware)"""
        return self._never_suspends() and not (self.middleware or self._cache or self.pre_hook is not None or self.post_hook is not None
                                               or (self.requires_confirmation and self.confirm is not None))

    def _exec(self, args, injected, call_id, opts: _Opts=_OPTS, approved: bool | None=None) -> ToolResult:
        "The pipeline from sync code: without an event loop when nothing in it can suspend"
        if self._never_suspends():
            return _drive(self._run(args, injected, call_id, self.confirm, True, opts, approved))
        what = f"Tool {self.name!r} (async, with async hooks, a timeout or retries)"
        try: return run_sync(self._run(args, injected, call_id, self.confirm, False, opts, approved), 'await tool.aexecute(...)', what)
        except RuntimeError as e: return self._failure(args, call_id, e, opts)

    def execute(
        self,
        args=None,               # the model's arguments: a dict or JSON text
        injected: dict=None,     # the application's values for the injected parameters
        call_id: str=None,       # the provider's id of this call
    ) -> ToolResult:
        "Run the tool once, synchronously; a failure comes back as a result, never as an exception (but a missing injected value)"
        return self._exec(args, injected, call_id)

    async def aexecute(
        self,
        args=None,               # the model's arguments: a dict or JSON text
        injected: dict=None,     # the application's values for the injected parameters
        call_id: str=None,       # the provider's id of this call
        in_thread: bool=True,    # run a sync tool (and sync middleware) in a worker thread, so it never blocks the loop
        confirm: Callable=None,  # ask this instead of the tool's own `confirm` (the MCP server asks the client's user)
    ) -> ToolResult:
        "Run the tool once, asynchronously; hooks, `confirm` and middleware may be sync or async"
        return await self._run(args, injected, call_id, self.confirm if confirm is None else confirm, inline=not in_thread)

def _drop(task) -> None:
    "Read a dropped task's outcome, so asyncio doesn't log it as never retrieved"
    if not task.cancelled(): task.exception()

def _repairs(tr, args: dict, kw: dict) -> None:
    "Trace events for the arguments coercion changed from the JSON type the model sent (`'5'` for 5, JSON text for a list)"
    for k, v in args.items():
        if k in kw and type(kw[k]) is not type(v) and isinstance(kw[k], (bool, int, float, str, list, dict)) and not (
                type(v) is int and type(kw[k]) is float):
            _trace.event(tr, 'funccall.repair', {'funccall.argument': k, 'funccall.sent': type(v).__name__, 'funccall.made': type(kw[k]).__name__})

_BY_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)  # parameters a call by keyword fills

def _shadow(fn, inject: tuple, name: str):
    "`fn` as the model sees it, its injected parameters left out: what the model's arguments are checked against"
    P = inspect.Parameter
    ps = [P(p.name, p.kind, default=p.default, annotation=p.anno if p.anno is not empty else P.empty)
          for p in signature(fn, skip=inject).params if p.name not in inject]  # annotations resolved in `fn`'s own module
    def shadow(**kw): raise NotImplementedError  # only checked against, never called
    shadow.__signature__, shadow.__name__ = inspect.Signature(ps), name
    shadow.__annotations__ = {p.name: p.annotation for p in ps if p.annotation is not P.empty}
    return shadow

async def _maybe_await(v): return await v if inspect.isawaitable(v) else v

_THREAD = 'thread'  # `inline` for a call run whole in a batch's worker thread (`Toolbox._thread_jobs`)
_SETTLED = frozenset({int, float, str, bool, type(None), list, dict, tuple})  # never awaitable (`isawaitable` costs ~0.4 µs)

async def _settle(v):
    "What a sync callable handed back, awaited, and an async generator's items gathered (as the loop's own `_attempt` does)"
    if inspect.isawaitable(v): v = await v
    return [x async for x in v] if inspect.isasyncgen(v) else v

def _drive(coro):
    "The value of a coroutine that never suspends, without an event loop: the path of sync tools with sync hooks"
    try: coro.send(None)
    except StopIteration as e: return e.value
    coro.close()
    raise RuntimeError("A sync hook or middleware returned something to await; make it an async function and call `aexecute`")

def _wrap(tool, args, mw, nxt, inline: bool):
    "`nxt` wrapped in middleware `mw`; `call_next(new_args)` may change the arguments. Sync middleware gets a sync `call_next`"
    mw_async = is_async(mw)
    async def wrapped(new_args=None):
        # `None` all the way down means "the arguments as they came", already coerced: only changed ones are coerced again
        def call_next(x=None): return nxt(new_args if x is None else x)
        a = args if new_args is None else new_args
        if mw_async: return await mw(tool, a, call_next)
        if inline: return mw(tool, a, lambda x=None: _drive(call_next(x)))
        import asyncio  # (imported when first needed: not by `import funccall`)
        loop = asyncio.get_running_loop()  # sync middleware runs in a thread and calls the rest of the chain on the loop
        return await to_thread(mw, tool, a, lambda x=None: asyncio.run_coroutine_threadsafe(call_next(x), loop).result())
    return wrapped


def _render(tools: list, fmt: str, strict, rename: bool, report) -> list:
    "Definitions of `tools` for provider `fmt`, each in its own strict mode unless `strict` says otherwise"
    fmts = {**providers.RENDERERS, 'canonical': None}
    fmt = providers.provider_name(fmt, tuple(fmts))
    if fmt == 'canonical': return [t.schema for t in tools]
    if fmt == 'mcp':
        if strict: warnings.warn("strict=True changes nothing for MCP tool definitions, which have no strict mode: each call's "
                                 "arguments are still checked against the schema when it runs", providers.ProviderWarning, stacklevel=4)
        return fmts[fmt](tools, rename=rename, report=report)
    # one call for the whole list: the renderers read each `Tool`'s own `strict` when `strict` is None, and Claude's
    # request-wide limits on strict tools are checked over all of them
    return fmts[fmt](tools, strict=strict, rename=rename, report=report)

# --- groups and toolboxes -----------------------------------------------------------------------------

class ToolGroup(ToolHolder):
    "The public methods of an object as tools, named `prefix-method` (a name `resolve_nm` maps to `prefix.method`)"
    def __init__(
        self,
        obj,                        # an object, or a class (instantiated with no arguments)
        prefix: str | None=None,    # the group's name (default: the class name in lower case)
        include=None,               # only these methods
        exclude=(),                 # not these methods
        inject: str | tuple=(),     # parameters the application supplies, in the methods that have them
        **tool_kw,                  # passed on to each `Tool` (strict, hooks, caching...)
    ):
        if isinstance(obj, type): obj = obj()
        if isinstance(obj, Sealed):  # its methods would hand the model the machinery: `execute` skips confirmation, `call` takes `injected`
            kind = type(obj).__name__
            raise TypeError(f"A ToolGroup of a {kind} would offer the {kind}'s own methods as tools; add the {kind} itself to a Toolbox")
        self.obj, self.prefix = obj, prefix or type(obj).__name__.lower()
        if not re.fullmatch(r'[a-zA-Z0-9_]+', self.prefix): raise ValueError(f"Group prefix {self.prefix!r} may use only letters, digits and _")
        ms = public_methods(obj)
        if include is not None and (unknown := set(include) - set(ms)):
            raise ValueError(f"{type(obj).__name__} has no public method {sorted(unknown)}")
        ms = {k: m for k, m in ms.items() if (include is None or k in include) and k not in exclude}
        self.skipped = [k for k, m in ms.items() if not m.__doc__]  # a tool without a description is no use to a model
        self.tools = {}
        for k, m in ms.items():
            if k in self.skipped: continue
            own = tuple(p for p in _names(inject) if p in inspect.signature(m).parameters)
            self.tools[f'{self.prefix}-{k}'] = Tool(m, name=f'{self.prefix}-{k}', inject=own, **tool_kw)

    def __repr__(self): return f"ToolGroup({self.prefix!r}, {list(self.tools)})"

    def call(
        self,
        name: str,             # the tool's name, as the model sent it: one of `tools`, exactly
        args=None,             # its arguments: a dict or JSON text
        call_id: str=None,     # the provider's id of this call, kept in the result
        injected: dict=None,   # values for injected parameters, for this call
    ) -> ToolResult:
        "Run the group's tool `name` through its pipeline, as a `Toolbox` holding this group runs it"
        return Toolbox([self]).call(name, args, call_id, injected)

    async def acall(
        self,
        name: str,             # the tool's name, as the model sent it
        args=None,             # its arguments: a dict or JSON text
        call_id: str=None,     # the provider's id of this call
        injected: dict=None,   # values for injected parameters, for this call
    ) -> ToolResult:
        "`call` for async code"
        return await Toolbox([self]).acall(name, args, call_id, injected)

class Toolbox(ToolHolder):
    "Tools and tool groups offered to a model: their definitions, and running the calls it makes"
    def __init__(
        self,
        tools=(),                    # functions, `Tool`s, `ToolGroup`s and `Toolbox`es
        context: dict=None,          # names call expressions may use: classes, constants, dotted keys like 'np.array'
        injected: dict=None,         # the application's values for injected parameters (a call may add its own)
        max_concurrency: int=8,      # how many calls of a batch run at once
        timeout: float | None=None,  # seconds a call of a batch may take
        on_result: Callable | None=None,  # `on_result(result)` sees every call's result: run, refused, timed out, pending, resumed
        errors: Literal['message', 'traceback']='message',  # what the model reads of a tool's exception: type and message, or its frames too
        trace_content: bool=False,   # put arguments and results in the trace (OpenTelemetry spans and the `funccall` logger)
    ):
        self.tools, self.context, self.injected = {}, dict(context or {}), dict(injected or {})
        self.aliases: dict = {}  # name a provider knows a tool by -> its name here, filled by `definitions(rename=True)`
        self.max_concurrency, self.timeout, self.on_result = max_concurrency, timeout, on_result
        if errors not in ('message', 'traceback'): raise ValueError(f"errors must be 'message' or 'traceback', not {errors!r}")
        self._opts = _Opts(frames=errors == 'traceback', trace_content=trace_content)
        self.groups: dict = {}      # tool name -> the group or MCP server it belongs to (for search, and OpenAI's namespaces)
        self.group_docs: dict = {}  # group -> what its tools are for
        for t in tools: self.add(t)

    def add(
        self,
        t,                    # a function, `Tool`, `ToolGroup`, `Toolbox`, or a list or dict of them (an `MCPClient`'s `tools()`)
        group: str=None,      # the group they belong to (a `ToolGroup`'s is its prefix): an MCP server's name, say
        doc: str=None,        # what the group's tools are for
    ) -> Toolbox:
        "Add a function, `Tool`, `ToolGroup`, the tools of another `Toolbox`, or several"
        if isinstance(t, (list, tuple, dict)):
            for x in (t.values() if isinstance(t, dict) else t): self.add(x, group, doc)
            return self
        if isinstance(t, ToolGroup): group, doc = group or t.prefix, doc or type(t.obj).__doc__
        items = list(t.tools.values()) if isinstance(t, ToolHolder) else [t if isinstance(t, Tool) else Tool(t)]
        if clash := [x.name for x in items if x.name in self.tools] or len({x.name for x in items}) < len(items):
            raise ValueError(f"Two tools are named {clash[0] if isinstance(clash, list) else 'alike'!r}")
        for tool in items: self.tools[tool.name] = tool
        if isinstance(t, Toolbox) and not group:  # another toolbox's tools keep their groups
            self.groups.update((x.name, t.groups[x.name]) for x in items if x.name in t.groups)
            self.group_docs.update(t.group_docs)
        if group:
            self.groups.update(dict.fromkeys((x.name for x in items), group))
            if doc: self.group_docs[group] = doc
        return self

    def __getitem__(self, nm: str) -> Tool: return self.tools[nm]
    def __iter__(self): return iter(self.tools.values())
    def __len__(self): return len(self.tools)
    def __repr__(self): return f"Toolbox({list(self.tools)})"

    def namespace(self) -> dict:
        "The tools by name, and by the names a provider knows them by (`definitions(rename=True)`): what `call_func` resolves in"
        return {**{a: self.tools[nm] for a, nm in self.aliases.items() if nm in self.tools}, **self.tools}

    def instructions(self) -> str:
        "A system-prompt block of the tools' `instructions=` (how to use them, beyond their definitions); '' when none has any"
        parts = [f"- {t.name}: " + '\n  '.join(t.instructions.strip().splitlines()) for t in self if t.instructions and t.instructions.strip()]
        return 'How to use the tools:\n' + '\n'.join(parts) if parts else ''

    def definitions(
        self,
        fmt: str='openai',         # 'openai', 'responses', 'anthropic', 'gemini', 'mcp' or 'canonical'
        strict: bool | None=None,  # strict mode (OpenAI, Anthropic) for all (default: each tool's own `strict`)
        rename: bool=False,        # rewrite names the provider rejects; `call` finds them by those names
        report=None,               # a `providers.Report` to fill, 'raise' on a lossy change, or None to warn
    ) -> list:                     # the definitions, ready for the SDK call
        "All tools for provider `fmt` ('openai', 'responses', 'anthropic', 'gemini', 'mcp', 'canonical'), ready for the SDK call"
        return self._definitions(list(self), fmt, strict, rename, report)

    def _definitions(self, tools: list, fmt: str, strict, rename: bool, report) -> list:
        if not (report is None or report == 'raise' or isinstance(report, providers.Report)):
            raise TypeError(f"report must be a Report, 'raise' or None, not {report!r}")
        rep = report if isinstance(report, providers.Report) else providers.Report()
        res = _render(tools, fmt, strict, rename, rep)
        self.aliases.update(rep.names)  # the names the provider knows the tools by: the model will call them so
        if report == 'raise': rep.check()
        elif report is None and rep.lost: warnings.warn('\n'.join(map(str, rep.lost)), providers.ProviderWarning, stacklevel=3)
        return res

    def schemas(self) -> list[dict]:
        "The canonical schemas of all tools"
        return [t.schema for t in self]

    def as_json(self, indent: int=2) -> str:
        "The tool definitions as JSON text, for prompt-based calling"
        return json.dumps(self.schemas(), indent=indent, ensure_ascii=False)

    def as_yaml(self) -> str:
        "The tool definitions as YAML text, for prompt-based calling (needs the `yaml` extra)"
        try: import yaml
        except ImportError: raise ImportError("as_yaml needs PyYAML: pip install 'funccall[yaml]'") from None
        return yaml.safe_dump(self.schemas(), sort_keys=False, allow_unicode=True)

    def _not_found(self, name, args, call_id) -> ToolResult:
        tr = _trace.start(str(name), call_id, '', self._opts.trace_content)  # a refused call is traced too
        e = ToolNotFound(name if isinstance(name, str) else repr(name), list(self.tools))
        r = ToolResult(str(name), args if isinstance(args, dict) else {}, 'failure', error=error_text(e), call_id=call_id,
                       failure='name', exception=e)
        _trace.end(tr, r)
        return r

    def _seen(self, r: ToolResult) -> ToolResult:
        if self.on_result is not None: self.on_result(r)
        return r

    def _injected(self, injected) -> dict: return {**self.injected, **injected} if injected else self.injected

    def _tool(self, name) -> Tool | None:
        if not isinstance(name, str): return None
        return self.tools.get(name) or self.tools.get(self.aliases.get(name))

    def answer_items(
        self,
        items: list,  # the items of a Responses output (SDK objects or dicts)
    ) -> list[dict]:  # the items answering them, put before the answers to the function calls
        "Answers to the provider-run items a wrapping toolbox runs itself (`search.DeferredToolbox`: client tool searches); none here"
        return []

    def call(
        self,
        name: str,             # the tool's name, as the model sent it
        args=None,             # its arguments: a dict or JSON text
        call_id: str=None,     # the provider's id of this call, kept in the result
        injected: dict=None,   # values for injected parameters, for this call (over the toolbox's)
    ) -> ToolResult:
        "Run tool `name` (its name here, or the one a provider knows it by) with the model's arguments (a dict or JSON text)"
        t = self._tool(name)
        return self._seen(t._exec(args, self._injected(injected), call_id, self._opts) if t else self._not_found(name, args, call_id))

    async def acall(
        self,
        name: str,             # the tool's name, as the model sent it
        args=None,             # its arguments: a dict or JSON text
        call_id: str=None,     # the provider's id of this call, kept in the result
        injected: dict=None,   # values for injected parameters, for this call (over the toolbox's)
    ) -> ToolResult:
        "Run tool `name` asynchronously"
        return self._seen(await self._acall(name, args, call_id, injected))

    async def _acall(self, name, args, call_id, injected, approved: bool | None=None) -> ToolResult:
        t = self._tool(name)
        if t is None: return self._not_found(name, args, call_id)
        return await t._run(args, self._injected(injected), call_id, t.confirm, False, self._opts, approved)

    def _pending(self, result) -> ToolResult:
        r = result if isinstance(result, ToolResult) else ToolResult.from_dict(result)
        if r.status != 'pending': raise ValueError(f"Only a pending result can be resumed; the call of {r.name!r} is already {r.status!r}")
        return r

    def resume(
        self,
        result,                  # a pending `ToolResult`, or its `to_dict()` data (read back from JSON)
        approve: bool=True,      # the user's answer: run the call, or decline it
        arguments: dict=None,    # the arguments as the user edited them (checked again), instead of the model's
        injected: dict=None,     # values for injected parameters, for this call (over the toolbox's)
    ) -> ToolResult:             # the answer to the original call (its `call_id`)
        "Run or decline a call that waited for the user's approval (its `status` was 'pending')"
        return run_sync(self.aresume(self._pending(result), approve, arguments, injected), 'await toolbox.aresume(...)', 'Toolbox.resume')

    async def aresume(
        self,
        result,                  # a pending `ToolResult`, or its `to_dict()` data
        approve: bool=True,      # run the call, or decline it
        arguments: dict=None,    # the arguments as the user edited them (checked again)
        injected: dict=None,     # values for injected parameters, for this call
    ) -> ToolResult:             # the answer to the original call
        "`resume` for async code"
        r = self._pending(result)
        args = r.arguments if arguments is None else arguments
        return self._seen(await self._acall(r.name, args, r.call_id, injected, approved=bool(approve)))

    def _expr_calls(self, text: str) -> list:
        "(tool name, arguments) for each call in a call expression, positional arguments named; an `ExprError` for a bad one"
        res = []
        for c in parse_calls(text, self.tools, self.context, errors='return'):
            if isinstance(c, ExprError): res.append(c); continue
            names = list(self.tools[c.name].schema['input_schema']['properties'])
            if len(c.args) > len(names): res.append(ExprError(f"Tool {c.name!r} takes at most {len(names)} arguments: {c.text}")); continue
            pos = dict(zip(names, c.args))
            if twice := [k for k in c.kwargs if k in pos]: res.append(ExprError(f"Argument {twice[0]!r} is given twice: {c.text}")); continue
            res.append((c.name, {**pos, **c.kwargs}))
        return res

    def _expr_failure(self, e: ExprError) -> ToolResult:
        return self._seen(ToolResult('', {}, 'failure', error=error_text(e), failure=_kind(e), exception=e))  # an unknown tool: 'name'

    def call_expr(
        self,
        text: str,             # the model's call expression(s)
        injected: dict=None,   # values for injected parameters, for these calls
    ) -> list[ToolResult]:     # one result per call, in order; a call that can't be parsed is a failure in its place
        "Run the call expression(s) a model wrote, e.g. `add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))`; one result each"
        try: calls = self._expr_calls(text)
        except ExprError as e: return [self._expr_failure(e)]
        return [self._expr_failure(c) if isinstance(c, ExprError) else self.call(*c, injected=injected) for c in calls]

    async def acall_expr(
        self,
        text: str,             # the model's call expression(s)
        injected: dict=None,   # values for injected parameters, for these calls
    ) -> list[ToolResult]:     # one result per call, in order
        "Run the call expression(s) concurrently"
        try: calls = self._expr_calls(text)
        except ExprError as e: return [self._expr_failure(e)]
        ok = [c for c in calls if not isinstance(c, ExprError)]
        done = iter(await self.abatch(ok, injected=injected))
        return [self._expr_failure(c) if isinstance(c, ExprError) else next(done) for c in calls]

    def _thread_jobs(self, calls: list, injected):
        """A batch of tools that run whole in worker threads (`Tool._threadable`), each call's pipeline in its thread, without
        an event loop: (the results, the refused names' filled in and seen first, as in the loop's way; for each call to run,
        its index, its call and its job); None when a call needs the loop's way (or a missing injected value is to be raised
        as it raises it)"""
        inj, todo = self._injected(injected), []
        for c in calls:
            name, args, call_id = (*c, None)[:3]
            if (t := self._tool(name)) is not None and not t._threadable(): return None
            if t is not None and t.inject and any(k not in inj for k in t.inject): return None
            todo.append((t, name, args, call_id))
        res = [self._not_found(nm, args, cid) if t is None else None for t, nm, args, cid in todo]
        for r in res:
            if r is not None: self._seen(r)
        opts = self._opts
        def job(t, args, call_id): return lambda: _drive(t._run(args, inj, call_id, t.confirm, _THREAD, opts))
        return res, [(i, todo[i][1:], job(todo[i][0], *todo[i][2:])) for i, r in enumerate(res) if r is None]

    def _in_threads(self, calls: list, max_concurrency: int | None, injected) -> list[ToolResult] | None:
        "`_thread_jobs` run from sync code, at most `max_concurrency` at once; None when a call needs `abatch`"
        if (plan := self._thread_jobs(calls, injected)) is None: return None
        res, jobs = plan
        for j, f in in_threads([fn for _, _, fn in jobs], max_concurrency or self.max_concurrency):
            i, c = jobs[j][:2]
            if (e := f.exception()) is None: res[i] = self._seen(f.result())
            elif isinstance(e, WorkersExhausted): res[i] = run_sync(self.acall(*c, injected))  # it never began: run as `abatch` runs it
            else: raise e  # escaped the pipeline (a `BaseException` of the tool's), as it escapes `abatch`
        return res

    async def _in_threads_async(self, calls: list, limit: int, injected) -> list[ToolResult] | None:
        "`_thread_jobs` run from a loop, at most `limit` at once (a turn of sync tools: the loop only hands calls over); None for the loop's way"
        if (plan := self._thread_jobs(calls, injected)) is None: return None
        res, jobs = plan
        async with contextlib.aclosing(in_threads_async([fn for _, _, fn in jobs], limit)) as ended:
            async for j, f in ended:
                i, c = jobs[j][:2]
                if (e := f.exception()) is None: res[i] = self._seen(f.result())
                elif isinstance(e, WorkersExhausted): res[i] = await self.acall(*c, injected)  # it never began: the loop's way fails it so
                else: raise e  # escaped the pipeline (a `BaseException` of the tool's), as it escapes the loop's way
        return res

    async def abatch(
        self,
        calls,                       # (name, args) pairs, or (name, args, call_id) triples
        max_concurrency: int=None,   # default: the toolbox's
        timeout: float=None,         # seconds per call; default: the toolbox's
        injected: dict=None,         # the application's values for injected parameters, for these calls
    ) -> list[ToolResult]:           # one result per call, in order
        """Run many tool calls concurrently: async tools awaited, sync tools in threads; one failure never loses the others.
        Without a deadline, a batch of sync tools with nothing around them that needs the loop (`Tool._threadable`) runs
        each call whole in its worker thread, and the loop only takes the results"""
        calls, limit = list(calls), max_concurrency or self.max_concurrency
        timeout = self.timeout if timeout is None else timeout
        if timeout is None and (res := await self._in_threads_async(calls, limit, injected)) is not None: return res
        return await self._gathered(calls, limit, timeout, injected)

    async def _gathered(self, calls: list, limit: int, timeout: float | None, injected) -> list[ToolResult]:
        "The loop's way of a batch: each call's pipeline a task on the loop, sync tools and sync middleware in worker threads"
        import asyncio  # (imported when first needed: not by `import funccall`)
        sem = asyncio.Semaphore(limit) if len(calls) > limit else contextlib.nullcontext()  # (all at once: nobody waits for a slot)
        async def one(c) -> ToolResult:
            name, args, call_id = (*c, None)[:3]
            async with sem:
                if timeout is None: return await self.acall(name, args, call_id, injected)  # what `wait_for` does without a deadline
                try: return await asyncio.wait_for(self.acall(name, args, call_id, injected), timeout)
                except asyncio.TimeoutError:  # a sync tool's thread can't be stopped: it finishes in the background
                    e = ToolTimeout(f"tool {name!r} did not finish within {timeout:g} s")
                    return self._seen(ToolResult(str(name), args if isinstance(args, dict) else {}, 'failure', call_id=call_id,
                                                 error=_error(e, _OPTS), failure='timeout', exception=e))
        return list(await asyncio.gather(*(one(c) for c in calls)))

    def batch(
        self,
        calls,                       # (name, args) pairs, or (name, args, call_id) triples
        max_concurrency: int=None,   # default: the toolbox's
        timeout: float=None,         # seconds per call; default: the toolbox's
        injected: dict=None,         # values for injected parameters, for these calls
    ) -> list[ToolResult]:           # one result per call, in order
        "`abatch` from sync code (sync tools with nothing around them run each call whole in a worker thread, without a loop)"
        calls = list(calls)
        if (self.timeout if timeout is None else timeout) is None and not loop_running():
            if len(calls) == 1:  # one call, no deadline, from sync code: nothing to run beside it, so no loop or thread either
                name, args, call_id = (*calls[0], None)[:3]
                return [self.call(name, args, call_id, injected)]
            if (res := self._in_threads(calls, max_concurrency, injected)) is not None: return res
        return run_sync(self.abatch(calls, max_concurrency, timeout, injected), 'await toolbox.abatch(...)', 'A batch')

def as_toolbox(
    tools,  # a `Toolbox`, or what `Toolbox` takes: a list of functions, `Tool`s and `ToolGroup`s, or one of them
) -> Toolbox:
    "`tools` as a `Toolbox`: itself when it is one"
    if isinstance(tools, Toolbox): return tools
    return Toolbox(tools if isinstance(tools, (list, tuple)) else [tools])
