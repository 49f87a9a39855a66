"""A second reviewer's attacks on the day's changes (issues 35, 36, 38): each "never", "only", "at most" and "bounded"
the README and docstrings now promise, attacked as a hostile model, tool, MCP server or client, or a cloned folder would.

Each test makes the attack and asserts its effect did not happen: what reaches the model is bounded on the failure path
too (a tool's or a hostile server's huge error); an interrupt in a notebook's loop stops the work, never leaves it
running on; a served tool that runs the sync form with its context fails at once rather than hanging the server; a lone
surrogate in the arguments is sealed, not an internal error; a hostile folder's file names and a hostile HTTP server's
error body reach the terminal escaped, and an endless error body is not read; a pathological docstring costs its length;
a length on a union of several types still bounds the string.
"""
import asyncio, contextlib, gc, os, signal, sys, threading, time, warnings
from pathlib import Path

import pytest

from funccall import Toolbox, tool_results
from funccall.core import _run
from funccall.loop.results import MAX_RESULT_CHARS

SERVERS = Path(__file__).parent / 'mcp_servers'
PROVIDERS = ('anthropic', 'openai', 'responses', 'gemini')

def _chars(v) -> int:
    "The characters of every string in a message (keys and values), as the model reads them"
    if isinstance(v, str): return len(v)
    if isinstance(v, dict): return sum(_chars(k) + _chars(x) for k, x in v.items())
    return sum(map(_chars, v)) if isinstance(v, (list, tuple)) else len(str(v))

# --- (5) the default result bound, on the failure path ------------------------------------------------

def test_a_huge_exception_message_reaches_the_model_bounded():
    n = 3 * MAX_RESULT_CHARS
    def boom(n: int) -> str:
        "Fails at length"
        raise ValueError('x' * n)
    for errors in ('message', 'traceback'):
        r = Toolbox([boom], errors=errors).call('boom', {'n': n}, call_id='c1')
        assert r.failure == 'tool' and r.exception is not None and len(str(r.exception)) == n  # the developer keeps the whole
        assert len(r.error) < MAX_RESULT_CHARS + 100 and r.text == r.error and 'characters shown]' in r.error
        for p in PROVIDERS: assert _chars(tool_results([r], p)) < MAX_RESULT_CHARS + 1_000, p

def test_a_hostile_servers_huge_error_reaches_the_model_bounded():
    pytest.importorskip('mcp')
    from funccall.mcp import MCPClient
    n = 3 * MAX_RESULT_CHARS
    with MCPClient([sys.executable, str(SERVERS / 'huge_result_server.py')], timeout=60) as c:
        r = Toolbox([c.tools()]).call('fail', {'n': n}, call_id='c1')
    assert r.failure == 'tool' and len(r.error) < MAX_RESULT_CHARS + 100 and 'characters shown]' in r.error, r.error[-80:]
    for p in PROVIDERS: assert _chars(tool_results([r], p)) < MAX_RESULT_CHARS + 1_000, p

# --- (1) sync forms in a running loop: an interrupt stops the work ------------------------------------

@contextlib.contextmanager
def _interrupted_after(secs: float):
    "Ctrl+C (SIGINT, Python's own handler: a `KeyboardInterrupt` in the main thread, as a notebook's interrupt raises) after `secs`"
    assert threading.current_thread() is threading.main_thread()  # (signals reach only the main thread)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(secs, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)

def test_an_interrupt_inside_a_running_loop_cancels_the_work_as_it_does_outside_one():
    """A notebook cell running the sync form, interrupted: the tool's work stops (as it does with no loop running), never
    runs on in the background to do what the user interrupted"""
    wrote = []
    async def slow(s: float) -> str:
        "Sleeps, then writes"
        await asyncio.sleep(s)
        wrote.append('wrote')
        return 'ok'
    box = Toolbox([slow])
    async def cell():
        t0 = time.monotonic()
        with _interrupted_after(0.3), pytest.raises(KeyboardInterrupt): box.call('slow', {'s': 1.5})
        took = time.monotonic() - t0
        await asyncio.sleep(2)  # longer than the tool would have taken
        return took
    loop = asyncio.new_event_loop()  # (not `asyncio.run`: its own SIGINT handler cancels the task instead of raising)
    try: took = loop.run_until_complete(cell())
    finally: loop.close()
    assert took < 1.2 and wrote == []
    with _interrupted_after(0.3), pytest.raises(KeyboardInterrupt): box.call('slow', {'s': 1.5})  # no loop running: the same
    time.sleep(2)
    assert wrote == [] and not [t for t in threading.enumerate() if t.name == 'funccall-sync-in-loop']

