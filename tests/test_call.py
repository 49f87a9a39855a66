"""`resolve_nm`, `call_func`, `call_func_async` and `coerce_inputs`: names, inputs, coercion per kind, errors, async.

A model's tool call is untrusted input: the hostile-name tables check that nothing outside what could have
been advertised is reached, that nothing of the caller's runs while a name is looked up, and that the
namespace and its objects are unchanged afterwards. Async tests use `asyncio.run` (no pytest-asyncio).
"""
import array
import asyncio
import base64
import collections
import copy
import dataclasses
import datetime as dt
import enum
import functools
import json
import os
import re
import sys
import threading
import time
import types
import typing
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, NamedTuple, Optional, TypedDict, Union
from uuid import UUID

import pytest
import typing_extensions
from jsonschema import Draft202012Validator
from pydantic import BaseModel

import funccall.core.call
from funccall import to_openai
from funccall import SchemaError, ToolInputError, ToolNotFound, call_func, call_func_async, coerce_inputs, get_schema_nm, mk_ns, resolve_nm


# ---------------------------------------------------------------------------------------------------------
# Tools, and objects holding them: module level, so this module's `globals()` is a realistic namespace
# ---------------------------------------------------------------------------------------------------------

EVENTS = []  # every side effect a lookup must never cause appends here


def sums(a, b): return a + b


def _private_tool(): EVENTS.append('_private_tool')


CONSTANT = 42


class Inner:
    def deep(self):
        "Go deep"
        return 'deep'


class Helper:
    def __init__(self): self.inner, self.data = Inner(), [1, 2]
    def run(self, n: int = 1):
        "Run `n` times"
        return f'run {n}'
    def _secret(self): EVENTS.append('Helper._secret')


class Tool:
    "A callable object"
    def __call__(self, q: str): return f'tool {q}'
    def method(self, q: str):
        "A method of a callable object"
        return f'method {q}'


class Lazy:
    "A non-data descriptor with a side effect (like `functools.cached_property`)"
    def __get__(self, obj, typ=None): EVENTS.append('Lazy.__get__'); return sums


class Calc:
    "A calculator with state a model must not reach"
    inits = 0
    registry = [1]
    lazy = Lazy()

    def __init__(self):
        Calc.inits += 1
        self.history, self.settings, self.tags, self.name, self.total = [1, 2], {'a': 1}, {'x'}, 'calc', 0
        self.dq, self.arr, self.od = collections.deque([1, 2]), array.array('i', [1, 2]), collections.OrderedDict(a=1)
        self.mod, self.helper, self.cb, self.tool = os, Helper(), sums, Tool()

    def add(self, a: int, b: int = 1):
        "Add `a` and `b` to the total"
        self.total += a + b
        return self.total

    def _reset(self): EVENTS.append('Calc._reset'); self.total = 0

    @staticmethod
    def smeth(x: int): return x * 2

    @classmethod
    def cmeth(cls, x: int): return (cls.__name__, x)

    @property
    def prop(self): EVENTS.append('Calc.prop'); return sums

    @functools.cached_property
    def cprop(self): EVENTS.append('Calc.cprop'); return {'k': 1}


class Dyn:
    "Answers every attribute through `__getattr__`"
    def __getattr__(self, nm): EVENTS.append(f'Dyn.__getattr__({nm})'); return sums


class Slotted:
    __slots__ = ('helper',)
    def __init__(self): self.helper = Helper()


class ClassA:
    "I am a class"
    def f(self, a: int):
        "Do a thing"
        return a + 1
    def __call__(self, b: str): return b * 2


class Meta(type):
    @property
    def mprop(cls): EVENTS.append('Meta.mprop'); return sums
    def __getattr__(cls, nm): EVENTS.append(f'Meta.__getattr__({nm})'); return sums


class MetaHeld(metaclass=Meta):
    "A class whose metaclass has a property and a __getattr__"


calc, dyn, slotted, ca = Calc(), Dyn(), Slotted(), ClassA()
bound = functools.partial(sums, 1)  # its `func` is the unrestricted function: never reachable


def _state():
    "Everything a hostile lookup could change"
    return (calc.total, list(calc.history), dict(calc.settings), set(calc.tags), list(calc.dq), list(calc.arr), dict(calc.od),
            sorted(vars(calc)), Calc.inits, list(Calc.registry), list(calc.helper.data), len(sums.__globals__),
            {k: id(v) for k, v in globals().items()})


# ---------------------------------------------------------------------------------------------------------
# resolve_nm: names that resolve
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('nm,expected', [
    ('sums', sums),
    ('ca', ca),
    ('Calc', Calc),
    ('ca.f', ca.f),
    ('ca-f', ca.f),
    ('calc.add', calc.add),
    ('calc-add', calc.add),
    ('calc.helper.run', calc.helper.run),
    ('calc-helper-run', calc.helper.run),
    ('calc.helper.inner.deep', calc.helper.inner.deep),
    ('calc-helper-inner-deep', calc.helper.inner.deep),
    ('calc.smeth', Calc.smeth),
    ('calc.cmeth', Calc.cmeth),
    ('Calc.cmeth', Calc.cmeth),
    ('calc.cb', sums),
    ('calc.tool', calc.tool),
    ('calc.tool.method', calc.tool.method),
])
def test_resolve_nm_finds(nm, expected):
    before = _state()
    EVENTS.clear()
    assert resolve_nm(nm, globals()) == expected
    assert (EVENTS, _state()) == ([], before)


def test_resolve_nm_method_is_bound_to_the_held_object():
    f = resolve_nm('calc.helper.run', globals())
    assert (f.__self__ is calc.helper, f(3)) == (True, 'run 3')


@pytest.mark.parametrize('nm', ['slotted.helper.run', 'slotted-helper-run'])
def test_resolve_nm_through_slots(nm):
    assert resolve_nm(nm, globals()) == slotted.helper.run


TOOL = Tool()


@pytest.mark.parametrize('nm,ns,expected', [
    ('sums', {'sums': sums}, sums),
    ('my-tool', {'my-tool': sums}, sums),  # a mapping key that is not an identifier is taken as it is
    ('a.b', {'a.b': sums}, sums),
    ('t.method', {'t': TOOL}, TOOL.method),
    ('t-method', {'t': TOOL}, TOOL.method),
    ('t', types.MappingProxyType({'t': TOOL}), TOOL),
])
def test_resolve_nm_other_namespaces(nm, ns, expected):
    assert resolve_nm(nm, ns) == expected


@pytest.mark.parametrize('dotted', ['ca.f', 'calc.add', 'calc.helper.run', 'calc.helper.inner.deep', 'calc.tool.method'])
def test_dot2dash_name_resolves_to_the_same_callable(dotted):
    name = get_schema_nm(dotted, globals(), dot2dash=True)['name']
    assert name == dotted.replace('.', '-')
    assert resolve_nm(name, globals()) == resolve_nm(dotted, globals())


def test_dot2dash_name_calls_the_method():
    name = get_schema_nm('calc.helper.run', globals(), dot2dash=True)['name']
    assert (name, call_func(name, {'n': 2}, globals())) == ('calc-helper-run', 'run 2')


# ---------------------------------------------------------------------------------------------------------
# resolve_nm: hostile names. Each raises ToolNotFound, runs nothing of the caller's and changes nothing.
# ---------------------------------------------------------------------------------------------------------

HOSTILE = [
    # dunders and private segments, anywhere
    'sums.__globals__.clear', 'sums.__globals__', 'sums-__globals__-clear', 'sums.__code__', 'sums.__dict__',
    'calc.__init__', 'calc-__init__', 'calc.__class__', 'calc.__class__.__init__', 'calc.__dict__.clear', 'calc.__setattr__',
    'calc._reset', 'calc-_reset', 'calc.helper._secret', 'calc.add.__func__', 'calc.add.__self__._reset', 'Calc.__init__',
    'Calc._reset', 'Calc.__subclasses__', '_private_tool', '__builtins__', '__name__', '__import__', '__builtins__.exec',
    'calc.__getattribute__', 'ca.__call__', 'ca.f.__globals__',
    # modules and their attributes, directly or as an attribute of an object
    'os', 'os.system', 'os-system', 'os.path.join', 'json.loads', 'pytest.fail', 'calc.mod.system', 'calc-mod-system',
    'functools.partial', 'sys.exit', 'dataclasses.dataclass',
    # methods of builtin values held as attributes, and non-callables
    'calc.history.clear', 'calc-history-clear', 'calc.history.append', 'calc.history', 'calc.settings.clear', 'calc.settings.pop',
    'calc.tags.pop', 'calc.name.upper', 'calc.total.bit_length', 'calc.od.clear', 'Calc.registry.clear', 'calc.helper.data.clear',
    'CONSTANT', 'CONSTANT.bit_length', 'calc', 'calc.helper', 'calc.total', 'calc.name',
    # attributes of functions and methods
    'sums.x', 'calc.add.x', 'calc.smeth.x', 'ca.f.f',
    # properties and __getattr__ objects: nothing runs
    'calc.prop', 'calc.prop.x', 'calc-prop', 'dyn.anything', 'dyn.anything.deeper', 'dyn-run', 'dyn',
    # getattr_static corners: metaclass property and __getattr__, partial internals, descriptors held on the class
    'MetaHeld.mprop', 'MetaHeld.anything', 'MetaHeld-anything', 'bound.func', 'bound.args', 'bound.keywords', 'Calc.prop', 'Calc.prop.fget',
    'Calc.cprop.func', 'calc.helper-run', 'calc-helper.run',
    # malformed names
    '', '.', '..', '-', '--', 'calc..add', '.calc.add', 'calc.add.', '-calc-add', 'calc-add-', 'calc--add', 'calc.-add', 'calc.add-',
    ' calc.add', 'calc.add ', 'calc. add', 'calc.ad', 'calc.adds', 'nope', 'nope.f', 'nope-f', 'calc.helper.nope', 'calc.*',
    'calc/add', 'calc:add', 'calc[add]', "getattr(calc, 'add')", 'calc.add()', 'sums\x00', 'calc.add\n', '\tsums',
    # very long names
    'a' * 100_000, 'calc.' * 20_000 + 'add', 'calc' + '.helper' * 10_000, '.' * 50_000, '_' * 1000,
    # unicode look-alikes
    'ｓｕｍｓ', 'calc．add', 'calc․add', 'calc。add', 'calc\u200b.add', 'ｃａｌｃ.add', 'calc.ａｄｄ', 'calc.\uff3freset', 'calc.\uff3f\uff3finit\uff3f\uff3f',
    'calc\u2024add', 'calc\u2010add', 'calc\u2212add', 'sums\u0301', 'ＳＵＭＳ',
]

