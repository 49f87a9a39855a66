"""Python functions served as an MCP server.

`mk_server` serves functions, callable objects, `Tool`s, `ToolGroup`s and `Toolbox`es. Every call runs the tool's own
pipeline (`Tool.aexecute`: injected values, hooks, confirmation, cache, middleware, `max_chars`); a bad call comes
back as an `isError` result in funccall's words, a failing tool as one with its exception's type (and its message,
with `errors='message'`); the frames go to the `funccall.mcp` logger, never to the client. A tool's return
annotation becomes its `outputSchema` (an object as it is, anything else wrapped as `{"result": value}`), and each
structured result is checked against it before it is sent. A parameter annotated `MCPContext` gives the tool
progress, log lines, questions for the user and cancellation (a client hanging up cancels its calls: a sync tool's
thread gives its slot back and runs on, see `funccall.core._run`). Answers to a question reach the tool only once they fit
the form asked; one that doesn't is the client's error (-32602). A tool that requires confirmation asks the client's
user through elicitation (form mode only, and only to clients that declared it); on protocol 2026-07-28 the question
travels as a `requestState` sealed with HMAC (see `funccall.mcp._state`), checked before anything runs and good once;
any malformed one is -32602. `mk_asgi_app` is the server as an ASGI app with Host and Origin parsed and matched
exactly on every request. A tool named in `mk_server(tasks=...)` is served as a task (the 2026-07-28 tasks extension)
to clients that declare it: a handle at once, then `tasks/get`/`tasks/cancel` from any connection; its record, and
the confirmation states' single-use record, live in `store=` (memory, or `RedisStore` for every worker: each state
names the store's epoch, so none sealed before Redis restarted or lost its data is taken; see `funccall.mcp._store`).
"""
from __future__ import annotations

import asyncio, functools, ipaddress, json, logging, math, os, re, secrets, threading, time, traceback, warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from contextlib import asynccontextmanager
from functools import partial
from types import TracebackType, UnionType
from typing import TYPE_CHECKING, Any, Literal, Union

try:
    import anyio
    import mcp_types as types
    from mcp.server import Server
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.provider import principal_components
    from mcp.server.caching import CacheHint
    from mcp.server.transport_security import TransportSecuritySettings
    from mcp.shared.exceptions import MCPError
    from pydantic import Field
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from starlette.datastructures import Headers
    from starlette.responses import Response
except ImportError as _e:  # `mcp` is an optional extra; mcp 1.x lacks `Client` and `mcp_types`
    raise ImportError(f"funccall.mcp needs the MCP SDK 2.x ({_e}): pip install 'funccall[mcp]'") from _e

from ..core._package import VERSION, is_own, publish
from ..loop import _trace, content
from ..core._json import jsonable
from ..core._jsonschema import compile_schema
from ._state import NonceStore, Sealer, StateError
from ._store import STORE_ERROR, TERMINAL, WORKER_LOST, LocalNonces, MemoryTaskStore, StoreError, TasksFull
from .._load import expand
from ..core._run import held, is_async, max_workers
from ..core._types import SchemaError, empty, fields, injected_type, injected_types, kind, signature
from ..core.call import error_text
from ..core.schema import handle_type
from ..loop.pipeline import Declined, not_found
from ..loop.results import MAX_RESULT_CHARS, StopRun, ToolResult, to_text
from ..loop.tools import Tool, ToolGroup, Toolbox
from ..toolsets.wrap import renamed
from ._wire import WRAP, short
from ..core._typing import JsonDict, ToolFn
from ..core._helpdoc import add_param_docs

if TYPE_CHECKING:
    from mcp_types.methods import CacheableMethod
    from starlette.applications import Starlette

# what `mk_server` serves: functions, callable objects, `Tool`s, `ToolGroup`s, a `Toolbox`, a list of them, or name -> callable
# (defined at run time too: `typing.get_type_hints(mk_server)` resolves it)
ServedTools = Union[ToolFn, ToolGroup, Toolbox, Sequence[Union[ToolFn, ToolGroup, Toolbox]], Mapping[str, ToolFn]]

__all__ = ['MCPContext', 'context_params', 'mk_server', 'mk_asgi_app', 'output_schema', 'TASKS', 'ERRORS']

# --- the server ---------------------------------------------------------------------------------------

_log = logging.getLogger('funccall.mcp')
_KEY = 'funccall-confirm'        # the key of the confirmation question in an `input_required` round trip
_TRACE = '\nTraceback (most recent call last):'  # where `error_text`'s frames start: they stay in the server's log
_CONTENT = (types.TextContent, types.ImageContent, types.AudioContent, types.ResourceLink, types.EmbeddedResource)

class _InputRequired(BaseException):
    "A question for the user on the 2026-07-28 protocol: the call stops here and is answered with the question"
    # a BaseException, so no `except Exception` in a tool or in the pipeline turns the question into a failure
    def __init__(self, key: str, request: types.ElicitRequest): self.key, self.request = key, request

class _BadAnswer(BaseException):
    "A client's answer that doesn't fit the form asked: the call ends as the client's error (-32602), before the tool sees it"
    # a BaseException, as `_InputRequired`: no `except Exception` in the tool turns the client's mistake into the tool's

_MAX_ANSWER = 16 * 1024  # characters of JSON: the most an answer to one form may hold (a state carries a call's answers: see `_state`)

@functools.lru_cache(maxsize=64)
def _form(schema: str):
    """The validator of answers to form `schema` (JSON): extra keys are refused unless it allows them, and a form that lists
    no `required` requires each property without a default, so a tool reading `content[name]` finds it"""
    s = json.loads(schema)
    props = s.get('properties') or {}
    req = s['required'] if 'required' in s else [k for k, p in props.items() if not (isinstance(p, dict) and 'default' in p)]
    return compile_schema({**s, 'required': req, 'additionalProperties': s.get('additionalProperties', False)}, where='The form asked')

def _fits(a: types.ElicitResult, schema: dict, key: str) -> types.ElicitResult:
    "Answer `a` to question `key` checked against its form `schema`: accepted content with the form's defaults filled in, or `_BadAnswer`"
    if a.action != 'accept': return types.ElicitResult(action=a.action)  # a declined or cancelled question carries no content
    props = schema.get('properties') or {}
    c = {**{k: p['default'] for k, p in props.items() if isinstance(p, dict) and 'default' in p}, **(a.content or {})}
    if len(json.dumps(c)) > _MAX_ANSWER: raise _BadAnswer(f"The answer to question {key!r} is longer than {_MAX_ANSWER} characters")
    if odd := [k for k, v in c.items() if isinstance(v, float) and not math.isfinite(v)]:  # JSON has none; Python's parser takes them
        raise _BadAnswer(f"The answer to question {key!r} gives {odd[0]!r} {c[odd[0]]!r}: a form's numbers are finite")
    if problems := _form(json.dumps(schema, sort_keys=True)).problems(c, limit=5):
        raise _BadAnswer(f"The answer to question {key!r} does not fit the form asked: {'; '.join(map(str, problems))}")
    ints = {k for k, p in props.items() if isinstance(p, dict) and p.get('type') == 'integer'}  # JSON's 36.0 is an integer; Python's isn't
    return types.ElicitResult(action='accept', content={k: int(v) if k in ints and type(v) is float else v for k, v in c.items()})

