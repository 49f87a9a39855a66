"""Proof by each provider's own code: a broad set of functions, every kind the schema module supports, rendered
for every provider and validated with that provider's SDK types, its documented rules, and Draft 2020-12.

Every case must be accepted where the provider can express it, and reported (a lossy `Change`) where it can't:
`LOSSY` names the tools each provider can't express exactly, and every other tool must come with no lossy change.
"""
import copy
import enum
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Optional, Union
from uuid import UUID

import anthropic.types
import mcp.types
import pytest
from conftest import assert_valid_schema
from google.genai import types as gtypes
from mcp.shared.tool_name_validation import validate_tool_name
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import NotRequired, TypedDict

from funccall import Report, get_schema, to_anthropic, to_gemini, to_mcp, to_openai, to_openai_responses

# ---------------------------------------------------------------------------------------------------------
# The functions: every kind
# ---------------------------------------------------------------------------------------------------------

class Color(enum.Enum):
    red = 'red'
    green = 'green'

class Level(enum.IntEnum):
    low = 1
    high = 2

@dataclass
class Point:
    x: float  # across
    y: float = 0.0  # up

@dataclass
class Node:
    "A tree node"
    value: int
    children: list['Node'] = field(default_factory=list)

@dataclass
class Husband:
    name: str
    wife: Optional['Wife'] = None

@dataclass
class Wife:
    name: str
    husband: Optional[Husband] = None

class Address(TypedDict):
    street: str
    zip: NotRequired[str]

class Pair(NamedTuple):
    a: int
    b: str = 'x'

class User(BaseModel):
    "A user"
    name: str = Field(description='full name')
    age: Optional[int] = None
    home: Optional[Address] = None

def scalars(a: int, b: float, c: str, d: bool = False):
    "Scalars."
def choices(color: Color, level: Level = Level.low, mode: Literal['fast', 'slow'] = 'fast', mixed: Literal[1, 'a'] = 1, flag: Literal[True, 'no'] = True):
    "Literals and enums."
def shapes(p: Point, addr: Address, user: User, pair: Pair = None):
    "Classes."
def recursive(tree: Node, couple: Husband):
    "Recursive classes."
def unions(a: int | str, b: Optional[int] = None, c: Union[Point, str, None] = None, d: Optional[Literal['x', 'y']] = None):
    "Unions."
def tuples(fixed: tuple[int, int], v: tuple[float, ...], mixed: tuple[int, str] = (1, 'a')):
    "Tuples."
def collections(s: set[str], fs: frozenset[int] = frozenset(), lst: list[Point] = None):
    "Sets and lists."
def dicts(d: dict[str, int], k: dict[int, str] = None, anyd: dict = None):
    "Dicts."
def times(when: datetime, day: date, at: time, blob: bytes = b'', path: Path = Path('.'), uid: UUID = None, amount: Decimal = Decimal('1.5')):
    "Times and string formats."
def constrained(n: Annotated[int, Field(gt=0, le=10)], s: Annotated[str, Field(min_length=1, pattern='^a')], x: Annotated[float, Field(gt=0, multiple_of=0.5)] = 1.0):
    "Constrained numbers and strings."
def anything(x: Any, o: object = None, items: list = None):
    "Anything."
def no_params():
    "Nothing to pass."
def a_function_with_a_rather_long_name_that_goes_on_well_past_the_sixty_four_limit(x: int):
    "A long name."
def größe(x: int):
    "A name OpenAI and Claude reject."

class Calc:
    def add(self, a: int, b: int = 1) -> int:
        "Add."
        return a + b

FUNCS = [scalars, choices, shapes, recursive, unions, tuples, collections, dicts, times, constrained, anything, no_params,
         a_function_with_a_rather_long_name_that_goes_on_well_past_the_sixty_four_limit, größe]
TOOLS = [get_schema(f, evalable=True) for f in FUNCS] + [get_schema(Calc().add, evalable=True, name='calc.add')]

# What each provider can't say exactly, by tool; every other tool must render with no lossy change
LOSSY = {
    'openai': set(), 'anthropic': set(), 'mcp': set(),
    'openai-strict': {'tuples', 'dicts', 'anything'},  # a mixed tuple, dicts, Any and untyped list items: sent non-strict
    'anthropic-strict': {'tuples', 'dicts', 'anything', 'recursive'},  # the same, and recursion (Claude has none)
    'gemini': {'choices'},  # Literal[True, 'no']: Gemini's enums hold strings and numbers only
    'gemini-legacy': {'choices', 'recursive', 'tuples', 'dicts', 'constrained', 'anything'},  # bool enum, recursion, mixed tuple, dicts, x > 0 for floats
}

