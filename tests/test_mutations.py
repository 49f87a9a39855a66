"""Hand mutations of the inverse, the call path and the strict renderer: each one must make a named test fail.

A test that still passes with the code it guards broken is a test that can't fail. Each case below breaks one thing
(patched for the test's duration only) and runs the tests that are meant to catch it. The survivors these found, and
that are now caught: the `Any`-annotation mutation of a built signature passed every round trip (they read back the
schema `mk_tool` stored); a strict null inside a model passed the corpus (an xfail held its place) and a refusal of
a value drawn against a constraint moved into a description counted as a pass.
"""
import inspect

import pytest
from jsonschema import ValidationError
import test_call
import test_inverse_corpus
import test_providers
import test_roundtrip
from conftest import all_any

import funccall.core._coerce
import funccall.core._strict
import funccall.core.inverse
from funccall import get_schema, mk_tool


def _fails(test, *args) -> None:
    "`test(*args)` fails (an assertion, the error the code under test raises, or a schema check)"
    with pytest.raises((AssertionError, ValueError, TypeError, ValidationError)): test(*args)


def test_built_annotations_made_any_are_caught(monkeypatch):
    "The inverse: every annotation of the built signature `Any` (the stored schema unchanged)"
    real = funccall.core.inverse.mk_tool
    monkeypatch.setattr(test_roundtrip, 'mk_tool', lambda *a, **kw: all_any(real(*a, **kw)))
    monkeypatch.setattr(test_inverse_corpus, 'mk_tool', lambda *a, **kw: all_any(real(*a, **kw)))
    _fails(test_roundtrip._fixpoint, test_roundtrip._example)
    _fails(test_roundtrip.test_field_comments_and_defaults_come_back)
    _fails(test_inverse_corpus.test_every_tool_builds)


def test_a_strict_null_inside_a_model_given_to_pydantic_is_caught(monkeypatch):
    "The call path: nulls strict mode sends inside a model's classes handed on to pydantic as they are"
    monkeypatch.setattr(funccall.core._coerce, '_drop_default_nulls', lambda t, v, depth=0: v)
    for o, expected in [({'home': {'street': 's', 'zip': None}}, test_call._Outer(home={'street': 's'})),
                        ({'inner': {'n': None}}, test_call._Outer())]:
        _fails(test_call.test_a_strict_null_inside_a_model_means_leave_it_out, o, expected)


def test_optional_parameters_not_made_nullable_are_caught(monkeypatch):
    "The strict renderer: optional properties made required but not nullable (the model could no longer say 'the default')"
    monkeypatch.setattr(funccall.core._strict, 'nullable', lambda s: s)
    _fails(test_providers.test_strict_null_means_default_round_trip)


def test_a_one_value_tag_made_nullable_is_caught(monkeypatch):
    "The strict renderer: a discriminated union's tag made nullable again"
    monkeypatch.setattr(funccall.core._strict, '_one_value', lambda s: False)
    _fails(test_providers.test_strict_keeps_an_optional_tag_required_and_not_null, 'openai')


def test_the_mutations_leave_the_code_as_it_was():
    "Each mutation above was undone: the round trip holds again"
    s, tool = test_roundtrip._fixpoint(test_roundtrip._example)
    assert get_schema(tool, evalable=True) == s and inspect.signature(tool).parameters['p0'].annotation is not object
    assert mk_tool is funccall.core.inverse.mk_tool
