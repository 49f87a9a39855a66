"""The fast paths of issue 22 do what the slow ones do: a built tool's first calls (quick tests in a loop, no validator
for a valid call) and its own code once called often agree on every subset of optional arguments and refuse the same
calls; a sync `run_sync` keeps one event loop per thread and cancels what a call leaves running; a sync batch of one
call runs inline; the worker pool hands jobs over and counts them; `import funccall` leaves asyncio unloaded."""
import asyncio
import itertools
import re
import subprocess
import sys
import threading
import time

import pytest
from conftest import examples, untraced_env
from hypothesis import HealthCheck, given, settings, strategies as st

from funccall import Tool, Toolbox, ToolInputError, mk_tool
from funccall.core._inputs import MAX_SHOWN, Problem, problems_text
from funccall.core import inverse
from funccall.core._run import _workers, run_sync, to_thread

TOOL = {'name': 'find', 'inputSchema': {'type': 'object', 'required': ['q', 'n'], 'properties': {
    'q': {'type': 'string'}, 'n': {'type': 'integer', 'minimum': 1},
    'tags': {'type': 'array', 'items': {'type': 'string'}}, 'sort': {'enum': ['asc', 'desc']},
    'point': {'type': 'object', 'properties': {'x': {'type': 'number'}}, 'required': ['x']}, 'since': {'type': 'string', 'format': 'date-time'}}}}
OPTIONAL = {'tags': ['a'], 'sort': 'asc', 'point': {'x': 1.5}, 'since': '2024-01-01T00:00:00Z'}
BAD = [{'q': 1, 'n': 2}, {'q': 'x', 'n': 0}, {'q': 'x', 'n': 2, 'tags': [1]}, {'q': 'x', 'n': 2, 'sort': 'up'},
       {'q': 'x', 'n': 2, 'point': {'y': 1}}, {'q': 'x', 'n': 2, 'since': 5}, {'q': 'x'}]

def _own_code(fn) -> bool:
    "Whether built tool `fn` runs code of its own (compiled under a name naming it), not the entry code every tool starts with"
    return re.fullmatch(rf"<funccall tool {re.escape(repr(fn.__name__))} #\d+>", fn.__code__.co_filename) is not None

def disp(name, /, **kw): return kw

def _checked(fn): return fn.__globals__['_slow_args'].__self__  # the tool's checked way (`inverse._Checked`)

def test_a_valid_first_call_compiles_no_validator_and_no_code():
    fn = mk_tool(disp, TOOL)
    code = fn.__code__
    assert fn(q='x', n=2, sort='desc') == {'q': 'x', 'n': 2, 'sort': 'desc'}
    assert _checked(fn).validator is None and fn.__code__ is code  # the quick tests in a loop answered
    with pytest.raises(ToolInputError, match="argument 'n'"): fn(q='x', n=0)
    assert _checked(fn).validator is not None  # a refused call compiles it, to say what is wrong

@pytest.mark.parametrize('hot,named', [(False, 99), (True, 0), (True, 99)], ids=['first calls', 'own code, **extra', 'own code, named'])
def test_every_subset_of_optional_arguments_is_sent_as_given_and_bad_calls_refused(monkeypatch, hot, named):
    "Its own code takes the optional arguments as parameters of their own or in `**extra`, by their count: both ways agree"
    monkeypatch.setattr(inverse, '_NAMED_MAX', named)
    fn = mk_tool(disp, TOOL)
    if hot:
        for _ in range(inverse._HOT + 1): fn(q='x', n=1)
        assert _own_code(fn)  # its own code, its own names
        assert fn.__code__.co_varnames[:3] == ('q', 'n', 'extra') if not named else fn.__code__.co_varnames[:6] == ('q', 'n', *OPTIONAL)
    for k in range(len(OPTIONAL) + 1):
        for keys in itertools.permutations(OPTIONAL, k):  # (each order of the keys too: the code made for one order is its own)
            args = {'q': 'x', 'n': 3, **{key: OPTIONAL[key] for key in keys}}
            got = fn(**args)
            assert got == args and all(got[key] is args[key] for key in args)
    if hot and not named: assert any('tags' in f.__code__.co_varnames for f in fn.__globals__['_keyed'].values())  # the keys' code: their names
    for bad in BAD:
        with pytest.raises((ToolInputError, TypeError)): fn(**bad)
    for key in OPTIONAL:  # each optional argument with a wrong value, alone and beside the others, in both orders
        for others in ({}, {k: v for k, v in OPTIONAL.items() if k != key}):
            for args in ({'q': 'x', 'n': 3, key: object(), **others}, {'q': 'x', 'n': 3, **others, key: object()}):
                with pytest.raises(ToolInputError, match=f"argument '{key}'"): fn(**args)
    assert fn(q='x', n=3, tags=['a'], nope=1) == {'q': 'x', 'n': 3, 'tags': ['a'], 'nope': 1}  # a key no parameter has: the schema allows it
    strict = mk_tool(disp, {**TOOL, 'inputSchema': {**TOOL['inputSchema'], 'additionalProperties': False}})
    for _ in range(inverse._HOT + 1 if hot else 0): strict(q='x', n=1)
    with pytest.raises(ToolInputError, match="nope"): strict(q='x', n=3, tags=['a'], nope=1)  # where it doesn't, refused

