"""The edges of funccall's MCP client found by trying real servers (issue 30): every failure to connect is one
`MCPConnectionError` that says why (no server at the port; a command that exits, with its status and its last lines on
stderr, which still reach `errlog` whole; a handshake reply that makes no sense), `call_func` on a built tool reports
every problem at once, a Gemini conversation with media is JSON, `strict=True` for Gemini or MCP warns, and a failing
tool's log on the server's stderr starts at the tool's own frames."""
import base64, json, os, re, socket, subprocess, sys, time, traceback, warnings
from pathlib import Path

import pytest

pytest.importorskip('mcp')
from google.genai import types as gtypes  # noqa: E402

import funccall  # noqa: E402
from funccall import Image, Tool, Toolbox, ToolInputError, call_func  # noqa: E402
from funccall.mcp import MCPClient, MCPConnectionError, mk_server  # noqa: E402
from funccall.loop.messages import tool_results  # noqa: E402
from funccall.core.providers import ProviderWarning  # noqa: E402

SERVERS = Path(__file__).parent / 'mcp_servers'
T = 20
FUNCCALL = os.path.dirname(funccall.__file__) + os.sep

def _closed_port() -> int:
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port

def _connect(server, **kw) -> MCPConnectionError:
    "The error of connecting to `server`, which must fail as `MCPConnectionError` well within the timeout"
    start = time.monotonic()
    with pytest.raises(MCPConnectionError) as e:
        with MCPClient(server, timeout=T, **kw): pass
    assert time.monotonic() - start < T / 2
    return e.value

# --- failures to connect -------------------------------------------------------------------------------------

def test_a_closed_port():
    url = f'http://127.0.0.1:{_closed_port()}/mcp'
    e = _connect(url)
    assert url in str(e) and 'ConnectError' in str(e)
    assert isinstance(e, ConnectionError)

def test_a_command_that_exits_with_status_3(tmp_path):
    code = 'import sys; print("starting"); print("config.toml: no such file", file=sys.stderr); sys.exit(3)'
    log = tmp_path / 'err.txt'
    with open(log, 'w') as f: e = _connect([sys.executable, '-c', code], errlog=f)
    assert 'exited with status 3' in str(e) and 'config.toml: no such file' in str(e)
    assert 'config.toml: no such file' in log.read_text()  # errlog still gets what the command wrote

def test_a_stderr_flood_is_kept_short_in_the_message_and_whole_in_errlog(tmp_path):
    # 2 MB on stderr, then twelve lines: the message keeps the last five (at most 4 KB of them), errlog every byte
    code = ('import sys; sys.stderr.write("x" * 2_000_000 + "\\n" + "".join(f"line {i}\\n" for i in range(11)) + "the real reason\\n"); '
            'sys.exit(4)')
    log = tmp_path / 'err.txt'
    with open(log, 'w') as f: e = _connect([sys.executable, '-c', code], errlog=f)
    said = str(e).split('its last lines on stderr:')[1].split()
    assert 'exited with status 4' in str(e) and ' '.join(said) == 'line 7 line 8 line 9 line 10 the real reason'
    assert len(str(e)) < 6000
    assert log.stat().st_size == 2_000_001 + sum(len(f'line {i}\n') for i in range(11)) + len('the real reason\n')

def test_stderr_to_devnull_still_explains():
    e = _connect([sys.executable, '-c', 'import sys; sys.stderr.write("nope\\n"); sys.exit(5)'], errlog=subprocess.DEVNULL)
    assert 'exited with status 5' in str(e) and 'nope' in str(e)

def test_a_command_that_exits_while_its_child_holds_stdout_says_so_in_the_timeout():
    # attack: the command exits (status 6) but a child it started keeps its stdout open, so the connection never closes:
    # the TimeoutError said only "did not answer", hiding the exit status and the reason the command wrote
    code = ('import subprocess, sys; p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(15)"]); '
            'sys.stderr.write("no API token\\n"); sys.exit(6)')
    with pytest.raises(TimeoutError, match='did not answer within 3 s') as e:
        with MCPClient([sys.executable, '-c', code], timeout=3, errlog=subprocess.DEVNULL): pass
    assert 'exited with status 6' in str(e.value) and 'no API token' in str(e.value)

def test_a_command_that_never_answers_is_said_to_be_ended_by_the_signal_that_stopped_it():
    code = 'import sys, time; sys.stderr.write("warming up\\n"); sys.stderr.flush(); time.sleep(15)'
    with pytest.raises(TimeoutError, match='did not answer within 3 s') as e:
        with MCPClient([sys.executable, '-c', code], timeout=3, errlog=subprocess.DEVNULL): pass
    assert 'warming up' in str(e.value) and 'status -' not in str(e.value)  # stopped by the client, not "exited with status -15"

