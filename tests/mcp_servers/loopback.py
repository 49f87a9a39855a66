"An ASGI app served on a free loopback port in a thread (uvicorn), and raw JSON-RPC over HTTP to it, as any client sends it"
import json, socket, threading, time
from contextlib import contextmanager

import httpx
import uvicorn

MODERN = '2026-07-28'
FORM = {'elicitation': {'form': {}}}

def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

@contextmanager
def serving(app, timeout: float = 20):
    "`app` on http://127.0.0.1:PORT for the `with` block; yields the MCP endpoint's URL"
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host='127.0.0.1', port=port, log_level='warning', lifespan='on'))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        assert th.is_alive() and time.monotonic() < deadline, 'the server did not start'
        time.sleep(0.02)
    try: yield f'http://127.0.0.1:{port}/mcp'
    finally:
        server.should_exit = True
        th.join(timeout)

def rpc(url: str, method: str, params: dict, caps: dict = FORM, headers: dict = None, timeout: float = 20) -> tuple[int, dict | str]:
    "One 2026-07-28 request: (HTTP status, the JSON-RPC reply as a dict, or the body's text when it isn't JSON-RPC)"
    meta = {'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': caps}
    h = {'content-type': 'application/json', 'accept': 'application/json, text/event-stream', 'mcp-protocol-version': MODERN,
         'mcp-method': method, **({'mcp-name': params['name']} if 'name' in params else {}), **(headers or {})}
    r = httpx.post(url, json={'jsonrpc': '2.0', 'id': 1, 'method': method, 'params': {**params, '_meta': meta}}, headers=h, timeout=timeout)
    if r.headers.get('content-type', '').startswith('text/event-stream'):  # the reply is the last event with an id
        msgs = [json.loads(line[5:]) for line in r.text.splitlines() if line.startswith('data:') and line[5:].strip()]
        return r.status_code, [m for m in msgs if 'id' in m][-1]
    try: return r.status_code, r.json()
    except ValueError: return r.status_code, r.text