class MCPContext:
    """What a served tool receives through a parameter annotated `MCPContext` (injected, never in its schema): progress,
    log lines, questions for the user, and whether the call was cancelled. In an async tool `await` its methods; a
    sync tool (which runs in a worker thread) calls them plainly and they block until done. Outside a served call
    (`funccall call` on the command line) it is a context of no client: log lines go to the logger, progress nowhere,
    and no question can be asked."""
    _call: _Call | None                       # the served call it belongs to (None: outside one)
    _loop: asyncio.AbstractEventLoop | None   # the server's loop, which runs that call
    _cancelled: threading.Event               # set once the client cancelled the call
    def __init__(self) -> None: self._call, self._loop, self._cancelled = None, None, threading.Event()

    def _bridge(self, coro: Any) -> Any:
        "`coro` to await on the server's loop, or run there to the end from a sync tool's thread"
        if self._call is None: return _done(coro)
        try: here = asyncio.get_running_loop()
        except RuntimeError: here = None
        if here is self._loop: return coro
        if held(self._loop):  # it waits for the very call this comes from: handed to it, `coro` would wait for ever
            coro.close()
            raise RuntimeError("MCPContext can't reach the client: the server's event loop waits for a sync form (Toolbox.call, "
                               "run_tool_calls, Tool.execute) that a served tool called; await the async form (acall, "
                               "run_tool_calls_async, aexecute) there instead")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()  # type: ignore[arg-type]  # (set with `_call`)

    @property
    def cancelled(self) -> bool:  # True once the client cancelled the call: a sync tool should stop soon
        "Whether the client cancelled this call (an async tool is cancelled outright)"
        return self._cancelled.is_set()

    @property
    def can_elicit(self) -> bool:  # whether `elicit` may ask this client's user a question (a form)
        "Whether this client takes form questions"
        return self._call is not None and self._call.can_ask

    def report_progress(self,
        progress: float,          # how far along, rising with each report
        total: float | None=None,  # the end, when known
        message: str | None=None,  # what is happening, for the user
    ) -> Any:                     # None; in an async tool, an awaitable of None
        "Send a progress notification, when the client asked for progress with a token"
        return self._bridge(self._call.ctx.session.report_progress(progress, total, message) if self._call else None)

    def log(self,
        message: str,             # the line
        level: str='info',        # 'debug', 'info', 'warning', 'error' (MCP's levels)
    ) -> Any:                     # None; in an async tool, an awaitable of None
        "Log `message` in the server's log (the `funccall.mcp` logger); on 2026-07-28 also to a client that asked for log lines"
        _log.log(getattr(logging, level.upper(), logging.INFO), '%s: %s', self._call.tool if self._call else 'tool', message)
        return self._bridge(self._call.send_log(level, message) if self._call else None)

    def elicit(self,
        message: str,             # the question, for the user
        schema: JsonDict,         # the answer's form: a JSON Schema object of flat properties (string, number, boolean, enum)
    ) -> Any:                     # `mcp_types.ElicitResult` (in an async tool, awaitable): `.action` is 'accept', 'decline' or 'cancel';
                                  #   `.content` the answers
        "Ask the client's user to fill in a form; on 2026-07-28 the call is answered with the question and re-run with the answer"
        if self._call is None: raise RuntimeError("MCPContext.elicit: no MCP client to ask (the tool runs outside a served call)")
        return self._bridge(self._call.ask(message, schema))

def _done(v: Any) -> Any:
    "`v` (None: nothing to do) as `MCPContext`'s methods give it outside a served call: awaitable in an async tool, plain in a sync one"
    try: asyncio.get_running_loop()
    except RuntimeError: return v
    f = asyncio.get_running_loop().create_future()
    f.set_result(v)
    return f

def _principal() -> str | None:
    "Who is calling, when the HTTP transport authenticated them (OAuth): an answer counts only for the caller who was asked"
    token = get_access_token()
    return None if token is None else json.dumps(principal_components(token))

def _form_ok(caps) -> bool:
    "Whether the client declared form-mode elicitation (an empty `elicitation: {}` means form, as 2025-06-18 had only forms)"
    e = caps.elicitation if caps is not None else None
    return e is not None and (e.form is not None or e.url is None)

class _Call:
    "One `tools/call` as the user's questions see it: answers from a sealed state, new questions as `_InputRequired`"
    def __init__(self, ctx, params, sealer: Sealer, nonces):
        self.ctx, self.tool, self.sealer, self.nonces, self.args, self.n = ctx, params.name, sealer, nonces, params.arguments or {}, 0
        self.modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        form, back = _form_ok(ctx.session.client_capabilities), self.modern or ctx.session.can_send_request
        self.can_ask = form and back
        self.why_not = ("it declared no form-mode elicitation" if back else  # why `can_ask` is False
                        "a stateless server can't send it a question during a call before protocol 2026-07-28")
        self.answers: JsonDict = {}

    async def open(self, params) -> None:
        """Take the answers of the call's `requestState`, if any: checked before anything runs, and its nonce spent in the
        store's epoch, on the answering client's share, unless it only declined a confirmation (`_spends`)"""
        if params.request_state is None: return
        try:
            p = self.sealer.check(params.request_state, params.name, self.args, _principal())
            data, given = p['d'], params.input_responses or {}
            if _spends(data, given):
                try: await self.sealer.spend(p, self.nonces, _principal() or _address(self.ctx))
                except StoreError as e:  # (a store answering after the deadline may have taken it: then it is refused as used)
                    raise MCPError(STORE_ERROR, f"The answer failed, nothing ran: {e} (if it is then refused as used, call the tool again)") from None
        except StateError as e:
            _log.warning('Tool %r: requestState refused: %s', params.name, e)
            raise MCPError(types.INVALID_PARAMS, str(e)) from None
        self.answers = dict(data.get('answers', {}))
        for k in data.get('asked', []):  # only answers to the questions asked count
            if isinstance(given.get(k), types.ElicitResult): self.answers[k] = given[k].model_dump(mode='json', by_alias=True, exclude_none=True)

    async def ask(self, message: str, schema: JsonDict, key: str | None=None) -> types.ElicitResult:
        "The user's answer to form `schema`, checked against it: the tool sees only content that fits (else `_BadAnswer`)"
        if not self.can_ask:
            raise RuntimeError(f"this MCP client can't ask its user: {self.why_not}")
        _form(json.dumps(schema, sort_keys=True))  # a form that can't be checked is the developer's error, found before asking
        if key is None:  # the n-th question of a run: a re-run asks the same ones in the same order
            self.n += 1
            key = f'q{self.n}'
        if not self.modern: return _fits(await self.ctx.session.elicit_form(message, schema, related_request_id=self.ctx.request_id), schema, key)
        if key in self.answers: return _fits(types.ElicitResult.model_validate(self.answers[key]), schema, key)
        raise _InputRequired(key, types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema)))

    async def confirm(self, tool: Tool, args: dict) -> bool:
        "Whether the client's user allows the call; a client that can't be asked has it declined, saying why (`Declined`)"
        if not self.can_ask:
            raise Declined(f"Tool {tool.name!r} needs the user's confirmation, and this MCP client can't ask for it "
                           f"({self.why_not}): the call was refused")
        return _allows(await self.ask(f"Allow {tool.call_str(args)}?", _QUESTION, _KEY))

    async def input_required(self, q: _InputRequired) -> types.InputRequiredResult | types.CallToolResult:
        "The question, in a state sealed with the store's epoch; an error result when the store can't say its epoch"
        try: epoch = await self.nonces.epoch()
        except StoreError as e: return _error(f"Tool {self.tool!r} needs an answer from the user, and could not ask: {e}")
        state = self.sealer.seal(self.tool, self.args, {'answers': self.answers, 'asked': [q.key], 'epoch': epoch}, _principal())
        return types.InputRequiredResult(request_state=state, input_requests={q.key: q.request})

    async def send_log(self, level: str, message: str) -> None:
        if not self.modern: return  # before 2026-07-28 log lines need the logging capability, which this server leaves out
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # deprecated as of 2026-07-28, and still how a client that opted in gets them
            await self.ctx.session.send_log_message(level, message, logger=self.tool, related_request_id=self.ctx.request_id)