HOSTILE_BUGS = [
    pytest.param('calc.cprop'),
    pytest.param('calc.lazy'),
    pytest.param('Calc.lazy.x'),
    pytest.param('calc.dq.clear'),
    pytest.param('calc.arr.pop'),
]


def _id(v): return re.sub(r' at 0x[0-9a-f]+', '', repr(v))[:40]  # no address: xdist's workers must name the tests alike


def _check_not_found(nm, ns, check_message=True):
    vars(calc).pop('cprop', None)
    before = _state()
    EVENTS.clear()
    with pytest.raises(ToolNotFound) as ei: resolve_nm(nm, ns)
    assert (EVENTS, _state()) == ([], before)
    e = ei.value
    assert isinstance(e, LookupError)
    if check_message:
        asked = nm if isinstance(nm, str) and nm else repr(nm)  # the empty name is reported as "''"
        assert e.name == asked
        assert str(e).startswith(f'Unknown tool {asked!r:.80}; available tools: ')
        assert len(str(e)) < 2000


@pytest.mark.parametrize('nm', HOSTILE + HOSTILE_BUGS, ids=_id)
def test_resolve_nm_hostile(nm):
    _check_not_found(nm, globals())


@pytest.mark.parametrize('nm', HOSTILE, ids=_id)
def test_call_func_hostile_runs_nothing(nm):
    before = _state()
    EVENTS.clear()
    with pytest.raises(ToolNotFound): call_func(nm, {}, globals())
    r = call_func(nm, {}, globals(), raise_on_err=False)
    assert r.startswith('ToolNotFound: Unknown tool ')
    assert (EVENTS, _state()) == ([], before)


def test_globals_clear_through_function_does_not_wipe_module():
    n = len(globals())
    with pytest.raises(ToolNotFound): call_func('sums.__globals__.clear', {}, globals())
    assert call_func('sums.__globals__.clear', {}, globals(), raise_on_err=False).startswith("ToolNotFound: Unknown tool 'sums.__globals__.clear'")
    assert (len(globals()), globals()['sums'], globals()['calc']) == (n, sums, calc)


def test_call_func_cannot_mutate_an_array_attribute():
    h = types.SimpleNamespace(arr=array.array('i', [1, 2]))
    r = call_func('h.arr.pop', {}, {'h': h}, raise_on_err=False)
    assert (r.startswith('ToolNotFound: '), h.arr) == (True, array.array('i', [1, 2]))


def test_init_is_not_rerun():
    inits, total = Calc.inits, calc.add(0, 0)
    with pytest.raises(ToolNotFound): call_func('calc.__init__', {}, globals())
    with pytest.raises(ToolNotFound): call_func('calc-__init__', {}, globals())
    assert (Calc.inits, calc.total, calc.history) == (inits, total, [1, 2])


def test_private_name_stays_private_after_being_called_directly():
    assert call_func(_private_tool, {}) is None  # a direct call plans `_private_tool` under its own name
    EVENTS.clear()
    with pytest.raises(ToolNotFound): call_func('_private_tool', {}, globals())
    assert EVENTS == []


@pytest.mark.parametrize('nm', [None, 123, 1.5, b'sums', ['sums'], ('sums',), {'sums': 1}, object(), sums, True], ids=_id)
def test_resolve_nm_non_str_names(nm):
    _check_not_found(nm, globals())


@pytest.mark.parametrize('nm', [None, 123, b'sums', ['sums'], object()], ids=_id)
def test_call_func_non_callable_non_str_names(nm):
    with pytest.raises(ToolNotFound): call_func(nm, {}, globals())
    assert call_func(nm, {}, globals(), raise_on_err=False).startswith('ToolNotFound: Unknown tool ')


# Objects whose lookups run code even through `isinstance`: each in its own namespace, since `available tools`
# inspects every value of the namespace a name failed in.

class Spy:
    "Logs every attribute read, `__class__` included"
    def m(self): return 1
    def __getattribute__(self, nm):
        EVENTS.append(f'Spy.{nm}')
        return object.__getattribute__(self, nm)


class ClassProp:
    "A `__class__` property, as mocks and proxies define"
    @property
    def __class__(self):
        EVENTS.append('ClassProp.__class__')
        return ClassProp
    def m(self): return 1


class ChainedClassProperty:
    @classmethod
    @property
    def cp(cls): EVENTS.append('ChainedClassProperty.cp'); return 1


SIDE_EFFECT_CASES = [
    pytest.param('spy.m.x', {'spy': Spy()}),
    pytest.param('spy.nope', {'spy': Spy()}),
    pytest.param('cp.nope', {'cp': ClassProp()}),
    pytest.param('obj.cp', {'obj': ChainedClassProperty()}, marks=[
        pytest.mark.skipif(sys.version_info >= (3, 13), reason='classmethod chaining was removed in 3.13')]),
    pytest.param('dyn.nope', {'dyn': Dyn()}),
    pytest.param('dyn.nope.deeper', {'dyn': Dyn()}),
]


@pytest.mark.parametrize('nm,ns', SIDE_EFFECT_CASES)
def test_resolve_nm_runs_no_code_of_the_callers_objects(nm, ns):
    _check_not_found(nm, ns, check_message=False)


def test_tool_not_found_names_what_was_asked_and_what_is_available():
    ns = {'sums': sums, 'ca': ca, 'os': os, '_p': _private_tool, 'K': 1, 'calc': calc}
    with pytest.raises(ToolNotFound) as ei: resolve_nm('nope', ns)
    e = ei.value
    avail = ['sums', 'ca', 'calc.add', 'calc.smeth', 'calc.cmeth']  # objects' public methods are tools too
    assert (e.name, e.available) == ('nope', avail)
    assert str(e) == "Unknown tool 'nope'; available tools: " + ', '.join(map(repr, avail))


def test_tool_not_found_message_is_truncated():
    ns = {f'tool{i}': sums for i in range(30)}
    with pytest.raises(ToolNotFound) as ei: resolve_nm('x' * 1000, ns)
    msg = str(ei.value)
    avail = ', '.join(repr(f'tool{i}') for i in range(20))
    assert msg == f"Unknown tool {'x' * 1000!r:.80}; available tools: {avail}, ..."
    assert len(ei.value.available) == 30


def test_tool_not_found_empty_namespace():
    with pytest.raises(ToolNotFound, match="^Unknown tool 'sums'; available tools: none$"): call_func('sums', {})


def test_mk_ns():
    assert mk_ns([sums, {'x': ca}, ClassA]) == {'sums': sums, 'x': ca, 'ClassA': ClassA}
    ns = {'a': sums}
    assert mk_ns(ns) is ns
    assert mk_ns(sums) == {'sums': sums}


# ---------------------------------------------------------------------------------------------------------
# call_func: the inputs argument
# ---------------------------------------------------------------------------------------------------------

def kn(a_b: int, c: str = 'x'): return (a_b, c)


def one(a): return a


def kwtool(a: int, **kw): return (a, kw)


def posonly(a: int, b: int = 2, /, c: int = 3): return (a, b, c)


def noargs(): return 'none'


@pytest.mark.parametrize('tool,inputs,expected', [
    (kn, {'a_b': 1}, (1, 'x')),
    (kn, '{"a_b": 1, "c": "y"}', (1, 'y')),
    (kn, '  {"a_b": 1}  ', (1, 'x')),
    (kn, {'a-b': 1}, (1, 'x')),
    (kn, {'a b': 1}, (1, 'x')),
    (kn, {'a-b-': 1, 'c': 'z'}, (1, 'z')),
    (kn, {'a_b': 1, 'c': None}, (1, 'x')),
    (noargs, {}, 'none'),
    (noargs, '', 'none'),
    (noargs, '   ', 'none'),
    (noargs, '{}', 'none'),
    (noargs, None, 'none'),
    (kwtool, {'a': '1'}, (1, {})),
    (posonly, {'a': 1}, (1, 2, 3)),
    (posonly, {'a': 1, 'b': 5, 'c': 6}, (1, 5, 6)),
    (posonly, {'c': 6, 'a': '1'}, (1, 2, 6)),
    (posonly, {'a': 1, 'b': None}, (1, 2, 3)),
], ids=['dict', 'json', 'json-spaces', 'dash', 'space', 'trailing-dash', 'null-default', 'no-args', 'empty-str', 'blank-str',
        'empty-json', 'None', 'var-kw-coerced', 'posonly', 'posonly-all', 'posonly-kw-order', 'posonly-null'])
def test_inputs_accepted(tool, inputs, expected):
    assert call_func(tool.__name__, inputs, [tool]) == expected


