"""The idioms agent builders write, as pydantic's, pydantic-ai's, openai-agents' and langchain's docs show them (issue 29).

Each row is one idiom: the schema funccall gives it, a call the model may make and what the function receives, and a
call that must be refused with the words the model reads. The property test at the end checks that a constraint the
schema states is enforced at call time exactly where `jsonschema` says a value breaks it.
"""
import dataclasses, json, math, re, sqlite3, subprocess, sys, textwrap
from typing import Annotated, Any, Generic, NamedTuple, TypeVar

import jsonschema, pytest
from hypothesis import given, settings, strategies as st
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, PlainValidator, TypeAdapter, ValidationError, WrapValidator
from typing_extensions import Self, TypedDict

from funccall import SchemaError, Tool, ToolInputError, call_func, coerce_inputs, get_schema
from conftest import examples

# --- pydantic's `Field` as a parameter's default (the issue's example; openai-agents' tests of it) -------------------

def score(score: int = Field(..., ge=0, le=100, description="0 to 100"), name: str = Field(default="Unknown", min_length=1)):
    "Record a score"
    return score, name

def tagged(tags: list[str] = Field(default_factory=list, max_length=3), when: str = Field(default_factory=lambda: 'now')):
    "Tag something"
    return tags, when

def titled(n: int = Field(3, title='Count', examples=[1, 2], json_schema_extra={'x-unit': 'items'}), old: bool = Field(False, deprecated='use n')):
    "Count things"
    return n

def exact(n: int = Field(strict=True), m: Annotated[int, Field(strict=False)] = 0):
    "pydantic's strict mode: no \"5\" for 5 (funccall's repairs are lax mode's)"
    return n, m

def priced(price: Annotated[float, Field(default=5.0, ge=0)]):
    "Annotated Field with a default of its own, and no `= 5.0`"
    return price

def ranged(x: Annotated[int, Field(gt=0, lt=10, multiple_of=2)], code: Annotated[str, Field(pattern=r'^[A-Z]{3}$')] = 'ABC'):
    "Field constraints inside Annotated"
    return x, code

# --- pydantic's validators in `Annotated`, as its docs show them -----------------------------------------------------

def add_one(v: int) -> int: return v + 1
def double(v: int) -> int: return v * 2

def ordered(n: Annotated[int, AfterValidator(add_one), Field(ge=0), AfterValidator(double)]):
    "pydantic runs these in order: 2 -> 3 -> (>= 0) -> 6"
    return n

def is_even(value: int) -> int:
    if value % 2 == 1: raise ValueError(f'{value} is not an even number')
    return value

def even(number: Annotated[int, AfterValidator(is_even)]):
    "pydantic's AfterValidator example"
    return number

def ensure_list(value: Any) -> Any: return value if isinstance(value, list) else [value]

def listed(numbers: Annotated[list[int], BeforeValidator(ensure_list)]):
    "pydantic's BeforeValidator example"
    return numbers

def val_number(value: Any) -> Any: return value * 2 if isinstance(value, int) else value

def plain(number: Annotated[int, PlainValidator(val_number)]):
    "pydantic's PlainValidator example: no int check of its own"
    return number

def truncate(value: Any, handler) -> str:
    try: return handler(value)
    except ValidationError as err:
        if err.errors()[0]['type'] == 'string_too_long': return handler(value[:5])
        raise

def wrapped(my_string: Annotated[str, Field(max_length=5), WrapValidator(truncate)]):
    "pydantic's WrapValidator example"
    return my_string

# --- injected parameters: never walked for a schema, whatever their type --------------------------------------------

from agents import RunContextWrapper  # noqa: E402 - openai-agents' own context type

def roll(ctx: RunContextWrapper[str], guess: int) -> str:
    "openai-agents: the context comes first"
    return f'{ctx.context}:{guess}'

T = TypeVar('T')

@dataclasses.dataclass
class RunContext(Generic[T]):  # pydantic-ai's `RunContext[Deps]` shape (pydantic-ai is not a test dependency)
    deps: T

def player(ctx: RunContext[str], n: int = 1) -> str:
    "pydantic-ai: `ctx: RunContext[str]` first"
    return ctx.deps * n

def query(db: sqlite3.Connection, sql: str) -> list:
    "Run a query on the application's connection"
    return db.execute(sql).fetchall()

# --- typed *args and **kwargs, as openai-agents sends them ----------------------------------------------------------

def total(label: str, *args: int, **kwargs: str) -> str:
    "Sum numbers"
    return f'{label}={sum(args)} {sorted(kwargs.items())}'

