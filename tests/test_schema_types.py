"""`handle_type` and `get_schema` for every kind of annotation users write.

Every schema made here is also checked against the Draft 2020-12 meta-schema, with every `$ref` resolving
inside the root `$defs` (`assert_valid_schema`), and where a schema describes data a sample instance is
validated against it.
"""
import datetime as dt
import enum
import json
import sys, typing
from collections import abc
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Dict, List, Literal, NamedTuple, NewType, Optional, Set, Tuple, TypedDict, TypeVar, Union
from uuid import UUID

import annotated_types as at
import pytest
import typing_extensions as te
from conftest import assert_valid_schema, with_defs
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

import _future_eg as fut
from funccall import JsonSchema, SchemaError, get_schema, handle_type

# ---------------------------------------------------------------------------------------------------------
# Example types
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

class Mixed(enum.Enum):
    one = 1
    two = 'two'

class Opaque(enum.Enum):  # values JSON can't hold: the member names are used
    a = object()
    b = object()

UserId = NewType('UserId', int)
T = TypeVar('T')
TInt = TypeVar('TInt', bound=int)


def _check(t, expected):
    defs = {}
    s = handle_type(t, defs)
    assert s == expected
    assert defs == {}
    assert_valid_schema(s)
    json.dumps(s)
    return s


# ---------------------------------------------------------------------------------------------------------
# Scalars, literals, enums, formats
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('t,expected', [
    (int, {'type': 'integer'}),
    (str, {'type': 'string'}),
    (float, {'type': 'number'}),
    (bool, {'type': 'boolean'}),
    (None, {'type': 'null'}),
    (type(None), {'type': 'null'}),
    (Any, {}),
    (object, {'type': 'object'}),
    (UserId, {'type': 'integer'}),
    (T, {}),
    (TInt, {'type': 'integer'}),
    (abc.Callable, {'type': 'object'}),
    (typing.Callable[[int], int], {'type': 'object'}),
    (type[int], {'type': 'object'}),
], ids=lambda x: repr(x) if not isinstance(x, dict) else '')
def test_scalars(t, expected):
    _check(t, expected)


@pytest.mark.parametrize('t,expected', [
    (Literal['a', 'b'], {'type': 'string', 'enum': ['a', 'b']}),
    (te.Literal['a', 'b'], {'type': 'string', 'enum': ['a', 'b']}),
    (Literal['a'], {'type': 'string', 'enum': ['a']}),
    (Literal[1, 2], {'type': 'integer', 'enum': [1, 2]}),
    (Literal[1.5, 2.5], {'type': 'number', 'enum': [1.5, 2.5]}),
    (Literal[True, False], {'type': 'boolean', 'enum': [True, False]}),
    (Literal[1, 'a'], {'enum': [1, 'a']}),
    (Literal[1, True], {'enum': [1, True]}),
    (Literal['a', None], {'enum': ['a', None]}),
], ids=['str', 'te-str', 'single', 'int', 'float', 'bool', 'int-str', 'int-bool', 'str-None'])
def test_literal(t, expected):
    _check(t, expected)


@pytest.mark.parametrize('t,expected', [
    (Color, {'type': 'integer', 'enum': [1, 2]}),
    (Shade, {'type': 'string', 'enum': ['light', 'dark']}),
    (Level, {'type': 'integer', 'enum': [1, 2]}),
    (Mixed, {'enum': [1, 'two']}),
    (Opaque, {'type': 'string', 'enum': ['a', 'b']}),
], ids=['plain', 'str-mixin', 'IntEnum', 'mixed-values', 'opaque-values'])
def test_enum(t, expected):
    _check(t, expected)


@pytest.mark.parametrize('t,expected', [
    (Literal[Color.red], {'type': 'integer', 'enum': [1]}),
    (Literal[Shade.light, Shade.dark], {'type': 'string', 'enum': ['light', 'dark']}),
], ids=['Color.red', 'Shade'])
def test_literal_of_enum_members(t, expected):
    _check(t, expected)


@pytest.mark.parametrize('t,expected', [
    (dt.datetime, {'type': 'string', 'format': 'date-time'}),
    (dt.date, {'type': 'string', 'format': 'date'}),
    (dt.time, {'type': 'string', 'format': 'time'}),
    (UUID, {'type': 'string', 'format': 'uuid'}),
    (Decimal, {'type': 'string', 'format': 'decimal'}),
    (bytes, {'type': 'string', 'contentEncoding': 'base64'}),
    (Path, {'type': 'string', 'format': 'Path'}),
], ids=['datetime', 'date', 'time', 'UUID', 'Decimal', 'bytes', 'Path'])
def test_formats(t, expected):
    _check(t, expected)


