"""Descriptions of tools and parameters: comments, `Annotated`, docstrings, functions without source,
defaults, the schema cache, and methods and other callables."""
import asyncio
import datetime as dt
import enum
import functools
import inspect
import json
import warnings
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Optional
from uuid import UUID

import pytest
from conftest import assert_valid_schema
from pydantic import BaseModel, Field

from funccall import SchemaWarning, call_func, get_schema

# ---------------------------------------------------------------------------------------------------------
# Precedence: `# comment` > Annotated / pydantic Field description, then the docstring's entry added when it says more
# ---------------------------------------------------------------------------------------------------------

def prec(
    a: Annotated[int, 'ann a'],  # comment a
    b: Annotated[int, 'ann b'],
    c: int,
    d: Annotated[int, Field(description='field d')],
    e: Annotated[int, Field(description='field e')],  # comment e
    f: int,  # comment f
):
    """Precedence.

    Args:
        a: doc a
        b: doc b
        c: doc c
        d: doc d
        e: doc e
        f: doc f
    """


@pytest.mark.parametrize('param,expected', [
    ('a', 'comment a. doc a'),
    pytest.param('b', 'ann b. doc b'),
    ('c', 'doc c'),
    pytest.param('d', 'field d. doc d'),
    ('e', 'comment e. doc e'),
    ('f', 'comment f. doc f'),
], ids=['comment>Annotated>doc', 'Annotated>doc', 'doc', 'Field>doc', 'comment>Field>doc', 'comment>doc'])
def test_function_precedence(param, expected):
    s = get_schema(prec)
    assert s['description'] == 'Precedence.'
    assert s['input_schema']['properties'][param] == {'description': expected, 'type': 'integer'}


@pytest.mark.parametrize('first,then,expected', [
    ('The city', 'The city to look up, e.g. Lisbon', 'The city to look up, e.g. Lisbon'),  # the docstring's says more: it alone
    ('The city to look up, e.g. Lisbon', 'the city', 'The city to look up, e.g. Lisbon'),  # the first holds the other: it alone
    ('Max results.', 'max  results', 'Max results.'),  # the same but for case, spacing and a final '.'
    ('Max results', 'Between 1 and 50; the server caps it', 'Max results. Between 1 and 50; the server caps it'),
    ('Max results?', 'Between 1 and 50', 'Max results? Between 1 and 50'),  # its own punctuation ends it
    ('Max results', None, 'Max results'), (None, 'Between 1 and 50', 'Between 1 and 50'), (None, None, ''), ('', '', ''),
])
def test_two_descriptions_keep_what_each_adds(first, then, expected):
    from funccall.core._docs import joined
    assert joined(first, then) == expected


class Weather:
    "Tools as FastMCP / MCP SDK servers write them: `Annotated` + `Field` in the signature, a Google docstring indented in a method"
    def forecast(
        self,
        city: Annotated[str, Field(description='City name')],
        days: Annotated[int, Field(ge=1, le=7, description='Number of days')] = 3,
        units: Annotated[Optional[str], 'metric or imperial'] = None,
        lang: Annotated[str, Field(description='Language code, e.g. en')] = 'en',
    ) -> str:
        """Get the forecast.

            Args:
                city: City name, as the user wrote it (no country code)
                days: How far ahead; the API gives at most a week
                units: metric or imperial
                lang: language code
        """


def test_annotated_and_docstring_entries_that_differ_are_both_kept():
    ps = get_schema(Weather().forecast)['input_schema']['properties']
    assert {k: p['description'] for k, p in ps.items()} == {
        'city': 'City name, as the user wrote it (no country code)',  # the docstring's holds the Field's: one kept
        'days': 'Number of days. How far ahead; the API gives at most a week',  # they differ: both, the Field's first
        'units': 'metric or imperial',  # the same: once
        'lang': 'Language code, e.g. en'}  # the Field's holds the docstring's
    assert ps['days']['minimum'] == 1 and ps['days']['maximum'] == 7


def _forecast(days: Annotated[int, Field(description='Number of days')] = 3) -> str:
    """Get the forecast.

    Args:
        days: How far ahead; the API gives at most a week
    """

