"""Search and schemas under attack: a server's schema holds a catastrophic pattern, a model nests its arguments deep.

Each test makes the attack and asserts its effect did not happen: no argument check runs long (measured in CPU time,
with a generous margin for a loaded machine, and printed), no RecursionError escapes, and what can be checked still is.
"""
import json, random, re, threading, time, warnings

import pytest

from funccall import ToolInputError, Toolbox, mk_tool, run_tool_calls
from funccall.core._jsonschema import compile_schema
from funccall.core._regex import STEPS, Automaton
from funccall.toolsets.search import deferred

try: from re import _parser as _sre
except ImportError: import sre_parse as _sre  # Python 3.10

LIMIT = 1.0  # seconds of CPU a check may take here; the promise is 100 ms, the margin is for a loaded 2-core machine

def disp(tool, /, **kw): return kw

def mcp_tool(prop: dict) -> dict:
    return {'name': 't', 'description': 'A tool', 'inputSchema': {'type': 'object', 'properties': {'s': prop}, 'required': ['s']}}

def checked(fn, s: str) -> tuple[bool, float]:
    "Whether the built tool took `s` (False: a ToolInputError), and the CPU seconds the call took"
    t = time.process_time()
    try: fn(s=s); ok = True
    except ToolInputError: ok = False
    return ok, time.process_time() - t

# OWASP's ReDoS list and its kin, each with hostile strings that don't match (30 to 5,000 characters)
EVIL = [
    (r'^(a+)+$', 'a'), (r'([a-zA-Z]+)*$', 'a'), (r'(a|aa)+$', 'a'), (r'(a|a?)+$', 'a'), (r'(.*a){12}$', 'a'),
    (r'^(a?){28}a{28}$', 'a'), ('^' + 'a?' * 28 + 'a' * 28 + '$', 'a'), (r'^(a{0,30}){30}b$', 'a'), ('^' + 'a{0,30}' * 10 + 'b$', 'a'),
    (r'(x+x+)+y', 'x'), (r'^(([a-z])+.)+[A-Z]([a-z])+$', 'a'), (r'^(\w+\s?)*$', 'a'), (r'^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$', 'a'),
    (r'^(\d+)+$', '1'), (r'(\d|\d\d)+z', '1'), (r'\s+$', ' '), (r'^(a|b|ab|ba)*c$', 'ab'), (r'(\w|\d)+!', '1'),
    (r'^([a-z0-9]+([-.][a-z0-9]+)*)+$', 'a-'), (r'a.*b.*c.*d.*e', 'abcd'),
]

@pytest.mark.parametrize('pattern,unit', EVIL, ids=[p[:24] for p, _ in EVIL])
def test_no_argument_check_runs_long_whatever_the_pattern(pattern, unit):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        fn = mk_tool(disp, mcp_tool({'type': 'string', 'pattern': pattern}))
    worst = 0.0
    for n in (30, 300, 5000):
        ok, took = checked(fn, (unit * n)[:n] + '!')
        worst = max(worst, took)
        assert took < LIMIT, f'{pattern!r} on {n} characters took {took:.2f}s'
    print(f'{pattern[:40]!r}: worst {worst * 1000:.1f} ms')

def test_the_pattern_the_issue_found_is_enforced_fast():
    "`^(a?){28}a{28}$` took over 5 s on 28 characters and was never checked; now it is checked, in milliseconds"
    fn = mk_tool(disp, mcp_tool({'type': 'string', 'pattern': r'^(a?){28}a{28}$'}))
    assert checked(fn, 'a' * 28)[0] and checked(fn, 'a' * 56)[0]
    for s in ('a' * 27, 'a' * 57, 'a' * 28 + '!', 'a' * 5000):
        ok, took = checked(fn, s)
        assert not ok and took < LIMIT, (len(s), took)

