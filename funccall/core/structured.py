"""Structured outputs: ask a model for a reply shaped like a class, and read the reply back into an instance.

    client.chat.completions.create(..., **output_format(Turn))                  # OpenAI Chat: response_format
    client.responses.create(..., **output_format(Turn, 'responses'))            # OpenAI Responses: text.format
    client.messages.create(..., **output_format(Turn, 'anthropic'))             # Claude: output_config.format
    types.GenerateContentConfig(**output_format(Turn, 'gemini'))                # Gemini: response_json_schema
    turn = parse_output(Turn, reply_text)                                       # a Turn, or OutputError
    for turn in parse_output_stream(Turn, text_pieces): ...                     # while it streams: its fields so far

`Turn` is any annotation a tool parameter can have: a dataclass, TypedDict, NamedTuple, pydantic model, plain
class with an annotated `__init__`, or `list[Turn]`, `Literal[...]`, `int | None`... The schema is the one
`get_schema` makes for a parameter of that type, put through the provider's own rules (strict for OpenAI and
Claude, JSON Schema for Gemini); a type that is not an object is wrapped as `{"value": ...}`, which the
parser unwraps. The parser coerces as `call_func` does (a dict into the class, `null` for a field with a
default into that default), so what a strict provider sends comes back as the instance meant. No pydantic is needed.

A streamed reply is read as it arrives by `parse_output_stream`: after each piece that adds to it, the fields
complete so far (a dict of them, each coerced to its field's type; a string field as far as it has come), and
at the end the instance, exactly as `parse_output` makes it from the whole text.
"""
from __future__ import annotations

import codecs, io, json, re, warnings
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, Literal, TypeVar, overload

from ._classdocs import with_class_docs
from ._gemini import Json
from ._strict import ANNOTATIONS, ANTHROPIC, OPENAI, strict_pass
from ._jsonstream import JsonStream
from ._types import SchemaError, fields, kind, type_cache, type_name
from .call import ToolInputError, coerce_inputs
from .providers import Change, ProviderWarning, Report, provider_name
from .schema import get_schema
from ._typing import JsonDict

__all__ = ['output_format', 'output_schema', 'parse_output', 'parse_output_stream', 'OutputError']

_OBJECTS = ('typeddict', 'namedtuple', 'dataclass', 'model', 'class')  # kinds whose schema is an object at the root

class OutputError(ValueError):
    "A model's reply that doesn't fit the output type; its text says what to fix, for the model to try again"

def _make_holder(t):
    "A function taking one parameter `value: t`: the call module's schema and coercion, for one annotation"
    def value(value): "The reply."
    value.__annotations__ = {'value': t}
    return value

_holder = type_cache(_make_holder)  # bounded, keyed by annotation (unions in their order), emptied when `custom_types` changes

def _wrapped(t) -> bool:
    try: return kind(t).kind not in _OBJECTS
    except SchemaError: return True

_CONTAINERS = {'list': 'List', 'set': 'Set', 'tuple': 'Tuple', 'dict': 'Dict', 'union': 'Or'}

def _title(t) -> str:
    "A readable name of annotation `t` built from its parts, as a model reads it: `list[Turn]` is `TurnList`"
    try: info = kind(t)
    except SchemaError: return type_name(t)
    if info.kind == 'union': return 'Or'.join(_title(a) for a in info.args)
    if info.kind in _CONTAINERS: return ''.join(_title(a) for a in info.args if a is not Ellipsis) + _CONTAINERS[info.kind]
    nm = type_name(info.t)
    return nm[:1].upper() + nm[1:] if info.kind in ('scalar', 'none', 'any', 'format') else nm

def _name(t) -> str:
    "A name for the format: OpenAI's rule `[a-zA-Z0-9_-]{1,64}`"
    return re.sub(r'[^a-zA-Z0-9_-]+', '_', _title(t)).strip('_')[:64] or 'output'

def output_schema(
    t: Any,         # the reply's type: a class, or any annotation (`list[Turn]`)
) -> JsonDict:      # its JSON Schema, an object at the root; classes described by their docstrings
    "The canonical JSON Schema of a reply of type `t` (a non-object type wrapped as `{'value': ...}`)"
    fn = _holder(t)
    params = with_class_docs(get_schema(fn, evalable=True), fn)['input_schema']
    defs = params.get('$defs', {})
    if _wrapped(t): return params
    ref = params['properties']['value']['$ref']
    nm = ref.rsplit('/', 1)[-1]
    root = {k: v for k, v in defs[nm].items() if k not in ANNOTATIONS}
    others = {k: v for k, v in defs.items() if k != nm}
    used = ref in json.dumps([root, others])  # the class inside itself: its definition stays
    rest = defs if used else others
    return {**root, **({'$defs': rest} if rest else {})}

