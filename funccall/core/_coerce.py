"""JSON values to the Python values a function's annotations ask for.

One coercer per annotation, built from the kind `_types.kind` gives it and cached. Coercion repairs a short,
documented list of known model mistakes, and only where the annotation allows them:
- JSON text where a list, tuple, set or object is expected (`'[1, 2]'`); a Python literal (`"['a', 'b']"`) is read
  too when the text is short (`MAX_LITERAL`); text longer than `MAX_TEXT` is refused unread;
- `"5"` for an integer or number, `"true"`/`"false"` for a boolean;
- `{}` for an empty list, and a single value where a list is expected, when that value fits the list's items;
- dicts into dataclasses, TypedDicts, NamedTuples, pydantic models and plain classes, recursively;
- strings into Path/UUID/Decimal/datetime/date/time/Enum members, base64 strings into bytes.
Anything else that does not fit raises `Mismatch`, never passes through to fail deep inside the tool. A `Mismatch`
carries every problem found in the value (up to `MAX_SHOWN` and a sign of more), each at its path, so the model
can fix them all in one turn. Problems are described in JSON terms, from the annotation's schema, and only when
one is reported: the happy path never pays for words.
"""
from __future__ import annotations

import ast, base64, binascii, dataclasses, datetime as dt, json, re, sys
from decimal import Decimal
from keyword import iskeyword
from uuid import UUID
from operator import countOf, itemgetter
from types import FunctionType
from typing import Annotated, Any, Callable, Literal, get_args, get_origin

from ._inputs import MAX_SHOWN, Problem, short
from ._json import jsonable
from ._regex import bounded_search, budgeted
from ._types import Default, SchemaError, TypeInfo, _is_ndarray, constraints, json_type, fields, kind, needs_pydantic, origin, type_cache, type_name

__all__ = ['Mismatch', 'coercer', 'exact_type', 'ready', 'expected_words', 'path_text', 'MAX_TEXT', 'MAX_LITERAL']

MAX_TEXT = 1_000_000
"The longest text read as JSON where a list or object is expected; longer text is refused unread"
MAX_LITERAL = 10_000
"The longest text read as a Python literal (`['a', 'b']`) when it is not JSON; parsing Python costs far more than JSON"
_NUM_TEXT = 5_000  # the longest text read as a number: Python refuses integers of more digits anyway

# --- what went wrong ------------------------------------------------------------------------------------

class Mismatch(ValueError):
    """Values that don't fit their annotation, each at its path inside the argument.

    A leaf says what one value should have been (`t`, an annotation, described in JSON terms when reported) or why
    it is wrong although its type is right (`reason`). Containers gather their items' mismatches into the first
    one's `leaves` (at most `MAX_SHOWN` + 1: one more than shown says "and more"), so one raise reports them all."""
    def __init__(self, t, got, reason: str | None = None, path: tuple = ()):
        self.t, self.got, self.reason = t, got, reason
        self.rpath = list(reversed(path))  # the path, innermost first: each level up appends its part
        self.leaves, self.cut = [self], False

    @property
    def path(self) -> tuple: return tuple(reversed(self.rpath))

    def within(self, part) -> Mismatch:
        "These mismatches, one level up: inside item or field `part`"
        for leaf in self.leaves: leaf.rpath.append(part)
        return self

    def add(self, other: Mismatch) -> bool:
        "Gather `other`'s mismatches with these; whether enough are gathered to stop looking"
        room = MAX_SHOWN + 1 - len(self.leaves)
        self.leaves += other.leaves[:room]
        self.cut = self.cut or other.cut or len(other.leaves) > room
        return self.full

    @property
    def full(self) -> bool: return self.cut or len(self.leaves) > MAX_SHOWN

    def text(self) -> str:
        "What is wrong with this one value, for the model"
        if self.reason is not None: return self.reason
        return f"expected {expected_words(self.t)}, got {short(self.got)}"

    def problems(self, nm: str) -> list[Problem]:
        "Each mismatch as a `Problem` at its path inside argument `nm`"
        return [Problem(path_text(nm, leaf.path), leaf.text()) for leaf in self.leaves]

    def __str__(self) -> str:
        return '; '.join(str(p) if p.path else p.message for p in self.problems(''))

def _gather(bad: Mismatch | None, e: Mismatch) -> Mismatch:
    if bad is None: return e
    bad.add(e)
    return bad

_ident_re = re.compile(r'^[^\W\d]\w*$')

def path_text(nm: str, path: tuple) -> str:
    "Where a value is, as the model wrote it: `items[2].sku`"
    res = [nm]
    for p in path:
        if isinstance(p, int) and not isinstance(p, bool): res.append(f'[{p}]')
        elif isinstance(p, str) and _ident_re.match(p): res.append(f'.{p}' if res[0] or len(res) > 1 else p)
        else: res.append(f'[{short(p, 40)}]')
    return ''.join(res)