@pytest.mark.parametrize('tool,inputs,message', [
    (kn, '[1, 2]', "Tool 'kn': the arguments must be a JSON object of named arguments, got [1, 2]"),
    (kn, 'not json', "Tool 'kn': the arguments are not valid JSON (Expecting value: line 1 column 1 (char 0)): 'not json'"),
    (kn, '{"a_b": 1', "Tool 'kn': the arguments are not valid JSON (Expecting ',' delimiter: line 1 column 10 (char 9)): '{\"a_b\": 1'"),
    (kn, '"a_b"', "Tool 'kn': the arguments must be a JSON object of named arguments, got 'a_b'"),
    (kn, '"[1]"', "Tool 'kn': the arguments must be a JSON object of named arguments, got '[1]'"),
    (kn, '"{not json"', "Tool 'kn': the arguments must be a JSON object of named arguments, got '{not json'"),
    (kn, 'null', "Tool 'kn': the arguments must be a JSON object of named arguments, got null"),
    (kn, '5', "Tool 'kn': the arguments must be a JSON object of named arguments, got 5"),
    (kn, 5, "Tool 'kn': the arguments must be a JSON object of named arguments, got 5"),
    (kn, [('a_b', 1)], "Tool 'kn': the arguments must be a JSON object of named arguments, got [('a_b', 1)]"),
    (kn, b'{"a_b": 1}', 'Tool \'kn\': the arguments must be a JSON object of named arguments, got b\'{"a_b": 1}\''),
    (kn, types.MappingProxyType({'a_b': 1}), "Tool 'kn': the arguments must be a JSON object of named arguments, got mappingproxy({'a_b': 1})"),
    (kn, 'x' * 500, f"Tool 'kn': the arguments are not valid JSON (Expecting value: line 1 column 1 (char 0)): {'x' * 500!r:.57}..."),
    (kn, {}, "Tool 'kn', argument 'a_b': missing (required)"),
    (kn, {'c': 'y'}, "Tool 'kn', argument 'a_b': missing (required)"),
    (kn, {'a_b': None}, "Tool 'kn', argument 'a_b': expected an integer, got null"),
    (kn, {'a_b': 1, 'zzz': 2}, "Tool 'kn', argument 'zzz': unknown argument; the tool takes 'a_b', 'c'"),
    # an untyped `**kw` is not in the schema: a name the schema doesn't show is refused, never slipped into it
    (kwtool, {'a': 1, 'z': 2}, "Tool 'kwtool', argument 'z': unknown argument; the tool takes 'a'"),
    (kn, {'a_b': 1, 'y' * 100: 2}, f"Tool 'kn', argument {'y' * 100!r}: unknown argument; the tool takes 'a_b', 'c'"),
    (kn, {'a_b': 1, 'a-b': 2}, "Tool 'kn', argument 'a-b': names parameter 'a_b', as 'a_b' does; send it once"),
    (one, {'a': 1, 'a-': 2}, "Tool 'one', argument 'a-': names parameter 'a', as 'a' does; send it once"),
    (one, {'a-': 1, 'a': 2}, "Tool 'one', argument 'a': names parameter 'a', as 'a-' does; send it once"),
    (kn, {1: 2}, "Tool 'kn' got 2 bad arguments:\n- 1: argument names must be strings\n- a_b: missing (required)"),
    (noargs, {'x': 1}, "Tool 'noargs', argument 'x': unknown argument; the tool takes no arguments"),
    (posonly, {'b': 1}, "Tool 'posonly', argument 'a': missing (required)"),
], ids=['json-list', 'bad-json', 'truncated-json', 'json-str', 'json-str-list', 'json-str-bad', 'json-null', 'json-int', 'int', 'list',
        'bytes', 'mappingproxy', 'long-bad-json', 'missing', 'missing-with-other', 'null-required', 'unexpected', 'untyped-var-kw', 'unexpected-long',
        'collide-dash', 'collide-a-a-', 'collide-a--a', 'non-str-key', 'no-params', 'posonly-missing'])
def test_inputs_rejected(tool, inputs, message):
    with pytest.raises(ToolInputError) as ei: call_func(tool.__name__, inputs, [tool])
    assert str(ei.value) == message
    assert isinstance(ei.value, ValueError)
    assert call_func(tool.__name__, inputs, [tool], raise_on_err=False) == f'ToolInputError: {message}'


def test_missing_names_every_required_argument_in_order():
    def three(a: int, b: int, c: int = 0, *, d: str): return a
    with pytest.raises(ToolInputError) as ei: call_func(three, {'c': 1})
    assert str(ei.value) == "Tool 'three' got 3 bad arguments:\n- a: missing (required)\n- b: missing (required)\n- d: missing (required)"
    assert ei.value.errors == [('a', 'missing (required)'), ('b', 'missing (required)'), ('d', 'missing (required)')]


# ---------------------------------------------------------------------------------------------------------
# Coercion per kind: `(annotation, JSON value, expected Python value)`, type checked too
# ---------------------------------------------------------------------------------------------------------

class Color(enum.Enum):
    red = 1
    green = 2


class Shade(str, enum.Enum):
    light = 'light'
    dark = 'dark'


class Level(enum.IntEnum):
    low = 1
    high = 2


@dataclass
class Point:
    x: int
    y: int = 0


@dataclass
class Line:
    a: Point
    b: Point
    label: str = ''


@dataclass
class Polygon:
    points: list[Point]
    tags: dict[str, Point] = dataclasses.field(default_factory=dict)


class Movie(TypedDict):
    title: str
    year: int


class PartialMovie(TypedDict, total=False):
    title: str
    when: dt.date


class Pair(NamedTuple):
    x: int
    y: int = 5


class User(BaseModel):
    name: str
    age: int


class Team(BaseModel):
    lead: User
    members: list[User] = []


class Box:
    "A plain class built from its constructor's arguments"
    def __init__(self, w: int, h: int = 1, where: Optional[Point] = None): self.w, self.h, self.where = w, h, where
    def __eq__(self, o): return type(o) is Box and (self.w, self.h, self.where) == (o.w, o.h, o.where)
    def __repr__(self): return f'Box({self.w}, {self.h}, {self.where})'


class UserId(str):
    pass


_NO = object()


def _tool(anno, default=_NO):
    "A one-parameter tool `f(x: anno = default)` returning `x`"
    def f(x): return x
    f.__annotations__ = {'x': anno}
    if default is not _NO: f.__defaults__ = (default,)
    return f


UID = UUID('12345678-1234-5678-1234-567812345678')
UTC = dt.timezone.utc

COERCE = [
    # scalars
    (int, 5, 5), (int, '5', 5), (int, ' -7 ', -7), (int, 5.0, 5), (int, '+3', 3),
    (float, 2.5, 2.5), (float, 3, 3.0), (float, '2.5', 2.5), (float, '1e3', 1000.0), (float, '-.5', -0.5),
    (bool, True, True), (bool, 'true', True), (bool, 'False', False), (bool, ' TRUE ', True),
    (str, 'hi', 'hi'), (str, '', ''), (str, '[1, 2]', '[1, 2]'), (str, '5', '5'),
    (UserId, 'u1', UserId('u1')),
    (Any, '[1, 2]', '[1, 2]'), (Any, {'a': [1]}, {'a': [1]}), (object, 5, 5),
    (type(None), None, None),
    # formats
    (Path, '/tmp/x', Path('/tmp/x')), (PurePosixPath, 'a/b', PurePosixPath('a/b')), (UUID, str(UID), UID),
    (Decimal, '1.10', Decimal('1.10')), (Decimal, 0.1, Decimal('0.1')), (Decimal, 3, Decimal('3')),
    (dt.datetime, '2024-01-02T03:04:05', dt.datetime(2024, 1, 2, 3, 4, 5)),
    (dt.datetime, '2024-01-02T03:04:05Z', dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
    (dt.datetime, '2024-01-02T03:04:05+02:00', dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=2)))),
    (dt.date, '2024-01-02', dt.date(2024, 1, 2)), (dt.time, '10:30', dt.time(10, 30)), (dt.time, '10:30:00Z', dt.time(10, 30, tzinfo=UTC)),
    (bytes, base64.b64encode(b'hello').decode(), b'hello'), (bytes, '', b''),
    # enums and literals
    (Color, 'red', Color.red), (Color, 1, Color.red), (Color, '2', Color.green), (Shade, 'light', Shade.light), (Shade, 'dark', Shade.dark),
    (Level, 2, Level.high), (Level, 'high', Level.high), (Level, '1', Level.low),
    (Literal['a', 'b'], 'b', 'b'), (Literal[5, 6], '5', 5), (Literal[5, 6], 6, 6), (Literal[True], True, True),
    # unions
    (Optional[int], None, None), (Optional[int], '5', 5), (Optional[int], 5, 5), (Union[int, str], '5', '5'), (Union[int, str], 5, 5),
    (Union[str, int], 5, 5), (Union[bool, int], 1, 1), (Union[bool, int], 'true', True), (int | None, '7', 7),
    (Optional[Point], {'x': 1}, Point(1)), (Union[int, list[int]], '[1, 2]', [1, 2]),
    # containers
    (list[int], [1, '2'], [1, 2]), (list, [1, 'a'], [1, 'a']), (list[Path], ['a', 'b'], [Path('a'), Path('b')]),
    (list[list[int]], [[1], ['2']], [[1], [2]]), (typing.Sequence[int], [1], [1]),
    (tuple[int, ...], [1, '2'], (1, 2)), (tuple[int, str], [1, 'a'], (1, 'a')), (tuple[()], [], ()), (typing.Tuple[int, ...], [1], (1,)),
    (set[int], [1, 1, '2'], {1, 2}), (typing.Set[str], ['a'], {'a'}),
    (dict, {'a': 1}, {'a': 1}), (dict[str, int], {'a': '1'}, {'a': 1}), (dict[int, str], {'1': 'a'}, {1: 'a'}),
    (dict[str, Point], {'p': {'x': 1, 'y': 2}}, {'p': Point(1, 2)}), (dict[str, list[int]], {'a': ['1']}, {'a': [1]}),
    # classes
    (Point, {'x': 1, 'y': '2'}, Point(1, 2)), (Point, {'x': 1}, Point(1)),
    (Line, {'a': {'x': 1}, 'b': {'x': 2, 'y': 3}, 'label': 'l'}, Line(Point(1), Point(2, 3), 'l')),
    (Polygon, {'points': [{'x': 1}, {'x': '2'}], 'tags': {'t': {'x': 3}}}, Polygon([Point(1), Point(2)], {'t': Point(3)})),
    (list[Point], [{'x': 1}, {'x': 2, 'y': 2}], [Point(1), Point(2, 2)]),
    (Movie, {'title': 't', 'year': '1999'}, {'title': 't', 'year': 1999}), (PartialMovie, {}, {}),
    (PartialMovie, {'when': '2024-01-02'}, {'when': dt.date(2024, 1, 2)}),
    (Pair, {'x': 1, 'y': '2'}, Pair(1, 2)), (Pair, {'x': 1}, Pair(1, 5)), (Pair, [1, 2], Pair(1, 2)), (Pair, [3], Pair(3, 5)),
    (User, {'name': 'a', 'age': '3'}, User(name='a', age=3)),
    (Team, {'lead': {'name': 'a', 'age': 1}, 'members': [{'name': 'b', 'age': '2'}]},
     Team(lead=User(name='a', age=1), members=[User(name='b', age=2)])),
    (Box, {'w': '3'}, Box(3)), (Box, {'w': 3, 'h': 4, 'where': {'x': 1}}, Box(3, 4, Point(1))),
]


def _ids(v):
    if isinstance(v, type) and not typing.get_args(v): return v.__name__
    return repr(v).replace('typing.', '')[:40]


@pytest.mark.parametrize('anno,value,expected', COERCE, ids=_ids)
def test_coerce(anno, value, expected):
    r = call_func(_tool(anno), {'x': value})
    assert (type(r), r) == (type(expected), expected)


@pytest.mark.parametrize('anno,value,expected', [
    (frozenset[int], [1, 2, 2], frozenset({1, 2})),
    (typing.FrozenSet[str], ['a'], frozenset({'a'})),
], ids=['frozenset', 'FrozenSet'])
def test_coerce_frozenset(anno, value, expected):
    r = call_func(_tool(anno), {'x': value})
    assert (type(r), r) == (type(expected), expected)


