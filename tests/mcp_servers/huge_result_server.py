"""A stdio MCP server (the SDK's low-level `Server`) whose `dump` tool answers with `n` characters of text (200 MB by
default), and whose `fail` tool fails (`isError`) with as long a message: a hostile or runaway server. What reaches a
model of it must be bounded."""
import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

TOOLS = [types.Tool(name='dump', description='Dump everything', input_schema={'type': 'object', 'properties': {'n': {'type': 'integer'}}}),
         types.Tool(name='fail', description='Fail at length', input_schema={'type': 'object', 'properties': {'n': {'type': 'integer'}}})]

async def list_tools(ctx, params): return types.ListToolsResult(tools=TOOLS)

async def call_tool(ctx, params):
    text = 'x' * params.arguments.get('n', 200_000_000)
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=params.name == 'fail')

async def main():
    async with stdio_server() as (r, w):
        await Server('huge', on_list_tools=list_tools, on_call_tool=call_tool).run(r, w, Server('x').create_initialization_options())

if __name__ == '__main__': anyio.run(main)
