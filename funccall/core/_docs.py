"""Descriptions of tools, parameters and fields, from source comments and docstrings.

A parameter's description is found in this order (the schema module adds the second step):
1. its docments `# comment`: on the parameter's line, or on the comment lines just above it; a comment that is a
   tool directive (`# type: ignore`, `# noqa`, `# pragma: no cover`, ...) is none, and a trailing one is cut;
2. `Annotated[T, "description"]` metadata, or pydantic's `Field(description=...)`;
3. a class field's attribute docstring (`a: int` and a string on the line after it);
4. its entry in the docstring's parameter section (Google `Args:`, NumPy `Parameters`, Sphinx `:param x:`, Epydoc
   `@param x:`), whatever other sections the docstring holds.
The first of 1-3 found is the source's own; the docstring's entry is added after it when it says more (`joined`), so
neither is lost: an `Annotated` text and an `Args:` entry that say different things are both kept, in this order.

When a docstring's parameter section is used, the tool description drops that section and keeps the rest.
Source is read through `linecache`, so it is read once per file; a function's signature is parsed on its
own, a file's classes once per file. Functions without source (`exec`, lambdas in a REPL, C functions) still
get descriptions from their docstring.
"""
from __future__ import annotations

import ast, dataclasses, inspect, linecache, re, textwrap, warnings, weakref
from typing import NamedTuple

from ._types import code_params
from ._warnings import SchemaWarning, caller_level

__all__ = ['Docs', 'func_docs', 'class_docs', 'doc_text', 'undirected', 'joined']

class Docs(NamedTuple):
    comments: dict[str, str]    # name -> its docments comment
    doc_params: dict[str, str]  # name -> its description in the docstring's parameter section
    returns: str | None     # the return annotation's comment
    description: str        # the docstring, less the parameter section `doc_params` came from
    doc_returns: str | None = None  # the docstring's own returns section, kept in `description`
    only_sections: bool = False     # the docstring is parameter sections alone: documented, with no description left