NAMED = {'name': 'put', 'inputSchema': {'type': 'object', 'required': ['key'], 'properties': {
    'key': {'type': 'string'}, 'approval-policy': {'enum': ['never', 'always']}, 'class': {'type': 'integer'},
    'a0': {'type': 'array', 'items': {'type': 'number'}}, 'kw': {'type': 'boolean'}}}}
NAMED_OPTIONAL = {'approval-policy': 'never', 'class': 3, 'a0': [1.5], 'kw': False}

@pytest.mark.parametrize('named,warm', [(0, {}), (0, {'kw': True}), (99, {})], ids=['**extra', 'named, a function per subset', 'named, a tree'])
@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
def test_a_hot_tool_sends_each_subset_of_optional_arguments_by_their_own_names(monkeypatch, is_async, named, warm):
    "Its own code sends some of the optional arguments by their own names: names that are no identifier, or that its code uses"
    monkeypatch.setattr(inverse, '_KEYED_MAX', 5)  # more sets of keys than a tool keeps code for: the rest take the checked way
    monkeypatch.setattr(inverse, '_GIVEN_MAX', 5)  # more subsets than a tool keeps a function for: the rest are sent as a dict
    monkeypatch.setattr(inverse, '_NAMED_MAX', named)
    async def adisp(name, /, **kw): return kw
    fn = mk_tool(adisp if is_async else disp, NAMED)
    def call(**kw): return asyncio.run(fn(**kw)) if is_async else fn(**kw)
    for _ in range(inverse._HOT + 1): call(key='k', **warm)
    assert _own_code(fn)  # its own code
    for _round in range(2):  # the second time round, each subset's function is found made
        for k in range(len(NAMED_OPTIONAL) + 1):
            for keys in itertools.combinations(NAMED_OPTIONAL, k):
                args = {'key': 'k', **{key: NAMED_OPTIONAL[key] for key in keys}}
                py = {{'approval-policy': 'approval_policy', 'class': 'class_'}.get(key, key): v for key, v in args.items()}
                got = call(**py)
                assert got == args and all(got[key] is args[key] for key in args)
    g = fn.__globals__
    assert (len(g.get('_keyed', ())), len(g.get('_given', ()))) == ((5, 0) if not named and not warm else (0, 5) if warm else (0, 0))
    with pytest.raises(ToolInputError, match="argument 'class'"): call(key='k', class_='3', kw=True)  # (a set of keys past the bound)
    with pytest.raises(ToolInputError, match="argument 'class'"): call(key='k', class_='3')  # (one with code of its own)
    got = call(key='k', **{'approval-policy': 'always', 'class': 2})  # properties by their own names: the checked way takes them
    assert got == {'key': 'k', 'approval-policy': 'always', 'class': 2}

def test_shapes_share_code_and_a_full_cache_drops_only_its_oldest(monkeypatch):
    monkeypatch.setattr(inverse, '_inline_codes', {})
    monkeypatch.setattr(inverse, '_INLINE_CODES_MAX', 3)
    tools = [mk_tool(disp, {'name': f't{i}', 'inputSchema': {'type': 'object', 'required': [f'p{j}' for j in range(i % 5 + 1)],
                                                             'properties': {f'p{j}': {'type': 'integer'} for j in range(i % 5 + 1)}}})
             for i in range(10)]
    for i, fn in enumerate(tools):
        for _ in range(inverse._HOT + 1): assert fn(**{f'p{j}': j for j in range(i % 5 + 1)}) == {f'p{j}': j for j in range(i % 5 + 1)}
    assert len(inverse._inline_codes) == 3  # five shapes made, the two oldest dropped one at a time, never all