def test_funccall_keeps_both_descriptions():
    assert get_schema(_forecast)['input_schema']['properties']['days']['description'] == \
        'Number of days. How far ahead; the API gives at most a week'

def test_openai_agents_keeps_the_docstrings_description_alone():
    "Where funccall keeps both, openai-agents keeps the docstring's entry alone: the `Field`'s is lost"
    from agents import function_tool
    assert function_tool(_forecast).params_json_schema['properties']['days']['description'] == 'How far ahead; the API gives at most a week'

def test_pydantic_ai_keeps_the_fields_description_alone():
    "Where funccall keeps both, pydantic-ai keeps the `Field`'s alone: the docstring's entry is lost"
    Tool = pytest.importorskip('pydantic_ai', reason='pydantic-ai supports Python 3.11 and later').Tool
    assert Tool(_forecast).function_schema.json_schema['properties']['days']['description'] == 'Number of days'


def test_annotated_used_without_docstring_entry():
    def f(a: Annotated[int, 'ann a'], b: Annotated[str, Field(description='field b')]): "No parameter section"
    assert get_schema(f)['input_schema']['properties'] == {'a': {'description': 'ann a', 'type': 'integer'},
                                                           'b': {'description': 'field b', 'type': 'string'}}


class PrecModel(BaseModel):
    """A model.

    Attributes:
        a: doc a
        b: doc b
        c: doc c
        d: doc d
        e: doc e
    """
    a: int = Field(description='field a')  # comment a
    b: Annotated[int, 'ann b']  # comment b
    c: Annotated[int, 'ann c']
    d: int = Field(description='field d')
    e: int


@dataclass
class PrecDC:
    """A dataclass.

    Attributes:
        a: doc a
        b: doc b
        c: doc c
    """
    a: Annotated[int, 'ann a']  # comment a
    b: Annotated[int, 'ann b']
    c: int


@pytest.mark.parametrize('cls,param,expected', [
    pytest.param(PrecModel, 'a', 'comment a. doc a',),
    (PrecModel, 'b', 'comment b. doc b'),
    pytest.param(PrecModel, 'c', 'ann c. doc c'),
    (PrecModel, 'd', 'field d. doc d'),
    (PrecModel, 'e', 'doc e'),
    (PrecDC, 'a', 'comment a. doc a'),
    pytest.param(PrecDC, 'b', 'ann b. doc b'),
    (PrecDC, 'c', 'doc c'),
], ids=['model-comment>Field', 'model-comment>Annotated', 'model-Annotated>doc', 'model-Field>doc', 'model-doc',
        'dc-comment>Annotated', 'dc-Annotated>doc', 'dc-doc'])
def test_class_field_precedence(cls, param, expected):
    s = get_schema(cls)
    assert s['description'] == cls.__doc__.split('\n')[0]  # the Attributes section is left out
    assert s['input_schema']['properties'][param] == {'description': expected, 'type': 'integer'}


# ---------------------------------------------------------------------------------------------------------
# Docstring styles
# ---------------------------------------------------------------------------------------------------------

def google_style(a: int, b: str = 'x') -> int:
    """Summary line.

    More detail.

    Args:
        a: the a
        b (str, optional): the b,
            over two lines

    Raises:
        ValueError: when bad
    """


def numpy_style(a: int, b: float = 1.0) -> float:
    """Scale a number.

    Parameters
    ----------
    a : int
        the a
    b : float, optional
        the factor

    Returns
    -------
    float
        the scaled value

    Examples
    --------
    >>> numpy_style(2)
    2.0
    """


def sphinx_style(a: int, b: int = 0) -> int:
    """Add numbers.

    :param a: the a
    :type a: int
    :param b: the b
    :returns: the sum
    :raises ValueError: when bad
    """


def google_returns(a: int) -> int:
    """Double it.

    Args:
        a: the a

    Returns:
        twice a
    """


