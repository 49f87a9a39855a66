"""Schemas funccall makes are fixpoints of the inverse: schema -> `mk_tool`/`schema2anno` -> schema gives them back.

A hypothesis strategy builds annotations from the kinds the schema module supports (scalars, Literal, Enum,
unions, list/set/tuple, dict[str, X], dict[int, X], the string formats, dataclasses/TypedDicts/NamedTuples with
and without defaults and field docs, nested and recursive), and two properties are checked:

- a function with parameters of those types (some with defaults) has `s = get_schema(f, evalable=True)`, and
  `get_schema(mk_tool(dispatch, s), evalable=True) == s`, `$defs` included;
- the style-guide fixpoint, on types: `handle_type(schema2anno(s, defs), defs2) == s` with `defs2 == defs`, once
  descriptions, defaults and string formats are left out of both (annotations are plain types, a formatted string
  is `str`; a built tool keeps all of it in its own schema, which is what `get_schema` gives back).

Documented differences, which the strategy stays clear of (each is pinned by a test below):
- classes come back as `TypedDict`s and Enums as `Literal`s: the schemas are the same, the Python types are not;
- `Union[X, Any]` comes back as `Any` (`anyOf: [X, {}]` -> `{}`);
- a function's description is non-empty (`get_schema` warns of an undocumented function);
"""
import dataclasses
import datetime as dt
import enum
import inspect
import itertools
import json
import typing
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Optional, TypedDict, Union
from uuid import UUID

import annotated_types as at
import pytest
from conftest import all_any, examples
import typing_extensions as te
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from funccall import get_schema, handle_type, mk_tool, schema2anno
from funccall.core._json import jsonable



# ---------------------------------------------------------------------------------------------------------
# Module-level classes: field comments need source, and recursion needs names to resolve
# ---------------------------------------------------------------------------------------------------------

class Color(enum.Enum):
    red = 'red'
    green = 'green'


class Level(enum.IntEnum):
    low = 1
    high = 2


@dataclasses.dataclass
class Point:
    "A point"
    x: int  # across
    y: float = 0.5  # down
    tags: list[str] = dataclasses.field(default_factory=list)  # labels


class Row(NamedTuple):
    key: str  # the key
    n: int = 2


class Opts(TypedDict, total=False):
    depth: int  # how deep
    name: te.Required[str]


@dataclasses.dataclass
class Node:
    val: int  # the value
    kids: 'list[Node]' = dataclasses.field(default_factory=list)
    parent: 'Optional[Node]' = None


@dataclasses.dataclass
class Ping:
    pong: 'Optional[Pong]' = None


@dataclasses.dataclass
class Pong:
    ping: 'Optional[Ping]' = None
    at: dt.datetime = dt.datetime(2024, 1, 2, 3, 4)


class Tree(TypedDict):
    label: Annotated[str, 'what it is']
    children: 'list[Tree]'


# ---------------------------------------------------------------------------------------------------------
# The strategy
# ---------------------------------------------------------------------------------------------------------

_n = itertools.count()
NoneType = type(None)

SCALARS = [int, str, float, bool, dt.datetime, dt.date, dt.time, UUID, Decimal, bytes, Path, Any, dict, list]
CLASSES = [Color, Level, Point, Row, Opts, Node, Ping, Pong, Tree]
# a JSON default for values of each leaf, when it has one worth showing
SAMPLES = {int: 3, str: 'a', float: 1.5, bool: True, dt.datetime: dt.datetime(2024, 5, 6, 7, 8), dt.date: dt.date(2024, 5, 6),
           dt.time: dt.time(7, 8), UUID: UUID(int=7), Decimal: Decimal('1.25'), bytes: b'hi', Path: Path('a/b'), Color: Color.green,
           Level: Level.high, Point: Point(1, 2.0), Row: Row('k')}

