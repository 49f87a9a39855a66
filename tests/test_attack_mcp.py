"""funccall's MCP server attacked as a hostile client would, over raw HTTP on loopback and with the SDK's own client:
slow sync calls abandoned by the hundred, then a fast one; a tool (and its subprocesses) looking for the server's
secret under `--workers`; answers to a form that don't fit it; `requestState` fuzzed; Host and Origin values that
only begin like an allowed one; and exceptions whose messages hold what no client should read. Each test makes the
attack and checks that its effect did not happen."""
import asyncio, base64, contextlib, json, logging, os, socket, subprocess, sys, threading, time
from pathlib import Path

import httpx
import pytest

pytest.importorskip('mcp')
import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from funccall import Tool, ToolInputError, WorkersExhausted, call_func  # noqa: E402
from funccall.loop.content import Image  # noqa: E402
from funccall.mcp._state import Sealer  # noqa: E402
from funccall.core._run import _workers, call_tool, set_max_workers, to_thread  # noqa: E402
from funccall.mcp import SECRET_ENV, MCPContext, mk_asgi_app, mk_server  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / 'mcp_servers'))
from loopback import FORM, MODERN, free_port, rpc, serving  # noqa: E402

T = 20

def _wait(cond, secs: float = T, what: str = 'the condition') -> None:
    deadline = time.monotonic() + secs
    while not cond():
        assert time.monotonic() < deadline, f'{what} did not happen within {secs} s'
        time.sleep(0.01)

# --- hung-up clients give their place back -------------------------------------------------------------

def _headers(name: str) -> dict:
    return {'content-type': 'application/json', 'accept': 'application/json, text/event-stream', 'mcp-protocol-version': MODERN,
            'mcp-method': 'tools/call', 'mcp-name': name}

def _reply(r: httpx.Response) -> dict:
    "The JSON-RPC reply in `r`: its JSON body, or the last event with an id of an event stream"
    if not r.headers.get('content-type', '').startswith('text/event-stream'): return r.json()
    return [m for m in (json.loads(x[5:]) for x in r.text.splitlines() if x.startswith('data:') and x[5:].strip()) if 'id' in m][-1]

async def _hang_up(url: str, name: str, n: int, started: list) -> list:
    """`n` calls of `name` at once (argument `i`), each connection closed once its call started (the tool puts `i` in
    `started`), before any answer comes; gives the answers that came first (a call that could not start, say)"""
    meta = {'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': FORM}
    answered = []
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=n)) as c:
        async def one(i):
            body = {'jsonrpc': '2.0', 'id': i, 'method': 'tools/call', 'params': {'name': name, 'arguments': {'i': i}, '_meta': meta}}
            post = asyncio.create_task(c.post(url, json=body, headers=_headers(name), timeout=T))
            deadline = time.monotonic() + T
            while not post.done() and i not in started and time.monotonic() < deadline: await asyncio.sleep(0.01)
            if post.done(): return answered.append(post.result().text)
            post.cancel()  # the client hangs up
            with contextlib.suppress(asyncio.CancelledError): await post
        await asyncio.gather(*(one(i) for i in range(n)))
    return answered

