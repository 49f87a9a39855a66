"""Code mode: the model writes a Python program against the toolset, instead of one tool call per turn.

`code_api(box)` is the toolset as Python source a model reads: a stub per tool, its typed signature rebuilt from
the tool's schema (`schema2sig`), a `TypedDict` for each object parameter, its description and parameters'
descriptions as the docstring, its return type from the function's return annotation or the MCP server's
`outputSchema`. `code_tool(box)` is the `run_code(code)` tool that runs such a program with every tool bound as a
function; each call the program makes is a `Toolbox.call`, so it goes through the toolbox's one pipeline (argument
checks, injected values, hooks, confirmation, cache, timeouts, traces). An injected value the toolbox doesn't hold
becomes an injected parameter of `run_code` itself, so each request supplies it (`run_tool_calls(..., injected=)`).
A failed call raises `ToolCallError` in the program, with the message the model would have read. The result is
what the program printed, then its last expression's value.

Where the program runs (`isolate=`); by default the safest place installed (`safest_mode`): 'monty' when
pydantic-monty is installed, else True. The application's own process is used only when asked for (`isolate=False`).
- `'monty'`: in pydantic-monty's sandbox (a subset of Python in Rust, run in a worker process: no file or network
  access, its own memory limit); tools are its external functions, run here. The deadline includes tool calls: the
  time is checked before each, each runs in a thread of its own for what is left of it (`_within`; one still running
  at the deadline is abandoned, its thread running on), a sleep waits here for what is left at most (`_sleep`: monty's
  own sleeps are capped at 10 s only), monty's own time limit stops the program's own work, and its
  worker process is killed `_MONTY_GRACE` after the deadline whatever it does (`_Watchdog`): monty's clock stops
  while the host answers a call, so its limit alone never stops a loop over tool calls.
- `True`: in a new Python process under `_sandbox`'s supervisor: an empty environment, a filesystem of its own (the
  Python runtime read-only, its folder, what `mounts=` lends: none of the application's files), its whole tree limited
  in memory and processes (by the kernel where control groups allow) and gone at the deadline, unable to see the
  application's processes (so to read their memory) or to use the network (`_sandbox.protections()` says what holds
  here). Without user namespaces there is no filesystem of its own, and it refuses unless `accept=('own_filesystem',)`
  accepts that. The tools still run here, in the application's process, each call waited for no later than
  the deadline: the program's calls come over a pipe, one JSON line each, and values go back as JSON. A line that
  breaks this protocol ends the program with a `CodeError`.
- `False`: in this process, like the `python` tool (`funccall.toolsets.pytool`), with its deadline: the caller has its answer
  0.3 s after it at most, except while the program runs C code that holds the GIL, which freezes the whole application
  until it returns (for good, if it never does). Each tool call runs in a thread of its own, as in monty: the
  timeout, raised at each line of the program, never lands inside a tool. Tools return Python values. Not a sandbox:
  the program can do all the application can (read its environment, find the toolbox in memory and call a tool's
  function without its pipeline); only the functions it is given refuse calls after its deadline or its answer.
What the model reads is capped in every mode: printed output at `MAX_PRINTED`, the value (or traceback) at `MAX_VALUE`
characters, written out only as far as shown (`_shown`).

`programmatic(definitions, provider)` renders tools for the providers' own code execution instead (Anthropic's
`allowed_callers` with its code-execution tool, OpenAI's programmatic tool calling); the calls a program makes
there come back as ordinary tool calls, which `run_tool_calls` answers (to the program, for OpenAI: `program_callers`).
"""
from __future__ import annotations

import contextvars, dataclasses, functools, inspect, itertools, json, keyword, os, queue, re, reprlib, signal, sys, threading, time
import typing
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal, Union

from ..core._package import PACKAGE_DIR
from ..core._typing import JsonDict
from ._codechild import COMMAND, MAX_PRINTED, TB, CodeError, ToolCallError, namespace
from ._rootfs import layout
from ._sandbox import ACCEPTABLE, MAX_MESSAGE, Sandbox, SandboxError, failure, for_model, protections, scrub
from ..core.inverse import mk_tool, schema2anno, schema2sig
from .pytool import python
from ..core.schema import SchemaError, handle_type
from ..loop.messages import program_callers  # (where it is read: a provider's shape; named here too, beside `programmatic`)
from ..loop.results import to_text
from ..loop.tools import Tool
from .boxlike import ToolboxLike