# A comment starts at the first `#` outside a string literal: group 1 is the code, group 2 the comment
# (a triple quote opens a triple-quoted string, never an empty one and another: `'''x'#y'''` holds no comment. The two
# kinds never start at one place, so a text is read one way only)
_sq = r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''|'(?!'')[^'\\]*(?:\\.[^'\\]*)*'"
_dq = _sq.replace("'", '"')
_comment_re = re.compile(rf"""^([^'"#]*(?:(?:{_sq}|{_dq})[^'"#]*)*)#(.*)$""")

def _comment(line: str) -> str | None:
    "The comment on `line` less its tool directives ('' when it is only directives), or `None` when it has none"
    i = line.find('#')
    if i < 0: return None
    if "'" not in line and '"' not in line: return undirected(line[i + 1:])  # no string the '#' could be in
    m = _comment_re.match(line)
    return undirected(m[2]) if m else None

# Comments that speak to a tool (a type checker, linter, formatter, coverage), never to a reader: `# type: ignore`,
# and the linters', formatters' and coverage's own (each one '#' segment of a comment)
# (a tool named by an ordinary word, `black` or `coverage`, counts only with its colon: `# coverage radius` describes)
_directive_re = re.compile(r'(?:(?:noqa|nosec|lgtm|nolint|noinspection)\b|pyre-(?:ignore|fixme)\b|pragma:|pragma\s+no\s*(?:cover|branch)\b'
                           r'|(?:fmt|pylint|mypy|pyright|ruff|isort|flake8|yapf|black|pytype|coverage|cspell|codespell|spell-checker)\s*:)', re.I)
_type_re = re.compile(r'type\s*:\s*(.*)$', re.S)
_MAX_TYPE_COMMENT = 500  # a longer `type:` comment is read as a description (the parser recurses, or runs out of memory, on `a+a+...`)

def _is_directive(seg: str) -> bool:
    "Whether the comment segment `seg` is a tool directive: a named tool's, or a PEP 484 `type:` comment (`type: ignore`, `type: List[int]`)"
    seg = seg.strip()
    if _directive_re.match(seg): return True
    if not (m := _type_re.match(seg)): return False
    rest = m[1].strip()
    if rest.startswith('ignore'): return True
    if len(rest) > _MAX_TYPE_COMMENT: return False  # prose, and the parser would recurse through it
    try: tree = ast.parse(re.sub(r'^\(.*?\)\s*->\s*', '', rest) or '...', mode='eval')  # a type, or a signature's `(int, str) -> bool`
    except (SyntaxError, ValueError, RecursionError, MemoryError): return False  # `type: the kind of fruit` describes
    return all(_type_like(n) for n in ast.walk(tree.body))  # `type: daily or weekly` parses, and describes

_BUILTIN_TYPES = {'int', 'str', 'float', 'bool', 'bytes', 'list', 'dict', 'set', 'tuple', 'frozenset', 'object', 'type', 'complex'}

def _type_like(n: ast.AST) -> bool:
    "Whether node `n` of a parsed `type:` comment is what a type is made of: `List[int]`, `str | None`, `os.PathLike`"
    if isinstance(n, ast.Name): return n.id in _BUILTIN_TYPES or n.id[:1].isupper()
    if isinstance(n, ast.Constant): return n.value is None or n.value is Ellipsis or isinstance(n.value, str)
    return isinstance(n, (ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.BinOp, ast.BitOr, ast.Load))

def undirected(
    c:str,  # a comment's text, after its first '#'
) -> str:   # `c` without the segments that are tool directives: '' when nothing else is left
    "Comment `c` as a description: `the a  # type: ignore` is 'the a', `noqa: F821` is ''"
    low = c.lower()  # every directive holds one of these (most comments none: read at once)
    if ':' not in c and 'no' not in low and 'lgtm' not in low and 'pyre' not in low: return c.strip()
    segs = c.split('#')
    if not any(map(_is_directive, segs)): return c.strip()  # (`the #1 choice` stays as written)
    return ' # '.join(x.strip() for x in segs if x.strip() and not _is_directive(x))

def _code(line: str) -> str:
    m = _comment_re.match(line) if '#' in line else None
    return m[1] if m else line

def _source_lines(obj) -> list[str]:
    code = getattr(obj, '__code__', None)
    fn = code.co_filename if code is not None else getattr(inspect.getmodule(obj), '__file__', None)
    if not fn: return []
    return linecache.getlines(fn, getattr(obj, '__globals__', None))

def _param_comments(lines: list[str], locs: dict, top: int) -> dict:
    """Comments for parameters at `locs` (line number -> name), on their line or in a block just above it below line `top`.
    As in docments, the block above is every line with a comment up to the previous parameter: comment lines, and
    lines of code such as `*,  # options` that hold no parameter of their own."""
    res = {}
    for ln, nm in locs.items():
        c = _comment(lines[ln - 1])
        if not c:  # none, or only a directive: the comment lines above describe it
            above, i = [], ln - 1
            while i > top and i not in locs and (a := _comment(lines[i - 1])) is not None:
                if a: above.append(a)
                i -= 1
            c = '\n'.join(reversed(above))
        if c: res[nm] = c
    return res

# --- functions: parse the signature alone --------------------------------------------------------------

_defline_re = re.compile(r'^\s*(?:async\s+)?def\s+(\w+)')
_sig_end_re = re.compile(r'\)\s*(?:->[^#]*)?:')  # where a signature may close: `):` or `) -> T:`

def _signature_node(lines: list[str], start: int):
    "The `FunctionDef` of the signature that starts at or after line `start` (1-based), and its first line"
    i = start - 1
    first, snippet = i, []
    for j in range(i, min(len(lines), i + 200)):
        snippet.append(lines[j])
        code = _code(lines[j]).rstrip()
        ends = code.endswith(':')
        if not (ends or _sig_end_re.search(code)): continue
        src = textwrap.dedent(''.join(snippet))
        try: tree = ast.parse(src + '\n pass\n' if ends else src)
        except SyntaxError: continue
        return tree.body[0], first
    return None, first

# A parameter name stands after `(`, `,` or at a line start, and before `:`, `=`, `,`, `)` or the line end
_cand_re = re.compile(r'[(,\n]\s*\**\s*([^\W\d]\w*)\s*(?=[:=,)\n])')

_line_str_re = re.compile(_sq.replace(r'\\]', r'\\\n]') + '|' + _dq.replace(r'\\]', r'\\\n]'))  # string literals within one line
_hash_re = re.compile(r'#[^\n]*')
_parens_re = re.compile(r'[()]')  # brackets inside the parentheses are balanced, so parentheses alone find the end

def _closing(code: str) -> int:
    "Where the parentheses opened by the first '(' in `code` close (just after the ')'), or -1"
    depth, i = 0, code.find('(')
    while i >= 0:
        depth += 1 if code[i] == '(' else -1
        if depth == 0: return i + 1
        m = _parens_re.search(code, i + 1)
        i = m.start() if m else -1
    return -1

# One line of a signature laid out as docments shows it: a parameter, its annotation and default closing every bracket
# they open (nested three deep at most), a comma, and its comment; and the line that closes the signature
_str1 = _line_str_re.pattern  # a string literal that closes on its line
_plain = r"""[^()\[\]{}'"#\n]*"""  # a run of code that is no bracket, quote or comment
def _nested(inner: str, plain: str = _plain) -> str:  # unrolled (a run, then an item and a run, ...): no backtracking
    # (any bracket closes any: in source that compiled, one line's brackets that nest and balance are pairs. One
    # alternative a level, not three, keeps the pattern 1 KB, not 26: compiling that cost `import funccall` 30 ms)
    return rf"""{plain}(?:(?:{_str1}|[(\[{{]{inner}[)\]}}]){plain})*"""
_in3 = _nested(_nested(_nested(_nested(''))))  # (the innermost holds no bracket)
def _outer(stop: str) -> str: return _nested(_in3, _plain.replace('#', '#' + stop))
_param_line_re = re.compile(rf"""[ \t]*\**[ \t]*([^\W\d]\w*)[ \t]*(?:[:=]{_outer(',')})?(,?)[ \t]*(?:#([^\n]*))?\n?""")
_close_line_re = re.compile(rf"""[ \t]*\)[ \t]*(->{_outer(':,')})?:[ \t]*(?:#([^\n]*))?\n?""")
_def_open_re = re.compile(r'[ \t]*(?:async[ \t]+)?def[ \t]+\w+[ \t]*\([ \t]*(?:#([^\n]*))?\n?')

def _line_comments(lines: list[str], first: int, names: list) -> dict | None:
    """The comments of a signature laid out as docments shows it, read line by line: `def f(` alone, then each parameter
    on a line of its own that closes every bracket it opens and ends with a comma (the last may not), then `)` or
    `) -> T:`. In the parentheses what follows a comma is a parameter, so a line that starts with the next name holds
    that parameter and no other, and its comment is the parameter's. The `def` line's comment is the first one's (the
    parameter's, else the return's) when that has none of its own, as docments reads the comment lines above it.
    `None` for any other layout (`_fast_locs` reads it)"""
    n = len(names)
    if first + n + 1 >= len(lines) or not (top := _def_open_re.fullmatch(lines[first])): return None
    res, above = {}, top[1] and undirected(top[1])
    for j, nm in enumerate(names):  # (every line but the last parameter's ends with its comma)
        if (m := _param_line_re.fullmatch(lines[first + 1 + j])) is None or m[1] != nm or not m[2] and j < n - 1: return None
        if (c := m[3] and undirected(m[3])) or (c := above): res[nm] = c
        above = None
    if (m := _close_line_re.fullmatch(lines[first + n + 1])) is None: return None
    if m[1] and ((c := m[2] and undirected(m[2])) or (c := above)): res['return'] = c  # the comment on the `-> T:` line is the return's
    return res

def _fast_locs(lines: list[str], first: int, names: list) -> dict | None:
    "Line -> parameter name, read off the signature's text by regex; `None` where that could be ambiguous"
    for size in (8, 200):
        code = ''.join(lines[first:first + size])
        if "'" in code or '"' in code: code = _line_str_re.sub('""', code)  # strings first: '#' may be in one
        if '#' in code: code = _hash_re.sub('', code)
        if (end := _closing(code)) >= 0: break
    else: return None
    want, found = set(names), {}
    for m in _cand_re.finditer(code, 0, end):
        if m[1] in want:
            if m[1] in found: return None
            found[m[1]] = m.start(1)
    if len(found) != len(want): return None
    line = lambda pos: first + 1 + code.count('\n', 0, pos)
    locs = {line(found[nm]): nm for nm in names}  # a later parameter on the same line wins, as in docments
    tail = code[end:code.find(':', end)]
    if '->' in tail: locs[line(end + tail.index('->'))] = 'return'  # the comment on the `-> T:` line is the return's
    return locs

def _ast_locs(lines: list[str], first: int, name: str) -> dict | None:
    "Line -> parameter name, from parsing the signature"
    node, _ = _signature_node(lines, first + 1)
    if node is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != name: return None
    a, locs = node.args, {}
    for arg in (*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg):
        if arg is not None: locs[first + arg.lineno] = arg.arg
    if node.returns is not None: locs[first + node.returns.lineno] = 'return'
    return locs

def _fn_comments(f) -> dict | None:
    "docments comments of function `f`, by parameter name, with 'return' for the return annotation; `None`: no source found"
    code = getattr(f, '__code__', None)
    if code is None or code.co_name == '<lambda>': return {}
    lines = _source_lines(f)
    first = code.co_firstlineno - 1
    while first < len(lines) and not (m := _defline_re.match(lines[first])): first += 1  # skip decorators
    if first >= len(lines) or m[1] != code.co_name: return None  # type: ignore[index]  # pyright: ignore[reportPossiblyUnboundVariable]  # in the lines: matched
    names = [nm for nm, _, _ in code_params(f)]
    if (cms := _line_comments(lines, first, names)) is not None: return cms
    locs = _fast_locs(lines, first, names)
    if locs is None: locs = _ast_locs(lines, first, code.co_name)
    return _param_comments(lines, locs, first) if locs else {}  # the `def` line's comment may belong to the first parameter

# --- classes: parse each file once ---------------------------------------------------------------------

_class_index: dict = {}  # filename -> (lines, {qualname: ClassDef})

def _index_classes(fn: str, lines: list[str]) -> dict:
    hit = _class_index.get(fn)
    if hit is not None and hit[0] is lines: return hit[1]
    idx: dict[str, ast.ClassDef] = {}
    def walk(body, prefix):
        for n in body:
            if isinstance(n, ast.ClassDef):
                qn = prefix + n.name
                idx.setdefault(qn, n)
                walk(n.body, qn + '.')
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)): walk(n.body, prefix + n.name + '.<locals>.')
            elif isinstance(n, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                walk(n.body, prefix); walk(getattr(n, 'orelse', []), prefix)
    try: walk(ast.parse(''.join(lines)).body, '')
    except (SyntaxError, ValueError): pass
    if len(_class_index) > 1000: _class_index.clear()  # notebook cells and code-tool runs are files too: don't keep them all
    _class_index[fn] = (lines, idx)
    return idx

def _candidate_files(cls):
    "Files that may hold the source of class `cls`, most likely first"
    mod = inspect.getmodule(cls)
    if (fn := getattr(mod, '__file__', None)): yield fn, getattr(mod, '__dict__', None)
    for v in vars(cls).values():  # a method's code knows its file, in a notebook cell too
        code = getattr(getattr(v, '__func__', v), '__code__', None)
        if code is not None and not code.co_filename.startswith('<string'): yield code.co_filename, None
    if mod is None or mod.__name__ == '__main__':  # notebook cells, newest first
        yield from ((k, None) for k in reversed(list(linecache.cache)) if _is_cell(k))

def _is_cell(fn: str) -> bool:
    "Whether `fn` names source that lives only in `linecache`: `<...>` (IPython, execnb), or ipykernel's `/tmp/ipykernel_1/2.py`"
    return fn.startswith('<') or len(v := linecache.cache.get(fn, ())) == 4 and v[1] is None  # type: ignore[misc]  # (kept with no mtime)

def _class_node(cls):
    """The lines of the file defining class `cls`, and its `ClassDef`; `(None, None)` where no source is found, `([],
    None)` where its module's source was read and has no such class (one made at run time: `make_dataclass`, `TypedDict('T', {...})`)"""
    own = set(vars(cls).get('__annotations__', {}))
    read = False
    for fn, glb in _candidate_files(cls):
        lines = linecache.getlines(fn, glb)
        if not lines or (_is_cell(fn) and f'class {cls.__name__}' not in ''.join(lines)): continue
        read = read or not _is_cell(fn)
        node = _index_classes(fn, lines).get(cls.__qualname__)
        if node is not None and own == {n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}:
            return lines, node
    return ([] if read else None), None

def _class_comments(cls) -> dict | None:
    "Comments of the annotated fields in the body of class `cls`; `None`: no source found"
    lines, node = _class_node(cls)
    if node is None: return None if lines is None else {}
    locs = {n.lineno: n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return _param_comments(lines, locs, node.lineno)  # pyright: ignore[reportArgumentType]  # a class node comes with its lines

def _class_attribute_docs(cls) -> dict:
    "The attribute docstrings in the body of class `cls`"
    _, node = _class_node(cls)
    return {} if node is None else _attribute_docs(node)

def _attribute_docs(node: ast.ClassDef) -> dict:
    "Attribute docstrings in a class body (PEP 257, as Sphinx and pydantic read them): `a: int` then `\"\"\"The first\"\"\"`"
    res, body = {}, node.body
    for n, nxt in zip(body, body[1:]):
        if (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str) and (d := inspect.cleandoc(nxt.value.value))):
            res[n.target.id] = d
    return res

# --- docstrings ----------------------------------------------------------------------------------------

_section_hint = re.compile(r'^\s*(?:Args|Arguments|Parameters|Params|Attributes|Keyword Args|Keyword Arguments|Other Parameters|Returns?|Yields?)'
                           r'\s*:?\s*$|:param\s|:parameter\s|@param\s|:returns?:|@returns?\s', re.M | re.I)

def _is_generated_doc(cls, d: str) -> bool:
    "Whether `d` is the `Cls(a: int, ...)` text `dataclass` writes for a class without a docstring"
    return d.startswith(cls.__name__ + '(') and d.endswith(')') and '\n' not in d

def doc_text(obj) -> str:
    "The cleaned docstring of `obj`, falling back from a callable object to its class, a class to its `__init__`"
    if not isinstance(obj, type): d = getattr(obj, '__doc__', None)
    else:
        d = vars(obj).get('__doc__')
        if d and dataclasses.is_dataclass(obj) and _is_generated_doc(obj, d): d = None
        if not d and '__init__' in vars(obj): d = getattr(obj.__init__, '__doc__', None)  # type: ignore[misc]
    if not isinstance(d, str): return ''
    return inspect.cleandoc(d) if '\n' in d else d.strip()

def _docstring_params(doc: str) -> tuple[dict, str | None, str]:
    "Parameter and return descriptions from a docstring's sections, and the docstring without its parameter section"
    if not _section_hint.search(doc): return {}, None, doc
    orig, doc = doc, _indent_opening_section(_flush_sections(doc))
    import docstring_parser  # only docstrings with a parameter section pay for the import
    from docstring_parser import DocstringStyle as S
    ps: dict[str, str]
    ps, ret = {}, None
    for style in (S.GOOGLE, S.NUMPYDOC, S.REST, S.EPYDOC):  # each style's sections, so a docstring mixing them loses none
        # (after a blank first line: Google's parser takes a docstring's first line for its summary, even `Args:`)
        try: parsed = docstring_parser.parse('\n' + doc, style)
        except docstring_parser.ParseError: continue
        for p in parsed.params:
            if p.description: ps.setdefault(p.arg_name.lstrip('*'), p.description)
        if ret is None and parsed.returns: ret = parsed.returns.description or parsed.returns.type_name or ''
    return ps, ret, _drop_param_sections(doc) if ps else orig

# docstring-parser's Google sections: it finds a title only at the start of a line and spelled as here
_google_titles = {t.lower(): t for t in ('Args', 'Arguments', 'Parameters', 'Params', 'Attributes', 'Raises', 'Exceptions', 'Except',
                                         'Example', 'Examples', 'Returns', 'Yields')}
_title_re = re.compile(r'^([ \t]*)(' + '|'.join(_google_titles) + r')[ \t]*:[ \t]*$', re.I)

def _indent(ln: str) -> int: return len(ln) - len(ln.lstrip())

def _flush_sections(doc: str) -> str:
    """`doc` with each Google section docstring-parser would miss moved where it finds one: a title indented deeper than the
    summary (`    Args:` under a flush paragraph) or spelled in lower case (`args:`), when an indented block follows it.
    A section's block is its own text (a title-like line inside it too): each line is read once, so a docstring of
    titles nested ever deeper costs its length, not its length squared"""
    lines, i = doc.splitlines(), 0
    while i < len(lines):
        ln, i = lines[i], i + 1
        if not (m := _title_re.match(ln)) or (not m[1] and m[2] == _google_titles[m[2].lower()]): continue
        ind, j = len(m[1]), i
        while j < len(lines) and not lines[j].strip(): j += 1
        if j == len(lines) or _indent(lines[j]) <= ind: continue  # a line that reads as a title, with no entries under it
        lines[i - 1] = _google_titles[m[2].lower()] + ':'
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > ind):
            lines[j] = lines[j][min(ind, _indent(lines[j])):]
            j += 1
        i = j
    return '\n'.join(lines)

