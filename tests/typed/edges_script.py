"""A user's script: MCP both ways, code mode and tool search, typed with no cast. Checked, never run: by
`mypy --strict` and by pyright in strict mode (tests/test_typed_script.py), as tests/typed/user_script.py is."""
# pyright: strict
from __future__ import annotations

import asyncio
from typing import Any, Callable

import mcp_types
from mcp.server import Server
from starlette.applications import Starlette

from funccall import Toolbox
from funccall.mcp import MCPClient, MCPConnectionError, MCPContext, MCPToolError, mk_asgi_app, mk_server, serve
from funccall.toolsets.boxlike import ToolboxLike
from funccall.toolsets.codemode import code_api, code_tool
from funccall.toolsets.search import deferred, find_tools
from funccall.toolsets.wrap import filtered, prefixed, view


def add(a: int, b: int) -> int:
    "Add"
    return a + b

async def slow(n: int, ctx: MCPContext) -> int:
    "Count, reporting progress"
    await ctx.report_progress(n, total=10, message='counting')
    return n

srv: Server[Any] = mk_server([add])
srv2 = mk_server({'plus': add}, name='calc', injected={'k': 1}, errors='message', tasks=['plus'])
app: Starlette = mk_asgi_app([add, slow], allow_hosts=['example.com'])

def sync_use() -> int:
    with MCPClient(['python', '-m', 'funccall.mcp', 'serve', 'tools.py'], env={'A': 'b'}, cwd='.') as c:
        tools: dict[str, Callable[..., Any]] = c.tools()
        defs: list[dict[str, Any]] = c.schemas()
        total = tools['add'](a=1, b=2)
        skipped: list[tuple[str, str]] = c.skipped
        print(total, defs, skipped)
    return 1

async def async_use() -> None:
    try:
        async with MCPClient('http://localhost:8000/mcp', headers={'k': 'v'}, timeout=5.0, prefix='x_',
                             on_progress=lambda tool, done, total, message: None, validate_output='warn') as c:
            print(await c.tools()['x_add'](a=1, b=2))
    except MCPToolError as e:
        code: int | None = e.code
        print(code, e.tool)
    except MCPConnectionError as e:
        print(e)

def sample(p: mcp_types.CreateMessageRequestParams) -> str: return 'hi'
client = MCPClient('python server.py', on_sample=sample, on_elicit=lambda message, schema: {'ok': True})
in_process = MCPClient(srv)

box = Toolbox([add])
seen: ToolboxLike = box
d = deferred(box, keep=['add'])
loaded: list[str] = d.load(find_tools(seen, 'add'))
both = Toolbox([prefixed(box, 'a'), filtered(box, ['add']), view(box)])
print(code_api(box), code_tool(box, isolate=False), loaded, both)
asyncio.run(async_use())
if __name__ == '__main__': serve([add], http='127.0.0.1:8000')
