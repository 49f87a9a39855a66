"""Property tests for running untrusted tool calls, and for the coercion round trip.

1. `call_func`/`call_func_async` get random tool names and random arguments over a namespace shaped like a
   module's `globals()`. Only `ToolNotFound` and `ToolInputError` may come out (the tools here never raise on
   arguments that passed validation, so anything else is funccall's), `raise_on_err=False` gives the same
   outcome as text, sync and async agree, and neither the namespace nor the arguments change, except
   `calc.history`, which grows by exactly the successful `calc.add` calls.
2. For annotations built from every kind `coerce_inputs` supports, a value survives `jsonable`, JSON and
   `coerce_inputs` unchanged (types included), and the JSON validates against `handle_type`'s schema.
3. The `{kind: handler}` tables cover the same tags.

Bugs the properties once found are pinned, one small test each, at the end.
"""
import asyncio, builtins, copy, dataclasses, datetime as dt, enum, inspect, itertools, json, math, os, typing
from dataclasses import dataclass
from decimal import Decimal
from functools import reduce
from operator import or_
from pathlib import Path
from typing import Any, Literal, NamedTuple, Optional, TypedDict, Union
from uuid import UUID

import pytest
from conftest import assert_valid_schema, examples, with_defs
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import funccall
from funccall import KINDS, ToolInputError, ToolNotFound, call_func, call_func_async, coerce_inputs, handle_type
from funccall.core._json import jsonable

# ---------------------------------------------------------------------------------------------------------
# 1. Tool calls: a namespace shaped like `globals()`
# ---------------------------------------------------------------------------------------------------------
# Each tool asserts its arguments have exactly the annotated types, so a value that slips through coercion
# surfaces as an AssertionError, which the property rejects.

class Color(enum.Enum):
    red = 1
    green = 'green'

@dataclass
class Point:
    x: int
    y: float = 0.0
    def __post_init__(self): assert type(self.x) is int and type(self.y) is float, (self.x, self.y)

def f_int(a: int, b: int = 0) -> int:
    assert type(a) is int and type(b) is int
    return a + b

def f_str(s: str) -> int:
    assert type(s) is str
    return len(s)

def trunc(s: str, max_len: int = 3) -> str:
    assert type(s) is str and type(max_len) is int
    return s[:max_len]

def f_list(xs: list[int]) -> int:
    assert type(xs) is list and all(type(x) is int for x in xs)
    return sum(xs)

def f_opt(x: Optional[int] = None, label: str | None = None) -> tuple:
    assert (x is None or type(x) is int) and (label is None or type(label) is str)
    return x, label

def f_point(p: Point) -> tuple:
    assert type(p) is Point
    return p.x, p.y

def f_mode(mode: Literal['fast', 'slow', 3]):
    assert mode in ('fast', 'slow') or (type(mode) is int and mode == 3)
    return mode

def f_color(c: Color) -> str:
    assert type(c) is Color
    return c.name

def f_counts(d: dict[str, int]) -> list:
    assert type(d) is dict and all(type(k) is str and type(v) is int for k, v in d.items())
    return sorted(d.items())

def f_when(when: dt.datetime) -> str:
    assert type(when) is dt.datetime
    return when.isoformat()

def echo(x): return x

def po(a: int, /, b: int = 1) -> tuple:
    assert type(a) is int and type(b) is int
    return a, b

def kw(**kw) -> dict: return dict(kw)

def varargs(*args: int, n: int = 0) -> int:
    assert args == () and type(n) is int
    return n

async def aping(n: int = 1) -> int:
    assert type(n) is int
    return n

TOOLS = [f_int, f_str, trunc, f_list, f_opt, f_point, f_mode, f_color, f_counts, f_when, echo, po, kw, varargs, aping]

_secret_calls = []
def _secret(**kw): _secret_calls.append(kw)  # hidden: a model must never reach it

class Sub:
    def mul(self, a: int, b: int = 2) -> int:
        assert type(a) is int and type(b) is int
        return a * b

class Calc:
    "A calculator whose `history` a model may only grow through `add`; everything else here is a trap"
    # Declared annotations: on 3.10-3.13 merely reading `__annotations__` of a class without any stores an empty dict in it.
    # Something did that read once in CI on 3.12 (not reproduced here, and no such read is left in funccall); an empty dict
    # appearing is no damage, so the class declares its own and the snapshot checks that they stay as they are
    start: int
    def __init__(self, start: int = 0):
        assert type(start) is int
        self.start, self.history, self.store, self.sub = start, [], {}, Sub()
    def add(self, x: int) -> int:
        assert type(x) is int
        self.history.append(x)
        return x
    @staticmethod
    def double(x: int) -> int:
        assert type(x) is int
        return 2 * x
    @property
    def boom(self):  # resolving a name must never run a property
        self.history.append('boom')
        return self.add
    def _reset(self): self.history.clear()
    def __getattr__(self, nm):  # ...nor `__getattr__`
        if nm.startswith('_'): raise AttributeError(nm)
        self.history.append(('getattr', nm))
        return lambda **kw: nm
    def __eq__(self, o): return type(o) is Calc and (self.start, self.history) == (o.start, o.history)
    __hash__ = None

