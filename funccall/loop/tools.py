"""Tool objects, tool groups and toolboxes: what a model is offered, described, and its calls resolved by name.

A `Tool` describes one callable offered to a model: its schema, its definitions for each provider, and the options
of what runs around each call. `execute`/`aexecute` run it through the one pipeline (`funccall.loop.pipeline`: injected
values, hooks, confirmation, coercion, cache, middleware, timeout and retries, trace), and never raise for a model's
mistake or a tool's failure: they return a `ToolResult`.

A `ToolGroup` exposes the public methods of an object as tools named `group-method`, a form `resolve_nm`
maps back to `group.method`. A `Toolbox` holds tools and groups: definitions for any provider, calls by
name, call expressions, and batches of calls run concurrently.
"""
from __future__ import annotations

import inspect, json, re, warnings
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Union

from . import batches, pipeline
from .pipeline import Args, Hook, Middleware
from ..core._typing import JsonDict, ToolFn
from ..core import providers
from ..core._json import jsonable
from ..core._ns import Sealed, ToolHolder, public_methods
from ..core._types import Default, empty, is_callable_object, signature
from .results import MAX_RESULT_CHARS, ToolResult, call_str
from ..core._run import is_async, run_sync
from ..core._seal import Approvals
from ..core._warnings import caller_level
from ..core.expr import ExprError, parse_calls
from ..core.schema import SchemaError, get_schema

__all__ = ['Tool', 'ToolGroup', 'Toolbox', 'ToolLike', 'Tools', 'as_toolbox']

# --- tools --------------------------------------------------------------------------------------------

_name_re = re.compile(r'[a-zA-Z0-9_-]{1,64}')

def _names(x: str | Sequence[str]) -> tuple[str, ...]:
    "Parameter names given as one name or several: `inject='user_id'` is `inject=('user_id',)`, never its letters"
    return (x,) if isinstance(x, str) else tuple(x)