@pytest.mark.parametrize('f,expected', [
    (google_style, {
        'name': 'google_style',
        'description': 'Summary line.\n\nMore detail.\n\nRaises:\n    ValueError: when bad\n\nReturns:\n- type: integer',
        'input_schema': {'type': 'object',
                         'properties': {'a': {'description': 'the a', 'type': 'integer'},
                                        'b': {'description': 'the b,\nover two lines', 'default': 'x', 'type': 'string'}},
                         'required': ['a']}}),
    (numpy_style, {
        'name': 'numpy_style',
        'description': 'Scale a number.\n\nReturns\n-------\nfloat\n    the scaled value\n\nExamples\n--------\n>>> numpy_style(2)\n2.0',
        'input_schema': {'type': 'object',
                         'properties': {'a': {'description': 'the a', 'type': 'integer'},
                                        'b': {'description': 'the factor', 'default': 1.0, 'type': 'number'}},
                         'required': ['a']}}),
    (sphinx_style, {
        'name': 'sphinx_style',
        'description': 'Add numbers.\n\n:returns: the sum\n:raises ValueError: when bad',
        'input_schema': {'type': 'object',
                         'properties': {'a': {'description': 'the a', 'type': 'integer'},
                                        'b': {'description': 'the b', 'default': 0, 'type': 'integer'}},
                         'required': ['a']}}),
    (google_returns, {
        'name': 'google_returns',
        'description': 'Double it.\n\nReturns:\n    twice a',
        'input_schema': {'type': 'object', 'properties': {'a': {'description': 'the a', 'type': 'integer'}}, 'required': ['a']}}),
], ids=['google', 'numpy', 'sphinx', 'google-returns'])
def test_docstring_styles(f, expected):
    s = get_schema(f)
    assert s == expected
    assert_valid_schema(s['input_schema'])


def returns_only_google(a: int) -> int:
    """Double it.

    Returns:
        twice a
    """


def returns_only_numpy(a: int) -> int:
    """Double it.

    Returns
    -------
    int
        twice a
    """


def returns_only_sphinx(a: int) -> int:
    """Double it.

    :returns: twice a
    """


@pytest.mark.parametrize('f,expected', [
    (returns_only_google, 'Double it.\n\nReturns:\n    twice a'),
    (returns_only_numpy, 'Double it.\n\nReturns\n-------\nint\n    twice a'),
    (returns_only_sphinx, 'Double it.\n\n:returns: twice a'),
], ids=['google', 'numpy', 'sphinx'])
def test_returns_section_without_params_section(f, expected):
    assert get_schema(f)['description'] == expected


def test_returns_line_added_without_returns_section():
    def f(a: int) -> list[str]: "Summary only"
    assert get_schema(f)['description'] == 'Summary only\n\nReturns:\n- type: array[string]'


# ---------------------------------------------------------------------------------------------------------
# Comments
# ---------------------------------------------------------------------------------------------------------

def multiline(
    # first line
    # second line
    a: int,
    b: int,  # bee
    # about c,
    # in two lines
    c: str = '#not a comment',
):
    "Multi-line comments"


class MultiInit:
    "Comments on __init__"
    def __init__(
        self,
        # the x,
        # spread out
        x: int,
        y: int = 0,  # the y
    ): pass


@pytest.mark.parametrize('f,expected', [
    (multiline, {'a': {'description': 'first line\nsecond line', 'type': 'integer'},
                 'b': {'description': 'bee', 'type': 'integer'},
                 'c': {'description': 'about c,\nin two lines', 'default': '#not a comment', 'type': 'string'}}),
    (MultiInit, {'x': {'description': 'the x,\nspread out', 'type': 'integer'},
                 'y': {'description': 'the y', 'default': 0, 'type': 'integer'}}),
], ids=['function', 'class-init'])
def test_multiline_comments(f, expected):
    assert get_schema(f)['input_schema']['properties'] == expected


# ---------------------------------------------------------------------------------------------------------
# Functions without source, and the docstring requirement
# ---------------------------------------------------------------------------------------------------------

_EXEC_SRC = '''
def from_exec(a: int, b: str = "x") -> int:
    """Made by exec.

    Args:
        a: the a
        b: the b
    """
    return a

def exec_nodoc(a: int): return a
'''