literals = st.lists(st.one_of(st.text(max_size=3), st.integers(-5, 5), st.booleans()), min_size=1, max_size=3, unique_by=lambda v: (type(v), v)) \
    .map(lambda vs: Literal[tuple(vs)])
leaves = st.one_of(st.sampled_from(SCALARS), st.sampled_from(CLASSES), literals)


def _schema(t) -> dict: return handle_type(t, {})


def _union(ts: list):
    "A union of distinct members (by schema), none of them `Any` or a union, `None` at most once and last"
    members, seen = [], []
    for t in ts:
        if t is Any or typing.get_origin(t) is Union or t is NoneType: continue
        s = _schema(t)
        if s in seen or s == {}: continue
        members.append(t); seen.append(s)
    return members


@st.composite
def unions(draw, children):
    ms = _union(draw(st.lists(children, min_size=1, max_size=3)))
    if not ms: ms = [int]
    if draw(st.booleans()) or len(ms) == 1: ms.append(NoneType)
    return Union[tuple(ms)]


def _field_default(t):
    "(has default, default or factory) for a field of type `t`"
    if t in SAMPLES: return SAMPLES[t]
    if typing.get_origin(t) is Union and NoneType in typing.get_args(t): return None
    if typing.get_origin(t) is list: return dataclasses.field(default_factory=list)
    if typing.get_origin(t) is dict: return dataclasses.field(default_factory=dict)
    return dataclasses.MISSING


def _dc_field(d):
    "A dataclass field with default `d`; a factory for a value dataclasses refuse as a default (unhashable)"
    if isinstance(d, dataclasses.Field): return d
    return dataclasses.field(default=d) if type(d).__hash__ is not None else dataclasses.field(default_factory=lambda: d)


@st.composite
def classes(draw, children):
    "A new dataclass, TypedDict or NamedTuple with fields of `children` types, some with defaults or descriptions"
    how = draw(st.sampled_from(['dataclass', 'typeddict', 'namedtuple']))
    n = draw(st.integers(1, 3))
    fields = []
    for i in range(n):
        t = draw(children)
        if draw(st.booleans()): t = Annotated[t, f'field {i}']
        dflt = _field_default(t.__origin__ if typing.get_origin(t) is Annotated else t) if draw(st.booleans()) else dataclasses.MISSING
        fields.append((f'f{i}', t, dflt))
    fields.sort(key=lambda f: f[2] is not dataclasses.MISSING)  # the required ones first, as Python wants
    nm = f'C{next(_n)}'
    if how == 'dataclass':
        return dataclasses.make_dataclass(nm, [(f, t) if d is dataclasses.MISSING else (f, t, _dc_field(d)) for f, t, d in fields])
    if how == 'typeddict':
        total = draw(st.booleans())
        return TypedDict(nm, {f: te.NotRequired[t] if total and d is not dataclasses.MISSING else t for f, t, d in fields}, total=total)
    nt = NamedTuple(nm, [(f, t) for f, t, _ in fields])
    dflts = {}
    for f, _, d in reversed(fields):  # a NamedTuple's defaults are its last fields, and plain values
        if d is dataclasses.MISSING or isinstance(d, dataclasses.Field): break
        dflts = {f: d, **dflts}
    nt._field_defaults = dflts
    nt.__new__.__defaults__ = tuple(dflts.values()) or None
    return nt


def _extend(children):
    return st.one_of(
        children.map(lambda t: list[t]),
        children.map(lambda t: set[t]),
        children.map(lambda t: tuple[t, ...]),
        st.lists(children, min_size=1, max_size=3).map(lambda ts: tuple[tuple(ts)]),
        st.just(tuple[()]),
        children.map(lambda t: dict[str, t]),
        children.map(lambda t: dict[int, t]),
        unions(children),
        children.map(lambda t: Annotated[t, 'described']),
        classes(children),
    )