# ---------------------------------------------------------------------------------------------------------
# Annotated, unions, containers
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('t,expected', [
    (Annotated[int, 'desc'], {'type': 'integer', 'description': 'desc'}),
    (Annotated[int, {'not': 'a description'}], {'type': 'integer'}),
    (Annotated[int, Field(description='fd', ge=0)], {'type': 'integer', 'description': 'fd', 'minimum': 0}),
    (Annotated[int, at.Ge(0), at.Lt(10)], {'type': 'integer', 'minimum': 0, 'exclusiveMaximum': 10}),
    (Annotated[float, Field(gt=0, multiple_of=0.5)], {'type': 'number', 'exclusiveMinimum': 0, 'multipleOf': 0.5}),
    (Annotated[str, Field(min_length=1, max_length=5, pattern='^a')], {'type': 'string', 'minLength': 1, 'maxLength': 5, 'pattern': '^a'}),
    (Annotated[list[int], Field(min_length=1)], {'type': 'array', 'items': {'type': 'integer'}, 'minItems': 1}),
], ids=['str', 'dict-meta', 'Field', 'annotated_types', 'gt-multiple', 'str-constraints', 'list-min'])
def test_annotated(t, expected):
    _check(t, expected)


OPT_INT = {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}
LIST_INT = {'type': 'array', 'items': {'type': 'integer'}}
SET_INT = {'type': 'array', 'items': {'type': 'integer'}, 'uniqueItems': True}
PAIR = {'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}],
        'items': {'anyOf': [{'type': 'integer'}, {'type': 'string'}]}, 'minItems': 2, 'maxItems': 2}

@pytest.mark.parametrize('t,expected', [
    (Optional[int], OPT_INT),
    (int | None, OPT_INT),
    (Union[int, None], OPT_INT),
    (Optional[Optional[int]], OPT_INT),
    (Union[int, str, None], {'anyOf': [{'type': 'integer'}, {'type': 'string'}, {'type': 'null'}]}),
    (Union[int, Union[str, float]], {'anyOf': [{'type': 'integer'}, {'type': 'string'}, {'type': 'number'}]}),
    (Optional[Literal['a']], {'anyOf': [{'type': 'string', 'enum': ['a']}, {'type': 'null'}]}),
    (list[int] | None, {'anyOf': [LIST_INT, {'type': 'null'}]}),
], ids=['Optional', 'pipe', 'Union', 'Optional-Optional', 'three', 'nested-union', 'Optional-Literal', 'list-or-None'])
def test_unions(t, expected):
    _check(t, expected)


NULL = {'type': 'null'}
_SC = None
try: from pydantic import StringConstraints as _SC
except ImportError: pass

# Constraints given with a nullable type: on the non-null branch, as pydantic puts them; the description stays on the whole
@pytest.mark.parametrize('t,expected', [
    (Annotated[Optional[str], Field(max_length=5)], {'anyOf': [{'type': 'string', 'maxLength': 5}, NULL]}),
    (Annotated[str | None, at.MaxLen(5)], {'anyOf': [{'type': 'string', 'maxLength': 5}, NULL]}),
    (Annotated[Optional[int], at.Interval(ge=0, le=10)], {'anyOf': [{'type': 'integer', 'minimum': 0, 'maximum': 10}, NULL]}),
    (Annotated[Optional[str], _SC(max_length=5, pattern='^a')], {'anyOf': [{'type': 'string', 'maxLength': 5, 'pattern': '^a'}, NULL]}),
    (Optional[Annotated[str, Field(max_length=5)]], {'anyOf': [{'type': 'string', 'maxLength': 5}, NULL]}),
    (Annotated[Optional[list[int]], Field(min_length=1, max_length=3)],
     {'anyOf': [{'type': 'array', 'items': {'type': 'integer'}, 'minItems': 1, 'maxItems': 3}, NULL]}),
    (Annotated[Optional[set[str]], at.MaxLen(2)], {'anyOf': [{**SET_INT, 'items': {'type': 'string'}, 'maxItems': 2}, NULL]}),
    (Annotated[Union[None, float], Field(gt=0, description='d', title='T', examples=[1.5])],  # null first stays first
     {'anyOf': [NULL, {'type': 'number', 'exclusiveMinimum': 0}], 'description': 'd', 'title': 'T', 'examples': [1.5]}),
    (Annotated[Optional[int], at.Ge(0), 'the count'], {'anyOf': [{'type': 'integer', 'minimum': 0}, NULL], 'description': 'the count'}),
    (Annotated[Optional[dict[str, int]], Field(max_length=2)],
     {'anyOf': [{'type': 'object', 'additionalProperties': {'type': 'integer'}, 'maxProperties': 2}, NULL]}),
], ids=['Field', 'MaxLen', 'Interval', 'StringConstraints', 'Optional-of-Annotated', 'list-min-max', 'set', 'null-first+keywords',
        'annotated_types+text', 'dict'])
def test_constraints_of_a_nullable_type_go_on_its_non_null_branch(t, expected):
    s = _check(t, expected)
    from pydantic import TypeAdapter
    theirs = TypeAdapter(t).json_schema()  # pydantic's own schema of it: the same branches (it puts null last; the order written stays)
    mine = lambda bs: sorted(json.dumps({k: v for k, v in b.items() if k != 'title'}, sort_keys=True) for b in bs)
    assert mine(theirs['anyOf']) == mine(s['anyOf'])

