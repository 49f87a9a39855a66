"""Tool search: which of many tools fits a request in plain words.

`ToolIndex` ranks tools with BM25F (BM25 over weighted fields, Robertson & Zaragoza 2009): a tool's name split
into words (`getPullRequest`, `get_pull_request` and `get-pull-request` all read `get pull request`), the group
or MCP server it belongs to, its description, its parameters' names, and their descriptions (docments comments
included). Words are lower-cased and lightly stemmed (`entries`/`entry`, `created`/`create`/`creating`), Chinese
and Japanese text is read as characters and character pairs, and a request's common verbs also look for the
verbs tool names use for the same action (`remove` finds `delete_*`, `show` finds `get_*` and `list_*`), at a
lower weight. Pure Python, no model: each tool is read once when it is added; the weights that depend on the
whole collection (document frequencies, mean field lengths) are worked out again, from the stored counts, at the
first search after a change.

`find_tools(box, query)` and the deferred definitions (`deferred(box).definitions(...)`, a toolbox wrapping `box`)
use an index per toolbox, kept in step with the toolbox's tools (`index_of`).
"""
from __future__ import annotations

import contextlib, functools, heapq, json, math, re, threading, weakref
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..core._typing import JsonDict
from ..core.inverse import tool_parts
from ..loop.messages import Found, references, tool_search_output, tool_searches
from ..core.providers import RENDERERS, provider_name
from ..loop.tools import Tool, Toolbox, as_toolbox
from .boxlike import ToolboxLike
from .wrap import view

__all__ = ['ToolIndex', 'tokens', 'index_of', 'find_tools', 'deferred', 'DeferredToolbox', 'references', 'Found', 'SEARCH_TOOL']

# --- words ----------------------------------------------------------------------------------------------

# camelCase humps, acronyms (`HTTPRequest` -> HTTP, Request), digits, other letters; CJK runs on their own
_word_re = re.compile(r'[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+|[^\W\d_]+')
_cjk_re = re.compile(r'[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]')
_STOP = frozenset('''a an and are as at be by can could do does for from has have how i if in into is it its me my of on or our
please should that the their them then there these this those to us using via was we what when where which will with would
you your'''.split())
_VOWEL = re.compile('[aeiouy]')

