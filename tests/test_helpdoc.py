"""`help()` tells the story: every public function's and class's parameters, described by `# comments` in the source,
are in its docstring too (an `Args:` section), where `help()`, `inspect.getdoc` and Jupyter's `?` read them.

The promises attacked: every commented parameter of every export is shown; the tools funccall hands to a model keep the
docstring the model reads; a documented function's schema is the one it had; nothing is added twice."""
import ast, inspect, io, pydoc, subprocess, sys, textwrap, tokenize, warnings

import pytest

import funccall
from funccall import get_schema
from funccall.core._docs import func_docs
from funccall.core._helpdoc import add_param_docs

TOOLS = ('python', 'python_isolated')  # funccall's own tools: their docstrings are tool descriptions

def _exports() -> list:
    "Every function, and every class's commented functions, funccall and funccall.mcp export: (where, function)"
    import funccall.mcp
    out = []
    for mod, nm in [*((funccall, n) for n in funccall.__all__), *((funccall.mcp, n) for n in funccall.mcp.__all__)]:
        o = getattr(mod, nm)
        if nm in TOOLS: continue
        if inspect.isfunction(o): out.append((nm, o))
        elif isinstance(o, type):
            for k, v in vars(o).items():
                v = getattr(v, '__func__', v)
                if isinstance(v, property): v = v.fget
                if inspect.isfunction(v) and not v.__code__.co_filename.startswith('<') and (not k.startswith('_') or k in ('__init__', '__call__')): out.append((f"{nm}.{k}", v))
    return out

def _source_comments(f) -> dict:
    "The `# comment` of each of `f`'s parameters, read with `ast` and the source's lines: the test's own reader"
    lines, start = inspect.getsourcelines(f)
    fn = ast.parse(textwrap.dedent(''.join(lines))).body[0]
    assert isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    a = fn.args
    comments = {t.start[0]: t.string.lstrip('#').strip() for t in tokenize.generate_tokens(io.StringIO(''.join(lines)).readline)
                if t.type == tokenize.COMMENT}
    ps = [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs, *([a.kwarg] if a.kwarg else [])]
    out = {p.arg: comments[p.end_lineno] for p in ps if p.end_lineno in comments and p.lineno == p.end_lineno}
    out.pop('self', None); out.pop('cls', None)
    return out

def test_help_of_call_func_shows_every_parameter():
    text = pydoc.render_doc(funccall.call_func, renderer=pydoc.plaintext)
    assert 'Args:' in text
    for nm, c in _source_comments(funccall.call_func).items():
        assert f"{nm}: {c}" in text, nm

def test_help_of_tool_shows_confirm_and_every_init_parameter():
    text = pydoc.render_doc(funccall.Tool, renderer=pydoc.plaintext)
    assert 'confirm: `confirm(tool, args) -> bool`' in text
    for nm, c in _source_comments(funccall.Tool.__init__).items(): assert f"{nm}: {c}" in text, nm

@pytest.mark.parametrize('where,f', _exports(), ids=lambda x: x if isinstance(x, str) else '')
def test_every_commented_parameter_of_every_export_is_in_its_docstring(where, f):
    import funccall.mcp
    owner = getattr(funccall, where.split('.')[0], None) or getattr(funccall.mcp, where.split('.')[0])
    doc = inspect.getdoc(f if not where.endswith('.__init__') else owner) or ''
    for nm, c in _source_comments(f).items():
        assert c.split('  #')[0] in doc, f"{where}: {nm}"

def test_help_of_the_mcp_client_and_server_shows_their_parameters():
    from funccall.mcp import MCPClient, mk_server
    assert 'on_elicit: `on_elicit(message, schema)`' in inspect.getdoc(MCPClient)
    assert 'Args:' in inspect.getdoc(mk_server)

def test_a_dataclass_shows_its_fields_comments():
    doc = inspect.getdoc(funccall.ToolResult)
    assert "call_id: the provider's id for this call, to answer it" in doc and 'attempts: how many times the tool ran' in doc

def test_the_tools_keep_the_docstring_the_model_reads():
    for nm in TOOLS:
        f = getattr(funccall, nm)
        src = inspect.getsource(f)
        written = ast.get_docstring(ast.parse(textwrap.dedent(src)).body[0], clean=False)
        assert f.__doc__ == written and 'Args:' not in f.__doc__
        assert get_schema(f)['description'] == inspect.cleandoc(written).strip() or 'Args' not in get_schema(f)['description']

