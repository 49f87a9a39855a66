"""funccall's MCP server against a hostile client, over raw HTTP on loopback (and the SDK client where it helps): a
confirmation's requestState forged, altered, foreign, expired or replayed; Host and Origin on every bind; clients
that take only URL-mode questions; and errors that keep tracebacks and file paths in the server's log."""
import base64, hashlib, json, logging, os, subprocess, sys, time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

pytest.importorskip('mcp')
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402

from funccall import StopRun, Tool  # noqa: E402
from funccall.mcp import SECRET_ENV, MCPContext, mk_asgi_app, mk_server  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / 'mcp_servers'))
from loopback import FORM, free_port, rpc, serving  # noqa: E402

T = 20
YES = {'funccall-confirm': {'action': 'accept', 'content': {'confirm': True}}}

def _deleter(log: list, pre: list = None) -> Tool:
    def delete(path: str) -> str:  # what was deleted
        "Delete a file"
        log.append(path)
        return f'deleted {path}'
    return Tool(delete, requires_confirmation=True, pre_hook=(lambda t, a: pre.append(a)) if pre is not None else None)

def _call(url, args=None, **kw):
    return rpc(url, 'tools/call', {'name': 'delete', 'arguments': args or {'path': 'a.txt'}, **kw})

def _asked(url, args=None) -> str:
    "Call `delete` without an answer: the question comes back with its state"
    status, r = _call(url, args)
    assert status == 200 and r['result']['resultType'] == 'input_required', r
    assert r['result']['inputRequests']['funccall-confirm']['params']['mode'] == 'form'
    return r['result']['requestState']

def _refused(status, r, words: str):
    assert status in (200, 400) and r['error']['code'] == -32602 and words in r['error']['message'], r

@pytest.fixture()
def deleter():
    "A confirmation-required `delete` served over HTTP: (url, the paths it deleted, the arguments its pre-hook saw)"
    log, pre = [], []
    with serving(mk_asgi_app([_deleter(log, pre)], secret='s' * 32)) as url: yield url, log, pre

def test_confirmed_call_runs_once(deleter):
    url, log, _ = deleter
    state = _asked(url)
    status, r = _call(url, requestState=state, inputResponses=YES)
    assert status == 200 and r['result']['content'][0]['text'] == 'deleted a.txt' and log == ['a.txt']

def test_answers_without_a_state_are_not_a_confirmation(deleter):
    url, log, _ = deleter
    status, r = _call(url, inputResponses=YES)  # the attack: confirm on the first request, never asked
    assert r['result']['resultType'] == 'input_required' and log == []

def test_forged_state_is_refused_before_anything_runs(deleter):
    url, log, pre = deleter
    old = hashlib.sha256(b"Allow delete(path='a.txt')?").hexdigest()[:32]  # what the unkeyed digest used to be
    _refused(*_call(url, requestState=old, inputResponses=YES), 'not one this server made')
    body = base64.urlsafe_b64encode(json.dumps({'t': 'delete', 'a': '0', 'e': time.time() + 60, 'n': 'x', 'd': {'asked': ['funccall-confirm']}}).encode())
    _refused(*_call(url, requestState=body.decode().rstrip('=') + '.' + 'A' * 43, inputResponses=YES), 'failed verification')
    assert log == [] and pre == []  # not even the pre-hook ran

def test_altered_state_is_refused(deleter):
    url, log, _ = deleter
    state = _asked(url)
    body, mac = state.split('.')
    p = json.loads(base64.urlsafe_b64decode(body + '=' * (-len(body) % 4)))
    p['e'] += 3600  # a longer life
    forged = base64.urlsafe_b64encode(json.dumps(p).encode()).decode().rstrip('=') + '.' + mac
    _refused(*_call(url, requestState=forged, inputResponses=YES), 'failed verification')
    _refused(*_call(url, requestState=state[:-2] + ('AA' if state[-2:] != 'AA' else 'BB'), inputResponses=YES), 'failed verification')
    assert log == []

def test_a_state_counts_only_for_its_own_call(deleter):
    url, log, _ = deleter
    state = _asked(url, {'path': 'harmless.txt'})
    _refused(*_call(url, {'path': 'precious.txt'}, requestState=state, inputResponses=YES), 'other arguments')
    assert log == []

