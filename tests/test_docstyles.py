"""Docstrings of every style, whatever sections they hold; attribute docstrings; nested classes' docstrings; `Self`;
comments that are tool directives (never descriptions)."""
import inspect
import warnings
from typing import Annotated, Optional, TypedDict

import pytest
from conftest import examples
from hypothesis import given, settings, strategies as st
from pydantic import BaseModel
from typing_extensions import Self

from funccall import SchemaError, SchemaWarning, get_schema, to_openai
from funccall.core._docs import undirected


def google_args_only(a: int, b: str):
    """Args:
        a: the first
        b: the second
    """

def google_args_and_returns(a: int, b: str) -> int:
    """Args:
        a: the first
        b: the second

    Returns:
        the count
    """

def numpy_only(a: int, b: str):
    """
    Parameters
    ----------
    a : int
        the first
    b : str
        the second
    """

def sphinx_only(a: int, b: str):
    """:param a: the first
    :param b: the second
    """

def epydoc_only(a: int, b: str):
    """@param a: the first
    @param b: the second
    """

def mixed(a: int, b: str):
    """Do the thing.

    Args:
        a: the first
        b: the second
    """

def mixed_styles(a: int, b: str):
    """Do the thing.

    Args:
        a: the first

    :param b: the second
    """


@pytest.mark.parametrize('f,desc', [
    (google_args_only, ''), (google_args_and_returns, 'Returns:\n    the count'), (numpy_only, ''), (sphinx_only, ''),
    (epydoc_only, ''), (mixed, 'Do the thing.'), (mixed_styles, 'Do the thing.'),
], ids=['google-args-only', 'google-args-returns', 'numpy-only', 'sphinx-only', 'epydoc-only', 'summary-and-args', 'google-and-sphinx'])
def test_each_style_keeps_its_parameter_descriptions(f, desc):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        s = get_schema(f)
    ps = s['input_schema']['properties']
    assert ps['a']['description'] == 'the first' and ps['b']['description'] == 'the second'
    assert s['description'] == desc  # never the parameter section itself
    assert 'Args:' not in s['description'] and ':param' not in s['description'] and '@param' not in s['description']
    # only sections and no summary: documented (not refused), and a warning says what to add
    assert any(issubclass(w.category, SchemaWarning) and 'add a first line' in str(w.message) for w in ws) == (desc == '')


# Sections docstring-parser misses on its own (it finds a Google title only flush left and spelled `Args`), as real tools write them
def args_deeper_than_a_paragraph(a: int, b: str):
    """Do the thing.

    More about it.

        Args:
            a: the first
            b: the second
    """

def args_deeper_than_the_summary(a: int, b: str):
    """
    Do the thing.

        Args:
            a (int): the first
            b (str): the second
    """

def lower_case_args(a: int, b: str):
    """Do the thing.
    args:
        a (int): the first
        b (str): the second
    """

def lower_case_args_and_returns(a: int, b: str) -> int:
    """Do the thing.

    arguments:
      a (int): the first
      b: the second
    returns:
      the count
    """

class Server:
    "An MCP server's tools, as methods: the docstrings of methods are indented twice in the source"
    def tool(self, a: int, b: str):
        """Do the thing.

            Args:
                a: the first
                b: the second

            Returns:
                the count
        """


@pytest.mark.parametrize('f,desc', [
    (args_deeper_than_a_paragraph, 'Do the thing.\n\nMore about it.'), (args_deeper_than_the_summary, 'Do the thing.'),
    (lower_case_args, 'Do the thing.'), (lower_case_args_and_returns, 'Do the thing.\n\nReturns:\n  the count'),
    (Server().tool, 'Do the thing.\n\nReturns:\n    the count'),
], ids=['deeper-than-a-paragraph', 'deeper-than-the-summary', 'lower-case-args', 'lower-case-args-returns', 'method'])
def test_sections_docstring_parser_misses_are_read(f, desc):
    s = get_schema(f)
    assert {k: p['description'] for k, p in s['input_schema']['properties'].items()} == {'a': 'the first', 'b': 'the second'}
    assert s['description'] == desc  # the section left out, the rest kept