def _fresh(src: str, tmp_path, name: str = 'f'):
    "A function defined in a file of its own (so it has source), new for each call"
    p = tmp_path / f"m{abs(hash(src))}.py"
    p.write_text(src)
    ns: dict = {}
    exec(compile(src, str(p), 'exec'), ns)
    return ns[name]

SRC = '''
def f(
    a: int,           # the first
    b: str = 'x',     # the second, with a default
    *args,            # more, by position
    c: bool = False,  # a flag
    **kw,             # the rest
) -> dict:            # what comes back
    """Does things.

    Over two paragraphs."""
    return {}
'''

def test_a_documented_functions_schema_is_the_one_it_had(tmp_path):
    before, f = get_schema(_fresh(SRC, tmp_path)), _fresh(SRC, tmp_path)
    add_param_docs([f])
    assert 'Args:\n    a: the first\n    b: the second, with a default' in f.__doc__
    assert 'Returns:' not in f.__doc__  # (a docstring's returns section is part of the tool's description)
    assert get_schema(f) == before
    d = func_docs(f)
    assert d.doc_params == {k: v for k, v in d.comments.items()}  # the section reads back as the comments it came from

def test_nothing_is_added_twice(tmp_path):
    f = _fresh(SRC, tmp_path)
    add_param_docs([f]); once = f.__doc__
    add_param_docs([f])
    assert f.__doc__ == once and once.count('Args:') == 1

def test_a_docstring_that_describes_a_parameter_keeps_its_words(tmp_path):
    src = SRC.replace('Over two paragraphs."""', 'Args:\n        a: said in the docstring\n    """')
    f = _fresh(src, tmp_path)
    add_param_docs([f])
    assert f.__doc__.count('Args:') == 2 or f.__doc__.count('a: ') == 1
    assert 'a: the first' not in f.__doc__ and 'a: said in the docstring' in f.__doc__ and 'b: the second' in f.__doc__

def test_a_comment_over_lines_stays_one_entry(tmp_path):
    src = "def f(\n    a: int,  # first line\n    # more\n) -> None:\n    'x'\n"
    f = _fresh(src, tmp_path)
    d = func_docs(f).comments.get('a')
    add_param_docs([f])
    assert func_docs(f).doc_params.get('a') == d

def test_a_function_without_source_is_left_alone_and_warns_nothing():
    ns: dict = {}
    exec("def g(a: int): 'doc'\n", ns)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        add_param_docs([ns['g']])
    assert ns['g'].__doc__ == 'doc'

def test_importing_funccall_warns_nothing():
    r = subprocess.run([sys.executable, '-W', 'error', '-c', 'import funccall, funccall.mcp'], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr

def test_parameters_are_read_in_the_signatures_order():
    "The names `add_param_docs` reads off a function's code are its signature's, in order, `self` left out"
    from funccall.core._helpdoc import _params
    def f(a, /, b, *args, c, d=1, **kw): pass
    def g(*, c, **k): pass
    for fn in [f, g, *(f for _, f in _exports())]:
        want = [p for p in inspect.signature(fn).parameters]
        assert _params(fn) == (want[1:] if want[:1] in (['self'], ['cls']) else want), fn

CLASSES = '''
import dataclasses

@dataclasses.dataclass
class Point:
    "A point"
    x: int  # across
    y: int = 0  # up

class Plain:
    def __init__(
        self,
        a: int,  # the a
    ): self.a = a
'''

def test_nothing_is_added_twice_to_a_class(tmp_path):
    "A class's `Docs` are cached from before its section was added: a second pass must still add none"
    (tmp_path / 'hd_classes.py').write_text(CLASSES)
    sys.path.insert(0, str(tmp_path))
    try: import hd_classes as m
    finally: sys.path.remove(str(tmp_path))
    add_param_docs([m.Point, m.Plain]); once = (m.Point.__doc__, m.Plain.__doc__)
    add_param_docs([m.Point, m.Plain])
    assert (m.Point.__doc__, m.Plain.__doc__) == once and all(d.count('Args:') == 1 for d in once)
    assert 'x: across' in once[0] and 'a: the a' in once[1]

def test_reloading_funccall_adds_no_second_section():
    code = ("import importlib, funccall\nimportlib.reload(funccall)\n"
            "print([o.__name__ for o in (funccall.Tool, funccall.Toolbox, funccall.ToolCallStream, funccall.call_func) if o.__doc__.count('Args:') != 1])")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == '[]', (r.stdout, r.stderr)
