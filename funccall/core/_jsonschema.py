"""Checking JSON values against a JSON Schema, with JSON Schema's own semantics: what a built tool checks its arguments with.

    v = compile_schema(tool_input_schema, where="Tool 'search'")   # ValueError for a malformed schema
    v.is_valid({'query': 'x'})                                      # True: the fast path for a good call
    v.problems({'items': [{'sku': 5}]})                             # [Problem('items[0].sku', "expected a string, got 5")]

API (what `inverse.py` relies on; kept compatible):
  `compile_schema(schema, *, draft=None, where='', lazy=False) -> Validator`: the shape is checked at once (ValueError
  naming `where` and the JSON Pointer); the checks compile now, or with `lazy=True` on first use (then the warnings
  about keyword values come then too). `Validator.is_valid(value) -> bool`: generated on the first call and
  replaced by the generated function, so read `v.is_valid` at each call rather than keeping the first bound method.
  `Validator.problems(value, path='', limit=10) -> list[Problem]`: empty when valid. `Validator.expected`: the words
  for the whole schema. `Problem` is `funccall.core._inputs.Problem(path, message)`.

Why our own: no pure-Python, well-kept library checks draft 2020-12 (`jsonschema` needs the Rust `rpds-py`;
`fastjsonschema` knows drafts 4 to 7 only, without `prefixItems`, `$defs` or `unevaluated*`). This one compiles a
schema once into a tree of small closures, one per keyword group; `problems` walks that tree, and says what and
where. `is_valid`, the path every good call takes, is one generated Python function with the common keywords
(type, enum, const, numbers, lengths, patterns, items, properties, required, additionalProperties, `$ref`) inlined
six levels deep and anything else a call into the tree; generating it costs a few hundred µs once, on the first call.
The JSON Schema Test Suite runs through both paths, and a test checks that they agree.
A report (`problems`) walks the tree the first time. From a validator's second report on, generated code reports: a
function per schema node that writes out what the walk does for the common keywords (the same problems, in the same
order, in the same words, stopping at the same `limit`) and calls the walk's own code for any other; the corpus and
the JSON Schema Test Suite run through both, and a test checks that they report alike. Inside the walk, from the
second report of an object with a few properties on, generated code finds which of its keys fail.

Drafts: 2020-12 unless the schema's `$schema` (or `draft=`) says draft 4, 6 or 7, which get draft 7's rules (`$ref`
ignores its siblings, `items` as a list with `additionalItems`, `dependencies`, `definitions`). 2019-09 is read as
2020-12. A draft-7-style `items` list is honoured in 2020-12 schemas too, since servers send them.

What is enforced: every keyword of the validation and applicator vocabularies: type (an integer is a number with no
fraction; booleans are not numbers), enum and const (JSON equality: 1 == 1.0, true != 1), the object, array, string
and number keywords, allOf/anyOf/oneOf/not/if-then-else, `$ref` by JSON Pointer (`~0`, `~1`, %-escapes), by `$id`
and by `$anchor` within the document, recursive refs, boolean schemas, unevaluatedProperties and unevaluatedItems.
What is not (never a reason to refuse): `format`, `content*` (annotations, as 2020-12 says); `$dynamicRef` and
`$recursiveRef` (accept anything; the dynamic scope is not tracked); `$ref`s outside the document (never fetched).

Untrusted keyword values: a keyword whose value can't be right (`multipleOf: 0`, `minimum: '5'`, an unknown type
name, a `pattern` Python can't compile or with a `\\p{..}` other than `L` and `Nd`) is not enforced and raises a `SchemaWarning` at compile
time. Patterns are ECMA 262 read by Python's `re` (`\\d` and `\\w` are ASCII, `$` is the very end, `(?<name>`), searched,
not anchored. No pattern makes a check run long, whatever a server's schema holds (`_regex.py`): `re` has no timeout,
so it searches a string only as long as a bound on its backtracking allows (no limit for `^[a-z]+$`, whose bound grows
linearly; a few hundred characters for `\\s+$`; none for `(a+)+$` or `^(a?){28}a{28}$`), and a longer string goes to a
pure-Python automaton (a lazily built DFA: linear time, at most `_regex.STEPS` steps, 20-60 ms); a string it can't
finish in that (over 25,000 characters, or a pattern whose states keep changing) is not checked against the pattern.
The costly searches of one `is_valid` or `problems` call (and of a tool call's retries) share one budget,
`_regex.CHECK_STEPS`, so many strings or patterns can't add up; past it, strings go unchecked against such patterns.
A pattern no automaton can run (a backreference or lookaround) that `re` may search only strings under 100 characters
with is not enforced at all, with a warning.
A structural mistake (a list for `properties`, a string where a schema goes) is a
`ValueError` naming `where` and the place as a JSON Pointer. A `$ref` that points nowhere in the document warns and
accepts anything there.

Bounds: a check that needs more levels than the interpreter's stack allows (a value a few hundred levels deep, or a
schema nested as deep) is refused with a problem saying so, never a `RecursionError`; schemas of any depth compile
(the walk is iterative, parts deeper than 40 levels compile on first use); `problems` stops at `limit`. Python
values that are not JSON (a set, a datetime) match no JSON type: convert them first. A tuple is an array.
"""
from __future__ import annotations

import math, re, threading, warnings
from collections.abc import Callable
from typing import Any, NoReturn
from types import FunctionType
from decimal import Context, Decimal, InvalidOperation, localcontext
from urllib.parse import unquote, urldefrag, urljoin

from ._expect import expected
from ._regex import Automaton, budgeted, re_limit, re_rate, searcher
from ._inputs import Problem, short
from ._source import source_name
from ._warnings import SchemaWarning, caller_level

_new = tuple.__new__  # `_new(Problem, (path, message))`: a Problem without `Problem(...)`'s Python-level `__new__` (reports make many)

try: from re import _parser as _sre  # type: ignore[attr-defined]  # the stdlib's own regex parser, to find a pattern's anchor
except ImportError: import sre_parse as _sre  # Python 3.10

__all__ = ['compile_schema', 'Validator', 'key_path']

_ROOT = 'urn:funccall:root'  # the base URI of a document without `$id`
_EAGER = 40                  # schema levels compiled at once; deeper ones compile on first use
_ALL = None                  # "every key/item was evaluated", for unevaluated*

# --- JSON values in Python --------------------------------------------------------------------------------

def _is_str(v): return isinstance(v, str)
def _is_int(v): return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
def _is_num(v): return isinstance(v, (int, float)) and not isinstance(v, bool)
def _is_bool(v): return isinstance(v, bool)
def _is_null(v): return v is None
def _is_arr(v): return isinstance(v, (list, tuple))
def _is_obj(v): return isinstance(v, dict)
_TYPES = {'string': _is_str, 'integer': _is_int, 'number': _is_num, 'boolean': _is_bool, 'null': _is_null, 'array': _is_arr, 'object': _is_obj}

def _key(v):
    "A hashable key equal for JSON-equal values: 1 and 1.0 alike, true and 1 not"
    if isinstance(v, str): return v
    if v is None or isinstance(v, bool): return (v,)
    if isinstance(v, int): return ('n', v)
    if isinstance(v, float): return ('n', int(v)) if v.is_integer() else ('n', v)
    if isinstance(v, (list, tuple)): return ('a', tuple(_key(x) for x in v))
    if isinstance(v, dict): return ('o', frozenset((k, _key(x)) for k, x in v.items()))
    return ('?', id(v))  # not a JSON value: equal only to itself

def _true(v): return True
def _false(v): return False

def _all(fs: list):
    "One check that passes when every check in `fs` does"
    fs = [f for f in fs if f is not _true]
    if not fs: return _true
    if len(fs) == 1: return fs[0]
    if len(fs) == 2:
        a, b = fs
        return lambda v: a(v) and b(v)
    def check(v):
        for f in fs:
            if not f(v): return False
        return True
    return check

def key_path(path: str, k: Any) -> str:
    "`path` and then key `k`: `items[2].sku`, `headers['X-Id']`"
    if isinstance(k, str) and k.isidentifier(): return f'{path}.{k}' if path else k
    return f'{path}[{short(k, 40)}]'

# --- regular expressions ---------------------------------------------------------------------------------

# ECMA's \d and \w are ASCII, its \s also matches U+FEFF; Python's \d and \w are Unicode
_ECMA = {'d': '[0-9]', 'D': '[^0-9]', 'w': '[A-Za-z0-9_]', 'W': '[^A-Za-z0-9_]', 's': '[\\s\ufeff]', 'S': '[^\\s\ufeff]'}
_ECMA_IN_CLASS = {'d': '0-9', 'w': 'A-Za-z0-9_', 's': '\\s\ufeff'}
# the Unicode properties Python's `re` can spell: letters are word characters that are neither digits nor '_'
_PROPS = {'L': '[^\\W\\d_]', 'Letter': '[^\\W\\d_]', 'Nd': '\\d', 'digit': '\\d', 'Decimal_Number': '\\d'}
_NOT_PROPS = {'L': '[\\W\\d_]', 'Letter': '[\\W\\d_]', 'Nd': '\\D', 'digit': '\\D', 'Decimal_Number': '\\D'}

def _translate(p: str) -> str:
    "ECMA 262 pattern -> Python `re` pattern; raises ValueError for what Python can't read alike"
    out, i, in_class = [], 0, False
    while i < len(p):
        c = p[i]
        if c == '\\' and i + 1 < len(p):
            e = p[i + 1]
            if e in 'pP':
                j = p.find('}', i)
                spelled = (_PROPS if e == 'p' else _NOT_PROPS).get(p[i + 3:j]) if p[i + 2:i + 3] == '{' and j > 0 and not in_class else None
                if spelled is None: raise ValueError(f"the Unicode property escape {p[i:j + 1] if j > 0 else p[i:i + 2]} is not supported")
                out.append(spelled); i = j + 1; continue
            if e == 'c' and p[i + 2:i + 3].isascii() and p[i + 2:i + 3].isalpha():  # \cX: a control character
                out.append(re.escape(chr(ord(p[i + 2]) % 32))); i += 3; continue
            if e == 'k' and p[i + 2:i + 3] == '<': j = p.index('>', i); out.append(f'(?P={p[i + 3:j]})'); i = j + 1; continue
            out.append(_ECMA_IN_CLASS.get(e, f'\\{e}') if in_class else _ECMA.get(e, f'\\{e}')); i += 2; continue
        if in_class: in_class = c != ']'
        elif c == '[': in_class = True; out.append(c); i += 1; continue
        elif c == '$': out.append(r'\Z'); i += 1; continue
        elif c == '(' and p.startswith('(?<', i) and p[i + 3:i + 4] not in ('=', '!'): out.append('(?P<'); i += 3; continue
        out.append(c); i += 1
    return ''.join(out)

