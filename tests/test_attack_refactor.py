"""Attacks on issue 31's refactor: every call answered through the one pipeline (the MCP server's refusals too), the
wrapping toolsets, the architecture test's import reader, and the layout's child processes from an installed copy."""
import asyncio, logging, re

import pytest

from funccall import Tool

T = 20  # seconds: the most any one exchange may take

class _Records(logging.Handler):
    "The `funccall` logger's lines: a traced call says `execute_tool NAME ...` at DEBUG"
    def __init__(self): super().__init__(); self.lines = []
    def emit(self, r): self.lines.append(r.getMessage())

@pytest.fixture
def traced():
    h, lg = _Records(), logging.getLogger('funccall')
    old = lg.level
    lg.addHandler(h); lg.setLevel(logging.DEBUG)
    yield h.lines
    lg.removeHandler(h); lg.setLevel(old)

# --- the MCP server answers every call through the pipeline ------------------------------------------

def _mcp_call(server, name, args):
    from mcp import Client
    async def go():
        async with Client(server) as c: return await c.call_tool(name, args)
    return asyncio.run(asyncio.wait_for(go(), T))

def _deleter(log):
    def delete(path: str) -> str:
        "Delete a file"
        log.append(path)
        return 'deleted'
    return Tool(delete, requires_confirmation=True)

def test_mcp_unknown_tool_is_the_pipelines_not_found_and_traced(traced):
    pytest.importorskip('mcp')
    from funccall.mcp import mk_server
    r = _mcp_call(mk_server([_deleter([])]), 'delete.__globals__', {'a': 1})
    assert r.is_error and r.content[0].text == "ToolNotFound: Unknown tool 'delete.__globals__'; available tools: 'delete'"
    assert 'execute_tool delete.__globals__ (call None) failure: name' in traced

def test_mcp_refusal_for_a_client_that_cannot_ask_is_a_declined_call_of_the_pipeline(traced):
    pytest.importorskip('mcp')
    from funccall.mcp import mk_server
    log = []
    server = mk_server([_deleter(log)])
    r = _mcp_call(server, 'delete', {'path': 'a.txt'})
    assert r.is_error and r.content[0].text == ("Tool 'delete' needs the user's confirmation, and this MCP client can't ask for it "
                                                "(it declared no form-mode elicitation): the call was refused")
    assert log == [] and 'execute_tool delete (call None) failure: declined' in traced

# --- tracebacks the model reads hold none of funccall's frames, from any subpackage -----------------------

def _bad(x: int) -> int:
    "Fails"
    raise ValueError('nope')

@pytest.mark.parametrize('isolate', [False, True])
def test_code_mode_traceback_of_a_failing_tool_has_no_funccall_frames(isolate):
    "A tool bound in a program is built by core/inverse.py: its frames are funccall's, not the model's to read"
    from funccall import Toolbox
    from funccall.toolsets.codemode import code_tool
    r = Toolbox([code_tool(Toolbox([Tool(_bad, name='bad')]), isolate=isolate)]).call('run_code', {'code': 'bad(x=1)'})
    shown = re.sub(r'\n *[~^]+(?=\n)', '', r.error)  # Python 3.13 marks the failing call with `~~~^^^^^` under it
    # (the built tool's generated code, `<funccall tool entry ...>` (core/_source.py), is funccall's own: not shown)
    assert shown == ('CodeError: Traceback (most recent call last):\n  File "<code>", line 1, in <module>\n    bad(x=1)\n'
                     'ToolCallError: ValueError: nope')

def test_python_traceback_drops_funccall_frames_of_every_subpackage():
    "Code that calls funccall's core (`get_schema`, in core/schema.py) and fails inside it: only the code's frames show"
    from funccall import get_schema, python
    out = python('get_schema(42)', glb={'get_schema': get_schema})
    assert out.startswith('Traceback (most recent call last):\n  File "<code>", line 1, in <module>\n')
    assert 'File "' not in out.split('in <module>', 1)[1] and 'SchemaError' in out

def test_scrub_hides_the_folder_funccall_is_in(monkeypatch):
    "As before the layout: the whole folder holding funccall/ (a checkout, site-packages) becomes `<lib>`, on sys.path or not"
    import os, sys
    from funccall.core._package import PACKAGE_DIR
    from funccall.toolsets import _sandbox
    from funccall.toolsets._sandbox import scrub
    top = os.path.dirname(PACKAGE_DIR)
    monkeypatch.setattr(sys, 'path', [p for p in sys.path if p.rstrip(os.sep) != top])
    monkeypatch.setattr(_sandbox, '_HOST_PATH', None)  # worked out again from the path above
    assert scrub(f'File "{top}{os.sep}elsewhere{os.sep}x.py"') == f'File "<lib>{os.sep}elsewhere{os.sep}x.py"'

# --- the child processes from a copy of funccall that is not this checkout (as `pip install` leaves it) ------------

_INSTALLED = '''
import funccall, sys
assert funccall.__file__.startswith(sys.argv[1]), funccall.__file__
from funccall import Tool, Toolbox, python_isolated
from funccall.toolsets.codemode import code_tool
def add(a: int, b: int) -> int:
    "Add"
    return a + b
print(Toolbox([code_tool(Toolbox([add]), isolate=True)]).call('run_code', {'code': 'add(a=1, b=2)'}).value)
print(python_isolated('6 * 7', timeout=20))
print(python_isolated('1/0', timeout=20).splitlines()[-1])
'''

