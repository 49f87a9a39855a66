"""Reference acceptance cases (seed 000): the schema examples from toolslm's funccall docs.

Every expected value below is copied exactly from the seed (`shared/seeds/000_*.txt`), in the order the
seed shows them, up to its "Python tool" section. The seed is the truth: never edit an expected value to
make a test pass. The example functions and classes are defined at module level exactly as in the seed,
since funccall reads parameter descriptions from their source comments (docments style). Seed functions
named `test_*` are renamed `_*_eg` so pytest does not collect them.
"""
import ast
from pathlib import Path
from typing import Dict, List, Optional, Union

import pytest
from fastcore.docments import docments
from fastcore.utils import store_attr

from funccall import get_schema, get_schema_nm, handle_type
from funccall.core.schema import _process_property


# ---------------------------------------------------------------------------------------------------------
# Example functions and classes, as written in the seed
# ---------------------------------------------------------------------------------------------------------

def silly_sum(
    a:int, # First thing to sum
    b:int=1, # Second thing to sum
    c:list[int]=None, # A pointless argument
) -> int: # The sum of the inputs
    "Adds a + b."
    return a + b


# Test custom class
class TestClass:
    __test__ = False  # not in the seed: stops pytest trying to collect this class
    def __init__(self, x: int, y: int): store_attr()


# The seed redefines `TestClass` for the `_process_property` example; renamed here so it does not shadow
# the class above (only its docments are used, so the name does not appear in any expected value).
class _PropTestClass:
    "Test class"
    def __init__(
        self,
        x: int, # First thing
        y: list[float], # Second thing
        z: str = "default", # Third thing
    ): store_attr()


def f(
    o:object, # the o
    q:tuple[int,str],
    p:str|list[str] = 'a',
): "object function"


class ClassA:
    "I am a class"
    def f(self, a:int): # That is `a`
        "Do a thing"
        return 1
    def __call__(self, b:str): # That is `b`
        "Do another thing"
        return 2

ca = ClassA()


def silly_test(
    a: 'int',  # quoted type hint
)->int:
    "Mandatory docstring"
    return a


class Dummy:
    def sums(
        self,
        a:int,  # First thing to sum
        b:int=1 # Second thing to sum
    ): # The sum of the inputs
        "Adds a + b."
        print(f"Finding the sum of {a} and {b}")
        return a + b


class Turn:
    "Turn between two speakers"
    def __init__(
        self,
        speaker_a:str, # First speaker's message
        speaker_b:str,  # Second speaker's message
    ): store_attr()

class Conversation:
    "A conversation between two speakers"
    def __init__(
        self,
        turns:list[Turn], # Turns of the conversation
    ): store_attr()


class DictConversation:
    "A conversation between two speakers"
    def __init__(
        self,
        turns:dict[str,object], # dictionary of topics and the Turns of the conversation
    ): store_attr()


class SetConversation:
    "A conversation between two speakers"
    def __init__(
        self,
        turns:set[Turn], # the unique Turns of the conversation
    ): store_attr()


IntPair = tuple[int, int]
def _union_test(opt_tup: Union[IntPair, str, int]=None):
    "Mandatory docstring"
    return ""

def _new_union_test(opt_tup: IntPair | str | int =None):
    "Mandatory docstring"
    pass

def _optional_test(opt_tup: Optional[IntPair]=None):
    "Mandatory docstring"
    pass

def _param_union_test(items: list[str] | None = None):
    "Test parameterized container in union"
    pass

def _list_test(l: List[int]):
    "Mandatory docstring"
    pass

def _raw_list_test(l: List):
    "Mandatory docstring"
    pass

def _dict_test(d: Dict[str, int]):
    "Mandatory docstring"
    pass

def _raw_dict_test(d: Dict):
    "Mandatory docstring"

def _path_test(path: Path = Path('.')):
    "Mandatory docstring"

# Seed name: `test_hidden`
def _hidden_eg(a: int, _internal: str = "x"):
    "Test func"
    pass

def _ret_list_test(a: int) -> list[str]:
    "Mandatory docstring"

