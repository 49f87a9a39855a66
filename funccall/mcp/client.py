"""An MCP server's tools as Python callables.

`MCPClient` connects to a server (a command over stdio, a streamable-HTTP URL, or an in-process `Server`) and
rebuilds each of its tools with `mk_tool`, so arguments are checked against the tool's schema before they are
sent. Entered with `with`, the tools are plain functions (the session runs on an event loop in a background
thread); entered with `async with`, they are coroutine functions. A result comes back as a Python value: the
structured content when the server gives it, else the content items, a text item as `str` and any other item
(image, audio, resource) as its MCP JSON dict, exactly as on the wire (base64 `data`/`blob`, `mimeType`); one
item on its own, several as a list, none as `None`. A result the server flags `isError`, or a JSON-RPC error,
raises `MCPToolError` in the server's words; a connection that ends fails every pending call with
`MCPConnectionError`. `on_elicit=`/`on_sample=` answer the server's questions and sampling requests, `headers=`
and `auth=` reach servers behind a gate, `prefix=` renames the tools so several servers share one toolbox.

`MCPClient` builds each tool on its own: a tool whose schema can't be built (or that runs only as a task on a server
declaring no tasks) is left out, warned about and listed in `.skipped`, and the others work. Connecting (handshake
and tool list) takes at most `timeout` seconds in all; any failure to connect is `MCPConnectionError`, saying why (a
command's exit status and last lines on stderr too). A tool that runs as an MCP task is a plain call all the same
(a task-only tool of 2025-11-25, SEP-1686; any tool a 2026-07-28 server answers with a task, SEP-2663: see
`funccall.mcp._tasks`): `task_timeout` bounds it, and `on_progress` gets its status messages.

One message of an HTTP server holds at most `max_message` bytes (16 MB): a JSON reply larger (by its Content-Length,
or as it is read, a compressed one as it inflates) or one event of a stream larger fails its call with `MCPToolError`,
and no more of it is read. Over stdio the SDK's transport reads each line whole before funccall sees it (in time
quadratic in its length: 20 MB take seconds, 200 MB minutes), so there a server's message is bounded only by what
reaches the model (`max_chars`): run a server you don't trust over HTTP, or in a process with a memory limit.
"""
from __future__ import annotations

import inspect, logging, math, shlex, urllib.parse, warnings
from contextlib import AsyncExitStack, ExitStack, aclosing, asynccontextmanager, contextmanager
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Sequence
from functools import partial
from typing import IO, TYPE_CHECKING, Any, Literal

try:
    import anyio
    import httpx2
    import mcp_types as types
    from anyio.from_thread import start_blocking_portal
    from mcp import Client, StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
except ImportError as _e:  # `mcp` is an optional extra; mcp 1.x lacks `Client` and `mcp_types`
    raise ImportError(f"funccall.mcp needs the MCP SDK 2.x ({_e}): pip install 'funccall[mcp]'") from _e

from ..loop import _trace
from ._stdio import StderrTail, exit_note, spawned
from ._tasks import TaskFailed, TasksExtension, Waiting, can_run_tasks, needs_task, run_task, waiting
from ..core._types import SchemaError
from ..core.providers import printable, unsendable
from ..core.inverse import mk_tool
from ..core._typing import JsonDict, ToolFn
from ._wire import is_wrapper, short, value_schema
from ..core._helpdoc import add_param_docs
from ..core._package import publish

if TYPE_CHECKING:
    from pathlib import Path

    from anyio.from_thread import BlockingPortal
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.client._transport import Transport
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer
    from typing_extensions import Self

    # what `MCPClient` connects to: a command (its arguments, or one string), a streamable-HTTP URL, or what `mcp.Client` takes
    ServerSpec = str | Sequence[str] | StdioServerParameters | Transport | Server[Any] | MCPServer

__all__ = ['MCPClient', 'MCPToolError', 'MCPConnectionError']

_log = logging.getLogger('funccall.mcp')  # (the server's logger too: one name for funccall's MCP side)