_SHORT = 100  # a pattern `re` may search only strings shorter than this with, and no automaton can run, is not checked

class _Pattern:
    """A compiled pattern: `search(s)` is None when `s` doesn't match, else truthy (a match, or a string too long to
    search in bounded time). `re` searches up to `limit` characters (None: any), the automaton beyond; `costly` when a
    search draws on the check's budget (`re`'s own search, free for a linear pattern, doesn't)"""
    __slots__ = ('search', 'limit', 'costly')
    def __init__(self, rx: re.Pattern, limit: int | None, auto: Automaton | None = None, rate: float = 0):
        find = rx.search
        self.limit, self.search = limit, searcher(find, limit, auto, rate)
        self.costly = self.search is not find

def _regex(p: str) -> _Pattern:
    "Compiled ECMA pattern `p`; ValueError when it can't be checked safely"
    try: py = _translate(p)
    except (ValueError, IndexError) as e: raise ValueError(f"pattern {short(p, 60)} is not checked: {e}") from None
    try: rx, parsed = re.compile(py), _sre.parse(py)
    except (re.error, RecursionError, OverflowError) as e:
        raise ValueError(f"pattern {short(p, 60)} is not checked: it doesn't compile ({e})") from None
    try: limit = re_limit(parsed)
    except RecursionError: limit = -1  # nested deeper than the parser went: the automaton, or nothing
    auto = Automaton.of(parsed) if limit is not None else None
    if limit is not None and limit < _SHORT and auto is None:  # a backreference or lookaround keeps it from the automaton
        raise ValueError(f"pattern {short(p, 60)} is not checked: it can take exponential time (a repeat inside a repeat)")
    return _Pattern(rx, limit, auto, re_rate(parsed) if limit is None else 0)

_regex_cache: dict = {}

def _cached_regex(p: str):
    "A pattern's compiled form, or the ValueError saying why it isn't checked; shared by all schemas (a few hundred kept)"
    if (r := _regex_cache.get(p)) is None:
        try: r = _regex(p)
        except ValueError as e: r = e
        if len(_regex_cache) > 512: _regex_cache.clear()
        _regex_cache[p] = r
    return r

# --- numbers -----------------------------------------------------------------------------------------------

_EXACT = Context(prec=1000)  # enough digits for the quotient of any two finite doubles

def _multiple(v, d) -> bool:
    "Is number `v` a multiple of `d` (> 0), exactly as both are written in decimal"
    if isinstance(v, int) and isinstance(d, int): return v % d == 0
    if isinstance(v, float) and not math.isfinite(v): return False
    if isinstance(d, int) and (isinstance(v, int) or v.is_integer()): return int(v) % d == 0
    dec = lambda x: Decimal(x) if isinstance(x, int) else Decimal(repr(x))
    try:
        with localcontext(_EXACT): return dec(v) % dec(d) == 0
    except InvalidOperation:  # a quotient past even that many digits (an integer beyond any double's range): in fractions, exact
        from fractions import Fraction
        return Fraction(dec(v)) % Fraction(dec(d)) == 0

# --- the compiled tree --------------------------------------------------------------------------------------

class _Node:
    "A compiled (sub)schema: `ok(v)`, and on failure `errs`; `evp`/`evi` give what it evaluated, for unevaluated*"
    __slots__ = ('ok', 'parts', 'schema', 'comp', '_words', 'pending', '_oneofs')
    ok: Callable[[Any], bool]
    parts: list[_Part]
    comp: _Compiler
    pending: Callable[[], Any] | None
    _words: str | None
    _oneofs: list[_OneOf] | None

    def __init__(self, comp: _Compiler, schema: Any):
        self.ok, self.parts, self.schema, self.comp, self._words, self.pending, self._oneofs = _true, [], schema, comp, None, None, None

    @property
    def words(self) -> str:
        if self._words is None: self._words = expected(self.schema, self.comp.resolve_schema)
        return self._words

    def errs(self, v: Any, path: str, out: list[Problem], limit: int) -> bool | None:  # type: ignore[return]  # (None: falls off)
        "Append what is wrong with `v` (which fails `ok`) to `out`; True when that is `v` as a whole, nothing below it failing"
        if self.pending: self.pending()
        n = len(out)
        t = type(v)
        if t is not dict and t is not list and not isinstance(v, (dict, list, tuple)):  # a scalar fails as a whole: one problem
            if self._oneofs is None: self._oneofs = [p for p in self.parts if isinstance(p, _OneOf)]
            many = next((p for p in self._oneofs if not p.ok(v) and p.matches(v) > 1), None) if self._oneofs else None
            out.append(_new(Problem, (path, many.too_many(v) if many else f"expected {self._words or self.words}, got {short(v)}")))
            return True
        for p in self.parts:
            if len(out) >= limit: return None
            tp = type(p)
            # the object and array keywords report only what is wrong: asked at once, not checked first (which would walk
            # the value once more at every level)
            if tp is _Object and t is dict or tp is _Array and t is not dict: p.errs(v, path, out, limit)
            elif not p.ok(v):
                p.errs(v, path, out, limit)
                if tp is _Type: return None  # the wrong kind of value: the rest would only repeat it
        if len(out) == n:
            out.append(_new(Problem, (path, f"expected {self._words or self.words}, got {short(v)}")))
            return True

    def evp(self, v: Any) -> Any:
        "Keys of object `v` this (passing) schema evaluated: a set, or _ALL"
        if self.pending: self.pending()
        keys: set[Any] = set()
        for p in self.parts:
            if (e := p.evp(v)) is _ALL: return _ALL
            keys |= e
        return keys

    def evi(self, v: Any) -> Any:
        "Indices of array `v` this (passing) schema evaluated: a set, or _ALL"
        if self.pending: self.pending()
        idx: set[int] = set()
        for p in self.parts:
            if (e := p.evi(v)) is _ALL: return _ALL
            idx |= e
        return idx

class _Part:
    "One keyword (or group of keywords) of a schema"
    node: _Node
    ok: Callable[[Any], Any] = staticmethod(_true)
    def errs(self, v: Any, path: str, out: list[Problem], limit: int) -> Any:
        out.append(_new(Problem, (path, f"expected {self.node.words}, got {short(v)}")))
    def evp(self, v: Any) -> Any: return set()
    def evi(self, v: Any) -> Any: return set()

class _Any(_Part):
    "Accepts anything and claims everything evaluated: a keyword we don't enforce ($dynamicRef, a remote $ref)"
    def evp(self, v): return _ALL
    def evi(self, v): return _ALL

class _Type(_Part):
    def __init__(self, node, names: list):
        self.node, self.names, fs = node, names, [_TYPES[t] for t in names]
        if 'integer' in names and 'number' in names: fs.remove(_is_int)
        self.ok = fs[0] if len(fs) == 1 else lambda v: any(f(v) for f in fs)
    def errs(self, v, path, out, limit): out.append(_new(Problem, (path, f"expected {self.node.words}, got {short(v)}")))

class _Enum(_Part):
    def __init__(self, node, values: list):
        self.node, self.keys = node, frozenset(_key(x) for x in values)
        keys = self.keys
        self.strings = all(isinstance(x, str) for x in values)
        if self.strings: self.ok = lambda v: isinstance(v, str) and v in keys
        else: self.ok = lambda v: _key(v) in keys

class _Number(_Part):
    def __init__(self, node, lo, lo_x, hi, hi_x, mult):
        self.node, self.lo, self.lo_x, self.hi, self.hi_x, self.mult = node, lo, lo_x, hi, hi_x, mult
        def ok(v):
            if not isinstance(v, (int, float)) or isinstance(v, bool): return True
            return (v == v and (lo is None or v >= lo) and (lo_x is None or v > lo_x) and (hi is None or v <= hi)  # (NaN: within no bound)
                    and (hi_x is None or v < hi_x) and (mult is None or _multiple(v, mult)))
        self.ok = ok

class _String(_Part):
    def __init__(self, node, lo, hi, rx):
        self.node, self.lo, self.hi, self.rx = node, lo, hi, rx
        search = rx.search if rx is not None else None
        def ok(v):
            if not isinstance(v, str): return True
            return (not lo or len(v) >= lo) and (hi is None or len(v) <= hi) and (search is None or search(v) is not None)
        self.ok = ok

class _Ref(_Part):
    "`$ref`: the target is compiled once, on first use, so recursive schemas end"
    def __init__(self, node, target: _Node): self.node, self.target = node, target; self.ok = lambda v: target.ok(v)
    def errs(self, v, path, out, limit): self.target.errs(v, path, out, limit)
    def evp(self, v): return self.target.evp(v)
    def evi(self, v): return self.target.evi(v)

class _AllOf(_Part):
    def __init__(self, node, subs: list):
        self.node, self.subs = node, subs
        fs = [s.ok for s in subs]
        def ok(v):
            for f in fs:
                if not f(v): return False
            return True
        self.ok = ok
    def errs(self, v, path, out, limit):
        for s in self.subs:
            if len(out) >= limit: return
            if not s.ok(v): s.errs(v, path, out, limit)
    def evp(self, v): return _union(s.evp(v) for s in self.subs)
    def evi(self, v): return _union(s.evi(v) for s in self.subs)

def _union(sets: Any) -> Any:
    u: set[Any] = set()
    for s in sets:
        if s is _ALL: return _ALL
        u |= s
    return u