Cmd = str | list[str]

def _cust_type(a: Cmd): "Mandatory docstring"


# ---------------------------------------------------------------------------------------------------------
# handle_type (the seed's `_handle_type`)
# ---------------------------------------------------------------------------------------------------------

def test_handle_type_int_and_path():
    assert (handle_type(int, None), handle_type(Path, None)) == ({'type': 'integer'}, {'type': 'string', 'format': 'Path'})


# gemini expect `items` to be defined for arrays
@pytest.mark.parametrize('t,expected', [
    (list, {'type': 'array', 'items': {}}),
    (tuple[str], {'type': 'array',
                  'prefixItems': [{'type': 'string'}],
                  'items': {'type': 'string'},
                  'minItems': 1,
                  'maxItems': 1}),
    (set[str], {'type': 'array', 'items': {'type': 'string'}, 'uniqueItems': True}),
    (dict, {'type': 'object'}),
    (dict[str,str], {'type': 'object', 'additionalProperties': {'type': 'string'}}),
], ids=['list', 'tuple[str]', 'set[str]', 'dict', 'dict[str,str]'])
def test_handle_type_containers_no_defs(t, expected):
    assert handle_type(t, None) == expected


# Test primitive types
@pytest.mark.parametrize('t,expected', [
    (int, {'type': 'integer'}),
    (str, {'type': 'string'}),
    (bool, {'type': 'boolean'}),
    (float, {'type': 'number'}),
], ids=['int', 'str', 'bool', 'float'])
def test_handle_type_primitives(t, expected):
    defs = {}
    assert handle_type(t, defs) == expected


def test_handle_type_custom_class_goes_to_defs():
    defs = {}
    result = handle_type(TestClass, defs)
    assert result == {'$ref': '#/$defs/TestClass'}
    assert 'TestClass' in defs
    assert defs['TestClass']['type'] == 'object'
    assert 'properties' in defs['TestClass']


def test_handle_type_variadic_tuple():
    # tuple[int, ...] should produce array with items, not prefixItems
    assert handle_type(tuple[int, ...], {}) == {'type': 'array', 'items': {'type': 'integer'}}


# Test primitive types in containers
@pytest.mark.parametrize('t,expected', [
    (list[int], {'type': 'array', 'items': {'type': 'integer'}}),
    (tuple[str], {'type': 'array', 'prefixItems': [{'type': 'string'}], 'items': {'type': 'string'}, 'minItems': 1, 'maxItems': 1}),
    (set[str], dict(type='array', items={'type': 'string'}, uniqueItems=True)),
    (dict[str,bool], {'type': 'object', 'additionalProperties': {'type': 'boolean'}}),
], ids=['list[int]', 'tuple[str]', 'set[str]', 'dict[str,bool]'])
def test_handle_type_primitive_containers(t, expected):
    defs = {}
    assert handle_type(t, defs) == expected


def test_handle_type_custom_class_in_containers():
    # Replays the seed's sequence with one shared `defs`
    defs = {}
    assert handle_type(TestClass, defs) == {'$ref': '#/$defs/TestClass'}
    result = handle_type(list[TestClass], defs)
    assert result == {'type': 'array', 'items': {'$ref': '#/$defs/TestClass'}}
    assert 'TestClass' in defs

    # Test complex nested structure
    result = handle_type(dict[str, list[TestClass]], defs)
    assert result == {'type': 'object', 'additionalProperties': {'type': 'array', 'items': {'$ref': '#/$defs/TestClass'}}}
    assert 'TestClass' in defs


# ---------------------------------------------------------------------------------------------------------
# _process_property
# ---------------------------------------------------------------------------------------------------------

def test_process_property():
    props, req, defs = {}, {}, {}
    d = docments(_PropTestClass, full=True)

    # Test processing of a required integer property
    _process_property('x', d.x, props, req, defs)
    assert 'x' in props
    assert props['x']['type'] == 'integer'
    assert 'x' in req

    # Test processing of a required list property
    _process_property('y', d.y, props, req, defs)
    assert 'y' in props
    assert props['y']['type'] == 'array'
    assert props['y']['items']['type'] == 'number'
    assert 'y' in req

    # Test processing of an optional string property with default
    _process_property('z', d.z, props, req, defs)
    assert 'z' in props
    assert props['z']['type'] == 'string'
    assert props['z']['default'] == "default"
    assert 'z' not in req