@functools.lru_cache(maxsize=1 << 16)  # tool texts repeat their words: each is stemmed once
def _stem(w: str) -> str:
    "A light suffix stripper (plurals, -ed, -ing, a final e), so the forms of a word meet; never below three letters"
    if len(w) <= 3 or not w.isascii(): return w
    if w.endswith('ies') and len(w) > 4: w = w[:-3] + 'y'
    elif w.endswith(('sses', 'shes', 'ches', 'xes', 'zes')): w = w[:-2]
    elif w.endswith('s') and not w.endswith(('ss', 'us', 'is')): w = w[:-1]
    for suf in ('ing', 'ed'):
        if w.endswith(suf) and len(w) - len(suf) >= 3 and _VOWEL.search(w[:-len(suf)]):
            w = w[:-len(suf)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in 'lsz': w = w[:-1]  # stopped -> stop (but install, pass)
            break
    if w.endswith('e') and len(w) > 4: w = w[:-1]  # stage/staged/staging all read `stag`
    return w

def tokens(
    text: str,  # any text: a request, a tool name, a description
) -> list[str]:  # its words as the index reads them, in order
    "The words of `text` as the index reads them: split at case changes, `_`, `-` and punctuation, lower-cased, stemmed, no stop words"
    out = []
    for w in _word_re.findall(text or ''):
        if _cjk_re.match(w):  # no spaces between words: each character, and each pair, is a term
            out += list(w) + [w[i:i + 2] for i in range(len(w) - 1)]
            continue
        w = w.lower()
        if w not in _STOP: out.append(_stem(w))
    return out

# The verbs tool names use for an action, and the words people use for it. A request's word also looks for the
# others of its class (at `_SYN_WEIGHT`): a user asks to "remove" what a tool calls `delete_*`.
_VERBS = [
    'get show display fetch retrieve read view see',
    'list show all enumerate',
    'create add make new generate',
    'delete remove erase drop destroy',
    'update change modify edit rename',
    'search find look lookup query',
    'run execute start launch',
]
_SYN: dict[str, set[str]] = {}
for _line in _VERBS:
    _ws = [_stem(w) for w in _line.split()]
    for _w in _ws: _SYN.setdefault(_w, set()).update(x for x in _ws if x != _w)
_SYN_WEIGHT = 0.3

# --- the index ----------------------------------------------------------------------------------------------

FIELDS = ('name', 'group', 'description', 'params', 'param_docs')
_WEIGHTS = {'name': 3.0, 'group': 2.0, 'description': 1.0, 'params': 1.0, 'param_docs': 0.5}
_B = {'name': 0.3, 'group': 0.0, 'description': 0.75, 'params': 0.5, 'param_docs': 0.75}  # how much a long field is discounted
_K1 = 1.2
_MAX_QUERY = 2000  # characters of a request read: a model's query of any length is answered in bounded time
_PARAM_DEPTH = 2  # nested object properties are words of the tool too, this far down

def _params(s: Any, depth: int = 0) -> tuple[list[str], list[str]]:
    "The property names and descriptions of schema `s`, nested objects and array items included"
    names: list[str] = []
    docs: list[str] = []
    if not isinstance(s, dict) or depth > _PARAM_DEPTH: return names, docs
    props = s.get('properties')
    for k, ps in (props.items() if isinstance(props, dict) else ()):
        names.append(str(k))
        if isinstance(ps, dict):
            if isinstance(d := ps.get('description'), str): docs.append(d)
            for sub in (ps, ps.get('items')):
                n, d = _params(sub, depth + 1)
                names += n; docs += d
    return names, docs

# what `_compile` works out: the tool names in order, term -> postings, term -> idf, tool name -> its number
_Compiled = tuple[list[str], dict[str, list[tuple[int, float]]], dict[str, float], dict[str, int]]

class ToolIndex:
    "Tools ranked for a request in plain words (BM25F over name, group, description and parameters)"
    def __init__(
        self,
        weights: dict[str, float] | None=None,  # field -> weight, over `FIELDS`' defaults
    ):
        self.weights: dict[str, float] = {**_WEIGHTS, **(weights or {})}  # field -> weight
        self._docs: dict[str, dict[str, Counter[str]]] = {}  # tool name -> its term counts per field
        self._compiled: _Compiled | None = None  # term -> [(doc number, weighted term frequency)], and the idf of each term

    def __len__(self) -> int: return len(self._docs)
    def __contains__(self, nm: object) -> bool: return nm in self._docs

    def add(
        self,
        tool: Any,       # a tool's schema in any format funccall reads (canonical, MCP, OpenAI...), a `Tool`, or its name
        group: str='',   # the group or MCP server it belongs to
        key: str | None=None,  # the name `search` gives back for it (default: the tool's name)
    ) -> ToolIndex:
        "Add (or replace) one tool; its words are read here, once"
        nm, desc, s = tool_parts(getattr(tool, 'schema', tool))
        names, docs = _params(s)
        texts = {'name': nm, 'group': group or '', 'description': desc, 'params': ' '.join(names), 'param_docs': ' '.join(docs)}
        self._docs[key or nm] = {f: Counter(tokens(texts[f])) for f in FIELDS}
        self._compiled = None
        return self

    def remove(self, nm: str) -> None:
        "Forget tool `nm`"
        if self._docs.pop(nm, None) is not None: self._compiled = None

    def _compile(self) -> _Compiled:
        "The weights that depend on the whole collection, from the stored counts"
        docs = list(self._docs.values())
        n = len(docs) or 1
        avg = {f: (sum(sum(d[f].values()) for d in docs) / n) or 1.0 for f in FIELDS}
        post: dict[str, list[tuple[int, float]]] = {}
        for i, d in enumerate(docs):
            tf: dict[str, float] = {}
            for f in FIELDS:
                c = d[f]
                if not c: continue
                norm = self.weights[f] / (1 - _B[f] + _B[f] * sum(c.values()) / avg[f])
                for t, k in c.items(): tf[t] = tf.get(t, 0.0) + k * norm
            for t, w in tf.items(): post.setdefault(t, []).append((i, w))
        idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in post.items()}
        self._compiled = (list(self._docs), post, idf, {nm: i for i, nm in enumerate(self._docs)})
        return self._compiled

    def scores(
        self,
        query: str,  # the request, in plain words
    ) -> dict[str, float]:  # tool name -> score, for the tools that match at all
        "Every matching tool's BM25F score for `query`"
        names, post, idf, _ = self._compiled or self._compile()
        terms: dict[str, float] = {}
        for t in tokens(query[:_MAX_QUERY]):
            terms[t] = 1.0
            for s in _SYN.get(t, ()): terms.setdefault(s, _SYN_WEIGHT)
        acc: dict[int, float] = {}
        for t, qw in terms.items():
            if (p := post.get(t)) is None: continue
            w = qw * idf[t] * (_K1 + 1)
            for i, tf in p: acc[i] = acc.get(i, 0.0) + w * tf / (tf + _K1)
        return {names[i]: v for i, v in acc.items()}

    def search(
        self,
        query: str,    # the request, in plain words
        limit: int=5,  # at most this many names
    ) -> list[str]:    # tool names, best first; ties keep the order tools were added in
        "The names of the tools that best fit `query`"
        pos = (self._compiled or self._compile())[3]
        return [nm for nm, _ in heapq.nlargest(limit, self.scores(query).items(), key=lambda kv: (kv[1], -pos[kv[0]]))]