def test_exec_function():
    ns = {}
    exec(_EXEC_SRC, ns)
    with pytest.raises(OSError): inspect.getsource(ns['from_exec'])  # really no source
    s = get_schema(ns['from_exec'])
    assert s == {'name': 'from_exec',
                 'description': 'Made by exec.\n\nReturns:\n- type: integer',
                 'input_schema': {'type': 'object',
                                  'properties': {'a': {'description': 'the a', 'type': 'integer'},
                                                 'b': {'description': 'the b', 'default': 'x', 'type': 'string'}},
                                  'required': ['a']}}
    # no source for either reader (funccall's, fastcore's docments): a warning says the comments can't be read
    with pytest.warns(SchemaWarning) as ws: get_schema(ns['exec_nodoc'])
    said = [str(w.message) for w in ws]  # and no docstring either: built, with that said too
    assert any('exec_nodoc: no source found to read the `# comments` of a' in m for m in said)
    assert any("'exec_nodoc' has no docstring" in m for m in said)


def test_lambda_with_doc():
    lam = lambda a, b=2: a + b
    lam.__doc__ = 'Add two numbers'
    lam.__annotations__ = {'a': int}
    assert get_schema(lam) == {'name': '<lambda>',
                               'description': 'Add two numbers',
                               'input_schema': {'type': 'object',
                                                'properties': {'a': {'description': '', 'type': 'integer'},
                                                               'b': {'description': '', 'default': 2, 'type': 'integer'}},
                                                'required': ['a']}}


@pytest.mark.parametrize('f,expected', [
    (divmod, {'name': 'divmod', 'description': 'Divide',
              'input_schema': {'type': 'object', 'properties': {'x': {'description': ''}, 'y': {'description': ''}}, 'required': ['x', 'y']}}),
    (abs, {'name': 'abs', 'description': 'Divide',
           'input_schema': {'type': 'object', 'properties': {'x': {'description': ''}}, 'required': ['x']}}),
], ids=['divmod', 'abs'])
def test_builtin_with_description(f, expected):
    s = get_schema(f, description='Divide')
    assert s == expected
    assert_valid_schema(s['input_schema'])


def test_builtin_uses_its_docstring():
    assert get_schema(abs)['description'] == inspect.cleandoc(abs.__doc__)


def test_no_docstring_is_built_with_a_warning():
    "Every peer builds an undocumented function: the model still has its name and parameters; a `SchemaWarning` says what to add"
    def undocumented_tool(a: int, b: str = 'x') -> int: return a
    with pytest.warns(SchemaWarning) as ws: s = get_schema(undocumented_tool)
    assert s == {'name': 'undocumented_tool', 'description': 'Returns:\n- type: integer',  # no blank lines before it
                 'input_schema': {'type': 'object', 'properties': {'a': {'description': '', 'type': 'integer'},
                                                                   'b': {'description': '', 'default': 'x', 'type': 'string'}},
                                  'required': ['a']}}
    [w] = ws
    assert "'test_no_docstring_is_built_with_a_warning.<locals>.undocumented_tool' has no docstring" in str(w.message)
    assert 'add a docstring saying what it does' in str(w.message) and 'description=' in str(w.message)
    assert w.filename == __file__  # pointed at the caller's line, not funccall's
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # a description given: no warning
        assert get_schema(undocumented_tool, description='x') == {**s, 'description': 'x'}
    def no_return(a: int): return a
    with pytest.warns(SchemaWarning, match='no_return'): assert get_schema(no_return)['description'] == ''
    assert call_func('undocumented_tool', {'a': '3'}, [undocumented_tool]) == 3  # and it runs, coerced as any tool


def test_lambda_without_doc_is_built_with_a_warning():
    with pytest.warns(SchemaWarning, match=r"\.<lambda>' has no docstring"):
        assert get_schema(lambda a: a) == {'name': '<lambda>', 'description': '', 'input_schema': {
            'type': 'object', 'properties': {'a': {'description': ''}}, 'required': ['a']}}