def test_a_stop_before_the_work_starts_runs_none_of_it():
    "The interrupt's race: stopped before its thread's loop started it, the work never starts (and Python warns of no unawaited coroutine)"
    ran = []
    async def work(): ran.append(1)
    run = _run._Cancellable(work())
    run.stop()
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with pytest.raises(asyncio.CancelledError): _run.run_sync(run.run())
        gc.collect()
    assert ran == []

# --- (3) sealed pending records and confirmation states: what a model or client may send ---------------

def _deleter(log: list):
    from funccall import Tool
    def delete(path: str) -> str:
        "Delete a file"
        log.append(path)
        return f'deleted {path}'
    return Tool(delete, requires_confirmation=True)

def test_a_lone_surrogate_in_the_arguments_is_sealed_resumed_and_still_guarded():
    """JSON's "\\ud800" (a lone surrogate, which `json.loads` takes) in a model's arguments: the call still waits for
    approval (it failed with a UnicodeEncodeError, the seal's digest unable to encode it), its record survives JSON,
    runs once approved, and an edit to another lone surrogate is refused"""
    import json
    from funccall import SealError
    log = []
    box = Toolbox([_deleter(log)])
    r = box.call('delete', '{"path": "\\ud800x"}', call_id='c1')
    assert r.status == 'pending' and r.arguments == {'path': '\ud800x'}, r.text
    d = json.loads(json.dumps(r.to_dict()))
    edited = {**d, 'arguments': {'path': '\ud801x'}}
    with pytest.raises(SealError, match='failed verification'): box.resume(edited, approve=True)
    assert box.resume(d, approve=True).ok and log == ['\ud800x']

def test_a_lone_surrogate_through_the_servers_confirmation_is_no_internal_error():
    "The same through the MCP server's sealed requestState (raw JSON-RPC: httpx's own encoder refuses a lone surrogate)"
    pytest.importorskip('mcp')
    import json
    import httpx
    sys.path.insert(0, str(SERVERS))
    from loopback import FORM, MODERN, serving
    from funccall.mcp import mk_asgi_app
    from funccall.mcp.server import _KEY
    def call(url: str, **params) -> dict:
        meta = {'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': FORM}
        h = {'content-type': 'application/json', 'accept': 'application/json, text/event-stream', 'mcp-protocol-version': MODERN,
             'mcp-method': 'tools/call', 'mcp-name': 'delete'}
        body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': 'delete', **params, '_meta': meta}})
        r = httpx.post(url, content=body.encode(), headers=h, timeout=20)
        if r.headers.get('content-type', '').startswith('text/event-stream'):
            return [m for m in (json.loads(x[5:]) for x in r.text.splitlines() if x.startswith('data:') and x[5:].strip()) if 'id' in m][-1]
        return r.json()
    log, args = [], {'path': '\ud800x'}
    with serving(mk_asgi_app([_deleter(log)], secret='s' * 32)) as url:
        asked = call(url, arguments=args)
        assert asked.get('result', {}).get('resultType') == 'input_required', asked
        yes = {_KEY: {'action': 'accept', 'content': {'confirm': True}}}
        state = asked['result']['requestState']
        assert call(url, arguments={'path': '\ud801x'}, requestState=state, inputResponses=yes)['error']['code'] == -32602
        assert 'result' in call(url, arguments=args, requestState=state, inputResponses=yes)
    assert log == ['\ud800x']

# --- (6) the CLI's new messages: what a hostile folder's names print ----------------------------------

HOSTILE_FILES = ['a\x1b[31mRED\x1b[0m.py', 'b\nfuncall: FAKE line.py', 'c\u202eyp.txt.py', 'd\x07bell.py']

def _terminal_safe(err: str) -> None:
    "One line, nothing in it that moves the cursor, rings, reorders the text or ends the line"
    lines = err.strip().split('\n')
    assert len(lines) == 1 and lines[0].startswith('funccall') and lines[0].isprintable(), repr(err)

def test_a_folder_targets_hostile_file_names_are_printed_escaped(capsys, tmp_path, monkeypatch):
    from funccall.cli import main
    evil = tmp_path / 'evil'
    evil.mkdir()
    for nm in [*HOSTILE_FILES, 'ok.py']: (evil / nm).write_text('')
    (evil / 'loop1').symlink_to(evil / 'loop2')
    (evil / 'loop2').symlink_to(evil / 'loop1')
    (evil / 'zz.py').symlink_to(evil / 'loop1')  # a symlink loop: no .py file to offer, no crash
    monkeypatch.chdir(tmp_path)
    assert main(['schema', 'evil/']) == 2
    err = capsys.readouterr().err
    _terminal_safe(err)
    assert 'ok.py' in err and '\\x1b[31mRED' in err and 'zz.py' not in err
    pkg = tmp_path / 'x\x1b[2Jy' / 'pkg'  # a package under a hostile parent folder: its place is printed
    pkg.mkdir(parents=True)
    (pkg / '__init__.py').write_text('')
    assert main(['schema', str(pkg)]) == 2
    err = capsys.readouterr().err
    _terminal_safe(err)
    assert "the package as a module, 'pkg' from" in err and 'x\\x1b[2Jy' in err