calc = Calc()

NS = {'__name__': 'tools', '__builtins__': builtins, 'os': os, 'VERSION': '1.0', 'calc': calc, 'Calc': Calc, 'Point': Point,
      '_secret': _secret, **{f.__name__: f for f in TOOLS}}
_ADD = ('calc.add', 'calc-add')  # the names that reach `calc.add`

_SEGS = [*NS, 'add', 'double', 'history', 'store', 'sub', 'mul', 'boom', 'whatever', 'append', 'clear', 'pop', 'system', 'path',
         'join', 'getcwd', 'environ', 'mro', 'upper', 'start', 'x', 'keys', '__globals__', '__class__', '__init__', '__dict__',
         '__builtins__', '__subclasses__', '__call__', '__getattr__', '__self__', '_reset', '', ' ', 'add ', 'ADD', 'аdd', 'ａｄｄ']
_NAMED = [*_ADD, 'calc.sub.mul', 'calc-sub-mul', 'calc.double', 'Calc.double', 'Calc.mro', 'calc.boom', 'calc.whatever',
          'calc.history.append', 'calc.history.clear', 'calc.store.clear', 'calc._reset', 'calc.__getattr__', 'os.system',
          'os.path.join', 'f_int.__globals__', 'Point.__init__', 'calc.__class__.__init__', 'calc.add.__self__', 'VERSION.upper',
          'calc.sub.__dict__', 'echo.__call__', 'calc.' * 2000 + 'add']
names = st.one_of(
    st.sampled_from([*NS, *_NAMED]),
    st.builds(lambda ps, sep: sep.join(ps), st.lists(st.sampled_from(_SEGS) | st.text(max_size=5), min_size=1, max_size=4), st.sampled_from('.-')),
    st.text(), st.text(min_size=100, max_size=1000),
    st.none(), st.integers(), st.floats(), st.binary(max_size=8), st.lists(st.text(max_size=3), max_size=2),
)

_PARAMS = ['a', 'b', 's', 'max_len', 'xs', 'x', 'label', 'p', 'mode', 'c', 'd', 'when', 'n', 'start', 'y', 'args', 'kw', 'self']
keys = st.sampled_from([*_PARAMS, 'maxlen', 'max-len', 'MAX_LEN', 'max__len', '_x', 'x_', 'X', ' a', 'a ', '', '__class__', 'ｘ']) | st.text(max_size=6)
_TRICKY = ['5', ' -7 ', '+3', '1.5', '.5', '1e3', '1e400', '-0', 'true', ' False ', 'yes', '[1, 2]', '[1, "a"]', "[1, 'a']", '[1,',
           '{}', '[]', '{"x": 1}', '{"x": "2", "y": 3}', "{'x': 1}", 'red', 'green', 'fast', 'slow', '3', '3.0', '2024-02-29T12:00:00Z',
           '2024-02-29', '2024-13-01T00:00:00', '12:30', '١٢', 'NaN', 'Infinity', '\x00', '(1, 2)', '{1, 2}', '[1j, {2}]', 'None', 'null']
# NaN is left out only so that results and arguments compare equal to themselves
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10) | st.sampled_from(_TRICKY)
values = st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from('xyap') | st.text(max_size=3), c, max_size=3),
                      max_leaves=8)
inputs = st.one_of(
    st.dictionaries(keys, values, max_size=4),
    st.dictionaries(keys, values, max_size=4).map(json.dumps),
    st.dictionaries(st.integers() | st.none() | st.booleans(), values, min_size=1, max_size=2),
    st.sampled_from(['', '  ', 'null', '[]', '[1]', '"x"', '{', '{"a": 1', '{"a": 1}', '1', 'NaN']),
    st.text(max_size=20), st.none(), st.integers(), st.floats(allow_nan=False), st.lists(values, max_size=3),
)

