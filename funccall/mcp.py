"""MCP both ways: an MCP server's tools as Python callables, and Python functions served as an MCP server.

`MCPClient` connects to a server (a command over stdio, a streamable-HTTP URL, or an in-process `Server`) and
rebuilds each of its tools with `mk_tool`, so arguments are checked against the tool's schema before they are
sent. Entered with `with`, the tools are plain functions (the session runs on an event loop in a background
thread); entered with `async with`, they are coroutine functions. A result comes back as a Python value: the
structured content when the server gives it, else the content items, a text item as `str` and any other item
(image, audio, resource) as its MCP JSON dict, exactly as on the wire (base64 `data`/`blob`, `mimeType`); one
item on its own, several as a list, none as `None`. A result the server flags `isError` raises `MCPToolError`.

`mk_server` serves functions with funccall's own schemas (`get_schema(f, evalable=True)`) and runs each call
through `call_func_async`: a bad call or a failing tool comes back as an `isError` result whose text says what
went wrong, for the model to read. From the command line: `python -m funccall.mcp serve module:function ...`.
"""
from __future__ import annotations

import argparse, json, shlex, sys
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

from . import __version__
from ._json import jsonable
from ._ns import ToolNotFound
from ._types import SchemaError, is_callable_object
from .call import call_func_async, error_text
from .cli import TargetError, load_target
from .inverse import mk_tool
from .schema import get_schema

__all__ = ['MCPClient', 'MCPToolError', 'mk_server', 'serve', 'main']

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

def _value(tool: str, r: types.CallToolResult) -> Any:
    "The Python value of tool result `r`; raises `MCPToolError` for an error result"
    if r.is_error: raise MCPToolError('\n'.join(c.text for c in r.content if c.type == 'text'), tool)
    if r.structured_content is not None: return r.structured_content
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
        timeout: float=60,     # seconds to wait for each reply from the server
        check: bool=True,      # check arguments against each tool's schema before sending (see `mk_tool`)
        errlog=None,           # where a command's stderr goes: a file, `subprocess.DEVNULL`, or `None` for this process's own
    ):
        self.server, self.timeout, self.check, self.errlog = _server(server, env, cwd), timeout, check, errlog
        self._client = self._portal = self._stack = None
        self._specs, self._tools = [], {}

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
        async with Client(server, read_timeout_seconds=self.timeout) as c:
            specs, cursor = [], None
            while True:  # a server may page its tool list
                page = await c.list_tools(cursor=cursor)
                specs += page.tools
                if not (cursor := page.next_cursor): break
            self._client, self._specs = c, specs
            self._tools = {t.name: mk_tool(dispfn, t, check=self.check) for t in specs}
            try: yield self
            finally: self._client, self._specs, self._tools = None, [], {}

    # the tool's name is positional-only, so a property called `name` (or `self`) arrives in `args` like any other
    async def _acall(self, tool: str, /, **args) -> Any:
        if self._client is None: raise RuntimeError(f"Tool {tool!r} called after its MCPClient closed")
        return _value(tool, await self._client.call_tool(tool, args))

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

def _result(v, version: str) -> types.CallToolResult:
    "A tool's return value as an MCP result: text, plus structured content for JSON values other than strings"
    if isinstance(v, types.CallToolResult): return v  # a tool that builds its own MCP result
    try: v = jsonable(v)
    except TypeError: v = str(v)  # what JSON can't hold goes as its text, which is what a model reads anyway
    if v is None: return types.CallToolResult(content=[])
    if isinstance(v, str): return types.CallToolResult(content=[types.TextContent(text=v)])
    text = types.TextContent(text=json.dumps(v, ensure_ascii=False))
    # before 2026-07-28, structured content must be a JSON object
    structured = v if isinstance(v, dict) or version in MODERN_PROTOCOL_VERSIONS else None
    return types.CallToolResult(content=[text], structured_content=structured)

def _error(text: str) -> types.CallToolResult: return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)

def mk_server(
    fs,                     # the tools: a function, a list of functions, or a dict of tool name -> function
    name: str='funccall',   # the server's name, as clients see it
) -> Server:                # the SDK's low-level `Server`: run it over stdio (`serve`), HTTP, or in-process with `MCPClient`
    "An MCP server whose tools are `fs`, with funccall's schemas, called through `call_func_async`"
    if isinstance(fs, Mapping): pairs = list(fs.items())
    else: pairs = [(None, f) for f in (fs if isinstance(fs, (list, tuple)) else [fs])]
    # a callable object is named by its class: the reference names its schema `__call__`, which no client could call
    schemas = [get_schema(f, evalable=True, name=nm or (type(f).__name__ if is_callable_object(f) else None)) for nm, f in pairs]
    ns = {s['name']: f for s, (_, f) in zip(schemas, pairs)}
    tools = [types.Tool(name=s['name'], description=s['description'], input_schema=s['input_schema']) for s in schemas]

    async def list_tools(ctx, params) -> types.ListToolsResult: return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params) -> types.CallToolResult:
        # a bad call or a failing tool is the model's to read and fix, not a protocol error: the texts of `raise_on_err=False`
        f = ns.get(params.name)  # exactly a listed tool: no dotted path into the objects behind them
        try:
            if f is None: raise ToolNotFound(params.name, list(ns))
            res = await call_func_async(f, params.arguments or {})
        except Exception as e: return _error(error_text(e))
        return _result(res, ctx.protocol_version)

    return Server(name, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)

async def _serve_stdio(server: Server) -> None:
    async with stdio_server() as (r, w): await server.run(r, w, server.create_initialization_options())

def serve(
    fs,                     # the tools, as `mk_server` takes them
    name: str='funccall',   # the server's name, as clients see it
) -> None:
    "Serve `fs` as an MCP server over stdin/stdout until the client hangs up"
    anyio.run(_serve_stdio, mk_server(fs, name))

# --- the command line ---------------------------------------------------------------------------------

def main(
    argv: list[str] | None = None,  # the arguments after `python -m funccall.mcp` (default: `sys.argv[1:]`)
) -> int:                           # the exit status
    "Run `python -m funccall.mcp serve TARGET ...`"
    ap = argparse.ArgumentParser(prog='python -m funccall.mcp', description='Serve Python functions as an MCP server over stdio.')
    sub = ap.add_subparsers(dest='cmd', required=True)
    sp = sub.add_parser('serve', help="serve TARGETs' tools over stdin/stdout",
                        epilog='TARGET: module (its public documented functions), module:function, or path/to/file.py[:name]')
    sp.add_argument('targets', nargs='+', metavar='TARGET', help='where the tools are')
    sp.add_argument('--name', default='funccall', help='the server name clients see (default: funccall)')
    args = ap.parse_args(argv)
    try:
        fs = [f for t in args.targets for f in load_target(t)]
        if not fs: raise TargetError(f"no public functions with docstrings in {' '.join(args.targets)}")
        server = mk_server(fs, args.name)
    except (TargetError, SchemaError) as e:
        print(f"funccall.mcp: {e}", file=sys.stderr)
        return 2
    anyio.run(_serve_stdio, server)
    return 0

if __name__ == '__main__': sys.exit(main())
