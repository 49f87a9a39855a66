"""Provider renderers on one golden tool, strict mode, names, reports, and seed 004's `function_to_tool`.

Every renderer is a pure post-pass: each test that renders also checks its input is unchanged afterwards.
The SDK-level proof over a broad set of functions is in `test_providers_sdk.py`.
"""
import copy
import enum
import hashlib
import json
import warnings
from collections import abc
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Dict, List, Literal, NamedTuple, Optional, Union
from uuid import UUID

import pytest
from jsonschema import Draft202012Validator, ValidationError
from openai.types.chat import ChatCompletionFunctionToolParam
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import NotRequired, TypedDict

from funccall import mk_tool
from funccall import (ProviderWarning, Report, SchemaError, SchemaWarning, call_func, function_to_tool, get_schema, strict_schema, to_anthropic, to_gemini,
                      to_mcp, to_openai, to_openai_responses, tool_name)

# ---------------------------------------------------------------------------------------------------------
# One golden tool through every renderer
# ---------------------------------------------------------------------------------------------------------

@dataclass
class Room:
    "A meeting room"
    name: str  # as on the door
    seats: int = 4  # at least this many

def book(
    room: Room,             # where
    when: datetime,         # start time
    hours: float = 1.0,     # how long
    tags: set[str] = None,  # labels for the calendar
) -> bool:
    "Book a room."
    return True

DESC = 'Book a room.\n\nReturns:\n- type: boolean'
ROOM = {'type': 'object', 'properties': {'name': {'description': 'as on the door', 'type': 'string'},
                                         'seats': {'description': 'at least this many', 'default': 4, 'type': 'integer'}},
        'title': 'Room', 'required': ['name']}
PARAMS = {'type': 'object',
          'properties': {'room': {'description': 'where', '$ref': '#/$defs/Room'},
                         'when': {'description': 'start time', 'type': 'string', 'format': 'date-time'},
                         'hours': {'description': 'how long', 'default': 1.0, 'type': 'number'},
                         'tags': {'description': 'labels for the calendar', 'default': None, 'type': 'array',
                                  'items': {'type': 'string'}, 'uniqueItems': True}},
          'required': ['room', 'when'], '$defs': {'Room': ROOM}}

# provider renders of a function describe its classes by their docstrings ($defs descriptions); get_schema does not
ROOM_R = {**ROOM, 'description': 'A meeting room'}
PARAMS_R = {**PARAMS, '$defs': {'Room': ROOM_R}}

# OpenAI strict: every property required, optional ones nullable, `default` and `uniqueItems` moved to descriptions
STRICT = {'type': 'object',
          'properties': {'room': {'description': 'where', 'anyOf': [{'$ref': '#/$defs/Room'}]},
                         'when': {'description': 'start time', 'type': 'string', 'format': 'date-time'},
                         'hours': {'description': 'how long (default: 1.0)', 'anyOf': [{'type': 'number'}, {'type': 'null'}]},
                         'tags': {'description': 'labels for the calendar (items are unique)',
                                  'anyOf': [{'type': 'array', 'items': {'type': 'string'}}, {'type': 'null'}]}},
          'required': ['room', 'when', 'hours', 'tags'], 'additionalProperties': False,
          '$defs': {'Room': {'type': 'object', 'description': 'A meeting room',
                             'properties': {'name': {'description': 'as on the door', 'type': 'string'},
                                            'seats': {'description': 'at least this many (default: 4)',
                                                      'anyOf': [{'type': 'integer'}, {'type': 'null'}]}},
                             'title': 'Room', 'required': ['name', 'seats'], 'additionalProperties': False}}}

# Claude strict: every object closed, optional properties stay optional (absent means the default)
ANTHROPIC_STRICT = {'type': 'object',
                    'properties': {'room': {'description': 'where', 'anyOf': [{'$ref': '#/$defs/Room'}]},
                                   'when': {'description': 'start time', 'type': 'string', 'format': 'date-time'},
                                   'hours': {'description': 'how long (default: 1.0)', 'type': 'number'},
                                   'tags': {'description': 'labels for the calendar (items are unique)', 'type': 'array', 'items': {'type': 'string'}}},
                    'required': ['room', 'when'], 'additionalProperties': False,
                    '$defs': {'Room': {'type': 'object', 'description': 'A meeting room',
                                       'properties': {'name': {'description': 'as on the door', 'type': 'string'},
                                                      'seats': {'description': 'at least this many (default: 4)', 'type': 'integer'}},
                                       'title': 'Room', 'required': ['name'], 'additionalProperties': False}}}