# ---------------------------------------------------------------------------------------------------------
# get_schema
# ---------------------------------------------------------------------------------------------------------

def test_get_schema_of_get_schema():
    assert get_schema(get_schema) == {'name': 'get_schema',
     'description': "Generate JSON schema for a class, function, or method\n\nReturns:\n- {'name':..., 'description':..., pname:...} (type: object)",
     'input_schema': {'type': 'object',
      'properties': {'f': {'description': 'Function to get schema for',
        'anyOf': [{'type': 'object'}, {'type': 'object'}]},
       'pname': {'description': 'Key name for parameters',
        'default': 'input_schema',
        'type': 'string'},
       'evalable': {'description': "stringify defaults that can't be literal_eval'd?",
        'default': False,
        'type': 'boolean'},
       'skip_hidden': {'description': "skip parameters starting with '_'?",
        'default': False,
        'type': 'boolean'},
       'name': {'description': "Override function name (useful for dotted paths like 'obj.method')",
        'default': None,
        'type': 'null'}},
      'required': ['f']}}


def test_get_schema_object_tuple_and_union_params():
    s = get_schema(f)
    assert s['name'] == 'f'
    inpp = s['input_schema']['properties']
    assert inpp['o'] == {'type': 'object', 'description': 'the o'}
    assert inpp['q'] == dict(type='array', description='', prefixItems=[{'type': 'integer'}, {'type': 'string'}], items=dict(anyOf=[{'type': 'integer'}, {'type': 'string'}]), minItems=2, maxItems=2)
    assert inpp['p'] == dict(description='', default='a', anyOf=[{'type': 'string'}, {'type': 'array', 'items': {'type': 'string'}}])
    assert s == {'name': 'f',
     'description': 'object function',
     'input_schema': {'type': 'object',
      'properties': {'o': {'description': 'the o', 'type': 'object'},
       'q': {'description': '',
        'type': 'array',
        'prefixItems': [{'type': 'integer'}, {'type': 'string'}],
        'items': {'anyOf': [{'type': 'integer'}, {'type': 'string'}]},
        'minItems': 2,
        'maxItems': 2},
       'p': {'description': '',
        'default': 'a',
        'anyOf': [{'type': 'string'},
         {'type': 'array', 'items': {'type': 'string'}}]}},
      'required': ['o', 'q']}}


def test_get_schema_bound_method():
    assert ca.f(2) == 1
    assert get_schema(ca.f) == {'name': 'f',
     'description': 'Do a thing',
     'input_schema': {'type': 'object',
      'properties': {'a': {'description': 'That is `a`', 'type': 'integer'}},
      'required': ['a']}}


def test_get_schema_callable_instance():
    assert get_schema(ca) == {'name': '__call__',
     'description': 'Do another thing',
     'input_schema': {'type': 'object',
      'properties': {'b': {'description': 'That is `b`', 'type': 'string'}},
      'required': ['b']}}


# Usage examples

def test_get_schema_silly_sum_return_in_description():
    s = get_schema(silly_sum)
    desc = s.pop('description')
    assert desc == 'Adds a + b.\n\nReturns:\n- The sum of the inputs (type: integer)'
    assert s == {'name': 'silly_sum',
     'input_schema': {'type': 'object',
      'properties': {'a': {'description': 'First thing to sum', 'type': 'integer'},
       'b': {'description': 'Second thing to sum',
        'default': 1,
        'type': 'integer'},
       'c': {'description': 'A pointless argument',
        'default': None,
        'type': 'array',
        'items': {'type': 'integer'}}},
      'required': ['a']}}