class MCPToolError(RuntimeError):
    "A tool call that failed at the server: an `isError` result, or a JSON-RPC error; the message is the server's text"
    tool: str | None  # the tool's name
    code: int | None  # the JSON-RPC error code, for a protocol error
    def __init__(self, text: str, tool: str | None=None, code: int | None=None):
        super().__init__(text or f"Tool {tool!r} failed")
        self.tool, self.code = tool, code  # the tool's name; the JSON-RPC error code, for a protocol error

class MCPConnectionError(MCPError, ConnectionError):
    "The connection to the MCP server failed or closed: every call pending on it fails with this, at once"

_MAX_ERROR_BODY = 64 * 1024  # bytes of an HTTP error response read: its first words say what went wrong

async def _error_body(response: httpx2.Response) -> str:
    """The start of an HTTP error response's body: at most `_MAX_ERROR_BODY` bytes are read (a hostile server's endless
    body is not, nor held); a body that ends within them is kept for the SDK, which reads a JSON-RPC error in it"""
    parts, n = [], 0
    async with aclosing(response.aiter_bytes()) as chunks:
        async for b in chunks:
            parts.append(b)
            if (n := n + len(b)) > _MAX_ERROR_BODY: break
        else: response._content = b''.join(parts)  # (what `aread` keeps: the SDK's own read then gets it)
    if n > _MAX_ERROR_BODY: await response.aclose()
    return b''.join(parts)[:_MAX_ERROR_BODY].decode(response.encoding or 'utf-8', errors='replace')

_MAX_MESSAGE = 16 * 2**20  # bytes one message from an HTTP server may hold by default (a JSON reply, one event of a stream)

class _MessageTooLarge(httpx2.StreamError):
    "An HTTP server's message larger than `MCPClient(max_message=...)`: the call it answers fails, nothing more of it is read"
    # (the SDK's transport turns a `StreamError` reading a reply into an error answering that call)

def _bounded(response: httpx2.Response, most: int) -> None:
    """Make reading `response`'s body fail with `_MessageTooLarge` once it holds more than `most` bytes, decoded (a gzip
    body is counted as it inflates), or at once when its Content-Length says it will: one reply is never held whole"""
    said, whole = response.headers.get('content-length', ''), response.aiter_bytes
    def too_large(n: str) -> _MessageTooLarge:
        return _MessageTooLarge(f"The MCP server's reply is {n} bytes, more than max_message ({most:,} bytes) allows: it was not read")
    async def chunks(chunk_size: int | None = None) -> AsyncGenerator[bytes, None]:
        if said.isdigit() and int(said) > most: raise too_large(f'{int(said):,}')
        n = 0
        async with aclosing(whole(chunk_size)) as parts:
            async for b in parts:
                if (n := n + len(b)) > most: raise too_large(f'over {most:,}')
                yield b
    response.aiter_bytes = chunks  # type: ignore[method-assign]  # (what `aread` and the text readers go through)

def _mcp_path(url: str) -> str | None:
    "`url` with the `/mcp` path most servers serve streamable HTTP at; None when its path ends so already"
    u = urllib.parse.urlsplit(url)
    path = u.path.rstrip('/')
    return None if path.endswith('/mcp') else urllib.parse.urlunsplit(u._replace(path=f'{path}/mcp'))

# --- results: MCP content -> Python values ------------------------------------------------------------

def _item(c: types.ContentBlock) -> Any:
    "A content item: text as `str`, anything else as its MCP JSON dict (camelCase keys, base64 data)"
    if c.type == 'text': return c.text
    return c.model_dump(mode='json', by_alias=True, exclude_none=True)

def _value(tool: str, r: types.CallToolResult, wrapped: bool=False) -> Any:
    "The Python value of tool result `r` (`wrapped`: its output schema wraps it as `{'result': value}`); raises `MCPToolError` for an error"
    if r.is_error: raise MCPToolError('\n'.join(c.text for c in r.content if c.type == 'text'), tool)
    sc = r.structured_content
    if sc is not None: return sc['result'] if wrapped and isinstance(sc, dict) and set(sc) == {'result'} else sc
    vs = [_item(c) for c in r.content]
    return vs[0] if len(vs) == 1 else vs or None

# --- the client ---------------------------------------------------------------------------------------

def _is_url(s: object) -> bool: return isinstance(s, str) and s.startswith(('http://', 'https://'))