# Gemini's JSON Schema field: the schema as it is, but a `$ref` takes no siblings
GEMINI = {**PARAMS_R, 'properties': {**PARAMS['properties'], 'room': {'description': 'where', 'anyOf': [{'$ref': '#/$defs/Room'}]}}}

GEMINI_LEGACY = {'type': 'OBJECT',
                 'properties': {'room': {'title': 'Room', 'description': 'where', 'type': 'OBJECT',
                                         'properties': {'name': {'description': 'as on the door', 'type': 'STRING'},
                                                        'seats': {'description': 'at least this many', 'default': 4, 'type': 'INTEGER'}},
                                         'required': ['name']},
                                'when': {'description': 'start time', 'type': 'STRING', 'format': 'date-time'},
                                'hours': {'description': 'how long', 'default': 1.0, 'type': 'NUMBER'},
                                'tags': {'description': 'labels for the calendar (items are unique)', 'default': None, 'type': 'ARRAY',
                                         'items': {'type': 'STRING'}}},
                 'required': ['room', 'when']}

GOLDEN = [
    (lambda s: to_openai(s), {'type': 'function', 'function': {'name': 'book', 'description': DESC, 'parameters': PARAMS_R}}),
    (lambda s: to_openai(s, strict=True), {'type': 'function', 'function': {'name': 'book', 'description': DESC, 'parameters': STRICT, 'strict': True}}),
    (lambda s: to_openai_responses(s), {'type': 'function', 'name': 'book', 'description': DESC, 'parameters': PARAMS_R, 'strict': False}),
    (lambda s: to_openai_responses(s, strict=True), {'type': 'function', 'name': 'book', 'description': DESC, 'parameters': STRICT, 'strict': True}),
    (lambda s: to_anthropic(s), {'name': 'book', 'description': DESC, 'input_schema': PARAMS_R}),
    (lambda s: to_anthropic(s, strict=True), {'name': 'book', 'description': DESC, 'input_schema': ANTHROPIC_STRICT, 'strict': True}),
    (lambda s: to_mcp(s), {'name': 'book', 'description': DESC, 'inputSchema': PARAMS_R}),
    (lambda s: to_gemini(s), {'name': 'book', 'description': DESC, 'parameters_json_schema': GEMINI}),
    (lambda s: to_gemini(s, legacy=True), {'name': 'book', 'description': DESC, 'parameters': GEMINI_LEGACY}),
]
GOLDEN_IDS = ['openai', 'openai-strict', 'responses', 'responses-strict', 'anthropic', 'anthropic-strict', 'mcp', 'gemini', 'gemini-legacy']

def without_class_docs(o):
    "`o` as a render of the canonical dict shows it: no class docstrings, which only the function carries"
    if isinstance(o, dict): return {k: without_class_docs(v) for k, v in o.items() if not (k == 'description' and v == 'A meeting room')}
    return [without_class_docs(v) for v in o] if isinstance(o, list) else o

def test_canonical_input():
    assert get_schema(book, evalable=True) == {'name': 'book', 'description': DESC, 'input_schema': PARAMS}

@pytest.mark.parametrize('render,expected', GOLDEN, ids=GOLDEN_IDS)
def test_golden(render, expected):
    s = get_schema(book, evalable=True)
    before = copy.deepcopy(s)
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # nothing here loses meaning: no warning
        out = render(book)
        assert render(s) == without_class_docs(expected)  # a schema renders as its function does, but for class docstrings
    assert out == expected
    assert s == before  # the input is never mutated
    json.dumps(out)  # and the output is JSON
    assert get_schema(book, evalable=True) == before  # get_schema keeps the reference's form

@pytest.mark.parametrize('render', [g[0] for g in GOLDEN])
def test_output_shares_nothing_with_input(render):
    s = get_schema(book, evalable=True)
    before = copy.deepcopy(s)
    out = render(s)
    def scribble(o):
        if isinstance(o, dict):
            for v in o.values(): scribble(v)
            o['scribbled'] = 1
        elif isinstance(o, list):
            for v in o: scribble(v)
            o.append(1)
    scribble(out)
    assert s == before