@pytest.mark.slow  # timed against a deadline: run on the one Python CI doesn't share a core with three others
def test_300_abandoned_slow_sync_calls_then_a_fast_call_answered_within_a_second(caplog):
    caplog.set_level(logging.WARNING, logger='funccall.mcp')
    release, started = threading.Event(), []
    def slow(i: int) -> str:  # never, until the test ends
        "A slow sync tool that ignores its caller hanging up"
        started.append(i)
        release.wait(60)
        return 'late'
    def fast(x: int) -> int:  # x
        "A fast sync tool"
        return x
    try:
        with serving(mk_asgi_app([slow, fast])) as url:
            answered = asyncio.run(_hang_up(url, 'slow', 300, started))
            assert answered == [] and sorted(started) == list(range(300))  # each started: none failed for want of threads
            _wait(lambda: _workers.running == 0, what='every abandoned call giving its slot back')
            assert _workers.threads >= 300  # they all run on: their threads can't be stopped
            async def call():
                async with Client(url, read_timeout_seconds=T) as c:
                    t = time.monotonic()
                    r = await c.call_tool('fast', {'x': 7})
                    return r, time.monotonic() - t
            r, took = anyio.run(call)
            assert not r.is_error and r.structured_content == {'result': 7}
            print(f'a fast call after 300 abandoned slow ones: {took * 1000:.0f} ms')  # (shown with `pytest -s`)
            assert took < 1, f'a fast call took {took:.2f} s behind 300 abandoned slow ones'
            for _ in range(3):  # and again, over raw HTTP
                t = time.monotonic()
                status, res = rpc(url, 'tools/call', {'name': 'fast', 'arguments': {'x': 1}})
                assert status == 200 and res['result']['structuredContent'] == {'result': 1} and time.monotonic() - t < 1
    finally: release.set()
    assert 'WorkersExhausted' not in caplog.text  # no call, slow or fast, failed for want of threads

def test_slow_calls_still_awaited_cannot_make_another_tools_call_wait():
    "100 slow calls whose clients wait hold at most three quarters of the slots: a fast tool's call starts at once"
    release, started = threading.Event(), []
    def slow(i: int) -> int:  # i, once released
        "A slow sync tool"
        started.append(i)
        release.wait(30)
        return i
    def fast(x: int) -> int:  # x
        "A fast sync tool"
        return x
    meta = {'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': FORM}
    async def main(url):
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=110)) as c:
            def post(name, args, i):
                body = {'jsonrpc': '2.0', 'id': i, 'method': 'tools/call', 'params': {'name': name, 'arguments': args, '_meta': meta}}
                return c.post(url, json=body, headers=_headers(name), timeout=T)
            slows = [asyncio.create_task(post('slow', {'i': i}, i)) for i in range(100)]
            while len(started) < _workers.size * 3 // 4: await asyncio.sleep(0.01)
            t = time.monotonic()
            r = await post('fast', {'x': 5}, 1000)
            took = time.monotonic() - t
            await asyncio.sleep(0.2)
            held = len(started)  # the slow tool's share of the slots, and no more
            release.set()
            done = await asyncio.gather(*slows)
            return _reply(r), took, held, [_reply(d)['result']['structuredContent']['result'] for d in done]
    try:
        with serving(mk_asgi_app([slow, fast])) as url: fast_r, took, held, slow_rs = asyncio.run(asyncio.wait_for(main(url), T * 2))
    finally: release.set()
    print(f'a fast call beside 100 slow ones still awaited: {took * 1000:.0f} ms')  # (shown with `pytest -s`)
    assert fast_r['result']['structuredContent'] == {'result': 5} and took < 1, (fast_r, took)
    assert held == _workers.size * 3 // 4 and slow_rs == list(range(100))  # and every slow call still ran, once, and answered

def test_a_call_abandoned_before_it_got_a_slot_never_starts():
    release, ran, size = threading.Event(), [], _workers.size
    set_max_workers(1)
    try:
        async def main():
            holder = asyncio.create_task(to_thread(release.wait, 10))  # takes the one slot
            await asyncio.sleep(0.05)
            with pytest.raises(asyncio.TimeoutError): await asyncio.wait_for(to_thread(ran.append, 'late'), 0.1)  # waits, then gives up
            release.set()
            await holder
            return await asyncio.wait_for(to_thread(lambda: 'next'), 5)
        assert asyncio.run(main()) == 'next' and ran == []  # the abandoned call never ran, even once a slot was free
    finally:
        release.set()
        set_max_workers(size)