def spaced(first: int, /, second: int = 2, *rest: Annotated[int, Field(ge=0)]):
    "Positional parameters before *rest go by position"
    return first, second, rest

# --- folding a lone model / TypedDict / dataclass parameter into the root (pydantic-ai's single-argument tools) -------

class Point(BaseModel):
    "A point"
    x: int
    y: int = 0

def norm(p: Point) -> float:
    "Distance from the origin"
    return math.hypot(p.x, p.y)

@dataclasses.dataclass
class Box:
    w: int
    h: int = 1

def area(box: Box) -> int:
    "A box's area"
    return box.w * box.h

# --- langchain's TypedDict convention: `Annotated[T, default, "description"]` --------------------------------------

class Args(TypedDict):
    a: Annotated[int, ..., "First integer"]
    b: Annotated[int, 2, "Second integer"]

def mul(args: Args) -> int:
    "Multiply two integers"
    return args['a'] * args['b']  # the default the schema shows is filled in


class Row(NamedTuple):
    fn: Any
    schema: dict              # the expected `input_schema`
    ok: dict                  # a call the model may make
    value: Any                # what the function returns for it
    bad: dict                 # a call to refuse
    message: str              # the refusal, as the model reads it
    opts: dict = {}           # `inject=`/`fold=` for the `Tool` and `get_schema`
    injected: dict = {}       # the application's values


def _db():
    db = sqlite3.connect(':memory:')
    db.execute('create table t (x)'); db.execute('insert into t values (1)')
    return db

