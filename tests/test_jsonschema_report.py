"""The report of a bad value (`Validator.problems`) is the same whichever way it is found: the walk that asks each key's
check in turn (every object's first report), or the generated code that finds an object's failing keys (from its
second report on), or the generated code that reports for the whole schema (a validator's second report on), over the real tool schemas of the corpus (`tests/data/mcp_corpus/`) given wrong arguments."""
import functools, json, warnings
from pathlib import Path

import pytest
from conftest import examples
from corpus import load_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funccall.core._jsonschema as js
from funccall.core._jsonschema import compile_schema

def _wrong(s):
    "A value of a type property schema `s` doesn't ask for: the mistakes models make (a number for text, text for the rest)"
    t = s.get('type') if isinstance(s, dict) else None
    return 12345 if t == 'string' or (isinstance(t, list) and 'string' in t) else 'wrong'

def _bad_values(s: dict) -> list:
    "Wrong arguments for root schema `s`: nothing at all, one property wrong, every property wrong plus a key no one asked for"
    props = s.get('properties') if isinstance(s.get('properties'), dict) else {}
    out = [{}, {'zz_unknown': [1, {'a': None}]}]
    out += [{k: _wrong(x)} for k, x in props.items()]
    every = {k: _wrong(x) for k, x in props.items()}
    out += [{**every, 'zz_unknown': 1}, dict(reversed([*every.items(), ('zz_unknown', 1)]))]
    # null everywhere, valid where the schema takes it (`type: ['object', 'null']`), beside a key no one asked for
    out.append({**{k: None for k in props}, 'zz_unknown': 1})
    out.append({k: {kk: None for kk in x['properties']} for k, x in props.items() if isinstance(x, dict) and isinstance(x.get('properties'), dict)})
    # nested objects: each property an object of wrong values for its own properties
    out.append({k: {kk: _wrong(xx) for kk, xx in x['properties'].items()} for k, x in props.items()
                if isinstance(x, dict) and isinstance(x.get('properties'), dict)})
    # arrays: an item of the wrong type among right-looking ones
    out.append({k: [_wrong(x['items']), 'x', 1] for k, x in props.items() if isinstance(x, dict) and isinstance(x.get('items'), dict)})
    return out

def _schemas() -> list:
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return [(f"{server}/{t['name']}", t['inputSchema']) for server, t in load_corpus() if isinstance(t.get('inputSchema'), dict)]

def _reports(s: dict, values: list, limit: int) -> list:
    "Each value's problems, from one validator of `s` (so each object's second and later reports may use generated code)"
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        v = compile_schema(s)
        return [v.problems(x, limit=limit) for x in values]

def _walk_only(n): return n.errs  # (for `_reporter`: no generated report, every report by the walk)

def _generated(v) -> bool: return getattr(v._report, '__code__', None) is not None and v._report.__code__.co_filename.startswith('<funccall validator report')

@functools.cache
def _cases() -> list:
    "Each corpus schema's name, the schema, and its wrong arguments"
    return [(nm, s, _bad_values(s)) for nm, s in _schemas()]

@functools.cache
def _walked(limit: int) -> list:
    "Each case's reports, twice over, by the walk alone (no generated finder, no generated report): once per limit, for every test"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(js, '_reporter', _walk_only)
        mp.setattr(js, '_FINDER', 10**9)  # no generated finder: every report by the walk, key by key
        return [_reports(s, values * 2, limit) for _, s, values in _cases()]

@pytest.mark.parametrize('limit', [10, 2])
def test_generated_finder_reports_what_the_walk_reports(monkeypatch, limit):
    cases, walked = _cases(), _walked(limit)
    monkeypatch.setattr(js, '_reporter', _walk_only)
    monkeypatch.setattr(js, '_FINDER', 1)  # every object of a property or more, from its second report on
    made = 0
    for (nm, s, values), want in zip(cases, walked):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            v = compile_schema(s)
            got = [v.problems(x, limit=limit) for x in values * 2]  # the second round: generated code where it was made
        assert got == want, nm
        assert [bool(p) for p in got] == [not v.is_valid(x) for x in values * 2], nm
        made += any(isinstance(p, js._Object) and p._failing not in (None, js._none) for n in v._comp.memo.values() for p in n.parts)
    assert made > 500  # the generated finder really ran, on most of the corpus's tools

# the generator's limits as they are; every object's keys found first (no `if k == ...` chain); the source cut short
# almost at once (the walk's report, and the tree's checks, called from the generated code)
SMALL = {'_CHAIN': 0, '_REPORT_LINES': 12, '_REPORT_DEPTH': 1}

@pytest.mark.parametrize('limit,settings', [(10, {}), (2, {}), (1, {}), (10, {'_CHAIN': 0}), (10, SMALL), (2, SMALL)])
def test_generated_report_reports_what_the_walk_reports(monkeypatch, limit, settings):
    "From a validator's second report on, generated code reports (`_reporter`): the same problems, in the same order"
    cases, walked = _cases(), _walked(limit)
    for k, x in settings.items(): monkeypatch.setattr(js, k, x)
    made = 0
    for (nm, s, values), want in zip(cases, walked):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            v = compile_schema(s)
            got = [v.problems(x, limit=limit) for x in values * 2]
        assert got == want, nm
        made += _generated(v)
    assert made > 1000  # generated reports really ran, on most of the corpus's tools

SUITE = Path(__file__).parent / 'data' / 'json-schema-test-suite'

def _suite() -> list:
    "Every group of the JSON Schema Test Suite: its name, schema, draft and values"
    return [(f"{folder}/{f.name}: {g['description']}", g['schema'], draft, [t['data'] for t in g['tests']])
            for folder, draft in (('draft2020-12', '2020-12'), ('draft7', 'draft7')) for f in sorted((SUITE / folder).glob('*.json'))
            for g in json.loads(f.read_text())]

