"""Strict mode's (`core._strict`) rare branches through `strict_schema` and `normalize`: a one-type list, pointers that
name nothing, draft 7's `definitions`, a tool without parameters, optional fields that take null already, `allOf`
merged (the outer words kept) or refused where its members disagree, and a root `$ref` beside properties it can't merge."""
import pytest

from funccall import SchemaError
from funccall.core._strict import normalize
from funccall.core.providers import strict_schema

def test_normalize_a_one_type_list_a_pointer_to_nothing_and_draft7_definitions():
    s = {'type': 'object', 'definitions': {'X': {'type': 'integer'}},
         'properties': {'a': {'type': ['string']}, 'b': {'$ref': '#/properties/missing'}, 'c': {'$ref': '#/definitions/X'},
                        'd': {'$ref': '#/properties/list/0'}, 'list': {'type': 'array', 'prefixItems': [{'type': 'boolean'}]}}}
    out = normalize(s)
    assert out['properties']['a'] == {'type': 'string'}
    assert out['properties']['b'] == {'$ref': '#/properties/missing'}  # (left for the provider to refuse: nothing to inline)
    assert out['properties']['c'] == {'$ref': '#/$defs/X'} and out['$defs'] == {'X': {'type': 'integer'}}
    assert out['properties']['d'] == {'$ref': '#/properties/list/0'}  # (a pointer into a property's keyword: not a schema node there)
    assert s['properties']['c'] == {'$ref': '#/definitions/X'}  # (its input unchanged)

@pytest.mark.parametrize('provider', ['openai', 'anthropic'])
def test_a_tool_without_parameters_is_an_empty_closed_object(provider):
    "A server's bare `{'type': 'object'}`: sent as a tool without parameters, which strict mode takes"
    out = strict_schema({'type': 'object'}, provider=provider)
    assert out == {'type': 'object', 'properties': {}, 'additionalProperties': False, **({'required': []} if provider == 'openai' else {})}

def test_optional_fields_that_take_null_already_are_left_as_they_are():
    s = {'type': 'object', 'properties': {'a': {'enum': ['x', None]}, 'b': {'const': None}, 'c': {'type': 'integer'}}}
    out = strict_schema(s)
    assert out['properties'] == {'a': {'enum': ['x', None]}, 'b': {'const': None}, 'c': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}}
    assert out['required'] == ['a', 'b', 'c']

def test_all_of_is_merged_with_the_outer_description_kept():
    s = {'type': 'object', 'description': 'outer', 'allOf': [
        {'description': 'inner', 'properties': {'a': {'type': 'string'}}, 'required': ['a']}, {'properties': {'b': {'type': 'integer'}}}]}
    out = strict_schema(s)
    assert out['description'] == 'outer' and 'allOf' not in out and set(out['properties']) == {'a', 'b'}

@pytest.mark.parametrize('s', [
    {'type': 'object', 'allOf': [{'properties': {'a': {'type': 'string'}}}, {'properties': {'a': {'type': 'integer'}}}]},  # one property, two schemas
    {'type': 'object', 'allOf': [{'properties': {'a': {'type': 'string'}}, 'minProperties': 1}, {'minProperties': 2}]},  # a keyword's two values
])
def test_all_of_whose_members_disagree_is_refused_naming_it(s):
    with pytest.raises(SchemaError, match="Tool 't' can't be strict: its parameters uses allOf"): strict_schema(s, name='t')

def test_a_root_ref_beside_properties_it_cant_merge_with_is_refused():
    s = {'$ref': '#/$defs/R', 'properties': {'x': {'type': 'string'}}, '$defs': {'R': {'type': 'object', 'properties': {'x': {'type': 'integer'}}}}}
    with pytest.raises(SchemaError, match="has properties beside a \\$ref, anyOf or type they can't merge with"): strict_schema(s, name='t')
    ok = {'$ref': '#/$defs/R', '$defs': {'R': {'type': 'object', 'properties': {'x': {'type': 'integer'}}, 'required': ['x']}}}
    assert strict_schema(ok) == {'type': 'object', 'properties': {'x': {'type': 'integer'}}, 'required': ['x'], 'additionalProperties': False}
