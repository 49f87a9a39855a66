"""JSON values to the Python values a function's annotations ask for.

One coercer per annotation, built from the kind `_types.kind` gives it and cached. Coercion repairs a short,
documented list of known model mistakes, and only where the annotation allows them:
- a JSON string where a list, tuple, set or object is expected (`'[1, 2]'`);
- `"5"` for an integer or number, `"true"`/`"false"` for a boolean;
- `{}` for an empty list, and a single value where a list is expected;
- dicts into dataclasses, TypedDicts, NamedTuples, pydantic models and plain classes, recursively;
- strings into Path/UUID/Decimal/datetime/date/time/Enum members, base64 strings into bytes.
Anything else that does not fit raises `Mismatch`, never passes through to fail deep inside the tool.
"""
from __future__ import annotations

import ast, base64, binascii, datetime as dt, json, re, sys
from decimal import Decimal
from typing import Any, Callable

from ._inputs import short
from ._json import jsonable
from ._types import SchemaError, TypeInfo, _is_ndarray, constraints, fields, kind, origin, type_cache, type_name

__all__ = ['Mismatch', 'coercer']

class Mismatch(ValueError):
    "A value that does not fit its annotation; `path` locates it inside the argument"
    def __init__(self, expected: str, got, path: tuple = ()):
        self.expected, self.got, self.path = expected, got, path
        super().__init__(f"expected {expected}, got {short(got)}")

def _nested(path_part, fn, v):
    "Run `fn(v)`, adding `path_part` to the location of any mismatch"
    try: return fn(v)
    except Mismatch as e:
        e.path = (path_part, *e.path)
        raise

_int_re = re.compile(r'^\s*[-+]?\d+\s*$')
_num_re = re.compile(r'^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$')

def _parse_json(v: str):
    "A container a model sent as a string: JSON, or a Python literal as some models write them"
    try: return json.loads(v)
    except (ValueError, RecursionError): pass
    try: return ast.literal_eval(v)
    except (ValueError, SyntaxError, MemoryError, RecursionError): raise Mismatch('a JSON array or object', v) from None

def _build(t):
    try: info = kind(t)
    except SchemaError: return _identity  # no schema, so nothing to check against: as the reference does
    c = _builders[info.kind](info)
    if info.meta and (cons := constraints(info.meta, _json_type(info))): c = _constrained(c, cons)
    return c

def _json_type(info) -> str | None:
    if info.kind == 'scalar': return {str: 'string', int: 'integer', float: 'number'}.get(info.args[0])
    if info.kind in ('list', 'set', 'tuple'): return 'array'
    if info.kind in ('dict', 'typeddict', 'dataclass', 'model', 'class', 'namedtuple'): return 'object'
    return None

def _multiple(x, m) -> bool:
    q = x / m
    return abs(q - round(q)) < 1e-9

_tests = {  # keyword -> (applies to the value, holds, how to say it)
    'minimum': (lambda x: isinstance(x, (int, float)), lambda x, m: x >= m, '>= {}'),
    'maximum': (lambda x: isinstance(x, (int, float)), lambda x, m: x <= m, '<= {}'),
    'exclusiveMinimum': (lambda x: isinstance(x, (int, float)), lambda x, m: x > m, '> {}'),
    'exclusiveMaximum': (lambda x: isinstance(x, (int, float)), lambda x, m: x < m, '< {}'),
    'multipleOf': (lambda x: isinstance(x, (int, float)), _multiple, 'a multiple of {}'),
    'minLength': (lambda x: isinstance(x, str), lambda x, m: len(x) >= m, 'at least {} characters'),
    'maxLength': (lambda x: isinstance(x, str), lambda x, m: len(x) <= m, 'at most {} characters'),
    'pattern': (lambda x: isinstance(x, str), lambda x, m: re.search(m, x) is not None, 'matching {!r}'),
    'minItems': (lambda x: isinstance(x, (list, tuple, set, frozenset)), lambda x, m: len(x) >= m, 'at least {} items'),
    'maxItems': (lambda x: isinstance(x, (list, tuple, set, frozenset)), lambda x, m: len(x) <= m, 'at most {} items'),
    'minProperties': (lambda x: isinstance(x, dict), lambda x, m: len(x) >= m, 'at least {} properties'),
    'maxProperties': (lambda x: isinstance(x, dict), lambda x, m: len(x) <= m, 'at most {} properties'),
}