# --- one index per toolbox ------------------------------------------------------------------------------

_indexes: weakref.WeakKeyDictionary[Any, tuple[ToolIndex, dict[str, tuple[Tool, str]]]] = weakref.WeakKeyDictionary()

_lock = threading.Lock()  # a batch may search from several threads: one brings the index up to date at a time

def index_of(
    box: ToolboxLike,  # a `Toolbox`
) -> ToolIndex:  # its index, with the tools it holds now
    "The search index of `box`, brought up to date with its tools: new ones read, removed ones forgotten, changed ones read again"
    with _lock:
        try: idx, seen = _indexes.get(box, (None, None))
        except TypeError: idx, seen = None, None  # (a box no weak key can hold, unhashable like a dataclass: indexed afresh)
        if idx is None or seen is None: idx, seen = ToolIndex(), {}
        groups: Mapping[str, str] = getattr(box, 'groups', {})
        for nm in [nm for nm in seen if nm not in box.tools]: idx.remove(nm); del seen[nm]
        for nm, t in box.tools.items():
            g = groups.get(nm, '')
            if (old := seen.get(nm)) is None or old[0] is not t or old[1] != g:  # a tool replaced under its name is read again
                idx.add(t, g)
                seen[nm] = (t, g)
        with contextlib.suppress(TypeError): _indexes[box] = (idx, seen)
        if idx._compiled is None: idx._compile()  # here, under the lock, not in a search racing another thread's update
    return idx

# --- deferred definitions ---------------------------------------------------------------------------------

def find_tools(
    box: ToolboxLike,  # a `Toolbox`
    query: str,    # what the model or user wants done, in plain words
    limit: int=5,  # at most this many
) -> list[str]:    # tool names, best first
    "The tools of `box` that best fit `query` (BM25F over names, groups, descriptions and parameters)"
    return index_of(box).search(query, limit)

SEARCH_TOOL = 'search_tools'
_ANTHROPIC_SEARCH = {'bm25': {'type': 'tool_search_tool_bm25_20251119', 'name': 'tool_search_tool_bm25'},
                     'regex': {'type': 'tool_search_tool_regex_20251119', 'name': 'tool_search_tool_regex'}}
_QUERY = {'type': 'object', 'properties': {'query': {'type': 'string', 'description': 'what you want to do, in a few words'}},
          'required': ['query'], 'additionalProperties': False}
_CLIENT_SEARCH_DOC = "Find tools for a task among the deferred ones: their definitions are loaded for you to call"
_SEARCHES = (None, 'bm25', 'regex', 'server', 'client')

def _summary(box: ToolboxLike, names: list[str]) -> str:
    "What `search_tools` answers: the tools found, one line each, now loaded"
    if not names: return "No tool matches; try other words."
    lines = [f"- {nm}: {((box.tools[nm].description or '').strip().splitlines() or [''])[0][:200]}" for nm in names]
    return "These tools are loaded now; call them directly:\n" + '\n'.join(lines)

