"""Pattern checks in bounded time, whatever the pattern: how long `re` may search, and an automaton for the rest.

`re` backtracks: `^(a?){28}a{28}$` tries 2^28 ways on 28 characters, `(a+)+$` 2^n on n, and no static rule catches
every such shape. So each pattern gets two things:

- `re_limit(parsed)` (`longest(text)`): the longest string `re` may search, from an upper bound on the ways its backtracking
  can go (`_ways`: a repeat multiplies the ways of its body for each round, alternatives add, a lookaround multiplies),
  kept under `RE_BUDGET`. None when the bound grows linearly (`^[a-z]+$`): `re` searches any length.
- `Automaton(parsed)`: the same pattern as a Thompson NFA, run as a DFA built lazily (Rabin-Scott sets of NFA states,
  each step cached per pattern), in pure Python: its time is linear in the string whatever the pattern, and every
  search counts its steps and gives up (None: "not known") past `STEPS`. It covers what a JSON Schema pattern needs
  and a finite automaton can do (literals, classes, `.`, anchors, `\\b`, groups, alternatives, repeats); a
  backreference, a lookaround, an atomic group or a possessive repeat can't be an automaton: `Automaton.of` is None.

Only a yes/no is asked (a schema's pattern matches or not), so greedy and lazy repeats are the same here.
"""
from __future__ import annotations

import functools, itertools, math, re

try: from re import _parser as _sre, _compiler as _sre_compile  # the stdlib's own regex parser and compiler
except ImportError: import sre_compile as _sre_compile, sre_parse as _sre  # Python 3.10

__all__ = ['re_limit', 'longest', 'Automaton', 'RE_BUDGET', 'STEPS']

RE_BUDGET = 100_000  # the most backtracking ways (times start positions and the pattern's width) `re` may take: a few ms
STEPS = 25_000       # the work an automaton search may do (a character, or an NFA state visited to find a new step): ~20 ms
_CAP = 10 ** 30      # ways beyond counting
_LOG_CAP = math.log(_CAP)

# --- how far `re` may search --------------------------------------------------------------------------------

def _chars(op, av) -> list | None:
    "The characters one parsed item matches, as (low, high) code point ranges; None when it isn't one plain character set"
    if op is _sre.LITERAL: return [(av, av)]
    if op is not _sre.IN: return None
    out = []
    for o, a in av:
        if o is _sre.LITERAL: out.append((a, a))
        elif o is _sre.RANGE: out.append(a)
        elif o is _sre.CATEGORY and a is _sre.CATEGORY_DIGIT: out.append((48, 57))
        else: return None  # a negation or a Unicode category: too wide to reason about
    return out

def _disjoint(a: list, b: list) -> bool: return all(x[1] < y[0] or y[1] < x[0] for x in a for y in b)

def _repeat(op) -> bool: return op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, 'POSSESSIVE_REPEAT', None))

def _separated(items: list, i: int) -> bool:
    """Is the repeat `items[i]` of one character set, with a required character elsewhere in the same sequence that it
    can't match, as in `([a-z0-9]+-)*`? Then each round of a repeat around it is pinned down by that character"""
    body = list(items[i][1][2])
    inner = _chars(*body[0]) if len(body) == 1 else None
    if inner is None: return False
    return any(j != i and (c := _chars(op, av)) is not None and _disjoint(inner, c) for j, (op, av) in enumerate(items))

def _mul(a: int, b: int) -> int: return min(a * b, _CAP)

def _pow(p: int, m: int) -> int: return _CAP if p > 1 and m * math.log(p) > _LOG_CAP else p ** m

def _ways(items, n: int, inner: bool = False) -> int:
    """An upper bound on the ways a backtracking search of the parsed `items` can go at one start, on `n` characters.
    A repeat inside a repeat (`inner`) pinned by a separator counts once: its giving back can't make a new way"""
    items, w = list(items), 1
    for i, (op, av) in enumerate(items):
        if _repeat(op):
            lo, hi, body = av
            top = max(lo, min(hi, n + 1))  # rounds beyond the string's length match nothing, but are still tried
            if inner and _separated(items, i): continue
            p = _ways(body, n, True)
            w = _mul(w, (top - lo + 1) * _pow(p, top) if p > 1 else top - lo + 1)
        elif op is _sre.SUBPATTERN: w = _mul(w, _ways(av[-1], n, inner))
        elif op is _sre.BRANCH: w = _mul(w, min(sum(_ways(x, n, inner) for x in av[1]), _CAP))
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT): w = _mul(w, _ways(av[1], n, inner))
        elif op is getattr(_sre, 'ATOMIC_GROUP', None): w = _mul(w, _ways(av, n, inner))
        elif op is _sre.GROUPREF_EXISTS: w = _mul(w, _ways(av[1], n, inner) + (_ways(av[2], n, inner) if av[2] else 1))
        if w >= _CAP: return _CAP
    return w

