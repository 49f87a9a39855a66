"""The inverse against real servers' schemas: every tool of the corpus in `tests/data/mcp_corpus/` builds with `mk_tool`,
and, with arguments drawn from the tool's own schema by hypothesis-jsonschema and confirmed by `jsonschema`, the
dispatcher gets exactly those arguments (the very same values), on the first call (the validator) and the ones after it
(the quick tests); one argument changed to a value the schema forbids (by `jsonschema`'s judgement) is refused with a
`ToolInputError` before dispatch, and None for an optional one is sent only where the schema takes null.

hypothesis-jsonschema 0.23 draws objects with `many(...).more()`, which current Hypothesis replaced by a context
manager; `_Many` below is the small adapter, kept here with the tests that need it.
"""
import inspect
import json
import warnings
from types import SimpleNamespace

import jsonschema
import pytest
from conftest import all_any, examples, touched, touched_line
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import utils as cu

import hypothesis_jsonschema
import hypothesis_jsonschema._from_schema as hjs
from corpus import load_corpus
from funccall import ToolInputError, get_schema, handle_type, mk_tool
from funccall.core.schema import SchemaWarning


class _Many:
    "`many(...).more()` / `.reject()`, as hypothesis-jsonschema 0.23 calls them, on top of current Hypothesis's `many`"
    def __init__(self, data, **kw): self._m, self._it = cu.many(data, **kw), None

    def more(self) -> bool:
        if self._it is None:
            self._m.__enter__()
            self._it = iter(self._m)
        try: next(self._it)
        except StopIteration:
            self._m.__exit__(None, None, None)
            return False
        return True

    def reject(self, why=None): self._m.reject(why)


if not hasattr(cu.many, 'more'): hjs.cu = SimpleNamespace(many=_Many)  # older Hypothesis (as pip picks for 3.10) still has it

TOOLS = load_corpus()
SERVERS = sorted({srv for srv, _ in TOOLS})


def disp(name, /, **kw): return name, kw


def _build(tool):
    "The built tool, or None for the documented refusal: two property names that sanitize alike (`StartTime<`, `StartTime>`)"
    try: return mk_tool(disp, tool)
    except ValueError as e:
        assert 'name collision after sanitizing' in str(e), e
        return None


