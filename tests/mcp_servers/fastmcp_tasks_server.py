"""A FastMCP server with the tasks extension of 2026-07-28 (SEP-2663, `fastmcp-tasks`, its in-memory backend) over
stdio: `crunch` runs as a task (its progress messages become the task's status messages), `broken` is a task that
fails, `ask` a task that asks the user a question, and `quick` is a plain tool."""
import asyncio

import mcp_types as types

from fastmcp import Context, FastMCP
from fastmcp_tasks import TasksExtension

mcp = FastMCP('tasks')
mcp.add_extension(TasksExtension())

@mcp.tool(task=True)
async def crunch(n: int, ctx: Context, log: str = '') -> str:
    "Crunch n items, slowly (a line for each in the file `log`, when given)"
    for i in range(n):
        await ctx.report_progress(i + 1, n, f'item {i + 1} of {n}')
        if log:
            with open(log, 'a') as f: f.write(f'{i}\n')
        await asyncio.sleep(0.4)
    return f'crunched {n}'

@mcp.tool(task=True)
async def broken() -> str:
    "Fail after a while"
    await asyncio.sleep(0.2)
    raise ValueError('the disk is full')

@mcp.tool(task=True)
async def ask(ctx: Context) -> str:
    "Ask the user for a colour (a task asks by returning its question, and runs again with the answer)"
    answer = (ctx.input_responses or {}).get('colour')
    if answer is None:
        form = {'type': 'object', 'properties': {'colour': {'type': 'string'}}, 'required': ['colour']}
        return types.InputRequiredResult(input_requests={'colour': types.ElicitRequest(
            params=types.ElicitRequestFormParams(message='Which colour?', requested_schema=form))})
    return f"you said {answer.content['colour']}" if answer.action == 'accept' else f'no answer ({answer.action})'

@mcp.tool
def quick(x: int) -> int:
    "Double x"
    return 2 * x

if __name__ == '__main__': mcp.run(show_banner=False, log_level='WARNING')