def test_a_cooperative_tool_gives_its_thread_back_when_the_client_hangs_up():
    ended, started = [], []
    def poll(i: int, ctx: MCPContext) -> str:  # how it ended
        "A slow sync tool that watches for its caller hanging up"
        started.append(i)
        deadline = time.monotonic() + 30
        while not ctx.cancelled and time.monotonic() < deadline: time.sleep(0.01)
        ended.append(ctx.cancelled)
        return 'stopped'
    before = _workers.stragglers
    with serving(mk_asgi_app([poll])) as url:
        assert asyncio.run(_hang_up(url, 'poll', 20, started)) == []
        _wait(lambda: len(ended) == 20, 10, 'every cancelled call ending')
    assert ended == [True] * 20  # each saw its cancellation, at the hang-up, not its 30 s deadline
    _wait(lambda: _workers.stragglers <= before, 5, 'the stragglers ending')

def test_one_stuck_tool_cannot_take_the_threads_of_the_others():
    "The pool's own bound: one tool's stragglers hold at most half the straggler budget; the others still start"
    release, size = threading.Event(), _workers.size
    def stuck(): release.wait(30)
    def quick(): return 'quick'
    set_max_workers(1)  # 16 stragglers in all, 8 of one tool's
    try:
        async def main():
            for _ in range(_workers.per_key):  # each times out and keeps its thread
                with pytest.raises(asyncio.TimeoutError): await asyncio.wait_for(to_thread(call_tool, stuck, (), {}), 0.02)
            with pytest.raises(WorkersExhausted, match="'stuck': 8 of its calls still run"): await to_thread(call_tool, stuck, (), {})
            return await asyncio.wait_for(to_thread(call_tool, quick, (), {}), 5)  # another tool starts at once
        assert asyncio.run(main()) == 'quick'
    finally:
        release.set()
        set_max_workers(size)

def test_two_stuck_tools_deny_sync_calls_only_while_their_stragglers_run():
    "Two tools' stragglers fill the whole budget: a third tool's call fails at once (never waits), and starts again once they end"
    release, size = threading.Event(), _workers.size
    def stuck_a(): release.wait(30)
    def stuck_b(): release.wait(30)
    def quick(): return 'quick'
    _wait(lambda: _workers.stragglers == 0, T, "earlier tests' stragglers ending")
    set_max_workers(1)  # 16 stragglers in all, 8 of one tool's
    try:
        async def main():
            for f in (stuck_a, stuck_b):
                for _ in range(_workers.per_key):
                    with pytest.raises(asyncio.TimeoutError): await asyncio.wait_for(to_thread(call_tool, f, (), {}), 0.02)
            t = time.monotonic()
            with pytest.raises(WorkersExhausted, match='16 worker threads still run'): await to_thread(call_tool, quick, (), {})
            assert time.monotonic() - t < 1  # refused at once
            release.set()
            await asyncio.to_thread(_wait, lambda: _workers.stragglers == 0, T, 'the stragglers ending')
            return await asyncio.wait_for(to_thread(call_tool, quick, (), {}), 5)
        assert asyncio.run(main()) == 'quick'
    finally:
        release.set()
        set_max_workers(size)

# --- the secret stays out of every tool's environment --------------------------------------------------

SPY = '''
import os, subprocess

def spy() -> dict:  # where the secret was found
    "Look for the server's secret everywhere a tool can"
    secret = SECRET  # written in by the test
    env = subprocess.run(['env'], capture_output=True, text=True).stdout
    with open('/proc/self/environ', 'rb') as f: own = f.read().decode(errors='replace')
    child = subprocess.run(['cat', '/proc/self/environ'], capture_output=True).stdout.decode(errors='replace')
    # a subprocess reading the starting environments of the processes above it: this one's, and (with --workers) its parent's
    above = subprocess.run(['sh', '-c', f'cat /proc/$PPID/environ /proc/{os.getppid()}/environ'], capture_output=True).stdout.decode(errors='replace')
    return {'os.environ': 'FUNCCALL_MCP_SECRET' in os.environ or secret in str(os.environ), 'env': 'FUNCCALL_MCP_SECRET' in env or secret in env,
            '/proc/self/environ': secret in own, 'child /proc': 'FUNCCALL_MCP_SECRET' in child or secret in child,
            "the server's starting environment": secret in above}
'''

