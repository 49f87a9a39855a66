"""The provider round trip: read the tool calls out of a model's response, write the results back.

`tool_calls(response)` reads every function call a response asks for, in order, from the SDK's response
object or its dict (JSON) form. `tool_results(results, provider)` turns the `ToolResult`s of running them
into what the next request carries. `run_tool_calls(toolbox, response)` does both:

    msgs = run_tool_calls(toolbox, response)
    # the assistant's message (which holds the calls) goes first, then the answers:
    # OpenAI chat:      messages += [response.choices[0].message, *msgs]
    # OpenAI Responses: input += [*response.output, *msgs]
    # Anthropic:        messages += [{'role': 'assistant', 'content': response.content}, *msgs]
    # Gemini:           contents += [response.candidates[0].content, *msgs]

Providers are named as the `to_*` renderers name them: 'openai' (Chat Completions), 'openai_responses',
'anthropic', 'gemini'. The provider SDKs are never imported: their objects are read by attribute, dicts by key.
"""
from __future__ import annotations

import json
from typing import Iterable, NamedTuple

from ._json import jsonable
from ._run import run_sync
from .tools import Toolbox, ToolResult

__all__ = ['ToolCall', 'tool_calls', 'tool_results', 'run_tool_calls', 'run_tool_calls_async']

_made = 'funccall-'  # how ids made up for Gemini calls begin: they are never sent back

class ToolCall(NamedTuple):
    "One function call a model asks for; it unpacks as the `(name, args, call_id)` that `Toolbox.batch` takes"
    name: str              # the tool's name, as the model sent it
    arguments: dict | str  # the arguments; the model's text when it is not a JSON object, so running it reports that
    id: str                # the id the result must answer (for a Gemini call without one, `funccall-{index}-{name}`)

def _get(o, *keys):
    "The value of the first of `keys` that `o` (a dict or an SDK object) holds, not null"
    for k in keys:
        v = o.get(k) if isinstance(o, dict) else getattr(o, k, None)
        if v is not None: return v
    return None

def _has(o, k: str) -> bool: return k in o if isinstance(o, dict) else hasattr(o, k)

def _args(v) -> dict | str:
    "The arguments as a dict; text that isn't a JSON object stays text, to fail as a `ToolInputError` when run, not here"
    if v is None: return {}
    if not isinstance(v, str): return v
    if not v.strip(): return {}  # a call without arguments may come as ''
    try: d = json.loads(v)
    except (ValueError, RecursionError): return v
    return d if isinstance(d, dict) else v

# --- reading calls: where each provider keeps them, and one call item -------------------------------

def _items(o, p: str) -> list:
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

def _openai_call(c, i: int) -> ToolCall | None:
    fn = _get(c, 'function')  # custom tool calls (`type: custom`, free text in) have none: funccall offers no such tools
    return None if fn is None else ToolCall(_get(fn, 'name'), _args(_get(fn, 'arguments')), _get(c, 'id'))

def _responses_call(c, i: int) -> ToolCall | None:
    if _get(c, 'type') != 'function_call': return None
    return ToolCall(_get(c, 'name'), _args(_get(c, 'arguments')), _get(c, 'call_id'))  # `id` names the item; the output answers `call_id`

def _anthropic_call(c, i: int) -> ToolCall | None:
    if _get(c, 'type') != 'tool_use': return None  # `server_tool_use` and `mcp_tool_use` run on Anthropic's side
    return ToolCall(_get(c, 'name'), _args(_get(c, 'input')), _get(c, 'id'))

def _gemini_call(c, i: int) -> ToolCall | None:
    fc = _get(c, 'function_call', 'functionCall')  # the SDK's names, or the REST API's
    if fc is None: return None
    nm = _get(fc, 'name')
    return ToolCall(nm, _args(_get(fc, 'args')), _get(fc, 'id') or f'{_made}{i}-{nm}')  # Gemini matches id-less answers by name and order

_readers = {'openai': _openai_call, 'openai_responses': _responses_call, 'anthropic': _anthropic_call, 'gemini': _gemini_call}

def _provider(p: str) -> str:
    k = str(p).lower()  # 'OpenAI', as `tool_name` spells it, works too
    if k == 'responses': k = 'openai_responses'  # as `Toolbox.definitions` and the command line name it
    if k not in _readers: raise ValueError(f"Unknown provider {p!r}; use one of {', '.join(map(repr, _readers))}")
    return k

def _detect(o) -> str | None:
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

def _calls(response, provider: str | None) -> tuple[list[ToolCall], str | None]:
    p = _provider(provider) if provider is not None else _detect(response)
    if p is None: return [], None
    read, res = _readers[p], []
    for c in _items(response, p):
        if (tc := read(c, len(res))) is not None: res.append(tc)
    return res, p

def tool_calls(
    response,            # a response (SDK object or dict), or the part holding the calls: a message, `output`, `content`, `parts`
    provider: str=None,  # 'openai', 'openai_responses', 'anthropic' or 'gemini'; by default told from `response`'s shape
) -> list[ToolCall]:     # every function call, in order
    """The function calls a model's response asks for.

    Without `provider`, the shape tells: `choices`, `message` or `tool_calls` is OpenAI chat, `output` is
    Responses, `candidates` or `parts` is Gemini, a `content` list is Anthropic; in a list, the first call item."""
    return _calls(response, provider)[0]

