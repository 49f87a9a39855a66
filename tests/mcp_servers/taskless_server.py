"""A stdio MCP server of protocol 2025-11-25 written by hand (JSON-RPC lines), listing a tool that runs only as a task
(`execution.taskSupport: 'required'`) while declaring no tasks: a client can't call that tool, and must say so."""
import json, sys

TOOLS = [{'name': 'slow', 'description': 'Slow', 'inputSchema': {'type': 'object'}, 'execution': {'taskSupport': 'required'}},
         {'name': 'quick', 'description': 'Quick', 'inputSchema': {'type': 'object'}}]
RESULTS = {
    'initialize': {'protocolVersion': '2025-11-25', 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'taskless', 'version': '1'}},
    'tools/list': {'tools': TOOLS},
    'tools/call': {'content': [{'type': 'text', 'text': 'done'}]},
}

def reply(req: dict) -> dict:
    if req['method'] in RESULTS: return {'jsonrpc': '2.0', 'id': req['id'], 'result': RESULTS[req['method']]}
    return {'jsonrpc': '2.0', 'id': req['id'], 'error': {'code': -32601, 'message': f"no method {req['method']}"}}

for line in sys.stdin:
    req = json.loads(line)
    if 'id' in req and 'method' in req:
        sys.stdout.write(json.dumps(reply(req)) + '\n')
        sys.stdout.flush()