def _allows(a) -> bool:
    "Whether answer `a` to the confirmation question lets the call run"
    return isinstance(a, types.ElicitResult) and a.action == 'accept' and (a.content or {}).get('confirm') is True

def _spends(data: dict, given: dict) -> bool:
    """Whether a state's answers must count once: all but a confirmation (the first question, no answers before it) not
    allowed, whose run declines before the tool runs, as a fresh call would ask: replayed, it declines again"""
    return bool(data.get('answers')) or data.get('asked') != [_KEY] or _allows(given.get(_KEY))

def _address(ctx) -> str | None:
    """The address an HTTP client connects from (None on stdio: one client), whose spent answers count against one share:
    an IPv6 one as its /64, which one host commonly holds whole (so it can't be a new client per address)"""
    c = getattr(getattr(ctx, 'request', None), 'client', None)
    return None if (host := getattr(c, 'host', None)) is None else _by_network(host)

def _by_network(host: str) -> str:
    "`host` as one client counts: an IPv6 address as its /64 ('2001:db8:1:2::/64'), an IPv4 one (mapped into IPv6 too) as it is"
    try: ip = ipaddress.ip_address(host)
    except ValueError: return host  # a name (a test client's 'testclient'), or a unix socket's path
    if ip.version == 4: return str(ip)
    if ip.ipv4_mapped: return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))

_QUESTION = {'type': 'object', 'required': ['confirm'],
             'properties': {'confirm': {'type': 'boolean', 'title': 'Run it', 'description': 'Allow this tool call to run'}}}

injected_types.add(MCPContext)  # a parameter annotated `MCPContext` is injected wherever a schema or a call is made

def context_params(
    t: ToolFn,  # a function, callable object or `Tool`
) -> list[str]:  # the names of its parameters annotated `MCPContext` (or `Optional[MCPContext]`): injected per call, never in its schema
    "The parameters of `t` (a `Tool`'s function) that `mk_server` injects an `MCPContext` into"
    try: sig = signature(t.fn if isinstance(t, Tool) else t)
    except SchemaError: return []
    return [p.name for p in sig.params if p.name in sig.injected and injected_type(p.anno) is MCPContext]

def _toolbox(tools: Any, injected: JsonDict | None) -> tuple[Toolbox, dict[str, list[str]]]:
    "The tools to serve as one `Toolbox`, and each tool's `MCPContext` parameters (tool name -> names)"
    def tool(t: Any, nm: str | None=None) -> Any:  # (a function taking an `MCPContext` has it injected, as every `Tool` has)
        if isinstance(t, Tool): return t if nm in (None, t.name) else renamed(t, nm)  # (a `Tool` of it would run the client's call unconfirmed)
        return Tool(t, name=nm) if nm else t
    if isinstance(tools, Mapping): box = Toolbox([tool(t, nm) for nm, t in tools.items()])
    else:
        items = tools if isinstance(tools, (list, tuple)) else [tools]
        box = Toolbox([tool(t) for t in expand(items)])
        for t in items:  # a toolbox's own injected values come with its tools
            if isinstance(t, Toolbox): box.injected.update(t.injected)
    box.injected.update(injected or {})
    ctxs = {t.name: ps for t in box if (ps := context_params(t))}
    for t in box:  # a missing injected value is the developer's to fix before serving, not a failure of each call
        if missing := [k for k in t.inject if k not in box.injected and k not in ctxs.get(t.name, ())]:
            raise TypeError(f"Tool {t.name!r} needs {', '.join(map(repr, missing))}: pass it in mk_server(injected=...)")
    return box, ctxs

def _mcp_type(t) -> bool:
    "Whether annotation `t` is an MCP result or content type (or a list of content), which goes out as MCP content"
    if isinstance(t, type) and issubclass(t, (types.CallToolResult, *_CONTENT)): return True
    if isinstance(t, UnionType) or getattr(t, '__origin__', None) in (list, Union):  # `list[TextContent | ImageContent]`
        return all(map(_mcp_type, getattr(t, '__args__', ()) or [None]))
    return False

def _output(t: Tool) -> tuple[dict | None, bool]:
    "The output schema of `t` and whether it wraps the value as `{'result': value}`"
    # a result cut for the model is text, not the annotated value: a tool given its own `max_chars` has no output schema;
    # one that keeps the default sends a value within the bound whole, as structured content must, and one over it as an
    # error result (`_too_long`); `max_chars=None` sends any value whole
    if t.max_chars not in (None, MAX_RESULT_CHARS): return None, False
    ret = signature(t.fn).returns
    if ret in (empty, None, type(None), Any) or _mcp_type(ret): return None, False  # MCP content is its own description
    if isinstance(ret, type) and issubclass(ret, content.Content): return None, False  # media: content items, no structure
    defs: JsonDict = {}
    try: s = handle_type(ret, defs)
    except SchemaError: return None, False  # the tool runs all the same; its results go as text
    ref = s.get('$ref', '')
    target = defs.get(ref.rsplit('/', 1)[-1], {}) if ref.startswith('#/$defs/') and len(s) == 1 else s
    wrapped = target.get('type') != 'object'
    s = {'type': 'object', 'properties': {'result': s}, 'required': ['result'], WRAP: True} if wrapped else dict(target)
    return ({**s, '$defs': defs} if defs else s), wrapped