def _words(t) -> str:
    "Annotation `t` in JSON terms, from its schema: 'an ISO 8601 date-time string or null'"
    from ._expect import expected  # only reports pay for words
    from .schema import handle_type
    defs: dict = {}
    try: return expected(handle_type(t, defs), defs)
    except Exception: return type_name(t)  # a type the schema can't describe still gets a name

_word_cache = type_cache(_words)

def expected_words(t) -> str:
    "What annotation `t` accepts, in the words the model reads: 'an array of integers', \"one of 'a', 'b', or null\""
    if t is None: return 'a value'
    try: return _word_cache(t)
    except RecursionError: return type_name(t)

# --- building coercers ------------------------------------------------------------------------------------

_MISSING = object()  # no value: a key or choice not found
_int_re = re.compile(r'^\s*[-+]?\d+\s*$')
_num_re = re.compile(r'^\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$')  # one way to match each text: linear time

def _parse_text(v: str, t):
    "A list or object the model sent as text: JSON, or a short Python literal as some models write them"
    if len(v) > MAX_TEXT:
        raise Mismatch(t, v, f"expected {expected_words(t)}, got text of {len(v):,} characters; send the value itself, not its text")
    try: return json.loads(v)
    except (ValueError, RecursionError, MemoryError): pass
    if len(v) <= MAX_LITERAL:
        try: return ast.literal_eval(v)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError): pass
    raise Mismatch(t, v)

def _build(t):
    try: info = kind(t)
    except SchemaError: return _identity  # no schema, so nothing to check against: as the reference does
    if info.meta and needs_pydantic(info.meta): return _pydantic_coerce(t)
    c = _builders[info.kind](info)
    if info.meta and (cons := constraints(info.meta, json_type(info))): c = _constrained(c, cons)
    return budgeted(c) if _patterned(t) else c  # one pattern budget for all of an argument's strings (a budget inside shares it)

_FIELDED = ('dataclass', 'typeddict', 'namedtuple', 'class')  # (a pydantic model's patterns are pydantic's, searched in linear time)

def _patterned(t, seen: set | None = None) -> bool:
    "Whether annotation `t` holds a pattern constraint: in its `Annotated` metadata, its type arguments' or its fields'"
    seen = set() if seen is None else seen
    if id(t) in seen or len(seen) > 500: return False
    seen.add(id(t))
    if get_origin(t) is Annotated: return 'pattern' in constraints(t.__metadata__, 'string') or _patterned(t.__origin__, seen)
    if get_origin(t) is Literal: return False  # (its arguments are values)
    if any(_patterned(a, seen) for a in get_args(t)): return True
    try:
        info = kind(t)
        return info.kind in _FIELDED and any(_patterned(f.anno, seen) for f in fields(info))
    except (SchemaError, TypeError): return False  # no schema (its coercer says so when a value is sent), or not a type

def _pydantic_coerce(t):
    "pydantic validates an annotation whose metadata holds its validators (`AfterValidator`, ...): all of it, in pydantic's order"
    from pydantic import TypeAdapter  # (the metadata is pydantic's, or `get_schema` refused it: pydantic is there)
    check = TypeAdapter(t).validate_python
    def f(v):
        try: return check(v)
        except ValueError as e: raise _pydantic_mismatch(t, v, e) from None  # pydantic's ValidationError
    return f

def _pydantic_mismatch(t: Any, v: Any, e: Exception) -> Mismatch:
    "Each of the errors in pydantic's `ValidationError` `e` at its path, as one `Mismatch`"
    errs = e.errors() if callable(getattr(e, 'errors', None)) else []  # type: ignore[attr-defined]  # pydantic's `ValidationError`
    if not errs: return Mismatch(t, v, f"not a valid {type_name(t)}: {str(e)[:200]}")
    bad = None
    for err in errs[:MAX_SHOWN + 1]:
        why = f"{err.get('msg', 'invalid')}, got {short(err.get('input'))}"
        bad = _gather(bad, Mismatch(None, err.get('input'), why, tuple(err.get('loc', ()))))
    bad.cut = len(errs) > MAX_SHOWN + 1  # type: ignore[union-attr]  # `errs` is not empty: `bad` holds its first
    return bad  # type: ignore[return-value]

_NUMBERS = (int, float, Decimal)  # a `Decimal` (a string in the schema) is held to its `Field(ge=...)` as pydantic holds it

def _multiple(x, m) -> bool:
    if type(x) is int and type(m) is int: return x % m == 0  # exactly: a float quotient of large integers rounds
    if isinstance(x, Decimal): return x % Decimal(repr(m)) == 0  # in its context's digits: `1E+99999999` is refused, never expanded
    try: q = x / m
    except ZeroDivisionError: return False
    except OverflowError:  # an integer past any float's range (10**400): exactly, as both are written
        from fractions import Fraction
        return Fraction(x) % Fraction(repr(m) if type(m) is float else m) == 0
    return abs(q - round(q)) < 1e-9

