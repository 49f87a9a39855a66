"""Streamed responses: tool calls assembled as the events arrive, each handed over the moment its arguments close.

    stream = ToolCallStream()
    for event in client.chat.completions.create(..., stream=True):
        for call in stream.feed(event): ...    # a `ToolCall`, as soon as its arguments' JSON object ends
        stream.partial                         # {call id: its arguments so far} for the calls still streaming
    messages.append(stream.message())          # the assistant's message, as the non-streamed loop appends it

`run_tool_calls(toolbox, events)` (and `run_tool_calls_async`) take a stream of events too: each call starts as
soon as it is complete, while the rest of the stream arrives, and the answers come back in call order. To keep the
assistant's message, hand it `stream.watch(events)`: the stream reads the events as they pass.

Events are those of the four providers, as their SDKs give them or in their JSON (dict) form, the provider told
from the first event: OpenAI Chat Completions chunks (`choices[0].delta.tool_calls`, several calls interleaved by
`index`), OpenAI Responses events (`response.output_item.added`, `response.function_call_arguments.delta`, ...),
Anthropic Messages events (`content_block_start`, `input_json_delta`, `content_block_stop`, ...) and Gemini chunks
(whole `function_call` parts; on Vertex AI with `stream_function_call_arguments`, `partial_args` until
`will_continue` ends). Arguments are read by funccall's incremental JSON reader (`_jsonstream`), in time linear
in their length however they are cut. Arguments that are not JSON (Anthropic's `eager_input_streaming`
sends them unchecked) complete at the provider's stop event and keep their text, so running the call tells the
model what is wrong, exactly as for a finished response. A call runs with its object as it closed: what the model
sends after the closing brace (it shouldn't) is not kept, so `.message()` holds the arguments the call ran with;
arguments that are a JSON value but no object (a string, a number) are kept whole, and running reports them.
A Responses call completes at its `function_call_arguments.done` (or `output_item.done`), which repeats its arguments.

Every event is untrusted. What a stream keeps grows only with what it received, and at most to `max_chars`
characters of text, thinking and arguments (each other item kept counting as one): past it, `StreamTooLong`. A call
that can't be what it claims is refused as it comes: a `ToolCall` whose `arguments` are the `ToolInputError` saying
why, which running reports without running anything. Refused are a call begun at an index another item began at or
at an index that is no integer; one without an id, with an id used before or with one that is no text (answered
under an id of ours, or as text); arguments that are not text or nest deeper than `MAX_DEPTH`; Responses arguments
that change at `done`; Gemini `partial_args` whose path skips list items, nests deeper than `MAX_DEPTH` or goes into
a value of another kind, or whose value is not of its kind, and a Gemini call the response ended inside of.
`.message()` records exactly the calls handed over, in the response's order, each with the arguments it ran with
(a refused one with what was sent), so no answer lacks its call. `.partial` hands out the arguments so far without
copying them: the next event copies what the caller still holds before changing it (copy on write), so a look kept
across events costs a copy of the arguments still open at each event (quadratic for a long array): let go of each
before the next event.
"""
from __future__ import annotations

import copy, io, math, re, threading  # (asyncio: imported where first needed, not by `import funccall`)
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Callable, Literal, Union

from ..core._inputs import ToolInputError, short
from ..core._jsonstream import MAX_DEPTH, JsonStream, held, joined
from ..core._run import run_sync
from .messages import CALL_PROVIDERS, ToolCall, tool_call
from ..core.providers import provider_name
from .results import ToolResult
from .tools import Toolbox
from ..core._typing import JsonDict

__all__ = ['ToolCallStream', 'StreamTooLong', 'MAX_CHARS', 'Events', 'Watched', 'is_stream', 'run_stream', 'run_stream_async']

Events = Union[Iterable[Any], AsyncIterable[Any]]  # a stream's events: an SDK's stream, a list of events, or an async iterable of them

_ANTHROPIC = frozenset({'message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta',
                        'message_stop', 'ping', 'error'})

def _at(o: Any, k: str) -> Any: return o.get(k) if isinstance(o, dict) else getattr(o, k, None)

def _plain(o: Any) -> JsonDict:
    "An SDK object as the dict its API sends (no nulls); a dict as it is (a copy); anything else, a model's mistake, as an empty one"
    return o.model_dump(exclude_none=True) if hasattr(o, 'model_dump') else dict(o) if isinstance(o, dict) else {}

def _listed(o: Any) -> list[Any] | tuple[Any, ...]:
    "A list an event holds; anything else (a malformed event's) as an empty one"
    return o if isinstance(o, (list, tuple)) else ()

def _event_provider(e: Any) -> str | None:
    "The provider whose stream event `e` is, from its shape; None when it is no event"
    t = _at(e, 'type')
    if isinstance(t, str):
        if t.startswith('response.'): return 'openai_responses'
        if t in _ANTHROPIC: return 'anthropic'
        if t == 'chunk' and _at(e, 'chunk') is not None: return 'openai'  # `client.chat.completions.stream()`'s events
    if isinstance(e, dict): return 'openai' if 'choices' in e else 'gemini' if 'candidates' in e else None
    return 'openai' if hasattr(e, 'choices') else 'gemini' if hasattr(e, 'candidates') else None