def test_run_sync_keeps_one_loop_per_thread_and_cancels_what_a_call_leaves():
    async def loop_id(): return id(asyncio.get_running_loop())
    assert run_sync(loop_id()) == run_sync(loop_id())
    started, cancelled = threading.Event(), []
    async def leaves_a_task():
        async def forever():
            started.set()
            try: await asyncio.sleep(3600)
            except asyncio.CancelledError: cancelled.append(True); raise
        asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)
        return 'done'
    assert run_sync(leaves_a_task()) == 'done' and started.is_set() and cancelled == [True]
    other = []
    t = threading.Thread(target=lambda: other.append(run_sync(loop_id())))
    t.start(); t.join()
    assert other[0] != run_sync(loop_id())  # another thread, another loop

def test_a_sync_batch_of_one_call_runs_inline_unless_it_has_a_deadline():
    def where() -> int:
        "The thread that runs the tool"
        return threading.get_ident()
    tools = Toolbox([Tool(where)])
    assert tools.batch([('where', {})])[0].value == threading.get_ident()
    assert tools.batch([('where', {})], timeout=5)[0].value != threading.get_ident()  # a deadline needs a worker thread
    assert [r.value for r in tools.batch([('where', {})] * 2)] != [threading.get_ident()] * 2

def test_the_pool_runs_many_jobs_and_counts_them_back():
    def work(i):
        time.sleep(0.001)
        return i * 2
    async def many(): return await asyncio.gather(*(to_thread(work, i) for i in range(50)))
    assert asyncio.run(many()) == [i * 2 for i in range(50)]
    deadline = time.monotonic() + 5
    while _workers.running and time.monotonic() < deadline: time.sleep(0.01)
    assert _workers.running == 0 and _workers.idle <= _workers.threads

def test_import_funccall_leaves_asyncio_unloaded():
    # (not `subprocess`: Python 3.10's `uuid` imports it, through `platform`)
    # (untraced: coverage, measuring every child in CI, imports `hashlib` itself)
    code = "import sys, funccall; print(sorted(m for m in ('asyncio', 'concurrent.futures', 'ctypes', 'hashlib', 'tempfile') if m in sys.modules))"
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, env=untraced_env())
    assert p.stdout.strip() == '[]'

def test_an_argument_without_a_quick_test_is_checked_alone_not_the_checked_way(monkeypatch):
    tool = {'name': 'put', 'inputSchema': {'type': 'object', 'required': ['item', 'key'], '$defs': {'Item': {
        'type': 'object', 'properties': {'sku': {'type': 'string', 'pattern': '^[A-Z]+$'}}, 'required': ['sku']}},
        'properties': {'item': {'$ref': '#/$defs/Item'}, 'key': {'type': 'string', 'pattern': '^k[0-9]+$'}}}}
    fn = mk_tool(disp, tool)
    walked = []
    real = inverse._Checked.__call__
    monkeypatch.setattr(inverse._Checked, '__call__', lambda self, kw, extra: walked.append(kw) or real(self, kw, extra))
    for _ in range(inverse._HOT + 2):  # the loop of quick tests, then the tool's own code
        assert fn(item={'sku': 'AB'}, key='k1') == {'item': {'sku': 'AB'}, 'key': 'k1'}
    assert walked == []
    for bad in ({'item': {'sku': 'ab'}, 'key': 'k1'}, {'item': {'sku': 'AB'}, 'key': 'x'}, {'item': {}, 'key': 'k1'}):
        with pytest.raises(ToolInputError): fn(**bad)
    assert len(walked) == 3  # a bad call goes the checked way, which says what is wrong


# --- the quick tests of a tool's first calls: lazily made, and sound on every shape they take ------------------------

def _tree(depth: int, leaf) -> dict: return {'v': leaf} if depth == 0 else {'v': depth, 'kids': [_tree(depth - 1, leaf)]}

