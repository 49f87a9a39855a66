"""The provider round trip: read the tool calls out of a model's response, write the results back.

`tool_calls(response)` reads every function call a response asks for, in order, from the SDK's response
object or its dict (JSON) form. `tool_results(results, provider)` turns the `ToolResult`s of running them
into what the next request carries. `run_tool_calls(toolbox, response)` (`funccall.loop.turn`) does both:

    msgs = run_tool_calls(toolbox, response)
    # the assistant's message (which holds the calls) goes first, then the answers:
    # OpenAI chat:      messages += [response.choices[0].message, *msgs]
    # OpenAI Responses: input += [*response.output, *msgs]
    # Anthropic:        messages += [{'role': 'assistant', 'content': response.content}, *msgs]
    # Gemini:           contents += [response.candidates[0].content, *msgs]

Providers are named as the `to_*` renderers name them: 'openai' (Chat Completions), 'openai_responses',
'anthropic', 'gemini'. The provider SDKs are never imported: their objects are read by attribute, dicts by key.

Every call is answered: OpenAI's custom tool calls (free-form text in) are run too, and a call item funccall
can't answer (computer use, a local shell, a type it doesn't know) raises for the developer rather than leaving
the next request to fail for a missing output. The list `run_tool_calls` returns also says what came of the
calls: `.results`, `.stop` (a tool asked the loop to stop) and `.pending` (calls waiting for the user's approval,
answered later through `Toolbox.resume`). Results holding `Image`, `Audio` or `File` are written in each
provider's own rich form (see `funccall.loop.content`).
"""
from __future__ import annotations

import json
from typing import Any, Callable, ClassVar, Iterable, Literal, NamedTuple, Union

from ..core._typing import JsonDict
from . import content
from ..core._inputs import ToolInputError
from ..core._json import jsonable
from ..core.providers import provider_name
from .results import ToolResult, to_text

__all__ = ['CALL_PROVIDERS', 'ToolCall', 'CustomToolCall', 'ToolMessages', 'UnansweredCall', 'tool_call', 'tool_calls', 'calls_of', 'tool_results',
           'output_items', 'program_callers', 'tool_searches', 'tool_search_output', 'Found', 'references']

_made = 'funccall-'  # how ids made up for Gemini calls begin: they are never sent back

class _CallFields(NamedTuple):  # (the fields apart from `ToolCall`: a type checker takes every name in a NamedTuple for a field)
    name: str              # the tool's name, as the model sent it
    arguments: Union[JsonDict, str, ToolInputError]  # the arguments; the model's text when it is not a JSON object, so running it
    #   reports that; the error when a stream refused the call as it came (running it reports that, and runs nothing)
    id: str                # the id the result must answer (for a Gemini call without one, `funccall-{index}-{name}`)

class ToolCall(_CallFields):
    "One function call a model asks for; it unpacks as the `(name, args, call_id)` that `Toolbox.batch` takes"
    __slots__ = ()
    kind: ClassVar[str] = 'function'  # 'function', or 'custom' (`CustomToolCall`)

class CustomToolCall(ToolCall):
    "A call of an OpenAI custom tool: free-form text in (`arguments` is that text), answered by a custom tool call output"
    __slots__ = ()
    kind: ClassVar[str] = 'custom'

def _get(o: Any, *keys: str) -> Any:
    "The value of the first of `keys` that `o` (a dict or an SDK object) holds, not null"
    for k in keys:
        v = o.get(k) if isinstance(o, dict) else getattr(o, k, None)
        if v is not None: return v
    return None

def _has(o: Any, k: str) -> bool: return k in o if isinstance(o, dict) else hasattr(o, k)

def _args(v: Any) -> JsonDict | str:
    "The arguments as a dict; text that isn't a JSON object stays text, to fail as a `ToolInputError` when run, not here"
    if v is None: return {}
    if not isinstance(v, str): return v
    if not v.strip(): return {}  # a call without arguments may come as ''
    try: d = json.loads(v)
    except (ValueError, RecursionError): return v
    return d if isinstance(d, dict) else v

# --- reading calls: where each provider keeps them, and one call item -------------------------------