MAX_CHARS: int = 10_000_000
"The most characters of text, thinking and arguments a `ToolCallStream` takes by default (each other item kept counts as one)"

class StreamTooLong(ValueError):
    "A stream sent more than its `max_chars`: it is cut off there, its calls not yet complete never run"

def _key(k: Any) -> Any:
    "The provider's index of an item as a key: an integer as it is, anything else (a model's mistake) by a short `repr`"
    return k if type(k) is int else ('not an integer', repr(k)[:80])

def _text_id(v: Any) -> tuple[Any, str | None]:
    "A call's id as text, and why the call is refused when it was something else: the message and the answer then carry that text"
    if v is None or isinstance(v, str): return v, None
    return short(v, 60), f'its id is a {type(v).__name__}, not text'

def _order(k: Any) -> float:
    "Where an item begun at index `k` goes in the response: by its index; after all others when it has none that is an integer"
    return k if type(k) is int else math.inf

class _Refusable:
    "A call being read, which the stream may refuse: `error` says why (the first reason found)"
    __slots__ = ()
    error: str | None  # (a slot of each subclass)
    def refuse(self, why: str | None) -> None:
        if self.error is None: self.error = why  # type: ignore[misc]  # (`error` is a slot of each subclass)

class _Call(_Refusable):
    "A call (or any block with streamed arguments) being read: its JSON reader and its text; `error` says why it is refused"
    __slots__ = ('pos', 'id', 'name', 'reader', 'raw', 'done', 'start', 'final', 'error')
    def __init__(self, pos: tuple[float, int], id: Any, name: Any, start: Any=None, error: str | None=None):
        self.pos, self.id, self.name, self.start, self.error = pos, id, name, start, error
        self.final: JsonDict | None = None
        self.reader, self.raw, self.done = JsonStream(), io.StringIO(), False

    def add(self, piece: Any) -> bool:
        """Read a piece of the arguments; whether they just closed. After the object closed only white space is kept: the
        call is what closed (a refused call's closing is no matter: it ends with its block)"""
        r = self.reader
        if not self.done and not r.done and type(piece) is str:  # the usual piece: inside the arguments
            closed = r.feed(piece)
            if not closed and r.error is None: self.raw.write(piece); return False
            return self._read(piece, closed)
        return self._late(piece)

    def _read(self, piece: str, closed: bool) -> bool:
        "A piece read that closed the arguments, or found them no JSON"
        if self.reader.too_deep: self.refuse(f'its arguments nest more than {MAX_DEPTH} deep')  # (json.loads may take them)
        if closed and self.reader.end is not None:  # an object or array (a value of no other kind is kept whole: running refuses it)
            cut = self.reader.end - (self.reader.pos - len(piece))
            piece = piece[:cut] + (tail if (tail := piece[cut:]).isspace() else '')
        self.raw.write(piece)
        return closed and self.error is None

    def _late(self, piece: Any) -> bool:
        "A piece after the call is complete or its object closed, or one that is no text"
        if self.done or not piece: return False
        if not isinstance(piece, str):
            self.refuse(f'a piece of its arguments is a {type(piece).__name__}, not text')
            return False
        if self.reader.done:
            if piece.isspace(): self.raw.write(piece)
            return False
        return self._read(piece, self.reader.feed(piece))  # (a subclass of str)

    @property
    def text(self) -> str: return self.raw.getvalue()

    @property
    def args(self) -> JsonDict | str:
        "The arguments as the call carries them: the object when read whole, else the text (which running reports)"
        r = self.reader
        return r.value if r.done and isinstance(r.value, dict) else self.text

    @property
    def input(self) -> JsonDict:
        "The arguments as an Anthropic `tool_use` block holds them: invalid JSON wrapped, as Anthropic's docs advise"
        r = self.reader
        if r.done: return r.value if isinstance(r.value, dict) else {'INVALID_JSON': self.text}
        if r.error is None and not self.done: return v if isinstance(v := r.snapshot(), dict) else {}  # later pieces leave the message alone
        return {'INVALID_JSON': self.text}  # (also a call the stream ended inside of: it ran with its text)

class _Text:
    "A content block whose text grows (`text`, `thinking`), kept in pieces: long text in small deltas stays linear"
    __slots__ = ('block', 'key', 'buf')
    def __init__(self, block: JsonDict, key: str):
        self.block, self.key, self.buf = block, key, io.StringIO()
        if isinstance(t := block.get(key), str): self.buf.write(t)

    def out(self) -> JsonDict: return {**self.block, self.key: self.buf.getvalue()}

    def cite(self, c: JsonDict) -> None:
        "Add an Anthropic citation (to a list of its own: adding stays linear)"
        cs = self.block.get('citations')
        if not isinstance(cs, list): cs = self.block['citations'] = []
        cs.append(c)

_path = re.compile(r"""\$(?:\.[^.\[]+|\[\d+\]|\[['"][^'"]*['"]\])*""")  # `$`, then `.key`, `[0]`, `['key']`...
_step = re.compile(r"""\.([^.\[]+)|\[(\d+)\]|\[['"]([^'"]*)['"]\]""")
_KINDS: dict[str, type | tuple[type, ...]] = {'string_value': str, 'stringValue': str, 'number_value': (int, float), 'numberValue': (int, float),
          'bool_value': bool, 'boolValue': bool, 'null_value': object, 'nullValue': object}