ROWS = {
    'pydantic-field-default': Row(score,
        {'type': 'object', 'properties': {
            'score': {'description': '0 to 100', 'type': 'integer', 'minimum': 0, 'maximum': 100},
            'name': {'description': '', 'default': 'Unknown', 'type': 'string', 'minLength': 1}}, 'required': ['score']},
        {'score': 85}, (85, 'Unknown'), {'score': 150}, "Tool 'score', argument 'score': 150 is more than the maximum 100"),
    'pydantic-field-required': Row(score, get_schema(score)['input_schema'], {'score': 0, 'name': 'Al'}, (0, 'Al'),
        {}, "Tool 'score', argument 'score': missing (required)"),
    'pydantic-field-min-length': Row(score, get_schema(score)['input_schema'], {'score': '7'}, (7, 'Unknown'),
        {'score': 1, 'name': ''}, "Tool 'score', argument 'name': '' is shorter than 1 characters"),
    'pydantic-default-factory': Row(tagged,
        {'type': 'object', 'properties': {
            'tags': {'description': '', 'default': [], 'type': 'array', 'items': {'type': 'string'}, 'maxItems': 3},
            'when': {'description': '', 'type': 'string'}}},
        {}, ([], 'now'), {'tags': ['a', 'b', 'c', 'd']}, "Tool 'tagged', argument 'tags': ['a', 'b', 'c', 'd'] has more than 3 items"),
    'pydantic-title-examples': Row(titled,
        {'type': 'object', 'properties': {'n': {'description': '', 'default': 3, 'type': 'integer', 'title': 'Count',
                                                'examples': [1, 2], 'x-unit': 'items'},
                                          'old': {'description': '', 'default': False, 'type': 'boolean', 'deprecated': True}}},
        {}, 3, {'n': 'x'}, "Tool 'titled', argument 'n': expected an integer, got 'x'"),
    'pydantic-strict': Row(exact,
        {'type': 'object', 'properties': {'n': {'description': '', 'type': 'integer'}, 'm': {'description': '', 'default': 0, 'type': 'integer'}},
         'required': ['n']},
        {'n': 5, 'm': '6'}, (5, 6), {'n': '5'}, "Tool 'exact', argument 'n': Input should be a valid integer, got '5'"),
    'pydantic-annotated-default': Row(priced,
        {'type': 'object', 'properties': {'price': {'description': '', 'default': 5.0, 'type': 'number', 'minimum': 0}}},
        {}, 5.0, {'price': -1}, "Tool 'priced', argument 'price': -1 is less than the minimum 0"),
    'pydantic-annotated-constraints': Row(ranged,
        {'type': 'object', 'properties': {
            'x': {'description': '', 'type': 'integer', 'exclusiveMinimum': 0, 'exclusiveMaximum': 10, 'multipleOf': 2},
            'code': {'description': '', 'default': 'ABC', 'type': 'string', 'pattern': '^[A-Z]{3}$'}}, 'required': ['x']},
        {'x': 4, 'code': 'XYZ'}, (4, 'XYZ'), {'x': 3, 'code': 'abc'},
        "Tool 'ranged' got 2 bad arguments:\n- x: 3 is not a multiple of 2\n- code: 'abc' does not match the pattern '^[A-Z]{3}$'"),
    'pydantic-validators-in-order': Row(ordered,
        {'type': 'object', 'properties': {'n': {'description': '', 'type': 'integer', 'minimum': 0}}, 'required': ['n']},
        {'n': 2}, 6, {'n': -5}, "Tool 'ordered', argument 'n': Input should be greater than or equal to 0, got -5"),  # (pydantic shows what was sent)
    'pydantic-after-validator': Row(even,
        {'type': 'object', 'properties': {'number': {'description': '', 'type': 'integer'}}, 'required': ['number']},
        {'number': '4'}, 4, {'number': 3}, "Tool 'even', argument 'number': Value error, 3 is not an even number, got 3"),
    'pydantic-before-validator': Row(listed,
        {'type': 'object', 'properties': {'numbers': {'description': '', 'type': 'array', 'items': {'type': 'integer'}}}, 'required': ['numbers']},
        {'numbers': 2}, [2], {'numbers': ['x']},
        "Tool 'listed', argument 'numbers[0]': Input should be a valid integer, unable to parse string as an integer, got 'x'"),
    'pydantic-plain-validator': Row(plain,
        {'type': 'object', 'properties': {'number': {'description': '', 'type': 'integer'}}, 'required': ['number']},
        {'number': 4}, 8, {}, "Tool 'plain', argument 'number': missing (required)"),
    'pydantic-wrap-validator': Row(wrapped,
        {'type': 'object', 'properties': {'my_string': {'description': '', 'type': 'string', 'maxLength': 5}}, 'required': ['my_string']},
        {'my_string': 'abcdefgh'}, 'abcde', {'my_string': 5}, "Tool 'wrapped', argument 'my_string': Input should be a valid string, got 5"),
    'openai-agents-context': Row(roll,
        {'type': 'object', 'properties': {'guess': {'description': '', 'type': 'integer'}}, 'required': ['guess']},
        {'guess': '3'}, 'app:3', {'guess': 3, 'ctx': 'mine'}, "Tool 'roll': 'ctx' is supplied by the application, not by you",
        {'inject': 'ctx'}, {'ctx': RunContextWrapper(context='app')}),
    'pydantic-ai-context': Row(player,
        {'type': 'object', 'properties': {'n': {'description': '', 'default': 1, 'type': 'integer'}}},
        {'n': 2}, 'abab', {'n': 'many'}, "Tool 'player', argument 'n': expected an integer, got 'many'",
        {'inject': 'ctx'}, {'ctx': RunContext('ab')}),
    'c-class-injected': Row(query,
        {'type': 'object', 'properties': {'sql': {'description': '', 'type': 'string'}}, 'required': ['sql']},
        {'sql': 'select x from t'}, [(1,)], {'sql': ['x']}, "Tool 'query', argument 'sql': expected a string, got ['x']",
        {'inject': 'db'}, {'db': _db()}),
    'openai-agents-var-args': Row(total,
        {'type': 'object', 'properties': {
            'label': {'description': '', 'type': 'string'},
            'args': {'description': '', 'type': 'array', 'items': {'type': 'integer'}},
            'kwargs': {'description': '', 'type': 'object', 'additionalProperties': {'type': 'string'}}}, 'required': ['label']},
        {'label': 's', 'args': [1, '2'], 'kwargs': {'unit': 'cm'}}, "s=3 [('unit', 'cm')]",
        {'label': 's', 'unit': 'cm'}, "Tool 'total', argument 'unit': unknown argument; the tool takes 'label', 'args', 'kwargs'"),
    'var-kwargs-clash': Row(total, get_schema(total)['input_schema'], {'label': 's', 'args': 4}, 's=4 []',
        {'label': 's', 'kwargs': {'label': 't'}}, "Tool 'total', argument 'kwargs.label': names parameter 'label'; give it as an argument of its own"),
    'var-args-positional': Row(spaced,
        {'type': 'object', 'properties': {
            'first': {'description': '', 'type': 'integer'}, 'second': {'description': '', 'default': 2, 'type': 'integer'},
            'rest': {'description': '', 'type': 'array', 'items': {'type': 'integer', 'minimum': 0}}}, 'required': ['first']},
        {'first': 1, 'rest': [5, 6]}, (1, 2, (5, 6)), {'first': 1, 'rest': [1, -1]}, "Tool 'spaced', argument 'rest[1]': -1 is less than the minimum 0"),
    'pydantic-ai-fold-model': Row(norm,
        {'type': 'object', 'properties': {'x': {'description': '', 'type': 'integer'}, 'y': {'description': '', 'default': 0, 'type': 'integer'}},
         'title': 'Point', 'required': ['x']},
        {'x': 3, 'y': 4}, 5.0, {'y': 'a'},
        "Tool 'norm' got 2 bad arguments:\n- x: Field required, got {'y': 'a'}\n- y: Input should be a valid integer, unable to parse string as an integer, got 'a'",
        {'fold': True}),
    'fold-dataclass': Row(area,
        {'type': 'object', 'properties': {'w': {'description': '', 'type': 'integer'}, 'h': {'description': '', 'default': 1, 'type': 'integer'}},
         'title': 'Box', 'required': ['w']},
        {'w': 3}, 3, {'w': 3, 'd': 1}, "Tool 'area', argument 'd': unknown field; Box has 'w', 'h'", {'fold': True}),
    'langchain-typeddict-annotated': Row(mul,
        {'type': 'object', 'properties': {
            'a': {'description': 'First integer', 'type': 'integer'}, 'b': {'description': 'Second integer', 'default': 2, 'type': 'integer'}},
         'title': 'Args', 'required': ['a']},
        {'a': 3}, 6, {'b': 1}, "Tool 'mul', argument 'a': missing (required)", {'fold': True}),
}