def _constrained(c, cons: dict):
    "Coercer `c`, then the constraints `cons` (JSON Schema keywords) checked on its result"
    tests = [(*_tests[k], m) for k, m in cons.items()]
    def f(v):
        x = c(v)
        for applies, holds, say, m in tests:
            if applies(x) and not holds(x, m): raise Mismatch('a value ' + say.format(m), v)
        return x
    return f

def _identity(v): return v

_coercers = type_cache(_build)

def coercer(t) -> Callable[[Any], Any]:
    "A function that turns a JSON value into what annotation `t` asks for, or raises `Mismatch`"
    return _coercers(t)

# --- the {kind: handler} table: each builds the coercer for one kind ----------------------------------

def _any_coerce(info): return _identity

def _none_coerce(info):
    def f(v):
        if v is None: return None
        raise Mismatch('null', v)
    return f

def _bool(v):
    if v is True or v is False: return v
    if isinstance(v, str) and v.strip().lower() in ('true', 'false'): return v.strip().lower() == 'true'
    raise Mismatch('boolean', v)

def _int(v):
    if type(v) is int: return v
    if isinstance(v, float) and v.is_integer(): return int(v)
    if isinstance(v, int) and not isinstance(v, bool): return v
    if isinstance(v, str) and _int_re.match(v):
        try: return int(v)
        except ValueError: pass  # over Python's limit on digits
    raise Mismatch('integer', v)

def _float(v):
    if type(v) is float: return v
    if isinstance(v, int) and not isinstance(v, bool): return float(v)
    if isinstance(v, str) and _num_re.match(v):
        f = float(v)
        if f not in (float('inf'), float('-inf')): return f
    raise Mismatch('number', v)

def _str(v):
    if isinstance(v, str): return v
    raise Mismatch('string', v)

_scalars = {bool: _bool, int: _int, float: _float, str: _str}

def _scalar_coerce(info):
    base = _scalars[info.args[0]]
    if info.t is info.args[0]: return base
    t = info.t
    def f(v):  # a subclass such as `class UserId(str)`
        if isinstance(v, t): return v
        try: return t(base(v))
        except Mismatch: raise
        except Exception as e: raise Mismatch(f'valid {type_name(t)} ({type(e).__name__}: {e})', v) from None
    return f

def _object_coerce(info): return _identity

def _json_key(v):
    "A dict key for a JSON value: `True` and `1`, `[1]` and `(1,)` stay apart and alike as JSON has them"
    if isinstance(v, (list, tuple, dict)): return ('json', json.dumps(jsonable(v), sort_keys=True))
    return (type(v), v)

def _choice_coerce(choices: dict, expected: str, by_name: dict | None = None):
    "A coercer picking one of `choices` (JSON value -> Python value) by the value the model sent"
    def f(v):
        try: return choices[_json_key(v)]
        except (KeyError, TypeError): pass
        if isinstance(v, str):
            if by_name and v in by_name: return by_name[v]
            if _num_re.match(v):  # `"5"` for 5
                for (ty, val), c in choices.items():
                    if ty in (int, float) and float(v) == val: return c
        raise Mismatch(expected, v)
    return f

def _literal_coerce(info):
    choices = {}
    for a in info.args: choices.setdefault(_json_key(jsonable(a)), a)
    return _choice_coerce(choices, 'one of ' + ', '.join(short(jsonable(a), 30) for a in info.args))

def _enum_coerce(info):
    t = info.t
    choices = {}
    for m in t: choices.setdefault(_json_key(jsonable(m)), m)
    pick = _choice_coerce(choices, 'one of ' + ', '.join(short(jsonable(m), 30) for m in t), dict(t.__members__))
    return lambda v: v if isinstance(v, t) else pick(v)

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
        return None if any(m is None for m in members) else set().union(*members)
    return _json_kinds[info.kind]

