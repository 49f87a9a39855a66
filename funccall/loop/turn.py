"""The agent loop's one step: run the tool calls of a model's response (finished or streamed) and answer them.

    msgs = run_tool_calls(toolbox, response)   # or a stream of its events: each call starts as soon as it is complete

It goes down through the layers below it and never back up: the provider shapes (`messages`: reading the calls,
writing the answers), the toolbox (`Toolbox.batch`/`abatch` run them, each through its pipeline) and the streams
(`stream`: events -> calls). What a response asks beyond function calls is answered by the toolbox it is given
(`Toolbox.answer_items`: a `search.DeferredToolbox` runs OpenAI's client tool searches), so the loop knows no toolset.
"""
from __future__ import annotations

from typing import Any, Literal

from ..core._run import loop_running, run_sync
from ..core._typing import JsonDict
from .messages import ToolMessages, UnansweredCall, calls_of, output_items, program_callers, references, tool_results, tool_searches
from .stream import is_stream, run_stream, run_stream_async
from .results import ToolResult
from .tools import Toolbox, Tools, as_toolbox

__all__ = ['run_tool_calls', 'run_tool_calls_async']

def _answer(calls: list[Any], results: list[ToolResult], p: str | None) -> ToolMessages:
    done = [r for r in results if r.status != 'pending']
    return ToolMessages(tool_results(done, p, calls), results, p)  # type: ignore[arg-type]  # (calls come with their provider)

def _streamed(calls: list[Any], results: list[ToolResult], p: str | None) -> ToolMessages:
    "The answers to a stream's calls (a stream carries no Responses-only items)"
    return _with_native(_answer(calls, results, p), [], {}) if calls else ToolMessages(provider=p)

def run_tool_calls(
    toolbox: Tools,        # the tools the model was offered: a `Toolbox`, or a list (or dict) of functions, `Tool`s and `ToolGroup`s, or one
    response: Any,         # the model's response, as `tool_calls` takes it; or a stream of its events (see `funccall.loop.stream`)
    provider: str | None=None,  # as `tool_calls` takes it
    injected: JsonDict | None=None,  # the application's values for injected parameters, for this request (over the toolbox's)
    others: Literal['raise', 'skip']='raise',  # as `tool_calls` takes it
) -> ToolMessages:         # the answers to all its calls, as `tool_results` makes them; none when nothing was called
    """Run the tool calls of a model's response (concurrently, as `Toolbox.batch` does) and answer them. Inside a running
    event loop (a notebook cell) they run on a loop of their own in a thread of their own while this waits, the
    caller's context variables copied (`core._run.run_sync`): `await run_tool_calls_async(...)` keeps them on your loop,
    as a tool that uses that loop (a client made on it) needs"""
    toolbox = as_toolbox(toolbox)
    if is_stream(response):  # a stream of events: each call starts as soon as it is complete
        return _streamed(*run_stream(toolbox, response, provider, injected, others))
    calls, p = calls_of(response, provider, others)
    searched, callers = _native(toolbox, response, p, others)
    if not calls: return ToolMessages(searched, provider=p)
    if len(calls) > 1 and not loop_running(): res = toolbox.batch(calls, injected=injected)  # (without a loop, when its tools allow)
    else: res = run_sync(toolbox.abatch(calls, injected=injected))  # (not `batch`'s inline call)
    return _with_native(_answer(calls, res, p), searched, callers)

async def run_tool_calls_async(
    toolbox: Tools,        # the tools the model was offered: a `Toolbox`, or a list (or dict) of functions, `Tool`s and `ToolGroup`s, or one
    response: Any,         # the model's response, as `tool_calls` takes it; or a stream of its events (see `funccall.loop.stream`)
    provider: str | None=None,  # as `tool_calls` takes it
    injected: JsonDict | None=None,  # the application's values for injected parameters, for this request (over the toolbox's)
    others: Literal['raise', 'skip']='raise',  # as `tool_calls` takes it
) -> ToolMessages:         # the answers to all its calls, as `tool_results` makes them; none when nothing was called
    "`run_tool_calls` for async code"
    toolbox = as_toolbox(toolbox)
    if is_stream(response):
        return _streamed(*await run_stream_async(toolbox, response, provider, injected, others))
    calls, p = calls_of(response, provider, others)
    searched, callers = _native(toolbox, response, p, others)
    if not calls: return ToolMessages(searched, provider=p)
    return _with_native(_answer(calls, await toolbox.abatch(calls, injected=injected), p), searched, callers)

def _native(toolbox: Toolbox, response: Any, p: str | None, others: str) -> tuple[list[JsonDict], dict[Any, JsonDict]]:
    """What a Responses output asks beyond function calls: the items the toolbox answers itself (client-run tool searches),
    the callers of a program's calls; `p` is the provider given or told from the shape (None: a list holding no function
    call, which may hold searches)"""
    if not (items := output_items(response, p)): return [], {}
    answers = toolbox.answer_items(items)
    if others == 'raise' and len(answers) < len(tool_searches(items)):  # else the next request fails for its missing output
        raise UnansweredCall("The response holds a client-run tool search this toolbox doesn't answer: run the calls with the toolbox "
                             "whose definitions offered it (`funccall.toolsets.search.deferred(toolbox, search='client')`), or pass others='skip'")
    return answers, program_callers(items)

def _with_native(msgs: ToolMessages, searched: list[JsonDict], callers: dict[Any, JsonDict]) -> ToolMessages:
    """The answers with what the toolbox and the providers' programs add: the items the toolbox answered first, a program's
    calls answered to it (`caller`), and the tools a search found (a `Found` value) sent to Claude as `tool_reference`
    blocks, which load those deferred definitions"""
    if msgs.provider == 'anthropic' and msgs:
        for block, r in zip(msgs[0]['content'], msgs.done):
            if (refs := references(r)) is not None: block['content'] = refs
    for m in msgs:
        if (c := callers.get(m.get('call_id'))) is not None: m['caller'] = c
    return ToolMessages([*searched, *msgs], msgs.results, msgs.provider) if searched else msgs
