"""Tool objects, tool groups and toolboxes: the agent loop around `call_func`.

A `Tool` wraps one callable. `execute`/`aexecute` never raise for a model's mistake or a tool's failure:
they return a `ToolResult` (status, value, error message for the model). Around the call, in this order:
injected parameters (left out of the schema, supplied by the application), confirmation, the pre-hook,
the cache, middleware wrapping the call, the post-hook. `StopRun` raised by a tool or hook is the one
exception that propagates: it is how a tool stops the agent loop.

A `ToolGroup` exposes the public methods of an object as tools named `group-method`, a form `resolve_nm`
maps back to `group.method`. A `Toolbox` holds tools and groups: definitions for any provider, calls by
name, call expressions, and batches of calls run concurrently.
"""
from __future__ import annotations

import asyncio, hashlib, inspect, json, os, re, time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from ._coerce import short
from ._json import jsonable
from .call import ToolInputError, ToolNotFound, _err_text, _inputs, _is_async, coerce_inputs
from .expr import parse_calls
from .schema import get_schema

__all__ = ['Tool', 'ToolResult', 'ToolGroup', 'Toolbox', 'StopRun', 'to_text', 'call_str']

class StopRun(Exception):
    "Raised by a tool or hook to stop the agent loop: `execute` re-raises it instead of reporting a failure"

def to_text(
    v,                      # a tool's result
    limit: int | None=None, # at most this many characters; longer text is cut, and says so
) -> str:                   # what the model reads
    "A tool result as text for the model: strings as they are, data as JSON, anything else as its `str`"
    if isinstance(v, str): s = v
    else:
        try: s = json.dumps(jsonable(v), ensure_ascii=False)
        except (TypeError, ValueError): s = str(v)
    if limit is not None and len(s) > limit:
        s = s[:limit] + f"\n[... cut: {limit} of {len(s)} characters shown]"
    return s

def call_str(
    name: str,   # the tool's name
    args: dict,  # its arguments
    width: int=200,  # at most this many characters
) -> str:        # `lookup(symbol='ACME', limit=3)`
    "A readable one-line call, for logs"
    s = f"{name}({', '.join(f'{k}={short(v, 60)}' for k, v in args.items())})"
    return s if len(s) <= width else s[:width - 4] + '...)'

@dataclass
class ToolResult:
    "What one tool call came to"
    name: str                                  # the tool's name
    arguments: dict                            # the arguments as the model sent them
    status: Literal['success', 'failure']
    value: Any = None                          # the tool's return value, on success
    error: str | None = None                   # the message for the model, on failure
    call_id: str | None = None                 # the provider's id for this call, to answer it
    cached: bool = False                       # whether the value came from the cache
    limit: int | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool: return self.status == 'success'

    @property
    def text(self) -> str:
        "What the model reads: the value as text, or the error message"
        return to_text(self.value, self.limit) if self.ok else self.error

# --- the cache ----------------------------------------------------------------------------------------

class _Cache:
    "Results by arguments for `ttl` seconds, in memory and, with `folder`, on disk as JSON"
    def __init__(self, ttl: float, folder: str | Path | None):
        self.ttl, self.mem, self.folder = ttl, {}, Path(folder) if folder else None

    def _path(self, key: str) -> Path: return self.folder / f'{key}.json'

    def get(self, key: str):
        hit = self.mem.get(key)
        if hit is not None and hit[0] > time.time(): return True, hit[1]
        if self.folder is not None and (p := self._path(key)).exists():
            try: expires, value = json.loads(p.read_text())
            except (OSError, ValueError): return False, None
            if expires > time.time():
                self.mem[key] = (expires, value)
                return True, value
        return False, None

    def put(self, key: str, value) -> None:
        expires = time.time() + self.ttl
        self.mem[key] = (expires, value)
        if self.folder is None: return
        try: data = json.dumps([expires, jsonable(value)])
        except (TypeError, ValueError): return  # only JSON values go to disk; the rest stays in memory
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self._path(key).with_suffix('.tmp')
        tmp.write_text(data)
        os.replace(tmp, self._path(key))

def _cache_key(name: str, args: dict) -> str:
    try: s = json.dumps(jsonable(args), sort_keys=True)
    except (TypeError, ValueError): s = repr(sorted(args.items(), key=lambda kv: kv[0]))
    return hashlib.sha256(f'{name}\0{s}'.encode()).hexdigest()[:32]

# --- tools --------------------------------------------------------------------------------------------

_name_re = re.compile(r'^[a-zA-Z0-9_-]{1,64}$')