@pytest.mark.parametrize('row', ROWS.values(), ids=ROWS.keys())
def test_idiom_schema_and_calls(row):
    s = get_schema(row.fn, **row.opts)['input_schema']
    assert s == row.schema
    jsonschema.Draft202012Validator.check_schema(s)
    tool = Tool(row.fn, **row.opts)
    assert tool.schema['input_schema'] == row.schema
    ok = tool.execute(row.ok, injected=row.injected)
    assert ok.status == 'success', ok.error
    assert ok.value == row.value
    bad = tool.execute(row.bad, injected=row.injected)
    assert (bad.status, bad.error) == ('failure', f'ToolInputError: {row.message}')
    if not row.opts:  # the same through `call_func`
        assert call_func(row.fn.__name__, row.ok, [row.fn]) == row.value
        assert call_func(row.fn.__name__, row.bad, [row.fn], raise_on_err=False) == f'ToolInputError: {row.message}'

def test_a_field_default_is_the_real_default_never_the_field_info():
    seen = []
    def f(a: int, b: list = Field(default_factory=list), c: str = Field('x')):
        "Record"
        seen.append((b, c))
    call_func('f', {'a': 1}, [f]); call_func('f', {'a': 2}, [f])
    Tool(f).execute({'a': 3, 'b': None, 'c': None})  # null means "use the default" (strict mode sends it)
    assert seen == [([], 'x'), ([], 'x'), ([], 'x')]
    assert seen[0][0] is not seen[1][0]  # a factory's value is made afresh for each call
    assert coerce_inputs(f, {'a': 1}) == {'a': 1, 'b': [], 'c': 'x'}

def test_an_injected_value_is_never_reachable_through_kwargs():
    got = []
    def act(ctx: RunContextWrapper[str], **kwargs: str):
        "Act"
        got.append((ctx.context, kwargs))
    t = Tool(act, inject='ctx')
    r = t.execute({'kwargs': {'ctx': 'forged'}}, injected={'ctx': RunContextWrapper(context='real')})
    assert r.status == 'failure' and "kwargs.ctx" in r.error and got == []
    r = t.execute({'ctx': 'forged'}, injected={'ctx': RunContextWrapper(context='real')})
    assert r.status == 'failure' and got == []
    assert t.execute({'kwargs': {'k': 'v'}}, injected={'ctx': RunContextWrapper(context='real')}).status == 'success'
    assert got == [('real', {'k': 'v'})]

def test_an_untyped_var_parameter_is_not_advertised_and_takes_nothing_from_the_model():
    got = []
    def loose(a: int, *args, **kw):
        "Loose"
        got.append((args, kw))
    assert list(get_schema(loose)['input_schema']['properties']) == ['a']
    assert call_func('loose', {'a': 1, 'kw': {'x': 1}, 'args': [1]}, [loose], raise_on_err=False) == (
        "ToolInputError: Tool 'loose' got 2 bad arguments:\n- kw: unknown argument; the tool takes 'a'\n- args: unknown argument; the tool takes 'a'")
    assert got == []

