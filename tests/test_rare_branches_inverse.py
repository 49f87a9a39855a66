"""`inverse`'s rare branches: the schemas a built tool's quick checks (the closures, and the code written out inline)
can't take, which must leave the decision to the validator, never decide it wrongly. Each row is a property schema and
values; every value's verdict is compared with the reference validator's (`jsonschema`), at the top level and nested
(in an array's items and an object's property: the quick tests' other paths). Then the schemas `schema2anno` refuses,
each with its location, and the message of a length bound written `2.0`."""
import itertools, warnings

import pytest

jsonschema = pytest.importorskip('jsonschema')

from funccall import ToolInputError, mk_tool, schema2anno  # noqa: E402

DEFS = {
    'Base': {'type': 'object'},
    'A': {'$ref': '#/$defs/Base', 'properties': {'kind': {'const': 'a'}}, 'required': ['kind']},  # (a `$ref` with siblings)
    'B': {'type': 'object', 'properties': {'kind': {'$ref': '#/$defs/KindB'}}, 'required': ['kind']},  # (its tag behind a `$ref`)
    'C': {'type': 'object', 'properties': {'kind': {'const': 'c'}}, 'required': ['kind']},
    'KindB': {'const': 'b'},
    'Pair': {'type': 'array', 'prefixItems': [{'type': 'integer'}, {'type': 'string'}]},
    'Scoped': {'$id': 'https://example.com/scoped', '$defs': {'Inner': {'type': 'integer'}}},
}
OBJS = [{'kind': 'a'}, {'kind': 'b'}, {'kind': 'c'}, {'kind': 1}, {}, 'a', None]

ROWS = {
    # oneOf whose branches may overlap, one with no tag (no `required`): decided branch by branch
    'oneOf, an untagged branch': ({'oneOf': [{'type': 'object', 'properties': {'k': {'const': 'a'}}, 'required': ['k']}, {'type': 'object'}]},
                                  [{'k': 'a'}, {'k': 'b'}, {}, 'a']),
    # oneOf of `$ref`s, nested deep enough that their tests are made when first reached: a `$ref` with siblings, a tag behind a `$ref`
    'oneOf of lazy refs': ({'oneOf': [{'$ref': '#/$defs/A'}, {'$ref': '#/$defs/B'}, {'$ref': '#/$defs/C'}]}, OBJS),
    'oneOf, no branch quick': ({'oneOf': [{'not': {'type': 'string'}}, {'minimum': 3}]}, ['a', 5, 1, None]),
    'oneOf with false': ({'oneOf': [False, {'type': 'string'}]}, ['a', 1]),
    'oneOf, a branch refusing nothing surely': ({'oneOf': [{'minimum': 3}, {'type': 'string'}]}, ['a', 5, 1]),
    'a length written 2.0': ({'type': 'string', 'minLength': 2.0, 'maxLength': 3.0}, ['a', 'ab', 'abcd', 1]),
    'string enum with a number': ({'type': 'string', 'enum': ['a', 1]}, ['a', 'b', 1]),
    'enum and const': ({'type': 'string', 'enum': ['a', 'b'], 'const': 'a'}, ['a', 'b']),
    'a pattern of three repeats': ({'type': 'string', 'pattern': '^a+b+c+$'}, ['abc', 'aabbcc', 'ab', 'xabc']),
    'a pattern past the plain ones': ({'type': 'string', 'pattern': '^(a|b)$'}, ['a', 'c']),
    'bounds written as floats': ({'type': 'number', 'minimum': 0.5, 'exclusiveMaximum': 2}, [0.5, 0.4, 1, 2, 1.99]),
    'items counted 1.0': ({'type': 'array', 'items': {'type': 'integer'}, 'minItems': 1.0}, [[], [1], ['a'], [1.0]]),
    'an object of many properties': ({'type': 'object', 'properties': {f'p{i}': {'type': 'integer', 'minimum': 0} for i in range(10)},
                                      'required': ['p0']}, [{'p0': 1}, {'p0': -1}, {'p1': 1}, {'p0': 1, 'p9': 'x'}, {'p0': 1, 'z': None}]),
    'types: a string or an array': ({'type': ['string', 'array']}, ['a', [1, [2]], 1, None, {}]),
    'a ref into a list': ({'$ref': '#/$defs/Pair/prefixItems/0'}, [1, 'a', None]),
    'a ref past an $id': ({'$ref': '#/$defs/Scoped/$defs/Inner'}, [1, 'a']),
    'oneOf tagged by one-item enums': ({'oneOf': [{'type': 'object', 'properties': {'k': {'enum': ['a']}}, 'required': ['k']},
                                                  {'type': 'object', 'properties': {'k': {'enum': ['b']}}, 'required': ['k']}]},
                                       [{'k': 'a'}, {'k': 'b'}, {'k': 'c'}, {}]),
    'anyOf of three': ({'anyOf': [{'type': 'string'}, {'type': 'integer'}, {'type': 'boolean'}]}, ['a', 1, True, None, 1.5]),
    'a type list with null': ({'type': ['integer', 'null'], 'minimum': 2}, [None, 2, 1, 'a']),
}

def _tool(ps: dict, where: str):
    "A tool taking `x`, at the top level, in an array's items, or as an object's property"
    x = {'top': ps, 'items': {'type': 'array', 'items': ps}, 'property': {'type': 'object', 'properties': {'y': ps}, 'required': ['y']}}[where]
    schema = {'type': 'object', 'properties': {'x': x}, 'required': ['x'], '$defs': DEFS}
    return mk_tool(lambda nm, **kw: kw, {'name': 't', 'input_schema': schema}), schema

