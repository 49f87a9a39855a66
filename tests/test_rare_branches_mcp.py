"""funccall.mcp's rare branches, each for what it exists for: `serve()` itself over stdio (a real SDK client, and the
served process keeping its environment, so its coverage is measured too), Ctrl-C stopping an HTTP server quietly, the
command line refusing `--workers` it can't honour, the SDK missing or broken, a sealed state whose MAC passes but whose
payload isn't one this server makes, a state for another tool or caller, a full nonce memory, quiet clients' shares swept,
and a stdio server's stderr passed on to every kind of `errlog`."""
import asyncio, io, os, signal, socket, subprocess, sys, time

import pytest

pytest.importorskip('mcp')
from mcp import Client, StdioServerParameters, stdio_client  # noqa: E402

from funccall.core._seal import SealError, b64, mac  # noqa: E402
from funccall.mcp._state import Sealer, StateError  # noqa: E402
from funccall.mcp._stdio import StderrTail, exit_note  # noqa: E402
from funccall.mcp._state import NonceStore  # noqa: E402
from funccall.mcp._store import LocalNonces  # noqa: E402
from funccall.mcp.cli import main  # noqa: E402

T = 20  # seconds: the most any one exchange may take
ENV = {**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)}  # (the SDK's client passes a bare environment by default)

# --- serving --------------------------------------------------------------------------------------------------

SERVED = '''
import sys
from funccall.mcp import serve
def shout(
    text: str,  # what to shout
) -> str:       # the text, upper case
    "Shout a text"
    print("printed inside the tool")
    return text.upper()
serve([shout], name='shouter')
print('stdout restored:', sys.stdout is sys.__stdout__, file=sys.stderr)
'''

def test_serve_over_stdio_keeps_prints_off_the_protocol_and_restores_stdout(tmp_path):
    "`serve(tools)` with no address: stdio until the client hangs up, a tool's print on stderr, `sys.stdout` given back after"
    (tmp_path / 'served.py').write_text(SERVED)
    err = tmp_path / 'err.txt'
    async def talk():
        params = StdioServerParameters(command=sys.executable, args=[str(tmp_path / 'served.py')], env=ENV)
        with open(err, 'w') as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=T) as c:
                return c.server_info.name, await c.call_tool('shout', {'text': 'hi'})
    name, r = asyncio.run(asyncio.wait_for(talk(), T))
    assert name == 'shouter' and r.content[0].text == 'HI'
    end = time.monotonic() + T
    while 'stdout restored' not in err.read_text() and time.monotonic() < end: time.sleep(0.05)
    assert 'printed inside the tool' in err.read_text() and 'stdout restored: True' in err.read_text()

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

def test_ctrl_c_stops_an_http_server_quietly(tmp_path):
    "Ctrl-C (SIGINT) ends `--http` serving with status 0 and no traceback"
    (tmp_path / 'tools.py').write_text('def one() -> int:\n    "One"\n    return 1\n')
    port = _free_port()
    p = subprocess.Popen([sys.executable, '-m', 'funccall.mcp', 'serve', 'tools.py', '--http', f'127.0.0.1:{port}'],
                         cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + T
        while True:
            try: socket.create_connection(('127.0.0.1', port), timeout=1).close(); break
            except OSError:
                assert p.poll() is None and time.monotonic() < end, p.stderr.read() if p.poll() is not None else 'no server'
                time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=T)
    finally:
        if p.poll() is None: p.kill(); p.wait()
    assert p.returncode == 0 and 'Traceback' not in err and 'serving' in err, err

@pytest.mark.parametrize('args', [['--workers', '0', '--http', '127.0.0.1:1'], ['--workers', '2']])
def test_workers_it_cant_honour_are_refused_before_anything_loads(args, tmp_path, capsys):
    "Fewer than one worker, or several without --http (stdio has one client): refused, and no target loaded"
    (tmp_path / 'loud.py').write_text('raise SystemExit("loaded")\n')
    assert main(['serve', str(tmp_path / 'loud.py'), *args]) == 2
    assert capsys.readouterr().err == 'funccall mcp: --workers takes a number >= 1, with --http\n'