def render(provider: str, tools: list) -> tuple[list, Report]:
    rep = Report()
    r = {'openai': lambda: to_openai(tools, rename=True, report=rep),
         'openai-strict': lambda: to_openai(tools, strict=True, rename=True, report=rep),
         'responses-strict': lambda: to_openai_responses(tools, strict=True, rename=True, report=rep),
         'anthropic': lambda: to_anthropic(tools, rename=True, report=rep),
         'anthropic-strict': lambda: to_anthropic(tools, strict=True, rename=True, report=rep),
         'mcp': lambda: to_mcp(tools, rename=True, report=rep),
         'gemini': lambda: to_gemini(tools, rename=True, report=rep),
         'gemini-legacy': lambda: to_gemini(tools, rename=True, report=rep, legacy=True)}[provider]
    before = copy.deepcopy(tools)
    out = r()
    assert tools == before  # never mutated
    return out, rep

@pytest.mark.parametrize('provider', sorted(LOSSY))
def test_reported_exactly_where_the_provider_cant_express(provider):
    _, rep = render(provider, TOOLS)
    assert {c.tool for c in rep.lost} == LOSSY[provider]

# ---------------------------------------------------------------------------------------------------------
# JSON Schema dialects: OpenAI, Anthropic, MCP
# ---------------------------------------------------------------------------------------------------------

OPENAI_NAME = re.compile(r'[a-zA-Z0-9_-]{1,64}')
ANTHROPIC_NAME = re.compile(r'[a-zA-Z0-9_-]{1,128}')

def walk(s, path='#'):
    "Every schema node in `s`, with its path"
    if not isinstance(s, dict): return
    yield path, s
    for k in ('properties', '$defs'):
        for nm, v in s.get(k, {}).items(): yield from walk(v, f'{path}/{k}/{nm}')
    for k in ('items', 'additionalProperties'):
        if isinstance(s.get(k), dict): yield from walk(s[k], f'{path}/{k}')
    for k in ('anyOf', 'oneOf', 'prefixItems'):
        for i, v in enumerate(s.get(k, ())): yield from walk(v, f'{path}/{k}/{i}')

def check_json_schema(params: dict):
    assert params['type'] == 'object'
    assert_valid_schema(params)  # Draft 2020-12, every $ref resolving into the root $defs
    for path, s in walk(params):  # OpenAI rejects "array schema missing items"
        if s.get('type') == 'array': assert 'items' in s, path

def test_openai_chat_completions():
    tools, _ = render('openai', TOOLS)
    for t in tools:
        assert TypeAdapter(ChatCompletionFunctionToolParam).validate_python(t) == t  # accepted, nothing dropped
        assert OPENAI_NAME.fullmatch(t['function']['name'])
        check_json_schema(t['function']['parameters'])

def test_anthropic():
    tools, _ = render('anthropic', TOOLS)
    for t in tools:
        assert TypeAdapter(anthropic.types.ToolParam).validate_python(t) == t
        assert ANTHROPIC_NAME.fullmatch(t['name'])  # OpenAI's characters, up to 128
        check_json_schema(t['input_schema'])

def test_mcp():
    tools, rep = render('mcp', TOOLS)
    assert tools[-1]['name'] == 'calc.add'  # MCP allows dots
    for t in tools:
        assert mcp.types.Tool.model_validate(t).model_dump(by_alias=True, exclude_none=True) == t
        assert validate_tool_name(t['name']).is_valid
        check_json_schema(t['inputSchema'])
    assert list(rep.names.values()) == ['größe']

# ---------------------------------------------------------------------------------------------------------
# OpenAI strict mode: the Structured Outputs rules, and the SDK's own strict transform
# ---------------------------------------------------------------------------------------------------------

# The rules as OpenAI's SDKs enforce them (openai-node `toStrictJsonSchema`, openai-python `to_strict_json_schema`)
# and its Structured Outputs guide documents them: a closed object at the root; every object closed, with every
# property required; only the supported keywords; a `$ref` alone (the Python SDK inlines one with siblings);
# every node says what its value is; only the documented string formats.
# OpenAI's documented subset: `default` and string lengths are not in it
STRICT_KEYWORDS = {'type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'enum', 'const', '$ref', '$defs',
                   'description', 'title', 'pattern', 'format', 'minimum', 'maximum',
                   'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems'}