def _server(server: ServerSpec, env: dict[str, str] | None, cwd: str | Path | None) -> Any:
    "What `mcp.Client` takes for `server`: a URL as is, a command as `StdioServerParameters`"
    if isinstance(server, (list, tuple)) and len(server) == 1 and _is_url(server[0]): server = server[0]  # `funccall mcp list URL`
    if _is_url(server): return server
    if isinstance(server, str): server = shlex.split(server)
    if isinstance(server, (list, tuple)):
        if not server: raise ValueError("MCPClient: the server command is empty")
        return StdioServerParameters(command=str(server[0]), args=[str(a) for a in server[1:]], env=env, cwd=cwd)
    return server

def _undecodable(m: Any) -> bool:
    "Whether `m`, a line the SDK's stdio transport could not read as a message, held bytes that aren't UTF-8"
    try: line = m.errors()[0]['input']  # pydantic's error for the line, which carries the line
    except Exception: return False
    return isinstance(line, str) and '\ufffd' in line

@asynccontextmanager
async def _stdio(params: StdioServerParameters, tail: StderrTail, procs: list[Any]) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport, except that a reply that isn't UTF-8 ends the connection: the calls waiting on it
    fail at once (the SDK would log the line and let them wait for their timeout). Other unreadable lines are logged
    and skipped, as the SDK does. The process goes into `procs`, for its exit status."""
    # bytes that aren't UTF-8 are read as U+FFFD (rather than crash the SDK's reader), and the line then fails as JSON
    params = params.model_copy(update={'encoding_error_handler': 'replace'})
    async with AsyncExitStack() as stack:
        with spawned() as box, tail.child:  # our copy of the stderr pipe closed once spawned: its tail ends with the command
            read, write = await stack.enter_async_context(stdio_client(params, errlog=tail.child))  # type: ignore[arg-type]  # (a pipe: binary)
        procs += box
        send: MemoryObjectSendStream[Any]
        recv: MemoryObjectReceiveStream[Any]
        send, recv = anyio.create_memory_object_stream(0)
        async def pump() -> None:
            async with send:
                async for m in read:
                    if isinstance(m, Exception) and _undecodable(m):
                        _log.warning('The MCP server %r sent bytes that are not UTF-8: closing the connection', params.command)
                        return
                    await send.send(m)
        async with recv, anyio.create_task_group() as tg:
            tg.start_soon(pump)
            try: yield recv, write
            finally: tg.cancel_scope.cancel()

async def _answer(fn: Callable[..., Any], *args: Any) -> Any:
    "Call a user's callback, sync (in a worker thread: it may wait for a person) or async"
    if inspect.iscoroutinefunction(fn): return await fn(*args)
    v = await anyio.to_thread.run_sync(partial(fn, *args))
    return await v if inspect.isawaitable(v) else v

_STOP_GRACE = 2.0  # seconds the SDK's stdio client waits for a command to exit once its stdin is closed

@contextmanager
def _one_error() -> Iterator[None]:
    "Raise the one error inside nested exception groups: the SDK's task groups wrap even a single failure to connect"
    try: yield
    except Exception as e: _unwrapped(e, (None, None, None))

def _unwrapped(e: Exception, exc: tuple[Any, ...]) -> bool:
    """Leaving a client's block with `exc` (a `sys.exc_info()`) raised `e`: re-raise the one error inside it; False when that
    is `exc` itself, so the caller's own error goes on untouched (its traceback and cause)"""
    if (one := _single(e)) is exc[1]: return False
    if one is e: raise e
    raise one from None

def _single(e: BaseException) -> BaseException:
    "The one error inside nested exception groups of one error each, else `e`"
    while isinstance(xs := getattr(e, 'exceptions', None), tuple) and len(xs) == 1: e = xs[0]
    return e

# the callbacks `MCPClient` takes, each sync or async (its result awaited when it gives an awaitable)
_OnElicit = Callable[[str, JsonDict], Any]  # (message, requested schema) -> a dict, None to decline, or an `ElicitResult`
_OnSample = Callable[[types.CreateMessageRequestParams], Any]  # (params) -> text, or a `CreateMessageResult`
_OnProgress = Callable[[str, float | None, float | None, str | None], Any]  # (tool, progress, total, message)