# Random names and arguments mostly miss every tool, so two calls in three name a real tool and send its own
# parameters, with values near what it takes
_ints = st.integers() | st.floats(allow_nan=False) | st.sampled_from(['5', ' -7 ', '+3', '3.0', '1e400', '0x10', '', True])
_good = {
    'a': _ints, 'b': _ints, 'n': _ints, 'start': _ints, 'x': _ints, 'max_len': _ints, 'y': _ints, 's': st.text(max_size=8), 'label': st.text(max_size=8),
    'xs': st.lists(st.integers(), max_size=3) | st.lists(st.integers(), max_size=3).map(json.dumps) | st.sampled_from([{}, 7, '7', '[1, 2.0]']),
    'p': st.fixed_dictionaries({'x': _ints}, optional={'y': _ints, 'z': _ints}) | st.fixed_dictionaries({'x': _ints}).map(json.dumps),
    'mode': st.sampled_from(['fast', 'slow', 3, '3', '3.0', 'FAST', True, 3.0]), 'c': st.sampled_from([1, 'green', 'red', '1', 'green ', 1.0, 'blue']),
    'd': st.dictionaries(st.text(max_size=3), _ints, max_size=3) | st.dictionaries(st.text(max_size=3), st.integers(), max_size=3).map(json.dumps),
    'when': st.datetimes(timezones=st.none() | st.just(dt.timezone.utc)).map(dt.datetime.isoformat) | st.sampled_from(['2024-02-29T12:00:00Z', '2024-02-30', 'now']),
}
_CALLS = {**{f.__name__: [p for p in inspect.signature(f).parameters if p not in ('args', 'kw')] for f in TOOLS},
          'calc.add': ['x'], 'calc-add': ['x'], 'calc.double': ['x'], 'Calc.double': ['x'], 'calc.sub.mul': ['a', 'b'], 'calc-sub-mul': ['a', 'b'],
          'Calc': ['start'], 'Point': ['x', 'y'], 'Calc.add': ['x'], 'calc.boom': [], 'calc.whatever': ['x'], 'kw': ['a', 'x']}

def _call_for(nm):
    vs = {p: st.one_of(_good[p], _good[p], values) for p in _CALLS[nm]}
    d = st.fixed_dictionaries(vs) | st.fixed_dictionaries(vs) | st.fixed_dictionaries({}, optional=vs)
    extra = st.tuples(d, keys, values).map(lambda t: {**t[0], t[1]: t[2]})  # and one more argument
    return st.tuples(st.just(nm), st.one_of(d, d, d.map(json.dumps), extra))

calls = st.one_of(st.sampled_from(sorted(_CALLS)).flatmap(_call_for), st.sampled_from(sorted(_CALLS)).flatmap(_call_for), st.tuples(names, inputs))

def _snapshot():
    "Everything a tool call must leave alone, `calc.history`'s contents aside"
    fns = [*TOOLS, _secret, Sub.mul, Calc, *vars(Calc).values()]
    return ({k: id(v) for k, v in NS.items()}, {k: id(v) for k, v in vars(calc).items()}, calc.start, dict(calc.store),
            dict(vars(calc.sub)), sorted(vars(Calc)), sorted(vars(Point)), sorted(vars(os)), list(_secret_calls),
            [(getattr(f, '__defaults__', None), getattr(f, '__kwdefaults__', None), dict(_annotations(f))) for f in fns])

def _annotations(f) -> dict:
    "A class's own annotations read from its dict: `getattr` would create an empty one there, changing what we snapshot"
    return vars(f).get('__annotations__', {}) if isinstance(f, type) else getattr(f, '__annotations__', {})

def _outcome(f):
    try: return 'ok', f()
    except Exception as e: return 'raised', e

async def _aoutcome(aw):
    try: return 'ok', await aw
    except Exception as e: return 'raised', e

async def _acalls(nm, inputs, in_thread):
    return [await _aoutcome(call_func_async(nm, inputs, NS, raise_on_err=r, in_thread=in_thread)) for r in (True, False)]

def _check_pair(strict, lenient, where):
    "`raise_on_err=True` gave `strict`, `raise_on_err=False` gave `lenient`: they must tell the same story"
    kind_, v = strict
    if kind_ == 'raised':
        if not isinstance(v, (ToolNotFound, ToolInputError)): raise AssertionError(f'{where} raised {type(v).__name__}: {v}') from v
        assert lenient == ('ok', f'{type(v).__name__}: {v}')
    else:
        assert not inspect.isawaitable(v), f'{where} returned an awaitable'
        assert lenient[0] == 'ok', f'{where}: raise_on_err=False raised {lenient[1]!r}'
        assert lenient[1] == v and type(lenient[1]) is type(v)

def _same_outcome(a, b):
    if a[0] == 'raised': return b[0] == 'raised' and type(a[1]) is type(b[1]) and str(a[1]) == str(b[1])
    return b[0] == 'ok' and type(a[1]) is type(b[1]) and a[1] == b[1]