_any_hdr = re.compile(r'^[A-Z]\w*(?: \w+)?:\s*$')  # `Args:`, `Returns:`, `Keyword Args:`

def _indent_opening_section(doc: str) -> str:
    """`doc` with the body of a Google section that opens it indented: `Args:` on the opening quotes' line leaves its
    entries with no indent after `inspect.cleandoc`, where no parser sees them as the section's"""
    lines = doc.splitlines()
    if len(lines) < 2 or not _any_hdr.match(lines[0]) or not lines[1].strip() or lines[1][0].isspace(): return doc
    j = next((i for i in range(1, len(lines)) if _any_hdr.match(lines[i])), len(lines))
    return '\n'.join([lines[0], *('    ' + x if x.strip() else x for x in lines[1:j]), *lines[j:]])

_google_hdr = re.compile(r'^(\s*)(?:Args|Arguments|Parameters|Params|Attributes|Keyword Args|Keyword Arguments|Other Parameters)\s*:\s*$')
_numpy_hdr = re.compile(r'^\s*(?:Parameters|Other Parameters|Attributes)\s*$')
_numpy_rule = re.compile(r'^\s*-{3,}\s*$')
_sphinx_field = re.compile(r'^(\s*)[:@](?:param|parameter|arg|argument|key|keyword|type)\b')

