"""How much a turn sends with and without deferred loading, for the largest real servers in the corpus.

    python benchmarks/bench_defer.py

Each server's tools (`tests/data/mcp_corpus/`, built as `MCPClient` builds them) in one toolbox, grouped under the
server's name. For each provider format: the characters of JSON the `tools` parameter of one request holds with
every definition loaded, and deferred (`deferred(box)`) before any search (Anthropic: every tool still sent, flagged
`defer_loading`, plus Claude's search tool: the API keeps deferred definitions out of the model's context, so the
request is no smaller but the context is; OpenAI Responses: one namespace per server with deferred functions, plus
`tool_search`; Chat Completions, Gemini, MCP: funccall's `search_tools` alone), and after one search has loaded five
tools ("+5 found": what the context then holds). Characters, not tokens: a tokenizer such as tiktoken downloads its tables at first use, which this machine can't.
"""
import json, sys, warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'tests'))
from corpus import corpus_servers  # noqa: E402

from funccall import Toolbox, mk_tool  # noqa: E402
from funccall.toolsets.search import deferred, find_tools  # noqa: E402

def box_of(server: str) -> Toolbox:
    box = Toolbox()
    for t in corpus_servers()[server]['tools']:
        try: box.add(mk_tool(lambda nm, /, **kw: None, t), group=server)
        except Exception: continue  # noqa: BLE001 - what MCPClient leaves out (a schema Python can't hold)
    return box

def size(defs) -> int: return len(json.dumps(defs, ensure_ascii=False))

def in_context(fmt: str, defs: list) -> int:
    "What of a deferred request enters the model's context, by the providers' documented rules"
    if fmt == 'anthropic': return size([d for d in defs if not d.get('defer_loading')])  # deferred tools stay out until referenced
    if fmt == 'responses':  # a namespace shows its name and description; a deferred function its name and description
        def seen(d):
            if d.get('type') == 'namespace': return {'name': d['name'], 'description': d['description']}
            return {'name': d['name'], 'description': d.get('description')} if d.get('defer_loading') else d
        return size([seen(d) for d in defs])
    return size(defs)

def main():
    warnings.simplefilter('ignore')  # providers' reports of what they had to change are not the point here
    print(f"{'server':16} {'tools':>5} {'format':10} {'all loaded':>11} {'deferred: sent':>15} {'in context':>11} {'+5 found':>9}")
    for srv in ('zereight-gitlab', 'twilio', 'atlassian', 'playwright', 'github'):
        for fmt in ('openai', 'responses', 'anthropic'):
            box = box_of(srv)
            lazy = deferred(box)
            full, defs = size(box.definitions(fmt)), lazy.definitions(fmt)
            found = find_tools(box, 'create an issue')  # five definitions loaded by a search, in whichever form the provider runs it
            lazy.call('search_tools', {'query': 'create an issue'})
            after = size(lazy.definitions(fmt)) if fmt == 'openai' else in_context(fmt, defs) + size(
                [box[nm].definition(fmt) for nm in found])
            print(f"{srv:16} {len(box):5} {fmt:10} {full:11,} {size(defs):15,} {in_context(fmt, defs):11,} {after:9,}")

if __name__ == '__main__': main()