def _steps(path: Any) -> list[str | int] | str:
    "The keys and indices of JSON path `path` (`$.a.b[0]`); or why it can't be read"
    if not isinstance(path, str): return f'a JSON path that is a {type(path).__name__}, not text'
    if _path.fullmatch(path) is None: return f'the JSON path {short(path, 60)} is none funccall reads ($.key, [0], [\'key\'])'
    keys = [k if k else q if not i else int(i) if len(i) <= 18 else -1 for k, i, q in _step.findall(path)]  # -1: too far, refused
    if not keys: return 'a value for the path $, which names no argument'
    if len(keys) > MAX_DEPTH: return f'a JSON path more than {MAX_DEPTH} deep'
    return keys

class _GeminiCall(_Refusable):
    """A Gemini call whose arguments stream as `partial_args`: each a JSON path and a value, a string in pieces. A list grows
    only by its next item, no path goes deeper than `MAX_DEPTH`, and a snapshot handed out is copied before it is changed"""
    __slots__ = ('first', 'key', 'pos', 'args', 'cont', 'id', 'name', 'error', 'shared')
    def __init__(self, first: JsonDict, key: str, pos: tuple[float, int]):
        self.first, self.key, self.pos = first, key, pos
        self.id: Any = None
        self.args: JsonDict = {}
        self.cont: tuple[Any, Any, list[Any]] | None = None  # (path, keys, pieces) of the string being read in pieces
        self.name, self.error, self.shared = _at(first[key], 'name'), None, False

    def add(self, fc: Any) -> int:
        "Read the `partial_args` of a piece of the call; how many characters they held"
        pa = _at(fc, 'partial_args') or _at(fc, 'partialArgs') or ()
        if not isinstance(pa, (list, tuple)): self.refuse(f'partial_args that are a {type(pa).__name__}, not a list'); return 1
        return sum(self._one(a) for a in pa)

    def _one(self, a: Any) -> int:
        path = _at(a, 'json_path') or _at(a, 'jsonPath')
        kind, v = next(((k, v) for k in _KINDS if (v := _at(a, k)) is not None), ('null_value', None))
        n = (len(path) if isinstance(path, str) else 1) + (len(v) if isinstance(v, str) else 1)
        if self.error is not None: return n
        if not isinstance(v, _KINDS[kind]) or (isinstance(v, bool) and 'bool' not in kind):
            self.refuse(f'its {kind} at {short(path, 60)} is a {type(v).__name__}'); return n
        if 'null' in kind: v = None
        more = isinstance(v, str) and bool(_at(a, 'will_continue') or _at(a, 'willContinue'))
        if isinstance(v, str) and self.cont is not None and self.cont[0] == path:  # the rest of a string: joined when looked at
            self.cont[2].append(v)
        else:
            self._flush()
            keys = _steps(path)
            why = keys if isinstance(keys, str) else self._set(keys, v, path)
            if why is not None: self.refuse(why); return n
            self.cont = (path, keys, [v]) if more else None
        if not more: self._flush(); self.cont = None
        return n

    def _flush(self) -> None:
        "Put the string being read in pieces in its place, joined"
        if self.cont is None or len(self.cont[2]) == 1: return
        path, keys, pieces = self.cont
        self._set(keys, None, path)  # its place lets go of it, so the string can grow in place (the place exists: the first piece is there)
        self._set(keys, joined(pieces), path)

    def _set(self, keys: list[str | int], v: Any, path: str) -> str | None:
        "Set the value at `keys`, making the containers on the way; None, or why it can't be"
        node: Any = self.args
        if self.shared and held(node, 2): self.args = node = dict(node)  # a snapshot's holder keeps its own
        for k, nxt in zip(keys, [*keys[1:], None]):
            if isinstance(k, int) != isinstance(node, list):
                return f'the JSON path {short(path, 60)} takes {"an index" if isinstance(k, int) else "a key"} of a {type(node).__name__}'
            if isinstance(k, int):
                if not 0 <= k <= len(node): return f"the JSON path {short(path, 60)} skips items: the list has {len(node)}"
                if k == len(node): node.append(None)
            if nxt is None: node[k] = v; return None
            child = node[k] if isinstance(k, int) else node.get(k)
            if child is None: child = node[k] = [] if isinstance(nxt, int) else {}
            elif not isinstance(child, (dict, list)): return f'the JSON path {short(path, 60)} goes into a {type(child).__name__}'
            elif self.shared and held(child, 2): child = node[k] = copy.copy(child)
            node = child
        return None

    def snapshot(self) -> JsonDict:
        "The arguments so far, kept from later pieces (they copy what the caller still holds before changing it)"
        self._flush()
        self.shared = True
        return self.args

    def part(self) -> JsonDict:
        "The call as a message holds it, its arguments a snapshot (kept from later pieces, as `.partial`'s)"
        fc = {k: v for k, v in self.first[self.key].items() if k not in ('will_continue', 'willContinue', 'partial_args', 'partialArgs')}
        return {**self.first, self.key: {**fc, 'args': self.snapshot()}}

