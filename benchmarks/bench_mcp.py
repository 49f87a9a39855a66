"""MCP servers: funccall's `mk_server` side by side with the SDK's own `MCPServer`, in one run: calls per second seen by
one client calling one tool in a loop, and the server process's CPU time per call, for servers of 1 and 200 tools, over
stdio and streamable HTTP (loopback).

    python benchmarks/bench_mcp.py [CALLS [ROUNDS]]

Targets: a 200-tool funccall server over HTTP is at least as fast per call as the SDK's `MCPServer`, and takes at most its CPU
per call (issue 38; printed last, met or not)
(the issue measured 143 against 451 calls/s before `get_tool_input_schema` was passed). Both servers serve the same
functions; the client is the SDK's `Client` (2026-07-28 protocol) for both. CPU per call reads the server's own
process times (`/proc`) around the timed calls, so the client's work is not counted. The machine may be shared:
compare the ratios of one run.
"""
import asyncio, os, socket, statistics, subprocess, sys, tempfile, textwrap, time
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import httpx
from mcp import Client, StdioServerParameters

TOOLS = '''
def tool_{i}(
    a: int,      # a number
    b: int = 2,  # another
) -> int:        # their sum
    "Add two numbers (tool {i})"
    return a + b
'''
OURS = '''
import sys, uvicorn
sys.path.insert(0, {folder!r})
import bench_tools
from funccall.mcp import mk_asgi_app, mk_server
from funccall.mcp.cli import _run
fs = [getattr(bench_tools, f'tool_{{i}}') for i in range({n})]
if len(sys.argv) > 1: uvicorn.run(mk_asgi_app(fs), host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
else: _run(mk_server(fs), None)
'''
SDK = '''
import sys
sys.path.insert(0, {folder!r})
import bench_tools
from mcp.server.mcpserver import MCPServer
mcp = MCPServer('sdk')
for i in range({n}): mcp.add_tool(getattr(bench_tools, f'tool_{{i}}'))
if len(sys.argv) > 1: mcp.run('streamable-http', host='127.0.0.1', port=int(sys.argv[1]))
else: mcp.run('stdio')
'''

def _cpu(pid: int) -> float:
    "User + system CPU seconds of process `pid`"
    f = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')

def _port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

async def _batch(c, pid: int, calls: int) -> tuple[float, float]:
    "(calls per second, server CPU µs per call) of `calls` calls of tool_0"
    cpu0, t0 = _cpu(pid), time.perf_counter()
    for _ in range(calls): await c.call_tool('tool_0', {'a': 1})
    wall, cpu = time.perf_counter() - t0, _cpu(pid) - cpu0
    return calls / wall, cpu / calls * 1e6

async def _side_by_side(connect, scripts: list, calls: int, rounds: int) -> list:
    "Both servers connected at once, timed in turns (ours, SDK, ours, ...): the median rate and CPU of each"
    async with AsyncExitStack() as stack:
        sides = [await stack.enter_async_context(connect(s)) for s in scripts]
        for c, _ in sides:
            for _ in range(20): await c.call_tool('tool_0', {'a': 1})  # warm up
        got = [[], []]
        for _ in range(rounds):
            for k, (c, pid) in enumerate(sides): got[k].append(await _batch(c, pid, calls // rounds))
        return [(statistics.median(r for r, _ in g), statistics.median(u for _, u in g)) for g in got]

@asynccontextmanager
async def _stdio(script: Path):
    async with Client(StdioServerParameters(command=sys.executable, args=[str(script)])) as c: yield c, _child(script)

def _child(script: Path) -> int:
    "The pid of the python process running `script`"
    for _ in range(100):
        for p in Path('/proc').iterdir():
            if p.name.isdigit():
                try:
                    if str(script).encode() in (p / 'cmdline').read_bytes(): return int(p.name)
                except OSError: pass
        time.sleep(0.05)
    raise RuntimeError(f'no process for {script}')

@asynccontextmanager
async def _http(script: Path):
    port = _port()
    p = subprocess.Popen([sys.executable, str(script), str(port)], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        url = f'http://127.0.0.1:{port}/mcp'
        for _ in range(200):
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError: time.sleep(0.05)
        async with Client(url) as c: yield c, p.pid
    finally:
        p.terminate()
        p.wait(10)

def main(calls: int = 300, rounds: int = 5) -> None:
    with tempfile.TemporaryDirectory(prefix='bench-mcp-') as d: _main(Path(d), calls, rounds)

def _main(folder: Path, calls: int, rounds: int) -> None:
    (folder / 'bench_tools.py').write_text(''.join(TOOLS.format(i=i) for i in range(200)))
    print(f'{calls} calls of one tool per server, one client each, timed in {rounds} turns (medians); server CPU per call from /proc\n')
    print(f"{'transport':9} {'tools':>5} | {'funccall calls/s':>16} {'SDK calls/s':>12} {'ratio':>6} | {'funccall µs CPU':>15} {'SDK µs CPU':>11} {'ratio':>6}")
    for transport in ('stdio', 'http'):
        for n in (1, 200):
            scripts = []
            for nm, src in (('ours', OURS), ('sdk', SDK)):
                scripts.append(folder / f'{nm}_{n}.py')
                scripts[-1].write_text(textwrap.dedent(src.format(folder=str(folder), n=n)))
            connect = _stdio if transport == 'stdio' else _http
            (ours_rate, ours_cpu), (sdk_rate, sdk_cpu) = asyncio.run(_side_by_side(connect, scripts, calls, rounds))
            print(f'{transport:9} {n:5} | {ours_rate:16.0f} {sdk_rate:12.0f} {ours_rate / sdk_rate:5.2f}x | '
                  f'{ours_cpu:15.0f} {sdk_cpu:11.0f} {ours_cpu / sdk_cpu:5.2f}x')
            if (transport, n) == ('http', 200): goal = ours_cpu / sdk_cpu
    print(f"\ngoal (issue 38): a 200-tool server over HTTP, server CPU per call / the SDK's {goal:.2f} (target <= 1: {'yes' if goal <= 1 else 'NO'})")

if __name__ == '__main__': main(*map(int, sys.argv[1:3]))