def test_one_in_one_out_and_list_in_list_out():
    assert isinstance(to_openai(book), dict)
    both = to_anthropic([book, get_schema(book, name='book2')])
    assert [t['name'] for t in both] == ['book', 'book2']
    assert to_mcp(()) == []

def test_schema_dicts_are_made_json_safe():
    def f(p: Path = Path('a/b'), t: tuple[int, int] = (1, 2)):
        "F."
    s = get_schema(f)  # without evalable: defaults as Python values
    assert to_mcp(s)['inputSchema']['properties']['p']['default'] == 'a/b'
    assert to_openai(s)['function']['parameters']['properties']['t']['default'] == [1, 2]
    with pytest.raises(SchemaError, match="Tool 'g': .*can't be held by JSON; make its schema with get_schema"):
        to_anthropic({'name': 'g', 'input_schema': {'type': 'object', 'properties': {'x': {'default': object()}}}})

def test_not_a_tool():
    with pytest.raises(SchemaError, match='pass a function'): to_openai(5)
    with pytest.raises(SchemaError, match="needs a 'name'"): to_openai({'input_schema': {}})

# ---------------------------------------------------------------------------------------------------------
# Strict mode
# ---------------------------------------------------------------------------------------------------------

class Address(TypedDict):
    street: str
    zip: NotRequired[str]

class Profile(BaseModel):
    name: str
    age: int = 30

def order(room: Room, addr: Address, hours: float = 1.0, note: Optional[str] = 'none', labels: list[str] = None):
    "Order something."
    return room, addr, hours, note, labels

def test_strict_null_means_default_round_trip():
    "Optional parameters become required and nullable; `null` from the model comes back as the default"
    params = to_openai(order, strict=True)['function']['parameters']
    args = {'room': {'name': 'A', 'seats': None}, 'addr': {'street': 'Main', 'zip': None}, 'hours': None, 'note': None, 'labels': None}
    Draft202012Validator(params).validate(args)  # what the model is forced to send
    with pytest.raises(ValidationError, match="'seats' is a required property"):  # all required
        Draft202012Validator(params).validate({'room': {'name': 'A'}, 'addr': {'street': 'x', 'zip': None}, 'hours': None, 'note': None, 'labels': None})
    assert call_func('order', args, [order]) == (Room('A', 4), {'street': 'Main'}, 1.0, 'none', None)

def take_profile(p: Profile):
    "Take a profile."
    return p

def test_strict_null_round_trip_for_pydantic_fields():
    params = to_openai(take_profile, strict=True)['function']['parameters']
    args = {'p': {'name': 'A', 'age': None}}
    Draft202012Validator(params).validate(args)
    assert call_func('take_profile', args, [take_profile]) == Profile(name='A', age=30)

def free(counts: dict[str, int], n: int = 1):
    "Free-form."

def test_strict_falls_back_and_reports():
    rep = Report()
    t = to_openai(free, strict=True, report=rep)
    assert t['function']['strict'] is False
    assert t['function']['parameters'] == get_schema(free, evalable=True)['input_schema']  # the meaning is kept
    assert len(rep.lost) == 1 and rep.lost[0].tool == 'free'
    assert "can't be strict for OpenAI (/properties/counts is a dict[str, V]" in rep.lost[0].what
    with pytest.raises(SchemaError, match=r"free.*/properties/counts is a dict\[str, V\]"): to_openai(free, strict=True, report='raise')

def test_strict_schema_raises_when_impossible():
    s, rep = get_schema(order, evalable=True)['input_schema'], Report()
    before = copy.deepcopy(s)
    assert strict_schema(s, report=rep, name='order')['additionalProperties'] is False
    assert s == before and not rep.lost
    assert sum('made required and nullable' in c.what for c in rep) == 5  # five optional fields made nullable
    assert sum('default moved to the description' in c.what for c in rep) == 3  # three defaults (null ones need no words)
    with pytest.raises(SchemaError, match="Tool 'free' can't be strict"): strict_schema(get_schema(free)['input_schema'], name='free')