JSON_TYPES = frozenset({'string', 'integer', 'number', 'boolean', 'array', 'object', 'null'})
_PY_JSON = {str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array', dict: 'object', type(None): 'null'}


def _pointer(root: dict, ref: str):
    node = root
    for part in ref.lstrip('#/').split('/') if ref != '#' else ():
        node = node[part.replace('~1', '/').replace('~0', '~')] if isinstance(node, dict) else node[int(part)]
    return node


def json_types(s, root: dict, depth: int = 0) -> frozenset:
    "The JSON types a value under schema `s` may have, read from its `type`, `enum`, `const`, `anyOf`/`oneOf` and local `$ref`s"
    if depth > 30 or not isinstance(s, dict): return JSON_TYPES
    if isinstance(s.get('$ref'), str) and s['$ref'].startswith('#'): return json_types(_pointer(root, s['$ref']), root, depth + 1)
    out = JSON_TYPES
    if 'type' in s: out = out & ({s['type']} if isinstance(s['type'], str) else set(s['type']))
    for k in ('anyOf', 'oneOf'):
        if isinstance(s.get(k), list): out = out & frozenset().union(*(json_types(m, root, depth + 1) for m in s[k]))
    if 'enum' in s or 'const' in s: out = out & {_PY_JSON[type(v)] for v in (s['enum'] if 'enum' in s else [s['const']])}
    return out


def signature_agrees(fn, tool: dict) -> int:
    """Each parameter of the built `fn` whose name is its property's: the schema made from its annotation by `handle_type`
    (not the stored one) takes the same JSON types as the property (null added to an optional one is its default);
    required properties are the parameters without a default. Returns how many parameters were checked"""
    s = tool['inputSchema']
    props, req, n = s.get('properties', {}), set(s.get('required', ())), 0
    for nm, p in inspect.signature(fn).parameters.items():
        if nm not in props or not isinstance(props[nm], dict): continue
        assert (p.default is inspect.Parameter.empty) == (nm in req), nm
        defs = {}
        got, want = json_types(handle_type(p.annotation, defs), {'$defs': defs}), json_types(props[nm], s)
        if nm not in req and 'null' not in want: got = got - {'null'}
        assert got == want, (nm, p.annotation, props[nm])
        n += 1
    return n


def test_every_tool_builds():
    built = [_build(t) for _, t in TOOLS]
    refused = [t['name'] for (_, t), fn in zip(TOOLS, built) if fn is None]
    assert len(TOOLS) > 500 and len(SERVERS) > 30
    assert len(refused) <= len(TOOLS) // 50, refused  # only the collisions (see `_build`); every other real schema builds
    params = 0
    for (srv, t), fn in zip(TOOLS, built):
        if fn is None: touched('signature agrees with schema', f'{srv}:{t["name"]}', 'refused (name collision)'); continue
        assert get_schema(fn) == {'name': t['name'], 'description': t.get('description') or '', 'input_schema': t['inputSchema']}
        params += signature_agrees(fn, t)
        touched('signature agrees with schema', f'{srv}:{t["name"]}')
    assert params > 4000  # most properties are named as Python can name a parameter
    print(touched_line('signature agrees with schema'), f'({params} parameters)')


def test_the_signature_check_fails_when_the_built_annotations_are_any():
    "The check can fail: with every built annotation made `Any`, it refuses every tool with a property of some type"
    caught = 0
    for _, t in TOOLS[:300]:
        typed = any(json_types(p, t['inputSchema']) != JSON_TYPES for p in t['inputSchema'].get('properties', {}).values())
        if (fn := _build(t)) is None or not signature_agrees(fn, t) or not typed: continue
        with pytest.raises(AssertionError): signature_agrees(all_any(fn), t)
        caught += 1
    assert caught > 200


_strategies: dict = {}

def _args_strategy(i: int):
    "Arguments for tool `i`, drawn from its schema (kept: making a strategy for a big schema takes a while)"
    if i not in _strategies:
        s = TOOLS[i][1]['inputSchema']
        # patterns are ECMA 262's, where `\\d` is ASCII and `$` the very end; `jsonschema` reads them as Python's `re` does,
        # so a pattern is only tried on ASCII text without line ends, where the two agree
        codec = 'ascii' if '"pattern"' in json.dumps(s) else 'utf-8'
        try:
            hjs.resolve_all_refs(json.loads(json.dumps(s)))  # recursive refs it can't draw from fail here, not in the middle of a draw
            _strategies[i] = hypothesis_jsonschema.from_schema(s, codec=codec), codec
        except Exception: _strategies[i] = None, codec  # a schema hypothesis-jsonschema can't draw from (it says so): nothing to test
    return _strategies[i]


def _validator(s: dict):
    cls = jsonschema.validators.validator_for(s, default=jsonschema.Draft202012Validator)
    return cls(s)


# values of every JSON type, to put where the schema forbids them
MUTANTS = ['mutated', 12345, 1.5, True, [], [['x']], {'\u0000odd': 1}]


ARRIVE = 'schema-valid arguments arrive unchanged'


@pytest.mark.corpus  # the whole corpus with drawn arguments: CI runs it
@pytest.mark.parametrize('server', SERVERS)
def test_schema_valid_arguments_arrive_unchanged(server):
    "Every tool of the server, each with its own few draws (fresh ones every run)"
    for i in [i for i, (srv, _) in enumerate(TOOLS) if srv == server]:
        tool, key = TOOLS[i][1], f'{server}:{TOOLS[i][1]["name"]}'
        if (fn := _build(tool)) is None: touched(ARRIVE, key, 'refused (name collision)'); continue
        if _args_strategy(i)[0] is None: touched(ARRIVE, key, "skipped (hypothesis-jsonschema can't draw: recursive references)"); continue
        called = []
        _arrive(i, fn, called)
        touched(ARRIVE, key, 'checked' if called else 'skipped (no draw valid under jsonschema)')
    print(touched_line(ARRIVE))


def _arrive(i: int, fn, called: list) -> None:
    tool = TOOLS[i][1]

    @settings(max_examples=examples(3), deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.explicit, Phase.generate])  # no shrinking: a failure shows the arguments as drawn, at once
    @given(data=st.data())
    def check(data):
        strategy, codec = _args_strategy(i)
        args = data.draw(strategy, label='arguments')
        s = tool['inputSchema']
        v = _validator(s)
        assume(isinstance(args, dict) and v.is_valid(args))
        assume(codec == 'utf-8' or '\\n' not in json.dumps(args))
        params = set(fn.__signature__.parameters)
        props = s.get('properties', {})
        # an extra key spelt like another property's parameter would call that parameter: not a call anyone can make
        assume(not any(k in params and k not in props for k in args))
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', SchemaWarning)  # patterns the validator can't run safely are reported, not enforced
            for _ in range(2):  # the first call compiles the validator and the quick tests the calls after it take
                name, got = fn(**args)
                assert name == tool['name'] and got == args and all(got[k] is args[k] for k in args)
            called.append(tool['name'])
            if not props: return
            # one argument changed to a value of a type its schema forbids
            k = data.draw(st.sampled_from(sorted(props)), label='mutated')
            for m in MUTANTS:
                bad = {**args, k: m}
                if v.is_valid(bad): continue
                with pytest.raises(ToolInputError) as e: fn(**bad)
                assert tool['name'] in str(e.value)
                break
            if k not in s.get('required', []):  # None for an optional parameter is its default: not sent unless the schema takes null
                sent = fn(**{**args, k: None})[1]
                assert sent == ({**args, k: None} if v.is_valid({**args, k: None}) else {a: x for a, x in args.items() if a != k})

    check()

