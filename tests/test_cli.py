"""The `funccall` command line, as a user runs it: `schema`, `call`, `check`, `mcp list`/`mcp serve`, help and bad targets.

Most cases run `funccall.cli.main([...])` in-process (fast, output read through capsys); a few run
`python -m funccall ...` in a subprocess, to cover the real entry point and its exit status. Exit status:
0 success, 1 a model-facing failure or findings, 2 a usage error, reported as one `funccall: ...` line on
stderr without a traceback.
"""
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from funccall import call_func, get_schema
from funccall.cli import load_target, main

T = 60  # seconds: a generous bound for one subprocess
EXAMPLE_NAMES = ['get_weather', 'add_note', 'book_meeting']
LONG = 'a_really_long_tool_name_that_goes_on_and_on_past_the_sixty_four_character_limit'

# --- helpers ------------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _forget_tool_files(tmp_path):
    "File targets are imported under their stem in `sys.modules`: drop the ones this test loaded, so none leaks into the next"
    yield
    for k, m in list(sys.modules.items()):
        if str(getattr(m, '__file__', None) or '').startswith(str(tmp_path)): del sys.modules[k]

def run(*args, cwd=None) -> subprocess.CompletedProcess:
    "`python -m funccall ARGS` in a subprocess"
    return subprocess.run([sys.executable, '-m', 'funccall', *args], capture_output=True, text=True, timeout=T, cwd=cwd)

def cli(capsys, *args) -> tuple[int, str, str]:
    "`funccall ARGS` in-process: (exit status, stdout, stderr)"
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err

def usage_error(capsys, *args) -> tuple[int, str, str]:
    "`funccall ARGS` for an argparse error or `--help`: argparse exits, so catch the exit"
    with pytest.raises(SystemExit) as e: main(list(args))
    out, err = capsys.readouterr()
    return e.value.code, out, err

def assert_one_line_error(rc, out, err, *words):
    assert rc == 2, (out, err)
    assert out == ''
    assert 'Traceback' not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('funccall'), err
    for w in words: assert w in lines[0], (w, lines[0])

def tool_file(tmp_path, name: str, src: str) -> str:
    "Write a tools file into `tmp_path`, return its path"
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(src))
    return str(p)

TOOLS = '''
    from dataclasses import dataclass

    def shout(
        text: str,        # What to shout
        times: int = 1,   # How many times
    ) -> str:             # The shout
        "Shout `text`."
        return ' '.join([text.upper() + '!'] * times)

    def stats(
        xs: list[float],  # The numbers
    ) -> dict:            # Their count and mean
        "Count and mean of `xs`."
        return {'n': len(xs), 'mean': sum(xs) / len(xs)}

    def _private(x: int) -> int:
        "Not a tool: private."
        return x

    def undocumented(x: int) -> int:
        return x

    class Calc:
        "A calculator"
        def add(
            self,
            a: int,  # First number
            b: int,  # Second number
        ) -> int:    # The sum
            "Add two integers."
            return a + b

    calc = Calc()
'''

@pytest.fixture
def tools(tmp_path) -> str: return tool_file(tmp_path, 'cli_tools.py', TOOLS)

def names(out: str) -> list:
    return [d.get('name') or d['function']['name'] for d in json.loads(out)]

# --- schema ---------------------------------------------------------------------------------------------

def test_bare_command_prints_the_example_schemas():
    r = run()
    assert r.returncode == 0 and r.stderr == ''
    out = json.loads(r.stdout)
    assert isinstance(out, list) and names(r.stdout) == EXAMPLE_NAMES
    assert all(set(d) == {'name', 'description', 'input_schema'} for d in out)

def test_bare_flags_apply_to_the_example(capsys):
    rc, out, _ = cli(capsys, '--format', 'anthropic')
    assert rc == 0 and names(out) == EXAMPLE_NAMES
    rc, out, _ = cli(capsys, 'funccall.example:get_weather')
    assert rc == 0 and names(out) == ['get_weather']

def test_schema_defaults_to_the_example(capsys):
    rc, out, _ = cli(capsys, 'schema')
    assert rc == 0 and names(out) == EXAMPLE_NAMES

def test_schema_of_a_module(capsys):
    rc, out, err = cli(capsys, 'schema', 'funccall.example')
    assert rc == 0 and err == ''
    assert names(out) == EXAMPLE_NAMES  # `__all__` order; the class `Person` in `__all__` is not a function
    book = json.loads(out)[2]['input_schema']
    assert book['properties']['attendees'] == {'description': 'Who to invite', 'type': 'array', 'items': {'$ref': '#/$defs/Person'}}
    assert list(book['$defs']) == ['Person']

def test_schema_of_module_function(capsys):
    rc, out, _ = cli(capsys, 'schema', 'funccall.example:get_weather')
    assert rc == 0
    [s] = json.loads(out)
    assert s['name'] == 'get_weather'
    assert s['input_schema']['properties']['unit'] == {'description': 'Temperature unit', 'default': 'C', 'type': 'string', 'enum': ['C', 'F']}
    assert s['input_schema']['required'] == ['city']

def test_schema_of_module_object(capsys):
    rc, out, _ = cli(capsys, 'schema', 'funccall.example:Person')
    assert rc == 0
    [s] = json.loads(out)
    assert s['name'] == 'Person' and s['input_schema']['required'] == ['name', 'email']

def test_schema_of_a_file_takes_its_public_documented_functions(capsys, tools):
    rc, out, _ = cli(capsys, 'schema', tools)
    assert rc == 0 and names(out) == ['shout', 'stats']  # not `_private`, not `undocumented`, not the class

def test_schema_of_file_name(capsys, tools):
    rc, out, _ = cli(capsys, 'schema', f'{tools}:shout')
    assert rc == 0
    [s] = json.loads(out)
    assert s['name'] == 'shout'
    assert s['input_schema']['properties'] == {'text': {'description': 'What to shout', 'type': 'string'},
                                               'times': {'description': 'How many times', 'default': 1, 'type': 'integer'}}