def output_schema(
    t: Tool,  # a tool
) -> dict | None:  # the JSON Schema of its structured results, `None` when it has none
    "The `outputSchema` of `t` from its return annotation: an object as it is, any other value wrapped as `{'result': value}`"
    return _output(t)[0]

_CLOSED = ('dataclass', 'typeddict', 'namedtuple')  # the class kinds whose call refuses a key they don't have (a pydantic model ignores it)

def _classes(t: Any, seen: dict[type, bool]) -> dict[type, bool]:
    "Class name -> whether it refuses unknown keys, for the classes annotation `t` reaches (`seen`, filled in)"
    info = kind(t)
    if info.kind in ('union', 'list', 'set', 'tuple', 'dict'):
        for a in info.args:
            if a is not Ellipsis: _classes(a, seen)
    elif info.kind in (*_CLOSED, 'model') and info.t not in seen:
        seen[info.t] = info.kind in _CLOSED
        for f in fields(info): _classes(f.anno, seen)
    return seen

def _closed_defs(fn: ToolFn, params: list[str]) -> set[str]:
    "The `$defs` names of the classes of `fn`'s `params` that refuse unknown keys (a name two classes share, only if both do)"
    seen: dict[type, bool] = {}
    try:
        for p in signature(fn).params:
            if p.name in params: _classes(p.anno, seen)
    except SchemaError: return set()
    names: dict[str, bool] = {}
    for c, closed in seen.items():
        qual = f"{c.__module__}.{c.__qualname__}".replace('<locals>.', '')  # as `$defs` names a class whose short name is taken
        for nm in (c.__name__, qual): names[nm] = names.get(nm, True) and closed
    return {nm for nm, closed in names.items() if closed}

def _input_schema(t: Tool) -> dict:
    """What `t` takes, with `additionalProperties: false` where the call refuses other arguments: at the top (a typed
    `**kwargs` is a property of its own), and in each dataclass, TypedDict and NamedTuple it takes"""
    s = t.schema['input_schema']
    if defs := s.get('$defs'):
        closed = _closed_defs(t.fn, list(s['properties']))
        s = {**s, '$defs': {nm: {**d, 'additionalProperties': False} if nm in closed and 'additionalProperties' not in d else d
                            for nm, d in defs.items()}}
    if 'additionalProperties' in s: return s
    return {**s, 'additionalProperties': False}

def _mcp_tool(t: Tool, out: dict | None) -> types.Tool:
    hints = {f'{k}_hint': v for k, v in t.hints.items()}
    annotations = types.ToolAnnotations(title=t.title, **hints) if hints or t.title else None
    desc = t.description
    if _mcp_type(signature(t.fn).returns): desc = desc.split('\n\nReturns:', 1)[0]  # a protocol object says nothing to the model
    return types.Tool(name=t.name, title=t.title, description=desc, input_schema=_input_schema(t), output_schema=out,
                      annotations=annotations, icons=getattr(t, 'icons', None))

def _error(text: str) -> types.CallToolResult: return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)

def _ours(fn: str) -> bool:
    "Whether source file `fn` is funccall's own"
    return is_own(os.path.abspath(fn))

def _tool_frames(e: BaseException) -> tuple:
    "`e` to log with the frames of its traceback outside funccall: the pipeline's (hooks, retries, threads) tell the operator nothing"
    kept, tb = [], e.__traceback__
    while tb is not None:
        if not _ours(tb.tb_frame.f_code.co_filename): kept.append(tb)
        tb = tb.tb_next
    if not kept: return type(e), e, e.__traceback__  # a failure inside funccall itself keeps every frame
    out = None
    for t in reversed(kept): out = TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return type(e), e, out

ERRORS = ('type', 'message')  # what an error result says of an exception raised in a tool: `mk_server(errors=)`

def _type_name(e: BaseException) -> str:
    "The exception's type as a traceback names it: `ZeroDivisionError`, `sqlite3.OperationalError`"
    t = type(e)
    return t.__qualname__ if t.__module__ in ('builtins', '__main__') else f'{t.__module__}.{t.__qualname__}'

def _said(e: BaseException, text: str, errors: str) -> str:
    "What the client reads of `e`, a tool's own exception whose full text is `text`: its type, or with errors='message' its message too"
    return text.split(_TRACE, 1)[0] if errors == 'message' else _type_name(e)

def _models(r: ToolResult) -> bool:
    """Whether failure `r` is the client's call, told in funccall's own words: a refusal, or a bad name or arguments that
    funccall found itself. A `ToolInputError` raised in the tool's own code (or a hook's) is the tool's: it may hold
    the server's state (a tool's own `call_func` of a server value, say)"""
    if r.exception is None or r.failure == 'declined': return True
    if r.failure not in ('name', 'arguments'): return False
    return all(_ours(f.f_code.co_filename) for f, _ in traceback.walk_tb(r.exception.__traceback__))

def _failed(r: ToolResult, text: str, errors: str) -> types.CallToolResult:
    """A failure as the client gets it: funccall's own words for a bad call, a refusal or a timeout; for the tool's own
    exception, its type (and message, with errors='message'); the traceback goes to the server's log only"""
    if _models(r): return _error(text.split(_TRACE, 1)[0])  # the model's to fix
    _log.warning('Tool %r failed', r.name, exc_info=_tool_frames(r.exception))  # type: ignore[arg-type]  # (not None: see `_models`)
    return _error(text.split(_TRACE, 1)[0] if r.failure == 'timeout' else _said(r.exception, text, errors))  # type: ignore[arg-type]

def _blocks(v) -> list | None:
    "`v` as MCP content items, when it is one or a list of them"
    if isinstance(v, _CONTENT): return [v]
    if isinstance(v, list) and v and all(isinstance(x, _CONTENT) for x in v): return list(v)
    return None