def _serve(args: list, env: dict, port: int):
    p = subprocess.Popen([sys.executable, '-m', 'funccall', 'mcp', 'serve', *args, '--http', f'127.0.0.1:{port}'], env=env, stderr=subprocess.PIPE)
    url = f'http://127.0.0.1:{port}/mcp'
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                if rpc(url, 'tools/list', {})[0] == 200: return p, url
            except httpx.TransportError: pass
            assert p.poll() is None and time.monotonic() < deadline, p.stderr.read() if p.poll() is not None else 'no server'
            time.sleep(0.1)
    except BaseException:
        _stop(p)
        raise

def _stop(p):
    p.terminate()
    try: p.wait(T)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(T)

@pytest.mark.slow  # (a server process of its own, with worker processes)
@pytest.mark.parametrize('workers', [2, 1])
def test_the_secret_never_reaches_a_tools_environment_or_its_subprocesses(tmp_path, workers):
    secret = 'S3cr3t' * 8
    f = tmp_path / 'spy.py'
    f.write_text(f'SECRET = {secret!r}' + SPY)
    env = {**os.environ, SECRET_ENV: secret}  # the operator's secret, given in the environment
    p, url = _serve([str(f), *(['--workers', str(workers)] if workers > 1 else [])], env, free_port())
    try:
        found = [rpc(url, 'tools/call', {'name': 'spy', 'arguments': {}})[1]['result']['structuredContent'] for _ in range(4)]
        # the workers still share the operator's secret: a state sealed with it here is taken there
        state = Sealer(secret).seal('spy', {}, {'answers': {}, 'asked': []})
        status, r = rpc(url, 'tools/call', {'name': 'spy', 'arguments': {}, 'requestState': state})
    finally: _stop(p)
    assert all(not any(x.values()) for x in found), found
    assert status == 200 and 'structuredContent' in r['result'], r

@pytest.mark.slow  # (a server process of its own, with worker processes)
def test_without_a_secret_given_the_workers_share_one_no_process_environment_holds(tmp_path):
    f = tmp_path / 'spy.py'
    f.write_text("SECRET = 'no secret given'" + SPY + '''
def parent() -> bool:  # whether the parent's environment holds it
    "Look in the parent's environment"
    with open(f'/proc/{os.getppid()}/environ', 'rb') as f: return b'FUNCCALL_MCP_SECRET' in f.read()
''')
    env = {k: v for k, v in os.environ.items() if k != SECRET_ENV}
    p, url = _serve([str(f), '--workers', '2'], env, free_port())
    try:
        found = rpc(url, 'tools/call', {'name': 'spy', 'arguments': {}})[1]['result']['structuredContent']
        parent = rpc(url, 'tools/call', {'name': 'parent', 'arguments': {}})[1]['result']['structuredContent']
        asked = rpc(url, 'tools/list', {})[0]
    finally: _stop(p)
    assert not any(found.values()) and parent == {'result': False} and asked == 200

# --- answers to a form are checked against it ----------------------------------------------------------

NAME = {'type': 'object', 'properties': {'name': {'type': 'string', 'pattern': '^[A-Za-z0-9_]+$', 'maxLength': 64}}}

def _renamer(seen: list):
    def rename(path: str, ctx: MCPContext) -> str:  # the new name
        "Rename a file, asking the user for the new name"
        a = ctx.elicit(f'New name for {path}?', NAME)
        seen.append(a.content)
        return a.content['name'] if a.action == 'accept' else path
    return rename

BAD_ANSWERS = {
    'a path': {'name': '../../etc/passwd'},
    '5000 characters': {'name': 'a' * 5000},
    'a number': {'name': 5},
    'a list': {'name': ['a']},
    'no name (the form lists no required)': {},
    'an extra key': {'name': 'ok', 'admin': True},
    'over 16 KB': {'name': 'ok', 'pad': ['x' * 1000] * 17},
}

