"""funccall reads `# comments` as fastcore's `docments` does: every placement agrees with `docments` itself, and where
funccall's own (fast, linecache-based) reader finds no source, `docments` is asked before anything is given up."""
import dataclasses
import importlib
import linecache
import sys
import warnings

import pytest
from fastcore.docments import docments

from funccall import SchemaWarning, get_schema
from funccall.core._docs import _fn_comments, class_docs, func_docs

def same_line(
    a: int,      # on its line
    b: str = 'x',  # with a default
) -> int:        # the return's
    "Same line."

def above(
    # the comment above
    a: int,
    # two lines
    # of comment above
    b: int = 2,
) -> int:
    "Comments above."

def mixed(a: int, b: int = 1,  # the last on a shared line
          *,  # options
          c: bool = False,
          d: float = 0.5,  # d's
          ):
    "Several on a line, a bare star's comment, keyword-only."

def posonly(
    a: int,  # positional only
    /,
    b: int,  # either
    *args,   # more
    c: int = 0,  # keyword
    **kw,    # the rest
) -> None:   # nothing
    "Every kind of parameter."

def strings(
    a: str = '# not a comment',  # but this is
    b: str = "it's",  # quotes
) -> str:  # 'quoted' return
    "Hashes and quotes in defaults."

def undocumented(a: int, b: int = 1) -> int:
    "No comments at all."

async def coroutine(
    q: str,  # the query
) -> list:  # the hits
    "An async function."

def decorate(f): return f

@decorate
def decorated(
    x: int,  # after a decorator
) -> int:    # x
    "Decorated."

class Methods:
    def method(
        self,
        n: int,  # how many
    ) -> str:    # a method's return
        "A method."

@dataclasses.dataclass
class Fields:
    "A dataclass"
    sku: str  # the stock code
    # above the field
    qty: int = 1
    note: str = ''

FUNCTIONS = [same_line, above, mixed, posonly, strings, undocumented, coroutine, decorated, Methods.method]

def fastcore_says(obj) -> dict:
    "What `docments` finds: the names with a comment"
    return {k: v for k, v in docments(obj, returns=True).items() if v}

@pytest.mark.parametrize('f', FUNCTIONS, ids=[f.__qualname__ for f in FUNCTIONS])
def test_every_comment_placement_agrees_with_docments(f):
    d = func_docs(f)
    ours = {**d.comments, **({'return': d.returns} if d.returns else {})}
    ours.pop('self', None)
    theirs = fastcore_says(f)
    if 'args' in ours or 'kw' in ours: theirs = {k: v for k, v in docments(f, returns=True, args_kwargs=True).items() if v}
    assert ours == theirs

def test_class_fields_agree_with_docments():
    assert class_docs(Fields).comments == fastcore_says(Fields) == {'sku': 'the stock code', 'qty': 'above the field'}

MOVED = '''
def moved(
    a: int,  # the a
    # the b
    # pylint: disable=invalid-name
    b: int = 0,
) -> int:    # the result
    "A function whose file changed after it was imported"
    return a
'''

AFTER = '''
def after(b: int) -> int:
    "Another function, where the moved one used to start"
    return b
'''

def test_source_that_moved_is_found_through_docments(tmp_path, monkeypatch):
    "A file edited after import (lines above a tool deleted): funccall's reader misses it, fastcore's docments finds it"
    f = tmp_path / 'moving_tools.py'
    f.write_text('# a comment\n# and another\n# to be deleted\n' + MOVED + AFTER)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module('moving_tools')
    try:
        f.write_text(MOVED + AFTER)
        linecache.checkcache(str(f))
        assert _fn_comments(mod.moved) is None  # funccall's own reader: the lines at the function's first line are another's
        with warnings.catch_warnings():
            warnings.simplefilter('error', SchemaWarning)  # found, so no warning
            s = get_schema(mod.moved)
        assert s['input_schema']['properties']['a']['description'] == 'the a'
        assert s['input_schema']['properties']['b']['description'] == 'the b'  # (docments joins the block: its directive line is dropped)
        assert s['description'].endswith('- the result (type: integer)')
    finally: sys.modules.pop('moving_tools', None)

def test_no_source_anywhere_warns_once_per_schema():
    ns = {}
    exec('def made(a: int, b: int = 1) -> int:\n    "Made by exec."\n    return a', ns)
    with pytest.warns(SchemaWarning, match=r"made: no source found to read the `# comments` of a, b"):
        s = get_schema(ns['made'])
    assert s['input_schema']['properties']['a'] == {'description': '', 'type': 'integer'}

