"""MCP both ways: an MCP server's tools as Python callables, and Python functions served as an MCP server.

`MCPClient` connects to a server (a command over stdio, a streamable-HTTP URL, or an in-process `Server`) and
rebuilds each of its tools with `mk_tool`, so arguments are checked against the tool's schema before they are
sent. Entered with `with`, the tools are plain functions (the session runs on an event loop in a background
thread); entered with `async with`, they are coroutine functions. A result comes back as a Python value: the
structured content when the server gives it, else the content items, a text item as `str` and any other item
(image, audio, resource) as its MCP JSON dict, exactly as on the wire (base64 `data`/`blob`, `mimeType`); one
item on its own, several as a list, none as `None`. A result the server flags `isError` raises `MCPToolError`.

`MCPClient` builds each tool on its own: a tool whose schema can't be built is left out, warned about and listed in
`.skipped`, and the others work. Connecting (handshake and tool list) takes at most `timeout` seconds in all.

`mk_server` serves functions, callable objects, `Tool`s, `ToolGroup`s and `Toolbox`es. Every call runs the tool's own
pipeline (`Tool.aexecute`: injected values, hooks, confirmation, cache, middleware, `max_chars`); a bad call or a
failing tool comes back as an `isError` result whose text says what went wrong, for the model to read. A tool's
return annotation becomes its `outputSchema` (an object as it is, anything else wrapped as `{"result": value}`) and
its results carry structured content that fits it; `Tool(title=, read_only=, destructive=, idempotent=, open_world=)`
become its title and annotations. A tool that requires confirmation asks the client's user through elicitation, or
is refused when the client can't ask. From the command line: `funccall mcp serve TARGET ... [--http HOST:PORT]`;
over stdio, whatever the tools (or their modules, as they load) print goes to stderr.
"""
from __future__ import annotations

import argparse, hashlib, json, math, os, shlex, sys, warnings
from collections.abc import Mapping
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from functools import partial
from typing import Any

try:
    import anyio
    import mcp_types as types
    from anyio.from_thread import start_blocking_portal
    from mcp import Client, StdioServerParameters, stdio_client
    from mcp.server import Server
    from mcp.server.stdio import stdio_server
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
except ImportError as e:  # `mcp` is an optional extra; mcp 1.x lacks `Client` and `mcp_types`
    raise ImportError(f"funccall.mcp needs the MCP SDK 2.x ({e}): pip install 'funccall[mcp]'") from e

from . import __version__, _trace, content
from ._json import jsonable
from ._load import TargetError, expand, load_target
from ._ns import ToolNotFound
from ._types import SchemaError, empty, signature
from .call import error_text
from .inverse import mk_tool
from .schema import handle_type
from .tools import StopRun, Tool, Toolbox, ToolResult, to_text

__all__ = ['MCPClient', 'MCPToolError', 'mk_server', 'output_schema', 'serve', 'main']

class MCPToolError(RuntimeError):
    "A tool call the MCP server answered with `isError`: the message is the server's text"
    def __init__(self, text: str, tool: str=None):
        super().__init__(text or f"Tool {tool!r} failed")
        self.tool = tool  # the tool's name

# --- results: MCP content -> Python values ------------------------------------------------------------

def _item(c) -> Any:
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

def _server(server, env: dict | None, cwd) -> Any:
    "What `mcp.Client` takes for `server`: a URL as is, a command as `StdioServerParameters`"
    if isinstance(server, str) and server.startswith(('http://', 'https://')): return server
    if isinstance(server, str): server = shlex.split(server)
    if isinstance(server, (list, tuple)):
        if not server: raise ValueError("MCPClient: the server command is empty")
        return StdioServerParameters(command=str(server[0]), args=[str(a) for a in server[1:]], env=env, cwd=cwd)
    return server

_STOP_GRACE = 2.0  # seconds the SDK's stdio client waits for a command to exit once its stdin is closed

@contextmanager
def _one_error():
    "Raise the one error inside nested exception groups: the SDK's task groups wrap even a single failure to connect"
    try: yield
    except Exception as e:
        one = e
        while isinstance(getattr(one, 'exceptions', None), tuple) and len(one.exceptions) == 1: one = one.exceptions[0]
        if one is e: raise
        raise one from None

