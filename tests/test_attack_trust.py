"""The last trust gaps, attacked: a decline flood against the MCP server's record of used answers, an edited
`Toolbox.resume` record, a 200 MB result from a hostile MCP server, and tool names no provider accepts.

Each test makes the attack and asserts its effect did not happen: another client's confirmation still runs (once), an
edited record runs nothing, what reaches the model is bounded, and the good tools still go out.
"""
import asyncio, json, sys, threading, time, tracemalloc
from pathlib import Path

import httpx
import pytest

pytest.importorskip('mcp')
import mcp_types as types  # noqa: E402

from funccall import Tool  # noqa: E402
from funccall.mcp import NonceStore, mk_asgi_app  # noqa: E402
from funccall.mcp._state import Sealer, StateError  # noqa: E402
from funccall.mcp._store import LocalNonces  # noqa: E402
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
    sealer, args, store = Sealer('k' * 32), {'path': 'p'}, NonceStore()
    nonces = LocalNonces(store)
    spend = lambda p, who: asyncio.run(sealer.spend(p, nonces, who))
    states = [sealer.seal('delete', args, {'answers': {}, 'asked': [_KEY]}) for _ in range(50_000)]
    tracemalloc.start()
    t0 = time.perf_counter()
    for s in states:
        p = sealer.check(s, 'delete', args)
        if _spends(p['d'], _answers(NO)): spend(p, 'mallory')
    secs = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert store.held == 0 and peak < 2_000_000
    print(f'seal layer: {50_000 / secs:,.0f} declines/s, peak {peak / 1e3:.0f} kB traced while flooding')
    p = sealer.check(states[0], 'delete', args)
    assert _spends(p['d'], _answers(YES))
    spend(p, 'alice')
    with pytest.raises(StateError, match='already used'): spend(sealer.check(states[0], 'delete', args), 'alice')
    with pytest.raises(StateError, match='already used'): spend(sealer.check(states[0], 'delete', args), 'mallory')

@pytest.mark.parametrize('given,spent', [
    (NO, False), ({_KEY: {'action': 'cancel'}}, False), ({}, False), ({_KEY: {'action': 'accept', 'content': {'confirm': False}}}, False),
    (YES, True), ({_KEY: {'action': 'accept', 'content': {'confirm': True, 'also': 1}}}, True)])
def test_only_what_could_run_something_is_spent(given, spent):
    "A confirmation state is spent unless its answer declines; any state that carries answers or asks a tool's own question is spent"
    assert _spends({'answers': {}, 'asked': [_KEY]}, _answers(given)) is spent
    assert _spends({'answers': {_KEY: YES[_KEY]}, 'asked': ['q1']}, _answers({'q1': {'action': 'decline'}}))  # a tool's own question
    assert _spends({'answers': {}, 'asked': ['q1']}, _answers({}))

def test_a_clients_share_is_bounded_and_given_back_as_answers_expire():
    sealer, nonces = Sealer('k' * 32, ttl=0.3, per_client=5), LocalNonces(NonceStore())
    def spend(who):
        asyncio.run(sealer.spend(sealer.check(sealer.seal('t', {}, {'answers': {}, 'asked': ['q1']}), 't', {}), nonces, who))
    for _ in range(5): spend('mallory')
    with pytest.raises(StateError, match='in flight already'): spend('mallory')
    spend('alice')
    time.sleep(0.4)
    spend('mallory')  # its answers expired: its share is free again

# --- (5) resume() refuses a record that changed ------------------------------------------------------

from funccall import SealError, Toolbox, ToolResult  # noqa: E402

def _bank(ran: list, **kw) -> Toolbox:
    "Two tools that need the user's approval: a harmless one and the one an attacker wants"
    def look(account: str) -> str:
        "Show an account"
        ran.append(('look', account))
        return account
    def wire(to: str, amount: int, user_id: str) -> str:
        "Send money"
        ran.append(('wire', to, amount, user_id))
        return f'{amount} to {to}'
    return Toolbox([Tool(look, requires_confirmation=True), Tool(wire, requires_confirmation=True, inject='user_id')], **kw)