def test_the_fast_reader_of_signatures_agrees_with_parsing_them():
    "Where the regex reader of a signature answers, it finds each parameter on the line `ast` does: every function of real modules"
    import inspect
    from funccall.core import _docs, _types, inverse, schema
    from funccall.loop import tools
    import argparse, json, logging, textwrap
    answered = 0
    for mod in (argparse, json, logging, textwrap, _docs, schema, inverse, tools, sys.modules[__name__]):
        fns = [f for _, f in inspect.getmembers(mod, inspect.isfunction)]
        fns += [f for _, c in inspect.getmembers(mod, inspect.isclass) for _, f in inspect.getmembers(c, inspect.isfunction)]
        for f in fns:
            code, lines = f.__code__, _docs._source_lines(f)
            first = code.co_firstlineno - 1
            while first < len(lines) and not _docs._defline_re.match(lines[first]): first += 1
            if first >= len(lines) or _docs._defline_re.match(lines[first])[1] != code.co_name: continue
            fast = _docs._fast_locs(lines, first, [nm for nm, _, _ in _types.code_params(f)])
            if fast is not None: answered += 1; assert fast == _docs._ast_locs(lines, first, code.co_name), f.__qualname__
    assert answered > 500

def _ast_comments(f) -> dict:
    "The comments the slow, sure reader finds: the signature parsed with `ast`"
    from funccall.core import _docs
    code, lines = f.__code__, _docs._source_lines(f)
    first = code.co_firstlineno - 1
    while not _docs._defline_re.match(lines[first]): first += 1
    return _docs._param_comments(lines, _docs._ast_locs(lines, first, code.co_name), first)

def _line_reader(f):
    "What the line-by-line reader answers for `f` (`None`: not its layout)"
    from funccall.core import _docs, _types
    code, lines = f.__code__, _docs._source_lines(f)
    first = code.co_firstlineno - 1
    while first < len(lines) and not _docs._defline_re.match(lines[first]): first += 1
    if first >= len(lines) or _docs._defline_re.match(lines[first])[1] != code.co_name: return None  # not where its code says
    return _docs._line_comments(lines, first, [nm for nm, _, _ in _types.code_params(f)])

def test_the_line_reader_agrees_with_parsing_on_real_modules():
    "Where the line-by-line reader of docments' layout answers, it finds the comments `ast` does: every function of real modules"
    import inspect
    from funccall.core import _docs, inverse, schema
    from funccall.loop import tools
    from funccall import toolsets
    import argparse, json, logging, textwrap
    answered = 0
    for mod in (argparse, json, logging, textwrap, _docs, schema, inverse, tools, toolsets, sys.modules[__name__]):
        fns = [f for _, f in inspect.getmembers(mod, inspect.isfunction)]
        fns += [f for _, c in inspect.getmembers(mod, inspect.isclass) for _, f in inspect.getmembers(c, inspect.isfunction)]
        for f in fns:
            if getattr(f, '__code__', None) is None or inspect.getsourcefile(f) is None: continue
            if (ours := _line_reader(f)) is not None: answered += 1; assert ours == _ast_comments(f), f.__qualname__
    assert answered > 50

# Layouts that look like docments' one-parameter-a-line but are not: each must be read as `ast` reads it
HOSTILE = '''
def continued(
    a: Literal[
    'b'],  # not b's: a's annotation goes on
    b: int,  # b's
):
    "An annotation over two lines whose second starts like a parameter."

def default_on_next(
    a: int = x +
    b,  # the default of a, going on
    b: int = 2,  # b's
):
    "A default over two lines."

def lambda_default(
    a=lambda b, c: 0,  # a's
    b: int = 1,  # b's
    c: int = 2,  # c's
) -> int:  # the return
    "A comma at the top level of a default."

def strings_with_brackets(
    a: str = "(",  # an open paren in a string
    b: str = '#',  # a hash in a string
    c: str = "]'[",  # mixed
):
    "Strings that hold brackets, hashes and quotes."

def triple(
    a: str = """x""",  # a one-line triple-quoted default
    b: str = """
    c: int,  # inside the string
    """,
    c: int = 3,  # c's own
):
    "A string over three lines holding what looks like a parameter."

def shared(
    a: int, b: int,  # the line of two
    c: int,  # c's
):
    "Two parameters on one line."

def comment_between(
    a: int,  # a's
    # above b
    b: int,
):
    "A comment line between parameters."

def star(
    a: int,  # a's
    *,
    b: int,  # b's
):
    "A bare star."

def deep(
    a: dict[str, list[dict[str, tuple[int, list[int]]]]],  # deeper than the line reader's brackets
    b: int,  # b's
):
    "Brackets nested five deep."

def closes_on_last(
    a: int,  # a's
    b: int = 2) -> int:  # b's, or the return's
    "The signature closes on the last parameter's line."

def ret_two_lines(
    a: int,  # a's
) -> dict[
    str, int]:  # the return, on its second line
    "A return annotation over two lines."

def tabs(
	a: int,	# tabbed
	*args: int,  # the rest
	**kw: str,  # the keywords
):
    "Tabs and starred parameters."

def backslash(
    a: int = \\
        1,  # a's default continued
    b: int = 2,  # b's
):
    "A backslash continuation."

def comment_on_def(  # the first one's, as docments reads it
    a: int,
    b: int,  # b's
):
    "The `def` line's comment describes the first parameter, which has none of its own."

def directive_below_def(  # a's again
    a: int,  # noqa
    b: int,  # b's
):
    "Only a directive on the first parameter's line: the `def` line's comment is its."

def comment_on_def_return(  # the return's
) -> int:
    "No parameters: the `def` line's comment is the return's."

def hash_in_triple(
    a: int,  # a's
    b: str = """x"#y""",
    c: str = \'\'\'x'#y\'\'\'
):
    "A '#' in a one-line triple-quoted string that holds a quote: no comment."

def directives(
    a: int,  # type: ignore
    b: int,  # noqa: E501
    c: int,  # the c  # pragma: no cover
    d: int,  # no, not a directive
):
    "Directive comments."
'''

