"""The JSON Schema checker funccall builds tools on (`funccall.core._jsonschema`) and the words it reports with (`funccall.core._expect`):
errors, paths, limits and hostile schemas. The official JSON Schema Test Suite is in test_jsonschema_suite.py."""
import json, re, sys, threading, time, warnings
from pathlib import Path

import pytest
from conftest import examples
from hypothesis import HealthCheck, given, settings, strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from funccall.core._expect import expected
from funccall.core._inputs import Problem
from funccall.core._jsonschema import compile_schema
from funccall.core.schema import SchemaWarning

ADDRESS = {'type': 'object', 'properties': {'street': {'type': 'string'}, 'city': {'type': 'string'}}, 'required': ['street', 'city']}
DEFS = {'Address': ADDRESS, 'L': {'type': 'array', 'items': {'$ref': '#/$defs/L'}}, 'a/b': {'type': 'integer'}}

# --- expected(): a schema in words --------------------------------------------------------------------------

@pytest.mark.parametrize('s,words', [
    ({'type': 'string'}, 'a string'),
    ({'type': 'integer'}, 'an integer'),
    ({'type': 'number'}, 'a number'),
    ({'type': 'boolean'}, 'a boolean'),
    ({'type': 'null'}, 'null'),
    ({}, 'any JSON value'),
    (True, 'any JSON value'),
    (False, 'no value at all (nothing is allowed here)'),
    ({'type': 'string', 'format': 'date-time'}, 'an ISO 8601 date-time string'),
    ({'anyOf': [{'type': 'string', 'format': 'date-time'}, {'type': 'null'}]}, 'an ISO 8601 date-time string or null'),
    ({'type': ['string', 'null'], 'format': 'date-time'}, 'an ISO 8601 date-time string or null'),
    ({'type': 'string', 'format': 'date'}, 'an ISO 8601 date string (YYYY-MM-DD)'),
    ({'type': 'string', 'format': 'time'}, 'an ISO 8601 time string (HH:MM:SS)'),
    ({'type': 'string', 'format': 'uuid'}, 'a UUID string'),
    ({'type': 'string', 'format': 'email'}, 'an email address'),
    ({'type': 'string', 'format': 'uri'}, 'an absolute URI string'),
    ({'type': 'string', 'format': 'color'}, "a string in format 'color'"),
    ({'type': 'string', 'contentEncoding': 'base64'}, 'a base64-encoded string'),
    ({'enum': ['open', 'shipped', 'cancelled']}, "one of 'open', 'shipped', 'cancelled'"),
    ({'type': 'string', 'enum': ['open', 'shipped', 'cancelled']}, "one of 'open', 'shipped', 'cancelled'"),
    ({'enum': ['open', 'shipped', 'cancelled', None]}, "one of 'open', 'shipped', 'cancelled', or null"),
    ({'anyOf': [{'enum': ['open', 'shipped', 'cancelled']}, {'type': 'null'}]}, "one of 'open', 'shipped', 'cancelled', or null"),
    ({'anyOf': [{'const': 'a'}, {'const': 'b'}]}, "one of 'a', 'b'"),
    ({'enum': [True, None, 1.5, {'a': [1]}]}, 'one of true, 1.5, {"a": [1]}, or null'),
    ({'const': 'x'}, "exactly 'x'"),
    ({'const': None}, 'null'),
    ({'$ref': '#/$defs/Address'}, 'an Address object (fields: street, city)'),
    ({'$ref': '#/definitions/Address'}, 'an Address object (fields: street, city)'),
    ({'allOf': [{'$ref': '#/$defs/Address'}]}, 'an Address object (fields: street, city)'),
    ({'$ref': '#/$defs/a~1b'}, 'an integer'),
    ({'$ref': '#/$defs/Nowhere'}, 'a Nowhere value'),
    ({'type': 'object', 'title': 'Point', 'properties': {'x': {}, 'y': {}}, 'required': ['x']}, 'a Point object (fields: x, y; required: x)'),
    ({'type': 'object', 'properties': {'x': {}}}, 'an object (fields: x)'),
    ({'type': 'object'}, 'an object'),
    ({'type': 'object', 'additionalProperties': False}, 'an empty object'),
    ({'type': 'object', 'required': ['a', 'b']}, 'an object with keys: a, b'),
    ({'type': 'array', 'items': {'type': 'integer'}}, 'an array of integers'),
    ({'type': 'array', 'items': {'type': 'string'}, 'minItems': 1}, 'a non-empty array of strings'),
    ({'type': 'array', 'items': {'type': 'string'}, 'minItems': 2, 'maxItems': 5}, 'an array of strings (2 to 5 items)'),
    ({'type': 'array', 'uniqueItems': True}, 'an array (no duplicates)'),
    ({'type': 'array'}, 'an array'),
    ({'type': 'array', 'items': {'$ref': '#/$defs/Address'}}, 'an array of Address objects (fields: street, city)'),
    ({'type': 'array', 'items': {'enum': ['a', 'b']}}, "an array whose items are each one of 'a', 'b'"),
    ({'type': 'array', 'items': {'type': 'array', 'items': {'type': 'string', 'format': 'date'}}}, 'an array of arrays of ISO 8601 date strings (YYYY-MM-DD)'),
    ({'anyOf': [{'type': 'array', 'items': {'type': 'integer'}}, {'type': 'null'}]}, 'an array of integers, or null'),
    ({'type': 'object', 'additionalProperties': {'type': 'integer'}}, 'an object of integers'),
    ({'type': 'object', 'additionalProperties': {'enum': [1, 2]}}, 'an object whose values are each one of 1, 2'),
    ({'type': 'integer', 'minimum': 1}, 'an integer >= 1'),
    ({'type': 'integer', 'minimum': 1, 'maximum': 10}, 'an integer >= 1 and <= 10'),
    ({'type': 'number', 'exclusiveMinimum': 0, 'multipleOf': 0.5}, 'a number > 0 and a multiple of 0.5'),
    ({'type': 'number', 'minimum': 0, 'exclusiveMinimum': True}, 'a number > 0'),  # draft 4's boolean form
    ({'type': 'string', 'minLength': 1}, 'a string of at least 1 character'),
    ({'type': 'string', 'maxLength': 5}, 'a string of at most 5 characters'),
    ({'type': 'string', 'minLength': 3, 'maxLength': 3}, 'a string of exactly 3 characters'),
    ({'type': 'string', 'pattern': '^[a-z]+$'}, "a string matching the pattern '^[a-z]+$'"),
    ({'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}], 'items': False}, 'an array of 2 items: an integer, a string'),
    ({'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}], 'items': {}, 'minItems': 2, 'maxItems': 2},
     'an array of 2 items: an integer, a string'),
    ({'type': 'array', 'items': [{'type': 'integer'}], 'additionalItems': False}, 'an array of 1 item: an integer'),  # draft 7's tuple form
    ({'type': 'array', 'prefixItems': [{'type': 'integer'}]}, 'an array starting with 1 item: an integer'),
    ({'type': ['integer', 'null'], 'minimum': 0}, 'an integer >= 0 or null'),
    ({'type': ['string', 'integer', 'boolean']}, 'a string, an integer, or a boolean'),
    ({'oneOf': [{'$ref': '#/$defs/Address'}, {'type': 'string'}]}, 'an Address object (fields: street, city) or a string'),
    ({'anyOf': [{'$ref': '#/$defs/Address'}, {'type': 'null'}]}, 'an Address object (fields: street, city) or null'),
    ({'not': {'type': 'string'}}, 'anything but a string'),
    ({'properties': {'a': {}}}, 'an object (fields: a)'),  # the type its keywords imply
    ({'minLength': 2}, 'a string of at least 2 characters'),
])
def test_expected(s, words): assert expected(s, DEFS) == words

def test_expected_resolver_function():
    "`defs` may be a function resolving any `$ref`, as the validator passes: `#/properties/src` names no definition"
    root = {'properties': {'src': {'type': 'string'}}}
    assert expected({'$ref': '#/properties/src'}, lambda ref: root['properties']['src'] if ref == '#/properties/src' else None) == 'a string'
    assert expected({'$ref': '#/properties/src'}) == 'a value of the referenced schema'

def test_expected_recursion_is_bounded():
    "A recursive `$ref` and deep nesting end in '...'"
    assert expected({'$ref': '#/$defs/L'}, DEFS) == 'an array of arrays of ...'
    deep = {'type': 'integer'}
    for _ in range(2000): deep = {'type': 'array', 'items': deep}
    assert expected(deep) == 'an array of arrays of arrays of arrays of ...'
    nested = {'type': 'integer'}
    for _ in range(2000): nested = {'anyOf': [nested, {'type': 'null'}]}
    assert len(expected(nested)) < 100

def test_expected_long_things_cut_short():
    assert expected({'enum': list(range(30))}) == 'one of 0, 1, 2, 3, 4, 5, 6, 7, ... (30 in all)'
    assert expected({'enum': ['x' * 500]}) == "exactly '" + 'x' * 36 + '...'
    props = {f'f{i}': {} for i in range(20)}
    assert expected({'type': 'object', 'properties': props}) == 'an object (fields: f0, f1, f2, f3, f4, f5, f6, f7, ... (20 in all))'
    many = {'anyOf': [{'type': 'string', 'minLength': i} for i in range(1, 20)]}
    assert expected(many).startswith('one of 19 forms: a string of at least 1 character, ')
    assert len(expected({'anyOf': [{'type': 'string', 'pattern': 'p' * 100 + str(i)} for i in range(8)]})) <= 400

@pytest.mark.parametrize('s', [
    {'type': 'object', 'properties': ['a']}, {'type': 5}, {'enum': 'abc'}, {'$ref': 7}, {'anyOf': 'x'}, {'type': 'array', 'items': 'int'},
    {'type': 'string', 'minLength': 'x', 'format': 3}, {'type': 'integer', 'minimum': '1'}, {'required': 'a'}, {'title': 5, 'type': 'object'},
    'string', 3, [], {'type': ['integer', 5]},
])
def test_expected_never_raises_on_malformed_schemas(s):
    "Words for a malformed fragment: reporting it is the validator's job"
    assert isinstance(expected(s), str)

# --- compile_schema(): problems, paths, limits ----------------------------------------------------------------


ORDER = {'type': 'object', 'additionalProperties': False, 'required': ['items'], 'properties': {
    'items': {'type': 'array', 'minItems': 1, 'items': {'$ref': '#/$defs/Line'}},
    'headers': {'type': 'object', 'additionalProperties': {'type': 'string'}},
    'status': {'enum': ['open', 'shipped', 'cancelled', None]},
    'when': {'anyOf': [{'type': 'string', 'format': 'date-time'}, {'type': 'null'}]}},
    '$defs': {'Line': {'type': 'object', 'required': ['sku', 'qty'], 'properties': {'sku': {'type': 'string', 'minLength': 1},
                                                                                    'qty': {'type': 'integer', 'minimum': 1}}}}}

def probs(s, v, **kw): return [str(p) for p in compile_schema(s).problems(v, **kw)]

def test_valid_arguments_pass_unchanged():
    v, args = compile_schema(ORDER), {'items': [{'sku': 'a', 'qty': 2}], 'headers': {'X-Id': '7'}, 'status': None, 'when': '2024-01-01T00:00:00Z'}
    before = repr(args)
    assert v.is_valid(args) and v.problems(args) == [] and repr(args) == before

def test_every_problem_reported_with_its_path():
    got = probs(ORDER, {'items': [{'sku': 'a', 'qty': 1}, {'sku': 'b', 'qty': 0}, {'qty': 1}, {'sku': 5, 'qty': 1.5}],
                        'headers': {'X-Id': 7, 'ok': 'x'}, 'status': 'lost', 'when': 5, 'colour': 'red'})
    assert got == ["items[1].qty: expected an integer >= 1, got 0",
                   "items[2]: missing required key 'sku'",
                   "items[3].sku: expected a string of at least 1 character, got 5",
                   "items[3].qty: expected an integer >= 1, got 1.5",
                   "headers['X-Id']: expected a string, got 7",
                   "status: expected one of 'open', 'shipped', 'cancelled', or null, got 'lost'",
                   "when: expected an ISO 8601 date-time string or null, got 5",
                   "unexpected key 'colour'; allowed keys: items, headers, status, when"]

def test_problem_objects_and_path_prefix():
    p = compile_schema({'type': 'array', 'items': {'type': 'integer'}}).problems([1, 'x'], path='ids')
    assert p == [Problem('ids[1]', "expected an integer, got 'x'")]

def test_specific_reasons():
    assert probs({'type': 'array', 'minItems': 1}, []) == ['has 0 items; needs at least 1']
    assert probs({'type': 'array', 'maxItems': 1}, [1, 2]) == ['has 2 items; allows at most 1']
    assert probs({'type': 'array', 'uniqueItems': True}, [1, 2, 1.0]) == ['items [0] and [2] are equal; all items must be unique']
    assert probs({'type': 'array', 'contains': {'type': 'string'}}, [1]) == ['has no item that is a string']
    assert probs({'type': 'array', 'prefixItems': [{'type': 'integer'}], 'items': False}, [1, 2]) == ['has 2 items; allows at most 1']
    assert probs({'type': 'object', 'minProperties': 2}, {'a': 1}) == ['has 1 key; needs at least 2']
    assert probs({'dependentRequired': {'a': ['b']}}, {'a': 1}) == ["has key 'a', so it needs key 'b' too"]
    assert probs({'propertyNames': {'pattern': '^[a-z]+$'}}, {'Ab': 1}) == ["key 'Ab' is not allowed: keys must be a string matching the pattern '^[a-z]+$'"]
    assert probs({'not': {'type': 'string'}}, 'x') == ["expected anything but a string, got 'x'"]
    assert probs({'type': 'object', 'unevaluatedProperties': False, 'properties': {'a': {}}}, {'a': 1, 'b': 2}) == ["unexpected key 'b'; allowed keys: a"]
    assert probs(False, 1) == ['expected no value at all (nothing is allowed here), got 1']
    assert probs({'type': 'string', 'maxLength': 3}, 'abcd') == ["expected a string of at most 3 characters, got 'abcd'"]

def test_not_of_a_container():
    assert probs({'not': {'type': 'array'}}, [1]) == ['must not be an array; got [1]']

def test_union_of_objects_reports_the_meant_form():
    s = {'oneOf': [{'type': 'object', 'properties': {'kind': {'const': 'circle'}, 'r': {'type': 'number'}}, 'required': ['kind', 'r']},
                   {'type': 'object', 'properties': {'kind': {'const': 'square'}, 'side': {'type': 'number'}}, 'required': ['kind', 'side']}]}
    assert probs(s, {'kind': 'square', 'side': 'big'}) == ["side: expected a number, got 'big'"]
    assert probs(s, {'kind': 'oval'})[0].startswith('matches none of the 2 allowed forms: an object (fields: kind, r); an object (fields: kind, side); got')
    assert probs({'oneOf': [{'type': 'integer'}, {'minimum': 0}]}, 1) == ['matches 2 of the allowed forms (1, 2) but must match exactly one; got 1']
    assert probs({'anyOf': [{'type': 'integer'}, {'type': 'array', 'items': {'type': 'integer'}}]}, ['x']) == ["[0]: expected an integer, got 'x'"]

def test_json_semantics():
    assert compile_schema({'type': 'integer'}).is_valid(1.0) and not compile_schema({'type': 'integer'}).is_valid(1.5)
    assert not compile_schema({'type': 'number'}).is_valid(True) and not compile_schema({'type': 'integer'}).is_valid(False)
    assert compile_schema({'enum': [1]}).is_valid(1.0) and not compile_schema({'enum': [1]}).is_valid(True)
    assert not compile_schema({'const': False}).is_valid(0) and compile_schema({'const': {'a': [1, 2]}}).is_valid({'a': [1.0, 2]})
    assert compile_schema({'enum': [[1, 2]]}).is_valid((1, 2))  # a tuple is an array
    assert compile_schema({'type': 'string', 'minLength': 2}).is_valid('😀😀') and not compile_schema({'maxLength': 1}).is_valid('😀😀')
    assert compile_schema({'type': 'integer', 'multipleOf': 3}).is_valid(10 ** 400 * 3)
    assert compile_schema({'multipleOf': 0.0001}).is_valid(0.0075) and not compile_schema({'multipleOf': 0.123456789}).is_valid(1e308)
    assert compile_schema({'pattern': 'b'}).is_valid('abc')  # searched, not anchored
    assert not compile_schema({'pattern': r'^\d+$'}).is_valid('١٢')  # ECMA's \d is ASCII
    assert not compile_schema({'pattern': '^a$'}).is_valid('a\n')  # ECMA's $ is the very end
    assert compile_schema({'format': 'date-time'}).is_valid('not a date')  # format is an annotation

def test_limit_bounds_the_report():
    s = {'type': 'array', 'items': {'type': 'integer'}}
    assert len(compile_schema(s).problems(['x'] * 1000)) == 10
    assert len(compile_schema(s).problems(['x'] * 1000, limit=3)) == 3

# --- $ref, drafts ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize('ref,target', [
    ('#/$defs/Outer/properties/inner', {'$defs': {'Outer': {'properties': {'inner': {'type': 'integer'}}}}}),
    ('#/properties/src', {}),
    ('#/$defs/a~1b', {'$defs': {'a/b': {'type': 'integer'}}}),
    ('#/$defs/a~0b', {'$defs': {'a~b': {'type': 'integer'}}}),
    ('#/$defs/a%25b', {'$defs': {'a%b': {'type': 'integer'}}}),
    ('#/definitions/X', {'definitions': {'X': {'type': 'integer'}}}),
    ('#/$defs/L/items/0', {'$defs': {'L': {'items': [{'type': 'integer'}]}}}),
    ('#int', {'$defs': {'X': {'$anchor': 'int', 'type': 'integer'}}}),
    ('urn:x:int', {'$defs': {'X': {'$id': 'urn:x:int', 'type': 'integer'}}}),
])
def test_refs_resolve_exactly(ref, target):
    v = compile_schema({'type': 'object', 'properties': {'p': {'$ref': ref}, 'src': {'type': 'integer'}}, **target})
    assert v.is_valid({'p': 1}) and v.problems({'p': 'x'}) == [Problem('p', "expected an integer, got 'x'")]

def test_root_and_recursive_refs():
    tree = {'type': 'object', 'properties': {'n': {'type': 'integer'}, 'kids': {'type': 'array', 'items': {'$ref': '#'}}}}
    assert compile_schema(tree).problems({'kids': [{'kids': [{'n': 'x'}]}]}) == [Problem('kids[0].kids[0].n', "expected an integer, got 'x'")]
    loop = {'$defs': {'A': {'$ref': '#/$defs/B'}, 'B': {'anyOf': [{'$ref': '#/$defs/A'}, {'type': 'integer'}]}}, '$ref': '#/$defs/A'}
    v = compile_schema(loop)  # A -> B -> A ... or an integer: ends, with the stack's bound
    assert v.problems('x') and not v.is_valid('x')

def test_remote_and_dangling_refs_accept():
    assert compile_schema({'$ref': 'https://example.com/schema.json'}).is_valid(1)
    with pytest.warns(SchemaWarning, match="points nowhere"): v = compile_schema({'properties': {'a': {'$ref': '#/$defs/Nope'}}}, where="Tool 't'")
    assert v.is_valid({'a': 1})

def test_drafts():
    d7 = {'$schema': 'http://json-schema.org/draft-07/schema#', 'definitions': {'I': {'type': 'integer'}},
          'properties': {'a': {'$ref': '#/definitions/I', 'maximum': 0}, 't': {'items': [{'type': 'integer'}], 'additionalItems': False}},
          'dependencies': {'a': ['b']}}
    v = compile_schema(d7)
    assert v.is_valid({'a': 5, 'b': 0})  # draft 7: $ref ignores its siblings
    assert not v.is_valid({'a': 5}) and not v.is_valid({'t': [1, 2]}) and not v.is_valid({'a': 'x', 'b': 1})
    assert not compile_schema({**d7, '$schema': 'https://json-schema.org/draft/2020-12/schema'}).is_valid({'a': 5, 'b': 0})
    assert compile_schema({'prefixItems': [{'type': 'integer'}]}, draft='draft7').is_valid(['x'])  # no prefixItems in draft 7

# --- hostile schemas and values ---------------------------------------------------------------------------------

@pytest.mark.parametrize('s,where', [
    ({'type': 'object', 'properties': ['a']}, "at /properties: properties must be an object of schemas, got an array"),
    ({'type': 'array', 'items': 'int'}, "at /items: expected a schema (an object or a boolean), got a string: 'int'"),
    ({'properties': {'a': {'items': {'anyOf': {}}}}}, "at /properties/a/items/anyOf: anyOf must be a list of schemas, got an object"),
    ({'properties': {'a/b': {'not': 3}}}, "at /properties/a~1b/not: expected a schema (an object or a boolean), got int: 3"),
    ({'$ref': '#/$defs/x', '$defs': {'x': 5}}, "at /$defs/x: expected a schema (an object or a boolean), got int: 5"),
    ({'$ref': 5}, "at /$ref: $ref must be a string, got int"),
    ({'$ref': '#/properties/a/type', 'properties': {'a': {'type': 'string'}}}, "at /$ref: $ref '#/properties/a/type' points at a string, not a schema"),
    ([1], "at /: expected a schema (an object or a boolean), got an array: [1]"),
])
def test_malformed_schema_is_a_clear_value_error(s, where):
    with pytest.raises(ValueError) as e: compile_schema(s, where="Tool 'x'")
    assert str(e.value) == f"Tool 'x': {where}"

@pytest.mark.parametrize('s,value', [
    # exponential backtracking and no automaton (a backreference, a lookahead): the others are checked, test_attack_patterns.py
    ({'type': 'string', 'pattern': '^(a+)+\\1$'}, 'a' * 50 + '!'),
    ({'type': 'string', 'pattern': '^(?=(a|aa)*$)'}, 'a' * 50 + '!'),
    ({'type': 'string', 'pattern': '(?=(x+x+)+y)'}, 'x' * 50),
    ({'patternProperties': {'^(?=(a+)+$)': {'type': 'integer'}}, 'additionalProperties': False}, {'a' * 50 + '!': 1}),
    ({'type': 'string', 'pattern': '(['}, 'x'),
    ({'type': 'string', 'pattern': r'\p{Greek}'}, 'x'),
    ({'type': 'number', 'multipleOf': 0}, 3),
    ({'type': 'number', 'multipleOf': 'x'}, 3),
    ({'type': 'number', 'minimum': '5'}, 3),
    ({'type': 'string', 'maxLength': -1}, 'x'),
    ({'type': 'int'}, 3),
    ({'enum': 'abc'}, 'x'),
    ({'required': 'a'}, {}),
])
def test_untrusted_keywords_warn_and_never_refuse_or_hang(s, value):
    with pytest.warns(SchemaWarning, match='not checked'): v = compile_schema(s, where="Tool 'x'")
    t = time.process_time()  # CPU time, not the clock's: CI runs four test processes on two cores
    assert v.is_valid(value) and v.problems(value) == []
    assert time.process_time() - t < 0.5

@pytest.mark.parametrize('pattern,long', [(r'\s+$', ' ' * 100_000 + 'x'), ('a.*b.*c', 'ab' * 50_000), ('^a.*b.*c$', 'ab' * 50_000)])
def test_polynomial_patterns_stay_fast_on_long_strings(pattern, long):
    "Quadratic and cubic patterns search long strings only as far as bounded time allows; short ones are checked"
    v = compile_schema({'type': 'string', 'pattern': pattern})
    assert not v.is_valid(long[:150] + '!') and v.problems(long[:150] + '!')
    t = time.process_time()
    v.is_valid(long), v.problems(long)
    assert time.process_time() - t < 1.0

def test_safe_patterns_are_checked():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        for p in (r'^([a-z0-9]+-)*[a-z0-9]+$', r'^[a-z]+(-[a-z]+)*$', r'^(\d+\.)*\d+$', '(a|b)*c', r'^\p{L}+$', '(?<year>[0-9]{4})-\\k<year>'):
            assert not compile_schema({'pattern': p}).is_valid('!!' if '!' not in p else 'x'), p
    assert compile_schema({'pattern': r'^\p{L}+$'}).is_valid('école')

def test_deep_schemas_compile_and_deep_values_end_in_a_problem():
    s = {'type': 'integer'}
    for _ in range(1000): s = {'type': 'array', 'items': s}
    v = compile_schema(s)
    assert not v.is_valid([[['x']]]) and v.problems([[['x']]])[0].path == '[0][0][0]'
    deep = 1
    for _ in range(100_000): deep = [deep]
    assert v.is_valid(deep) is False and v.problems(deep) == [Problem('', 'is nested too deeply to check (more levels than the interpreter can follow)')]
    nest = {'type': 'integer'}
    for _ in range(100): nest = {'anyOf': [{'type': 'null'}, nest], 'allOf': [{'not': {'type': 'string'}}]}
    assert compile_schema(nest).is_valid(1) and not compile_schema(nest).is_valid('x')
    for _ in range(900): nest = {'anyOf': [{'type': 'null'}, nest], 'allOf': [{'not': {'type': 'string'}}]}
    v = compile_schema(nest)  # builds; a check deeper than the stack allows is refused in words, never a RecursionError
    assert v.is_valid(None) and v.problems(1) in ([], [Problem('', 'is nested too deeply to check (more levels than the interpreter can follow)')])

def test_enum_of_deep_values_and_unhashables():
    deep = []
    for _ in range(10_000): deep = [deep]
    v = compile_schema({'enum': [[1], {'a': None}]})
    assert v.is_valid({'a': None}) and not v.is_valid({'a': 0}) and not v.is_valid(deep)
    assert compile_schema({'uniqueItems': True}).problems([deep, deep])  # too deep or equal: either way refused, never a crash

def test_python_values_that_are_not_json():
    v = compile_schema({'type': 'object', 'properties': {'a': {'type': 'string'}}, 'patternProperties': {'^x': {}}})
    assert v.problems({'a': object()})[0].message.startswith('expected a string, got <object object')
    assert v.is_valid({1: 'non-string key'})

def test_compile_is_lazy_when_asked():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        v = compile_schema({'type': 'int'}, lazy=True)  # shape checked now, keywords on first use
    with pytest.warns(SchemaWarning): assert v.is_valid(1)
    with pytest.raises(ValueError): compile_schema({'properties': []}, lazy=True)

def test_fast_path_agrees_with_the_problems_path():
    "is_valid runs generated code; problems runs the compiled tree: they answer alike"
    s = {'type': 'object', 'properties': {'a': {'type': 'array', 'prefixItems': [{'type': 'integer'}, {'enum': ['x', 1]}], 'items': {'type': 'string'}},
                                          'b': {'type': ['number', 'null'], 'exclusiveMinimum': 0, 'multipleOf': 0.5},
                                          'c': {'type': 'object', 'additionalProperties': {'type': 'boolean'}}}, 'required': ['a']}
    v = compile_schema(s)
    for x in [{'a': []}, {'a': [1, 'x', 's']}, {'a': [1, 'y']}, {'a': [1.0, 1.0]}, {'a': [], 'b': 0}, {'a': [], 'b': 1.5}, {'a': [], 'b': 1.2},
              {'a': [], 'b': None}, {'a': [], 'b': True}, {'a': [], 'c': {'k': True}}, {'a': [], 'c': {'k': 1}}, {}, [], {'a': [1, 'x', 2]}]:
        assert v.is_valid(x) == (v.problems(x) == []), x

def test_expected_and_repr():
    v = compile_schema(ORDER)
    assert v.expected == 'an object (fields: items, headers, status, when; required: items)' and repr(v) == f'Validator({v.expected})'

# --- differential: the same verdicts as the `jsonschema` package ----------------------------------------------


_SUITE = Path(__file__).parent / 'data' / 'json-schema-test-suite'
_SKIP = {'format.json', 'content.json', 'dynamicRef.json', 'vocabulary.json', 'defs.json', 'definitions.json', 'ref.json',
         'optional-ecmascript-regex.json', 'unevaluatedItems.json', 'unevaluatedProperties.json'}  # remote or dynamic refs, \p escapes

def _suite_schemas():
    out = []
    for folder, cls in (('draft2020-12', Draft202012Validator), ('draft7', Draft7Validator)):
        for f in sorted((_SUITE / folder).glob('*.json')):
            if f.name not in _SKIP: out += [(g['schema'], folder, cls) for g in json.loads(f.read_text())]
    return out

SCHEMAS = _suite_schemas()
_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 12) | st.sampled_from([0.5, 1.0, 2.5, -1.5, 1e15]) |
                     st.sampled_from(['', 'a', 'foo', 'bar', 'baz', 'aaa', 'ab', '1', 'quux', '\u00e9', 'bar\n']),
                     lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.sampled_from(['a', 'b', 'c', 'foo', 'bar', 'baz', 'quux', 'x1']), kids, max_size=4),
                     max_leaves=8)