class _AnyOf(_Part):
    "anyOf; on failure, the one form the value was evidently meant to be, else the list of forms"
    kw = 'anyOf'
    def __init__(self, node, subs: list):
        self.node, self.subs = node, subs
        fs = [s.ok for s in subs]
        def ok(v):
            for f in fs:
                if f(v): return True
            return False
        self.ok = ok
    def meant(self, v) -> list:
        "The forms `v` is evidently meant to be: of the right type and, among those, with the right `const`/`enum` tags"
        typed = [s for s in self.subs if _kind_ok(s, v, tags=False)]
        return [s for s in typed if _kind_ok(s, v, tags=True)] or typed
    def errs(self, v, path, out, limit):
        meant = self.meant(v)
        if len(meant) == 1: return meant[0].errs(v, path, out, limit)
        forms = '; '.join(s.words for s in self.subs[:5]) + ('; ...' if len(self.subs) > 5 else '')
        out.append(Problem(path, f"matches none of the {len(self.subs)} allowed forms: {forms}; got {short(v)}"))
    def evp(self, v): return _union(s.evp(v) for s in self.subs if s.ok(v))
    def evi(self, v): return _union(s.evi(v) for s in self.subs if s.ok(v))

class _OneOf(_AnyOf):
    kw = 'oneOf'
    def __init__(self, node, subs: list):
        self.node, self.subs = node, subs
        fs = [s.ok for s in subs]
        def ok(v):
            n = 0
            for f in fs:
                if f(v):
                    n += 1
                    if n > 1: return False
            return n == 1
        self.ok = ok
    def matches(self, v) -> int: return sum(1 for s in self.subs if s.ok(v))
    def too_many(self, v) -> str:
        which = ', '.join(str(i + 1) for i, s in enumerate(self.subs) if s.ok(v))
        return f"matches {self.matches(v)} of the allowed forms ({which}) but must match exactly one; got {short(v)}"
    def errs(self, v, path, out, limit):
        if self.matches(v) > 1: out.append(Problem(path, self.too_many(v)))
        else: super().errs(v, path, out, limit)

def _kind_ok(n: _Node, v, tags: bool, depth: int = 0) -> bool:
    "Is `v` of the type form `n` declares (and, with `tags`, do its properties with an `enum`/`const` hold one of them)?"
    if n.pending: n.pending()
    for p in n.parts:
        if isinstance(p, _Type) and not p.ok(v): return False
        if isinstance(p, _Ref) and depth < 8 and not _kind_ok(p.target, v, tags, depth + 1): return False
        if tags and isinstance(p, _Object) and isinstance(v, dict):
            for k, s in p.props.items():
                if k in v and any(isinstance(q, _Enum) and not q.ok(v[k]) for q in s.parts): return False
    return True

class _Not(_Part):
    def __init__(self, node, sub: _Node): self.node, self.sub = node, sub; self.ok = lambda v: not sub.ok(v)
    def errs(self, v, path, out, limit): out.append(Problem(path, f"must not be {self.sub.words}; got {short(v)}"))

class _If(_Part):
    def __init__(self, node, cond: _Node, then: _Node | None, else_: _Node | None):
        self.node, self.cond, self.then, self.else_ = node, cond, then, else_
        t, e, c = (then.ok if then else _true), (else_.ok if else_ else _true), cond.ok
        self.ok = lambda v: t(v) if c(v) else e(v)
    def branch(self, v): return (self.then, True) if self.cond.ok(v) else (self.else_, False)
    def errs(self, v, path, out, limit):
        b, _ = self.branch(v)
        if b: b.errs(v, path, out, limit)
    def evp(self, v):
        b, held = self.branch(v)
        return _union([self.cond.evp(v) if held else set(), b.evp(v) if b else set()])
    def evi(self, v):
        b, held = self.branch(v)
        return _union([self.cond.evi(v) if held else set(), b.evi(v) if b else set()])

class _Object(_Part):
    "The object keywords together: one pass over the keys"
    def __init__(self, node, props: dict, req: list, extra, patterns: list, names, lo, hi, dep_req: dict, dep_schemas: dict):
        self.node, self.props, self.req, self.extra, self.patterns = node, props, req, extra, patterns
        self.names, self.lo, self.hi, self.dep_req, self.dep_schemas = names, lo, hi, dep_req, dep_schemas
        pok = {k: s.ok for k, s in props.items()}
        xok = extra.ok if extra is not None else None
        pats = [(rx.search, s.ok) for rx, s in patterns]
        get = pok.get
        self.lean = not (patterns or names or lo or hi is not None or dep_req or dep_schemas)
        if self.lean:
            def ok(v):  # the common case, kept lean: properties, required, additionalProperties
                if not isinstance(v, dict): return True
                for k in req:
                    if k not in v: return False
                for k, x in v.items():
                    f = get(k)
                    if f is None: f = xok
                    if f is not None and not f(x): return False
                return True
        else:
            nok = names.ok if names else None
            dreq = list(dep_req.items()); dsch = [(k, s.ok) for k, s in dep_schemas.items()]
            def ok(v):
                if not isinstance(v, dict): return True
                if lo and len(v) < lo or hi is not None and len(v) > hi: return False
                for k in req:
                    if k not in v: return False
                for k, x in v.items():
                    f, seen = get(k), False
                    if f is not None:
                        if not f(x): return False
                        seen = True
                    for search, g in pats:
                        if isinstance(k, str) and search(k):
                            seen = True
                            if not g(x): return False
                    if not seen and xok is not None and not xok(x): return False
                    if nok is not None and not nok(k): return False
                for k, needs in dreq:
                    if k in v and any(n not in v for n in needs): return False
                for k, g in dsch:
                    if k in v and not g(v): return False
                return True
        self.ok = ok

    def errs(self, v, path, out, limit):
        if self.lo and len(v) < self.lo: out.append(Problem(path, f"has {_n(len(v), 'key')}; needs at least {self.lo}"))
        if self.hi is not None and len(v) > self.hi: out.append(Problem(path, f"has {_n(len(v), 'key')}; allows at most {self.hi}"))
        for k in self.req:
            if k not in v: out.append(_new(Problem, (path, f"missing required key {k!r}")))
        for k, needs in self.dep_req.items() if self.dep_req else ():
            if k in v:
                for n in needs:
                    if n not in v: out.append(Problem(path, f"has key {k!r}, so it needs key {n!r} too"))
        if self.lean:  # properties, required, additionalProperties: one lookup per key, the rest only for what fails
            get, extra = self.props.get, self.extra
            if (bad := self.failing(v)) is not None:
                if len(bad) < 2:  # none, or one: no need to find it among the others
                    if bad: self.report(bad[0], v[bad[0]], path, out, limit)
                    return
                left = len(bad)
                for k, x in v.items():
                    if k in bad:
                        if len(out) >= limit: return
                        self.report(k, x, path, out, limit)
                        if (left := left - 1) == 0: return
                return
            for k, x in v.items():  # no generated code (yet): each key asked here, in the order reported
                if (s := get(k)) is None:
                    if extra is None or extra.ok(x): continue
                elif s.ok(x): continue
                if len(out) >= limit: return
                self.report(k, x, path, out, limit)
            return
        for k, x in v.items():
            if len(out) >= limit: return
            seen = False
            if (s := self.props.get(k)) is not None:
                seen = True
                if not s.ok(x): s.errs(x, key_path(path, k), out, limit)
            for rx, s in self.patterns:
                if isinstance(k, str) and rx.search(k):
                    seen = True
                    if not s.ok(x): s.errs(x, key_path(path, k), out, limit)
            if not seen and self.extra is not None and not self.extra.ok(x):
                if self.extra.schema is False: out.append(Problem(path, _unexpected(k, self.props)))
                else: self.extra.errs(x, key_path(path, k), out, limit)
            if self.names is not None and not self.names.ok(k):
                out.append(Problem(path, f"key {short(k, 40)} is not allowed: keys must be {self.names.words}"))
        for k, s in self.dep_schemas.items():
            if len(out) >= limit: return
            if k in v and not s.ok(v): s.errs(v, path, out, limit)

    def report(self, k, x, path: str, out: list, limit: int):
        "Append what is wrong with key `k`'s value `x`, which fails `properties` or `additionalProperties` (lean objects)"
        if (s := self.props.get(k)) is not None: s.errs(x, key_path(path, k), out, limit)
        elif self.extra.schema is False: out.append(_new(Problem, (path, _unexpected(k, self.props))))
        else: self.extra.errs(x, key_path(path, k), out, limit)

    _failing, _reports = None, 0  # the generated finder of failing keys (lean objects), made on the second report

    def failing(self, v: dict) -> Any:
        """The keys of `v` whose values fail `properties` or `additionalProperties` (a lean object's), found by generated
        code from the object's second report on; None before, or when the stack runs out (the walk then asks key by key,
        in order, and stops where it stopped before)"""
        if (f := self._failing) is None:
            self._reports += 1
            # a one-off refusal compiles nothing, nor does an object of a few properties: asking each costs no more
            if self._reports < 2 or len(self.props) < _FINDER: return None
            f = self._failing = _failing_keys(self)
        try: bad = f(v)
        except RecursionError: return None
        return set(bad) if bad is not None and len(bad) > 8 else bad

    def evp(self, v):
        if self.extra is not None: return _ALL
        if not isinstance(v, dict): return set()
        keys = {k for k in v if k in self.props or any(isinstance(k, str) and rx.search(k) for rx, _ in self.patterns)}
        for k, s in self.dep_schemas.items():
            if isinstance(v, dict) and k in v:
                if (e := s.evp(v)) is _ALL: return _ALL
                keys |= e
        return keys

def _n(k, word): return f"{k} {word}{'' if k == 1 else 's'}"

def _unexpected(k, allowed) -> str:
    "Words for key `k` that no keyword allows; `allowed` the keys that would be"
    return f"unexpected key {short(k, 40)}{_allowed(allowed)}"

def _allowed(allowed) -> str:
    "The end of `_unexpected`'s words: which keys are allowed"
    allowed = list(allowed)
    return f"; allowed keys: {', '.join(allowed[:12])}{', ...' if len(allowed) > 12 else ''}" if allowed else '; no keys are allowed'