def test_schema_of_a_dotted_name_in_a_file(capsys, tools):
    rc, out, _ = cli(capsys, 'schema', f'{tools}:calc.add')  # an object's method: `self` is not a parameter
    assert rc == 0
    [s] = json.loads(out)
    assert s['name'] == 'calc-add' and list(s['input_schema']['properties']) == ['a', 'b']  # named as a ToolGroup names it

def test_schema_of_a_relative_path(capsys, tmp_path, monkeypatch):
    tool_file(tmp_path, 'sub/rel_tools.py', TOOLS)
    monkeypatch.chdir(tmp_path)
    rc, out, _ = cli(capsys, 'schema', 'sub/rel_tools.py:stats')
    assert rc == 0 and names(out) == ['stats']

def test_schema_of_a_file_from_the_real_entry_point(tools):
    r = run('schema', f'{tools}:stats', '--format', 'openai')
    assert r.returncode == 0 and r.stderr == ''
    [s] = json.loads(r.stdout)
    assert s['function']['parameters']['properties']['xs'] == {'description': 'The numbers', 'type': 'array', 'items': {'type': 'number'}}

def _openai(d):
    assert set(d) == {'type', 'function'} and d['type'] == 'function'
    assert set(d['function']) == {'name', 'description', 'parameters'}
    return d['function']['parameters']

def _responses(d):
    assert set(d) == {'type', 'name', 'description', 'parameters', 'strict'} and d['type'] == 'function' and d['strict'] is False
    return d['parameters']

def _anthropic(d):
    assert set(d) == {'name', 'description', 'input_schema'}
    return d['input_schema']

def _gemini(d):
    assert set(d) == {'name', 'description', 'parameters_json_schema'} and d['parameters_json_schema']['type'] == 'object'
    return d['parameters_json_schema']  # plain JSON Schema, as the Gemini API takes it now

def _mcp(d):
    assert set(d) == {'name', 'description', 'inputSchema'}
    return d['inputSchema']

def _canonical(d): return _anthropic(d)

@pytest.mark.parametrize('fmt,shape', [('openai', _openai), ('responses', _responses), ('anthropic', _anthropic),
                                       ('gemini', _gemini), ('mcp', _mcp), ('canonical', _canonical)])
def test_format_envelopes(capsys, fmt, shape):
    rc, out, _ = cli(capsys, 'schema', 'funccall.example', '--format', fmt)
    assert rc == 0
    ds = json.loads(out)
    assert names(out) == EXAMPLE_NAMES
    for d in ds:
        params = shape(d)
        assert params['type'] in ('object', 'OBJECT') and 'properties' in params
    assert 'city' in shape(ds[0])['properties']

def _objects(node):
    "Every schema node that is an object with properties"
    if isinstance(node, dict):
        if 'properties' in node: yield node
        for v in node.values(): yield from _objects(v)
    elif isinstance(node, list):
        for v in node: yield from _objects(v)

@pytest.mark.parametrize('fmt', ['openai', 'responses'])
def test_strict_requires_every_property(capsys, fmt):
    rc, out, err = cli(capsys, 'schema', 'funccall.example', '--format', fmt, '--strict', '-v')
    assert rc == 0
    for d in json.loads(out):
        fn = d['function'] if fmt == 'openai' else d
        assert fn['strict'] is True
        objs = list(_objects(fn['parameters']))
        assert objs  # the parameters, and `Person` in `$defs`
        for o in objs:
            if o.get('type') != 'object': continue  # `properties` as a key of the properties dict itself
            assert o['required'] == list(o['properties']) and o['additionalProperties'] is False
    unit = json.loads(out)[0]
    unit = (unit['function'] if fmt == 'openai' else unit)['parameters']['properties']['unit']
    assert unit['anyOf'][-1] == {'type': 'null'}  # optional: required, and nullable
    assert 'note: get_weather /properties/unit: optional: made required and nullable' in err  # what changed goes to stderr

def test_strict_keeps_stdout_pure_json_and_notes_only_with_v():
    r = run('schema', 'funccall.example:get_weather', '--format', 'openai', '--strict')
    assert r.returncode == 0 and r.stderr == ''  # nothing was lost: nothing to say
    assert json.loads(r.stdout)[0]['function']['strict'] is True
    r = run('schema', 'funccall.example:get_weather', '--format', 'openai', '--strict', '-v')
    assert r.returncode == 0 and json.loads(r.stdout)[0]['function']['strict'] is True
    assert r.stderr.startswith('note: ') and '(lost)' not in r.stderr

def test_without_strict_openai_sends_no_strict_flag(capsys):
    rc, out, _ = cli(capsys, 'schema', 'funccall.example:get_weather', '--format', 'openai')
    assert rc == 0 and 'strict' not in json.loads(out)[0]['function']

@pytest.mark.parametrize('fmt', ['gemini', 'mcp', 'canonical'])
def test_strict_with_a_format_that_does_not_take_it(capsys, fmt):
    args = ['schema', 'funccall.example', '--strict'] + ([] if fmt == 'canonical' else ['--format', fmt])
    assert_one_line_error(*cli(capsys, *args), '--strict', f'{fmt} has no strict mode', 'openai, responses or anthropic')

@pytest.mark.parametrize('fmt', ['anthropic', 'Claude', 'responses', 'OpenAI_Responses'])
def test_strict_for_every_provider_with_a_strict_mode(capsys, fmt):
    "`--strict` is each provider's own strict mode, as `to_anthropic(strict=True)` has it; format names are `provider_name`'s"
    rc, out, err = cli(capsys, 'schema', 'funccall.example:get_weather', '--format', fmt, '--strict')
    assert rc == 0, err
    [d] = json.loads(out)
    assert d['strict'] is True and (d.get('input_schema') or d['parameters'])['additionalProperties'] is False

def test_strict_error_from_the_real_entry_point():
    r = run('schema', '--format', 'gemini', '--strict')
    assert_one_line_error(r.returncode, r.stdout, r.stderr, '--strict', 'gemini')

def test_unknown_format_is_a_usage_error(capsys):
    rc, out, err = usage_error(capsys, 'schema', '--format', 'bedrock')
    assert rc == 2 and out == '' and "unknown format 'bedrock'; use one of canonical, openai, responses" in err