def output_format(
    t: Any,                 # the reply's type: a class, or any annotation (`list[Turn]`)
    provider:str='openai',  # 'openai' (Chat), 'responses', 'anthropic' or 'gemini' (see `provider_name`)
    name:str|None=None,     # the format's name, for OpenAI (default: the type's)
    report:Report|Literal['raise']|None=None,  # a `Report` to fill, 'raise' to raise on a lossy change, or None to warn
) -> JsonDict:              # keyword arguments for the SDK call (Gemini: for `GenerateContentConfig`)
    "The request parameter asking `provider` for a reply of type `t`, strict where the provider has strict mode"
    if not (report is None or report == 'raise' or isinstance(report, Report)):
        raise TypeError(f"report must be a Report, 'raise' or None, not {report!r}")
    s, nm = output_schema(t), name or _name(t)
    changes: list[tuple[str, str, bool]] = []
    provider = provider_name(provider, ('openai', 'openai_responses', 'anthropic', 'gemini'))
    if provider == 'gemini':
        out = {'response_mime_type': 'application/json', 'response_json_schema': Json(changes).root(s)}
    else:
        rules = ANTHROPIC if provider == 'anthropic' else OPENAI
        res, notes, fails = strict_pass(s, rules)
        changes += [(p, w, False) for p, w in notes]
        why = '; '.join(f"{p or 'the reply'} {w}" for p, w in fails)
        if fails and provider == 'anthropic':  # Claude's output format is always constrained: there is no non-strict one
            raise SchemaError(f"{nm!r} can't be a Claude output format ({why}); use a type whose keys are all known")
        if fails: changes.append(('', f"can't be strict for OpenAI ({why}): sent with strict: false", True))
        fmt = {'name': nm, 'schema': s if fails else res, 'strict': not fails}
        if provider == 'anthropic': out = {'output_config': {'format': {'type': 'json_schema', 'schema': res}}}
        elif provider == 'openai': out = {'response_format': {'type': 'json_schema', 'json_schema': fmt}}
        else: out = {'text': {'format': {'type': 'json_schema', **fmt}}}
    _report([Change(nm, *c) for c in changes], report)
    return out

def _report(changes: list, report) -> None:
    if isinstance(report, Report): report.changes += changes; return
    lost = [c for c in changes if c.lossy]
    if not lost: return
    msg = 'The provider can\'t hold all of this output format:\n' + '\n'.join(f'- {c}' for c in lost)
    if report == 'raise': raise SchemaError(msg)
    warnings.warn(msg, ProviderWarning, stacklevel=3)

def _where(path: str, wrapped: bool) -> str:
    "A problem's place in the reply: `value[0].a` is `[0].a` of the reply, or `a` of an unwrapped class"
    rest = path[len('value'):] if path.startswith('value') else path
    if wrapped: return 'value' + rest if rest else 'value'
    return rest.lstrip('.')

_T = TypeVar('_T')

@overload
def parse_output(t: type[_T], text: Any) -> _T: ...
@overload
def parse_output(t: Any, text: Any) -> Any: ...
def parse_output(
    t: Any,      # the reply's type, as given to `output_format`
    text: Any,   # the model's reply: JSON text (or the value already read from it)
) -> Any:        # an instance of `t`
    "The model's reply as a `t`, coerced as `call_func` does; `OutputError` saying what to fix when it doesn't fit"
    nm, wrapped = _name(t), _wrapped(t)
    if isinstance(text, (str, bytes, bytearray)):
        try: v = json.loads(text)
        except (ValueError, RecursionError) as e:
            why = e.msg if isinstance(e, json.JSONDecodeError) else 'nested too deeply'
            raise OutputError(f"The reply is not JSON ({why}); reply with one JSON object matching the {nm} schema") from None
    else: v = text
    if wrapped:
        if not isinstance(v, dict) or 'value' not in v:
            raise OutputError(f'The reply must be a JSON object {{"value": ...}} holding the {nm}, got {type(v).__name__}')
        v = v['value']
    try: return coerce_inputs(_holder(t), {'value': v}, nm)['value']
    except ToolInputError as e:
        lines = [f"- {w + ': ' if (w := _where(p.path, wrapped)) else ''}{p.message}" for p in e.errors]
        raise OutputError(f"The reply doesn't fit {nm}; send it again with these fixed:\n" + '\n'.join(lines)) from None