_tests = {  # keyword -> (applies to the value, holds, why not: from the value sent and the limit)
    'minimum': (_NUMBERS, lambda x, m: x >= m, '{} is less than the minimum {}'),
    'maximum': (_NUMBERS, lambda x, m: x <= m, '{} is more than the maximum {}'),
    'exclusiveMinimum': (_NUMBERS, lambda x, m: x > m, '{} is not greater than {}'),
    'exclusiveMaximum': (_NUMBERS, lambda x, m: x < m, '{} is not less than {}'),
    'multipleOf': (_NUMBERS, _multiple, '{} is not a multiple of {}'),
    'minLength': ((str,), lambda x, m: len(x) >= m, '{} is shorter than {} characters'),
    'maxLength': ((str,), lambda x, m: len(x) <= m, '{} is longer than {} characters'),
    'pattern': ((str,), lambda x, m: m(x), '{} does not match the pattern {!r}'),
    'minItems': ((list, tuple, set, frozenset), lambda x, m: len(x) >= m, '{} has fewer than {} items'),
    'maxItems': ((list, tuple, set, frozenset), lambda x, m: len(x) <= m, '{} has more than {} items'),
    'minProperties': ((dict,), lambda x, m: len(x) >= m, '{} has fewer than {} properties'),
    'maxProperties': ((dict,), lambda x, m: len(x) <= m, '{} has more than {} properties'),
}

def _holds(holds, x, m) -> bool:
    "Whether constraint `holds` holds for `x`: not when it can't be worked out (a `Decimal` NaN can't be ordered)"
    try: return holds(x, m)
    except ArithmeticError: return False

def _constrained(c, cons: dict):
    "Coercer `c`, then the constraints `cons` (JSON Schema keywords) checked on its result"
    tests = [(*_tests[k], _pattern(m) if k == 'pattern' else m) for k, m in cons.items()]
    def f(v):
        x = c(v)
        for types, holds, why, m in tests:
            if isinstance(x, types) and not isinstance(x, bool) and not _holds(holds, x, m): raise Mismatch(None, v, why.format(short(v), m))
        return x
    return f

class _Pattern(str):
    "A developer's pattern (`Field(pattern=...)`), shown as its text, called to search a string in bounded time (`_regex`)"
    search: Callable[[str], Any]  # set by `_pattern`: the match, None, or `_UNKNOWN` when it can't tell in bounded time
    def __call__(self, x: str) -> bool:
        found = self.search(x)
        if found is _UNKNOWN:  # refused, as the pattern may be a safety check: never let through unchecked
            raise Mismatch(None, x, f"{short(x)} can't be checked against the pattern {str(self)!r} in bounded time; send a shorter text")
        return bool(found)

_UNKNOWN = object()

def _pattern(p: str) -> _Pattern:
    "Pattern `p` ready to search; a `SchemaError` when it doesn't compile"
    res = _Pattern(p)
    try: res.search = bounded_search(p, _UNKNOWN)  # pyright: ignore[reportArgumentType]  # (`unknown` is any marker)
    except (re.error, RecursionError, OverflowError) as e: raise SchemaError(f"pattern {short(p)} doesn't compile: {e}") from None
    return res

def _identity(v): return v

_coercers = type_cache(_build)

def coercer(t) -> Callable[[Any], Any]:
    "A function that turns a JSON value into what annotation `t` asks for, or raises `Mismatch`"
    return _coercers(t)

def exact_type(t) -> type | None:
    "The one type a value of annotation `t` may have to need no coercion at all (`int` for `int`), or None"
    try: info = kind(t)
    except SchemaError: return None
    if info.meta and (constraints(info.meta, json_type(info)) or needs_pydantic(info.meta)): return None  # a range, length, pattern or validator
    return info.t if info.kind == 'scalar' and info.t is info.args[0] else None

# --- the {kind: handler} table: each builds the coercer for one kind ----------------------------------

def _any_coerce(info): return _identity

def _none_coerce(info):
    def f(v):
        if v is None: return None
        raise Mismatch(type(None), v)
    return f

def _bool(v):
    if v is True or v is False: return v
    if isinstance(v, str) and len(v) <= 10 and v.strip().lower() in ('true', 'false'): return v.strip().lower() == 'true'
    raise Mismatch(bool, v)

def _int(v):
    if type(v) is int: return v
    if isinstance(v, float) and v.is_integer(): return int(v)
    if isinstance(v, int) and not isinstance(v, bool): return v
    if isinstance(v, str) and len(v) <= _NUM_TEXT and (v.isascii() and v.isdigit() or _int_re.match(v)):  # (plain digits: no pattern)
        try: return int(v)
        except ValueError: pass  # over Python's limit on digits
    raise Mismatch(int, v)

def _float(v):
    if type(v) is float: return v
    try:
        if isinstance(v, int) and not isinstance(v, bool): return float(v)
        if isinstance(v, str) and len(v) <= _NUM_TEXT and _num_re.match(v):
            f = float(v)
            if f not in (float('inf'), float('-inf')): return f
    except OverflowError: raise Mismatch(float, v, f"{short(v)} is too large for a number") from None
    raise Mismatch(float, v)

def _str(v):
    if isinstance(v, str): return v
    raise Mismatch(str, v)