def _record(box, name='look', args=None, call_id='c1', injected=None) -> dict:
    r = box.call(name, args or {'account': 'a1'}, call_id, injected=injected)
    assert r.status == 'pending'
    return json.loads(json.dumps(r.to_dict()))  # through JSON, as a web app keeps it

@pytest.mark.parametrize('edit', [
    {'name': 'wire', 'arguments': {'to': 'mallory', 'amount': 10**6}},  # the attack: another tool
    {'arguments': {'account': 'a2'}}, {'arguments': {'account': 'a1', 'extra': 1}}, {'arguments': {}},
    {'call_id': 'c2'}, {'call_id': None},
    {'seal': None}, {'seal': 'x'}, {'seal': 123}, {'seal': ['x']}, {'seal': 'é' * 60}, {'seal': '9' * 10**6},
])
def test_an_edited_record_runs_nothing(edit):
    ran = []
    box = _bank(ran, injected={'user_id': 'alice'})
    d = _record(box)
    d.update(edit)
    if edit.get('seal', 0) is None: del d['seal']
    t0 = time.perf_counter()
    for approve in (True, False):
        with pytest.raises(SealError): box.resume(d, approve=approve)
    assert ran == [] and time.perf_counter() - t0 < 1
    assert box.resume(_record(box)).value == 'a1' and ran == [('look', 'a1')]  # the toolbox still resumes its own

def test_a_forged_or_borrowed_seal_is_refused():
    ran = []
    box = _bank(ran, injected={'user_id': 'alice'})
    look, wire = _record(box), _record(box, 'wire', {'to': 'bob', 'amount': 1})
    body = {**look, 'name': 'wire', 'arguments': {'to': 'mallory', 'amount': 10**6}, 'seal': wire['seal']}  # wire's seal, other args
    with pytest.raises(SealError, match='failed verification'): box.resume(body)
    e, n, m = look['seal'].split('.')
    for seal in (f'{int(e) + 10**6}.{n}.{m}', f'{e}.{"A" * 16}.{m}', f'{e}.{n}.{"A" * 43}'):  # a longer life, another nonce, a guessed MAC
        with pytest.raises(SealError, match='failed verification'): box.resume({**look, 'seal': seal})
    assert ran == []

def test_a_record_from_another_toolbox_is_refused_one_with_the_same_secret_taken():
    ran = []
    d = _record(_bank(ran))
    with pytest.raises(SealError, match='another toolbox'): _bank(ran).resume(d)  # same tools, its own random key
    with pytest.raises(SealError, match='another toolbox'): _bank(ran, secret='t' * 32).resume(d)
    assert ran == []
    shared = _record(_bank(ran, secret='t' * 32))
    assert _bank(ran, secret='t' * 32).resume(shared).value == 'a1' and ran == [('look', 'a1')]
    with pytest.raises(ValueError, match='at least 32'): Toolbox(secret='short')

def test_a_record_made_in_another_process_with_the_same_secret_is_taken():
    import subprocess
    code = ("import json; from funccall import Tool, Toolbox\n"
            "def look(account: str) -> str:\n    'Show an account'\n    return account\n"
            "print(json.dumps(Toolbox([Tool(look, requires_confirmation=True)], secret='p' * 32).call('look', {'account': 'z'}, 'c7').to_dict()))")
    env = {**__import__('os').environ, 'PYTHONPATH': str(Path(__file__).parents[1])}
    d = json.loads(subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, check=True, timeout=60).stdout)
    ran = []
    with pytest.raises(SealError): _bank(ran).resume(d)
    r = _bank(ran, secret='p' * 32).resume(d)
    assert (r.value, r.call_id, ran) == ('z', 'c7', [('look', 'z')])