@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(SCHEMAS))), _json)
def test_same_verdict_as_jsonschema(i, value):
    "On the suite's schemas, any JSON value gets the verdict the reference implementation gives"
    schema, folder, cls = SCHEMAS[i]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', SchemaWarning)
        ours = compile_schema(schema, draft='draft7' if folder == 'draft7' else '2020-12')
    try: theirs = cls(schema).is_valid(value)
    except re.error: return  # the reference can't read this pattern (a \\p escape)
    assert ours.is_valid(value) == theirs, (schema, value)
    assert ours.is_valid(value) == (ours.problems(value) == [])

TOOL = {'type': 'object', 'required': ['query', 'ids'], 'additionalProperties': False, 'properties': {
    'query': {'type': 'string', 'minLength': 1}, 'limit': {'type': 'integer', 'minimum': 1, 'maximum': 50}, 'ratio': {'type': 'number'},
    'exact': {'type': 'boolean'}, 'ids': {'type': 'array', 'items': {'type': 'integer'}, 'uniqueItems': True},
    'tags': {'type': 'array', 'items': {'type': 'string', 'pattern': '^[a-z]+$'}}, 'extra': {'type': 'object'},
    'point': {'type': 'object', 'properties': {'x': {'type': 'number'}, 'y': {'type': 'number'}}, 'required': ['x', 'y']},
    'status': {'enum': ['open', 'shipped', None]}, 'code': {'type': 'string', 'pattern': r'^[A-Z]{2}-\d{3}$'},
    'shape': {'oneOf': [{'type': 'object', 'properties': {'r': {'type': 'number'}}, 'required': ['r'], 'additionalProperties': False},
                        {'type': 'object', 'properties': {'w': {'type': 'number'}}, 'required': ['w'], 'additionalProperties': False}]}}}