def test_a_c_class_parameter_is_a_clear_schema_error_not_a_crash():
    def q(db: sqlite3.Connection, sql: str):
        "Query"
    with pytest.raises(SchemaError, match=r"Parameter 'db' of .*sqlite3.Connection.*written in C.*inject"): get_schema(q)
    assert list(get_schema(q, inject='db')['input_schema']['properties']) == ['sql']
    with pytest.raises(SchemaError, match="has no parameter 'conn' to inject"): get_schema(q, inject='conn')

@pytest.mark.filterwarnings("ignore:.*no source found")  # (a function made by `exec` has no source: its comments are not the point)
def test_an_injected_parameter_annotation_is_never_resolved():
    ns: dict = {}
    exec(textwrap.dedent('''
        def f(ctx: "NotDefinedAnywhere", n: int):
            "Uses a context only the application knows"
            return n
    '''), ns)
    f = ns['f']
    with pytest.raises(SchemaError, match='NotDefinedAnywhere'): get_schema(f)
    assert get_schema(f, inject='ctx')['input_schema']['properties'] == {'n': {'description': '', 'type': 'integer'}}
    assert Tool(f, inject='ctx').execute({'n': '2'}, injected={'ctx': object()}).value == 2

def test_fold_needs_one_class_parameter():
    def two(p: Point, q: Point):
        "Two points"
    def scalar(n: int):
        "A number"
    for f in (two, scalar):
        with pytest.raises(SchemaError, match='fold=True needs a tool whose one parameter is a pydantic model, TypedDict or dataclass'):
            get_schema(f, fold=True)
    def ctx_and_point(ctx: RunContextWrapper[str], p: Point) -> int:
        "A point with a context"
        return p.x
    t = Tool(ctx_and_point, inject='ctx', fold=True)
    assert t.execute({'x': 4}, injected={'ctx': RunContextWrapper(context=None)}).value == 4

def test_object_keeps_the_reference_schema_and_takes_any_json_value():
    "Seed 000 fixes `o: object` as `{'type': 'object'}` (an acceptance case); the call takes what Python's `object` takes"
    def f(o: object):
        "Anything"
        return o
    assert get_schema(f)['input_schema']['properties']['o'] == {'description': '', 'type': 'object'}
    for v in ({'a': 1}, 'hi', 5, [1], None): assert call_func('f', {'o': v}, [f]) == v

def test_validators_without_pydantic_are_a_schema_error():
    "annotated_types' `Predicate` is a check only pydantic runs: with pydantic unavailable, `get_schema` says so"
    code = textwrap.dedent('''
        import sys; sys.modules['pydantic'] = None  # as if it were not installed: its import fails, `find_spec` finds nothing
        from typing import Annotated
        from annotated_types import Predicate
        from funccall import SchemaError, get_schema
        def f(n: Annotated[int, Predicate(lambda v: v > 0)]):
            "Positive"
        try: get_schema(f)
        except SchemaError as e: print('SchemaError', e)
    ''')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)
    assert out.stdout.startswith("SchemaError Parameter 'n' of 'f': Predicate("), out.stdout + out.stderr
    assert 'install it (pip install pydantic)' in out.stdout


# --- a constraint the schema states is enforced exactly where jsonschema says a value breaks it ---------------------

_ints = st.integers(-10**6, 10**6)
_floats = st.floats(-1e6, 1e6, allow_nan=False)
_binary = st.builds(lambda k, j: k / 2**j, st.integers(-2000, 2000), st.integers(0, 4))  # exact in binary: no rounding to argue over
_text = st.text(st.sampled_from('aZ09-_ é'), max_size=8)

_KEYWORDS = {'ge': 'minimum', 'gt': 'exclusiveMinimum', 'le': 'maximum', 'lt': 'exclusiveMaximum', 'multiple_of': 'multipleOf', 'pattern': 'pattern'}

def _keyword(t, c: str) -> str:
    "The JSON Schema keyword pydantic's constraint `c` is on annotation `t`"
    if c in _KEYWORDS: return _KEYWORDS[c]
    return ('minItems' if c == 'min_length' else 'maxItems') if t is not str else ('minLength' if c == 'min_length' else 'maxLength')