class _Array(_Part):
    "The array keywords together"
    def __init__(self, node, prefix: list, items, lo, hi, unique, contains, cmin, cmax):
        self.node, self.prefix, self.items, self.lo, self.hi, self.unique = node, prefix, items, lo, hi, unique
        self.contains, self.cmin, self.cmax = contains, cmin, cmax
        pf = [s.ok for s in prefix]
        npf = len(pf)
        iok = items.ok if items is not None else None
        cok = contains.ok if contains is not None else None
        if not (npf or unique or cok or lo or hi is not None):
            def ok(v):
                if not isinstance(v, (list, tuple)) or iok is None: return True
                for x in v:
                    if not iok(x): return False
                return True
        else:
            def ok(v):
                if not isinstance(v, (list, tuple)): return True
                if lo and len(v) < lo or hi is not None and len(v) > hi: return False
                for f, x in zip(pf, v):
                    if not f(x): return False
                if iok is not None:
                    for i in range(npf, len(v)):
                        if not iok(v[i]): return False
                if unique and len({_key(x) for x in v}) < len(v): return False
                if cok is not None:
                    n = sum(1 for x in v if cok(x))
                    if n < cmin or cmax is not None and n > cmax: return False
                return True
        self.ok = ok

    def errs(self, v, path, out, limit):
        if self.lo and len(v) < self.lo: out.append(Problem(path, f"has {_n(len(v), 'item')}; needs at least {self.lo}"))
        if self.hi is not None and len(v) > self.hi: out.append(Problem(path, f"has {_n(len(v), 'item')}; allows at most {self.hi}"))
        prefix, items = self.prefix, self.items
        n = len(prefix)
        for i, x in enumerate(v):
            if len(out) >= limit: return
            s = prefix[i] if i < n else items
            if s is not None and not s.ok(x):
                if s.schema is False: out.append(Problem(path, f"has {_n(len(v), 'item')}; allows at most {len(self.prefix)}")); break
                s.errs(x, f'{path}[{i}]', out, limit)
        if self.unique:
            first: dict[Any, int] = {}
            for i, x in enumerate(v):
                if (j := first.setdefault(_key(x), i)) != i:
                    out.append(Problem(path, f"items [{j}] and [{i}] are equal; all items must be unique")); break
        if self.contains is not None:
            n = sum(1 for x in v if self.contains.ok(x))
            what = f'{"is" if n == 1 else "are"} {self.contains.words}' if n else self.contains.words
            if n == 0 and self.cmin: out.append(Problem(path, f"has no item that is {what}"))
            elif n < self.cmin: out.append(Problem(path, f"has {_n(n, 'item')} that {what}; needs at least {self.cmin}"))
            elif self.cmax is not None and n > self.cmax: out.append(Problem(path, f"has {_n(n, 'item')} that {what}; allows at most {self.cmax}"))

    def evi(self, v):
        if self.items is not None: return _ALL
        idx = set(range(min(len(self.prefix), len(v)))) if isinstance(v, (list, tuple)) else set()
        if self.contains is not None and isinstance(v, (list, tuple)): idx |= {i for i, x in enumerate(v) if self.contains.ok(x)}
        return idx

class _Unevaluated(_Part):
    "unevaluatedProperties / unevaluatedItems: checks what the schema's other keywords left unevaluated"
    def __init__(self, node, props: _Node | None, items: _Node | None):
        self.node, self.props, self.items = node, props, items
        def siblings(): return [p for p in node.parts if p is not self]
        def ok(v):
            if props is not None and isinstance(v, dict):
                ev = _union(p.evp(v) for p in siblings())
                if ev is not _ALL and not all(props.ok(x) for k, x in v.items() if k not in ev): return False
            if items is not None and isinstance(v, (list, tuple)):
                ev = _union(p.evi(v) for p in siblings())
                if ev is not _ALL and not all(items.ok(x) for i, x in enumerate(v) if i not in ev): return False
            return True
        self.ok, self.siblings = ok, siblings
    def errs(self, v, path, out, limit):
        if self.props is not None and isinstance(v, dict) and (ev := _union(p.evp(v) for p in self.siblings())) is not _ALL:
            for k, x in v.items():
                if len(out) >= limit: return
                if k in ev or self.props.ok(x): continue
                if self.props.schema is False: out.append(Problem(path, _unexpected(k, sorted(ev, key=str))))
                else: self.props.errs(x, key_path(path, k), out, limit)
        if self.items is not None and isinstance(v, (list, tuple)) and (ev := _union(p.evi(v) for p in self.siblings())) is not _ALL:
            for i, x in enumerate(v):
                if len(out) >= limit: return
                if i in ev or self.items.ok(x): continue
                if self.items.schema is False: out.append(Problem(path, f"unexpected item [{i}]"))
                else: self.items.errs(x, f'{path}[{i}]', out, limit)
    def evp(self, v): return _ALL if self.props is not None else set()
    def evi(self, v): return _ALL if self.items is not None else set()

class _Never(_Part):
    "The `false` schema"
    ok = staticmethod(_false)
    def __init__(self, node): self.node = node
    def errs(self, v, path, out, limit): out.append(Problem(path, f"no value is allowed here; got {short(v)}"))

# --- compiling -------------------------------------------------------------------------------------------------

_ONE = ('additionalProperties', 'additionalItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else',
        'unevaluatedProperties', 'unevaluatedItems', 'contentSchema')
_LIST = ('allOf', 'anyOf', 'oneOf', 'prefixItems')
_MAP = ('properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas')
_MISSING = object()
# keywords that never refuse a value: a schema of `type` and these is just its type
_LEAF = frozenset(('type', 'title', 'description', 'default', 'examples', 'example', 'format', '$comment', 'deprecated', 'readOnly',
                   'writeOnly', 'contentEncoding', 'contentMediaType', 'nullable'))
_NUM_KW = frozenset(('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'))
_STR_KW = frozenset(('minLength', 'maxLength', 'pattern'))
_ARR_KW = frozenset(('items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems', 'contains', 'minContains', 'maxContains'))
_APPLY_KW = frozenset(('allOf', 'anyOf', 'oneOf', 'not', 'if', '$ref', '$dynamicRef', '$recursiveRef', 'unevaluatedProperties', 'unevaluatedItems'))
_OBJ_KW = frozenset(('properties', 'required', 'additionalProperties', 'patternProperties', 'propertyNames', 'minProperties',
                     'maxProperties', 'dependentRequired', 'dependentSchemas', 'dependencies'))
_KIDS = {**dict.fromkeys(_ONE, 1), **dict.fromkeys(_LIST, 2), **dict.fromkeys(_MAP, 3), 'items': 4, 'dependencies': 5}

def _pointer(ptr) -> str:
    "A JSON Pointer from the walk's (parent, key) chain"
    keys = []
    while ptr is not None: ptr, k = ptr; keys.append(_esc(k))
    return '/' + '/'.join(reversed(keys)) if keys else '/'

def _esc(k: str) -> str: return str(k).replace('~', '~0').replace('/', '~1')

def _kind(v) -> str:
    return {dict: 'an object', list: 'an array', str: 'a string', bool: 'a boolean', type(None): 'null'}.get(type(v), type(v).__name__)

def _draft7(schema, draft: str | None) -> bool:
    "Does the schema (or `draft=`) ask for draft 7 or earlier?"
    d = str(draft if draft is not None else schema.get('$schema', '') if isinstance(schema, dict) else '')
    return bool(re.search(r'draft-?0?[3-7]\b|^0?[3-7]$', d))

