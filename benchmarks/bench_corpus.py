"""The corpus of real MCP tools at scale: funccall's `mk_tool` beside fastcore.funccall's, and its check beside jsonschema-rs.

    python benchmarks/bench_corpus.py [rounds]

Every tool of `tests/data/mcp_corpus/` (1,340 tools of 66 servers) with arguments made from its own schema (its required
properties, each given its `const`, first `enum` value, default or a plain value of its type) that jsonschema-rs
accepts, and that fastcore's tool binds (it can't call tools whose property names are keywords, like `from`).

Each round runs in a fresh Python, so no cache of either library is warm (cold), and reports CPU time
(`time.process_time`: the machine is shared, the clock's time is not ours); the figures are the medians of the rounds.
- build and call once: `mk_tool` for every tool, then one call of each (the first call makes what calls need);
- the second call of each, and memory growth (tracemalloc, in a round of its own: tracing slows everything);
- warm valid calls: a built tool's own cost (its call minus the dispatcher's) over the corpus, beside `is_valid` of
  jsonschema-rs's compiled validator for the same arguments; and how many tools answer a valid call without the
  checked way (the validator): all of them should.
- a subset of the optional arguments (every other one, as JSON values of their types), on the tools that have two or more.

Targets (issue 22): build + call once at most 2x fastcore's; memory growth at most 5 MB; valid calls at most 1.5x
jsonschema-rs's, over all the tools and over the first 100 (issue 38); every valid call on the quick path. fastcore and jsonschema-rs are peers, never dependencies.
"""
from __future__ import annotations

import gc, json, statistics, subprocess, sys, time, tracemalloc, warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / 'tests'))

def example(s, root, depth: int = 0):
    "A plain value schema `s` likely accepts (jsonschema-rs has the last word)"
    if depth > 8 or not isinstance(s, dict): return 'x'
    if isinstance(s.get('$ref'), str) and s['$ref'].startswith('#/'):
        node = root
        for seg in s['$ref'][2:].split('/'): node = node.get(seg.replace('~1', '/').replace('~0', '~'), {}) if isinstance(node, dict) else {}
        return example(node, root, depth + 1)
    if 'const' in s: return s['const']
    if isinstance(s.get('enum'), list) and s['enum']: return s['enum'][0]
    if s.get('default') is not None: return s['default']
    for k in ('anyOf', 'oneOf'):
        if isinstance(s.get(k), list):
            for b in s[k]:
                if isinstance(b, dict) and b.get('type') != 'null': return example(b, root, depth + 1)
    if isinstance(s.get('allOf'), list) and s['allOf']: return example({**s['allOf'][0], **{k: v for k, v in s.items() if k != 'allOf'}}, root, depth + 1)
    ty = s.get('type')
    if isinstance(ty, list): ty = next((t for t in ty if t != 'null'), 'null')
    if ty is None: ty = 'object' if 'properties' in s else 'string'
    num = lambda k: s[k] if type(s.get(k)) in (int, float) else None
    if ty == 'string':
        return {'date-time': '2024-01-02T03:04:05Z', 'date': '2024-01-02', 'uri': 'https://example.com', 'email': 'a@example.com'}.get(
            s.get('format'), 'a' * max(s['minLength'] if type(s.get('minLength')) is int else 1, 1))
    if ty == 'integer': return max(int(num('minimum') or 1), 1) if (num('maximum') or 10**9) >= 1 else int(num('maximum'))
    if ty == 'number': return max(num('minimum') or 1.5, 1.5)
    if ty == 'boolean': return True
    if ty == 'null': return None
    if ty == 'array':
        it = s.get('items', {})
        if isinstance(it, list): return [example(x, root, depth + 1) for x in it]
        return [example(it, root, depth + 1) for _ in range(max(s['minItems'] if type(s.get('minItems')) is int else 1, 1))]
    if ty == 'object':
        props = s['properties'] if isinstance(s.get('properties'), dict) else {}
        return {k: example(props.get(k, {'type': 'string'}), root, depth + 1) for k in s.get('required', []) if isinstance(k, str)}
    return None