annos = st.recursive(leaves, _extend, max_leaves=6)
# the same without string formats: to the inverse every string is `str`, so `tuple[str, datetime]` comes back `tuple[str, str]`
FORMATS = {dt.datetime, dt.date, dt.time, UUID, Decimal, bytes, Path, Pong}
plain_annos = st.recursive(st.one_of(st.sampled_from([t for t in SCALARS if t not in FORMATS]), st.sampled_from([c for c in CLASSES if c not in FORMATS]),
                                     literals), _extend, max_leaves=6)


@st.composite
def functions(draw):
    "A documented function with 1-4 parameters of generated types, the later ones sometimes with defaults"
    ts = draw(st.lists(annos, min_size=1, max_size=4))
    ps, has_default = [], False
    for i, t in enumerate(ts):
        base = t.__origin__ if typing.get_origin(t) is Annotated else t
        d = SAMPLES.get(base, None if typing.get_origin(base) is Union else inspect.Parameter.empty)
        has_default = has_default or (d is not inspect.Parameter.empty and draw(st.booleans()))
        if has_default and d is inspect.Parameter.empty: d = None  # a default that does not fit the type still has a schema
        if draw(st.booleans()): t = Annotated[t, f'param {i}']
        ps.append(inspect.Parameter(f'p{i}', inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=t,
                                    default=d if has_default else inspect.Parameter.empty))
    def f(*args, **kwargs): "A generated tool"
    f.__signature__ = inspect.Signature(ps)
    f.__annotations__ = {p.name: p.annotation for p in ps}
    return f


def _dispatch(*args, **kwargs): return None


def _example(p0: Node, p1: Point = Point(1, 2.0), *, p2: Color = Color.red, p3: Optional[Row] = None, p4: Annotated[set[int], 'some'] = frozenset()):
    "An example"


# ---------------------------------------------------------------------------------------------------------
# The properties
# ---------------------------------------------------------------------------------------------------------

def rebuilt(tool, description: str = 'Rebuilt'):
    """A plain function with `tool`'s signature, annotations and defaults, and nothing else: its schema is made from those
    alone, not read back from what `mk_tool` stored on `tool`"""
    def g(*args, **kwargs): pass
    g.__doc__, g.__signature__, g.__annotations__ = description, inspect.signature(tool), dict(tool.__annotations__)
    return g


def _without(s, words: tuple):
    if isinstance(s, list): return [_without(x, words) for x in s]
    if not isinstance(s, dict): return s
    return {k: _without(v, words) for k, v in s.items() if k not in words}


def assert_signature_says(tool, s: dict, unsaid: tuple = ()) -> None:
    """The built `tool`'s signature carries schema `s` (from `get_schema`) on its own: the schema made again from its
    annotations is `s` less what annotations can't say (descriptions, defaults, string formats), each parameter's
    default is the schema's (as JSON), and the parameters without one are the required ones; `unsaid`: more keywords
    the annotations are documented not to carry"""
    again = get_schema(rebuilt(tool), evalable=True)['input_schema']
    assert _without(_one_of_each(_types(again)), unsaid) == _without(_one_of_each(_types(s['input_schema'])), unsaid)
    props, req = s['input_schema'].get('properties', {}), set(s['input_schema'].get('required', ()))
    ps = inspect.signature(tool).parameters
    assert set(ps) == set(props)
    for nm, p in ps.items():
        if p.default is inspect.Parameter.empty: assert nm in req, nm
        else: assert nm not in req and jsonable(p.default) == props[nm].get('default'), nm


def _one_of_each(s):
    "`s` with each union's repeated members once, and a union of one member that member: `date | str` is `str | str` to an annotation"
    if isinstance(s, list): return [_one_of_each(x) for x in s]
    if not isinstance(s, dict): return s
    s = {k: _one_of_each(v) for k, v in s.items()}
    if 'anyOf' not in s: return s
    members = [m for i, m in enumerate(s['anyOf']) if m not in s['anyOf'][:i]]
    rest = {k: v for k, v in s.items() if k != 'anyOf'}
    return {**members[0], **rest} if len(members) == 1 else {**rest, 'anyOf': members}