@pytest.mark.parametrize('t,expected', [
    (Annotated[int | float, Field(ge=0)], {'anyOf': [{'type': 'integer'}, {'type': 'number'}], 'minimum': 0}),  # not one nullable type
    (Annotated[Optional[str], JsonSchema(maxLength=3)], {'anyOf': [{'type': 'string'}, NULL], 'maxLength': 3}),  # raw keywords: as written
], ids=['two-types', 'JsonSchema'])
def test_constraints_that_stay_where_they_are_written(t, expected):
    _check(t, expected)

def test_moving_constraints_leaves_the_callers_field_alone():
    fi = Field(max_length=5, description='q')
    before = list(fi.metadata)
    handle_type(Annotated[Optional[str], fi])
    assert fi.metadata == before and fi.description == 'q'


@pytest.mark.parametrize('t,expected', [
    (list[int], LIST_INT),
    (List[int], LIST_INT),
    (typing.Sequence[int], LIST_INT),
    (abc.Sequence[int], LIST_INT),
    (typing.Iterable[int], LIST_INT),
    (tuple[int, ...], LIST_INT),
    (Annotated[list[int], 'doc'], {**LIST_INT, 'description': 'doc'}),
    (list, {'type': 'array', 'items': {}}),
    (List, {'type': 'array', 'items': {}}),
    (tuple, {'type': 'array', 'items': {}}),
    (list[Optional[str]], {'type': 'array', 'items': {'anyOf': [{'type': 'string'}, {'type': 'null'}]}}),
    (list[list[int]], {'type': 'array', 'items': LIST_INT}),
    (set[int], SET_INT),
    (Set[int], SET_INT),
    (frozenset[int], SET_INT),
    (tuple[int, str], PAIR),
    (Tuple[int, str], PAIR),
    (tuple[int, int], {'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'integer'}],
                       'items': {'type': 'integer'}, 'minItems': 2, 'maxItems': 2}),
], ids=['list[int]', 'List[int]', 'typing.Sequence', 'abc.Sequence', 'Iterable', 'tuple-ellipsis', 'Annotated-list', 'list', 'List',
        'tuple', 'list-Optional', 'list-list', 'set', 'Set', 'frozenset', 'tuple-pair', 'Tuple-pair', 'tuple-int-int'])
def test_arrays(t, expected):
    _check(t, expected)


@pytest.mark.parametrize('t', [tuple[()], Tuple[()]], ids=['tuple[()]', 'Tuple[()]'])
def test_empty_tuple(t):
    s = handle_type(t, {})
    assert_valid_schema(s)
    v = Draft202012Validator(s)
    assert v.is_valid([])
    assert not v.is_valid([1])


@pytest.mark.parametrize('t,expected', [
    (dict, {'type': 'object'}),
    (Dict, {'type': 'object'}),
    (dict[str, int], {'type': 'object', 'additionalProperties': {'type': 'integer'}}),
    (Dict[str, Any], {'type': 'object', 'additionalProperties': {}}),
    (typing.Mapping[str, int], {'type': 'object', 'additionalProperties': {'type': 'integer'}}),
    (dict[int, str], {'type': 'object', 'additionalProperties': {'type': 'string'}, 'propertyNames': {'pattern': '^-?[0-9]+$'}}),
    (dict[Literal['a', 'b'], int], {'type': 'object', 'additionalProperties': {'type': 'integer'}, 'propertyNames': {'enum': ['a', 'b']}}),
    (dict[Literal[1, 2], str], {'type': 'object', 'additionalProperties': {'type': 'string'}, 'propertyNames': {'enum': ['1', '2']}}),
    (dict[Shade, int], {'type': 'object', 'additionalProperties': {'type': 'integer'}, 'propertyNames': {'enum': ['light', 'dark']}}),
    (dict[str, list[int]], {'type': 'object', 'additionalProperties': LIST_INT}),
], ids=['dict', 'Dict', 'dict[str,int]', 'Dict[str,Any]', 'Mapping', 'int-keys', 'Literal-keys', 'int-Literal-keys', 'Enum-keys', 'nested'])
def test_objects(t, expected):
    _check(t, expected)


# Where the schema describes data: instances it must accept, and ones it must refuse
@pytest.mark.parametrize('t,good,bad', [
    (Literal['a', 'b'], 'a', 'c'),
    (Literal[1, 'a'], 1, 'b'),
    (Color, 1, 3),
    (Shade, 'dark', 'grey'),
    (Optional[int], None, 'x'),
    (list[int], [1, 2], [1, 'x']),
    (set[int], [1, 2], [1, 1]),
    (tuple[int, str], [1, 'a'], [1, 'a', 2]),
    (tuple[int, ...], [1, 2, 3], ['a']),
    (dict[int, str], {'1': 'a', '-2': 'b'}, {'x': 'a'}),
    (dict[Literal['a', 'b'], int], {'a': 1}, {'c': 1}),
    (Annotated[int, Field(ge=0)], 0, -1),
    (Annotated[str, Field(max_length=2)], 'ab', 'abc'),
    (dt.datetime, '2024-01-02T03:04:05', 5),
    (bytes, 'aGk=', 5),
], ids=lambda x: repr(x)[:30])
def test_sample_instances(t, good, bad):
    s = handle_type(t, {})
    v = Draft202012Validator(s)
    v.validate(good)
    assert not v.is_valid(bad)