def corpus_calls() -> list[tuple[dict, dict, dict]]:
    "(tool, valid arguments, valid arguments with every other optional one too) for every corpus tool both libraries can call"
    import jsonschema_rs
    from fastcore import funccall as fc
    from fastcore.utils import dict2obj
    from corpus import load_corpus
    out = []
    for _, t in load_corpus():
        s = t['inputSchema']
        args = example(s, s)
        opt = [k for k in s.get('properties', {}) if k not in args][::2]
        more = {**args, **{k: example(s['properties'][k], s) for k in opt}}
        try:
            v = jsonschema_rs.validator_for(s, validate_formats=False)
            if not (v.is_valid(args) and v.is_valid(more)): continue
            ref = fc.mk_tool(lambda *a, **kw: kw, dict2obj(t))
            ref(**args)  # fastcore can call it
        except Exception: continue  # noqa: BLE001 - a schema one of the peers can't take: not compared
        try: ref(**more)
        except Exception: more = None  # noqa: BLE001 - an optional property fastcore renames: no subset compared
        out.append((t, args, more if opt else None))
    return out

def disp(name, /, **kw): return kw
def disp_ref(*a, **kw): return kw

def one_round() -> dict:
    "Everything measured once, in this (fresh) process"
    from fastcore import funccall as fc
    from fastcore.utils import dict2obj
    import funccall
    warnings.simplefilter('ignore')  # patterns the validator won't run (it says so once per tool)
    calls = corpus_calls()
    mine, theirs = [json.loads(json.dumps(t)) for t, _, _ in calls], [dict2obj(t) for t, _, _ in calls]
    gc.collect()
    cpu = time.process_time
    t0 = cpu(); fns = [funccall.mk_tool(disp, t) for t in mine]
    t1 = cpu()
    for f, (_, a, _) in zip(fns, calls): f(**a)
    t2 = cpu()
    for f, (_, a, _) in zip(fns, calls): f(**a)
    t3 = cpu(); refs = [fc.mk_tool(disp_ref, t) for t in theirs]
    t4 = cpu()
    for f, (_, a, _) in zip(refs, calls): f(**a)
    t5 = cpu()
    return {'tools': len(calls), 'build': t1 - t0, 'first': t2 - t1, 'second': t3 - t2, 'ref_build': t4 - t3, 'ref_call': t5 - t4}

def memory_round() -> dict:
    "Memory growth of building and calling once every tool, each library in turn"
    from fastcore import funccall as fc
    from fastcore.utils import dict2obj
    import funccall
    warnings.simplefilter('ignore')
    calls = corpus_calls()
    mine, theirs = [json.loads(json.dumps(t)) for t, _, _ in calls], [dict2obj(t) for t, _, _ in calls]
    out = {}
    for side, make, tools in (('ours', lambda t: funccall.mk_tool(disp, t), mine), ('ref', lambda t: fc.mk_tool(disp_ref, t), theirs)):
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        fns = [make(t) for t in tools]
        for f, (_, a, _) in zip(fns, calls): f(**a)
        gc.collect()
        out[side] = (tracemalloc.get_traced_memory()[0] - before) / 1e6
        tracemalloc.stop()
        del fns
    return out

def _per_call(fn, n: int) -> float:
    "Median of 5 runs of `n` calls, CPU seconds per call"
    ts = []
    for _ in range(5):
        t = time.process_time()
        for _ in range(n): fn()
        ts.append((time.process_time() - t) / n)
    return statistics.median(ts)