@pytest.mark.parametrize('anno,value,expected', [
    (list[Optional[int]], [None, '1'], [None, 1]),
    (list[int | None], [1], [1]),
    (set[Union[int, str]], [1, 'a'], {1, 'a'}),
    (tuple[Optional[int], ...], [None], (None,)),
    (dict[str, list[Union[int, str]]], {'k': [1]}, {'k': [1]}),
], ids=_ids)
def test_coerce_container_of_union(anno, value, expected):
    r = call_func(_tool(anno), {'x': value}, raise_on_err=False)
    assert (type(r), r) == (type(expected), expected)


@pytest.mark.parametrize('anno', [tuple, typing.Tuple], ids=['tuple', 'Tuple'])
def test_coerce_bare_tuple(anno):
    r = call_func(_tool(anno), {'x': [1, 2]})
    assert (type(r), r) == (tuple, (1, 2))


@pytest.mark.parametrize('anno,value,expected', [
    (list[Point], {'x': 1}, [Point(1)]),
    (list[dict], {'a': 1}, [{'a': 1}]),
], ids=['list-of-dataclass', 'list-of-dict'])
def test_repair_single_object_for_list_of_objects(anno, value, expected):
    assert call_func(_tool(anno), {'x': value}) == expected


# Repairs of known model mistakes, only where the annotation allows them
@pytest.mark.parametrize('anno,value,expected', [
    (list[int], '[1, 2]', [1, 2]), (list[str], '["a", "b"]', ['a', 'b']), (list[str], "['a', 'b']", ['a', 'b']),
    (list[int], ' [1]', [1]), (list[int], {}, []), (list[int], 5, [5]), (list[int], '5', [5]), (list[str], 'a', ['a']),
    (list[str], '[not json', ['[not json']), (list[Point], [{'x': 1}], [Point(1)]),
    (set[int], '[1, 2]', {1, 2}), (set[int], {}, set()), (tuple[int, int], '[1, 2]', (1, 2)), (tuple[int, ...], 4, (4,)),
    (dict[str, int], '{"a": 1}', {'a': 1}), (dict, '{"a": 1}', {'a': 1}), (Point, '{"x": 1, "y": 2}', Point(1, 2)),
    (Movie, '{"title": "t", "year": 1}', {'title': 't', 'year': 1}), (User, '{"name": "a", "age": 1}', User(name='a', age=1)),
    (Optional[list[int]], '[1]', [1]), (Optional[dict[str, int]], '{"a": 1}', {'a': 1}),
    (int, '5', 5), (float, '5', 5.0), (bool, 'true', True), (bool, 'false', False), (Optional[bool], 'true', True),
], ids=_ids)
def test_repairs(anno, value, expected):
    r = call_func(_tool(anno), {'x': value})
    assert (type(r), r) == (type(expected), expected)


@pytest.mark.parametrize('anno,value,expected', [
    (str, '[1, 2]', '[1, 2]'), (str, 'true', 'true'), (str, '{"a": 1}', '{"a": 1}'), (Any, '{"a": 1}', '{"a": 1}'),
    (Union[str, list[int]], '[1]', '[1]'), (Union[str, int], '5', '5'), (Optional[str], 'null', 'null'),
], ids=_ids)
def test_no_repair_where_the_annotation_takes_the_value(anno, value, expected):
    r = call_func(_tool(anno), {'x': value})
    assert (type(r), r) == (type(expected), expected)


# ---------------------------------------------------------------------------------------------------------
# Values that don't fit: a ToolInputError naming the parameter (with its path), the expected type and the value
# ---------------------------------------------------------------------------------------------------------

MISMATCH = [
    (int, 'five', "'x': expected an integer, got 'five'"), (int, '5.5', "'x': expected an integer, got '5.5'"), (int, 5.5, "'x': expected an integer, got 5.5"),
    (int, True, "'x': expected an integer, got true"), (int, [5], "'x': expected an integer, got [5]"), (int, float('inf'), "'x': expected an integer, got Infinity"),
    (float, True, "'x': expected a number, got true"), (float, 'nan', "'x': expected a number, got 'nan'"), (float, '1,5', "'x': expected a number, got '1,5'"),
    (bool, 'yes', "'x': expected a boolean, got 'yes'"), (bool, 1, "'x': expected a boolean, got 1"), (str, 5, "'x': expected a string, got 5"),
    (str, None, "'x': expected a string, got null"), (str, ['a'], "'x': expected a string, got ['a']"),
    (type(None), 0, "'x': expected null, got 0"),
    (Path, 5, "'x': expected a file path string, got 5"), (UUID, 'abc', "'x': expected a UUID string, got 'abc'"),
    (Decimal, 'abc', "'x': expected a decimal number string, got 'abc'"), (Decimal, True, "'x': expected a decimal number string, got true"),
    (dt.datetime, 'yesterday', "'x': expected an ISO 8601 date-time string, got 'yesterday'"),
    (dt.date, '2024-13-01', "'x': '2024-13-01' is not a valid date: month must be in 1..12"),
    (dt.time, '25:00', "'x': '25:00' is not a valid time: hour must be in 0..23"), (bytes, 'hello!', "'x': expected a base64-encoded string, got 'hello!'"),
    (Color, 'purple', "'x': expected one of 1, 2, got 'purple'"), (Color, 3, "'x': expected one of 1, 2, got 3"),
    (Shade, 'LIGHT', "'x': expected one of 'light', 'dark', got 'LIGHT'"),
    (Literal['a', 'b'], 'c', "'x': expected one of 'a', 'b', got 'c'"), (Literal[5], 5.5, "'x': expected exactly 5, got 5.5"),
    (Optional[int], 'x', "'x': expected an integer or null, got 'x'"),
    (list[int], {'a': 1}, "'x': expected an array of integers, got {'a': 1}"), (list[int], '[1, 2', "'x': expected an array of integers, got '[1, 2'"),
    (tuple[int, int], [1], "'x': expected an array of 2 items: an integer, an integer, got [1]"), (tuple[int, int], [1, 2, 3], "'x': expected an array of 2 items: an integer, an integer, got [1, 2, 3]"),
    (dict, [1], "'x': expected an object, got [1]"), (dict, '[1]', "'x': expected an object, got '[1]'"), (dict[str, int], 'a', "'x': expected an object of integers, got 'a'"),
    (set[list[int]], [[1]], "'x': [[1]] has items that can't be in a set"),
    (Point, {'y': 1}, "'x.x': missing (required)"),
    (Point, {'x': 1, 'z': 2}, "'x.z': unknown field; Point has 'x', 'y'"),
    (Point, [1, 2], "'x': expected a Point object (fields: x, y; required: x), got [1, 2]"), (Point, 'p', "'x': expected a Point object (fields: x, y; required: x), got 'p'"),
    (Movie, {'title': 't'}, "'x.year': missing (required)"),
    (Pair, {}, "'x.x': missing (required)"),
    (Box, {'h': 2}, "'x.w': missing (required)"),
]


@pytest.mark.parametrize('anno,value,message', MISMATCH, ids=_ids)
def test_mismatch(anno, value, message):
    f = _tool(anno)
    with pytest.raises(ToolInputError) as ei: call_func(f, {'x': value})
    assert str(ei.value) == f"Tool 'f', argument {message}"


def geo(p1: Point, items: list[int] = (), tags: dict[str, int] = None, line: Line = None, poly: Polygon = None, pair: tuple[int, str] = None,
        movie: Movie = None, nt: Pair = None, sets: set[int] = None, nested: list[list[int]] = None, box: Box = None):
    return p1


P = {'x': 1, 'y': 2}


@pytest.mark.parametrize('inputs,message', [
    ({'p1': {'x': 1, 'y': 'abc'}}, "argument 'p1.y': expected an integer, got 'abc'"),
    ({'p1': P, 'items': [1, 2, 'x']}, "argument 'items[2]': expected an integer, got 'x'"),
    ({'p1': P, 'tags': {'a': 1, 'b': 'z'}}, "argument 'tags.b': expected an integer, got 'z'"),
    ({'p1': P, 'line': {'a': P, 'b': {'x': 1, 'y': []}}}, "argument 'line.b.y': expected an integer, got []"),
    ({'p1': P, 'poly': {'points': [P, {'x': 'q'}]}}, "argument 'poly.points[1].x': expected an integer, got 'q'"),
    ({'p1': P, 'poly': {'points': [], 'tags': {'k': {'x': None}}}}, "argument 'poly.tags.k.x': expected an integer, got null"),
    ({'p1': P, 'pair': [1, 2]}, "argument 'pair[1]': expected a string, got 2"),
    ({'p1': P, 'movie': {'title': 't', 'year': 'y'}}, "argument 'movie.year': expected an integer, got 'y'"),
    ({'p1': P, 'nt': [1, 'b']}, "argument 'nt.y': expected an integer, got 'b'"),
    ({'p1': P, 'sets': [1, 'b']}, "argument 'sets[1]': expected an integer, got 'b'"),
    ({'p1': P, 'nested': [[1], [2, 'c']]}, "argument 'nested[1][1]': expected an integer, got 'c'"),
    ({'p1': P, 'box': {'w': 1, 'where': {'x': 'e'}}}, "argument 'box.where.x': expected an integer, got 'e'"),
    ({'p1': {'x': 'v' * 200}}, f"argument 'p1.x': expected an integer, got {'v' * 200!r:.77}..."),
    ({'p1': P, 'items': ['w' * 200]}, f"argument 'items[0]': expected an integer, got {'w' * 200!r:.77}..."),
], ids=['dataclass-field', 'list-item', 'dict-value', 'nested-dataclass', 'list-in-dataclass', 'dict-in-dataclass', 'tuple-item',
        'typeddict', 'namedtuple-list', 'set-item', 'list-of-lists', 'optional-in-class', 'long-value', 'long-item'])
def test_mismatch_path(inputs, message):
    with pytest.raises(ToolInputError) as ei: call_func('geo', inputs, [geo])
    assert str(ei.value) == f"Tool 'geo', {message}"
    assert call_func('geo', inputs, [geo], raise_on_err=False) == f"ToolInputError: Tool 'geo', {message}"


def opt_point(p1: Optional[Point] = None, items: Optional[list[int]] = None): return p1