def _width(items) -> int:
    "How many parsed items the pattern holds, nested ones included: the work of one way, roughly"
    n = 0
    for op, av in items:
        n += 1
        if _repeat(op): n += _width(av[2])
        elif op is _sre.SUBPATTERN: n += _width(av[-1])
        elif op is _sre.BRANCH: n += sum(_width(x) for x in av[1])
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT): n += _width(av[1])
    return n

def re_limit(
    parsed,       # the pattern as `re`'s parser reads it
) -> int | None:  # the longest string `re` may search in bounded time; None for any (the bound grows linearly); -1 for none
    "How long a string `re` may search with this pattern, its backtracking bound kept under `RE_BUDGET`"
    items = list(parsed)
    anchored = bool(items) and items[0][0] is _sre.AT and items[0][1] in (_sre.AT_BEGINNING, _sre.AT_BEGINNING_STRING)
    width = _width(parsed)
    cost = lambda n: min(_mul(_ways(parsed, n), n + 1 if not anchored else 1) * width, _CAP)
    if cost(1000) <= RE_BUDGET * 10 and cost(2000) <= 2.01 * cost(1000): return None  # linear: time follows the length received
    lo, hi = 0, 1 << 20
    if cost(lo) > RE_BUDGET: return -1  # not even an empty string: the automaton, or nothing
    while lo < hi:  # the longest n with cost(n) within budget (cost grows with n)
        mid = (lo + hi + 1) // 2
        if cost(mid) <= RE_BUDGET: lo = mid
        else: hi = mid - 1
    return lo

@functools.lru_cache(maxsize=1024)  # (tools built from the same server share their patterns)
def longest(
    py: str,        # a pattern in Python's syntax
    flags: int = 0, # as `re.compile` takes them
) -> int | None:    # as `re_limit` says; -1 also when it can't be read
    "`re_limit` of a pattern's text"
    try: return re_limit(_sre.parse(py, flags))
    except (re.error, RecursionError, OverflowError): return -1

# --- the automaton --------------------------------------------------------------------------------------------

_CHAR, _SPLIT, _AT, _MATCH = range(4)
_ATOMS = (_sre.LITERAL, _sre.NOT_LITERAL, _sre.ANY, _sre.IN)
_MAX_STATES = 2_000       # NFA states a pattern may expand to (`(a{100}){100}` would be 10,000): building them stays ~20 ms
_MAX_HELD = 20_000        # NFA states held in the cached DFA states of one pattern, before they are dropped
_MAX_KNOWN = 4_096        # DFA steps cached for one pattern, before they are dropped: about a MB at most
_word = re.compile(r'\w').match

_B_EMPTY = re.search(r'\B', '') is not None  # `\B` in an empty string: no before Python 3.14, yes from it

class _Unsupported(Exception): pass

def _holds(at, first: bool, ch, boundary: bool) -> bool:
    "Does anchor `at` hold here: `first` at the start, `ch` the next character (None at the end), `boundary` between word and not"
    if at is _sre.AT_END_STRING: return ch is None
    if at is _sre.AT_BOUNDARY: return boundary
    if at is _sre.AT_NON_BOUNDARY: return not boundary and (_B_EMPTY or not (first and ch is None))
    return first  # ^, \A