TAGGED = {'type': 'object', 'required': ['items'], 'properties': {'items': {'type': 'array', 'items': {'oneOf': [
    {'type': 'object', 'required': ['n'], 'properties': {'kind': {'const': 'get', 'default': 'get'}, 'n': {'type': 'integer'}}},
    {'type': 'object', 'required': ['n'], 'properties': {'kind': {'enum': ['put'], 'default': 'put'}, 'n': {'type': 'integer'}}}]}}}}

@pytest.mark.parametrize('render', ['openai', 'anthropic'])
def test_strict_keeps_an_optional_tag_required_and_not_null(render):
    "A discriminated union's optional tag (one value) is sent as it is: a null for it would leave the form unknown"
    rep = Report()
    tool = {'name': 'tagged', 'description': 'Tagged.', 'inputSchema': TAGGED}
    s = to_openai(tool, strict=True, report=rep)['function']['parameters'] if render == 'openai' else to_anthropic(tool, strict=True, report=rep)['input_schema']
    forms = s['properties']['items']['items']['anyOf']
    assert [f['properties']['kind'].get('const', f['properties']['kind'].get('enum')) for f in forms] == ['get', ['put']]
    assert all('anyOf' not in f['properties']['kind'] for f in forms)  # not made nullable
    if render == 'openai':  # (Claude's strict mode leaves optional keys optional)
        assert all(f['required'] == ['kind', 'n'] for f in forms)
        assert {c.what for c in rep if c.path.endswith('/kind')} == {'optional: made required (it has one value)', 'default moved to the description (not in OpenAI\'s strict subset)'}
    v = Draft202012Validator(s)
    assert v.is_valid({'items': [{'kind': 'get', 'n': 1}, {'kind': 'put', 'n': 2}]}) and not v.is_valid({'items': [{'kind': None, 'n': 1}]})
    built = mk_tool(lambda _nm, /, **kw: kw, tool)
    assert call_func('tagged', {'items': [{'kind': 'get', 'n': 1}]}, {'tagged': built}) == {'items': [{'kind': 'get', 'n': 1}]}


def homogeneous(pt: tuple[int, int], v: tuple[float, ...]):
    "Points."

def test_strict_fixed_tuple_of_one_type_is_items_and_length():
    p = to_openai(homogeneous, strict=True)['function']['parameters']['properties']
    assert p['pt'] == {'description': '', 'type': 'array', 'items': {'type': 'integer'}, 'minItems': 2, 'maxItems': 2}
    assert p['v'] == {'description': '', 'type': 'array', 'items': {'type': 'number'}}

# ---------------------------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------------------------

class Calc:
    def add(self, a: int, b: int = 1) -> int:
        "Add two numbers."
        return a + b

calc = Calc()

def test_dotted_names_are_checked_and_rewritten_on_request():
    s = get_schema(calc.add, name='calc.add')
    for render in (to_openai, to_anthropic, to_openai_responses):
        with pytest.raises(SchemaError, match=r"'calc.add' is not valid for (OpenAI|Anthropic).*rename=True"): render(s)
    rep = Report()
    assert to_openai(s, rename=True, report=rep)['function']['name'] == 'calc-add'
    assert rep.names == {'calc-add': 'calc.add'}
    assert call_func('calc-add', {'a': 2}, {'calc': calc}) == 3  # `resolve_nm` reads the dash back: no alias needed
    assert to_mcp(s)['name'] == 'calc.add' and to_gemini(s)['name'] == 'calc.add'  # both allow dots

def a_function_with_a_rather_long_name_that_goes_on_well_past_the_sixty_four_limit(x: int):
    "Long."
    return x

def test_long_and_odd_names_resolve_through_the_alias_map():
    long_nm = a_function_with_a_rather_long_name_that_goes_on_well_past_the_sixty_four_limit.__name__
    odd = get_schema(calc.add, name='calc.añadir')
    rep = Report()
    tools = to_openai([a_function_with_a_rather_long_name_that_goes_on_well_past_the_sixty_four_limit, odd], rename=True, report=rep)
    names = [t['function']['name'] for t in tools]
    assert all(len(n) <= 64 for n in names) and names[0].startswith(long_nm[:40])
    assert rep.names == {names[0]: long_nm, names[1]: 'calc.añadir'}
    ns = {long_nm: a_function_with_a_rather_long_name_that_goes_on_well_past_the_sixty_four_limit, 'calc.añadir': calc.add}
    with pytest.raises(LookupError): call_func(names[0], {'x': 1}, ns)
    ns = {**ns, **rep.aliases(ns)}
    assert call_func(names[0], {'x': 1}, ns) == 1 and call_func(names[1], {'a': 1}, ns) == 2
    with pytest.raises(LookupError, match="Unknown tool 'calc.añadir'"): rep.aliases({'calc': calc, long_nm: ns[long_nm]})  # advertised, but not in ns

