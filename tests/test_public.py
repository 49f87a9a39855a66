"""Public names and command-line options no other test reached: `union_schema`, `Tool.definition`, `Tool.to_dict`,
`error_text`, `TypeInfo`, `funccall.mcp.serve` (and its `injected=`), the CLI's `--version`, its "did you mean",
`call` with a `Tool` target, `mcp serve --name`, `check` when a renderer raises, the strict limits on nesting depth and
property count, and the comment-reading fallback of the docments reader (reached by a default such as `dict(b=1)`).
"""
import asyncio
import dataclasses
import json
import subprocess
import sys
import textwrap
from typing import Optional, Union

import pytest

import funccall
from funccall import (KINDS, Report, SchemaError, Tool, ToolInputError, TypeInfo, call_func, error_text, get_schema, kind, to_anthropic,
                      to_gemini, to_openai, union_schema)
from funccall.cli import main

T = 60  # seconds: a generous bound for one subprocess


@dataclasses.dataclass
class Spot:
    "A spot"
    x: int


def test_union_schema():
    assert union_schema(Union[int, str, None]) == {'anyOf': [{'type': 'integer'}, {'type': 'string'}, {'type': 'null'}]}
    defs = {}
    assert union_schema(Optional[Spot], defs) == {'anyOf': [{'$ref': '#/$defs/Spot'}, {'type': 'null'}]}
    assert defs['Spot']['properties'] == {'x': {'description': '', 'type': 'integer'}}


def scale(
    a: int,        # how many
    b: str = 'x',  # what to repeat
) -> str:
    "Repeat `b` `a` times"
    return b * a


def test_tool_definition_is_each_renderers_output():
    t = Tool(scale)
    assert t.definition() == t.definition('openai') == to_openai(scale)
    assert t.definition('anthropic') == to_anthropic(scale)
    assert t.definition('gemini') == to_gemini(scale)
    assert t.definition('openai', strict=True) == to_openai(scale, strict=True)
    with pytest.raises(ValueError, match='nope'): t.definition('nope')


def test_tool_to_dict_is_its_schema_and_options():
    d = Tool(scale).to_dict()
    assert {k: d[k] for k in ('name', 'description', 'input_schema')} == get_schema(scale)
    assert (d['strict'], d['requires_confirmation'], d['stop_after']) == (False, False, False)
    assert json.loads(json.dumps(d)) == d  # plain JSON, to store or send


def boom(x: int):
    "Fail inside the tool"
    return {}['missing' * x]


def test_error_text_is_one_line_for_a_bad_call_and_the_cause_with_frames_otherwise():
    with pytest.raises(ToolInputError) as bad: call_func('boom', {'x': 'a'}, [boom])
    assert error_text(bad.value) == "ToolInputError: Tool 'boom', argument 'x': expected an integer, got 'a'"
    with pytest.raises(KeyError) as crash: call_func('boom', {'x': 1}, [boom])
    text = error_text(crash.value)
    assert text.startswith("KeyError: 'missing'\nTraceback (most recent call last):") and ', in boom' in text
    assert 'funccall' not in text.split('Traceback')[1]  # the tool's frames, not funccall's
    assert error_text(SchemaError('no docstring')) == 'SchemaError: no docstring'


def test_type_info_says_the_kind_and_its_parts():
    info = kind(Optional[list[int]])
    assert isinstance(info, TypeInfo) and info.kind == 'union' and info.kind in KINDS
    assert info.args == (list[int], type(None)) and kind(info.args[0]) == TypeInfo('list', list[int], (int,), ())
    assert kind(Spot).kind == 'dataclass' and kind(Spot).t is Spot


# --- the command line -------------------------------------------------------------------------------------

def run(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'funccall', *args], capture_output=True, text=True, timeout=T, cwd=cwd)


def test_cli_version():
    r = run('--version')
    assert (r.returncode, r.stdout.strip()) == (0, f'funccall {funccall.__version__}')


@pytest.mark.parametrize('argv,err', [(['shcema'], "unknown command 'shcema'; did you mean 'schema'?"),
                                      (['chek', 'x'], "unknown command 'chek'; did you mean 'check'?"),
                                      (['mcp', 'serv', 'x'], "unknown command 'serv'; did you mean 'serve'?"),
                                      (['mcp', 'zzz'], "unknown command 'zzz'; use one of: serve, list")])
def test_cli_did_you_mean(capsys, argv, err):
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f'funccall: {err}'


TOOLS_PY = textwrap.dedent('''
    from funccall import Tool
    def double(n: int) -> int:
        "Double n"
        return 2 * n
    doubled = Tool(double, max_chars=3)
''')


