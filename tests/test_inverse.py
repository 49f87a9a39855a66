"""`tool_parts`, `schema2anno`, `mk_param`, `schema2sig` and `mk_tool`: from JSON tool schemas back to Python.

Every tool form funccall accepts, the annotation each schema keyword maps to (table-driven), property names
that are not Python identifiers, the checks and JSON conversion `mk_tool` does before dispatching, the seed
000 examples with their exact reprs, and the tools of three real MCP servers (`mcp-server-time`,
`mcp-server-fetch`, `mcp-server-git`) listed once per module with the official `mcp` client.
"""
import asyncio
import base64
import datetime as dt
import inspect
import subprocess
import sys
import typing
from decimal import Decimal
from inspect import Parameter
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any, Literal, Optional, Union
from uuid import UUID

import pytest
from fastcore.xtras import dict2obj

from funccall import JsonSchema, ToolInputError, get_schema, handle_type, mk_param, mk_tool, schema2anno, schema2sig, tool_parts
from funccall.inverse import _py_nm


SCHEMA = {'type': 'object', 'properties': {'q': {'type': 'string', 'description': 'The query'}, 'n': {'type': 'integer', 'default': 3}},
          'required': ['q']}
SIG = '(q: str, *, n: int = 3)'


def disp(tool, /, **kw):
    "A dispatcher that returns what it was sent; positional-only, so a property may be called `tool` or `name`"
    return tool, kw


def _same(a, b) -> bool:
    "Annotations equal, with union members and metadata in the same order (`==` on unions ignores order)"
    return a == b and typing.get_args(a) == typing.get_args(b)


# ---------------------------------------------------------------------------------------------------------
# Every tool form
# ---------------------------------------------------------------------------------------------------------

def _mcp2_tool(nm='search', desc='Search it', s=SCHEMA):
    from mcp.types import Tool
    return Tool(name=nm, description=desc, input_schema=s)


@pytest.mark.parametrize('mk', [
    lambda: SimpleNamespace(name='search', description='Search it', inputSchema=SCHEMA),
    lambda: dict2obj(dict(name='search', description='Search it', inputSchema=SCHEMA)),
    _mcp2_tool,
    lambda: {'name': 'search', 'description': 'Search it', 'input_schema': SCHEMA},
    lambda: {'name': 'search', 'description': 'Search it', 'inputSchema': SCHEMA},
    lambda: {'name': 'search', 'description': 'Search it', 'parameters': SCHEMA},
    lambda: {'type': 'function', 'function': {'name': 'search', 'description': 'Search it', 'parameters': SCHEMA}},
], ids=['mcp1-object', 'fastcore-dict2obj', 'mcp2-Tool', 'input_schema', 'inputSchema', 'parameters', 'openai'])
def test_tool_forms(mk):
    tool = mk()
    assert tool_parts(tool) == ('search', 'Search it', SCHEMA)
    assert str(schema2sig(tool)) == SIG
    fn = mk_tool(disp, tool)
    assert (fn.__name__, fn.__doc__, str(inspect.signature(fn))) == ('search', 'Search it', SIG)
    assert fn('hi') == ('search', {'q': 'hi'})
    assert fn('hi', n=5) == ('search', {'q': 'hi', 'n': 5})


def test_mcp2_tool_is_the_real_class():
    from mcp.types import Tool
    tool = _mcp2_tool()
    assert isinstance(tool, Tool) and not hasattr(tool, 'inputSchema')
    assert schema2sig(tool).parameters['q'].annotation.__metadata__ == ('The query',)


@pytest.mark.parametrize('tool', [
    {'name': 'ping', 'description': 'Ping', 'input_schema': {'type': 'object'}},
    {'name': 'ping', 'description': 'Ping', 'input_schema': {'type': 'object', 'properties': {}}},
    {'name': 'ping', 'description': 'Ping'},
    SimpleNamespace(name='ping', description='Ping', inputSchema={'type': 'object'}),
], ids=['no-properties', 'empty-properties', 'no-schema', 'object-no-properties'])
def test_no_properties(tool):
    assert str(schema2sig(tool)) == '()'
    fn = mk_tool(disp, tool)
    assert fn() == ('ping', {})
    with pytest.raises(ToolInputError, match='unexpected'): fn(a=1)
    assert get_schema(fn)['input_schema'] == {'type': 'object', 'properties': {}}


def test_tool_parts_defaults():
    assert tool_parts({}) == ('', '', {'type': 'object', 'properties': {}})
    assert tool_parts(SimpleNamespace(name='x')) == ('x', '', {'type': 'object', 'properties': {}})