def test_rename_without_a_report_warns_when_only_the_map_resolves_it():
    with pytest.warns(ProviderWarning, match='report.aliases'):
        to_openai(a_function_with_a_rather_long_name_that_goes_on_well_past_the_sixty_four_limit, rename=True)

def test_two_tools_one_name():
    with pytest.raises(SchemaError, match="Two tools are both named 'calc-add'"):
        to_openai([get_schema(calc.add, name='calc.add'), get_schema(calc.add, name='calc-add')], rename=True)

@pytest.mark.parametrize('nm,provider,expected', [
    ('get_weather', 'openai', 'get_weather'),
    ('calc.add', 'openai', 'calc-add'),
    ('calc.add', 'anthropic', 'calc-add'),
    ('calc.add', 'mcp', 'calc.add'),
    ('a b', 'mcp', 'a_b_' + hashlib.sha1(b'a b').hexdigest()[:8]),
    ('9lives', 'gemini', '_9lives_' + hashlib.sha1(b'9lives').hexdigest()[:8]),
    ('x' * 70, 'openai', 'x' * 55 + '_' + hashlib.sha1(b'x' * 70).hexdigest()[:8]),
])
def test_tool_name(nm, provider, expected):
    assert tool_name(nm, provider) == expected

# ---------------------------------------------------------------------------------------------------------
# Reports: read, raise or warn
# ---------------------------------------------------------------------------------------------------------

def pairs(p: tuple[int, str], d: dict[str, float] = None):
    "Pairs."

def test_report_modes():
    with pytest.warns(ProviderWarning, match=r'pairs /properties/p: a tuple of different types'): to_gemini(pairs, legacy=True)
    with pytest.raises(SchemaError, match=r"(?s)can't express.*\n- pairs /properties/d"): to_gemini(pairs, report='raise', legacy=True)
    rep = Report()
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        to_gemini(pairs, report=rep, legacy=True)
    assert [(c.path, c.lossy) for c in rep] == [('/properties/p', True), ('/properties/d', True)]
    with pytest.raises(SchemaError, match='pairs /properties/p'): rep.check()
    assert 'pairs /properties/d: an object without listed properties' in repr(rep)
    with pytest.raises(TypeError, match='report must be'): to_gemini(pairs, report='loud')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        to_gemini(pairs)  # Gemini's JSON Schema field holds both exactly

def test_gemini_json_text_round_trips():
    "What Gemini can't hold as an object comes as JSON text, which `call_func` parses back"
    def f(d: dict[str, int], tree: 'Tree'):
        "F."
        return d, tree
    p = to_gemini(f, report=Report(), legacy=True)['parameters']['properties']
    assert p['d']['type'] == 'STRING' and 'JSON text matching {"type":"object","additionalProperties":{"type":"integer"}}' in p['d']['description']
    assert p['tree']['properties']['kids']['items']['type'] == 'STRING'  # the recursion cut
    assert call_func('f', {'d': '{"a": 1}', 'tree': {'v': 1, 'kids': ['{"v": 2, "kids": []}']}}, {'f': f}) == ({'a': 1}, Tree(1, [Tree(2, [])]))

@dataclass
class Tree:
    v: int
    kids: list['Tree'] = field(default_factory=list)

def no_args():
    "Nothing."

def test_gemini_without_parameters_leaves_them_out():
    assert to_gemini(no_args) == {'name': 'no_args', 'description': 'Nothing.'}

# ---------------------------------------------------------------------------------------------------------
# function_to_tool: seed 004, exactly
# ---------------------------------------------------------------------------------------------------------