class Tool:
    "One callable offered to a model, with what runs around each call"
    def __init__(
        self,
        fn: Callable,                        # the function, method, async function or callable object
        name: str | None=None,               # the tool's name (default: the function's)
        description: str | None=None,        # what the model reads (default: the docstring)
        strict: bool=False,                  # render in strict mode (OpenAI Structured Outputs)
        inject: tuple=(),                    # parameters the application supplies at call time, left out of the schema
        requires_confirmation: bool=False,   # ask `confirm` before each call
        confirm: Callable | None=None,       # `confirm(tool, args) -> bool`, may be async; a refusal is a failure result
        pre_hook: Callable | None=None,      # `pre_hook(tool, args)`: may return new args
        post_hook: Callable | None=None,     # `post_hook(tool, args, value)`: may return a new value
        middleware: tuple=(),                # each `mw(tool, args, call_next) -> value` wraps the call, outermost first
        cache_ttl: float | None=None,        # cache results by arguments for this many seconds
        cache_dir: str | Path | None=None,   # also keep cached results on disk, as JSON
        max_chars: int | None=None,          # cut the result text the model reads to this length
    ):
        self.fn, self.strict, self.inject = fn, strict, tuple(inject)
        self.requires_confirmation, self.confirm = requires_confirmation, confirm
        self.pre_hook, self.post_hook, self.middleware = pre_hook, post_hook, tuple(middleware)
        self.max_chars = max_chars
        gen = inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn)
        self._cache = _Cache(cache_ttl, cache_dir) if cache_ttl and not gen else None  # a generator's values can't be replayed
        s = get_schema(fn, evalable=True, name=name, **({'description': description} if description else {}))
        props, req = s['input_schema']['properties'], s['input_schema'].get('required', [])
        for nm in self.inject: props.pop(nm, None)
        if req: s['input_schema']['required'] = [r for r in req if r not in self.inject]
        self.schema = s  # the canonical schema, injected parameters left out
        self.name, self.description = s['name'], s['description']
        self._checker = _shadow(fn, self.inject, self.name) if self.inject else fn  # what the model's arguments are checked against

    @property
    def is_async(self) -> bool: return _is_async(self.fn)

    def name_ok(self, pattern: re.Pattern = _name_re) -> bool:
        "Whether the name meets OpenAI's and Anthropic's rule, `^[a-zA-Z0-9_-]{1,64}$`"
        return bool(pattern.match(self.name))

    def call_str(self, args: dict) -> str: return call_str(self.name, args)

    def __repr__(self): return f"Tool({self.name!r}{', async' if self.is_async else ''})"

    # -- running

    def _prepare(self, args, context: dict | None) -> tuple[dict, dict]:
        "The model's arguments as a dict, and the keyword arguments to call with (injected ones added)"
        args = _inputs(args)
        if given := [k for k in self.inject if k in args]:
            raise ToolInputError(f"Tool {self.name!r}: {', '.join(map(repr, given))} is supplied by the application, not by you")
        context = context or {}
        if missing := [k for k in self.inject if k not in context]:
            raise TypeError(f"Tool {self.name!r} needs {', '.join(map(repr, missing))} in the context passed to execute()")
        return args, {k: context[k] for k in self.inject}

    def _kwargs(self, args: dict, injected: dict) -> dict:
        kw = coerce_inputs(self._checker, args)
        return {**kw, **injected} if injected else kw

    def _result(self, args: dict, call_id, **kw) -> ToolResult:
        return ToolResult(self.name, args, call_id=call_id, limit=self.max_chars, **kw)

    def _failure(self, args, call_id, e: BaseException) -> ToolResult:
        msg = f"{type(e).__name__}: {e}" if isinstance(e, (ToolInputError, ToolNotFound)) else _err_text(e)
        return self._result(args if isinstance(args, dict) else {}, call_id, status='failure', error=msg)

    def execute(
        self,
        args=None,               # the model's arguments: a dict or JSON text
        context: dict=None,      # values for the injected parameters
        call_id: str=None,       # the provider's id of this call
    ) -> ToolResult:
        "Run the tool once, synchronously; a failure comes back as a result, never as an exception (but `StopRun`)"
        try:
            args, injected = self._prepare(args, context)
            if self.requires_confirmation and not _confirmed(self, args, sync=True):
                return self._result(args, call_id, status='failure', error=f"The user declined to run {self.call_str(args)}")
            if self.pre_hook is not None and (new := self.pre_hook(self, args)) is not None: args = new
            key = _cache_key(self.name, args) if self._cache else None
            if key is not None and (hit := self._cache.get(key))[0]:
                return self._result(args, call_id, status='success', value=hit[1], cached=True)
            kw = self._kwargs(args, injected)
            value = _chain(self, args, self.middleware, lambda: _run_sync(self.fn(**kw)))()
            if self.post_hook is not None and (new := self.post_hook(self, args, value)) is not None: value = new
            if key is not None: self._cache.put(key, value)
            return self._result(args, call_id, status='success', value=value)
        except StopRun: raise
        except Exception as e: return self._failure(args, call_id, e)

    async def aexecute(
        self,
        args=None,               # the model's arguments: a dict or JSON text
        context: dict=None,      # values for the injected parameters
        call_id: str=None,       # the provider's id of this call
        in_thread: bool=True,    # run a sync tool in a worker thread, so it never blocks the event loop
    ) -> ToolResult:
        "Run the tool once, asynchronously; hooks, `confirm` and middleware may be sync or async"
        try:
            args, injected = self._prepare(args, context)
            if self.requires_confirmation and not await _maybe_await(_confirmed(self, args, sync=False)):
                return self._result(args, call_id, status='failure', error=f"The user declined to run {self.call_str(args)}")
            if self.pre_hook is not None and (new := await _maybe_await(self.pre_hook(self, args))) is not None: args = new
            key = _cache_key(self.name, args) if self._cache else None
            if key is not None and (hit := self._cache.get(key))[0]:
                return self._result(args, call_id, status='success', value=hit[1], cached=True)
            kw = self._kwargs(args, injected)
            async def call():
                if self.is_async: return await self.fn(**kw)
                res = await asyncio.to_thread(_call, self.fn, kw) if in_thread else self.fn(**kw)
                return await res if inspect.isawaitable(res) else res
            value = await _achain(self, args, self.middleware, call)()
            if self.post_hook is not None and (new := await _maybe_await(self.post_hook(self, args, value))) is not None: value = new
            if key is not None: self._cache.put(key, value)
            return self._result(args, call_id, status='success', value=value)
        except StopRun: raise
        except Exception as e: return self._failure(args, call_id, e)