if TYPE_CHECKING:
    from ..loop.results import ToolResult

__all__ = ['code_api', 'code_tool', 'safest_mode', 'ToolCallError', 'CodeError', 'programmatic', 'program_callers', 'MAX_VALUE']

# --- the API as Python source ---------------------------------------------------------------------------

def _py_name(nm: str, taken: set) -> str:
    "A Python identifier for tool name `nm` (`notes-add` -> `notes_add`), unique among `taken`"
    s = re.sub(r'\W', '_', nm) or '_'
    if s[0].isdigit(): s = f'_{s}'
    if keyword.iskeyword(s) or s in ('print', 'ToolCallError'): s = f'{s}_'
    base, i = s, 2
    while s in taken: s, i = f'{base}_{i}', i + 1
    taken.add(s)
    return s

_UNTITLED = 'Object'  # what `schema2anno` names an object schema without a title

def _is_typeddict(a) -> bool: return isinstance(a, type) and issubclass(a, dict) and hasattr(a, '__required_keys__')

class _Source:
    "Annotations as source text, collecting the `TypedDict` classes they use (each once, named apart)"
    def __init__(self): self.classes, self.shapes, self.names, self.lines = {}, {}, set(), []

    def anno(
        self,
        a,               # an annotation, as `schema2sig` and `schema2anno` make them
        hint: str | None=None,  # the parameter or key it annotates: names a class its schema left untitled
    ) -> str:
        if a is Any or a is typing.Any: return 'Any'
        if a is None or a is type(None): return 'None'
        if _is_typeddict(a): return self._typeddict(a, hint)
        origin, args = typing.get_origin(a), typing.get_args(a)
        if origin is Literal: return f"Literal[{', '.join(map(repr, args))}]"
        if origin is Union: return ' | '.join(self.anno(x, hint) for x in args)
        if origin in (list, dict, tuple, set, frozenset):
            return f"{origin.__name__}[{', '.join(self.anno(x, hint) for x in args)}]" if args else origin.__name__
        return getattr(a, '__name__', 'Any') if isinstance(a, type) else 'Any'

    def _typeddict(self, td: Any, hint: str | None = None) -> str:
        if td in self.classes: return self.classes[td]
        title = td.__name__ if td.__name__ != _UNTITLED or not hint else ''.join(w.capitalize() for w in re.split(r'[\W_]+', hint)) or _UNTITLED
        nm = self.classes[td] = _py_name(title, self.names)  # named first: a class may refer to itself
        req, hints = td.__required_keys__, td.__annotations__
        fields = [(k, self.anno(t, k)) for k, t in hints.items()]  # (the classes they use are written first)
        key = (title, tuple(fields), frozenset(req))
        if (same := self.shapes.get(key)) is not None:  # the same class rebuilt from another schema is written once
            self.classes[td] = same
            self.names.discard(nm)
            return same
        self.shapes[key] = nm
        total = all(k in req for k in hints)
        mark = lambda k: '  # required' if k in req and not total else ''
        if all(k.isidentifier() and not keyword.iskeyword(k) for k in hints):
            self.lines += [f"class {nm}(TypedDict{'' if total else ', total=False'}):", *(f"    {k}: {t}{mark(k)}" for k, t in fields), '']
            if not fields: self.lines.insert(-1, '    pass')
        else:  # a key Python can't spell (`$match`, `from`): the functional form holds any
            self.lines += [f"{nm} = TypedDict({nm!r}, {{", *(f"    {k!r}: {t!r},{mark(k)}" for k, t in fields),  # (forward references)
                           f"}}{'' if total else ', total=False'})", '']
        return nm

def _doc(text: str) -> str:
    "`text` safe inside a triple-quoted docstring: backslashes doubled, quotes that would end it escaped"
    text = text.replace('\\', '\\\\').replace('"""', '\\"\\"\\"')
    return text[:-1] + '\\"' if text.endswith('"') else text