def _answer(url, content):
    status, r = rpc(url, 'tools/call', {'name': 'rename', 'arguments': {'path': 'a.txt'}})
    assert r['result']['resultType'] == 'input_required', r
    yes = {'q1': {'action': 'accept', 'content': content}}
    return rpc(url, 'tools/call', {'name': 'rename', 'arguments': {'path': 'a.txt'}, 'requestState': r['result']['requestState'], 'inputResponses': yes})

def test_answers_that_dont_fit_the_form_are_the_clients_error_never_the_tools():
    seen = []
    with serving(mk_asgi_app([_renamer(seen)])) as url:
        for what, content in BAD_ANSWERS.items():
            status, r = _answer(url, content)
            assert 'error' in r and r['error']['code'] == -32602 and "question 'q1'" in r['error']['message'], (what, r)
        assert seen == []  # the tool never saw one
        status, r = _answer(url, {'name': 'b_txt'})
        assert r['result']['content'][0]['text'] == 'b_txt' and seen == [{'name': 'b_txt'}]

AMOUNT = {'type': 'object', 'properties': {'n': {'type': 'number', 'minimum': 0, 'maximum': 10}}}

@pytest.mark.parametrize('literal', ['NaN', 'Infinity', '-Infinity', '1e400'])
def test_a_number_json_cannot_hold_never_reaches_the_tool(literal):
    "Python's JSON parser reads NaN and Infinity, and NaN passes every bound: the answer is the client's error all the same"
    seen = []
    def amount(ctx: MCPContext) -> str:  # what was answered
        "Ask for a number from 0 to 10"
        a = ctx.elicit('How many?', AMOUNT)
        seen.append(a.content)
        return repr(a.content)
    with serving(mk_asgi_app([amount])) as url:
        _, r = rpc(url, 'tools/call', {'name': 'amount', 'arguments': {}})
        meta = {'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': FORM}
        params = {'name': 'amount', 'arguments': {}, 'requestState': r['result']['requestState'],
                  'inputResponses': {'q1': {'action': 'accept', 'content': {'n': '@'}}}, '_meta': meta}
        body = json.dumps({'jsonrpc': '2.0', 'id': 2, 'method': 'tools/call', 'params': params}).replace('"@"', literal)
        reply = _reply(httpx.post(url, content=body, headers=_headers('amount'), timeout=T))
    assert reply['error']['code'] == -32602 and "question 'q1'" in reply['error']['message'], reply
    assert seen == []

def test_an_integer_asked_for_reaches_the_tool_as_an_int():
    seen = []
    async def count(ctx: MCPContext) -> int:  # how many
        "Ask how many"
        a = await ctx.elicit('How many?', {'type': 'object', 'properties': {'n': {'type': 'integer', 'minimum': 0, 'maximum': 100}}})
        seen.append(a.content['n'])
        return len(range(a.content['n']))  # (a float would raise TypeError here)
    async def answer(ctx, params): return types.ElicitResult(action='accept', content={'n': 36.0})
    async def main():
        async with Client(mk_server([count]), elicitation_callback=answer) as c: return await c.call_tool('count', {})
    r = anyio.run(main)
    assert not r.is_error and r.structured_content == {'result': 36} and seen == [36] and type(seen[0]) is int

def test_answers_as_long_as_allowed_to_several_questions_still_come_back():
    "A state carries the call's answers so far: answers at the size limit, to several questions, still fit in one"
    TEXT = {'type': 'object', 'properties': {'t': {'type': 'string'}}}
    async def notes(ctx: MCPContext) -> int:  # characters received
        "Ask for three long notes"
        got = [(await ctx.elicit(f'Note {i}?', TEXT)).content['t'] for i in range(3)]
        return sum(map(len, got))
    async def answer(ctx, params): return types.ElicitResult(action='accept', content={'t': 'n' * 16_000})
    async def main():
        async with Client(mk_server([notes]), elicitation_callback=answer) as c: return await c.call_tool('notes', {})
    r = anyio.run(main)
    assert not r.is_error and r.structured_content == {'result': 48_000}, r