_scalars = {bool: _bool, int: _int, float: _float, str: _str}

def _scalar_coerce(info):
    base = _scalars[info.args[0]]
    if info.t is info.args[0]: return base
    t = info.t
    def f(v):  # a subclass such as `class UserId(str)`
        if isinstance(v, t): return v
        try: return t(base(v))
        except Mismatch as e: raise Mismatch(t, v) from e
        except Exception as e: raise Mismatch(t, v, f"{short(v)} is not a valid {type_name(t)}: {str(e)[:200]}") from None
    return f

def _object_coerce(info): return _identity

def _json_key(v):
    "A dict key for a JSON value: `True` and `1`, `[1]` and `(1,)` stay apart and alike as JSON has them"
    if isinstance(v, (list, tuple, dict)): return ('json', json.dumps(jsonable(v), sort_keys=True))
    return (type(v), v)

def _choice_coerce(t, choices: dict, by_name: dict | None = None):
    "A coercer picking one of `choices` (JSON value -> Python value) by the value the model sent"
    containers = any(k[0] == 'json' for k in choices)
    plain = {val: c for (ty, val), c in choices.items() if ty is str or ty is int}  # no string equals an integer: one dict serves both
    def f(v):
        if type(v) is str or type(v) is int:
            c = plain.get(v, _MISSING)
            if c is not _MISSING: return c
        if containers or not isinstance(v, (list, tuple, dict)):  # a large or deep value matches no scalar choice
            try: return choices[_json_key(v)]
            except (KeyError, TypeError, ValueError, RecursionError): pass
        if isinstance(v, str):
            if by_name and v in by_name: return by_name[v]
            if len(v) <= _NUM_TEXT and _num_re.match(v):  # `"5"` for 5
                for (ty, val), c in choices.items():
                    if ty in (int, float) and float(v) == val: return c
        raise Mismatch(t, v)
    f.plain = plain  # type: ignore[attr-defined]  # the lookup `_enum_coerce` reads
    return f

def _literal_coerce(info):
    choices: dict[Any, Any] = {}
    for a in info.args: choices.setdefault(_json_key(jsonable(a)), a)
    return _choice_coerce(info.t, choices)

def _enum_coerce(info):
    t = info.t
    choices: dict[Any, Any] = {}
    for m in t: choices.setdefault(_json_key(jsonable(m)), m)
    pick = _choice_coerce(t, choices, dict(t.__members__))
    if type(t).__instancecheck__ is not type.__instancecheck__: return lambda v: v if isinstance(v, t) else pick(v)
    plain = pick.plain  # pyright: ignore[reportFunctionMemberAccess]
    def f(v):
        if type(v) is str or type(v) is int:  # no member (a member's type is `t`'s own): what the model sends skips the class check
            m = plain.get(v, _MISSING)
            return pick(v) if m is _MISSING else m
        return v if isinstance(v, t) else pick(v)
    def texts(xs: list) -> list:  # a list of strings, looked up at once, in C (see `_list_coerce`)
        if countOf(map(type, xs), str) != len(xs): raise TypeError('not all text')  # (a `str` subclass is no JSON string)
        return list(itemgetter(*xs)(plain)) if len(xs) > 1 else [plain[x] for x in xs]  # (one item: itemgetter gives it bare)
    f.texts = texts  # type: ignore[attr-defined]  # read by `_list_coerce`
    return f

_json_kinds = {  # the JSON types each kind takes without a repair
    'any': None, 'object': None, 'none': {type(None)}, 'list': {list}, 'set': {list}, 'tuple': {list}, 'dict': {dict},
    'typeddict': {dict}, 'namedtuple': {dict}, 'dataclass': {dict}, 'model': {dict}, 'class': {dict},
    'format': {str}, 'literal': None, 'enum': None,
}

def _accepts(info) -> set | None:
    "The Python types of JSON values that `info` takes without a repair; `None` for any"
    if info.kind == 'scalar': return {info.args[0]} | ({int} if info.args[0] is float else set())
    if info.kind == 'union':
        members = [_accepts(kind(a)) for a in info.args]
        return None if any(m is None for m in members) else set().union(*members)  # type: ignore[arg-type]  # none is None
    return _json_kinds[info.kind]

def _union_coerce(info):
    members = [(_accepts(kind(a)), coercer(a)) for a in info.args]
    t = info.t
    def f(v):
        tv, tried = type(v), []
        for acc, c in members:  # first the members that take this JSON type as it is
            if acc is None or tv in acc:
                try: return c(v)
                except Mismatch as e: tried.append(e)
        for acc, c in members:  # then the repairs
            if acc is not None and tv not in acc:
                try: return c(v)
                except Mismatch: pass
        if len(tried) == 1 and (tried[0].path or tried[0].reason or len(tried[0].leaves) > 1 or tv in (dict, list)):
            raise tried[0]  # the one member it was meant for: its own, more precise, problems
        raise Mismatch(t, v)
    return f

_NOT_ONE = object()  # `_as_list`: the value is not a single item to wrap