@settings(max_examples=examples(300), deadline=None)
@given(call=calls, in_thread=st.booleans())
@example(call=('calc.add', {'x': 5}), in_thread=True)
@example(call=('calc-add', '{"x": "7"}'), in_thread=False)
@example(call=('calc.sub.mul', {'a': '2'}), in_thread=True)
@example(call=('calc.boom', {}), in_thread=True)
@example(call=('calc.whatever', {}), in_thread=True)
@example(call=('calc.history.clear', {}), in_thread=True)
@example(call=('Calc', {'start': 2}), in_thread=True)
@example(call=('Calc.mro', {}), in_thread=True)
@example(call=('Point', {'x': 1, 'y': 2}), in_thread=False)
@example(call=('f_point', {'p': '{"x": "1"}'}), in_thread=False)
@example(call=('aping', {}), in_thread=True)
@example(call=('trunc', {'s': 'abcdef', 'maxlen': 2}), in_thread=True)
@example(call=('trunc', {'s': 'abc', 'max_len': 1, 'max-len': 2}), in_thread=True)
@example(call=('po', {'a': 1}), in_thread=True)
@example(call=('f_when', {'when': '2024-02-29T12:00:00Z'}), in_thread=True)
@example(call=('f_counts', {'d': "{'x': 1}"}), in_thread=True)
@example(call=('_secret', {}), in_thread=True)
@example(call=('os.system', {'command': 'true'}), in_thread=True)
def test_call_func_fuzz(call, in_thread):
    nm, inputs = call
    before, inputs0, hist0 = _snapshot(), copy.deepcopy(inputs), list(calc.history)
    outs = [_outcome(lambda r=r: call_func(nm, inputs, NS, raise_on_err=r)) for r in (True, False)]
    outs += asyncio.run(_acalls(nm, inputs, in_thread))
    where = f'call_func({nm!r:.60}, {inputs!r:.60})'
    _check_pair(outs[0], outs[1], where)
    _check_pair(outs[2], outs[3], 'async ' + where)
    assert _same_outcome(outs[0], outs[2]), (outs[0], outs[2])
    assert inputs == inputs0, 'the arguments were changed'
    assert _snapshot() == before, 'the namespace was changed'
    n_added = sum(o[0] == 'ok' and type(o[1]) is int for o in outs) if nm in _ADD else 0
    added = calc.history[len(hist0):]
    assert calc.history[:len(hist0)] == hist0 and len(added) == n_added and all(type(x) is int for x in added), calc.history
    del calc.history[len(hist0):]

# ---------------------------------------------------------------------------------------------------------
# 2. Coercion round trip: annotations built from the kinds, with values of them
# ---------------------------------------------------------------------------------------------------------

class UserId(str): pass
class Count(int): pass

class Node(NamedTuple):
    t: Any                        # the annotation
    values: st.SearchStrategy     # values of it
    cat: frozenset                # the JSON types those values take: union members must not share one
    hashable: bool = True         # whether its values may go in a set
    members: tuple = ()           # a union's members

_ALL = frozenset({'null', 'bool', 'integer', 'number', 'string', 'array', 'object'})
_texts = st.text(max_size=6)
# UTC offsets in whole minutes: RFC 3339 date-times (JSON Schema's `date-time`) can't write seconds of an offset
_tzs = st.none() | st.just(dt.timezone.utc) | st.integers(-1439, 1439).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _texts,
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(_texts, c, max_size=3), max_leaves=6)

def _leaf(t, values, *cat, hashable=True): return Node(t, values, frozenset(cat), hashable)

_NONE = _leaf(type(None), st.none(), 'null')
_LEAVES = [
    _leaf(int, st.integers(), 'integer'), _leaf(float, st.floats(allow_nan=False), 'number', 'integer'),
    _leaf(bool, st.booleans(), 'bool'), _leaf(str, _texts, 'string'), _NONE,
    _leaf(UserId, st.builds(UserId, _texts), 'string'), _leaf(Count, st.builds(Count, st.integers()), 'integer'),
    _leaf(dt.datetime, st.datetimes(timezones=_tzs), 'string'), _leaf(dt.date, st.dates(), 'string'),
    _leaf(dt.time, st.times(timezones=_tzs), 'string'), _leaf(UUID, st.uuids(), 'string'),
    _leaf(Decimal, st.decimals(allow_nan=False), 'string'), _leaf(bytes, st.binary(max_size=8), 'string'),
    _leaf(Path, st.builds(Path, _texts), 'string'), Node(Any, _json, _ALL, False),
]
_n = itertools.count()
_JSON_TYPE = {bool: 'bool', int: 'integer', float: 'number', str: 'string', type(None): 'null'}

