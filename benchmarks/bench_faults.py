"""Shared state under faults, side by side: `funccall mcp serve --http --workers 2 --task hold --redis URL` against FastMCP
(with fastmcp-tasks on Docket, the same Redis) served by `uvicorn --workers 2`, the same two tools, the same load and
faults, each on a fresh redis-server of its own (loopback, a free port, no persistence):

- one client alone: p50 and p90 of a plain call (the 40 ms of delayed ACK that `--workers` used to add shows here);
- 20 clients at once, 25 plain calls each: calls per second, and errors;
- Redis stopped (SIGSTOP) 10 s: how many plain calls answer meanwhile and the slowest, and what three `tasks/get` get;
- kill -9 of the worker running most of 10 long tasks: how many of its tasks still say `working` 40 s later.

    python benchmarks/bench_faults.py [funccall|fastmcp ...]

Needs redis-server on the PATH and the dev extra (fastmcp, fastmcp-tasks). Raw JSON-RPC over HTTP (protocol 2026-07-28),
as any client sends it; the tasks extension declared in each request's capabilities. About three minutes.
"""
import collections, json, os, signal, socket, subprocess, sys, tempfile, threading, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

MODERN, TASKS = '2026-07-28', 'io.modelcontextprotocol/tasks'
TOOLS = '''import asyncio, os

async def quick(x: int) -> int:
    "Doubles x"
    return 2 * x

async def hold(s: float, tag: str = '') -> str:
    "Waits s seconds, saying where it runs"
    with open(os.environ['RUNS_FILE'], 'a') as f: f.write(f'{tag} {os.getpid()}\\n')
    await asyncio.sleep(s)
    return 'held'
'''
FASTMCP = '''import os
from fastmcp import FastMCP
from fastmcp_tasks import TasksExtension
import tools

mcp = FastMCP('bench')
mcp.add_extension(TasksExtension(url=os.environ['REDIS_URL']))
mcp.tool(tools.quick)
mcp.tool(task=True)(tools.hold)
app = mcp.http_app(stateless_http=True, json_response=True)
'''

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