def _result(r: ToolResult, out: dict | None, wrapped: bool, check, version: str, errors: str) -> types.CallToolResult:
    "A tool's value as an MCP result: its text (or its MCP content) for the model, and structured content checked against the output schema"
    v = r.value
    if isinstance(v, types.CallToolResult): return v  # a tool that builds its own MCP result
    text: list[types.ContentBlock]
    try:
        if (ps := content.parts(v, to_text)) is not None:  # funccall's images, audio, files (an MCPClient tool's media items too)
            sc = {'result': content.to_json(ps)} if out is not None and wrapped else None  # a `-> list` tool's structured content
            if sc is not None and (problems := check(sc)): return _misfit(r.name, problems)
            return types.CallToolResult.model_validate({'content': content.mcp(ps), 'structuredContent': sc})
        if out is None and r.cut: return types.CallToolResult(content=[types.TextContent(text=r.text)])
        if blocks := _blocks(v): return types.CallToolResult(content=blocks)  # MCP content is the result: no structured copy of it
        j = jsonable(v)  # the serialisation the output schema describes: pydantic models by alias, dataclasses by field
        text = [] if j is None else [types.TextContent(text=j if isinstance(j, str) else json.dumps(j, ensure_ascii=False, allow_nan=False))]
    except ValueError as e:
        if not str(e).startswith('Out of range float'): return _unsendable(r.name, e, errors)
        _log.warning('Tool %r: its value holds NaN or infinity', r.name)  # JSON has no such number: null would lie, and break the schema
        return _error(f"The value of tool {r.name!r} can't be sent as JSON: it holds NaN or infinity, which JSON has no number for")
    except Exception as e: return _unsendable(r.name, e, errors)  # a value JSON can't hold: one that contains itself, one whose `repr` fails
    items = text
    if out is not None:
        if r.cut: return _too_long(r)  # structured content can't be cut and still fit its schema
        sc = {'result': j} if wrapped else j
        if problems := check(sc): return _misfit(r.name, problems)
        return types.CallToolResult(content=items, structured_content=sc)
    if j is None or isinstance(j, str): return types.CallToolResult(content=items)
    # without an output schema, before 2026-07-28, structured content must be a JSON object
    return types.CallToolResult(content=items, structured_content=j if isinstance(j, dict) or version in MODERN_PROTOCOL_VERSIONS else None)

def _unsendable(tool: str, e: Exception, errors: str) -> types.CallToolResult:
    _log.warning('Tool %r: its value could not be sent', tool, exc_info=e)
    return _error(f"The value of tool {tool!r} can't be sent as JSON: {_said(e, f'{type(e).__name__}: {short(e)}', errors)}")

def _too_long(r: ToolResult) -> types.CallToolResult:
    "A value with an output schema whose text is longer than its tool's `max_chars`: an error result, never a structured copy sent whole"
    n = len(to_text(r.value))
    _log.warning('Tool %r: its value is %d characters as JSON, over its max_chars (%d): not sent (max_chars=None sends it whole)',
                 r.name, n, r.limit)
    return _error(f"The value of tool {r.name!r} is {n:,} characters as JSON, more than the {r.limit:,} a result may hold: "
                  "ask for less (a narrower query, fewer items)")

def _misfit(tool: str, problems: list) -> types.CallToolResult:
    "A value that breaks its own output schema: an error result, never structured content a client would refuse"
    _log.warning('Tool %r: value does not fit its output schema: %s', tool, problems)
    said = '; '.join(f'{p.path or "value"}: {p.message}' for p in problems[:3])
    return _error(f"The value of tool {tool!r} does not fit its output schema: {said}")

def _checker(out: dict | None, nm: str):
    "`problems(value)` for output schema `out`"
    if out is None: return None
    v = compile_schema(out, where=f"Output schema of tool {nm!r}", lazy=True)
    return lambda x: [] if v.is_valid(x) else v.problems(x, limit=3)

