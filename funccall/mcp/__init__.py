"""MCP both ways: an MCP server's tools as Python callables (`client`: `MCPClient`), and Python functions served as an
MCP server (`server`: `mk_server`, `mk_asgi_app`, `MCPContext`; `cli`: `serve`, `main`, `python -m funccall.mcp serve`).

The names load with the module that defines them, on first use: a `--workers` process unpickles its config
(`funccall.mcp._worker`) before it answers uvicorn's health checks, which kill a worker silent for 5 s, so nothing
here may import the MCP SDK (seconds on a busy machine) before the app is built. Without the SDK, importing this
package says how to install it."""
from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

__all__ = ['MCPClient', 'MCPToolError', 'MCPConnectionError', 'MCPContext', 'context_params', 'mk_server', 'mk_asgi_app', 'output_schema',
           'serve', 'main',
           'SECRET_ENV', 'NonceStore', 'RedisStore', 'TASKS']

def _sdk_missing() -> str | None:
    "What of the MCP SDK 2.x is missing, found without importing it (mcp 1.x has no `mcp_types`); None when it is all there"
    for nm in ('mcp', 'mcp_types', 'anyio', 'starlette'):
        try:
            if importlib.util.find_spec(nm) is None: return f"No module named {nm!r}"
        except (ImportError, ValueError): return f"No module named {nm!r}"
    return None

if (_missing := _sdk_missing()) is not None:  # `mcp` is an optional extra
    raise ImportError(f"funccall.mcp needs the MCP SDK 2.x ({_missing}): pip install 'funccall[mcp]'")

_CLIENT = {'MCPClient', 'MCPToolError', 'MCPConnectionError'}
_SERVER = {'MCPContext', 'context_params', 'mk_server', 'mk_asgi_app', 'output_schema', 'TASKS'}

if TYPE_CHECKING:  # what a checker reads: the names, from the modules that define them (at run time, `__getattr__` below)
    from ._state import SECRET_ENV, NonceStore
    from ._store import RedisStore
    from .cli import main, serve
    from .client import MCPClient, MCPConnectionError, MCPToolError
    from .server import TASKS, MCPContext, context_params, mk_asgi_app, mk_server, output_schema

def __getattr__(nm: str) -> Any:
    "A public name, from the module that defines it (imported now, if it wasn't)"
    if nm in _CLIENT: from . import client; return getattr(client, nm)
    if nm in _SERVER: from . import server; return getattr(server, nm)
    if nm in ('serve', 'main'): from . import cli; return getattr(cli, nm)
    if nm in ('SECRET_ENV', 'NonceStore'): from . import _state; return getattr(_state, nm)
    if nm == 'RedisStore': from . import _store; return getattr(_store, nm)
    raise AttributeError(f"module 'funccall.mcp' has no attribute {nm!r}")

def __dir__() -> list[str]: return sorted({*globals(), *__all__})
