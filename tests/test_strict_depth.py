"""Depth limits are `SchemaError`s naming the depth, never `RecursionError`; strict mode's output is valid under OpenAI's
rules, checked by the OpenAI SDK's and openai-agents' own strict-schema helpers; Gemini says what strict means to it."""
import copy, json, warnings

import pytest

from funccall import SchemaError, Toolbox, get_schema, mk_tool, to_anthropic, to_gemini, to_mcp, to_openai
from funccall.core.providers import ProviderWarning, Report, strict_schema


def nest(n: int, leaf=None) -> dict:
    s = leaf or {'type': 'integer'}
    for _ in range(n): s = {'type': 'object', 'properties': {'a': s}, 'required': ['a']}
    return s


def tool(params: dict) -> dict: return {'name': 't', 'description': 'T.', 'input_schema': params}


@pytest.mark.parametrize('n', [1000, 5000])
def test_a_deep_schema_in_strict_mode_is_a_schema_error_naming_its_depth(n):
    with pytest.raises(SchemaError, match=r'nested (over )?\d+ levels deep'): strict_schema(nest(n))
    for render in (to_openai, to_anthropic):
        with pytest.raises(SchemaError, match=r'nested (over )?\d+ levels deep'): render(tool(nest(n)), strict=True)


@pytest.mark.parametrize('render', [to_openai, to_anthropic, to_gemini, lambda t: to_gemini(t, legacy=True), to_mcp])
def test_every_renderer_refuses_a_deep_schema_in_words(render):
    with pytest.raises(SchemaError, match=r'nested (over )?\d+ levels deep'): render(tool(nest(1000)))
    assert render(tool(nest(90)))  # under the limit: rendered


def test_get_schema_of_a_tool_built_from_a_250_level_schema():
    fn = mk_tool(lambda nm, **kw: kw, {'name': 't', 'description': 'T.', 'inputSchema': {'type': 'object', 'properties': {'x': nest(250)}}})
    with pytest.raises(SchemaError, match=r'nested 50\d levels deep'): get_schema(fn)
    with pytest.raises(SchemaError, match='levels deep'): Toolbox([fn]).definitions('openai', strict=True)
    v = 1
    for _ in range(250): v = {'a': v}
    assert fn(x=v) == {'x': v}  # it still calls: the limit is on rendering


def test_a_hostile_deep_list_ends_in_bounded_time():
    deep: list = []
    for _ in range(100_000): deep = [deep]
    with pytest.raises(SchemaError, match='over 800 levels'): to_openai(tool({'type': 'object', 'properties': {}, 'examples': deep}))


def test_strict_depth_failure_is_said_once():
    r = Report()
    to_openai(tool(nest(40)), strict=True, report=r)
    assert len(r.lost) == 1 and r.lost[0].what.count('nested') == 1


def openai_valid(s: dict, root=True) -> list:
    "Where `s` breaks OpenAI's strict rules as its guide states them"
    bad = []
    def walk(x, at):
        if isinstance(x, list):
            for i, y in enumerate(x): walk(y, f'{at}/{i}')
            return
        if not isinstance(x, dict): return
        if 'allOf' in x: bad.append(f'{at}: allOf')
        if '$ref' in x and len(x) > 1: bad.append(f'{at}: $ref with siblings')
        if 'properties' in x and x.get('type') != 'object': bad.append(f'{at}: properties without type object')
        if x.get('type') == 'object':
            if x.get('additionalProperties') is not False: bad.append(f'{at}: additionalProperties not false')
            if set(x.get('required', ())) != set(x.get('properties', {})): bad.append(f'{at}: not all required')
        for k, v in x.items():
            if k in ('properties', '$defs') and isinstance(v, dict):  # names, each a schema (a property may be named `properties`)
                for n, y in v.items(): walk(y, f'{at}/{k}/{n}')
            elif k not in ('enum', 'const', 'required', 'default'): walk(v, f'{at}/{k}')
    if root and s.get('type') != 'object': bad.append('root is not an object')
    walk(s, '')
    return bad


DEFS = {'A': {'type': 'object', 'properties': {'y': {'type': 'string'}}, 'required': ['y']}}
CASES = {
    'ref-beside-properties': {'type': 'object', 'properties': {'p': {'properties': {'x': {'type': 'integer'}}, 'required': ['x'], '$ref': '#/$defs/A'}},
                              'required': ['p'], '$defs': DEFS},
    'singleton-allOf': {'type': 'object', 'properties': {'p': {'allOf': [{'$ref': '#/$defs/A'}], 'description': 'the p'}}, 'required': ['p'], '$defs': DEFS},
    'allOf-of-objects': {'type': 'object', 'properties': {'p': {'allOf': [{'$ref': '#/$defs/A'}, {'type': 'object', 'properties': {'z': {'type': 'number'}}}]}},
                         'required': ['p'], '$defs': DEFS},
    'root-ref': {'$ref': '#/$defs/A', '$defs': DEFS},
    'root-ref-to-a-ref': {'$ref': '#/$defs/B', '$defs': {**DEFS, 'B': {'$ref': '#/$defs/A'}}},
    'typeless-properties': {'type': 'object', 'properties': {'p': {'properties': {'x': {'type': 'integer'}}}}},
}


