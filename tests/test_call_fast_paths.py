"""The quick ways of `call_func` (issue 22) take and refuse exactly what the careful ways do, with the same messages.

1. A call naming every parameter takes one generated step (`call._all_given`) and calls a plain function by position:
   against `_Plan.bind` and a call by keyword, on dicts and JSON text of random arguments.
2. A list of enum members, dates and other text kinds is read at once (a `texts` step): against its items read one
   by one, on lists mixing valid and invalid text, `str` subclasses, look-alike objects and values of other types.
3. Arguments as JSON text of one object are read by json's scanner alone (`_inputs._loads`): against `json.loads`.
Each is then broken on purpose, and its test must fail.
"""
import dataclasses, datetime as dt, enum, json
from decimal import Decimal
from pathlib import Path
from typing import Optional
from uuid import UUID

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import funccall.core._coerce, funccall.core._inputs, funccall.core.call
from funccall import ToolInputError, call_func, custom_types
from funccall.core._coerce import Mismatch, coercer
from funccall.core._inputs import read_arguments

# --- 1. every parameter named --------------------------------------------------------------------------

class Level(enum.Enum):
    low = 'low'
    high = 'high'

@dataclasses.dataclass
class Point:
    x: int
    y: int = 0

def _got(*args, **kw):
    "What a tool received: each value with its type, nested values included"
    return repr((args, sorted(kw.items())))

def typed(a: int, b: str): return _got(a, b)
def levels(ls: list[Level], n: float = 1.0): return _got(ls, n)
def mixed(p: Point, anything, day: Optional[dt.date] = None): return _got(p, anything, day)
def placed(a: int, /, b: list[int], *, c: bool = False): return _got(a, b, c=c)
def extra(a: int, **kw): return _got(a, **kw)
def nullable(x: Optional[int], y: int): return _got(x, y)
def loose(a, b=None): return _got(a, b)
async def later(a: int, b: float): return _got(a, b)

class Tools:
    def method(self, a: int, b: list[int]): return _got(a, b)

TOOLS = {f.__name__: f for f in (typed, levels, mixed, placed, extra, nullable, loose, later)} | {'method': Tools().method}
NAMES = sorted({'a', 'b', 'c', 'ls', 'n', 'p', 'anything', 'day', 'x', 'y', 'other', 'A'})

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False), st.just(2.0),
                     st.sampled_from(['1', 'x', 'low', 'high', '2026-01-02', 'true', '', '[1, 2]', '{"x": 1}']))
_values = st.recursive(_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(['x', 'y', 'z']), c, max_size=3),
                       max_leaves=5)

def _reference(nm: str, inputs) -> str:
    "The careful way: `bind` on the arguments read from the input, then a call by keyword (positional-only by position)"
    f = TOOLS[nm]
    try:
        plan = funccall.core.call._plan(f, nm)
        args, kw = plan.bind(read_arguments(inputs, nm), nm)
        res = f(*args, **kw)
        return funccall.core.call._run_sync(res) if plan.is_async else res
    except ToolInputError as e: return f'ToolInputError: {e}'

@settings(max_examples=examples(400), deadline=None)
@given(nm=st.sampled_from(sorted(TOOLS)), inputs=st.dictionaries(st.sampled_from(NAMES), _values, max_size=4), text=st.booleans())
def test_every_argument_named_is_taken_and_refused_as_bind_does(nm, inputs, text):
    sent = json.dumps(inputs) if text else inputs
    want = _reference(nm, sent)
    for _ in range(2):  # the first call makes the plan; the second takes the quick step
        assert call_func(nm, sent, TOOLS, raise_on_err=False) == want

