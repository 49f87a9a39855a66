"""call_func: funccall side by side with fastcore.funccall, in one run.

    python benchmarks/bench_call.py

Targets (issue 3):
- the overhead of `call_func('add', {'a': 1, 'b': 2}, ns)` (its time less the bare `add(**inputs)`) is at most
  1/13 of fastcore's;
- a call with a nested dataclass and a list of 100 ints stays within 2x of the same call done by hand, where
  "by hand" is the code a careful developer writes for one tool: check each field's type, build the objects.
fastcore is a peer we measure against, never a dependency of the library.
"""
import timeit
from dataclasses import dataclass

from fastcore import funccall as fc

import funccall

def add(a:int, b:int) -> int:
    "Add two integers"
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

def measure_by_hand(inputs: dict) -> float:
    "The same call without a library: check every value, build the objects, call"
    s = inputs['shape']
    if not isinstance(s, dict) or not isinstance(s.get('name'), str): raise ValueError('shape.name: expected a string')
    o = s['origin']
    if not isinstance(o, dict) or type(o.get('x')) is not int or type(o.get('y')) is not int: raise ValueError('shape.origin: expected x, y')
    pts = s['points']
    if not isinstance(pts, list) or not all(type(p) is int for p in pts): raise ValueError('shape.points: expected integers')
    scale = inputs.get('scale', 1.0)
    if not isinstance(scale, (int, float)): raise ValueError('scale: expected a number')
    return measure(Shape(s['name'], Point(o['x'], o['y']), list(pts)), float(scale))

def _us(fn, n) -> float:
    "Best of 7 runs of `n` calls, in µs per call"
    return min(timeit.repeat(fn, number=n, repeat=7)) / n * 1e6

def main():
    ns, inp = {'add': add, 'measure': measure}, {'a': 1, 'b': 2}
    funccall.call_func('add', inp, ns)
    bare = _us(lambda: add(**inp), 200_000)
    ours = _us(lambda: funccall.call_func('add', inp, ns), 200_000)
    theirs = _us(lambda: fc.call_func('add', inp, ns), 20_000)
    o_ours, o_theirs = ours - bare, theirs - bare

    shape = {'shape': {'name': 'square', 'origin': {'x': 1, 'y': 2}, 'points': list(range(100))}, 'scale': 2.0}
    assert funccall.call_func('measure', shape, ns) == measure_by_hand(shape) == 200.0
    nested_ours = _us(lambda: funccall.call_func('measure', shape, ns), 20_000)
    nested_hand = _us(lambda: measure_by_hand(shape), 20_000)
    nested_fc = _us(lambda: fc.call_func('measure', {**shape, 'shape': Shape(**{**shape['shape'], 'origin': Point(1, 2)})}, ns), 5_000)

    print(f"{'case':52} {'funccall':>10} {'other':>10} {'ratio':>8} {'target':>8}  ok")
    print(f"{'call_func add: overhead over add(**inputs), µs':52} {o_ours:10.3f} {o_theirs:10.3f} {o_ours / o_theirs:8.4f} {1 / 13:8.4f}  "
          f"{'yes' if o_ours <= o_theirs / 13 else 'NO'}   (fastcore)")
    print(f"{'call_func add: whole call, µs':52} {ours:10.3f} {theirs:10.3f} {ours / theirs:8.4f}")
    print(f"{'nested dataclass + 100 ints vs by hand, µs':52} {nested_ours:10.3f} {nested_hand:10.3f} {nested_ours / nested_hand:8.4f} "
          f"{2:8.4f}  {'yes' if nested_ours <= 2 * nested_hand else 'NO'}   (by hand)")
    print(f"{'  (fastcore, given ready-made objects: it does not build nested ones)':52} {nested_fc:10.3f}")

if __name__ == '__main__': main()