STRICT_FORMATS = {'date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'}
# Claude's documented subset ("JSON Schema limitations"): no numeric bounds, no lengths, minItems 0 or 1, no recursion
CLAUDE_KEYWORDS = {'type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'enum', 'const', '$ref', '$defs',
                   'description', 'title', 'pattern', 'format', 'minItems'}
CLAUDE_FORMATS = STRICT_FORMATS | {'uri'}

def strict_violations(params: dict, claude: bool = False) -> list:
    errs = []
    if params.get('type') != 'object' or 'anyOf' in params: errs.append('root must be an object, not a union')
    keys, formats = (CLAUDE_KEYWORDS, CLAUDE_FORMATS) if claude else (STRICT_KEYWORDS, STRICT_FORMATS)
    for path, s in walk(params):
        errs += [f'{path}: unsupported keyword {k!r}' for k in s if k not in keys]
        if '$ref' in s and len(s) > 1: errs.append(f'{path}: $ref with siblings')
        if not any(k in s for k in ('type', '$ref', 'anyOf', 'enum', 'const')): errs.append(f'{path}: says nothing of its type')
        if s.get('type') == 'object' or 'properties' in s:
            if s.get('additionalProperties') is not False: errs.append(f'{path}: object not closed')
            if not claude and s.get('required') != list(s.get('properties', {})): errs.append(f'{path}: not every property required')
        if 'format' in s and s['format'] not in formats: errs.append(f'{path}: format {s["format"]!r}')
        if claude and s.get('minItems', 0) > 1: errs.append(f'{path}: minItems above 1')
        if claude and any(isinstance(v, (dict, list)) for v in s.get('enum', ())): errs.append(f'{path}: enum of non-primitives')
        if isinstance(s.get('type'), list): errs.append(f'{path}: a list of types')
    return errs

def test_strict_checker_catches_what_strict_mode_rejects():
    canonical = get_schema(shapes, evalable=True)['input_schema']
    assert strict_violations(canonical)  # the canonical schema is not strict
    assert any('object not closed' in e for e in strict_violations({'type': 'object', 'properties': {}}))

@pytest.mark.parametrize('provider', ['openai-strict', 'responses-strict'])
def test_openai_strict(provider):
    tools, rep = render(provider, TOOLS)
    fell_back = {c.tool for c in rep.lost}
    assert fell_back == LOSSY['openai-strict']
    for t, s in zip(tools, TOOLS):
        fn = t['function'] if provider == 'openai-strict' else t
        TypeAdapter(ChatCompletionFunctionToolParam if provider == 'openai-strict' else FunctionToolParam).validate_python(t)
        check_json_schema(fn['parameters'])
        if s['name'] in fell_back:  # sent as it was, marked non-strict
            assert fn['strict'] is False and fn['parameters'] == s['input_schema']
            continue
        assert fn['strict'] is True
        assert strict_violations(fn['parameters']) == []
        mine = copy.deepcopy(fn['parameters'])
        assert _ensure_strict_json_schema(mine, path=(), root=mine) == fn['parameters']  # the SDK's strict pass has nothing to do

def test_anthropic_strict():
    tools, rep = render('anthropic-strict', TOOLS)
    fell_back = {c.tool for c in rep.lost}
    assert fell_back == LOSSY['anthropic-strict']
    for t, s in zip(tools, TOOLS):
        assert TypeAdapter(anthropic.types.ToolParam).validate_python(t) == t  # the SDK's ToolParam has `strict`
        check_json_schema(t['input_schema'])
        if s['name'] in fell_back:
            assert t['strict'] is False and t['input_schema'] == s['input_schema']
            continue
        assert t['strict'] is True and strict_violations(t['input_schema'], claude=True) == [], s['name']
        # optional parameters keep their meaning: required stays what it was
        assert t['input_schema'].get('required', []) == s['input_schema'].get('required', [])