def _as_list(v, t):
    "`v` as a list, repairing JSON text and `{}`; `(v, True)` for a single value to wrap, if it fits the item"
    if type(v) is list: return v, False
    if isinstance(v, str) and v.lstrip()[:1] == '[':
        try: parsed = _parse_text(v, t)
        except Mismatch as e:
            if e.reason: raise  # too long to read
            parsed = None
        if isinstance(parsed, list): return parsed, False
    if isinstance(v, dict) and not v: return [], False
    if isinstance(v, (tuple, set, frozenset)): return list(v), False
    if v is None: raise Mismatch(t, v)  # null is no value to wrap: "nothing", not "[null]"
    return [v], True

def _list_coerce(info):
    t = info.t
    if _is_ndarray(t):
        asarray = sys.modules['numpy'].asarray
        def f(v):  # pyright: ignore[reportRedeclaration]  # returned here: the `f` below is another tool's
            if isinstance(v, t): return v
            try: return asarray(v if type(v) is list else _as_list(v, t)[0])
            except Mismatch: raise
            except Exception as e: raise Mismatch(t, v, f"{short(v)} is not a valid array: {str(e)[:200]}") from None
        return f
    item = coercer(info.args[0])
    exact = exact_type(info.args[0])
    # how a kind made from text (an enum, a date) reads a whole list at once: what `item` makes of each, or an exception
    texts = getattr(item, 'texts', None)
    def f(v):  # type: ignore[no-redef]  # (the array's `f` above is returned before this one is made)
        if texts is not None and type(v) is list and v and type(v[0]) is str:
            try: return texts(v)
            except Exception: pass  # noqa: BLE001, S110 - some item is not valid text: the checked way says which and why
        if exact is not None and type(v) is list and countOf(map(type, v), exact) == len(v): return v[:]  # nothing to convert
        lst, one = _as_list(v, t)
        if one:  # a single value for a one-item list, if it is one
            try: return [item(lst[0])]
            except Mismatch: raise Mismatch(t, v) from None
        if item is _identity: return lst[:] if lst is v else lst
        out, bad = [], None
        for i, x in enumerate(lst):
            try: out.append(x if exact is not None and type(x) is exact else item(x))  # (exactly its type: as it is, without a call)
            except Mismatch as e:
                if (bad := _gather(bad, e.within(i))).full: break
        if bad is not None: raise bad
        return out
    if exact is not None: f.exact_items = exact  # type: ignore[attr-defined]  # a class builder writes the first test out for its fields (`_class_builder`)
    return f

def _set_coerce(info):
    lst, make = _list_coerce(info), frozenset if origin(info.t) is frozenset else set
    def f(v):
        items = lst(v)
        try: return make(items)
        except TypeError: raise Mismatch(info.t, v, f"{short(v)} has items that can't be in a set") from None
    return f

def _tuple_coerce(info):
    args, t = info.args, info.t
    if len(args) == 2 and args[1] is Ellipsis:
        lst = _list_coerce(TypeInfo('list', t, (args[0],)))
        return lambda v: tuple(lst(v))
    items = [coercer(a) for a in args]
    def f(v):
        if isinstance(v, str) and v.lstrip()[:1] == '[': v = _parse_text(v, t)
        if isinstance(v, tuple): v = list(v)
        if type(v) is not list or len(v) != len(items): raise Mismatch(t, v)
        out, bad = [], None
        for i, (c, x) in enumerate(zip(items, v)):
            try: out.append(c(x))
            except Mismatch as e: bad = _gather(bad, e.within(i))
        if bad is not None: raise bad
        return tuple(out)
    return f

def _as_dict(v, t):
    if isinstance(v, dict): return v
    if isinstance(v, str) and v.lstrip()[:1] == '{':
        v2 = _parse_text(v, t)
        if isinstance(v2, dict): return v2
    raise Mismatch(t, v)

def _dict_coerce(info):
    t = info.t
    if not info.args: return lambda v: _as_dict(v, t)
    key, val = coercer(info.args[0]), coercer(info.args[1])
    kexact, vexact = exact_type(info.args[0]), exact_type(info.args[1])
    def f(v):
        if (kexact is not None and vexact is not None and type(v) is dict and countOf(map(type, v.values()), vexact) == len(v)
                and countOf(map(type, v), kexact) == len(v)): return v.copy()  # nothing to convert
        out, bad = {}, None
        for k, x in _as_dict(v, t).items():
            try: out[k if type(k) is kexact else key(k)] = x if type(x) is vexact else val(x)  # (as the list's loop)
            except Mismatch as e:
                if (bad := _gather(bad, e.within(k))).full: break
        if bad is not None: raise bad
        return out
    return f

def _utc(v: str) -> str: return v[:-1] + '+00:00' if v.endswith(('Z', 'z')) else v  # Python 3.10 rejects 'Z'

def _parse_bytes(v: str) -> bytes:
    try: return base64.b64decode(v, validate=True)
    except binascii.Error: raise ValueError('not base64') from None