class _Compiler:
    def __init__(self, root: Any, draft7: bool, where: str):
        self.root, self.draft7, self.where = root, draft7, where
        self.resources: dict[str, Any] = {}  # base URI -> the schema with that `$id`
        self.anchors: dict[str, Any] = {}    # URI with its anchor -> the schema
        self.bases: dict[int, str] = {}      # id of a subschema -> its base URI
        self.ptrs: dict[int, Any] = {}       # id of a subschema -> where it is (a `_pointer` chain)
        self.memo: dict[int, _Node] = {}     # id of a subschema -> its node
        # does a check need a pattern budget (`_regex.budgeted`)? Only with a costly pattern, or a node compiled on first use
        # (which may hold one): most schemas need none, and opening one costs a good part of a small check
        self.costly = False
        self.lock = threading.RLock()  # compiling on first use may happen in several threads at once
        self.index()

    def bad(self, ptr: Any, msg: str) -> NoReturn: raise ValueError(f"{self.where + ': ' if self.where else ''}at {_pointer(ptr)}: {msg}")

    def warn(self, ptr, msg: str):
        warnings.warn(f"{self.where + ': ' if self.where else ''}at {_pointer(ptr)}: {msg}", SchemaWarning, stacklevel=caller_level())

    def index(self):
        "One iterative walk: every subschema's base URI, the resources (`$id`) and anchors, and shape errors"
        stack: list[tuple[Any, str, Any]] = [(self.root, _ROOT, None)]
        seen, bases, ptrs, bad = set(), self.bases, self.ptrs, self.bad
        self.resources[_ROOT] = self.root
        while stack:
            s, base, ptr = stack.pop()
            if s is True or s is False: continue
            if not isinstance(s, dict): bad(ptr, f"expected a schema (an object or a boolean), got {_kind(s)}: {short(s, 40)}")
            if id(s) in seen: continue
            seen.add(id(s))
            if '$id' in s and isinstance(i := s['$id'], str) and not (self.draft7 and '$ref' in s):
                if i.startswith('#') and self.draft7: self.anchors[base + i] = s
                else:
                    base = self._join(base, i).split('#')[0]
                    self.resources[base] = s
            for a in ('$anchor', '$dynamicAnchor'):
                if a in s and isinstance(s[a], str): self.anchors[f'{base}#{s[a]}'] = s
            bases[id(s)] = base; ptrs[id(s)] = ptr
            for k, x in s.items():
                h = _KIDS.get(k)
                if h is None: continue
                if h == 1: stack.append((x, base, (ptr, k)))
                elif h == 4 and not isinstance(x, list): stack.append((x, base, (ptr, k)))
                elif h in (2, 4):
                    if not isinstance(x, list): bad((ptr, k), f"{k} must be a list of schemas, got {_kind(x)}")
                    stack += [(y, base, ((ptr, k), j)) for j, y in enumerate(x)]
                elif h == 3 or (h == 5 and isinstance(x, dict)):
                    if not isinstance(x, dict): bad((ptr, k), f"{k} must be an object of schemas, got {_kind(x)}")
                    for nm, y in x.items():
                        if not isinstance(nm, str): bad((ptr, k), f"{k} has a key that is not a string: {short(nm, 40)}")
                        if h == 3 or isinstance(y, (dict, bool)): stack.append((y, base, ((ptr, k), nm)))

    @staticmethod
    def _join(base: str, ref: str) -> str:
        if ref.startswith('#'): return base.split('#')[0] + ref
        return urljoin(base, ref) if '://' in base else ref

    def resolve(self, ref: str, base: str):
        "The schema `ref` points at from `base`, and its base: (schema, base), or (_MISSING, uri) / (None, uri) for a remote one"
        uri = self._join(base, ref)
        url, frag = urldefrag(uri)
        doc = self.resources.get(url)
        if doc is None: return None, uri  # outside the document: never fetched
        if not frag: return doc, url
        if not frag.startswith('/'):
            t = self.anchors.get(f'{url}#{frag}', _MISSING)
            return t, self.bases.get(id(t), url)
        node = doc
        for seg in frag.split('/')[1:]:
            seg = unquote(seg).replace('~1', '/').replace('~0', '~')
            if isinstance(node, dict) and seg in node: node = node[seg]
            elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node): node = node[int(seg)]
            else: return _MISSING, uri
        return node, self.bases.get(id(node), url)

    def resolve_schema(self, ref: str):
        "For the words: the schema a `$ref` means from the root, or None"
        t, _ = self.resolve(ref, self.bases.get(id(self.root), _ROOT))
        return t if isinstance(t, (dict, bool)) else None

    def node(self, s, base: str, depth: int) -> _Node:
        if (n := self.memo.get(id(s))) is not None: return n
        n = self.memo[id(s)] = _Node(self, s)
        if s is True: return n
        if s is False: n.ok, n.parts = _false, [_Never(n)]; return n
        if not isinstance(s, dict): self.bad(self.ptrs.get(id(s)), f"expected a schema (an object or a boolean), got {_kind(s)}")
        if isinstance(t := s.get('type'), str) and t in _TYPES and s.keys() <= _LEAF:  # most properties: one type, and words
            n.parts, n.ok = [_Type(n, [t])], _TYPES[t]
            return n
        base = self.bases.get(id(s), base)
        if depth >= _EAGER: self.defer(n, s, base)  # deep: compile on first use, so building never runs out of stack
        else:
            try: self.fill(n, s, base, depth)
            except BaseException:  # cut short (a RecursionError deep in a stack): whoever holds the node compiles it on use
                self.defer(n, s, base)
                raise
        return n

    def defer(self, n: _Node, s: dict, base: str):
        "Make node `n` compile itself on first use"
        self.costly = True  # (what it holds isn't known yet)
        def pending():
            with self.lock:  # one thread fills; the others wait for it, then find it done
                if n.pending is None: return
                self.fill(n, s, base, 0)
                n.pending = None
        def first(v):
            if n.pending: n.pending()
            return n.ok(v)
        n.ok, n.pending = first, pending

    def fill(self, n: _Node, s: dict, base: str, depth: int):
        "Compile schema `s` into node `n`: one part per keyword group"
        n.parts = []  # afresh, if an earlier try was cut short
        ptr, sub = self.ptrs.get(id(s)), lambda x: self.node(x, base, depth + 1)
        kw = {'$ref': s['$ref']} if self.draft7 and '$ref' in s else s  # draft 7: `$ref` ignores its siblings
        parts = n.parts
        if 'type' in kw:
            t = kw['type']
            names = [t] if isinstance(t, str) else t if isinstance(t, list) else None
            if names is None or not names or any(x not in _TYPES for x in names):
                self.warn((ptr, 'type'), f"type {short(t, 40)} is not a JSON type (or a list of them); not checked")
            else: parts.append(_Type(n, names))
        if 'enum' in kw:
            if isinstance(kw['enum'], list): parts.append(_Enum(n, kw['enum']))
            else: self.warn((ptr, 'enum'), f"enum must be a list, got {_kind(kw['enum'])}; not checked")
        if 'const' in kw: parts.append(_Enum(n, [kw['const']]))
        if not _NUM_KW.isdisjoint(kw): self.numbers(n, kw, ptr)
        if not _STR_KW.isdisjoint(kw): self.strings(n, kw, ptr)
        if not _ARR_KW.isdisjoint(kw): self.arrays(n, kw, ptr, sub)
        if not _OBJ_KW.isdisjoint(kw): self.objects(n, kw, ptr, sub)
        if not _APPLY_KW.isdisjoint(kw): self.applicators(n, kw, ptr, base, depth, sub)
        n.ok = _all([p.ok for p in parts])

    def applicators(self, n: _Node, kw: dict, ptr, base: str, depth: int, sub):
        parts = n.parts
        for k, cls in (('allOf', _AllOf), ('anyOf', _AnyOf), ('oneOf', _OneOf)):
            if k in kw:
                if kw[k]: parts.append(cls(n, [sub(x) for x in kw[k]]))
                else: self.warn((ptr, k), f"{k} is empty; not checked")
        if 'not' in kw: parts.append(_Not(n, sub(kw['not'])))
        if 'if' in kw:  # even alone: its annotations count for unevaluated*
            parts.append(_If(n, sub(kw['if']), sub(kw['then']) if 'then' in kw else None, sub(kw['else']) if 'else' in kw else None))
        if '$ref' in kw: parts.append(self.ref(n, kw['$ref'], base, ptr, depth))
        if not self.draft7 and ('$dynamicRef' in kw or '$recursiveRef' in kw): parts.append(_Any())
        if not self.draft7 and ('unevaluatedProperties' in kw or 'unevaluatedItems' in kw):
            parts.append(_Unevaluated(n, sub(kw['unevaluatedProperties']) if 'unevaluatedProperties' in kw else None,
                                      sub(kw['unevaluatedItems']) if 'unevaluatedItems' in kw else None))

    def ref(self, n: _Node, ref, base: str, ptr: str, depth: int) -> _Part:
        if not isinstance(ref, str): self.bad((ptr, '$ref'), f"$ref must be a string, got {_kind(ref)}")
        t, tbase = self.resolve(ref, base)
        if t is None: return _Any()  # a remote document: not fetched, not checked
        if t is _MISSING:
            self.warn((ptr, '$ref'), f"$ref {short(ref, 60)} points nowhere in the schema; anything is accepted there")
            return _Any()
        if not isinstance(t, (dict, bool)): self.bad((ptr, '$ref'), f"$ref {short(ref, 60)} points at {_kind(t)}, not a schema")
        if id(t) not in self.ptrs and isinstance(t, dict):  # a schema reached only by pointer (inside an unknown keyword): index it now
            self.ptrs[id(t)] = ((ptr, '$ref'), ref)
            self.bases.setdefault(id(t), tbase)
        return _Ref(n, self.node(t, tbase, depth + 1))

    def number(self, kw: dict, k: str, ptr: str):
        "A numeric keyword's value, or None (with a warning when it is there but not a number)"
        if k not in kw: return None
        x = kw[k]
        if isinstance(x, (int, float)) and not isinstance(x, bool) and not (isinstance(x, float) and math.isnan(x)): return x
        if isinstance(x, bool) and k.startswith('exclusive'): return None  # draft 4's boolean form, read with minimum/maximum
        self.warn((ptr, k), f"{k} must be a number, got {short(x, 40)}; not checked")
        return None

    def count(self, kw: dict, k: str, ptr: str):
        "A non-negative integer keyword's value (2.0 counts as 2), or None"
        x = self.number(kw, k, ptr)
        if x is None: return None
        if x >= 0 and float(x).is_integer(): return int(x)
        self.warn((ptr, k), f"{k} must be a non-negative integer, got {short(x, 40)}; not checked")
        return None

    def numbers(self, n, kw, ptr):
        lo, hi = self.number(kw, 'minimum', ptr), self.number(kw, 'maximum', ptr)
        lo_x, hi_x = self.number(kw, 'exclusiveMinimum', ptr), self.number(kw, 'exclusiveMaximum', ptr)
        if kw.get('exclusiveMinimum') is True: lo, lo_x = None, lo
        if kw.get('exclusiveMaximum') is True: hi, hi_x = None, hi
        mult = self.number(kw, 'multipleOf', ptr)
        if mult is not None and not mult > 0: self.warn((ptr, 'multipleOf'), f"multipleOf must be > 0, got {mult}; not checked"); mult = None
        if (lo, hi, lo_x, hi_x, mult) != (None,) * 5: n.parts.append(_Number(n, lo, lo_x, hi, hi_x, mult))

    def strings(self, n, kw, ptr):
        lo, hi, rx = self.count(kw, 'minLength', ptr), self.count(kw, 'maxLength', ptr), None
        if 'pattern' in kw: rx = self.pattern(kw['pattern'], (ptr, 'pattern'))
        if lo or hi is not None or rx is not None: n.parts.append(_String(n, lo, hi, rx))

    def pattern(self, p, ptr: Any):
        if not isinstance(p, str): self.warn(ptr, f"a pattern must be a string, got {short(p, 40)}; not checked"); return None
        r = _cached_regex(p)
        if isinstance(r, ValueError): self.warn(ptr, str(r)); return None
        if r.costly: self.costly = True
        return r

    def arrays(self, n, kw, ptr, sub):
        it = kw.get('items')
        if isinstance(it, list): prefix, rest = it, kw.get('additionalItems')  # draft 7's tuple form (servers send it in 2020-12 too)
        elif self.draft7: prefix, rest = [], it
        else: prefix, rest = kw.get('prefixItems') or [], it
        contains = sub(kw['contains']) if 'contains' in kw else None
        cmin, cmax = 1, None
        if contains is not None and not self.draft7:
            if (c := self.count(kw, 'minContains', ptr)) is not None: cmin = c
            cmax = self.count(kw, 'maxContains', ptr)
        lo, hi = self.count(kw, 'minItems', ptr), self.count(kw, 'maxItems', ptr)
        unique = kw.get('uniqueItems') is True
        if prefix or rest is not None or contains is not None or lo or hi is not None or unique:
            n.parts.append(_Array(n, [sub(x) for x in prefix], sub(rest) if rest is not None else None, lo, hi, unique, contains, cmin, cmax))

    def objects(self, n, kw, ptr, sub):
        props = {k: sub(x) for k, x in kw.get('properties', {}).items()}
        req = kw.get('required', [])
        if not (isinstance(req, list) and all(isinstance(r, str) for r in req)):
            self.warn((ptr, 'required'), f"required must be a list of strings, got {short(req, 40)}; not checked"); req = []
        patterns = []
        for p, x in kw.get('patternProperties', {}).items():
            rx = self.pattern(p, ((ptr, 'patternProperties'), p))
            # a pattern we can't check still claims its keys, so additionalProperties never refuses a key it may have meant
            patterns.append((rx, sub(x)) if rx is not None else (_Pattern(re.compile(''), None), self.node(True, '', 0)))
        extra = sub(kw['additionalProperties']) if 'additionalProperties' in kw else None
        names = sub(kw['propertyNames']) if 'propertyNames' in kw else None
        lo, hi = self.count(kw, 'minProperties', ptr), self.count(kw, 'maxProperties', ptr)
        dep_req, dep_schemas = {}, {}
        groups = [('dependencies', kw.get('dependencies'))]
        if not self.draft7: groups += [('dependentRequired', kw.get('dependentRequired')), ('dependentSchemas', kw.get('dependentSchemas'))]
        for k, d in groups:
            if d is None: continue
            if not isinstance(d, dict): self.warn((ptr, k), f"{k} must be an object, got {_kind(d)}; not checked"); continue
            for nm, x in d.items():
                if isinstance(x, list) and all(isinstance(r, str) for r in x) and k != 'dependentSchemas': dep_req[nm] = x
                elif isinstance(x, (dict, bool)) and k != 'dependentRequired': dep_schemas[nm] = sub(x)
                else: self.warn(((ptr, k), nm), f"{k} entry {short(x, 40)} is not understood; not checked")
        n.parts.append(_Object(n, props, req, extra, patterns, names, lo, hi, dep_req, dep_schemas))