LONG_SRC = f'''
    def {LONG}(
        x: int,  # A number
    ) -> int:
        "Echo x."
        return x
'''

def test_a_name_a_provider_rejects_needs_rename(capsys, tmp_path):
    f = tool_file(tmp_path, 'long_tools.py', LONG_SRC)
    assert_one_line_error(*cli(capsys, 'schema', f, '--format', 'openai'), LONG, 'not valid for OpenAI')
    assert_one_line_error(*cli(capsys, 'schema', f, '--format', 'gemini'), 'not valid for Gemini')

def test_rename_rewrites_it(capsys, tmp_path):
    f = tool_file(tmp_path, 'long_tools.py', LONG_SRC)
    rc, out, err = cli(capsys, 'schema', f, '--format', 'openai', '--rename', '-v')
    assert rc == 0
    [nm] = names(out)
    assert re.fullmatch(r'[a-zA-Z0-9_-]{1,64}', nm) and nm.startswith(LONG[:40])
    assert f"note: {LONG}: renamed {nm!r}" in err

def test_names_fine_for_a_provider_are_kept(capsys, tmp_path):
    f = tool_file(tmp_path, 'long_tools.py', LONG_SRC)
    for fmt in ('mcp', 'canonical', 'anthropic'):  # they allow 128 characters
        rc, out, err = cli(capsys, 'schema', f, '--format', fmt, '--rename')
        assert rc == 0 and names(out) == [LONG] and err == ''

def test_lossy_changes_are_notes_marked_lost_even_without_v(capsys, tmp_path):
    f = tool_file(tmp_path, 'tally_tools.py', '''
        def tally(
            counts: dict[str, int],  # Counts by name
        ) -> int:
            "Sum the counts."
            return sum(counts.values())
    ''')
    rc, out, err = cli(capsys, 'schema', f, '--format', 'openai', '--strict')
    assert rc == 0 and json.loads(out)[0]['function']['strict'] is False  # sent non-strict, and said so
    assert err.count('\n') == 1 and err.startswith('note: tally: ') and err.strip().endswith('(lost)')

# --- call -----------------------------------------------------------------------------------------------

def test_call_prints_text_as_it_is(capsys, tools):
    rc, out, err = cli(capsys, 'call', f'{tools}:shout', '{"text": "hi", "times": 2}')
    assert (rc, out, err) == (0, 'HI! HI!\n', '')

def test_call_prints_data_as_json(capsys):
    rc, out, _ = cli(capsys, 'call', 'funccall.example:get_weather', '{"city": "Lisbon", "unit": "F"}')
    assert rc == 0
    assert json.loads(out) == {'city': 'Lisbon', 'temperature': 70, 'unit': 'F', 'conditions': 'sunny'}

def test_call_repairs_what_call_func_repairs(capsys, tools):
    rc, out, _ = cli(capsys, 'call', f'{tools}:stats', '{"xs": "[1, 2, 6]"}')  # JSON text where a list is expected
    assert rc == 0 and json.loads(out) == {'n': 3, 'mean': 3.0}

def test_call_builds_classes_from_json(capsys):
    args = '{"title": "Sync", "start": "2026-06-01T09:30", "attendees": [{"name": "Ana", "email": "ana@example.com"}]}'
    rc, out, _ = cli(capsys, 'call', 'funccall.example:book_meeting', args)
    assert (rc, out) == (0, "Booked 'Sync' at 2026-06-01 09:30 for 30 min with Ana\n")

def test_call_of_a_method_and_of_an_async_function(capsys, tmp_path, tools):
    assert cli(capsys, 'call', f'{tools}:calc.add', '{"a": 2, "b": "3"}') == (0, '5\n', '')
    f = tool_file(tmp_path, 'async_tools.py', '''
        import asyncio
        async def twice(
            x: int,  # A number
        ) -> list:
            "Echo x twice, asynchronously."
            await asyncio.sleep(0)
            return [x, x]
    ''')
    assert cli(capsys, 'call', f, '{"x": 4}') == (0, '[4, 4]\n', '')

def test_call_of_a_tool_returning_none_prints_null(capsys, tmp_path):
    f = tool_file(tmp_path, 'none_tools.py', '''
        def nothing() -> None:
            "Do nothing."
    ''')
    assert cli(capsys, 'call', f, '{}') == (0, 'null\n', '')

@pytest.mark.parametrize('args,words', [
    ('{"town": "Lisbon"}', ['town', "'city'"]),
    ('{"city": "Lisbon", "unit": "K"}', ["'unit'", "'C', 'F'", "'K'"]),
    ('{}', ["'city'", 'missing']),
    ('[]', ['JSON object', '[]']),
])
def test_call_a_model_mistake_prints_the_model_facing_error(capsys, args, words):
    from funccall.example import get_weather
    msg = call_func(get_weather, args, raise_on_err=False)  # exactly what the model would read
    assert msg.startswith('ToolInputError: ') and all(w in msg for w in words)
    assert cli(capsys, 'call', 'funccall.example:get_weather', args) == (1, msg + '\n', '')

def test_call_an_exception_in_the_tool_prints_its_cause_first(capsys, tmp_path):
    f = tool_file(tmp_path, 'boom_tools.py', '''
        def boom(
            x: int,  # A key
        ) -> int:
            "Always fails."
            raise KeyError(f'no key {x}')
    ''')
    rc, out, err = cli(capsys, 'call', f, '{"x": 3}')
    assert rc == 1 and err == ''
    lines = out.splitlines()
    assert lines[0] == "KeyError: 'no key 3'"
    assert "raise KeyError(f'no key {x}')" in out  # the tool's own frames follow
    assert 'funccall' not in out.replace(f, '')  # and none of funccall's

def test_call_from_the_real_entry_point(tools):
    r = run('call', f'{tools}:shout', '{"text": "hey"}')
    assert (r.returncode, r.stdout, r.stderr) == (0, 'HEY!\n', '')
    r = run('call', f'{tools}:shout', '{"text": "hey", "times": "many"}')
    assert r.returncode == 1 and r.stderr == ''
    assert r.stdout.startswith("ToolInputError: Tool 'shout', ") and "'times'" in r.stdout and r.stdout.count('\n') == 1