def test_cli_call_with_a_tool_target_runs_its_pipeline(tmp_path):
    (tmp_path / 'tools.py').write_text(TOOLS_PY)
    r = run('call', 'tools.py:doubled', '{"n": "21"}', cwd=tmp_path)
    assert (r.returncode, r.stdout.strip()) == (0, '42')
    r = run('call', 'tools.py:doubled', '{"n": 123456}', cwd=tmp_path)  # its `max_chars`: the Tool's pipeline, not call_func
    assert r.returncode == 0 and r.stdout.startswith('246') and r.stdout != '246912\n'
    r = run('call', 'tools.py:doubled', '{"n": "x"}', cwd=tmp_path)
    assert r.returncode == 1 and r.stdout.strip() == "ToolInputError: Tool 'double', argument 'n': expected an integer, got 'x'"


def test_check_reports_a_renderer_that_raises(capsys, monkeypatch):
    from funccall import cli
    def broken(s, **kw): raise SchemaError('the renderer refused it')
    monkeypatch.setitem(cli.FORMATS, 'gemini', broken)
    assert main(['check', 'funccall.example']) == 1
    out = capsys.readouterr().out
    assert 'gemini: the renderer refused it' in out


# --- MCP: serve() and `mcp serve --name` -----------------------------------------------------------------

SERVED = textwrap.dedent('''
    import sys
    from funccall import Tool
    from funccall.mcp import serve
    def greet(name: str, greeting: str) -> str:
        "Greet someone"
        return f"{greeting}, {name}!"
    serve([Tool(greet, inject=['greeting'])], name=sys.argv[1], injected={'greeting': 'Hello'})
''')


async def _session(cmd: list, cwd):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    async with stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:], cwd=str(cwd))) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            tools = (await s.list_tools()).tools
            res = await s.call_tool(tools[0].name, {'name': 'Ada'}) if tools[0].name == 'greet' else None
            return init.server_info.name, tools, res


def test_mcp_serve_with_injected_values(tmp_path):
    (tmp_path / 'served.py').write_text(SERVED)
    name, tools, res = asyncio.run(asyncio.wait_for(_session([sys.executable, 'served.py', 'greeter'], tmp_path), T))
    assert name == 'greeter'
    assert [t.name for t in tools] == ['greet'] and set(tools[0].input_schema['properties']) == {'name'}  # the injected one is hidden
    assert not res.is_error and res.content[0].text == 'Hello, Ada!'


def test_cli_mcp_serve_name(tmp_path):
    (tmp_path / 'tools.py').write_text(TOOLS_PY)
    cmd = [sys.executable, '-m', 'funccall', 'mcp', 'serve', 'tools.py:double', '--name', 'doubler']
    name, tools, _ = asyncio.run(asyncio.wait_for(_session(cmd, tmp_path), T))
    assert name == 'doubler' and [t.name for t in tools] == ['double']


# --- strict limits ----------------------------------------------------------------------------------------

def _nested(depth: int) -> dict:
    s = {'type': 'string'}
    for _ in range(depth): s = {'type': 'object', 'properties': {'a': s}, 'required': ['a']}
    return s


def test_strict_openai_refuses_nesting_past_ten_levels():
    ok, deep = _nested(9), _nested(11)
    assert to_openai({'name': 'ok', 'description': 'D.', 'inputSchema': ok}, strict=True, report=Report())['function']['strict'] is True
    rep = Report()
    d = to_openai({'name': 'deep', 'description': 'D.', 'inputSchema': deep}, strict=True, report=rep)['function']
    assert d['strict'] is False and d['parameters'] == deep
    assert len(rep.lost) == 1 and 'is nested 11 deep: OpenAI takes at most 10 levels' in rep.lost[0].what


def test_strict_openai_refuses_more_than_5000_properties():
    def wide(n): return {'type': 'object', 'properties': {f'p{i}': {'type': 'integer'} for i in range(n)}, 'required': []}
    assert to_openai({'name': 'ok', 'description': 'D.', 'inputSchema': wide(5000)}, strict=True, report=Report())['function']['strict'] is True
    rep = Report()
    assert to_openai({'name': 'wide', 'description': 'D.', 'inputSchema': wide(5001)}, strict=True, report=rep)['function']['strict'] is False
    assert len(rep.lost) == 1 and 'has 5001 properties: OpenAI takes at most 5000' in rep.lost[0].what


# --- docments: the comment-reading fallback ---------------------------------------------------------------

def with_call_default(
    a: int,              # the count
    b: dict = dict(b=1),  # options, from a call
    c: list = None,      # more
):
    "A default written as a call"


def test_comments_are_read_beside_a_default_written_as_a_call():
    props = get_schema(with_call_default)['input_schema']['properties']
    assert {k: p['description'] for k, p in props.items()} == {'a': 'the count', 'b': 'options, from a call', 'c': 'more'}
    assert props['b']['default'] == {'b': 1}