def _cats(vs): return frozenset(_JSON_TYPE[type(jsonable(v))] for v in vs)

def _literal(vs): return Node(Literal[tuple(vs)], st.sampled_from(vs), _cats(vs))

def _enum(p):
    vs, base = p
    E = enum.Enum(f'E{next(_n)}', [(f'm{i}', v) for i, v in enumerate(vs)], type=base)
    return Node(E, st.sampled_from(list(E)), _cats(vs))

_enum_values = st.one_of(
    st.tuples(st.lists(st.integers(-3, 3) | _texts | st.floats(allow_nan=False) | st.booleans(), min_size=1, max_size=4, unique=True), st.none()),
    st.tuples(st.lists(st.integers(-3, 3), min_size=1, max_size=4, unique=True), st.just(int)),  # an IntEnum-like
    st.tuples(st.lists(_texts, min_size=1, max_size=4, unique=True), st.just(str)),              # a StrEnum-like
)
_lit_values = st.lists(st.integers(-3, 3) | _texts | st.booleans() | st.none(), min_size=1, max_size=4, unique_by=lambda v: (type(v), v))
_base = st.sampled_from(_LEAVES) | _lit_values.map(_literal) | _enum_values.map(_enum)

def _list(p):
    n, typing_spelling = p
    return Node(typing.List[n.t] if typing_spelling else list[n.t], st.lists(n.values, max_size=3), frozenset({'array'}), False)

def _set(n):
    if not n.hashable: return _list((n, False))
    return Node(set[n.t], st.sets(n.values, max_size=3), frozenset({'array'}), False)

def _tuple(ns): return Node(tuple[tuple(n.t for n in ns)], st.tuples(*(n.values for n in ns)), frozenset({'array'}), all(n.hashable for n in ns))
def _vartuple(n):
    return Node(tuple[n.t, ...], st.lists(n.values, max_size=3).map(tuple), frozenset({'array'}), n.hashable)

def _dict(p):
    n, key = p
    keys_ = _texts if key is str else st.integers()
    return Node(dict[key, n.t], st.dictionaries(keys_, n.values, max_size=3), frozenset({'object'}), False)

def _union(p):
    "A union of members taking disjoint JSON types: otherwise which member a JSON value belongs to is ambiguous"
    ns, bar = p
    keep, seen = [], frozenset()
    for n in ns:
        if not n.cat & seen: keep.append(n); seen |= n.cat
    if len(keep) == 1: return keep[0]
    t = reduce(or_, [n.t for n in keep]) if bar else Union[tuple(n.t for n in keep)]
    return Node(t, st.one_of([n.values for n in keep]), seen, all(n.hashable for n in keep), tuple(keep))

def _optional(n):
    if 'null' in n.cat: return n
    return Node(Optional[n.t], st.none() | n.values, n.cat | {'null'}, n.hashable, (n, _NONE))

def _annotated(n): return n._replace(t=typing.Annotated[n.t, 'some doc'])

_fnames = st.lists(st.sampled_from(['a', 'b', 'c', 'x', 'y', 'name', 'n_2']), max_size=3, unique=True)

def _fields(p): return list(zip(*p))

def _dataclass(fs):
    C = dataclasses.make_dataclass(f'DC{next(_n)}', [(nm, n.t) for nm, n in fs])
    return Node(C, st.builds(C, **{nm: n.values for nm, n in fs}), frozenset({'object'}), False)

def _namedtuple(fs):
    C = NamedTuple(f'NT{next(_n)}', [(nm, n.t) for nm, n in fs])
    return Node(C, st.builds(C, **{nm: n.values for nm, n in fs}), frozenset({'object'}), all(n.hashable for _, n in fs))

def _typeddict(p):
    fs, total = p
    C = TypedDict(f'TD{next(_n)}', {nm: n.t for nm, n in fs}, total=total)
    vs = {nm: n.values for nm, n in fs}
    return Node(C, st.fixed_dictionaries(vs) if total else st.fixed_dictionaries({}, optional=vs), frozenset({'object'}), False)

def _extend(c):
    fields_ = st.tuples(_fnames, st.lists(c, min_size=3, max_size=3)).map(_fields)
    return st.one_of(
        st.tuples(c, st.booleans()).map(_list), c.map(_set), st.lists(c, max_size=3).map(_tuple), c.map(_vartuple),
        st.tuples(c, st.sampled_from([str, int])).map(_dict), c.map(_optional),
        st.tuples(st.lists(c, min_size=2, max_size=3), st.booleans()).map(_union), c.map(_annotated),
        fields_.map(_dataclass), fields_.map(_namedtuple), st.tuples(fields_, st.booleans()).map(_typeddict),
    )