def test_changed_injected_values_are_refused():
    "The call was asked for alice's account: resumed with mallory's, or with another kind of object, it runs nothing"
    ran = []
    box = _bank(ran)
    d = _record(box, 'wire', {'to': 'bob', 'amount': 5}, injected={'user_id': 'alice'})
    for inj in ({'user_id': 'mallory'}, {'user_id': ['alice']}, {'user_id': object()}):
        with pytest.raises(SealError, match='injected values'): box.resume(d, injected=inj)
    assert ran == []
    assert box.resume(d, injected={'user_id': 'alice'}).value == '5 to bob' and ran == [('wire', 'bob', 5, 'alice')]
    class Db: pass
    d = _record(box, 'wire', {'to': 'bob', 'amount': 6}, injected={'user_id': Db()})  # an object counts by its type
    with pytest.raises(SealError): box.resume(d, injected={'user_id': 'alice'})
    assert box.resume(d, injected={'user_id': Db()}).ok

def test_an_expired_record_is_refused():
    ran = []
    box = _bank(ran, pending_ttl=0.1)
    d = _record(box)
    time.sleep(1.5)  # (expiries are whole seconds, rounded up)
    with pytest.raises(SealError, match='expired'): box.resume(d)
    assert ran == []

def test_an_approved_record_runs_once_a_declined_one_may_still_be_approved():
    "Replay: an approval spends the record (in this process), also under a race; a decline spends nothing: it runs nothing"
    ran = []
    box = _bank(ran)
    d = _record(box)
    assert box.resume(d, approve=False).failure == 'declined'
    assert box.resume(d, approve=False).failure == 'declined' and ran == []
    assert box.resume(ToolResult.from_dict(d)).value == 'a1'
    with pytest.raises(SealError, match='approved before'): box.resume(d)
    with pytest.raises(SealError, match='approved before'): box.resume(d, arguments={'account': 'a9'})  # edited by the app: still once
    assert box.resume(d, approve=False).failure == 'declined'  # declining a spent record runs nothing either
    assert ran == [('look', 'a1')]
    d, out = _record(box, call_id='c2'), []
    def go():
        try: out.append(box.resume(d).ok)
        except SealError: out.append('refused')
    ths = [threading.Thread(target=go) for _ in range(16)]
    for t in ths: t.start()
    for t in ths: t.join(30)
    assert sorted(map(str, out)) == ['True'] + ['refused'] * 15 and ran == [('look', 'a1')] * 2

# --- an approvals flood locks no one out ---------------------------------------------------------------

from funccall.core._seal import Approvals  # noqa: E402

def test_an_approvals_flood_past_the_default_bound_leaves_fresh_approvals_working_and_runs_nothing_twice():
    """The attack that found it: 100,000 approvals filled the store, and every other approval in the process was refused
    until the flood's records expired (a day). Now: 105,000 approvals, past the default bound; the store holds at most
    100,000, a record made after the flood is approved at once, and no approved record (forgotten or held) is taken again"""
    a, args = Approvals('k' * 32), {'path': 'p'}
    before = a.seal('look', args, 'c0', {})  # waiting for its user while the flood runs
    time.sleep(1.01)  # (expiries are whole seconds: the flood's come later)
    t0 = time.perf_counter()
    flood = [a.seal('look', args, f'f{i}', {}) for i in range(105_000)]
    for i, s in enumerate(flood): a.check(s, 'look', args, f'f{i}', {}, spend=True)
    secs = time.perf_counter() - t0
    assert a.used.held <= a.used.max_used == 100_000 and a.used.floor > 0
    fresh = a.seal('look', args, 'c1', {})
    a.check(fresh, 'look', args, 'c1', {}, spend=True)  # not locked out
    with pytest.raises(SealError, match='approved before'): a.check(fresh, 'look', args, 'c1', {}, spend=True)
    for i in (0, 1, 4_999, 50_000, 104_999):  # forgotten ones (refused as too old) and held ones (refused as used)
        with pytest.raises(SealError, match='older than the oldest|approved before'): a.check(flood[i], 'look', args, f'f{i}', {}, spend=True)
    with pytest.raises(SealError, match='older than the oldest used record.*call the tool again'): a.check(before, 'look', args, 'c0', {}, spend=True)
    a.check(before, 'look', args, 'c0', {}, spend=False)  # declining it still works: it spends nothing
    print(f'approvals flood: {105_000 / secs:,.0f} seals + approvals/s; store held {a.used.held:,}, fresh approved')