def test_strict_checkers_catch_what_each_rejects():
    assert strict_violations({'type': 'object', 'properties': {'a': {'type': 'string', 'default': 'x'}}, 'required': ['a'],
                              'additionalProperties': False}) == ["#/properties/a: unsupported keyword 'default'"]
    assert strict_violations({'type': 'object', 'properties': {'a': {'type': 'integer', 'minimum': 1}},
                              'additionalProperties': False}, claude=True) == ["#/properties/a: unsupported keyword 'minimum'"]

# ---------------------------------------------------------------------------------------------------------
# Gemini: google-genai's types, and the Gemini API's documented rules
# ---------------------------------------------------------------------------------------------------------

GEMINI_KEYS = {'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required',
               'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering',
               'default', 'items', 'minimum', 'maximum'}  # the Developer API's Schema: no $ref, $defs, additionalProperties
GEMINI_TYPES = {'STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT'}
GEMINI_NAME = re.compile(r'[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}')  # the SDK says 128; the live API answers 400 past 64
GEMINI_PROP = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]{0,63}')

def gemini_violations(s: dict, path: str = '#') -> list:
    errs = [f'{path}: keyword {k!r}' for k in s if k not in GEMINI_KEYS]
    ty = s.get('type')
    if ty is not None and ty not in GEMINI_TYPES: errs.append(f'{path}: type {ty!r}')
    if 'enum' in s and (ty != 'STRING' or not all(isinstance(v, str) for v in s['enum'])): errs.append(f'{path}: enum only on strings')
    if 'format' in s and s['format'] not in {'STRING': ('enum', 'date-time'), 'NUMBER': ('float', 'double'), 'INTEGER': ('int32', 'int64')}.get(ty, ()):
        errs.append(f'{path}: format {s["format"]!r} on {ty}')
    if ('properties' in s or 'required' in s) and ty != 'OBJECT': errs.append(f'{path}: properties only on OBJECT')
    if ty == 'OBJECT':
        if not s.get('properties'): errs.append(f'{path}: OBJECT without properties')
        errs += [f'{path}: required {k!r} not a property' for k in s.get('required', ()) if k not in s.get('properties', {})]
        errs += [f'{path}: property name {k!r}' for k in s.get('properties', {}) if not GEMINI_PROP.fullmatch(k)]
    if ty == 'ARRAY' and 'items' not in s: errs.append(f'{path}: ARRAY without items')
    for k, v in s.get('properties', {}).items(): errs += gemini_violations(v, f'{path}/properties/{k}')
    if isinstance(s.get('items'), dict): errs += gemini_violations(s['items'], f'{path}/items')
    for i, v in enumerate(s.get('anyOf', ())): errs += gemini_violations(v, f'{path}/anyOf/{i}')
    return errs

def test_gemini_checker_catches_what_gemini_rejects():
    assert gemini_violations({'type': 'INTEGER', 'enum': ['1']}) == ['#: enum only on strings']
    assert gemini_violations({'type': 'STRING', 'format': 'date'}) == ["#: format 'date' on STRING"]
    assert gemini_violations({'type': 'OBJECT', 'properties': {}, 'additionalProperties': {}}) == ["#: keyword 'additionalProperties'", '#: OBJECT without properties']

def test_gemini_legacy():
    decls, rep = render('gemini-legacy', TOOLS)
    for d in decls:
        fd = gtypes.FunctionDeclaration.model_validate(d)  # the SDK accepts it ...
        assert fd.model_dump(mode='json', by_alias=True, exclude_unset=True) == d  # ... and drops nothing
        gtypes.Tool(function_declarations=[fd])
        assert GEMINI_NAME.fullmatch(d['name'])
        if 'parameters' in d: assert gemini_violations(d['parameters']) == [], d['name']
    assert 'parameters' not in decls[FUNCS.index(no_params)]  # a tool without parameters leaves them out
    long_nm = a_function_with_a_rather_long_name_that_goes_on_well_past_the_sixty_four_limit.__name__
    assert decls[-1]['name'] == 'calc.add' and list(rep.names.values()) == [long_nm, 'größe']  # dots are fine; 'ö' and 65+ characters are not