class MCPClient:
    "A connection to an MCP server whose tools are Python callables: sync inside `with`, async inside `async with`"
    def __init__(
        self,
        server,                # a command (list of args, or one string split like a shell's), a streamable-HTTP URL, or anything `mcp.Client` takes
        env: dict=None,        # extra environment variables for a command (it inherits only PATH, HOME and a few more)
        cwd=None,              # working directory for a command
        timeout: float=60,     # seconds to wait for each reply from the server, and for connecting (stopping a silent command included)
        check: bool=True,      # check arguments against each tool's schema before sending (see `mk_tool`)
        errlog=None,           # where a command's stderr goes: a file, `subprocess.DEVNULL`, or `None` for this process's own
    ):
        self.server, self.timeout, self.check, self.errlog = _server(server, env, cwd), timeout, check, errlog
        self._client = self._portal = self._stack = None
        self._specs, self._tools, self._wrapped = [], {}, set()
        self.skipped: list[tuple[str, str]] = []  # (name, reason) of each tool of the server that couldn't be built

    def tools(self) -> dict:  # tool name (as the server spells it) -> callable; also a namespace for `call_func`
        "The server's tools as functions with their schemas' signatures, listed when the connection opened"
        if self._client is None: raise RuntimeError("MCPClient is not connected: use `with MCPClient(...) as c:` or `async with`")
        return dict(self._tools)

    def schemas(self) -> list:  # `{'name', 'description', 'input_schema'}` dicts, as `get_schema` makes them
        "The server's tool definitions in funccall's format, to hand to a model"
        self.tools()  # the same check: a connection must be open
        return [{'name': t.name, 'description': t.description or '', 'input_schema': t.input_schema} for t in self._specs]

    @asynccontextmanager
    async def _open(self, dispfn):
        "Connect, list the tools and make them dispatch through `dispfn`; disconnect on exit"
        # the SDK sends a command's stderr to `sys.stderr`, which in a notebook is no file a process can write to
        server = stdio_client(self.server, errlog=self.errlog) if isinstance(self.server, StdioServerParameters) else self.server
        # the whole connection (handshake, tool list) within `timeout`, as the user counts it: the SDK's own timeout counts
        # each try anew, and a command that never answered is given up to 2 s to exit before it is killed
        wait = self.timeout - (min(_STOP_GRACE, self.timeout / 2) if isinstance(self.server, StdioServerParameters) else 0)
        with anyio.CancelScope(deadline=anyio.current_time() + wait) as scope:
            async with Client(server, read_timeout_seconds=self.timeout) as c:
                specs = await self._list(c)
                scope.deadline = math.inf  # connected: from now on each call has its own `timeout`
                async with self._built(c, specs, dispfn): yield self
        if scope.cancelled_caught: raise TimeoutError(f"The MCP server did not answer within {self.timeout:g} s")

    @staticmethod
    async def _list(c) -> list:
        specs, cursor = [], None
        while True:  # a server may page its tool list
            page = await c.list_tools(cursor=cursor)
            specs += page.tools
            if not (cursor := page.next_cursor): return specs

    @asynccontextmanager
    async def _built(self, c, specs: list, dispfn):
        "The server's tools built as Python callables for the life of the connection"
        self._client, self._specs, self.skipped = c, [], []
        self._wrapped = {t.name for t in specs if (t.output_schema or {}).get(_WRAP)}
        for t in specs:  # one tool that can't be built costs only itself
            try: self._tools[t.name] = mk_tool(dispfn, t, check=self.check)
            except (ValueError, TypeError, SchemaError) as e: self.skipped.append((t.name, f"{type(e).__name__}: {e}"))
            else:
                self._specs.append(t)
                self._tools[t.name].__output_schema__ = t.output_schema  # what code mode shows as the return type
        if self.skipped:
            warnings.warn(f"MCPClient: {len(self.skipped)} tool(s) of the server can't be called from Python and were left out: "
                          + '; '.join(f'{nm!r} ({why[:200]})' for nm, why in self.skipped), stacklevel=4)
        try: yield self
        finally: self._client, self._specs, self._tools, self._wrapped = None, [], {}, set()

    # the tool's name is positional-only, so a property called `name` (or `self`) arrives in `args` like any other
    async def _acall(self, tool: str, /, **args) -> Any:
        if self._client is None: raise RuntimeError(f"Tool {tool!r} called after its MCPClient closed")
        return _value(tool, await self._client.call_tool(tool, args, meta=_trace.meta()), tool in self._wrapped)  # joins our trace

    def _call(self, tool: str, /, **args) -> Any:
        if self._portal is None: raise RuntimeError(f"Tool {tool!r} called after its MCPClient closed")
        return self._portal.call(partial(self._acall, tool, **args))

    def __enter__(self) -> MCPClient:
        with _one_error(), ExitStack() as stack:
            self._portal = stack.enter_context(start_blocking_portal(name='funccall-mcp'))
            stack.callback(setattr, self, '_portal', None)
            stack.enter_context(self._portal.wrap_async_context_manager(self._open(self._call)))
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc) -> None: self._stack.__exit__(*exc)

    async def __aenter__(self) -> MCPClient:
        with _one_error():
            async with AsyncExitStack() as stack:
                await stack.enter_async_context(self._open(self._acall))
                self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc) -> None: await self._stack.__aexit__(*exc)

