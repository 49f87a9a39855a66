"""The architecture, checked from the source: funccall's modules import only downwards, in no cycle, and no class grows
past 250 lines.

The import graph is read with `ast` from every module's text, so an import inside a function counts as much as one at
the top (both are arrows a reader must follow). The layers are README's "How it is built" table: a module imports
modules of its own layer or lower only, and within a layer never in a circle.
"""
import ast, re
from pathlib import Path

import pytest

import funccall

ROOT = Path(funccall.__file__).parent
MAX_CLASS_LINES = 250

# Lowest first: each name is a subpackage (all its modules) or a module; a module of layer n imports layers <= n only
LAYERS = {
    'core': 0,            # types, docs, schema, call, inverse and its validator, providers, expressions
    'loop.content': 1, 'loop.results': 1, 'loop.messages': 1, 'loop._trace': 1,
    'loop.pipeline': 2,   # the one place a call runs
    'loop.batches': 3,    # calls run concurrently, each through the pipeline
    'loop.tools': 4,      # Tool, ToolGroup, Toolbox: hold and describe
    'loop.stream': 5,     # streamed events -> calls
    'loop.turn': 6,       # run_tool_calls: finished or streamed responses
    'toolsets': 7,        # search and deferred definitions, code mode, prefix/filter, the python tools
    'mcp': 8,             # client and server
    '_load': 8,
    'cli': 9, '__main__': 9, '__init__': 9, 'example': 9,
}

def _modules() -> dict:
    "Every module of funccall, by dotted name below `funccall` (`loop.tools`, `mcp` for `mcp/__init__.py`)"
    mods = {}
    for p in ROOT.rglob('*.py'):
        parts = list(p.relative_to(ROOT).with_suffix('').parts)
        if parts[-1] == '__init__' and len(parts) > 1: parts = parts[:-1]
        mods['.'.join(parts)] = p
    return mods

def _package(name: str, path: Path) -> list:
    "The package a module's relative imports start from"
    parts = name.split('.')
    return parts if path.name == '__init__.py' and name != '__init__' else parts[:-1]

def _targets(name: str, path: Path, mods: dict) -> set:
    "The funccall modules `name` imports, anywhere in its source"
    out = set()
    def add(dotted: str, root: bool=True):
        while dotted and dotted not in mods: dotted = dotted.rpartition('.')[0]  # `from .loop.tools import Tool` -> loop.tools
        if not dotted and not root: return  # a string such as 'funccall.repair' (a trace event) names no module
        dotted = dotted or '__init__'  # `import funccall`, `from funccall import Tool`, `from .. import Tool`: the package itself
        if dotted != name: out.add(dotted)
    for node in ast.walk(ast.parse(path.read_text())):
        if (v := _module_string(node)) is not None: add(v.removeprefix('funccall').lstrip('.'), root=False)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == 'funccall' or a.name.startswith('funccall.'): add(a.name.removeprefix('funccall').lstrip('.'))
        elif isinstance(node, ast.ImportFrom):
            if node.level: base = _package(name, path)[:len(_package(name, path)) - node.level + 1]
            elif (node.module or '').split('.')[0] == 'funccall': base = []
            else: continue
            mod = node.module.removeprefix('funccall').lstrip('.') if not node.level and node.module else (node.module or '')
            stem = [*base, *mod.split('.')] if mod else base
            for a in node.names:  # `from . import content` names a module; `from .tools import Tool` a name in one
                full = '.'.join([*stem, a.name])
                add(full if full in mods else '.'.join(stem))
    return out

_LOOKUPS = ('import_module', '__import__', 'find_spec', 'get', 'pop', 'setdefault')  # calls that load or find a module by name

def _module_string(node) -> str | None:
    """A module of funccall named in a string where a module is loaded or looked up: `importlib.import_module('funccall.x')`,
    `__import__(...)`, `sys.modules['funccall.x']`, `sys.modules.get(...)`: an arrow too (a logger's name is none)"""
    if isinstance(node, ast.Subscript): arg = node.slice
    elif isinstance(node, ast.Call) and node.args and _called(node) in _LOOKUPS: arg = node.args[0]
    else: return None
    ok = isinstance(arg, ast.Constant) and isinstance(arg.value, str) and re.fullmatch(r'funccall(\.[A-Za-z_]\w*)+', arg.value)
    return arg.value if ok else None