@pytest.mark.parametrize('pattern,good,bad', [
    (r'^(a+)+$', 'a' * 5000, 'a' * 5000 + '!'),
    (r'(a|aa)+$', 'b' + 'a' * 3000, 'a' * 3000 + 'b'),
    (r'^(\w+\s?)*$', 'word ' * 1000, 'word ' * 1000 + '!'),
    (r'^([a-z0-9]+([-.][a-z0-9]+)*)+$', 'a-b.' * 1000 + 'c', 'a-b.' * 1000 + '-'),
    (r'\s+$', 'x' + ' ' * 10_000, ' ' * 10_000 + 'x'),
])
def test_catastrophic_patterns_are_still_enforced_on_long_strings(pattern, good, bad):
    "The automaton answers where `re` can't be trusted to: the check is made, not skipped"
    fn = mk_tool(disp, mcp_tool({'type': 'string', 'pattern': pattern}))
    assert checked(fn, good) == (True, pytest.approx(0, abs=LIMIT))
    assert checked(fn, bad) == (False, pytest.approx(0, abs=LIMIT))

@pytest.mark.parametrize('pattern,good,bad', [
    (r'^[a-z]+$', 'abc' * 100_000, 'abc' * 100_000 + '1'),
    (r'^\d{3}-\d{4}$', '555-1234', '555-12345'),
    (r'^[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*$', 'my-nice-slug', 'my--slug'),
    (r'^[^@\s]+@[^@\s]+\.[a-z]{2,}$', 'ada@example.org', 'ada@example'),
    (r'^#[0-9A-Fa-f]{6}$', '#C0FFEE', '#C0FFEG'),
    (r'\bcat\b', 'the cat sat', 'concatenate'),
])
def test_safe_patterns_are_still_enforced(pattern, good, bad):
    fn = mk_tool(disp, mcp_tool({'type': 'string', 'pattern': pattern}))
    assert checked(fn, good)[0] and not checked(fn, bad)[0]

def test_hostile_keys_against_pattern_properties():
    s = {'type': 'object', 'patternProperties': {r'^(a+)+$': {'type': 'integer'}}, 'additionalProperties': False}
    v = compile_schema(s)
    t = time.process_time()
    assert not v.is_valid({'a' * 5000 + '!': 1}) and v.problems({'a' * 5000 + '!': 1})
    assert v.is_valid({'a' * 5000: 1})
    assert time.process_time() - t < LIMIT

def test_a_string_too_long_for_the_automaton_is_let_through_not_searched():
    "Past `STEPS` characters a catastrophic pattern gives up (documented) rather than run long"
    v = compile_schema({'type': 'string', 'pattern': r'^(a+)+$'})
    t = time.process_time()
    assert v.is_valid('a' * (STEPS + 10) + '!')
    assert time.process_time() - t < LIMIT

# --- the automaton answers as `re` does -----------------------------------------------------------------------

_ATOMS = ['a', 'b', '.', '[ab]', '[^a]', r'\d', r'\w', r'\s', r'\b', r'\B', '^', r'\Z', '(?i:A)', 'x', '(?s:.)', r'[^\W\d_]', r'\n']

def _pattern(rnd, d=0) -> str:
    r = rnd.random()
    if d > 3 or r < 0.35: return rnd.choice(_ATOMS)
    if r < 0.55: return _pattern(rnd, d + 1) + _pattern(rnd, d + 1)
    if r < 0.7: return f'({_pattern(rnd, d + 1)}|{_pattern(rnd, d + 1)})'
    return f"(?:{_pattern(rnd, d + 1)}){rnd.choice(['*', '+', '?', '{2}', '{1,3}', '{0,2}', '*?', '+?', '{2,}'])}"

def test_the_automaton_agrees_with_re():
    "Drawn patterns (anchors, word boundaries, classes, flags, nested repeats) and strings: the same yes or no"
    rnd, n = random.Random(27), 0
    for _ in range(600):
        p = ('(?i)' if rnd.random() < 0.1 else '') + _pattern(rnd)
        try: rx, auto = re.compile(p), Automaton.of(_sre.parse(p))
        except re.error: continue
        assert auto is not None, p
        for _ in range(12):
            s = ''.join(rnd.choice('ab1 xA_\n') for _ in range(rnd.randint(0, 8)))
            assert auto.search(s) == (rx.search(s) is not None), (p, s)
            n += 1
    assert n > 5000

