"""An incremental JSON reader: one JSON value, read from text that arrives in pieces of any size.

`JsonStream.feed(piece)` reads each character once, so a value costs time linear in its length however it is
cut (a 1 MB argument one character at a time included), and keeps no more than the value itself plus the text
of the token it is in. Runs of plain string characters are taken by one regular expression match, escapes are
decoded by `json.loads` itself, so a finished value is exactly what `json.loads` gives for the whole text.

While the text is unfinished, `.value` is what is complete of it: finished keys with their values, finished items,
and the string being read so far; a number or literal shows once it ends. `.value` is a view that later pieces
change; `.snapshot()` is a value that stays. A snapshot is handed out, not copied: the next piece copies each open
container the caller still holds before changing it (copy on write), and the string being read grows in place once the
caller let go of it, so reading a snapshot after every piece costs time linear in the text (on CPython; elsewhere, and
when the caller keeps every snapshot, the open containers and string are copied at each look). Text that is not JSON stops
the reader with `.error` set (said as `json.loads` says it); the caller then hands the whole text on, so it is
reported exactly where a finished response's malformed text is.
"""
from __future__ import annotations

import json, re, sys
from typing import Any

__all__ = ['JsonStream', 'MAX_DEPTH', 'held', 'joined']

MAX_DEPTH = 512  # containers inside containers; deeper text is refused as `json.loads` refuses what is too deep for it

_ws = re.compile(r'[ \t\n\r]*')
_plain = re.compile(r'[^"\\\x00-\x1f]*')  # string characters that stand for themselves
_numch = re.compile(r'[-+0-9.eE]*')
_number = re.compile(r'-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?')
_LITERALS = {'true': True, 'false': False, 'null': None, 'NaN': float('nan'), 'Infinity': float('inf'), '-Infinity': float('-inf')}
_high = re.compile(r'\\u[dD][89abAB][0-9a-fA-F]{2}')  # the first half of a surrogate pair: the second may follow

# what the reader expects next, outside a token
_VALUE, _FIRST_ITEM, _FIRST_KEY, _KEY, _COLON, _NEXT, _END = range(7)
# the token it is in
_STR, _KEYSTR, _NUM, _LIT = range(1, 5)

_refs = getattr(sys, 'getrefcount', None)  # None (PyPy): every snapshot taken is copied when written to

def _count(c: Any) -> int: return _refs(c)  # type: ignore[misc]  # (called only where `_refs` is not None)

def _as_held(c) -> int: return _count(c)  # counted as `held` counts: from inside a function `c` was passed to

def _calibrate() -> int:
    "What `held`'s count adds to the references of a value held by one list slot and one local (the calls' own)"
    slot: list[list[Any]] = [[]]
    c = slot[0]
    return _as_held(c) - 2

_OWN = _calibrate() if _refs else 0

def held(
    c: Any,     # a container the caller may hold a reference to
    ours: int,  # the references to `c` its owner knows of, the caller's local naming it included
) -> bool:      # whether anyone else holds it (always, where the interpreter can't tell)
    "Whether someone outside holds `c`: its owner must copy it before changing it"
    return _refs is None or _count(c) - _OWN > ours

def joined(
    pieces: list[str],  # a string in pieces, the first the string so far (no one else should hold it)
) -> str:               # the whole string, now the one piece of `pieces`
    """Join `pieces` into the first: where nobody else holds that one (the string a look showed, since dropped), CPython
    grows it in place, so joining after each new piece costs only what came since"""
    if len(pieces) > 1:
        s, rest = pieces[0], ''.join(pieces[1:])
        pieces.clear()
        s += rest
        pieces.append(s)
    return pieces[0]

class _Unset:
    def __repr__(self) -> str: return '<unset>'
_UNSET = _Unset()

