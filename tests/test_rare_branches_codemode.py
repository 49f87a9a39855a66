"""Code mode's rare branches, each for what it exists for: a stub's return type when it can't be worked out, a program's
value too big or too odd for JSON shown bounded (a dict keyed by tuples once came back as `{}`), a tool's value too big for
the channel, the monty watchdog when its process is gone, monty missing, a bad `sleep` in monty, and the providers'
programmatic calling reaching into a namespace."""
import dataclasses, subprocess, sys, time, typing

import pytest

from funccall import Toolbox
from funccall.toolsets import codemode
from funccall.toolsets.codemode import _answer, _shown, _Watchdog, code_api, code_tool, programmatic

def _stub_return(fn) -> str:
    "The return annotation of `fn`'s stub in `code_api`"
    line = next(ln for ln in code_api(Toolbox([fn])).splitlines() if ln.startswith(f'def {fn.__name__}('))
    return line.rsplit(' -> ', 1)[1].rstrip(':')

def unresolved(
    x: int,  # a number
) -> 'NoSuchType':  # noqa: F821 - what can't be resolved
    "A tool whose return annotation names nothing"
    return x

def no_schema(
    x: int,  # a number
) -> typing.Awaitable[int]:
    "A tool returning what no schema describes"
    return x

def test_a_return_annotation_that_cant_be_shown_is_any():
    "A return annotation that can't be resolved, or has no schema: the stub says `Any` rather than failing the toolset"
    assert _stub_return(unresolved) == 'Any'
    assert _stub_return(no_schema) == 'Any'

def test_an_mcp_output_schema_that_cant_be_read_is_any():
    "An MCP server's `outputSchema` that names what it doesn't define: `Any`, and the rest of the API still shown"
    def remote(x: int) -> int:
        "A remote tool"
        return x
    remote.__output_schema__ = {'$ref': '#/$defs/Missing'}
    assert _stub_return(remote) == 'Any'

@dataclasses.dataclass
class Row:
    key: str
    blob: bytes

class Opaque:
    def __repr__(self): return 'Opaque(...)'

@pytest.mark.parametrize('v,expected', [
    (b'x' * 5000, '"b\'xxxxxxxxxx'),                                             # bytes: a short repr, never their megabytes
    ([Row('a', b'y' * 3000)], '[{"key": "a", "blob": "b\''),                   # a dataclass: its fields
    ({frozenset({1}): 1, 'k': [Opaque()] * 2000}, "{frozenset({1}): 1, 'k': [Opaque(...), Opaque(...), Opaque(...), "),  # a key JSON can't hold
    ({(i, i): 'x' * 100 for i in range(200)}, "{(0, 0): 'xxxxx"),              # the dict keyed by tuples that came back as `{}`
    ({'s': {1, 2}, 'o': [Opaque()] * 2000}, '{"s": [1, 2], "o": ["Opaque(...)", '),  # a set as a list, an object as its repr
])
def test_a_value_too_big_to_render_whole_is_shown_bounded_and_never_emptied(v, expected):
    "A value over the limit is rendered in bounded time and text, whatever it holds: never silently emptied"
    s = _shown(v, 1000)
    assert s.startswith(expected[:60]) and len(s) <= 1000 + 60, s[:300]
    assert s not in ('{}', '[]')

def test_a_program_returning_a_big_dict_keyed_by_tuples_shows_its_entries():
    "Through the tool: the model reads the entries (shortened), as it does for a small one"
    r = code_tool(Toolbox([unresolved]), isolate=False).execute({'code': "{(i, i): 'x' * 1000 for i in range(200)}"})
    assert r.ok and r.value.startswith("{(0, 0): 'xxx") and '...' in r.value

def big(
    n: int,  # how many characters
) -> str:    # that many x
    "A big value"
    return 'x' * n

def opaque() -> object:
    "An object JSON can't hold"
    return Opaque()