class Tool(Sealed):
    "One callable offered to a model, with what runs around each call (sealed: a model's name never reaches its attributes)"
    __funccall_named__ = True  # (`call.NAMED`) `call_func` calls it with the model's arguments by name: its own pipeline spreads them
    def __init__(
        self,
        fn: ToolFn,                          # the function, method, async function or callable object
        name: str | None=None,               # the tool's name (default: the function's; a callable object's class)
        description: str | None=None,        # what the model reads (default: the docstring)
        strict: bool=False,                  # render in strict mode (OpenAI Structured Outputs)
        inject: str | Sequence[str]=(),      # parameters the application supplies at call time, left out of the schema: a name or names
                                             #   (those annotated with one of `injected_types`, an `MCPContext`, are injected anyway)
        requires_confirmation: bool=False,   # ask `confirm` before each call
        confirm: Hook | None=None,           # `confirm(tool, args) -> bool`, may be async; a refusal is a failure result
        pre_hook: Hook | None=None,          # `pre_hook(tool, args)`: may return new args; may be async
        post_hook: Hook | None=None,         # `post_hook(tool, args, value)`: may return a new value; may be async
        middleware: Sequence[Middleware]=(),  # each `mw(tool, args, call_next)` wraps the call, first outermost; may be async
        cache_ttl: float | None=None,        # cache results by arguments for this many seconds
        cache_dir: str | Path | None=None,   # also keep cached results on disk, as JSON
        max_chars: int | None=MAX_RESULT_CHARS,  # cut the result text the model reads to this length (None: never cut it)
        instructions: str | None=None,       # how to use the tool, for the system prompt (not sent with the definition)
        stop_after: bool=False,              # the agent loop should stop after a call of this tool
        title: str | None=None,              # a human-readable name, for the MCP clients' user interfaces
        read_only: bool | None=None,         # hint: the tool changes nothing (MCP's `readOnlyHint`)
        destructive: bool | None=None,       # hint: the tool may delete or overwrite (MCP's `destructiveHint`)
        idempotent: bool | None=None,        # hint: calling it again with the same arguments changes nothing more (`idempotentHint`)
        open_world: bool | None=None,        # hint: the tool reaches outside systems such as the web (`openWorldHint`)
        timeout: float | None=None,          # seconds each run of the tool may take (a sync tool's thread runs on in the background)
        retries: int=0,                      # run again this many times after a failure of the tool (not of the model's call)
        retry_on: type[BaseException] | Sequence[type[BaseException]] | None=None,  # retry only these exception types (`TimeoutError`
                                             #   for timeouts); default: any failure of the tool or timeout, for tools declared
                                             #   idempotent or read-only only
        retry_delay: float=0.5,              # seconds before the first retry, doubling before each next one
        text_input: bool=False,              # free-form text in (OpenAI custom tools): the function's one `str` parameter takes it
        grammar: JsonDict | None=None,       # constrain that text: `{'syntax': 'lark' or 'regex', 'definition': ...}` (implies `text_input`)
        examples: list[JsonDict] | None=None,  # example arguments, checked against the schema (Anthropic's `input_examples`)
        provider_options: dict[str, JsonDict] | None=None,  # provider -> keys added to its definition, e.g. `{'anthropic': {'cache_control': {...}}}`
        icons: list[Any] | None=None,        # icons for MCP clients' user interfaces: `mcp_types.Icon`s or dicts (`src`, `mimeType`, `sizes`)
        fold: bool=False,                    # the one parameter, a pydantic model/TypedDict/dataclass: its fields are the tool's own
    ):
        if isinstance(fn, Sealed):  # its pipeline inside this one: its confirmation a pending text, its injected values never given
            raise TypeError(f"Tool of a {type(fn).__name__}: use the {type(fn).__name__} itself, or make the Tool from its function")
        self.fn: ToolFn = fn
        self.strict: bool = strict
        self.inject: tuple[str, ...] = _names(inject)
        self.requires_confirmation: bool = requires_confirmation
        self.confirm: Hook | None = confirm
        self.pre_hook: Hook | None = pre_hook
        self.post_hook: Hook | None = post_hook
        self.middleware: tuple[Middleware, ...] = tuple(middleware)
        self.max_chars: int | None = max_chars
        self.instructions: str | None = instructions
        self.stop_after: bool = stop_after
        self.title: str | None = title
        self.icons: list[Any] | None = icons
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if max_chars is not None and (type(max_chars) is not int or max_chars < 1):
            raise ValueError(f"max_chars must be a positive int (default {MAX_RESULT_CHARS:,}) or None for no bound, not {max_chars!r}")
        if type(retries) is not int or retries < 0: raise ValueError(f"retries must be a non-negative int, not {retries!r}")
        self.timeout: float | None = timeout
        self.retries: int = retries
        self.retry_delay: float = retry_delay
        self.retry_on: tuple[type[BaseException], ...] | None = (  # (a list or tuple of types, or one type: no other sequence)
            tuple(retry_on) if isinstance(retry_on, (list, tuple)) else (retry_on,) if retry_on else None)  # type: ignore[assignment]
        if retries and self.retry_on is None and not (idempotent or read_only):  # else `retries` would silently do nothing
            raise ValueError(f"retries={retries}: a retried call of a tool that may change things can do it twice; declare it "
                             "idempotent=True or read_only=True, or name the exceptions that are safe to retry with retry_on=")
        self.grammar: JsonDict | None = grammar
        self.text_input: bool = bool(text_input or grammar)
        self.provider_options: dict[str, JsonDict] = {k: dict(v) for k, v in (provider_options or {}).items()}  # read by the renderers
        self.hints: dict[str, bool] = {k: v for k, v in dict(read_only=read_only, destructive=destructive, idempotent=idempotent,
                                                             open_world=open_world).items() if v is not None}  # only what the developer said
        if name is None and is_callable_object(fn): name = type(fn).__name__  # not the reference's `__call__`
        if unknown := [k for k in self.inject if k not in inspect.signature(fn).parameters]:
            raise SchemaError(f"Tool {name or getattr(fn, '__name__', '?')!r} has no parameter {', '.join(map(repr, unknown))} to inject")
        # injected parameters are left out unread: their types are the application's (a database connection, a run context)
        desc: JsonDict = {'description': description} if description else {}
        s = get_schema(fn, evalable=True, name=name, inject=self.inject, fold=fold, **desc)
        self.schema: JsonDict = s  # the canonical schema, injected parameters left out
        sig = signature(fn, skip=self.inject)
        self.inject += tuple(k for k in sig.injected if k not in self.inject)  # annotated with one of `injected_types`: injected too
        ps = sig.params
        self.fold: str | None = next(p.name for p in ps if p.name not in self.inject) if fold else None  # the parameter the model's object builds
        # whether calling `fn` needs more than keywords: positional-only or `*args` by position, `**kwargs` spread, `Field` defaults
        spread = any(p.kind not in _BY_KEYWORD or type(p.default) is Default for p in ps)
        self.name: str = s['name']
        self.description: str = s['description']
        checker = _shadow(fn, self.inject, self.name) if self.inject else fn  # what the model's arguments are checked against
        self.is_async: bool = is_async(fn)
        # what `get_schema`, `mk_ns` and `call_func` read: the tool shows the face of its function, named as the tool
        self.__name__: str = self.name
        self.__doc__ = self.description
        self.__wrapped__: ToolFn = type(fn).__call__ if is_callable_object(fn) else fn  # where its annotations and comments are
        self.__signature__: inspect.Signature = inspect.signature(checker)
        gen = inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn)
        cache = pipeline.Cache(cache_ttl, cache_dir) if cache_ttl and not gen else None  # a generator's values can't be replayed
        self.plan: pipeline.Plan = pipeline.Plan(checker, spread, self._text_parameter() if self.text_input else None, cache,
                                  (confirm, pre_hook, post_hook, *self.middleware))  # how the pipeline runs its calls
        self.examples: list[JsonDict] = list(examples or [])
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
        from ..core._jsonschema import compile_schema  # (here: the validator imports the schema module; once per tool, never per call)
        v = compile_schema(jsonable(self.schema['input_schema']), where=f"Tool {self.name!r}")
        for i, ex in enumerate(self.examples):
            try: ok = v.is_valid(jsonable(ex))
            except TypeError: ok = False
            if not ok:
                why = '; '.join(map(str, v.problems(ex))) if isinstance(ex, dict) else 'not an object'
                raise SchemaError(f"Tool {self.name!r}: example {i} doesn't fit its schema ({why}): {ex!r:.100}")


    def name_ok(self, pattern: re.Pattern[str] = _name_re) -> bool:
        "Whether the name meets OpenAI's and Anthropic's rule, `^[a-zA-Z0-9_-]{1,64}$`"
        return bool(pattern.fullmatch(self.name))

    def definition(
        self,
        fmt: str='openai',         # 'openai', 'responses', 'anthropic', 'gemini', 'mcp' or 'canonical'
        strict: bool | None=None,  # OpenAI strict mode (default: this tool's `strict`)
        rename: bool=False,        # rewrite a name the provider rejects (the toolbox maps it back)
        report: providers.Report | Literal['raise'] | None=None,  # a `providers.Report` to fill, 'raise' on a lossy change, or None to warn
    ) -> JsonDict:                 # the definition, ready for the SDK call
        "The tool for provider `fmt`: 'openai', 'responses', 'anthropic', 'gemini', 'mcp' (see `funccall.core.providers`)"
        return _render([self], fmt, strict, rename, report)[0]

    def to_dict(self) -> JsonDict:
        "The model-facing definition and the flags an agent loop reads"
        return {**self.schema, 'strict': self.strict, 'requires_confirmation': self.requires_confirmation, 'stop_after': self.stop_after,
                **({'title': self.title} if self.title else {}), **self.hints}

    def call_str(self, args: JsonDict) -> str: return call_str(self.name, args)

    def __call__(self, args: Args=None, /, **kw: Any) -> str:
        "Run with the model's arguments (a dict or JSON text, or as keywords) and give what the model reads back: JSON in, text out"
        return self.execute(kw if args is None and kw else args).text

    def __repr__(self) -> str: return f"Tool({self.name!r}{', async' if self.is_async else ''})"

    # -- running: through the one pipeline (`funccall.loop.pipeline`)

    def execute(
        self,
        args: Args=None,         # the model's arguments: a dict or JSON text
        injected: JsonDict | None=None,  # the application's values for the injected parameters
        call_id: str | None=None,  # the provider's id of this call
    ) -> ToolResult:
        """Run the tool once, synchronously; a failure comes back as a result, never as an exception (but a missing injected
        value). Inside a running event loop, what needs a loop (an async tool, a timeout) runs on a loop of its own in a
        thread of its own while this waits (`core._run.run_sync`); `await aexecute(...)` keeps it on yours"""
        return pipeline.execute(self, args, injected, call_id)

    async def aexecute(
        self,
        args: Args=None,         # the model's arguments: a dict or JSON text
        injected: JsonDict | None=None,  # the application's values for the injected parameters
        call_id: str | None=None,  # the provider's id of this call
        in_thread: bool=True,    # run a sync tool (and sync middleware) in a worker thread, so it never blocks the loop
        confirm: Hook | None=None,  # ask this instead of the tool's own `confirm` (the MCP server asks the client's user)
    ) -> ToolResult:
        "Run the tool once, asynchronously; hooks, `confirm` and middleware may be sync or async"
        return await pipeline.run(self, args, injected, call_id, self.confirm if confirm is None else confirm, inline=not in_thread)