def _namespaced(box: ToolboxLike, tools: list[Tool], defs: list[JsonDict]) -> list[JsonDict]:
    "Responses definitions with each group's tools in a namespace, placed where its first tool is (so the order never changes)"
    out: list[JsonDict] = []
    spaces: dict[str, JsonDict] = {}
    for t, d in zip(tools, defs):
        if (g := box.groups.get(t.name)) is None: out.append(d); continue
        if g not in spaces:
            spaces[g] = {'type': 'namespace', 'name': g, 'description': box.group_docs.get(g) or f"The tools of {g}", 'tools': []}
            out.append(spaces[g])
        spaces[g]['tools'].append(d)
    return out

class DeferredToolbox(Toolbox):
    """A toolbox's tools, most of them sent only once the model searches for them (`deferred` makes one): Anthropic's
    `defer_loading` and tool-search tool, OpenAI Responses' namespaces and `tool_search`, elsewhere funccall's
    `search_tools(query)` tool, which this toolbox runs, and the tools it loaded. It shares the wrapped toolbox's tools
    and settings; `loaded` (the tools the model found, sent from now on) is its own: `clear()` it for a new conversation"""
    keep: tuple[str, ...]  # the tools always sent
    search_by: str | None  # how the model searches (`deferred`'s `search`)
    loaded: list[str]    # the tools found, in the order found
    search_tool: Tool    # the `search_tools(query)` tool

    def _tool(self, name: Any) -> Tool | None:
        "A tool by name, as the wrapped toolbox finds it; and `search_tools`, unless a tool of the toolbox is named so"
        return super()._tool(name) or (self.search_tool if name == SEARCH_TOOL else None)

    def load(
        self,
        names: list[str],  # tool names, as `find_tools` gives them
    ) -> list[str]:    # the ones not loaded before
        "Load tools (in the order found, after the ones loaded before, so a prompt cache keeps its prefix)"
        new = [nm for nm in names if nm in self.tools and nm not in self.loaded]
        self.loaded.extend(new)
        return new

    def definitions(
        self,
        fmt: str='openai',         # 'openai', 'responses', 'anthropic', 'gemini', 'mcp' or 'canonical'
        strict: bool | None=None,  # strict mode (OpenAI, Anthropic) for all (default: each tool's own `strict`)
        rename: bool=False,        # rewrite names the provider rejects; `call` finds them by those names
        report: Any=None,          # a `providers.Report` to fill, 'raise' on a lossy change, or None to warn
    ) -> list[JsonDict]:           # the definitions for this turn
        "The definitions for this turn: the kept tools, the provider's tool search (or `search_tools`), the tools found so far"
        keep = self._kept()
        render = lambda ts: view(self, Toolbox, tools={t.name: t for t in ts}).definitions(fmt, strict, rename, report)
        tools, search = list(self), self.search_by
        if (fmt := provider_name(fmt, (*RENDERERS, 'canonical'))) == 'anthropic':
            st = _ANTHROPIC_SEARCH.get(search or 'bm25')
            if search != 'client' and st is None:
                raise ValueError(f"search={search!r}: Claude's tool search is 'bm25', 'regex' or 'client' (funccall's own)")
            defs = render(tools + [self.search_tool] if search == 'client' else tools)
            first = [defs.pop()] if search == 'client' or st is None else [dict(st)]
            return first + [d if t.name in keep else {**d, 'defer_loading': True} for t, d in zip(tools, defs)]
        if fmt == 'openai_responses':
            if search not in (None, 'server', 'client'): raise ValueError(f"search={search!r}: OpenAI's tool search runs on the 'server' or 'client'")
            defs = [d if t.name in keep else {**d, 'defer_loading': True} for t, d in zip(tools, render(tools))]
            ts: JsonDict = {'type': 'tool_search'}
            if search == 'client': ts = {**ts, 'execution': 'client', 'description': _CLIENT_SEARCH_DOC, 'parameters': _QUERY}
            return _namespaced(self, tools, defs) + [ts]
        # providers without a tool search of their own: the kept tools, `search_tools`, then what it loaded, in the order loaded
        found = [self.tools[nm] for nm in self.loaded if nm in self.tools and nm not in keep]
        return render([t for t in tools if t.name in keep] + [self.search_tool] + found)

    def _kept(self) -> set[str]:
        if unknown := [nm for nm in self.keep if nm not in self.tools]: raise ValueError(f"No tool named {unknown[0]!r} to keep loaded")
        return set(self.keep)

    def answer_items(
        self,
        items: list[Any],  # a Responses output's items (SDK objects or dicts)
    ) -> list[JsonDict]:  # a `tool_search_output` item for each client-executed `tool_search_call`, with the tools found, loaded
        """Answer OpenAI's client-executed tool searches with funccall's search. A search whose arguments nest deeper than
        16 levels (or hold over 10,000 values) finds nothing: its output is `incomplete`, and the other searches still run"""
        out = []
        for call_id, args in tool_searches(items):
            args = _search_args(args)
            found = [] if args is _BAD else _found(self, args)
            self.load(found)
            tools = [self.tools[nm] for nm in found]
            out.append(tool_search_output(call_id, _namespaced(self, tools, [t.definition('responses') for t in tools]), args is not _BAD))
        return out