def _case():
    "(annotation, Field keywords, a value of the annotation's JSON type)"
    num = st.sampled_from(['ge', 'gt', 'le', 'lt']).flatmap(
        lambda c: st.one_of(st.tuples(st.just(int), st.just(c), _ints, _ints), st.tuples(st.just(float), st.just(c), _floats, _floats | _ints)))
    mult = st.one_of(st.tuples(st.just(int), st.just('multiple_of'), st.integers(1, 50), _ints),
                     st.tuples(st.just(float), st.just('multiple_of'), st.sampled_from([0.25, 0.5, 1.5, 2.0]), _binary))
    length = st.tuples(st.just(str), st.sampled_from(['min_length', 'max_length']), st.integers(0, 6), _text)
    pattern = st.tuples(st.just(str), st.just('pattern'), st.sampled_from([r'^a', r'\d$', r'^[a-z]+$', r'é', r'^.{2,4}$']), _text)
    items = st.tuples(st.just(list[int]), st.sampled_from(['min_length', 'max_length']), st.integers(0, 4), st.lists(_ints, max_size=6))
    return st.one_of(num, mult, length, pattern, items)

@settings(max_examples=examples(300), deadline=None)
@given(case=_case())
def test_a_constraint_in_the_schema_is_enforced_exactly_where_jsonschema_says(case):
    t, c, limit, v = case
    def f(x: Annotated[t, Field(**{c: limit})]):
        "Constrained"
        return x
    s = get_schema(f)['input_schema']
    assert s['properties']['x'][_keyword(t, c)] == limit  # the schema states it
    valid = jsonschema.Draft202012Validator(s).is_valid({'x': v})
    got = call_func('f', {'x': v}, [f], raise_on_err=False)
    if valid: assert got == v
    else: assert isinstance(got, str) and got.startswith("ToolInputError: Tool 'f', argument 'x': "), got

@settings(max_examples=examples(100), deadline=None)
@given(case=_case())
def test_a_field_default_constraint_is_enforced_as_the_annotated_one(case):
    t, c, limit, v = case
    def g(x: t = Field(..., **{c: limit})):
        "Constrained by its default"
        return x
    valid = jsonschema.Draft202012Validator(get_schema(g)['input_schema']).is_valid({'x': v})
    with pytest.raises(ToolInputError) if not valid else _nothing(): call_func('g', json.dumps({'x': v}), [g])

class _nothing:
    def __enter__(self): return self
    def __exit__(self, *a): return False

class Window:
    "A window"
    def __init__(self, title: str, width: int = Field(800, ge=100)):
        self.title, self.width = title, width

def open_window(w: Window) -> int:
    "Open a window"
    return w.width

def test_a_field_default_in_a_class_init_is_filled_in_when_the_class_is_built():
    s = get_schema(open_window)['input_schema']['$defs']['Window']
    assert s['properties']['width'] == {'description': '', 'default': 800, 'type': 'integer', 'minimum': 100}
    assert call_func('open_window', {'w': {'title': 't'}}, [open_window]) == 800
    assert call_func('open_window', {'w': {'title': 't', 'width': 5}}, [open_window], raise_on_err=False) == (
        "ToolInputError: Tool 'open_window', argument 'w.width': 5 is less than the minimum 100")

class Opts(TypedDict):
    tags: Annotated[list, [], "Tags to add"]

def opts(o: Opts) -> list:
    "Add tags"
    o['tags'].append('x')  # a tool that changes its default must not change the next call's
    return o['tags']

def test_a_typeddict_default_is_a_fresh_copy_for_each_call():
    assert get_schema(opts)['input_schema']['$defs']['Opts']['properties']['tags'] == {
        'description': 'Tags to add', 'default': [], 'type': 'array', 'items': {}}
    assert [call_func('opts', {'o': {}}, [opts]) for _ in range(2)] == [['x'], ['x']]

@pytest.mark.filterwarnings("ignore:.*no source found")
def test_a_plain_class_without_source_has_a_schema_not_a_crash():
    "`object.__init__` is C too: a class with no `__init__` of its own, made where there is no source, is an empty object"
    ns: dict = {'__name__': 'made_by_exec'}
    exec(textwrap.dedent('''
        class Marker:
            "A marker"
        def mark(m: Marker):
            "Mark"
    '''), ns)
    assert get_schema(ns['mark'])['input_schema']['$defs'] == {'Marker': {'type': 'object', 'properties': {}, 'title': 'Marker'}}

def test_call_func_through_a_toolbox_runs_each_idiom_through_the_tool():
    "A `Tool` takes the model's arguments by name: `call_func` never spreads them into its `__call__`"
    from funccall import Toolbox
    box = Toolbox([total, score, spaced])
    assert call_func('total', {'label': 's', 'args': [1, 2], 'kwargs': {'u': 'v'}}, box) == "s=3 [('u', 'v')]"
    assert call_func('score', {'score': 5}, box) == (5, 'Unknown')  # the tool's value, whatever the namespace
    assert call_func('spaced', {'first': 1, 'rest': [3]}, box) == (1, 2, (3,))
    assert call_func('total', {'label': 's', 'kwargs': {'label': 't'}}, box, raise_on_err=False) == (
        "ToolInputError: Tool 'total', argument 'kwargs.label': names parameter 'label'; give it as an argument of its own")

