"""Tool search: funccall's `ToolIndex` side by side with `rank_bm25`, on the same pool, in one run.

    python benchmarks/bench_search.py

The pool is every tool of the real MCP servers in `tests/data/mcp_corpus/` (1,340 tools of 65 servers; a tool is
`server/name`, its group the server). The requests are `tests/data/tool_requests.json`: 180 requests for 60 tools,
written by hand before the search existed (the file says how). For each request: is the right tool first
(recall@1), among the first five (recall@5); and the CPU time per query (best of three rounds), the index built beforehand.

Baselines: `rank_bm25.BM25Okapi` over each tool's text (name, server, description, parameter names and
descriptions in one document), with the tokenizer its README shows (lower-case, split on spaces) and with a fairer
one (lower-case words, `\\w+`); and BM25Okapi over funccall's own tokens, which isolates what the fields and
weights add. rank_bm25 is a peer we measure against, never a dependency.
"""
import json, re, sys, time
from pathlib import Path

from rank_bm25 import BM25Okapi

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/'tests'))
from corpus import load_corpus  # noqa: E402

from funccall.core.inverse import tool_parts  # noqa: E402
from funccall.toolsets.search import ToolIndex, _params, tokens  # noqa: E402

def pool():
    "(id, server, tool) for every corpus tool"
    return [(f"{srv}/{t['name']}", srv, t) for srv, t in load_corpus()]

def requests():
    d = json.loads((ROOT/'tests'/'data'/'tool_requests.json').read_text())
    return [(q, p['tool']) for p in d['pairs'] for q in p['requests']]

def text(srv: str, t: dict) -> str:
    nm, desc, s = tool_parts(t)
    names, docs = _params(s)
    return ' '.join([nm, srv, desc, *names, *docs])

def funccall_ranker(items):
    idx = ToolIndex()
    for id_, srv, t in items: idx.add(t, group=srv, key=id_)
    return lambda q: idx.search(q, 5)

def bm25_ranker(items, tok):
    ids = [id_ for id_, _, _ in items]
    bm = BM25Okapi([tok(text(srv, t)) for _, srv, t in items])
    def rank(q):
        sc = bm.get_scores(tok(q))
        return [ids[i] for i in sorted(range(len(ids)), key=lambda i: -sc[i])[:5]]
    return rank

def evaluate(rank, reqs):
    r1 = r5 = 0
    best = float('inf')
    for _ in range(3):  # CPU time, the best of three rounds: the machine is shared
        t0 = time.process_time()
        results = [rank(q) for q, _ in reqs]
        best = min(best, time.process_time() - t0)
    ms = best * 1000 / len(reqs)
    for (_, right), got in zip(reqs, results):
        r1 += got[:1] == [right]
        r5 += right in got
    return r1 / len(reqs), r5 / len(reqs), ms

def main():
    items, reqs = pool(), requests()
    t0 = time.perf_counter()
    fc = funccall_ranker(items)
    fc('warm up')  # the collection-wide weights are worked out at the first search
    build = time.perf_counter() - t0
    rankers = {
        'funccall ToolIndex (BM25F)': fc,
        'rank_bm25 BM25Okapi, str.split': bm25_ranker(items, lambda s: s.lower().split()),
        'rank_bm25 BM25Okapi, \\w+ words': bm25_ranker(items, lambda s: re.findall(r'\w+', s.lower())),
        "rank_bm25 BM25Okapi, funccall's tokens": bm25_ranker(items, tokens),
    }
    print(f"pool: {len(items)} tools of {len({s for _, s, _ in items})} servers; {len(reqs)} requests for "
          f"{len({r for _, r in reqs})} tools; funccall index built in {build * 1000:.0f} ms")
    print(f"{'ranker':42} {'recall@1':>9} {'recall@5':>9} {'ms/query':>9}")
    rows = {nm: evaluate(r, reqs) for nm, r in rankers.items()}
    for nm, (r1, r5, ms) in rows.items(): print(f"{nm:42} {r1:9.3f} {r5:9.3f} {ms:9.3f}")
    base = rows['rank_bm25 BM25Okapi, \\w+ words']
    f = rows['funccall ToolIndex (BM25F)']
    print(f"funccall vs rank_bm25 (\\w+): recall@1 {f[0] - base[0]:+.3f}, recall@5 {f[1] - base[1]:+.3f}, "
          f"time per query {f[2] / base[2]:.2f}x")
    if '-v' in sys.argv:
        for q, right in reqs:
            got = fc(q)
            if right not in got: print(f"miss: {q!r} -> {right}; got {got[:3]}")

if __name__ == '__main__': main()