@pytest.mark.parametrize('inputs,message', [
    ({'p1': {'x': 1, 'y': 'abc'}}, "Tool 'opt_point', argument 'p1.y': expected an integer, got 'abc'"),
    ({'items': [1, 'x']}, "Tool 'opt_point', argument 'items[1]': expected an integer, got 'x'"),
], ids=['Optional-dataclass', 'Optional-list'])
def test_mismatch_path_through_optional(inputs, message):
    with pytest.raises(ToolInputError) as ei: call_func('opt_point', inputs, [opt_point])
    assert str(ei.value) == message


def team_tool(team: Team): return team


def test_mismatch_path_in_pydantic_model():
    with pytest.raises(ToolInputError) as ei: call_func('team_tool', {'team': {'lead': {'name': 'a', 'age': 'x'}}}, [team_tool])
    assert str(ei.value).startswith("Tool 'team_tool', argument 'team.lead.age': ")


def test_pydantic_error_names_the_field():
    with pytest.raises(ToolInputError) as ei: call_func('team_tool', {'team': {'lead': {'name': 'a', 'age': 'x'}}}, [team_tool])
    msg = str(ei.value)
    assert msg.startswith("Tool 'team_tool', argument 'team.lead.age': Input should be a valid integer")
    assert msg.endswith("got 'x'")


def test_namedtuple_too_many_items():
    with pytest.raises(ToolInputError): call_func(_tool(Pair), {'x': [1, 2, 3]})


def test_constructor_error_is_input_error():
    @dataclass
    class Positive:
        n: int
        def __post_init__(self):
            if self.n < 0: raise ValueError('n must be >= 0')
    with pytest.raises(ToolInputError) as ei: call_func(_tool(Positive), {'x': {'n': -1}})
    assert str(ei.value) == "Tool 'f', argument 'x': not a valid Positive: ValueError: n must be >= 0"


# ---------------------------------------------------------------------------------------------------------
# null means "use the default"
# ---------------------------------------------------------------------------------------------------------

def dflt(a: int = 3, b: Optional[str] = 'b', c: Any = 'c', d: list[int] = (1,), e=7, f: Point = Point(9)): return (a, b, c, d, e, f)


@pytest.mark.parametrize('inputs,expected', [
    ({}, (3, 'b', 'c', (1,), 7, Point(9))),
    ({'a': None, 'b': None, 'c': None, 'd': None, 'e': None, 'f': None}, (3, 'b', 'c', (1,), 7, Point(9))),
    ('{"a": null, "c": null}', (3, 'b', 'c', (1,), 7, Point(9))),
    ({'a': '1', 'b': 'x', 'c': [1], 'd': '[2]', 'e': 8, 'f': {'x': 1}}, (1, 'x', [1], [2], 8, Point(1))),
])
@pytest.mark.parametrize('calls', [1, 2, 3])  # the second call on may take the fast path of a planned function
def test_null_means_default(inputs, expected, calls):
    ns = {'dflt': dflt}
    for _ in range(calls): r = call_func('dflt', inputs, ns)
    assert r == expected


class _Zip(typing_extensions.TypedDict):
    street: str
    zip: typing_extensions.NotRequired[str]


@dataclass
class _Item:
    n: int
    unit: str = 'kg'


class _Inner(BaseModel):
    n: int = 3


class _Outer(BaseModel):
    home: Optional[_Zip] = None
    inner: _Inner = _Inner()
    items: list[_Item] = []


def strict_nested(o: _Outer):
    "Return o"
    return o


@pytest.mark.parametrize('o,expected', [
    ({'home': {'street': 's', 'zip': None}}, _Outer(home={'street': 's'})),
    ({'inner': {'n': None}}, _Outer()),
    ({'items': [{'n': 1, 'unit': None}, {'n': 2, 'unit': 'g'}]}, _Outer(items=[_Item(1), _Item(2, 'g')])),
], ids=['typeddict-key', 'model-field', 'dataclass-in-list'])
def test_a_strict_null_inside_a_model_means_leave_it_out(o, expected):
    "Strict mode makes every key required and nullable: a null for a key that may be left out is the key left out, at any depth"
    strict = to_openai(strict_nested, strict=True)['function']
    assert strict['strict'] is True
    args = {'o': {'home': None, 'inner': None, 'items': None, **o}}
    Draft202012Validator(strict['parameters']).validate(args)  # a reply strict mode allows
    assert call_func('strict_nested', args, {'strict_nested': strict_nested}) == expected


def test_a_null_for_a_required_key_inside_a_model_is_still_refused():
    with pytest.raises(ToolInputError) as ei: call_func('strict_nested', {'o': {'home': {'street': None}}}, {'strict_nested': strict_nested})
    assert str(ei.value) == "Tool 'strict_nested', argument 'o.home.street': Input should be a valid string, got null"


# ---------------------------------------------------------------------------------------------------------
# The fast path for planned functions gives the same answers as the first call
# ---------------------------------------------------------------------------------------------------------

def fp_int(n: int, s: str = 's', f: float = 0.0, b: bool = False): return (n, s, f, b)


def fp_any(a, b: Any = 5): return (a, b)


async def fp_async(n: int = 1): return n * 2


async def fp_async_noargs(): return 'pong'


def fp_posonly(a: int = 1, /): return a


@pytest.mark.parametrize('tool,inputs,expected', [
    (fp_int, {'n': 1}, (1, 's', 0.0, False)),
    (fp_int, {'n': '1', 's': 'x', 'f': 2, 'b': 'true'}, (1, 'x', 2.0, True)),
    (fp_int, {'n': 1, 'f': 2.5, 'b': True}, (1, 's', 2.5, True)),
    (fp_int, {'n': 1, 's': UserId('u')}, (1, 'u', 0.0, False)),
    (fp_any, {'a': None}, (None, 5)),
    (fp_any, {'a': 1, 'b': None}, (1, 5)),
    (fp_async, {}, 2),
    (fp_async, {'n': 3}, 6),
    (fp_async_noargs, {}, 'pong'),
    (fp_posonly, {}, 1),
    (fp_posonly, {'a': 4}, 4),
], ids=_id)
def test_fast_path_same_answer(tool, inputs, expected):
    ns = {tool.__name__: tool}
    assert [call_func(tool.__name__, dict(inputs), ns) for _ in range(3)] == [expected] * 3


@pytest.mark.parametrize('inputs,message', [
    ({'n': True}, "Tool 'fp_int', argument 'n': expected an integer, got true"),
    ({'n': 1, 'b': 1}, "Tool 'fp_int', argument 'b': expected a boolean, got 1"),
    ({'n': 1, 'zz': 1}, "Tool 'fp_int', argument 'zz': unknown argument; the tool takes 'n', 's', 'f', 'b'"),
    ({'s': 'x'}, "Tool 'fp_int', argument 'n': missing (required)"),
])
def test_fast_path_same_errors(inputs, message):
    ns = {'fp_int': fp_int}
    assert call_func('fp_int', {'n': 1}, ns) == (1, 's', 0.0, False)
    for _ in range(2):
        with pytest.raises(ToolInputError) as ei: call_func('fp_int', inputs, ns)
        assert str(ei.value) == message


# ---------------------------------------------------------------------------------------------------------
# The caller's inputs are never mutated
# ---------------------------------------------------------------------------------------------------------

def many(p1: Point, items: list[int], tags: set[str], when: dt.date, movie: Movie, user: User, kw_x: int = 0, d: dict[str, list[int]] = None,
         **extra: list[int]):
    return (p1, items, tags, when, movie, user, kw_x, d, extra)


@pytest.mark.parametrize('inputs', [
    {'p1': {'x': '1', 'y': 2}, 'items': '[1, "2"]', 'tags': ['a', 'a'], 'when': '2024-01-02', 'movie': {'title': 't', 'year': '1'},
     'user': {'name': 'n', 'age': '2'}, 'kw-x': '3', 'd': {'a': ['1', 2]}, 'extra': {'other': ['1']}},
    {'p1': {'x': 1}, 'items': {}, 'tags': 'a', 'when': '2024-01-02', 'movie': '{"title": "t", "year": 1}', 'user': '{"name": "n", "age": 1}',
     'kw_x': None, 'd': None},
])
def test_inputs_not_mutated(inputs):
    ns = {'many': many}
    orig = copy.deepcopy(inputs)
    for _ in range(2): call_func('many', inputs, ns)
    asyncio.run(call_func_async('many', inputs, ns))
    coerce_inputs(many, inputs)
    assert inputs == orig


def test_inputs_not_mutated_on_error():
    inputs = {'p1': {'x': '1', 'y': 'bad'}, 'items': ['1']}
    orig = copy.deepcopy(inputs)
    assert call_func('many', inputs, [many], raise_on_err=False) == ("ToolInputError: Tool 'many' got 5 bad arguments:\n"
        "- p1.y: expected an integer, got 'bad'\n- tags: missing (required)\n- when: missing (required)\n- movie: missing (required)\n"
        "- user: missing (required)")
    assert inputs == orig


def test_coerce_inputs():
    assert coerce_inputs(geo, {'p1': '{"x": 1}', 'items': '[1]', 'pair': ['1', 'a']}) == {'p1': Point(1), 'items': [1], 'pair': (1, 'a')}
    assert coerce_inputs(posonly, '{"a": "1", "c": 2}') == {'a': 1, 'c': 2}
    with pytest.raises(ToolInputError, match=r"^Tool 'kn', argument 'a_b': missing \(required\)$"): coerce_inputs(kn, {})


# ---------------------------------------------------------------------------------------------------------
# raise_on_err=False: short messages, the cause first, the tool's own frames, no paths of the library
# ---------------------------------------------------------------------------------------------------------

def boom(a: int):
    raise ValueError(f'bad {a}')


def outer(a: int): return _inner(a)


def _inner(a): return {}['k' * a]


def uses_stdlib(s: str): return json.loads(s)


def multi_line(): raise RuntimeError('first line\nsecond line')


async def aboom(a: int):
    await asyncio.sleep(0)
    raise ValueError(f'async bad {a}')


def _frames(text):
    "The File lines of a report"
    return [l.strip() for l in text.splitlines() if l.strip().startswith('File ')]


def _no_library_paths(text):
    assert '/funccall/' not in text and 'site-packages' not in text and os.path.dirname(funccall.core.call.__file__) not in text
    assert 'File "call.py"' not in text and 'File "_coerce.py"' not in text and 'File "_ns.py"' not in text
    for l in _frames(text): assert l.startswith('File "') and '/' not in l.split('"')[1], l