def test_what_no_automaton_can_do_is_left_to_re_or_unchecked():
    for p in (r'(a)\1', r'(?=a)a', r'(?<=a)b', r'(?>a+)b', r'a++b'):
        try: parsed = _sre.parse(p)
        except re.error: continue  # (atomic groups and possessive repeats: Python 3.11 on)
        assert Automaton.of(parsed) is None, p

# --- depth: no RecursionError from any nested input ---------------------------------------------------------------

def _deep(n: int):
    v = []
    for _ in range(n): v = [v]
    return v

def _search_box():
    def add(a: int, b: int) -> int:
        "Add two numbers"
        return a + b
    def send_email(to: str, body: str) -> str:
        "Send an email"
        return 'sent'
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return Toolbox([add, send_email])

def _call(args) -> dict:
    return {'type': 'tool_search_call', 'execution': 'client', 'call_id': 'c', 'arguments': args}

looped = []
looped.append(looped)

@pytest.mark.parametrize('args', [
    '[' * 100_000 + ']' * 100_000, '{"query": ' + '[' * 900 + ']' * 900 + '}', {'query': _deep(100_000)},
    {'paths': [_deep(100_000)]}, {'x': _deep(100_000)}, _deep(100_000), looped, {'paths': [[0] * 1000] * 1000},
], ids=['json-text', 'json-900', 'query', 'paths', 'other-key', 'bare', 'self-holding', 'wide'])
def test_a_deeply_nested_client_search_is_its_own_error(args):
    "That search finds nothing and says it is incomplete; the searches beside it in the same turn are answered"
    box = deferred(_search_box(), search='client')
    out = box.answer_items([_call(args), _call('{"query": "send an email"}')])
    assert out[0]['status'] == 'incomplete' and out[0]['tools'] == []
    assert out[1]['status'] == 'completed' and [t['name'] for t in out[1]['tools']][:1] == ['send_email']
    assert box.loaded == ['send_email', *[nm for nm in box.loaded if nm != 'send_email']]

def test_deep_search_tools_arguments_are_the_models_error():
    box = deferred(_search_box())
    r = box.call('search_tools', {'query': _deep(100_000)}, call_id='c1')
    assert r.status == 'failure' and r.failure == 'arguments' and 'expected a string' in r.error
    deep_text = '{"query": ' + '[' * 100_000 + ']' * 100_000 + '}'
    msg = {'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': 'c1', 'type': 'function', 'function': {'name': 'search_tools', 'arguments': deep_text}},
        {'id': 'c2', 'type': 'function', 'function': {'name': 'search_tools', 'arguments': json.dumps({'query': 'add numbers'})}}]}
    res = run_tool_calls(box, msg).results
    assert [r.status for r in res] == ['failure', 'success'] and 'nested too deeply' in res[0].error

def test_the_validator_on_a_hostile_deep_value():
    v = compile_schema({'$defs': {'n': {'type': 'array', 'items': {'$ref': '#/$defs/n'}}}, '$ref': '#/$defs/n'})
    deep = _deep(100_000)
    assert not v.is_valid(deep) and 'nested too deeply' in v.problems(deep)[0].message
    assert compile_schema({'type': 'array', 'uniqueItems': True}).problems([deep, deep])

def test_the_automaton_cache_stays_bounded():
    "Strings of ever new characters through one pattern: the cached steps and states are dropped at their caps"
    from funccall.core import _regex
    auto = Automaton.of(_sre.parse(r'^(\w|\d)+(x|xy)*!'))
    for i in range(40):
        auto.search(''.join(chr(0x4e00 + i * 1000 + k) for k in range(1000)) + '?')
        assert len(auto.known) <= _regex._MAX_KNOWN and auto.held <= _regex._MAX_HELD + len(auto.prog)

