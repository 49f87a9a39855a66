"""A user's script, typed: it runs, and `mypy --strict` and pyright read it clean without a cast (CI checks both;
tests/test_typed_script.py runs it). Each annotation is what a checker must know of funccall's public API."""
from __future__ import annotations

import asyncio, json
from collections.abc import Callable
from typing import Any

from typing_extensions import assert_type  # (typing's own from Python 3.11)

from funccall import Tool, ToolCall, ToolCallStream, Toolbox, ToolMessages, ToolResult, call_func, call_func_async, get_schema, mk_tool, run_tool_calls
from funccall.mcp import MCPClient, mk_server

def add(
    a: int,      # the first number
    b: int = 0,  # the second
) -> int:        # their sum
    "Add two numbers"
    return a + b

async def slow_add(a: int, b: int) -> int:
    "Add two numbers, later"
    await asyncio.sleep(0)
    return a + b

schema: dict[str, Any] = get_schema(add)
total: int = call_func('add', {'a': 1, 'b': 2}, ns=[add])     # a name: any of the tools, so `Any`
direct: int = call_func(add, {'a': 1, 'b': 2})                  # the function itself: its return type
told: int | str = call_func(add, '{"a": 1}', raise_on_err=False)  # an error comes back as text for the model
assert (total, direct, told) == (3, 3, 1)
assert_type(call_func(add, {'a': 1}), int)                      # what the checker knows, exactly
assert_type(call_func(add, {'a': 1}, raise_on_err=False), 'int | str')

tool = Tool(add, read_only=True)
box = Toolbox([add, Tool(slow_add, name='later')])
text: str = tool({'a': 2, 'b': 3})                              # what the model reads back
result: ToolResult = box.call('later', {'a': 1, 'b': 1})
assert text == '5' and result.value == 2
assert_type(tool({'a': 1}), str)

response = {'choices': [{'message': {'role': 'assistant', 'tool_calls': [
    {'id': 'c1', 'type': 'function', 'function': {'name': 'add', 'arguments': json.dumps({'a': 1, 'b': 2})}}]}}]}
msgs: ToolMessages = run_tool_calls([add, Tool(slow_add)], response)   # a plain list of functions and Tools
assert msgs.results[0].value == 3

def dispatch(name: str, /, **arguments: Any) -> Any:           # where a built tool's calls go: here, the local function
    return call_func(name, arguments, ns=[add])

built: Callable[..., Any] = mk_tool(dispatch, schema)           # a Python callable from a JSON tool schema
assert built(4, b=5) == 9

stream = ToolCallStream()
done: list[ToolCall] = stream.feed({'type': 'response.output_item.done', 'item': {
    'type': 'function_call', 'call_id': 'c2', 'name': 'add', 'arguments': '{"a": 5}'}})
assert [c.name for c in done] == ['add']

with MCPClient(mk_server([add])) as client:                     # a server served in process, and its client
    served = client.tools()
    assert served['add'](a=2, b=2) == 4

async def main() -> int:
    later = await call_func_async(slow_add, {'a': 1, 'b': 2})
    assert_type(later, int)                                     # the coroutine's result, awaited
    return later

assert asyncio.run(main()) == 3
print('ok')