_BY_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)  # parameters a call by keyword fills

def _shadow(fn: ToolFn, inject: tuple[str, ...], name: str) -> ToolFn:
    "`fn` as the model sees it, its injected parameters left out: what the model's arguments are checked against"
    P = inspect.Parameter
    ps = [P(p.name, p.kind, default=p.default, annotation=p.anno if p.anno is not empty else P.empty)
          for p in signature(fn, skip=inject).params if p.name not in inject]  # annotations resolved in `fn`'s own module
    def shadow(**kw: Any) -> Any: raise NotImplementedError  # only checked against, never called
    shadow.__signature__, shadow.__name__ = inspect.Signature(ps), name  # type: ignore[attr-defined]  # (what `inspect.signature` reads)
    shadow.__annotations__ = {p.name: p.annotation for p in ps if p.annotation is not P.empty}
    return shadow

def _sendable(tools: list[Tool], fmt: str, renamed: bool, rep: providers.Report) -> list[Tool]:
    """The tools whose names can go to provider `fmt`; each left out is a lossy change in `rep` (a warning), so one bad
    name (a hostile server's) costs only its tool: a name that isn't printable always, one the provider rejects unless
    `renamed` (rename=True renames it; report='raise' raises for it)"""
    p = providers.provider_name(fmt, (*providers.RENDERERS, 'canonical'))
    def why(t: Tool) -> str | None:
        if (w := providers.unsendable(t.name)) is not None: return w
        if p == 'canonical' or renamed or providers.valid_name(t.name, p): return None
        return f"{p} takes no tool named so: pass rename=True to send it renamed"
    out = []
    for t in tools:
        if (w := why(t)) is None: out.append(t)
        else: rep.changes.append(providers.Change(t.name, '', f"left out of the definitions: {w}", True))
    return out

