"""A stdio MCP server of protocol 2025-11-25 written by hand (JSON-RPC lines) whose task-only tools end their tasks in
the ways server-everything's never do: `fails` (status 'failed', with a message), `stopped` (cancelled by the server),
`at_once` (answers the task-augmented call with its result straight away, as a server may), `flood` (a task whose
`tasks/get` asks for a poll interval of 10^12 ms, then completes), and `stuck` (works forever, and `tasks/cancel` for
it is never answered)."""
import json, sys

TOOLS = [{'name': n, 'description': n, 'inputSchema': {'type': 'object'}, 'execution': {'taskSupport': 'required'}}
         for n in ('fails', 'stopped', 'at_once', 'flood', 'stuck')]
CAPS = {'tools': {}, 'tasks': {'cancel': {}, 'requests': {'tools': {'call': {}}}}}
polls: dict = {}

def task(tid: str, status: str, message: str = None, poll: int = 50) -> dict:
    t = {'taskId': tid, 'status': status, 'createdAt': '2026-01-01T00:00:00Z', 'lastUpdatedAt': '2026-01-01T00:00:00Z',
         'ttl': 60000, 'pollInterval': poll}
    return {**t, 'statusMessage': message} if message else t

def call(params: dict) -> dict:
    name = params['name']
    if name == 'at_once': return {'content': [{'type': 'text', 'text': 'done at once'}]}
    return {'task': task(name, 'working', 'starting')}

def get(tid: str) -> dict:
    polls[tid] = polls.get(tid, 0) + 1
    if tid == 'fails': return task(tid, 'failed', 'disk full')
    if tid == 'stopped': return task(tid, 'cancelled', 'stopped by the operator')
    if tid == 'stuck': return task(tid, 'working', 'still going')
    return task(tid, 'completed') if polls[tid] > 1 else task(tid, 'working', 'slow', poll=10**12)

def result(req: dict):
    m, p = req['method'], req.get('params') or {}
    if m == 'initialize': return {'protocolVersion': '2025-11-25', 'capabilities': CAPS, 'serverInfo': {'name': 'tasks', 'version': '1'}}
    if m == 'tools/list': return {'tools': TOOLS}
    if m == 'tools/call': return call(p)
    if m == 'tasks/get': return get(p['taskId'])
    if m == 'tasks/result': return {'content': [{'type': 'text', 'text': f"{p['taskId']} finished after {polls[p['taskId']]} polls"}]}
    return None

for line in sys.stdin:
    req = json.loads(line)
    if 'id' not in req or 'method' not in req: continue
    if req['method'] == 'tasks/cancel': continue  # never answered
    r = result(req)
    reply = {'result': r} if r is not None else {'error': {'code': -32601, 'message': f"no method {req['method']}"}}
    sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': req['id'], **reply}) + '\n')
    sys.stdout.flush()