def _called(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None

def _dynamic(call: ast.Call) -> bool:
    "An import whose module is worked out as the program runs (`import_module('funccall.' + x)`): an arrow the reader can't see"
    if _called(call) not in ('import_module', '__import__', 'spec_from_file_location'): return False
    first = call.args[0] if call.args else None
    return not (isinstance(first, ast.Constant) and isinstance(first.value, str) and not first.value.startswith('.'))

DYNAMIC_OK = {'_load'}  # imports the module a user names on the command line (never one of funccall's)

def _graph() -> dict:
    mods = _modules()
    return {n: _targets(n, p, mods) for n, p in mods.items()}

def _layer(name: str) -> int:
    "A module's layer: its own entry, else its subpackage's"
    parts = name.split('.')
    for i in range(len(parts), 0, -1):
        if (k := '.'.join(parts[:i])) in LAYERS: return LAYERS[k]
    raise AssertionError(f"funccall.{name} has no layer: add it to LAYERS here and to README's 'How it is built'")

def _cycle(graph: dict) -> list | None:
    "One import cycle, as the modules around it, or None"
    state, stack = {}, []
    def visit(n):
        state[n] = 1; stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1: return stack[stack.index(m):] + [m]
            if m not in state and (c := visit(m)): return c
        state[n] = 2; stack.pop()
    for n in sorted(graph):
        if n not in state and (c := visit(n)): return c
    return None

def test_the_graph_reader_sees_function_local_and_relative_imports():
    "The checks below are only as good as the reader: it must see what an import inside a function names"
    g = _graph()
    assert g, 'no modules found'
    assert any(len(v) > 2 for v in g.values())
    assert 'loop.tools' in g['__init__']

def test_no_import_cycle_among_funccall_modules():
    assert _cycle(_graph()) is None, ' -> '.join(_cycle(_graph()))

def test_the_cycle_finder_finds_a_planted_cycle():
    assert _cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': set()}) == ['a', 'b', 'c', 'a']

def _upward(graph: dict) -> list:
    "Every import from a lower layer to a higher one, in words"
    return [f"funccall.{a} (layer {_layer(a)}) imports funccall.{b} (layer {_layer(b)})"
            for a, bs in sorted(graph.items()) for b in sorted(bs) if _layer(b) > _layer(a)]

def test_every_import_runs_to_the_same_layer_or_lower():
    assert not (up := _upward(_graph())), '\n'.join(up)

def test_an_upward_import_is_found():
    assert _upward({'loop.tools': {'toolsets.search', 'loop.pipeline'}, 'loop.pipeline': set()}) == [
        'funccall.loop.tools (layer 4) imports funccall.toolsets.search (layer 7)']

@pytest.mark.parametrize('path', sorted(ROOT.rglob('*.py')), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_class_over_250_lines(path):
    long = [f"{n.name}: {n.end_lineno - n.lineno + 1} lines" for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.ClassDef) and n.end_lineno - n.lineno + 1 > MAX_CLASS_LINES]
    assert not long, f"{path.name}: split these by responsibility: {long}"

def test_the_graph_reader_sees_imports_spelt_as_strings(tmp_path):
    "An import made with `importlib.import_module('funccall.x')` is an arrow the checks see"
    p = tmp_path / 'm.py'
    p.write_text("import importlib\ndef f():\n    return importlib.import_module('funccall.toolsets.search')\n")
    assert _targets('loop.tools', p, _modules()) == {'toolsets.search'}

@pytest.mark.parametrize('pkg', ['core', 'loop', 'toolsets'])
def test_subpackage_inits_import_nothing(pkg):
    "README promises they stay empty: code mode's child imports single modules of core/ and toolsets/ without the rest"
    tree = ast.parse((ROOT / pkg / '__init__.py').read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]

def test_no_import_of_a_module_named_as_the_program_runs():
    "The reader sees only modules named in the source: an import of a computed name could reach any layer unseen"
    found = [f"funccall.{n} line {c.lineno}" for n, p in _modules().items() if n not in DYNAMIC_OK
             for c in ast.walk(ast.parse(p.read_text())) if isinstance(c, ast.Call) and _dynamic(c)]
    assert not found, f"import a module by its literal name instead: {found}"

@pytest.mark.parametrize('src, want', [
    ("import funccall\n", {'__init__'}),
    ("from funccall import Tool\n", {'__init__'}),
    ("from ... import Tool\n", {'__init__'}),
    ("from ... import toolsets\n", {'toolsets'}),
    ("from ...toolsets import search\n", {'toolsets.search'}),
    ("import funccall.toolsets.search as s\n", {'toolsets.search'}),
    ("import sys\nm = sys.modules['funccall.toolsets.search']\n", {'toolsets.search'}),
    ("import importlib\nm = importlib.import_module('funccall.toolsets.codemode')\n", {'toolsets.codemode'}),
    ("__import__('funccall.mcp')\n", {'mcp'}),
])
def test_the_reader_sees_every_spelling_of_an_import(tmp_path, src, want):
    "Each spelling is an arrow from a module of core/ (as if it were core/x/m.py, three levels down for `...`)"
    p = tmp_path / 'm.py'
    p.write_text(src)
    assert _targets('core._types', p, _modules()) - {'core'} == want

@pytest.mark.parametrize('src', ["import importlib\nimportlib.import_module('funccall.' + 'mcp')\n",
                                 "import importlib\nimportlib.import_module('.search', 'funccall.toolsets')\n",
                                 "__import__(name)\n"])
def test_an_import_of_a_computed_name_is_found(src):
    assert any(isinstance(c, ast.Call) and _dynamic(c) for c in ast.walk(ast.parse(src)))