def test_a_command_that_is_not_there():
    e = _connect(['/nonexistent/funccall-test-server'])
    assert '/nonexistent/funccall-test-server' in str(e)

def test_a_malformed_initialize_reply():
    e = _connect([sys.executable, str(SERVERS / 'bad_init_server.py')])
    assert 'bad_init_server.py' in str(e) and 'ValidationError' in str(e)

def test_async_too():
    import asyncio
    async def go():
        async with MCPClient([sys.executable, '-c', 'import sys; sys.exit(3)'], timeout=T): pass
    with pytest.raises(MCPConnectionError, match='exited with status 3'): asyncio.run(go())

# --- call_func reports every problem of a built tool -----------------------------------------------------------

def convert_time(source_timezone: str, time: str, target_timezone: str) -> str:  # the time there
    "Convert a time between time zones"
    return time

def _problems(e: ToolInputError) -> set:
    "(parameter, 'missing' or 'wrong') for each problem, however the message words it"
    return {(p.path.split('.')[0] or re.search(r"'(\w+)'", p.message)[1], 'missing' if 'missing' in p.message else 'wrong')
            for p in e.errors}

def test_call_func_on_a_built_tool_reports_every_problem():
    bad = {'time': 3}  # a wrong type and two missing
    with MCPClient(mk_server([convert_time]), timeout=T) as c:
        f = c.tools()['convert_time']
        with pytest.raises(ToolInputError) as direct: f(**bad)
        with pytest.raises(ToolInputError) as by_name: call_func('convert_time', bad, c.tools())
        with pytest.raises(ToolInputError) as by_fn: call_func(f, bad)
        with pytest.raises(ToolInputError) as json_text: call_func('convert_time', json.dumps(bad), c.tools())
    with pytest.raises(ToolInputError) as plain: call_func('convert_time', bad, [convert_time])
    want = {('time', 'wrong'), ('source_timezone', 'missing'), ('target_timezone', 'missing')}
    for e in (direct, by_name, by_fn, json_text, plain): assert _problems(e.value) == want, e.value

# --- Gemini -----------------------------------------------------------------------------------------------------

PNG = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==')

def chart() -> Image:
    "Draw the chart"
    return Image(PNG, 'image/png')

def test_a_gemini_conversation_with_an_image_is_json():
    box = Toolbox([chart])
    msgs = tool_results([box.call('chart', {}, call_id='c1')], 'gemini')
    text = json.dumps(msgs)  # raw bytes would fail here
    back = gtypes.Content.model_validate(json.loads(text)[0])  # Gemini's own types read it back: the same bytes
    [part] = back.parts
    assert part.function_response.parts[0].inline_data.data == PNG
    assert part.function_response.parts[0].inline_data.mime_type == 'image/png'

def test_strict_for_gemini_and_mcp_warns_and_changes_nothing():
    box = Toolbox([Tool(convert_time)])
    for fmt in ('gemini', 'mcp'):
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            plain = box.definitions(fmt)  # no strict asked: no warning
        with pytest.warns(ProviderWarning, match='strict'): strict = box.definitions(fmt, strict=True)
        assert strict == plain

# --- the server's log of a failing tool ----------------------------------------------------------------------------

def test_a_failed_calls_log_starts_at_the_tools_frames(tmp_path):
    (tmp_path / 'failing.py').write_text('def explode(n: int) -> int:\n    "Fail"\n    return helper(n)\n\n'
                                          'def helper(n):\n    raise ValueError(f"bad {n}")\n')
    log = tmp_path / 'err.txt'
    with open(log, 'w') as f, MCPClient([sys.executable, '-m', 'funccall', 'mcp', 'serve', str(tmp_path / 'failing.py')],
                                        timeout=T, errlog=f) as c:
        with pytest.raises(Exception, match='^ValueError$'): c.tools()['explode'](3)
    text = log.read_text()
    frames = [ln.strip() for ln in text.splitlines() if ln.strip().startswith('File ')]
    assert frames and all('failing.py' in ln for ln in frames), text  # the tool's frames, and no pipeline frames before them
    assert 'in explode' in text and 'in helper' in text and 'ValueError: bad 3' in text

def _mw(tool, args, call_next): return call_next(args)

def explode(n: int) -> int:  # never
    "Fail"
    return _helper(n)

def _helper(n): raise ValueError(f"bad {n}")