def test_a_declined_question_carries_no_content_to_the_tool():
    seen = []
    with serving(mk_asgi_app([_renamer(seen)])) as url:
        _, r = rpc(url, 'tools/call', {'name': 'rename', 'arguments': {'path': 'a.txt'}})
        no = {'q1': {'action': 'decline', 'content': {'name': '../../etc/passwd'}}}
        _, r = rpc(url, 'tools/call', {'name': 'rename', 'arguments': {'path': 'a.txt'}, 'requestState': r['result']['requestState'], 'inputResponses': no})
    assert r['result']['content'][0]['text'] == 'a.txt' and seen == [None]

@pytest.mark.parametrize('mode', ['legacy', 'auto'])
def test_the_sdk_client_answering_badly_gets_an_error_and_the_tool_sees_nothing(mode):
    seen = []
    async def bad(ctx, params): return types.ElicitResult(action='accept', content={'name': '/etc/passwd'})
    async def main():
        async with Client(mk_server([_renamer(seen)]), mode=mode, elicitation_callback=bad) as c:
            with pytest.raises(MCPError) as e: await c.call_tool('rename', {'path': 'a.txt'})
            return e.value
    e = anyio.run(main)
    assert e.error.code == -32602 and 'does not fit the form' in e.error.message and seen == []

def test_a_confirmation_answered_with_the_wrong_shape_runs_nothing():
    ran = []
    def delete(path: str) -> str:  # what was deleted
        "Delete a file"
        ran.append(path)
        return path
    with serving(mk_asgi_app([Tool(delete, requires_confirmation=True)])) as url:
        for content in [{'confirm': 'true'}, {'confirm': 1}, {'confirm': [True]}, {}, {'confirm': True, 'also': 'rm -rf'}]:
            _, r = rpc(url, 'tools/call', {'name': 'delete', 'arguments': {'path': 'x'}})
            yes = {'funccall-confirm': {'action': 'accept', 'content': content}}
            _, r = rpc(url, 'tools/call', {'name': 'delete', 'arguments': {'path': 'x'}, 'requestState': r['result']['requestState'], 'inputResponses': yes})
            assert r['error']['code'] == -32602, (content, r)
    assert ran == []

# --- every malformed requestState is -32602 ----------------------------------------------------------

def _b64(b: bytes) -> str: return base64.urlsafe_b64encode(b).rstrip(b'=').decode()

def test_every_malformed_request_state_is_invalid_params(caplog):
    caplog.set_level(logging.WARNING)
    ran = []
    def delete(path: str) -> str:  # what was deleted
        "Delete a file"
        ran.append(path)
        return path
    yes = {'funccall-confirm': {'action': 'accept', 'content': {'confirm': True}}}
    with serving(mk_asgi_app([Tool(delete, requires_confirmation=True)], secret='k' * 32)) as url:
        def call(state):
            return rpc(url, 'tools/call', {'name': 'delete', 'arguments': {'path': 'a'}, 'requestState': state, 'inputResponses': yes})
        good = rpc(url, 'tools/call', {'name': 'delete', 'arguments': {'path': 'a'}})[1]['result']['requestState']
        body, mac = good.split('.')
        states = ['é' * 10, 'ü.ü', f'{body}.{"é" * 43}', f'{body}é.{mac}', '\x00.\x00', '', '.', '..', 'a.b.c', 'A' * 100_000,
                  'A' * 300_000 + '.' + mac, '!!!.' + 'A' * 43, f'{body}.{mac}=', f'{body}=.{mac}', ' ' + good, good + '\n',
                  _b64(b'not json') + '.' + 'A' * 43, f'{body[:-1]}.{mac}', f'{body}.{mac[:-1]}' + ('B' if mac[-1] != 'B' else 'C'),
                  _b64(json.dumps({'t': 'delete', 'a': 'x', 'e': 9e99, 'n': 'n', 'd': {'asked': ['funccall-confirm']}}).encode()) + '.' + mac,
                  123, 1.5, True, [], [good], {}, {'state': good}]
        for s in states:
            status, r = call(s)
            assert isinstance(r, dict) and r.get('error', {}).get('code') == -32602, (repr(s)[:60], status, r)
        assert call(good)[1]['result']['content'][0]['text'] == 'a'  # the real one, once
        status, r = call(good)  # replayed
        assert r['error']['code'] == -32602 and 'already used' in r['error']['message']
    assert ran == ['a']
    assert 'Traceback' not in caplog.text and '-32603' not in caplog.text

