"""The validator's (`core._jsonschema`) rare branches: keywords it can't apply are named in a warning and never refuse a
value, `multipleOf` of an integer past any double judged exactly (it was refused), a property check for a property the
root doesn't declare, and a value nested past the stack reported in words."""
import warnings

import pytest

from funccall.core._jsonschema import compile_schema

@pytest.mark.parametrize('s,warning', [
    ({'allOf': []}, 'at /allOf: allOf is empty; not checked'),
    ({'oneOf': []}, 'at /oneOf: oneOf is empty; not checked'),
    ({'pattern': 5}, 'at /pattern: a pattern must be a string, got 5; not checked'),
    ({'dependentRequired': [1]}, 'at /dependentRequired: dependentRequired must be an object, got an array; not checked'),
    ({'dependencies': {'a': 5}}, 'at /dependencies/a: dependencies entry 5 is not understood; not checked'),
    ({'dependentRequired': {'a': {}}}, 'at /dependentRequired/a: dependentRequired entry {} is not understood; not checked'),
    ({'patternProperties': {'(': {'type': 'integer'}}}, "at /patternProperties/(: pattern '(' is not checked: it doesn't compile"),
])
def test_a_keyword_it_cant_apply_is_named_and_refuses_nothing(s, warning):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        v = compile_schema(s, where="Tool 't'")
    assert len(w) == 1 and str(w[0].message).startswith(f"Tool 't': {warning}"), [str(x.message) for x in w]
    for x in ({'a': 1}, {'(': 'x'}, 'abc', 5, None, []): assert v.is_valid(x) and v.problems(x) == []

@pytest.mark.parametrize('d,x,ok', [
    (0.5, 10 ** 2000, True), (0.25, 10 ** 2000 + 1, True), (0.3, 10 ** 2000, False), (0.3, 3 * 10 ** 2000, True),
    (3, 9.0, True), (3, 9.5, False), (0.1, 0.3, True), (1e-308, 1e308, True),  # (as written in decimal: 0.3 is three tenths)
    (2, float('inf'), False),
])
def test_multiple_of_is_exact_however_far_apart(d, x, ok):
    "An integer past any double (JSON allows it; Python reads 4300 digits) is judged exactly: it was refused as 'too far apart'"
    v = compile_schema({'multipleOf': d})
    assert v.is_valid(x) is ok and (v.problems(x) == []) is ok

def test_a_property_check_for_a_property_not_declared_is_none():
    v = compile_schema({'type': 'object', 'properties': {'a': {'type': 'integer'}}})
    assert v.property_check('b') is None
    assert v.property_check('a')(1) and not v.property_check('a')('x')
    assert compile_schema(True).property_check('a') is None

def test_a_value_nested_past_the_stack_is_refused_in_words():
    "A value a recursive schema would follow past Python's stack: refused, with a problem saying so (never RecursionError)"
    s = {'$defs': {'n': {'anyOf': [{'type': 'integer'}, {'type': 'array', 'items': {'$ref': '#/$defs/n'}}]}}, '$ref': '#/$defs/n'}
    deep = 1
    for _ in range(100_000): deep = [deep]
    v = compile_schema(s)
    assert not v.is_valid(deep)
    [p] = v.problems(deep)
    assert 'deep' in p.message, p
    assert v.is_valid([[[1]]]) and v.problems([[['x']]]) != []