@pytest.mark.parametrize('args', ['{bad', '{"city": "Lisbon",}', "{'city': 'Lisbon'}", ''])
def test_call_bad_json_is_a_usage_error(capsys, args):
    assert_one_line_error(*cli(capsys, 'call', 'funccall.example:get_weather', args), 'the arguments are not valid JSON')

def test_call_bad_json_from_the_real_entry_point():
    r = run('call', 'funccall.example:get_weather', '{city: Lisbon}')
    assert_one_line_error(r.returncode, r.stdout, r.stderr, 'not valid JSON')

def test_call_needs_one_tool(capsys, tools):
    assert_one_line_error(*cli(capsys, 'call', 'funccall.example', '{}'), "'funccall.example' holds 3 tools (get_weather, add_note, book_meeting); name one as funccall.example:NAME")
    assert_one_line_error(*cli(capsys, 'call', tools, '{}'), 'holds 2 tools')

def test_call_needs_its_arguments(capsys):
    rc, out, err = usage_error(capsys, 'call', 'funccall.example:get_weather')
    assert rc == 2 and out == '' and 'the following arguments are required: json' in err

# --- check ----------------------------------------------------------------------------------------------

def test_check_the_example_finds_nothing(capsys):
    assert cli(capsys, 'check', 'funccall.example') == (0, '', '0 findings\n')
    assert cli(capsys, 'check', 'funccall.example', '-v') == (0, '', '0 findings\n')

def test_check_from_the_real_entry_point():
    r = run('check', 'funccall.example')
    assert (r.returncode, r.stdout, r.stderr) == (0, '', '0 findings\n')

BAD = f'''
    from __future__ import annotations
    import threading, types
    from dataclasses import dataclass, field

    @dataclass
    class Node:
        "A tree node"
        value: int  # Its value
        children: list[Node] = field(default_factory=list)  # Its children

    def undescribed(x: int, y: str = 'a') -> int:
        "Has parameters without descriptions."
        return x

    def odd_default(
        when: object = object(),  # When
    ) -> str:
        "A default JSON can't hold."
        return 'ok'

    def locked(
        lock: types.FrameType,  # A lock (a frame: a C type no schema can express, on every Python version)
    ) -> str:
        "A type no schema can express."
        return 'ok'

    def {LONG}(
        x: int,  # A number
    ) -> int:
        "A name too long for OpenAI and Anthropic."
        return x

    def counts(
        c: dict[str, int],  # Counts by name
    ) -> int:
        "A dict: strict mode and Gemini can't list its keys."
        return sum(c.values())

    def tree(
        root: Node,  # The tree
    ) -> int:
        "A recursive class: Gemini has no references."
        return root.value

    def no_doc(
        x: int,  # A number
    ) -> int:
        return x
'''

def test_check_reports_each_finding(capsys, tmp_path):
    f = tool_file(tmp_path, 'bad_tools.py', BAD)
    rc, out, err = cli(capsys, 'check', f)
    assert rc == 1
    lines = out.splitlines()
    assert err == f'{len(lines)} findings\n'
    def has(tool, *words): return any(l.startswith(f'{tool}: ') and all(w in l for w in words) for l in lines)
    assert has('undescribed', "parameter 'x' has no description") and has('undescribed', "parameter 'y' has no description")
    assert has('odd_default', "Parameter 'when' of 'odd_default': default left out of the schema", "can't be held by JSON")
    assert has('locked', "Parameter 'lock' of 'locked': Can't make a schema for", 'use a JSON type')
    assert has(LONG, f"name {LONG!r} breaks OpenAI's and Anthropic's rule")
    assert has('counts', 'openai strict:', "/properties/c is a dict[str, V]", 'sent with strict: false')
    assert not any('note:' in l for l in lines)

def test_check_reports_a_missing_docstring_of_a_named_tool(capsys, tmp_path):
    f = tool_file(tmp_path, 'bad_tools.py', BAD)
    rc, out, err = cli(capsys, 'check', f'{f}:no_doc')
    assert rc == 1 and err == '1 finding\n'
    assert out.startswith("no_doc: Function 'no_doc' has no docstring: the tool has no description")
    assert 'add a docstring saying what it does' in out

def test_check_of_a_file_reports_its_undocumented_functions(capsys, tmp_path):
    f = tool_file(tmp_path, 'bad_tools.py', BAD)
    _, out, _ = cli(capsys, 'check', f)
    assert any(l.startswith('no_doc: ') for l in out.splitlines())

def test_check_verbose_shows_renames(capsys, tmp_path):
    f = tool_file(tmp_path, 'bad_tools.py', BAD)
    _, quiet, quiet_err = cli(capsys, 'check', f)
    rc, out, err = cli(capsys, 'check', f, '--verbose')
    assert rc == 1 and err == quiet_err  # notes are not counted
    notes = [l for l in out.splitlines() if ': note: ' in l]
    addr = lambda t: re.sub(r'0x[0-9a-f]+', '0x', t)  # the file runs again: `object()` has a new address
    assert [addr(l) for l in out.splitlines() if ': note: ' not in l] == addr(quiet).splitlines()  # the same findings, plus notes
    assert {l.split(': ')[2] for l in notes} == {'openai', 'responses', 'gemini'}  # Claude takes names up to 128 characters
    assert all(l.startswith(f'{LONG}: note: ') and 'renamed' in l for l in notes)

# --- mcp ------------------------------------------------------------------------------------------------

def test_mcp_list_prints_a_servers_tools_as_schemas(capsys):
    rc, out, _ = cli(capsys, 'mcp', 'list', sys.executable, '-m', 'mcp_server_time')
    assert rc == 0
    tools = {d['name']: d for d in json.loads(out)}
    assert {'get_current_time', 'convert_time'} <= set(tools)
    s = tools['get_current_time']
    assert set(s) >= {'name', 'description', 'input_schema'} and s['input_schema']['required'] == ['timezone']

def test_mcp_list_needs_a_command(capsys):
    assert_one_line_error(*cli(capsys, 'mcp', 'list'), "mcp list needs the server's command")

