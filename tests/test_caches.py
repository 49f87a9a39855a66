"""Every cache is bounded on every path, and memory comes back when tools are dropped.

Tools built and dropped by the tens of thousands (an agent reconnecting to servers, a notebook redefining
functions) must not grow the process: the type caches hold at most `_MAX_CACHE` entries each, the schema cache and
call plans live only as long as their functions, and what is left after dropping everything is bounded.
Memory is counted with `sys.getallocatedblocks()` (cheap enough for 100,000 tools) and, on a smaller run, with
`tracemalloc` in bytes.
"""
import asyncio
import gc
import sys
import tracemalloc
from typing import Literal

import pytest

from funccall import call_func, call_func_async, get_schema, mk_tool
from funccall.core import _coerce, _types

BOUND = _types._MAX_CACHE


def _type_cache_sizes():
    return {'kind': len(_types._kinds), 'coerce': len(_coerce._coercers)}


def _dispatch(nm, **kw): return kw


def _tool_schema(i: int) -> dict:
    "A tool of its own: its name, and an enum and an object type no other tool has"
    return {'name': f'tool_{i}', 'description': f'Tool number {i}', 'input_schema': {'type': 'object', 'properties': {
        'choice': {'enum': [f'v{i}', 'w']},
        'point': {'type': 'object', 'properties': {f'x{i}': {'type': 'integer'}}, 'required': [f'x{i}']}},
        'required': ['choice']}}


def _function(i: int):
    "A function of its own, with an annotation no other function has"
    def f(x: Literal[i], ys: list[Literal[i]] = ()) -> int:
        "Return x"
        return x
    f.__name__ = f'f{i}'
    return f


def _settle() -> int:
    gc.collect()
    return sys.getallocatedblocks()


def test_the_same_tool_built_again_and_again_does_not_grow_the_caches():
    before = _settle()
    for i in range(20_000):
        f = mk_tool(_dispatch, _tool_schema(0))
        assert f(choice='w', point={'x0': 1}) == {'choice': 'w', 'point': {'x0': 1}}
        if i % 10 == 0: get_schema(f)
    del f
    assert all(n <= BOUND for n in _type_cache_sizes().values()), _type_cache_sizes()
    grown = _settle() - before
    assert grown < 5_000, f'{grown} memory blocks still held after 20,000 builds of one tool were dropped'  # measured 2,450-2,570


@pytest.mark.slow
def test_100_000_distinct_tools_built_and_dropped_stay_bounded():
    before = _settle()
    for i in range(100_000):
        f = mk_tool(_dispatch, _tool_schema(i))
        if i % 10 == 0:  # calls and schemas on a tenth of them: their plans and schemas are cached too
            assert f(choice=f'v{i}') == {'choice': f'v{i}'}
            assert get_schema(f)['name'] == f'tool_{i}'
    del f
    sizes = _type_cache_sizes()
    assert all(n <= BOUND for n in sizes.values()), sizes
    grown = _settle() - before
    assert grown < 12_000, f'{grown} memory blocks still held after 100,000 distinct tools were dropped'  # measured 6,300


async def _async_calls(start: int, n: int):
    for i in range(start, start + n): assert await call_func_async(_function(i), {'x': i}) == i


@pytest.mark.slow
def test_distinct_functions_through_get_schema_and_call_func_sync_and_async_stay_bounded():
    before = _settle()
    for i in range(10_000):
        f = _function(i)
        assert get_schema(f)['name'] == f'f{i}'
        assert call_func(f, {'x': i}) == i
    del f
    asyncio.run(_async_calls(10_000, 5_000))  # the async path reaches the type caches without `get_schema`'s checks
    sizes = _type_cache_sizes()
    assert all(n <= BOUND for n in sizes.values()), sizes
    grown = _settle() - before
    assert grown < 100_000, f'{grown} memory blocks still held after 15,000 distinct functions were dropped'  # measured 67,800


@pytest.mark.slow  # a memory test: thousands of tools built and dropped
def test_memory_after_distinct_functions_are_dropped_in_bytes():
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(2_000):
            f = _function(i)
            get_schema(f)
            call_func(f, {'x': i})
        del f
        asyncio.run(_async_calls(2_000, 1_000))
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally: tracemalloc.stop()
    assert grown < 9_000_000, f'{grown / 1e6:.1f} MB still held after 3,000 distinct functions were dropped'  # measured 5.9 MB


def test_the_type_caches_are_bounded_on_their_own_and_keep_union_order():
    from typing import Union
    from funccall import kind
    for i in range(BOUND + 1_000): kind(Literal[f'v{i}'])
    assert len(_types._kinds) <= BOUND
    assert kind(Union[int, str]).args == (int, str) and kind(Union[str, int]).args == (str, int)  # still apart after eviction
    assert kind(Literal['v0']).args == ('v0',)  # an evicted annotation comes back at once

def test_a_literal_is_keyed_by_its_values_their_types_and_order():
    "A Literal's cache key is its values with their types, in order: what `typing` tells apart stays apart, even once cached"
    from typing import Optional
    from funccall import kind
    for _ in range(2):  # made, then found
        assert [kind(t).args for t in (Literal[1], Literal[True], Literal[1.0], Literal['a', 'b'], Literal['b', 'a'])] == \
            [(1,), (True,), (1.0,), ('a', 'b'), ('b', 'a')]
        assert type(kind(Literal[True]).args[0]) is bool and type(kind(Literal[1.0]).args[0]) is float
        assert kind(Optional[Literal[0]]).args == (Literal[0], type(None)) and kind(Literal[False]).args == (False,)
    odd = Literal[[1]]  # a value no set holds: made each time, as any unhashable annotation
    assert kind(odd).args == ([1],) and kind(odd).kind == 'literal'