def test_unknown_type_is_schema_error():
    with pytest.raises(SchemaError):
        handle_type(bytearray, {})


# ---------------------------------------------------------------------------------------------------------
# Classes: dataclass, TypedDict, NamedTuple, pydantic, plain classes
# ---------------------------------------------------------------------------------------------------------

@dataclass
class Point:
    "A point"
    x: int  # the x coordinate
    # the y
    # coordinate
    y: float = 0.0
    tags: list[str] = field(default_factory=list)  # labels
    meta: dict[str, int] = field(default_factory=dict)
    when: dt.datetime = field(default_factory=dt.datetime.now)  # made at
    seeds: list[int] = field(default_factory=lambda: [1, 2])
    hidden: int = field(default=0, init=False)


class Movie(TypedDict):
    title: str  # the title
    year: int


class PartialMovie(TypedDict, total=False):
    title: str
    year: int


# `typing.Required` is new in 3.11; on 3.10 the same class is spelled with typing_extensions
if sys.version_info >= (3, 11): _TD, _Required = TypedDict, typing.Required
else: _TD, _Required = te.TypedDict, te.Required


class MovieReq(_TD, total=False):
    title: _Required[str]  # must be there
    year: int


class MovieTE(te.TypedDict):
    title: str
    year: te.NotRequired[int]  # may be left out


class MovieTEReq(te.TypedDict, total=False):
    title: te.Required[str]
    year: int


class Pair(NamedTuple):
    left: int  # the left one
    right: str = 'r'


class User(BaseModel):
    "A user"
    id: int = Field(description='the id')
    name: str = 'anon'  # display name
    email: str = Field(alias='mail')
    nick: Optional[str] = Field(None, alias='nickname')
    roles: list[str] = Field(default_factory=list)
    joined: dt.datetime = Field(default_factory=dt.datetime.now)
    age: Annotated[int, Field(ge=0, description='years')] = 0


class Plain:
    "A plain class"
    def __init__(
        self,
        a: int,  # the a
        b: str = 'q',  # the b
        *args,
        c: Optional[float] = None,
        **kwargs,
    ): pass


POINT_DEF = {'type': 'object',
             'properties': {'x': {'description': 'the x coordinate', 'type': 'integer'},
                            'y': {'description': 'the y\ncoordinate', 'default': 0.0, 'type': 'number'},
                            'tags': {'description': 'labels', 'default': [], 'type': 'array', 'items': {'type': 'string'}},
                            'meta': {'description': '', 'default': {}, 'type': 'object', 'additionalProperties': {'type': 'integer'}},
                            'when': {'description': 'made at', 'type': 'string', 'format': 'date-time'},
                            'seeds': {'description': '', 'type': 'array', 'items': {'type': 'integer'}}},
             'title': 'Point',
             'required': ['x']}

USER_DEF = {'type': 'object',
            'properties': {'id': {'description': 'the id', 'type': 'integer'},
                           'name': {'description': 'display name', 'default': 'anon', 'type': 'string'},
                           'mail': {'description': '', 'type': 'string'},
                           'nickname': {'description': '', 'default': None, 'anyOf': [{'type': 'string'}, {'type': 'null'}]},
                           'roles': {'description': '', 'default': [], 'type': 'array', 'items': {'type': 'string'}},
                           'joined': {'description': '', 'type': 'string', 'format': 'date-time'},
                           'age': {'description': 'years', 'default': 0, 'type': 'integer', 'minimum': 0}},
            'title': 'User',
            'required': ['id', 'mail']}

TITLE_YEAR = {'title': {'description': '', 'type': 'string'}, 'year': {'description': '', 'type': 'integer'}}

@pytest.mark.parametrize('cls,expected_def', [
    (Point, POINT_DEF),
    (Movie, {'type': 'object', 'properties': {'title': {'description': 'the title', 'type': 'string'},
                                              'year': {'description': '', 'type': 'integer'}},
             'title': 'Movie', 'required': ['title', 'year']}),
    (PartialMovie, {'type': 'object', 'properties': TITLE_YEAR, 'title': 'PartialMovie'}),
    (MovieReq, {'type': 'object', 'properties': {'title': {'description': 'must be there', 'type': 'string'},
                                                 'year': {'description': '', 'type': 'integer'}},
                'title': 'MovieReq', 'required': ['title']}),
    (MovieTE, {'type': 'object', 'properties': {'title': {'description': '', 'type': 'string'},
                                                'year': {'description': 'may be left out', 'type': 'integer'}},
               'title': 'MovieTE', 'required': ['title']}),
    (MovieTEReq, {'type': 'object', 'properties': TITLE_YEAR, 'title': 'MovieTEReq', 'required': ['title']}),
    (Pair, {'type': 'object', 'properties': {'left': {'description': 'the left one', 'type': 'integer'},
                                             'right': {'description': '', 'default': 'r', 'type': 'string'}},
            'title': 'Pair', 'required': ['left']}),
    (User, USER_DEF),
    (Plain, {'type': 'object', 'properties': {'a': {'description': 'the a', 'type': 'integer'},
                                              'b': {'description': 'the b', 'default': 'q', 'type': 'string'},
                                              'c': {'description': '', 'default': None, 'anyOf': [{'type': 'number'}, {'type': 'null'}]}},
             'title': 'Plain', 'required': ['a']}),
], ids=['dataclass', 'TypedDict', 'TypedDict-total-False', 'TypedDict-Required', 'te.TypedDict-NotRequired', 'te.TypedDict-Required',
        'NamedTuple', 'pydantic', 'plain-class'])