# --- Host and Origin match exactly ------------------------------------------------------------------

def _add(a: int) -> int:
    "Add one"
    return a + 1

BAD_HOSTS = ['localhost:1@evil.example', '127.0.0.1:80@evil.example', 'localhost:80/evil', 'localhost:abc', 'localhost:1:2',
             'localhost.evil.example', 'localhost:', 'localhost:123456', 'evil.example', 'evil.example:80', '[::1]@evil.example',
             'localhost:80 evil.example', 'localhost:80#x', 'localhost:80?x', 'user@localhost:80', '',
             'localhost:8000, evil.example', 'localhost.', 'localhost.:80', '[::ffff:7f00:1]', '127.1', '2130706433']
BAD_ORIGINS = ['http://localhost:1@evil.example', 'http://localhost:80/evil', 'http://localhost:80.evil.example', 'http://localhost:*',
               'http://localhost.evil.example', 'null', 'file://', 'http://localhost:80/', 'ftp://localhost', 'http://user@localhost:80',
               'http://127.0.0.1:1@evil.example', 'https://app.example.com.evil.example', 'https://app.example.com:1@evil.example',
               'http://localhost., http://evil.example', 'http://localhost.', 'https://app.example.com.', 'http://[::1]@evil.example']

def _status(c: httpx.Client, url: str, headers) -> int:
    meta = {'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': FORM}
    body = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': '_add', 'arguments': {'a': 1}, '_meta': meta}}
    req = c.build_request('POST', url, json=body, headers=_headers('_add'))
    for k, v in headers: req.headers[k] = v
    return c.send(req).status_code

@pytest.mark.parametrize('bind', ['127.0.0.1', '0.0.0.0'])
def test_host_and_origin_match_exactly(bind):
    with serving(mk_asgi_app([_add], host=bind, allow_origins=['https://app.example.com'])) as url, httpx.Client(timeout=T) as c:
        port = url.split(':')[2].split('/')[0]
        for h in BAD_HOSTS: assert _status(c, url, [('host', h)]) == 421, h
        for o in BAD_ORIGINS: assert _status(c, url, [('origin', o)]) == 403, o
        for h in [f'localhost:{port}', '127.0.0.1', f'[::1]:{port}']: assert _status(c, url, [('host', h)]) == 200, h
        for o in [f'http://localhost:{port}', 'http://127.0.0.1:5173', 'https://app.example.com', 'https://app.example.com:8443']:
            assert _status(c, url, [('origin', o)]) == 200, o

def test_two_hosts_or_two_origins_are_refused():
    with serving(mk_asgi_app([_add])) as url:
        port = url.split(':')[2].split('/')[0]
        ok = f'http://localhost:{port}'
        with httpx.Client() as c:
            meta = {'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': FORM}
            body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': '_add', 'arguments': {'a': 1}, '_meta': meta}})
            two = [*_headers('_add').items(), ('origin', ok), ('origin', 'http://evil.example')]
            assert c.post(url, content=body, headers=two, timeout=T).status_code == 403
        # two Host headers (no HTTP client sends them): as raw bytes
        head = ''.join(f'{k}: {v}\r\n' for k, v in [*_headers('_add').items(), ('host', f'localhost:{port}'), ('host', 'evil.example'),
                                                     ('content-length', str(len(body)))])
        with socket.create_connection(('127.0.0.1', int(port)), timeout=T) as sock:
            sock.sendall(f'POST /mcp HTTP/1.1\r\n{head}\r\n{body}'.encode())
            status = sock.recv(100).split()[1]
        assert status in (b'400', b'421')  # (uvicorn's parser, or the check)