def test_mcp_list_a_server_that_exits(capsys):
    rc, out, err = cli(capsys, 'mcp', 'list', '--timeout', '10', sys.executable, '-c', 'pass')
    assert_one_line_error(rc, out, err, "can't list the tools of", '-c pass')

def test_mcp_needs_a_subcommand(capsys):
    rc, out, err = usage_error(capsys, 'mcp')
    assert rc == 2 and 'required: mcp_cmd' in err

@pytest.mark.parametrize('target,msg', [('no_such_module_xyz', "can't import 'no_such_module_xyz'"),
                                        ('missing_tools.py', 'no such file: missing_tools.py'),
                                        ('funccall.example:nope', "'funccall.example' has no tool 'nope'")])
def test_mcp_serve_a_bad_target(capsys, tmp_path, monkeypatch, target, msg):
    monkeypatch.chdir(tmp_path)
    assert_one_line_error(*cli(capsys, 'mcp', 'serve', target), msg)  # it fails before serving: nothing waits on stdin

def test_mcp_serve_a_bad_target_from_the_real_entry_point(tmp_path):
    r = run('mcp', 'serve', 'no_such_module_xyz', cwd=tmp_path)
    assert_one_line_error(r.returncode, r.stdout, r.stderr, "can't import 'no_such_module_xyz'")

# --- help -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize('cmd', [
    [], ['schema'], ['call'], ['check'],
    pytest.param(['mcp']),
    ['mcp', 'serve'], ['mcp', 'list']], ids=lambda c: ' '.join(c) or 'funccall')
def test_help(capsys, cmd):
    rc, out, _ = usage_error(capsys, *cmd, '--help')
    assert rc == 0 and out.startswith('usage: funccall')
    assert 'examples' in out

def test_help_from_the_real_entry_point():
    for flag in ('-h', '--help'):
        r = run(flag)
        assert r.returncode == 0 and r.stderr == ''
        assert 'examples' in r.stdout and all(c in r.stdout for c in ('schema', 'call', 'check', 'mcp'))

# --- bad targets --------------------------------------------------------------------------------------

BAD_TARGETS = {
    'module': ('no_such_module_xyz', "can't import 'no_such_module_xyz': No module named 'no_such_module_xyz'"),
    'file': ('missing_tools.py', 'no such file: missing_tools.py'),
    'path': ('sub/missing_tools.py', 'no such file: sub/missing_tools.py'),
    'name': ('funccall.example:nope', "'funccall.example' has no tool 'nope'"),
    'dotted name': ('funccall.example:Person.nope', "'funccall.example' has no tool 'Person.nope'"),
    'no tools': ('keyword', "'keyword' has no public functions with docstrings"),  # its functions are builtins
}

@pytest.mark.parametrize('cmd', [['schema'], ['check'], ['call', '__TARGET__', '{}']], ids=lambda c: c[0])
@pytest.mark.parametrize('kind', list(BAD_TARGETS))
def test_a_bad_target_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, cmd, kind):
    monkeypatch.chdir(tmp_path)
    target, msg = BAD_TARGETS[kind]
    args = [target if a == '__TARGET__' else a for a in cmd] if '__TARGET__' in cmd else [*cmd, target]
    assert_one_line_error(*cli(capsys, *args), f'funccall: {msg}')

def test_a_file_name_that_is_missing(capsys, tools):
    assert_one_line_error(*cli(capsys, 'schema', f'{tools}:nope'), f"{tools!r} has no tool 'nope'")

@pytest.mark.parametrize('src,msg', [('raise RuntimeError("at import")\n', 'RuntimeError: at import'),
                                     ('def f(:\n', 'SyntaxError: invalid syntax')])
def test_a_file_that_fails_to_load(capsys, tmp_path, src, msg):
    f = tool_file(tmp_path, 'broken_tools.py', src)
    assert_one_line_error(*cli(capsys, 'schema', f), f"can't load {f}: {msg}")

def test_a_schema_error_is_one_line(capsys, tmp_path):
    f = tool_file(tmp_path, 'bad_tools.py', BAD)
    assert_one_line_error(*cli(capsys, 'schema', f'{f}:locked'), "Parameter 'lock' of 'locked': Can't make a schema for")

def test_schema_of_a_named_undocumented_function_builds_it_and_warns_once(capsys, tmp_path):
    f = tool_file(tmp_path, 'bad_tools.py', BAD)
    rc, out, err = cli(capsys, 'schema', f'{f}:no_doc')
    assert rc == 0 and json.loads(out)[0]['input_schema']['properties']['x'] == {'description': 'A number', 'type': 'integer'}
    assert json.loads(out)[0]['description'] == 'Returns:\n- type: integer'
    assert err.splitlines() == ["warning: Function 'no_doc' has no docstring: the tool has no description, so the model has only its "
                                "name and parameters to go on; add a docstring saying what it does (the model reads it to decide when to "
                                "call the tool) or pass description="]

@pytest.mark.parametrize('args', [['schema', 'no_such_module_xyz'], ['call', 'missing_tools.py:f', '{}'], ['check', 'funccall.example:nope']])
def test_a_bad_target_from_the_real_entry_point(tmp_path, args):
    r = run(*args, cwd=tmp_path)
    assert_one_line_error(r.returncode, r.stdout, r.stderr)

# --- load_target ----------------------------------------------------------------------------------------

def test_load_target_keeps_public_documented_functions_of_the_module_itself(tmp_path):
    f = tool_file(tmp_path, 'mixed_tools.py', '''
        from os.path import join  # imported: documented, but not this module's

        def mine(x: int) -> int:
            "Mine."
            return x
    ''')
    assert [g.__name__ for g in load_target(f)] == ['mine']
    f = tool_file(tmp_path, 'all_tools.py', '''
        __all__ = ['b', 'a']
        def a() -> int:
            "A."
        def b() -> int:
            "B."
        def c() -> int:
            "C: documented and public, but not in __all__."
    ''')
    assert [g.__name__ for g in load_target(f)] == ['b', 'a']

def test_load_target_leaves_other_modules_alone(tmp_path, monkeypatch):
    import colorsys
    monkeypatch.setitem(sys.modules, 'colorsys', colorsys)  # restored whatever happens
    load_target(tool_file(tmp_path, 'colorsys.py', '''
        def f() -> int:
            "F."
    '''))
    assert sys.modules['colorsys'] is colorsys