# --- the fast path: generated code -------------------------------------------------------------------------

_COND = {'string': 'isinstance({x}, str)', 'boolean': '({x} is True or {x} is False)', 'null': '{x} is None',
         'integer': '(type({x}) is int or isinstance({x}, int) and not isinstance({x}, bool) or isinstance({x}, float) and {x}.is_integer())',
         'number': '(type({x}) is int or type({x}) is float or isinstance({x}, (int, float)) and not isinstance({x}, bool))',
         'array': '(type({x}) is list or isinstance({x}, (list, tuple)))', 'object': 'isinstance({x}, dict)'}
_GUARD = {'number': 'isinstance({x}, (int, float)) and not isinstance({x}, bool)', 'string': 'isinstance({x}, str)',
          'array': 'isinstance({x}, (list, tuple))', 'object': 'isinstance({x}, dict)'}
_INLINE_DEPTH, _INLINE_LINES = 6, 400  # beyond these, a part is called rather than inlined: the source stays small

def _bounds(p: _Number) -> tuple:
    """A number's bounds, each with the comparison a value within it passes: written `not (x >= lo)`, never `x < lo`, as
    NaN fails every comparison (so it is within no bound, with no test of its own; `_multiple` refuses it too)"""
    return (p.lo, '>='), (p.lo_x, '>'), (p.hi, '<='), (p.hi_x, '<')

def _sure(kind: str, types) -> bool: return bool(types) and all(t == kind or (kind == 'number' and t == 'integer') for t in types)

class _Gen:
    "Python source for `is_valid`: the common keywords inlined into one function, any other part called as compiled"
    def __init__(self):
        self.lines, self.k, self.inlining = [], 0, []
        self.ns = {'_key': _key, '_M': _MISSING, '_multiple': _multiple, 'isinstance': isinstance, 'type': type, 'int': int,
                   'float': float, 'str': str, 'bool': bool, 'list': list, 'tuple': tuple, 'dict': dict, 'len': len}  # no builtins lookup

    def name(self, prefix: str) -> str: self.k += 1; return f'{prefix}{self.k}'
    def const(self, v) -> str: nm = self.name('_c'); self.ns[nm] = v; return nm
    def out(self, ind: int, line: str): self.lines.append('    ' * ind + line)
    def call(self, f, x: str, ind: int): self.out(ind, f'if not {self.const(f)}({x}): return False')

    def node(self, n: _Node, x: str, ind: int, depth: int):
        if n.pending: n.pending()
        if n.ok is _true: return
        if depth > _INLINE_DEPTH or n in self.inlining or len(self.lines) > _INLINE_LINES: return self.call(n.ok, x, ind)
        self.inlining.append(n)
        types = next((p.names for p in n.parts if isinstance(p, _Type)), ())
        for p in n.parts: self.part(p, x, ind, depth, types)
        self.inlining.pop()

    def cond(self, n: _Node, x: str) -> str | None:
        "An expression for a node of only a type, a string enum, and number or string bounds, else None"
        if n.pending: n.pending()
        if n.ok is _true: return 'True'
        cs, types = [], next((p.names for p in n.parts if isinstance(p, _Type)), ())
        for p in n.parts:
            if isinstance(p, _Type): cs.append(f"({' or '.join(_COND[t].format(x=x) for t in p.names)})")
            elif isinstance(p, _Enum) and p.strings: cs.append(f'(isinstance({x}, str) and {x} in {self.const(p.keys)})')
            elif isinstance(p, _Number):  # (what `part` writes, as one expression)
                fails = [f'not ({x} {op} {self.const(v)})' for v, op in _bounds(p) if v is not None]
                if p.mult is not None: fails.append(f'not _multiple({x}, {self.const(p.mult)})')
                cs.append(self.bounded('number', x, types, fails))
            elif isinstance(p, _String):
                fails = [f'len({x}) < {self.const(p.lo)}'] if p.lo else []
                if p.hi is not None: fails.append(f'len({x}) > {self.const(p.hi)}')
                if p.rx is not None: fails.append(f'{self.const(p.rx.search)}({x}) is None')
                cs.append(self.bounded('string', x, types, fails))
            else: return None
        return ' and '.join(cs) if cs else 'True'

    def bounded(self, kind: str, x: str, types, fails: list) -> str:
        "An expression: `x` is not of `kind`, or fails none of `fails` (the guard left out where the type made sure)"
        ok = f"not ({' or '.join(fails)})"
        if _sure(kind, types): return f'({ok})'
        return f'(not ({_GUARD[kind].format(x=x)}) or {ok})'

    def guarded(self, kind: str, x: str, ind: int, types) -> int:
        "Open `if <x is of kind>:` unless the type keyword already made sure; the indent to continue at"
        if _sure(kind, types): return ind
        self.out(ind, f'if {_GUARD[kind].format(x=x)}:')
        return ind + 1

    def part(self, p: _Part, x: str, ind: int, depth: int, types):
        if isinstance(p, _Type): self.out(ind, f"if not ({' or '.join(_COND[t].format(x=x) for t in p.names)}): return False")
        elif isinstance(p, _Enum) and p.strings: self.out(ind, f'if not (isinstance({x}, str) and {x} in {self.const(p.keys)}): return False')
        elif isinstance(p, _Enum): self.out(ind, f'if _key({x}) not in {self.const(p.keys)}: return False')
        elif isinstance(p, _Number):
            i = self.guarded('number', x, ind, types)
            for v, op in _bounds(p):
                if v is not None: self.out(i, f'if not ({x} {op} {self.const(v)}): return False')
            if p.mult is not None: self.out(i, f'if not _multiple({x}, {self.const(p.mult)}): return False')
        elif isinstance(p, _String):
            i = self.guarded('string', x, ind, types)
            if p.lo: self.out(i, f'if len({x}) < {self.const(p.lo)}: return False')
            if p.hi is not None: self.out(i, f'if len({x}) > {self.const(p.hi)}: return False')
            if p.rx is not None: self.out(i, f'if {self.const(p.rx.search)}({x}) is None: return False')
        elif isinstance(p, _Array) and not (p.unique or p.contains is not None): self.array(p, x, ind, depth, types)
        elif isinstance(p, _Object) and p.lean and len(p.props) + len(p.req) <= 100: self.object(p, x, ind, depth, types)
        elif isinstance(p, _Ref): self.node(p.target, x, ind, depth + 1)
        elif type(p) is _AnyOf and None not in (cs := [self.cond(m, x) for m in p.subs]):  # `anyOf` of plain types: Optional[X]
            self.out(ind, f"if not ({' or '.join(cs)}): return False")  # type: ignore[arg-type]  # (no None among them)
        elif not isinstance(p, _Any): self.call(p.ok, x, ind)

    def array(self, p: _Array, x: str, ind: int, depth: int, types):
        i = self.guarded('array', x, ind, types)
        if p.lo: self.out(i, f'if len({x}) < {self.const(p.lo)}: return False')
        if p.hi is not None: self.out(i, f'if len({x}) > {self.const(p.hi)}: return False')
        for j, s in enumerate(p.prefix):
            if s.ok is _true: continue
            y = self.name('x')
            self.out(i, f'if len({x}) > {j}:')
            self.out(i + 1, f'{y} = {x}[{j}]')
            self.node(s, y, i + 1, depth + 1)
        if p.items is not None and p.items.ok is not _true:
            y = self.name('x')
            self.out(i, f'for {y} in ({x}[{len(p.prefix)}:] if {len(p.prefix)} else {x}):' if p.prefix else f'for {y} in {x}:')
            self.node(p.items, y, i + 1, depth + 1)

    def object(self, p: _Object, x: str, ind: int, depth: int, types):
        i = self.guarded('object', x, ind, types)
        req = set(p.req)
        for k in p.req:
            if k not in p.props or p.props[k].ok is _true: self.out(i, f'if {k!r} not in {x}: return False')
        for k, s in p.props.items():
            if s.ok is _true: continue
            y = self.name('x')
            self.out(i, f'{y} = {x}.get({k!r}, _M)')
            if k in req: self.out(i, f'if {y} is _M: return False')  # required: no branch for its absence
            else: self.out(i, f'if {y} is not _M:')
            self.node(s, y, i + (k not in req), depth + 1)
        if p.extra is None or p.extra.ok is _true: return
        known = self.const(frozenset(p.props))
        if p.extra.schema is False: self.out(i, f'if not {known}.issuperset({x}): return False'); return
        k, y = self.name('k'), self.name('x')
        self.out(i, f'for {k}, {y} in {x}.items():')
        self.out(i + 1, f'if {k} not in {known}:')
        self.node(p.extra, y, i + 2, depth + 1)