@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(sorted(TOOL['properties']) + ['other']), _json, max_size=6))
def test_tool_arguments_same_verdict_as_jsonschema(args):
    v = compile_schema(TOOL)
    assert v.is_valid(args) == Draft202012Validator(TOOL).is_valid(args) == (v.problems(args) == [])

# --- compiling on first use: from deep stacks, and from several threads --------------------------------------------


def _nested_schema(levels: int) -> dict:
    s = {'type': 'integer', 'minimum': 0}
    for i in range(levels): s = {'type': 'object', 'properties': {f'k{i}': s, 'n': {'type': 'string'}}, 'required': [f'k{i}']}
    return s

def _nested_value(levels: int, leaf):
    v = leaf
    for i in range(levels): v = {f'k{i}': v}
    return v

def _from_depth(k: int, f):
    "Call `f` with `k` more frames on the stack"
    return f() if k <= 0 else _from_depth(k - 1, f)

def test_compiling_cut_short_by_the_stack_recovers():
    "A first use deep in a stack may run out of frames; it says so, and the next use from a shallow stack is right"
    s, good, bad = _nested_schema(60), _nested_value(60, 1), _nested_value(60, -1)
    v = compile_schema(s, lazy=True)
    deep = _from_depth(sys.getrecursionlimit() - 80, lambda: (v.is_valid(good), v.problems(bad)))
    assert deep[0] in (True, False) and deep[1]  # whatever the stack allowed: an answer, never an exception
    assert v.is_valid(good) and not v.is_valid(bad)
    assert [p.message for p in v.problems(bad)] == ['expected an integer >= 0, got -1']
    assert v.is_valid.__name__ == 'is_valid'  # the generated check took over once the stack allowed