class Automaton:
    "A pattern as a lazily built DFA: `search(s)` is True/False, or None when it took more than `STEPS` steps"

    @classmethod
    def of(cls, parsed) -> Automaton | None:
        "The automaton of a parsed pattern; None for what a finite automaton can't do (a backreference, a lookaround...)"
        if parsed.state.flags & (re.MULTILINE | re.LOCALE): return None
        try: return cls(parsed)
        except (_Unsupported, RecursionError): return None

    def __init__(self, parsed):
        self.flags, self.prog, self.bounds, self.testers = parsed.state.flags, [], False, {}
        self.start = self._seq(list(parsed), self._add(_MATCH, None, None), ())
        self.states, self.known, self.held = {}, {}, 0  # the DFA: its states (NFA state sets); (state, first, word before, char) -> (matched, next)

    def _add(self, op, arg, nxt) -> int:
        if len(self.prog) >= _MAX_STATES: raise _Unsupported
        self.prog.append((op, arg, nxt))
        return len(self.prog) - 1

    def _seq(self, items: list, nxt: int, wraps: tuple) -> int:
        "The NFA of `items` in order, leading to `nxt`; built backwards, so each part knows what follows it"
        for it in reversed(items): nxt = self._item(it, nxt, wraps)
        return nxt

    def _item(self, it, nxt: int, wraps: tuple) -> int:
        op, av = it
        if op in _ATOMS: return self._add(_CHAR, self._tester(it, wraps), nxt)
        if op is _sre.AT:
            if av not in (_sre.AT_BEGINNING, _sre.AT_BEGINNING_STRING, _sre.AT_END_STRING, _sre.AT_BOUNDARY, _sre.AT_NON_BOUNDARY): raise _Unsupported
            self.bounds |= av in (_sre.AT_BOUNDARY, _sre.AT_NON_BOUNDARY)
            return self._add(_AT, av, nxt)
        if op is _sre.SUBPATTERN:
            _, add, drop, body = av
            if (add | drop) & re.MULTILINE: raise _Unsupported
            return self._seq(list(body), nxt, wraps + ((add, drop),) if add or drop else wraps)
        if op is _sre.BRANCH: return self._add(_SPLIT, [self._seq(list(x), nxt, wraps) for x in av[1]], None)
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT): return self._repeat(*av, nxt, wraps)
        raise _Unsupported  # a backreference, lookaround, atomic group, possessive repeat: not a finite automaton

    def _repeat(self, lo: int, hi: int, body, nxt: int, wraps: tuple) -> int:
        body = list(body)
        if hi == _sre.MAXREPEAT:  # a loop: a split that enters the body again or leaves, after the body (x+) or before it (x*)
            loop = self._add(_SPLIT, None, None)
            entry = self._seq(body, loop, wraps)
            self.prog[loop] = (_SPLIT, [entry, nxt], None)
            if lo: lo, after = lo - 1, entry  # x{2,} is x then x+: the body once, not twice, so nested repeats don't double
            else: after = loop
        else:  # (x(x(x)?)?)?: each optional round may stop
            after = nxt
            for _ in range(hi - lo): after = self._add(_SPLIT, [self._seq(body, after, wraps), nxt], None)
        for _ in range(lo): after = self._seq(body, after, wraps)
        return after

    def _tester(self, it, wraps: tuple):
        "Does one character match this item: asked of `re` itself (one character: no backtracking), so both agree"
        if (f := self.testers.get((id(it), wraps))) is None:  # (a repeat's copies share their items' tests)
            one = it
            for add, drop in reversed(wraps): one = (_sre.SUBPATTERN, (None, add, drop, _sre.SubPattern(_sre.State(), [one])))
            f = self.testers[id(it), wraps] = _sre_compile.compile(_sre.SubPattern(_sre.State(), [one]), self.flags).match
        return f

    def _close(self, pcs, first: bool, word_before: bool, ch) -> tuple[bool, list, int]:
        "The NFA states waiting for a character at this place (a match may also start here), whether one matched, the work"
        prog, todo, seen, waiting = self.prog, [*pcs, self.start], set(), []
        word_after = ch is not None and _word(ch) is not None
        while todo:
            pc = todo.pop()
            if pc in seen: continue
            seen.add(pc)
            op, arg, nxt = prog[pc]
            if op is _CHAR: waiting.append(pc)
            elif op is _SPLIT: todo += arg
            elif op is _MATCH: return True, [], len(seen)
            elif _holds(arg, first, ch, word_before != word_after): todo.append(nxt)
        return False, waiting, len(seen)

    def _state(self, pcs) -> frozenset:
        "The DFA state of these NFA states, one object for equal sets (the cache's keys compare by identity first)"
        key = frozenset(pcs)
        if (got := self.states.get(key)) is None:
            if self.held > _MAX_HELD: self.states.clear(); self.known.clear(); self.held = 0  # memory stays bounded
            got = self.states[key] = key
            self.held += len(key)
        return got

    def _step(self, state: frozenset, first: bool, word_before: bool, ch) -> tuple[tuple, int]:
        "Whether a match ends before `ch`, and the state after it; and the work that took"
        matched, waiting, work = self._close(state, first, word_before, ch)
        if matched or ch is None: return (matched, state), work
        prog = self.prog
        return (False, self._state(prog[pc][2] for pc in waiting if prog[pc][1](ch))), work + len(waiting)

    def search(
        self,
        s: str,  # the string
    ) -> bool | None:  # does the pattern match somewhere in `s`; None when that took more than `STEPS` steps
        "Search `s` as `re.search` would, in time linear in `len(s)`, giving up after `STEPS` steps"
        if len(s) > STEPS: return None  # a step a character: it can't finish
        steps, known, bounds = 0, self.known, self.bounds
        state, first, before = self._state(()), True, False
        for ch in itertools.chain(s, (None,)):
            key = (state, first, before, ch)
            if (r := known.get(key)) is None:
                r, work = self._step(state, first, before, ch)
                if len(known) >= _MAX_KNOWN: known.clear()  # (a search goes on from the state it holds)
                known[key] = r
                steps += work
            steps += 1
            if r[0]: return True
            if ch is None: return False
            if steps > STEPS: return None
            state, first = r[1], False
            if bounds: before = _word(ch) is not None