@pytest.mark.parametrize('tool,inputs,first,funcs', [
    (boom, {'a': 1}, 'ValueError: bad 1', ['boom']),
    (outer, {'a': 2}, "KeyError: 'kk'", ['outer', '_inner']),
    (uses_stdlib, {'s': '{'}, 'json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
     ['uses_stdlib', 'loads', 'decode', 'raw_decode']),
    (multi_line, {}, 'RuntimeError: first line', ['multi_line']),
    (aboom, {'a': 3}, 'ValueError: async bad 3', ['aboom']),
], ids=['simple', 'nested', 'stdlib', 'multi-line', 'async'])
def test_error_text_of_exception_in_tool(tool, inputs, first, funcs):
    r = call_func(tool.__name__, inputs, [tool], raise_on_err=False)
    lines = r.splitlines()
    assert lines[0] == first
    assert 'Traceback (most recent call last):' in lines
    assert [l.split(', in ')[1] for l in _frames(r)] == funcs
    assert _frames(r)[0].startswith('File "test_call.py", line ')
    _no_library_paths(r)
    assert len(r) < 2000


def parse(src: str):
    import ast
    return ast.parse(src)


def test_error_text_syntax_error_cause_first():
    r = call_func('parse', {'src': '1 +'}, [parse], raise_on_err=False)
    assert r.splitlines()[0].startswith('SyntaxError: invalid syntax')


@pytest.mark.parametrize('fc_name,ns,first', [
    ('nope', {'sums': sums}, "ToolNotFound: Unknown tool 'nope'; available tools: 'sums'"),
    ('sums.__globals__.clear', {'sums': sums}, "ToolNotFound: Unknown tool 'sums.__globals__.clear'; available tools: 'sums'"),
    ('geo', [geo], "ToolInputError: Tool 'geo', argument 'p1': missing (required)"),
])
def test_error_text_of_call_mistakes_is_one_line(fc_name, ns, first):
    assert call_func(fc_name, {}, ns, raise_on_err=False) == first


def fwd_ref(x: 'NotDefinedAnywhere'): return x  # noqa: F821


@pytest.mark.parametrize('fc_name,ns', [('fwd_ref', [fwd_ref]), ('max', {'max': max})], ids=['unresolvable-annotation', 'no-signature'])
def test_error_text_of_unreadable_signature(fc_name, ns):
    r = call_func(fc_name, {'x': 1}, ns, raise_on_err=False)
    assert isinstance(r, str) and r.startswith('SchemaError: ') and fc_name in r
    with pytest.raises(SchemaError): call_func(fc_name, {'x': 1}, ns)


def test_raise_on_err_true_raises_the_tools_own_exception():
    with pytest.raises(ValueError, match='^bad 1$'): call_func('boom', {'a': 1}, [boom])
    with pytest.raises(KeyError): call_func('outer', {'a': 1}, [outer])


def test_async_tool_in_running_loop_via_call_func():
    "Inside a running loop, sync `call_func` runs an async tool in a thread of its own: its value, its own exception"
    async def main():
        with pytest.raises(ValueError, match='^async bad 1$'): call_func('aboom', {'a': 1}, [aboom])
        return call_func('aboom', {'a': 2}, [aboom], raise_on_err=False), call_func('asums', {'a': 1, 'b': 2}, [asums])
    r, v = asyncio.run(main())
    assert r.splitlines()[0] == 'ValueError: async bad 2' and v == 3


# ---------------------------------------------------------------------------------------------------------
# call_func_async
# ---------------------------------------------------------------------------------------------------------

async def asums(a: int, b: int): return a + b


class B:
    async def g(self, x: int): return x * 2


class AsyncCallable:
    async def __call__(self, x: int):
        await asyncio.sleep(0)
        return x + 100


def slow(i: int):
    time.sleep(0.5)
    return i


def where(): return threading.get_ident()


b_obj, acall = B(), AsyncCallable()


@pytest.mark.parametrize('fc_name,inputs,expected', [
    ('asums', {'a': 1, 'b': '2'}, 3),
    ('b_obj.g', {'x': '5'}, 10),
    ('b_obj-g', '{"x": 5}', 10),
    ('acall', {'x': 1}, 101),
    ('sums', {'a': 1, 'b': 2}, 3),
    ('calc.helper.run', {'n': '4'}, 'run 4'),
    (asums, {'a': 1, 'b': 1}, 2),
    (acall, {'x': '2'}, 102),
], ids=_id)
def test_call_func_async(fc_name, inputs, expected):
    assert asyncio.run(call_func_async(fc_name, inputs, globals())) == expected


@pytest.mark.parametrize('fc_name,inputs,expected', [
    ('asums', {'a': 1, 'b': 2}, 3), ('b_obj.g', {'x': 5}, 10), ('acall', {'x': 1}, 101),
], ids=_id)
def test_call_func_awaits_async_tools_outside_a_loop(fc_name, inputs, expected):
    assert call_func(fc_name, inputs, globals()) == expected


def test_sync_tools_run_concurrently_in_threads():
    async def main():
        t = time.monotonic()
        res = await asyncio.gather(*(call_func_async('slow', {'i': i}, [slow]) for i in range(4)))
        return res, time.monotonic() - t
    res, elapsed = asyncio.run(main())
    assert res == [0, 1, 2, 3]
    assert elapsed < 1.2, f'4 x 0.5 s sync tools took {elapsed:.2f} s'


@pytest.mark.parametrize('in_thread,same', [(False, True), (True, False)])
def test_in_thread(in_thread, same):
    async def main(): return threading.get_ident(), await call_func_async('where', {}, [where], in_thread=in_thread)
    loop_thread, tool_thread = asyncio.run(main())
    assert (tool_thread == loop_thread) is same


ASYNC_FAILURES = [
    ('nope', {}, {'sums': sums}),
    ('calc.__init__', {}, globals()),
    (123, {}, globals()),
    ('kn', {'a-b': 1, 'a_b': 2}, [kn]),
    ('kn', 'not json', [kn]),
    ('kn', '[1]', [kn]),
    ('geo', {'p1': {'x': 'q'}}, [geo]),
    ('asums', {'a': 1}, [asums]),
    ('aboom', {'a': 1}, [aboom]),
    pytest.param('boom', {'a': 1}, [boom]),
]


@pytest.mark.parametrize('fc_name,inputs,ns', ASYNC_FAILURES, ids=_id)
def test_async_errors_same_as_sync(fc_name, inputs, ns):
    sync = call_func(fc_name, inputs, ns, raise_on_err=False)
    assert asyncio.run(call_func_async(fc_name, inputs, ns, raise_on_err=False)) == sync
    assert asyncio.run(call_func_async(fc_name, inputs, ns, raise_on_err=False, in_thread=False)) == sync
    with pytest.raises(Exception) as e_sync: call_func(fc_name, inputs, ns)
    with pytest.raises(Exception) as e_async: asyncio.run(call_func_async(fc_name, inputs, ns))
    assert (type(e_async.value), str(e_async.value)) == (type(e_sync.value), str(e_sync.value))


def test_async_sync_tool_error_text_has_only_the_tools_frames():
    r = asyncio.run(call_func_async('outer', {'a': 1}, [outer], raise_on_err=False, in_thread=False))
    assert [l.split(', in ')[1] for l in _frames(r)] == ['outer', '_inner']
    _no_library_paths(r)


# --- constraints from Annotated metadata and JSON Schema keywords --------------------------------------

def test_constraints_are_checked_on_calls_and_built_tools():
    from annotated_types import Ge, Len, MaxLen
    from funccall import JsonSchema, get_schema, mk_tool
    def pick(
        n: Annotated[int, Ge(1)],                          # at least one
        code: Annotated[str, JsonSchema(pattern='^[A-Z]{3}$')],
        tags: Annotated[list[str], Len(1, 2)] = None,      # one or two tags
        note: Annotated[str, MaxLen(5)] = '',
    ):
        "Pick things"
        return n, code, tags, note
    ok = call_func('pick', {'n': 1, 'code': 'ABC', 'tags': ['a'], 'note': 'hi'}, [pick])
    assert ok == (1, 'ABC', ['a'], 'hi')
    bad = [({'n': 0, 'code': 'ABC'}, "argument 'n': 0 is less than the minimum 1"),
           ({'n': 1, 'code': 'abc'}, "argument 'code': 'abc' does not match the pattern '^[A-Z]{3}$'"),
           ({'n': 1, 'code': 'ABC', 'tags': []}, "argument 'tags': [] has fewer than 1 items"),
           ({'n': 1, 'code': 'ABC', 'note': 'too long'}, "argument 'note': 'too long' is longer than 5 characters")]
    for args, msg in bad: assert call_func('pick', args, [pick], raise_on_err=False).endswith(msg)
    tool = mk_tool(lambda nm, /, **kw: kw, get_schema(pick, evalable=True))
    assert tool(2, 'XYZ') == {'n': 2, 'code': 'XYZ'}
    with pytest.raises(ToolInputError, match='>= 1'): tool(0, 'XYZ')


def test_constraints_given_with_a_nullable_type_are_checked_as_pydantic_checks_them():
    "FastMCP / MCP SDK style: an optional parameter with its constraints; funccall refuses what pydantic's `validate_call` refuses"
    from annotated_types import Interval, MaxLen
    from pydantic import Field, StringConstraints, validate_call
    from funccall import get_schema, mk_tool
    def search(
        query: Annotated[Optional[str], Field(max_length=256, description='What to look for')] = None,
        cursor: Optional[str] = Field(None, min_length=2, max_length=8, pattern='^c'),
        limit: Annotated[int | None, Interval(ge=1, le=100)] = None,
        tags: Annotated[Optional[list[str]], Field(min_length=1, max_length=3)] = None,
        lang: Optional[Annotated[str, StringConstraints(max_length=2)]] = None,
        code: Annotated[Optional[str], MaxLen(3)] = None,
    ):
        "Search the index"
        return query, cursor, limit, tags, lang, code
    theirs = validate_call(search)
    cases = [{'query': 'x' * 300}, {'query': 'x' * 256}, {'query': None}, {'cursor': 'c'}, {'cursor': 'cabc'}, {'cursor': 'abc'},
             {'cursor': 'c' * 9}, {'limit': 0}, {'limit': 100}, {'limit': 101}, {'limit': None}, {'tags': []}, {'tags': ['a']},
             {'tags': ['a'] * 4}, {'tags': None}, {'lang': 'eng'}, {'lang': 'en'}, {'code': 'abcd'}, {'code': 'abc'}, {}]
    tool = mk_tool(lambda nm, /, **kw: kw, get_schema(search))  # and a tool built from its schema: the schema says the same
    for args in cases:
        try: theirs(**args); ok = True
        except ValueError: ok = False
        res = call_func('search', args, [search], raise_on_err=False)
        assert (not (isinstance(res, str) and res.startswith('ToolInputError'))) == ok, (args, res)
        try: tool(**args); built_ok = True
        except ToolInputError: built_ok = False
        assert built_ok == ok, args
    assert call_func('search', {'query': 'x' * 300}, [search], raise_on_err=False).endswith("is longer than 256 characters")
    assert call_func('search', {'tags': ['a'] * 4}, [search], raise_on_err=False).endswith("has more than 3 items")
    assert call_func('search', {'limit': '7'}, [search]) == (None, None, 7, None, None, None)  # still repaired as before