def _streaming(c: _Call | _GeminiCall) -> bool: return c.error is None and isinstance(c.id, (str, type(None)))  # (any other id refuses the call)

class _Items:
    """What a stream holds, item by item: each placed in the response's order, its characters counted against `max_chars`,
    each call handed over once, as `tool_call` reads it (each provider's reader below adds to it)"""
    provider: str | None  # 'openai', 'openai_responses', 'anthropic' or 'gemini'; None until the first event tells
    others: Literal['raise', 'skip']  # a call funccall can't answer: 'raise' `UnansweredCall`, or 'skip' it
    max_chars: int        # the most characters of text, thinking and arguments it takes
    stop_reason: Any      # why the response ended, when the provider says (`finish_reason`, `stop_reason`): as it says it

    def __init__(self) -> None:
        self._items: dict[Any, Any] = {}  # position (index, arrival) -> _Call, _Text, _GeminiCall, or a finished block/item (dict)
        self._at: dict[Any, tuple[float, int]] = {}  # the provider's index of an item (`_key`) -> the position of the last item begun there
        self._seq = 0                  # items begun so far
        self._used = 0                 # characters (and items) taken, against `max_chars`
        self._open: dict[tuple[float, int], _Call] = {}  # position -> each _Call whose arguments still stream
        self._whole: set[tuple[float, int]] = set()  # positions of whole items already read for calls (Responses)
        self._done: list[tuple[tuple[float, int], ToolCall]] = []  # (position, ToolCall) of each complete call
        self._ids: set[str] = set()    # the ids of the calls handed over
        self._text, self._refusal = io.StringIO(), io.StringIO()
        self._gcall: _GeminiCall | None = None  # a Gemini call whose arguments are streaming (Vertex AI)
        self.stop_reason = None

    if TYPE_CHECKING:
        def end(self) -> list[ToolCall]: ...  # (`ToolCallStream.end`: every call still open complete)

    def _grow(self, n: int) -> None:
        "Take `n` more characters (or items) against `max_chars`"
        self._used += n
        if self._used > self.max_chars:
            raise StreamTooLong(f"The stream sent more than max_chars={self.max_chars:,} characters of text, thinking and arguments: "
                                "it is cut off here; pass a larger max_chars= to ToolCallStream if responses this long are expected")

    def _count(self, piece: Any) -> Any:
        "`piece`, its characters taken against `max_chars` when it is text"
        if type(piece) is str:
            self._used += len(piece)
            if self._used > self.max_chars: self._grow(0)
        elif isinstance(piece, str): self._grow(len(piece))
        return piece

    def _write(self, buf: io.StringIO, piece: Any) -> None:
        "Add a piece of text (anything else, a model's mistake, is left out)"
        if isinstance(piece, str) and piece: self._grow(len(piece)); buf.write(piece)

    def _place(self, order: float | None, key: Any=None) -> tuple[float, int]:
        "A position for an item beginning now: by `order` (None: as it comes), after any item begun before at the same index"
        self._grow(1)
        self._seq += 1
        pos = (self._seq if order is None else order, self._seq)
        if key is not None: self._at[key] = pos
        return pos

    def _lookup(self, k: Any) -> Any: return self._items.get(self._at.get(k if type(k) is int else _key(k)))

    def _index_problem(self, k: Any) -> str | None:
        "Why an item can't begin at the provider's index `k`: it is no integer, or an item began there before"
        if type(k) is not int: return f'its index is a {type(k).__name__}, not an integer'
        if k in self._at: return f'its index {k} is another item\'s'
        return None

    def _call(self, pos: tuple[float, int], id: Any, name: Any, start: Any=None, why: str | None=None) -> _Call:
        id, bad = _text_id(id)
        c = self._items[pos] = self._open[pos] = _Call(pos, id, name, start, why or bad)
        return c

    def _end(self, c: _Call) -> list[ToolCall]:
        "Call `c` is complete (its arguments closed, or its block or the response ended)"
        p = self.provider
        if c.id is None:  # no answer could name it: refused, with an id of ours in both the message and the answer
            c.id = f'no-id-{c.pos[1]}'
            c.refuse('it came without an id')
        if p == 'openai': item = {'id': c.id, 'type': 'function', 'function': {'name': c.name, 'arguments': c.args}}
        elif p == 'openai_responses': item = {'type': 'function_call', 'call_id': c.id, 'name': c.name, 'arguments': c.args}
        else: item = {**c.start, 'id': c.id, 'input': c.args} if c.text else {**c.start, 'id': c.id}  # a block without deltas came whole
        c.done = True
        self._open.pop(c.pos, None)
        return self._hand(c.pos, item, c.error)

    def _hand(self, pos: tuple[float, int], item: Any, why: str | None=None) -> list[ToolCall]:
        """Hand over the call `item` holds (nothing for a block funccall doesn't run), as `tool_call` reads it; refused when
        `why` says so, or when its id is another call's: it then carries that error as its arguments, and runs nothing"""
        tc = tool_call(item, self.provider, len(self._done), self.others)  # type: ignore[arg-type]  # (told by the first event)
        if tc is None: return []
        if why is None and tc.id in self._ids: why = f'its id {short(tc.id, 60)} is another call\'s'
        if why is not None: tc = tc._replace(arguments=ToolInputError(f'refused as it streamed: {why}; it did not run'))
        if isinstance(tc.id, str): self._ids.add(tc.id)
        self._done.append((pos, tc))
        return [tc]