def _drop_param_sections(doc: str) -> str:
    "`doc` without the parameter sections, whatever their style"
    lines, out, i = doc.splitlines(), [], 0
    while i < len(lines):
        ln = lines[i]
        if (m := _google_hdr.match(ln)):  # a Google section ends at the next line indented no deeper than its header
            ind, i = len(m[1]), i + 1
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > ind): i += 1
        elif _numpy_hdr.match(ln) and i + 1 < len(lines) and _numpy_rule.match(lines[i + 1]):
            i += 2  # a NumPy section ends where the next header (a line over a rule) starts
            while i < len(lines) and not (i + 1 < len(lines) and lines[i].strip() and _numpy_rule.match(lines[i + 1])): i += 1
        elif (m := _sphinx_field.match(ln)):
            ind, i = len(m[1]), i + 1
            while i < len(lines) and lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) > ind: i += 1
        else: out.append(ln); i += 1
    return re.sub(r'\n{3,}', '\n\n', '\n'.join(out)).strip()

def _said(d: str) -> str: return ' '.join(d.split()).rstrip('.').casefold()

def joined(
    first: str | None,  # the description the precedence puts first (a comment, `Annotated`, `Field`, an attribute docstring)
    then: str | None,   # the docstring's entry for the same parameter
) -> str:               # both, each once: one that the other holds (case, spacing and a final '.' aside) is left out
    "One description from two of one parameter, keeping what each adds: `first`, then what `then` says beyond it"
    if not first or not then: return first or then or ''
    a, b = _said(first), _said(then)
    if b in a: return first
    if a in b: return then
    first = first.rstrip()
    return f"{first}{'' if first[-1] in '.!?:;' else '.'} {then.lstrip()}"