# --- second review (issue 29): forging, `Self` at call time, the developer's own patterns ------------------------------

def test_a_kwargs_key_naming_a_positional_only_parameter_never_replaces_it():
    got = []
    def act(a: int, /, ctx: str, *args: int, **kwargs: str):
        "Act"
        got.append((a, ctx, args, kwargs))
    t = Tool(act, inject='ctx')
    # in Python `act(1, 'real', 2, a='forged')` puts `a` in `**kwargs`: the model's `a` (an int, checked) stays `a`
    assert t.execute({'a': 1, 'args': [2], 'kwargs': {'a': 'forged'}}, injected={'ctx': 'real'}).status == 'success'
    assert t.execute({'a': 1, 'kwargs': {'a': 'forged'}}, injected={'ctx': 'real'}).status == 'success'
    assert got == [(1, 'real', (2,), {'a': 'forged'}), (1, 'real', (), {'a': 'forged'})]
    def opt(a: int = 0, /, **kwargs: str):
        "Opt"
        return a, kwargs
    assert call_func(opt, {'kwargs': {'a': 'forged'}}) == (0, {'a': 'forged'})

class Vec:
    def __init__(self, x: int = 0): self.x = x
    def add(self, other: Self) -> int:
        "Add another vector's x"
        return self.x + other.x
    def __call__(self, other: Self) -> int:
        "Add, called as an object"
        return self.add(other)

def test_self_parameter_is_built_as_its_class_at_call_time():
    v = Vec(2)
    assert get_schema(v.add)['input_schema']['properties']['other']['$ref'] == '#/$defs/Vec'
    assert call_func(v.add, {'other': {'x': 3}}) == 5
    assert Tool(v.add)({'other': {'x': 3}}) == '5'
    assert call_func(v, {'other': {'x': 4}}) == 6  # a callable object's `Self` is its class
    with pytest.raises(ToolInputError, match='other'): call_func(v.add, {'other': {'x': 'no'}})

CATASTROPHIC = r'^(\w+\s?)+$'  # `re` takes 2^n steps on n word characters and a '!'

def test_a_developer_pattern_is_checked_in_bounded_time_whatever_the_model_sends():
    import time
    def one(s: Annotated[str, Field(pattern=CATASTROPHIC)]):
        "One text"
        return s
    def many(xs: list[Annotated[str, Field(pattern=CATASTROPHIC)]]):
        "Many texts"
        return len(xs)
    t0 = time.monotonic()
    with pytest.raises(ToolInputError, match='does not match the pattern'): call_func(one, {'s': 'a' * 40 + '!'})  # `re`: years
    with pytest.raises(ToolInputError, match='does not match the pattern'): call_func(one, {'s': 'ab ' * 5000 + '!'})
    assert call_func(one, {'s': 'hello world ' * 1000}) == 'hello world ' * 1000  # the automaton says it matches
    # what can't be known in bounded time is refused, never let through unchecked (the pattern may be a safety check)
    with pytest.raises(ToolInputError, match="can't be checked against the pattern"): call_func(one, {'s': 'a' * 30_000})
    with pytest.raises(ToolInputError, match='does not match the pattern'): call_func(one, {'s': 'hello\n!'})
    # one budget for all of an argument's strings: many long ones cost no more than it
    with pytest.raises(ToolInputError, match="can't be checked against the pattern"): call_func(many, {'xs': ['ab ' * 8000] * 300})
    assert time.monotonic() - t0 < 10  # (well under 1 s alone; `re` alone takes years on the first)

def test_a_developer_pattern_dollar_ends_the_text_as_pydantic_and_json_schema_read_it():
    def code(c: Annotated[str, Field(pattern=r'^[A-Z]{3}$')]):
        "A code"
        return c
    with pytest.raises(ToolInputError, match='does not match the pattern'): call_func(code, {'c': 'ABC\n'})  # `re` lets it through
    with pytest.raises(ValidationError): TypeAdapter(code.__annotations__['c']).validate_python('ABC\n')  # pydantic refuses it too
    assert call_func(code, {'c': 'ABC'}) == 'ABC'