def test_two_files_with_the_same_name(capsys, tmp_path):
    a = tool_file(tmp_path, 'a/tools.py', '''
        from __future__ import annotations
        from dataclasses import dataclass

        @dataclass
        class Inner:
            "Inner thing"
            n: int  # A number

        @dataclass
        class Outer:
            "Outer thing"
            inner: Inner  # The inner thing

        def use(
            o: Outer,  # The thing
        ) -> int:
            "Use an outer thing."
            return o.inner.n
    ''')
    b = tool_file(tmp_path, 'b/tools.py', '''
        def other(
            x: int,  # A number
        ) -> int:
            "Another tool."
            return x
    ''')
    [use], _ = load_target(f'{a}:use'), load_target(b)
    assert list(get_schema(use)['input_schema']['$defs']) == ['Outer', 'Inner']

# --- the first hour: findings `check` owes the README, errors that don't contradict themselves ---------

LINT = '''
    class Svc:
        "A service"
        def run(
            self,
            n: int,  # how many
        ) -> int:    # n again
            "Run it."
            return n

    svc = Svc()
    config = {'a': 1}

    def untyped(
        a,  # anything
    ) -> int:  # one
        "No annotation."
        return 1

    def wrong_default(
        x: int = 'five',  # a number
    ) -> int:  # one
        "A default of the wrong type."
        return 1

    def none_default(
        tags: list[str] = None,  # labels
    ) -> int:  # one
        "A None default its annotation doesn't allow."
        return 1

    def fine(
        tags: list[str] | None = None,  # labels
        n: int = 3,  # how many
    ) -> int:  # one
        "All well."
        return 1
'''

@pytest.mark.parametrize('nm,finding', [
    ('untyped', "parameter 'a' has no type annotation: the model can't tell what to send"),
    ('wrong_default', "parameter 'x': the default 'five' doesn't fit its annotation (expected an integer, got 'five')"),
    ('none_default', "parameter 'tags': the default None doesn't fit its annotation (expected an array of strings, got null); "
                     "annotate it 'list[str] | None'"),
])
def test_check_flags_annotations_and_defaults(capsys, tmp_path, nm, finding):
    f = tool_file(tmp_path, 'lint.py', LINT)
    rc, out, _ = cli(capsys, 'check', f'{f}:{nm}')
    assert rc == 1 and f'{nm}: {finding}' in out.splitlines()

def test_check_passes_a_nullable_default_and_fitting_defaults(capsys, tmp_path):
    rc, out, err = cli(capsys, 'check', f"{tool_file(tmp_path, 'lint.py', LINT)}:fine")
    assert (rc, out, err) == (0, '', '0 findings\n')

def test_a_non_tool_is_named_for_what_it_is(capsys, tmp_path):
    "`check lint.py:config`: not 'has no tool config; did you mean config?', and a dict is never suggested as a tool"
    f = tool_file(tmp_path, 'lint.py', LINT)
    assert_one_line_error(*cli(capsys, 'check', f'{f}:config'), "'config' in", 'is a dict, not a tool')
    rc, out, err = cli(capsys, 'schema', f'{f}:confg')
    assert rc == 2 and 'did you mean' not in err, err

def test_a_method_target_is_named_with_its_object(capsys, tmp_path):
    "`schema lint.py:svc.run` is the tool `svc-run` (as a ToolGroup and a provider name it), typed as the method is"
    rc, out, _ = cli(capsys, 'schema', f"{tool_file(tmp_path, 'lint.py', LINT)}:svc.run")
    [s] = json.loads(out)
    assert rc == 0 and s['name'] == 'svc-run' and s['input_schema']['properties']['n'] == {'description': 'how many', 'type': 'integer'}

# --- what a module offers: __all__, else what it defines (issue 29) -----------------------------------------

HELPERS = '''
    def shared(x: int) -> int:
        "A documented helper other files import."
        return x
'''

def test_all_offers_imported_functions_and_call_reaches_exactly_what_schema_lists(capsys, tmp_path):
    tool_file(tmp_path, 'helpers29.py', HELPERS)
    f = tool_file(tmp_path, 'offered.py', '''
        from helpers29 import shared
        from pydantic import BaseModel
        __all__ = ['shared', 'own']
        def own(y: int) -> int:
            "Mine."
            return y
        def unlisted(z: int) -> int:
            "Public and documented, but __all__ doesn't list it."
            return z
    ''')
    rc, out, _ = cli(capsys, 'schema', f)
    assert rc == 0 and names(out) == ['shared', 'own']
    for nm, arg in (('shared', 'x'), ('own', 'y')):
        assert cli(capsys, 'call', f'{f}:{nm}', json.dumps({arg: 3}))[:2] == (0, '3\n')
    for nm in ('unlisted', 'BaseModel'):  # public there, not listed: not tools
        rc, out, err = cli(capsys, 'call', f'{f}:{nm}', '{}')
        assert rc == 2 and out == '' and "doesn't list it" in err and '__all__' in err

def test_without_all_a_module_offers_what_it_defines_and_says_so(capsys, tmp_path):
    tool_file(tmp_path, 'helpers29b.py', HELPERS)
    f = tool_file(tmp_path, 'defined.py', '''
        from helpers29b import shared
        from pydantic import BaseModel
        def own(y: int) -> int:
            "Mine."
            return y
    ''')
    rc, out, err = cli(capsys, 'schema', f, '-v')
    assert rc == 0 and names(out) == ['own']
    assert 'it defines' in err and 'shared' in err and '__all__' in err  # -v says what it took, and what it left out
    rc, out, err = cli(capsys, 'call', f'{f}:BaseModel', '{}')  # pydantic's class, imported: never run
    assert rc == 2 and out == '' and 'imported there, not defined there' in err
    rc, out, err = cli(capsys, 'call', f'{f}:shared', '{"x": 1}')
    assert rc == 2 and out == '' and '__all__' in err