def test_class_kinds(cls, expected_def):
    defs = {}
    assert handle_type(cls, defs) == {'$ref': f'#/$defs/{cls.__name__}'}
    assert defs == {cls.__name__: expected_def}
    assert_valid_schema(with_defs({'$ref': f'#/$defs/{cls.__name__}'}, defs))


@pytest.mark.parametrize('cls,good,bad', [
    (Point, {'x': 1, 'y': 2.5, 'tags': ['a']}, {'y': 2.5}),
    (Movie, {'title': 't', 'year': 2000}, {'title': 't'}),
    (PartialMovie, {}, {'year': 'x'}),
    (MovieReq, {'title': 't'}, {'year': 1}),
    (MovieTE, {'title': 't'}, {'year': 1}),
    (Pair, {'left': 1}, {'right': 'x'}),
    (User, {'id': 1, 'mail': 'a@b', 'age': 3}, {'id': 1, 'mail': 'a@b', 'age': -1}),
    (Plain, {'a': 1, 'c': None}, {'a': 'x'}),
], ids=['dataclass', 'TypedDict', 'TypedDict-total-False', 'TypedDict-Required', 'te.TypedDict', 'NamedTuple', 'pydantic', 'plain-class'])
def test_class_sample_instances(cls, good, bad):
    defs = {}
    v = Draft202012Validator(with_defs(handle_type(cls, defs), defs))
    v.validate(good)
    assert not v.is_valid(bad)


def test_no_sentinel_in_defaults():
    "dataclasses.MISSING, PydanticUndefined, inspect.Parameter.empty never appear as a default"
    defs = {}
    for cls in (Point, User, Plain, Pair, Movie): handle_type(cls, defs)
    for d in defs.values():
        for nm, p in d['properties'].items():
            if 'default' in p: json.dumps(p['default'])  # a sentinel is not JSON
            assert nm not in d.get('required', []) or 'default' not in p


def test_get_schema_with_class_params():
    def book(
        where: Point,  # where to put it
        who: User,
        movie: Movie | None = None,  # what to watch
        pair: Pair = Pair(1),
    ):
        "Book a thing"
    s = get_schema(book)
    assert s == {
        'name': 'book',
        'description': 'Book a thing',
        'input_schema': {
            'type': 'object',
            'properties': {
                'where': {'description': 'where to put it', '$ref': '#/$defs/Point'},
                'who': {'description': '', '$ref': '#/$defs/User'},
                'movie': {'description': 'what to watch', 'default': None, 'anyOf': [{'$ref': '#/$defs/Movie'}, {'type': 'null'}]},
                'pair': {'description': '', 'default': Pair(1, 'r'), '$ref': '#/$defs/Pair'},
            },
            'required': ['where', 'who'],
            '$defs': {
                'Point': POINT_DEF,
                'User': USER_DEF,
                'Movie': {'type': 'object', 'properties': {'title': {'description': 'the title', 'type': 'string'},
                                                          'year': {'description': '', 'type': 'integer'}},
                          'title': 'Movie', 'required': ['title', 'year']},
                'Pair': {'type': 'object', 'properties': {'left': {'description': 'the left one', 'type': 'integer'},
                                                         'right': {'description': '', 'default': 'r', 'type': 'string'}},
                         'title': 'Pair', 'required': ['left']},
            },
        },
    }
    assert_valid_schema(s['input_schema'])
    Draft202012Validator(s['input_schema']).validate({'where': {'x': 1}, 'who': {'id': 1, 'mail': 'm'}, 'movie': None})