@settings(max_examples=examples(300), deadline=None)
@given(p=st.sampled_from([CATASTROPHIC, r'^(a+)+$', r'(a|ab)*c$', r'^[a-c]{2,5}$', r'^(a|a)+$', r'b$', r'^a(b+)+$']),
       s=st.text('abc !\n', max_size=14))
def test_a_developer_pattern_answers_as_re_does_its_dollar_the_end_as_json_schema_reads_it(p, s):
    def f(x: Annotated[str, Field(pattern=p)]):
        "f"
        return x
    try: got = call_func(f, {'x': s}) == s
    except ToolInputError as e:
        assert 'does not match' in str(e); got = False
    assert got == (re.search(p.replace('$', r'\Z'), s) is not None)  # (pydantic's and JSON Schema's `$`: no final newline)
    if s and not s.endswith('\n'): assert got == (jsonschema.Draft202012Validator({'pattern': p}).is_valid(s))

def test_a_decimal_is_held_to_its_field_constraints_as_pydantic_holds_it():
    from decimal import Decimal
    def pay(amount: Decimal = Field(ge=0, le=10, multiple_of=0.5)):
        "Pay"
        return amount
    assert call_func(pay, {'amount': '2.5'}) == Decimal('2.5')
    for bad in ('11', '-1', 'NaN', 'sNaN', 'Infinity', '1e99999999', '1.25'):
        with pytest.raises(ToolInputError, match="argument 'amount'"): call_func(pay, {'amount': bad})
        with pytest.raises(ValidationError): TypeAdapter(Annotated[Decimal, Field(ge=0, le=10, multiple_of=0.5)]).validate_python(bad)

def test_a_default_factory_that_takes_the_validated_data_gets_the_other_arguments():
    def tag(a: int, b: list = Field(default_factory=lambda data: [data['a']])):
        "Tag"
        return b
    assert call_func(tag, {'a': 1}) == [1]  # (it was called with no argument: a TypeError)
    assert Tool(tag)({'a': 2}) == '[2]'
    assert call_func(tag, {'a': 1, 'b': [5]}) == [5]

class Order(BaseModel):
    item: str
    ctx: str = 'none'  # a field that happens to share the injected parameter's name

def test_folded_a_field_named_as_an_injected_parameter_is_the_models_and_never_reaches_the_parameter():
    got = []
    def place(order: Order, ctx: str):
        "Place an order"
        got.append((order, ctx))
    t = Tool(place, inject='ctx', fold=True)
    assert 'ctx' in t.schema['input_schema']['properties']  # the schema offers it: the call takes it
    assert t.execute({'item': 'tea', 'ctx': 'forged'}, injected={'ctx': 'real'}).status == 'success'
    assert got == [(Order(item='tea', ctx='forged'), 'real')]

class Service:
    def act(self, **kwargs: int):
        "Act"
        return kwargs
    @classmethod
    def make(cls, **kwargs: int):
        "Make"
        return kwargs

def test_a_kwargs_key_naming_the_bound_self_or_cls_is_refused_in_the_models_words_never_a_crash():
    for f, bound in ((Service().act, 'self'), (Service.make, 'cls')):
        with pytest.raises(ToolInputError, match=f"kwargs.{bound}"): call_func(f, {'kwargs': {bound: 1}})
        r = Tool(f).execute({'kwargs': {bound: 1}})  # (was `TypeError: got multiple values for argument`)
        assert r.status == 'failure' and 'ToolInputError' in r.text
    assert call_func(Service().act, {'kwargs': {'cls': 1}}) == {'cls': 1}  # any other key is the function's

@dataclasses.dataclass
class Named:
    name: Annotated[str, Field(pattern=CATASTROPHIC)]

class NamedTD(TypedDict):
    name: Annotated[str, Field(pattern=CATASTROPHIC)]

def test_patterns_in_fields_of_a_list_of_classes_share_the_arguments_one_budget():
    # each item's field had a budget of its own: 300 long names cost 300 budgets (2.4 s; 3,000 took 24 s)
    def many(xs: list[Named], ys: list[NamedTD] = ()):
        "Many"
        return len(xs)
    with pytest.raises(ToolInputError, match="can't be checked against the pattern"): call_func(many, {'xs': [{'name': 'ab ' * 8000}] * 300})
    with pytest.raises(ToolInputError, match=r"ys\[\d+\]\.name: .* can't be checked"):
        call_func(many, {'xs': [], 'ys': [{'name': 'ab ' * 8000}] * 300})
    assert call_func(many, {'xs': [{'name': 'ab ' * 100}] * 3}) == 3
