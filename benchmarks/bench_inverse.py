"""mk_tool and schema2sig: funccall side by side with fastcore.funccall, in one run.

    python benchmarks/bench_inverse.py

Targets (issue 4): a built tool's call overhead (a dispatcher that returns its kwargs, 10 parameters) is at
most 1/7 of the reference's; `schema2sig` on a 10-parameter tool is cheaper than the reference's. funccall's
tool also checks every argument against the schema; the reference's only binds them.
fastcore is a peer we measure against, never a dependency of the library.
"""
import timeit

from fastcore import funccall as fc
from fastcore.utils import dict2obj

import funccall

_types = ['string', 'integer', 'boolean', 'number']
TOOL = {'name': 'search', 'description': 'Search things',
        'inputSchema': {'type': 'object', 'required': ['p0', 'p1', 'p2'],
                        'properties': {f'p{i}': {'type': _types[i % 4], 'description': f'parameter {i}'} for i in range(10)}}}
ARGS = ('q', 3, True)
KWARGS = {'p3': 1.5, 'p4': 'x', 'p5': 7, 'p6': False, 'p7': 2.5, 'p8': 'y', 'p9': 9}

def disp(name, /, **kw): return kw
def disp_ref(name, **kw): return kw

def _us(fn, n) -> float:
    "Best of 7 runs of `n` calls, in µs per call"
    return min(timeit.repeat(fn, number=n, repeat=7)) / n * 1e6

def main():
    ours, ref = funccall.mk_tool(disp, TOOL), fc.mk_tool(disp_ref, dict2obj(TOOL))
    assert ours(*ARGS, **KWARGS) == ref(*ARGS, **KWARGS)
    bare = _us(lambda: disp('search', p0='q', p1=3, p2=True, **KWARGS), 100_000)
    call_ours, call_ref = _us(lambda: ours(*ARGS, **KWARGS), 100_000), _us(lambda: ref(*ARGS, **KWARGS), 20_000)
    o_ours, o_ref = call_ours - bare, call_ref - bare
    sig_ours = _us(lambda: funccall.schema2sig(TOOL), 5_000)
    tool_obj = dict2obj(TOOL)
    sig_ref = _us(lambda: fc.schema2sig(tool_obj), 5_000)

    print(f"{'case':50} {'funccall µs':>12} {'fastcore µs':>12} {'ratio':>8} {'target':>8}  ok")
    print(f"{'built tool call overhead, 10 params':50} {o_ours:12.3f} {o_ref:12.3f} {o_ours / o_ref:8.4f} {1 / 7:8.4f}  {'yes' if o_ours <= o_ref / 7 else 'NO'}")
    print(f"{'schema2sig, 10 params':50} {sig_ours:12.3f} {sig_ref:12.3f} {sig_ours / sig_ref:8.4f} {1:8.4f}  {'yes' if sig_ours < sig_ref else 'NO'}")

if __name__ == '__main__': main()