def _suite_reports(schema, draft: str, values: list, limit: int) -> tuple:
    "Each value's problems, twice over, from one validator; and whether it generated its report"
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        v = compile_schema(schema, draft=draft)
        return [v.problems(x, limit=limit) for x in values * 2], _generated(v)

@pytest.mark.parametrize('limit', [10, 1])
def test_generated_report_on_the_test_suite(monkeypatch, limit):
    "Every keyword, recursive and anchored refs, boolean schemas, drafts 7 and 2020-12: generated reports are the walk's"
    cases = _suite()
    with monkeypatch.context() as m:
        m.setattr(js, '_reporter', _walk_only)
        walked = [_suite_reports(s, d, values, limit)[0] for _, s, d, values in cases]
    made = 0
    for (nm, s, d, values), want in zip(cases, walked):
        got, generated = _suite_reports(s, d, values, limit)
        assert got == want, nm
        made += generated
    assert made > 450  # (a group whose values are all valid reports nothing: its validator generates no report)

def _deep(levels: int, leaf):
    v = leaf
    for _ in range(levels): v = {'kids': [v]}
    return v

@pytest.mark.parametrize('levels', [3, 60, 5000])
def test_generated_report_of_deep_values(monkeypatch, levels):
    "A recursive schema, values nested deeper and deeper: the same problems, or the same 'too deep' (never a RecursionError)"
    s = {'$ref': '#/$defs/t', '$defs': {'t': {'type': 'object', 'properties': {'kids': {'type': 'array', 'items': {'$ref': '#/$defs/t'}},
                                                                              'n': {'type': 'integer'}}, 'additionalProperties': False}}}
    values = [_deep(levels, {'n': 'x'}), _deep(levels, {'m': 1}), _deep(levels, 5)]
    with monkeypatch.context() as m:
        m.setattr(js, '_reporter', _walk_only)
        want = [compile_schema(s).problems(x) for x in values]
    v = compile_schema(s)
    v.problems(values[0])
    got = [v.problems(x) for x in values]
    assert _generated(v)
    if levels < 1000: assert got == want and all(p and p[0].message != js._TOO_DEEP for p in got)
    else: assert all(p == [js.Problem('', js._TOO_DEEP)] for p in got + want)  # too deep for either: said so, by both

def test_generated_report_of_nullable_containers(monkeypatch):
    "An object or array that may be null: a valid null says nothing, a wrong scalar says what was expected"
    s = {'type': 'object', 'properties': {'o': {'type': ['object', 'null'], 'properties': {'a': {'type': 'integer'}}, 'required': ['a']},
                                          'l': {'type': ['array', 'null'], 'items': {'type': 'integer'}}, 'n': {'type': 'integer'}}}
    values = [{'o': None, 'l': None, 'n': 'x'}, {'o': {'a': 'x'}, 'l': [1, 'x'], 'n': 1}, {'o': 5, 'l': 'x'}, {'o': {}, 'l': [], 'n': None}]
    with monkeypatch.context() as m:
        m.setattr(js, '_reporter', _walk_only)
        want = [compile_schema(s).problems(x) for x in values]
    v = compile_schema(s)
    got = [v.problems(x) for x in values * 2][len(values):]
    assert _generated(v) and got == want
    assert want[0] == [js.Problem('n', "expected an integer, got 'x'")]

# keywords mixed as the suite's schemas seldom mix them: no `type`, several kinds at once, recursion without a type
MIXED = [{'items': {'type': 'integer'}, 'properties': {'a': {'type': 'string'}}, 'required': ['b']},
         {'type': ['object', 'array', 'null'], 'items': {'type': 'string'}, 'minItems': 2,
          'properties': {'a': {'type': 'integer', 'minimum': 2}}, 'additionalProperties': {'type': 'boolean'}},
         {'enum': [[1], {'a': 1}, 3, 'x'], 'items': {'enum': [1, 'foo']}},
         {'properties': {'a': {'$ref': '#'}, 'b': {'type': 'array', 'items': {'$ref': '#'}, 'maxItems': 2}}, 'additionalProperties': False},
         {'anyOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'integer'}}], 'properties': {'foo': {'type': 'integer'}}},
         {'type': 'object', 'properties': {'a': {'type': ['array', 'null'], 'items': {'type': 'object', 'required': ['foo']}},
                                           'b': {'not': {'type': 'string'}}}, 'required': ['a', 'b']}]
_CASES = _suite() + [('mixed', s, '2020-12', []) for s in MIXED]
_values = st.recursive(st.none() | st.booleans() | st.integers(-3, 12) | st.sampled_from([0.5, 1.0, -1.5, 1e15]) |
                       st.sampled_from(['', 'a', 'foo', 'bar', 'baz', 'aaa', '1', '\u00e9']),
                       lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.sampled_from(['a', 'b', 'c', 'foo', 'bar', 'x1']), kids, max_size=4),
                       max_leaves=10)

@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(range(len(_CASES))) | st.sampled_from(range(len(_CASES) - len(MIXED), len(_CASES))),
       st.lists(_values, min_size=2, max_size=4), st.sampled_from([10, 1]))
def test_generated_report_of_any_value(i, values, limit):
    "Any JSON value against the suite's schemas: a validator's later (generated) reports are its first (walked) ones"
    _, s, draft, _ = _CASES[i]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        walked = [compile_schema(s, draft=draft).problems(x, limit=limit) for x in values]  # a validator's first report: the walk's
        v = compile_schema(s, draft=draft)
        assert [v.problems(x, limit=limit) for x in values * 2] == walked * 2
