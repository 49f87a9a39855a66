"""Code mode (`funccall/codemode.py`): the API a model reads is valid, typed Python; a program calling three tools (one
with an injected value, one that fails) runs in each mode with every call through the toolbox's pipeline; the
isolated process is stopped at its deadline (and gone), limited in memory, and blind to the application; real MCP
servers work in every mode; and the providers' programmatic tool calling renders and answers as their SDKs expect."""
import ast, os, subprocess, sys, time, typing
from dataclasses import dataclass
from typing import Literal

import pytest
from pydantic import TypeAdapter

from funccall import Tool, ToolGroup, Toolbox, run_tool_calls
from funccall.toolsets.codemode import code_api, code_tool, program_callers, programmatic
from funccall.toolsets.search import find_tools

MODES = [False, True, 'monty']
APP_SECRET = 'only the application has this'

@dataclass
class Point:
    "A point in the plane"
    x: float
    y: float

def add_points(
    p1: Point,  # the first point
    p2: Point,  # the second point
    mode: Literal['sum', 'diff']='sum',  # add or subtract
) -> Point:
    "Add two points"
    return Point(p1.x + p2.x, p1.y + p2.y) if mode == 'sum' else Point(p1.x - p2.x, p1.y - p2.y)

def whoami(user_id: int) -> str:
    "The current user's name"
    return f'user{user_id}'

def fail(
    reason: str,  # why
) -> str:
    "A tool that always fails"
    raise RuntimeError(f'failed: {reason}')

def box3(**kw):
    return Toolbox([add_points, Tool(whoami, inject=('user_id',)), fail], injected={'user_id': 7}, **kw)

PROGRAM = '''
p = add_points({'x': 1, 'y': 2}, {'x': 3, 'y': 4})
print('sum:', p['x'] if isinstance(p, dict) else p.x)
try:
    fail('on purpose')
except ToolCallError as e:
    print('caught:', str(e).splitlines()[0])
whoami()
'''

def test_code_api_is_valid_typed_python():
    api = code_api(box3())
    ast.parse(api)
    ns = {}
    exec(api, ns)
    assert typing.get_type_hints(ns['Point']) == {'x': float, 'y': float} and ns['Point'].__required_keys__ == {'x', 'y'}  # a TypedDict
    assert "def add_points(p1: Point, p2: Point, *, mode: Literal['sum', 'diff'] = 'sum') -> Point:" in api
    assert 'def whoami() -> str:' in api  # the injected parameter is the application's, not the model's
    assert '        p1: the first point' in api and '        reason: why' in api  # parameters' descriptions (comments) in the docstring
    assert ns['add_points'].__doc__.startswith('Add two points') and api.count('class Point(TypedDict)') == 1

def test_code_api_names_and_escapes():
    class Repo:
        "A repository"
        def list_files(self, glob: str = '*'):  # e.g. "*.py"
            'List files matching """glob""" \\ or all'
            return []
    api = code_api(Toolbox([ToolGroup(Repo)]))
    ast.parse(api)
    assert "def repo_list_files(*, glob: str = '*') -> Any:" in api  # `repo-list_files` as a Python name

@pytest.mark.parametrize('isolate', MODES)
def test_program_calls_three_tools(isolate):
    calls = []
    box = box3()
    box['add_points'].pre_hook = lambda tool, args: calls.append(tool.name)  # hooks run for calls from the program
    r = code_tool(box, isolate=isolate, timeout=30).execute({'code': PROGRAM})
    assert r.ok, r.error
    assert r.text == 'sum: 4.0\ncaught: RuntimeError: failed: on purpose\nuser7'  # prints, then the last value
    assert calls == ['add_points']

@pytest.mark.parametrize('isolate', MODES)
def test_bad_argument_and_failing_call_come_back_readable(isolate):
    tool = code_tool(box3(), isolate=isolate, timeout=30)
    r = tool.execute({'code': "add_points({'x': 'one', 'y': 2}, {'x': 3, 'y': 4})"})
    assert not r.ok and "ToolInputError: Tool 'add_points'" in r.error and "expected a number" in r.error
    r = tool.execute({'code': "print('before')\nfail('badly')"})
    assert not r.ok and r.error.startswith('CodeError: before\n') and 'RuntimeError: failed: badly' in r.error

