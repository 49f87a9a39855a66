"Plain Python tools with docments, for funccall's MCP server: `python -m funccall.mcp serve plain_tools.py`"
import asyncio
from dataclasses import dataclass
from typing import Literal

__all__ = ['add', 'greet', 'divide', 'shout', 'where', 'nap', 'nothing']

@dataclass
class Point:
    "A point on a plane"
    x: float  # across
    y: float  # up

def add(
    a: int,     # the first number
    b: int = 2, # the second number
) -> int:       # their sum
    "Add two integers"
    return a + b

def greet(
    name: str,                # who to greet
    greeting: str = 'Hello',  # how
) -> str:
    "Greet someone by name"
    return f'{greeting}, {name}!'

def divide(
    a: float,  # dividend
    b: float,  # divisor
) -> float:
    "Divide `a` by `b`"
    return a / b

def shout(
    words: list[str],                             # what to say
    mode: Literal['upper', 'lower'] = 'upper',    # which case
) -> list[str]:
    "Change the case of each word"
    return [w.upper() if mode == 'upper' else w.lower() for w in words]

def where(
    p: Point,          # a point
    scale: float = 1,  # multiplies both coordinates
) -> Point:            # the point, scaled
    "Scale a point"
    return Point(p.x * scale, p.y * scale)

async def nap(
    text: str,  # what to say after the nap
) -> str:
    "Sleep briefly, then answer (an async tool)"
    await asyncio.sleep(0.01)
    return text

def nothing() -> None:
    "Do nothing and return nothing"
