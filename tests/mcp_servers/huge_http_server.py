"""A hostile streamable-HTTP MCP server (raw JSON-RPC over ASGI, served by uvicorn): `python huge_http_server.py PORT`.
It shakes hands like any server; its `dump` tool answers with `n` characters of text in one message, framed as `how`
says: 'json' (a chunked JSON body, made as it is sent, never held), 'length' (a JSON body that declares its length
first), 'gzip' (a JSON body of n / 1,000 bytes that inflates to n) or 'sse' (one server-sent event). What a client
holds of one message must be bounded."""
import json, sys, zlib

import uvicorn

TOOL = {'name': 'dump', 'description': 'Dump everything', 'inputSchema': {
    'type': 'object', 'properties': {'n': {'type': 'integer'}, 'how': {'type': 'string'}}, 'required': ['n', 'how']}}
CHUNK = 1 << 16

def _pieces(rid, n: int):
    "The reply to call `rid` as JSON, `n` characters of text in it, made piece by piece"
    head, tail = json.dumps({'jsonrpc': '2.0', 'id': rid, 'result': {'content': [{'type': 'text', 'text': '<>'}]}}).split('<>')
    yield head.encode()
    for i in range(0, n, CHUNK): yield b'x' * min(CHUNK, n - i)
    yield tail.encode()

def _gzipped(pieces):
    z = zlib.compressobj(9, zlib.DEFLATED, 31)  # (31: the gzip container)
    for p in pieces:
        if out := z.compress(p): yield out
    yield z.flush()

async def _send(send, status: int, headers: dict, pieces=()) -> None:
    await send({'type': 'http.response.start', 'status': status, 'headers': [(k.encode(), str(v).encode()) for k, v in headers.items()]})
    for p in pieces: await send({'type': 'http.response.body', 'body': p, 'more_body': True})
    await send({'type': 'http.response.body', 'body': b''})

def _reply(m: dict) -> dict:
    if m['method'] == 'initialize':
        return {'protocolVersion': '2025-11-25', 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'huge', 'version': '1'}}
    if m['method'] == 'tools/list': return {'tools': [TOOL]}
    return None

async def app(scope, receive, send):
    if scope['type'] != 'http': return
    if scope['method'] != 'POST': return await _send(send, 405, {'content-length': 0})
    body = b''
    while True:
        ev = await receive()
        body += ev.get('body', b'')
        if not ev.get('more_body'): break
    m = json.loads(body)
    if 'id' not in m: return await _send(send, 202, {'content-length': 0})  # a notification
    if (r := _reply(m)) is not None:
        out = json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}).encode()
        return await _send(send, 200, {'content-type': 'application/json', 'content-length': len(out)}, [out])
    if m['method'] != 'tools/call':
        out = json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': -32601, 'message': 'Method not found'}}).encode()
        return await _send(send, 200, {'content-type': 'application/json', 'content-length': len(out)}, [out])
    a = m['params']['arguments']
    n, how = a['n'], a['how']
    if how == 'json': return await _send(send, 200, {'content-type': 'application/json'}, _pieces(m['id'], n))
    if how == 'length':
        size = sum(map(len, _pieces(m['id'], 0))) + n
        return await _send(send, 200, {'content-type': 'application/json', 'content-length': size}, _pieces(m['id'], n))
    if how == 'gzip':
        whole = b''.join(_gzipped(_pieces(m['id'], n)))  # (sent at once: each read of it the client makes inflates a thousandfold)
        return await _send(send, 200, {'content-type': 'application/json', 'content-encoding': 'gzip'}, [whole])
    sse = (b'event: message\r\ndata: ', *_pieces(m['id'], n), b'\r\n\r\n')
    return await _send(send, 200, {'content-type': 'text/event-stream'}, sse)

if __name__ == '__main__': uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')