def _render(tools: list[Tool], fmt: str, strict: bool | None, rename: bool, report: providers.Report | Literal['raise'] | None
            ) -> list[JsonDict]:
    "Definitions of `tools` for provider `fmt`, each in its own strict mode unless `strict` says otherwise"
    fmt = providers.provider_name(fmt, (*providers.RENDERERS, 'canonical'))
    if fmt == 'canonical': return [t.schema for t in tools]
    render: Callable[..., list[JsonDict]] = providers.RENDERERS[fmt]  # (the renderers' signatures differ: 'mcp' takes no `strict`)
    if fmt == 'mcp':
        if strict: warnings.warn("strict=True changes nothing for MCP tool definitions, which have no strict mode: each call's "
                                 "arguments are still checked against the schema when it runs", providers.ProviderWarning, stacklevel=caller_level())
        return render(tools, rename=rename, report=report)
    # one call for the whole list: the renderers read each `Tool`'s own `strict` when `strict` is None, and Claude's
    # request-wide limits on strict tools are checked over all of them
    return render(tools, strict=strict, rename=rename, report=report)

# --- groups and toolboxes -----------------------------------------------------------------------------

class ToolGroup(ToolHolder):
    "The public methods of an object as tools, named `prefix-method` (a name `resolve_nm` maps to `prefix.method`)"
    def __init__(
        self,
        obj: Any,                   # an object, or a class (instantiated with no arguments)
        prefix: str | None=None,    # the group's name (default: the class name in lower case)
        include: Collection[str] | None=None,  # only these methods
        exclude: Collection[str]=(),  # not these methods
        inject: str | Sequence[str]=(),  # parameters the application supplies, in the methods that have them
        **tool_kw: Any,             # passed on to each `Tool` (strict, hooks, caching...)
    ):
        if isinstance(obj, type): obj = obj()
        if isinstance(obj, Sealed):  # its methods would hand the model the machinery: `execute` skips confirmation, `call` takes `injected`
            kind = type(obj).__name__
            raise TypeError(f"A ToolGroup of a {kind} would offer the {kind}'s own methods as tools; add the {kind} itself to a Toolbox")
        self.obj: Any = obj
        self.prefix: str = prefix or type(obj).__name__.lower()
        if not re.fullmatch(r'[a-zA-Z0-9_]+', self.prefix): raise ValueError(f"Group prefix {self.prefix!r} may use only letters, digits and _")
        ms = public_methods(obj)
        if include is not None and (unknown := set(include) - set(ms)):
            raise ValueError(f"{type(obj).__name__} has no public method {sorted(unknown)}")
        ms = {k: m for k, m in ms.items() if (include is None or k in include) and k not in exclude}
        self.skipped: list[str] = [k for k, m in ms.items() if not m.__doc__]  # a tool without a description is no use to a model
        self.tools: dict[str, Tool] = {}  # the tools by name, `prefix-method`
        for k, m in ms.items():
            if k in self.skipped: continue
            own = tuple(p for p in _names(inject) if p in inspect.signature(m).parameters)
            self.tools[f'{self.prefix}-{k}'] = Tool(m, name=f'{self.prefix}-{k}', inject=own, **tool_kw)

    def __repr__(self) -> str: return f"ToolGroup({self.prefix!r}, {list(self.tools)})"

    def call(
        self,
        name: str,             # the tool's name, as the model sent it: one of `tools`, exactly
        args: Args=None,       # its arguments: a dict or JSON text
        call_id: str | None=None, # the provider's id of this call, kept in the result
        injected: JsonDict | None=None, # values for injected parameters, for this call
    ) -> ToolResult:
        "Run the group's tool `name` through its pipeline, as a `Toolbox` holding this group runs it"
        return Toolbox([self]).call(name, args, call_id, injected)

    async def acall(
        self,
        name: str,             # the tool's name, as the model sent it
        args: Args=None,       # its arguments: a dict or JSON text
        call_id: str | None=None, # the provider's id of this call
        injected: JsonDict | None=None, # values for injected parameters, for this call
    ) -> ToolResult:
        "`call` for async code"
        return await Toolbox([self]).acall(name, args, call_id, injected)