def test_an_approvals_flood_through_resume_runs_each_record_at_most_once():
    """End to end through `Toolbox.resume`, against a store 500 times smaller than the default (set on the toolbox's
    approvals, which the default 100,000 shows above): 600 approvals, each run at most once; then every one of them
    replayed runs nothing, a record made before the flood is refused (asked again), and a fresh one runs, once"""
    ran = []
    box = _bank(ran)
    box._opts.approvals.used = NonceStore(max_used=200)
    old = _record(box, call_id='old')
    time.sleep(1.01)
    recs, took = [_record(box, args={'account': f'm{i}'}, call_id=f'm{i}') for i in range(600)], 0
    for d in recs:  # (made within a second or two, so past the bound some are older than what it forgot: refused)
        try: took += box.resume(d).ok
        except SealError as e: assert 'older than the oldest' in str(e)
    assert box._opts.approvals.used.held <= 200 and len(ran) == took >= 200
    for d in recs:
        with pytest.raises(SealError, match='older than the oldest|approved before'): box.resume(d)
    with pytest.raises(SealError, match='call the tool again'): box.resume(old)
    assert len(ran) == took and box.resume(old, approve=False).failure == 'declined'
    time.sleep(1.01)  # a fresh record's expiry is a later second than the flood's (the default store spans many seconds of it)
    d = _record(box, call_id='fresh')
    assert box.resume(d).value == 'a1' and ran[-1] == ('look', 'a1')
    with pytest.raises(SealError, match='approved before'): box.resume(d)
    assert len(ran) == took + 1

def test_a_nonce_store_forgets_only_what_it_then_refuses():
    "Any order of expiries: a nonce added once is never added again while its record is unexpired, however full the store"
    import random
    rnd, store, now = random.Random(7), NonceStore(max_used=50), time.time()
    seen = []
    for i in range(2_000):
        e = now + 100 + rnd.randrange(1_000)  # answered out of the order they were made
        try: ok = store.add(f'n{i}', e)
        except SealError: continue
        assert ok and store.held <= 50
        seen.append((f'n{i}', e))
    assert len(seen) > 50
    for nonce, e in seen:  # every accepted one, replayed: refused as used, or as older than what was forgotten
        try: assert store.add(nonce, e) is False
        except SealError as err: assert 'older than the oldest' in str(err) and e <= store.floor
    with pytest.raises(SealError, match='expired'): store.add('late', now - 1)
    with pytest.raises(ValueError, match='max_used'): NonceStore(max_used=0)

def test_a_nonce_store_never_takes_a_nonce_twice_when_the_clock_is_set_back(monkeypatch):
    """A wall clock stepped back (NTP, a restored VM) after a record expired and its nonce was forgotten: the record is
    still refused, never accepted a second time; in random walks of time, back and forth, against small stores too"""
    import random
    import types
    from funccall.core import _seal
    clock = [1_000.0]
    monkeypatch.setattr(_seal, 'time', types.SimpleNamespace(time=lambda: clock[0]))
    store = NonceStore()
    assert store.add('n', 1_010)
    clock[0] = 1_011
    assert store.add('other', 2_000) and store.held == 1  # 'n' expired: forgotten
    clock[0] = 1_000  # set back
    with pytest.raises(SealError, match='expired'): store.add('n', 1_010)
    for seed in range(300):
        rnd, clock[0] = random.Random(seed), 1_000.0
        store, taken = NonceStore(max_used=rnd.randint(1, 5)), set()
        expiries = {f'n{i}': 1_000 + rnd.randint(0, 20) for i in range(15)}
        for _ in range(60):
            clock[0] += rnd.choice([0, 0, 0.5, 1, 3, -1, -5])
            nonce = rnd.choice(list(expiries))
            try: ok = store.add(nonce, expiries[nonce])
            except SealError: continue
            assert not (ok and nonce in taken), (seed, nonce)
            if ok: taken.add(nonce)

# --- (7) a tool that can't be sent is left out, not fatal ----------------------------------------------

import warnings  # noqa: E402

from funccall import ProviderWarning, Report, SchemaError  # noqa: E402
from funccall.mcp import MCPClient, MCPToolError  # noqa: E402
from mcp_servers.hostile_names_server import HOSTILE  # noqa: E402