# --- putting it together -------------------------------------------------------------------------------

_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

def _cached(key, make):
    try: return _cache[key]
    except KeyError: pass
    except TypeError: return make()  # not weakly referenceable
    res = _cache[key] = make()
    return res

def _docments(obj) -> dict | None:
    """fastcore's `docments` of `obj`, for where funccall's reader found no source: it reaches source through `inspect`
    and finds source that moved; `None` when it finds none either"""
    from fastcore.docments import docments  # (imported here: only objects without source a file or cell holds pay for it)
    try: d = docments(obj, returns=True)
    except Exception: return None  # no source, or source it can't parse: what a reader of comments can't help
    # (a block of comment lines comes joined: each line is read as the comment it was, so a directive's line drops out)
    return {k: c for k, v in d.items() if isinstance(v, str) and (c := '\n'.join(x for ln in v.splitlines() if (x := undirected(ln))))}

def _comments(obj, own: dict | None, fields) -> dict:
    "`own` (funccall's reader), else fastcore's `docments`; a `SchemaWarning` when neither finds the source of `obj`'s `fields`"
    if own is not None: return own
    if (cms := _docments(obj)) is not None: return cms
    if fields:
        warnings.warn(f"{getattr(obj, '__qualname__', obj)!s:.80}: no source found to read the `# comments` of {', '.join(fields)[:120]}; "
                      "describe them with `Annotated[T, 'what it is']` or the docstring's `Args:` section instead (code typed at a "
                      "prompt, in `python -c` or piped to Python keeps no source to read comments from)", SchemaWarning, stacklevel=caller_level())
    return {}