def warm_round() -> dict:
    "Warm valid calls over the corpus, beside jsonschema-rs; how many tools never take the checked way"
    import jsonschema_rs
    import funccall
    from funccall.core import inverse
    warnings.simplefilter('ignore')
    calls = corpus_calls()
    checked = []  # tools whose valid call took the checked way
    real = inverse._Checked.__call__
    def counting(self, kw, extra):
        checked.append(self.name)
        return real(self, kw, extra)
    ours = theirs = subset = subset_ref = 0.0
    first = []  # (funccall, jsonschema-rs) of the first `_FIRST` tools: the goal of issue 38 is stated on 100
    slow, nsub = set(), 0
    from fastcore import funccall as fc
    from fastcore.utils import dict2obj
    for t, args, more in calls:
        fn, v = funccall.mk_tool(disp, t), jsonschema_rs.validator_for(t["inputSchema"], validate_formats=False)
        for _ in range(inverse._HOT + 1): fn(**args)  # warm: the tool has its own code
        inverse._Checked.__call__ = counting
        try: fn(**args)
        finally: inverse._Checked.__call__ = real
        if checked: slow.add(t['name']); checked.clear()
        bare = _per_call(lambda a=args: disp('t', **a), 200)
        own, rs = _per_call(lambda f=fn, a=args: f(**a), 200) - bare, _per_call(lambda v=v, a=args: v.is_valid(a), 200)
        ours, theirs = ours + own, theirs + rs
        if len(first) < _FIRST: first.append((own, rs))
        if more is not None:
            ref = fc.mk_tool(disp_ref, dict2obj(t))
            bare = _per_call(lambda a=more: disp('t', **a), 200)
            subset += _per_call(lambda f=fn, a=more: f(**a), 200) - bare
            subset_ref += _per_call(lambda f=ref, a=more: f(**a), 100) - bare
            nsub += 1
    return {'ours': ours, 'rs': theirs, 'first': [sum(x) for x in zip(*first)], 'slow': sorted(slow), 'tools': len(calls), 'subset': subset, 'subset_ref': subset_ref, 'nsub': nsub}

_FIRST = 100

def _fresh(what: str) -> dict:
    out = subprocess.run([sys.executable, __file__, f'--{what}'], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])

def main(rounds: int = 5):
    runs = [_fresh('round') for _ in range(rounds)]
    med = lambda k: statistics.median(r[k] for r in runs) * 1e3
    ratio = statistics.median((r['build'] + r['first']) / (r['ref_build'] + r['ref_call']) for r in runs)
    print(f"python {sys.version.split()[0]}; {runs[0]['tools']} corpus tools; CPU time, median of {rounds} rounds, each in a fresh process\n")
    print(f"{'case (ms, all tools)':34} {'funccall':>9} {'fastcore':>9}")
    print(f"{'mk_tool, every tool':34} {med('build'):9.1f} {med('ref_build'):9.1f}")
    print(f"{'first call of each':34} {med('first'):9.1f} {med('ref_call'):9.1f}")
    print(f"{'second call of each':34} {med('second'):9.1f}")
    print(f"build + call once: {med('build') + med('first'):.1f} ms against {med('ref_build') + med('ref_call'):.1f} ms, "
          f"ratio {ratio:.2f} (target <= 2: {'yes' if ratio <= 2 else 'NO'})")
    mem = _fresh('memory')
    print(f"memory growth, build + call once: funccall {mem['ours']:.1f} MB, fastcore {mem['ref']:.1f} MB "
          f"(target <= 5 MB: {'yes' if mem['ours'] <= 5 else 'NO'})")
    w = _fresh('warm')
    r = w['ours'] / w['rs']
    print(f"\nwarm valid calls, all {w['tools']} tools: funccall's own cost {w['ours'] * 1e3:.2f} ms, jsonschema-rs is_valid "
          f"{w['rs'] * 1e3:.2f} ms, ratio {r:.2f} (target <= 1.5: {'yes' if r <= 1.5 else 'NO'})")
    r = w['first'][0] / w['first'][1]
    print(f"  the first {_FIRST} of them: funccall {w['first'][0] * 1e3:.3f} ms, jsonschema-rs {w['first'][1] * 1e3:.3f} ms, "
          f"ratio {r:.2f} (target <= 1.5: {'yes' if r <= 1.5 else 'NO'})")
    print(f"tools whose valid call takes the checked way: {len(w['slow'])} {w['slow'][:8]}")
    r = w['subset'] / w['subset_ref']
    print(f"every other optional argument given ({w['nsub']} tools): funccall {w['subset'] * 1e3:.2f} ms, fastcore "
          f"{w['subset_ref'] * 1e3:.2f} ms, ratio {r:.3f} (target <= 0.15: {'yes' if r <= 0.15 else 'NO'})")

if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1].startswith('--'):
        print(json.dumps({'--round': one_round, '--memory': memory_round, '--warm': warm_round}[sys.argv[1]]()))
    else: main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