@pytest.mark.parametrize('nm, inputs', [
    ('typed', {'a': 1, 'b': 'x'}), ('typed', {'a': '1', 'b': 'x'}), ('typed', {'b': 'x', 'a': True}), ('typed', {'a': 1, 'b': 'x', 'other': 2}),
    ('levels', {'ls': ['low', 'high'], 'n': 2}), ('levels', {'ls': ['low', 'lowest'], 'n': 'x'}), ('levels', {'ls': ['low'], 'n': None}),
    ('mixed', {'p': {'x': 1}, 'anything': None, 'day': None}), ('mixed', {'p': {'x': '1'}, 'anything': [1], 'day': '2026-01-02'}),
    ('placed', {'a': 1, 'b': [1], 'c': True}), ('placed', {'a': 1, 'b': ['x'], 'c': 'yes'}),
    ('extra', {'a': '2'}), ('nullable', {'x': None, 'y': 1}), ('loose', {'a': 1, 'b': None}), ('later', {'a': 1, 'b': 2}),
    ('method', {'a': 1, 'b': ['2']}),
])
def test_named_arguments_examples(nm, inputs):
    want = _reference(nm, inputs)
    for _ in range(2): assert call_func(nm, inputs, TOOLS, raise_on_err=False) == want
    assert call_func(nm, json.dumps(inputs), TOOLS, raise_on_err=False) == want

def test_a_plain_function_is_called_by_position_a_wrapper_by_keyword():
    import functools
    def by_keyword_only(**kw): return kw
    @functools.wraps(typed)
    def wrapper(**kw): return by_keyword_only(**kw)  # says it takes (a, b), but only by name
    for f in (typed, wrapper):
        ns = {'f': f}
        for _ in range(2): call_func('f', {'a': 1, 'b': 'x'}, ns)
    assert funccall.core.call._plan(typed, 'typed').all_given({'a': 1, 'b': 'x'}) == ((1, 'x'), {})
    assert funccall.core.call._plan(wrapper, 'f').all_given({'a': 1, 'b': 'x'}) == ((), {'a': 1, 'b': 'x'})
    assert call_func('f', {'a': '1', 'b': 'x'}, {'f': wrapper}) == {'a': 1, 'b': 'x'}

# --- 2. lists of text kinds read at once ----------------------------------------------------------------

class Named(enum.Enum):  # values that are not their names
    a = 'x'
    b = 'y'

class Text(str, enum.Enum):
    low = 'low'
    high = 'high'

class Rank(enum.IntEnum):
    one = 1
    two = 2

class Mixed(enum.Enum):
    red = 1
    green = 'green'

class Sub(str):
    "A `str` subclass: no JSON string"

class LooksLike:
    "Equal to the text it holds and hashed like it, but no string"
    def __init__(self, s): self.s = s
    def __eq__(self, other): return other == self.s
    def __hash__(self): return hash(self.s)
    def __repr__(self): return f'LooksLike({self.s!r})'

class Day(dt.date):
    "A date subclass that reads text its own way"
    @classmethod
    def fromisoformat(cls, s): return cls(2026, 1, 1) if isinstance(s, str) else dt.date.fromisoformat(s)

class Calendar(dt.date):
    "A date subclass that reads text as a date does"

KINDS = [Level, Named, Text, Rank, Mixed, dt.date, Day, Calendar, dt.datetime, dt.time, UUID, Decimal, Path]

@pytest.fixture(autouse=True, scope='module')
def _date_classes():
    "The date classes above read from text, as `custom_types` makes them (for this module's tests only)"
    custom_types.add(Day); custom_types.add(Calendar)
    yield
    custom_types.discard(Day); custom_types.discard(Calendar)
_texts = ['low', 'high', 'x', 'y', 'a', 'b', 'green', '1', 'one', 'lowest', '', '2026-01-02', '2026-02-30', '20260102',
          '2026-01-02T03:04:05Z', '2026-01-02 03:04', '03:04:05', '12:00+01:00', '0' * 120, '2026-01-02' + ' ' * 100,
          '12345678-1234-5678-1234-567812345678', '1.5', 'tomorrow']
