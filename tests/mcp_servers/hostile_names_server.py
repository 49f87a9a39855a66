"""A stdio MCP server (the SDK's low-level `Server`) whose tool list mixes honest tools with names no provider takes:
ESC, a newline, a right-to-left override, NUL. A client must leave those out (saying why) and keep the others."""
import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

OBJ = {'type': 'object', 'properties': {'t': {'type': 'string'}}}
HOSTILE = ['red\x1b[31m', 'two\nlines', 'safe\u202etxt.exe', 'nul\x00', 'zero\u200bwidth']
TOOLS = [types.Tool(name=nm, description='A tool', input_schema=OBJ) for nm in ['echo', *HOSTILE, 'shout']]

async def list_tools(ctx, params): return types.ListToolsResult(tools=TOOLS)

async def call_tool(ctx, params):
    t = params.arguments['t']
    return types.CallToolResult(content=[types.TextContent(text=t.upper() if params.name == 'shout' else t)])

async def main():
    async with stdio_server() as (r, w):
        await Server('hostile', on_list_tools=list_tools, on_call_tool=call_tool).run(r, w, Server('x').create_initialization_options())

if __name__ == '__main__': anyio.run(main)