def _items(o: Any, p: str) -> list[Any]:
    "The items of `o` that may be calls: `o` itself when it is a list, else the list provider `p` keeps them in"
    if isinstance(o, (list, tuple)): return list(o)
    if p == 'openai':
        # only the first choice: the others are alternatives to it, not more calls
        if _has(o, 'choices'): o = _get((_get(o, 'choices') or [None])[0], 'message')
        elif _has(o, 'message'): o = _get(o, 'message')
        return list(_get(o, 'tool_calls') or [])
    if p == 'openai_responses': return list(_get(o, 'output') or [])
    if p == 'anthropic': return list(_get(o, 'content') or [])
    if _has(o, 'candidates'): o = _get((_get(o, 'candidates') or [None])[0], 'content')  # the first, as the SDK reads it
    elif not _has(o, 'parts'): o = _get(o, 'content')  # a candidate
    return list(_get(o, 'parts') or [])

class UnansweredCall(ValueError):
    "A response holds a call funccall can't answer (computer use, a shell, a type it doesn't know): answer it yourself"

def _other(what: str, others: str) -> ToolCall | None:
    "No call (a call item funccall can't answer, skipped), or `UnansweredCall` raised for it"
    if others == 'raise':
        raise UnansweredCall(f"The response holds a {what} call that funccall can't answer, and the next request fails without its "
                             "answer: answer it yourself, and pass others='skip' to read the function calls beside it")
    return None

def _openai_call(c: Any, i: int, others: str='skip') -> ToolCall | None:
    if (fn := _get(c, 'function')) is not None: return ToolCall(_get(fn, 'name'), _args(_get(fn, 'arguments')), _get(c, 'id'))
    if (cu := _get(c, 'custom')) is not None: return CustomToolCall(_get(cu, 'name'), _get(cu, 'input') or '', _get(c, 'id'))
    return _other(repr(_get(c, 'type')), others)

# Responses items that are no calls, or calls OpenAI runs itself (hosted tools); `tool_search_call` is a `DeferredToolbox`'s
_RESPONSES_NOT_OURS = {'message', 'reasoning', 'compaction', 'additional_tools', 'program', 'program_output', 'file_search_call',
                       'web_search_call', 'image_generation_call', 'code_interpreter_call', 'mcp_call', 'mcp_list_tools',
                       'mcp_approval_response', 'tool_search_call', 'tool_search_output'}

def _responses_call(c: Any, i: int, others: str='skip') -> ToolCall | None:
    t = _get(c, 'type')
    if t == 'function_call':  # `id` names the item; the output answers `call_id`
        return ToolCall(_get(c, 'name'), _args(_get(c, 'arguments')), _get(c, 'call_id'))
    if t == 'custom_tool_call': return CustomToolCall(_get(c, 'name'), _get(c, 'input') or '', _get(c, 'call_id'))
    if t in _RESPONSES_NOT_OURS or (isinstance(t, str) and t.endswith('_output')): return None
    return _other(repr(t), others)  # computer_call, local_shell_call, shell_call, apply_patch_call, mcp_approval_request, new ones

def _anthropic_call(c: Any, i: int, others: str='skip') -> ToolCall | None:
    if _get(c, 'type') != 'tool_use': return None  # `server_tool_use` and `mcp_tool_use` run on Anthropic's side
    return ToolCall(_get(c, 'name'), _args(_get(c, 'input')), _get(c, 'id'))

def _gemini_call(c: Any, i: int, others: str='skip') -> ToolCall | None:
    fc = _get(c, 'function_call', 'functionCall')  # the SDK's names, or the REST API's
    if fc is None: return None
    nm = _get(fc, 'name')
    return ToolCall(nm, _args(_get(fc, 'args')), _get(fc, 'id') or f'{_made}{i}-{nm}')  # Gemini matches id-less answers by name and order

_readers: dict[str, Callable[..., ToolCall | None]] = {
    'openai': _openai_call, 'openai_responses': _responses_call, 'anthropic': _anthropic_call, 'gemini': _gemini_call}
CALL_PROVIDERS: tuple[str, ...] = tuple(_readers)  # the providers whose tool calls funccall reads (MCP's come to the server instead)

