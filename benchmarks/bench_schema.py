"""get_schema: funccall side by side with fastcore.funccall, in one run.

    python benchmarks/bench_schema.py

Targets (issues 2, 22): the first schema of 200 fresh functions in one module costs at most 1/20 of fastcore's, cold:
each round is a fresh Python (no cache of either library warm), and the functions' types vary as real code's do
(each has its own `Literal` and its own dataclass, beside Optional, unions, tuples, sets and nested generics); cost
grows linearly with the parameter count. A schema asked for again is a cache hit for funccall, shown apart (fastcore
caches nothing, so that row says what a cache is worth, not how fast the first schema is). CPU time
(`time.process_time`: the machine is shared), medians. fastcore is a peer we measure against, never a dependency.
"""
import importlib.util, json, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from fastcore import funccall as fc

import funccall
from _timing import cpu_us

def silly_sum(
    a:int, # First thing to sum
    b:int=1, # Second thing to sum
    c:list[int]=None, # A pointless argument
) -> int: # The sum of the inputs
    "Adds a + b."
    return a + b

def _per_call(fn, n: int, rounds: int = 5) -> float: return cpu_us(fn, n, rounds)  # five rounds: this benchmark is long

def _module_src(n_funcs: int, n_params: int = 4) -> str:
    "Plain types: for the growth with the parameter count"
    tys = ['int', 'str', 'list[int]', 'float', 'dict[str, int]', 'bool']
    out = ['from pathlib import Path\n']
    for i in range(n_funcs):
        ps = ''.join(f"    p{j}:{tys[j % len(tys)]}{'' if j < 2 else '=None'}, # parameter {j}\n" for j in range(n_params))
        out.append(f'\ndef func_{i}(\n{ps}) -> int: # The result\n    "Docstring number {i}"\n    return 1\n')
    return ''.join(out)

_VARIED = ['int', 'str', 'float', 'bool', 'Optional[float]', 'list[dict[str, int]]', 'tuple[int, str]', 'set[str]', 'Union[int, str]',
           'dict[str, list[int]]', 'list[str]', 'Optional[list[int]]']

def _varied_src(n_funcs: int, classes: bool = True) -> str:
    "Functions whose types vary as real code's: each its own Literal (and with `classes` its own dataclass), and a mix of the rest"
    out = ['from dataclasses import dataclass\nfrom typing import Literal, Optional, Union\n']
    for i in range(n_funcs):
        if classes: out.append(f'\n@dataclass\nclass Item{i}:\n    "An item"\n    name: str\n    size: {_VARIED[i % len(_VARIED)]}\n    n: int = {i}\n')
        ps = [f"    kind: Literal['a{i}', 'b{i}', 'c{i}'], # which kind\n", f"    item: Item{i}, # the item\n" if classes else "    n: int, # how many\n",
              *(f"    p{j}: {_VARIED[(i + j) % len(_VARIED)]} = None, # parameter {j}\n" for j in range(3))]
        out.append(f'\ndef func_{i}(\n{"".join(ps)}) -> int: # The result\n    "Docstring number {i}"\n    return 1\n')
    return ''.join(out)

def _load(src: str, name: str, d: Path):
    p = d / f'{name}.py'
    p.write_text(src)
    spec = importlib.util.spec_from_file_location(name, p)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod

def one_round() -> dict:
    "In this fresh process: µs per function of the first schema of 200 functions, funccall then fastcore (each its own module copy)"
    with tempfile.TemporaryDirectory() as d:
        out = {}
        for classes in (False, True):
            src = _varied_src(200, classes)
            mine, peer = _load(src, f'_bench_ours_{classes}', Path(d)), _load(src, f'_bench_peer_{classes}', Path(d))
            out[f'ours_{classes}'] = _cpu_pass(funccall.get_schema, mine, 200) / 200 * 1e6
            out[f'ref_{classes}'] = _cpu_pass(fc.get_schema, peer, 200) / 200 * 1e6
        return out

def _cpu_pass(get_schema, mod, n: int) -> float:
    "CPU seconds for the first `get_schema` over every `func_i` of a freshly imported `mod`"
    fs = [getattr(mod, f'func_{i}') for i in range(n)]
    t = time.process_time()
    for f in fs: get_schema(f)
    return time.process_time() - t

def main(rounds: int = 5):
    outs = [json.loads(subprocess.run([sys.executable, __file__, '--round'], capture_output=True, text=True, check=True).stdout)
            for _ in range(rounds)]
    funccall.get_schema(silly_sum); fc.get_schema(silly_sum)
    hit, theirs_again = _per_call(lambda: funccall.get_schema(silly_sum), 20000), _per_call(lambda: fc.get_schema(silly_sum), 500)
    with tempfile.TemporaryDirectory() as d:
        growth = []  # first pass, fresh functions
        for n_params in (5, 10, 20, 40):
            mine = _load(_module_src(50, n_params), f'_bench_params_{n_params}', Path(d))
            growth.append((n_params, _cpu_pass(funccall.get_schema, mine, 50) / 50 * 1e6))
    print(f"python {sys.version.split()[0]}; CPU µs per function; first schemas: median of {rounds} fresh processes\n")
    print(f"{'case':58} {'funccall µs':>12} {'fastcore µs':>12} {'ratio':>8} {'target':>8}  ok")
    for classes, what in ((False, 'a Literal each, varied types'), (True, 'and a dataclass each')):
        ours, theirs = (statistics.median(o[f'{k}_{classes}'] for o in outs) for k in ('ours', 'ref'))
        ratio = statistics.median(o[f'ours_{classes}'] / o[f'ref_{classes}'] for o in outs)
        print(f"{'first get_schema of 200 functions, cold: ' + what:58} {ours:12.2f} {theirs:12.2f} {ratio:8.4f} {0.05:8.4f}  "
              f"{'yes' if ratio <= 0.05 else 'NO'}")
    print(f"{'get_schema(silly_sum) again (funccall: a cache hit)':58} {hit:12.2f} {theirs_again:12.2f} {hit / theirs_again:8.4f} {'-':>8}")
    print('\nfirst get_schema by parameter count (funccall):')
    base_n, base_t = growth[0]
    for n, t in growth:
        print(f"  {n:3d} params: {t:8.1f} µs  ({t / n:5.2f} µs/param, x{t / base_t:4.1f} for x{n / base_n:.0f} params)")

if __name__ == '__main__':
    if sys.argv[1:] == ['--round']: print(json.dumps(one_round()))
    else: main()
