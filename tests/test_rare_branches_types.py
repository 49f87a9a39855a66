"""`core._types`' (and `_json`'s) rare branches, each for what it exists for: the error a developer reads for an
annotation that can't be evaluated or resolved, a closure variable not yet assigned, an unresolvable return annotation
costing only the `Returns:` line, `Self` inside an old-style generic, a string transform only pydantic can run, a
callable object that is a method descriptor, and a default that holds itself."""
import typing
from dataclasses import dataclass
from typing import Annotated

import pytest

from funccall import call_func, get_schema
from funccall.core._json import jsonable
from funccall import SchemaError, SchemaWarning
from funccall.core._types import is_callable_object
from funccall.core.schema import handle_type

def test_a_string_annotation_reaching_the_walker_names_itself_and_the_fix():
    with pytest.raises(SchemaError, match=r"Unresolved forward reference 'Later'; define it at module level"): handle_type('Later', {})
    with pytest.raises(SchemaError, match='Unresolved forward reference'): handle_type(typing.ForwardRef('Later'), {})

def test_the_empty_tuple_has_no_items():
    assert handle_type(tuple[()], {}) == {'type': 'array', 'items': {}, 'maxItems': 0}

def bad_annotation(
    x: '1 / 0',  # noqa: F722 - an annotation whose evaluation fails
) -> int:
    "A tool"
    return 0

def test_an_annotation_that_fails_to_evaluate_says_so():
    with pytest.raises(SchemaError, match=r"can't evaluate its annotations \(division by zero\)"): get_schema(bad_annotation)

def undefined_param(
    x: 'NotDefinedAnywhere',  # noqa: F821
) -> int:
    "A tool"
    return 0

def undefined_return(
    x: int,  # a number
) -> 'NotDefinedAnywhere':  # noqa: F821
    "A tool"
    return x

def test_an_unresolvable_parameter_fails_but_an_unresolvable_return_costs_only_its_line():
    with pytest.raises(SchemaError, match="names 'NotDefinedAnywhere', which is not defined in its module"): get_schema(undefined_param)
    s = get_schema(undefined_return)
    assert s['input_schema']['properties']['x']['type'] == 'integer' and 'Returns' not in s['description']

def test_a_closure_variable_not_yet_assigned_doesnt_stop_string_annotations_resolving():
    "A nested tool whose body uses a name assigned after the schema is made: its empty cell is passed over"
    def make():
        def tool(
            x: 'int',  # a number
        ) -> 'int':    # it, plus later's
            "A nested tool"
            return x + later
        s = get_schema(tool)
        later = 1
        return s, tool
    s, tool = make()
    assert s['input_schema']['properties']['x']['type'] == 'integer' and tool(1) == 2

@dataclass
class Node:
    "A tree node"
    name: str

    def children(
        self,
        others: typing.List[typing.Self],  # noqa: UP006 - the old spelling, read differently from `list[Self]`
    ) -> int:
        "Adopt some nodes"
        return len(others)

def test_self_inside_an_old_style_generic_is_the_class():
    s = get_schema(Node.children)
    assert s['input_schema']['properties']['others']['items'] == {'$ref': '#/$defs/Node'}

def test_a_string_transform_only_pydantic_runs_is_run():
    "`StringConstraints(strip_whitespace=True)`: no JSON Schema keyword says it, so pydantic validates the value"
    from pydantic import StringConstraints
    def tag(
        t: Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True)],  # a tag
    ) -> str:
        "Normalise a tag"
        return t
    s = get_schema(tag)
    assert s['input_schema']['properties']['t']['type'] == 'string'
    assert call_func(tag, {'t': '  Python '}) == 'python'

class Bound:
    "A decorator object that binds like a function (a method descriptor): its own signature, not its `__call__`'s"
    def __call__(self, *a): return a
    def __get__(self, obj, cls=None): return self

class Plain:
    def __call__(self, x: int) -> int: return x

def test_a_callable_object_that_binds_like_a_method_is_a_routine():
    assert is_callable_object(Plain()) and not is_callable_object(Bound())

def test_a_value_holding_itself_is_a_type_error_and_a_default_that_does_is_left_out():
    x: list = []
    x.append(x)
    with pytest.raises(TypeError, match="list value holds itself, or is nested deeper than Python recurses: JSON can't hold it"): jsonable(x)
    def tool(
        items: list = x,  # the items
    ) -> int:
        "A tool"
        return 0
    with pytest.warns(SchemaWarning, match=r"Parameter 'items' of '.*tool': default left out of the schema: it holds itself"):
        s = get_schema(tool, evalable=True)  # (as a Tool makes it: before, a RecursionError)
    assert 'default' not in s['input_schema']['properties']['items']