def _union_coerce(info):
    members = [(_accepts(kind(a)), coercer(a)) for a in info.args]
    expected = ' | '.join(type_name(a) for a in info.args)
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
        if len(tried) == 1 and (tried[0].path or tv in (dict, list)): raise tried[0]  # the one member it was meant for
        raise Mismatch(expected, v)
    return f

def _as_list(v, item_accepts: set | None):
    "`v` as a list, repairing a JSON string, `{}` and a single value"
    if type(v) is list: return v
    if isinstance(v, str) and v.lstrip()[:1] == '[':
        try: parsed = _parse_json(v)
        except Mismatch: parsed = None
        if isinstance(parsed, list): return parsed
        if item_accepts is not None and str not in item_accepts: raise Mismatch('array', v)
    if isinstance(v, dict):
        if not v: return []
        if item_accepts is not None and dict not in item_accepts: raise Mismatch('array', v)
    if isinstance(v, (tuple, set, frozenset)): return list(v)
    return [v]

def _list_coerce(info):
    if _is_ndarray(info.t):
        asarray = sys.modules['numpy'].asarray
        return lambda v: v if isinstance(v, info.t) else asarray(v if isinstance(v, list) else _as_list(v, None))
    item_info = kind(info.args[0])
    item, acc = coercer(info.args[0]), _accepts(item_info)
    if item is _identity: return lambda v: list(_as_list(v, acc))
    exact = {item_info.t} if item_info.kind == 'scalar' and item_info.t is item_info.args[0] else None
    def f(v):
        if exact is not None and type(v) is list and set(map(type, v)) <= exact: return list(v)  # nothing to convert
        return [_nested(i, item, x) for i, x in enumerate(_as_list(v, acc))]
    return f

def _set_coerce(info):
    lst, make = _list_coerce(info), frozenset if origin(info.t) is frozenset else set
    def f(v):
        items = lst(v)
        try: return make(items)
        except TypeError: raise Mismatch(f'array of hashable {type_name(info.args[0])}', v) from None
    return f

def _tuple_coerce(info):
    args = info.args
    if len(args) == 2 and args[1] is Ellipsis:
        lst = _list_coerce(TypeInfo('list', list, (args[0],)))
        return lambda v: tuple(lst(v))
    items = [coercer(a) for a in args]
    def f(v):
        if isinstance(v, str) and v.lstrip()[:1] == '[': v = _parse_json(v)
        if isinstance(v, tuple): v = list(v)
        if type(v) is not list or len(v) != len(items): raise Mismatch(f'array of {len(items)} items', v)
        return tuple(_nested(i, c, x) for i, (c, x) in enumerate(zip(items, v)))
    return f

def _as_dict(v):
    if isinstance(v, dict): return v
    if isinstance(v, str) and v.lstrip()[:1] == '{':
        v = _parse_json(v)
        if isinstance(v, dict): return v
    raise Mismatch('object', v)

def _dict_coerce(info):
    if not info.args: return _as_dict
    key, val = coercer(info.args[0]), coercer(info.args[1])
    return lambda v: {_nested(k, key, k): _nested(k, val, x) for k, x in _as_dict(v).items()}

def _utc(v: str) -> str: return v[:-1] + '+00:00' if v.endswith(('Z', 'z')) else v  # Python 3.10 rejects 'Z'

def _parse_bytes(v: str) -> bytes:
    try: return base64.b64decode(v, validate=True)
    except binascii.Error: raise ValueError('not base64') from None

# the standard format base -> how a string becomes the annotated class `t` (a subclass of that base, or the base)
_parsers = {dt.datetime: lambda t: lambda v: t.fromisoformat(_utc(v)), dt.date: lambda t: t.fromisoformat,
            dt.time: lambda t: lambda v: t.fromisoformat(_utc(v)), bytes: lambda t: lambda v: t(_parse_bytes(v))}
_format_names = {dt.datetime: 'ISO 8601 date-time string', dt.date: 'ISO 8601 date string (YYYY-MM-DD)',
                 dt.time: 'ISO 8601 time string', bytes: 'base64 string'}