_items = st.one_of(st.sampled_from(_texts), st.sampled_from(_texts).map(Sub), st.sampled_from(['low', 'x', 'green']).map(LooksLike),
                   st.sampled_from([1, 2, 1.0, True, None, b'low', dt.date(2026, 1, 2), dt.datetime(2026, 1, 2), Level.low, Text.high,
                                    Rank.one, Mixed.green, Decimal('1.5'), [1], {'x': 1}]),
                   st.text(max_size=12))

def _one_by_one(t, xs: list):
    "What the checked way makes of each item, or `Mismatch` when one doesn't fit"
    one = coercer(t)
    try: return [one(x) for x in xs]
    except Mismatch: return Mismatch

def _at_once(t, xs: list):
    try: return coercer(list[t])(xs)
    except Mismatch: return Mismatch

@settings(max_examples=examples(600), deadline=None)
@given(t=st.sampled_from(KINDS), head=st.sampled_from(_texts), rest=st.lists(_items, max_size=5))
def test_a_list_of_text_kinds_read_at_once_is_read_as_one_by_one(t, head, rest):
    xs = [head, *rest]  # text first: the list is read at once
    want, got = _one_by_one(t, xs), _at_once(t, xs)
    assert got == want and repr(got) == repr(want), (t, xs)

@pytest.mark.parametrize('t, xs', [
    (Named, ['x', Sub('x')]), (Named, ['x', LooksLike('x')]), (Level, ['low', LooksLike('low')]), (Mixed, ['green', 1.0]),
    (Mixed, ['green', True]), (Day, ['2026-01-02', '0' * 120]), (Calendar, ['2026-01-02', Sub('2026-01-03')]),
    (dt.date, ['2026-01-02', '2026-01-02' + ' ' * 100]), (dt.datetime, ['2026-01-02T03:04:05Z', b'2026']),
])
def test_text_kinds_examples(t, xs):
    assert repr(_at_once(t, xs)) == repr(_one_by_one(t, xs))

def test_a_date_class_reading_its_own_way_keeps_the_limits():
    "Text longer than a date is refused before a parser of the class's own reads it, in a list too"
    for xs in (['0' * 120], ['2026-01-02', '0' * 120], ['2026-01-02', 5]):
        assert _one_by_one(Day, xs) is Mismatch and _at_once(Day, xs) is Mismatch
    assert _at_once(Day, ['2026-01-02', '0' * 90]) == [Day(2026, 1, 1)] * 2

def _days(days: list[dt.date]): return days

def test_date_lists_with_their_report():
    msg = call_func('days', {'days': ['2026-01-02', '2026-02-30', 'tomorrow', '0' * 120]}, {'days': _days}, raise_on_err=False)
    assert msg == ("ToolInputError: Tool 'days' got 3 bad arguments:\n"
                   "- days[1]: '2026-02-30' is not a valid date: day is out of range for month\n"
                   "- days[2]: expected an ISO 8601 date string (YYYY-MM-DD), got 'tomorrow'\n"
                   f"- days[3]: expected an ISO 8601 date string (YYYY-MM-DD), got '{'0' * 76}...")  # (as before issue 22)

# --- 3. JSON text of one object -------------------------------------------------------------------------

def _outcome(read, text: str):
    try: return 'ok', read(text)
    except (ValueError, RecursionError) as e: return type(e).__name__, str(e)

_json_texts = st.one_of(
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
                 lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3), max_leaves=6).map(json.dumps),
    st.text(alphabet='{}[]":, \n\tabc01-.eE\\u', max_size=20))

@settings(max_examples=examples(600), deadline=None)
@given(head=st.sampled_from(['', '{', '{"a": ', ' ', '"']), text=_json_texts, tail=st.sampled_from(['', ' ', '\n', 'x', '}', '{}']))
def test_json_text_is_read_as_json_loads_reads_it(head, text, tail):
    t = head + text + tail
    assert repr(_outcome(funccall.core._inputs._loads, t)) == repr(_outcome(json.loads, t))