def _wrap(v, where: str): return {'top': v, 'items': [v], 'property': {'y': v}}[where]

@pytest.mark.parametrize('where', ['top', 'items', 'property'])
@pytest.mark.parametrize('row', list(ROWS))
def test_the_quick_checks_agree_with_the_validator(row, where):
    ps, values = ROWS[row]
    f, schema = _tool(ps, where)
    ref = jsonschema.Draft202012Validator(schema)
    for v in values:
        args = {'x': _wrap(v, where)}
        want = ref.is_valid(args)
        try: f(**args); got = True
        except ToolInputError: got = False
        assert got is want, (row, where, v)
        assert f(**args) == args if want else True  # (a second call: its tests made once, now run again)

def test_a_length_written_2_0_is_described_as_2():
    "The message says the bound the validator applied, written `2.0` or `2` (it said 'expected a string' of the string 'a')"
    f, _ = _tool({'type': 'string', 'minLength': 2.0}, 'top')
    with pytest.raises(ToolInputError, match="expected a string of at least 2 characters, got 'a'"): f(x='a')
    f, _ = _tool({'type': 'array', 'maxItems': 1.0}, 'top')
    with pytest.raises(ToolInputError, match=r"expected an array \(at most 1 item\), got 'a'"): f(x='a')

def test_draft_4s_boolean_exclusive_bound():
    "Draft 4 writes an exclusive bound as a boolean beside the bound: `minimum: 0, exclusiveMinimum: true` is > 0"
    schema = {'$schema': 'http://json-schema.org/draft-04/schema#', 'type': 'object',
              'properties': {'x': {'type': 'number', 'minimum': 0, 'exclusiveMinimum': True}, 'y': {'type': 'array', 'items': {
                  'type': 'number', 'maximum': 1, 'exclusiveMaximum': True}}}, 'required': ['x']}
    f = mk_tool(lambda nm, **kw: kw, {'name': 't', 'input_schema': schema})
    ref = jsonschema.Draft4Validator(schema)
    for args in ({'x': 1}, {'x': 0}, {'x': 0.1, 'y': [0.5]}, {'x': 1, 'y': [1]}):
        try: f(**args); got = True
        except ToolInputError: got = False
        assert got is ref.is_valid(args), args

def test_keywords_it_cant_apply_are_named_and_left_unchecked():
    "`required: [1]`, `minLength: -1`: a warning naming the place, and the keyword not applied (never a value refused for it)"
    for (ps, v), where in itertools.product((({'type': 'object', 'required': [1]}, {}), ({'type': 'string', 'minLength': -1}, '')),
                                           ('top', 'items')):
        with pytest.warns(Warning, match='not checked'):
            f, _ = _tool(ps, where)
            assert f(x=_wrap(v, where)) == {'x': _wrap(v, where)}

@pytest.mark.parametrize('s,message', [
    ({'type': 'object', 'properties': [1]}, 'at /properties: must be an object, got [1]'),
    ({'$ref': 5}, 'must be a string, got 5'),
    ({'type': 'object', 'properties': {'a': {}}, 'required': 'a'}, "at /required: must be an array, got 'a'"),
])
def test_schema2anno_refuses_a_malformed_schema_saying_where(s, message):
    with warnings.catch_warnings(), pytest.raises(ValueError, match=message.replace('[', r'\[').replace(']', r'\]')): schema2anno(s)

def test_a_tool_with_a_property_name_that_isnt_a_string_is_refused():
    with pytest.raises(ValueError, match="property names must be strings, got 1"):
        mk_tool(lambda nm, **kw: kw, {'name': 't', 'input_schema': {'type': 'object', 'properties': {1: {'type': 'string'}}}})

def test_a_tool_schema_nested_past_the_stack_is_refused_in_words():
    "An input schema given as fastcore's AttrDict, nested deeper than Python recurses: a ValueError naming the tool"
    from fastcore.basics import AttrDict
    deep = {'type': 'string'}
    for _ in range(5000): deep = {'type': 'array', 'items': deep}
    with pytest.raises(ValueError, match="Tool 'deep': the input schema is nested too deeply to read"):
        mk_tool(lambda nm, **kw: kw, {'name': 'deep', 'input_schema': AttrDict({'type': 'object', 'properties': {'x': deep}})})

def test_object_classes_made_from_schemas_are_cached_bounded():
    "Each distinct object schema makes a TypedDict, cached: at most 256 kept (a server with endless schemas can't grow it)"
    from funccall.core import inverse
    for i in range(300): schema2anno({'type': 'object', 'title': f'T{i}', 'properties': {'a': {'type': 'integer'}}})
    assert 0 < len(inverse._typeddicts) <= 256
    odd = {'type': 'object', 'title': 'Odd', 'properties': {'a': {'enum': [[1, 2]]}, 'b': {'enum': ['x', 1, True, None]}}}
    assert schema2anno(odd) is schema2anno(odd)  # (a field of any enum still makes a key)
    assert schema2anno({'type': 'object', 'title': 'T299', 'properties': {'a': {'type': 'integer'}}}) is \
        schema2anno({'type': 'object', 'title': 'T299', 'properties': {'a': {'type': 'integer'}}})

def test_a_tool_whose_input_schema_is_a_pydantic_object():
    "An SDK's schema object (anything with `model_dump`): read as the dict it dumps"
    pydantic = pytest.importorskip('pydantic')
    schema = pydantic.RootModel[dict]({'type': 'object', 'properties': {'n': {'type': 'integer'}}, 'required': ['n']})
    f = mk_tool(lambda nm, **kw: kw, {'name': 't', 'input_schema': schema})
    assert f(n=1) == {'n': 1}
    with pytest.raises(ToolInputError): f(n='x')