# the standard format base -> how a string becomes the annotated class `t` (a subclass of that base, or the base)
_parsers = {dt.datetime: lambda t: lambda v: t.fromisoformat(_utc(v)), dt.date: lambda t: t.fromisoformat,
            dt.time: lambda t: lambda v: t.fromisoformat(_utc(v)), bytes: lambda t: lambda v: t(_parse_bytes(v))}
# text shaped like the format whose value is still wrong (a 30th of February) is told why: (shape, what it is not)
_shapes = {dt.datetime: (re.compile(r'^\d{4}-\d\d-\d\d[T ]\d\d:\d\d'), 'a valid date-time'),
           dt.date: (re.compile(r'^\d{4}-\d\d-\d\d$'), 'a valid date'), dt.time: (re.compile(r'^\d\d:\d\d'), 'a valid time')}

_short_formats = (dt.datetime, dt.date, dt.time, UUID)  # text of a few dozen characters: longer text is not parsed at all

def _own_date_parser(t) -> bool:
    "Whether `t` reads text with `date.fromisoformat` itself, which takes only text and refuses more than 10 characters unread"
    return next((k for k in t.__mro__ if 'fromisoformat' in k.__dict__), None) is dt.date

def _format_coerce(info):
    t, base = info.t, info.args[0]
    parse = _parsers[base](t) if base in _parsers else t
    shape, what = _shapes.get(base, (None, None))
    checked = not (base is dt.date and _own_date_parser(t))  # whether the text's type and length need checking before `parse`
    limit = 100 if base in _short_formats and checked else None
    def f(v):
        if isinstance(v, t) and not (base is dt.date and isinstance(v, dt.datetime)): return v
        if base is Decimal and isinstance(v, (int, float)) and not isinstance(v, bool): v = str(v)
        if not isinstance(v, str) or (limit and len(v) > limit): raise Mismatch(t, v)
        try: return parse(v)
        except Exception as e:
            if shape is not None and shape.match(v): raise Mismatch(t, v, f"{short(v)} is not {what}: {str(e)[:200]}") from None
            raise Mismatch(t, v) from None
    def texts(xs: list) -> list:  # a list of strings, read at once (see `_list_coerce`)
        if checked and (countOf(map(type, xs), str) != len(xs) or limit and max(map(len, xs)) > limit): raise ValueError('not all short text')
        return list(map(parse, xs))  # (a loop in C)
    f.texts = texts  # type: ignore[attr-defined]  # read by `_list_coerce`
    return f


class _FieldsPlan:
    "How to build the keyword arguments of a class kind from a JSON object"
    __slots__ = ('info', 'specs', 'by_key', 'required', 'takes', 'fills')
    def __init__(self, info):
        fs = fields(info)
        self.info = info
        # (JSON key, Python name, coercer, the type that needs no coercion, required)
        self.specs = [(f.name, f.attr, coercer(f.anno), exact_type(f.anno), f.required) for f in fs]
        self.by_key = {s[0]: s for s in self.specs}
        self.required = frozenset(f.name for f in fs if f.required)
        self.takes = ', '.join(repr(f.name) for f in fs[:MAX_SHOWN]) + (', ...' if len(fs) > MAX_SHOWN else '')
        # defaults the object can't supply itself: pydantic's `Field` in an `__init__`, langchain's TypedDict `Annotated[T, default, "..."]`
        self.fills = {f.attr: f.default for f in fs if type(f.default) is Default}

    def kwargs(self, v) -> dict:
        "The keyword arguments for `v`: checked field by field; any problem sends it the careful way, to report them all"
        d = v if type(v) is dict else _as_dict(v, self.info.t)
        kw = {}
        for key, attr, c, exact, required in self.specs:
            x = d.get(key, _MISSING)
            if x is not _MISSING:
                if type(x) is exact: kw[attr] = x
                else:
                    try: kw[attr] = c(x)
                    except Mismatch as e: return self._report(d, v, kw, key, e)
            elif required: return self._report(d, v, kw)
        if len(kw) != len(d): return self._report(d, v, kw)  # fields it doesn't have
        return self._filled(kw) if self.fills else kw

    def _filled(self, kw: dict) -> dict:
        for attr, d in self.fills.items():
            if attr not in kw: kw[attr] = d.make(kw)
        return kw

    def _report(self, d: dict, v: Any, done: dict, failed: Any = None, err: Any = None) -> dict:
        """The same, finding every problem; a null the type can't take means 'use the default' (strict mode sends it).
        The fields `kwargs` made already (`done`) and the one it failed at (`failed`, with its `err`) are not made again."""
        kw, bad = {}, None
        for k, x in d.items():
            spec = self.by_key.get(k)
            if spec is None:
                e = Mismatch(None, x, f"unknown field; {type_name(self.info.t)} has {self.takes}")
            elif spec[1] in done and k != failed: kw[spec[1]] = done[spec[1]]; continue
            else:
                try:
                    if k == failed: raise err
                    kw[spec[1]] = spec[2](x); continue
                except Mismatch as m:
                    if x is None and not spec[4]: continue
                    e = m
            if (bad := _gather(bad, e.within(k))).full: break
        if bad is None or not bad.full:
            for key in self.by_key:
                if key in self.required and key not in d:
                    if (bad := _gather(bad, Mismatch(None, v, 'missing (required)', (key,)))).full: break
        if bad is not None: raise bad
        return self._filled(kw)