@pytest.mark.parametrize('kw', [dict(middleware=(_mw,)), dict(retries=1, read_only=True, retry_delay=0), dict(timeout=10)])
def test_a_failed_calls_log_keeps_the_tools_frames_only(caplog, kw):
    # middleware, retries and timeouts run the tool through funccall's own frames (threads, attempts): the log leaves them out
    with caplog.at_level('WARNING', logger='funccall.mcp'), MCPClient(mk_server([Tool(explode, **kw)]), timeout=T) as c:
        with pytest.raises(Exception, match='^ValueError$'): c.tools()['explode'](3)
    [rec] = [r for r in caplog.records if r.getMessage() == "Tool 'explode' failed"]
    frames = traceback.extract_tb(rec.exc_info[2])
    assert [f.name for f in frames if f.filename == __file__] in (['explode', '_helper'], ['_mw', 'explode', '_helper'])
    assert not [f for f in frames if f.filename.startswith(FUNCCALL)], frames

# --- an error leaving the client's block is itself, not the SDK's exception group -------------------------------

def _fails(x: int) -> int:
    "Fails"
    raise ValueError('no')

def test_an_error_leaving_the_block_is_itself_not_an_exception_group():
    # attack: a failed call (or the caller's own error) raised inside `with MCPClient(...)` came out as "unhandled
    # errors in a TaskGroup", which `except MCPToolError` outside the block never catches
    with pytest.raises(funccall.mcp.MCPToolError, match='ValueError'):
        with MCPClient(mk_server([_fails]), timeout=T) as c: c.tools()['_fails'](1)
    cause = KeyError('why')
    with pytest.raises(RuntimeError, match='mine') as e:
        with MCPClient(mk_server([_fails]), timeout=T): raise RuntimeError('mine') from cause
    assert e.value.__cause__ is cause  # the caller's own error goes on untouched

def test_an_error_leaving_the_async_block_is_itself_not_an_exception_group():
    import asyncio
    async def main():
        async with MCPClient(mk_server([_fails]), timeout=T) as c: await c.tools()['_fails'](x=1)
    with pytest.raises(funccall.mcp.MCPToolError, match='ValueError'): asyncio.run(main())

# --- one message of a hostile HTTP server is bounded ----------------------------------------------------------

@pytest.fixture(scope='module')
def huge_http():
    "`huge_http_server.py`, a hostile server whose `dump` sends n characters in one message, framed as asked"
    sys.path.insert(0, str(SERVERS))
    from loopback import free_port
    port = free_port()
    p = subprocess.Popen([sys.executable, str(SERVERS / 'huge_http_server.py'), str(port)], stderr=subprocess.DEVNULL)
    url, deadline = f'http://127.0.0.1:{port}/mcp', time.monotonic() + T
    while True:
        try:
            socket.create_connection(('127.0.0.1', port), timeout=1).close()
            break
        except OSError:
            assert p.poll() is None and time.monotonic() < deadline, 'the server did not start'
            time.sleep(0.05)
    yield url
    p.kill()
    p.wait(T)

@pytest.mark.parametrize('how', ['json', 'length', 'gzip', 'sse'])
def test_a_50_mb_reply_is_refused_at_max_message_in_bounded_memory(huge_http, how):
    """The attack: 50 MB in one reply, as a chunked JSON body, one that declares its length, a gzip body of 50 kB that
    inflates to 50 MB, and one server-sent event. The client held all of a JSON body (100 MB at its peak); now the call
    fails at `max_message`, saying so, with about that much held, and the connection serves the next call"""
    import tracemalloc
    with MCPClient(huge_http, timeout=T, max_message=1_000_000) as c:
        dump = c.tools()['dump']
        tracemalloc.start()
        t0 = time.monotonic()
        with pytest.raises(funccall.mcp.MCPToolError, match=r'more than max_message \(1,000,000 bytes\) allows: it was not read'):
            dump(n=50_000_000, how=how)
        took, (_, peak) = time.monotonic() - t0, tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 4_000_000 and took < 10, (peak, took)
        assert dump(n=999_000, how=how) == 'x' * 999_000  # within the bound: whole, on the same connection

def test_the_default_bound_is_16_mb_and_the_sdks_1_mb_stream_events_are_raised_to_it(huge_http):
    with MCPClient(huge_http, timeout=T) as c:
        dump = c.tools()['dump']
        for how in ('json', 'sse'): assert len(dump(n=3_000_000, how=how)) == 3_000_000  # (an image of 2 MB, say: the SDK refused it as an event)
        with pytest.raises(funccall.mcp.MCPToolError, match=r'50,000,082 bytes, more than max_message \(16,777,216 bytes\)'): dump(n=50_000_000, how='length')
    for bad in (0, -1, 1.5, '1', True, None):
        with pytest.raises(ValueError, match='max_message'): MCPClient(huge_http, max_message=bad)