def _provider(p: str) -> str: return provider_name(p, CALL_PROVIDERS)

def _detect(o: Any) -> str | None:
    "The provider whose response (or part of one) `o` is, from its shape; `None` for a list holding no call"
    if isinstance(o, (list, tuple)): return next((p for c in o for p, read in _readers.items() if read(c, 0) is not None), None)
    if any(_has(o, k) for k in ('choices', 'message', 'tool_calls')): return 'openai'
    if _has(o, 'output'): return 'openai_responses'
    if _has(o, 'candidates') or _has(o, 'parts'): return 'gemini'
    content = _get(o, 'content')
    if isinstance(content, (list, tuple)): return 'anthropic'
    if content is not None and _has(content, 'parts'): return 'gemini'  # a candidate
    if _get(o, 'role') == 'assistant': return 'openai'  # a chat message without calls leaves `tool_calls` out
    raise ValueError(f"Can't tell which provider's response a {type(o).__name__} is; pass provider= one of {', '.join(map(repr, _readers))}")

def _others(others: str) -> None:
    if others not in ('raise', 'skip'): raise ValueError(f"others must be 'raise' or 'skip', not {others!r}")

def tool_call(
    item: Any,           # one item that may be a call: a chat `tool_calls` entry, a Responses output item, an Anthropic block, a Gemini part
    provider: str,       # 'openai', 'openai_responses', 'anthropic' or 'gemini'
    index: int=0,        # how many calls come before it in the response: a Gemini call without an id is named by it
    others: Literal['raise', 'skip']='raise',  # as `tool_calls` takes it
) -> ToolCall | None:    # the call, as `tool_calls` reads it; None for an item that is no call funccall answers
    "The call one item of a response holds (what a stream reads item by item)"
    _others(others)
    return _readers[_provider(provider)](item, index, others)

def calls_of(
    response: Any,       # as `tool_calls` takes it
    provider: str | None=None,  # as `tool_calls` takes it
    others: Literal['raise', 'skip']='raise',  # as `tool_calls` takes it
) -> tuple[list[ToolCall], str | None]:  # the calls, and the provider (given, or told from the shape; None for a list holding no call)
    "`tool_calls`, and whose response it was"
    _others(others)
    p = _provider(provider) if provider is not None else _detect(response)
    if p is None: return [], None
    read = _readers[p]
    res: list[ToolCall] = []
    for c in _items(response, p):
        if (tc := read(c, len(res), others)) is not None: res.append(tc)
    return res, p

def tool_calls(
    response: Any,       # a response (SDK object or dict), or the part holding the calls: a message, `output`, `content`, `parts`
    provider: str | None=None,  # 'openai', 'openai_responses', 'anthropic' or 'gemini'; by default told from `response`'s shape
    others: Literal['raise', 'skip']='raise',  # a call funccall can't answer (computer use, a shell, an unknown type): 'raise'
                         #   `UnansweredCall`, or 'skip' it
) -> list[ToolCall]:     # every function call (and custom tool call), in order
    """The function calls a model's response asks for.

    Without `provider`, the shape tells: `choices`, `message` or `tool_calls` is OpenAI chat, `output` is
    Responses, `candidates` or `parts` is Gemini, a `content` list is Anthropic; in a list, the first call item."""
    return calls_of(response, provider, others)[0]

# --- writing results back ---------------------------------------------------------------------------

def _id(r: ToolResult) -> str:
    if r.call_id is None: raise ValueError(f"The result of {r.name!r} has no call_id to answer; run it with the call's id (ToolCall.id)")
    return r.call_id

def _gemini_value(r: ToolResult) -> Any:
    "The value as JSON, so the model reads data as data; as text when the tool cuts its text (`max_chars`) or JSON can't hold it"
    if not r.cut:
        try: return jsonable(r.value)
        except TypeError: pass
    return r.text

def _gemini_response(r: ToolResult) -> JsonDict:
    # `output` and `error` are the keys FunctionResponse.response documents; other keys would all be read as output
    d: JsonDict = {'name': r.name, 'response': {'output': _gemini_value(r)} if r.ok else {'error': r.error}}
    if r.call_id and not r.call_id.startswith(_made): d = {'id': r.call_id, **d}  # the API never saw a made-up id
    return d