# --- second review: many strings, many patterns, patterns built against the automaton ------------------------------

def _cjk(n: int, start: int = 0) -> str:
    "`n` characters never seen before in this test: each automaton step is a new one (no cached step helps)"
    return ''.join(chr(0x4e00 + (start + k) % 20_000) for k in range(n))

def _array_tool(item: dict):
    return mk_tool(disp, mcp_tool({'type': 'array', 'items': item}))

def test_many_strings_in_one_argument_share_one_budget():
    "200 strings of 5,000 new characters each through a catastrophic pattern took 2 s, 11 ms each; now the whole argument is bounded"
    fn = _array_tool({'type': 'string', 'pattern': r'([^!]|a)+!'})
    strings = [_cjk(5000, i * 5000) + '!' for i in range(200)]
    t = time.process_time()
    fn(s=strings)
    took = time.process_time() - t
    print(f'200 strings: {took * 1000:.0f} ms')
    assert took < LIMIT
    with pytest.raises(ToolInputError, match="pattern"): fn(s=[_cjk(1000)] + strings)  # the first string is still checked

def test_the_budget_covers_the_report_and_the_retries_too():
    """Strings that fail a branch each (anyOf), beside 50 required keys sent null, which the call retries one at a time
    (52 checks of the whole argument): still one budget for the call"""
    item = {'anyOf': [{'type': 'string', 'pattern': r'([^!]|a)+!'}, {'type': 'string'}]}
    nulls = {'type': 'object', 'properties': {f'k{i}': {'type': 'integer'} for i in range(50)}, 'required': [f'k{i}' for i in range(50)]}
    schema = {'type': 'object', 'properties': {'s': {'type': 'array', 'items': item}, 'o': nulls}, 'required': ['s']}
    fn = mk_tool(disp, {'name': 't', 'description': 'A tool', 'inputSchema': schema})
    strings = [_cjk(3000, i * 3000) for i in range(100)]
    t = time.process_time()
    with pytest.raises(ToolInputError, match='got null'): fn(s=strings, o={f'k{i}': None for i in range(50)})
    took = time.process_time() - t
    print(f'52 checks: {took * 1000:.0f} ms')
    assert took < LIMIT
    v = compile_schema(schema)
    t = time.process_time()
    assert v.problems({'s': strings + [None]})  # is_valid, then the walk that reports: one budget
    assert time.process_time() - t < LIMIT

def test_one_string_against_many_patterns_is_bounded():
    "allOf of 150 distinct catastrophic patterns on one 20,000-character string: 150 automaton searches took 2.5 s"
    pats = [{'pattern': f'([^!]|a{{{k}}})+!'} for k in range(1, 151)]
    fn = mk_tool(disp, mcp_tool({'type': 'string', 'allOf': pats}))
    ok, took = checked(fn, _cjk(20_000) + '!')
    print(f'150 patterns: {took * 1000:.0f} ms')
    assert ok and took < LIMIT

def test_pattern_properties_keys_share_the_budget():
    s = {'type': 'object', 'patternProperties': {r'([^!]|a)+!': {'type': 'integer'}}}
    v = compile_schema(s)
    keys = {_cjk(4000, i * 4000) + '!': 1 for i in range(150)}
    t = time.process_time()
    assert v.is_valid(keys)
    assert time.process_time() - t < LIMIT

def _nested(levels: int, leaf: dict) -> dict:
    "A schema of `levels` objects, one inside the other, around `leaf`"
    s = leaf
    for _ in range(levels): s = {'type': 'object', 'properties': {'a': s}}
    return s

def _at_depth(levels: int, v):
    "`v` inside `levels` objects, each under key 'a'"
    for _ in range(levels): v = {'a': v}
    return v