annos = st.recursive(_base, _extend, max_leaves=5)

def _fn(t):
    "A tool with one parameter `x: t`"
    def f(x): return x
    f.__annotations__ = {'x': t}
    return f

def _sig(v):
    "The types inside `v`, recursively: `==` alone lets 1 == 1.0 == True and set == frozenset through"
    t = type(v)
    if isinstance(v, (list, tuple)): return t, tuple(map(_sig, v))
    if isinstance(v, dict): return t, frozenset((type(k), k, _sig(x)) for k, x in v.items())
    if isinstance(v, (set, frozenset)): return t, frozenset(map(_sig, v))
    if dataclasses.is_dataclass(v): return t, tuple(_sig(getattr(v, f.name)) for f in dataclasses.fields(v))
    return t

@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_coerce_roundtrip(data):
    node = data.draw(annos, label='annotation')
    v = data.draw(node.values, label='value')
    jv = json.loads(json.dumps({'x': jsonable(v)}))
    got = coerce_inputs(_fn(node.t), jv)['x']
    assert got == v and _sig(got) == _sig(v)
    defs = {}
    s = assert_valid_schema(with_defs(handle_type(node.t, defs), defs))
    Draft202012Validator(s).validate(jv['x'])

# ---------------------------------------------------------------------------------------------------------
# 3. The {kind: handler} tables
# ---------------------------------------------------------------------------------------------------------

def test_kind_tables_agree():
    assert set(funccall.core.schema._handlers) == set(funccall.core._coerce._builders) == set(KINDS)

# ---------------------------------------------------------------------------------------------------------
# Bugs the properties found, one minimal repro each
# ---------------------------------------------------------------------------------------------------------

def test_method_through_class():
    # an instance method reached through a class in the namespace: no instance to call it on
    with pytest.raises((ToolNotFound, ToolInputError)): call_func('Calc.add', {'x': 1}, NS)

def _model_facing(text: str, start: str) -> None:
    "A reply the model can act on (`ToolInputError: ...` naming the tool and argument), not an internal crash turned to text"
    assert text.startswith(start), text[:300]
    assert 'Traceback' not in text and len(text) < 2000, text[:300]

def test_huge_numeric_string():
    _model_facing(call_func('f_int', {'a': '9' * 5000}, NS, raise_on_err=False), "ToolInputError: Tool 'f_int', argument 'a': expected an integer, got '999")
    with pytest.raises(ToolInputError, match="argument 'a': expected an integer"): call_func('f_int', {'a': '9' * 5000}, NS)

def test_huge_int_argument():
    _model_facing(call_func('f_str', {'s': 10 ** 5000}, NS, raise_on_err=False),
                  "ToolInputError: Tool 'f_str', argument 's': expected a string, got <an integer of 16610 bits>")

@pytest.mark.parametrize('nm,inputs,start', [
    ('f_int', '[' * 100_000, "ToolInputError: Tool 'f_int': the arguments are not valid JSON (nested too deeply or too large)"),
    ('f_list', {'xs': '[' * 100_000}, "ToolInputError: Tool 'f_list', argument 'xs': expected an array of integers, got '[[["),
], ids=['arguments', 'list-parameter'])
def test_deeply_nested_json(nm, inputs, start):
    _model_facing(call_func(nm, inputs, NS, raise_on_err=False), start)

def test_namedtuple_takes_array_in_union():
    class P(NamedTuple):
        a: int
        b: int
    assert coerce_inputs(_fn(P | list[int]), {'x': [1, 2]})['x'] == [1, 2]

def test_union_order_not_shared():
    def coerce_float_first(seen_int_first: bool):
        I = type('I', (int,), {})  # a fresh type, so no earlier test shares the caches
        if seen_int_first: coerce_inputs(_fn(I | float), {'x': 1})
        return coerce_inputs(_fn(float | I), {'x': 1})['x']
    assert type(coerce_float_first(False)) is type(coerce_float_first(True))

@pytest.mark.parametrize('value', [(1, 2), [1, 2], {'k': 1}], ids=['tuple', 'list', 'dict'])
def test_enum_with_container_value(value):
    E = enum.Enum('E', [('a', value)])
    jv = json.loads(json.dumps(jsonable(E.a)))
    Draft202012Validator(handle_type(E)).validate(jv)
    assert coerce_inputs(_fn(E), {'x': jv})['x'] is E.a