DEFS = {'Pt': {'type': 'object', 'properties': {'x': {'type': 'number'}}, 'required': ['x']},
        'Node': {'type': 'object', 'properties': {'v': {'type': 'integer'}, 'kids': {'type': 'array', 'items': {'$ref': '#/$defs/Node'}}},
                 'required': ['v']},
        'A': {'$ref': '#/$defs/B'}, 'B': {'$ref': '#/$defs/A'},
        'Page': {'type': 'object', 'properties': {'type': {'const': 'page'}, 'id': {'type': 'string'}}, 'required': ['type', 'id']}}
# (no null among the values: an optional argument's null whose schema takes none means "not given", a rule of its own)
QUICK_CASES = {  # the shapes given quick tests for issue 22's memory (no validator compiled for a valid first call)
    'local $ref': ({'$ref': '#/$defs/Pt'}, [{'x': 1}, {'x': 'a'}, {}, []]),
    'keys named as strings': ({'type': 'object', 'propertyNames': {'type': 'string'}, 'additionalProperties': {'type': 'integer'}},
                              [{'a': 1}, {'a': 'x'}, {}, []]),
    'string const': ({'const': 'on'}, ['on', 'off', 1, ['on']]),
    'number const': ({'type': 'number', 'const': 1}, [1, 1.0, 2, True, '1']),
    'tagged oneOf': ({'oneOf': [{'$ref': '#/$defs/Page'}, {'type': 'object', 'properties': {'type': {'enum': ['db']}, 'id': {'type': 'string'}},
                                                           'required': ['type']}]},
                     [{'type': 'page', 'id': 'a'}, {'type': 'db'}, {'type': 'page'}, {'type': 'x'}, {}, 'page']),
    'plain pattern': ({'type': 'string', 'pattern': '^#[0-9A-Fa-f]{6}$'}, ['#a0B1c2', '#a0B1c2\n', '#a0B1c', 'x#a0B1c2', '#٠١٢٣٤٥', 5]),
    'two repeats': ({'type': 'string', 'pattern': '^\\d+:\\d+$', 'maxLength': 9}, ['16:9', '16:', '1:2\n', '١:٢', '1' * 8 + ':1', 'a:1']),
    'boolean const': ({'type': 'boolean', 'const': True}, [True, False, 1]),
    'pointer $ref': ({'type': 'array', 'items': {'$ref': '#/$defs/Pt/properties/x'}}, [[1, 2.5], ['a'], [None], 'x']),
    'recursive $ref': ({'$ref': '#/$defs/Node'}, [_tree(30, 1), _tree(30, 'x'), _tree(3, 1), {'kids': []}]),  # (deeper than made at once)
    'overlapping oneOf': ({'oneOf': [{'type': 'object', 'properties': {'page_id': {'type': 'string'}}, 'required': ['page_id']},
                                     {'$ref': '#/$defs/Page'}, {'type': 'object', 'properties': {'type': {'const': 'ws'}}, 'required': ['type']},
                                     {'type': 'string', 'pattern': '(a|b)+c'}, {'type': 'integer'}]},
                          [{'page_id': 'a'}, {'page_id': 'a', 'type': 'ws'}, {'type': 'ws'}, {'type': 'page', 'id': 'x'},
                           {'type': 'page', 'id': 'x', 'page_id': 'y'}, {'type': 'other'}, {}, 'abc', 'x', 1, 1.0, 1.5, True]),
    'refs naming each other': ({'type': 'array', 'items': {'$ref': '#/$defs/A'}}, [[1], [], 'x']),
}

def _quick_tool(s) -> dict:
    return {'name': 't', 'inputSchema': {'type': 'object', '$defs': DEFS, 'required': ['r'], 'properties': {'r': {'type': 'integer'}, 'v': s}}}

