"""An MCP server written with the official SDK's low-level `Server` alone, to test funccall's client against.

Its schemas are written by hand, so they can hold what a Python signature can't: property names such as `user-id`,
`class` and `2nd`, a property called `name`, and a tool whose name has a hyphen. Run: `python sdk_server.py`.
"""
import json

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

PNG = 'iVBORw0KGgo='  # base64 of the PNG signature: enough to be an image's data

def _tool(name: str, description: str, props: dict, required=()) -> types.Tool:
    return types.Tool(name=name, description=description, input_schema={'type': 'object', 'properties': props, 'required': list(required)})

TOOLS = [
    _tool('echo', 'Echo `text` back', {'text': {'type': 'string', 'description': 'What to echo'}}, ['text']),
    _tool('stats', 'Count and mean of `values`', {'values': {'type': 'array', 'items': {'type': 'number'}}}, ['values']),
    _tool('fail', 'Always fails', {'why': {'type': 'string'}}, ['why']),
    _tool('greet', 'Greet someone', {'name': {'type': 'string'}, 'greeting': {'type': 'string', 'default': 'Hello'}}, ['name']),
    _tool('odd-names', 'Return the arguments as received',
          {'user-id': {'type': 'string'}, 'class': {'type': 'integer'}, '2nd': {'type': 'boolean'}, 'self': {'type': 'string'}}, ['user-id']),
    _tool('order', 'Order an item in a size',
          {'item': {'type': 'object', 'properties': {'sku': {'type': 'string'}, 'qty': {'type': 'integer', 'default': 1}}, 'required': ['sku']},
           'size': {'type': 'string', 'enum': ['S', 'M', 'L']}}, ['item', 'size']),
    _tool('picture', 'An image and its caption', {}),
    _tool('nothing', 'Returns no content', {}),
]

def _text(s: str, **kw) -> types.CallToolResult: return types.CallToolResult(content=[types.TextContent(text=s)], **kw)

def _structured(v: dict) -> types.CallToolResult: return types.CallToolResult(content=[types.TextContent(text=json.dumps(v))], structured_content=v)

async def list_tools(ctx, params) -> types.ListToolsResult: return types.ListToolsResult(tools=TOOLS)

async def call_tool(ctx, params) -> types.CallToolResult:
    nm, a = params.name, params.arguments or {}
    if nm == 'echo': return _text(a['text'])
    if nm == 'stats': return _structured({'n': len(a['values']), 'mean': sum(a['values']) / len(a['values'])})
    if nm == 'fail': return _text(f"boom: {a['why']}", is_error=True)
    if nm == 'greet': return _text(f"{a.get('greeting', 'Hello')}, {a['name']}!")
    if nm in ('odd-names', 'order'): return _structured(a)
    if nm == 'picture': return types.CallToolResult(content=[types.ImageContent(data=PNG, mime_type='image/png'), types.TextContent(text='a tiny image')])
    if nm == 'nothing': return types.CallToolResult(content=[])
    return _text(f'Unknown tool {nm!r}', is_error=True)

server = Server('sdk-test-server', on_list_tools=list_tools, on_call_tool=call_tool)

async def main():
    async with stdio_server() as (r, w): await server.run(r, w, server.create_initialization_options())

if __name__ == '__main__': anyio.run(main)