class _ChatEvents(_Items):
    "The events of OpenAI Chat Completions: chunks whose `tool_calls` deltas interleave calls by `index`"

    def _openai(self, e: Any) -> list[ToolCall]:
        if _at(e, 'type') == 'chunk': e = _at(e, 'chunk')  # the SDK helper's chunk event
        ch = next((c for c in _listed(_at(e, 'choices')) if (_at(c, 'index') or 0) == 0), None)  # the first choice, as `tool_calls` reads
        if ch is None: return []
        d, res = _at(ch, 'delta') or {}, []
        self._write(self._text, _at(d, 'content'))
        self._write(self._refusal, _at(d, 'refusal'))
        for f in _listed(_at(d, 'tool_calls')):
            c, fn = self._openai_call(f), _at(f, 'function')
            if fn is not None and c.add(self._count(_at(fn, 'arguments'))): res += self._end(c)
        if reason := _at(ch, 'finish_reason'): self.stop_reason = reason; res += self.end()
        return res

    def _openai_call(self, f: Any) -> _Call:
        "The call a `tool_calls` delta adds to: the one begun at its index, or a new one (refused when the index is taken or no integer)"
        i, cid, fn = _at(f, 'index'), _at(f, 'id'), _at(f, 'function')
        nm = _at(fn, 'name') if fn is not None else None
        if i is None:  # some OpenAI-compatible servers send each call whole, without an index: its id tells
            k = ('id', cid) if isinstance(cid, str) else ('no index', self._seq)
            c = self._items.get(self._at.get(k))
            if c is not None and not c.done: return c
            return self._call(self._place(None, k), cid, nm)  # (a second call with an id already used is refused when complete)
        c = self._lookup(i)
        if c is not None and not (cid and c.id and cid != c.id):  # a piece of the call begun at this index
            if c.id is None: c.id, bad = _text_id(cid); c.refuse(bad)
            if not c.done: c.name = c.name or nm  # (a name after the call was handed over is not what ran)
            return c
        why = self._index_problem(i)
        return self._call(self._place(_order(i), _key(i)), cid, nm, why=why)

class _ResponsesEvents(_Items):
    "The events of OpenAI Responses: output items added, their arguments' deltas, and `done` events repeating them"

    def _openai_responses(self, e: Any) -> list[ToolCall]:
        "A function call completes at its `done` events, which repeat its arguments: one whose arguments there differ is refused"
        t, k = _at(e, 'type'), _at(e, 'output_index')
        if t == 'response.output_item.added':
            item = _at(e, 'item')
            why, pos = self._index_problem(k), self._place(_order(k), _key(k))
            if _at(item, 'type') == 'function_call':
                self._call(pos, _at(item, 'call_id'), _at(item, 'name'), _plain(item), why).add(self._count(_at(item, 'arguments')))
            elif _at(item, 'type') == 'message': self._items[pos] = _Text(_plain(item), 'text')  # its text grows until it's done
            else: self._items[pos] = _plain(item)
        elif t == 'response.function_call_arguments.delta':
            if isinstance(c := self._lookup(k), _Call): c.add(self._count(_at(e, 'delta')))
        elif t == 'response.output_text.delta':
            x, piece = self._lookup(k), _at(e, 'delta')
            self._write(self._text, piece)
            if isinstance(x, _Text) and isinstance(piece, str): x.buf.write(piece)
        elif t in ('response.function_call_arguments.done', 'response.output_item.done'): return self._responses_done(e, k)
        elif t in ('response.completed', 'response.incomplete', 'response.failed'):
            self.stop_reason: Any = t.rsplit('.', 1)[1]
            return self.end()
        return []

    def _responses_done(self, e: Any, k: Any) -> list[ToolCall]:
        x, item = self._lookup(k), _at(e, 'item')
        if isinstance(x, _Call):
            if item is not None: x.final = _plain(item)
            if x.done: return []
            args = _at(e, 'arguments') if item is None else _at(item, 'arguments')
            if args is not None and not isinstance(args, str): x.refuse(f'its arguments at done are a {type(args).__name__}, not text')
            elif args is not None and not x.text: x.add(self._count(args))  # nothing streamed: the call came whole here
            elif args is not None and args != x.text: x.refuse('its arguments at done are not those streamed')
            return self._end(x)
        if item is None: return []
        why, pos = None, self._at.get(_key(k))
        if pos is None or pos in self._whole:  # a second whole item at an index: a place of its own, and no call
            why, pos = self._index_problem(k), self._place(_order(k), _key(k))
        self._whole.add(pos)
        self._items[pos] = item = _plain(item)  # an item that came whole: calls of other kinds (custom tools) are read from it
        if 'call_id' in item: item['call_id'], bad = _text_id(item['call_id'])
        return self._hand(pos, item, why or bad if 'call_id' in item else why)  # pyright: ignore[reportPossiblyUnboundVariable]  # (read when set)

    def _responses_item(self, x: Any) -> JsonDict:
        if isinstance(x, _Call): return {**(x.final or x.start), 'call_id': x.id, 'name': x.name, 'arguments': x.text}  # as it ran
        if not isinstance(x, _Text): return x
        return {**x.block, 'content': [{'type': 'output_text', 'text': x.buf.getvalue(), 'annotations': []}]}  # its text so far