def _returns(t: Tool):
    "The annotation of what tool `t` gives back: the MCP server's `outputSchema`, or its function's return annotation"
    out = getattr(t.fn, '__output_schema__', None)  # set by `MCPClient` on the tools it builds: the schema of what they return
    defs: Any
    if isinstance(out, dict): s, defs = out, out.get('$defs')
    else:
        fn = t.fn if inspect.isfunction(t.fn) or inspect.ismethod(t.fn) else type(t.fn).__call__
        try: ret = typing.get_type_hints(fn).get('return', Any)
        except Exception: return Any  # noqa: BLE001 - an annotation that can't be resolved is shown as Any
        if ret is Any or ret is type(None): return None if ret is type(None) else Any
        defs = {}
        try: s = handle_type(ret, defs)  # through JSON Schema, so the stub shows what comes back as data: a dataclass as a TypedDict
        except (SchemaError, TypeError): return Any
    try: return schema2anno(s, defs)
    except (ValueError, TypeError): return Any

def _tools(box: ToolboxLike) -> list[Tool]: return [t for t in box if not getattr(t.fn, '_funccall_code_tool', False)]

def _specs(box: ToolboxLike) -> list[tuple[str, Tool, inspect.Signature]]:
    "(Python name, tool, signature) per tool, in the toolbox's order"
    taken: set = set()
    return [(_py_name(t.name, taken), t, schema2sig(t.schema)) for t in _tools(box)]

def code_api(
    box: ToolboxLike,  # a `Toolbox`
) -> str:  # Python source: imports, the `TypedDict`s, then a stub per tool
    "The toolset as Python a model reads: a typed stub per tool, with its description and its parameters' as the docstring"
    src, stubs = _Source(), []
    for py, t, sig in _specs(box):
        props = t.schema['input_schema'].get('properties', {})
        params, args, kwonly = [], [], False
        for p in sig.parameters.values():
            if p.kind is p.KEYWORD_ONLY and not kwonly: params.append('*'); kwonly = True
            default = '' if p.default is p.empty else f" = {p.default!r}" if _literal(p.default) else ' = None'
            params.append(f"{p.name}: {src.anno(p.annotation, p.name)}{default}")
        for nm, ps in props.items():
            d = ps.get('description') if isinstance(ps, dict) else None
            if d: args.append(f"    {nm}: {' '.join(d.split())}")
        ret = src.anno(_returns(t))
        doc = (t.description or '').strip()
        if args: doc = f"{doc}\n\nArgs:\n" + '\n'.join(args)
        doc = '\n'.join(f'    {ln}' if ln.strip() else '' for ln in _doc(doc).splitlines()).lstrip()
        stubs += [f"def {py}({', '.join(params)}) -> {ret}:", f'    """{doc}"""' if doc else '    ...', *(['    ...'] if doc else []), '']
    head = ['from __future__ import annotations', 'from typing import Any, Literal, TypedDict', '',
            '# Each function runs a tool; a failed call raises ToolCallError with its message.', 'class ToolCallError(Exception): ...', '']
    return '\n'.join(head + src.lines + stubs).rstrip() + '\n'

def _literal(v) -> bool:
    """Whether `v` reads back as itself from its repr (what a default in the stub may show); a schema's defaults are JSON
    (`get_schema` leaves out one JSON can't hold, an MCP server's came as JSON), so a short container is one"""
    return v is None or type(v) in (bool, int, float, str) or (type(v) in (list, tuple, dict) and len(repr(v)) < 80)

# --- calling tools from a program ----------------------------------------------------------------------------