@pytest.mark.parametrize('anno,expected', [
    (Annotated[int, 'from Annotated'], {'description': 'from Annotated', 'type': 'integer'}),
    (Annotated[int, Field(description='from Field', ge=0)], {'description': 'from Field', 'type': 'integer', 'minimum': 0}),
    (Annotated[list[int], 'doc'], {'description': 'doc', 'type': 'array', 'items': {'type': 'integer'}}),
    (list[int], {'description': '', 'type': 'array', 'items': {'type': 'integer'}}),
    (List[int], {'description': '', 'type': 'array', 'items': {'type': 'integer'}}),
    (Optional[int], {'description': '', 'anyOf': [{'type': 'integer'}, {'type': 'null'}]}),
    (int | None, {'description': '', 'anyOf': [{'type': 'integer'}, {'type': 'null'}]}),
], ids=['Annotated-str', 'Annotated-Field', 'Annotated-list', 'list', 'List', 'Optional', 'pipe-None'])
def test_param_annotations(anno, expected):
    def f(x): "doc"
    f.__annotations__ = {'x': anno}
    s = get_schema(f)
    assert s == {'name': 'f', 'description': 'doc',
                 'input_schema': {'type': 'object', 'properties': {'x': expected}, 'required': ['x']}}
    assert_valid_schema(s['input_schema'])


def test_param_annotated_comment_wins():
    def f(
        x: Annotated[int, 'from Annotated'],  # from comment
        y: Annotated[int, Field(description='from Field', ge=0)],  # y comment
    ): "doc"
    s = get_schema(f)
    assert s['input_schema']['properties'] == {'x': {'description': 'from comment', 'type': 'integer'},
                                               'y': {'description': 'y comment', 'type': 'integer', 'minimum': 0}}
    assert_valid_schema(s['input_schema'])


# ---------------------------------------------------------------------------------------------------------
# Recursion, name clashes, one root $defs
# ---------------------------------------------------------------------------------------------------------

class Node:
    "A tree node"
    def __init__(self, val: int, children: list['Node'] = None): pass


@dataclass
class Author:
    name: str
    books: list['Book'] = field(default_factory=list)


@dataclass
class Book:
    title: str
    author: Optional[Author] = None


NODE_DEF = {'type': 'object',
            'properties': {'val': {'description': '', 'type': 'integer'},
                           'children': {'description': '', 'default': None, 'type': 'array', 'items': {'$ref': '#/$defs/Node'}}},
            'title': 'Node', 'required': ['val']}
AUTHOR_DEF = {'type': 'object',
              'properties': {'name': {'description': '', 'type': 'string'},
                             'books': {'description': '', 'default': [], 'type': 'array', 'items': {'$ref': '#/$defs/Book'}}},
              'title': 'Author', 'required': ['name']}
BOOK_DEF = {'type': 'object',
            'properties': {'title': {'description': '', 'type': 'string'},
                           'author': {'description': '', 'default': None, 'anyOf': [{'$ref': '#/$defs/Author'}, {'type': 'null'}]}},
            'title': 'Book', 'required': ['title']}


def test_recursive_class():
    defs = {}
    assert handle_type(Node, defs) == {'$ref': '#/$defs/Node'}
    assert defs == {'Node': NODE_DEF}
    root = assert_valid_schema(with_defs({'$ref': '#/$defs/Node'}, defs))
    v = Draft202012Validator(root)
    v.validate({'val': 1, 'children': [{'val': 2, 'children': [{'val': 3}]}]})
    assert not v.is_valid({'val': 1, 'children': [{'val': 'x'}]})


def test_mutually_recursive_classes():
    defs = {}
    assert handle_type(list[Author], defs) == {'type': 'array', 'items': {'$ref': '#/$defs/Author'}}
    assert defs == {'Author': AUTHOR_DEF, 'Book': BOOK_DEF}
    root = assert_valid_schema(with_defs({'$ref': '#/$defs/Author'}, defs))
    Draft202012Validator(root).validate({'name': 'a', 'books': [{'title': 't', 'author': {'name': 'b'}}]})


def test_recursive_in_get_schema():
    def f(a: Author, b: Book, n: Node, ns: list[Node]): "doc"
    s = get_schema(f)
    assert s['input_schema'] == {
        'type': 'object',
        'properties': {'a': {'description': '', '$ref': '#/$defs/Author'},
                       'b': {'description': '', '$ref': '#/$defs/Book'},
                       'n': {'description': '', '$ref': '#/$defs/Node'},
                       'ns': {'description': '', 'type': 'array', 'items': {'$ref': '#/$defs/Node'}}},
        'required': ['a', 'b', 'n', 'ns'],
        '$defs': {'Author': AUTHOR_DEF, 'Book': BOOK_DEF, 'Node': NODE_DEF},
    }
    assert_valid_schema(s['input_schema'])


def _item_a():
    class Item:
        def __init__(self, a: int): pass
    return Item


def _item_b():
    class Item:
        def __init__(self, b: str): pass
    return Item


ItemA, ItemB = _item_a(), _item_b()
ITEM_A_DEF = {'type': 'object', 'properties': {'a': {'description': '', 'type': 'integer'}}, 'title': 'Item', 'required': ['a']}
ITEM_B_DEF = {'type': 'object', 'properties': {'b': {'description': '', 'type': 'string'}}, 'title': 'Item', 'required': ['b']}
ITEM_B_KEY = f'{__name__}._item_b.Item'