@pytest.mark.parametrize('case', QUICK_CASES)
def test_new_quick_tests_answer_valid_first_calls_and_agree_with_the_validator(case):
    "A valid call is answered by the quick tests (no validator compiled), a bad one refused, first and once the tool has its code"
    from funccall.core._jsonschema import compile_schema  # (the checked way's judge)
    s, values = QUICK_CASES[case]
    tool = _quick_tool(s)
    quick = inverse._quick(s, 0, tool['inputSchema'])[0]
    for v in values:
        valid = compile_schema(tool['inputSchema']).is_valid({'r': 1, 'v': v})
        fresh = mk_tool(disp, tool)
        assert valid or not quick(v), v
        if valid:  # the validator is compiled just when the quick test can't say yes (a branch without one: 'abc')
            assert fresh(1, v=v) == {'r': 1, 'v': v} and (_checked(fresh).validator is None) == quick(v), v
        else:
            with pytest.raises(ToolInputError): fresh(1, v=v)
        warm = mk_tool(disp, tool)
        for _ in range(inverse._HOT + 1): warm(1)
        if valid: assert warm(1, v=v) == {'r': 1, 'v': v}, v  # the tool's own code
        else:
            with pytest.raises(ToolInputError): warm(1, v=v)

@pytest.mark.corpus  # every property of the whole corpus: CI runs it
@pytest.mark.filterwarnings('ignore')  # (corpus schemas the validators say they read in part)
def test_quick_tests_never_pass_what_the_corpus_schemas_refuse():
    "Every corpus property with a quick test: a value it passes is one `jsonschema` accepts (a quick test may only say yes surely)"
    import jsonschema
    from corpus import load_corpus
    from funccall.core._jsonschema import compile_schema
    odd = [None, 0, 1, 1.5, -1, '', 'x', 'page', True, [], ['x'], [1], {}, {'type': 'page'}, {'x': 1}, {'a': None}, [{}]]
    tested = 0
    for _, t in load_corpus():
        root = t['inputSchema']
        try: check = jsonschema.validators.validator_for(root)(root)
        except Exception: continue  # noqa: BLE001 - a schema jsonschema can't read: nothing to compare with
        for k, ps in (root.get('properties') or {}).items():
            if (q := inverse._quick(ps, 0, root)) is None: continue
            for v in [*odd, *(x for x in (ps.get('enum') or [])[:2] if isinstance(ps, dict)), *([ps['default']] if isinstance(ps, dict) and 'default' in ps else [])]:
                if q[0](v):
                    tested += 1
                    # the root with what it says of its properties alone (their refs may point anywhere in it), none required
                    sub = {d: root[d] for d in ('$defs', 'definitions', '$schema', 'properties', 'type', '$id') if d in root}
                    assert check.evolve(schema=sub).is_valid({k: v}), (t['name'], k, v)
                    assert compile_schema(sub).is_valid({k: v}), (t['name'], k, v)  # and funccall's own validator
    assert tested > 5000

def test_an_optional_arguments_quick_test_is_made_when_it_is_first_given():
    fn = mk_tool(disp, TOOL)
    assert fn(q='x', n=2) == {'q': 'x', 'n': 2}
    c = _checked(fn)
    assert all(ts is inverse._LATER for ts in c.types[2:]) and c.validator is None  # left out: nothing made for them
    assert fn(q='x', n=2, sort='asc') == {'q': 'x', 'n': 2, 'sort': 'asc'} and c.validator is None
    assert c.types[c.parts.origs.index('sort')] is not inverse._LATER
    with pytest.raises(ToolInputError, match=r"argument 'tags\[0\]'"): fn(q='x', n=2, tags=[1])

def test_an_object_that_is_no_json_value_is_never_sent_for_an_optional_argument():
    "(`_UNSET`, what the loop of quick tests lets through for an argument not given, has a type of its own)"
    fn = mk_tool(disp, TOOL)
    for _ in range(inverse._HOT + 1):
        with pytest.raises(ToolInputError, match="argument 'sort'"): fn(q='x', n=2, sort=object())

def test_problems_text_writes_each_problem_as_its_own_text():
    "(`problems_text` writes `Problem.__str__` out inline: every line must still read as the problem's own text)"
    ps = [Problem('a', 'expected an integer, got 1.5'), Problem('', "unexpected key 'c'"), Problem('b[1]', 'missing (required)')]
    for n in (2, 3, 10, 11, 12):
        for more in (False, True):
            given = (ps * 5)[:n]
            lines = problems_text('t', given, more).splitlines()
            assert lines[1:1 + min(n, MAX_SHOWN)] == [f'- {p}' for p in given[:MAX_SHOWN]]

