"""`tool_parts`, `schema2anno`, `mk_param`, `schema2sig` and `mk_tool`: from JSON tool schemas back to Python.

The schema is the contract: a built tool sends on exactly the JSON values it was given (strings never re-formatted,
explicit nulls kept, extra keys where the schema allows them) and refuses what the schema forbids, all problems in
one `ToolInputError`. Here: every tool form, the annotation each schema shape gets (table-driven, plain typing),
property names Python can't use as they are, Python values sent as JSON, schemas real servers send that must never
crash the build, malformed schemas, untrusted keyword values, async, the round trip through `get_schema`, memory,
the reference's examples with their exact reprs, and three real MCP servers (`mcp-server-time`, `mcp-server-fetch`,
`mcp-server-git`) listed once per module with the official `mcp` client. `test_inverse_corpus.py` runs the same
contract over a corpus of real servers' schemas with generated arguments.
"""
import asyncio
import dataclasses
import datetime as dt
import enum
import gc
import inspect
import subprocess
import sys
import typing
import warnings
import weakref
from decimal import Decimal
from inspect import Parameter
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any, Literal, NamedTuple, Optional, Union
from uuid import UUID

import pytest
from fastcore.xtras import dict2obj

from funccall import ToolInputError, get_schema, handle_type, mk_param, mk_tool, schema2anno, schema2sig, tool_parts
from funccall.core import inverse
from funccall.core.inverse import _py_nm


SCHEMA = {'type': 'object', 'properties': {'q': {'type': 'string', 'description': 'The query'}, 'n': {'type': 'integer', 'default': 3}},
          'required': ['q']}
SIG = '(q: str, *, n: int = 3)'


def disp(tool, /, **kw):
    "A dispatcher that returns what it was sent; positional-only, so a property may be called `tool` or `name`"
    return tool, kw


def tool_of(props: dict, req=(), nm='t', **root) -> dict:
    return {'name': nm, 'description': 'A tool', 'inputSchema': {'type': 'object', 'properties': props, 'required': list(req), **root}}


def _same(a, b) -> bool:
    "Annotations equal, with union members in the same order (`==` on unions ignores order)"
    return a == b and typing.get_args(a) == typing.get_args(b)


def refused(fn, /, *args, **kw) -> ToolInputError:
    "The ToolInputError `fn(*args, **kw)` raises"
    with pytest.raises(ToolInputError) as e: fn(*args, **kw)
    return e.value


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
    assert get_schema(fn) == {'name': 'search', 'description': 'Search it', 'input_schema': SCHEMA}


def test_mcp2_tool_is_the_real_class():
    from mcp.types import Tool
    tool = _mcp2_tool()
    assert isinstance(tool, Tool) and not hasattr(tool, 'inputSchema')
    assert schema2sig(tool).parameters['q'].annotation is str


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
    assert fn(a=1) == ('ping', {'a': 1})  # the schema allows any other key: it is sent
    assert get_schema(fn)['input_schema'] == tool_parts(tool)[2]


def test_closed_object_refuses_other_keys():
    fn = mk_tool(disp, tool_of({'a': {'type': 'integer'}}, additionalProperties=False))
    e = refused(fn, a=1, bogus=2)
    assert "unexpected key 'bogus'" in str(e) and "Tool 't'" in str(e)


def test_tool_parts_defaults():
    assert tool_parts({}) == ('', '', {'type': 'object', 'properties': {}})
    assert tool_parts(SimpleNamespace(name='x')) == ('x', '', {'type': 'object', 'properties': {}})


