"""mk_tool and schema2sig: funccall side by side with fastcore.funccall, in one run.

    python benchmarks/bench_inverse.py

Two tools: a realistic one of 10 parameters (four scalars, an array of integers, an array of strings with a default,
a free-form object, an object with two properties, a string enum and a date-time string; half of them required),
and one of 10 plain scalars. For each: building the tool (`mk_tool`), its signature (`schema2sig`), and a built
tool's call overhead (a dispatcher that returns its kwargs, minus calling that dispatcher directly) with every argument,
the required ones only, and the required ones with some of the optional ones (what models mostly send). funccall's tool checks every argument against the schema; the reference's only binds them. Then the
time to build 100 tools of the largest server in the corpus of real MCP servers (`tests/data/mcp_corpus/`).

Targets: build and schema2sig at most the reference's; call overhead at most 0.15x the reference's on the
realistic tool, with every argument and with any subset of the optional ones; 100 tools of a large server under 10 ms
cold (in a fresh process, no cache warm; warm shown apart). CPU time (`time.process_time`: the machine is shared);
each row is the median of 5 rounds, ratios taken within a round, so the machine's load weighs on both sides alike.
fastcore is a peer we measure against, never a dependency.
"""
import itertools, json, statistics, subprocess, sys, time
from pathlib import Path

from fastcore import funccall as fc
from fastcore.utils import dict2obj

import funccall
from _timing import cpu_us

REALISTIC = {'name': 'search_items', 'description': 'Search the catalogue', 'inputSchema': {'type': 'object', 'properties': {
    'query': {'type': 'string', 'description': 'What to look for'},
    'limit': {'type': 'integer', 'description': 'Most results', 'minimum': 1},
    'threshold': {'type': 'number', 'description': 'Minimum score'},
    'exact': {'type': 'boolean', 'description': 'Exact match only'},
    'ids': {'type': 'array', 'items': {'type': 'integer'}, 'description': 'Item ids'},
    'tags': {'type': 'array', 'items': {'type': 'string'}, 'default': [], 'description': 'Tags'},
    'filters': {'type': 'object', 'description': 'Free-form filters'},
    'point': {'type': 'object', 'properties': {'x': {'type': 'number'}, 'y': {'type': 'number'}}, 'required': ['x', 'y'], 'description': 'A point'},
    'sort': {'type': 'string', 'enum': ['asc', 'desc'], 'description': 'Sort order'},
    'since': {'type': 'string', 'format': 'date-time', 'description': 'Only after this'}},
    'required': ['query', 'limit', 'exact', 'ids', 'point']}}
REALISTIC_KW = dict(query='shoes', limit=10, threshold=0.5, exact=False, ids=[1, 2, 3], tags=['a', 'b'], filters={'color': 'red'},
                    point={'x': 1.0, 'y': 2.0}, sort='asc', since='2024-01-02T03:04:05Z')

_types = ['string', 'integer', 'boolean', 'number']
SCALAR = {'name': 'search', 'description': 'Search things',
          'inputSchema': {'type': 'object', 'required': ['p0', 'p1', 'p2'],
                          'properties': {f'p{i}': {'type': _types[i % 4], 'description': f'parameter {i}'} for i in range(10)}}}
SCALAR_KW = {'p0': 'q', 'p1': 3, 'p2': True, 'p3': 1.5, 'p4': 'x', 'p5': 7, 'p6': False, 'p7': 2.5, 'p8': 'y', 'p9': 9}

_n = itertools.count()  # tools never seen before are numbered

def disp(name, /, **kw): return kw
def disp_ref(name, **kw): return kw

def _us(fn, n: int, rounds: int = 5) -> float: return cpu_us(fn, n, rounds)  # five rounds: this benchmark is long

def subsets(tool: dict, kw: dict) -> dict:
    "The calls a model makes: every argument, the required ones only, and the required ones with some of the optional ones"
    req = tool['inputSchema']['required']
    opt = [k for k in kw if k not in req]
    need = {k: kw[k] for k in req}
    return {'every argument': kw, 'required only': need, 'required + 2 optional': {**need, **{k: kw[k] for k in opt[1:3]}},
            'required + every other optional': {**need, **{k: kw[k] for k in opt[::2]}}}

def _fresh(tool: dict, i: int) -> dict:
    "A copy of `tool` no cache has seen: every property and object title has a new name"
    s = json.loads(json.dumps(tool['inputSchema']))
    def renamed(s):
        if isinstance(s, dict) and isinstance(s.get('properties'), dict):
            s['properties'] = {f'{k}_{i}': renamed(v) for k, v in s['properties'].items()}
            s['required'] = [f'{k}_{i}' for k in s.get('required', [])]
        return s
    return {**tool, 'inputSchema': renamed(s)}