@pytest.mark.parametrize('isolate', [False, True])
def test_pipeline_confirmation_and_cache(isolate):
    runs = []
    def lookup(key: str) -> str:
        "Look a key up"
        runs.append(key)
        return key.upper()
    box = Toolbox([Tool(lookup, cache_ttl=60), Tool(fail, requires_confirmation=True, confirm=lambda tool, args: False)])
    r = code_tool(box, isolate=isolate).execute({'code': "[lookup('a'), lookup('a'), lookup('b')]"})
    assert r.text == '["A", "A", "B"]' and runs == ['a', 'b']  # the second call came from the cache
    r = code_tool(box, isolate=isolate).execute({'code': "fail('x')"})
    assert not r.ok and "ToolCallError: The user declined to run fail(reason='x')" in r.error  # confirmation asked, and refused

def test_in_process_values_are_python_objects():
    r = code_tool(box3(), isolate=False).execute({'code': "p = add_points({'x': 1, 'y': 2}, {'x': 3, 'y': 4})\ntype(p).__name__"})
    assert r.text == 'Point'

def test_isolated_program_is_stopped_at_its_deadline_and_its_process_is_gone():
    marker = f'fc-gone-{os.getpid() % 10000}'  # the program's name, as this machine's `/proc` shows it (its pid is its namespace's)
    names = []
    def my_name(name: str) -> str:
        "Report the program's process name"
        names.append(name)
        return name
    tool = code_tool(Toolbox([my_name]), isolate=True, timeout=2)
    code = f"import ctypes\nctypes.CDLL(None).prctl(15, b'{marker}', 0, 0, 0)\nmy_name(open('/proc/self/comm').read().strip())\nwhile True: pass"
    r = tool.execute({'code': code})
    assert not r.ok and 'TimeoutError' in r.error and 'stopped after 2 s' in r.error
    assert names == [marker]
    def alive():
        found = []
        for n in os.listdir('/proc'):
            try: found += [n] if open(f'/proc/{n}/comm').read().strip() == marker else []
            except OSError: pass
        return found
    end = time.monotonic() + 1
    while alive() and time.monotonic() < end: time.sleep(0.02)  # (the kernel may still be reaping it)
    assert alive() == []

def test_in_process_program_is_stopped_at_its_deadline():
    r = code_tool(box3(), isolate=False, timeout=1).execute({'code': 'while True: pass'})
    assert not r.ok and 'TimeoutError' in r.error

def test_monty_program_is_stopped_at_its_deadline():
    r = code_tool(box3(), isolate='monty', timeout=1).execute({'code': 'while True: pass'})
    assert not r.ok and 'TimeoutError' in r.error

def test_isolated_program_is_memory_limited():
    r = code_tool(box3(), isolate=True, memory_mb=400).execute({'code': 'x = bytearray(2 * 1024 ** 3)\nlen(x)'})
    assert not r.ok and 'MemoryError' in r.error

def test_isolated_program_never_sees_the_application():
    code = "import sys\n[sorted(k for k in sys.modules if 'test_codemode' in k), 'APP_SECRET' in globals()]"
    assert code_tool(box3(), isolate=True).execute({'code': code}).text == '[[], false]'
    here = code_tool(box3(), isolate=False).execute({'code': code}).text  # in process, the application's modules are there to import
    assert 'test_codemode' in here

def test_isolated_process_can_only_call_the_toolbox_tools():
    "A program that writes to the channel itself, asking for something that is not a tool, is answered as a model's unknown tool"
    code = ("import json, os, sys\n"
            "os.write(3, json.dumps({'call': 'add_points.__globals__', 'args': {}}).encode() + b'\\n')  # the channel's descriptor\n"
            "json.loads(sys.stdin.readline())")
    r = code_tool(box3(), isolate=True).execute({'code': code})
    assert r.ok and '"ok": false' in r.text and 'ToolNotFound' in r.text and 'add_points.__globals__' in r.text