# ---------------------------------------------------------------------------------------------------------
# Annotations, table-driven
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('s,expected', [
    ({'type': 'string'}, str),
    ({'type': 'integer'}, int),
    ({'type': 'number'}, float),
    ({'type': 'boolean'}, bool),
    ({'type': 'null'}, type(None)),
    ({}, Any),
    ({'type': 'object'}, dict),
    ({'type': 'array'}, list[Any]),
    ({'type': 'string', 'enum': ['a', 'b']}, Literal['a', 'b']),
    ({'enum': ['a', 1]}, Literal['a', 1]),
    ({'enum': ['a', None]}, Literal['a', None]),
    ({'type': 'integer', 'enum': [1, 2]}, Literal[1, 2]),
    ({'const': 3}, Literal[3]),
    ({'const': 'x'}, Literal['x']),
    ({'type': ['string', 'null']}, Optional[str]),
    ({'type': ['string', 'integer']}, Union[str, int]),
    ({'type': ['integer', 'string', 'null']}, Union[int, str, None]),
    ({'type': ['array', 'null'], 'items': {'type': 'integer'}}, Optional[list[int]]),
    ({'type': ['string', 'null'], 'format': 'date-time'}, Optional[dt.datetime]),
    ({'anyOf': [{'type': 'string'}, {'type': 'integer'}]}, Union[str, int]),
    ({'anyOf': [{'type': 'integer'}, {'type': 'string'}]}, Union[int, str]),
    ({'oneOf': [{'type': 'string'}, {'type': 'integer'}]}, Union[str, int]),
    ({'anyOf': [{'type': 'string'}, {'type': 'null'}]}, Optional[str]),
    ({'oneOf': [{'type': 'string'}, {'type': 'null'}]}, Optional[str]),
    ({'anyOf': [{'type': 'string'}, {'type': 'null'}], 'default': None}, Optional[str]),
    ({'anyOf': [{'type': 'string', 'description': 'd'}, {'type': 'null'}]}, Optional[Annotated[str, 'd']]),
    ({'type': 'array', 'items': {'type': 'integer'}}, list[int]),
    ({'type': 'array', 'items': {'type': 'array', 'items': {'type': 'string'}}}, list[list[str]]),
    ({'type': 'array', 'items': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}}, list[Optional[int]]),
    ({'type': 'array', 'items': {'type': 'integer'}, 'uniqueItems': True}, set[int]),
    ({'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}]}, tuple[int, str]),
    ({'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}], 'items': {'anyOf': [{'type': 'integer'}, {'type': 'string'}]},
      'minItems': 2, 'maxItems': 2}, tuple[int, str]),
    ({'type': 'array', 'items': {}, 'maxItems': 0}, tuple[()]),
    ({'type': 'object', 'additionalProperties': {'type': 'integer'}}, dict[str, int]),
    ({'type': 'object', 'additionalProperties': {'type': 'array', 'items': {'type': 'string'}}}, dict[str, list[str]]),
    ({'type': 'object', 'additionalProperties': {'type': 'integer'}, 'propertyNames': {'pattern': '^-?[0-9]+$'}}, dict[int, int]),
    ({'type': 'object', 'additionalProperties': {'type': 'integer'}, 'propertyNames': {'enum': ['a', 'b']}}, dict[Literal['a', 'b'], int]),
    ({'type': 'string', 'format': 'date-time'}, dt.datetime),
    ({'type': 'string', 'format': 'date'}, dt.date),
    ({'type': 'string', 'format': 'time'}, dt.time),
    ({'type': 'string', 'format': 'uuid'}, UUID),
    ({'type': 'string', 'format': 'decimal'}, Decimal),
    ({'type': 'string', 'format': 'Path'}, Path),
    ({'type': 'string', 'contentEncoding': 'base64'}, bytes),
    ({'type': 'string', 'description': 'd'}, Annotated[str, 'd']),
    ({'type': 'string', 'format': 'date-time', 'description': 'when'}, Annotated[dt.datetime, 'when']),
    ({'type': 'integer', 'minimum': 0}, Annotated[int, JsonSchema(minimum=0)]),
    ({'type': 'integer', 'minimum': 0, 'description': 'n'}, Annotated[int, 'n', JsonSchema(minimum=0)]),
    ({'type': 'string', 'pattern': '^a'}, Annotated[str, JsonSchema(pattern='^a')]),
    ({'type': 'string', 'format': 'email'}, Annotated[str, JsonSchema(format='email')]),
    ({'type': 'string', 'format': 'uri', 'minLength': 1}, Annotated[str, JsonSchema(format='uri', minLength=1)]),
    ({'type': 'string', 'title': 'Q'}, str),
    ({'type': 'integer', 'default': 3}, int),
], ids=lambda x: repr(x)[:60])
def test_schema2anno(s, expected):
    t = schema2anno(s)
    assert _same(t, expected), t


@pytest.mark.parametrize('s', [{'type': 'integer', 'minimum': 0}, {'type': 'string', 'format': 'email'}, {'type': 'string', 'pattern': '^a'}])
def test_unknown_keywords_are_JsonSchema_and_come_back(s):
    t = schema2anno(s)
    assert isinstance(t.__metadata__[-1], JsonSchema)
    assert handle_type(t) == s


def test_description_is_metadata_but_prints_bare():
    p = mk_param('query', {'type': 'string', 'description': 'The query'}, ['query'])
    assert str(p) == 'query: str' and repr(p) == '<Parameter "query: str">'
    assert p.annotation.__metadata__ == ('The query',) and p.annotation.__origin__ is str
    fn = mk_tool(disp, {'name': 't', 'description': 'T', 'input_schema': SCHEMA})
    hints = typing.get_type_hints(fn, include_extras=True)
    assert _same(hints['q'], Annotated[str, 'The query'])
    assert typing.get_type_hints(fn) == {'q': str, 'n': int}


def test_nullable_is_optional():
    assert _same(schema2anno({'type': 'string', 'nullable': True}), Optional[str])


def test_nullable_spellings_are_optional():
    for s in ({'type': ['integer', 'null']}, {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}, {'oneOf': [{'type': 'integer'}, {'type': 'null'}]}):
        assert _same(schema2anno(s), Optional[int])
    fn = mk_tool(disp, {'name': 't', 'input_schema': {'type': 'object', 'properties': {'n': {'type': ['integer', 'null']}}, 'required': ['n']}})
    assert str(inspect.signature(fn)) == '(n: Optional[int])'
    assert fn(None) == ('t', {'n': None}) and fn(2) == ('t', {'n': 2})


# ---------------------------------------------------------------------------------------------------------
# Objects, $ref and $defs
# ---------------------------------------------------------------------------------------------------------

def test_object_is_typeddict():
    td = schema2anno({'type': 'object', 'title': 'Pt', 'properties': {
        'x': {'type': 'integer', 'description': 'X'}, 'y': {'type': 'number', 'default': 0.5}, 'tags': {'type': 'array', 'items': {'type': 'string'}}},
        'required': ['x']})
    assert typing.is_typeddict(td) and td.__name__ == 'Pt'
    assert td.__required_keys__ == {'x'} and td.__optional_keys__ == {'y', 'tags'}
    hints = typing.get_type_hints(td, include_extras=True)
    assert list(hints) == ['x', 'y', 'tags']
    assert _same(hints['x'], Annotated[int, 'X'])
    assert _same(hints['y'], Annotated[float, JsonSchema(default=0.5)])  # the default is kept
    assert hints['tags'] == list[str]
    assert typing.get_type_hints(td) == {'x': int, 'y': float, 'tags': list[str]}


def test_object_all_required_and_untitled():
    td = schema2anno({'type': 'object', 'properties': {'a': {'type': 'string'}}, 'required': ['a']})
    assert td.__name__ == 'Object' and td.__required_keys__ == {'a'} and td.__optional_keys__ == set() and td.__total__


def test_typeddict_schema_comes_back():
    s = {'type': 'object', 'properties': {'x': {'description': 'X', 'type': 'integer'}, 'y': {'description': '', 'default': 0.5, 'type': 'number'}},
         'title': 'Pt', 'required': ['x']}
    defs = {}
    assert handle_type(schema2anno({'$ref': '#/$defs/Pt'}, {'Pt': s}), defs) == {'$ref': '#/$defs/Pt'}
    assert defs == {'Pt': s}


NODE = {'type': 'object', 'title': 'Node', 'required': ['v'],
        'properties': {'v': {'type': 'integer'}, 'kids': {'type': 'array', 'items': {'$ref': '#/$defs/Node'}}}}

def test_recursive_ref():
    node = schema2anno({'$ref': '#/$defs/Node'}, {'Node': NODE})
    assert node.__name__ == 'Node' and node.__required_keys__ == {'v'}
    assert node.__annotations__['kids'] == list[node] and node.__annotations__['kids'].__args__[0] is node


def test_mutually_recursive_refs():
    defs = {'A': {'type': 'object', 'properties': {'b': {'anyOf': [{'$ref': '#/$defs/B'}, {'type': 'null'}]}}},
            'B': {'type': 'object', 'properties': {'a': {'$ref': '#/$defs/A'}, 'n': {'type': 'integer'}}, 'required': ['n']}}
    a = schema2anno({'$ref': '#/$defs/A'}, defs)
    b = typing.get_args(a.__annotations__['b'])[0]
    assert b.__name__ == 'B' and b.__annotations__['a'] is a and b.__required_keys__ == {'n'}


def test_ref_built_once_per_signature():
    tool = {'name': 't', 'input_schema': {'type': 'object', '$defs': {'Node': NODE},
                                          'properties': {'p': {'$ref': '#/$defs/Node'}, 'q': {'$ref': '#/$defs/Node', 'description': 'Q'}}}}
    ps = schema2sig(tool).parameters
    assert ps['p'].annotation is ps['q'].annotation.__origin__
    assert ps['q'].annotation.__metadata__ == ('Q',)


def test_draft07_definitions():
    tool = {'name': 't', 'input_schema': {'type': 'object', 'properties': {'p': {'$ref': '#/definitions/Pt'}}, 'required': ['p'],
                                          'definitions': {'Pt': {'type': 'object', 'properties': {'x': {'type': 'integer'}}}}}}
    p = schema2sig(tool).parameters['p']
    assert p.annotation.__name__ == 'Pt' and p.annotation.__annotations__ == {'x': int}


def test_ref_to_non_object_def():
    defs = {'Color': {'type': 'string', 'enum': ['r', 'g'], 'title': 'Color'},
            'L': {'anyOf': [{'type': 'integer'}, {'type': 'array', 'items': {'$ref': '#/$defs/L'}}]}}
    assert _same(schema2anno({'$ref': '#/$defs/Color'}, defs), Literal['r', 'g'])
    assert _same(schema2anno({'$ref': '#/$defs/L'}, defs), Union[int, list[Any]])  # recursion through a non-object ends in Any


def test_missing_ref():
    with pytest.raises(ValueError, match='Nope'): schema2anno({'$ref': '#/$defs/Nope'}, {})


# ---------------------------------------------------------------------------------------------------------
# Defaults and kinds
# ---------------------------------------------------------------------------------------------------------

def test_defaults_and_kinds():
    sig = schema2sig({'name': 't', 'input_schema': {'type': 'object', 'required': ['a', 'c'], 'properties': {
        'a': {'type': 'string'}, 'b': {'type': 'integer', 'default': 5}, 'c': {'type': 'boolean'}, 'd': {'type': 'string'},
        'e': {'type': 'array', 'items': {'type': 'integer'}, 'default': [1, 2]}}}})
    assert str(sig) == '(a: str, c: bool, *, b: int = 5, d: str = None, e: list[int] = [1, 2])'
    kinds = {nm: p.kind for nm, p in sig.parameters.items()}
    assert kinds == {'a': Parameter.POSITIONAL_OR_KEYWORD, 'c': Parameter.POSITIONAL_OR_KEYWORD,
                     'b': Parameter.KEYWORD_ONLY, 'd': Parameter.KEYWORD_ONLY, 'e': Parameter.KEYWORD_ONLY}


# ---------------------------------------------------------------------------------------------------------
# Property names that are not Python identifiers
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('orig,pynm', [
    ('class', 'class_'), ('from', 'from_'), ('None', 'None_'), ('1st', '_1st'), ('a-b', 'a_b'), ('x$y', 'x_y'), ('a.b', 'a_b'),
    ('', '_'), ('ok_name', 'ok_name'), ('naïve', 'naïve'),
])
def test_py_nm(orig, pynm):
    assert _py_nm(orig) == pynm and pynm.isidentifier()


ODD = {'class': {'type': 'string'}, 'from': {'type': 'integer'}, '1st': {'type': 'string'}, 'approval-policy': {'type': 'string'},
       'x$y': {'type': 'string'}, 'a.b': {'type': 'string'}, 'name': {'type': 'string'}, 'tool': {'type': 'string'}}

def test_odd_names_dispatch_with_original_names():
    tool = {'name': 'odd', 'description': 'Odd', 'input_schema': {'type': 'object', 'properties': ODD, 'required': ['class', 'from']}}
    assert str(schema2sig(tool)) == '(class_: str, from_: int, *, _1st: str = None, approval_policy: str = None, x_y: str = None, a_b: str = None, ' \
        'name: str = None, tool: str = None)'
    fn = mk_tool(disp, tool)
    got = fn('c', 1, _1st='f', approval_policy='never', x_y='xy', a_b='ab', name='nm', tool='tl')
    assert got == ('odd', {'class': 'c', 'from': 1, '1st': 'f', 'approval-policy': 'never', 'x$y': 'xy', 'a.b': 'ab', 'name': 'nm', 'tool': 'tl'})
    assert fn(class_='c', from_=2) == ('odd', {'class': 'c', 'from': 2})
    with pytest.raises(ToolInputError, match='from'): fn('c', 'not an int')


@pytest.mark.parametrize('names', [('a-b', 'a_b'), ('a-b', 'a.b'), ('class', 'class_'), ('1st', '_1st'), ('', '_')])
def test_name_collision(names):
    tool = {'name': 't', 'input_schema': {'type': 'object', 'properties': {nm: {'type': 'string'} for nm in names}}}
    with pytest.raises(ValueError, match='collision'): schema2sig(tool)
    with pytest.raises(ValueError, match='collision'): mk_tool(disp, tool)



@pytest.mark.parametrize('nm', [
    'name', 'tool', 'fn', 'args', 'kwargs', 'check', 'sig', 'dispfn', 'plan', 'cls',
    pytest.param('kw'),
    pytest.param('ok'),
    pytest.param('_extra'),
    pytest.param('_UNSET'),
    pytest.param('_disp'),
    pytest.param('_name'),
    pytest.param('_slow'),
    pytest.param('self'),
])
def test_any_identifier_is_a_property_name(nm):
    tool = {'name': 't', 'input_schema': {'type': 'object', 'properties': {nm: {'type': 'string'}, 'when': {'type': 'string', 'format': 'date'}},
                                          'required': [nm]}}
    fn = mk_tool(disp, tool)
    assert list(inspect.signature(fn).parameters) == [nm, 'when']
    assert fn('v') == ('t', {nm: 'v'})  # every argument has its exact type
    assert fn(**{nm: 'v'}, when=dt.date(2024, 1, 2)) == ('t', {nm: 'v', 'when': '2024-01-02'})  # the checked way


# ---------------------------------------------------------------------------------------------------------
# mk_tool: checking, JSON conversion, async, metadata
# ---------------------------------------------------------------------------------------------------------

TYPED = {'name': 'typed', 'description': 'Typed tool', 'input_schema': {'type': 'object', 'required': ['n', 'color'], '$defs': {
    'Pt': {'type': 'object', 'title': 'Pt', 'properties': {'x': {'type': 'integer'}, 'y': {'type': 'integer'}}, 'required': ['x']}},
    'properties': {
        'n': {'type': 'integer', 'description': 'A number'},
        'color': {'type': 'string', 'enum': ['red', 'green']},
        'when': {'type': 'string', 'format': 'date-time'},
        'day': {'type': 'string', 'format': 'date'},
        'at': {'type': 'string', 'format': 'time'},
        'uid': {'type': 'string', 'format': 'uuid'},
        'amount': {'type': 'string', 'format': 'decimal'},
        'path': {'type': 'string', 'format': 'Path'},
        'blob': {'type': 'string', 'contentEncoding': 'base64'},
        'pt': {'$ref': '#/$defs/Pt'},
        'pair': {'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}]},
        'tags': {'type': 'array', 'items': {'type': 'string'}, 'uniqueItems': True},
        'grid': {'type': 'object', 'additionalProperties': {'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'integer'}]}},
        'maybe': {'anyOf': [{'type': 'integer'}, {'type': 'null'}], 'default': None},
    }}}


@pytest.fixture(scope='module')
def typed(): return mk_tool(disp, TYPED)


def test_mk_tool_metadata(typed):
    assert typed.__name__ == typed.__qualname__ == 'typed' and typed.__doc__ == 'Typed tool'
    assert typed.__signature__ is inspect.signature(typed) and str(inspect.signature(typed)) == str(schema2sig(TYPED))  # a fresh `Pt` each time
    assert str(inspect.signature(typed)).startswith("(n: int, color: Literal['red', 'green'], *, when: datetime.datetime = None")
    assert not inspect.iscoroutinefunction(typed)
    s = get_schema(typed)
    assert s['name'] == 'typed' and s['description'] == 'Typed tool' and s['input_schema']['required'] == ['n', 'color']
    props = s['input_schema']['properties']
    assert props['n'] == {'description': 'A number', 'type': 'integer'}
    assert props['color'] == {'description': '', 'type': 'string', 'enum': ['red', 'green']}
    assert props['when'] == {'description': '', 'default': None, 'type': 'string', 'format': 'date-time'}
    assert props['pt'] == {'description': '', 'default': None, '$ref': '#/$defs/Pt'}
    assert s['input_schema']['$defs']['Pt']['required'] == ['x']


def test_mk_tool_converts_to_json(typed):
    got = typed(1, 'red', when=dt.datetime(2024, 1, 2, 3, 4, 5), day=dt.date(2024, 1, 2), at=dt.time(3, 4), uid=UUID(int=1),
                amount=Decimal('1.5'), path=Path('a/b'), blob=b'hi', pt={'x': 1}, pair=(1, 'a'), tags={'b', 'a'}, grid={'k': (1, 2)})
    assert got == ('typed', {'n': 1, 'color': 'red', 'when': '2024-01-02T03:04:05', 'day': '2024-01-02', 'at': '03:04:00',
                             'uid': '00000000-0000-0000-0000-000000000001', 'amount': '1.5', 'path': 'a/b', 'blob': base64.b64encode(b'hi').decode(),
                             'pt': {'x': 1}, 'pair': [1, 'a'], 'tags': ['a', 'b'], 'grid': {'k': [1, 2]}})
    assert type(got[1]['pt']) is dict


def test_mk_tool_coerces_json_values(typed):
    "What a model would send (JSON) goes through too, in the same form"
    got = typed(1, 'green', when='2024-01-02T03:04:05', pt={'x': 1, 'y': 2}, pair=[1, 'a'], tags=['a'])
    assert got == ('typed', {'n': 1, 'color': 'green', 'when': '2024-01-02T03:04:05', 'pt': {'x': 1, 'y': 2}, 'pair': [1, 'a'], 'tags': ['a']})


@pytest.mark.parametrize('call,match', [
    (lambda f: f(color='red'), "missing required argument.*'n'"),
    (lambda f: f(1), "missing required argument.*'color'"),
    (lambda f: f('x', 'red'), "parameter 'n'"),
    (lambda f: f(1.5, 'red'), "parameter 'n'"),
    (lambda f: f(1, 'blue'), "parameter 'color'.*'red', 'green'"),
    (lambda f: f(1, 'red', when='not a date'), "parameter 'when'"),
    (lambda f: f(1, 'red', pt={'y': 1}), "parameter 'pt'"),
    (lambda f: f(1, 'red', pair=(1, 2, 3)), "parameter 'pair'"),
    (lambda f: f(1, 'red', bogus=1), "unexpected.*'bogus'"),
], ids=['missing-n', 'missing-color', 'str-for-int', 'float-for-int', 'not-in-enum', 'bad-date', 'typeddict-missing-key', 'tuple-length',
        'unexpected'])
def test_mk_tool_checks(typed, call, match):
    with pytest.raises(ToolInputError, match=match): call(typed)


def test_mk_tool_positional_overflow_is_a_TypeError(typed):
    with pytest.raises(TypeError): typed(1, 'red', 'extra')


def test_check_false_passes_values_through():
    seen = []
    fn = mk_tool(lambda nm, /, **kw: seen.append(kw), TYPED, check=False)
    fn('x', 'blue', pt={'y': 1})
    assert seen == [{'n': 'x', 'color': 'blue', 'pt': {'y': 1}}]


def test_null_uses_the_default(typed):
    assert typed(1, 'red', maybe=None) in (('typed', {'n': 1, 'color': 'red'}), ('typed', {'n': 1, 'color': 'red', 'maybe': None}))


def test_any_typed_values_are_converted_to_json():
    fn = mk_tool(disp, {'name': 't', 'input_schema': {'type': 'object', 'properties': {'a': {}, 'b': {'description': 'B'}}}})
    assert fn(a=(1, 2), b=dt.date(2024, 1, 2)) == ('t', {'a': [1, 2], 'b': '2024-01-02'})


def test_async_dispatcher():
    async def adisp(tool, /, **kw):
        await asyncio.sleep(0)
        return tool, kw
    fn = mk_tool(adisp, TYPED)
    assert inspect.iscoroutinefunction(fn)
    assert (fn.__name__, fn.__doc__, str(inspect.signature(fn))) == ('typed', 'Typed tool', str(schema2sig(TYPED)))
    assert asyncio.run(fn(1, 'red')) == ('typed', {'n': 1, 'color': 'red'})
    assert asyncio.run(fn(1, 'red', day=dt.date(2024, 1, 2))) == ('typed', {'n': 1, 'color': 'red', 'day': '2024-01-02'})

    async def bad(): return await fn(1, 'blue')
    with pytest.raises(ToolInputError, match='color'): asyncio.run(bad())
    assert get_schema(fn)['input_schema'] == get_schema(mk_tool(disp, TYPED))['input_schema']


# ---------------------------------------------------------------------------------------------------------
# Seed 000, "Schema to function"
# ---------------------------------------------------------------------------------------------------------

SEED_TOOL = dict(
    description='Find real-…',
    inputSchema={
        '$schema': 'http://json-schema.org/draft-07/schema#',
        **dict(
            additionalProperties=False,
            properties=dict(
                language=dict(description='Filter by …', items={'type': 'string'}, type='array'),
                matchCase=dict(default=False, description='Whether th…', type='boolean'),
                path=dict(description='Filter by …', type='string'),
                query=dict(description='The litera…', type='string'),
                useRegexp=dict(default=False, description='Whether to…', type='boolean')),
            required=['query'],
            type='object')},
    name='searchGitHub')


@pytest.fixture
def seed_tool(): return dict2obj(SEED_TOOL)


def test_seed_mk_param(seed_tool):
    props, req = seed_tool.inputSchema['properties'], seed_tool.inputSchema['required']
    assert list(props) == ['language', 'matchCase', 'path', 'query', 'useRegexp']
    assert props.matchCase == {'default': False, 'description': 'Whether th…', 'type': 'boolean'}
    p = mk_param('query', props.query, req)
    assert (repr(p), p.kind) == ('<Parameter "query: str">', Parameter.POSITIONAL_OR_KEYWORD)
    p = mk_param('language', props.language, req)
    assert (repr(p), p.kind) == ('<Parameter "language: list[str] = None">', Parameter.KEYWORD_ONLY)
    assert str(mk_param('match-case', props.matchCase, req, pynm='match_case')) == 'match_case: bool = False'


def test_seed_schema2sig(seed_tool):
    sig = schema2sig(seed_tool)
    assert repr(sig) == '<Signature (query: str, *, language: list[str] = None, matchCase: bool = False, path: str = None, useRegexp: bool = False)>'


def test_seed_mk_tool(seed_tool):
    def dispatch_eg(name, **kwargs): return f"Called {name} with {kwargs}"
    fn = mk_tool(dispatch_eg, seed_tool)
    assert fn('hello', path='src/') == "Called searchGitHub with {'query': 'hello', 'path': 'src/'}"


def test_seed_hyphenated_names():
    tool_hy = dict2obj(dict(name='run', description='Run command', inputSchema=dict(
        type='object', properties={'cmd': {'type': 'string'}, 'approval-policy': {'type': 'string', 'default': 'never'}}, required=['cmd'])))
    sig = schema2sig(tool_hy)
    assert list(sig.parameters) == ['cmd', 'approval_policy']
    assert sig.parameters['approval_policy'].default == 'never'
    assert sig.parameters['approval_policy'].kind == Parameter.KEYWORD_ONLY
    seen = []
    def disp(name, **kwargs):
        seen.append((name, kwargs))
        return kwargs
    fn = mk_tool(disp, tool_hy)
    assert fn('ls', approval_policy='never') == {'cmd': 'ls', 'approval-policy': 'never'}
    assert seen[-1] == ('run', {'cmd': 'ls', 'approval-policy': 'never'})

    tool_req_hy = dict2obj(dict(name='run', description='Run command', inputSchema=dict(
        type='object', properties={'approval-policy': {'type': 'string'}, 'cmd': {'type': 'string'}}, required=['approval-policy', 'cmd'])))
    fn = mk_tool(disp, tool_req_hy)
    fn('never', 'ls')
    assert seen[-1] == ('run', {'approval-policy': 'never', 'cmd': 'ls'})


def test_seed_collision_and_empty_name():
    tool_collision = dict2obj(dict(name='run', description='Run command', inputSchema=dict(
        type='object', properties={'approval-policy': {'type': 'string'}, 'approval_policy': {'type': 'string'}})))
    with pytest.raises(ValueError, match='collision'): schema2sig(tool_collision)
    assert _py_nm('') == '_'


# ---------------------------------------------------------------------------------------------------------
# Real MCP servers, listed once per module with the official client
# ---------------------------------------------------------------------------------------------------------

def _server_args(mod: str, repo: Path) -> list:
    return ['-m', mod, '--repository', str(repo)] if mod == 'mcp_server_git' else ['-m', mod]


async def _serve(args: list, calls: list):
    "List a server's tools and make `calls` ((tool, args, kwargs)) through `mk_tool` with the session as dispatcher"
    from mcp import ClientSession, StdioServerParameters, stdio_client
    async with stdio_client(StdioServerParameters(command=sys.executable, args=args)) as (r, w):
        async with ClientSession(r, w, read_timeout_seconds=30) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            async def call(nm, /, **kw): return await session.call_tool(nm, kw)
            results = {nm: await mk_tool(call, tools[nm])(*a, **k) for nm, a, k in calls}
            return tools, results


@pytest.fixture(scope='module')
def servers(tmp_path_factory):
    "{tool name: real `mcp.types.Tool`} of the three servers, and the results of a few real calls"
    repo = tmp_path_factory.mktemp('repo')
    subprocess.run(['git', 'init', '-q', str(repo)], check=True, timeout=30)
    calls = {'mcp_server_time': [('get_current_time', ('Etc/UTC',), {}), ('convert_time', ('Etc/UTC', '12:00', 'Asia/Tokyo'), {})],
             'mcp_server_fetch': [],
             'mcp_server_git': [('git_status', (str(repo),), {})]}
    async def main():
        return await asyncio.wait_for(asyncio.gather(*(_serve(_server_args(m, repo), c) for m, c in calls.items())), 90)
    tools, results = {}, {}
    for t, r in asyncio.run(main()): tools.update(t); results.update(r)
    return SimpleNamespace(tools=tools, results=results, repo=repo)


def test_real_tools_are_mcp2_tools(servers):
    from mcp.types import Tool
    assert {'get_current_time', 'convert_time', 'fetch', 'git_status', 'git_log', 'git_add'} <= set(servers.tools)
    assert all(isinstance(t, Tool) for t in servers.tools.values())
    for t in servers.tools.values():  # every real tool converts, and its rebuilt function describes itself
        fn = mk_tool(disp, t)
        assert str(inspect.signature(fn)) == str(schema2sig(t))
        assert set(get_schema(fn)['input_schema']['properties']) == set(t.input_schema['properties'])


@pytest.mark.parametrize('nm,sig', [
    ('get_current_time', '(timezone: str)'),
    ('convert_time', '(source_timezone: str, time: str, target_timezone: str)'),
    ('fetch', '(url: str, *, max_length: int = 5000, start_index: int = 0, raw: bool = False)'),
    ('git_status', '(repo_path: str)'),
    ('git_diff', '(repo_path: str, target: str, *, context_lines: int = 3)'),
    ('git_add', '(repo_path: str, files: list[str])'),
    ('git_log', '(repo_path: str, *, max_count: int = 10, start_timestamp: Optional[str] = None, end_timestamp: Optional[str] = None)'),
    ('git_create_branch', '(repo_path: str, branch_name: str, *, base_branch: Optional[str] = None)'),
    ('git_branch', '(repo_path: str, branch_type: str, *, contains: Optional[str] = None, not_contains: Optional[str] = None)'),
])
def test_real_signatures(servers, nm, sig):
    assert str(schema2sig(servers.tools[nm])) == sig


def test_real_annotations(servers):
    ps = schema2sig(servers.tools['get_current_time']).parameters
    assert ps['timezone'].annotation.__origin__ is str and 'IANA timezone' in ps['timezone'].annotation.__metadata__[0]
    assert ps['timezone'].kind == Parameter.POSITIONAL_OR_KEYWORD
    ps = schema2sig(servers.tools['convert_time']).parameters
    assert _same(ps['time'].annotation, Annotated[str, 'Time to convert in 24-hour format (HH:MM)'])
    ps = schema2sig(servers.tools['fetch']).parameters
    assert _same(ps['url'].annotation, Annotated[str, 'URL to fetch', JsonSchema(format='uri', minLength=1)])
    assert _same(ps['max_length'].annotation, Annotated[int, 'Maximum number of characters to return.', JsonSchema(maximum=999999, minimum=1)])
    assert (ps['max_length'].default, ps['raw'].default, ps['raw'].annotation.__origin__) == (5000, False, bool)
    ps = schema2sig(servers.tools['git_log']).parameters
    assert ps['repo_path'].annotation is str and ps['max_count'].annotation is int
    assert _same(ps['start_timestamp'].annotation.__origin__, Optional[str]) and 'ISO 8601' in ps['start_timestamp'].annotation.__metadata__[0]


def test_real_schemas_come_back(servers):
    "The rebuilt function's schema keeps every keyword of the server's, titles aside (documented: `title` is dropped)"
    def strip(s): return {k: strip(v) if isinstance(v, dict) else v for k, v in s.items() if k != 'title'}
    for nm in ('get_current_time', 'convert_time', 'fetch', 'git_log'):
        tool = servers.tools[nm]
        props = get_schema(mk_tool(disp, tool))['input_schema']['properties']
        for k, ps in tool.input_schema['properties'].items():
            assert props[k] == {'description': '', **strip(ps)}, (nm, k)


def test_real_git_add_keeps_min_items(servers):
    props = get_schema(mk_tool(disp, servers.tools['git_add']))['input_schema']['properties']
    assert props['files']['minItems'] == 1


def test_real_calls(servers):
    r = servers.results['get_current_time']
    assert not r.is_error and r.structured_content['timezone'] == 'Etc/UTC'
    r = servers.results['convert_time']
    assert not r.is_error and r.structured_content['target']['timezone'] == 'Asia/Tokyo'
    r = servers.results['git_status']
    assert not r.is_error and 'Repository status' in r.content[0].text


def test_real_tool_checks_before_sending(servers):
    fn = mk_tool(disp, servers.tools['fetch'])
    assert fn('https://example.com', raw=True) == ('fetch', {'url': 'https://example.com', 'raw': True})
    with pytest.raises(ToolInputError, match='max_length'): fn('https://example.com', max_length='lots')
    with pytest.raises(ToolInputError, match='url'): fn(raw=True)