@pytest.mark.parametrize('t,v', [(frozenset[int], frozenset({1, 2})), (set[frozenset[int]], {frozenset({1, 2})})], ids=['frozenset', 'set-of-frozenset'])
def test_frozenset_roundtrip(t, v):
    got = coerce_inputs(_fn(t), json.loads(json.dumps({'x': jsonable(v)})))['x']
    assert got == v and _sig(got) == _sig(v)

@pytest.mark.parametrize('t,v', [(list[Optional[int]], [1, None]), (set[int | str], {1, 'a'}), (tuple[int | None, ...], (None, 2)),
                                 (Optional[typing.Annotated[int | str, 'doc']], 'a')], ids=['list', 'set', 'vartuple', 'annotated-member'])
def test_union_as_item(t, v):
    assert coerce_inputs(_fn(t), json.loads(json.dumps({'x': jsonable(v)})))['x'] == v

# ---------------------------------------------------------------------------------------------------------
# 4. Hostile inputs: however deep or large, a result or a ToolInputError, in bounded time, sync and async
# ---------------------------------------------------------------------------------------------------------
# Values are built iteratively (a recursive builder would itself hit the recursion limit). Every call runs in a
# worker thread joined with a timeout, so a regression fails the test instead of hanging the suite.

@dataclass
class Chain:
    "A recursive class: models send it as deep as they like"
    value: int
    next: Optional['Chain'] = None

def f_chain(c: Chain) -> int:
    n = 0
    while c is not None: n, c = n + 1, c.next
    return n

def f_strs(to: list[str]) -> list: return to
def f_float(x: float) -> float: return x
def f_day(day: dt.date) -> str: return day.isoformat()
def f_obj(d: dict) -> int: return len(d)

HOSTILE_NS = {f.__name__: f for f in (f_chain, f_strs, f_float, f_day, f_obj, f_int, f_list, f_point, f_mode, f_counts, f_opt, echo)}

def _nested_list(depth: int):
    v = []
    for _ in range(depth): v = [v]
    return v

def _chain(depth: int) -> dict:
    v = {'value': 0}
    for i in range(depth): v = {'value': i, 'next': v}
    return v

def _bounded(fn, seconds: float = 10):
    "Run `fn` in a worker thread; fail if it takes longer than `seconds`, and give its outcome"
    import threading
    out = []
    t = threading.Thread(target=lambda: out.append(_outcome(fn)), daemon=True)
    t.start(); t.join(seconds)
    assert not t.is_alive(), f'still running after {seconds} s'
    return out[0]

def _hostile(nm, inputs, seconds=10):
    "Call `nm` four ways (sync/async, raise_on_err True/False): each gives a result or a ToolInputError, the same story"
    strict = _bounded(lambda: call_func(nm, inputs, HOSTILE_NS), seconds)
    lenient = _bounded(lambda: call_func(nm, inputs, HOSTILE_NS, raise_on_err=False), seconds)
    _check_pair(strict, lenient, nm)
    astrict = _bounded(lambda: asyncio.run(call_func_async(nm, inputs, HOSTILE_NS, in_thread=False)), seconds)
    alenient = _bounded(lambda: asyncio.run(call_func_async(nm, inputs, HOSTILE_NS, raise_on_err=False)), seconds)
    _check_pair(astrict, alenient, 'async ' + nm)
    assert _same_outcome(strict, astrict)
    if strict[0] == 'raised': assert len(str(strict[1])) < 2000  # a huge bad input stays a short message
    return strict

DEEP, MANY, BIG = 100_000, 1_000_000, 50 * 2 ** 20

@pytest.mark.parametrize('nm,make', [
    ('f_int', lambda: {'a': _nested_list(DEEP)}), ('f_list', lambda: {'xs': _nested_list(DEEP)}),
    ('f_strs', lambda: {'to': _nested_list(DEEP)}), ('f_mode', lambda: {'mode': _nested_list(DEEP)}),
    ('f_counts', lambda: {'d': {'k': _nested_list(DEEP)}}), ('f_chain', lambda: {'c': _chain(DEEP)}),
    ('f_point', lambda: {'p': {'x': _nested_list(DEEP)}}), ('f_opt', lambda: {'x': _nested_list(DEEP)}),
    ('f_int', lambda: '[' * DEEP), ('f_list', lambda: {'xs': '[' * DEEP + ']' * DEEP}),
], ids=['int', 'list', 'strs', 'literal', 'dict-value', 'recursive-class', 'field', 'optional', 'json-args', 'json-list-text'])
def test_deep_input_is_refused_in_bounded_time(nm, make):
    kind_, v = _hostile(nm, make())
    assert kind_ == 'raised' and isinstance(v, ToolInputError)