class MCPClient:
    "A connection to an MCP server whose tools are Python callables: sync inside `with`, async inside `async with`"
    # its settings, as `__init__` takes them (`server` as `mcp.Client` takes it: a URL, `StdioServerParameters`, ...)
    server: Any; timeout: float; check: bool; errlog: IO[Any] | int | None; prefix: str; task_timeout: float; max_message: int
    on_elicit: _OnElicit | None; on_sample: _OnSample | None; on_progress: _OnProgress | None
    headers: dict[str, str] | None; auth: httpx2.Auth | None; validate_output: bool | Literal['warn']
    # its connection (`_stack`: an `ExitStack` inside `with`, an `AsyncExitStack` inside `async with`), and what it said
    _client: Client | None; _portal: BlockingPortal | None; _stack: Any; _specs: list[types.Tool]; _tools: dict[str, ToolFn]; _wrapped: set[str]
    _http_error: str | None; _http_status: int | None; _tail: StderrTail | None; _procs: list[Any]
    def __init__(
        self,
        server: ServerSpec,    # a command (list of args, or one string split like a shell's), a streamable-HTTP URL, or anything `mcp.Client` takes
        env: dict[str, str] | None=None,  # extra environment variables for a command (it inherits only PATH, HOME and a few more)
        cwd: str | Path | None=None,  # working directory for a command
        timeout: float=60,     # seconds to wait for each reply from the server, and for connecting (stopping a silent command included)
        check: bool=True,      # check arguments against each tool's schema before sending (see `mk_tool`)
        errlog: IO[Any] | int | None=None,  # where a command's stderr goes: a file, `subprocess.DEVNULL`, or `None` for this process's own
        on_elicit: _OnElicit | None=None,  # `on_elicit(message, schema)`, sync or async, answers a form: a dict, None declines, or an `ElicitResult`
        on_sample: _OnSample | None=None,  # `on_sample(params)`, sync or async, answers sampling requests: text, or a `CreateMessageResult`
        headers: dict[str, str] | None=None,  # HTTP headers for every request to a URL (an API key, ...)
        auth: httpx2.Auth | None=None,  # an `httpx2.Auth` for a URL, such as the SDK's `mcp.client.auth.OAuthClientProvider`
        prefix: str='',        # put before each tool's name (`prefix='git_'`: `git_status`), so several servers share one toolbox
        validate_output: bool | Literal['warn']=True,  # check structured results against output schemas: True raises, 'warn' warns, False skips
        on_progress: _OnProgress | None=None,  # `on_progress(tool, progress, total, message)`, sync or async: progress, task status messages
        task_timeout: float=3600,  # seconds a tool run as an MCP task may take in all (then it is cancelled at the server); `math.inf`: no limit
        max_message: int=_MAX_MESSAGE,  # bytes one message of an HTTP server may hold (a reply, an event); a larger one fails its call
    ):
        self.server = _server(server, env, cwd)
        self.timeout, self.check, self.errlog = timeout, check, errlog
        if validate_output not in (True, False, 'warn'): raise ValueError("MCPClient: validate_output is True, False or 'warn'")
        self.on_elicit, self.on_sample, self.headers, self.auth = on_elicit, on_sample, headers, auth
        self.prefix, self.validate_output, self.on_progress, self.task_timeout = prefix, validate_output, on_progress, task_timeout
        if not isinstance(max_message, int) or isinstance(max_message, bool) or max_message < 1:
            raise ValueError(f"MCPClient: max_message is a number of bytes (at least 1), not {max_message!r:.40}")
        self.max_message = max_message
        self._tasked: set[str] = set()  # the tools (as the server spells them) that run only as tasks
        self._client = self._portal = self._stack = None
        self._specs, self._tools, self._wrapped = [], {}, set()
        self.skipped: list[tuple[str, str]] = []  # (name, reason) of each tool of the server that couldn't be built

    def tools(self) -> dict[str, ToolFn]:  # tool name (as the server spells it) -> callable; also a namespace for `call_func`
        "The server's tools as functions with their schemas' signatures, listed when the connection opened"
        if self._client is None: raise RuntimeError("MCPClient is not connected: use `with MCPClient(...) as c:` or `async with`")
        return dict(self._tools)

    def schemas(self) -> list[JsonDict]:  # `{'name', 'description', 'input_schema'}` dicts, as `get_schema` makes them
        "The server's tool definitions in funccall's format, to hand to a model"
        self.tools()  # the same check: a connection must be open
        return [{'name': self.prefix + t.name, 'description': t.description or '', 'input_schema': t.input_schema} for t in self._specs]

    async def _elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams): return types.ElicitResult(action='decline')  # no browser to send the user to
        v = await _answer(self.on_elicit, params.message, params.requested_schema)  # type: ignore[arg-type]  # (asked only when set)
        if isinstance(v, types.ElicitResult): return v
        if v is None: return types.ElicitResult(action='decline')
        props = (params.requested_schema or {}).get('properties', {})  # what the user left alone keeps its default (SEP-1034)
        return types.ElicitResult(action='accept', content={**{k: p['default'] for k, p in props.items() if 'default' in p}, **v})

    async def _sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        v = await _answer(self.on_sample, params)  # type: ignore[arg-type]  # (asked only when set)
        if isinstance(v, types.CreateMessageResult): return v
        return types.CreateMessageResult(role='assistant', content=types.TextContent(text=str(v)), model='funccall-client')

    def _transport(self) -> Any:
        "What `mcp.Client` connects through"
        if isinstance(self.server, StdioServerParameters):
            self._tail = StderrTail(self.errlog)
            return _stdio(self.server, self._tail, self._procs)
        if _is_url(self.server): return self._http()
        return self.server

    @asynccontextmanager
    async def _http(self) -> AsyncIterator[Any]:
        "Streamable HTTP with `headers` and `auth`, keeping the words of an HTTP error: the SDK says only that there was one"
        async def note(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                text = printable((await _error_body(response)).strip(), 300)  # (a hostile server's: escaped, to be printed)
                self._http_error = f"HTTP {response.status_code} from {self.server}: {text}"
                self._http_status = response.status_code
            elif not response.headers.get('content-type', '').lower().startswith('text/event-stream'):
                _bounded(response, self.max_message)  # (a stream is bounded per event, by the SDK's reader)
        async with create_mcp_http_client(headers=self.headers, auth=self.auth) as http:
            http.event_hooks['response'].append(note)
            async with streamable_http_client(self.server, http_client=http, max_sse_event_size=self.max_message) as streams: yield streams

    def _words(self, e: MCPError) -> str:
        "The message of `e`, with the HTTP error behind it"
        if self._http_status == 404 and (alt := _mcp_path(self.server)):  # `http://host:port`: a server, but no MCP at that path
            return f"it answered 404 (Not Found) at that URL: no MCP endpoint there; most servers serve streamable HTTP at the /mcp path: try {alt}"
        return f"{e.message} ({self._http_error})" if self._http_error else e.message

    def _unconnected(self, e: Exception) -> MCPConnectionError:
        "Any failure to connect (no server at the address, a command that exits, a handshake that makes no sense) as one error"
        one = _single(e)
        if isinstance(one, MCPError): why = self._words(one)
        else: why = '; '.join(f"{type(x).__name__}: {short(x) or 'no message'}" for x in getattr(one, 'exceptions', None) or [one])
        code = one.code if isinstance(one, MCPError) else types.CONNECTION_CLOSED
        return MCPConnectionError(code, f"Can't connect to the MCP server {self._where()}: {why}{self._last_words()}")

    def _last_words(self) -> str:
        "'; ' and what a stdio command said as it failed (its exit status, its last lines on stderr); '' when nothing"
        if self._tail is None: return ''
        self._tail.child.close()  # (closed already, unless the command was never spawned)
        note = exit_note(self._procs, self._tail)
        return f"; {note}" if note else ''

    def _where(self) -> str:
        "The server, as the user gave it"
        if isinstance(self.server, StdioServerParameters): return shlex.join([self.server.command, *self.server.args])
        return self.server if isinstance(self.server, str) else type(self.server).__name__

    async def _checked(self, session: Any, name: str, result: types.CallToolResult) -> None:
        "The SDK's check of a structured result against the tool's output schema, as `validate_output` says"
        if self.validate_output is False: return
        try: await self._validate(name, result)
        except RuntimeError as e:
            if self.validate_output != 'warn': raise MCPToolError(str(e), name) from None
            warnings.warn(f"MCPClient: {e}", stacklevel=2)

    @asynccontextmanager
    async def _open(self, dispfn: Callable[..., Any]) -> AsyncIterator[MCPClient]:
        "Connect, list the tools and make them dispatch through `dispfn`; disconnect on exit"
        self._http_error, self._http_status, self._tail, self._procs = None, None, None, []
        server = self._transport()
        # the whole connection (handshake, tool list) within `timeout`, as the user counts it: the SDK's own timeout counts
        # each try anew, and a command that never answered is given up to 2 s to exit before it is killed
        wait = self.timeout - (min(_STOP_GRACE, self.timeout / 2) if isinstance(self.server, StdioServerParameters) else 0)
        with anyio.CancelScope(deadline=anyio.current_time() + wait) as scope:
            try: c = await Client(server, read_timeout_seconds=self.timeout, extensions=[TasksExtension()],
                                  elicitation_callback=self._elicit if self.on_elicit else None,
                                  sampling_callback=self._sample if self.on_sample else None).__aenter__()
            except Exception as e: raise self._unconnected(e) from None
            try:  # `c` was entered above, where a failure to connect gets the HTTP error's words
                self._validate = c.session.validate_tool_result
                c.session.validate_tool_result = partial(self._checked, c.session)  # type: ignore[method-assign]  # (the SDK's check, as asked)
                try: specs = await self._list(c)
                except Exception as e: raise self._unconnected(e) from None
                scope.deadline = math.inf  # connected: from now on each call has its own `timeout`
                async with self._built(c, specs, dispfn): yield self
            except BaseException as e:
                await c.__aexit__(type(e), e, e.__traceback__)
                raise
            else: await c.__aexit__(None, None, None)
        # a command that exited while a child of it holds its stdout open is never seen to close: its status says why
        if scope.cancelled_caught: raise TimeoutError(f"The MCP server did not answer within {self.timeout:g} s{self._last_words()}")

    @staticmethod
    async def _list(c: Client) -> list[types.Tool]:
        specs: list[types.Tool] = []
        cursor: str | None = None
        while True:  # a server may page its tool list
            page = await c.list_tools(cursor=cursor)
            specs += page.tools
            if not (cursor := page.next_cursor): return specs

    @asynccontextmanager
    async def _built(self, c: Client, specs: list[types.Tool], dispfn: Callable[..., Any]) -> AsyncIterator[MCPClient]:
        "The server's tools built as Python callables for the life of the connection"
        self._client, self._specs, self.skipped = c, [], []
        self._wrapped = {t.name for t in specs if is_wrapper(t.output_schema)}
        self._tasked = {t.name for t in specs if needs_task(t)}
        no_tasks = can_run_tasks(c.session) if self._tasked else None
        for t in specs:  # one tool that can't be built costs only itself
            if no_tasks and t.name in self._tasked:
                self.skipped.append((t.name, no_tasks))
                continue
            if why := unsendable(t.name):  # no provider may be sent it: a hostile name costs only its own tool
                self.skipped.append((t.name, why))
                continue
            try: self._tools[self.prefix + t.name] = mk_tool(dispfn, t.model_copy(update={'name': self.prefix + t.name}), check=self.check)
            except (ValueError, TypeError, SchemaError) as e: self.skipped.append((t.name, f"{type(e).__name__}: {e}"))
            else:
                self._specs.append(t)
                self._tools[self.prefix + t.name].__output_schema__ = value_schema(t.output_schema)  # type: ignore[attr-defined]  # code mode's return type
        if self.skipped:
            warnings.warn(f"MCPClient: {len(self.skipped)} tool(s) of the server can't be called from Python and were left out: "
                          + '; '.join(f"'{printable(nm)}' ({why[:200]})" for nm, why in self.skipped), stacklevel=4)
        try: yield self
        finally: self._client, self._specs, self._tools, self._wrapped, self._tasked = None, [], {}, set(), set()

    # the tool's name is positional-only, so a property called `name` (or `self`) arrives in `args` like any other
    async def _acall(self, tool: str, /, **args: Any) -> Any:
        if self._client is None: raise RuntimeError(f"Tool {tool!r} called after its MCPClient closed")
        nm = tool[len(self.prefix):]  # as the server spells it
        try: r = await self._send(self._client, tool, nm, args)
        except (MCPToolError, TimeoutError): raise  # (a task's deadline: a TimeoutError is an OSError too)
        except TaskFailed as e: raise MCPToolError(f"Tool {tool!r}: {e}", tool, e.code) from None
        except MCPError as e:
            if f'exceeded the {self.max_message} byte limit' in e.message:  # the SDK's reader of one event: the connection lives on
                raise MCPToolError(f"The MCP server's reply to {tool!r} is more than max_message ({self.max_message:,} bytes) allows: "
                                   "it was not read", tool, e.code) from None
            if e.code == types.CONNECTION_CLOSED: raise MCPConnectionError(e.code, f"{e.message} during {tool!r}") from None
            if e.code == types.REQUEST_TIMEOUT: raise TimeoutError(f"{e.message}: tool {tool!r} got no answer within {self.timeout:g} s") from None
            raise MCPToolError(self._words(e), tool, e.code) from None  # the server's words
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as e:
            msg = f"The connection to the MCP server failed during {tool!r}: {type(e).__name__}: {e}"
            raise MCPConnectionError(types.CONNECTION_CLOSED, msg) from None
        return _value(tool, r, nm in self._wrapped)

    async def _send(self, c: Client, tool: str, nm: str, args: JsonDict) -> types.CallToolResult:
        "Call tool `nm` (a task, when it runs only as one) and wait for its result"
        progress = None if self.on_progress is None else partial(self._progress, tool)
        async def status(task: Any) -> None: await self._progress(tool, None, None, task.status_message)
        try:
            if nm not in self._tasked:  # a 2026-07-28 server may still answer with a task (SEP-2663): `waiting` says how to wait
                token = waiting.set(Waiting(self.timeout, self.task_timeout, status))
                try: return await c.call_tool(nm, args, progress_callback=progress, meta=_trace.meta())  # type: ignore[arg-type]  # (a `_meta` dict)
                finally: waiting.reset(token)
            r = await run_task(c.session, nm, args, _trace.meta(), Waiting(self.timeout, self.task_timeout, status))
        except TimeoutError:
            raise TimeoutError(f"Tool {tool!r}: its task did not end within {self.task_timeout:g} s; the server was asked to cancel it") from None
        if not r.is_error: await c.session.validate_tool_result(nm, r)
        return r

    async def _progress(self, tool: str, progress: float | None, total: float | None, message: str | None) -> None:
        "Hand a progress report (or a task's status message) to `on_progress`; a failing callback costs only its report"
        if self.on_progress is None: return
        try: await _answer(self.on_progress, tool, progress, total, message)
        except Exception: _log.warning('MCPClient: on_progress failed for %r', tool, exc_info=True)

    def _call(self, tool: str, /, **args: Any) -> Any:
        if self._portal is None: raise RuntimeError(f"Tool {tool!r} called after its MCPClient closed")
        return self._portal.call(partial(self._acall, tool, **args))

    def __enter__(self) -> Self:
        with _one_error(), ExitStack() as stack:
            self._portal = portal = stack.enter_context(start_blocking_portal(name='funccall-mcp'))
            stack.callback(setattr, self, '_portal', None)
            stack.enter_context(portal.wrap_async_context_manager(self._open(self._call)))
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> bool | None:
        # the SDK's task groups wrap an error leaving the block (a failed call's `MCPToolError`) in an exception group
        try: return self._stack.__exit__(*exc)
        except Exception as e: return _unwrapped(e, exc)

    async def __aenter__(self) -> Self:
        with _one_error():
            async with AsyncExitStack() as stack:
                await stack.enter_async_context(self._open(self._acall))
                self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        try: return await self._stack.__aexit__(*exc)
        except Exception as e: return _unwrapped(e, exc)

for _c in (MCPClient, MCPToolError, MCPConnectionError): publish(_c, 'funccall.mcp')  # shown, and pickled, by the name users import

# `help()` shows each public parameter's `# comment` (see core/_helpdoc.py)
add_param_docs(globals()[n] for n in __all__)