def test_get_schema_string_annotation():
    assert get_schema(silly_test) == {'name': 'silly_test',
     'description': 'Mandatory docstring\n\nReturns:\n- type: integer',
     'input_schema': {'type': 'object',
      'properties': {'a': {'description': 'quoted type hint', 'type': 'integer'}},
      'required': ['a']}}


def test_get_schema_unbound_method():
    assert get_schema(Dummy.sums) == {'name': 'sums',
     'description': 'Adds a + b.',
     'input_schema': {'type': 'object',
      'properties': {'a': {'description': 'First thing to sum', 'type': 'integer'},
       'b': {'description': 'Second thing to sum',
        'default': 1,
        'type': 'integer'}},
      'required': ['a']}}


# Nested classes

def test_get_schema_class_with_list_of_classes():
    assert get_schema(Conversation) == {'name': 'Conversation',
     'description': 'A conversation between two speakers',
     'input_schema': {'type': 'object',
      'properties': {'turns': {'description': 'Turns of the conversation',
        'type': 'array',
        'items': {'$ref': '#/$defs/Turn'}}},
      'title': 'Conversation',
      'required': ['turns'],
      '$defs': {'Turn': {'type': 'object',
        'properties': {'speaker_a': {'description': "First speaker's message",
          'type': 'string'},
         'speaker_b': {'description': "Second speaker's message",
          'type': 'string'}},
        'title': 'Turn',
        'required': ['speaker_a', 'speaker_b']}}}}


def test_get_schema_class_with_dict_of_objects():
    assert get_schema(DictConversation) == {'name': 'DictConversation',
     'description': 'A conversation between two speakers',
     'input_schema': {'type': 'object',
      'properties': {'turns': {'description': 'dictionary of topics and the Turns of the conversation',
        'type': 'object',
        'additionalProperties': {'type': 'object'}}},
      'title': 'DictConversation',
      'required': ['turns']}}


def test_get_schema_class_with_set_of_classes():
    assert get_schema(SetConversation) == {'name': 'SetConversation',
     'description': 'A conversation between two speakers',
     'input_schema': {'type': 'object',
      'properties': {'turns': {'description': 'the unique Turns of the conversation',
        'type': 'array',
        'items': {'$ref': '#/$defs/Turn'},
        'uniqueItems': True}},
      'title': 'SetConversation',
      'required': ['turns'],
      '$defs': {'Turn': {'type': 'object',
        'properties': {'speaker_a': {'description': "First speaker's message",
          'type': 'string'},
         'speaker_b': {'description': "Second speaker's message",
          'type': 'string'}},
        'title': 'Turn',
        'required': ['speaker_a', 'speaker_b']}}}}


# Additional get_schema() test cases: unions

def test_get_schema_typing_union():
    assert get_schema(_union_test) == {'name': '_union_test',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'opt_tup': {'description': '',
        'default': None,
        'anyOf': [{'type': 'array',
          'prefixItems': [{'type': 'integer'}, {'type': 'integer'}],
          'items': {'type': 'integer'},
          'minItems': 2,
          'maxItems': 2},
         {'type': 'string'},
         {'type': 'integer'}]}}}}


def test_get_schema_pipe_union():
    # The new (Python 3.10+) union syntax gives an equivalent schema
    assert get_schema(_new_union_test) == {'name': '_new_union_test',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'opt_tup': {'description': '',
        'default': None,
        'anyOf': [{'type': 'array',
          'prefixItems': [{'type': 'integer'}, {'type': 'integer'}],
          'items': {'type': 'integer'},
          'minItems': 2,
          'maxItems': 2},
         {'type': 'string'},
         {'type': 'integer'}]}}}}


def test_get_schema_optional():
    assert get_schema(_optional_test) == {'name': '_optional_test',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'opt_tup': {'description': '',
        'default': None,
        'anyOf': [{'type': 'array',
          'prefixItems': [{'type': 'integer'}, {'type': 'integer'}],
          'items': {'type': 'integer'},
          'minItems': 2,
          'maxItems': 2},
         {'type': 'null'}]}}}}