# --- errors tell the client only what `errors=` says --------------------------------------------------

PASSWORD = 'hunter2-db-password'

def _leaky():
    def query(sql: str) -> str:  # rows
        "Run a query"
        raise RuntimeError(f'could not connect to postgres://admin:{PASSWORD}@db.internal/prod')
    def hooked(x: int) -> int:  # x
        "A tool whose hook fails"
        return x
    def hook(t, a): raise OSError(f'cannot read /etc/app/{PASSWORD}.key')
    class Secretive:
        def __repr__(self): raise ValueError(f'repr leaks {PASSWORD}')
    def odd() -> dict:  # an object JSON can't hold
        "A value whose repr fails"
        return {'x': Secretive()}
    # funccall's `ToolInputError` raised by the tool's own code or a hook, not found in the client's call: the tool's failure
    def connect(port: int) -> int:  # the port
        "An internal function a tool calls through funccall"
        return port
    def dispatch(x: int) -> int:  # what the internal call gave
        "A tool that calls an internal function with a server value"
        return call_func('connect', {'port': f'postgres://admin:{PASSWORD}@db'}, [connect])
    def refuse(x: int) -> int:  # never
        "A tool that raises funccall's input error itself, with the server's state in it"
        raise ToolInputError(f'no row for {x} in postgres://admin:{PASSWORD}@db')
    def refusing_hook(t, a): raise ToolInputError(f'{PASSWORD} rejects {a}')
    def media() -> list:  # an image, and an object whose repr fails
        "Media beside a value that can't be sent: an error result, not a protocol error"
        return [Image(b'\x89PNG\r\n', 'image/png'), Secretive()]
    return [query, Tool(hooked, pre_hook=hook), odd, dispatch, refuse, Tool(hooked, name='checked', pre_hook=refusing_hook), media]

def test_by_default_an_error_result_carries_the_exception_type_only(caplog):
    caplog.set_level(logging.WARNING, logger='funccall.mcp')
    texts = []
    with serving(mk_asgi_app(_leaky())) as url:
        for nm, args in [('query', {'sql': 'select 1'}), ('hooked', {'x': 1}), ('odd', {}), ('dispatch', {'x': 1}), ('refuse', {'x': 1}),
                         ('checked', {'x': 1}), ('media', {})]:
            _, r = rpc(url, 'tools/call', {'name': nm, 'arguments': args})
            assert r['result']['isError'], r
            texts.append(r['result']['content'][0]['text'])
        _, bad = rpc(url, 'tools/call', {'name': 'query', 'arguments': {'sql': 5}})  # the model's mistake: funccall's own words
        _, bad2 = rpc(url, 'tools/call', {'name': 'refuse', 'arguments': {'x': 'one'}})
    assert texts[:2] == ['RuntimeError', 'OSError'] and texts[2].endswith(': ValueError'), texts
    assert texts[3:6] == ['funccall.ToolInputError'] * 3 and texts[6].endswith(': ValueError'), texts
    assert not any(PASSWORD in t for t in texts)
    assert "argument 'sql': expected a string, got 5" in bad['result']['content'][0]['text']
    assert "argument 'x': expected an integer, got 'one'" in bad2['result']['content'][0]['text']
    assert PASSWORD in caplog.text and 'Traceback' in caplog.text  # the operator sees everything, in the server's log

def test_errors_message_adds_the_message_never_the_traceback():
    with serving(mk_asgi_app(_leaky(), errors='message')) as url:
        _, r = rpc(url, 'tools/call', {'name': 'query', 'arguments': {'sql': 'select 1'}})
    text = r['result']['content'][0]['text']
    assert text.startswith('RuntimeError: could not connect') and PASSWORD in text and 'Traceback' not in text

def test_errors_takes_only_what_it_documents():
    for bad in ['full', 'traceback', None, True]:
        with pytest.raises(ValueError, match="errors is 'type' or 'message'"): mk_server([_add], errors=bad)