def _fixpoint(f):
    s = get_schema(f, evalable=True)
    tool = mk_tool(_dispatch, s)
    assert get_schema(tool, evalable=True) == s  # what it stored comes back
    assert_signature_says(tool, s)  # and the signature it built says the same on its own
    return s, tool


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(functions())
@example(_example)
def test_get_schema_of_mk_tool_is_a_fixpoint(f):
    _fixpoint(f)


def test_the_fixpoint_fails_when_the_built_annotations_are_any():
    "The property can fail: the same example with every built annotation made `Any` is caught (it was not, reading back the stored schema)"
    s, tool = _fixpoint(_example)
    all_any(tool)
    assert get_schema(tool, evalable=True) == s  # the stored schema alone can't tell
    with pytest.raises(AssertionError): assert_signature_says(tool, s)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_annos)
@example(Node)
@example(Ping)
@example(Tree)
@example(dict[int, Point])
@example(Optional[list[Row]])
@example(dict[int, tuple[int, Annotated[int, 'described']]])  # a description in a fixed tuple once made `items` an anyOf
@example(list[Optional[Annotated[Any, 'described']]])  # `anyOf: [{description}, null]` once came back as `{}` (issue 29)
@example(dict[str, Union[int, Annotated[int, 'described']]])  # two members alike but for a description once became one
def test_handle_type_of_schema2anno_is_a_fixpoint(t):
    defs = {}
    s = handle_type(t, defs)
    defs2 = {}
    assert _types(handle_type(schema2anno(s, defs), defs2)) == _types(s)
    assert _named(defs2) == _named(defs)


@pytest.mark.parametrize('t', [dict[int, tuple[int, Annotated[int, 'described']]], list[Optional[Annotated[Any, 'described']]],
                               list[Annotated[int, 'described']], dict[str, Annotated[str, 'described']], Union[Annotated[int, 'described'], str]])
def test_descriptions_inside_containers_come_back(t):
    "`schema2anno` keeps a description no `properties` holds (in a union, tuple, list or dict) as `Annotated`: the schema comes back whole"
    s = handle_type(t)
    assert 'described' in json.dumps(s)
    assert handle_type(schema2anno(s)) == s


def _types(s):
    "Schema `s` without its descriptions and defaults: what annotations carry"
    if isinstance(s, list): return [_types(x) for x in s]
    if not isinstance(s, dict): return s
    return {k: _named(v) if k in ('properties', '$defs') else _types(v) for k, v in s.items() if k not in _WORDS}


_WORDS = ('description', 'default', 'format', 'contentEncoding')  # what a plain annotation doesn't say: `str` is any string


def _named(d: dict) -> dict:
    "Named schemas (`properties`, `$defs`) without descriptions and defaults"
    return {n: _types(x) for n, x in d.items()}


@pytest.mark.parametrize('t', [Point, Row, Opts, Node, Ping, Tree, Color, Literal['a', 1], Union[int, str, None], tuple[int, str], tuple[()],
                               set[dt.date], dict[int, list[UUID]], Optional[Decimal], bytes, Path])
def test_fixpoint_examples(t):
    defs = {}
    s = handle_type(t, defs)
    defs2 = {}
    assert _types(handle_type(schema2anno(s, defs), defs2)) == _types(s) and _named(defs2) == _named(defs)


def test_field_comments_and_defaults_come_back():
    def f(p: Point, n: int = 1):
        "Move"
    s = get_schema(f, evalable=True)
    assert s['input_schema']['$defs']['Point']['properties'] == {
        'x': {'description': 'across', 'type': 'integer'}, 'y': {'description': 'down', 'default': 0.5, 'type': 'number'},
        'tags': {'description': 'labels', 'default': [], 'type': 'array', 'items': {'type': 'string'}}}
    tool = mk_tool(_dispatch, s)
    assert get_schema(tool, evalable=True) == s
    assert_signature_says(tool, s)
    assert get_schema(tool, evalable=True)['input_schema']['$defs']['Point']['properties']['tags']['description'] == 'labels'