# --- writing results back ---------------------------------------------------------------------------

def _id(r: ToolResult) -> str:
    if r.call_id is None: raise ValueError(f"The result of {r.name!r} has no call_id to answer; run it with the call's id (ToolCall.id)")
    return r.call_id

def _gemini_value(r: ToolResult):
    "The value as JSON, so the model reads data as data; as text when the tool cuts its text (`max_chars`) or JSON can't hold it"
    if r.limit is None:
        try: return jsonable(r.value)
        except TypeError: pass
    return r.text

def _gemini_response(r: ToolResult) -> dict:
    # `output` and `error` are the keys FunctionResponse.response documents; other keys would all be read as output
    d = {'name': r.name, 'response': {'output': _gemini_value(r)} if r.ok else {'error': r.error}}
    if r.call_id and not r.call_id.startswith(_made): d = {'id': r.call_id, **d}  # the API never saw a made-up id
    return d

_writers = {
    'openai': lambda rs: [{'role': 'tool', 'tool_call_id': _id(r), 'content': r.text} for r in rs],
    'openai_responses': lambda rs: [{'type': 'function_call_output', 'call_id': _id(r), 'output': r.text} for r in rs],
    # one user message for all: the message after the assistant's must answer each of its tool_use blocks
    'anthropic': lambda rs: [{'role': 'user', 'content': [
        {'type': 'tool_result', 'tool_use_id': _id(r), 'content': r.text, 'is_error': not r.ok} for r in rs]}],
    'gemini': lambda rs: [{'role': 'user', 'parts': [{'function_response': _gemini_response(r)} for r in rs]}],  # the role the SDK sends them with
}

def tool_results(
    results: Iterable[ToolResult],  # from `Toolbox.batch`, `Tool.execute`...: each with the `call_id` it answers
    provider: str,                  # 'openai', 'openai_responses', 'anthropic' or 'gemini'
) -> list[dict]:                    # what to add to the next request's messages (or input, or contents); none for no results
    """The results of a model's tool calls, as the provider takes them back.

    OpenAI chat: a `tool` message per result. Responses: a `function_call_output` item per result.
    Anthropic: one user message of `tool_result` blocks, `is_error` set for failures. Gemini: one user
    content of `function_response` parts, `{'output': value}` or `{'error': message}`."""
    p, rs = _provider(provider), list(results)
    return _writers[p](rs) if rs else []

# --- both ---------------------------------------------------------------------------------------------

def run_tool_calls(
    toolbox: Toolbox,      # the tools the model was offered
    response,              # the model's response, as `tool_calls` takes it
    provider: str=None,    # as `tool_calls` takes it
    injected: dict=None,   # the application's values for injected parameters, for this request (over the toolbox's)
) -> list[dict]:           # the answers to all its calls, as `tool_results` makes them; none when nothing was called
    "Run the tool calls of a model's response (concurrently, as `Toolbox.batch` does) and answer them"
    calls, p = _calls(response, provider)
    searched, callers = _native(toolbox, response, provider)
    if not calls: return searched
    res = run_sync(toolbox.abatch(calls, injected=injected), 'await run_tool_calls_async(...)', 'run_tool_calls')
    return searched + _with_callers(_with_references(tool_results(res, p), res, p), callers)

async def run_tool_calls_async(
    toolbox: Toolbox,      # the tools the model was offered
    response,              # the model's response, as `tool_calls` takes it
    provider: str=None,    # as `tool_calls` takes it
    injected: dict=None,   # the application's values for injected parameters, for this request (over the toolbox's)
) -> list[dict]:           # the answers to all its calls, as `tool_results` makes them; none when nothing was called
    "`run_tool_calls` for async code"
    calls, p = _calls(response, provider)
    searched, callers = _native(toolbox, response, provider)
    if not calls: return searched
    res = await toolbox.abatch(calls, injected=injected)
    return searched + _with_callers(_with_references(tool_results(res, p), res, p), callers)

def _native(toolbox: Toolbox, response, provider) -> tuple[list, dict]:
    "What a Responses output asks beyond function calls: client-run tool searches (answered here), callers of a program's calls"
    if provider is not None and _provider(provider) != 'openai_responses': return [], {}
    items = list(response) if isinstance(response, (list, tuple)) else _get(response, 'output') if _has(response, 'output') else None
    if not items: return [], {}
    from .codemode import program_callers
    from .search import client_searches
    return client_searches(toolbox, items), program_callers(items)

def _with_references(outs: list, results: list, p: str) -> list:
    "The tools `search_tools` found go back to Claude as `tool_reference` blocks, which load their deferred definitions"
    if p != 'anthropic' or not outs: return outs
    from .search import references
    for block, r in zip(outs[0]['content'], results):
        if (refs := references(r)) is not None: block['content'] = refs
    return outs

def _with_callers(outs: list, callers: dict) -> list:
    "A program's calls are answered to the program: the output names it as their caller"
    for o in outs:
        if (c := callers.get(o.get('call_id'))) is not None: o['caller'] = c
    return outs