def _generate(n: _Node):
    "One Python function checking what node `n` checks, for the fast path (its source kept on it as `__source__`)"
    g = _Gen()
    g.node(n, 'x0', 2, 0)
    src = '\n'.join(['def is_valid(x0):', '    "Does the value satisfy the schema?"', '    try:', *g.lines,
                     '        return True', '    except RecursionError: return False'])
    # the source holds only names it made and repr()s of property names; every value reaches it through `g.ns`
    exec(compile(src, source_name(_named('validator check', n.comp.where), src), 'exec'), g.ns)  # noqa: S102
    f = g.ns['is_valid']
    f.__source__ = src  # type: ignore[attr-defined]  # (a function's attribute: see `Validator.source`)
    return f

_FINDER = 4  # the fewest properties of an object whose failing keys generated code finds

def _none(v): return None

def _named(what: str, where: str) -> str: return f'{what}: {where}' if where else what

def _whole(n: _Node) -> bool:
    """Does `n` (failing) report one problem, the value as a whole? So `_Node.errs` does for a scalar, and for a container
    when `n` asks for scalars only or has no keyword that looks inside one (a `oneOf` may say "matches too many" instead)"""
    if n.pending: n.pending()
    if any(isinstance(p, _OneOf) for p in n.parts): return False
    kinds = next((p.names for p in n.parts if isinstance(p, _Type)), None)
    return (kinds is not None and 'object' not in kinds and 'array' not in kinds) or all(type(p) in (_Type, _Enum, _Number, _String) for p in n.parts)

def _exact(n: _Node) -> bool:
    """Does the report written out for `n` (`_Report.body`) say nothing of a valid value, and something of any other? So
    it is when `n` asks for objects and/or arrays only (a scalar is then of the wrong type) and has no `oneOf`: each of
    its keywords' report is written to report what fails it, and only that"""
    if n.pending: n.pending()
    types = next((p.names for p in n.parts if isinstance(p, _Type)), ())
    return bool(types) and {'object', 'array'}.issuperset(types) and not any(isinstance(p, _OneOf) for p in n.parts)

_CHAIN = 16  # the most properties of an object whose report tells its keys apart by `if k == ...` (beyond, a lookup)
_REPORT_DEPTH, _REPORT_LINES = 6, 600  # beyond these, a node's report is the walk's (`_Node.errs`): the source stays small

class _Report(_Gen):
    """Python source for reports: a function per node doing what `_Node.errs` does (the same problems, in the same order,
    stopping at the same `limit`) for the common keywords (type, enum, numbers, strings, plain arrays, lean objects,
    `$ref`), the walk's own `errs` called for the rest; and the finder of an object's failing keys (`_failing_keys`)"""
    def __init__(self):
        super().__init__()
        self.defs, self.tail, self.fns, self.tests, self.depth, self.written = [], [], {}, {}, 0, set()
        self.ns.update(_new=_new, Problem=Problem, short=short, key_path=key_path, _n=_n, enumerate=enumerate)

    def function(self, head: str, write):
        "Write function `head` with the lines `write()` writes, apart from the function being written"
        outer, self.lines = self.lines, []
        write()
        self.defs += [f'def {head}:', *self.lines]
        self.lines = outer

    def test(self, n: _Node, x: str) -> str:
        "An expression: does `x` satisfy `n`? (its checks written out in a function of their own unless it is a plain type)"
        if (c := self.cond(n, x)) is not None: return c
        if (f := self.tests.get(n)) is None:
            if len(self.defs) > _REPORT_LINES: return f'{self.const(n.ok)}({x})'  # (the source stays small: the tree's check)
            f = self.tests[n] = self.name('_p')
            self.function(f'{f}(x)', lambda: (self.node(n, 'x', 1, 1), self.out(1, 'return True')))
        return f'{f}({x})'

    def failing(self, p: _Object, x: str, ind: int):
        "Lines leaving in `b` the keys of dict `x` that fail lean object `p`'s `properties` or `additionalProperties`"
        self.out(ind, 'b = []')
        for k, s in p.props.items():
            if s.pending: s.pending()
            if s.ok is _true: continue
            y = self.name('x')
            self.out(ind, f'{y} = {x}.get({k!r}, _M)')
            self.out(ind, f'if {y} is not _M and not ({self.test(s, y)}): b.append({k!r})')
        if (e := p.extra) is not None:
            if e.pending: e.pending()
            if e.ok is not _true:
                known = self.const(frozenset(p.props))
                self.out(ind, f'if not {known}.issuperset({x}): b += [k for k in {x} if k not in {known}]' if e.schema is False else
                         f'if not {known}.issuperset({x}): b += [k for k, y in {x}.items() if k not in {known} and not {self.const(e.ok)}(y)]')

    def whole(self, n: _Node, x: str, path: str, ind: int):
        "The line reporting `x` as a whole for node `n`: `expected <words>, got <x>`"
        self.out(ind, f"out.append(_new(Problem, ({path}, {self.const(f'expected {n.words}, got ')} + short({x}))))")

    def report(self, n: _Node, x: str, path: str, ind: int):
        "Lines reporting `x`, which fails `n`, at `path`: as `n.errs(x, path, out, limit)` would"
        if _whole(n): return self.whole(n, x, path, ind)
        self.out(ind, f'{self.fn(n)}({x}, {path}, out, limit)')

    def check(self, n: _Node, x: str, path: str, ind: int, limited: bool = False):
        """Lines reporting `x` at `path` if it fails `n` (`limited`: returning first when `out` is full); a node whose
        written-out report says nothing of a valid value (`_exact`) is asked at once, with no test first"""
        if not _whole(n) and _exact(n) and self.fn(n) in self.written:
            if limited: self.out(ind, 'if len(out) >= limit: return')
            return self.out(ind, f'{self.fn(n)}({x}, {path}, out, limit)')
        self.out(ind, f'if not ({self.test(n, x)}):')
        if limited: self.out(ind + 1, 'if len(out) >= limit: return')
        self.report(n, x, path, ind + 1)

    def fn(self, n: _Node) -> str:
        "The name of the function reporting node `n`'s problems, `(x, path, out, limit)` as `n.errs`, written on first need"
        if (f := self.fns.get(n)) is not None: return f
        if self.depth >= _REPORT_DEPTH or len(self.defs) > _REPORT_LINES or any(isinstance(p, _OneOf) for p in n.parts):
            f = self.fns[n] = self.const(n.errs)
            return f
        f = self.fns[n] = self.name('_r')
        self.written.add(f)
        self.depth += 1
        self.function(f'{f}(x, path, out, limit)', lambda: self.body(n))
        self.depth -= 1
        return f

    def body(self, n: _Node):
        """`_Node.errs` for `n` (without `oneOf`) written out: a scalar or a value of the wrong type as a whole, else each
        keyword's problems in turn. (The walk also stops before each keyword once `out` holds `limit` problems; here only
        loops do, so the work stays bounded: whatever the walk would have left out lies past `limit`, and `problems` cuts
        it off.)"""
        types = next((p.names for p in n.parts if isinstance(p, _Type)), ())
        if types:
            self.out(1, f"if not ({' or '.join(_COND[t].format(x='x') for t in types)}):")
            self.whole(n, 'x', 'path', 2)
            self.out(2, 'return True if not isinstance(x, (dict, list, tuple)) else None')
        if not types or not {'object', 'array'}.issuperset(types):
            self.out(1, 'if not isinstance(x, (dict, list, tuple)):')
            self.whole(n, 'x', 'path', 2)
            self.out(2, 'return True')
        if not _exact(n): self.out(1, 'n0 = len(out)')
        for p in n.parts:
            if isinstance(p, (_Type, _Number, _String, _Any)): continue  # (a container passes the last three)
            if isinstance(p, _Enum):
                if p.strings: self.whole(n, 'x', 'path', 1)  # a container is never one of the strings
                else:
                    self.out(1, f'if _key(x) not in {self.const(p.keys)}:')
                    self.whole(n, 'x', 'path', 2)
            elif isinstance(p, _Object):
                i = self.guarded('object', 'x', 1, types)
                if p.lean and len(p.props) + len(p.req) <= 100: self.object_report(p, i)
                else: self.out(i, f'{self.const(p.errs)}(x, path, out, limit)')
            elif isinstance(p, _Array):
                i = 1 if _sure('array', types) else (self.out(1, 'if type(x) is not dict:') or 2)  # (as the walk asks)
                if not (p.prefix or p.unique or p.contains is not None or p.items is not None and p.items.schema is False):
                    self.array_report(p, i)
                else: self.out(i, f'{self.const(p.errs)}(x, path, out, limit)')
            elif isinstance(p, _Ref): self.check(p.target, 'x', 'path', 1)
            else: self.out(1, f'if not {self.const(p.ok)}(x): {self.const(p.errs)}(x, path, out, limit)')
        if _exact(n): return  # every keyword reports what fails it: nothing reported, nothing wrong (see `_exact`)
        self.out(1, 'if len(out) == n0:')
        self.whole(n, 'x', 'path', 2)
        self.out(2, 'return True')

    def array_report(self, p: _Array, ind: int):
        "`_Array.errs` for an array of `minItems`, `maxItems` and `items` only"
        has = "out.append(_new(Problem, (path, 'has ' + _n(len(x), 'item') + "
        if p.lo: self.out(ind, f"if len(x) < {p.lo}: {has}'; needs at least {p.lo}')))")
        if p.hi is not None: self.out(ind, f"if len(x) > {p.hi}: {has}'; allows at most {p.hi}')))")
        if p.items is None or p.items.ok is _true: return
        self.out(ind, 'for i, y in enumerate(x):')
        self.check(p.items, 'y', "f'{path}[{i}]'", ind + 1, limited=True)

    def object_report(self, p: _Object, ind: int):
        """`_Object.errs` for a lean object: the missing keys, then each failing key's problems in the value's order; the
        keys of a few properties are told apart by a chain of `if k == ...`, else found first (`failing`)"""
        for k in p.req: self.out(ind, f'if {k!r} not in x: out.append(_new(Problem, (path, {self.const(f"missing required key {k!r}")})))')
        props = {k: s for k, s in p.props.items() if s.ok is not _true}
        e = p.extra if p.extra is not None and p.extra.ok is not _true else None
        if len(p.props) > _CHAIN:
            self.failing(p, 'x', ind)
            self.out(ind, 'if b:')
            self.out(ind + 1, 'if len(b) > 1: b = set(b)')
            self.out(ind + 1, 'for k, y in ((b[0], x[b[0]]),) if len(b) == 1 else x.items():')
            self.out(ind + 2, 'if k in b:')
            self.out(ind + 3, 'if len(out) >= limit: return')
            # each property's path (`key_path` of '' and of any other path, known now) and report: the words for a value
            # wrong as a whole, else the function reporting it
            table, entries = self.name('_R'), []
            for k, s in props.items():
                r = self.const(f'expected {s.words}, got ') if _whole(s) else self.fn(s)
                entries.append(f"{k!r}: ({self.const(key_path('', k))}, {self.const(key_path('_', k)[1:])}, {r})")
            self.tail.append(f"{table} = {{{', '.join(entries)}}}")
            self.out(ind + 3, f'r = {table}.get(k)')
            if e is not None:
                self.out(ind + 3, 'if r is None:')
                self.extra_report(p, e, ind + 4, False)
                self.out(ind + 3, 'else:')
                ind += 1
            self.out(ind + 3, 'alone, after, r = r')
            self.out(ind + 3, 'if type(r) is str: out.append(_new(Problem, (path + after if path else alone, r + short(y))))')
            self.out(ind + 3, 'else: r(y, path + after if path else alone, out, limit)')
            return
        if not props and e is None: return
        self.out(ind, 'for k, y in x.items():')
        for j, (k, s) in enumerate(p.props.items()):
            self.out(ind + 1, f"{'if' if j == 0 else 'elif'} k == {k!r}:")
            if s.ok is _true: self.out(ind + 2, 'pass'); continue
            self.check(s, 'y', f"(path + {key_path('_', k)[1:]!r} if path else {key_path('', k)!r})", ind + 2, limited=True)
        if e is None: return
        if p.props: self.out(ind + 1, 'else:')
        self.extra_report(p, e, ind + 1 + bool(p.props), True)

    def extra_report(self, p: _Object, e: _Node, ind: int, test: bool):
        "Lines reporting key `k` of value `y`, a key no property names, when it fails `additionalProperties` (`e`)"
        if e.schema is False:
            if test: self.out(ind, 'if len(out) >= limit: return')
            self.out(ind, f"out.append(_new(Problem, (path, 'unexpected key ' + short(k, 40) + {self.const(_allowed(p.props))})))")
        elif test: self.check(e, 'y', 'key_path(path, k)', ind, limited=True)
        else: self.report(e, 'y', 'key_path(path, k)', ind)