@pytest.mark.parametrize('hot', [False, True])
def test_a_call_holding_values_that_are_no_json_sends_their_json_and_refuses_alike(hot):
    "(the checked way asks `is_json` of the whole call once: a value that isn't JSON, among ones that are, is still converted)"
    sent = []
    fn = mk_tool(lambda name, /, **kw: sent.append(kw), TOOL)
    if hot:
        for _ in range(inverse._HOT + 1): fn(q='x', n=2)
    fn(q='x', n=2, tags=('a', 'b'), point={'x': 1.5}, sort='asc')
    assert sent[-1] == {'q': 'x', 'n': 2, 'tags': ['a', 'b'], 'point': {'x': 1.5}, 'sort': 'asc'} and type(sent[-1]['tags']) is list
    for tags in (('a', 1), ['a', 1]):  # a tuple is refused as its list is
        with pytest.raises(ToolInputError) as e: fn(q='x', n=0, tags=tags, point={'y': 1})
        assert str(e.value) == ("Tool 'find' got 3 bad arguments:\n- n: expected an integer >= 1, got 0\n"
                                "- tags[1]: expected a string, got 1\n- point: missing required key 'x'")

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
def test_a_hot_tools_refusals_and_errors_carry_no_internal_exception(is_async):
    """Its own code's tests leave by an internal exception to the checked way: what that way raises (a refusal, or the
    dispatcher's own error) must not carry it as its context, which a user's traceback would show"""
    def boom(name, /, **kw):
        if kw.get('sort') == 'desc': raise ValueError('the dispatcher failed')
        return kw
    async def aboom(name, /, **kw): return boom(name, **kw)
    fn = mk_tool(aboom if is_async else boom, TOOL)
    def call(**kw): return asyncio.run(fn(**kw)) if is_async else fn(**kw)
    for _ in range(inverse._HOT + 1): call(q='x', n=1)
    assert _own_code(fn)  # its own code
    with pytest.raises(ToolInputError) as e: call(q='x', n=0)
    assert e.value.__context__ is None and e.value.__cause__ is None
    with pytest.raises(ValueError, match='the dispatcher failed') as e: call(q='x', n=1, sort='desc', extra=1)  # (the checked way)
    assert e.value.__context__ is None

def test_has_self_answers_as_resolving_self_would():
    "`has_self` (asked of every annotation a schema reads) walks without rebuilding: it says True exactly where `resolve_self` replaces"
    import typing
    import typing_extensions
    from typing import Annotated, Callable, Literal, Optional, Union
    from funccall.core._types import has_self, resolve_self
    class C: pass
    S, E = typing.Self, typing_extensions.Self
    cases = [int, C, list, list[int], dict[str, list[int]], Optional[float], Union[int, str], int | None, tuple[int, ...], Literal['Self', 1],
             Annotated[int, 'Self'], Annotated[list[S], 'x'], S, E, list[S], dict[str, E], Optional[S], S | None, tuple[int, S],
             Callable[[S], int], Callable[..., list[E]], Annotated[int, S], list[Annotated[S, 'x']], typing.Any, None, 'Self', typing.List[S]]
    for t in cases: assert has_self(t) == (resolve_self(t, C) is not t), t
    assert [has_self(t) for t in (S, E, list[S], Annotated[int, S], Literal['Self'])] == [True, True, True, False, False]

def test_the_first_calls_choose_how_a_tool_takes_its_optional_arguments(monkeypatch):
    "A tool whose first calls gave an optional argument keeps a parameter for each; one whose first calls gave none takes them in **extra"
    monkeypatch.setattr(inverse, '_NAMED_MAX', 0)
    given, alone = mk_tool(disp, TOOL), mk_tool(disp, TOOL)
    for i in range(inverse._HOT + 1):
        assert given(q='x', n=1, **({'sort': 'asc'} if i == 1 else {})) == {'q': 'x', 'n': 1, **({'sort': 'asc'} if i == 1 else {})}
        assert alone(q='x', n=1) == {'q': 'x', 'n': 1}
    assert given.__code__.co_varnames[:6] == ('q', 'n', *OPTIONAL) and alone.__code__.co_varnames[:3] == ('q', 'n', 'extra')
    for fn in (given, alone):  # either way, the same answers
        assert fn(q='x', n=2, tags=['a'], since='2024-01-01T00:00:00Z') == {'q': 'x', 'n': 2, 'tags': ['a'], 'since': '2024-01-01T00:00:00Z'}
        with pytest.raises(ToolInputError, match="argument 'sort'"): fn(q='x', n=2, sort='up')