def test_the_line_reader_reads_hostile_layouts_as_parsing_does(tmp_path, monkeypatch):
    (tmp_path / 'hostile_layouts.py').write_text('from typing import Literal\nx = b = 1\n' + HOSTILE)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module('hostile_layouts')
    try:
        import inspect
        fns = [f for _, f in inspect.getmembers(mod, inspect.isfunction) if f.__module__ == 'hostile_layouts']
        assert len(fns) == 18
        for f in fns:
            ours = _line_reader(f)
            assert ours is None or ours == _ast_comments(f), f.__name__
            assert _fn_comments(f) == _ast_comments(f), f.__name__  # and whatever reader answers, the comments are right
        assert _line_reader(mod.tabs) == {'a': 'tabbed', 'args': 'the rest', 'kw': 'the keywords'}
        assert _line_reader(mod.strings_with_brackets) == {'a': 'an open paren in a string', 'b': 'a hash in a string', 'c': 'mixed'}
        assert _line_reader(mod.directives) == {'c': 'the c', 'd': 'no, not a directive'}
        assert _line_reader(mod.comment_on_def) == _fn_comments(mod.comment_on_def) == {'a': "the first one's, as docments reads it", 'b': "b's"}
        assert _line_reader(mod.directive_below_def) == {'a': "a's again", 'b': "b's"}
        assert _line_reader(mod.comment_on_def_return) == {'return': "the return's"}
        assert _line_reader(mod.hash_in_triple) == _fn_comments(mod.hash_in_triple) == {'a': "a's"}
        assert _fn_comments(mod.continued) == {'b': "b's"}  # the second line of a's annotation describes nothing
        assert _fn_comments(mod.default_on_next) == {'b': "b's"} and _fn_comments(mod.triple) == {'a': 'a one-line triple-quoted default', 'c': "c's own"}
    finally: sys.modules.pop('hostile_layouts', None)

def test_the_line_reader_takes_linear_time_on_absurd_lines():
    "Its patterns don't backtrack: a 200,000-character line of brackets, quotes (triple ones too) or commas is refused in bounded time"
    import time
    from funccall.core import _docs
    for bad in ('[' * 100_000 + ']' * 99_999, "'" + 'a\\' * 100_000, '(' + "'x'," * 50_000, 'a: ' + '[(' * 50_000 + '#',
                "'''" + "x'" * 100_000, "a = " + "'''x''' " * 30_000 + "'#", '"' * 200_001 + '#', "'''" + "\\'" * 100_000 + "''"):
        lines = ['def f(\n', '    ' + bad + '\n', ')\n']
        t = time.process_time()
        assert _docs._line_comments(lines, 0, ['a']) is None
        _docs._comment(bad), _docs._fast_locs(lines, 0, ['a'])  # the readers of a line's comment and of the signature's names too
        assert time.process_time() - t < 0.5, bad[:20]

def test_the_line_readers_patterns_stay_small():
    "Compiling them is part of `import funccall`: 26 KB of pattern (three bracket kinds a level) cost it 30 ms each"
    from funccall.core import _docs
    assert len(_docs._param_line_re.pattern) < 2000 and len(_docs._close_line_re.pattern) < 2000

def test_the_line_reader_reads_every_bracket_kind_nested_as_ast_does(tmp_path, monkeypatch):
    src = ("def f(\n    a: dict[str, tuple[int, list[str]]] = {'k': (1, [2])},  # the a\n"
           "    b: 'list[str]' = ('(', ']', '{'),  # the b\n) -> dict[str, list[int]]:  # the return\n    pass\n")
    (tmp_path / 'nested_kinds.py').write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        f = importlib.import_module('nested_kinds').f
        assert _line_reader(f) == {'a': 'the a', 'b': 'the b', 'return': 'the return'}
    finally: sys.modules.pop('nested_kinds', None)