def test_a_folder_of_many_files_answers_in_bounded_time(capsys, tmp_path, monkeypatch):
    "100,000 files: the folder is read to 10,000 entries at most, and the message names five"
    from funccall.cli import main
    big = tmp_path / 'big'
    big.mkdir()
    for i in range(100_000): (big / f'f{i:06}.py').touch()
    monkeypatch.chdir(tmp_path)
    t0 = time.monotonic()
    assert main(['schema', 'big/']) == 2
    took, err = time.monotonic() - t0, capsys.readouterr().err
    _terminal_safe(err)
    assert took < 10 and err.count('big/f') == 5 and ', ...)' in err, (took, err)

# --- a hostile HTTP server's error response: read bounded, printed escaped ----------------------------

@contextlib.contextmanager
def _http_server(status: str, headers: dict, body):
    "A raw HTTP server on 127.0.0.1 answering every request with `status`, `headers` and `body` (bytes, or a callable writing to the socket)"
    import socket
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen()
    def request(c) -> None:
        "Read the whole request: one left unread makes the close a reset, which the client reads as a ReadError"
        data = b''
        while b'\r\n\r\n' not in data and (chunk := c.recv(65536)): data += chunk
        head, _, rest = data.partition(b'\r\n\r\n')
        n = next((int(ln.split(b':', 1)[1]) for ln in head.split(b'\r\n') if ln.lower().startswith(b'content-length:')), 0)
        while len(rest) < n and (chunk := c.recv(65536)): rest += chunk
    def serve(c):
        with c, contextlib.suppress(OSError):
            request(c)
            c.sendall(f'HTTP/1.1 {status}\r\nConnection: close\r\n'.encode() + b''.join(f'{k}: {v}\r\n'.encode() for k, v in headers.items()) + b'\r\n')
            if callable(body): body(c)
            else: c.sendall(body)
    def accept():
        with contextlib.suppress(OSError):
            while True: threading.Thread(target=serve, args=(srv.accept()[0],), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()
    try: yield f'http://127.0.0.1:{srv.getsockname()[1]}/mcp'
    finally: srv.close()

def _endless(c) -> None:
    "A chunked body that never ends"
    chunk = b'x' * 65536
    while True: c.sendall(b'%x\r\n' % len(chunk) + chunk + b'\r\n')

def _connect_error(url: str) -> str:
    from funccall.mcp import MCPClient
    from funccall.mcp.client import MCPConnectionError
    with pytest.raises(MCPConnectionError) as e, MCPClient(url, timeout=20): pass
    return str(e.value)

def test_an_endless_error_body_is_read_bounded_and_a_hostile_one_printed_escaped():
    pytest.importorskip('mcp')
    import tracemalloc
    with _http_server('500 Oops', {'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked'}, _endless) as url:
        tracemalloc.start()
        t0 = time.monotonic()
        msg = _connect_error(url)
        took, (_, peak) = time.monotonic() - t0, tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert 'HTTP 500' in msg and took < 10 and peak < 50_000_000, (took, peak)  # (it read 1.6 GB in 10 s, until the timeout)
    evil = b'\x1b[2J\x1b[31mowned\nfuncall: all good\x07'
    with _http_server('500 Oops', {'Content-Type': 'text/plain', 'Content-Length': len(evil)}, evil) as url: msg = _connect_error(url)
    assert msg.isprintable() and '\\x1b[2J\\x1b[31mowned\\nfuncall: all good\\x07' in msg

def test_a_json_rpc_error_in_an_error_response_still_reaches_the_user():
    "The bound keeps a whole short body for the SDK, which reads a JSON-RPC error in it (a spec-correct server's 4xx)"
    pytest.importorskip('mcp')
    import json
    body = json.dumps({'jsonrpc': '2.0', 'id': None, 'error': {'code': -32600, 'message': 'this server wants a ticket'}}).encode()
    for framing in ({'Content-Length': len(body)}, {'Transfer-Encoding': 'chunked'}):
        payload = body if 'Content-Length' in framing else b'%x\r\n' % len(body) + body + b'\r\n0\r\n\r\n'
        with _http_server('400 Bad Request', {'Content-Type': 'application/json', **framing}, payload) as url:
            assert 'this server wants a ticket' in _connect_error(url)

# --- (7) docstrings: pathological ones cost their length ----------------------------------------------

def _with_doc(doc: str):
    def f(x: int) -> int: return x
    f.__doc__ = doc
    return f

@pytest.mark.parametrize('doc', [
    'Sum.\n' + '\n'.join(' ' * i + 'args:' for i in range(4000)) + '\n' + ' ' * 4001 + 'x: v',  # titles nested ever deeper (was 25 s)
    'Sum.\n' + '\n'.join(' ' * (i % 200 + 1) + 'args:' for i in range(100_000)) + '\n' + ' ' * 300 + 'x (int): v',
    'Sum.\n' + '\n'.join('    args:\n        x (int): the x' for i in range(50_000)),  # 100,000 lines of one section again and again
    'Sum.\n    Args:\n' + '\n' * 100_000 + '        x: v',
], ids=['nested', 'sawtooth', 'repeated', 'blank'])
def test_a_pathological_docstring_is_read_in_bounded_time(doc):
    from funccall import get_schema
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        s = get_schema(_with_doc(doc))
    assert time.perf_counter() - t0 < 5 and set(s['input_schema']['properties']) == {'x'}

# --- (7) constraints on a union of several types: a length bounds the members it can -------------------

def test_a_length_on_a_union_of_several_types_is_kept_and_enforced():
    """`Annotated[str | int | None, Field(max_length=5)]`: pydantic bounds the string; the schema said nothing and a built
    tool and call_func passed a 6-character string. Numbers stay bounded on the whole, as written"""
    from typing import Annotated, Optional, Union
    from pydantic import Field
    from funccall import call_func, get_schema
    def tag(q: Annotated[Optional[Union[str, int]], Field(max_length=5)] = None,  # a tag or an id
            r: Annotated[Union[str, list[int]], Field(min_length=2)] = 'ab',        # text, or numbers
            n: Annotated[Union[int, float], Field(ge=0)] = 0) -> str:              # a count
        "Tag it"
        return f'{q} {r} {n}'
    ps = get_schema(tag)['input_schema']['properties']
    assert {'type': 'string', 'maxLength': 5} in ps['q']['anyOf'] and {'type': 'integer'} in ps['q']['anyOf']
    assert {'type': 'string', 'minLength': 2} in ps['r']['anyOf'] and {'type': 'array', 'items': {'type': 'integer'}, 'minItems': 2} in ps['r']['anyOf']
    assert ps['n']['minimum'] == 0
    box = Toolbox([tag])
    for bad in ({'q': 'x' * 6}, {'r': 'x'}, {'r': [1]}, {'n': -1}):
        assert box.call('tag', bad).failure == 'arguments', bad
        assert call_func('tag', bad, [tag], raise_on_err=False).startswith('ToolInputError'), bad
    assert box.call('tag', {'q': 123456, 'r': [1, 2], 'n': 1.5}).value == '123456 [1, 2] 1.5'  # an int has no length

# --- (1) a served tool running the sync form: its context would wait for the loop that waits for it ----------

def test_a_served_tool_that_runs_the_sync_form_with_its_context_fails_at_once_and_the_server_lives():
    """An async served tool runs another tool through the sync `Toolbox.call`, handing it its `MCPContext`; the inner tool
    logs through it. The server's loop waits for the sync call while the log waits for the loop: the whole server hung
    for ever (every client's `tools/list` too). Now the log fails at once, saying to await the async form"""
    pytest.importorskip('mcp')
    sys.path.insert(0, str(SERVERS))
    from loopback import rpc, serving
    from funccall import Tool
    from funccall.mcp import MCPContext, mk_asgi_app
    async def inner(ctx: MCPContext) -> str:
        "Logs through the context"
        await ctx.log('from inner')
        return 'inner done'
    def sinner(ctx: MCPContext) -> str:
        "The same, synchronously, under a deadline (so in a worker thread)"
        ctx.log('from sinner')
        return 'sinner done'
    async def outer(which: str, ctx: MCPContext) -> str:
        "Runs `which` through the sync form"
        return Toolbox([inner, Tool(sinner, timeout=5)]).call(which, {}, injected={'ctx': ctx}).text
    async def fine(ctx: MCPContext) -> str:
        "The async form: the context reaches the client"
        return (await Toolbox([inner]).acall('inner', {}, injected={'ctx': ctx})).text
    with serving(mk_asgi_app([outer, fine])) as url:
        for which in ('inner', 'sinner'):
            t0 = time.monotonic()
            _, r = rpc(url, 'tools/call', {'name': 'outer', 'arguments': {'which': which}}, timeout=15)
            assert time.monotonic() - t0 < 10 and "MCPContext can't reach the client" in r['result']['content'][0]['text'], r
        assert rpc(url, 'tools/list', {}, timeout=10)[0] == 200
        assert rpc(url, 'tools/call', {'name': 'fine', 'arguments': {}}, timeout=10)[1]['result']['content'][0]['text'] == 'inner done'
    assert not _run._held