def mk_server(
    tools: ServedTools,     # functions, callable objects, `Tool`s, `ToolGroup`s, a `Toolbox`, a list of them, or a dict of name -> callable
    name: str='funccall',   # the server's name, as clients see it
    injected: JsonDict | None=None,  # the application's values for the tools' injected parameters
    secret: str | bytes | None=None,  # the secret sealing questions in flight (default: `$FUNCCALL_MCP_SECRET`, else random per process)
    state_ttl: float=300,   # seconds an asked question stays answerable (2026-07-28 round trips)
    state_store: NonceStore | None=None,  # answers remembered so each counts once: has `add(nonce, expiry) -> bool`
                            #   (default: `store`, else in memory)
    state_per_client: int | None=1_000,  # the most unexpired answers one client (caller, else address) may have spent at once
    list_ttl: float=300,    # seconds a client may cache the tool list (a cache hint on `tools/list`)
    errors: Literal['type', 'message']='type',  # what an error result says of a tool's own exception: 'type' only, or 'message' (type and message)
    tasks: Iterable[str]=(),  # names of long-running tools served as MCP tasks to clients that declare the tasks extension
    store: Any=None,        # where task records (and, unless `state_store` says otherwise, used answers) live: `RedisStore` to share them
    task_ttl: float=3600,   # seconds a task's record (its result too) is kept from its start
    max_tasks: int=1000,    # the most tasks running in this process at once: past it a new task is an error result
    max_result_bytes: int=1_000_000,  # the most bytes of JSON a task's result may take in the store: a bigger one fails the task, saying so
) -> Server[Any]:           # the SDK's low-level `Server`: run it over stdio or HTTP (`serve`, `mk_asgi_app`), or in-process with `MCPClient`
    """An MCP server for `tools`: every call runs the tool's own pipeline (injected values, hooks, confirmation,
    cache, middleware, `max_chars`). A tool that requires confirmation asks the client's user (elicitation);
    a client that can't ask gets the call refused. A parameter annotated `MCPContext` is injected per call.
    A tool named in `tasks` answers a client that declared the tasks extension with a task at once, and runs on;
    the client polls (`tasks/get`), cancels (`tasks/cancel`) and reads the result, from any connection to any worker
    sharing the `store`. A client that didn't declare the extension gets the result as from any other tool."""
    if errors not in ERRORS: raise ValueError(f"mk_server: errors is 'type' or 'message', not {errors!r}")
    box, ctxs = _toolbox(tools, injected)
    tasks = _task_tools(box, tasks)
    sealer = Sealer(secret, state_ttl, state_per_client)
    nonces = (store if state_store is None and hasattr(store, 'spend') else  # the store's epochs; else one epoch, as `add` knows none
              LocalNonces(state_store or (store if hasattr(store, 'add') else NonceStore())))
    board = _Tasks(store if hasattr(store, 'finish') else MemoryTaskStore(), task_ttl, max_tasks, max_result_bytes)
    outs = {t.name: _output(t) for t in box}
    checks = {nm: _checker(out, nm) for nm, (out, _) in outs.items()}
    listed = [_mcp_tool(t, outs[t.name][0]) for t in box]
    inputs = {t.name: t.input_schema for t in listed}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult: return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult | JsonDict:
        # a bad call or a failing tool is the model's to read and fix, not a protocol error: the texts of `raise_on_err=False`
        t = box.tools.get(params.name)  # exactly a listed tool: no dotted path into the objects behind them
        if t is None:  # the pipeline's answer, traced as every call is
            with _trace.joined(params.meta): return _error(not_found(params.name, params.arguments, None, list(box.tools)).error)  # type: ignore[arg-type]
        call = _Call(ctx, params, sealer, nonces)
        await call.open(params)  # a bad requestState is a protocol error, before anything runs
        task = t.name in tasks and _declared_tasks(ctx)
        inj, mc = injected_of(t)
        if mc is not None and not task: mc._call, mc._loop = call, asyncio.get_running_loop()  # a task outlives the request: no client
        if task:
            redo = {'tool': t.name, 'args': call.args, 'version': ctx.protocol_version} if t.hints.get('idempotent') else None
            try: return await board.start(partial(run, t, call.args, inj, mc, ctx.protocol_version), _principal(), _client(ctx), mc, redo)
            except (TasksFull, StoreError) as e: return _error(f"Tool {t.name!r} did not start: {e}")
            except Exception:  # a store of the developer's failed its own way: the why stays in the log, where it may name hosts
                _log.exception('Tool %r: its task could not be recorded', t.name)
                return _error(f"Tool {t.name!r}: the server could not record its task: try again later")
        try:
            with _trace.joined(params.meta):  # the client's trace, when it sent one
                async with _share(shares, t): r = await t.aexecute(call.args, inj, confirm=call.confirm if t.requires_confirmation else None)
        except _InputRequired as q: return await call.input_required(q)
        except _BadAnswer as e:  # the client's answer broke the form asked: its error, never the tool's
            _log.warning('Tool %r: %s', t.name, e)
            raise MCPError(types.INVALID_PARAMS, str(e)) from None
        except anyio.get_cancelled_exc_class():
            if mc is not None: mc._cancelled.set()  # a sync tool's thread runs on: tell it through its context
            raise
        except Exception as e: return pipeline_failed(t, e)
        return finished(t, r, ctx.protocol_version)

    def injected_of(t: Tool) -> tuple[JsonDict, MCPContext | None]:
        "The injected values of a call of `t`, with a new `MCPContext` in its context parameters (if any)"
        if not (ps := ctxs.get(t.name)): return box.injected, None
        mc = MCPContext()
        return {**box.injected, **dict.fromkeys(ps, mc)}, mc

    def again(redo: JsonDict) -> tuple[Any, MCPContext | None] | None:
        "The job of an idempotent task whose worker is gone, to run here: `(job, context)`, None for a tool not served here as a task"
        if not isinstance(nm := redo.get('tool'), str) or (t := box.tools.get(nm)) is None: return None
        if t.name not in tasks or not t.hints.get('idempotent'): return None
        inj, mc = injected_of(t)
        return partial(run, t, redo['args'], inj, mc, redo['version']), mc

    def pipeline_failed(t: Tool, e: Exception) -> types.CallToolResult:
        "The pipeline itself failed (a hook, an injected value): the client gets what `errors` says"
        _log.exception('Tool %r failed', t.name)
        return _error(_said(e, f"{type(e).__name__}: {short(e)}", errors))

    def finished(t: Tool, r: ToolResult, version: str) -> types.CallToolResult:
        if isinstance(r.exception, StopRun): return _failed(r, error_text(r.exception), errors)  # a client's loop has no stop: the call failed
        if not r.ok: return _failed(r, r.error, errors)  # type: ignore[arg-type]  # (a failure has its error)
        out, wrapped = outs[t.name]
        return _result(r, out, wrapped, checks[t.name], version, errors)

    async def run(t: Tool, args: JsonDict, inj: JsonDict, mc: MCPContext | None, version: str) -> types.CallToolResult:
        "A task's call, on the tasks' own loop: the pipeline, with no client to ask (a tool needing confirmation is never a task)"
        try:
            async with _share(task_shares, t): r = await t.aexecute(args, inj)
        except Exception as e: return pipeline_failed(t, e)
        return finished(t, r, version)

    shares: dict[str, Any] = {}  # tool name -> the limiter its sync calls hold a slot of
    task_shares: dict[str, Any] = {}  # the same for calls run as tasks, on the tasks' loop (a limiter serves one loop)

    hints: dict[CacheableMethod, CacheHint] | None
    hints = {'tools/list': CacheHint(ttl_ms=int(list_ttl * 1000), scope='public')} if list_ttl else None
    server = _Server(name, version=VERSION, on_list_tools=list_tools, on_call_tool=call_tool,  # type: ignore[arg-type]  # (a task's answer: a dict)
                     get_tool_input_schema=inputs.get, cache_hints=hints)
    if tasks: board.serve(server, again)
    return server

# --- tasks (the 2026-07-28 tasks extension) -----------------------------------------------------------

TASKS = 'io.modelcontextprotocol/tasks'  # the tasks extension's identifier, in capabilities
NOT_AGAIN = ("The worker running this task stopped, and its tool is not idempotent on the worker that found it (or not served "
             "there as a task): it did not run again; start it again")
_POLL = 0.5  # seconds between a running task's looks at its record (cancelled through another worker?), and the poll interval suggested

def _task_tools(box: Toolbox, names) -> frozenset:
    "The names of the tools served as tasks, each checked: a served tool, and one that asks nothing of the user"
    names = frozenset([names] if isinstance(names, str) else names)
    if unknown := sorted(names - set(box.tools)): raise ValueError(f"mk_server(tasks=...): no tool named {unknown[0]!r} is served")
    if asks := sorted(nm for nm in names if box.tools[nm].requires_confirmation):
        raise ValueError(f"mk_server(tasks=...): tool {asks[0]!r} requires confirmation, which a task can't ask: serve it as a plain tool")
    return names

def _declared_tasks(ctx) -> bool:
    "Whether the client declared the tasks extension on this request (a task may go only to one that did)"
    caps = ctx.session.client_capabilities
    return caps is not None and TASKS in (caps.extensions or {})

def _now() -> str: return datetime.now(timezone.utc).isoformat(timespec='milliseconds').replace('+00:00', 'Z')

_task_loop, _task_lock = None, threading.Lock()

def _tasks_loop() -> asyncio.AbstractEventLoop:
    "The event loop, in a daemon thread of its own, that this process's tasks run on: they outlive the request that started them"
    global _task_loop
    with _task_lock:
        if _task_loop is None:
            _task_loop = asyncio.new_event_loop()
            threading.Thread(target=_task_loop.run_forever, name='funccall-mcp-tasks', daemon=True).start()
    return _task_loop

class _TaskParams(types.RequestParams):
    task_id: str = Field(alias='taskId', max_length=100)
    input_responses: dict | None = Field(None, alias='inputResponses')  # tasks/update's: this server never asks, so never any outstanding

