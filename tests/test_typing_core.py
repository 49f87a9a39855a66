"""The core's annotations are for checkers only: signatures, docments comments and schemas read at run time stay as they were."""
import inspect, typing

import pytest
from fastcore.docments import docments

import funccall as fc


@pytest.mark.parametrize('f, params', [
    (fc.call_func, [('fc_name', inspect.Parameter.empty), ('fc_inputs', inspect.Parameter.empty), ('ns', None), ('raise_on_err', True)]),
    (fc.call_func_async, [('fc_name', inspect.Parameter.empty), ('fc_inputs', inspect.Parameter.empty), ('ns', None), ('raise_on_err', True),
                          ('in_thread', True)]),
    (fc.coerce_inputs, [('func', inspect.Parameter.empty), ('inputs', inspect.Parameter.empty), ('name', None), ('fold', None)]),
])
def test_overloaded_calls_keep_their_signature_and_docments(f, params):
    "The overload stubs come first: what runs, and what `inspect` and `docments` read, is the implementation"
    sig = inspect.signature(f)
    assert [(p.name, p.default) for p in sig.parameters.values()] == params
    docs = docments(f)
    assert all(docs[nm] for nm, _ in params), docs  # every parameter's comment is read
    assert docs['return']


def test_get_schema_signature_is_the_reference_one():
    "`name` and `**kw` stay untyped at run time (the reference's `get_schema(get_schema)` shows them so); the overloads type them"
    ps = inspect.signature(fc.get_schema).parameters
    assert ps['name'].annotation is inspect.Parameter.empty and ps['kw'].annotation is inspect.Parameter.empty
    assert list(fc.get_schema(fc.get_schema)['input_schema']['properties']) == ['f', 'pname', 'evalable', 'skip_hidden', 'name']
    assert fc.get_schema(fc.get_schema)['input_schema']['properties']['f']['anyOf'] == [{'type': 'object'}, {'type': 'object'}]


@pytest.mark.parametrize('f', [fc.call_func, fc.call_func_async, fc.coerce_inputs, fc.error_text, fc.get_schema, fc.get_schema_nm,
                               fc.handle_type, fc.union_schema, fc.mk_ns, fc.resolve_nm, fc.kind, fc.set_max_workers])
def test_annotations_resolve_at_run_time(f):
    "Every name a public annotation uses is importable where it is written: `get_type_hints` (and so a schema of it) works"
    hints = typing.get_type_hints(f)
    assert 'return' in hints


def test_get_schema_of_call_func_reads_its_annotations():
    "A schema of a typed core function still renders (its namespace and arguments as the unions they are)"
    s = fc.get_schema(fc.call_func)['input_schema']
    assert s['required'] == ['fc_name', 'fc_inputs'] and s['properties']['raise_on_err']['type'] == 'boolean'


def test_public_classes_resolve_their_annotations_under_the_name_users_import():
    """`funccall.ToolCall` is shown as funccall's (its `__module__`), where `get_type_hints` looks its annotations up:
    `ClassVar`, `Any`, `Problem` aren't names of `funccall`, yet every public class's hints resolve, as they did before"""
    for nm in fc.__all__:
        if isinstance(o := getattr(fc, nm), type):
            typing.get_type_hints(o)
            typing.get_type_hints(o.__init__)


def test_a_tool_taking_a_public_class_has_the_schema_it_had():
    "A user's tool whose parameter is a `ToolCall` (a NamedTuple's subclass now) or an `ExprCall`: typed fields, no SchemaError"
    def replay(
        call: fc.ToolCall,  # the call to run again
        expr: fc.ExprCall,  # and a parsed expression
    ) -> str:
        "Run a recorded call again"
        return call.name + expr.name
    s = fc.get_schema(replay)['input_schema']
    props = s['$defs']['ToolCall']['properties']
    assert props['name']['type'] == 'string' and props['id']['type'] == 'string'
    assert {'type': 'string'} in props['arguments']['anyOf'] and s['required'] == ['call', 'expr']
    assert s['$defs']['ExprCall']['properties']['args'] == {'description': '', 'type': 'array', 'items': {}}
    assert fc.call_func(replay, {'call': {'name': 'a', 'arguments': {}, 'id': '1'},
                                 'expr': {'name': 'b', 'args': [], 'kwargs': {}, 'text': 'b()'}}) == 'ab'