# ---------------------------------------------------------------------------------------------------------
# Defaults
# ---------------------------------------------------------------------------------------------------------

class Color(enum.Enum):
    red = 'r'
    green = 'g'


U = UUID('12345678-1234-5678-1234-567812345678')


def many_defaults(
    p: Path = Path('/tmp/x'),
    c: Color = Color.red,
    t: dt.datetime = dt.datetime(2024, 1, 2, 3, 4, 5),
    d: dt.date = dt.date(2024, 1, 2),
    u: UUID = U,
    m: Decimal = Decimal('1.5'),
    tp: tuple[int, ...] = (1, 2),
    s: set[int] = frozenset({3, 1, 2}),
    b: bytes = b'hi',
    o: Optional[int] = None,
):
    "Many defaults"


def _props(**defaults):
    types = {'p': {'type': 'string', 'format': 'Path'}, 'c': {'type': 'string', 'enum': ['r', 'g']},
             't': {'type': 'string', 'format': 'date-time'}, 'd': {'type': 'string', 'format': 'date'},
             'u': {'type': 'string', 'format': 'uuid'}, 'm': {'type': 'string', 'format': 'decimal'},
             'tp': {'type': 'array', 'items': {'type': 'integer'}}, 's': {'type': 'array', 'items': {'type': 'integer'}, 'uniqueItems': True},
             'b': {'type': 'string', 'contentEncoding': 'base64'}, 'o': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}}
    return {k: {'description': '', 'default': defaults[k], **ty} for k, ty in types.items()}


def test_evalable_defaults_are_json_safe():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        s = get_schema(many_defaults, evalable=True)
    assert s == {'name': 'many_defaults', 'description': 'Many defaults',
                 'input_schema': {'type': 'object', 'properties': _props(
                     p='/tmp/x', c='r', t='2024-01-02T03:04:05', d='2024-01-02', u=str(U), m='1.5', tp=[1, 2], s=[1, 2, 3], b='aGk=', o=None)}}
    assert json.loads(json.dumps(s)) == s
    assert_valid_schema(s['input_schema'])


def test_reference_defaults_are_as_given():
    s = get_schema(many_defaults)
    assert s['input_schema']['properties'] == _props(
        p=Path('/tmp/x'), c=Color.red, t=dt.datetime(2024, 1, 2, 3, 4, 5), d=dt.date(2024, 1, 2), u=U, m=Decimal('1.5'),
        tp=(1, 2), s=frozenset({1, 2, 3}), b=b'hi', o=None)
    assert type(s['input_schema']['properties']['p']['default']) is type(Path('/tmp/x'))
    assert s['input_schema']['properties']['c']['default'] is Color.red


def test_unjsonable_default_left_out_with_warning():
    sentinel = object()
    def tool(a: int, limit: int = sentinel, other=sentinel): "Has a sentinel default"
    with pytest.warns(SchemaWarning) as rec:
        s = get_schema(tool, evalable=True)
    msgs = [str(r.message) for r in rec]
    assert len(msgs) == 2
    assert "'limit'" in msgs[0] and "'other'" in msgs[1]
    assert s == {'name': 'tool', 'description': 'Has a sentinel default',
                 'input_schema': {'type': 'object',
                                  'properties': {'a': {'description': '', 'type': 'integer'},
                                                 'limit': {'description': '', 'type': 'integer'},
                                                 'other': {'description': '', 'type': 'object'}},
                                  'required': ['a']}}
    json.dumps(s)
    assert issubclass(SchemaWarning, UserWarning)


def test_unjsonable_field_default_left_out_with_warning():
    sentinel = object()
    @dataclass
    class Opts:
        level: int = sentinel  # the level
    def tool(o: Opts): "Takes options"
    with pytest.warns(SchemaWarning, match="'level'"):
        s = get_schema(tool, evalable=True)
    assert s['input_schema']['$defs']['Opts'] == {'type': 'object', 'properties': {'level': {'description': 'the level', 'type': 'integer'}},
                                                  'title': 'Opts'}
    json.dumps(s)


_S = object()