@pytest.mark.parametrize('text', ['{"a": 1}', '{"a": 1} ', '{"a": 1}x', '{"a": ', '{"a": [1,', '{', '{"a": NaN}', '{"a":1}{}',
                                  '{"a": "\\ud800"}', '{"a": "x', '{' * 100_000, '{"a":' * 100_000, '\ufeff{}'])
def test_json_text_examples(text):
    assert repr(_outcome(funccall.core._inputs._loads, text)) == repr(_outcome(json.loads, text))

# --- each quick way broken on purpose: its test fails ----------------------------------------------------

def _fails(test, *args):
    with pytest.raises(AssertionError): test(*args)

@pytest.fixture
def fresh_plans(monkeypatch):
    "Plans and their generated code made anew (under the patch), and again after it"
    for attr in ('_plans', '_all_given_code'): monkeypatch.setattr(funccall.core.call, attr, {})
    monkeypatch.setattr(funccall.core._coerce, '_coercers', funccall.core._coerce.type_cache(funccall.core._coerce._build))

def test_an_all_given_step_that_coerces_nothing_is_caught(monkeypatch, fresh_plans):
    real = funccall.core.call._all_given
    anything = lambda params, by_position: real({k: (funccall.core.call._identity, *spec[1:]) for k, spec in params.items()}, by_position)  # noqa: E731
    monkeypatch.setattr(funccall.core.call, '_all_given', anything)
    _fails(test_named_arguments_examples, 'typed', {'a': '1', 'b': 'x'})

def test_an_all_given_step_that_takes_more_arguments_is_caught(monkeypatch, fresh_plans):
    lines = lambda src: '\n'.join(ln for ln in src.split('\n') if 'len(d)' not in ln)  # noqa: E731
    monkeypatch.setattr(funccall.core.call, 'compile', lambda src, *a: compile(lines(src), *a), raising=False)
    _fails(test_named_arguments_examples, 'typed', {'a': 1, 'b': 'x', 'other': 2})

def test_a_step_calling_a_wrapper_by_position_is_caught(monkeypatch, fresh_plans):
    monkeypatch.setattr(funccall.core.call, '_by_position', lambda f, names: True)
    with pytest.raises((AssertionError, TypeError)): test_a_plain_function_is_called_by_position_a_wrapper_by_keyword()

def test_enum_texts_without_their_type_test_are_caught(monkeypatch, fresh_plans):
    monkeypatch.setattr(funccall.core._coerce, 'countOf', lambda xs, x: len(list(xs)))
    _fails(test_text_kinds_examples, Named, ['x', Sub('x')])
    _fails(test_text_kinds_examples, Mixed, ['green', True])

def test_date_texts_read_without_their_checks_are_caught(monkeypatch, fresh_plans):
    monkeypatch.setattr(funccall.core._coerce, '_own_date_parser', lambda t: True)
    _fails(test_a_date_class_reading_its_own_way_keeps_the_limits)

def test_json_text_read_past_its_end_is_caught(monkeypatch):
    scan = funccall.core._inputs._scan
    monkeypatch.setattr(funccall.core._inputs, '_scan', lambda s, i: (scan(s, i)[0], len(s)))
    _fails(test_json_text_examples, '{"a": 1}x')

# --- 4. plain digits for an integer read without the pattern ----------------------------------------------

def _int_as_before(v: str):
    "An integer from text, by the pattern alone (funccall before issue 22's shortcut)"
    if len(v) <= funccall.core._coerce._NUM_TEXT and funccall.core._coerce._int_re.match(v):
        try: return int(v)
        except ValueError: pass
    return Mismatch

@settings(max_examples=examples(400), deadline=None)
@given(st.text(alphabet='0123456789+- \t\n\u0661\u00b2\u2070_.e', max_size=8) | st.just('1' * 5_001))
def test_text_for_an_integer_is_read_as_the_pattern_reads_it(v):
    try: got = funccall.core._coerce._int(v)
    except Mismatch: got = Mismatch
    assert got == _int_as_before(v) and type(got) is type(_int_as_before(v))