@pytest.mark.parametrize('lazy', [False, True])
@pytest.mark.parametrize('first', ['is_valid', 'problems'])
def test_a_costly_pattern_compiled_on_first_use_shares_the_budget(lazy, first):
    """The budget is opened only for schemas with a pattern that draws on it (most have none): one 50 levels deep, which
    compiles on first use (or a lazy validator's), still has one budget for all of a check's strings"""
    strings = [_cjk(4000, i * 4000) + '!' for i in range(300)]
    s = _nested(50, {'type': 'array', 'items': {'type': 'string', 'pattern': r'([^!]|a)+!'}})
    v = compile_schema(s, lazy=lazy)
    value = _at_depth(50, strings + [5])
    for check in [v.is_valid] * (first == 'is_valid') + [v.problems, v.is_valid]:
        t = time.process_time()
        got = check(value)
        assert got is False or [p.path for p in got] == ['a.' * 49 + 'a[300]']
        took = time.process_time() - t
        print(f'{first}, lazy={lazy}: {took * 1000:.0f} ms')
        assert took < LIMIT

def test_a_costly_pattern_behind_a_ref_shares_the_budget():
    "A pattern reached through `$ref` (the tool's argument checked alone by the validator): one budget for the argument"
    s = {'type': 'object', '$defs': {'s': {'type': 'string', 'pattern': r'([^!]|a)+!'}},
         'properties': {'s': {'type': 'array', 'items': {'$ref': '#/$defs/s'}}}, 'required': ['s']}
    fn = mk_tool(disp, {'name': 't', 'description': 'A tool', 'inputSchema': s})
    strings = [_cjk(4000, i * 4000) + '!' for i in range(150)]
    for _ in range(3):  # the first call, and the tool's own code after
        t = time.process_time()
        fn(s=strings)
        assert time.process_time() - t < LIMIT

def test_nan_is_within_no_bound_on_every_path():
    "NaN fails every comparison: each bound is written so that failing it refuses, in the generated check, its report and the tree"
    for kw, good in (({'minimum': 0}, 5.0), ({'maximum': 0}, -1.0), ({'exclusiveMinimum': 0}, 5.0), ({'exclusiveMaximum': 0}, -1.0),
                     ({'multipleOf': 0.5}, 1.5), ({'minimum': 0, 'maximum': 10}, 5.0)):
        s = {'type': 'object', 'properties': {'n': {'type': 'number', **kw}, 'o': {'anyOf': [{'type': 'number', **kw}, {'type': 'null'}]}}}
        v = compile_schema(s)
        for key in ('n', 'o'):
            for _ in range(3):  # the walk's report, then the generated one
                assert not v.is_valid({key: float('nan')}), (kw, key)
                assert [p.path for p in v.problems({key: float('nan')})] == [key], (kw, key)
            assert not v._root().ok({key: float('nan')}), (kw, key)
            assert v.is_valid({key: good}) and not v.problems({key: good}), (kw, key)

def _builds(pattern: str) -> float:
    "The CPU seconds compiling `pattern` into a schema check takes, run in a thread so a hang fails the test, not the run"
    took = []
    def build():
        t = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            compile_schema({'type': 'string', 'pattern': pattern}).is_valid('a' * 50 + '!')
        took.append(time.process_time() - t)
    th = threading.Thread(target=build, daemon=True)
    th.start(); th.join(60)
    assert took, f'compiling {pattern[:40]!r} did not end'
    return took[0]

@pytest.mark.parametrize('pattern', [
    r'(?:){4000000000}(a+)+$', r'(?:|){4000000000}(a+)+$', r'(?:\b){4000000000}(a+)+$', r'(?:a{0}){4000000}(a+)+$',
    '(?:' + 'a+' * 9000 + ')*$', '(?:' + 'a+a' * 6000 + ')*$', '(?:' + '|'.join(f'a{i}' for i in range(3000)) + ')+$',
    '(?:' + ('[' + ''.join(f'{chr(0x100 + 2 * i)}-{chr(0x101 + 2 * i)}' for i in range(200)) + ']+') * 20 + ')*$',
    r'(?:(?:(?:a{1,9}){1,9}){1,9}){1,9}$', r'(?:a{1000}){1000}$', '(' * 90 + 'a+' + ')*' * 90 + '$',
], ids=['empty-4e9', 'empty-branch-4e9', 'boundary-4e9', 'a{0}-4e6', 'a+x9000', 'a+a-x6000', 'branches-3000',
        'classes-200-ranges', 'nested-counted', 'a{1000}{1000}', 'deep-groups'])