@dataclass
class SentinelOpts:
    "Options with a default JSON can't hold"
    level: int = _S


def _sentinel_param(limit: int = _S): "Has a sentinel default"
def _sentinel_field(o: SentinelOpts): "Takes options"



@pytest.mark.parametrize('f,kw', [
    (_sentinel_param, {}),
    pytest.param(_sentinel_field, {}),
    pytest.param(SentinelOpts, {'description': 'x'}),
], ids=['parameter', 'nested-class-field', 'class-tool-field'])
def test_schema_warning_points_at_caller(f, kw):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter('always')
        get_schema(f, evalable=True, **kw)
    assert [r.category for r in rec] == [SchemaWarning]
    assert rec[0].filename == __file__


# ---------------------------------------------------------------------------------------------------------
# Cache
# ---------------------------------------------------------------------------------------------------------

@dataclass
class Inner:
    v: int


def cached_tool(a: int, b: list[int] = None, i: Optional[Inner] = None) -> int:
    "Cached"


def test_cache_returns_equal_independent_copies():
    s1 = get_schema(cached_tool)
    s2 = get_schema(cached_tool)
    assert s1 == s2 and s1 is not s2
    snapshot = json.loads(json.dumps(s2))
    s1['input_schema']['properties'].clear()
    s1['input_schema']['required'].append('zz')
    s1['input_schema']['$defs']['Inner']['properties']['v']['type'] = 'string'
    s1['description'] = 'changed'
    s3 = get_schema(cached_tool)
    assert s2 == snapshot
    assert s3 == snapshot


def test_cache_per_options():
    s1 = get_schema(cached_tool, name='other')
    s2 = get_schema(cached_tool)
    assert s1['name'] == 'other' and s2['name'] == 'cached_tool'
    assert get_schema(cached_tool, description='d')['description'] == 'd'
    assert get_schema(cached_tool)['description'] == 'Cached\n\nReturns:\n- type: integer'


def test_cache_copies_set_default():
    def with_set(s: set[int] = {1, 2}): "Has a set default"  # noqa: B006
    s1 = get_schema(with_set)
    s1['input_schema']['properties']['s']['default'].add(3)
    assert get_schema(with_set)['input_schema']['properties']['s']['default'] == {1, 2}


# ---------------------------------------------------------------------------------------------------------
# Methods and other callables
# ---------------------------------------------------------------------------------------------------------

class Kit:
    "A kit of tools"
    def meth(self, a: int,  # the a
             b: str = 'x'):
        "A method"
    @classmethod
    def cmeth(cls, a: int):  # the a
        "A classmethod"
    @staticmethod
    def smeth(a: int):  # the a
        "A staticmethod"
    async def ameth(self, a: int):  # the a
        "An async method"
    def __call__(self, a: int):  # the a
        "Call the kit"


class DocOnClass:
    "The class docstring"
    def __call__(self, a: int): pass  # the a


async def afunc(a: int):  # the a
    "An async function"


def base(a: int,  # the a
         b: str,  # the b
         c: float = 1.0):  # the c
    "The base function"


def _deco(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs): return f(*args, **kwargs)
    return wrapper

wrapped = _deco(base)

kit = Kit()
A_ONLY = {'type': 'object', 'properties': {'a': {'description': 'the a', 'type': 'integer'}}, 'required': ['a']}


