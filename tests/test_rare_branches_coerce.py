"""`core._coerce`'s rare branches through `call_func`, each for what it exists for: a pattern that doesn't compile named
as the developer's mistake, an integer past a float's range judged a multiple exactly, a Python caller's tuple or set for a list,
text that looks like an object and isn't, a date given as a date (and a datetime refused for one), a class with every
field wrong (the first ten shown, the rest counted), a NamedTuple given itself or too many items, a class whose own
check refuses, and a class holding itself."""
import dataclasses, datetime as dt
from typing import Annotated, NamedTuple

import pytest

from funccall import SchemaError, ToolInputError, call_func

pydantic = pytest.importorskip('pydantic')

def bad_pattern(
    code: Annotated[str, pydantic.Field(pattern='(')],  # a code
) -> str:                                               # it
    "A tool whose pattern doesn't compile"
    return code

def test_a_pattern_that_doesnt_compile_is_the_developers_error_not_the_models():
    with pytest.raises(SchemaError, match=r"pattern '\(' doesn't compile: missing \)"): call_func(bad_pattern, {'code': 'a'})

def halves(
    x: Annotated[int, pydantic.Field(multiple_of=0.5)],  # a number of halves
) -> int:                                                # it
    "A tool taking multiples of 0.5"
    return x

def tenths(
    x: Annotated[int, pydantic.Field(multiple_of=0.3)],  # a number
) -> int:                                                # it
    "A tool taking multiples of 0.3"
    return x

def test_a_multiple_of_a_float_past_what_floats_hold_is_judged_exactly():
    "An integer past any float's range (10**400) is a multiple of 0.5, and not of 0.3: it was refused as one, its quotient overflowing"
    assert call_func(halves, {'x': 4}) == 4 and call_func(halves, {'x': 10 ** 400 + 1}) == 10 ** 400 + 1
    assert call_func(tenths, {'x': 3 * 10 ** 400}) == 3 * 10 ** 400
    with pytest.raises(ToolInputError, match='is not a multiple of 0.3'): call_func(tenths, {'x': 10 ** 400})

def total(
    xs: list[int],  # numbers
) -> int:           # their sum
    "Add numbers"
    return sum(xs)

def test_a_python_callers_tuple_or_set_is_a_list():
    assert call_func(total, {'xs': (1, 2)}) == 3 and call_func(total, {'xs': {5}}) == 5

def count(
    d: dict[str, int],  # counts
) -> int:               # how many keys
    "Count keys"
    return len(d)

def test_text_that_looks_like_an_object_and_isnt_says_what_was_expected():
    assert call_func(count, {'d': '{"a": 1}'}) == 1  # (an object sent as JSON text: read)
    with pytest.raises(ToolInputError, match="expected an object of integers, got '{not json'"): call_func(count, {'d': '{not json'})

def day(
    when: dt.date,  # a day
) -> str:           # it, ISO
    "A day"
    return when.isoformat()

def test_a_date_is_taken_as_it_is_and_a_datetime_is_no_date():
    "A datetime is a date subclass in Python, but not a date: it isn't passed through as one"
    assert call_func(day, {'when': dt.date(2020, 1, 2)}) == '2020-01-02'
    with pytest.raises(ToolInputError, match=r'expected an ISO 8601 date string \(YYYY-MM-DD\), got datetime.datetime'):
        call_func(day, {'when': dt.datetime(2020, 1, 2, 3)})

Wide = dataclasses.make_dataclass('Wide', [(f'f{i}', int) for i in range(30)])

def wide(
    w: Wide,  # thirty numbers
) -> int:     # how many
    "A wide record"
    return 30

@pytest.mark.parametrize('given,problem', [({f'f{i}': 'x' for i in range(30)}, "expected an integer, got 'x'"), ({}, 'missing (required)')])
def test_a_class_with_every_field_wrong_shows_ten_and_counts_the_rest(given, problem):
    with pytest.raises(ToolInputError) as e: call_func(wide, {'w': given})
    text = str(e.value)
    assert "got at least 11 bad arguments (the first 10 shown)" in text
    assert [ln for ln in text.splitlines() if ln.startswith('- ')] == [f'- w.f{i}: {problem}' for i in range(10)] + ['- ... and more'], text

class Point(NamedTuple):
    x: int
    y: int = 0

def where(
    p: Point,  # a point
) -> str:      # it
    "A point"
    return repr(p)

def test_a_namedtuple_is_taken_as_itself_or_its_items_but_never_too_many():
    assert call_func(where, {'p': Point(1, 2)}) == 'Point(x=1, y=2)'
    assert call_func(where, {'p': [3]}) == 'Point(x=3, y=0)'
    with pytest.raises(ToolInputError, match=r'or an array of at most 2 items, got \[1, 2, 3\]'): call_func(where, {'p': [1, 2, 3]})

@dataclasses.dataclass
class Positive:
    n: int
    def __post_init__(self):
        if self.n < 0: raise ValueError('n must be >= 0')

def positive(
    p: Positive,  # a positive number
) -> int:         # it
    "A positive number"
    return p.n

def test_a_class_whose_own_check_refuses_says_its_reason():
    with pytest.raises(ToolInputError, match='not a valid Positive: ValueError: n must be >= 0'): call_func(positive, {'p': {'n': -1}})

@dataclasses.dataclass
class Tree:
    name: str
    kids: 'list[Tree]' = dataclasses.field(default_factory=list)

def size(
    t: Tree,  # a tree
) -> int:     # how many nodes
    "Count a tree's nodes"
    return 1 + sum(size(k) for k in t.kids)

def test_a_class_holding_itself_is_built_at_every_depth():
    assert call_func(size, {'t': {'name': 'a', 'kids': [{'name': 'b', 'kids': [{'name': 'c'}]}, {'name': 'd'}]}}) == 4