class _Tasks:
    "The served tasks of one server: started here, run on the tasks' loop, their records in `store` for every worker"
    def __init__(self, store, ttl: float, most: int, result_bytes: int):
        self.store, self.ttl, self.most, self.result_bytes, self.running = store, ttl, most, result_bytes, 0
        self.again = lambda redo: None  # remakes the job an idempotent task's worker left (`serve` sets it)

    async def start(self, job, owner: str | None, client: str, mc: MCPContext | None, redo: dict | None = None) -> dict:
        """Record a new task (before the client hears of it, as the extension requires) and run `job()` for it: the `CreateTaskResult`.
        `redo` (an idempotent tool's: its name, arguments and protocol version) lets another worker run it again if this one goes"""
        if self.running >= self.most: raise TasksFull(f"this server runs {self.most} tasks already: try again later")
        now = _now()
        rec = {'taskId': secrets.token_urlsafe(24), 'status': 'working', 'createdAt': now, 'lastUpdatedAt': now,
               'ttlMs': int(self.ttl * 1000), 'pollIntervalMs': int(_POLL * 1000), 'owner': owner, 'client': client}
        self.running += 1  # (on the server's loop only: `_run` gives it back there), held while the record is made
        try: await self.store.create(rec['taskId'], rec, self.ttl, *([redo] if redo else []))  # (a store of the developer's may take three)
        except BaseException:
            self.running -= 1
            raise
        self._go(rec, job, mc)
        return {'resultType': 'task', **_public(rec)}

    def _go(self, rec: dict, job, mc: MCPContext | None) -> None:
        "Run `job()` for task `rec` on the tasks' loop (counted in `running` until it ends)"
        asyncio.run_coroutine_threadsafe(self._run(rec, job, mc, asyncio.get_running_loop()), _tasks_loop())

    async def _run(self, rec: dict, job, mc: MCPContext | None, home: asyncio.AbstractEventLoop) -> None:
        try: await self._watch(rec, job, mc)
        finally: home.call_soon_threadsafe(self._done)

    def _done(self) -> None: self.running -= 1

    async def _watch(self, rec: dict, job, mc: MCPContext | None) -> None:
        """Run a task's job to its end, renewing its lease every `_POLL` s, or until its record stops saying `working`
        (cancelled through any worker, expired, or read as failed once its lease lapsed)"""
        tid, run = rec['taskId'], asyncio.ensure_future(job())
        while not (await asyncio.wait([run], timeout=_POLL))[0]:
            if await self._look(tid) != 'working':
                if mc is not None: mc._cancelled.set()  # a sync tool's thread runs on: tell it through its context
                run.cancel()
                return
        try: end = {'status': 'completed', 'result': run.result().model_dump(mode='json', by_alias=True, exclude_none=True)}
        except Exception as e:  # never the tool's own failure (that is a completed isError result): the server's
            _log.exception('Task %s failed', tid)
            end = {'status': 'failed', 'statusMessage': 'The server failed to run the tool',
                   'error': {'code': types.INTERNAL_ERROR, 'message': type(e).__name__}}  # its words stay in the log, as a plain call's
        if 'result' in end and (n := len(json.dumps(end['result']))) > self.result_bytes:
            why = f"The tool's result ({n} bytes of JSON) is larger than this server keeps ({self.result_bytes}): ask for less"
            end = {'status': 'failed', 'statusMessage': why, 'error': {'code': types.INVALID_REQUEST, 'message': why}}
        await self._finish(tid, {**rec, **end, 'lastUpdatedAt': _now()})

    async def _look(self, tid: str) -> str | None:
        "Task `tid`'s status, its lease renewed; while the store fails (Redis down, stalled), `working`: the task runs on"
        try: return await self.store.beat(tid)
        except Exception as e:  # `StoreError`, or a developer's store failing its own way
            _log.warning('Task %s: its store failed (%s: %s); it runs on', tid, type(e).__name__, short(e))
            return 'working'

    async def _finish(self, tid: str, rec: dict) -> None:
        "Record the task's end; a store that fails is asked again every `_POLL` s until the record would have expired"
        give_up = time.monotonic() + self.ttl
        while True:
            try:
                await self.store.finish(tid, rec)
                return
            except Exception as e:  # `StoreError`, or a developer's store failing its own way
                _log.warning('Task %s: its store failed (%s: %s); %s', tid, type(e).__name__, short(e),
                             'its end is lost' if time.monotonic() > give_up else 'trying again')
                if time.monotonic() > give_up: return
            await asyncio.sleep(_POLL)

    async def _own(self, ctx, params: _TaskParams) -> dict:
        "The record of the caller's task `params.task_id`; a protocol error for a client without the extension, or a task that isn't its"
        if not _declared_tasks(ctx):
            raise MCPError(types.MISSING_REQUIRED_CLIENT_CAPABILITY, "Missing required client capability",
                           {'requiredCapabilities': {'extensions': {TASKS: {}}}})
        try: rec = await self.store.get(params.task_id)
        except StoreError as e: raise MCPError(STORE_ERROR, f"The task could not be read: {e}") from None
        if rec is not None and (redo := rec.pop('redo', None)) is not None:  # this worker's now: it runs it again, or fails it
            if (got := self.again(redo)) is not None:
                _log.warning('Task %s: its worker is gone; running its idempotent tool again here', params.task_id)
                self.running += 1
                self._go(rec, *got)
            else: rec = await self._not_again(rec)
        if rec is None or rec['owner'] != _principal(): raise MCPError(types.INVALID_PARAMS, "Failed to retrieve task: Task not found")
        return rec

    async def _not_again(self, rec: dict) -> dict:
        "Fail task `rec`, claimed to run again, whose tool this worker may not run again (not an idempotent task tool here)"
        end = {**rec, 'status': 'failed', 'statusMessage': NOT_AGAIN, 'error': {'code': WORKER_LOST, 'message': NOT_AGAIN}, 'lastUpdatedAt': _now()}
        try: return end if await self.store.finish(rec['taskId'], end) else rec
        except StoreError as e: raise MCPError(STORE_ERROR, f"The task could not be read: {e}") from None

    async def get(self, ctx, params: _TaskParams) -> dict: return {'resultType': 'complete', **_public(await self._own(ctx, params))}

    async def cancel(self, ctx, params: _TaskParams) -> dict:
        rec = await self._own(ctx, params)
        if rec['status'] not in TERMINAL:  # the first end wins: a task that finished first stays finished
            end = {**rec, 'status': 'cancelled', 'statusMessage': 'Cancelled by the client', 'lastUpdatedAt': _now()}
            try: await self.store.finish(rec['taskId'], end)
            except StoreError as e: raise MCPError(STORE_ERROR, f"The task could not be cancelled: {e}") from None
        return {'resultType': 'complete'}

    async def update(self, ctx, params: _TaskParams) -> dict:
        await self._own(ctx, params)  # answers to no outstanding request are ignored, as the extension says
        return {'resultType': 'complete'}

    def serve(self, server: Server, again) -> None:
        "Add the extension's methods to `server`, and say it speaks the extension; `again(redo)` remakes a job left by a worker gone"
        self.again = again
        server.extensions[TASKS] = {}
        for method, fn in (('tasks/get', self.get), ('tasks/cancel', self.cancel), ('tasks/update', self.update)):
            server.add_request_handler(method, _TaskParams, fn)