def _format_coerce(info):
    t, base = info.t, info.args[0]
    parse = _parsers[base](t) if base in _parsers else t
    expected = _format_names.get(base, f'{t.__name__} string')
    def f(v):
        if isinstance(v, t) and not (base is dt.date and isinstance(v, dt.datetime)): return v
        if base is Decimal and isinstance(v, (int, float)) and not isinstance(v, bool): v = str(v)
        if not isinstance(v, str): raise Mismatch(expected, v)
        try: return parse(v)
        except Exception: raise Mismatch(expected, v) from None
    return f

class _FieldsPlan:
    "How to build the keyword arguments of a class kind from a JSON object"
    __slots__ = ('info', 'by_key', 'required')
    def __init__(self, info):
        fs = fields(info)
        self.info, self.by_key = info, {f.name: (f.attr, coercer(f.anno)) for f in fs}
        self.required = frozenset(f.name for f in fs if f.required)

    def kwargs(self, v) -> dict:
        d, by_key, kw = v if type(v) is dict else _as_dict(v), self.by_key, {}
        for k, x in d.items():
            spec = by_key.get(k)
            if spec is None:
                extra = [repr(k) for k in d if k not in by_key]
                raise Mismatch(f'{type_name(self.info.t)} without unknown field(s) {", ".join(extra)}', v)
            try: kw[spec[0]] = spec[1](x)
            except Mismatch as e:
                if x is None and k not in self.required: continue  # a null the type can't take means "use the default" (strict mode)
                e.path = (k, *e.path)
                raise
        if not self.required <= d.keys():
            missing = ', '.join(repr(k) for k in self.by_key if k in self.required and k not in d)
            raise Mismatch(f'{type_name(self.info.t)} with required field(s) {missing}', v)
        return kw

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
            if len(v) > len(t._fields): raise Mismatch(f'{type_name(t)} as an object (or an array of at most {len(t._fields)} items)', v)
            v = dict(zip(t._fields, v))
        return t(**plan.kwargs(v))
    return f

def _class_coerce(info):
    "Dataclasses and plain classes: a dict of constructor arguments, each coerced"
    plan, t = None, info.t
    def f(v):
        nonlocal plan
        if isinstance(v, t): return v
        if plan is None: plan = _FieldsPlan(info)
        kw = plan.kwargs(v)
        try: return t(**kw)
        except Exception as e: raise Mismatch(f'valid {type_name(t)} ({type(e).__name__}: {e})', v) from None
    return f

def _takes_null(t) -> bool:
    acc = _accepts(kind(t))
    return acc is None or type(None) in acc

def _model_coerce(info):
    "pydantic models validate themselves, aliases and constraints included"
    t, defaulted = info.t, None
    def f(v):
        nonlocal defaulted
        if isinstance(v, t): return v
        if defaulted is None:  # fields whose type can't take null: a null for them means "use the default" (strict mode)
            defaulted = {fl.name for fl in fields(info) if not fl.required and _takes_null(fl.anno) is False}
        d = _as_dict(v)
        if defaulted and any(d.get(k, 0) is None for k in defaulted): d = {k: x for k, x in d.items() if not (x is None and k in defaulted)}
        try: return t.model_validate(d)
        except Exception as e:  # pydantic's ValidationError: its first error, at its place, as for dataclasses
            errs = e.errors() if callable(getattr(e, 'errors', None)) else []
            if not errs: raise Mismatch(f'valid {type_name(t)} ({e})', v) from None
            first = errs[0]
            raise Mismatch(f"a valid value ({first.get('msg', 'invalid')})", first.get('input', v), tuple(first.get('loc', ()))) from None
    return f

_builders = {
    'any': _any_coerce, 'none': _none_coerce, 'scalar': _scalar_coerce, 'object': _object_coerce,
    'literal': _literal_coerce, 'enum': _enum_coerce, 'union': _union_coerce, 'list': _list_coerce,
    'set': _set_coerce, 'tuple': _tuple_coerce, 'dict': _dict_coerce, 'format': _format_coerce,
    'typeddict': _typeddict_coerce, 'namedtuple': _namedtuple_coerce, 'dataclass': _class_coerce,
    'model': _model_coerce, 'class': _class_coerce,
}