def test_isolated_children_run_from_a_copy_of_the_package(tmp_path):
    "Code mode's child and python_isolated's import single modules by path: they must find them in any installed copy"
    import os, shutil, subprocess, sys
    from funccall.core._package import PACKAGE_DIR
    site = tmp_path / 'site'
    shutil.copytree(PACKAGE_DIR, site / 'funccall', ignore=shutil.ignore_patterns('__pycache__'))
    env = {**os.environ, 'PYTHONPATH': str(site)}
    p = subprocess.run([sys.executable, '-c', _INSTALLED, str(site)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split('\n')[:3] == ['3', '42', 'ZeroDivisionError: division by zero']

# --- a call expression refused before any tool runs is the pipeline's answer, traced too --------------------

def _add(a: int, b: int) -> int:
    "Add"
    return a + b

@pytest.mark.parametrize('text, kind', [('nope(3)', 'name'), ('add(1,', 'arguments'), ('add.__globals__(1)', 'name')])
def test_a_refused_call_expression_is_traced(traced, text, kind):
    from funccall import Toolbox
    [r] = Toolbox([Tool(_add, name='add')]).call_expr(text)
    assert r.status == 'failure' and r.failure == kind and r.error.split(':')[0] in ('ToolNotFound', 'ExprError')
    assert f'execute_tool  (call None) failure: {kind}' in traced

# --- the worker pool in a forked child -------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(__import__('os'), 'fork'), reason='no os.fork on this platform')
def test_a_forked_child_runs_sync_tools_in_threads_of_its_own():
    "The parent's idle worker threads aren't in the child: a call handed to one would wait for ever (alarm: 15 s)"
    import os, signal, warnings
    from funccall import Toolbox
    box = Toolbox([Tool(_add, name='add')])
    assert asyncio.run(box.acall('add', {'a': 1, 'b': 2})).value == 3  # leaves an idle worker thread in the pool
    assert [r.value for r in box.batch([('add', {'a': 1, 'b': 2}), ('add', {'a': 3, 'b': 4})])] == [3, 7]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)  # forking a process with threads: the child uses none of the parent's
        pid = os.fork()
    if pid == 0:  # the child: any way out ends it, with 0 only when both kinds of call answered
        try:
            signal.alarm(15)
            ok = (asyncio.run(box.acall('add', {'a': 5, 'b': 6})).value == 11
                  and [r.value for r in box.batch([('add', {'a': 1, 'b': 1}), ('add', {'a': 2, 'b': 2})])] == [2, 4])
            os._exit(0 if ok else 1)
        finally: os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"the child ended with {os.waitstatus_to_exitcode(status)} (-14: it hung)"

_NESTED = '''
from funccall import Toolbox, Tool
from funccall.core._run import set_max_workers
set_max_workers(2)
def inner(x: int) -> int:
    "inner"
    return x
ib = Toolbox([inner])
def outer(x: int) -> int:
    "outer: a batch of its own, run from a worker thread"
    return sum(r.value for r in ib.batch([('inner', {'x': x}), ('inner', {'x': x})]))
ob = Toolbox([outer])
print([r.value for r in ob.batch([('outer', {'x': i}) for i in range(4)])])
'''

def test_a_tool_that_runs_a_batch_never_waits_for_a_slot_its_caller_holds():
    "Every slot held by a call that waits for its own batch's calls: those must still start (a subprocess: a hang is killed)"
    import subprocess, sys
    p = subprocess.run([sys.executable, '-W', 'ignore', '-c', _NESTED], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == '[0, 2, 4, 6]', p.stderr[-2000:]

# --- warnings point at the developer's line through every wrapper ---------------------------------------

from dataclasses import dataclass  # noqa: E402

@dataclass
class _Node:
    "A tree node"
    val: int
    kids: 'list[_Node]'

def _walk(n: _Node) -> int:
    "Walk a tree (recursive: Gemini's definitions cut it, and say so)"
    return n.val

@pytest.mark.parametrize('fmt, strict', [('gemini', None), ('mcp', True)])
def test_a_deferred_toolboxs_provider_warning_points_at_the_callers_line(fmt, strict):
    import warnings
    from funccall import Toolbox
    from funccall.core.providers import ProviderWarning
    from funccall.toolsets.search import deferred
    d = deferred(Toolbox([Tool(_walk, name='walk')]), keep=['walk'])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        d.definitions(fmt, strict=strict)
    got = [(x.filename, x.lineno) for x in w if issubclass(x.category, ProviderWarning)]
    assert got and all(f == __file__ for f, _ in got), got

# --- deferred search over a filtered toolbox finds only what the filter kept ------------------------------

def test_deferred_search_over_a_filtered_toolbox_never_finds_a_filtered_out_tool():
    "By words of its description, by its name, by its group, in funccall's search tool and in an OpenAI client search"
    from funccall import Toolbox
    from funccall.toolsets.search import deferred
    from funccall.toolsets.wrap import filtered
    ran = []
    def wipe_disk(device: str) -> str:
        "Erase every byte of a storage device, irreversibly"
        ran.append(device)
        return 'wiped'
    box = Toolbox()
    box.add([Tool(wipe_disk, name='wipe_disk'), Tool(_add, name='add')], group='admin', doc='Administration')
    assert deferred(box).call('search_tools', {'query': 'erase storage device'}).value.names == ['wipe_disk']  # the bait works
    d = deferred(filtered(box, ['add']))
    for q in ('erase storage device irreversibly', 'wipe_disk', 'wipe disk', 'admin'):
        r = d.call('search_tools', {'query': q})
        assert 'wipe' not in str(r.value) and 'wipe_disk' not in d.loaded
    items = [{'type': 'tool_search_call', 'call_id': 'ts', 'execution': 'client',
              'arguments': {'paths': ['wipe_disk', 'admin.wipe_disk', 'admin', 'erase a disk']}}]
    out = d.answer_items(items)
    assert 'wipe' not in str(out) and 'wipe_disk' not in d.loaded
    assert d.call('wipe_disk', {'device': '/dev/sda'}).failure == 'name' and ran == []
