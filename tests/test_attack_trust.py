"""The last trust gaps, attacked: a decline flood against the MCP server's record of used answers, an edited
`Toolbox.resume` record, a 200 MB result from a hostile MCP server, and tool names no provider accepts.

Each test makes the attack and asserts its effect did not happen: another client's confirmation still runs (once), an
edited record runs nothing, what reaches the model is bounded, and the good tools still go out.
"""
import json, sys, threading, time, tracemalloc
from pathlib import Path

import httpx
import pytest

pytest.importorskip('mcp')
import mcp_types as types  # noqa: E402

from funccall import Tool  # noqa: E402
from funccall.mcp import NonceStore, mk_asgi_app  # noqa: E402
from funccall.mcp._state import Sealer, StateError  # noqa: E402
from funccall.mcp.server import _KEY, _spends  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / 'mcp_servers'))
from loopback import FORM, MODERN, serving  # noqa: E402

YES = {_KEY: {'action': 'accept', 'content': {'confirm': True}}}
NO = {_KEY: {'action': 'decline'}}

# --- (4) confirmations that can't be locked out -------------------------------------------------------

class Client:
    "An MCP client speaking raw 2026-07-28 JSON-RPC over one kept-alive connection, from loopback address `source`"
    def __init__(self, url: str, source: str = '127.0.0.1'):
        self.url, self.http = url, httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=20)

    def call(self, args: dict, **kw) -> dict:
        meta = {'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': FORM}
        h = {'content-type': 'application/json', 'accept': 'application/json, text/event-stream', 'mcp-protocol-version': MODERN,
             'mcp-method': 'tools/call', 'mcp-name': 'delete'}
        body = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': 'delete', 'arguments': args, **kw, '_meta': meta}}
        r = self.http.post(self.url, json=body, headers=h)
        if r.headers.get('content-type', '').startswith('text/event-stream'):
            return [m for m in (json.loads(x[5:]) for x in r.text.splitlines() if x.startswith('data:') and x[5:].strip()) if 'id' in m][-1]
        return r.json()

    def asked(self, args: dict) -> str:
        r = self.call(args)
        assert r['result']['resultType'] == 'input_required', r
        return r['result']['requestState']

    def answer(self, args: dict, state: str, answer: dict) -> dict: return self.call(args, requestState=state, inputResponses=answer)

def _deleter(log: list) -> Tool:
    def delete(path: str) -> str:  # what was deleted
        "Delete a file"
        log.append(path)
        return f'deleted {path}'
    return Tool(delete, requires_confirmation=True)

def _ran(r: dict) -> str: return r['result']['content'][0]['text']

def test_a_decline_flood_through_the_server_fills_nothing_and_another_clients_confirmation_runs_once():
    "The issue's attack end to end, against a store 200 times smaller than the default: one client declines 1,000 times"
    log, used = [], NonceStore(max_used=500)
    with serving(mk_asgi_app([_deleter(log)], secret='s' * 32, state_store=used)) as url:
        mallory, alice = Client(url, '127.0.0.2'), Client(url)
        t0 = time.perf_counter()
        for i in range(500):  # 1,000 requests: each asks, then declines
            assert 'declined' in _ran(mallory.answer({'path': f'm{i}'}, mallory.asked({'path': f'm{i}'}), NO))
        rate = 500 / (time.perf_counter() - t0)
        state = mallory.asked({'path': 'replayed'})
        for _ in range(500):  # one state declined again and again: a replayed decline declines again, nothing more
            assert 'declined' in _ran(mallory.answer({'path': 'replayed'}, state, NO))
        assert used.held == 0 and log == []
        s = alice.asked({'path': 'a.txt'})
        assert _ran(alice.answer({'path': 'a.txt'}, s, YES)) == 'deleted a.txt'
        r = alice.answer({'path': 'a.txt'}, s, YES)  # replayed: still single-use
        assert r['error']['code'] == -32602 and 'already used' in r['error']['message']
        assert _ran(mallory.answer({'path': 'replayed'}, state, YES)) == 'deleted replayed'  # a declined state answered yes: once
        assert mallory.answer({'path': 'replayed'}, state, YES)['error']['code'] == -32602
        assert 'declined' in _ran(mallory.answer({'path': 'replayed'}, state, NO))  # a decline runs nothing, spent state or not
    assert log == ['a.txt', 'replayed'] and used.held == 2
    print(f'end to end: {rate:.0f} declines/s (ask + decline) over HTTP')