def test_first_use_from_several_threads():
    s, good, bad = _nested_schema(80), _nested_value(80, 1), _nested_value(80, 'x')
    v, results = compile_schema(s, lazy=True), []
    def use(): results.append((v.is_valid(good), v.is_valid(bad), len(v.problems(bad))))
    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join(30)
    assert results == [(True, False, 1)] * 8

@pytest.mark.parametrize('s', [{'type': 'number', 'minimum': 0}, {'maximum': 10}, {'type': 'number', 'exclusiveMinimum': 0, 'exclusiveMaximum': 1},
                               {'type': 'object', 'properties': {'n': {'type': 'number', 'maximum': 10}}}])
def test_nan_fits_no_bound(s):
    "Python's JSON parser reads NaN, which every comparison lets through: a bounded number refuses it, in both the fast and the reporting check"
    v = compile_schema(s)
    x = {'n': float('nan')} if s.get('type') == 'object' else float('nan')
    assert not v.is_valid(x) and v.problems(x) and v.is_valid({'n': 5} if s.get('type') == 'object' else 0.5)

@pytest.mark.parametrize('bound', [{'minimum': 0}, {'maximum': 10}, {'exclusiveMinimum': 0}, {'exclusiveMaximum': 3}, {'multipleOf': 0.5}])
def test_nan_fits_no_bound_in_any_report_after_the_first(bound):
    "`problems` reports with the tree's walk once, then with generated code: NaN must fail a bound in every report, not only the first"
    v = compile_schema({'type': 'object', 'properties': {'n': {'type': 'number', **bound}}, 'required': ['n']})
    for x in (-5, 11, 3, 0.25, 'x'): v.problems({'n': x})  # earlier refusals: the reports after them are the generated ones
    for _ in range(3): assert [p.path for p in v.problems({'n': float('nan')})] == ['n']