def test_a_module_of_only_imports_says_what_it_left_out(capsys, tmp_path):
    tool_file(tmp_path, 'helpers29c.py', HELPERS)
    f = tool_file(tmp_path, 'reexport.py', 'from helpers29c import shared\n')
    rc, out, err = cli(capsys, 'schema', f)
    assert rc == 2 and 'shared' in err and '__all__' in err

def test_check_reports_every_finding_at_once(capsys, tmp_path):
    f = tool_file(tmp_path, 'many.py', '''
        from __future__ import annotations
        from typing import Annotated
        def many(a, b: int, *rest):
            return a
        def twice(
            a: Annotated[int, 'from Annotated'],  # from the comment
            b: int,  # the b
            c: Annotated[int, 'from Annotated'] = 0,
            d: Annotated[int, 'the d'] = 0,  # the d, from the comment: it holds the Annotated text, so nothing is lost
        ) -> int:
            """Described twice.

            Args:
                b: the docstring's entry is kept after the comment, not a finding
                c: and after the Annotated text: not a finding either
            """
            return a
    ''')
    rc, out, err = cli(capsys, 'check', f)
    lines = out.splitlines()
    assert rc == 1 and err == f'{len(lines)} findings\n'
    mine = [l for l in lines if l.startswith('many: ')]
    assert any('has no docstring' in l for l in mine)  # and the rest, not hidden behind it:
    assert any("parameter 'a' has no type annotation" in l for l in mine)
    assert any("parameter 'b' has no description" in l for l in mine)
    assert any('*rest is not in the schema' in l for l in mine)
    twice = [l for l in lines if l.startswith('twice: ')]
    assert len(twice) == 1 and "parameter 'a' is described twice" in twice[0] and "comment ('from the comment') is used" in twice[0]
    assert "not the Annotated ('from Annotated')" in twice[0]

def test_a_function_typed_at_a_prompt_is_told_what_to_do_instead():
    code = textwrap.dedent('''
        import warnings
        warnings.simplefilter('always')
        from funccall import get_schema
        def f(
            a: int,  # the a
        ):
            "F."
        print(get_schema(f)['input_schema']['properties']['a']['description'])
    ''')
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=T)
    assert r.returncode == 0, r.stderr
    # 3.13 keeps `python -c` source, so the comment is read; before, the warning says what to use instead
    assert r.stdout == 'the a\n' or (r.stdout == '\n' and 'Annotated[T' in r.stderr and "docstring's `Args:`" in r.stderr)

def test_an_imported_class_never_runs(capsys, tmp_path):
    "`call tools.py:Boom '{}'` of a class the file imports: refused, and its constructor never ran"
    marker = tmp_path / 'ran'
    tool_file(tmp_path, 'boomlib.py', f'''
        class Boom:
            "Writes a file when made."
            def __init__(self):
                open({str(marker)!r}, 'w').close()
    ''')
    f = tool_file(tmp_path, 'uses_boom.py', '''
        from boomlib import Boom
        def own() -> int:
            "Mine."
            return 1
    ''')
    for target in (f'{f}:Boom', f'{f}:Boom.__init__'):
        rc, out, err = cli(capsys, 'call', target, '{}')
        assert rc == 2 and out == ''
    assert not marker.exists()
    rc, out, _ = cli(capsys, 'schema', f)
    assert names(out) == ['own']


def test_call_reaches_only_what_schema_lists(capsys, tools):
    # a named function with no docstring: `schema` builds it (with a warning), so `call` runs it; a type with no schema is refused by both
    rc, out, err = cli(capsys, 'schema', f'{tools}:undocumented')
    assert rc == 0 and names(out) == ['undocumented'] and err.startswith("warning: Function 'undocumented' has no docstring")
    rc, out, err = cli(capsys, 'call', f'{tools}:undocumented', '{"x": "1"}')
    assert (rc, out.strip()) == (0, '1') and "has no docstring" in err
    bad = tool_file(Path(tools).parent, 'bad_tools.py', BAD)
    assert_one_line_error(*cli(capsys, 'schema', f'{bad}:locked'), "Parameter 'lock' of 'locked'")
    assert_one_line_error(*cli(capsys, 'call', f'{bad}:locked', '{}'), "Parameter 'lock' of 'locked'")
    rc, out, _ = cli(capsys, 'call', f'{tools}:calc.add', '{"a": 1, "b": 2}')  # what `schema` lists runs
    assert (rc, out.strip()) == (0, '3')


ALIASED = '''
    from typing import Annotated
    from pydantic import Field

    def aliased(x: int = Field(alias='y', description='the x'), z: Annotated[int, Field(validation_alias='zz', description='z')] = 0,
                w: int = Field(3, description='w')):
        "Aliased"
        return x
'''

def test_check_flags_a_field_alias_funccall_does_not_use(capsys, tmp_path):
    # pydantic's `validate_call` takes `y`; funccall's schema and call take `x`: the developer is told, not left to find out
    f = tool_file(tmp_path, 'aliased_tools.py', ALIASED)
    rc, out, _ = cli(capsys, 'check', f)
    found = [l for l in out.splitlines() if 'alias' in l]
    assert rc == 1 and len(found) == 2 and "alias 'y' is not used" in found[0] and "alias 'zz'" in found[1]
    assert not any("'w'" in l for l in out.splitlines())

# --- messages that say what to do ---------------------------------------------------------------------------------------

UNDOCUMENTED = '''
from os.path import join  # imported: never named as the file's own

def resize(width: int) -> int:
    return width

def crop(box: list) -> list:
    return box

def _helper():
    return 1
'''

@pytest.mark.parametrize('cmd', [['schema'], ['call', '__TARGET__', '{}'], ['mcp', 'serve']], ids=lambda c: c[0])
def test_a_file_of_undocumented_functions_names_them_and_says_what_to_do(capsys, tmp_path, cmd):
    f = tool_file(tmp_path, 'undocumented_tools.py', UNDOCUMENTED)
    args = [f if a == '__TARGET__' else a for a in cmd] if '__TARGET__' in cmd else [*cmd, f]
    rc, out, err = cli(capsys, *args)
    assert_one_line_error(rc, out, err, f"{f!r} has no public functions with docstrings: resize, crop have none",
                          'a module without __all__ offers only the functions it documents', 'add a docstring',
                          "list them in the module's __all__", "Tool(f, description='...')", f'funccall check {f}')
    assert '_helper' not in err and 'join' not in err and 'took the 0' not in err