# The fields plan is built on first use: a recursive class refers to its own coercer while being planned

def _typeddict_coerce(info):
    plan = None
    def f(v):
        nonlocal plan
        if plan is None: plan = _FieldsPlan(info)
        return plan.kwargs(v)
    return f

def _namedtuple_coerce(info):
    plan, t = None, info.t
    def f(v):
        nonlocal plan
        if isinstance(v, t): return v
        if plan is None: plan = _FieldsPlan(info)
        if isinstance(v, (list, tuple)):  # the tuple's own form: one item per field
            if len(v) > len(t._fields):
                raise Mismatch(t, v, f"expected {expected_words(t)} or an array of at most {len(t._fields)} items, got {short(v)}")
            v = dict(zip(t._fields, v))
        return t(**plan.kwargs(v))
    return f

def _class_coerce(info):
    "Dataclasses and plain classes: a dict of constructor arguments, each coerced"
    plan: Any
    build: Any
    t, plan, build, busy = info.t, None, None, False
    def slow(v):
        if type(v) is not dict and isinstance(v, t): return v
        kw = plan.kwargs(v)
        try: return t(**kw)
        except Exception as e: raise _not_valid(t, v, e) from None
    def builder(nested: bool = False) -> Any:
        "The builder, made on first use: a class holding itself reaches its own coercer while it is planned (`nested`: then None)"
        nonlocal plan, build, busy
        if build is None:
            if busy and nested: return None
            busy = True
            try: plan = _FieldsPlan(info); build = _class_builder(t, plan, slow)
            finally: busy = False
        return build
    def f(v): return (build or builder())(v)
    f.builder = builder  # type: ignore[attr-defined]  # read by `ready`
    return f

def ready(
    c: Callable,  # a coercer from `coercer`
) -> Callable:    # the same coercion, without the check for first use where `c` has one
    "`c`, or what it runs once it is ready (a class's builder): one call less for every value"
    if (builder := getattr(c, 'builder', None)) is None: return c
    try: return builder(True) or c
    except Exception: return c  # a class funccall can't plan: its coercer says so when a value comes, as before

def _not_valid(t, v, e: Exception) -> Mismatch:
    return Mismatch(t, v, f"not a valid {type_name(t)}: {type(e).__name__}: {str(e)[:200]}")

def _positional(t, attrs: list) -> dict:
    """Which of `attrs` `t(...)` may take by position, each at its place: the leading parameters of `t`'s own `__init__`
    that `attrs` name, so the call binds exactly as by keyword (a keyword call costs a dict and a lookup per argument)"""
    if type(t).__call__ is not type.__call__ or t.__new__ is not object.__new__: return {}  # nothing else sees the arguments
    init = next((k.__dict__['__init__'] for k in t.__mro__ if '__init__' in k.__dict__), None)
    if type(init) is not FunctionType or init.__code__.co_posonlyargcount > 1: return {}
    res: dict[str, int]
    code, given, res = init.__code__, set(attrs), {}
    for nm in code.co_varnames[1:code.co_argcount]:  # after `self`
        if nm not in given: break
        res[nm] = len(res)
    return res

def _stores_fields(t, attrs: list) -> bool:
    """Whether `t(...)` given every field in `attrs` only stores each on a new object, so the builder may do just that
    (as pydantic-core does): `t`'s own `__init__` has exactly the code `dataclasses` writes for these fields with no
    `__post_init__`, frozen guard or other field to set; any doubt keeps the call"""
    if type(t).__call__ is not type.__call__ or t.__new__ is not object.__new__: return False
    init = t.__dict__.get('__init__')
    if type(init) is not FunctionType or not dataclasses.is_dataclass(t): return False
    fs = [f for f in dataclasses.fields(t) if f.init]
    if [f.name for f in fs] != attrs: return False
    try: ref = dataclasses.make_dataclass(t.__name__, [(f.name, Any, dataclasses.field(  # type: ignore[misc, union-attr]  # `t` is a class
            default=f.default, default_factory=f.default_factory, kw_only=f.kw_only)) for f in fs]).__init__.__code__
    except Exception: return False
    return ref.replace(co_firstlineno=init.__code__.co_firstlineno) == init.__code__