def test_bad_isolate_value():
    with pytest.raises(ValueError, match='isolate'): code_tool(box3(), isolate='docker')

# --- real MCP servers in every mode -----------------------------------------------------------------

@pytest.fixture(scope='module')
def mcp_box(tmp_path_factory):
    from funccall.mcp import MCPClient
    repo = tmp_path_factory.mktemp('repo')
    subprocess.run(['git', 'init', '-q', str(repo)], check=True)
    (repo/'hello.txt').write_text('hi')
    with MCPClient([sys.executable, '-m', 'mcp_server_time', '--local-timezone=UTC'], timeout=30) as t, \
         MCPClient([sys.executable, '-m', 'mcp_server_git', '--repository', str(repo)], timeout=30) as g:
        box = Toolbox().add(t.tools(), group='time', doc='The current time, and time zone conversion')
        box.add(g.tools(), group='git', doc='A git repository: status, diffs, commits, branches')
        yield box, str(repo)

@pytest.mark.slow  # MCP server processes: one Python runs them in CI
def test_mcp_code_api_has_output_schema_return_types(mcp_box):
    box, _ = mcp_box
    api = code_api(box)
    ast.parse(api)
    assert 'def get_current_time(timezone: str) -> TimeResult:' in api and 'class TimeResult(TypedDict):' in api

@pytest.mark.slow  # MCP server processes: one Python runs them in CI
@pytest.mark.parametrize('isolate', MODES)
def test_mcp_tools_in_every_mode(mcp_box, isolate):
    box, repo = mcp_box
    code = f"t = get_current_time(timezone='Asia/Tokyo')\nst = git_status(repo_path={repo!r})\n[t['timezone'], 'hello.txt' in st]"
    r = code_tool(box, isolate=isolate, timeout=30).execute({'code': code})
    assert r.ok, r.error
    assert r.text == '["Asia/Tokyo", true]'

@pytest.mark.slow  # MCP server processes: one Python runs them in CI
def test_mcp_search(mcp_box):
    box, _ = mcp_box
    assert find_tools(box, 'get the current time', 1) == ['get_current_time']  # (lexical: "what time is it in Tokyo" finds convert_time,
    # whose description names Asia/Tokyo)
    assert find_tools(box, 'the commit log of the repository', 1) == ['git_log']

# --- the providers' own programmatic calling ------------------------------------------------------------