def test_get_schema_parameterised_container_in_union():
    assert get_schema(_param_union_test) == {'name': '_param_union_test',
     'description': 'Test parameterized container in union',
     'input_schema': {'type': 'object',
      'properties': {'items': {'description': '',
        'default': None,
        'anyOf': [{'type': 'array', 'items': {'type': 'string'}},
         {'type': 'null'}]}}}}


# Containers: parameterised and raw typing aliases

@pytest.mark.parametrize('fn,expected', [
    (_list_test, {'name': '_list_test',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'l': {'description': '',
        'type': 'array',
        'items': {'type': 'integer'}}},
      'required': ['l']}}),
    (_raw_list_test, {'name': '_raw_list_test',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'l': {'description': '', 'type': 'array', 'items': {}}},
      'required': ['l']}}),
    (_dict_test, {'name': '_dict_test',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'d': {'description': '',
        'type': 'object',
        'additionalProperties': {'type': 'integer'}}},
      'required': ['d']}}),
    (_raw_dict_test, {'name': '_raw_dict_test',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'d': {'description': '', 'type': 'object'}},
      'required': ['d']}}),
], ids=['List[int]', 'List', 'Dict[str,int]', 'Dict'])
def test_get_schema_typing_containers(fn, expected):
    assert get_schema(fn) == expected


# Path defaults and evalable

def test_get_schema_path_default_kept_raw():
    assert get_schema(_path_test) == {'name': '_path_test',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'path': {'description': '',
        'default': Path('.'),
        'type': 'string',
        'format': 'Path'}}}}


def test_get_schema_non_primitive_default_is_not_literal_evalable():
    # Schemas that need to be converted using ast.literal_eval will fail with non-primitive defaults
    with pytest.raises(ValueError):
        ast.literal_eval(str(get_schema(_path_test)))


def test_get_schema_evalable_stringifies_default():
    s = get_schema(_path_test, evalable=True)
    assert s == {'name': '_path_test',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'path': {'description': '',
        'default': '.',
        'type': 'string',
        'format': 'Path'}}}}
    # what `evalable` is for (seed prose): the schema now survives ast.literal_eval
    assert ast.literal_eval(str(s)) == s


# skip_hidden

def test_get_schema_skip_hidden():
    # should exclude _internal
    assert get_schema(_hidden_eg, skip_hidden=True) == {'name': '_hidden_eg',
     'description': 'Test func',
     'input_schema': {'type': 'object',
      'properties': {'a': {'description': '', 'type': 'integer'}},
      'required': ['a']}}


def test_get_schema_keeps_hidden_by_default():
    assert get_schema(_hidden_eg) == {'name': '_hidden_eg',
     'description': 'Test func',
     'input_schema': {'type': 'object',
      'properties': {'a': {'description': '', 'type': 'integer'},
       '_internal': {'description': '', 'default': 'x', 'type': 'string'}},
      'required': ['a']}}


# Return annotations and type aliases

def test_get_schema_list_return_type_in_description():
    s = get_schema(_ret_list_test)
    assert 'type: array[string]' in s['description']


def test_get_schema_type_alias():
    s = get_schema(_cust_type)
    assert s == {'name': '_cust_type',
     'description': 'Mandatory docstring',
     'input_schema': {'type': 'object',
      'properties': {'a': {'description': '',
        'anyOf': [{'type': 'string'},
         {'type': 'array', 'items': {'type': 'string'}}]}},
      'required': ['a']}}


# ---------------------------------------------------------------------------------------------------------
# get_schema_nm
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('ns', [globals(), {'ca': ca}], ids=['module-globals', 'plain-dict'])
def test_get_schema_nm_keeps_dotted_name(ns):
    schema = get_schema_nm('ca.f', ns)
    assert schema['name'] == 'ca.f'
    assert schema == {'name': 'ca.f',
     'description': 'Do a thing',
     'input_schema': {'type': 'object',
      'properties': {'a': {'description': 'That is `a`', 'type': 'integer'}},
      'required': ['a']}}


def test_get_schema_nm_dot2dash():
    assert get_schema_nm('ca.f', {'ca': ca}, dot2dash=True)['name'] == 'ca-f'