def func_docs(f) -> Docs:
    "Descriptions of the parameters and return value of function `f` (a plain function, not a bound method); not cached: `get_schema` is"
    dps, dret, desc = _docstring_params(doc_text(f))
    own = _fn_comments(f)  # (the names a warning would give are read only when it may be given)
    cms = dict(_comments(f, own, [nm for nm, _, _ in code_params(f)] if own is None and not dps else ()))
    return Docs(cms, dps, cms.pop('return', None), desc, dret, bool(dps) and not desc)

def _own_classes(cls) -> list:
    "`cls` and the bases whose fields it inherits, base first, leaving out library bases such as `BaseModel`"
    return [k for k in reversed(cls.__mro__) if '__annotations__' in vars(k) and k.__module__.split('.')[0] not in _library_modules]

_library_modules = {'builtins', 'typing', 'typing_extensions', 'pydantic', 'pydantic_core'}

def class_docs(cls, init=None) -> Docs:
    "Descriptions of the fields of class `cls` (body comments, inherited ones too), or of `init`'s parameters"
    def make():
        dps, _, desc = _docstring_params(doc_text(cls))
        if init is not None and not inspect.isfunction(init): cms = {}  # `object.__init__`, a C type's: no source, no comments
        elif init is not None:
            if not dps: dps = _docstring_params(doc_text(init))[0]
            cms = dict(_comments(init, _fn_comments(init), [nm for nm, _, _ in code_params(init)][1:] if not dps else ()))
            cms.pop('return', None)
        else:
            cms, attrs = {}, {}
            for k in _own_classes(cls):
                cms.update(_comments(k, _class_comments(k), list(vars(k)['__annotations__']) if not dps else ()))
                attrs.update(_class_attribute_docs(k))
            if attrs: return Docs(cms, {**dps, **attrs}, None, desc, None, bool(dps) and not desc)  # nearer the field than `Attributes:`
        return Docs(cms, dps, None, desc, None, bool(dps) and not desc)
    return _cached(cls, make)
