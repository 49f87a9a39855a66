"""A stdio MCP server (the SDK's low-level `Server`) whose `garble` tool answers with a line that isn't UTF-8, then
keeps its process alive: a client must fail the pending call at once rather than wait for its timeout."""
import os, sys, time

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

TOOLS = [types.Tool(name='garble', description='Reply with bytes that are not UTF-8', input_schema={'type': 'object', 'properties': {}}),
         types.Tool(name='echo', description='Echo', input_schema={'type': 'object', 'properties': {'t': {'type': 'string'}}})]

async def list_tools(ctx, params): return types.ListToolsResult(tools=TOOLS)

async def call_tool(ctx, params):
    if params.name == 'echo': return types.CallToolResult(content=[types.TextContent(text=params.arguments['t'])])
    os.write(OUT, b'\xff\xfe{"jsonrpc": "2.0"\n')  # straight to the pipe the client reads
    time.sleep(60)

async def main():
    async with stdio_server() as (r, w):
        await Server('bad', on_list_tools=list_tools, on_call_tool=call_tool).run(r, w, Server('x').create_initialization_options())

OUT = os.dup(sys.stdout.fileno())
if __name__ == '__main__': anyio.run(main)