def _rpc(c: httpx.Client, url: str, method: str, params: dict) -> dict:
    "One request: the JSON-RPC reply (the last message with an id, when the reply is a stream)"
    meta = {'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {'extensions': {TASKS: {}}}}
    h = {'content-type': 'application/json', 'accept': 'application/json, text/event-stream', 'mcp-protocol-version': MODERN,
         'mcp-method': method, **({'mcp-name': params['name']} if 'name' in params else {})}
    r = c.post(url, json={'jsonrpc': '2.0', 'id': 1, 'method': method, 'params': {**params, '_meta': meta}}, headers=h)
    if r.headers.get('content-type', '').startswith('text/event-stream'):
        return [m for m in (json.loads(ln[5:]) for ln in r.text.splitlines() if ln.startswith('data:') and ln[5:].strip()) if 'id' in m][-1]
    return r.json()

class Setup:
    "A redis-server and one of the two servers (2 workers) on it, in folder `tmp`"
    def __init__(self, which: str, tmp: Path):
        self.rport, self.port = _free_port(), _free_port()
        self.redis = subprocess.Popen(['redis-server', '--port', str(self.rport), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
                                       '--dir', str(tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        redis_url = f'redis://127.0.0.1:{self.rport}/0'
        (tmp / 'tools.py').write_text(TOOLS)
        (tmp / 'fm_app.py').write_text(FASTMCP)
        self.runs = tmp / 'runs.txt'
        self.runs.write_text('')
        env = {**os.environ, 'RUNS_FILE': str(self.runs), 'REDIS_URL': redis_url, 'FUNCCALL_MCP_SECRET': 's' * 40,
               'PYTHONPATH': os.pathsep.join([str(tmp), os.environ.get('PYTHONPATH', '')])}
        cmd = ([sys.executable, '-m', 'funccall', 'mcp', 'serve', 'tools.py', '--http', f'127.0.0.1:{self.port}', '--workers', '2',
                '--task', 'hold', '--redis', redis_url] if which == 'funccall' else
               [sys.executable, '-m', 'uvicorn', 'fm_app:app', '--port', str(self.port), '--workers', '2', '--log-level', 'warning'])
        self.server = subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f'http://127.0.0.1:{self.port}/mcp'
        deadline = time.monotonic() + 90
        with httpx.Client(timeout=30) as c:
            while True:
                try:
                    if 'result' in _rpc(c, self.url, 'tools/list', {}): break
                except (httpx.TransportError, ValueError): pass
                if time.monotonic() > deadline or self.server.poll() is not None: raise SystemExit(f'{which} did not start')
                time.sleep(0.3)

    def close(self) -> None:
        for p in (self.server, self.redis):
            p.send_signal(signal.SIGCONT) if p is self.redis else None
            p.terminate()
            try: p.wait(20)
            except subprocess.TimeoutExpired: p.kill()

def _quick(c: httpx.Client, url: str, x: int = 1) -> tuple[bool, float]:
    t0 = time.perf_counter()
    try: ok = 'result' in _rpc(c, url, 'tools/call', {'name': 'quick', 'arguments': {'x': x}})
    except httpx.HTTPError: ok = False
    return ok, time.perf_counter() - t0

def latency(s: Setup) -> str:
    with httpx.Client(timeout=30) as c: took = sorted(_quick(c, s.url, i)[1] for i in range(100))
    return f'one client: p50 {took[50] * 1000:.1f} ms, p90 {took[90] * 1000:.1f} ms'

def load(s: Setup) -> str:
    def client(k):
        with httpx.Client(timeout=30) as c: return [_quick(c, s.url, k * 25 + i)[0] for i in range(25)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(20) as ex: oks = [ok for r in ex.map(client, range(20)) for ok in r]
    return f'20 clients x 25 calls: {len(oks) / (time.perf_counter() - t0):.0f} calls/s, {oks.count(False)} errors'

def stall(s: Setup) -> str:
    with httpx.Client(timeout=30) as c:
        tid = _rpc(c, s.url, 'tools/call', {'name': 'hold', 'arguments': {'s': 0.1}}).get('result', {}).get('taskId')
    reads = []
    def read():
        t0 = time.perf_counter()
        with httpx.Client(timeout=30) as c:
            try: r = _rpc(c, s.url, 'tasks/get', {'taskId': tid})
            except httpx.HTTPError as e: r = {'error': {'code': type(e).__name__}}
        reads.append((r.get('error', {}).get('code', r.get('result', {}).get('status')), time.perf_counter() - t0))
    s.redis.send_signal(signal.SIGSTOP)
    try:
        ths = [threading.Thread(target=read) for _ in range(3)]
        for th in ths: th.start()
        took, t0 = [], time.monotonic()
        with httpx.Client(timeout=30) as c:
            while time.monotonic() - t0 < 10: took.append(_quick(c, s.url))
        for th in ths: th.join(40)
    finally: s.redis.send_signal(signal.SIGCONT)
    return (f'Redis stopped 10 s: {sum(ok for ok, _ in took)} plain calls answered, slowest {max(t for _, t in took):.2f} s; '
            f"tasks/get: {', '.join(f'{what} in {t:.1f} s' for what, t in reads)}")

def orphans(s: Setup) -> str:
    with httpx.Client(timeout=30) as c:
        tids = {str(i): _rpc(c, s.url, 'tools/call', {'name': 'hold', 'arguments': {'s': 120, 'tag': str(i)}}).get('result', {}).get('taskId')
                for i in range(10)}
        deadline = time.monotonic() + 30
        while len(s.runs.read_text().splitlines()) < 10 and time.monotonic() < deadline: time.sleep(0.2)
        where = dict(ln.split() for ln in s.runs.read_text().splitlines() if ln.split()[0] in tids)
        if not where: return 'kill -9: no task started'
        victim = collections.Counter(where.values()).most_common(1)[0][0]
        os.kill(int(victim), signal.SIGKILL)
        time.sleep(40)
        theirs = [tids[t] for t, pid in where.items() if pid == victim]
        statuses = collections.Counter(_rpc(c, s.url, 'tasks/get', {'taskId': t}).get('result', {}).get('status', 'gone') for t in theirs)
        for t in tids.values(): _rpc(c, s.url, 'tasks/cancel', {'taskId': t})
    return f'kill -9 of the worker running {len(theirs)} of 10 tasks: 40 s later they say {dict(statuses)}'

def main(which: list[str]) -> None:
    for w in which:
        with tempfile.TemporaryDirectory() as tmp:
            s = Setup(w, Path(tmp))
            try:
                print(f'--- {w}', flush=True)
                for phase in (latency, load, stall, orphans): print('  ' + phase(s), flush=True)
            finally: s.close()

if __name__ == '__main__':
    main(sys.argv[1:] or ['funccall', 'fastmcp'])
