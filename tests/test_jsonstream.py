"""The incremental JSON reader: it agrees with `json.loads` on every text however the text is cut (values and
failures alike), shows only finished members (and the string being read) while a value is unfinished, and costs
time linear in the text and memory bounded by the value whatever the piece sizes."""
import json, time, tracemalloc

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from funccall.core._jsonstream import MAX_DEPTH, JsonStream

def read(pieces) -> JsonStream:
    r = JsonStream()
    for p in pieces: r.feed(p)
    r.close()
    return r

def cut(text: str, cuts) -> list[str]:
    cuts = sorted({c for c in cuts if 0 < c < len(text)})
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
values = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4), max_leaves=25)

@settings(max_examples=examples(300), deadline=None)
@given(v=values, ascii=st.booleans(), indent=st.sampled_from([None, 0, 2]), data=st.data())
def test_any_value_cut_anywhere_reads_as_json_loads_reads_it(v, ascii, indent, data):
    text = json.dumps(v, ensure_ascii=ascii, indent=indent)
    pieces = list(text) if data.draw(st.booleans()) else cut(text, data.draw(st.lists(st.integers(0, len(text)), max_size=15)))
    r = read(pieces)
    assert r.done and r.error is None
    assert json.dumps(r.value) == json.dumps(json.loads(text))  # exact: types, key order, float values

@pytest.mark.parametrize('text', ['[-Infinity, NaN, Infinity, -0, 1e5, -2.5E-3, "\\ud83d\\ude00\\ud83d", 12345678901234567890]', '  -12 ', '"x"'])
def test_what_json_loads_also_reads_cut_at_every_place(text):
    for k in range(len(text) + 1):
        assert repr(read([text[:k], text[k:]]).value) == repr(json.loads(text)), k

def _mutations(text: str):
    return st.one_of(st.builds(lambda i: text[:i] + text[i + 1:], st.integers(0, max(0, len(text) - 1))),
                     st.builds(lambda i, c: text[:i] + c + text[i:], st.integers(0, len(text)), st.sampled_from(list('{}[]",:\\ 0-eE.tnu\x01'))))

@settings(max_examples=examples(400), deadline=None)
@given(data=st.data(), v=values)
def test_broken_text_fails_exactly_where_json_loads_fails(data, v):
    text = data.draw(_mutations(json.dumps(v)), label='text')
    try: expected, ok = json.loads(text), True
    except (ValueError, RecursionError): ok = False
    r = read(cut(text, data.draw(st.lists(st.integers(0, len(text)), max_size=8))))
    assert (r.done and r.error is None) == ok, (text, r.error)
    if ok: assert json.dumps(r.value) == json.dumps(expected)
    else: assert r.error

@pytest.mark.parametrize('pieces,shown', [
    (['{"a": 1'], {}),                                  # a number shows once it ends
    (['{"a": 1,'], {'a': 1}),
    (['{"a": "he', 'l'], {'a': 'hel'}),                 # the string being read, so far
    (['{"a": "x\\'], {'a': 'x'}),                       # not half an escape
    (['{"a": "\\ud83d'], {'a': ''}),                    # nor half a surrogate pair
    (['{"a": "\\ud83d\\ude00'], {'a': '\U0001F600'}),
    (['{"a": [1, {"b": tr'], {'a': [1, {}]}),           # containers as they open; a literal once whole
    (['{"a": [1, {"b": true}], "c'], {'a': [1, {'b': True}]}),  # a key only with its value begun
    (['{"a": [1, {"b": true}], "c": '], {'a': [1, {'b': True}]}),
    (['{"a": "x", "a": "y'], {'a': 'y'}),               # a repeated key: the last, as json.loads keeps
])
def test_partial_values(pieces, shown):
    r = JsonStream()
    for p in pieces: r.feed(p)
    assert r.value == shown and not r.done
    assert r.value == shown  # looking twice changes nothing

def test_the_partial_string_is_not_left_in_the_value():
    r = JsonStream()
    r.feed('["ab')
    assert r.value == ['ab']
    r.feed('c", 1')
    assert r.value == ['abc']
    r.feed(']')
    assert r.done and r.value == ['abc', 1]

def test_a_snapshot_is_not_changed_by_later_pieces():
    r, shots = JsonStream(), []
    for ch in '{"a": [1, {"b": ["x", "yz"]}], "c": "end"}':
        r.feed(ch)
        shots.append((r.snapshot(), json.dumps(r.value)))
    assert all(json.dumps(v) == text for v, text in shots)

@pytest.mark.parametrize('text,error', [
    ('{"a" 1}', "Expecting ':' delimiter"), ('[1,]', 'Expecting value'), ('{"a":tru}', 'no JSON literal'),
    ('{"a": 01}', 'Invalid number'), ('{"a": "\\x"}', 'Invalid escape'), ('"\x01"', 'Invalid control character'),
    ('{"a": 1', 'Unterminated JSON'), ('{"a": 1}x', 'Extra data'), ('[' * (MAX_DEPTH + 1), f'Nested more than {MAX_DEPTH} deep'),
])
def test_malformed_text_says_what_is_wrong(text, error):
    r = read(list(text))
    assert error in r.error

def test_nothing_is_read_after_an_error():
    r = JsonStream()
    r.feed('{"a": x')
    r.feed('"}')
    assert not r.done and r.error.startswith('Expecting value') and r.value == {}

def _cpu(n: int) -> float:
    text = json.dumps({'code': 'é\\"' * (n // 3), 'n': list(range(n // 50))})
    t = time.process_time()
    r = JsonStream()
    for ch in text: r.feed(ch)
    assert r.done and len(r.value['code']) == n // 3 * 3
    return time.process_time() - t

def test_time_is_linear_in_the_text_one_character_at_a_time():
    _cpu(2_000)  # warm
    small, big = _cpu(30_000), _cpu(300_000)
    assert big < 30 * max(small, 1e-3), (small, big)  # linear is 10x; re-reading each prefix would be 100x

def test_memory_is_bounded_by_the_value():
    n = 300_000
    tracemalloc.start()
    try:
        r = JsonStream()
        r.feed('{"s": "')
        for _ in range(n): r.feed('\u20ac')  # a character CPython doesn't cache: every piece is a new object
        peak = tracemalloc.get_traced_memory()[1]
    finally: tracemalloc.stop()
    assert len(r.value['s']) == n and peak < 30 * n, peak  # the value is 2 bytes a character; a list of the pieces would be ~80