def _functions(box: ToolboxLike, call: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """Python name -> a function with the tool's signature (`mk_tool`, unchecked: the toolbox checks) whose call is
    `call(tool name, arguments)`, the arguments under the schema's own property names"""
    return {py: mk_tool(call, schema, check=False) for py, schema in _schemas(box)}

def _schemas(box: ToolboxLike) -> list[tuple[str, JsonDict]]:
    "(Python name, input schema as JSON) per tool: what a program's functions are made from, here or in another process"
    return [(py, json.loads(json.dumps({'name': t.name, 'input_schema': t.schema['input_schema']}, default=str)))
            for py, t, _ in _specs(box)]

def _in_process(box: ToolboxLike, injected: JsonDict, as_json: bool = False, until: list[float] | None = None) -> Callable[..., Any]:
    """Run a tool with a program's arguments through the toolbox; its value as it is, or (`as_json`) as JSON data.
    With `until` (the program runs in this process): each call in a thread of its own, so the program's timeout, raised
    at its every line, never lands inside the tool (it left the application's lock held); past `until[0]` (monotonic:
    the deadline, or the moment the program returned) no tool runs, for a program that swallows its timeout or a thread
    it left running"""
    def run(name: str, args: JsonDict) -> ToolResult: return box.call(name, args, injected=injected)
    def call(name, /, **args):
        if until is None: r = run(name, args)
        else:
            if (left := until[0] - time.monotonic()) <= 0: raise TimeoutError(f"the program's time is up: {name} did not run")
            try: r = _within(lambda: run(name, args), left, name)
            except _Late: raise TimeoutError(f"the program's time is up: {name} runs on in the background") from None
        if not r.ok: raise ToolCallError(_error(r))
        return _as_json(r.value) if as_json else r.value
    return call

def _error(r) -> str:
    "What a program's failed call reads: the model's message, or why a call waiting for approval can't run here"
    if r.status == 'pending':
        return f"Tool {r.name!r} needs the user's approval, which a program can't wait for: call it directly, outside run_code"
    return r.error

def _as_json(v):
    "`v` as JSON data (dataclasses, dates and the like in their JSON form), or its text when JSON can't hold it"
    if v is None or isinstance(v, str): return v
    try: return json.loads(t := to_text(v))  # (`to_text` raises no ValueError: `t` is bound below)
    except ValueError: return t  # pyright: ignore[reportPossiblyUnboundVariable]

MAX_VALUE = 100_000  # characters of a program's final value (or its traceback) in its result; the rest is cut, the model told

def _result(printed: str, value) -> str:
    "What the model reads of a run: what it printed, then its value's text, each capped (a hostile process sends any length)"
    parts = [_cut(printed.rstrip('\n'), MAX_PRINTED, 'printed output')] if printed.strip() else []
    if value is not None: parts.append(_shown(value, MAX_VALUE))
    return '\n'.join(parts)

def _cut(s: str, limit: int, what: str) -> str:
    "`s` cut to `limit` characters, saying what was cut (as `print` in a program says it)"
    return s if len(s) <= limit else f"{s[:limit]}\n[... {what} cut at {limit} characters]"

def _shown(v: Any, limit: int) -> str:
    """`v` as text for the model, at most `limit` characters, made in time and memory bounded by `limit`: a value that
    shares one list a million times is a few bytes in the program and gigabytes of text (monty hands back such a value shared)"""
    if isinstance(v, str): return _cut(v, limit, 'value')
    if _size(v, limit) <= limit: return _cut(to_text(v), limit, 'value')
    chunks: list[str] = []
    n = 0
    try:
        for chunk in _encoder.iterencode(v):  # (not one-shot: the pure-Python encoder, which yields as it goes)
            chunks.append(chunk)
            n += len(chunk)
            if n > limit: break
    except (TypeError, ValueError, RecursionError): chunks = [_repr.repr(v)]  # a cycle, nested too deeply, a key JSON can't hold
    return _cut(''.join(chunks), limit, 'value')

def _size(v: Any, budget: int) -> int:
    "At least how many characters `v`'s text takes, or `budget + 1` when more: found in `budget` steps at most, whatever `v` holds"
    n, todo = 0, [v]
    items: Iterable[Any]
    while todo:
        x = todo.pop()
        n += 1 + (len(x) if isinstance(x, (str, bytes, bytearray)) else 0)
        if isinstance(x, dict): items = itertools.chain.from_iterable(x.items())
        elif isinstance(x, (list, tuple, set, frozenset)): items = x
        elif dataclasses.is_dataclass(x) and not isinstance(x, type): items = (getattr(x, f.name) for f in dataclasses.fields(x))
        else: items = ()
        todo += itertools.islice(items, max(budget + 1 - n - len(todo), 0))  # each takes a character at least: no more are needed
        if n + len(todo) > budget: return budget + 1
    return n

def _shallow(o):
    "A value JSON can't hold, one level down for the encoder to go on into (a dataclass as its fields), or its short text"
    if dataclasses.is_dataclass(o) and not isinstance(o, type): return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
    if isinstance(o, (set, frozenset)): return list(o)
    return _repr.repr(o)

_encoder = json.JSONEncoder(ensure_ascii=False, default=_shallow)  # (a key JSON can't hold isn't skipped: the value is shown short instead)
_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 200

def _run_here(box: ToolboxLike, code: str, timeout: float, memory_mb: int, injected: JsonDict) -> str:
    out: list = []
    until = [time.monotonic() + timeout]
    ns = {**namespace(out), **_functions(box, _in_process(box, injected, until=until))}
    try: v = python(code, glb=ns, timeout=timeout)  # type: ignore[arg-type]  # (`python`'s schema says integer seconds; it takes a float)
    finally: until[0] = float('-inf')  # answered: its threads left running call no tool from now on
    if isinstance(v, str) and v.startswith(TB): raise CodeError(_result(''.join(out), v))
    return _result(''.join(out), v)

class _Late(Exception):
    "The program's deadline passed; `what` says where it was (in a tool call, or between them)"
    def __init__(self, what: str = 'its process was killed'): super().__init__(what); self.what = what

def _stopped(timeout: float, what: str) -> str:
    "The traceback a program stopped at its deadline reads as"
    return f'{TB}\n  File "<code>", in <module>\n    (stopped after {timeout:g} s; {what})\nTimeoutError'

def _within(fn: Callable[[], Any], left: float, name: str) -> Any:
    """`fn()` in a thread of its own, waited for at most `left` seconds; `_Late` when it's still running then (a thread
    can't be stopped: it runs on in the background, a daemon)"""
    done: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
    ctx = contextvars.copy_context()
    def run() -> None:
        try: done.put((True, ctx.run(fn)))
        except BaseException as e: done.put((False, e))  # noqa: BLE001 - handed to the waiting caller
    threading.Thread(target=run, name='funccall-code-call', daemon=True).start()
    try: ok, v = done.get(timeout=max(left, 0))
    except queue.Empty: raise _Late(f'in a call of {name}, which runs on in the background') from None
    if not ok: raise v
    return v

# --- in a process of its own ---------------------------------------------------------------------------------

def _run_isolated(box: ToolboxLike, code: str, timeout: float, memory_mb: int, injected: JsonDict, **sandbox: Any) -> str:
    schemas = _schemas(box)
    names = {s['name'] for _, s in schemas}
    argv = [sys.executable, '-S', '-c', COMMAND, PACKAGE_DIR]  # (host paths: the sandbox gives the program's own)
    sb = None
    try:
        with Sandbox(argv, timeout, memory_mb=memory_mb, **sandbox) as sb:
            sb.send({'code': code, 'tools': schemas})
            while (msg := sb.receive()) is not None:
                kind, *rest = _message(msg)
                if kind == 'done':
                    printed, value, failed = rest
                    res = for_model(_result(*_scrubbed(printed, value)), limit=_SHOWN)  # (its process may have forged it: of any size)
                    if failed: raise CodeError(res)
                    return res
                nm, args = rest  # only the toolbox's tools: the process can ask for nothing else
                if sb.left() <= 0: break  # no call starts past the deadline
                call = nm if nm in names else f'<not a tool: {nm[:60]}>'
                try: r = _within(functools.partial(box.call, call, args, injected=injected), sb.left(), call)
                except _Late: break  # the deadline came first (the call runs on in its thread): `finish` says so
                sb.send(_answer(r))
            sb.finish()
            raise sb.ended_error()
    except SandboxError as e:
        raise CodeError(failure(e, sb, timeout)) from None

_SHOWN = MAX_PRINTED + MAX_VALUE + 200  # what `_result` gives at most: its two caps and what each cut says

def _scrubbed(printed: str, value: Any) -> tuple[str, str | None]:
    "A program's result from its process, host paths scrubbed before `_result` cuts it (a cut could split a path), bounded first"
    return scrub(printed[:2 * MAX_PRINTED]), None if value is None else scrub(_shown(value, 2 * MAX_VALUE))

def _message(msg: Any) -> tuple[Any, ...]:
    "('done', printed, value, failed) or ('call', name, args) from a message of the program's; `SandboxError` for anything else"
    if isinstance(msg, dict):
        if msg.get('done') is True and isinstance(msg.get('printed'), str) and isinstance(msg.get('failed'), bool):
            return 'done', msg['printed'], msg.get('value'), msg['failed']
        if isinstance(msg.get('call'), str) and isinstance(msg.get('args', {}), dict): return 'call', msg['call'], msg.get('args') or {}
    raise SandboxError(f"it sent a message that is neither a tool call nor its result: {json.dumps(msg)[:100]}", 'protocol')

def _answer(r: ToolResult) -> JsonDict:
    "The program's answer to a call: its value as JSON, or its error; a value too big for the channel is an error"
    if not r.ok: return {'ok': False, 'value': None, 'error': _error(r)}
    v = _as_json(r.value)
    if len(json.dumps(v, default=str)) > MAX_MESSAGE // 2:
        return {'ok': False, 'value': None, 'error': f"Tool {r.name!r} returned over {MAX_MESSAGE >> 21} MB: too big for a program; ask for less"}
    return {'ok': True, 'value': v, 'error': None}

# --- in pydantic-monty's sandbox ----------------------------------------------------------------------------

_MONTY_PRELUDE = 'ToolCallError = Exception\n'  # a host function's error reaches the sandbox as an `Exception`
_MONTY_GRACE = 0.25  # seconds past the deadline before the sandbox's process is killed: its own TimeoutError comes first

class _Watchdog:
    "Kills process `pid` (the sandbox's worker) at monotonic time `when`, unless the block ends first"
    def __init__(self, pid: int | None, when: float):
        self.pid, self.lock, self.done, self.fired = pid, threading.Lock(), False, False
        self.timer = threading.Timer(max(when - time.monotonic(), 0), self.kill)
        self.timer.daemon = True
    def kill(self) -> None:
        with self.lock:
            if self.done or self.pid is None: return
            self.done = self.fired = True
            try: os.kill(self.pid, getattr(signal, 'SIGKILL', signal.SIGTERM))
            except ProcessLookupError: pass
    def __enter__(self) -> _Watchdog: self.timer.start(); return self
    def __exit__(self, *exc: object) -> None:  # (a program left suspended, its deadline passed in a tool call, ends with the pool)
        with self.lock: self.done = True
        self.timer.cancel()

_SLEEPS = ('system.sleep', 'system.async_sleep')  # `time.sleep`, `asyncio.sleep`: a program driven call by call sleeps here

def _sleep(snap: Any, deadline: float) -> Any:
    "A program's sleep, waited here for at most what is left of the deadline"
    secs: Any = snap.args[0] if len(snap.args) == 1 and not snap.kwargs else None
    if type(secs) not in (int, float) or not 0 <= secs < float('inf'):
        return snap.resume({'exception': ValueError(f'sleep length must be a non-negative number, not {secs!r}')})
    time.sleep(max(min(secs, deadline - time.monotonic()), 0))
    if time.monotonic() >= deadline: raise _Late('asleep')
    return snap.resume({'return_value': None})

def _resume(snap: Any, fns: dict[str, Callable[..., Any]], deadline: float) -> Any:
    "Resume a suspended program: a tool's call or a sleep under what is left of the deadline, anything else as monty does"
    from pydantic_monty import FunctionSnapshot  # pyright: ignore[reportMissingImports]
    if time.monotonic() >= deadline: raise _Late()
    if isinstance(snap, FunctionSnapshot) and snap.is_os_function and snap.function_name in _SLEEPS: return _sleep(snap, deadline)
    if not isinstance(snap, FunctionSnapshot) or snap.is_os_function or (f := fns.get(snap.function_name)) is None:
        return snap.resume_auto()  # a name it can't resolve, any other `os` call: monty's own refusal
    try: v = _within(lambda: f(*snap.args, **snap.kwargs), deadline - time.monotonic(), snap.function_name)
    except _Late: raise
    except Exception as e: return snap.resume({'exception': e})  # noqa: BLE001 - the program reads it, as a ToolCallError
    return snap.resume({'return_value': v})

def _run_monty(box: ToolboxLike, code: str, timeout: float, memory_mb: int, injected: JsonDict) -> str:
    try: from pydantic_monty import Monty, MontyComplete, MontyError  # pyright: ignore[reportMissingImports]
    except ImportError: raise ImportError("isolate='monty' needs pydantic-monty: pip install pydantic-monty") from None
    deadline = time.monotonic() + timeout
    fns = _functions(box, _in_process(box, injected, as_json=True))
    out: list = []
    keep = namespace(out)['print']  # printed output kept to `MAX_PRINTED`, as in the other modes, the model told of the cut
    # monty's own limits: its clock runs only while the program does (not in tool calls), so the deadline is kept here too
    try:  # (the limits written inline, where a checker reads them as pydantic-monty's `ResourceLimits`)
        with Monty(request_timeout=timeout + 1) as pool, \
                pool.checkout(limits={'max_feed_duration_secs': float(timeout), 'max_memory': memory_mb << 20}) as s:
            with _Watchdog(s.worker_pid, deadline + _MONTY_GRACE) as dog:
                try:
                    snap = s.feed_start(_MONTY_PRELUDE + code, external_lookup=fns, print_callback=lambda _, text: keep(text, end=''))
                    while not isinstance(snap, MontyComplete): snap = _resume(snap, fns, deadline)
                except MontyError as e:
                    if dog.fired: raise _Late() from None
                    raise CodeError(_result(''.join(out), f"{TB}\n{e}")) from None
    except _Late as e: raise CodeError(_result(''.join(out), _stopped(timeout, e.what))) from None
    return _result(''.join(out), snap.output)

# --- the tool -------------------------------------------------------------------------------------------------

_RUNNERS: dict[bool | str, Callable[..., str]] = {False: _run_here, True: _run_isolated, 'monty': _run_monty}

def safest_mode() -> bool | str:
    "The safest place installed to run a model's program: 'monty' when pydantic-monty imports, else True (a process of its own)"
    try: import pydantic_monty  # noqa: F401  # pyright: ignore[reportMissingImports]
    except ImportError: pass
    else: return 'monty'
    if os.name == 'nt':
        raise NotImplementedError("code_tool: no sandbox here (pydantic-monty isn't installed, and isolate=True needs POSIX); "
                                  "pip install pydantic-monty, or pass isolate=False to run the model's programs in this process")
    return True

def code_tool(
    box: ToolboxLike,          # a `Toolbox`: its tools are the program's functions
    isolate: bool | str | None=None,  # None: the safest installed (`safest_mode`); 'monty': pydantic-monty's sandbox; True: a process
                               #   of its own; False: this process (only when asked for: the program can do all the application can)
    timeout: float=30,         # seconds the program may run, its tool calls included
    memory_mb: int=512,        # memory of the program's whole process tree, and each process's address space (True), or monty's limit
    text_input: bool=False,    # take the program as free-form text (an OpenAI custom tool): no JSON string to escape it in
    env: dict[str, str] | None=None,  # environment variables the program's process gets (isolate=True; it gets none of the application's)
    network: bool=False,       # let the program's process use the network (isolate=True; cut where `_sandbox.protections()` can)
    mounts: dict[str, Any] | None=None,  # host folders or files the program sees (isolate=True): {host path: path inside} read-only,
                               #   {host path: (path inside, 'rw')} writable; it sees nothing else of the host's but the Python runtime
    accept: tuple[str, ...]=(),  # isolate=True where a protection is missing, accepted by name: ('own_filesystem',) runs the
                               #   program where it reads every file the application's user can (no user namespaces)
) -> Tool:                     # the `run_code(code)` tool, its description holding the API (`code_api`)
    "A `run_code(code)` tool: the model's Python program runs with every tool of `box` bound as a function"
    if isolate is None: isolate = safest_mode()
    if isolate not in _RUNNERS: raise ValueError(f"isolate={isolate!r}: use None (the safest installed), 'monty', True or False")
    run = _RUNNERS[isolate]
    if set(accept) - set(ACCEPTABLE): raise ValueError(f"accept={tuple(accept)!r}: what may be accepted missing is {ACCEPTABLE!r}")
    if env or network or mounts or accept:
        if isolate is not True:
            raise ValueError(f"env=, network=, mounts= and accept= are for a process of its own (isolate=True), not isolate={isolate!r}")
        run = functools.partial(run, env=env, network=network, mounts=mounts, accept=tuple(accept))
    if isolate is True and not protections(network)['own_filesystem'] and 'own_filesystem' not in accept:
        raise RuntimeError("code_tool(isolate=True): this machine can't give the program a filesystem of its own (user namespaces "
                           "are needed), so it would read every file the application's user can; pass accept=('own_filesystem',) "
                           "to run it so anyway, or use isolate='monty'")
    if mounts:  # (a path it can't lend is an error now, not at the model's first program)
        if not protections(network)['own_filesystem']: raise ValueError("mounts= needs a filesystem of its own, which this machine can't give")
        layout(mounts, network)
    def run_code(
        code: str,  # a Python program; call the functions below, `print` what you need, end with an expression to return it
        **injected: Any,
    ):
        return run(box, code, timeout, memory_mb, injected)
    # the inner tools' injected values the toolbox doesn't hold are run_code's own, supplied per request like any tool's
    own = sorted({k for t in _tools(box) for k in t.inject} - box.injected.keys())
    P = inspect.Parameter
    run_code.__signature__ = inspect.Signature([P('code', P.POSITIONAL_OR_KEYWORD, annotation=str),  # type: ignore[attr-defined]
                                                *(P(k, P.KEYWORD_ONLY, annotation=Any) for k in own)])
    run_code._funccall_code_tool, run_code.isolate = True, isolate  # type: ignore[attr-defined]  # (where its programs run: `tool.fn.isolate`)
    desc = ("Run a Python program that calls these functions (each one a tool) and returns what it prints and the value of its "
            f"last expression. Use it to chain tool calls, loop over results and keep only what matters.\n\n```python\n{code_api(box)}```")
    return Tool(run_code, description=desc, inject=tuple(own), text_input=text_input, max_chars=None)  # (it cuts its own output)

# --- the providers' own code execution ------------------------------------------------------------------

_ANTHROPIC_CODE = {'type': 'code_execution_20260120', 'name': 'code_execution'}

def programmatic(
    definitions: list[JsonDict],  # a toolbox's definitions for `provider` (`Toolbox.definitions(provider)`)
    provider: str,        # 'anthropic' or 'responses'
    direct: bool=False,   # let the model call them directly too, not only from its program
) -> list[JsonDict]:                # the definitions, callable from the provider's code execution, and that tool
    "Tools callable from the provider's code execution: Anthropic's `allowed_callers` and code-execution tool, OpenAI's programmatic tool calling"
    if provider == 'anthropic':
        callers = [_ANTHROPIC_CODE['type']] + (['direct'] if direct else [])
        return [dict(_ANTHROPIC_CODE)] + [{**d, 'allowed_callers': callers} if 'input_schema' in d else d for d in definitions]
    if provider in ('responses', 'openai_responses'):
        callers = ['programmatic'] + (['direct'] if direct else [])
        def one(d: JsonDict) -> JsonDict:
            if d.get('type') == 'function': return {**d, 'allowed_callers': callers}
            if d.get('type') == 'namespace': return {**d, 'tools': [one(x) for x in d['tools']]}
            return d
        return [one(d) for d in definitions] + [{'type': 'programmatic_tool_calling'}]
    raise ValueError(f"Programmatic tool calling is Anthropic's ('anthropic') and OpenAI Responses' ('responses'), not {provider!r}'s")