def get_weather(location: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get weather information for a location."""
    ...

def test_seed_example():
    assert function_to_tool(get_weather) == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get weather information for a location.",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"type": "string", "description": "Parameter location of type str"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                             "description": "Parameter unit of type Literal['celsius', 'fahrenheit']"},
                },
                "required": ["location"],
            },
        },
    }

class Hue(enum.Enum):
    red = 'red'
    blue = 'blue'

class Size(enum.IntEnum):
    s = 1
    m = 2

class Mixed(enum.Enum):
    a = 'a'
    one = 1

class TD(TypedDict):
    a: int
    b: NotRequired[str]

@dataclass
class DC:
    a: int  # the a
    b: list[str] = field(default_factory=list)

class M(BaseModel):
    a: int = Field(description='an int')
    b: Optional[str] = None

class NT(NamedTuple):
    a: int
    b: str = 'x'

OBJ_TD = {'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'type': 'string'}}, 'required': ['a']}

@pytest.mark.parametrize('t,expected', [
    (str, {'type': 'string'}), (int, {'type': 'integer'}), (float, {'type': 'number'}), (bool, {'type': 'boolean'}),
    (bytes, {'type': 'string', 'contentEncoding': 'base64'}),
    (datetime, {'type': 'string', 'format': 'date-time'}), (date, {'type': 'string', 'format': 'date'}),
    (time, {'type': 'string', 'format': 'time'}),
    (UUID, {'type': 'string'}), (Path, {'type': 'string'}), (Decimal, {'type': 'string'}),  # unknown to the table: strings
    (Any, {'type': 'string'}), (object, {'type': 'string'}), (complex, {'type': 'string'}),
    (list[int], {'type': 'array', 'items': {'type': 'integer'}}), (List[int], {'type': 'array', 'items': {'type': 'integer'}}),
    (abc.Sequence[str], {'type': 'array', 'items': {'type': 'string'}}),
    (list, {'type': 'array', 'items': {'type': 'string'}}),
    (set[int], {'type': 'array', 'items': {'type': 'integer'}, 'uniqueItems': True}),
    (frozenset[str], {'type': 'array', 'items': {'type': 'string'}, 'uniqueItems': True}),
    (tuple[int, str, float], {'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}, {'type': 'number'}],
                              'minItems': 3, 'maxItems': 3}),
    (tuple[int, ...], {'type': 'array', 'items': {'type': 'integer'}}),
    (dict[str, int], {'type': 'object', 'additionalProperties': {'type': 'integer'}}),
    (abc.Mapping[str, float], {'type': 'object', 'additionalProperties': {'type': 'number'}}),
    (Dict[int, bool], {'type': 'object', 'additionalProperties': {'type': 'boolean'}}),
    (dict, {'type': 'object', 'additionalProperties': {'type': 'string'}}),
    (Literal['a', 'b'], {'type': 'string', 'enum': ['a', 'b']}), (Literal[1, 2, 3], {'type': 'integer', 'enum': [1, 2, 3]}),
    (Literal['a', 1, True], {'enum': ['a', 1, True]}),
    (Hue, {'type': 'string', 'enum': ['red', 'blue']}), (Size, {'type': 'integer', 'enum': [1, 2]}), (Mixed, {'enum': ['a', 1]}),
    (Union[int, str], {'oneOf': [{'type': 'integer'}, {'type': 'string'}]}), (int | str, {'oneOf': [{'type': 'integer'}, {'type': 'string'}]}),
    (Optional[int], {'type': 'integer'}), (int | None, {'type': 'integer'}),
    (Optional[Union[int, str]], {'oneOf': [{'type': 'integer'}, {'type': 'string'}]}),
    (Annotated[int, 'meta'], {'type': 'integer'}), (Annotated[int, Field(ge=1)], {'type': 'integer'}),
    (TD, OBJ_TD),
    (DC, {'type': 'object', 'properties': {'a': {'type': 'integer', 'description': 'the a'},
                                           'b': {'type': 'array', 'items': {'type': 'string'}}}, 'required': ['a']}),
    (M, {'type': 'object', 'properties': {'a': {'type': 'integer', 'description': 'an int'}, 'b': {'type': 'string'}}, 'required': ['a']}),
    (NT, {'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'type': 'string'}}, 'required': ['a']}),
    (list[TD], {'type': 'array', 'items': OBJ_TD}),
])
def test_seed_type_table(t, expected):
    def f(x): "Doc."
    f.__annotations__ = {'x': t}
    tool = function_to_tool(f)
    s = tool['function']['parameters']['properties']['x']
    assert {k: v for k, v in s.items() if k != 'description'} == expected
    TypeAdapter(ChatCompletionFunctionToolParam).validate_python(tool)
    Draft202012Validator.check_schema(tool['function']['parameters'])

@dataclass
class Folder:
    name: str
    subs: list['Folder']

def test_seed_recursive_class_points_at_itself():
    def walk(root: Folder):
        "Walk a folder tree."
    p = function_to_tool(walk)['function']['parameters']
    assert p['properties']['root']['properties']['subs'] == {'type': 'array', 'items': {'$ref': '#/properties/root'}}
    Draft202012Validator(p).validate({'root': {'name': 'a', 'subs': [{'name': 'b', 'subs': []}]}})
    with pytest.raises(ValidationError, match="'name' is a required property") as e: Draft202012Validator(p).validate({'root': {'name': 'a', 'subs': [{'subs': []}]}})
    assert list(e.value.absolute_path) == ['root', 'subs', 0]  # found through the $ref, where it is missing

def test_seed_descriptions_params_and_errors():
    def f(
        a: int,                           # from a comment
        b: Annotated[str, 'from Annotated'],
        c: float,
        d=3,
        e=None,
        *args, g: bool = False, **kw,
    ):
        """Do things.

        Args:
            c: from the docstring
        """
    fn = function_to_tool(f)['function']
    assert fn['description'] == 'Do things.'
    p = fn['parameters']
    assert list(p['properties']) == ['a', 'b', 'c', 'd', 'e', 'g']  # *args and **kwargs skipped
    assert [p['properties'][k]['description'] for k in 'abcdeg'] == [
        'from a comment', 'from Annotated', 'from the docstring', 'Parameter d of type str', 'Parameter e of type str',
        'Parameter g of type bool']
    assert p['properties']['d']['type'] == 'string' and p['required'] == ['a', 'b', 'c']
    def undocumented(x: int): pass
    with pytest.warns(SchemaWarning, match="'test_seed_descriptions_params_and_errors.<locals>.undocumented' has no docstring") as ws:
        fn = function_to_tool(undocumented)['function']  # built, as `get_schema` builds it: the name and parameters still say something
    assert fn['description'] == '' and fn['parameters']['required'] == ['x'] and 'description=' not in str(ws[0].message)

def test_seed_methods_and_callable_objects():
    assert function_to_tool(calc.add)['function']['parameters'] == {
        'type': 'object', 'required': ['a'],
        'properties': {'a': {'type': 'integer', 'description': 'Parameter a of type int'},
                       'b': {'type': 'integer', 'description': 'Parameter b of type int'}}}
    class Greeter:
        "Greets people."
        def __call__(self, who: str): return f'hi {who}'
    fn = function_to_tool(Greeter())['function']
    assert fn['name'] == 'Greeter' and fn['description'] == 'Greets people.' and list(fn['parameters']['properties']) == ['who']

@dataclass
class Doc:
    description: str  # a field named like a keyword
    default: int = 0

def test_gemini_json_text_shape_keeps_fields_named_like_keywords():
    def f(docs: dict[str, Doc]):
        "F."
    d = to_gemini(f, report=Report(), legacy=True)['parameters']['properties']['docs']['description']
    assert d == ('JSON text matching {"type":"object","additionalProperties":{"type":"object","properties":{"description":{"type":"string"},'
                 '"default":{"type":"integer"}},"title":"Doc","required":["description"]}}')

def test_gemini_bounds():
    def f(n: Annotated[int, Field(gt=0, lt=10)], x: Annotated[float, Field(ge=0, lt=1)]):
        "F."
    rep = Report()
    p = to_gemini(f, report=rep, legacy=True)['parameters']['properties']
    assert p['n'] == {'description': '', 'minimum': 1, 'maximum': 9, 'type': 'INTEGER'}  # the same bounds for integers
    assert p['x'] == {'description': '< 1', 'minimum': 0, 'type': 'NUMBER'}
    assert [(c.path, c.lossy) for c in rep] == [('/properties/x', True)]

class Aliased(BaseModel):
    first_name: str = Field(alias='first-name')

def test_gemini_reports_property_names_it_rejects():
    def greet(p: Aliased):
        "Greet."
    rep = Report()
    to_gemini(greet, report=rep, legacy=True)
    assert [(c.path, c.lossy) for c in rep] == [('/properties/p', True)] and "'first-name'" in rep.changes[0].what  # sent as JSON text