_PLAIN = frozenset({str, int, float, bool, type(None)})  # values that hold no media (`content.parts` of them is None)

def _parts(r: ToolResult) -> list[Any] | None:
    "The result's text and media parts, when it holds media (and succeeded)"
    return content.parts(r.value, to_text) if r.ok and type(r.value) not in _PLAIN else None

def _chat(rs: list[ToolResult], kinds: dict[str | None, str]) -> list[JsonDict]:
    # Chat Completions takes only text in a tool message: media follow, after all the tool messages, in one user message
    msgs: list[JsonDict] = []
    media: list[JsonDict] = []
    for r in rs:
        ps = _parts(r)
        if ps is None: msgs.append({'role': 'tool', 'tool_call_id': _id(r), 'content': r.text}); continue
        text, m = content.chat(ps, _id(r))
        msgs.append({'role': 'tool', 'tool_call_id': _id(r), 'content': text})
        media += m
    return msgs + ([{'role': 'user', 'content': media}] if media else [])

def _responses(rs: list[ToolResult], kinds: dict[str | None, str]) -> list[JsonDict]:
    res: list[JsonDict] = []
    for r in rs:
        ps = _parts(r)
        out = r.text if ps is None else content.responses(ps)
        kind = 'custom_tool_call_output' if kinds.get(r.call_id) == 'custom' else 'function_call_output'
        res.append({'type': kind, 'call_id': _id(r), 'output': out})
    return res

def _anthropic_block(r: ToolResult) -> JsonDict:
    ps = _parts(r)
    return {'type': 'tool_result', 'tool_use_id': _id(r), 'content': r.text if ps is None else content.anthropic(ps), 'is_error': not r.ok}

def _gemini_part(r: ToolResult) -> JsonDict:
    ps = _parts(r)
    if ps is None: return {'function_response': _gemini_response(r)}
    text, media = content.gemini(ps)
    return {'function_response': {**_gemini_response(r), 'response': {'output': text}, 'parts': media}}

_writers: dict[str, Callable[[list[ToolResult], dict[str | None, str]], list[JsonDict]]] = {
    'openai': _chat,
    'openai_responses': _responses,
    # one user message for all: the message after the assistant's must answer each of its tool_use blocks
    'anthropic': lambda rs, kinds: [{'role': 'user', 'content': [_anthropic_block(r) for r in rs]}],
    'gemini': lambda rs, kinds: [{'role': 'user', 'parts': [_gemini_part(r) for r in rs]}],  # the role the SDK sends them with
}

def tool_results(
    results: Iterable[ToolResult],  # from `Toolbox.batch`, `Tool.execute`...: each with the `call_id` it answers
    provider: str,                  # 'openai', 'openai_responses', 'anthropic' or 'gemini'
    calls: Iterable[ToolCall]=(),   # the calls they answer: a custom tool call gets a custom tool call output (Responses)
) -> list[JsonDict]:                    # what to add to the next request's messages (or input, or contents); none for no results
    """The results of a model's tool calls, as the provider takes them back.

    OpenAI chat: a `tool` message per result (and one user message after them with any media). Responses: a
    `function_call_output` item per result (`custom_tool_call_output` for a custom call), media as `input_image`/
    `input_file` items. Anthropic: one user message of `tool_result` blocks, `is_error` set for failures, media as
    image and document blocks. Gemini: one user content of `function_response` parts, `{'output': value}` or
    `{'error': message}`, media as the response's `inline_data` parts. A pending result can't answer its call yet."""
    p, rs = _provider(provider), list(results)
    if waiting := [r.name for r in rs if r.status == 'pending']:
        raise ValueError(f"The call of {waiting[0]!r} waits for the user's approval: answer it with Toolbox.resume(result, approve=...) first")
    kinds: dict[str | None, str] = {c[2]: c.kind for c in calls if getattr(c, 'kind', 'function') != 'function'}
    return _writers[p](rs, kinds) if rs else []

# --- both ---------------------------------------------------------------------------------------------