def test_one_clients_accepts_fill_only_its_own_share():
    "Accepted answers must be remembered; one client (here, one address) holds at most `state_per_client` of them"
    log = []
    with serving(mk_asgi_app([_deleter(log)], secret='s' * 32, state_per_client=20)) as url:
        mallory, alice = Client(url, '127.0.0.2'), Client(url, '127.0.0.3')
        for i in range(20): assert _ran(mallory.answer({'path': f'm{i}'}, mallory.asked({'path': f'm{i}'}), YES)) == f'deleted m{i}'
        r = mallory.answer({'path': 'm20'}, mallory.asked({'path': 'm20'}), YES)
        assert r['error']['code'] == -32602 and 'in flight already' in r['error']['message']
        assert _ran(alice.answer({'path': 'a'}, alice.asked({'path': 'a'}), YES)) == 'deleted a'
    assert log == [f'm{i}' for i in range(20)] + ['a']

def test_concurrent_replays_of_one_accepted_state_run_it_once():
    "Single use under a race: 16 connections send the same accepted state at once"
    log = []
    with serving(mk_asgi_app([_deleter(log)], secret='s' * 32)) as url:
        state, out = Client(url).asked({'path': 'x'}), []
        def go(): out.append(Client(url).answer({'path': 'x'}, state, YES))
        ths = [threading.Thread(target=go) for _ in range(16)]
        for t in ths: t.start()
        for t in ths: t.join(30)
    assert log == ['x'] and sum('result' in r for r in out) == 1 and sum(r.get('error', {}).get('code') == -32602 for r in out) == 15

def _answers(d: dict) -> dict: return {k: types.ElicitResult.model_validate(v) for k, v in d.items()}

def test_a_decline_flood_at_the_seal_layer_tens_of_thousands_fast():
    """50,000 declines as the server takes them (check the state, decide whether it must count once), measured; then the
    default store (100,000) still takes another client's answer, and a state replayed with an accept is spent once"""
    sealer, args = Sealer('k' * 32), {'path': 'p'}
    states = [sealer.seal('delete', args, {'answers': {}, 'asked': [_KEY]}) for _ in range(50_000)]
    tracemalloc.start()
    t0 = time.perf_counter()
    for s in states:
        p = sealer.check(s, 'delete', args)
        if _spends(p['d'], _answers(NO)): sealer.spend(p, 'mallory')
    secs = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert sealer.store.held == 0 and peak < 2_000_000
    print(f'seal layer: {50_000 / secs:,.0f} declines/s, peak {peak / 1e3:.0f} kB traced while flooding')
    p = sealer.check(states[0], 'delete', args)
    assert _spends(p['d'], _answers(YES))
    sealer.spend(p, 'alice')
    with pytest.raises(StateError, match='already used'): sealer.spend(sealer.check(states[0], 'delete', args), 'alice')
    with pytest.raises(StateError, match='already used'): sealer.spend(sealer.check(states[0], 'delete', args), 'mallory')

@pytest.mark.parametrize('given,spent', [
    (NO, False), ({_KEY: {'action': 'cancel'}}, False), ({}, False), ({_KEY: {'action': 'accept', 'content': {'confirm': False}}}, False),
    (YES, True), ({_KEY: {'action': 'accept', 'content': {'confirm': True, 'also': 1}}}, True)])
def test_only_what_could_run_something_is_spent(given, spent):
    "A confirmation state is spent unless its answer declines; any state that carries answers or asks a tool's own question is spent"
    assert _spends({'answers': {}, 'asked': [_KEY]}, _answers(given)) is spent
    assert _spends({'answers': {_KEY: YES[_KEY]}, 'asked': ['q1']}, _answers({'q1': {'action': 'decline'}}))  # a tool's own question
    assert _spends({'answers': {}, 'asked': ['q1']}, _answers({}))

def test_a_clients_share_is_bounded_and_given_back_as_answers_expire():
    sealer = Sealer('k' * 32, ttl=0.3, per_client=5)
    def spend(who):
        sealer.spend(sealer.check(sealer.seal('t', {}, {'answers': {}, 'asked': ['q1']}), 't', {}), who)
    for _ in range(5): spend('mallory')
    with pytest.raises(StateError, match='in flight already'): spend('mallory')
    spend('alice')
    time.sleep(0.4)
    spend('mallory')  # its answers expired: its share is free again
