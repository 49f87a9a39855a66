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
model what is wrong, exactly as for a finished response. A call runs with its object as it closed: whatever the
model sends after the closing brace (it shouldn't) doesn't change the call, though `.message()` keeps the text as sent.
"""
from __future__ import annotations

import copy, io, re, threading  # (asyncio: imported where first needed, not by `import funccall`)
from collections.abc import AsyncIterable, Iterator

from ._jsonstream import JsonStream
from ._run import run_sync
from .messages import CALL_PROVIDERS, ToolCall, tool_calls
from .providers import provider_name
from .tools import Toolbox

__all__ = ['ToolCallStream', 'is_stream', 'run_stream', 'run_stream_async']

_ANTHROPIC = frozenset({'message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta',
                        'message_stop', 'ping', 'error'})

def _at(o, k: str): return o.get(k) if isinstance(o, dict) else getattr(o, k, None)

def _plain(o):
    "An SDK object as the dict its API sends (no nulls); a dict as it is"
    return o.model_dump(exclude_none=True) if hasattr(o, 'model_dump') else dict(o)

def _event_provider(e) -> str | None:
    "The provider whose stream event `e` is, from its shape; None when it is no event"
    t = _at(e, 'type')
    if isinstance(t, str):
        if t.startswith('response.'): return 'openai_responses'
        if t in _ANTHROPIC: return 'anthropic'
        if t == 'chunk' and _at(e, 'chunk') is not None: return 'openai'  # `client.chat.completions.stream()`'s events
    if isinstance(e, dict): return 'openai' if 'choices' in e else 'gemini' if 'candidates' in e else None
    return 'openai' if hasattr(e, 'choices') else 'gemini' if hasattr(e, 'candidates') else None

class _Call:
    "A call (or any block with streamed arguments) being read: its JSON reader and its text"
    __slots__ = ('pos', 'id', 'name', 'reader', 'raw', 'done', 'start', 'final')
    def __init__(self, pos, id, name, start=None):
        self.pos, self.id, self.name, self.start, self.final = pos, id, name, start, None
        self.reader, self.raw, self.done = JsonStream(), io.StringIO(), False

    def add(self, piece: str) -> bool:
        "Read a piece of the arguments; whether they just closed"
        if not piece: return False
        self.raw.write(piece)
        return not self.done and self.reader.feed(piece)

    @property
    def text(self) -> str: return self.raw.getvalue()

    @property
    def args(self):
        "The arguments as the call carries them: the object when read whole, else the text (which running reports)"
        r = self.reader
        return r.value if r.done and isinstance(r.value, dict) else self.text

    @property
    def input(self) -> dict:
        "The arguments as an Anthropic `tool_use` block holds them: invalid JSON wrapped, as Anthropic's docs advise"
        r = self.reader
        if r.error is None: return v if isinstance(v := r.snapshot(), dict) else {}  # a copy: later pieces leave the message alone
        return {'INVALID_JSON': self.text}

class _Text:
    "A content block whose text grows (`text`, `thinking`), kept in pieces: long text in small deltas stays linear"
    __slots__ = ('block', 'key', 'buf')
    def __init__(self, block: dict, key: str):
        self.block, self.key, self.buf = block, key, io.StringIO()
        self.buf.write(block.get(key) or '')

    def out(self) -> dict: return {**self.block, self.key: self.buf.getvalue()}

class _GeminiCall:
    "A Gemini call whose arguments stream as `partial_args`: each a JSON path and a value, a string in pieces"
    __slots__ = ('first', 'key', 'pos', 'args', 'cont', 'id')
    def __init__(self, first: dict, key: str, pos: int):
        self.first, self.key, self.pos, self.args, self.cont, self.id = first, key, pos, {}, None, None

    def add(self, fc: dict):
        for a in _at(fc, 'partial_args') or _at(fc, 'partialArgs') or ():
            path = _at(a, 'json_path') or _at(a, 'jsonPath') or '$'
            for k in ('string_value', 'stringValue', 'number_value', 'numberValue', 'bool_value', 'boolValue', 'null_value', 'nullValue'):
                if (v := _at(a, k)) is not None: break
            if k.startswith('null'): v = None
            if isinstance(v, str) and self.cont == path: v = _json_path(self.args, path) + v  # the rest of a string
            _json_path(self.args, path, v)
            self.cont = path if isinstance(v, str) and (_at(a, 'will_continue') or _at(a, 'willContinue')) else None

    def part(self) -> dict:
        fc = {k: v for k, v in self.first[self.key].items() if k not in ('will_continue', 'willContinue', 'partial_args', 'partialArgs')}
        return {**self.first, self.key: {**fc, 'args': self.args}}

_step = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[['\"]([^'\"]*)['\"]\]")  # `.key`, `[0]`, `['key']`

def _json_path(d: dict, path: str, *value):
    "The value at JSON path `path` (`$.a.b[0]`) of `d`; with `value`, set it there, making the containers on the way"
    keys = [k or (int(i) if i else q) for k, i, q in _step.findall(path)]
    if not value:
        for k in keys: d = d[k]
        return d
    if not keys: return None
    for k, nxt in zip(keys, keys[1:]):
        new = [] if isinstance(nxt, int) else {}
        if isinstance(k, int):
            d.extend([None] * (k + 1 - len(d)))
            if d[k] is None: d[k] = new
            d = d[k]
        else: d = d.setdefault(k, new)
    if isinstance(keys[-1], int): d.extend([None] * (keys[-1] + 1 - len(d)))
    d[keys[-1]] = value[0]

class ToolCallStream:
    """The tool calls of a streamed response, each complete the moment its arguments close; `.calls`, `.partial`,
    `.text` and `.message()` say where the response is"""
    def __init__(
        self,
        provider: str=None,  # 'openai', 'openai_responses', 'anthropic' or 'gemini'; by default told from the first event
        others: str='raise', # a call funccall can't answer (computer use, a shell...): 'raise' `UnansweredCall`, or 'skip' it
    ):
        self.provider = None if provider is None else provider_name(provider, CALL_PROVIDERS)
        self.others = others
        self._read = None              # this provider's event reader
        self._items: dict = {}         # position -> _Call, _Text, or a finished block/item (dict)
        self._done: list = []          # (position, ToolCall) of each complete call
        self._text = io.StringIO()
        self._refusal = ''
        self._gcall = None             # a Gemini call whose arguments are streaming (Vertex AI)
        self.stop_reason = None        # why the response ended, when the provider says (`finish_reason`, `stop_reason`)

    def __repr__(self): return f'ToolCallStream({self.provider!r}, {len(self._done)} calls, {len(self.partial)} streaming)'

    # --- what the stream holds -----------------------------------------------------------------------------

    @property
    def calls(self) -> list[ToolCall]:
        "Every complete call so far, in the response's order"
        return [tc for _, tc in sorted(self._done, key=lambda x: x[0])]

    @property
    def partial(self) -> dict:
        "The id of each call still streaming -> its arguments so far (a copy): finished keys and items, the string being read"
        res = {c.id: (v if isinstance(v := c.reader.snapshot(), dict) else {}) for c in self._calls() if not c.done}
        if self._gcall is not None: res[self._gcall.id] = copy.deepcopy(self._gcall.args)
        return res

    @property
    def text(self) -> str:
        "The assistant's text so far"
        return self._text.getvalue()

    def message(self):
        """The assistant's message, to add to the conversation before the calls' answers, in the provider's own format:
        OpenAI Chat a message dict, Responses the list of output items, Anthropic `{'role': 'assistant', 'content': [...]}`,
        Gemini `{'role': 'model', 'parts': [...]}`"""
        items = [self._items[k] for k in sorted(self._items)]
        p = self.provider
        if p == 'openai':
            m = {'role': 'assistant', 'content': self.text or None}
            if self._refusal: m['refusal'] = self._refusal
            if items: m['tool_calls'] = [{'id': c.id, 'type': 'function', 'function': {'name': c.name, 'arguments': c.text}} for c in items]
            return m
        if p == 'openai_responses': return [self._responses_item(x) for x in items]
        if p == 'anthropic': return {'role': 'assistant', 'content': [self._anthropic_block(x) for x in items]}
        return {'role': 'model', 'parts': [x.part() if isinstance(x, _GeminiCall) else x for x in items]}

    def _calls(self) -> list[_Call]: return [x for x in self._items.values() if isinstance(x, _Call)]

    # --- reading events ------------------------------------------------------------------------------------

    def feed(
        self,
        event,             # one event of the stream: the SDK's object or its dict form
    ) -> list[ToolCall]:   # the calls whose arguments just became complete, each once, in the order they completed
        "Read one event of the stream"
        if self._read is None:
            if self.provider is None: self.provider = _event_provider(event)
            if self.provider is None: raise ValueError(f"Can't tell which provider's stream event a {type(event).__name__} is; pass provider=")
            self._read = getattr(self, f'_{self.provider}')
        return self._read(event)

    def watch(
        self,
        events,  # the stream's events: an iterable or an async iterable
    ):           # the same events, read by this stream as they pass; `run_tool_calls` takes it
        "The events, read by this stream as they pass: iterate them yourself, or hand them to `run_tool_calls`"
        return _Watched(self, events)

    def _complete(self, c: _Call, item: dict) -> list[ToolCall]:
        "Call `c` is complete: read as `tool_calls` reads the provider's item (nothing for a block funccall doesn't run)"
        c.done = True
        res = tool_calls([item], self.provider, self.others)
        self._done += [(c.pos, tc) for tc in res]
        return res

    def _finish(self) -> list[ToolCall]:
        "The response ended: every call still open is complete, its arguments as they are"
        return [tc for c in sorted(self._calls(), key=lambda c: c.pos) if not c.done for tc in self._end(c)]

    # --- OpenAI Chat Completions ---------------------------------------------------------------------------

    def _openai(self, e) -> list[ToolCall]:
        if _at(e, 'type') == 'chunk': e = _at(e, 'chunk')  # the SDK helper's chunk event
        ch = next((c for c in _at(e, 'choices') or () if (_at(c, 'index') or 0) == 0), None)  # the first choice, as `tool_calls` reads
        if ch is None: return []
        d, res = _at(ch, 'delta') or {}, []
        if t := _at(d, 'content'): self._text.write(t)
        if r := _at(d, 'refusal'): self._refusal += r
        for f in _at(d, 'tool_calls') or ():
            i, fn = _at(f, 'index'), _at(f, 'function')
            if i is None:  # some OpenAI-compatible servers send each call whole, without an index: its id tells
                i = next((k for k, c in self._items.items() if c.id == _at(f, 'id')), len(self._items))
            c = self._items.get(i)
            if c is None: c = self._items[i] = _Call(i, _at(f, 'id'), fn and _at(fn, 'name'))
            c.id, c.name = c.id or _at(f, 'id'), c.name or (fn and _at(fn, 'name'))
            if fn is not None and c.add(_at(fn, 'arguments')): res += self._end(c)
        if reason := _at(ch, 'finish_reason'): self.stop_reason = reason; res += self._finish()
        return res

    def _end(self, c: _Call) -> list[ToolCall]:
        "Call `c` is complete (its arguments closed, or the response ended)"
        p = self.provider
        if p == 'openai': item = {'id': c.id, 'type': 'function', 'function': {'name': c.name, 'arguments': c.args}}
        elif p == 'openai_responses': item = {'type': 'function_call', 'call_id': c.id, 'name': c.name, 'arguments': c.args}
        else: item = {**c.start, 'input': c.args} if c.text else c.start  # a block without deltas came whole
        return self._complete(c, item)

    # --- OpenAI Responses ----------------------------------------------------------------------------------

    def _openai_responses(self, e) -> list[ToolCall]:
        t, k, res = _at(e, 'type'), _at(e, 'output_index'), []
        if t == 'response.output_item.added':
            item = _at(e, 'item')
            if _at(item, 'type') == 'function_call':
                c = self._items[k] = _Call(k, _at(item, 'call_id'), _at(item, 'name'), start=_plain(item))
                if c.add(_at(item, 'arguments')): res += self._end(c)
            elif _at(item, 'type') == 'message': self._items[k] = _Text(_plain(item), 'text')  # its text grows until it's done
            else: self._items[k] = _plain(item)
        elif t == 'response.function_call_arguments.delta':
            c = self._items.get(k)
            if isinstance(c, _Call) and c.add(_at(e, 'delta')): res += self._end(c)
        elif t == 'response.output_text.delta':
            self._text.write(_at(e, 'delta') or '')
            if isinstance(x := self._items.get(k), _Text): x.buf.write(_at(e, 'delta') or '')
        elif t in ('response.function_call_arguments.done', 'response.output_item.done'):
            c = self._items.get(k)
            item = _at(e, 'item')
            if isinstance(c, _Call):
                if item is not None: c.final = _plain(item)
                if not c.done: res += self._end(c)
            elif item is not None:  # an item that came whole: calls of other kinds (custom tools) are read from it
                self._items[k] = item = _plain(item)
                for tc in tool_calls([item], self.provider, self.others): self._done.append((k, tc)); res.append(tc)
        elif t in ('response.completed', 'response.incomplete', 'response.failed'):
            self.stop_reason = t.rsplit('.', 1)[1]
            res += self._finish()
        return res

    def _responses_item(self, x) -> dict:
        if isinstance(x, _Call):
            if x.final is not None: return x.final
            return {**x.start, 'arguments': x.text}
        if not isinstance(x, _Text): return x
        return {**x.block, 'content': [{'type': 'output_text', 'text': x.buf.getvalue(), 'annotations': []}]}  # its text so far

    # --- Anthropic Messages --------------------------------------------------------------------------------

    def _anthropic(self, e) -> list[ToolCall]:
        t, k, res = _at(e, 'type'), _at(e, 'index'), []
        if t == 'content_block_delta':  # first: nearly every event is one
            d, x = _at(e, 'delta'), self._items.get(k)
            dt = _at(d, 'type')
            if dt == 'text_delta' and isinstance(x, _Text): x.buf.write(_at(d, 'text')); self._text.write(_at(d, 'text'))
            elif dt == 'input_json_delta' and isinstance(x, _Call):
                if x.add(_at(d, 'partial_json')): res += self._end(x)
            elif dt == 'thinking_delta' and isinstance(x, _Text): x.buf.write(_at(d, 'thinking'))
            elif dt == 'signature_delta' and isinstance(x, _Text): x.block['signature'] = _at(d, 'signature')
            elif dt == 'citations_delta' and isinstance(x, _Text):
                x.block['citations'] = [*(x.block.get('citations') or ()), _plain(_at(d, 'citation'))]
        elif t == 'content_block_start':
            b = _plain(_at(e, 'content_block'))
            bt = b.get('type')
            if 'input' in b: self._items[k] = _Call(k, b.get('id'), b.get('name'), start=b)
            elif bt in ('text', 'thinking'): self._items[k] = _Text(b, bt)
            else: self._items[k] = b
        elif t == 'content_block_stop':
            x = self._items.get(k)
            if isinstance(x, _Call) and not x.done: res += self._end(x)
        elif t == 'message_delta': self.stop_reason = _at(_at(e, 'delta'), 'stop_reason')
        elif t == 'message_stop': res += self._finish()
        elif t == 'error': raise RuntimeError(f"The stream ended with an error: {_at(e, 'error')}")
        return res

    def _anthropic_block(self, x) -> dict:
        if isinstance(x, _Text): return x.out()
        if isinstance(x, _Call): return {**x.start, 'input': x.input} if x.text else x.start
        return x

    # --- Gemini --------------------------------------------------------------------------------------------

    def _gemini(self, e) -> list[ToolCall]:
        cands = _at(e, 'candidates')
        cand = cands[0] if cands else {}
        content, res = _at(cand, 'content'), []
        for part in (content and _at(content, 'parts')) or ():
            p = _plain(part)
            n = len(self._items)
            key = 'function_call' if 'function_call' in p else 'functionCall' if 'functionCall' in p else None
            if key is not None:
                res += self._gemini_call(p, key, n)
                continue
            if set(p) == {'text'} or set(p) == {'text', 'thought'}:
                if not p.get('thought'): self._text.write(p['text'])
                last = self._items.get(n - 1)
                if last is not None and set(last) - {'thought_signature'} == set(p) and last.get('thought') == p.get('thought'):
                    last['text'] += p['text']; continue  # one part for the text, as a finished response has it
            self._items[n] = p
        if reason := _at(cand, 'finish_reason') or _at(cand, 'finishReason'):
            self.stop_reason = reason
            if self._gcall is not None: res += self._gemini_end()  # cut off in the middle of a call
        return res

    def _gemini_call(self, p: dict, key: str, n: int) -> list[ToolCall]:
        """A `function_call` part: a whole call (the Gemini API), or a piece of one streamed in `partial_args` until
        `will_continue` ends (Vertex AI with `stream_function_call_arguments`)"""
        fc, g = p[key], self._gcall
        more = bool(_at(fc, 'will_continue') or _at(fc, 'willContinue'))
        if g is None:
            if not more: return self._gemini_done(n, p)
            g = self._gcall = self._items[n] = _GeminiCall(p, key, n)
            g.id = self._gemini_read(g.part(), n).id
        g.add(fc)
        return [] if more else self._gemini_end()

    def _gemini_end(self) -> list[ToolCall]:
        g, self._gcall = self._gcall, None
        return self._gemini_done(g.pos, g.part())

    def _gemini_read(self, part: dict, n: int) -> ToolCall:
        "Read as `tool_calls` reads the parts up to this one: an id-less call's made-up id counts the calls before it"
        calls = [x.part() if isinstance(x, _GeminiCall) else x for k, x in sorted(self._items.items()) if k < n]
        return tool_calls([*[c for c in calls if 'function_call' in c or 'functionCall' in c], part], 'gemini')[-1]

    def _gemini_done(self, n: int, part: dict) -> list[ToolCall]:
        tc = self._gemini_read(part, n)
        self._items[n] = part
        self._done.append((n, tc))
        return [tc]

# --- running the calls of a stream --------------------------------------------------------------------------

class _Watched:
    "Events read by a `ToolCallStream` as they pass"
    def __init__(self, stream: ToolCallStream, events): self.stream, self.events = stream, events

    def __iter__(self):
        for e in self.events:
            self.stream.feed(e)
            yield e

    async def __aiter__(self):
        async for e in _aiter(self.events):
            self.stream.feed(e)
            yield e

def is_stream(
    o,  # what `run_tool_calls` was given
) -> bool:  # whether it is a stream of events rather than a response
    "Whether `o` is a stream of events: an iterator or async iterable (an SDK's stream), or a list of events"
    # asked of the type, as `for` and `async for` do (and cached per type): `hasattr` on an SDK's pydantic response costs
    # microseconds a missing name, through its `__getattr__`
    if isinstance(o, (_Watched, Iterator, AsyncIterable)): return True
    return isinstance(o, (list, tuple)) and len(o) > 0 and _event_provider(o[0]) is not None

_END = object()

async def _aiter(events):
    "The events of an async iterable, or of a sync one read in a thread of its own, so the event loop runs the tools meanwhile"
    if hasattr(events, '__aiter__'):
        async for e in events: yield e
        return
    import asyncio
    loop, q, stop = asyncio.get_running_loop(), asyncio.Queue(), threading.Event()
    def pump():
        try:
            for e in events:
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
    events,                # the stream's events (an iterable or async iterable), or `ToolCallStream.watch(events)`
    provider: str=None,    # by default told from the first event
    injected: dict=None,   # the application's values for injected parameters, for this request
    others: str='raise',   # a call funccall can't answer: 'raise' `UnansweredCall`, or 'skip' it
) -> tuple[list[ToolCall], list, str | None]:  # the calls and their `ToolResult`s, in call order, and the provider
    "Run each call of a stream as soon as it is complete, while the rest arrives; `run_tool_calls` answers them"
    stream, events = (events.stream, events.events) if isinstance(events, _Watched) else (ToolCallStream(provider, others), events)
    import asyncio
    running, busy = {}, []  # id() of each ToolCall -> the task running it; the tasks not yet done
    try:
        async for e in _aiter(events):
            for tc in stream.feed(e):
                running[id(tc)] = t = asyncio.ensure_future(toolbox.abatch([tc], injected=injected))
                busy.append(t)
            if busy:  # events already waiting are read without a pause: give the calls a turn at each
                await asyncio.sleep(0)
                busy = [t for t in busy if not t.done()]
        calls = stream.calls
        results = [r for tc in calls for r in await running[id(tc)]]
    except BaseException:
        for t in running.values(): t.cancel()
        raise
    return calls, results, stream.provider

def run_stream(
    toolbox: Toolbox,      # the tools the model was offered
    events,                # the stream's events, or `ToolCallStream.watch(events)`
    provider: str=None,    # by default told from the first event
    injected: dict=None,   # the application's values for injected parameters, for this request
    others: str='raise',   # a call funccall can't answer: 'raise' `UnansweredCall`, or 'skip' it
) -> tuple[list[ToolCall], list, str | None]:  # the calls and their `ToolResult`s, in call order, and the provider
    "`run_stream_async` from sync code"
    return run_sync(run_stream_async(toolbox, events, provider, injected, others), 'await run_tool_calls_async(...)', 'run_tool_calls')