def _shadow(fn, inject: tuple, name: str):
    "`fn` as the model sees it, its injected parameters left out: what the model's arguments are checked against"
    sig = inspect.signature(fn)
    sig = sig.replace(parameters=[p for k, p in sig.parameters.items() if k not in inject])
    def shadow(**kw): raise NotImplementedError  # only checked against, never called
    shadow.__signature__, shadow.__name__ = sig, name
    shadow.__annotations__ = {k: p.annotation for k, p in sig.parameters.items() if p.annotation is not inspect.Parameter.empty}
    return shadow

def _call(fn, kw):
    "The last funccall frame in a worker thread, so failure reports show only the tool's frames"
    return fn(**kw)

def _run_sync(res):
    if inspect.isawaitable(res):
        try: asyncio.get_running_loop()
        except RuntimeError: return asyncio.run(_await(res))
        raise RuntimeError("An async tool was executed synchronously inside a running event loop; use `await tool.aexecute(...)`")
    return res

async def _await(aw): return await aw

async def _maybe_await(v): return await v if inspect.isawaitable(v) else v

def _confirmed(tool: Tool, args: dict, sync: bool):
    if tool.confirm is None: return False  # confirmation required and nobody to give it: refuse
    res = tool.confirm(tool, args)
    return _run_sync(res) if sync else res

def _chain(tool, args, mws, call):
    "`call` wrapped in the middleware, the first one outermost"
    def wrap(mw, nxt): return lambda: mw(tool, args, nxt)
    for mw in reversed(mws): call = wrap(mw, call)
    return call

def _achain(tool, args, mws, call):
    "`_chain` for async calls: each middleware may be sync or async, and gets an async `call_next`"
    def wrap(mw, nxt):
        async def wrapped(): return await _maybe_await(mw(tool, args, nxt))
        return wrapped
    for mw in reversed(mws): call = wrap(mw, call)
    return call

# --- groups and toolboxes -----------------------------------------------------------------------------

def _methods(obj) -> dict:
    "The public methods of `obj`, by name, in definition order"
    res = {}
    for klass in reversed(type(obj).__mro__[:-1]):
        for nm, v in vars(klass).items():
            if not nm.startswith('_') and (inspect.isfunction(v) or isinstance(v, (staticmethod, classmethod))): res[nm] = getattr(obj, nm)
    return res

class ToolGroup:
    "The public methods of an object as tools, named `prefix-method` (a name `resolve_nm` maps to `prefix.method`)"
    def __init__(
        self,
        obj,                        # an object, or a class (instantiated with no arguments)
        prefix: str | None=None,    # the group's name (default: the class name in lower case)
        include=None,               # only these methods
        exclude=(),                 # not these methods
        **tool_kw,                  # passed on to each `Tool` (inject, strict, hooks, caching...)
    ):
        if isinstance(obj, type): obj = obj()
        self.obj, self.prefix = obj, prefix or type(obj).__name__.lower()
        if not re.fullmatch(r'[a-zA-Z0-9_]+', self.prefix): raise ValueError(f"Group prefix {self.prefix!r} may use only letters, digits and _")
        ms = {k: m for k, m in _methods(obj).items() if (include is None or k in include) and k not in exclude}
        self.tools = {f'{self.prefix}-{k}': Tool(m, name=f'{self.prefix}-{k}', **tool_kw) for k, m in ms.items() if m.__doc__}

    def __repr__(self): return f"ToolGroup({self.prefix!r}, {list(self.tools)})"