class JsonStream:
    "Reads one JSON value from pieces of text: `feed` each, then `.done`, `.value` (partial until done) and `.error`"
    def __init__(self) -> None:
        self.stack: list[Any] = []   # the open containers, outermost first
        self.keys: list[Any] = []    # for each open container: the key whose value comes next (dicts), else None
        self.expect: int = _VALUE
        self.tok: int = 0
        self.chunks: list[str] = []  # the string (decoded) or number being read, in pieces
        self.limit: int = 256        # pieces kept before they are joined
        self.esc: str = ''           # an escape begun and not yet ended
        self.text: str = ''          # a literal being read (`true`, `null`...)
        self.root: Any = _UNSET      # the value read so far (`_UNSET` before it starts)
        self.done: bool = False      # whether the value is complete
        self.error: str | None = None  # why the text is no JSON value, once it is known
        self.pos: int = 0            # characters read before the latest piece
        self.end: int | None = None  # where an object or array ended: the count of characters up to its closing bracket
        self.too_deep: bool = False        # whether the text nests deeper than `MAX_DEPTH` (its `error` says where)
        self.shown: tuple[Any, Any] | None = None  # (key or index, the value it had) where `.value` put the string being read, in the top container
        self.shared: bool = False    # whether a snapshot was handed out since the open containers were last made our own

    # --- the value so far ----------------------------------------------------------------------------------

    @property
    def value(self) -> Any:
        "The value: whole once `done`; before, what is complete of it (a view: don't change it)"
        self._unshow()
        if self.tok != _STR or self.error: return None if self.root is _UNSET else self.root
        s = self._joined()
        if not self.stack: return s
        if self.shared: self._own()
        top = self.stack[-1]
        if isinstance(top, list): top.append(s); self.shown = (len(top) - 1, _UNSET)
        else: k = self.keys[-1]; self.shown = (k, top.get(k, _UNSET)); top[k] = s
        return self.root

    def snapshot(self) -> Any:
        "`.value` as it is now, kept from later pieces (they copy what the caller still holds before changing it)"
        v = self.value
        self.shared = bool(self.stack)  # finished containers never change: only the open ones are copied on write
        return v

    def _own(self):
        "Make each open container our own before changing it: one a snapshot's holder still holds is copied (and its children)"
        self.shared = False
        st = self.stack
        for i in range(len(st)):
            c = st[i]
            if not held(c, 3): continue  # its slot in `stack`, in its parent (or `root`), and `c`
            st[i] = new = dict(c) if isinstance(c, dict) else list(c)
            if i == 0: self.root = new
            elif isinstance(st[i - 1], list): st[i - 1][-1] = new  # an open container is the last item of its list...
            else: st[i - 1][self.keys[i - 1]] = new                # ...or the value of the key being read
            del c, new  # the old one's children are now held by it and their new parent: copied in turn

    def _unshow(self):
        "Take back the unfinished string `.value` put in its container"
        if self.shown is None: return
        if self.shared: self._own()
        (k, old), top = self.shown, self.stack[-1]
        self.shown = None
        if isinstance(top, list) or old is _UNSET: del top[k]
        else: top[k] = old

    def _string(self) -> str: return ''.join(self.chunks)

    def _joined(self) -> str: return joined(self.chunks) if self.chunks else ''

    def _compact(self):
        "Join the pieces of a long string: each character is copied a bounded number of times, and no piece list grows long"
        self.chunks = [self._string()]
        self.limit = max(256, len(self.chunks[0]) // 8)

    # --- reading -------------------------------------------------------------------------------------------

    def feed(
        self,
        piece: str,  # the next piece of the text
    ) -> bool:       # whether the value is now complete
        "Read `piece`; text after a complete value is ignored as long as it's whitespace, else an error"
        if self.error is not None: return False
        self._unshow()
        if self.shared: self._own()
        try: self._feed(piece)
        except _Bad as e: self.error = str(e)
        return self.done

    def close(self) -> bool:
        "The text has ended: a number at the top level ends with it; `.error` says why when the value is unfinished"
        self._unshow()
        if self.error is None and not self.done:
            if self.tok == _NUM and not self.stack:
                try: self._end_number()
                except _Bad as e: self.error = str(e)
            if not self.done and self.error is None: self.error = f'Unterminated JSON: the text ended at char {self.pos}'
        return self.done

    def _feed(self, s: str):
        i, n = 0, len(s)
        while i < n:
            tok = self.tok
            if tok == _STR or tok == _KEYSTR: i = self._in_string(s, i, n); continue
            if tok == _NUM:  # its pieces kept in `chunks`, as a string's: a long number in small pieces stays linear
                j = _numch.match(s, i).end()  # type: ignore[union-attr]  # (`*`: it always matches)
                if j > i: self.chunks.append(s[i:j])
                if j == n: break
                if s[j] == 'I' and self.chunks == ['-']: self.tok, self.text = _LIT, '-'; i = j; continue  # -Infinity
                self._end_number(); i = j; continue
            if tok == _LIT: i = self._in_literal(s, i, n); continue
            j = _ws.match(s, i).end()  # type: ignore[union-attr]  # (`*`: it always matches)
            if j == n: break
            i = self._structure(s[j], j)
        self.pos += n

    def _bad(self, what: str, i: int) -> _Bad: return _Bad(f'{what}: char {self.pos + i}')

    def _structure(self, c: str, i: int) -> int:
        "Read character `c` (at `i` of the piece), outside any token; the index to go on from"
        ex = self.expect
        if ex == _END: raise self._bad('Extra data', i)
        if ex in (_VALUE, _FIRST_ITEM):
            if c == ']' and ex == _FIRST_ITEM: self._close(i); return i + 1
            if c == '"': self.tok, self.chunks, self.limit = _STR, [], 256; return i + 1
            if c == '{': self._open({}, i); self.expect = _FIRST_KEY; return i + 1
            if c == '[': self._open([], i); self.expect = _FIRST_ITEM; return i + 1
            if c == '-' or '0' <= c <= '9': self.tok, self.chunks = _NUM, []; return i
            if c in 'tfnNI': self.tok, self.text = _LIT, ''; return i
            raise self._bad('Expecting value', i)
        if ex in (_FIRST_KEY, _KEY):
            if c == '"': self.tok, self.chunks, self.limit = _KEYSTR, [], 256; return i + 1
            if c == '}' and ex == _FIRST_KEY: self._close(i); return i + 1
            raise self._bad('Expecting property name enclosed in double quotes', i)
        if ex == _COLON:
            if c == ':': self.expect = _VALUE; return i + 1
            raise self._bad("Expecting ':' delimiter", i)
        top = self.stack[-1]  # _NEXT: after an item or a key's value
        if c == ',': self.expect = _VALUE if isinstance(top, list) else _KEY; return i + 1
        if c == ('}' if isinstance(top, dict) else ']'): self._close(i); return i + 1
        raise self._bad("Expecting ',' delimiter", i)

    def _open(self, c, i: int):
        if len(self.stack) >= MAX_DEPTH: self.too_deep = True; raise self._bad(f'Nested more than {MAX_DEPTH} deep', i)
        self._put(c)
        self.stack.append(c); self.keys.append(None)

    def _close(self, i: int):
        "Close the innermost container, its closing bracket at `i` of the piece"
        self.stack.pop(); self.keys.pop()
        if not self.stack: self.end = self.pos + i + 1
        self._after()

    def _put(self, v):
        "Place a value: the root, the next item, or the value of the pending key"
        if not self.stack: self.root = v; return
        top = self.stack[-1]
        if isinstance(top, list): top.append(v)
        else: top[self.keys[-1]] = v

    def _after(self):
        "A value has ended"
        if self.stack: self.expect = _NEXT
        else: self.expect, self.done = _END, True

    def _in_string(self, s: str, i: int, n: int) -> int:
        if self.esc: return self._in_escape(s, i, n)
        j = _plain.match(s, i).end()  # type: ignore[union-attr]  # (`*`: it always matches)
        if j > i:
            self.chunks.append(s[i:j])
            if len(self.chunks) > self.limit: self._compact()
        if j == n: return j
        c = s[j]
        if c == '\\': self.esc = '\\'; return j + 1
        if c != '"': raise self._bad('Invalid control character in a string', j)
        v = self._string()
        if self.tok == _KEYSTR:
            self.keys[-1] = v; self.expect = _COLON
        else: self._put(v); self._after()
        self.tok, self.chunks = 0, []
        return j + 1

    def _in_escape(self, s: str, i: int, n: int) -> int:
        "Add one character to the escape being read (escapes are short and rare); the index to go on from"
        e = self.esc + s[i]
        k = len(e)
        if k == 2 and e[1] != 'u': return self._escaped(e, i + 1)  # `\\n`, `\\"`... (a bad one is reported by decoding it)
        if k < 6: self.esc = e; return i + 1
        pair = _high.fullmatch(e[:6])  # the first half of a surrogate pair: `json.loads` joins it with the second
        if k == 6 and not pair: return self._escaped(e, i + 1)
        if k == 6 or (k == 7 and e[6] == '\\') or (k == 8 and e[7] == 'u') or 8 < k < 12: self.esc = e; return i + 1
        if k == 12: return self._escaped(e, i + 1)
        self._escaped(e[:6], i)  # no second half after all: the first decodes alone, and the character goes back
        if k == 8: self.esc = '\\'
        return i

    def _escaped(self, e: str, i: int) -> int:
        self._decode(e); self.esc = ''
        return i

    def _decode(self, e: str):
        try: self.chunks.append(json.loads(f'"{e}"'))
        except ValueError: raise _Bad(f'Invalid escape {e!r}: char {self.pos}') from None

    def _end_number(self):
        t = self._string()
        m = _number.fullmatch(t)
        if m is None: raise _Bad(f'Invalid number {t!r}: char {self.pos}')
        try: v = float(t) if m.group(1) or m.group(2) else int(t)
        except ValueError as e: raise _Bad(f'{e}: char {self.pos}') from None  # more digits than Python reads
        self.tok, self.chunks = 0, []
        self._put(v); self._after()

    def _in_literal(self, s: str, i: int, n: int) -> int:
        t = self.text
        while i < n and t not in _LITERALS:
            t += s[i]; i += 1
            if not any(k.startswith(t) for k in _LITERALS): raise self._bad(f'Expecting value ({t!r} is no JSON literal)', i - 1)
        self.text = t
        if t in _LITERALS: self.tok, self.text = 0, ''; self._put(_LITERALS[t]); self._after()
        return i

class _Bad(ValueError): pass