def test_a_pattern_built_against_the_automaton_compiles_in_bounded_time(pattern):
    "An empty body repeated 4 billion times hung the automaton's construction; thousands of repeats were quadratic (3 s for 8 KB)"
    took = _builds(pattern)
    print(f'{pattern[:30]!r} ({len(pattern)} chars): {took * 1000:.0f} ms')
    assert took < 2 * LIMIT

@pytest.mark.parametrize('pattern,s', [(r'(?a)\bx', 'éx'), (r'(?a)x\b', 'xé'), (r'(?a)\Bx', 'éx'), (r'(?a:\b)x', 'éx'),
                                       (r'(?a)\b\w', 'é'), (r'\bx', 'éx'), (r'(?i)\bk', 'éK')])
def test_word_boundaries_read_words_as_re_does(pattern, s):
    "Under the ASCII flag `é` is no word character for `\\b`: the automaton took it for one and disagreed with `re`"
    auto = Automaton.of(_sre.parse(pattern))
    assert auto is None or auto.search(s) == (re.search(pattern, s) is not None)

def test_the_automaton_agrees_with_re_on_unicode_and_flags():
    "Drawn again, with Unicode strings (case folding, digits of other scripts, the Kelvin sign) and global flags"
    rnd, n = random.Random(5), 0
    atoms = _ATOMS + ['é', 'ſ', 'K', '(?i:k)', '(?i:s)', r'\W', r'\D', '[^\\W]', '(?:)', '(|a)', '(a|)', 'a{0}', '(?a:\\w)', r'\A']
    for _ in range(400):
        p = rnd.choice(['', '(?i)', '(?a)', '(?s)', '(?ai)']) + ''.join(f'(?:{rnd.choice(atoms)})' + rnd.choice(['', '*', '+?', '{0,2}']) for _ in range(4))
        rx, auto = re.compile(p), Automaton.of(_sre.parse(p))
        assert auto is not None, p
        for _ in range(10):
            s = ''.join(rnd.choice('ab1 xA_\néſKkSsİı٣\u212a') for _ in range(rnd.randint(0, 7)))
            assert auto.search(s) == (rx.search(s) is not None), (p, s)
            n += 1
    assert n == 4000

@pytest.mark.parametrize('pattern', [r'(?:(?:\s\w){60}){1,100}c$', r'(?:(?:(?:\s\w){3}){20}){1,12}c$',
                                     r'(?=(?:(?:\s\w){60}){100})c', r'(?!(?:(?:\s\w){60}){100}c)x', r'(?<=(?:\s\w){60})c'])
def test_a_counted_repeat_that_walks_far_at_each_start_is_not_taken_for_linear(pattern):
    """Found by drawing patterns: its ways don't grow with the string, so its bound was called linear and `re` searched any
    length, but each start walks up to 12,000 characters (forward, or looking ahead) first: 3.7 s and 9.9 s on 30,000
    characters. The lookbehind is linear, 120 characters a start: 1 s on 400,000, now within the check's budget"""
    fn = mk_tool(disp, mcp_tool({'type': 'string', 'pattern': pattern}))
    for n in (3000, 30_000, 400_000):
        ok, took = checked(fn, (' a' * n)[:n])
        assert took < LIMIT, (n, took)
    if pattern.endswith('c$'): assert not checked(fn, ' a' * 60)[0] and checked(fn, ' a' * 60 + 'c')[0]  # still enforced