class ToolMessages(list[JsonDict]):
    """The messages answering a response's calls, ready to add to the next request (it is a list of them), and what
    came of the calls: `results` (every `ToolResult`, in order), `stop` (a tool asked the loop to stop: `stop_after`
    or `StopRun`), `pending` (calls waiting for the user's approval: not answered here; resume them with
    `Toolbox.resume` and answer all the calls together, `tool_results([*done, *resumed], provider)`)"""
    def __init__(
        self,
        msgs: Iterable[JsonDict]=(),          # the messages (or items, or contents) answering the calls
        results: Iterable[ToolResult]=(),     # what came of each call, in order
        provider: str | None=None,            # whose shape the messages are in
    ):
        super().__init__(msgs)
        self.results: list[ToolResult] = list(results)
        self.provider: str | None = provider

    @property
    def stop(self) -> bool: return any(r.stop for r in self.results)

    @property
    def pending(self) -> list[ToolResult]: return [r for r in self.results if r.status == 'pending']

    @property
    def done(self) -> list[ToolResult]: return [r for r in self.results if r.status != 'pending']

# --- what the providers ask beyond function calls ---------------------------------------------------------

def output_items(
    response: Any,   # a response, as `tool_calls` takes it
    provider: str | None,  # its provider, given or told from its shape (None: a list holding no function call)
) -> list[Any]:           # the items of a Responses output (a list given as it is); none for another provider's response
    "The items of a Responses output, where the items beyond function calls are (client tool searches, a program's calls)"
    if provider is not None and provider != 'openai_responses': return []
    if isinstance(response, (list, tuple)): return list(response)
    return list(_get(response, 'output') or []) if _has(response, 'output') else []

def _getter(it: Any) -> Callable[[str], Any]:
    "A reader of keys of item `it`, a dict or an SDK object"
    return it.get if isinstance(it, dict) else (lambda k: getattr(it, k, None))

def program_callers(
    items: list[Any],  # a Responses output's items (SDK objects or dicts)
) -> dict[Any, JsonDict]:  # call_id (as the item has it) -> the `caller` its output must name, for each function call a program made
    "The program each of OpenAI's programmatic function calls came from, so its answer goes back to it"
    res: dict[Any, JsonDict] = {}
    for it in items:
        get = _getter(it)
        c = get('caller')
        if get('type') != 'function_call' or c is None: continue
        cg = _getter(c)
        if cg('type') == 'program': res[get('call_id')] = {'type': 'program', 'caller_id': cg('caller_id')}
    return res

def tool_searches(
    items: list[Any],  # a Responses output's items (SDK objects or dicts)
) -> list[tuple[Any, Any]]:  # (call_id, arguments) of each client-executed `tool_search_call`, in order
    "The tool searches OpenAI asks the client to run (`tool_search` with `execution: 'client'`)"
    return [(get('call_id'), get('arguments')) for get in map(_getter, items)
            if get('type') == 'tool_search_call' and get('execution') == 'client']

def tool_search_output(
    call_id: str,         # the search's `call_id`
    definitions: list[JsonDict],  # the definitions of the tools found (Responses format), now loaded
    complete: bool=True,  # False: the search's arguments could not be searched with
) -> JsonDict:                # the `tool_search_output` item answering it
    "The answer to a client-executed tool search: the tools it found"
    return {'type': 'tool_search_output', 'call_id': call_id, 'execution': 'client', 'status': 'completed' if complete else 'incomplete',
            'tools': definitions}

class Found(str):
    "What a tool search answers: the text the model reads, and the names found (Claude gets them as `tool_reference` blocks)"
    names: list[str]  # the tools found, by name

    def __new__(cls, text: str, names: Iterable[str]=()) -> Found:
        self = super().__new__(cls, text)
        self.names = list(names)
        return self

def references(
    r: ToolResult,  # a `ToolResult`
) -> list[JsonDict] | None:  # `tool_reference` blocks, or None when `r`'s value is no `Found` naming tools
    "The tools a search found, as Claude's `tool_reference` blocks: they load the deferred definitions of those tools"
    if not (r.ok and isinstance(r.value, Found) and r.value.names): return None
    return [{'type': 'tool_reference', 'tool_name': nm} for nm in r.value.names]