# --- the server ---------------------------------------------------------------------------------------

_WRAP = 'x-fastmcp-wrap-result'  # marks an output schema whose value is wrapped as `{"result": value}` (as fastmcp marks it)
_KEY = 'funccall-confirm'        # the key of the confirmation question in an `input_required` round trip

def _toolbox(tools, injected: dict | None) -> Toolbox:
    "The tools to serve, as one `Toolbox`: from a function, callable object, `Tool`, `ToolGroup`, `Toolbox`, a list, or a dict name -> callable"
    if isinstance(tools, Mapping): box = Toolbox([t if isinstance(t, Tool) and t.name == nm else Tool(t, name=nm) for nm, t in tools.items()])
    else:
        items = tools if isinstance(tools, (list, tuple)) else [tools]
        box = Toolbox(expand(items))
        for t in items:  # a toolbox's own injected values come with its tools
            if isinstance(t, Toolbox): box.injected.update(t.injected)
    box.injected.update(injected or {})
    for t in box:  # a missing injected value is the developer's to fix before serving, not a failure of each call
        if missing := [k for k in t.inject if k not in box.injected]:
            raise TypeError(f"Tool {t.name!r} needs {', '.join(map(repr, missing))}: pass it in mk_server(injected=...)")
    return box

def output_schema(
    t: Tool,  # a tool
) -> dict | None:  # the JSON Schema of its structured results, `None` when it has none
    "The `outputSchema` of `t` from its return annotation: an object as it is, any other value wrapped as `{'result': value}`"
    if t.max_chars is not None: return None  # a result cut for the model is text, not the annotated value
    ret = signature(t.fn).returns
    if ret in (empty, None, type(None), Any, types.CallToolResult): return None
    if isinstance(ret, type) and issubclass(ret, content.Content): return None  # media: content items, no structure
    defs = {}
    try: s = handle_type(ret, defs)
    except SchemaError: return None  # the tool runs all the same; its results go as text
    ref = s.get('$ref', '')
    target = defs.get(ref.rsplit('/', 1)[-1], {}) if ref.startswith('#/$defs/') and len(s) == 1 else s
    if target.get('type') == 'object': s = dict(target)
    else: s = {'type': 'object', 'properties': {'result': s}, 'required': ['result'], _WRAP: True}
    return {**s, '$defs': defs} if defs else s

def _mcp_tool(t: Tool, out: dict | None) -> types.Tool:
    hints = {f'{k}_hint': v for k, v in t.hints.items()}
    annotations = types.ToolAnnotations(title=t.title, **hints) if hints or t.title else None
    return types.Tool(name=t.name, title=t.title, description=t.description, input_schema=t.schema['input_schema'],
                      output_schema=out, annotations=annotations)