@pytest.mark.parametrize('doc', [
    "Do it.\n\nThe args: are read left to right.",  # `args:` in a sentence
    "Do it.\n\nargs:\nnothing under it",  # a title-like line with no indented block
    "Do it.\n\n    Example:\n    same depth, not under it",
])
def test_a_title_like_line_with_no_block_under_it_stays_in_the_description(doc):
    def f(a: int): pass
    f.__doc__ = doc
    s = get_schema(f)
    assert s['description'] == inspect.cleandoc(doc) and s['input_schema']['properties']['a']['description'] == ''


def test_lower_case_args_as_openai_agents_reads_them_and_indented_ones_it_does_not():
    "openai-agents (griffe) reads `args:`; no peer reads an `Args:` indented deeper than the summary: funccall reads both"
    from agents import function_tool  # (a dev dependency: the peer itself, not a copy of its rules)
    for f, peer_reads in ((lower_case_args, True), (args_deeper_than_a_paragraph, False), (args_deeper_than_the_summary, False)):
        theirs = function_tool(f).params_json_schema['properties']
        assert (theirs['a'].get('description') == 'the first') == peer_reads
        assert get_schema(f)['input_schema']['properties']['a']['description'] == 'the first'


def test_an_empty_docstring_is_undocumented():
    def f(a: int): ""
    with pytest.warns(SchemaWarning, match='has no docstring'): assert get_schema(f)['description'] == ''


def directives(
    a: Annotated[int, 'the a'],  # type: ignore
    b: int,  # the b  # noqa: F821
    c: int,  # pylint: disable=unused-argument
    d: int,  # type: ignore[arg-type]  # the d
    e: str,  # type: the kind of fruit
) -> str:  # pragma: no cover
    "Directives."
    return ''


@pytest.mark.parametrize('nm,expected', [('a', 'the a'), ('b', 'the b'), ('c', ''), ('d', 'the d'), ('e', 'type: the kind of fruit')])
def test_directive_comments_are_never_descriptions(nm, expected):
    s = get_schema(directives)
    assert s['input_schema']['properties'][nm]['description'] == expected
    assert 'pragma' not in s['description']


@pytest.mark.parametrize('c,expected', [
    ('type: ignore', ''), ('noqa', ''), ('noqa: F821', ''), ('fmt: skip', ''), ('pylint: disable=x', ''), ('mypy: ignore-errors', ''),
    ('pyright: ignore[reportGeneralTypeIssues]', ''), ('ruff: noqa', ''), ('isort: skip', ''), ('pragma: no cover', ''), ('type: List[int]', ''),
    ('the a  # type: ignore', 'the a'), ('the #1 choice', 'the #1 choice'), ('number of items', 'number of items'),
    ('pragma no cover', ''), ('pyre-ignore[16]', ''), ('NOLINT', ''), ('noqa:E501  # the a', 'the a'),
    ('type: Optional[str]', ''), ('type: (int, str) -> bool', ''), ('type: str | None', ''),
    ('type: daily, weekly or monthly', 'type: daily, weekly or monthly'), ('type: daily', 'type: daily'),
    ('black or white', 'black or white'), ('coverage radius in km', 'coverage radius in km'), ('type of fruit', 'type of fruit'),
])
def test_undirected(c, expected):
    assert undirected(c) == expected


def test_directive_line_leaves_the_comment_block_above():
    def f(
        # how many
        # pylint: disable=invalid-name
        n: int,
    ):
        "F."
    assert get_schema(f)['input_schema']['properties']['n']['description'] == 'how many'


class Attrs(TypedDict):
    "Attribute docstrings"
    a: int
    """The first parameter"""
    b: str  # the b, from its comment
    """and from its docstring"""
    c: str  # noqa: F821
    d: Annotated[int, 'from Annotated']
    """and from an attribute docstring"""
    e: int
    """nearer than the class docstring's section"""


class AttrsDocumented(TypedDict):
    """Attribute docstrings and an Attributes section

    Attributes:
        a: from the section
        b: from the section
    """
    a: int
    """from the attribute"""
    b: int