class _AnthropicEvents(_Items):
    "The events of Anthropic Messages: content blocks started, their deltas (text, thinking, `input_json_delta`), stopped"

    def _anthropic(self, e: Any) -> list[ToolCall]:
        t, k, res = _at(e, 'type'), _at(e, 'index'), []
        if t == 'content_block_delta':  # first: nearly every event is one
            d, x = _at(e, 'delta'), self._items.get(self._at.get(k if type(k) is int else _key(k)))  # (`_lookup`, inline: it's hot)
            dt = _at(d, 'type')
            if dt == 'input_json_delta' and isinstance(x, _Call):
                if x.add(self._count(_at(d, 'partial_json'))): res += self._end(x)
            elif dt == 'text_delta' and isinstance(x, _Text):
                if isinstance(piece := _at(d, 'text'), str): self._write(x.buf, piece); self._text.write(piece)
            elif dt == 'thinking_delta' and isinstance(x, _Text): self._write(x.buf, _at(d, 'thinking'))
            elif dt == 'signature_delta' and isinstance(x, _Text): x.block['signature'] = _at(d, 'signature')
            elif dt == 'citations_delta' and isinstance(x, _Text): self._grow(1); x.cite(_plain(_at(d, 'citation')))
        elif t == 'content_block_start':
            b = _plain(_at(e, 'content_block'))
            why, pos = self._index_problem(k), self._place(_order(k), _key(k))
            if 'input' in b: self._call(pos, b.get('id'), b.get('name'), b, why)
            elif b.get('type') in ('text', 'thinking'):
                self._items[pos] = x = _Text(b, b['type'])
                self._grow(len(x.buf.getvalue()))  # text that came with the block's start counts as its deltas do
            else: self._items[pos] = b
        elif t == 'content_block_stop':
            if isinstance(x := self._lookup(k), _Call) and not x.done: res += self._end(x)
        elif t == 'message_delta': self.stop_reason: Any = _at(_at(e, 'delta'), 'stop_reason')
        elif t == 'message_stop': res += self.end()
        elif t == 'error': raise RuntimeError(f"The stream ended with an error: {short(_at(e, 'error'), 300)}")
        return res

    def _anthropic_block(self, x: Any) -> JsonDict:
        if isinstance(x, _Text): return x.out()
        if isinstance(x, _Call): return {**x.start, 'id': x.id, 'input': x.input} if x.text else {**x.start, 'id': x.id}
        return x

class _GeminiEvents(_Items):
    "The chunks of Gemini: whole `function_call` parts, or (Vertex AI) `partial_args` until `will_continue` ends"

    def _gemini(self, e: Any) -> list[ToolCall]:
        cands = _at(e, 'candidates')
        cand = cands[0] if isinstance(cands, (list, tuple)) and cands else {}
        content, res = _at(cand, 'content'), []
        for part in _listed(content and _at(content, 'parts')):
            p = _plain(part)
            key = 'function_call' if 'function_call' in p else 'functionCall' if 'functionCall' in p else None
            if key is not None: res += self._gemini_call(p, key)
            elif not self._gemini_text(p): self._items[self._place(None)] = p
        if reason := _at(cand, 'finish_reason') or _at(cand, 'finishReason'):
            self.stop_reason = reason
            if self._gcall is not None: res += self._gemini_cut()
        return res

    def _gemini_text(self, p: JsonDict) -> bool:
        "Whether `p` is a text part: its text added to the text part before it when nothing else is new, as a finished response has one"
        if not isinstance(p.get('text'), str) or not set(p) <= {'text', 'thought', 'thought_signature'}: return False
        self._grow(len(p['text']))
        if not p.get('thought'): self._text.write(p['text'])
        last = self._items.get((self._seq, self._seq))
        if isinstance(last, _Text) and set(last.block) - {'thought_signature'} == set(p) and last.block.get('thought') == p.get('thought'):
            last.buf.write(p['text'])
        else: self._items[self._place(None)] = _Text(p, 'text')
        return True

    def _gemini_call(self, p: JsonDict, key: str) -> list[ToolCall]:
        """A `function_call` part: a whole call (the Gemini API), or a piece of one streamed in `partial_args` until
        `will_continue` ends (Vertex AI with `stream_function_call_arguments`); a part naming another call ends the one streaming"""
        fc, res = p[key], []
        fid, why = _text_id(_at(fc, 'id'))
        if why is not None: fc = {**_plain(fc), 'id': fid}; p = {**p, key: fc}
        more = bool(_at(fc, 'will_continue') or _at(fc, 'willContinue'))
        g = self._gcall
        if g is not None and ((_at(fc, 'name') or g.name) != g.name or _at(fc, 'args') is not None): res, g = self._gemini_end(), None
        if g is None:
            pos = self._place(None)
            if not more:
                self._items[pos] = p
                return res + self._hand(pos, p, why)
            g = self._gcall = self._items[pos] = _GeminiCall(p, key, pos)
            g.refuse(why)
            g.id = tool_call(g.part(), 'gemini', len(self._done)).id  # type: ignore[union-attr]  # the id it is handed over with
        self._grow(g.add(fc))
        return res + ([] if more else self._gemini_end())

    def _gemini_cut(self) -> list[ToolCall]:
        "The response ended inside a call's arguments (`max_tokens`, say): refused, as a JSON object that never closed would be"
        # (`end` and `_gemini` call this only while a call streams)
        self._gcall.refuse('the response ended before its arguments did (a string or keys may be missing)')  # type: ignore[union-attr]
        return self._gemini_end()

    def _gemini_end(self) -> list[ToolCall]:
        g: _GeminiCall = self._gcall  # type: ignore[assignment]  # (called while a call streams)
        self._gcall = None
        part = self._items[g.pos] = g.part()
        return self._hand(g.pos, part, g.error)