def test_gemini_legacy_nullable_and_enums():
    d = to_gemini(unions, report=Report(), legacy=True)['parameters']['properties']
    assert d['b'] == {'description': '', 'default': None, 'type': 'INTEGER', 'nullable': True}
    assert d['c']['nullable'] is True and [x.get('type') for x in d['c']['anyOf']] == ['OBJECT', 'STRING']
    assert d['d'] == {'description': '', 'default': None, 'type': 'STRING', 'enum': ['x', 'y'], 'nullable': True}
    rep = Report()
    c = to_gemini(choices, report=rep, legacy=True)['parameters']['properties']
    assert c['level'] == {'description': '', 'default': '1', 'type': 'STRING', 'enum': ['1', '2']}
    assert [(c.path, c.lossy) for c in rep if 'enum' in c.what] == [('/properties/level', False), ('/properties/mixed', False), ('/properties/flag', True)]

# Gemini's JSON Schema field, as `GenerateContentConfig.response_json_schema`'s docstring documents the subset
GEMINI_JSON_NAME = re.compile(r'[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}')  # the live API answers 400 past 64

def gemini_json_violations(params: dict) -> list:
    errs = []
    for path, s in walk(params):
        if '$ref' in s and [k for k in s if not k.startswith('$')]: errs.append(f'{path}: $ref with siblings')
        if any(not (isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool))) for v in s.get('enum', ())):
            errs.append(f'{path}: enum of other than strings and numbers')
        if isinstance(s.get('type'), list): errs.append(f'{path}: a list of types')
    return errs

def test_gemini_json_checker():
    assert gemini_json_violations({'type': 'object', 'properties': {'a': {'$ref': '#/$defs/A', 'description': 'x'}, 'b': {'enum': [True]}}}) == [
        '#/properties/a: $ref with siblings', '#/properties/b: enum of other than strings and numbers']

def test_gemini():
    decls, rep = render('gemini', TOOLS)
    for d, s in zip(decls, TOOLS):
        fd = gtypes.FunctionDeclaration.model_validate(d)  # the SDK accepts it ...
        assert fd.model_dump(mode='json', exclude_unset=True) == d  # ... and drops nothing
        gtypes.Tool(function_declarations=[fd])
        assert GEMINI_JSON_NAME.fullmatch(d['name'])
        if 'parameters_json_schema' not in d: continue
        p = d['parameters_json_schema']
        check_json_schema(p)
        assert gemini_json_violations(p) == [], d['name']
        if s['name'] not in LOSSY['gemini']:  # the same schema, but for a `$ref`'s siblings moved out
            assert _deref_siblings(s['input_schema']) == p, s['name']
    assert 'parameters_json_schema' not in decls[FUNCS.index(no_params)]
    assert len(decls[FUNCS.index(a_function_with_a_rather_long_name_that_goes_on_well_past_the_sixty_four_limit)]['name']) <= 64

def _deref_siblings(s):
    if isinstance(s, list): return [_deref_siblings(x) for x in s]
    if not isinstance(s, dict): return s
    if '$ref' in s and s.get('description') == '': s = {k: v for k, v in s.items() if k != 'description'}
    if '$ref' in s and len(s) > 1: s = {**{k: v for k, v in s.items() if k != '$ref'}, 'anyOf': [{'$ref': s['$ref']}]}
    return {k: (v if k in ('enum', 'default', 'const', 'required') else _deref_siblings(v)) for k, v in s.items()}

def test_gemini_type_lists_and_recursion_through_required_properties():
    s = {'name': 'f', 'description': 'F.', 'input_schema': {
        'type': 'object', 'required': ['v', 'tree'],
        'properties': {'v': {'type': ['string', 'number', 'boolean'], 'minLength': 1},
                       'tree': {'$ref': '#/$defs/T'}},
        '$defs': {'T': {'type': 'object', 'required': ['kids', 'next'],
                        'properties': {'kids': {'type': 'array', 'items': {'$ref': '#/$defs/T'}},
                                       'next': {'$ref': '#/$defs/T'}, 'opt': {'$ref': '#/$defs/T'}}}}}}
    for legacy in (False, True):
        rep = Report()
        d = to_gemini(s, report=rep, legacy=legacy)  # a list of types no longer crashes either form
        gtypes.FunctionDeclaration.model_validate(d)
    p = to_gemini(s, report=Report())['parameters_json_schema']
    assert p['properties']['v'] == {'anyOf': [{'type': 'string', 'minLength': 1}, {'type': 'number'}, {'type': 'boolean'}]}
    t = p['$defs']['T']['properties']
    assert t['opt'] == {'$ref': '#/$defs/T'}  # recursion through an optional property is fine
    assert t['next']['type'] == 'string' and t['kids']['items']['type'] == 'string'  # through required ones, cut as JSON text