def test_deep_recursive_class_within_the_limit_is_built():
    assert _hostile('f_chain', {'c': _chain(50)}) == ('ok', 51)

def test_deep_value_for_any_is_passed_on():
    deep = _nested_list(DEEP)
    assert _hostile('echo', {'x': deep}) == ('ok', deep)

@pytest.mark.parametrize('nm,make,ok', [
    ('f_list', lambda: {'xs': list(range(MANY))}, True), ('f_list', lambda: {'xs': ['x'] * MANY}, False),
    ('f_strs', lambda: {'to': [str(i) for i in range(MANY)]}, True), ('f_counts', lambda: {'d': dict.fromkeys(map(str, range(MANY)), 'x')}, False),
    ('f_int', lambda: {str(i): i for i in range(MANY)}, False), ('f_list', lambda: {'xs': json.dumps(list(range(MANY // 10)))}, True),
], ids=['ints', 'bad-ints', 'strs', 'bad-dict', 'many-arguments', 'json-text'])
def test_many_items_in_bounded_time(nm, make, ok):
    kind_, v = _hostile(nm, make())
    assert (kind_ == 'ok') is ok
    if not ok: assert str(v).count('\n- ') <= 11 and str(v).endswith('- ... and more')

@pytest.mark.parametrize('nm,arg', [('f_list', 'xs'), ('f_int', 'a'), ('f_strs', 'to'), ('f_day', 'day'), ('f_obj', 'd'), ('f_float', 'x')])
@pytest.mark.parametrize('text', ['[' + '1, ' * (BIG // 3) + '1]', '9' * BIG, 'x' * BIG], ids=['list-text', 'digits', 'letters'])
def test_large_strings_in_bounded_time(nm, arg, text):
    kind_, v = _hostile(nm, {arg: text})
    if nm == 'f_strs' and text[0] != '[': assert kind_ == 'ok' and v == [text]  # a single string is a one-item list of strings
    else: assert kind_ == 'raised' and isinstance(v, ToolInputError) and len(str(v)) < 500  # list text over the limit is not read

def test_long_python_literal_is_not_evaluated():
    # JSON is read at any length up to the limit; Python's own syntax only for short text
    assert call_func('f_strs', {'to': "['a', 'b']"}, HOSTILE_NS) == ['a', 'b']
    long = '[' + ', '.join(["'x'"] * 5000) + ']'
    assert call_func('f_strs', {'to': long}, HOSTILE_NS) == [long]  # not read as a list: it stays the one string it is

@pytest.mark.parametrize('nm,inputs,ok', [
    ('f_int', '{"a": NaN}', False), ('f_int', {'a': float('inf')}, False), ('f_float', '{"x": Infinity}', True),
    ('f_float', {'x': 10 ** 400}, False), ('f_mode', {'mode': float('nan')}, False),
    ('f_counts', {'d': {1: 2}}, False), ('f_counts', {'d': {(1, 2): 3}}, False), ('f_point', {'p': {1: 2, 'x': 1}}, False),
    ('f_int', {1: 2, 'a': 1}, False), ('f_int', {None: 2, (1,): 3}, False), ('f_obj', {'d': {1: 2}}, True),
], ids=['nan-int', 'inf-int', 'inf-float', 'huge-int-float', 'nan-literal', 'int-key', 'tuple-key', 'field-key',
        'argument-key', 'odd-keys', 'any-dict-keys'])
def test_odd_values_and_keys(nm, inputs, ok):
    kind_, v = _hostile(nm, inputs)
    assert (kind_ == 'ok') is ok, v

def test_nan_for_a_number_is_passed_on():
    # JSON has no NaN, but Python's json reads it; a number parameter takes it, as pydantic does
    assert math.isnan(call_func('f_float', '{"x": NaN}', HOSTILE_NS))

_json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=3) | st.integers() | st.booleans(), kids, max_size=4),
    max_leaves=20)

@settings(max_examples=examples(150), deadline=None)
@given(nm=st.sampled_from(sorted(HOSTILE_NS)), args=st.dictionaries(st.sampled_from(['a', 'b', 'xs', 'to', 'x', 'c', 'p', 'd', 'day', 'mode', 'z']) | st.integers(),
                                                                     _json_like, max_size=4),
       depth=st.sampled_from([0, 0, 1_000, 20_000]))
def test_json_like_inputs_fuzz(nm, args, depth):
    "Any JSON-like arguments (NaN, infinities, non-string keys), some wrapped thousands of levels deep"
    if depth: args = {k: _nested_list(depth) if i == 0 else v for i, (k, v) in enumerate(args.items())}
    _hostile(nm, args)