class ToolCallStream(_ChatEvents, _ResponsesEvents, _AnthropicEvents, _GeminiEvents):
    """The tool calls of a streamed response, each complete the moment its arguments close; `.calls`, `.partial`,
    `.text` and `.message()` say where the response is"""
    def __init__(
        self,
        provider: str | None=None,  # 'openai', 'openai_responses', 'anthropic' or 'gemini'; by default told from the first event
        others: Literal['raise', 'skip']='raise',  # a call funccall can't answer (computer use, a shell...): 'raise' `UnansweredCall`, or 'skip' it
        max_chars: int=MAX_CHARS,  # the most characters of text, thinking and arguments it takes; more raises `StreamTooLong`
    ):
        self.provider = None if provider is None else provider_name(provider, CALL_PROVIDERS)
        if type(max_chars) is not int or max_chars < 1:
            raise ValueError(f"ToolCallStream: max_chars is a positive int, the most characters to take (default {MAX_CHARS:,}), not {max_chars!r}")
        self.others: Literal['raise', 'skip'] = others
        self.max_chars: int = max_chars
        self._read: Callable[[Any], list[ToolCall]] | None = None  # this provider's event reader
        super().__init__()

    def __repr__(self) -> str: return f'ToolCallStream({self.provider!r}, {len(self._done)} calls, {len(self.partial)} streaming)'

    # --- what the stream holds -----------------------------------------------------------------------------

    @property
    def calls(self) -> list[ToolCall]:
        "Every complete call so far, in the response's order (a refused one carries its `ToolInputError` as its arguments)"
        return [tc for _, tc in sorted(self._done, key=lambda x: x[0])]

    @property
    def partial(self) -> dict[str, JsonDict]:
        """The id of each call still streaming -> its arguments so far: finished keys and items, the string being read. Each
        is kept from later pieces, which copy what you still hold before changing it (and the string being read grows in
        place once you let go of it), so reading it after every event costs time linear in the arguments (on CPython)"""
        res = {c.id: (v if isinstance(v := c.reader.snapshot(), dict) else {}) for c in self._open.values() if _streaming(c)}
        if (g := self._gcall) is not None and _streaming(g): res[g.id] = g.snapshot()
        return res

    @property
    def text(self) -> str:
        "The assistant's text so far"
        return self._text.getvalue()

    def message(self) -> JsonDict | list[JsonDict]:
        """The assistant's message, to add to the conversation before the calls' answers, in the provider's own format:
        OpenAI Chat a message dict, Responses the list of output items, Anthropic `{'role': 'assistant', 'content': [...]}`,
        Gemini `{'role': 'model', 'parts': [...]}`. A call in it holds the arguments it ran with (or, refused, those sent)"""
        items = [self._items[k] for k in sorted(self._items)]
        p = self.provider
        if p == 'openai':
            m: JsonDict = {'role': 'assistant', 'content': self.text or None}
            if r := self._refusal.getvalue(): m['refusal'] = r
            if items: m['tool_calls'] = [{'id': c.id, 'type': 'function', 'function': {'name': c.name, 'arguments': c.text}} for c in items]
            return m
        if p == 'openai_responses': return [self._responses_item(x) for x in items]
        if p == 'anthropic': return {'role': 'assistant', 'content': [self._anthropic_block(x) for x in items]}
        return {'role': 'model', 'parts': [x.part() if isinstance(x, _GeminiCall) else x.out() if isinstance(x, _Text) else x for x in items]}

    # --- reading events ------------------------------------------------------------------------------------

    def feed(
        self,
        event: Any,        # one event of the stream: the SDK's object or its dict form
    ) -> list[ToolCall]:   # the calls whose arguments just became complete, each once, in the order they completed
        "Read one event of the stream"
        if self._read is None:
            if self.provider is None: self.provider = _event_provider(event)
            if self.provider is None: raise ValueError(f"Can't tell which provider's stream event a {type(event).__name__} is; pass provider=")
            self._read = getattr(self, f'_{self.provider}')
        return self._read(event)  # pyright: ignore[reportOptionalCall]  # (set above)

    def end(self) -> list[ToolCall]:  # the calls that were still open, complete now
        "The response has ended (its last event says so, or the events ran out): every call still open is complete, as it is"
        res = [tc for pos in sorted(self._open) for tc in self._end(self._open[pos])]
        return res + (self._gemini_cut() if self._gcall is not None else [])

    def watch(
        self,
        events: Events,  # the stream's events: an iterable or an async iterable
    ) -> Watched:  # the same events, read by this stream as they pass; `run_tool_calls` takes it
        "The events, read by this stream as they pass: iterate them yourself, or hand them to `run_tool_calls`"
        return Watched(self, events)


