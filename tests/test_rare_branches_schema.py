"""`core.schema`'s rare branches through `get_schema`: hidden fields of a class tool skipped, the `Returns:` line for a
reference, a union, a tuple and a map, and for a return type with no schema, a partial, `Self` outside a class, a type
that is no tool, and an unknown keyword argument."""
import enum, functools, typing
from dataclasses import dataclass

import pytest

from funccall import SchemaError, SchemaWarning, get_schema

@dataclass
class Order:
    "An order"
    sku: str        # what
    _audit: str = ''  # the application's own

def test_a_class_tools_hidden_fields_are_skipped_when_asked():
    assert set(get_schema(Order, skip_hidden=True)['input_schema']['properties']) == {'sku'}
    assert set(get_schema(Order)['input_schema']['properties']) == {'sku', '_audit'}

def find(
    sku: str,  # what
) -> typing.Optional[Order]:  # the order, if any
    "Find an order"

def pair(
    n: int,  # a number
) -> tuple[int, str]:  # it and its name
    "A pair"

def counts(
    n: int,  # a number
) -> dict[str, int]:   # counts by name
    "Counts"

def waits(
    n: int,  # a number
) -> typing.Awaitable[int]:  # later
    "Something to await"

@pytest.mark.parametrize('fn,line', [
    (find, 'the order, if any (type: Order | null)'),
    (pair, 'it and its name (type: array[integer, string])'),
    (counts, 'counts by name (type: object[string, integer])'),
    (waits, 'later (type: Awaitable[int])'),  # (no schema for it: its name)
])
def test_the_returns_line_names_the_type(fn, line):
    assert get_schema(fn)['description'].endswith(f'Returns:\n- {line}')

def test_a_partial_is_described_by_its_function():
    s = get_schema(functools.partial(pair, 3))
    assert s['description'].startswith('A pair')

def test_self_outside_a_class_is_the_developers_error():
    def make(
        n: int,  # a number
    ) -> typing.Self:  # noqa: F821
        "Not a method"
    with pytest.raises(SchemaError, match='`Self` outside a class.s method; annotate with the class'): get_schema(make)

class Color(enum.Enum):
    red = 1

@pytest.mark.parametrize('t,what', [(Color, 'an enum'), (int, 'a scalar')])
def test_a_type_that_is_no_tool_is_refused(t, what):
    with pytest.raises(SchemaError, match=f'{what} type is not a tool; give a function or a class'): get_schema(t)

def test_an_unknown_keyword_argument_is_refused():
    with pytest.raises(TypeError, match=r"get_schema\(\) got unexpected keyword arguments \['strict'\]"): get_schema(pair, strict=True)

def test_a_default_that_holds_itself_is_left_out_saying_so():
    "A default list holding itself (or nested past any schema's depth) can't be shown: warned and left out, never a RecursionError"
    loop = [1]; loop.append(loop)
    deep = []
    for _ in range(300): deep = [deep]
    for dflt in (loop, deep):
        def f(x: list = dflt):  # noqa: B006
            "F."
        for evalable in (False, True):
            with pytest.warns(SchemaWarning, match="default left out of the schema"):
                s = get_schema(f, evalable=evalable)
            assert 'default' not in s['input_schema']['properties']['x']