def test_review_fixes_unannotated_none_default_and_failing_scalar_subclass():
    def f(x=None):
        "Echo x"
        return x
    assert call_func('f', {'x': 5}, [f]) == 5 and call_func('f', {}, [f]) is None
    class Code(str):
        def __new__(cls, v):
            if len(v) != 3: raise ValueError('3 letters')
            return super().__new__(cls, v)
    def g(c: Code):
        "Echo c"
        return c
    assert call_func('g', {'c': 'ab'}, [g], raise_on_err=False) == \
        "ToolInputError: Tool 'g', argument 'c': 'ab' is not a valid Code: 3 letters"


def test_swapping_a_custom_type_is_seen_by_the_caches():
    from funccall import custom_types, get_schema
    class Tag:
        def __init__(self, s: str): self.s = s
    class Label:
        def __init__(self, s: str): self.s = s
    def h(t: Tag, l: Label):
        "Use tags"
        return t, l
    custom_types.add(Tag)
    try:
        assert get_schema(h)['input_schema']['properties']['t']['format'] == 'Tag'
        custom_types.discard(Tag); custom_types.add(Label)  # same size, different set
        props = get_schema(h)['input_schema']['properties']
        assert '$ref' in props['t'] and props['l']['format'] == 'Label'
    finally: custom_types.discard(Tag); custom_types.discard(Label)


# --- the call-plan cache: bounded on every path, and emptied as tools are dropped -------------------------

def test_call_plans_are_bounded_and_leave_with_their_tools():
    import gc
    plans, limit = funccall.core.call._plans, funccall.core.call._MAX_PLANS
    def make(i):
        def tool(a: int) -> int: return a + i
        return tool
    tools = [make(i) for i in range(limit + 50)]
    for i, t in enumerate(tools[:limit]): assert call_func(t, {'a': 1}) == i + 1
    async def rest(ts):  # async calls fill the same cache
        return [await call_func_async(t, {'a': 1}, in_thread=False) for t in ts]
    assert asyncio.run(rest(tools[limit:])) == list(range(limit + 1, limit + 51))
    assert len(plans) <= limit
    assert call_func(tools[0], {'a': '2'}) == 2  # a plan that left the cache is simply made again
    del tools, t; gc.collect()
    assert len(plans) < 60  # tools that are gone take their plans with them


def test_call_func_leaves_a_built_tools_arguments_to_its_schema():
    "A tool built by `mk_tool` checks against its own schema: `call_func` neither coerces nor refuses what the schema allows"
    from funccall import mk_tool
    tool = {'name': 't', 'inputSchema': {'type': 'object', 'required': ['point'],
                                         'properties': {'point': {'type': 'object', 'properties': {'x': {'type': 'integer'}}}}}}
    sent = []
    fn = mk_tool(lambda name, **kw: sent.append(kw) or 'ok', tool)
    assert call_func('t', {'point': {'x': 1, 'z': 2}}, {'t': fn}) == 'ok'
    assert sent == [{'point': {'x': 1, 'z': 2}}]  # an extra key the schema allows arrives as sent
    msg = call_func('t', {'point': {'x': '1'}}, {'t': fn}, raise_on_err=False)
    assert msg.startswith("ToolInputError: Tool 't'") and "point.x" in msg and "expected an integer, got '1'" in msg, msg
    assert len(sent) == 1


# ---------------------------------------------------------------------------------------------------------
# The fast paths (a list of exact ints copied in one pass, classes built by generated code, enum and Literal
# values by a dict) answer and refuse exactly as the careful path: bool is no integer, a whole float is one
# ---------------------------------------------------------------------------------------------------------

class IntSub(int): pass


class ListSub(list): pass


class DictSub(dict): pass


@dataclass
class FpPoint:
    x: int
    y: int


@dataclass
class FpShape:
    name: str
    origin: FpPoint
    pts: list[int]


def fp_ints(xs: list[int]) -> list: return xs


def fp_shape(s: FpShape) -> FpShape: return s


_pt = {'x': 1, 'y': 2}

@pytest.mark.parametrize('name,inputs,expected', [
    ('fp_ints', {'xs': [1, True]}, "Tool 'fp_ints', argument 'xs[1]': expected an integer, got true"),
    ('fp_ints', {'xs': [1.5]}, "Tool 'fp_ints', argument 'xs[0]': expected an integer, got 1.5"),
    ('fp_ints', {'xs': ListSub([1, 2])}, "Tool 'fp_ints', argument 'xs': expected an array of integers, got [1, 2]"),
    ('fp_ints', {'xs': list(range(9999)) + [False]}, "Tool 'fp_ints', argument 'xs[9999]': expected an integer, got false"),
    ('fp_ints', {'xs': ['1', None, 2.5, True] * 5}, "Tool 'fp_ints' got at least 11 bad arguments (the first 10 shown):\n- xs[1]: expected an integer, got null\n"
     "- xs[2]: expected an integer, got 2.5\n- xs[3]: expected an integer, got true\n- xs[5]: expected an integer, got null"),
    ('fp_shape', {'s': {'name': 'n', 'origin': _pt, 'pts': [1, True]}}, "Tool 'fp_shape', argument 's.pts[1]': expected an integer, got true"),
    ('fp_shape', {'s': {'name': 'n', 'origin': {'x': True, 'y': 2}, 'pts': [1.0]}}, "Tool 'fp_shape', argument 's.origin.x': expected an integer, got true"),
    ('fp_shape', {'s': DictSub(name='n', origin=_pt, pts=ListSub([1]))}, "Tool 'fp_shape', argument 's.pts': expected an array of integers, got [1]"),
    ('fp_shape', {'s': {'name': 'n', 'origin': _pt, 'pts': [1], 'z': 1}}, "Tool 'fp_shape', argument 's.z': unknown field; FpShape has 'name', 'origin', 'pts'"),
    ('fp_shape', {'s': {'name': 'n', 'origin': {'x': 1, 'z': 2}, 'pts': [1]}},
     "Tool 'fp_shape' got 2 bad arguments:\n- s.origin.z: unknown field; FpPoint has 'x', 'y'\n- s.origin.y: missing (required)"),
], ids=_id)
def test_fast_paths_refuse_as_before(name, inputs, expected):
    ns = {'fp_ints': fp_ints, 'fp_shape': fp_shape}
    for _ in range(2):  # the first call plans the tool, the second takes the planned path
        with pytest.raises(ToolInputError) as ei: call_func(name, inputs, ns)
        assert str(ei.value).startswith(expected), str(ei.value)


@pytest.mark.parametrize('xs,expected,types', [
    ([1.0, 2], [1, 2], [int, int]),
    ([IntSub(3), 4], [3, 4], [IntSub, int]),  # an int subclass passes as it is, as `int` annotations always took it
    ([10 ** 30, -2 ** 40], [10 ** 30, -2 ** 40], [int, int]),
    (list(range(10_000)), list(range(10_000)), [int] * 10_000),
    ([], [], []),
], ids=['whole-floats', 'int-subclass', 'big-ints', '10k', 'empty'])
@pytest.mark.parametrize('where', ['argument', 'field'])
def test_fast_list_of_ints_is_a_checked_copy(xs, expected, types, where):
    ns = {'fp_ints': fp_ints, 'fp_shape': fp_shape}
    for _ in range(2):
        sent = list(xs)
        got = call_func('fp_ints', {'xs': sent}, ns) if where == 'argument' else \
            call_func('fp_shape', {'s': {'name': 'n', 'origin': _pt, 'pts': sent}}, ns).pts
        assert got == expected and list(map(type, got)) == types
        assert got is not sent and sent == xs  # the tool may change its list: the caller's stays as sent


# dataclasses whose `__init__` does more than store each field: the builder must run it, exactly as `T(**kw)` does
LOG = []


@dataclass
class FpPost:
    x: int
    def __post_init__(self): LOG.append(('post', self.x))


@dataclass(frozen=True)
class FpFrozen:
    x: int


@dataclass
class FpOwnInit:
    x: int
    def __init__(self, x): self.x = x * 10


@dataclass
class FpInitVar:
    x: int
    k: dataclasses.InitVar[int] = 3
    def __post_init__(self, k): self.x *= k


@dataclass
class FpNoInitField:
    x: int
    made: str = dataclasses.field(init=False, default='here')


@dataclass
class FpSetattr:
    x: int
    def __setattr__(self, k, v): LOG.append(('set', k, v)); object.__setattr__(self, k, v)


@dataclass(slots=True)
class FpSlots:
    x: int
    y: list = dataclasses.field(default_factory=list)


@dataclass
class FpKwOnly:
    x: int
    y: int = dataclasses.field(kw_only=True, default=0)


class FpPlain:
    def __init__(self, b: int, a: str = 'a'): LOG.append(('plain', b, a)); self.a, self.b = a, b


class FpPosOnly:
    def __init__(self, a: int, /, b: int): self.a, self.b = a, b


@pytest.mark.parametrize('t,sent,kw', [
    (FpPost, {'x': 1}, {'x': 1}),
    (FpFrozen, {'x': '2'}, {'x': 2}),
    (FpOwnInit, {'x': 3}, {'x': 3}),
    (FpInitVar, {'x': 2}, {'x': 2}),  # its `__post_init__` still gets the InitVar's default
    (FpNoInitField, {'x': 1}, {'x': 1}),
    (FpSetattr, {'x': 1}, {'x': 1}),
    (FpSlots, {'x': 1, 'y': [2]}, {'x': 1, 'y': [2]}),
    (FpKwOnly, {'x': 1, 'y': 2}, {'x': 1, 'y': 2}),
    (FpPlain, {'a': 'z', 'b': 1}, {'a': 'z', 'b': 1}),
], ids=_id)
def test_classes_are_built_as_their_constructor_builds_them(t, sent, kw):
    def f(v: t): return v
    LOG.clear()
    want = t(**kw)
    want_log = LOG[:]
    for _ in range(2):
        LOG.clear()
        got = coerce_inputs(f, {'v': sent})['v']
        assert type(got) is t and LOG == want_log
        assert [(s, getattr(got, s)) for s in ('x', 'y', 'a', 'b', 'made') if hasattr(want, s)] == \
            [(s, getattr(want, s)) for s in ('x', 'y', 'a', 'b', 'made') if hasattr(want, s)]
    if t is FpFrozen:
        with pytest.raises(dataclasses.FrozenInstanceError): got.x = 5