def _exec(g: _Report, name: str, what: str):
    """Function `name` of the source `g` wrote (`what` it is names it; its source kept on it as `__source__`), or None
    when it is past the generator's limits"""
    src = '\n'.join([*g.defs, *g.tail])
    # as in `_generate`: the source holds only names it made and repr()s of property names
    try: exec(compile(src, source_name(what, src), 'exec'), g.ns)  # noqa: S102
    except (RecursionError, SyntaxError, MemoryError): return None
    f = g.ns[name]
    if type(f) is FunctionType: f.__source__ = src  # type: ignore[attr-defined]  # (not when `name` is a walk's method the source merely holds)
    return f

def _failing_keys(p: _Object):
    """One Python function listing the keys of a dict that fail lean object `p`'s `properties` (those of a plain type
    tested inline, the others by a generated check each) or its `additionalProperties`: what `_Object.errs` reports"""
    g = _Report()
    g.function('failing(x0)', lambda: (g.failing(p, 'x0', 1), g.out(1, 'return b')))
    return _exec(g, 'failing', _named('validator failing keys', p.node.comp.where)) or _none  # past the generator's limits: the walk asks each key

def _reporter(n: _Node):
    "One Python function reporting what `n.errs` reports, for `Validator.problems` from its second report on"
    g = _Report()
    try: f = g.fn(n)
    except RecursionError: return n.errs
    return _exec(g, f, _named('validator report', n.comp.where)) or n.errs

# --- the public face ---------------------------------------------------------------------------------------

_TOO_DEEP = 'is nested too deeply to check (more levels than the interpreter can follow)'

class Validator:
    "A compiled JSON Schema: `is_valid(v)` and `problems(v)`"
    __slots__ = ('is_valid', 'schema', '_comp', '_node', '_fast', '_report', '_reports')
    is_valid: Callable[[Any], bool]  # does a value (JSON values: dict, list, str, int, float, bool, None) satisfy the schema?
    schema: Any                      # the schema, as given
    _node: _Node | None
    _fast: Callable[[Any], bool] | None
    _report: Callable[[Any, str, list[Problem], int], Any] | None

    def __init__(self, comp: _Compiler, schema: Any):
        self.schema, self._comp, self._node, self._fast = schema, comp, None, None
        self.is_valid = budgeted(self._first)  # the generated check replaces it on first use
        self._report, self._reports = None, 0  # the generated report, made on the second report (a one-off refusal makes none)

    def _root(self) -> _Node:
        "The compiled tree (built on first need)"
        if self._node is None:
            with self._comp.lock:
                if self._node is None:
                    n = self._comp.node(self.schema, _ROOT, 0)
                    if n.pending: n.pending()
                    self._node = n
        return self._node

    def _first(self, v) -> bool:
        "Does `v` satisfy the schema? (generates the fast check, which answers from then on)"
        if self._fast is None:
            try: fast = _generate(self._root())
            except RecursionError: return self._slow(v)  # called deep in a stack: answer now, generate another time
            except (SyntaxError, MemoryError): fast = self._slow  # past the generator's limits: the tree answers
            # one pattern budget a check (`_regex.budgeted`), where a pattern may draw on it
            self._fast, self.is_valid = fast, budgeted(fast) if self._comp.costly else fast
        return self._fast(v)

    def _slow(self, v) -> bool:
        try: return self._root().ok(v)
        except RecursionError: return False

    def property_check(self, name: str) -> Callable[[Any], bool] | None:
        """`is_valid` for the value of the root's property `name` alone (its refs resolved in the whole schema), or None
        when the root doesn't declare it: for a caller that checks each argument apart (the root then says no more)"""
        s = self.schema.get('properties', {}).get(name) if isinstance(self.schema, dict) else None
        if not isinstance(s, (dict, bool)): return None
        self._root()
        n = self._comp.memo.get(id(s)) or self._comp.node(s, self._comp.bases.get(id(s), _ROOT), 1)
        if n.pending: n.pending()
        def ok(v) -> bool:
            try: return n.ok(v)
            except RecursionError: return False
        return budgeted(ok) if self._comp.costly else ok

    def compile(self) -> Validator:
        "Compile now rather than on first use (warnings about the schema's keywords come now too); returns itself"
        self._root()
        return self

    @property
    def source(self) -> str:
        """The Python this validator generated and runs: its check (generated now if no value was checked yet) and, once
        made (from its second report on), its report; each is also in `linecache` under the filename its code names"""
        if self._fast is None: self._first(None)
        return '\n\n'.join(src for f in (self._fast, self._report) if (src := getattr(f, '__source__', None)) is not None)

    @property
    def expected(self) -> str:
        "What the schema accepts, in words for a model"
        return self._root().words

    def problems(self,
        v: Any,          # the value to check, as JSON values (dict, list, str, int, float, bool, None)
        path: str = '',  # where `v` sits, as the start of each problem's path
        limit: int = 10, # the most problems to report
    ) -> list[Problem]:  # what is wrong with `v`, where; empty when it is valid
        "Everything wrong with `v` (up to `limit`), each with its path: `items[2].sku: expected a string, got 5`"
        try:
            if self._node is None: self._root()  # (compiled first: whether a pattern budget is needed is known then)
        except RecursionError: return [Problem(path, _TOO_DEEP)]
        return _budgeted_problems(self, v, path, limit) if self._comp.costly else self._problems(v, path, limit)

    def _problems(self, v, path: str, limit: int) -> list[Problem]:
        try:
            if self.is_valid(v): return []  # the generated check first: a valid value costs no walk
            out: list[Problem] = []
            if (report := self._report) is None:
                self._reports += 1
                report = self._root().errs if self._reports < 2 else _reporter(self._root())
                if self._reports >= 2: self._report = report  # (the walk's, when the generator can't write one)
            whole = report(v, path, out, limit)
            # the walk reports only what fails, but for the value as a whole when nothing below it did: then the generated
            # check may have said False for running out of stack, which the tree tells apart (raising RecursionError)
            if whole and len(out) == 1 and self._root().ok(v): return []
            return out if len(out) <= limit else out[:limit]
        except RecursionError: return [Problem(path, _TOO_DEEP)]

    def __repr__(self) -> str: return f"Validator({self.expected})"

_budgeted_problems = budgeted(Validator._problems)  # (one pattern budget for the check and the report)

def compile_schema(
    schema: Any,              # a JSON Schema (dict or bool), e.g. a tool's input schema
    *,
    draft: str | None = None, # '2020-12' or 'draft7'; default: what the schema's `$schema` says, else 2020-12
    where: str = '',          # what the schema belongs to, starting error and warning messages: "Tool 'search'"
    lazy: bool = False,       # compile the checks on first use (a malformed shape still raises now; bad keyword values warn then)
) -> Validator:               # the check
    "`schema` as a `Validator`; ValueError (naming `where` and the JSON Pointer) when it isn't a schema"
    v = Validator(_Compiler(schema, _draft7(schema, draft), where), schema)
    return v if lazy else v.compile()