def test_anthropic_programmatic_render_and_answer():
    import anthropic.types as at
    from anthropic.types import Message, MessageParam
    box = box3()
    defs = programmatic(box.definitions('anthropic'), 'anthropic')
    TypeAdapter(list[at.ToolUnionParam]).validate_python(defs)
    assert defs[0] == {'type': 'code_execution_20260120', 'name': 'code_execution'}
    assert all(d['allowed_callers'] == ['code_execution_20260120'] for d in defs[1:])
    assert programmatic(box.definitions('anthropic'), 'anthropic', direct=True)[1]['allowed_callers'] == ['code_execution_20260120', 'direct']
    msg = Message.model_validate({'id': 'msg_1', 'type': 'message', 'role': 'assistant', 'model': 'claude', 'stop_reason': 'tool_use',
        'usage': {'input_tokens': 1, 'output_tokens': 1}, 'container': {'id': 'container_1', 'expires_at': '2026-11-24T10:00:00Z'},
        'content': [{'type': 'server_tool_use', 'id': 'srvtoolu_1', 'name': 'code_execution', 'input': {'code': 'whoami()'}},
                    {'type': 'tool_use', 'id': 'toolu_1', 'name': 'whoami', 'input': {},
                     'caller': {'type': 'code_execution_20260120', 'tool_id': 'srvtoolu_1'}}]})
    out = run_tool_calls(box, msg)
    TypeAdapter(list[MessageParam]).validate_python(out)
    assert out == [{'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'toolu_1', 'content': 'user7', 'is_error': False}]}]

def test_openai_programmatic_render_and_answer():
    from openai.types.responses import Response, ResponseInputItemParam, ToolParam
    box = box3()
    defs = programmatic(box.definitions('responses'), 'responses')
    TypeAdapter(list[ToolParam]).validate_python(defs)
    assert defs[-1] == {'type': 'programmatic_tool_calling'} and all(d['allowed_callers'] == ['programmatic'] for d in defs[:-1])
    resp = Response.model_validate({'id': 'resp_1', 'object': 'response', 'created_at': 0, 'model': 'gpt-5.5', 'parallel_tool_calls': True,
        'tool_choice': 'auto', 'tools': [], 'output': [
            {'type': 'function_call', 'call_id': 'c1', 'name': 'whoami', 'arguments': '{}', 'caller': {'type': 'program', 'caller_id': 'prog_1'}},
            {'type': 'function_call', 'call_id': 'c2', 'name': 'fail', 'arguments': '{"reason": "x"}'}]})
    assert program_callers(resp.output) == {'c1': {'type': 'program', 'caller_id': 'prog_1'}}
    out = run_tool_calls(box, resp)
    TypeAdapter(list[ResponseInputItemParam]).validate_python(out)
    assert out[0] == {'type': 'function_call_output', 'call_id': 'c1', 'output': 'user7', 'caller': {'type': 'program', 'caller_id': 'prog_1'}}
    assert 'caller' not in out[1]  # a direct call is answered as always
    with pytest.raises(ValueError, match='Programmatic'): programmatic([], 'gemini')

@pytest.mark.parametrize('isolate', MODES)
def test_injected_values_per_request_reach_the_program_calls(isolate):
    "An injected value the toolbox doesn't hold is run_code's own: each request supplies it, as for any tool"
    inner = Toolbox([Tool(whoami, inject=('user_id',)), add_points])
    run_code = code_tool(inner, isolate=isolate)
    assert run_code.inject == ('user_id',) and list(run_code.schema['input_schema']['properties']) == ['code']  # the model never sees it
    outer = Toolbox([run_code])
    assert outer.call('run_code', {'code': 'whoami()'}, injected={'user_id': 5}).text == 'user5'
    r = outer.call('run_code', {'code': 'whoami()', 'user_id': 3}, injected={'user_id': 5})
    assert not r.ok and 'supplied by the application' in r.error  # the model can't pass it
    held = Toolbox([Tool(whoami, inject=('user_id',))], injected={'user_id': 9})  # held by the toolbox: not asked for again
    assert code_tool(held, isolate=isolate).inject == () and Toolbox([code_tool(held, isolate=isolate)]).call('run_code', {'code': 'whoami()'}).text == 'user9'

@pytest.mark.corpus  # the whole corpus: CI runs it
def test_code_api_of_every_corpus_server_is_valid_python():
    "The stubs of all 65 real servers' tools parse and run: odd names, keys Python can't spell, recursion, output schemas"
    import warnings
    from corpus import corpus_servers
    from funccall import mk_tool
    n = 0
    for srv, d in corpus_servers().items():
        box = Toolbox()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            for t in d['tools']:
                try: fn = mk_tool(lambda nm, /, **kw: None, t)
                except (ValueError, TypeError): continue  # what MCPClient leaves out too
                fn.__output_schema__ = t.get('outputSchema')  # as MCPClient sets it
                box.add(fn, group=srv)
        api = code_api(box)
        ns = {}
        exec(compile(api, f'<{srv} api>', 'exec'), ns)
        defs = [f.name for f in ast.parse(api).body if isinstance(f, ast.FunctionDef)]
        assert len(defs) == len(box) and all(callable(ns[py]) for py in defs), srv
        n += len(box)
    assert n > 1300

def test_code_api_recursive_and_unspellable_keys():
    from funccall import mk_tool
    tool = {'name': 'find', 'description': 'Find documents', 'input_schema': {'type': 'object', 'required': ['root'], 'properties': {
        'root': {'$ref': '#/$defs/Node'}, 'filter': {'type': 'object', 'properties': {'$match': {'type': 'string'}, 'from': {'type': 'integer'}}}},
        '$defs': {'Node': {'type': 'object', 'title': 'Node', 'required': ['name'], 'properties': {
            'name': {'type': 'string'}, 'children': {'type': 'array', 'items': {'$ref': '#/$defs/Node'}}}}}}}
    api = code_api(Toolbox([mk_tool(lambda nm, /, **kw: None, tool)]))
    ns = {}
    exec(api, ns)
    assert 'class Node(TypedDict, total=False):\n    name: str  # required\n    children: list[Node]' in api
    assert "Filter = TypedDict('Filter', {\n    '$match': 'str',\n    'from': 'int',\n}, total=False)" in api  # named for its parameter
    assert ns['Filter'].__optional_keys__ == {'$match', 'from'} and 'def find(root: Node, *, filter: Filter = None) -> Any:' in api

@pytest.mark.parametrize('isolate', [False, True])
def test_printed_output_is_bounded(isolate):
    r = code_tool(box3(), isolate=isolate).execute({'code': "for i in range(50_000): print('0123456789')\n'end'"})
    assert r.ok and len(r.text) < 100_100 and r.text.endswith('[... printed output cut at 100000 characters]\nend')

def test_a_process_flooding_the_channel_is_stopped():
    from funccall.toolsets._sandbox import MAX_MESSAGE
    r = code_tool(box3(), isolate=True).execute({'code': f"import os\nos.write(3, b'x' * {MAX_MESSAGE + (4 << 20)})"})
    assert not r.ok and f'a message over {MAX_MESSAGE >> 20} MB' in r.error

@pytest.mark.parametrize('isolate', [False, True])
def test_a_call_waiting_for_approval_is_refused_in_a_program(isolate):
    def rm(path: str) -> str:
        "Remove a file"
        return 'removed'
    box = Toolbox([Tool(rm, requires_confirmation=True)])  # no `confirm`: a direct call would wait for the user (pending)
    assert box.call('rm', {'path': 'x'}).status == 'pending'
    r = code_tool(box, isolate=isolate).execute({'code': "rm('x')"})
    assert not r.ok and "ToolCallError: Tool 'rm' needs the user's approval, which a program can't wait for" in r.error

def test_run_code_as_an_openai_custom_tool():
    "With text_input the model writes the program as it is (an OpenAI custom tool), not escaped inside a JSON string"
    from openai.types.responses import ResponseInputItemParam, ToolParam
    outer = Toolbox([code_tool(box3(), text_input=True)])
    [d] = outer.definitions('responses')
    TypeAdapter(ToolParam).validate_python(d)
    assert d['type'] == 'custom' and d['format'] == {'type': 'text'} and 'def add_points(' in d['description']
    out = run_tool_calls(outer, {'output': [{'type': 'custom_tool_call', 'call_id': 'c1', 'name': 'run_code', 'input': PROGRAM}]})
    TypeAdapter(list[ResponseInputItemParam]).validate_python(list(out))
    assert out == [{'type': 'custom_tool_call_output', 'call_id': 'c1', 'output': 'sum: 4.0\ncaught: RuntimeError: failed: on purpose\nuser7'}]

def test_a_wrapped_mcp_result_shows_its_value_type():
    "An MCP tool whose output schema wraps its value as {'result': value} returns the value: the stub says its type"
    from funccall.mcp import MCPClient, mk_server
    def double(x: int) -> int:
        "Double x"
        return 2 * x
    with MCPClient(mk_server([double])) as c:
        box = Toolbox().add(c.tools())
        assert 'def double(x: int) -> int:' in code_api(box)
        assert code_tool(box).execute({'code': 'double(4) + 1'}).text == '9'
