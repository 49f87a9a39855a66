"""call_func: funccall side by side with fastcore.funccall and pydantic's `validate_call`, in one run.

    python benchmarks/bench_call.py

Targets:
- `call_func('add', {'a': 1, 'b': 2}, ns)` takes at most 1.2 µs, and no longer than pydantic's checked call;
- a call with a nested dataclass and a list of 100 ints takes no longer than pydantic's `validate_call` of the same function;
- `await call_func_async('add', ...)` of an async tool takes no longer than pydantic's checked async call.
More shapes, with no target of their own, show the speed is not one case's: a list of 100 dataclasses, 30 dates,
20 enum members, and a dict of 50 ints with a list of 50 strings.
Every side checks every value (fastcore checks none, and does not build nested dataclasses: it gets them ready-made).
The machine may be shared: compare the ratios of one run, and take the median of a few runs.
fastcore and pydantic are peers we measure against, never dependencies of the library.
"""
import datetime as dt, enum, timeit
from dataclasses import dataclass

from fastcore import funccall as fc
from pydantic import validate_call

import funccall

def add(a:int, b:int) -> int:
    "Add two integers"
    return a + b

async def aadd(a:int, b:int) -> int:
    "Add two integers, asynchronously"
    return a + b

@dataclass
class Point:
    x: int
    y: int

@dataclass
class Shape:
    name: str
    origin: Point
    points: list[int]

def measure(shape: Shape, scale: float = 1.0) -> float:
    "Size of a shape"
    return len(shape.points) * scale

def polygon(points: list[Point]) -> int:
    "Number of corners"
    return len(points)

class Level(enum.Enum):
    low = 'low'
    high = 'high'

def schedule(days: list[dt.date]) -> int:
    "Number of days"
    return len(days)

def levels(ls: list[Level]) -> int:
    "Number of levels"
    return len(ls)

def count(counts: dict[str, int], names: list[str]) -> int:
    "Number of entries"
    return len(counts) + len(names)

def drive(coro):
    "Run a coroutine that never suspends, without an event loop's own cost (the same for every side)"
    try: coro.send(None)
    except StopIteration as e: return e.value
    raise RuntimeError('the coroutine suspended')

def _us(fn, n) -> float:
    "Best of 7 runs of `n` calls, in µs per call"
    return min(timeit.repeat(fn, number=n, repeat=7)) / n * 1e6

def main():
    ns = {'add': add, 'measure': measure, 'aadd': aadd, 'polygon': polygon, 'schedule': schedule, 'levels': levels, 'count': count}
    inp = {'a': 1, 'b': 2}
    p_add, p_measure, p_aadd, p_polygon = validate_call(add), validate_call(measure), validate_call(aadd), validate_call(polygon)
    shape = {'shape': {'name': 'square', 'origin': {'x': 1, 'y': 2}, 'points': list(range(100))}, 'scale': 2.0}
    ready = {**shape, 'shape': Shape(**{**shape['shape'], 'origin': Point(1, 2)})}
    assert funccall.call_func('add', inp, ns) == p_add(**inp) == 3
    assert funccall.call_func('measure', shape, ns) == p_measure(**shape) == 200.0
    assert drive(funccall.call_func_async('aadd', inp, ns)) == drive(p_aadd(**inp)) == 3
    corners = {'points': [{'x': i, 'y': -i} for i in range(100)]}
    made = {'points': [Point(i, -i) for i in range(100)]}
    assert funccall.call_func('polygon', corners, ns) == p_polygon(**corners) == 100
    shapes = [  # name, JSON arguments, the same arguments ready-made (fastcore builds nothing)
        ('schedule', {'days': [f'2026-01-{d:02}' for d in range(1, 31)]}, {'days': [dt.date(2026, 1, d) for d in range(1, 31)]}),
        ('levels', {'ls': ['low', 'high'] * 10}, {'ls': [Level.low, Level.high] * 10}),
        ('count', {'counts': {f'k{i}': i for i in range(50)}, 'names': [f'n{i}' for i in range(50)]}, None)]
    for nm, args, _ in shapes: assert funccall.call_func(nm, args, ns) == validate_call(ns[nm])(**args)

    rows = [  # case, funccall, pydantic, fastcore, target for funccall (µs), None: no more than pydantic, False: no target
        ('flat add', _us(lambda: funccall.call_func('add', inp, ns), 200_000), _us(lambda: p_add(**inp), 200_000),
         _us(lambda: fc.call_func('add', inp, ns), 20_000), 1.2),
        ('nested dataclass + 100 ints', _us(lambda: funccall.call_func('measure', shape, ns), 50_000),
         _us(lambda: p_measure(**shape), 50_000), _us(lambda: fc.call_func('measure', ready, ns), 5_000), None),
        ('async add', _us(lambda: drive(funccall.call_func_async('aadd', inp, ns)), 100_000),
         _us(lambda: drive(p_aadd(**inp)), 100_000), _us(lambda: drive(fc.call_func_async('aadd', inp, ns)), 10_000), None),
        ('list of 100 dataclasses', _us(lambda: funccall.call_func('polygon', corners, ns), 5_000),  # no target: a second shape
         _us(lambda: p_polygon(**corners), 5_000), _us(lambda: fc.call_func('polygon', made, ns), 1_000), False),
        *((f'{nm}: {what}', _us(lambda nm=nm, a=args: funccall.call_func(nm, a, ns), 5_000), _us(lambda p=validate_call(ns[nm]), a=args: p(**a), 5_000),
           _us(lambda nm=nm, a=ready or args: fc.call_func(nm, a, ns), 1_000), False)
          for (nm, args, ready), what in zip(shapes, ['30 dates', '20 enum members', 'dict of 50 ints + 50 strings'])),
    ]
    print(f"{'case (µs per call)':36} {'funccall':>9} {'pydantic':>9} {'fastcore':>9} {'fc/pyd':>7} {'fc/fastcore':>11}  target met")
    for case, ours, pyd, fast, limit in rows:
        if limit is False: met = '- (no target)'
        else:
            ok = ours <= pyd and (limit is None or ours <= limit)
            met = f"{'yes' if ok else 'NO'} (<= pydantic{f' and <= {limit} µs' if limit else ''})"
        print(f"{case:36} {ours:9.2f} {pyd:9.2f} {fast:9.2f} {ours / pyd:7.2f} {ours / fast:11.3f}  {met}")

if __name__ == '__main__': main()