class Toolbox:
    "Tools and tool groups offered to a model: their definitions, and running the calls it makes"
    def __init__(
        self,
        tools=(),                 # functions, `Tool`s and `ToolGroup`s
        context: dict=None,       # names call expressions may use (classes, constants) and injected values
        max_concurrency: int=8,   # how many calls of a batch run at once
        timeout: float | None=None,  # seconds a call of a batch may take
    ):
        self.tools, self.context, self.max_concurrency, self.timeout = {}, dict(context or {}), max_concurrency, timeout
        for t in tools: self.add(t)

    def add(self, t) -> Toolbox:
        "Add a function, `Tool` or `ToolGroup`"
        items = t.tools.values() if isinstance(t, ToolGroup) else [t if isinstance(t, Tool) else Tool(t)]
        for tool in items:
            if tool.name in self.tools: raise ValueError(f"Two tools are named {tool.name!r}")
            self.tools[tool.name] = tool
        return self

    def __getitem__(self, nm: str) -> Tool: return self.tools[nm]
    def __iter__(self): return iter(self.tools.values())
    def __len__(self): return len(self.tools)
    def __repr__(self): return f"Toolbox({list(self.tools)})"

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
        e = ToolNotFound(name if isinstance(name, str) else repr(name), list(self.tools))
        return ToolResult(str(name), args if isinstance(args, dict) else {}, 'failure', error=f"ToolNotFound: {e}", call_id=call_id)

    def call(self, name: str, args=None, call_id: str=None) -> ToolResult:
        "Run tool `name` with the model's arguments (a dict or JSON text)"
        t = self.tools.get(name) if isinstance(name, str) else None
        return t.execute(args, self.context, call_id) if t else self._not_found(name, args, call_id)

    async def acall(self, name: str, args=None, call_id: str=None) -> ToolResult:
        "Run tool `name` asynchronously"
        t = self.tools.get(name) if isinstance(name, str) else None
        return await t.aexecute(args, self.context, call_id) if t else self._not_found(name, args, call_id)

    def _expr_calls(self, text: str) -> list[tuple[str, dict]]:
        "(tool name, arguments) for each call in a call expression, positional arguments named"
        res = []
        for c in parse_calls(text, self.tools, self.context):
            names = [p for p in self.tools[c.name].schema['input_schema']['properties']]
            if len(c.args) > len(names): raise ToolInputError(f"Tool {c.name!r} takes at most {len(names)} arguments: {c.text}")
            res.append((c.name, {**dict(zip(names, c.args)), **c.kwargs}))
        return res

    def call_expr(self, text: str) -> list[ToolResult]:
        "Run the call expression(s) a model wrote, e.g. `add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))`"
        try: calls = self._expr_calls(text)
        except ToolInputError as e: return [ToolResult('', {}, 'failure', error=f"{type(e).__name__}: {e}")]
        return [self.call(nm, args) for nm, args in calls]

    async def acall_expr(self, text: str) -> list[ToolResult]:
        "Run the call expression(s) concurrently"
        try: calls = self._expr_calls(text)
        except ToolInputError as e: return [ToolResult('', {}, 'failure', error=f"{type(e).__name__}: {e}")]
        return await self.abatch(calls)

    async def abatch(
        self,
        calls,                       # (name, args) pairs, or (name, args, call_id) triples
        max_concurrency: int=None,   # default: the toolbox's
        timeout: float=None,         # seconds per call; default: the toolbox's
    ) -> list[ToolResult]:           # one result per call, in order
        "Run many tool calls concurrently: async tools awaited, sync tools in threads; one failure never loses the others"
        sem = asyncio.Semaphore(max_concurrency or self.max_concurrency)
        timeout = self.timeout if timeout is None else timeout
        async def one(c) -> ToolResult:
            name, args, call_id = (*c, None)[:3]
            async with sem:
                try: return await asyncio.wait_for(self.acall(name, args, call_id), timeout)
                except asyncio.TimeoutError:
                    return ToolResult(str(name), args if isinstance(args, dict) else {}, 'failure', call_id=call_id,
                                      error=f"TimeoutError: tool {name!r} did not finish within {timeout:g} s")
        return list(await asyncio.gather(*(one(c) for c in calls)))

    def batch(self, calls, max_concurrency: int=None, timeout: float=None) -> list[ToolResult]:
        "`abatch` from sync code"
        return _run_sync(self.abatch(calls, max_concurrency, timeout))