@pytest.mark.parametrize('nm', list(CASES))
def test_strict_output_is_valid_under_openais_rules(nm):
    r = Report()
    d = to_openai(tool(CASES[nm]), strict=True, report=r)['function']
    assert d['strict'] is True, list(r)
    out = d['parameters']
    assert openai_valid(out) == []
    assert r.changes and not r.lost  # said in the report, nothing lost
    # the OpenAI SDK's own strict-schema pass and openai-agents' change nothing: the schema is strict already
    from openai.lib._pydantic import _ensure_strict_json_schema
    mine = copy.deepcopy(out)
    assert _ensure_strict_json_schema(mine, path=(), root=mine) == out
    from agents.strict_schema import ensure_strict_json_schema
    assert ensure_strict_json_schema(copy.deepcopy(out)) == out


@pytest.mark.parametrize('nm', list(CASES))
def test_strict_output_is_valid_under_claudes_rules(nm):
    "Claude's rules: every object closed, no allOf, no $ref beside other keywords; optional properties stay optional"
    r = Report()
    d = to_anthropic(tool(CASES[nm]), strict=True, report=r)
    assert d['strict'] is True, list(r)
    bad = [b for b in openai_valid(d['input_schema']) if 'not all required' not in b]
    assert bad == []


def test_merged_properties_keep_both_sides():
    out = to_openai(tool(CASES['ref-beside-properties']), strict=True, report=Report())['function']['parameters']
    p = out['properties']['p']
    assert set(p['properties']) == {'x', 'y'} and set(p['required']) == {'x', 'y'}
    out = to_openai(tool(CASES['root-ref']), strict=True, report=Report())['function']['parameters']
    assert out['properties'] == {'y': {'type': 'string'}}


def test_what_cant_merge_goes_non_strict_with_a_reason():
    s = {'type': 'object', 'properties': {'p': {'properties': {'y': {'type': 'integer'}}, '$ref': '#/$defs/A'}}, 'required': ['p'], '$defs': DEFS}
    r = Report()
    d = to_openai(tool(s), strict=True, report=r)['function']
    assert d['strict'] is False and r.lost and "can't merge" in r.lost[0].what
    with pytest.raises(SchemaError, match="can't merge"): strict_schema(s)


def test_input_is_not_changed():
    for s in CASES.values():
        before = json.dumps(s, sort_keys=True)
        to_openai(tool(s), strict=True, report=Report())
        assert json.dumps(s, sort_keys=True) == before


def test_gemini_says_it_has_no_strict_flag():
    def f(a: int):
        "F."
    r = Report()
    out = Toolbox([f]).definitions('gemini', strict=True, report=r)
    assert 'strict' not in out[0]
    assert r.lost and 'Gemini has no strict flag' in r.lost[0].what and 'VALIDATED' in r.lost[0].what
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        to_gemini(f, strict=True)
    assert any(issubclass(w.category, ProviderWarning) and 'strict' in str(w.message) for w in ws)
    r = Report()
    to_gemini(f, report=r)
    assert not r.lost  # not asked for: nothing said


@pytest.mark.corpus
def test_every_strict_corpus_tool_is_valid_under_openais_rules():
    "Over the real MCP servers' tools: each one sent strict breaks none of OpenAI's rules, and the SDK's own pass changes nothing"
    from corpus import load_corpus
    from openai.lib._pydantic import _ensure_strict_json_schema
    strict = 0
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for nm, t in load_corpus():
            d = to_openai({'name': 'x', 'description': '', 'input_schema': t['inputSchema']}, strict=True, report=Report())['function']
            if not d['strict']: continue
            strict += 1
            assert openai_valid(d['parameters']) == [], nm
            mine = copy.deepcopy(d['parameters'])
            assert _ensure_strict_json_schema(mine, path=(), root=mine) == d['parameters'], nm
    assert strict > 1200  # the README's figure: 1263 of 1340


def test_a_schema_exactly_at_the_depth_limit_renders_and_one_more_is_refused_naming_its_depth():
    from funccall.core._json import MAX_NESTING, nesting
    def arr(levels: int) -> dict:  # an object holding arrays of arrays: `levels` dicts deep
        s = {'type': 'integer'}
        for _ in range(levels - 3): s = {'type': 'array', 'items': s}  # (the root, its `properties`, the scalar: 3 dicts)
        return {'type': 'object', 'properties': {'a': s}, 'required': ['a']}
    ok, deep = arr(MAX_NESTING), arr(MAX_NESTING + 1)
    assert (nesting(ok), nesting(deep)) == (MAX_NESTING, MAX_NESTING + 1)
    # what `get_schema` of a built tool takes, every renderer takes (they counted the tool's own dict as one more level)
    built = mk_tool(lambda **kw: 1, tool(copy.deepcopy(ok)))
    for strict in (False, True):
        assert to_openai(get_schema(built), strict=strict)['function']['parameters']['properties']['a']
        assert to_openai(tool(copy.deepcopy(ok)), strict=strict)['function']['name'] == 't'
    assert to_anthropic(tool(copy.deepcopy(ok)))['name'] == 't'
    with pytest.raises(SchemaError, match=f'nested {MAX_NESTING + 1} levels deep'): get_schema(mk_tool(lambda **kw: 1, tool(copy.deepcopy(deep))))
    with pytest.raises(SchemaError, match=f'input schema is nested {MAX_NESTING + 1} levels deep'): to_openai(tool(copy.deepcopy(deep)))


def test_a_root_ref_cycle_is_refused_saying_why_never_a_hang():
    r = Report()
    d = to_openai(tool({'$ref': '#/$defs/B', '$defs': {'A': {'$ref': '#/$defs/B'}, 'B': {'$ref': '#/$defs/A'}}}), strict=True, report=r)
    assert d['function']['strict'] is False and any('not an object' in str(x) for x in r)