def _class_builder(t, plan: _FieldsPlan, slow: Callable) -> Callable:
    """A function building `t` from a JSON object that has exactly its fields, with the checks written out, field by
    field (as pydantic-core and attrs do); anything else, and any problem, goes to `slow`, which reports them all"""
    specs = plan.specs
    if not specs or not all(attr.isidentifier() and not iskeyword(attr) for _, attr, *_ in specs): return slow
    ns = {'Mismatch': Mismatch, 'T': t, 'slow': slow, 'not_valid': _not_valid, 'new': object.__new__, 'countOf': countOf}
    get = '; '.join(f'a{i} = v[{key!r}]' for i, (key, *_) in enumerate(specs))
    fix = []
    for i, (_, _, c, exact, _) in enumerate(specs):
        ns[f'C{i}'], ns[f'E{i}'], items = ready(c), exact, getattr(c, 'exact_items', None)
        if exact: fix.append(f'            if type(a{i}) is not E{i}: a{i} = C{i}(a{i})')
        elif items:  # the list coercer's own first test, written out: a list of items of exactly their type is copied
            ns[f'E{i}'] = items
            fix.append(f'            a{i} = a{i}[:] if type(a{i}) is list and countOf(map(type, a{i}), E{i}) == len(a{i}) else C{i}(a{i})')
        else: fix.append(f'            a{i} = C{i}(a{i})')
    attrs = [attr for _, attr, *_ in specs]
    if _stores_fields(t, attrs):
        make = ['            o = new(T)', *[f'            o.{attr} = a{i}' for i, attr in enumerate(attrs)], '            return o']
    else:
        pos = _positional(t, attrs)
        args = sorted((pos[attr], f'a{i}') for i, attr in enumerate(attrs) if attr in pos)
        make = [f"            return T({', '.join([a for _, a in args] + [f'{attr}=a{i}' for i, attr in enumerate(attrs) if attr not in pos])})"]
    src = '\n'.join(['def build(v):', f'    if type(v) is dict and len(v) == {len(specs)}:',
                     f'        try: {get}', '        except KeyError: return slow(v)',
                     '        try:', *fix, '        except Mismatch: return slow(v)',
                     '        try:', *make, '        except Exception as e: raise not_valid(T, v, e) from None',
                     '    return slow(v)'])
    exec(src, ns)  # noqa: S102 - only field names (identifiers) and reprs of keys go in
    return ns['build']

def _takes_null(t) -> bool:
    acc = _accepts(kind(t))
    return acc is None or type(None) in acc

_CLASS_KINDS = ('typeddict', 'namedtuple', 'dataclass', 'model', 'class')

def _drop_default_nulls(t, v, depth: int = 0):
    """`v`, a JSON value for `t`, without the nulls strict mode sends for fields that can't take null but may be left
    out (a default, a `NotRequired` key), at any depth: what pydantic is given for the classes inside a model"""
    if depth > 100 or not isinstance(v, (dict, list)): return v  # (a JSON value is a finite tree; the bound is for a cyclic one)
    info = kind(t)
    if info.kind == 'union':
        classes = [a for a in info.args if kind(a).kind in _CLASS_KINDS]
        return _drop_default_nulls(classes[0], v, depth + 1) if len(classes) == 1 else v  # which class is meant is pydantic's choice
    if info.kind in ('list', 'set') and isinstance(v, list): return [_drop_default_nulls(info.args[0], x, depth + 1) for x in v]
    if info.kind == 'dict' and isinstance(v, dict): return {k: _drop_default_nulls(info.args[1], x, depth + 1) for k, x in v.items()}
    if info.kind not in _CLASS_KINDS or not isinstance(v, dict): return v
    try: fs = {f.name: f for f in fields(info)}
    except SchemaError: return v
    out = {}
    for k, x in v.items():
        f = fs.get(k)
        if f is None: out[k] = x
        elif not (x is None and not f.required and _takes_null(f.anno) is False): out[k] = _drop_default_nulls(f.anno, x, depth + 1)
    return out

def _model_coerce(info):
    "pydantic models validate themselves, aliases and constraints included; each of their errors is reported at its path"
    t, defaulted = info.t, None
    def f(v):
        nonlocal defaulted
        if isinstance(v, t): return v
        if defaulted is None:  # fields whose type can't take null: a null for them means "use the default" (strict mode)
            defaulted = {fl.name for fl in fields(info) if not fl.required and _takes_null(fl.anno) is False}
        d = _as_dict(v, t)
        if defaulted and any(d.get(k, 0) is None for k in defaulted): d = {k: x for k, x in d.items() if not (x is None and k in defaulted)}
        try: return t.model_validate(d)
        except Exception as e:  # pydantic's ValidationError
            if (pruned := _drop_default_nulls(t, d)) != d: return f(pruned)  # a null strict mode sent inside: left out, as above
            raise _pydantic_mismatch(t, v, e) from None
    return f

_builders = {
    'any': _any_coerce, 'none': _none_coerce, 'scalar': _scalar_coerce, 'object': _object_coerce,
    'literal': _literal_coerce, 'enum': _enum_coerce, 'union': _union_coerce, 'list': _list_coerce,
    'set': _set_coerce, 'tuple': _tuple_coerce, 'dict': _dict_coerce, 'format': _format_coerce,
    'typeddict': _typeddict_coerce, 'namedtuple': _namedtuple_coerce, 'dataclass': _class_coerce,
    'model': _model_coerce, 'class': _class_coerce,
}