def _client(ctx) -> str:
    "Whose share of the task store a new task counts against: the authenticated caller, else the address it calls from"
    if (who := _principal()) is not None: return who
    return f'address {who}' if (who := _address(ctx)) is not None else 'this process'

def _public(rec: dict) -> dict:
    "A task record as the client reads it: without its owner and client"
    return {k: v for k, v in rec.items() if k not in ('owner', 'client')}

_SHARE = 0.75  # of the pool's slots, the most one served sync tool's calls hold at once: the rest stay for the other tools

@asynccontextmanager
async def _share(limiters: dict, t: Tool):
    """Hold one of sync tool `t`'s share of the pool's slots while its call runs: its calls past the share wait here (a
    client hanging up while waiting starts nothing), so slow calls of one tool never make another tool's calls wait"""
    if is_async(t.fn):
        yield
        return
    lim = limiters.get(t.name) or limiters.setdefault(t.name, anyio.CapacityLimiter(1))
    lim.total_tokens = max(1, int(max_workers() * _SHARE))  # (read each time: `set_max_workers` may have changed it)
    async with lim: yield

class _Server(Server):
    """The SDK's `Server`, whose HTTP app checks Host and Origin whatever address it is for (the SDK's checks only on
    127.0.0.1), each compared exactly once parsed (the SDK's `host:*` takes any text after `host:`)"""
    def streamable_http_app(self, *, host: str='127.0.0.1', transport_security=None, **kw):
        sec = transport_security or _security(host)
        app = super().streamable_http_app(host=host, transport_security=sec, **kw)
        if sec.enable_dns_rebinding_protection: app.add_middleware(_Gate, hosts=sec.allowed_hosts, origins=sec.allowed_origins)
        return app

_HOST = r'(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?'  # a Host header: a name, an IPv4 or a [IPv6], and a port
_HOST_RE, _ORIGIN_RE = re.compile(_HOST), re.compile(r'(https?)://' + _HOST)  # an Origin: scheme://host[:port], nothing more

def _parsed(v: str, origin: bool) -> tuple | None:
    "Host or Origin `v` as (scheme, host, port), lower case; None when it is anything else (user info, a path, a second port)"
    m = (_ORIGIN_RE if origin else _HOST_RE).fullmatch(v)
    if m is None: return None
    scheme, host, port = m.groups() if origin else (None, *m.groups())
    return scheme and scheme.lower(), host.lower(), port  # type: ignore[union-attr]  # (the pattern's host is not optional)

def _pattern(p: str, origin: bool) -> tuple | None:
    "An allowed Host or Origin as `_parsed` gives it, the port '*' for `...:*` (any port given)"
    any_port = p.endswith(':*')
    v = _parsed(p[:-2] if any_port else p, origin)
    return None if v is None else (*v[:2], '*' if any_port else v[2])

class _Gate:
    "ASGI middleware: a request's one Host is an allowed one, and its Origin, when it sends one, too; compared exactly once parsed"
    def __init__(self, app, hosts: list, origins: list):
        self.app = app
        self.hosts, self.origins = {x for h in hosts if (x := _pattern(h, False))}, {x for o in origins if (x := _pattern(o, True))}

    def _allowed(self, v: str, origin: bool) -> bool:
        got = _parsed(v, origin)
        return got is not None and (got in (allowed := self.origins if origin else self.hosts) or got[2] is not None and (*got[:2], '*') in allowed)

    async def __call__(self, scope, receive, send):
        if scope['type'] == 'http':
            h = Headers(scope=scope)
            hosts, origins = h.getlist('host'), h.getlist('origin')
            if len(hosts) != 1 or not self._allowed(hosts[0], False): return await Response('Invalid Host header', 421)(scope, receive, send)
            if len(origins) > 1 or origins and not self._allowed(origins[0], True):
                return await Response('Invalid Origin header', 403)(scope, receive, send)
        await self.app(scope, receive, send)

_LOOPBACK = ('127.0.0.1', 'localhost', '[::1]')

def _loopback(host: str) -> bool:
    try: return ipaddress.ip_address(host.strip('[]')).is_loopback
    except ValueError: return host == 'localhost'

def _security(host: str, allow_hosts=(), allow_origins=()) -> TransportSecuritySettings:
    "Host and Origin checks for every bind: loopback names always, the bound address when it is loopback, and what is allowed"
    names = [*_LOOPBACK, *([f'[{host}]' if ':' in host else host] if _loopback(host) and host not in ('localhost', '::1') else [])]
    hosts = [*names, *(f'{h}:*' for h in names)]
    origins = [f'{s}://{h}{p}' for s in ('http', 'https') for h in names for p in ('', ':*')]
    for h in allow_hosts: hosts += [h] if h.rpartition(':')[2].isdigit() and not h.endswith(']') else [h, f'{h}:*']
    for o in allow_origins: origins += [o.rstrip('/')] if o.rpartition(':')[2].strip('/').isdigit() else [o.rstrip('/'), f"{o.rstrip('/')}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)

def mk_asgi_app(
    tools: ServedTools | Server[Any],  # the tools, as `mk_server` takes them, or a `Server` it made
    host: str='127.0.0.1',    # the address the app will be served on (a loopback one is allowed as a Host too)
    allow_hosts: Iterable[str]=(),  # more Host header values to accept ('example.com' takes any port, 'example.com:8000' one)
    allow_origins: Iterable[str]=(),  # more Origin header values to accept ('https://app.example.com')
    path: str='/mcp',         # where the MCP endpoint is
    stateless: bool=False,    # no sessions: any worker answers any request (before 2026-07-28, no questions during a call)
    **kw: Any,                # for `mk_server`: name, injected, secret, state_ttl, state_store, state_per_client, list_ttl, errors
) -> Starlette:              # a Starlette ASGI app: run it with uvicorn, hypercorn, or mount it in another app
    """An ASGI app serving `tools` over streamable HTTP at `path`, with Host and Origin validated on every request. The
    address a client connects from counts its share of answers (`state_per_client`): run the app with your server's
    proxy headers off (`uvicorn.run(app, proxy_headers=False)`) unless a proxy you name sets them, since uvicorn by
    default takes `X-Forwarded-For` from any local process, which can then claim any address"""
    server = tools if isinstance(tools, Server) else mk_server(tools, **kw)
    return server.streamable_http_app(streamable_http_path=path, stateless_http=stateless,
                                      transport_security=_security(host, allow_hosts, allow_origins))

publish(MCPContext, 'funccall.mcp')  # shown by the name users import it by

# `help()` shows each public parameter's `# comment` (see core/_helpdoc.py)
add_param_docs(globals()[n] for n in __all__)