def test_same_name_classes_in_one_tool():
    def f(x: ItemA, y: ItemB, z: list[ItemA]): "doc"
    s = get_schema(f)
    assert s['input_schema'] == {
        'type': 'object',
        'properties': {'x': {'description': '', '$ref': '#/$defs/Item'},
                       'y': {'description': '', '$ref': f'#/$defs/{ITEM_B_KEY}'},
                       'z': {'description': '', 'type': 'array', 'items': {'$ref': '#/$defs/Item'}}},
        'required': ['x', 'y', 'z'],
        '$defs': {'Item': ITEM_A_DEF, ITEM_B_KEY: ITEM_B_DEF},
    }
    assert_valid_schema(s['input_schema'])


def test_same_name_classes_across_modules():
    defs = {}
    assert handle_type(Union[fut.Later, Later], defs) == {'anyOf': [{'$ref': '#/$defs/Later'}, {'$ref': f'#/$defs/{__name__}.Later'}]}
    assert defs['Later']['properties']['v'] == {'description': 'vee', 'type': 'integer'}
    assert defs[f'{__name__}.Later'] == {'type': 'object', 'properties': {'w': {'description': '', 'type': 'string'}},
                                         'title': 'Later', 'required': ['w']}
    assert_valid_schema(with_defs({}, defs))


@dataclass
class Later:  # same __name__ as _future_eg.Later
    w: str


def test_same_name_classes_shared_defs_across_calls():
    defs = {}
    assert handle_type(ItemA, defs) == {'$ref': '#/$defs/Item'}
    assert handle_type(ItemB, defs) == {'$ref': f'#/$defs/{ITEM_B_KEY}'}
    assert defs == {'Item': ITEM_A_DEF, ITEM_B_KEY: ITEM_B_DEF}


def test_three_classes_from_one_factory_all_present():
    A1, A2, A3 = _item_a(), _item_a(), _item_a()
    def f(x: A1, y: A2, z: A3): "doc"
    s = get_schema(f)
    refs = [p['$ref'] for p in s['input_schema']['properties'].values()]
    assert len(set(refs)) == 3
    assert len(s['input_schema']['$defs']) == 3


@dataclass
class Leaf:
    v: int

@dataclass
class Branch:
    leaf: Leaf
    leaves: list[Leaf]

@dataclass
class Trunk:
    branch: Branch
    extra: dict[str, Leaf]


def test_one_root_defs():
    def f(t: Trunk, b: Branch): "doc"
    s = get_schema(f)
    assert s['input_schema'] == {
        'type': 'object',
        'properties': {'t': {'description': '', '$ref': '#/$defs/Trunk'}, 'b': {'description': '', '$ref': '#/$defs/Branch'}},
        'required': ['t', 'b'],
        '$defs': {
            'Trunk': {'type': 'object', 'properties': {'branch': {'description': '', '$ref': '#/$defs/Branch'},
                                                       'extra': {'description': '', 'type': 'object', 'additionalProperties': {'$ref': '#/$defs/Leaf'}}},
                      'title': 'Trunk', 'required': ['branch', 'extra']},
            'Branch': {'type': 'object', 'properties': {'leaf': {'description': '', '$ref': '#/$defs/Leaf'},
                                                        'leaves': {'description': '', 'type': 'array', 'items': {'$ref': '#/$defs/Leaf'}}},
                       'title': 'Branch', 'required': ['leaf', 'leaves']},
            'Leaf': {'type': 'object', 'properties': {'v': {'description': '', 'type': 'integer'}}, 'title': 'Leaf', 'required': ['v']},
        },
    }
    assert_valid_schema(s['input_schema'])  # also checks no nested $defs
    Draft202012Validator(s['input_schema']).validate(
        {'t': {'branch': {'leaf': {'v': 1}, 'leaves': []}, 'extra': {'k': {'v': 2}}}, 'b': {'leaf': {'v': 1}, 'leaves': [{'v': 3}]}})


def test_class_as_tool_with_nested_classes():
    s = get_schema(Trunk, description='A trunk')
    assert s['input_schema']['title'] == 'Trunk'
    assert sorted(s['input_schema']['$defs']) == ['Branch', 'Leaf']
    assert_valid_schema(s['input_schema'])


# ---------------------------------------------------------------------------------------------------------
# Forward references and `from __future__ import annotations` (tests/_future_eg.py)
# ---------------------------------------------------------------------------------------------------------

FUT_LATER_DEF = {'type': 'object',
                 'properties': {'v': {'description': 'vee', 'type': 'integer'},
                                'when': {'description': '', 'default': None, 'anyOf': [{'type': 'string', 'format': 'date'}, {'type': 'null'}]}},
                 'title': 'Later', 'required': ['v']}


def test_future_class_defined_later():
    s = get_schema(fut.uses_later)
    assert s == {
        'name': 'uses_later',
        'description': 'Uses a class defined further down the module\n\nReturns:\n- type: Later',
        'input_schema': {
            'type': 'object',
            'properties': {'item': {'description': 'the item', '$ref': '#/$defs/Later'},
                           'items': {'description': 'more items', 'default': None,
                                     'anyOf': [{'type': 'array', 'items': {'$ref': '#/$defs/Later'}}, {'type': 'null'}]}},
            'required': ['item'],
            '$defs': {'Later': FUT_LATER_DEF},
        },
    }
    assert_valid_schema(s['input_schema'])
    Draft202012Validator(s['input_schema']).validate({'item': {'v': 1, 'when': '2024-01-01'}, 'items': None})