# names that are the templates' own (`extra`, `a0`, `x1`, `_P0`, `_K1`, its globals), keywords, no identifiers, one case apart
_NAMES = ['extra', '_extra', '_P0', '_K1', 'a0', 'a1', 'x1', 'k2', 'self', 'class', 'approval-policy', 'Sort', 'sort', '_F',
          '_disp', '_keyed', '_tuple', '_slow_args', '_name', '_c0', 'kw', 'q', 'None', 'print']
_SCHEMAS = [{'type': 'string'}, {'type': 'integer', 'minimum': 1}, {'type': 'array', 'items': {'type': 'string'}}, {'enum': ['a', 'b']}, True,
            {'type': 'object', 'properties': {'x': {'type': 'number'}}, 'required': ['x']}, {'type': ['string', 'null']},
            {'type': 'string', 'format': 'date-time'}, {'type': 'number'}, {'anyOf': [{'type': 'string'}, {'type': 'integer'}]},
            {'type': 'string', 'pattern': '^a'}]

class _Weird:
    "A value that is no JSON, whose comparisons and truth raise"
    def __eq__(self, other): raise ValueError('eq')
    def __bool__(self): raise ValueError('bool')
    def __hash__(self): return 1
    def __repr__(self): return '_Weird()'

_VALUES = st.sampled_from(['a', 'b', 3, 0, 1.5, float('nan'), True, None, ['a'], [1], ('a',), {'a'}, {'x': 1.0}, {'y': 1},
                           '2024-01-01T00:00:00Z', _Weird(), b'x', 10 ** 30])

def _outcome(fn, kw: dict, is_async: bool):
    "What a call gives: its result (the arguments the dispatcher got, in their order) or its refusal's text"
    try: return 'ok', repr(asyncio.run(fn(**kw)) if is_async else fn(**kw))
    except (ToolInputError, TypeError) as e: return type(e).__name__, str(e)

@st.composite
def _tools_and_calls(draw):
    names = draw(st.lists(st.sampled_from(_NAMES), unique=True, max_size=8))
    props = {nm: draw(st.sampled_from(_SCHEMAS)) for nm in names}
    schema = {'type': 'object', 'properties': props, 'required': draw(st.lists(st.sampled_from(names), unique=True)) if names else []}
    if draw(st.booleans()): schema['additionalProperties'] = False
    parts = inverse._parts({'name': 't', 'inputSchema': schema})
    def call():  # some of the arguments, each by its parameter's name or its property's, in any order, and maybe a key no one has
        keys = draw(st.lists(st.sampled_from(range(len(parts.pynms))), unique=True)) if parts.pynms else []
        kw = {(parts.pynms[i] if draw(st.integers(0, 5)) else parts.origs[i]): draw(_VALUES) for i in keys}
        if draw(st.integers(0, 9)) == 0: kw['nope'] = 1
        return kw
    warm = [call() if draw(st.booleans()) else {} for _ in range(inverse._HOT + 1)]
    return schema, draw(st.booleans()), draw(st.sampled_from([0, 3, 99])), warm, [call() for _ in range(8)]

@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_tools_and_calls(), st.booleans())
def test_a_hot_tool_answers_every_call_as_a_cold_one(case, is_async):
    """Whatever its property names, whichever way its first calls chose (a parameter per optional argument, or **extra and
    code per set of keys), a tool called often gives every call what a fresh tool's first call gives: the same arguments
    sent in the same order, the same refusal"""
    schema, check, named, warm, calls = case
    def disp(name, /, **kw): return list(kw.items())
    async def adisp(name, /, **kw): return list(kw.items())
    tool, d = {'name': 't', 'inputSchema': schema}, adisp if is_async else disp
    old = inverse._NAMED_MAX
    inverse._NAMED_MAX = named
    try:
        hot = mk_tool(d, tool, check=check)
        for kw in warm: _outcome(hot, kw, is_async)
        assert _own_code(hot) or check and not inverse._root_is_quick(schema)
        for kw in calls: assert _outcome(hot, dict(kw), is_async) == _outcome(mk_tool(d, tool, check=check), dict(kw), is_async), kw
    finally: inverse._NAMED_MAX = old