MISSING = '''
import sys, types
broken = types.ModuleType('starlette'); broken.__spec__ = None  # (a module with no spec: find_spec can't tell)
sys.modules['starlette'] = broken
try: import funccall.mcp
except ImportError as e: print('package:', e)
del sys.modules['starlette']
import funccall.mcp
sys.modules['mcp.server.stdio'] = None  # (installed, but failing to import)
try: import funccall.mcp.cli
except ImportError as e: print('cli:', e)
'''

def test_the_sdk_missing_or_broken_says_how_to_install_it():
    r = subprocess.run([sys.executable, '-c', MISSING], capture_output=True, text=True, timeout=T, env=ENV)
    assert r.stdout.splitlines() == [
        "package: funccall.mcp needs the MCP SDK 2.x (No module named 'starlette'): pip install 'funccall[mcp]'",
        "cli: funccall.mcp needs the MCP SDK 2.x (import of mcp.server.stdio halted; None in sys.modules): pip install 'funccall[mcp]'"], r.stderr

# --- sealed states ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize('body', [b'not json', b'[1, 2]', b'{"t": "x", "a": "d", "e": 1.0, "n": "n"}', b'{"t": 1, "a": "", "e": 1.0, "n": "", "d": {}}',
                                  b'\xff\xfe'])
def test_a_state_signed_with_the_key_but_not_minted_here_is_refused(body):
    "A state whose MAC passes (the key leaked, or a bug) is still read with care: a payload of another shape is refused"
    sealer = Sealer('k' * 32)
    token = f'{(s := b64(body))}.{mac(sealer._key, s)}'
    with pytest.raises(StateError, match='not one this server made'): sealer.check(token, 'x', {})

def test_a_state_is_for_its_tool_and_its_caller_only():
    sealer = Sealer('k' * 32)
    state = sealer.seal('delete', {'path': 'p'}, {}, principal='alice')
    assert sealer.check(state, 'delete', {'path': 'p'}, principal='alice')['t'] == 'delete'
    with pytest.raises(StateError, match="made for tool 'delete', not 'wire'"): sealer.check(state, 'wire', {'path': 'p'}, principal='alice')
    with pytest.raises(StateError, match='made for another caller'): sealer.check(state, 'delete', {'path': 'p'}, principal='mallory')
    with pytest.raises(StateError, match='made for another caller'): sealer.check(state, 'delete', {'path': 'p'})

def test_a_full_nonce_memory_refuses_the_answer_and_gives_the_clients_share_back():
    "This process's memory of answers full: an answer older than all it holds is refused (never a used one forgotten), and doesn't count against its client"
    sealer, nonces = Sealer('k' * 32, per_client=1), LocalNonces(NonceStore(max_used=1))
    spend = lambda tok, who: asyncio.run(sealer.spend(sealer.check(tok, 't', {}), nonces, who))
    old = sealer.seal('t', {}, {})
    time.sleep(0.01)
    spend(sealer.seal('t', {}, {}), 'alice')  # newer: the memory's one place
    with pytest.raises(StateError, match='older than the oldest'): spend(old, 'bob')
    assert sealer.shares._held.get('bob', []) == []  # (nothing held: bob may answer again at once)
    spend(sealer.seal('t', {}, {}), 'bob')  # a newer answer of bob's: alice's forgotten, and refused from now on
    assert isinstance(StateError('x'), SealError)

def test_a_failing_store_gives_the_clients_share_back():
    "The shared store failing (Redis down): its error reaches the server, and the client's share is as it was"
    class Down:
        async def spend(self, *a): raise ConnectionError('store down')
    sealer = Sealer('k' * 32, per_client=1)
    p = sealer.check(sealer.seal('t', {}, {}), 't', {})
    for _ in range(2):
        with pytest.raises(ConnectionError): asyncio.run(sealer.spend(p, Down(), 'alice'))
    assert sealer.shares._held.get('alice', []) == []

