"""Descriptions of tools, parameters and fields, from source comments and docstrings.

A parameter's description is found in this order, first wins (the schema module adds the middle step):
1. its docments `# comment`: on the parameter's line, or on the comment lines just above it;
2. `Annotated[T, "description"]` metadata, or pydantic's `Field(description=...)`;
3. its entry in the docstring's parameter section (Google `Args:`, NumPy `Parameters`, Sphinx `:param x:`).

When a docstring's parameter section is used, the tool description drops that section and keeps the rest.
Source is read through `linecache`, so it is read once per file; a function's signature is parsed on its
own, a file's classes once per file. Functions without source (`exec`, lambdas in a REPL, C functions) still
get descriptions from their docstring.
"""
from __future__ import annotations

import ast, inspect, linecache, re, textwrap, weakref
from typing import NamedTuple

__all__ = ['Docs', 'func_docs', 'class_docs', 'doc_text']

class Docs(NamedTuple):
    params: dict            # name -> description
    returns: str | None     # the return annotation's comment
    description: str        # the docstring, less a parameter section that `params` took descriptions from
    doc_returns: str | None = None  # the docstring's own returns section, kept in `description`

# A comment starts at the first `#` outside a string literal: group 1 is the code, group 2 the comment
_comment_re = re.compile(r'''^((?:[^'"#]|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")*)#(.*)$''')

def _comment(line: str) -> str | None:
    if '#' not in line: return None
    m = _comment_re.match(line)
    return m[2].strip() if m else None

def _code(line: str) -> str:
    m = _comment_re.match(line) if '#' in line else None
    return m[1] if m else line

def _source_lines(obj) -> list[str]:
    code = getattr(obj, '__code__', None)
    fn = code.co_filename if code is not None else getattr(inspect.getmodule(obj), '__file__', None)
    if not fn: return []
    return linecache.getlines(fn, getattr(obj, '__globals__', None))

def _param_comments(lines: list[str], locs: dict, top: int) -> dict:
    "Comments for parameters at `locs` (line number -> name), on their line or in a block just above it below line `top`"
    res = {}
    for ln, nm in locs.items():
        c = _comment(lines[ln - 1])
        if c is None:  # comment lines above it, up to the previous parameter
            above, i = [], ln - 1
            while i > top and i not in locs and (s := lines[i - 1].strip()).startswith('#'):
                above.append(s[1:].strip()); i -= 1
            c = '\n'.join(reversed(above)) or None
        if c is not None: res[nm] = c
    return res

# --- functions: parse the signature alone --------------------------------------------------------------

_defline_re = re.compile(r'^\s*(?:async\s+)?def\s')
_sig_end_re = re.compile(r'\)\s*(?:->[^#]*)?:')  # where a signature may close: `):` or `) -> T:`

def _signature_node(lines: list[str], start: int):
    "The `FunctionDef` of the signature that starts at or after line `start` (1-based), and its first line"
    i = start - 1
    while i < len(lines) and not _defline_re.match(lines[i]): i += 1  # skip decorators
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

def _fn_comments(f) -> dict:
    "docments comments of function `f`, by parameter name, with 'return' for the return annotation"
    code = getattr(f, '__code__', None)
    if code is None or code.co_name == '<lambda>': return {}
    lines = _source_lines(f)
    if len(lines) < code.co_firstlineno: return {}
    node, first = _signature_node(lines, code.co_firstlineno)
    if node is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != code.co_name: return {}
    a = node.args
    locs = {}
    for arg in (*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg):
        if arg is not None: locs[first + arg.lineno] = arg.arg  # a later parameter on the same line wins, as in docments
    if node.returns is not None: locs.setdefault(first + node.returns.lineno, 'return')
    return _param_comments(lines, locs, first + 1)

# --- classes: parse each file once ---------------------------------------------------------------------

_class_index: dict = {}  # filename -> (lines, {qualname: ClassDef})

def _index_classes(fn: str, lines: list[str]) -> dict:
    hit = _class_index.get(fn)
    if hit is not None and hit[0] is lines: return hit[1]
    idx = {}
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
    _class_index[fn] = (lines, idx)
    return idx

def _class_comments(cls) -> dict:
    "Comments of the annotated fields in the body of class `cls`"
    mod = inspect.getmodule(cls)
    fn = getattr(mod, '__file__', None)
    if not fn: return {}
    lines = linecache.getlines(fn, mod.__dict__)
    node = _index_classes(fn, lines).get(cls.__qualname__)
    if node is None: return {}
    locs = {n.lineno: n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return _param_comments(lines, locs, node.lineno)

# --- docstrings ----------------------------------------------------------------------------------------

_section_hint = re.compile(r'^\s*(?:Args|Arguments|Parameters|Params|Attributes|Keyword Args|Keyword Arguments|Other Parameters)\s*:?\s*$|:param\s|:parameter\s|@param\s', re.M)

def doc_text(obj) -> str:
    "The cleaned docstring of `obj`, falling back from a callable object to its class, a class to its `__init__`"
    d = getattr(obj, '__doc__', None) if not isinstance(obj, type) else obj.__dict__.get('__doc__')
    if not d and isinstance(obj, type) and obj.__init__ is not object.__init__: d = getattr(obj.__init__, '__doc__', None)
    return inspect.cleandoc(d) if isinstance(d, str) else ''

def _docstring_params(doc: str) -> tuple[dict, str | None, str]:
    "Parameter and return descriptions from a docstring's sections, and the docstring without its parameter section"
    if not _section_hint.search(doc): return {}, None, doc
    import docstring_parser  # only docstrings with a parameter section pay for the import
    try: parsed = docstring_parser.parse(doc)
    except docstring_parser.ParseError: return {}, None, doc
    ps = {p.arg_name.lstrip('*'): p.description for p in parsed.params if p.description}
    if not ps: return {}, None, doc
    ret = parsed.returns.description if parsed.returns and not parsed.returns.is_generator else None
    return ps, ret, _drop_param_sections(doc, parsed.style)

_google_hdr = re.compile(r'^(\s*)(?:Args|Arguments|Parameters|Params|Attributes|Keyword Args|Keyword Arguments|Other Parameters)\s*:\s*$')
_numpy_hdr = re.compile(r'^\s*(?:Parameters|Other Parameters|Attributes)\s*$')
_numpy_rule = re.compile(r'^\s*-{3,}\s*$')
_sphinx_field = re.compile(r'^(\s*)[:@](?:param|parameter|arg|argument|key|keyword|type)\b')

def _drop_param_sections(doc: str, style) -> str:
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

# --- putting it together -------------------------------------------------------------------------------

_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

def _cached(key, make):
    try: return _cache[key]
    except KeyError: pass
    except TypeError: return make()  # not weakly referenceable
    res = _cache[key] = make()
    return res

def func_docs(f) -> Docs:
    "Descriptions of the parameters and return value of function `f` (a plain function, not a bound method)"
    def make():
        dps, dret, desc = _docstring_params(doc_text(f))
        cms = _fn_comments(f)
        return Docs({**dps, **{k: v for k, v in cms.items() if k != 'return'}}, cms.get('return'), desc, dret)
    return _cached(f, make)

def class_docs(cls, init=None) -> Docs:
    "Descriptions of the fields of class `cls`: body comments, or `init`'s parameter comments, then the docstring"
    def make():
        doc = doc_text(cls)
        dps, _, desc = _docstring_params(doc)
        cms = _fn_comments(init) if init is not None else _class_comments(cls)
        if init is not None and not dps: dps = _docstring_params(doc_text(init))[0]
        return Docs({**dps, **cms}, None, desc)
    return _cached(cls, make)