SERVERS = Path(__file__).parent / 'mcp_servers'
PROVIDERS = ('openai', 'responses', 'anthropic', 'gemini', 'mcp')

def _names(defs: list) -> list:
    "The tool names in definitions of any provider's shape"
    return [d.get('name') or d.get('function', {}).get('name') or d['function_declarations'][0]['name'] for d in defs]

def _clean(text: str) -> bool:
    "Nothing in `text` moves the cursor, reorders the text, hides a character or ends a line early"
    return all(c.isprintable() or c == '\n' for c in text) and not any(h in text for h in HOSTILE)

def test_a_hostile_servers_names_are_skipped_and_its_good_tools_still_work():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        with MCPClient([sys.executable, str(SERVERS / 'hostile_names_server.py')], timeout=20) as c:
            box = Toolbox([c.tools()])
            assert sorted(box.tools) == ['echo', 'shout']
            assert [nm for nm, _ in c.skipped] == HOSTILE and all("aren't printable" in why for _, why in c.skipped)
            for p in PROVIDERS:
                with warnings.catch_warnings():
                    warnings.simplefilter('error')  # nothing left to warn about: the toolbox holds only sendable tools
                    assert sorted(_names(box.definitions(p))) == ['echo', 'shout'], p
            assert box.call('shout', {'t': 'hi'}).value == 'HI'
    [msg] = [str(x.message) for x in w if 'left out' in str(x.message)]
    assert _clean(msg) and '\\x1b' in msg and '\\u202e' in msg and '\\x00' in msg  # named, escaped

def _tool(nm: str) -> Tool:
    def f(t: str) -> str:
        "Echo"
        return t
    return Tool(f, name=nm)

@pytest.mark.parametrize('p', PROVIDERS)
def test_a_mixed_toolbox_sends_its_good_tools_and_warns_about_the_rest(p):
    "Local tools named (by a developer, or copied from elsewhere) as no provider or this one takes: each costs only itself"
    box = Toolbox([_tool('good'), *(_tool(nm) for nm in HOSTILE), _tool('calc.add'), _tool('x' * 200), _tool('also_good')])
    with pytest.warns(ProviderWarning) as w: defs = box.definitions(p)
    sent = _names(defs)
    assert sent[0] == 'good' and sent[-1] == 'also_good' and not any(h in sent for h in HOSTILE)
    assert ('calc.add' in sent) == (p in ('gemini', 'mcp')) and 'x' * 200 not in sent
    text = '\n'.join(str(x.message) for x in w)
    assert _clean(text) and text.count('left out') == len(HOSTILE) + (p not in ('gemini', 'mcp')) + 1
    renamed = _names(box.definitions(p, rename=True, report=Report()))  # renamed: the others go out, the hostile ones never
    assert len(renamed) == 4 and not any(h in renamed for h in HOSTILE)
    with pytest.raises(SchemaError): box.definitions(p, report='raise')  # the caller who asked for errors gets one
    rep = Report()
    assert _names(box.definitions(p, report=rep)) == sent and len([c for c in rep.lost if 'left out' in c.what]) == text.count('left out')

# --- (6) bounded results by default ------------------------------------------------------------------

from funccall import tool_results  # noqa: E402
from funccall.loop.results import MAX_RESULT_CHARS  # noqa: E402

def _bounded(r, n: int) -> None:
    "What the model reads of `r` (its text, and each provider's message) is at most the default bound, and says what was cut"
    assert r.ok and len(r.text) < MAX_RESULT_CHARS + 100 and r.text.endswith(f'[... cut: {MAX_RESULT_CHARS:,} of {n:,} characters shown]')
    for p in ('anthropic', 'openai', 'responses', 'gemini'):
        assert _chars(tool_results([r], p)) < MAX_RESULT_CHARS + 1_000, p

def _chars(v) -> int:
    "The characters of every string in a message (keys and values), as the model reads them"
    if isinstance(v, str): return len(v)
    if isinstance(v, dict): return sum(_chars(k) + _chars(x) for k, x in v.items())
    return sum(map(_chars, v)) if isinstance(v, (list, tuple)) else len(str(v))