def test_replayed_state_is_refused(deleter):
    url, log, _ = deleter
    state = _asked(url)
    assert _call(url, requestState=state, inputResponses=YES)[1]['result']['content'][0]['text'] == 'deleted a.txt'
    _refused(*_call(url, requestState=state, inputResponses=YES), 'already used')
    assert log == ['a.txt']  # ran once

def test_foreign_state_is_refused():
    log = []
    with serving(mk_asgi_app([_deleter(log)], secret='a' * 32)) as a, serving(mk_asgi_app([_deleter(log)], secret='b' * 32)) as b:
        _refused(*_call(b, requestState=_asked(a), inputResponses=YES), 'another server')
    with serving(mk_asgi_app([_deleter(log)])) as a, serving(mk_asgi_app([_deleter(log)])) as b:  # random secrets, one each
        _refused(*_call(b, requestState=_asked(a), inputResponses=YES), 'another server')
    assert log == []

def test_workers_sharing_a_secret_take_each_others_states():
    log = []
    with serving(mk_asgi_app([_deleter(log)], secret='w' * 32)) as a, serving(mk_asgi_app([_deleter(log)], secret='w' * 32)) as b:
        assert _call(b, requestState=_asked(a), inputResponses=YES)[1]['result']['content'][0]['text'] == 'deleted a.txt'
    assert log == ['a.txt']

def test_expired_state_is_refused():
    log = []
    with serving(mk_asgi_app([_deleter(log)], state_ttl=0.2)) as url:
        state = _asked(url)
        time.sleep(0.4)
        _refused(*_call(url, requestState=state, inputResponses=YES), 'expired')
    assert log == []

def test_secret_from_the_environment(monkeypatch):
    monkeypatch.setenv(SECRET_ENV, 'short')
    with pytest.raises(ValueError, match='at least 32'): mk_server([_deleter([])])
    monkeypatch.setenv(SECRET_ENV, 'e' * 40)
    log = []
    with serving(mk_asgi_app([_deleter(log)])) as a, serving(mk_asgi_app([_deleter(log)], secret='e' * 40)) as b:
        assert _call(b, requestState=_asked(a), inputResponses=YES)[1]['result']['content'][0]['text'] == 'deleted a.txt'

def test_the_sdk_client_confirms_over_http(deleter):
    url, log, _ = deleter
    async def yes(ctx, params): return types.ElicitResult(action='accept', content={'confirm': True})
    async def main():
        async with Client(url, elicitation_callback=yes, read_timeout_seconds=T) as c: return await c.call_tool('delete', {'path': 'b'})
    import anyio
    assert anyio.run(main).content[0].text == 'deleted b' and log == ['b']

# --- Host and Origin, on every bind -------------------------------------------------------------------

def _add(a: int) -> int:
    "Add one"
    return a + 1

def _plain(url, headers):
    return rpc(url, 'tools/call', {'name': '_add', 'arguments': {'a': 1}}, headers=headers)

@pytest.mark.parametrize('host', ['127.0.0.1', '0.0.0.0', '192.168.1.5', '::'])
def test_origin_and_host_are_checked_whatever_the_bind(host):
    with serving(mk_asgi_app([_add], host=host)) as url:
        assert _plain(url, {})[1]['result']['structuredContent'] == {'result': 2}
        assert _plain(url, {'origin': 'http://evil.example'})[0] == 403
        assert _plain(url, {'host': 'evil.example'})[0] == 421
        assert _plain(url, {'origin': f'http://localhost:{url.split(":")[2].split("/")[0]}'})[0] == 200

def test_the_servers_own_http_app_checks_origin_and_host_too():
    "`mk_server(...).streamable_http_app(host=...)`, the SDK's way, is protected as `mk_asgi_app` is"
    with serving(mk_server([_add]).streamable_http_app(host='0.0.0.0')) as url:
        assert _plain(url, {})[0] == 200
        assert _plain(url, {'origin': 'http://evil.example'})[0] == 403 and _plain(url, {'host': 'evil.example'})[0] == 421