def _result(r: ToolResult, out: dict | None, version: str) -> types.CallToolResult:
    "A tool's value as an MCP result: its text for the model, and structured content that fits the tool's output schema"
    v = r.value
    if isinstance(v, types.CallToolResult): return v  # a tool that builds its own MCP result
    if (ps := content.parts(v, to_text)) is not None:  # images, audio, files; a `-> list` tool's structured content as JSON too
        sc = {'result': content.to_json(ps)} if out is not None and out.get(_WRAP) else None
        return types.CallToolResult.model_validate({'content': content.mcp(ps), 'structuredContent': sc})
    if out is None and r.limit is not None: return types.CallToolResult(content=[types.TextContent(text=r.text)])
    try: v = jsonable(v)
    except TypeError: v = str(v)  # what JSON can't hold goes as its text, which is what a model reads anyway
    text = [] if v is None else [types.TextContent(text=v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))]
    if out is not None: return types.CallToolResult(content=text, structured_content={'result': v} if out.get(_WRAP) else v)
    if v is None or isinstance(v, str): return types.CallToolResult(content=text)
    # without an output schema, before 2026-07-28, structured content must be a JSON object
    return types.CallToolResult(content=text, structured_content=v if isinstance(v, dict) or version in MODERN_PROTOCOL_VERSIONS else None)

def _error(text: str) -> types.CallToolResult: return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)

_QUESTION = {'type': 'object', 'required': ['confirm'],
             'properties': {'confirm': {'type': 'boolean', 'title': 'Run it', 'description': 'Allow this tool call to run'}}}

def _confirm_by_elicitation(ctx, params, asked: list):
    "A `confirm(tool, args)` that asks the client's user: inside the call (before 2026-07-28), or by an `input_required` round trip"
    async def confirm(tool: Tool, args: dict) -> bool:
        msg = f"Allow {tool.call_str(args)}?"
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:  # the call is answered with the question, then sent again
            answer = (params.input_responses or {}).get(_KEY)  # with the answer: what runs before confirming runs twice
            # an answer counts only for the question it answers: the same call, with the same arguments
            if not isinstance(answer, types.ElicitResult) or params.request_state != _digest(msg):
                asked.append(types.InputRequiredResult(request_state=_digest(msg), input_requests={_KEY: types.ElicitRequest(
                    params=types.ElicitRequestFormParams(message=msg, requested_schema=_QUESTION))}))
                return False
        else: answer = await ctx.session.elicit_form(msg, _QUESTION, related_request_id=ctx.request_id)
        return answer.action == 'accept' and (answer.content or {}).get('confirm') is True
    return confirm

def _digest(text: str) -> str: return hashlib.sha256(text.encode()).hexdigest()[:32]

def mk_server(
    tools,                  # functions, callable objects, `Tool`s, `ToolGroup`s, a `Toolbox`, a list of them, or a dict of name -> callable
    name: str='funccall',   # the server's name, as clients see it
    injected: dict=None,    # the application's values for the tools' injected parameters
) -> Server:                # the SDK's low-level `Server`: run it over stdio or HTTP (`serve`), or in-process with `MCPClient`
    """An MCP server for `tools`: every call runs the tool's own pipeline (injected values, hooks, confirmation,
    cache, middleware, `max_chars`). A tool that requires confirmation asks the client's user (elicitation);
    a client that can't ask gets the call refused."""
    box = _toolbox(tools, injected)
    outs = {t.name: output_schema(t) for t in box}
    listed = [_mcp_tool(t, outs[t.name]) for t in box]

    async def list_tools(ctx, params) -> types.ListToolsResult: return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params):
        # a bad call or a failing tool is the model's to read and fix, not a protocol error: the texts of `raise_on_err=False`
        t = box.tools.get(params.name)  # exactly a listed tool: no dotted path into the objects behind them
        if t is None: return _error(error_text(ToolNotFound(params.name, list(box.tools))))
        confirm, asked = None, []
        if t.requires_confirmation:
            caps = ctx.session.client_capabilities
            if caps is None or caps.elicitation is None:
                return _error(f"Tool {t.name!r} needs the user's confirmation, and this MCP client can't ask for it "
                              "(it does not support elicitation): the call was refused")
            confirm = _confirm_by_elicitation(ctx, params, asked)
        with _trace.joined(params.meta): r = await t.aexecute(params.arguments or {}, box.injected, confirm=confirm)
        if isinstance(r.exception, StopRun): return _error(error_text(r.exception))  # a client's loop has no stop: the call failed
        if asked: return asked[0]
        return _result(r, outs[t.name], ctx.protocol_version) if r.ok else _error(r.error)

    return Server(name, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)

