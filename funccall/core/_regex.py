"""Pattern checks in bounded time, whatever the pattern: how long `re` may search, and an automaton for the rest.

`re` backtracks: `^(a?){28}a{28}$` tries 2^28 ways on 28 characters, `(a+)+$` 2^n on n, and no static rule catches
every such shape. So each pattern gets two things:

- `re_limit(parsed)` (`longest(text)`): the longest string `re` may search, from an upper bound on the ways its backtracking
  can go (`_ways`: a repeat multiplies the ways of its body for each round, alternatives add, a lookaround multiplies)
  and the characters each start walks before it gives back (`_reach`: `(?=(?:\\w\\s){60}){100}` looks 12,000 ahead),
  kept under `RE_BUDGET`. None when the bound grows linearly (`^[a-z]+$`): `re` searches any length, and `re_rate`
  says what a character costs (a linear pattern that walks far at each start draws on the budget below).
- `Automaton(parsed)`: the same pattern as a Thompson NFA, run as a DFA built lazily (Rabin-Scott sets of NFA states,
  each step cached per pattern), in pure Python: its time is linear in the string whatever the pattern, and every
  search counts its steps and gives up (None: "not known") past `STEPS`. It covers what a JSON Schema pattern needs
  and a finite automaton can do (literals, classes, `.`, anchors, `\\b`, groups, alternatives, repeats); a
  backreference, a lookaround, an atomic group or a possessive repeat can't be an automaton: `Automaton.of` is None.

Only a yes/no is asked (a schema's pattern matches or not), so greedy and lazy repeats are the same here.

One argument may hold many strings, and one string meet many patterns: `searcher` gives each pattern its search, and
every costly search (the automaton's, or `re`'s where a bound applies or its rate is high) made within one `budgeted` call (a check of one
argument) draws on one budget, `CHECK_STEPS`; once it is spent, such searches answer "not known" at once.
"""
from __future__ import annotations

import functools, itertools, math, re, threading
from typing import Any, Callable, TypeVar

try: from re import _parser as _sre, _compiler as _sre_compile  # type: ignore[attr-defined]  # the stdlib's own regex parser and compiler (3.11+)
except ImportError: import sre_compile as _sre_compile, sre_parse as _sre  # Python 3.10

__all__ = ['re_limit', 're_rate', 'longest', 'Automaton', 'searcher', 'bounded_search', 'budgeted', 'RE_BUDGET', 'STEPS', 'CHECK_STEPS']

RE_BUDGET = 100_000  # the most backtracking ways (times start positions and the pattern's width) `re` may take: a few ms
STEPS = 25_000       # the work an automaton search may do (a character, or an NFA state visited to find a new step): 20-60 ms
CHECK_STEPS = 40_000 # the work all the costly searches of one check may do together: under 100 ms
RE_STEPS = 1_000     # what a search by `re` at its longest counts as (its bound, RE_BUDGET ways, takes up to ~2 ms)
_FREE_RATE = 10      # a linear pattern whose bound's work a character is at most this searches free (`^[a-z]+$`: 4)
_MAX_RANGES = 32     # a class of more ranges than this is not compared for `_separated` (comparing is quadratic)
_MAX_SEPARATORS = 8  # the character sets of a sequence compared with each repeat in it, at most
_CAP = 10 ** 30      # ways beyond counting
_LOG_CAP = math.log(_CAP)

# --- how far `re` may search --------------------------------------------------------------------------------

def _chars(op, av) -> list | None:
    "The characters one parsed item matches, as (low, high) code point ranges; None when it isn't one plain character set"
    if op is _sre.LITERAL: return [(av, av)]
    if op is not _sre.IN: return None
    if len(av) > _MAX_RANGES: return None  # (too many to compare: counted as not separating, the safe side)
    out = []
    for o, a in av:
        if o is _sre.LITERAL: out.append((a, a))
        elif o is _sre.RANGE: out.append(a)
        elif o is _sre.CATEGORY and a is _sre.CATEGORY_DIGIT: out.append((48, 57))
        else: return None  # a negation or a Unicode category: too wide to reason about
    return out

def _disjoint(a: list, b: list) -> bool: return all(x[1] < y[0] or y[1] < x[0] for x in a for y in b)

def _repeat(op) -> bool: return op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, 'POSSESSIVE_REPEAT', None))

def _separators(items: list) -> list:
    "The character sets of a sequence (its first few): what may pin down each round of a repeat in it"
    return list(itertools.islice((c for op, av in items if (c := _chars(op, av)) is not None), _MAX_SEPARATORS))

def _separated(rep, seps: list) -> bool:
    """Is the repeat `rep` of one character set, with a required character elsewhere in the same sequence (`seps`) that
    it can't match, as in `([a-z0-9]+-)*`? Then each round of a repeat around it is pinned down by that character"""
    body = list(rep[1][2])
    inner = _chars(*body[0]) if len(body) == 1 else None
    return inner is not None and any(_disjoint(inner, c) for c in seps)