def test_allowed_hosts_and_origins_widen_the_checks():
    with serving(mk_asgi_app([_add], host='0.0.0.0', allow_hosts=['mcp.example.com'], allow_origins=['https://app.example.com'])) as url:
        assert _plain(url, {'host': 'mcp.example.com:8443', 'origin': 'https://app.example.com'})[0] == 200
        assert _plain(url, {'host': 'mcp.example.com', 'origin': 'https://app.example.com:444'})[0] == 200
        assert _plain(url, {'origin': 'https://evil.example.com'})[0] == 403
        assert _plain(url, {'host': 'other.example.com'})[0] == 421

def test_command_line_bind_off_the_usual_loopback_checks_origin(tmp_path):
    f = tmp_path / 'adder.py'
    f.write_text('def add(\n    a: int,  # a number\n) -> int:  # one more\n    "Add one"\n    return a + 1\n')
    port = free_port()
    p = subprocess.Popen([sys.executable, '-m', 'funccall', 'mcp', 'serve', str(f), '--http', f'127.0.0.2:{port}',
                          '--allow-origin', 'https://app.example.com'], stderr=subprocess.PIPE)
    try:
        url = f'http://127.0.0.2:{port}/mcp'
        deadline = time.monotonic() + T
        while True:
            try:
                status, r = rpc(url, 'tools/list', {})
                break
            except httpx.TransportError:
                assert p.poll() is None and time.monotonic() < deadline, p.stderr.read() if p.poll() is not None else 'no server'
                time.sleep(0.05)
        assert status == 200 and r['result']['tools'][0]['name'] == 'add'
        call = {'name': 'add', 'arguments': {'a': 1}}
        assert rpc(url, 'tools/call', call, headers={'origin': 'http://evil.example'})[0] == 403
        assert rpc(url, 'tools/call', call, headers={'origin': 'https://app.example.com'})[1]['result']['structuredContent'] == {'result': 2}
    finally:
        p.kill()
        p.wait(T)

# --- who a client is, over HTTP: the address it connects from, never one it claims --------------------------

_SERVE = """import sys
from funccall import Tool
from funccall.mcp import mk_server
from funccall.mcp.cli import _run
def delete(path: str) -> str:
    "Delete a file"
    return f'deleted {path}'
_run(mk_server([Tool(delete, requires_confirmation=True)], secret='s' * 32, state_per_client=3), sys.argv[1], trust_proxy=sys.argv[2:])
"""

@contextmanager
def _served(tmp_path, *proxies):
    "The command line's HTTP serving (`_run`, uvicorn as `funccall mcp serve --http` runs it), one client holding 3 answers at most"
    (tmp_path / 'serve.py').write_text(_SERVE)
    port = free_port()
    env = {**os.environ, 'PYTHONPATH': str(Path(__file__).parents[1])}
    p = subprocess.Popen([sys.executable, str(tmp_path / 'serve.py'), f'127.0.0.1:{port}', *proxies], stderr=subprocess.PIPE, env=env)
    url, deadline = f'http://127.0.0.1:{port}/mcp', time.monotonic() + T
    try:
        while True:
            try:
                rpc(url, 'tools/list', {})
                break
            except httpx.TransportError:
                assert p.poll() is None and time.monotonic() < deadline, p.stderr.read() if p.poll() is not None else 'no server'
                time.sleep(0.05)
        yield url
    finally:
        p.kill()
        p.wait(T)

def _confirmed(url: str, path: str, claims: str = None, source: str = '127.0.0.1') -> dict:
    "Ask to delete `path` and answer yes, from loopback address `source`, claiming (X-Forwarded-For, Forwarded) to be `claims`"
    h = {'x-forwarded-for': claims, 'x-real-ip': claims, 'forwarded': f'for="{claims}"'} if claims else {}
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=T) as http:
        def call(**kw):
            meta = {'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': FORM}
            body = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': 'delete', 'arguments': {'path': path}, **kw, '_meta': meta}}
            r = http.post(url, json=body, headers={'accept': 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28',
                                                   'mcp-method': 'tools/call', 'mcp-name': 'delete', **h})
            return r.json()
        return call(requestState=call()['result']['requestState'], inputResponses=YES)

def _in_flight(r: dict) -> bool: return r.get('error', {}).get('code') == -32602 and 'in flight already' in r['error']['message']