def test_quiet_clients_leave_nothing_behind():
    "Once a minute, each client's expired answers are dropped, the clients that hold none with them"
    sealer = Sealer('k' * 32, per_client=5)
    sh = sealer.shares
    sh.take('gone', time.time() + 0.05); sh.take('still', time.time() + 60)
    time.sleep(0.1)
    sh._swept -= 61  # (a minute on)
    sh.take('alice', time.time() + 60)
    assert set(sh._held) == {'still', 'alice'} and sh._swept > time.time() - 1

# --- a stdio server's stderr ------------------------------------------------------------------------------------

class _TextOnly:
    "An errlog with `write(str)` only (no `buffer`): a logging stream, say"
    def __init__(self): self.parts = []
    def write(self, s):
        if not isinstance(s, str): raise TypeError('str only')
        self.parts.append(s)
    def flush(self): pass

class _Closed(io.StringIO):
    def write(self, s): raise ValueError('I/O operation on closed file')

def _through(errlog, data: bytes) -> StderrTail:
    tail = StderrTail(errlog)
    tail.child.write(data); tail.child.close()
    assert tail.done.wait(5)
    return tail

@pytest.mark.parametrize('make,read', [
    (io.BytesIO, lambda f: f.getvalue()),                         # a binary file: the bytes as they came
    (_TextOnly, lambda f: ''.join(f.parts).encode()),             # text only: decoded, a bad byte replaced
])
def test_stderr_passes_to_an_errlog_of_any_kind(make, read):
    out = make()
    tail = _through(out, b'starting\n\xffbad byte\nfailed: no config\n')
    got = read(out)
    assert got in (b'starting\n\xffbad byte\nfailed: no config\n', 'starting\n\ufffdbad byte\nfailed: no config\n'.encode())
    assert tail.lines() == ['starting', '\ufffdbad byte', 'failed: no config']

def test_a_broken_errlog_costs_its_copy_not_the_tail():
    "An errlog that can't be written (closed) loses the copy; the failure's explanation is still kept"
    tail = _through(_Closed(), b'one\ntwo\n')
    assert tail.lines() == ['one', 'two']
    assert exit_note([], tail) == 'its last lines on stderr:\n  one\n  two'

def test_stderr_to_a_file_descriptor_or_nowhere(tmp_path):
    with open(tmp_path / 'log', 'wb') as f: _through(f.fileno(), b'to the fd\n')
    assert (tmp_path / 'log').read_bytes() == b'to the fd\n'
    assert _through(subprocess.DEVNULL, b'nowhere\n').lines() == ['nowhere']

def test_exit_note_names_the_status_or_the_signal():
    class P:
        def __init__(self, code): self.returncode = code
    assert exit_note([P(3)], None) == 'the server exited with status 3'
    assert exit_note([P(-9)], None) == 'the server was ended by signal 9'
    assert exit_note([P(None)], None) == '' and exit_note([], None) == ''

@pytest.mark.parametrize('per_client,who', [(None, 'alice'), (1, None)])
def test_no_bound_or_no_client_known_counts_nothing(per_client, who):
    "`per_client=None` bounds no client; an answer from no known client (in process) counts against none"
    sealer, nonces = Sealer('k' * 32, per_client=per_client), LocalNonces(NonceStore())
    for _ in range(3): asyncio.run(sealer.spend(sealer.check(sealer.seal('t', {}, {}), 't', {}), nonces, who))
    assert sealer.shares._held == {} and nonces.store.held == 3

def test_the_package_lists_its_lazy_names():
    "`dir(funccall.mcp)` shows every public name before any of their modules is loaded (tab completion, `help`)"
    import funccall.mcp
    assert set(funccall.mcp.__all__) <= set(dir(funccall.mcp))