def deferred(
    box: Any,                  # a `Toolbox`, or what `Toolbox` takes
    keep: list[str] | tuple[str, ...] | str=(),  # the names of the tools always sent (the others only once the model finds them)
    search: str | None=None,   # how the model searches: None for the provider's own; Claude's 'bm25' (default) or 'regex', or
                               #   funccall's 'client'; Responses' 'server' (default) or 'client' (answered by `run_tool_calls`)
    limit: int=5,              # the most tools one `search_tools` call finds
) -> DeferredToolbox:          # a toolbox whose `definitions` defer, and which runs `search_tools` and client searches
    """`box`'s tools, most sent only once the model searches for them: `deferred(box).definitions('anthropic')`. It shares
    `box`'s tools and settings; run the model's calls with it (`run_tool_calls(d, response)`): it answers `search_tools`"""
    if search not in _SEARCHES: raise ValueError(f"search={search!r}: use None, 'bm25', 'regex' (Claude), 'server' (Responses) or 'client'")
    if isinstance(keep, str): keep = (keep,)
    d = view(as_toolbox(box), DeferredToolbox, keep=tuple(keep), search_by=search, loaded=[])
    def search_tools(
        query: str,  # what you want to do, in a few words
    ):
        "Find the tools for a task: the best matches are loaded for you to call, and listed here"
        found = find_tools(d, query, limit)
        d.load(found)
        return Found(_summary(d, found), found)
    d.search_tool = Tool(search_tools, read_only=True)
    return d

def _by_path(box: ToolboxLike, paths: list[Any]) -> list[str]:
    "The tools `paths` name: a tool's name, `namespace.name`, or a namespace (all its tools); other text is searched for"
    found: list[str] = []
    for p in paths[:50]:
        p = str(p)
        if p in box.tools or (p := p.rsplit('.', 1)[-1]) in box.tools: names = [p]
        elif p in box.group_docs or p in box.groups.values(): names = [nm for nm, g in box.groups.items() if g == p]
        else: names = find_tools(box, p)
        found += [nm for nm in names if nm not in found]
    return found

_ARGS_DEPTH = 16      # the most levels a client search's arguments nest; a search needs two ({'paths': [...]})
_ARGS_ITEMS = 10_000  # the most values in them

def _too_nested(v: Any) -> bool:
    "Do `v`'s lists and dicts nest deeper than `_ARGS_DEPTH`, or hold more than `_ARGS_ITEMS` values? Asked level by level, never recursing"
    level, seen, todo = 0, 0, [v]
    while todo:
        if level > _ARGS_DEPTH or (seen := seen + len(todo)) > _ARGS_ITEMS: return True
        todo = [x for c in todo if isinstance(c, (dict, list, tuple)) for x in (c.values() if isinstance(c, dict) else c)]
        level += 1
    return False

_BAD = object()  # arguments too deep or too large to search with

def _search_args(args: Any) -> Any:
    "A client search's arguments, JSON text read (text that isn't JSON is the query); `_BAD` when they nest too deep"
    if isinstance(args, str):
        try: args = json.loads(args)
        except RecursionError: return _BAD  # nested deeper than the JSON reader recurses
        except ValueError: return {'query': args}
    return _BAD if _too_nested(args) else args

def _found(box: ToolboxLike, args: Any) -> list[str]:
    "The tools a client search's arguments ask for"
    paths = args.get('paths') if isinstance(args, dict) else None
    if isinstance(paths, list): return _by_path(box, paths)  # the shape of OpenAI's default client search: names to load
    q = args.get('query') if isinstance(args, dict) else None
    if not isinstance(q, str): q = ' '.join(map(str, args.values())) if isinstance(args, dict) else str(args or '')
    return find_tools(box, q)