def test_a_client_claiming_other_addresses_still_holds_one_share(tmp_path):
    """The attack: uvicorn takes X-Forwarded-For from 127.0.0.1 by default, so a local client could name a new address
    for each answer and never reach its share. Served as the command line serves, the headers are not read"""
    with _served(tmp_path) as url:
        for i in range(3): assert _confirmed(url, f'm{i}', claims=f'10.0.0.{i}')['result']['content'][0]['text'] == f'deleted m{i}'
        assert _in_flight(_confirmed(url, 'm3', claims='10.0.0.3'))  # the same client, whatever it claims
        assert _in_flight(_confirmed(url, 'm4', claims='2001:db8::1'))
        assert 'result' in _confirmed(url, 'a', source='127.0.0.3')  # another address is another client

def test_a_named_proxy_is_believed_and_ipv6_clients_count_by_their_64(tmp_path):
    "Behind a proxy named with --trust-proxy, its X-Forwarded-For names the client; an IPv6 client is its /64, which one host holds whole"
    with _served(tmp_path, '127.0.0.1') as url:
        for i in range(3): assert 'result' in _confirmed(url, f'm{i}', claims=f'2001:db8:0:7::{i + 1}')
        assert _in_flight(_confirmed(url, 'm3', claims='2001:db8:0:7:ffff:ffff:ffff:ffff'))  # the same /64
        assert 'result' in _confirmed(url, 'b', claims='2001:db8:0:8::1')  # the next /64: another client
        for i in range(3): assert 'result' in _confirmed(url, f'v{i}', claims=f'10.0.0.{i}')  # IPv4: each address its own
        assert 'result' in _confirmed(url, 'v3', claims='10.0.0.3')
    with _served(tmp_path, '127.0.0.9') as url:  # a proxy named, but not the one sending: its claims aren't read
        for i in range(3): assert 'result' in _confirmed(url, f'm{i}', claims=f'10.0.0.{i}')
        assert _in_flight(_confirmed(url, 'm3', claims='10.0.0.3'))

@pytest.mark.parametrize('argv,says', [
    (['--trust-proxy', 'proxy.local', '--http', '127.0.0.1:1'], "--trust-proxy takes an address, a network (10.0.0.0/8) or '*', not 'proxy.local'"),
    (['--trust-proxy', '10.0.0.0/33', '--http', '127.0.0.1:1'], "not '10.0.0.0/33'"),
    (['--trust-proxy', '10.0.0.1'], '--trust-proxy is for --http')])
def test_trust_proxy_on_the_command_line_is_checked(tmp_path, capsys, argv, says):
    from funccall.cli import main
    f = tmp_path / 'adder.py'
    f.write_text('def add(\n    a: int,  # a number\n) -> int:  # one more\n    "Add one"\n    return a + 1\n')
    assert main(['mcp', 'serve', str(f), *argv]) == 2 and says in capsys.readouterr().err

# --- questions only in a mode the client declared ------------------------------------------------------

URL_ONLY = {'elicitation': {'url': {}}}

def test_url_only_client_gets_no_form(deleter):
    url, log, _ = deleter
    status, r = rpc(url, 'tools/call', {'name': 'delete', 'arguments': {'path': 'a'}}, caps=URL_ONLY)
    assert r['result']['isError'] and 'form-mode' in r['result']['content'][0]['text'] and log == []
    assert rpc(url, 'tools/call', {'name': 'delete', 'arguments': {'path': 'a'}}, caps={})[1]['result']['isError']
    assert rpc(url, 'tools/call', {'name': 'delete', 'arguments': {'path': 'a'}}, caps={'elicitation': {}})[1]['result']['resultType'] == 'input_required'

def test_url_only_client_and_a_tool_that_asks():
    def pick(ctx: MCPContext) -> str:  # the answer
        "Ask for a colour"
        if not ctx.can_elicit: return 'no one to ask'
        return ctx.elicit('Which colour?', {'type': 'object', 'properties': {'c': {'type': 'string'}}}).content['c']
    with serving(mk_asgi_app([pick])) as url:
        assert rpc(url, 'tools/call', {'name': 'pick', 'arguments': {}}, caps=URL_ONLY)[1]['result']['content'][0]['text'] == 'no one to ask'
        assert rpc(url, 'tools/call', {'name': 'pick', 'arguments': {}}, caps=FORM)[1]['result']['resultType'] == 'input_required'