def test_a_tools_value_too_big_for_the_channel_is_an_error_the_program_reads():
    box = Toolbox([big, opaque])
    r = box.call('big', {'n': codemode.MAX_MESSAGE // 2 + 10})
    assert _answer(r) == {'ok': False, 'value': None,
                          'error': f"Tool 'big' returned over {codemode.MAX_MESSAGE >> 21} MB: too big for a program; ask for less"}
    assert _answer(box.call('opaque', {})) == {'ok': True, 'value': 'Opaque(...)', 'error': None}  # (as its text)

def test_the_watchdog_kills_only_a_live_run_and_minds_a_process_already_gone():
    p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])
    with _Watchdog(p.pid, time.monotonic() + 0.05) as dog:
        assert p.wait(10) != 0 and dog.fired
    q = subprocess.Popen([sys.executable, '-c', 'pass'])
    q.wait(10)
    gone = _Watchdog(q.pid, time.monotonic())
    gone.kill()  # (its process ended before the deadline: no error)
    assert gone.fired
    done = _Watchdog(None, time.monotonic() + 60)
    with done: pass
    done.kill()  # (the block ended: nothing to kill)
    assert not done.fired

def test_monty_missing_says_how_to_install_it_and_the_safest_mode_is_a_process(monkeypatch):
    monkeypatch.setitem(sys.modules, 'pydantic_monty', None)
    assert codemode.safest_mode() is True
    r = code_tool(Toolbox([big]), isolate='monty')
    with pytest.raises(ImportError, match=r"isolate='monty' needs pydantic-monty: pip install pydantic-monty"): r.fn(code='1')

class _Snap:
    "What monty suspends a program's `time.sleep(...)` call as: its arguments, resumed with a value or an exception"
    def __init__(self, *args, **kwargs): self.args, self.kwargs = args, kwargs
    def resume(self, how): return how

@pytest.mark.parametrize('snap', [_Snap(-1), _Snap('a'), _Snap(float('nan')), _Snap(float('inf')), _Snap(True), _Snap(), _Snap(1, 2), _Snap(secs=1)])
def test_a_bad_sleep_reaching_the_host_is_the_programs_own_error(snap):
    """Whatever a sleep's arguments (pydantic-monty checks them first today): the program gets a ValueError, the host
    neither sleeps nor fails"""
    t0 = time.monotonic()
    out = codemode._sleep(snap, time.monotonic() + 60)
    assert time.monotonic() - t0 < 1 and 'sleep length must be a non-negative number' in str(out['exception'])

def test_a_sleep_past_the_deadline_stops_the_program_at_it():
    t0 = time.monotonic()
    with pytest.raises(codemode._Late, match='asleep'): codemode._sleep(_Snap(30), time.monotonic() + 0.1)
    assert 0.09 < time.monotonic() - t0 < 1
    assert codemode._sleep(_Snap(0.01), time.monotonic() + 5) == {'return_value': None}

def test_programmatic_calling_reaches_into_namespaces_and_leaves_other_tools_alone():
    "OpenAI Responses: a namespace's functions become callable from the program; a hosted tool is passed on as it is"
    fn = {'type': 'function', 'name': 'f', 'parameters': {'type': 'object', 'properties': {}}}
    defs = [{'type': 'namespace', 'name': 'crm', 'description': 'CRM', 'tools': [fn]}, {'type': 'tool_search'}]
    out = programmatic(defs, 'responses', direct=True)
    assert out == [{'type': 'namespace', 'name': 'crm', 'description': 'CRM', 'tools': [{**fn, 'allowed_callers': ['programmatic', 'direct']}]},
                   {'type': 'tool_search'}, {'type': 'programmatic_tool_calling'}]
    assert defs[0]['tools'][0] == fn  # (its input unchanged)


def defaults(
    short: list = (1, frozenset({2})),  # a short container: shown as its JSON reads back
    long: list = tuple(range(40)),      # a long one: not spelled out
    when: dict = {'a': None},           # a dict
) -> int:                               # nothing
    "Defaults of every kind"
    return 0

def test_a_stub_shows_a_short_default_and_marks_a_long_one():
    line = next(ln for ln in code_api(Toolbox([defaults])).splitlines() if ln.startswith('def defaults('))
    assert "short: list[Any] = [1, [2]]" in line and 'long: list[Any] = None' in line and "when: dict = {'a': None}" in line