def round_of(tool: dict, kw: dict) -> dict:
    "One round of every measure for `tool`: {case: (funccall µs, fastcore µs)}"
    ours, ref = funccall.mk_tool(disp, tool), fc.mk_tool(disp_ref, dict2obj(tool))
    assert ours(**kw) == ref(**kw) == kw
    obj = dict2obj(tool)
    fresh, fresh_ref = iter([_fresh(tool, next(_n)) for _ in range(5 * 300)]), iter([dict2obj(_fresh(tool, next(_n))) for _ in range(5 * 300)])
    calls = {}
    for case, args in subsets(tool, kw).items():  # a built tool's own cost: its call minus calling the dispatcher directly
        assert ours(**args) == ref(**args) == args
        bare = _us(lambda a=args: disp('t', **a), 20_000)
        calls[f'call overhead, {case}'] = (_us(lambda a=args: ours(**a), 20_000) - bare, _us(lambda a=args: ref(**a), 5_000) - bare)
    return {**calls,
        'mk_tool build (a new tool)': (_us(lambda: funccall.mk_tool(disp, next(fresh)), 300), _us(lambda: fc.mk_tool(disp_ref, next(fresh_ref)), 300)),
        'mk_tool build (the same tool again)': (_us(lambda: funccall.mk_tool(disp, tool), 1_000), _us(lambda: fc.mk_tool(disp_ref, obj), 1_000)),
        'schema2sig': (_us(lambda: funccall.schema2sig(tool), 1_000), _us(lambda: fc.schema2sig(obj), 1_000)),
    }

def _server_tools() -> tuple[str, list]:
    "The corpus's largest server, and 100 of its tools that both libraries build"
    corpus = Path(__file__).parent.parent / 'tests' / 'data' / 'mcp_corpus'
    srv = max((json.loads(p.read_text()) for p in corpus.glob('*.json')), key=lambda s: len(s['tools']))
    tools = []
    for t in srv['tools']:
        try: fc.mk_tool(disp_ref, dict2obj(t)), funccall.schema2sig(t)
        except (ValueError, TypeError): continue  # names that sanitize alike (refused, as documented), or a type list the reference can't read
        tools.append(t)
        if len(tools) == 100: break
    return f"{srv['server']} ({len(tools)} tools)", tools

def one_build() -> dict:
    "In this fresh process: CPU ms to build the 100 tools the first time (cold: no cache of either library warm), then again"
    _, tools = _server_tools()
    fresh = [[_fresh(t, i) for t in tools] for i in range(3)]
    objs = [dict2obj(t) for t in tools]
    cpu = time.process_time
    t0 = cpu(); [funccall.mk_tool(disp, t) for t in fresh[0]]
    t1 = cpu(); [fc.mk_tool(disp_ref, t) for t in objs]
    t2 = cpu(); [funccall.mk_tool(disp, t) for t in fresh[1]]
    t3 = cpu()
    return {'cold': (t1 - t0) * 1e3, 'ref': (t2 - t1) * 1e3, 'warm': (t3 - t2) * 1e3}

def server_build(runs: int = 5) -> tuple[dict, str]:
    "Medians over fresh processes of `one_build`"
    what, _ = _server_tools()
    outs = [json.loads(subprocess.run([sys.executable, __file__, '--build'], capture_output=True, text=True, check=True).stdout) for _ in range(runs)]
    return {k: statistics.median(o[k] for o in outs) for k in outs[0]}, what

TARGETS = {'mk_tool build (a new tool)': 1.0, 'mk_tool build (the same tool again)': 1.0, 'schema2sig': 1.0,
           **{f'call overhead, {c}': 0.15 for c in ('every argument', 'required only', 'required + 2 optional', 'required + every other optional')}}

def main(rounds: int = 5):
    print(f"python {sys.version.split()[0]}; median of {rounds} rounds\n")
    print(f"{'tool':10} {'case':38} {'funccall µs':>12} {'fastcore µs':>12} {'ratio':>7} {'target':>7}  met")
    for label, tool, kw in (('realistic', REALISTIC, REALISTIC_KW), ('scalars', SCALAR, SCALAR_KW)):
        runs = [round_of(tool, kw) for _ in range(rounds)]
        for case, target in TARGETS.items():
            ours, ref = (statistics.median(r[case][j] for r in runs) for j in (0, 1))
            ratio = statistics.median(r[case][0] / r[case][1] for r in runs)
            print(f"{label:10} {case:38} {ours:12.2f} {ref:12.2f} {ratio:7.3f} {target:7.2f}  {'yes' if ratio <= target else 'NO'}")
    b, what = server_build()
    print(f"\n100 tools of {what}, CPU ms, median of 5 fresh processes: funccall {b['cold']:.2f} cold (the process's first tools), "
          f"{b['warm']:.2f} warm (new tools, its caches warm); fastcore {b['ref']:.2f}; target < 10 ms cold: {'yes' if b['cold'] < 10 else 'NO'}")

if __name__ == '__main__':
    if sys.argv[1:] == ['--build']: print(json.dumps(one_build()))
    else: main()