# ---------------------------------------------------------------------------------------------------------
# Documented differences
# ---------------------------------------------------------------------------------------------------------

def test_classes_come_back_as_typeddicts_and_enums_as_literals():
    defs = {}
    s = handle_type(tuple[Point, Color], defs)
    pt, color = typing.get_args(schema2anno(s, defs))
    assert typing.is_typeddict(pt) and pt.__name__ == 'Point' and pt.__required_keys__ == {'x'}
    assert color == Literal['red', 'green']


def test_formatted_strings_are_str():
    for t in (dt.datetime, dt.date, dt.time, UUID, Decimal, bytes, Path):
        assert schema2anno(handle_type(t)) is str


def test_union_with_any_becomes_any():
    s = handle_type(Union[int, Any])
    assert s == {'anyOf': [{'type': 'integer'}, {}]}
    assert schema2anno(s) is Any


# ---------------------------------------------------------------------------------------------------------
# Known bugs
# ---------------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Empty:
    "No fields"


def test_empty_class_fixpoint():
    defs = {}
    s = handle_type(Empty, defs)
    assert (s, defs) == ({'$ref': '#/$defs/Empty'}, {'Empty': {'type': 'object', 'properties': {}, 'title': 'Empty'}})
    defs2 = {}
    assert _types(handle_type(schema2anno(s, defs), defs2)) == _types(s) and _named(defs2) == _named(defs)


def _other_point():
    @dataclasses.dataclass
    class Point:
        z: str
    return Point


def test_same_named_classes_fixpoint():
    defs = {}
    s = handle_type(tuple[Point, _other_point()], defs)
    assert {d['title'] for d in defs.values()} == {'Point'} and len(defs) == 2
    defs2 = {}
    assert _types(handle_type(schema2anno(s, defs), defs2)) == _types(s)
    assert _named(defs2) == _named(defs)  # titles: 'Point' became 'test_roundtrip._other_point.Point'


def test_null_keeps_its_place_in_a_union():
    s = handle_type(Union[int, None, str])
    assert s == {'anyOf': [{'type': 'integer'}, {'type': 'null'}, {'type': 'string'}]}
    assert _types(handle_type(schema2anno(s))) == _types(s)


def test_optional_order_is_not_mixed_up_by_the_cache():
    class Fresh(TypedDict):  # a type no other test has put in the cache
        a: int
    assert handle_type(Union[None, Fresh], {})['anyOf'][0] == {'type': 'null'}
    assert handle_type(Union[Fresh, None], {})['anyOf'][1] == {'type': 'null'}


@pytest.mark.parametrize('t,plain', [(Annotated[list[int], at.MinLen(1)], list[int]), (Annotated[set[str], at.MaxLen(3)], set[str]),
                                     (Annotated[tuple[int, ...], at.Len(1, 3)], list[int])])
def test_length_constraints_of_arrays_come_back_through_the_tool(t, plain):
    "Lengths are no part of a type: the annotation is the plain type, and the built tool keeps them in its schema (and checks them)"
    def f(p: t): "Doc"
    s = get_schema(f)
    assert schema2anno(s['input_schema']['properties']['p']) == plain
    tool = mk_tool(lambda nm, /, **kw: kw, s)
    assert get_schema(tool) == s
    assert_signature_says(tool, s, unsaid=('minItems', 'maxItems'))
    with pytest.raises(ValueError, match="Tool 'f'"): tool(['a', 'b', 'c', 'd'] if plain == set[str] else [])


def test_property_tests_keep_no_example_database():
    "conftest's profile: what a property test draws decides its outcome, not failures an earlier run saved"
    from hypothesis import settings as current
    assert current().database is None