@pytest.mark.parametrize('f,expected', [
    (kit.meth, {'name': 'meth', 'description': 'A method',
                'input_schema': {'type': 'object', 'properties': {'a': {'description': 'the a', 'type': 'integer'},
                                                                  'b': {'description': '', 'default': 'x', 'type': 'string'}},
                                 'required': ['a']}}),
    (Kit.meth, {'name': 'meth', 'description': 'A method',
                'input_schema': {'type': 'object', 'properties': {'a': {'description': 'the a', 'type': 'integer'},
                                                                  'b': {'description': '', 'default': 'x', 'type': 'string'}},
                                 'required': ['a']}}),
    (Kit.cmeth, {'name': 'cmeth', 'description': 'A classmethod', 'input_schema': A_ONLY}),
    (kit.cmeth, {'name': 'cmeth', 'description': 'A classmethod', 'input_schema': A_ONLY}),
    (Kit.smeth, {'name': 'smeth', 'description': 'A staticmethod', 'input_schema': A_ONLY}),
    (kit.smeth, {'name': 'smeth', 'description': 'A staticmethod', 'input_schema': A_ONLY}),
    (kit.ameth, {'name': 'ameth', 'description': 'An async method', 'input_schema': A_ONLY}),
    (afunc, {'name': 'afunc', 'description': 'An async function', 'input_schema': A_ONLY}),
    (kit, {'name': '__call__', 'description': 'Call the kit', 'input_schema': A_ONLY}),
    (DocOnClass(), {'name': '__call__', 'description': 'The class docstring', 'input_schema': A_ONLY}),
    (wrapped, {'name': 'base', 'description': 'The base function',
               'input_schema': {'type': 'object', 'properties': {'a': {'description': 'the a', 'type': 'integer'},
                                                                 'b': {'description': 'the b', 'type': 'string'},
                                                                 'c': {'description': 'the c', 'default': 1.0, 'type': 'number'}},
                                'required': ['a', 'b']}}),
], ids=['bound', 'unbound', 'classmethod-class', 'classmethod-instance', 'staticmethod-class', 'staticmethod-instance', 'async-method',
        'async-function', 'callable-object', 'callable-object-class-doc', 'functools.wraps'])
def test_callables(f, expected):
    s = get_schema(f)
    assert s == expected
    assert 'self' not in s['input_schema']['properties'] and 'cls' not in s['input_schema']['properties']
    assert_valid_schema(s['input_schema'])


def shapes(a: int, /, b: int = 1, *args: int, c: str, d: str = 'd', **kw: int):
    "Every kind of parameter"


def test_parameter_kinds():
    "positional-only and keyword-only parameters are properties; typed *args and **kwargs are an array and an object (issue 29)"
    assert get_schema(shapes)['input_schema'] == {
        'type': 'object',
        'properties': {'a': {'description': '', 'type': 'integer'},
                       'b': {'description': '', 'default': 1, 'type': 'integer'},
                       'args': {'description': '', 'type': 'array', 'items': {'type': 'integer'}},
                       'c': {'description': '', 'type': 'string'},
                       'd': {'description': '', 'default': 'd', 'type': 'string'},
                       'kw': {'description': '', 'type': 'object', 'additionalProperties': {'type': 'integer'}}},
        'required': ['a', 'c']}


def test_async_function_still_works():
    assert asyncio.run(afunc(1)) is None


def test_partial_drops_bound_arguments():
    p1 = functools.partial(base, 1)
    s1 = get_schema(p1, description='partial')
    assert list(s1['input_schema']['properties']) == ['b', 'c']
    assert s1['input_schema']['required'] == ['b']
    p2 = functools.partial(base, b='z')
    props = get_schema(p2, description='partial')['input_schema']['properties']
    assert props['b']['default'] == 'z'
    assert get_schema(p2, description='partial')['input_schema']['required'] == ['a']


def test_partial_keeps_annotations():
    s = get_schema(functools.partial(base, 1), description='partial')
    types = {k: {kk: vv for kk, vv in v.items() if kk != 'description'} for k, v in s['input_schema']['properties'].items()}
    assert types == {'b': {'type': 'string'}, 'c': {'default': 1.0, 'type': 'number'}}


def test_partial_name_and_description():
    s = get_schema(functools.partial(base, 1))
    assert s['name'] == 'base'
    assert s['description'] == 'The base function'


def test_partial_keeps_param_comments():
    s = get_schema(functools.partial(base, 1), description='partial')
    assert s['input_schema']['properties'] == {'b': {'description': 'the b', 'type': 'string'},
                                               'c': {'description': 'the c', 'default': 1.0, 'type': 'number'}}


# ---------------------------------------------------------------------------------------------------------
# Classes as tools
# ---------------------------------------------------------------------------------------------------------

@dataclass
class BaseDC:
    a: int  # base a