@pytest.mark.slow  # the server builds and sends 20 MB, which the SDK's stdio transport reads in seconds
def test_a_20_mb_result_from_a_real_stdio_server_reaches_the_model_bounded():
    # 20 MB, not the 200 MB of the attack that found it: the SDK's stdio client joins each chunk of a line to all it read
    # of it before (quadratic), so 200 MB takes it minutes of CPU before funccall sees a byte; what reaches the model
    # is bounded all the same
    with MCPClient([sys.executable, str(SERVERS / 'huge_result_server.py')], timeout=300) as c:
        box = Toolbox([c.tools()])
        r = box.call('dump', {'n': 20_000_000}, call_id='c1')
        _bounded(r, 20_000_000)

def test_a_long_result_is_cut_by_default_for_local_and_mcp_tools_and_a_developer_can_raise_or_drop_the_bound():
    n = 3 * MAX_RESULT_CHARS
    with MCPClient([sys.executable, str(SERVERS / 'huge_result_server.py')], timeout=60) as c:
        _bounded(Toolbox([c.tools()]).call('dump', {'n': n}, call_id='c1'), n)
    def dump(n: int) -> str:
        "Dump"
        return 'x' * n
    _bounded(Toolbox([dump]).call('dump', {'n': n}, call_id='c1'), n)
    def rows(n: int) -> dict:
        "Rows"
        return {'rows': ['x'] * n}
    _bounded(Toolbox([rows]).call('rows', {'n': n}, call_id='c1'), len(json.dumps({'rows': ['x'] * n}, separators=(', ', ': '))))
    assert Toolbox([Tool(dump, max_chars=None)]).call('dump', {'n': n}).text == 'x' * n  # no bound, explicitly
    assert len(Toolbox([Tool(dump, max_chars=n)]).call('dump', {'n': n}).text) == n  # raised
    assert Toolbox([dump]).call('dump', {'n': 5}, call_id='c1').value == 'xxxxx'  # a short result is as it was
    for bad in (0, -1, 1.5, '100', True):
        with pytest.raises(ValueError, match='max_chars'): Tool(dump, max_chars=bad)

# --- a served tool's structured content is bounded as its text is -------------------------------------

from loopback import rpc  # noqa: E402

def _rows(n: int) -> list[int]:
    "Rows"
    return list(range(n))

def test_a_served_tools_structured_content_is_bounded_as_its_text_is():
    """A served tool with an output schema sent its value whole, as text and as structured content, however long: now a
    value whose text is over the tool's bound (`MAX_RESULT_CHARS`) is an error result saying so, sent in bounded size; one
    within it goes whole, and `max_chars=None` still sends any value whole"""
    big = 60_000  # about 400,000 characters of JSON
    with serving(mk_asgi_app([_rows, Tool(_rows, name='all_rows', max_chars=None)])) as url:
        status, r = rpc(url, 'tools/call', {'name': '_rows', 'arguments': {'n': big}})
        assert status == 200 and r['result']['isError'] and 'structuredContent' not in r['result']
        text = r['result']['content'][0]['text']
        assert len(json.dumps(r)) < 1_000 and f"more than the {MAX_RESULT_CHARS:,} a result may hold" in text
        assert f"is {len(json.dumps(list(range(big)), separators=(', ', ': '))):,} characters" in text
        r = rpc(url, 'tools/call', {'name': '_rows', 'arguments': {'n': 100}})[1]['result']
        assert not r.get('isError') and r['structuredContent'] == {'result': list(range(100))}
        r = rpc(url, 'tools/call', {'name': 'all_rows', 'arguments': {'n': big}})[1]['result']
        assert not r.get('isError') and r['structuredContent'] == {'result': list(range(big))}  # no bound, explicitly
        with MCPClient(url, timeout=20) as c:  # the SDK client takes the error result (no structured content is due)
            with pytest.raises(MCPToolError, match='a result may hold'): c.tools()['_rows'](n=big)
            assert c.tools()['_rows'](n=3) == [0, 1, 2]