@pytest.mark.parametrize('mode', ['legacy', 'auto'])
def test_sdk_client_declaring_url_mode_only_is_sent_no_form(monkeypatch, mode):
    "The SDK client, its capability ad cut to URL mode: no elicitation request reaches it, in either era"
    import anyio
    from mcp.client.session import ClientSession
    build = ClientSession._build_capabilities
    def url_only(self, version):
        caps = build(self, version)
        return caps.model_copy(update={'elicitation': types.ElicitationCapability(url=types.UrlElicitationCapability())})
    monkeypatch.setattr(ClientSession, '_build_capabilities', url_only)
    asked, log = [], []
    async def cb(ctx, params):
        asked.append(params)
        return types.ElicitResult(action='accept', content={'confirm': True})
    async def main():
        async with Client(mk_server([_deleter(log)]), mode=mode, elicitation_callback=cb) as c: return await c.call_tool('delete', {'path': 'a'})
    r = anyio.run(main)
    assert r.is_error and 'form-mode' in r.content[0].text and asked == [] and log == []

# --- errors: type and message for the client, the rest for the server's log ----------------------------

def test_no_tracebacks_or_paths_reach_the_client(caplog):
    def divide(a: float, b: float) -> float:  # the quotient
        "Divide"
        return a / b
    def boom(x: int) -> str:  # never
        "Fail in a hook"
        return 'x'
    class SelfRef:
        def __repr__(self): raise RuntimeError('no repr')
    def loop() -> list:  # a list that contains itself
        "A value JSON can't hold"
        v = []
        v.append(v)
        return v
    def odd() -> dict:  # an object whose repr fails
        "Another"
        return {'x': SelfRef()}
    def hook(t, a): raise OSError(f'cannot open {__file__}')
    def stop(x: int) -> str:  # never
        "Stop the agent loop"
        raise StopRun('enough')
    caplog.set_level(logging.WARNING, logger='funccall.mcp')
    with serving(mk_asgi_app([divide, Tool(boom, pre_hook=hook), loop, odd, stop], errors='message')) as url:
        texts = {}
        for nm, args in [('divide', {'a': 1, 'b': 0}), ('boom', {'x': 1}), ('loop', {}), ('odd', {}), ('stop', {'x': 1})]:
            status, r = rpc(url, 'tools/call', {'name': nm, 'arguments': args})
            assert status == 200 and 'result' in r and r['result']['isError'], r  # an isError result, never a protocol error
            texts[nm] = r['result']['content'][0]['text']
    assert texts['divide'] == 'ZeroDivisionError: float division by zero'
    assert texts['loop'].startswith("The value of tool 'loop' can't be sent as JSON: TypeError: list value holds itself")
    assert texts['odd'].startswith("The value of tool 'odd' can't be sent as JSON")
    for t in texts.values(): assert 'Traceback' not in t and 'File "' not in t and '.py", line' not in t
    assert 'OSError: cannot open' in texts['boom']  # the message is the exception's own words
    assert texts['stop'] == 'funccall.StopRun: enough'  # the public name, never the module it lives in
    logged = caplog.text
    assert 'Traceback' in logged and 'test_mcp_security.py' in logged and 'return a / b' in logged  # the frames, for the operator

def test_stateless_server_refuses_a_confirmation_it_cant_ask_before_2026():
    "Workers behind a balancer are stateless: a handshake-era client can't be asked during a call there, so the call is refused"
    import anyio
    log = []
    async def yes(ctx, params): return types.ElicitResult(action='accept', content={'confirm': True})
    async def main(url, mode):
        async with Client(url, mode=mode, elicitation_callback=yes, read_timeout_seconds=T) as c: return await c.call_tool('delete', {'path': 'a'})
    with serving(mk_asgi_app([_deleter(log)], stateless=True)) as url:
        r = anyio.run(main, url, 'legacy')
        assert r.is_error and 'stateless' in r.content[0].text and log == []
        assert anyio.run(main, url, 'auto').content[0].text == 'deleted a' and log == ['a']  # a 2026-07-28 round trip needs no state