class Toolbox(ToolHolder):
    "Tools and tool groups offered to a model: their definitions, and running the calls it makes"
    def __init__(
        self,
        tools: Iterable[ToolLike | Sequence[ToolLike] | Mapping[str, ToolLike]]=(),  # functions, `Tool`s, `ToolGroup`s and `Toolbox`es
        context: Mapping[str, Any] | None=None,  # names call expressions may use: classes, constants, dotted keys like 'np.array'
        injected: JsonDict | None=None,  # the application's values for injected parameters (a call may add its own)
        max_concurrency: int=8,      # how many calls of a batch run at once
        timeout: float | None=None,  # seconds a call of a batch may take
        on_result: Callable[[ToolResult], Any] | None=None,  # `on_result(result)` sees every call's result: run, refused, timed out, pending, resumed
        errors: Literal['message', 'traceback']='message',  # what the model reads of a tool's exception: type and message, or its frames too
        trace_content: bool=False,   # put arguments and results in the trace (OpenTelemetry spans and the `funccall` logger)
        secret: str | bytes | None=None,  # seals pending calls' records (`resume`): share it with processes resuming this one's (default: random)
        pending_ttl: float=86_400,   # seconds a pending call stays answerable by `resume`
    ):
        self.tools: dict[str, Tool] = {}  # the tools by name
        self.context: dict[str, Any] = dict(context or {})
        self.injected: JsonDict = dict(injected or {})
        self.aliases: dict[str, str] = {}  # name a provider knows a tool by -> its name here, filled by `definitions(rename=True)`
        self.max_concurrency: int = max_concurrency
        self.timeout: float | None = timeout
        self.on_result: Callable[[ToolResult], Any] | None = on_result
        if errors not in ('message', 'traceback'): raise ValueError(f"errors must be 'message' or 'traceback', not {errors!r}")
        self._opts = pipeline.Opts(errors == 'traceback', trace_content, Approvals(secret, pending_ttl))
        self.groups: dict[str, str] = {}      # tool name -> the group or MCP server it belongs to (for search, and OpenAI's namespaces)
        self.group_docs: dict[str, str] = {}  # group -> what its tools are for
        for t in tools: self.add(t)

    def add(
        self,
        t: ToolLike | Sequence[ToolLike] | Mapping[str, ToolLike],  # a function, `Tool`, `ToolGroup`, `Toolbox`, or a list or dict of them
                              #   (an `MCPClient`'s `tools()`)
        group: str | None=None,  # the group they belong to (a `ToolGroup`'s is its prefix): an MCP server's name, say
        doc: str | None=None,    # what the group's tools are for
    ) -> Toolbox:
        "Add a function, `Tool`, `ToolGroup`, the tools of another `Toolbox`, or several"
        if isinstance(t, (list, tuple, dict)):
            for x in (t.values() if isinstance(t, dict) else t): self.add(x, group, doc)
            return self
        if isinstance(t, ToolGroup): group, doc = group or t.prefix, doc or type(t.obj).__doc__
        # (a `Sequence` or `Mapping` other than a list, tuple or dict is no tool: `Tool` refuses it)
        items = list(t.tools.values()) if isinstance(t, ToolHolder) else [t if isinstance(t, Tool) else Tool(t)]  # type: ignore[arg-type]
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
    def __iter__(self) -> Iterator[Tool]: return iter(self.tools.values())
    def __len__(self) -> int: return len(self.tools)
    def __repr__(self) -> str: return f"Toolbox({list(self.tools)})"

    def namespace(self) -> dict[str, Tool]:
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
        report: providers.Report | Literal['raise'] | None=None,  # a `providers.Report` to fill, 'raise' on a lossy change, or None to warn
    ) -> list[JsonDict]:           # the definitions, ready for the SDK call
        "All tools for provider `fmt` ('openai', 'responses', 'anthropic', 'gemini', 'mcp', 'canonical'), ready for the SDK call"
        return self._definitions(list(self), fmt, strict, rename, report)

    def _definitions(self, tools: list[Tool], fmt: str, strict: bool | None, rename: bool,
                     report: providers.Report | Literal['raise'] | None) -> list[JsonDict]:
        if not (report is None or report == 'raise' or isinstance(report, providers.Report)):
            raise TypeError(f"report must be a Report, 'raise' or None, not {report!r}")
        rep = report if isinstance(report, providers.Report) else providers.Report()
        tools = _sendable(tools, fmt, rename or report == 'raise', rep)
        res = _render(tools, fmt, strict, rename, rep)
        self.aliases.update(rep.names)  # the names the provider knows the tools by: the model will call them so
        if report == 'raise': rep.check()
        elif report is None and rep.lost: warnings.warn('\n'.join(map(str, rep.lost)), providers.ProviderWarning, stacklevel=caller_level())
        return res

    def schemas(self) -> list[JsonDict]:
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

    def _seen(self, r: ToolResult) -> ToolResult:
        if self.on_result is not None: self.on_result(r)
        return r

    def _injected(self, injected: JsonDict | None) -> JsonDict: return {**self.injected, **injected} if injected else self.injected

    def _tool(self, name: Any) -> Tool | None:
        if not isinstance(name, str): return None
        return self.tools.get(name) or self.tools.get(self.aliases.get(name))  # type: ignore[arg-type]  # (None finds no tool)

    def answer_items(
        self,
        items: list[Any],  # the items of a Responses output (SDK objects or dicts)
    ) -> list[JsonDict]:  # the items answering them, put before the answers to the function calls
        "Answers to the provider-run items a wrapping toolbox runs itself (`search.DeferredToolbox`: client tool searches); none here"
        return []

    def call(
        self,
        name: str,             # the tool's name, as the model sent it
        args: Args=None,       # its arguments: a dict or JSON text
        call_id: str | None=None,  # the provider's id of this call, kept in the result
        injected: JsonDict | None=None,  # values for injected parameters, for this call (over the toolbox's)
    ) -> ToolResult:
        """Run tool `name` (its name here, or the one a provider knows it by) with the model's arguments (a dict or JSON
        text); inside a running event loop as `Tool.execute` runs there (`await acall(...)` keeps the call on your loop)"""
        if (t := self._tool(name)) is None: return self._seen(pipeline.not_found(name, args, call_id, self.tools, self._opts))
        return self._seen(pipeline.execute(t, args, self._injected(injected), call_id, self._opts))

    async def acall(
        self,
        name: str,             # the tool's name, as the model sent it
        args: Args=None,       # its arguments: a dict or JSON text
        call_id: str | None=None,  # the provider's id of this call, kept in the result
        injected: JsonDict | None=None,  # values for injected parameters, for this call (over the toolbox's)
    ) -> ToolResult:
        "Run tool `name` asynchronously"
        b = self._batch([(name, args, call_id)], injected)
        return await b.acall(b.calls[0])

    def resume(
        self,
        result: ToolResult | JsonDict,  # a pending `ToolResult`, or its `to_dict()` data (read back from JSON)
        approve: bool=True,      # the user's answer: run the call, or decline it
        arguments: JsonDict | None=None,  # the arguments as the user edited them (checked again), instead of the model's
        injected: JsonDict | None=None,  # values for injected parameters, for this call (over the toolbox's)
    ) -> ToolResult:             # the answer to the original call (its `call_id`)
        """Run or decline a call that waited for the user's approval (its `status` was 'pending'): a `SealError` (a
        `ValueError`) for a record this toolbox didn't make (another `secret`), changed since (tool, arguments, call id,
        injected values), expired (`pending_ttl`), or approved before: an approved record runs once"""
        return run_sync(self.aresume(pipeline.pending(result), approve, arguments, injected))

    async def aresume(
        self,
        result: ToolResult | JsonDict,  # a pending `ToolResult`, or its `to_dict()` data
        approve: bool=True,      # run the call, or decline it
        arguments: JsonDict | None=None,  # the arguments as the user edited them (checked again)
        injected: JsonDict | None=None,  # values for injected parameters, for this call
    ) -> ToolResult:             # the answer to the original call
        "`resume` for async code"
        r = pipeline.pending(result)
        pipeline.unseal(r, self._tool(r.name), self._injected(injected), self._opts, bool(approve))
        b = self._batch([(r.name, r.arguments if arguments is None else arguments, r.call_id)], injected)
        return await b.acall(b.calls[0], approved=bool(approve))

    def _expr_calls(self, text: str) -> list[ExprError | tuple[str, JsonDict]]:
        "(tool name, arguments) for each call in a call expression, positional arguments named; an `ExprError` for a bad one"
        res: list[ExprError | tuple[str, JsonDict]] = []
        for c in parse_calls(text, self.tools, self.context, errors='return'):
            if isinstance(c, ExprError): res.append(c); continue
            names = list(self.tools[c.name].schema['input_schema']['properties'])
            if len(c.args) > len(names): res.append(ExprError(f"Tool {c.name!r} takes at most {len(names)} arguments: {c.text}")); continue
            pos = dict(zip(names, c.args))
            if twice := [k for k in c.kwargs if k in pos]: res.append(ExprError(f"Argument {twice[0]!r} is given twice: {c.text}")); continue
            res.append((c.name, {**pos, **c.kwargs}))
        return res

    def _expr_failure(self, e: ExprError) -> ToolResult:
        return self._seen(pipeline.refused(e, '', {}, None, self._opts))  # an unknown tool's kind is 'name', as `failure_kind` says

    def call_expr(
        self,
        text: str,             # the model's call expression(s)
        injected: JsonDict | None=None,  # values for injected parameters, for these calls
    ) -> list[ToolResult]:     # one result per call, in order; a call that can't be parsed is a failure in its place
        "Run the call expression(s) a model wrote, e.g. `add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))`; one result each"
        try: calls = self._expr_calls(text)
        except ExprError as e: return [self._expr_failure(e)]
        return [self._expr_failure(c) if isinstance(c, ExprError) else self.call(*c, injected=injected) for c in calls]

    async def acall_expr(
        self,
        text: str,             # the model's call expression(s)
        injected: JsonDict | None=None,  # values for injected parameters, for these calls
    ) -> list[ToolResult]:     # one result per call, in order
        "Run the call expression(s) concurrently"
        try: calls = self._expr_calls(text)
        except ExprError as e: return [self._expr_failure(e)]
        ok = [c for c in calls if not isinstance(c, ExprError)]
        done = iter(await self.abatch(ok, injected=injected))
        return [self._expr_failure(c) if isinstance(c, ExprError) else next(done) for c in calls]

    def _batch(self, calls: Iterable[Sequence[Any]], injected: JsonDict | None) -> batches.Batch:
        "The calls, each with the tool its name resolves to (None for an unknown name), and what they run with"
        resolved: list[batches.Call] = [(self._tool(name), name, args, call_id) for name, args, call_id in ((*c, None)[:3] for c in calls)]
        return batches.Batch(resolved, self.tools, self._injected(injected), self._opts, self.on_result)

    async def abatch(
        self,
        calls: Iterable[Sequence[Any]],  # (name, args) pairs, or (name, args, call_id) triples
        max_concurrency: int | None=None,  # default: the toolbox's
        timeout: float | None=None,  # seconds per call; default: the toolbox's
        injected: JsonDict | None=None,  # the application's values for injected parameters, for these calls
    ) -> list[ToolResult]:           # one result per call, in order
        """Run many tool calls concurrently: async tools awaited, sync tools in threads; one failure never loses the others.
        Without a deadline, a batch of sync tools with nothing around them that needs the loop (`pipeline.threadable`) runs
        each call whole in its worker thread, and the loop only takes the results"""
        timeout = self.timeout if timeout is None else timeout
        return await batches.abatch(self._batch(calls, injected), max_concurrency or self.max_concurrency, timeout)

    def batch(
        self,
        calls: Iterable[Sequence[Any]],  # (name, args) pairs, or (name, args, call_id) triples
        max_concurrency: int | None=None,  # default: the toolbox's
        timeout: float | None=None,  # seconds per call; default: the toolbox's
        injected: JsonDict | None=None,  # values for injected parameters, for these calls
    ) -> list[ToolResult]:           # one result per call, in order
        "`abatch` from sync code (sync tools with nothing around them run each call whole in a worker thread, without a loop)"
        timeout = self.timeout if timeout is None else timeout
        return batches.batch(self._batch(calls, injected), max_concurrency or self.max_concurrency, timeout)

def as_toolbox(
    tools: Tools,  # a `Toolbox`, or what `Toolbox` takes: a list of functions, `Tool`s and `ToolGroup`s, or one of them
) -> Toolbox:
    "`tools` as a `Toolbox`: itself when it is one"
    if isinstance(tools, Toolbox): return tools
    return Toolbox(tools if isinstance(tools, (list, tuple)) else [tools])

# What a toolbox is made of, and what `as_toolbox` (so `run_tool_calls`) takes: a `Tool` is a callable too, named for the reader
ToolLike = Union[Tool, ToolGroup, Toolbox, ToolHolder, ToolFn]  # a function (or any callable), a `Tool`, or what holds tools
Tools = Union[ToolLike, Sequence[ToolLike], Mapping[str, ToolLike]]  # one of them, a list or tuple of them, or a dict of them by name

if TYPE_CHECKING:  # a `Tool` is what the pipeline reads of a tool (`pipeline.PipelineTool`), checked by pyright and mypy
    def _runs_in_pipeline(t: Tool) -> pipeline.PipelineTool: return t