def _mul(a: int, b: int) -> int: return min(a * b, _CAP)

def _pow(p: int, m: int) -> int: return _CAP if p > 1 and m * math.log(p) > _LOG_CAP else p ** m

def _ways(items, n: int, inner: bool = False) -> int:
    """An upper bound on the ways a backtracking search of the parsed `items` can go at one start, on `n` characters.
    A repeat inside a repeat (`inner`) pinned by a separator counts once: its giving back can't make a new way"""
    items, w = list(items), 1
    seps = _separators(items) if inner else []  # (once a sequence: a pattern of thousands of repeats stays linear)
    for it in items:
        op, av = it
        if _repeat(op):
            lo, hi, body = av
            top = max(lo, min(hi, n + 1))  # rounds beyond the string's length match nothing, but are still tried
            if seps and _separated(it, seps): continue
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

def _reach(items) -> int:
    """The most characters the parsed `items` can match or look at (`_CAP`: no end): what one start of a search may walk
    before it gives anything back, as `(?:(?:\\s\\w){60}){1,100}` or `(?=(?:(?:\\s\\w){60}){100})` walk 12,000 at each"""
    n = 0
    for op, av in items:
        if op in _ATOMS: n += 1
        elif _repeat(op): n += _CAP if av[1] == _sre.MAXREPEAT else _mul(av[1], _reach(av[2]))
        elif op is _sre.SUBPATTERN: n += _reach(av[-1])
        elif op is _sre.BRANCH: n += max(_reach(x) for x in av[1])
        elif op is getattr(_sre, 'ATOMIC_GROUP', None): n += _reach(av)
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT): n += _reach(av[1])  # (it matches nothing, but walks as far)
        elif op is not _sre.AT: return _CAP  # a backreference, a conditional: no end known
        if n >= _CAP: return _CAP
    return n

def _cost(parsed) -> Callable[[int], int]:
    "The bound on `re`'s work searching a string of n characters with this pattern, as a function of n"
    items = list(parsed)
    anchored = bool(items) and items[0][0] is _sre.AT and items[0][1] in (_sre.AT_BEGINNING, _sre.AT_BEGINNING_STRING)
    width, reach = _width(parsed), _reach(parsed)
    # at each start: its ways, each a few steps an item, and the characters it walks (forward, or looking around) first
    return lambda n: min(_mul(_ways(parsed, n) * width + min(n, reach), n + 1 if not anchored else 1), _CAP)

def re_rate(
    parsed,  # the pattern as `re`'s parser reads it, one `re_limit` finds linear
) -> float:  # its bound's work a character
    "The work a character of a linear pattern's search: `(?<=(?:\\s\\w){60})c` is linear, but walks 120 characters at each"
    return _cost(parsed)(1000) / 1001

def re_limit(
    parsed,       # the pattern as `re`'s parser reads it
) -> int | None:  # the longest string `re` may search in bounded time; None for any (the bound grows linearly); -1 for none
    "How long a string `re` may search with this pattern, its backtracking bound kept under `RE_BUDGET`"
    cost = _cost(parsed)
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
_WORD = {False: re.compile(r'\w').match, True: re.compile(r'\w', re.ASCII).match}  # by the ASCII flag, as `\b` reads it

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
        self.word = _WORD[bool(self.flags & re.ASCII)]
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
            if av in (_sre.AT_BOUNDARY, _sre.AT_NON_BOUNDARY):
                if any((add | drop) & re.ASCII for add, drop in wraps): raise _Unsupported  # (?a:\b): a word of its own
                self.bounds = True
            return self._add(_AT, av, nxt)
        if op is _sre.SUBPATTERN:
            _, add, drop, body = av
            if (add | drop) & re.MULTILINE: raise _Unsupported
            return self._seq(list(body), nxt, wraps + ((add, drop),) if add or drop else wraps)
        if op is _sre.BRANCH: return self._add(_SPLIT, [self._seq(list(x), nxt, wraps) for x in av[1]], None)
        if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT): return self._repeat(*av, nxt, wraps)  # type: ignore[call-arg]  # (`av`: lo, hi, body)
        raise _Unsupported  # a backreference, lookaround, atomic group, possessive repeat: not a finite automaton

    def _repeat(self, lo: int, hi: int, body, nxt: int, wraps: tuple) -> int:
        body = list(body)
        if max(lo, 0 if hi == _sre.MAXREPEAT else hi - lo) > _MAX_STATES: raise _Unsupported  # (?:){4000000000}: an empty body adds no state to count
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
        word_after = ch is not None and self.word(ch) is not None
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
        """Search `s` as `re.search` would, in time linear in `len(s)`, giving up after `STEPS` steps (or fewer: what is
        left of the budget of the `budgeted` check running)"""
        most = _left(STEPS)
        if len(s) > most: return None  # a step a character: it can't finish
        found, steps = self._search(s, most)
        _spend(steps)
        return found

    def _search(self, s: str, most: int) -> tuple[bool | None, int]:  # type: ignore[return]  # (the loop returns at its last item, None)
        "`search`'s answer, within `most` steps, and the steps it took"
        steps, known, bounds, word = 0, self.known, self.bounds, self.word
        state, first, before = self._state(()), True, False
        for ch in itertools.chain(s, (None,)):
            key = (state, first, before, ch)
            if (r := known.get(key)) is None:
                r, work = self._step(state, first, before, ch)
                if len(known) >= _MAX_KNOWN: known.clear()  # (a search goes on from the state it holds)
                known[key] = r
                steps += work
            steps += 1
            if r[0]: return True, steps
            if ch is None: return False, steps
            if steps > most: return None, steps
            state, first = r[1], False
            if bounds: before = word(ch) is not None