# --- streamed replies ------------------------------------------------------------------------------------------

def _coerced(t, v, nm: str):
    "`v` coerced to `t`; a list without the item still streaming when only that fails; `_UNREAD` when it doesn't coerce yet"
    for x in (v, v[:-1]) if isinstance(v, list) and v else (v,):
        try: return coerce_inputs(_holder(t), {'value': x}, nm)['value']
        except ToolInputError: pass
    return _UNREAD

_UNREAD = object()

def _so_far(t, fs: list | None, v, nm: str, done: dict) -> dict:
    """The fields of partial reply `v` that already read as `t`'s fields `fs` (None: `t` is wrapped): a field there whose
    value coerces, coerced. `done` keeps the fields before the last key, which can no longer change: each piece coerces
    only the field it adds to"""
    if not isinstance(v, dict): return {}
    if fs is None:
        x = _coerced(t, v['value'], nm) if 'value' in v else _UNREAD
        return {} if x is _UNREAD else {'value': x}
    res, keys = {}, list(v)
    for f in fs:
        if f.name not in v: continue
        x = done[f.name] if f.name in done else _coerced(f.anno, v[f.name], nm)
        if f.name != keys[-1]: done[f.name] = x
        if x is not _UNREAD: res[f.attr] = x
    return res

class _OutputReader:
    "A reply of type `t` read piece by piece"
    def __init__(self, t):
        self.t, self.nm, self.reader, self.text, self.last, self.done = t, _name(t), JsonStream(), io.StringIO(), None, {}
        self.utf8 = codecs.getincrementaldecoder('utf-8')()  # bytes may split a character
        self.fields = None if _wrapped(t) else fields(kind(t))

    def feed(self, piece: str | bytes) -> dict | None:
        "Read a piece; the fields so far when they changed"
        if isinstance(piece, (bytes, bytearray)): piece = self.utf8.decode(piece)
        self.text.write(piece)
        self.reader.feed(piece)
        now = _so_far(self.t, self.fields, self.reader.snapshot(), self.nm, self.done)  # a copy: a step must not change with later pieces
        if now == self.last: return None
        self.last = now
        return now

    def result(self):
        "The instance, as `parse_output` makes it; from the text when the reader found it isn't one JSON value"
        r = self.reader
        r.close()
        return parse_output(self.t, r.value if r.done and r.error is None else self.text.getvalue())

@overload
def parse_output_stream(t: Any, pieces: AsyncIterable[str | bytes]) -> AsyncIterator[Any]: ...
@overload
def parse_output_stream(t: Any, pieces: Iterable[str | bytes]) -> Iterator[Any]: ...
def parse_output_stream(
    t: Any,     # the reply's type, as given to `output_format`
    pieces: Iterable[str | bytes] | AsyncIterable[str | bytes],  # the reply's text as it streams: an iterable (or async iterable) of text pieces
) -> Iterator[Any] | AsyncIterator[Any]:  # a generator (async for an async iterable): the fields so far (a dict) after each piece
                                          # that adds one, then the instance
    """A streamed reply, read as it arrives: after each piece that changes them, the fields complete so far (a dict,
    each already coerced to its field's type, a string field as far as it has come; `{'value': ...}` for a type
    that isn't an object); last, the instance, as `parse_output` makes it (or its `OutputError`)"""
    if hasattr(pieces, '__aiter__'): return _aparse(t, pieces)  # type: ignore[arg-type]  # (an async iterable: it has `__aiter__`)
    return _parse(t, pieces)  # pyright: ignore[reportArgumentType]  # (no `__aiter__`: mypy narrows, pyright doesn't)

def _parse(t: Any, pieces: Iterable[str | bytes]) -> Iterator[Any]:
    r = _OutputReader(t)
    for p in pieces:
        if (now := r.feed(p)) is not None: yield now
    yield r.result()

async def _aparse(t: Any, pieces: AsyncIterable[str | bytes]) -> AsyncIterator[Any]:
    r = _OutputReader(t)
    async for p in pieces:
        if (now := r.feed(p)) is not None: yield now
    yield r.result()