@dataclass
class ChildDC(BaseDC):
    "A child"
    b: str = 'x'  # child b


class BaseM(BaseModel):
    a: int  # base a


class ChildM(BaseM):
    "A child model"
    b: str = 'x'  # child b


@pytest.mark.parametrize('cls', [ChildDC, ChildM], ids=['dataclass', 'pydantic'])
def test_inherited_field_comments(cls):
    assert get_schema(cls)['input_schema']['properties'] == {'a': {'description': 'base a', 'type': 'integer'},
                                                             'b': {'description': 'child b', 'default': 'x', 'type': 'string'}}


class NoDocModel(BaseModel):
    a: int


def test_undocumented_model_is_built_with_a_warning():
    with pytest.warns(SchemaWarning, match="Class 'NoDocModel' has no docstring"):
        s = get_schema(NoDocModel)
    assert s['description'] == '' and s['input_schema']['required'] == ['a']


def test_class_tool_init_docstring():
    class Shape:
        "A shape"
        def __init__(self, sides: int, name: str = 'poly'):
            """Make it.

            Args:
                sides: how many sides
                name: what to call it
            """
    assert get_schema(Shape) == {
        'name': 'Shape', 'description': 'A shape',
        'input_schema': {'type': 'object',
                         'properties': {'sides': {'description': 'how many sides', 'type': 'integer'},
                                        'name': {'description': 'what to call it', 'default': 'poly', 'type': 'string'}},
                         'title': 'Shape', 'required': ['sides']}}


# ---------------------------------------------------------------------------------------------------------
# Where a comment sits: the same answer as fastcore's docments, for every placement
# ---------------------------------------------------------------------------------------------------------

class Notes:
    "Notes kept by number"
    def add(self, text: str) -> int:  # The note's number
        "Add a note"
        return 1


def one_line(a: int, b: int) -> int:  # the sum
    "One-line signature"
    return a + b


def one_line_no_return(a: int, b: int):  # the b
    "One-line signature, no return annotation: the last parameter on the line takes the comment"
    return a + b


def return_shares_line(a: int,  # the a
                       b: int) -> int:  # the sum
    "The last parameter and `-> T:` on one line"
    return a + b


def return_on_own_line(
    a: int,  # the a
    b: int,  # the b
) -> int:  # the sum
    "The usual layout"
    return a + b


def comment_above(
    a: int,
    # the b, on the
    # lines above it
    b: int,
    c: int,  # the c
) -> int:
    "Comment lines above a parameter"
    return a + b + c


def star_line(
    a: int,  # the a
    *,  # options
    b: int = 1,
    c: int = 2,  # the c
) -> int:  # the total
    "A comment on a `*,` line"
    return a + b + c


def star_line_shadowed(
    a: int,
    *,  # options
    b: int = 1,  # the b
):
    "A `*,` comment before a parameter with its own comment"
    return a + b


def def_line_comment(  # the a
    a: int,
    b: int) -> int:
    "A comment on the `def` line"
    return a + b


@pytest.mark.parametrize('f', [Notes.add, one_line, one_line_no_return, return_shares_line, return_on_own_line, comment_above,
                               star_line, star_line_shadowed, def_line_comment], ids=lambda f: f.__qualname__)
def test_comment_placement_matches_docments(f):
    from fastcore.docments import docments
    from funccall.core._docs import func_docs
    want = {k: v for k, v in docments(f).items() if v is not None and k != 'self'}
    d = func_docs(f)
    got = {**d.comments, **({'return': d.returns} if d.returns else {})}
    assert got == want
    s = get_schema(f)
    props = s['input_schema']['properties']
    assert {k: p['description'] for k, p in props.items() if p['description']} == {k: v for k, v in want.items() if k != 'return'}
    if 'return' in want: assert f"- {want['return']} (type: integer)" in s['description']


def test_return_comment_of_a_method_is_not_its_last_parameters():
    s = get_schema(Notes().add)
    assert s['input_schema']['properties']['text']['description'] == ''
    assert s['description'] == "Add a note\n\nReturns:\n- The note's number (type: integer)"
