"""What the overloads of `call_func` and `call_func_async` promise, checked both ways: `assert_type` is what a checker
knows (mypy --strict and pyright read this file: tests/test_typed_script.py), the `type(...) is` beside it what runs."""
from __future__ import annotations

import asyncio, functools
from collections.abc import Awaitable
from typing import Any

from typing_extensions import assert_type

from funccall import Tool, call_func, call_func_async

async def double(
    x: int,  # a number
) -> int:    # twice it
    "Twice `x`"
    return 2 * x

def later(
    x: int,  # a number
) -> Awaitable[int]:  # twice it, once awaited
    "Twice `x`, as an awaitable (a plain function: `call_func` gives it back unawaited)"
    return double(x)

class Doubler:
    "Twice a number, as an object whose call is a coroutine"
    async def __call__(
        self,
        x: int,  # a number
    ) -> int:    # twice it
        return 2 * x

class Box:
    "A number kept: a class is a tool whose call gives an instance"
    def __init__(
        self,
        x: int,  # the number
    ) -> None:
        self.x = x

def main() -> None:
    r1 = call_func(double, {'x': 1}); assert_type(r1, int); assert type(r1) is int
    r2 = call_func(later, {'x': 1}); assert_type(r2, Awaitable[int]); assert asyncio.iscoroutine(r2); assert asyncio.run(r2) == 2
    r3 = call_func(Doubler(), {'x': 1}); assert_type(r3, int); assert type(r3) is int
    r4 = call_func(functools.partial(double), {'x': 1}); assert_type(r4, int); assert type(r4) is int
    r5 = call_func(Box, {'x': 1}); assert_type(r5, Box); assert type(r5) is Box
    r6 = call_func(Tool(double), {'x': 1}); assert_type(r6, Any); assert r6 == 2  # a Tool called itself gives text: not here
    r7 = call_func(double, {'x': 'no'}, None, False); assert_type(r7, 'int | str'); assert type(r7) is str
    async def run() -> None:
        a1 = await call_func_async(later, {'x': 1}); assert_type(a1, int); assert a1 == 2
        a2 = await call_func_async(Tool(double), {'x': 1}); assert_type(a2, Any); assert a2 == 2
        a3 = await call_func_async(Box, {'x': 1}); assert_type(a3, Box); assert type(a3) is Box
    asyncio.run(run())
    print('ok')

if __name__ == '__main__': main()
