"""get_schema: funccall side by side with fastcore.funccall, in one run.

    python benchmarks/bench_schema.py

Targets (issue 2): a cached schema costs at most 1/100 of fastcore's; the first schema of 200 fresh
functions in one module costs at most 1/20 of fastcore's; cost grows linearly with the parameter count.
fastcore is a peer we measure against, never a dependency of the library.
"""
import importlib.util, linecache, sys, tempfile, timeit
from pathlib import Path

from fastcore import funccall as fc

import funccall

def silly_sum(
    a:int, # First thing to sum
    b:int=1, # Second thing to sum
    c:list[int]=None, # A pointless argument
) -> int: # The sum of the inputs
    "Adds a + b."
    return a + b

def _per_call(fn, n) -> float:
    "Best of 5 runs of `n` calls, in µs per call"
    return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6

def _module_src(n_funcs: int, n_params: int = 4) -> str:
    tys = ['int', 'str', 'list[int]', 'float', 'dict[str, int]', 'bool']
    out = ['from pathlib import Path\n']
    for i in range(n_funcs):
        ps = ''.join(f"    p{j}:{tys[j % len(tys)]}{'' if j < 2 else '=None'}, # parameter {j}\n" for j in range(n_params))
        out.append(f'\ndef func_{i}(\n{ps}) -> int: # The result\n    "Docstring number {i}"\n    return 1\n')
    return ''.join(out)

def _load(src: str, name: str, d: Path):
    p = d / f'{name}.py'
    p.write_text(src)
    spec = importlib.util.spec_from_file_location(name, p)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod

def _first_pass(get_schema, mod, n: int) -> float:
    "Seconds for the first `get_schema` over every `func_i` of a freshly imported `mod`"
    fs = [getattr(mod, f'func_{i}') for i in range(n)]
    t = timeit.default_timer()
    for f in fs: get_schema(f)
    return timeit.default_timer() - t

def main():
    rows = []
    # 1. a schema already seen
    funccall.get_schema(silly_sum); fc.get_schema(silly_sum)
    ours, theirs = _per_call(lambda: funccall.get_schema(silly_sum), 20000), _per_call(lambda: fc.get_schema(silly_sum), 500)
    rows.append(('cached get_schema(silly_sum)', ours, theirs, 1 / 100))

    # 2. the first schema of 200 fresh functions in one module (each library gets its own copy of the module)
    with tempfile.TemporaryDirectory() as d:
        src, runs = _module_src(200), []
        for k in range(3):
            linecache.clearcache()
            mine, peer = _load(src, f'_bench_ours_{k}', Path(d)), _load(src, f'_bench_peer_{k}', Path(d))
            runs.append((_first_pass(funccall.get_schema, mine, 200), _first_pass(fc.get_schema, peer, 200)))
        ours, theirs = min(r[0] for r in runs) / 200 * 1e6, min(r[1] for r in runs) / 200 * 1e6
        rows.append(('first get_schema, 200 fresh functions (per fn)', ours, theirs, 1 / 20))

        # 3. growth with the number of parameters (first pass, fresh functions)
        growth = []
        for n_params in (5, 10, 20, 40):
            mine = _load(_module_src(50, n_params), f'_bench_params_{n_params}', Path(d))
            growth.append((n_params, _first_pass(funccall.get_schema, mine, 50) / 50 * 1e6))

    print(f"{'case':50} {'funccall µs':>12} {'fastcore µs':>12} {'ratio':>8} {'target':>8}  ok")
    for nm, ours, theirs, target in rows:
        r = ours / theirs
        print(f"{nm:50} {ours:12.2f} {theirs:12.2f} {r:8.4f} {target:8.4f}  {'yes' if r <= target else 'NO'}")
    print('\nfirst get_schema by parameter count (funccall):')
    base_n, base_t = growth[0]
    for n, t in growth:
        print(f"  {n:3d} params: {t:8.1f} µs  ({t / n:5.2f} µs/param, x{t / base_t:4.1f} for x{n / base_n:.0f} params)")

if __name__ == '__main__': main()