# --- one budget for one check ---------------------------------------------------------------------------------

_budget = threading.local()  # `left`: the steps left to the `budgeted` call running in this thread (None: no such call)

_F = TypeVar('_F', bound=Callable[..., Any])

def budgeted(
    f: _F,        # a check: everything it searches shares one budget
) -> _F:          # `f`, with `CHECK_STEPS` for all the costly searches of one call (a call inside it shares the outer one's)
    "`f` with one search budget a call, so many strings, or many patterns, can't add up to a long check"
    @functools.wraps(f)
    def check(*args, **kw):
        if getattr(_budget, 'left', None) is not None: return f(*args, **kw)
        _budget.left = CHECK_STEPS
        try: return f(*args, **kw)
        finally: _budget.left = None
    return check  # type: ignore[return-value]  # (a wrapper of the same signature)

def _left(most: int) -> int:
    "The steps a search may take: `most`, or what is left of the running check's budget when less"
    left = getattr(_budget, 'left', None)
    return most if left is None else min(most, left)

def _spend(n: int):
    if getattr(_budget, 'left', None) is not None: _budget.left = max(0, _budget.left - n)

def searcher(
    find: Callable,          # `re`'s search of the pattern
    limit: int | None,       # `re_limit`'s answer: the longest string `find` may search (None: any)
    auto: Automaton | None,  # the pattern's automaton, for longer strings (None: they are not searched)
    rate: float = 0,         # for a linear pattern (`limit` None), `re_rate`'s answer
    unknown=True,            # what a search gives when whether `s` matches isn't known in bounded time
) -> Callable:               # s -> falsy when `s` doesn't match; truthy when it does; else `unknown`
    "A pattern's search in bounded time: `re` up to `limit` characters, the automaton beyond, within the check's budget"
    if limit is None and rate <= _FREE_RATE: return find
    def search(s: str):
        if limit is not None and len(s) > limit:
            found = auto.search(s) if auto is not None else None
            return unknown if found is None else found or None
        # (a bound that grows faster than the length is below its chord: this is above it)
        cost = 1 + (int(len(s) * rate) * RE_STEPS // RE_BUDGET if limit is None else RE_STEPS * (len(s) + 1) // (limit + 1))
        if _left(cost) < cost: return unknown  # the check's budget is spent
        _spend(cost)
        return find(s)
    return search

def bounded_search(
    py: str,        # a pattern in Python's syntax (a developer's own: `Field(pattern=...)`)
    unknown=True,   # what a search gives when it can't finish in bounded time
) -> Callable:      # as `searcher` gives it
    """`searcher` for a pattern's text, its `$` the end of the text as JSON Schema and pydantic read it (Python's also
    matches before a final newline): `re` within its bound, the automaton beyond; `re.error` when it doesn't compile"""
    parsed = _sre.parse(py)
    if not parsed.state.flags & re.MULTILINE: _dollar_is_end(parsed)
    try: limit = re_limit(parsed)
    except RecursionError: limit = -1  # nested deeper than the parser went: the automaton, or nothing
    auto = Automaton.of(parsed) if limit is not None else None
    return searcher(_sre_compile.compile(parsed, parsed.state.flags).search, limit, auto, re_rate(parsed) if limit is None else 0, unknown)

def _dollar_is_end(items, depth: int = 0) -> None:
    "Each `$` in parsed pattern `items` made `\\Z`, in place; not inside a `(?m:...)` group, where it ends a line"
    if depth > 200: raise RecursionError  # (as deep as the parser goes)
    for i, (op, av) in enumerate(items):
        if op is _sre.AT and av is _sre.AT_END: items[i] = (op, _sre.AT_END_STRING)
        elif op is _sre.SUBPATTERN and not (av[1] | av[2]) & re.MULTILINE: _dollar_is_end(av[3], depth + 1)
        elif op is _sre.BRANCH:
            for x in av[1]: _dollar_is_end(x, depth + 1)
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) or op is getattr(_sre, 'POSSESSIVE_REPEAT', None): _dollar_is_end(av[2], depth + 1)
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT): _dollar_is_end(av[1], depth + 1)
        elif op is getattr(_sre, 'ATOMIC_GROUP', None): _dollar_is_end(av, depth + 1)