@contextmanager
def _stdout_to_stderr():
    "Send what Python code and child processes write to stdout to stderr instead: over stdio, stdout carries the protocol"
    sys.stdout.flush()
    saved, old = os.dup(1), sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try: yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        sys.stdout = old

async def _serve_stdio(server: Server) -> None:
    # the SDK points fd 1 at stderr while it serves; `sys.stdout` too, so a tool's `print` never reaches the protocol
    async with stdio_server() as (r, w):
        old, sys.stdout = sys.stdout, sys.stderr
        try: await server.run(r, w, server.create_initialization_options())
        finally: sys.stdout = old

def _host_port(http: str) -> tuple[str, int]:
    host, _, port = http.rpartition(':')
    if not port.isdigit(): raise ValueError(f"--http takes HOST:PORT, e.g. 127.0.0.1:8000, not {http!r}")
    return host.strip('[]') or '127.0.0.1', int(port)

def _run(server: Server, http: str | None) -> None:
    if http is None: return anyio.run(_serve_stdio, server)
    import uvicorn  # the MCP SDK's own dependency for HTTP
    host, port = _host_port(http)
    try: uvicorn.run(server.streamable_http_app(host=host), host=host, port=port, log_level='warning')
    except KeyboardInterrupt: pass

def serve(
    tools,                  # the tools, as `mk_server` takes them
    name: str='funccall',   # the server's name, as clients see it
    http: str=None,         # 'HOST:PORT' to serve streamable HTTP at http://HOST:PORT/mcp; default: stdio
    injected: dict=None,    # the application's values for the tools' injected parameters
) -> None:
    "Serve `tools` as an MCP server over stdin/stdout until the client hangs up, or over streamable HTTP until stopped"
    _run(mk_server(tools, name, injected), http)

# --- the command line ---------------------------------------------------------------------------------

def main(
    argv: list[str] | None = None,  # the arguments after `python -m funccall.mcp` (default: `sys.argv[1:]`)
) -> int:                           # the exit status
    "Run `python -m funccall.mcp serve TARGET ... [--http HOST:PORT]`"
    ap = argparse.ArgumentParser(prog='python -m funccall.mcp', description='Serve Python functions as an MCP server.')
    sub = ap.add_subparsers(dest='cmd', required=True)
    sp = sub.add_parser('serve', help="serve TARGETs' tools over stdio, or streamable HTTP",
                        epilog='TARGET: module (its public documented functions), module:name, or path/to/file.py[:name]')
    sp.add_argument('targets', nargs='+', metavar='TARGET', help='where the tools are')
    sp.add_argument('--name', default='funccall', help='the server name clients see (default: funccall)')
    sp.add_argument('--http', metavar='HOST:PORT', help='serve streamable HTTP at http://HOST:PORT/mcp instead of stdio')
    args = ap.parse_args(argv)
    try:
        with _stdout_to_stderr():  # what the tools' modules print as they load must not reach the protocol
            fs = [f for t in args.targets for f in load_target(t)]
        if not fs: raise TargetError(f"no public functions with docstrings in {' '.join(args.targets)}")
        if args.http: _host_port(args.http)
        server = mk_server(fs, args.name)
    except (TargetError, SchemaError, TypeError, ValueError) as e:
        print(f"funccall mcp: {e}", file=sys.stderr)
        return 2
    _run(server, args.http)
    return 0

if __name__ == '__main__': sys.exit(main())