# --- running the calls of a stream --------------------------------------------------------------------------

class Watched:
    "Events read by a `ToolCallStream` as they pass (`ToolCallStream.watch`): iterate them, or hand them to `run_tool_calls`"
    def __init__(
        self,
        stream: ToolCallStream,  # the stream that reads them
        events: Events,          # the events: an iterable or an async iterable
    ):
        self.stream: ToolCallStream = stream
        self.events: Events = events

    def __iter__(self) -> Iterator[Any]:
        for e in self.events:  # type: ignore[union-attr]  # (iterated so only when it is an iterable)
            self.stream.feed(e)
            yield e

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for e in _aiter(self.events):
            self.stream.feed(e)
            yield e

def is_stream(
    o: Any,  # what `run_tool_calls` was given
) -> bool:  # whether it is a stream of events rather than a response
    "Whether `o` is a stream of events: an iterator or async iterable (an SDK's stream), or a list of events"
    # asked of the type, as `for` and `async for` do (and cached per type): `hasattr` on an SDK's pydantic response costs
    # microseconds a missing name, through its `__getattr__`
    if isinstance(o, (Watched, Iterator, AsyncIterable)): return True
    return isinstance(o, (list, tuple)) and len(o) > 0 and _event_provider(o[0]) is not None

_END = object()

async def _aiter(events: Events) -> AsyncIterator[Any]:
    "The events of an async iterable, or of a sync one read in a thread of its own, so the event loop runs the tools meanwhile"
    if hasattr(events, '__aiter__'):
        async for e in events: yield e  # pyright: ignore[reportGeneralTypeIssues]  # (it has `__aiter__`)
        return
    import asyncio
    loop, stop = asyncio.get_running_loop(), threading.Event()
    q: asyncio.Queue[Any] = asyncio.Queue()
    def pump() -> None:
        try:
            for e in events:  # pyright: ignore[reportGeneralTypeIssues]  # (no `__aiter__`: an iterable)
                if stop.is_set(): return
                loop.call_soon_threadsafe(q.put_nowait, (e,))
        except BaseException as ex: loop.call_soon_threadsafe(q.put_nowait, ex)  # noqa: BLE001 - raised in the reader
        finally: loop.call_soon_threadsafe(q.put_nowait, _END)
    threading.Thread(target=pump, daemon=True, name='funccall-stream').start()
    try:
        while (x := await q.get()) is not _END:
            if isinstance(x, BaseException): raise x
            yield x[0]
    finally: stop.set()

async def run_stream_async(
    toolbox: Toolbox,      # the tools the model was offered
    events: Events,        # the stream's events (an iterable or async iterable), or `ToolCallStream.watch(events)`
    provider: str | None=None,  # by default told from the first event
    injected: JsonDict | None=None,  # the application's values for injected parameters, for this request
    others: Literal['raise', 'skip']='raise',  # a call funccall can't answer: 'raise' `UnansweredCall`, or 'skip' it
) -> tuple[list[ToolCall], list[ToolResult], str | None]:  # the calls and their `ToolResult`s, in call order, and the provider
    "Run each call of a stream as soon as it is complete, while the rest arrives; `run_tool_calls` answers them"
    stream, events = (events.stream, events.events) if isinstance(events, Watched) else (ToolCallStream(provider, others), events)
    import asyncio
    running: dict[int, asyncio.Future[list[ToolResult]]] = {}  # id() of each ToolCall -> the task running it
    busy: list[asyncio.Future[list[ToolResult]]] = []  # the tasks not yet done
    def start(calls: list[ToolCall]) -> None:
        for tc in calls:
            running[id(tc)] = t = asyncio.ensure_future(toolbox.abatch([tc], injected=injected))
            busy.append(t)
    try:
        async for e in _aiter(events):
            start(stream.feed(e))
            if busy:  # events already waiting are read without a pause: give the calls a turn at each
                await asyncio.sleep(0)
                busy = [t for t in busy if not t.done()]
        start(stream.end())  # the events ran out: a call still open is complete as it is, so each call in the message is answered
        calls = stream.calls
        results = [r for tc in calls for r in await running[id(tc)]]
    except BaseException:
        for t in running.values(): t.cancel()
        raise
    return calls, results, stream.provider

def run_stream(
    toolbox: Toolbox,      # the tools the model was offered
    events: Events,        # the stream's events, or `ToolCallStream.watch(events)`
    provider: str | None=None,  # by default told from the first event
    injected: JsonDict | None=None,  # the application's values for injected parameters, for this request
    others: Literal['raise', 'skip']='raise',  # a call funccall can't answer: 'raise' `UnansweredCall`, or 'skip' it
) -> tuple[list[ToolCall], list[ToolResult], str | None]:  # the calls and their `ToolResult`s, in call order, and the provider
    "`run_stream_async` from sync code"
    return run_sync(run_stream_async(toolbox, events, provider, injected, others))