def test_future_recursive_dataclass():
    defs = {}
    assert handle_type(fut.TreeNode, defs) == {'$ref': '#/$defs/TreeNode'}
    assert defs == {'TreeNode': {'type': 'object',
                                 'properties': {'val': {'description': 'node value', 'type': 'integer'},
                                                'children': {'description': 'child nodes', 'default': [], 'type': 'array',
                                                             'items': {'$ref': '#/$defs/TreeNode'}}},
                                 'title': 'TreeNode', 'required': ['val']}}
    root = assert_valid_schema(with_defs({'$ref': '#/$defs/TreeNode'}, defs))
    Draft202012Validator(root).validate({'val': 1, 'children': [{'val': 2}]})


def test_future_mutual_recursion():
    s = get_schema(fut.ping_pong)
    assert s['input_schema'] == {
        'type': 'object',
        'properties': {'p': {'description': '', '$ref': '#/$defs/Ping'}, 'q': {'description': '', '$ref': '#/$defs/Pong'}},
        'required': ['p', 'q'],
        '$defs': {'Ping': {'type': 'object', 'properties': {'pong': {'description': '', 'default': None,
                                                                     'anyOf': [{'$ref': '#/$defs/Pong'}, {'type': 'null'}]}},
                           'title': 'Ping'},
                  'Pong': {'type': 'object', 'properties': {'ping': {'description': '', 'default': None,
                                                                     'anyOf': [{'$ref': '#/$defs/Ping'}, {'type': 'null'}]}},
                           'title': 'Pong'}},
    }
    assert_valid_schema(s['input_schema'])


def test_future_all_shapes():
    s = get_schema(fut.mixed)
    later = {'description': '', 'default': None, 'anyOf': [{'$ref': '#/$defs/Later'}, {'type': 'null'}]}
    assert s['input_schema'] == {
        'type': 'object',
        'properties': {
            'x': {'description': '', 'type': 'string', 'enum': ['a', 'b']},
            'y': {'description': '', 'type': 'object', 'additionalProperties': {'$ref': '#/$defs/Later'}},
            'z': {'description': '', 'default': (1, 'a'), **PAIR},
            'm': {'description': '', 'default': None, 'anyOf': [{'$ref': '#/$defs/FutModel'}, {'type': 'null'}]},
            'n': {'description': '', 'default': None, 'anyOf': [{'$ref': '#/$defs/FutNT'}, {'type': 'null'}]},
        },
        'required': ['x', 'y'],
        '$defs': {
            'Later': FUT_LATER_DEF,
            'FutModel': {'type': 'object', 'properties': {'a': {'description': 'model a', 'type': 'integer'}, 'later': later},
                         'title': 'FutModel', 'required': ['a']},
            'FutNT': {'type': 'object', 'properties': {'a': {'description': 'the a', 'type': 'integer'}, 'later': later},
                      'title': 'FutNT', 'required': ['a']},
        },
    }
    assert_valid_schema(s['input_schema'])


@pytest.mark.parametrize('cls,required', [(fut.FutTD, ['b']), (fut.FutTDe, ['a'])], ids=['total-False-Required', 'NotRequired'])
def test_future_typeddict_required(cls, required):
    defs = {}
    handle_type(cls, defs)
    assert defs[cls.__name__] == {'type': 'object',
                                  'properties': {'a': {'description': '', 'type': 'integer'}, 'b': {'description': '', 'type': 'string'}},
                                  'title': cls.__name__, 'required': required}


def test_future_unresolvable_is_schema_error():
    with pytest.raises(SchemaError, match='NotDefinedAnywhere'):
        get_schema(fut.unresolvable)


def test_string_annotation_without_future():
    def f(a: 'int', b: 'Optional[Point]' = None): "doc"
    s = get_schema(f)
    assert s['input_schema'] == {
        'type': 'object',
        'properties': {'a': {'description': '', 'type': 'integer'},
                       'b': {'description': '', 'default': None, 'anyOf': [{'$ref': '#/$defs/Point'}, {'type': 'null'}]}},
        'required': ['a'],
        '$defs': {'Point': POINT_DEF},
    }
    assert_valid_schema(s['input_schema'])


def test_assert_valid_schema_catches_bad_schemas():
    "The helper itself: a dangling $ref, a $ref outside $defs, nested $defs and a meta-schema error all fail"
    import jsonschema
    with pytest.raises(AssertionError): assert_valid_schema({'$ref': '#/$defs/Nope'})
    with pytest.raises(AssertionError): assert_valid_schema({'$ref': '#/properties/x', 'properties': {'x': {}}})
    with pytest.raises(AssertionError): assert_valid_schema({'$defs': {'A': {'$defs': {}, 'type': 'object'}}})
    with pytest.raises(jsonschema.SchemaError): assert_valid_schema({'type': 'integr'})
