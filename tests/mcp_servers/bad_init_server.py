"""A stdio "MCP server" that answers every request with a result no version of the protocol has (a number for the
protocol version, a string for the server's info, no capabilities), and stays alive until its stdin closes: a client
must fail to connect with a clear error, not hang and not raise a bare exception group."""
import json, sys

for line in sys.stdin:
    try: req = json.loads(line)
    except ValueError: continue
    if 'id' in req:
        sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': {'protocolVersion': 12, 'serverInfo': 'nope'}}) + '\n')
        sys.stdout.flush()