# ---------------------------------------------------------------------------------------------------------
# Annotations, table-driven: plain typing, descriptions and constraints stay in the schema
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('s,expected', [
    ({'type': 'string'}, str),
    ({'type': 'integer'}, int),
    ({'type': 'number'}, float),
    ({'type': 'boolean'}, bool),
    ({'type': 'null'}, None),
    ({}, Any),
    (True, Any),
    (False, Any),
    ({'type': 'object'}, dict),
    ({'type': 'array'}, list[Any]),
    ({'type': 'string', 'enum': ['a', 'b']}, Literal['a', 'b']),
    ({'enum': ['a', 1]}, Literal['a', 1]),
    ({'enum': ['a', None]}, Literal['a', None]),
    ({'type': 'integer', 'enum': [1, 2]}, Literal[1, 2]),
    ({'const': 3}, Literal[3]),
    ({'const': 'x'}, Literal['x']),
    ({'enum': [{'a': 1}, [1, 2]]}, Any),
    ({'const': {'a': [1]}}, Any),
    ({'enum': [1.5, 2.5]}, Any),
    ({'type': ['string', 'null']}, Optional[str]),
    ({'type': ['string', 'integer']}, Union[str, int]),
    ({'type': ['integer', 'string', 'null']}, Union[int, str, None]),
    ({'type': ['array', 'null'], 'items': {'type': 'integer'}}, Optional[list[int]]),
    ({'type': ['string', 'null'], 'format': 'date-time'}, Optional[str]),
    ({'anyOf': [{'type': 'string'}, {'type': 'integer'}]}, Union[str, int]),
    ({'anyOf': [{'type': 'integer'}, {'type': 'string'}]}, Union[int, str]),
    ({'oneOf': [{'type': 'string'}, {'type': 'integer'}]}, Union[str, int]),
    ({'anyOf': [{'type': 'string'}, {'type': 'null'}]}, Optional[str]),
    ({'anyOf': [{'type': 'string', 'minLength': 1}, {'type': 'null'}]}, Optional[str]),
    ({'anyOf': [{'type': 'integer', 'minimum': 1}, {'type': 'null'}]}, Optional[int]),
    # a union member's description has no other place to stay: `Annotated`, so `handle_type` gives the schema back (issue 29)
    ({'anyOf': [{'type': 'string', 'description': 'd'}, {'type': 'null'}], 'default': None}, Optional[Annotated[str, 'd']]),
    ({'anyOf': [{'type': 'string'}, {}]}, Any),
    ({'allOf': [{'type': 'integer'}], 'description': 'n'}, int),
    ({'allOf': [{'type': 'integer'}, {'type': 'number'}]}, Any),
    ({'type': 'array', 'items': {'type': 'integer'}}, list[int]),
    ({'type': 'array', 'items': {'type': 'array', 'items': {'type': 'string'}}}, list[list[str]]),
    ({'type': 'array', 'items': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}}, list[Optional[int]]),
    ({'type': 'array', 'items': {'type': 'integer'}, 'uniqueItems': True}, set[int]),
    ({'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}]}, tuple[int, str]),
    ({'type': 'array', 'items': [{'type': 'integer'}, {'type': 'string'}]}, tuple[int, str]),
    ({'type': 'array', 'items': {}, 'maxItems': 0}, tuple[()]),
    ({'type': 'object', 'additionalProperties': {'type': 'integer'}}, dict[str, int]),
    ({'type': 'object', 'additionalProperties': {'type': 'integer'}, 'propertyNames': {'pattern': '^-?[0-9]+$'}}, dict[int, int]),
    ({'type': 'object', 'additionalProperties': {'type': 'integer'}, 'propertyNames': {'enum': ['a', 'b']}}, dict[Literal['a', 'b'], int]),
    ({'type': 'string', 'format': 'date-time'}, str),
    ({'type': 'string', 'format': 'date'}, str),
    ({'type': 'string', 'format': 'time'}, str),
    ({'type': 'string', 'format': 'uuid'}, str),
    ({'type': 'string', 'format': 'decimal'}, str),
    ({'type': 'string', 'format': 'Path'}, str),
    ({'type': 'string', 'contentEncoding': 'base64'}, str),
    ({'type': 'string', 'format': 'email', 'description': 'd', 'pattern': '^a', 'minLength': 1}, str),
    ({'type': 'integer', 'minimum': 0, 'description': 'n'}, int),
    ({'type': 'string', 'nullable': True}, Optional[str]),
    ({'not': {'type': 'string'}}, Any),
    ({'if': {'type': 'string'}, 'then': {'minLength': 1}}, Any),
    ({'type': 'file'}, Any),
    ({'type': {'a': 1}}, Any),
    ({'type': [{'a': 1}, 'string']}, Any),
    ({'type': 5}, Any),
], ids=lambda x: repr(x)[:60])
def test_schema2anno(s, expected):
    t = schema2anno(s)
    assert _same(t, expected), t


def test_annotations_are_plain():
    "The reference shows `query: str`: the annotation is `str` itself, descriptions stay in the schema"
    p = mk_param('query', {'type': 'string', 'description': 'The query'}, ['query'])
    assert (repr(p), p.annotation is str) == ('<Parameter "query: str">', True)
    fn = mk_tool(disp, {'name': 't', 'description': 'T', 'input_schema': SCHEMA})
    assert typing.get_type_hints(fn, include_extras=True) == {'q': str, 'n': int} == fn.__annotations__


def test_strings_stay_strings_through_call_func():
    "A formatted string is `str` in the signature, so `call_func` (a model's call) sends the model's text as it came"
    from funccall import call_func
    fn = mk_tool(disp, tool_of({'when': {'type': 'string', 'format': 'date-time'}, 'id': {'type': 'string', 'format': 'uuid'}}))
    args = {'when': '2024-01-02T03:04:05Z', 'id': 'A0B1C2D3-0000-0000-0000-00000000000F'}
    assert call_func('t', args, {'t': fn}) == ('t', args)


def test_annotated_optional_constraints_build():
    "funccall's own schema for `Optional[Annotated[int, Field(ge=1)]]` (an anyOf with a constrained branch) builds and checks"
    tool = tool_of({'limit': {'anyOf': [{'type': 'integer', 'minimum': 1}, {'type': 'null'}], 'default': None},
                    'q': {'anyOf': [{'type': 'string', 'minLength': 1}, {'type': 'null'}]}})
    fn = mk_tool(disp, tool)
    assert str(inspect.signature(fn)) == '(*, limit: Optional[int] = None, q: Optional[str] = None)'
    assert fn(limit=None, q=None) == ('t', {'limit': None, 'q': None})  # explicit nulls are sent
    assert fn(limit=2) == ('t', {'limit': 2})
    e = refused(fn, limit=0, q='')
    assert [p.path for p in e.errors] == ['limit', 'q']


# ---------------------------------------------------------------------------------------------------------
# Objects, $ref and $defs
# ---------------------------------------------------------------------------------------------------------

def test_object_is_typeddict():
    td = schema2anno({'type': 'object', 'title': 'Pt', 'properties': {
        'x': {'type': 'integer', 'description': 'X'}, 'y': {'type': 'number', 'default': 0.5}, 'tags': {'type': 'array', 'items': {'type': 'string'}}},
        'required': ['x']})
    assert typing.is_typeddict(td) and td.__name__ == 'Pt'
    assert td.__required_keys__ == {'x'} and td.__optional_keys__ == {'y', 'tags'}
    assert typing.get_type_hints(td, include_extras=True) == {'x': int, 'y': float, 'tags': list[str]}


def test_object_all_required_and_untitled():
    td = schema2anno({'type': 'object', 'properties': {'a': {'type': 'string'}}, 'required': ['a']})
    assert td.__name__ == 'Object' and td.__required_keys__ == {'a'} and td.__optional_keys__ == set() and td.__total__


def test_typeddict_schema_comes_back_as_types():
    s = {'type': 'object', 'properties': {'x': {'description': '', 'type': 'integer'}, 'y': {'description': '', 'type': 'number'}},
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
    assert ps['p'].annotation is ps['q'].annotation and ps['p'].annotation.__name__ == 'Node'
    fn = mk_tool(disp, tool)
    assert fn(p={'v': 1, 'kids': [{'v': 2, 'kids': []}]}) == ('t', {'p': {'v': 1, 'kids': [{'v': 2, 'kids': []}]}})
    assert refused(fn, p={'v': 1, 'kids': [{'kids': []}]}).errors[0].path == 'p.kids[0]'


def test_draft07_definitions():
    tool = {'name': 't', 'input_schema': {'$schema': 'http://json-schema.org/draft-07/schema#', 'type': 'object',
                                          'properties': {'p': {'$ref': '#/definitions/Pt'}}, 'required': ['p'],
                                          'definitions': {'Pt': {'type': 'object', 'properties': {'x': {'type': 'integer'}}}}}}
    p = schema2sig(tool).parameters['p']
    assert p.annotation.__name__ == 'Pt' and p.annotation.__annotations__ == {'x': int}
    fn = mk_tool(disp, tool)
    assert fn({'x': 1}) == ('t', {'p': {'x': 1}})
    assert refused(fn, {'x': 'a'}).errors[0].path == 'p.x'


def test_json_pointer_refs():
    "A `$ref` is a JSON Pointer into the whole document, escapes and all, not just a name in `$defs`"
    tool = tool_of({'a': {'$ref': '#/$defs/A~1B/properties/n'}, 'b': {'$ref': '#/properties/a'}, 'c': {'$ref': '#/$defs/with%20space'}},
                   **{'$defs': {'A/B': {'type': 'object', 'properties': {'n': {'type': 'integer'}}}, 'with space': {'type': 'string'}}})
    ps = schema2sig(tool).parameters
    assert (ps['a'].annotation, ps['b'].annotation, ps['c'].annotation) == (int, int, str)
    fn = mk_tool(disp, tool)
    assert fn(a=1, b=2, c='x') == ('t', {'a': 1, 'b': 2, 'c': 'x'})
    assert [p.path for p in refused(fn, a='1', b='2', c=3).errors] == ['a', 'b', 'c']


def test_ref_to_non_object_def():
    defs = {'Color': {'type': 'string', 'enum': ['r', 'g'], 'title': 'Color'},
            'L': {'anyOf': [{'type': 'integer'}, {'type': 'array', 'items': {'$ref': '#/$defs/L'}}]}}
    assert _same(schema2anno({'$ref': '#/$defs/Color'}, defs), Literal['r', 'g'])
    assert _same(schema2anno({'$ref': '#/$defs/L'}, defs), Union[int, list[Any]])  # recursion through a non-object ends in Any
    fn = mk_tool(disp, tool_of({'l': {'$ref': '#/$defs/L'}}, **{'$defs': defs}))
    assert fn(l=[1, [2, [3]]]) == ('t', {'l': [1, [2, [3]]]})
    assert refused(fn, l=[1, ['x']]).errors


def test_missing_ref_is_a_clear_error():
    with pytest.raises(ValueError, match='Nope'): schema2anno({'$ref': '#/$defs/Nope'}, {})
    with pytest.raises(ValueError, match=r"Tool 't', at /properties/p/\$ref: '#/\$defs/Nope' points at nothing"):
        mk_tool(disp, tool_of({'p': {'$ref': '#/$defs/Nope'}}))


def test_remote_ref_is_any():
    assert schema2anno({'$ref': 'https://example.com/schema.json'}) is Any


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


def test_required_names_an_undeclared_property():
    "A `required` name with no property is still an argument the tool needs: a parameter of any value"
    fn = mk_tool(disp, tool_of({'a': {'type': 'string'}}, req=['a', 'ghost']))
    assert str(inspect.signature(fn)) == '(a: str, ghost: Any)'
    assert fn('x', [1]) == ('t', {'a': 'x', 'ghost': [1]})
    assert "missing required key 'ghost'" in str(refused(fn, 'x'))


# ---------------------------------------------------------------------------------------------------------
# Property names that are not Python identifiers, or are Python's own names
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('orig,pynm', [
    ('class', 'class_'), ('from', 'from_'), ('None', 'None_'), ('1st', '_1st'), ('a-b', 'a_b'), ('x$y', 'x_y'), ('a.b', 'a_b'),
    ('', '_'), ('ok_name', 'ok_name'), ('naïve', 'naïve'), ('auth-method', 'auth_method'), ('$filter', '_filter'), ('2fa', '_2fa'),
    ('ｑ', 'q'), ('ﬁle', 'file'), ('ℌ', 'H'), ('x²', 'x2'), ('__debug__', '__debug___'), ('type', 'type'), ('self', 'self'),
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
    assert fn('c', 2, **{'approval-policy': 'x'}) == ('odd', {'class': 'c', 'from': 2, 'approval-policy': 'x'})  # by its own name too
    assert 'given twice' in str(refused(fn, 'c', 2, approval_policy='x', **{'approval-policy': 'y'}))
    assert refused(fn, 'c', 'not an int').errors[0].path == 'from'


def test_nfkc_names_stay_callable():
    "Python reads `ｑ` as `q`: the parameter is named as Python reads it, and the dispatcher gets the original name"
    fn = mk_tool(disp, tool_of({'ｑ': {'type': 'string'}, 'ﬁle': {'type': 'string'}, 'ℌ': {'type': 'integer'}, 'x²': {}, '__debug__': {}}))
    assert list(inspect.signature(fn).parameters) == ['q', 'file', 'H', 'x2', '__debug___']
    assert fn(q='a', file='b', H=1, x2=[2], __debug___=None) == ('t', {'ｑ': 'a', 'ﬁle': 'b', 'ℌ': 1, 'x²': [2], '__debug__': None})


@pytest.mark.parametrize('names', [('a-b', 'a_b'), ('a-b', 'a.b'), ('class', 'class_'), ('1st', '_1st'), ('', '_'), ('ｑ', 'q')])
def test_name_collision(names):
    tool = {'name': 't', 'input_schema': {'type': 'object', 'properties': {nm: {'type': 'string'} for nm in names}}}
    with pytest.raises(ValueError, match="Tool 't': name collision"): schema2sig(tool)
    with pytest.raises(ValueError, match='collision'): mk_tool(disp, tool)


# the generated code's own names, Python's builtins and keywords: each is just a parameter
OWN_NAMES = ['name', 'tool', 'fn', 'args', 'kwargs', 'check', 'sig', 'dispfn', 'plan', 'cls', 'kw', 'ok', 'extra', 'type', 'id', 'list',
             'self', 'dict', 'len', 'all', 'print', '_U', '_disp', '_name', '_slow', '_type', '_K0', '_S0', '_P0', '_R0', '__builtins__', 'a0']

@pytest.mark.parametrize('nm', OWN_NAMES)
def test_any_identifier_is_a_property_name(nm):
    tool = {'name': 't', 'input_schema': {'type': 'object', 'properties': {nm: {'type': 'string'}, 'when': {'type': 'string', 'format': 'date'}},
                                          'required': [nm]}}
    fn = mk_tool(disp, tool)
    assert list(inspect.signature(fn).parameters) == [nm, 'when']
    for _ in range(2):  # the first call and the ones after it (which have their quick tests)
        assert fn('v') == ('t', {nm: 'v'})
        assert fn(**{nm: 'v'}, when=dt.date(2024, 1, 2)) == ('t', {nm: 'v', 'when': '2024-01-02'})
        assert refused(fn, 5).errors[0].path == nm


def test_all_own_names_at_once():
    props = {nm: {'type': 'integer'} for nm in OWN_NAMES}
    fn = mk_tool(disp, tool_of(props, req=OWN_NAMES[:5]))
    args = {nm: i for i, nm in enumerate(OWN_NAMES)}
    assert fn(**args) == fn(**args) == ('t', args)
    assert {p.path for p in refused(fn, **{**args, 'type': 'x', 'kw': 'y'}).errors} == {'type', 'kw'}


# ---------------------------------------------------------------------------------------------------------
# Exactly what the schema accepts: sent unchanged; refused with every problem at once
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
        'pair': {'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}], 'items': False},
        'tags': {'type': 'array', 'items': {'type': 'string'}, 'uniqueItems': True},
        'grid': {'type': 'object', 'additionalProperties': {'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'integer'}]}},
        'maybe': {'anyOf': [{'type': 'integer'}, {'type': 'null'}], 'default': None},
    }}}


@pytest.fixture(scope='module')
def typed(): return mk_tool(disp, TYPED)


def test_mk_tool_metadata(typed):
    assert typed.__name__ == typed.__qualname__ == 'typed' and typed.__doc__ == 'Typed tool'
    assert typed.__signature__ is inspect.signature(typed)
    assert str(inspect.signature(typed)).startswith("(n: int, color: Literal['red', 'green'], *, when: str = None, day: str = None")
    assert typed.__annotations__ == {k: p.annotation for k, p in inspect.signature(typed).parameters.items()}
    assert not inspect.iscoroutinefunction(typed)


def test_get_schema_gives_back_the_tools_own_schema(typed):
    s = get_schema(typed)
    assert s == {'name': 'typed', 'description': 'Typed tool', 'input_schema': TYPED['input_schema']}
    s['input_schema']['properties'].clear()  # a copy: the tool's own is untouched
    assert get_schema(typed)['input_schema'] == TYPED['input_schema']
    assert get_schema(typed, pname='parameters', name='other')['parameters'] == TYPED['input_schema']
    assert (get_schema(typed, name='other', description='D')['name'], get_schema(typed, description='D')['description']) == ('other', 'D')


def test_json_values_are_sent_unchanged(typed):
    "Strings are never re-formatted: an upper-case UUID, a date-time with its offset, whatever the format"
    args = dict(when='2024-01-02T03:04:05.000+02:00', day='2024-01-02', at='3pm', uid='A0B1C2D3-0000-0000-0000-00000000000F',
                amount='1.50', path='a//b', blob='aGk=', pt={'x': 1, 'extra': [1]}, pair=[1, 'a'], tags=['b', 'a'], grid={'k': [1, 2]})
    got = typed(1, 'red', **args)
    assert got == ('typed', {'n': 1, 'color': 'red', **args})
    assert got[1]['uid'] is args['uid'] and got[1]['pt'] is args['pt']  # the very objects: nothing went through UUID and back


def test_explicit_null_is_sent_where_the_schema_takes_it(typed):
    assert typed(1, 'red', maybe=None) == ('typed', {'n': 1, 'color': 'red', 'maybe': None})


def test_none_for_an_optional_without_null_is_not_given(typed):
    "The signature shows `= None` for an optional parameter: passing None is passing the default, so nothing is sent"
    assert typed(1, 'red', when=None, pt=None) == ('typed', {'n': 1, 'color': 'red'})
    assert refused(typed, None, 'red').errors[0].path == 'n'  # a required one has no default to fall back on


def test_python_values_are_sent_as_json(typed):
    got = typed(1, 'red', when=dt.datetime(2024, 1, 2, 3, 4, 5), day=dt.date(2024, 1, 2), at=dt.time(3, 4), uid=UUID(int=1),
                amount=Decimal('1.5'), path=Path('a/b'), blob=b'hi', pt={'x': 1}, pair=(1, 'a'), tags={'b', 'a'}, grid={'k': (1, 2)})
    assert got == ('typed', {'n': 1, 'color': 'red', 'when': '2024-01-02T03:04:05', 'day': '2024-01-02', 'at': '03:04:00',
                             'uid': '00000000-0000-0000-0000-000000000001', 'amount': '1.5', 'path': 'a/b', 'blob': 'aGk=',
                             'pt': {'x': 1}, 'pair': [1, 'a'], 'tags': ['a', 'b'], 'grid': {'k': [1, 2]}})


class Color(enum.Enum):
    red = 'red'
    green = 'green'


@dataclasses.dataclass
class DPt:
    x: int
    y: int = 0


class NPt(NamedTuple):
    x: int
    y: int


def test_python_objects_are_sent_as_json(typed):
    from pydantic import BaseModel
    class MPt(BaseModel):
        x: int
    assert typed(1, Color.green, pt=DPt(1, 2))[1] == {'n': 1, 'color': 'green', 'pt': {'x': 1, 'y': 2}}
    assert typed(1, 'red', pt=NPt(3, 4))[1]['pt'] == {'x': 3, 'y': 4}
    assert typed(1, 'red', pt=MPt(x=5))[1]['pt'] == {'x': 5}
    # converted first, then checked like any other value
    assert refused(typed, dt.date(2024, 1, 2), 'red').errors[0] == ('n', "expected an integer, got '2024-01-02'")
    e = refused(typed, 1, 'red', pt=object())
    assert e.errors[0].path == 'pt' and "can't be held by JSON" in e.errors[0].message


@pytest.mark.parametrize('call,path,words', [
    (lambda f: f(color='red'), '', "missing required key 'n'"),
    (lambda f: f('x', 'red'), 'n', 'expected an integer'),
    (lambda f: f(1.5, 'red'), 'n', 'expected an integer'),
    (lambda f: f(True, 'red'), 'n', 'expected an integer'),
    (lambda f: f(1, 'blue'), 'color', "'red', 'green'"),
    (lambda f: f(1, 'red', pt={'y': 1}), 'pt', "missing required key 'x'"),
    (lambda f: f(1, 'red', pair=(1, 2)), 'pair[1]', 'expected a string'),
    (lambda f: f(1, 'red', pair=[1, 'a', 3]), 'pair', ''),
    (lambda f: f(1, 'red', tags=['a', 'a']), 'tags', ''),
    (lambda f: f(1, 'red', grid={'k': [1, 'x']}), "grid.k[1]", 'expected an integer'),
], ids=['missing-n', 'str-for-int', 'float-for-int', 'bool-for-int', 'not-in-enum', 'object-missing-key', 'tuple-item', 'tuple-length',
        'unique-items', 'nested'])
def test_mk_tool_checks(typed, call, path, words):
    e = refused(call, typed)
    assert e.errors[0].path == path and words in e.errors[0].message
    assert str(e).startswith("Tool 'typed'")


def test_all_problems_at_once(typed):
    e = refused(typed, 'x', 'blue', pt={'x': 'y'}, tags=[1])
    assert [p.path for p in e.errors] == ['n', 'color', 'pt.x', 'tags[0]']
    assert str(e).startswith("Tool 'typed' got 4 bad arguments:\n- n: expected an integer, got 'x'")


def test_positional_overflow_is_a_TypeError(typed):
    with pytest.raises(TypeError): typed(1, 'red', 'extra')


NESTED = tool_of({
    'items': {'type': 'array', 'items': {'type': 'object', 'properties': {'sku': {'type': 'string'}, 'qty': {'type': 'integer', 'minimum': 1}},
                                         'required': ['sku']}},
    'open': {'type': 'object', 'properties': {'a': {'type': 'integer'}}},
    'shape': {'anyOf': [{'type': 'object', 'properties': {'r': {'type': 'number'}}, 'required': ['r']},
                        {'type': 'object', 'properties': {'w': {'type': 'number'}, 'h': {'type': 'number'}}, 'required': ['w', 'h']}]},
    'kind': {'oneOf': [{'type': 'string'}, {'type': 'integer'}]},
}, nm='order')


def test_nested_objects_keep_extra_keys():
    fn = mk_tool(disp, NESTED)
    args = dict(items=[{'sku': 'a', 'note': 'x'}], open={'a': 1, 'b': {'c': None}}, shape={'w': 1, 'h': 2.5, 'unit': 'cm'}, kind=3)
    assert fn(**args) == fn(**args) == ('order', args)


def test_paths_name_the_place():
    fn = mk_tool(disp, NESTED)
    e = refused(fn, items=[{'sku': 'a'}, {'sku': 'b'}, {'sku': 5, 'qty': 0}])
    assert [p.path for p in e.errors] == ['items[2].sku', 'items[2].qty']
    assert refused(fn, shape={'w': 1}).errors[0].path == 'shape'


def test_untrusted_values_are_bounded():
    "A huge or deep value is refused in bounded time, and the message quotes it cut short"
    fn = mk_tool(disp, NESTED)
    deep = []
    for _ in range(100_000): deep = [deep]
    e = refused(fn, kind=deep)
    assert len(str(e)) < 400
    e = refused(fn, kind=['x' * 10**6])
    assert len(str(e)) < 400
    big = refused(fn, items=[{'qty': 0}] * 10_000)
    assert len(big.errors) <= 1000 and len(str(big)) < 2000  # counted up to 1000, ten shown
    assert "got at least 1000 bad arguments (the first 10 shown):" in str(big)


def test_check_false_passes_values_through():
    seen = []
    fn = mk_tool(lambda nm, /, **kw: seen.append(kw), TYPED, check=False)
    fn('x', 'blue', pt={'y': 1}, when=dt.date(2024, 1, 2))
    assert seen == [{'n': 'x', 'color': 'blue', 'pt': {'y': 1}, 'when': '2024-01-02'}]
    fn('x', 'blue'), fn(None, 'blue', maybe='m'), fn(1, 2, day=dt.date(2024, 1, 2))  # the calls after the first: the inline way
    assert seen[1:] == [{'n': 'x', 'color': 'blue'}, {'n': None, 'color': 'blue', 'maybe': 'm'}, {'n': 1, 'color': 2, 'day': '2024-01-02'}]


def test_any_typed_values_are_converted_to_json():
    fn = mk_tool(disp, {'name': 't', 'input_schema': {'type': 'object', 'properties': {'a': {}, 'b': {'description': 'B'}}}})
    assert fn(a=(1, 2), b=dt.date(2024, 1, 2)) == ('t', {'a': [1, 2], 'b': '2024-01-02'})
    assert fn(a={'k': [1, {'z': None}]}) == ('t', {'a': {'k': [1, {'z': None}]}})


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
    assert get_schema(fn) == get_schema(mk_tool(disp, TYPED))


# ---------------------------------------------------------------------------------------------------------
# Never crash on a schema a real server sends
# ---------------------------------------------------------------------------------------------------------

ODD_SCHEMAS = {
    'enum-objects': ({'enum': [{'a': 1}, [1, 2], 'x']}, [{'a': 1}, [1, 2]], [{'a': 2}]),
    'const-object': ({'const': {'a': [1, {'b': None}]}}, [{'a': [1, {'b': None}]}], [{'a': [1]}]),
    'type-array': ({'type': ['string', 'integer', 'null']}, ['x', 1, None], [1.5, []]),
    'oneOf-objects': ({'oneOf': [{'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'required': ['a']},
                                 {'type': 'object', 'properties': {'b': {'type': 'string'}}, 'required': ['b']}]}, [{'a': 1}, {'b': 'x'}],
                      [{'a': 1, 'b': 'x'}, {}]),
    'allOf-objects': ({'allOf': [{'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'required': ['a']},
                                 {'properties': {'b': {'type': 'string'}}, 'required': ['b']}]}, [{'a': 1, 'b': 'x'}], [{'a': 1}]),
    'bool-schemas': ({'type': 'object', 'properties': {'yes': True, 'no': False}}, [{'yes': [1]}, {}], [{'no': 1}]),
    'additional-schema': ({'type': 'object', 'additionalProperties': {'type': 'integer'}}, [{'a': 1}], [{'a': 'x'}]),
    'pattern-properties': ({'type': 'object', 'patternProperties': {'^x-': {'type': 'string'}}}, [{'x-a': 'b', 'y': 1}], [{'x-a': 1}]),
    'not': ({'not': {'type': 'string'}}, [1, None], ['x']),
    'if-then-else': ({'if': {'type': 'string'}, 'then': {'minLength': 2}, 'else': {'type': 'integer'}}, ['ab', 3], ['a', 1.5]),
    'exclusive-bounds': ({'type': 'number', 'exclusiveMinimum': 0, 'exclusiveMaximum': 1}, [0.5], [0, 1]),
    'integer-valued-float': ({'type': 'integer'}, [1.0, 2], [1.5]),
    'unique-items': ({'type': 'array', 'uniqueItems': True}, [[1, '1', True]], [[1, 1.0]]),
    'contains': ({'type': 'array', 'contains': {'type': 'string'}}, [[1, 'a']], [[1]]),
    'dependent-required': ({'type': 'object', 'dependentRequired': {'a': ['b']}}, [{'a': 1, 'b': 2}, {}], [{'a': 1}]),
    'property-names': ({'type': 'object', 'propertyNames': {'maxLength': 2}}, [{'ab': 1}], [{'abc': 1}]),
    'nullable': ({'type': 'string', 'nullable': True}, ['x'], [1]),
}

@pytest.mark.parametrize('nm', list(ODD_SCHEMAS))
def test_odd_schemas_build_and_check(nm):
    s, good, bad = ODD_SCHEMAS[nm]
    fn = mk_tool(disp, tool_of({'v': s}, req=['v']))
    for _ in range(2):  # the first call and the ones after it
        for v in good: assert fn(v) == ('t', {'v': v}), v
        for v in bad: assert refused(fn, v).errors, v


def test_root_keywords_are_the_schemas_too():
    "Keywords at the root (`$schema`, `allOf`, `if`, `minProperties`) apply to the call as a whole"
    fn = mk_tool(disp, tool_of({'a': {'type': 'integer'}, 'b': {'type': 'integer'}}, minProperties=1,
                               **{'$schema': 'https://json-schema.org/draft/2020-12/schema', 'if': {'required': ['a']}, 'then': {'required': ['b']}}))
    assert fn(b=1) == ('t', {'b': 1}) and fn(a=1, b=2) == ('t', {'a': 1, 'b': 2})
    assert "missing required key 'b'" in str(refused(fn, a=1))
    assert refused(fn).errors


def test_draft07_ref_ignores_its_siblings():
    tool = tool_of({'p': {'$ref': '#/definitions/S', 'maxLength': 1}}, **{'$schema': 'http://json-schema.org/draft-07/schema#',
                                                                         'definitions': {'S': {'type': 'string'}}})
    assert mk_tool(disp, tool)(p='long') == ('t', {'p': 'long'})
    tool['inputSchema'].pop('$schema')
    assert refused(mk_tool(disp, tool), p='long').errors[0].path == 'p'  # in 2020-12 they apply


def test_deep_nesting_builds_and_calls():
    s = {'type': 'integer'}
    for _ in range(400): s = {'type': 'object', 'properties': {'a': s}}
    fn = mk_tool(disp, tool_of({'deep': s}))
    v = 1
    for _ in range(400): v = {'a': v}
    assert fn(deep=v) == ('t', {'deep': v})  # deeper than Python types go, the annotation is Any; the check goes on


def test_untrusted_keyword_values_never_hang():
    """A catastrophic pattern no automaton can run (a lookahead) or `multipleOf: 0` in a server's schema is not enforced
    (with a warning), and no call hangs (the others are enforced in bounded time: test_attack_patterns.py)"""
    tool = tool_of({'p': {'type': 'string', 'pattern': '^(?=(a+)+$)'}, 'm': {'type': 'number', 'multipleOf': 0}})
    fn = mk_tool(disp, tool)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        assert fn(p='a' * 40 + 'b', m=3) == ('t', {'p': 'a' * 40 + 'b', 'm': 3})
    assert len(w) == 2 and all("Tool 't'" in str(x.message) for x in w)


@pytest.mark.parametrize('tool,where', [
    (tool_of({}) | {'inputSchema': {'type': 'object', 'properties': ['a', 'b']}}, "Tool 't', at /properties: must be an object"),
    (tool_of({'a': 'string'}), "Tool 't', at /properties/a: a schema must be an object or true/false, got 'string'"),
    (tool_of({'a': {'type': 'array', 'items': 'string'}}), "Tool 't', at /properties/a/items: a schema must be"),
    (tool_of({'a': {'type': 'string', 'title': 5}}), "Tool 't', at /properties/a: 'title' must be a string"),
    (tool_of({'a': {'anyOf': {'type': 'string'}}}), "Tool 't', at /properties/a/anyOf: must be an array"),
    ({'name': 't', 'inputSchema': {'properties': {'a': {}}, 'required': 'a'}}, "Tool 't', at /required: must be an array"),
    ({'name': 5, 'inputSchema': {}}, "A tool's name must be a string, got 5"),
    ({'name': 't', 'description': ['x'], 'inputSchema': {}}, "Tool 't': the description must be a string"),
    ({'name': 't', 'inputSchema': 'object'}, "Tool 't': the input schema must be a JSON object"),
], ids=['properties-list', 'string-schema', 'string-items', 'title-number', 'anyOf-object', 'required-string', 'name-number',
        'description-list', 'schema-string'])
def test_malformed_schemas_are_clear_errors(tool, where):
    with pytest.raises(ValueError) as e: mk_tool(disp, tool)
    assert str(e.value).startswith(where), str(e.value)
    assert not isinstance(e.value, ToolInputError)


# ---------------------------------------------------------------------------------------------------------
# Memory: nothing grows without bound, and a dropped tool is freed at once
# ---------------------------------------------------------------------------------------------------------

def test_building_many_tools_stays_bounded():
    for i in range(2_000):
        fn = mk_tool(disp, tool_of({'p': {'type': 'object', 'title': f'P{i}', 'properties': {'x': {'type': 'integer'}}}}, req=['p']))
        fn(p={'x': i})
    assert len(inverse._typeddicts) <= 256
    assert inverse._first_code.cache_info().currsize <= inverse._first_code.cache_info().maxsize
    assert len(inverse._inline_codes) <= inverse._INLINE_CODES_MAX and len(inverse._type_sets) <= 256 and len(inverse._or_unset_sets) <= 256


def test_a_dropped_tool_is_freed_without_the_garbage_collector():
    "No reference cycle: dropping the last reference frees the tool, its dispatcher and its validator at once"
    def dispatcher(tool, /, **kw): return kw
    gc.disable()
    try:
        fn = mk_tool(dispatcher, TYPED)
        fn(1, 'red')
        with pytest.raises(ToolInputError): fn(1, 'blue')
        refs = weakref.ref(fn), weakref.ref(dispatcher)
        del fn, dispatcher
        assert [r() for r in refs] == [None, None]
    finally: gc.enable()


# ---------------------------------------------------------------------------------------------------------
# The reference's "Schema to function" examples
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
    assert (repr(p), p.kind, p.annotation is str) == ('<Parameter "query: str">', Parameter.POSITIONAL_OR_KEYWORD, True)
    p = mk_param('language', props.language, req)
    assert (repr(p), p.kind, p.annotation) == ('<Parameter "language: list[str] = None">', Parameter.KEYWORD_ONLY, list[str])
    assert str(mk_param('match-case', props.matchCase, req, pynm='match_case')) == 'match_case: bool = False'


def test_seed_schema2sig(seed_tool):
    sig = schema2sig(seed_tool)
    assert repr(sig) == '<Signature (query: str, *, language: list[str] = None, matchCase: bool = False, path: str = None, useRegexp: bool = False)>'


def test_seed_mk_tool(seed_tool):
    def dispatch_eg(name, **kwargs): return f"Called {name} with {kwargs}"
    fn = mk_tool(dispatch_eg, seed_tool)
    assert fn('hello', path='src/') == "Called searchGitHub with {'query': 'hello', 'path': 'src/'}"
    assert get_schema(fn)['input_schema'] == SEED_TOOL['inputSchema']
    assert "unexpected key 'bogus'" in str(refused(fn, 'hello', bogus=1))  # additionalProperties: false


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
    ps = schema2sig(servers.tools['fetch']).parameters
    assert (ps['url'].annotation, ps['max_length'].annotation, ps['raw'].annotation) == (str, int, bool)
    assert (ps['max_length'].default, ps['raw'].default) == (5000, False)
    assert ps['url'].kind == Parameter.POSITIONAL_OR_KEYWORD
    ps = schema2sig(servers.tools['git_log']).parameters
    assert ps['start_timestamp'].annotation == Optional[str]


def test_real_schemas_come_back(servers):
    "The rebuilt function's schema is the server's own, keyword for keyword"
    for nm, tool in servers.tools.items():
        assert get_schema(mk_tool(disp, tool)) == {'name': nm, 'description': tool.description, 'input_schema': tool.input_schema}


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
    assert refused(fn, 'https://example.com', max_length='lots').errors[0].path == 'max_length'
    assert refused(fn, 'https://example.com', max_length=0).errors[0].path == 'max_length'  # its minimum is 1
    assert "missing required key 'url'" in str(refused(fn, raw=True))


# ---------------------------------------------------------------------------------------------------------
# The inline tests a tool's code runs after its first call decide exactly as the validator does
# ---------------------------------------------------------------------------------------------------------

INLINE_CASES = {
    'integer': ({'type': 'integer', 'minimum': 1}, [1, 0, True, 1.0, 2.5, '1', None, 10**30]),
    'number': ({'type': 'number', 'exclusiveMaximum': 3}, [1, 2.5, 3, 3.0, False, '1']),  # NaN: test_inline_tests_refuse_nan_...
    'plain number': ({'type': 'number'}, [1, 2.5, True, None]),
    'string': ({'type': 'string', 'minLength': 2, 'maxLength': 3}, ['ab', 'a', 'abcd', 'é́', '😀😀', 1, b'ab']),
    'enum': ({'type': 'string', 'enum': ['asc', 'desc']}, ['asc', 'ASC', 1, ['asc'], None]),
    'bare enum': ({'enum': ['a', 'b']}, ['a', 'c', 1, {'a': 1}]),
    'type list': ({'type': ['string', 'null']}, ['x', None, 1, ['x']]),
    'ints': ({'type': 'array', 'items': {'type': 'integer'}, 'maxItems': 2}, [[1, 2], [1, 2, 3], [1, True], [1.0], [], (1,), [[1]]]),
    'nested': ({'type': 'array', 'items': {'type': 'array', 'items': {'enum': ['a']}}}, [[['a']], [['b']], [[]], ['a']]),
    'free object': ({'type': 'object'}, [{'a': [1, {'b': None}]}, {1: 'x'}, {'a': dt.date(2024, 1, 2)}, [], 'x']),
    'point': ({'type': 'object', 'properties': {'x': {'type': 'number'}, 'y': {'type': 'integer'}}, 'required': ['x', 'y']},
              [{'x': 1, 'y': 2}, {'x': 1.5, 'y': 2.0}, {'x': 1}, {'x': 'a', 'y': 1}, {'x': 1, 'y': 2, 'z': [1]}, {'x': 1, 'z': 2},
               {'x': 1, 'y': 2, 3: 4}, {'x': 1, 'y': True}]),
    'closed': ({'type': 'object', 'properties': {'a': {'type': 'string'}}, 'additionalProperties': False}, [{'a': 'x'}, {'b': 1}, {}]),
    'shaped extras': ({'type': 'object', 'additionalProperties': {'type': 'integer'}}, [{'a': 1}, {'a': 'x'}, {'a': 1.0}]),
    'anyOf': ({'anyOf': [{'type': 'integer'}, {'type': 'null'}]}, [1, None, 'x', True]),
}

def _outcome(fn, v):
    try: return fn(v)
    except ToolInputError as e: return sorted((p.path, p.message) for p in e.errors)

@pytest.mark.parametrize('case', INLINE_CASES)
def test_inline_tests_agree_with_the_validator(case):
    s, values = INLINE_CASES[case]
    warm = mk_tool(disp, tool_of({'v': s}, req=['v']))
    warm(values[0])  # the first call gives the tool its inline tests
    for v in values:  # a fresh tool's first call takes the validator's way
        assert _outcome(warm, v) == _outcome(mk_tool(disp, tool_of({'v': s}, req=['v'])), v), v

def test_inline_tests_refuse_nan_under_a_bound_as_the_validator_does():
    "A tool that refused a call before (its validator's second report is generated code) still refuses NaN under a bound"
    s = {'type': 'number', 'exclusiveMaximum': 3}
    warm = mk_tool(disp, tool_of({'v': s}, req=['v']))
    for v in (1, 2.5, 3, 3.0, False): _outcome(warm, v)
    assert _outcome(warm, float('nan')) == _outcome(mk_tool(disp, tool_of({'v': s}, req=['v'])), float('nan'))

def _outcome_of(fn, *args, **kw):
    try: return fn(*args, **kw)
    except ToolInputError as e: return sorted((p.path, p.message) for p in e.errors)

@pytest.mark.parametrize('case', INLINE_CASES)
def test_inline_tests_of_optional_arguments_agree_with_the_validator(case):
    "An optional argument's test on each way a call can go: every argument given, some of them, or just the required ones"
    s, values = INLINE_CASES[case]
    tool = tool_of({'r': {'type': 'integer'}, 'v': s, 'o': {'type': 'string'}}, req=['r'])
    warm = mk_tool(disp, tool)
    warm(1, v=values[0], o='x')
    for v in [*values, None]:
        for more in ({}, {'o': 'x'}):
            assert _outcome_of(warm, 1, v=v, **more) == _outcome_of(mk_tool(disp, tool), 1, v=v, **more), (v, more)
    assert warm(1) == ('t', {'r': 1}) and warm(1, o='x') == ('t', {'r': 1, 'o': 'x'})
    assert _outcome_of(warm, 1, v=values[0], o=5) == _outcome_of(mk_tool(disp, tool), 1, v=values[0], o=5)


# properties named like the generated code's placeholders for names (`_K0`) and its own local (`kw`), and names no identifier spells
PLACEHOLDER_NAMES = {'_K1': {'type': 'integer'}, '_K0': {'type': 'string'}, 'a-b': {'type': 'array', 'items': {'type': 'integer'}},
                     'name': {'type': 'object', 'properties': {'x': {'type': 'number'}}, 'required': ['x']}, 'x y': {'enum': ['a', 'b']},
                     '_K3': {'type': 'string'}, 'kw': {}}

@pytest.mark.parametrize('n', [len(PLACEHOLDER_NAMES), 40])  # 40: past where Python's compiler makes a call's keywords a dict
def test_inline_calls_send_each_property_by_its_own_name(n, monkeypatch):
    "Every argument given, just the required ones, or some: the dispatcher gets the original names in the schema's order"
    props = {**PLACEHOLDER_NAMES, **{f'p-{i}': {'type': 'integer'} for i in range(n - len(PLACEHOLDER_NAMES))}}
    req = ['_K1', 'a-b', 'name']
    fn = mk_tool(disp, tool_of(props, req=req))
    py, order = list(inspect.signature(fn).parameters), [*req, *(k for k in props if k not in req)]
    value = dict(zip(props, [1, 'z', [1, 2], {'x': 1.5}, 'a', 'w', {'k': [None]}, *range(n)]))
    fn(**{p: value[o] for p, o in zip(py, order)})  # the first call: the checked way
    monkeypatch.setattr(inverse._Checked, 'problems', lambda *a: pytest.fail('the validator ran'))  # the others: inline
    for given in (order, req, [*req, '_K0', 'kw'], [*req, *order[-2:]]):
        got = fn(**{p: value[o] for p, o in zip(py, order) if o in given})
        assert got == ('t', {k: value[k] for k in order if k in given}) and list(got[1]) == [k for k in order if k in given], given


def test_inline_calls_of_an_async_tool():
    async def adisp(tool, /, **kw): return tool, kw
    fn = mk_tool(adisp, tool_of({'a-b': {'type': 'integer'}, '_K0': {'type': 'string'}}, req=['a-b']))
    assert asyncio.run(fn(1)) == ('t', {'a-b': 1})  # the first call: the checked way
    for kw, sent in (({}, {'a-b': 2}), ({'_K0': 'x'}, {'a-b': 2, '_K0': 'x'})):
        assert asyncio.run(fn(2, **kw)) == ('t', sent)
    with pytest.raises(ToolInputError, match='_K0'): asyncio.run(fn(2, _K0=3))


def test_schema_text_never_reaches_the_code():
    "Property names and constants that look like code are only ever values to the tool's code"
    nasty = "x'):\n    import os  # "
    props = {nasty: {'type': 'string', 'enum': [nasty]}, 'o': {'type': 'object', 'properties': {nasty: {'const': nasty}}, 'required': [nasty]}}
    fn = mk_tool(disp, tool_of(props, req=[nasty]))
    for _ in range(2):
        assert fn(nasty, o={nasty: nasty}) == ('t', {nasty: nasty, 'o': {nasty: nasty}})
        assert len(refused(fn, 'y').errors) == 1 and len(refused(fn, nasty, o={nasty: 'y'}).errors) == 1


def test_object_annotations_are_typeddicts_as_typing_makes_them():
    fn = mk_tool(disp, tool_of({'pt': {'type': 'object', 'title': 'Pt', 'properties': {'x': {'type': 'integer'}, 'y': {'type': 'string'}},
                                       'required': ['x']}}, req=['pt']))
    td = inspect.signature(fn).parameters['pt'].annotation
    if sys.version_info >= (3, 11): ref = typing.TypedDict('Pt', {'x': typing.Required[int], 'y': str}, total=False)
    else:  # no `typing.Required` on 3.10: the same class, its required key set by hand
        ref = typing.TypedDict('Pt', {'x': int, 'y': str}, total=False)
        ref.__required_keys__, ref.__optional_keys__ = frozenset({'x'}), frozenset({'y'})
    assert typing.is_typeddict(td) and td.__name__ == td.__qualname__ == 'Pt' and td.__module__ == 'funccall'
    assert vars(td).keys() == vars(ref).keys() and typing.get_type_hints(td) == typing.get_type_hints(ref) == {'x': int, 'y': str}
    assert (td.__required_keys__, td.__optional_keys__, td.__total__) == (ref.__required_keys__, ref.__optional_keys__, ref.__total__)
    assert td(x=1) == {'x': 1} and isinstance(td(x=1), dict)


def test_a_strict_null_for_an_optional_nested_key_means_not_given():
    "Strict renders make every key required and nullable; a null for an optional key the schema doesn't let be null is left out"
    tool = {'name': 'w', 'inputSchema': {'type': 'object', 'properties': {'links': {'type': 'array', 'items': {
        'type': 'object', 'required': ['target'], 'properties': {'target': {'type': 'string'}, 'tip': {'type': 'string'}}}}}}}
    fn = mk_tool(lambda name, **kw: kw, tool)
    assert fn(links=[{'target': 'a', 'tip': None}]) == {'links': [{'target': 'a'}]}
    with pytest.raises(ToolInputError, match=r"links\[0\]\.target: expected a string, got null|'links\[0\]\.target': expected a string"):
        fn(links=[{'target': None, 'tip': None}])  # a required key's null is still refused, as what it is