def test_typeddict_attribute_docstrings():
    def f(x: Attrs, y: AttrsDocumented): "F."
    defs = get_schema(f)['input_schema']['$defs']
    props = defs['Attrs']['properties']
    assert [props[k]['description'] for k in 'abcde'] == ['The first parameter', 'the b, from its comment. and from its docstring', '',
                                                          'from Annotated. and from an attribute docstring',
                                                          "nearer than the class docstring's section"]
    props = defs['AttrsDocumented']['properties']
    assert [props[k]['description'] for k in 'ab'] == ['from the attribute', 'from the section']


class Inner(BaseModel):
    "An inner thing"
    x: int


class Outer(BaseModel):
    "An outer thing"
    inner: Inner


def test_a_class_tool_keeps_its_nested_classes_docstrings():
    d = to_openai(Outer)['function']
    assert d['description'] == 'An outer thing'
    assert d['parameters']['$defs']['Inner']['description'] == 'An inner thing'


class Builder:
    "Builds"
    def add(self, n: int) -> Self:
        "Add n"
        return self

    def merge(self, other: Self) -> Self:
        "Merge another"
        return self


def test_self_resolves_to_its_class():
    assert get_schema(Builder().add)['description'].endswith('type: Builder')
    assert get_schema(Builder.add)['description'].endswith('type: Builder')
    s = get_schema(Builder().merge)
    assert 'Self' not in str(s)


class Node:
    "A node"
    def __init__(self, v: int):
        self.v = v

    def link(self, other: Optional[Self] = None, many: list[Self] = ()) -> list[Self]:
        "Link"


def test_self_inside_an_annotation_resolves_too():
    s = get_schema(Node(1).link)
    ps = s['input_schema']['properties']
    assert ps['other']['anyOf'] == [{'$ref': '#/$defs/Node'}, {'type': 'null'}] and ps['many']['items'] == {'$ref': '#/$defs/Node'}
    assert s['description'].endswith('type: array[Node]')


def test_self_outside_a_class_is_a_schema_error():
    def f(x: Self) -> int:
        "F."
    with pytest.raises(SchemaError, match='Self'): get_schema(f)


def test_a_huge_type_comment_is_a_description_never_a_crash(tmp_path, monkeypatch):
    # `ast.parse` recursed (`a+a+...`) or ran out of memory (`not not ...`) reading these as PEP 484 type comments
    for c in ('type: ' + 'a+' * 200_000 + 'a', 'type: ' + 'not ' * 100_000 + 'x', 'type: ' + 'A.' * 100_000 + 'B'):
        assert undirected(' ' + c) == c
    assert undirected(' type: List[int]') == ''  # a short one is still read as the directive it is
    (tmp_path / 'hostile_comment.py').write_text(f"def f(a: int):  # type: {'a+' * 50_000}a\n    'Do'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from hostile_comment import f
    assert get_schema(f)['input_schema']['properties']['a']['description'].startswith('type: a+a+')

_WORDS = ['noqa', 'NOQA', 'nosec', 'lgtm', 'nolint', 'NoInspection', 'pyre-ignore', 'pyre-fixme', 'pragma', 'no', 'cover', 'branch',
          'type:', 'type', ':', 'ignore', 'fmt:', 'skip', 'pylint:', 'coverage:', 'black', 'the', 'number', 'of', 'items', '#', '#1',
          'int', 'List[int]', 'str | None', 'mypy :', 'note', 'know', 'Nothing', 'snow']

@given(st.lists(st.sampled_from(_WORDS), max_size=8))
@settings(max_examples=examples(400))
def test_undirected_reads_every_comment_as_its_segments_say(words):
    "The quick answer for a comment holding no directive's mark agrees with reading it segment by segment"
    from funccall.core._docs import _is_directive
    c = ' ' + ' '.join(words)
    segs = c.split('#')
    slow = c.strip() if not any(map(_is_directive, segs)) else ' # '.join(x.strip() for x in segs if x.strip() and not _is_directive(x))
    assert undirected(c) == slow
