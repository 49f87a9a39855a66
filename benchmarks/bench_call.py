"""call_func: funccall side by side with fastcore.funccall and pydantic's `validate_call`, in one run.

    python benchmarks/bench_call.py

Each shape is called four ways, as models send it: a dict of values of the right types, the same as JSON text (what a
model's tool call holds; pydantic's side reads it with `json.loads` first), with a repair (`"1"` where an integer
goes), and with an invalid argument (the report as text: funccall's `raise_on_err=False` message, pydantic's
`ValidationError` text). Shapes: `add(a, b)`, a nested dataclass with a list of 100 ints, an async `add`, a list of
100 dataclasses, 30 dates, 20 enum members, a dict of 50 ints with a list of 50 strings.

Targets (issue 22): flat `add` from a dict at most 1.2 µs and pydantic's time, from JSON text at most pydantic's from
the same text; every call with values of the right types (dict or JSON text) at most pydantic's, on every shape.
Repairs and reports are shown beside pydantic's without a target. Every side checks every value (fastcore checks
none, and does not build nested dataclasses: it gets them ready-made; it has the dict row only).
CPU time (`time.process_time`: the machine is shared), the median of 7 rounds.
fastcore and pydantic are peers we measure against, never dependencies of the library.
"""
import datetime as dt, enum, json, sys
from dataclasses import dataclass

from fastcore import funccall as fc
from pydantic import ValidationError, validate_call

import funccall
from _timing import cpu_us

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

_us = cpu_us

def _report(p, kw):
    "pydantic's report of a bad call, as text"
    try: p(**kw)
    except ValidationError as e: return str(e)
    raise AssertionError('pydantic accepted a bad call')

def _report_async(p, kw):
    try: drive(p(**kw))
    except ValidationError as e: return str(e)
    raise AssertionError('pydantic accepted a bad call')

def shape_rows(ns: dict, nm: str, label: str, args: dict, ready, repair, bad: dict, n: int) -> list:
    "The rows of one shape: (label, arguments, funccall µs, pydantic µs, fastcore µs or None, target)"
    rows = []
    p, is_async = validate_call(ns[nm]), nm == 'aadd'
    ours = (lambda kw: drive(funccall.call_func_async(nm, kw, ns))) if is_async else (lambda kw: funccall.call_func(nm, kw, ns))
    ours_err = (lambda kw: drive(funccall.call_func_async(nm, kw, ns, raise_on_err=False))) if is_async else (lambda kw: funccall.call_func(nm, kw, ns, raise_on_err=False))
    pyd = (lambda kw: drive(p(**kw))) if is_async else (lambda kw: p(**kw))
    text = json.dumps(args)
    assert ours(args) == ours(text) == pyd(args) == pyd(json.loads(text))
    if repair is not None: assert ours(repair) == pyd(repair) == ours(args)
    assert 'ToolInputError' in ours_err(bad) and (_report_async if is_async else _report)(p, bad)
    fast = _us(lambda: (drive if is_async else (lambda x: x))((fc.call_func_async if is_async else fc.call_func)(nm, ready or args, ns)), max(n // 10, 100))
    rows.append((label, 'dict', _us(lambda: ours(args), n), _us(lambda: pyd(args), n), fast, 1.2 if nm == 'add' else None))
    rows.append((label, 'JSON text', _us(lambda: ours(text), n), _us(lambda: pyd(json.loads(text)), n), None, None))
    if repair is not None: rows.append((label, 'a repair ("1" for 1)', _us(lambda: ours(repair), n), _us(lambda: pyd(repair), n), None, False))
    rows.append((label, 'invalid: the report', _us(lambda: ours_err(bad), n // 5), _us(lambda: (_report_async if is_async else _report)(p, bad), n // 5), None, False))
    return rows

def main():
    ns = {'add': add, 'measure': measure, 'aadd': aadd, 'polygon': polygon, 'schedule': schedule, 'levels': levels, 'count': count}
    shape = {'shape': {'name': 'square', 'origin': {'x': 1, 'y': 2}, 'points': list(range(100))}, 'scale': 2.0}
    cases = [  # name, shape, arguments, ready-made for fastcore, a repair, an invalid one, n
        ('add', 'flat add', {'a': 1, 'b': 2}, None, {'a': '1', 'b': 2}, {'a': 'x', 'b': 2}, 50_000),
        ('measure', 'nested dataclass + 100 ints', shape, {**shape, 'shape': Shape('square', Point(1, 2), list(range(100)))},
         {**shape, 'shape': {**shape['shape'], 'points': ['1', *range(1, 100)]}}, {**shape, 'shape': {**shape['shape'], 'points': ['x', *range(1, 100)]}}, 5_000),
        ('aadd', 'async add', {'a': 1, 'b': 2}, None, {'a': '1', 'b': 2}, {'a': 'x', 'b': 2}, 30_000),
        ('polygon', 'list of 100 dataclasses', {'points': [{'x': i, 'y': -i} for i in range(100)]}, {'points': [Point(i, -i) for i in range(100)]},
         {'points': [{'x': '0', 'y': 0}, *({'x': i, 'y': -i} for i in range(1, 100))]}, {'points': [{'x': 'x', 'y': 0}, *({'x': i, 'y': -i} for i in range(1, 100))]}, 1_000),
        ('schedule', '30 dates', {'days': [f'2026-01-{d:02}' for d in range(1, 31)]}, {'days': [dt.date(2026, 1, d) for d in range(1, 31)]},
         None, {'days': ['tomorrow', *(f'2026-01-{d:02}' for d in range(2, 31))]}, 2_000),
        ('levels', '20 enum members', {'ls': ['low', 'high'] * 10}, {'ls': [Level.low, Level.high] * 10}, None, {'ls': ['lowest', *['high'] * 19]}, 5_000),
        ('count', 'dict of 50 ints + 50 strings', {'counts': {f'k{i}': i for i in range(50)}, 'names': [f'n{i}' for i in range(50)]}, None,
         {'counts': {'k0': '0', **{f'k{i}': i for i in range(1, 50)}}, 'names': [f'n{i}' for i in range(50)]},
         {'counts': {'k0': 'x', **{f'k{i}': i for i in range(1, 50)}}, 'names': [f'n{i}' for i in range(50)]}, 2_000)]
    rows = [row for case in cases for row in shape_rows(ns, *case)]
    print(f"python {sys.version.split()[0]}; CPU µs per call, median of 7 rounds\n")
    print(f"{'shape':30} {'arguments':22} {'funccall':>9} {'pydantic':>9} {'fastcore':>9} {'fc/pyd':>7}  target met")
    for label, how, a, b, c, limit in rows:
        if limit is False: met = '- (no target)'
        else: met = f"{'yes' if a <= b and (limit is None or a <= limit) else 'NO'} (<= pydantic{f' and <= {limit} µs' if limit else ''})"
        print(f"{label:30} {how:22} {a:9.2f} {b:9.2f} {'-' if c is None else f'{c:.2f}':>9} {a / b:7.2f}  {met}")

if __name__ == '__main__': main()