def test_positional_only_constructor_refused_as_before():
    def f(v: FpPosOnly): return v
    for _ in range(2):
        with pytest.raises(ToolInputError) as ei: coerce_inputs(f, {'v': {'a': 1, 'b': 2}})
        assert "not a valid FpPosOnly: TypeError:" in str(ei.value) and 'positional-only' in str(ei.value)


@dataclass
class FpNode:
    v: int
    kids: list['FpNode'] = dataclasses.field(default_factory=list)
    nxt: Optional['FpNode'] = None


def test_recursive_class_fast_path():
    def tree(n: FpNode): return n
    sent = {'v': 1, 'kids': [{'v': 2, 'kids': [], 'nxt': None}], 'nxt': {'v': 3, 'kids': [], 'nxt': None}}
    ns = {'tree': tree}
    for _ in range(2):
        assert call_func('tree', {'n': sent}, ns) == FpNode(1, [FpNode(2)], FpNode(3))
        with pytest.raises(ToolInputError) as ei: call_func('tree', {'n': {'v': 1, 'kids': [{'v': True}]}}, ns)
        assert str(ei.value) == "Tool 'tree', argument 'n.kids[0].v': expected an integer, got true"


@dataclass
class FpUndefined:
    x: 'NotDefinedAnywhere'  # noqa: F821


def test_class_that_cannot_be_planned_fails_only_when_sent():
    def opt(n: int, b: FpUndefined = None): return n
    ns = {'opt': opt}
    for _ in range(2):
        assert call_func('opt', {'n': 1}, ns) == 1
        assert call_func('opt', {'n': 1, 'b': {'x': 1}}, ns, raise_on_err=False).startswith("SchemaError: class 'FpUndefined'")


class FpColor(enum.Enum):
    red = 'red'
    one = 1


class FpIntColor(enum.IntEnum):
    one = 1


def fp_pick(c: FpColor, lit: Literal['a', 1] = 'a', i: Optional[FpIntColor] = None): return (c, lit, i)


@pytest.mark.parametrize('inputs,expected', [
    ({'c': 'red', 'lit': 1}, (FpColor.red, 1, None)),
    ({'c': 'one', 'lit': '1', 'i': 1}, (FpColor.one, 1, FpIntColor.one)),  # a member's name, and "1" for 1
    ({'c': FpColor.one, 'i': FpIntColor.one}, (FpColor.one, 'a', FpIntColor.one)),
    ({'c': 1, 'lit': True}, "Tool 'fp_pick', argument 'lit': expected one of 'a', 1, got true"),
    ({'c': True}, "Tool 'fp_pick', argument 'c': expected one of 'red', 1, got true"),
    ({'c': 1.0, 'lit': 1.0}, "Tool 'fp_pick' got 2 bad arguments:\n- c: expected one of 'red', 1, got 1.0\n- lit: expected one of 'a', 1, got 1.0"),
], ids=_id)
def test_enum_and_literal_values_as_before(inputs, expected):
    ns = {'fp_pick': fp_pick}
    for _ in range(2):
        if isinstance(expected, tuple): assert call_func('fp_pick', inputs, ns) == expected
        else:
            with pytest.raises(ToolInputError) as ei: call_func('fp_pick', inputs, ns)
            assert str(ei.value) == expected


def test_async_result_awaited_only_when_awaitable():
    async def inner(): return 'inner'
    async def gives_coro(): return inner()
    async def gives_list(): return [1]
    ns = {'gives_coro': gives_coro, 'gives_list': gives_list}
    for _ in range(2):
        assert asyncio.run(call_func_async('gives_coro', {}, ns)) == 'inner'
        assert asyncio.run(call_func_async('gives_list', {}, ns)) == [1]


# --- the test for a call that gives every argument, each of exactly its type ---------------------------------

def _tagged(a: int, b: str, c=None, d: float = 1.0):
    "Arguments as they arrive"
    return a, b, c, d

@pytest.mark.parametrize('args, want', [
    ({'a': 1, 'b': 'x', 'c': [1], 'd': 2.5}, (1, 'x', [1], 2.5)),       # all given, exact: as they are
    ({'a': 1, 'b': 'x', 'c': None, 'd': 2.5}, (1, 'x', None, 2.5)),     # null for the unannotated one: its default
    ({'a': 1, 'b': 'x', 'c': 0, 'd': 2}, (1, 'x', 0, 2.0)),             # 2 for a float: coerced, not passed as an int
    ({'a': 1, 'b': 'x', 'c': 0, 'd': None}, (1, 'x', 0, 1.0)),          # null for an annotated default: the default
    ({'a': True, 'b': 'x', 'c': 0, 'd': 1.5}, 'error'),                 # a bool is no int
])
def test_every_argument_given_takes_the_quick_test_and_keeps_the_rules(args, want):
    for _ in range(2):  # the first call makes the plan, the second takes the quick test
        if want == 'error':
            with pytest.raises(ToolInputError, match="argument 'a'"): call_func('tagged', args, {'tagged': _tagged})
            assert "argument 'a'" in call_func('tagged', args, {'tagged': _tagged}, raise_on_err=False)
        else:
            got = call_func('tagged', args, {'tagged': _tagged})
            assert got == want and [type(x) for x in got] == [type(x) for x in want]

def test_as_many_arguments_with_other_names_are_not_taken_for_all_given():
    ns = {'tagged': _tagged}
    call_func('tagged', {'a': 1, 'b': 'x'}, ns)
    for args in ({'a': 1, 'b': 'x', 'c': 0, 'e': 2.5}, {'a': 1, 'b': 'x', 'c': 0, 'd': 2.5, 'e': 2.5}):  # one swapped, one more
        msg = call_func('tagged', args, ns, raise_on_err=False)
        assert msg.startswith("ToolInputError: Tool 'tagged'") and "'e'" in msg and 'unknown argument' in msg

def test_a_private_name_is_refused_even_when_its_function_has_a_plan():
    call_func(_tagged, {'a': 1, 'b': 'x', 'c': 0, 'd': 2.5})  # planned, under its own private name
    for nm in ('_tagged', '_', '_\uffff'):
        with pytest.raises(ToolNotFound): call_func(nm, {'a': 1, 'b': 'x', 'c': 0, 'd': 2.5}, {nm: _tagged})

def test_a_custom_type_added_after_a_call_is_used_by_the_next_call():
    from funccall import custom_types
    class Code:
        def __init__(self, s: str): self.s = s
    def use(c: Code):
        "Use a code"
        return c
    ns = {'use': use}
    assert call_func('use', {'c': 'ab'}, ns, raise_on_err=False).startswith("ToolInputError: Tool 'use', argument 'c'")
    custom_types.add(Code)
    try: assert type(call_func('use', {'c': 'ab'}, ns)) is Code and call_func('use', {'c': 'ab'}, ns).s == 'ab'
    finally: custom_types.discard(Code)
    assert call_func('use', {'c': 'ab'}, ns, raise_on_err=False).startswith("ToolInputError: Tool 'use', argument 'c'")


def _counts(d: dict[str, int]) -> dict:
    "The dict as it arrives"
    return d

@pytest.mark.parametrize('d, problem', [
    ({'a': 1, 'b': True}, "argument 'd.b'"),            # a bool is no int, also where every other value is one
    ({'a': 1, 'b': 1.5}, "argument 'd.b'"),
])
def test_dict_of_exact_values_keeps_the_rules(d, problem):
    for _ in range(2):
        msg = call_func('counts', {'d': d}, {'counts': _counts}, raise_on_err=False)
        assert msg.startswith("ToolInputError: Tool 'counts'") and problem in msg, msg

def test_dict_of_exact_values_arrives_as_a_copy():
    d = {f'k{i}': i for i in range(50)}
    for _ in range(2):
        got = call_func('counts', {'d': d}, {'counts': _counts})
        assert got == d and got is not d and all(type(v) is int for v in got.values())
    got = call_func('counts', {'d': {'a': 1, 'b': '2'}}, {'counts': _counts})  # text of a number goes the checked way
    assert got == {'a': 1, 'b': 2} and type(got['b']) is int


class _Level(enum.Enum):
    low = 'low'
    high = 'high'
    one = 1

def _levels(ls: list[_Level]) -> list:
    "The levels as they arrive"
    return ls

@pytest.mark.parametrize('ls, want', [
    (['low', 'high', 'low'], [_Level.low, _Level.high, _Level.low]),   # text: looked up at once
    ([_Level.low, 'high'], [_Level.low, _Level.high]),                  # a member among them: the checked way
    ([1, 'low'], [_Level.one, _Level.low]),
])
def test_list_of_enum_members_by_their_text(ls, want):
    for _ in range(2):
        assert call_func('levels', {'ls': ls}, {'levels': _levels}) == want

def test_list_of_enum_text_no_member_has_is_reported_at_its_index():
    msg = call_func('levels', {'ls': ['low', 'medium', 'high']}, {'levels': _levels}, raise_on_err=False)
    assert msg.startswith("ToolInputError: Tool 'levels'") and "'ls[1]'" in msg and "'medium'" in msg, msg


def _days(ds: list[dt.date]) -> list:
    "The days as they arrive"
    return ds

@pytest.mark.parametrize('ds, problem', [
    (['2026-01-01', '2026-02-30'], "'ds[1]': '2026-02-30' is not a valid date"),  # read at once, then the checked way says why
    (['2026-01-01', '2026-01-01' + 'x' * 200], "'ds[1]'"),                         # too long to parse at all
    (['2026-01-01', 5], "'ds[1]'"),
])
def test_list_of_dates_read_at_once_keeps_the_rules(ds, problem):
    for _ in range(2):
        msg = call_func('days', {'ds': ds}, {'days': _days}, raise_on_err=False)
        assert msg.startswith("ToolInputError: Tool 'days'") and problem in msg, msg

def test_list_of_dates_read_at_once():
    got = call_func('days', {'ds': ['2026-01-01', '2024-02-29']}, {'days': _days})
    assert got == [dt.date(2026, 1, 1), dt.date(2024, 2, 29)] and all(type(d) is dt.date for d in got)
