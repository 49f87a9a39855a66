"""Scale out: `funccall mcp serve --http HOST:PORT --workers 4` (uvicorn's worker processes, stateless) on loopback,
50 concurrent SDK clients at once: every call answered once and only once, and confirmations asked by one worker
taken by any other (the workers share the secret the parent made)."""
import asyncio, os, subprocess, sys, time
from pathlib import Path

import pytest

pytest.importorskip('mcp')
import httpx  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / 'mcp_servers'))
from loopback import free_port, rpc  # noqa: E402

T = 60
TOOLS = '''
import os
from funccall import Tool, Toolbox

def record(
    key: str,  # the caller's key
) -> dict:     # the key, and which worker answered
    "Write the key down once"
    with open(os.environ['RECORD_FILE'], 'a') as f: f.write(f'{key}\\n')
    return {'key': key, 'pid': os.getpid()}

def delete(
    key: str,  # what to delete
) -> dict:     # the key, and which worker ran it
    "Delete, once the user confirms"
    with open(os.environ['RECORD_FILE'], 'a') as f: f.write(f'deleted {key}\\n')
    return {'key': key, 'pid': os.getpid()}

box = Toolbox([Tool(record), Tool(delete, requires_confirmation=True)])
'''

@pytest.mark.slow
def test_four_workers_fifty_clients(tmp_path):
    f = tmp_path / 'worker_tools.py'
    f.write_text(TOOLS)
    record = tmp_path / 'record.txt'
    port = free_port()
    env = {**os.environ, 'RECORD_FILE': str(record)}
    env.pop('FUNCCALL_MCP_SECRET', None)  # the parent makes one and hands it to its workers
    p = subprocess.Popen([sys.executable, '-m', 'funccall', 'mcp', 'serve', f'{f}:box', '--http', f'127.0.0.1:{port}', '--workers', '4'],
                         env=env, stderr=subprocess.PIPE)
    url = f'http://127.0.0.1:{port}/mcp'
    try:
        deadline = time.monotonic() + T
        while True:
            try:
                if rpc(url, 'tools/list', {})[0] == 200: break
            except httpx.TransportError: pass
            assert p.poll() is None and time.monotonic() < deadline, p.stderr.read() if p.poll() is not None else 'no server'
            time.sleep(0.2)

        async def yes(ctx, params): return types.ElicitResult(action='accept', content={'confirm': True})
        async def one(i: int):
            async with Client(url, read_timeout_seconds=T, elicitation_callback=yes) as c:
                name = 'delete' if i % 2 else 'record'
                r = await c.call_tool(name, {'key': f'k{i}'})
                return name, r
        async def main(): return await asyncio.gather(*(one(i) for i in range(50)))
        results = asyncio.run(asyncio.wait_for(main(), T * 2))
        for i, (_, r) in enumerate(results):
            assert not r.is_error, r.content
            assert r.structured_content['key'] == f'k{i}'
        lines = record.read_text().splitlines()
        assert sorted(lines) == sorted([f'deleted k{i}' if i % 2 else f'k{i}' for i in range(50)])  # none lost, none twice
        assert len({r.structured_content['pid'] for _, r in results}) > 1  # the calls were spread over the workers

        # a question asked over one connection, answered over fresh ones: whichever worker takes it, it counts once
        for i in range(8):
            _, asked = rpc(url, 'tools/call', {'name': 'delete', 'arguments': {'key': f'x{i}'}})
            state = asked['result']['requestState']
            yes_ = {'funccall-confirm': {'action': 'accept', 'content': {'confirm': True}}}
            done = rpc(url, 'tools/call', {'name': 'delete', 'arguments': {'key': f'x{i}'}, 'requestState': state, 'inputResponses': yes_})[1]
            assert done['result']['structuredContent']['key'] == f'x{i}'
        assert record.read_text().splitlines().count('deleted x7') == 1
    finally:
        p.terminate()
        try: p.wait(T)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(T)


def test_a_worker_unpickles_its_config_without_loading_the_mcp_sdk():
    # uvicorn's supervisor kills a worker that doesn't answer its health check within 5 s, and a worker answers only
    # once its config is unpickled: that must not wait for the MCP SDK (seconds, on a loaded machine) nor for the tools
    from funccall.mcp._worker import WorkerApp
    import pickle
    blob = pickle.dumps(WorkerApp({'targets': ['funccall.example'], 'secret': 's' * 32}))
    code = ("import pickle, sys; app = pickle.loads(sys.stdin.buffer.read()); "
            "print(type(app).__name__, sorted(m for m in ('mcp', 'mcp_types', 'starlette', 'funccall.example') if m in sys.modules))")
    r = subprocess.run([sys.executable, '-c', code], input=blob, capture_output=True, timeout=T)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().split() == ['WorkerApp', '[]']