def test_an_undocumented_function_an_all_lists_is_offered_with_a_warning(capsys, tmp_path):
    "`__all__` offers what it lists, documented or not: built with no description, and each command says so"
    f = tool_file(tmp_path, 'listed_tools.py', "__all__ = ['resize', 'crop']\n\ndef resize(width: int) -> int:\n    return width\n\n"
                                             "def crop(box: list) -> list:\n    'Crop to `box`.'\n    return box\n")
    rc, out, err = cli(capsys, 'schema', f)
    assert rc == 0 and names(out) == ['resize', 'crop'] and err.count('warning:') == 1 and "'resize' has no docstring" in err
    rc, out, err = cli(capsys, 'schema', f, '--format', 'openai')
    assert rc == 0 and [t['function']['name'] for t in json.loads(out)] == ['resize', 'crop'] and "'resize' has no docstring" in err
    rc, out, _ = cli(capsys, 'check', f)
    assert rc == 1 and "resize: Function 'resize' has no docstring" in out and not any(l.startswith('crop: Function') for l in out.splitlines())

def test_a_module_of_no_functions_at_all_still_says_what_it_took(capsys):
    assert_one_line_error(*cli(capsys, 'schema', 'keyword'), "'keyword' has no public functions with docstrings (took the 0")

def test_check_still_takes_undocumented_functions_and_reports_each(capsys, tmp_path):
    f = tool_file(tmp_path, 'undocumented_tools.py', UNDOCUMENTED)
    rc, out, _ = cli(capsys, 'check', f)
    assert rc == 1 and "resize: Function 'resize' has no docstring" in out and "crop: Function 'crop' has no docstring" in out
    assert sum('has no docstring' in l for l in out.splitlines()) == 2  # each once, as a finding, not a crash

@pytest.mark.parametrize('cmd', [['schema'], ['check'], ['call', '__TARGET__', '{}']], ids=lambda c: c[0])
@pytest.mark.parametrize('folder,words', [
    ('.', ["'.' is a folder; a target is a .py file or a module: pass one of its .py files (a_tools.py, b_tools.py)"]),
    ('./', ["'./' is a folder", '(a_tools.py, b_tools.py)']),
    ('shop', ["'shop' is a folder", "pass the package as a module, 'shop', or one of its .py files (shop/orders.py)"]),
    ('shop/', ["'shop/' is a folder", "the package as a module, 'shop',"]),
    ('empty/', ["'empty/' is a folder", 'pass a .py file (this folder holds none)']),
])
def test_a_folder_target_says_what_to_pass(capsys, tmp_path, monkeypatch, cmd, folder, words):
    for nm in ('a_tools.py', 'b_tools.py', '_private.py', 'shop/__init__.py', 'shop/orders.py', 'shop/_impl.py'):
        tool_file(tmp_path, nm, 'def f(x: int) -> int:\n    "Echo x"\n    return x\n')
    (tmp_path / 'empty').mkdir()
    (tmp_path / 'shop' / 'orders.txt').write_text('not python')
    monkeypatch.chdir(tmp_path)
    if folder == 'shop':  # a plain name is a module first: only a folder that isn't a package reaches the folder message
        (tmp_path / 'shop' / '__init__.py').unlink()
        words = ["'shop' has no public functions with docstrings"]  # imported as a namespace package: it offers nothing
    args = [folder if a == '__TARGET__' else a for a in cmd] if '__TARGET__' in cmd else [*cmd, folder]
    rc, out, err = cli(capsys, *args)
    assert_one_line_error(rc, out, err, *words)
    assert 'importlib' not in err and "'package' argument" not in err and '_private' not in err and 'orders.txt' not in err

def test_a_package_folder_elsewhere_says_where_to_import_it_from(capsys, tmp_path, monkeypatch):
    tool_file(tmp_path, 'lib/shop/__init__.py', '')
    (tmp_path / 'work').mkdir()
    monkeypatch.chdir(tmp_path / 'work')
    assert_one_line_error(*cli(capsys, 'schema', str(tmp_path / 'lib' / 'shop')),
                          f"pass the package as a module, 'shop' from {tmp_path / 'lib'}")

def test_a_folder_target_from_the_real_entry_point(tmp_path):
    tool_file(tmp_path, 'tools.py', 'def f(x: int) -> int:\n    "Echo x"\n    return x\n')
    r = run('schema', '.', cwd=tmp_path)
    assert_one_line_error(r.returncode, r.stdout, r.stderr, "'.' is a folder", '(tools.py)')
    assert run('schema', 'tools.py', cwd=tmp_path).returncode == 0  # (what it suggests works)

def test_mcp_list_of_a_url_without_its_mcp_path_suggests_it(capsys):
    "Our own server over real HTTP: it answers 404 at `/`; the message says so, and the URL it suggests lists the tools"
    sys.path.insert(0, str(__import__('pathlib').Path(__file__).parent / 'mcp_servers'))
    from loopback import serving
    from funccall.mcp import mk_asgi_app
    def hi(name: str) -> str:  # the greeting
        "Say hi"
        return name
    with serving(mk_asgi_app([hi])) as url:
        base = url.removesuffix('/mcp')
        for given in (base, base + '/'):
            rc, out, err = cli(capsys, 'mcp', 'list', '--timeout', '20', given)
            assert_one_line_error(rc, out, err, f"can't list the tools of {given!r}", 'it answered 404 (Not Found) at that URL',
                                  f'most servers serve streamable HTTP at the /mcp path: try {base}/mcp')
        rc, out, err = cli(capsys, 'mcp', 'list', '--timeout', '20', url)
        assert rc == 0 and [t['name'] for t in json.loads(out)] == ['hi'], err
        rc, out, err = cli(capsys, 'mcp', 'list', '--timeout', '20', base + '/elsewhere/mcp')  # a /mcp path already: no suggestion
        assert_one_line_error(rc, out, err, 'HTTP 404')
        assert 'try ' not in err
