"""The agent-loop path: from a model's response to the messages that answer it, beside the plain ways and openai-agents.

    python benchmarks/bench_loop.py

One tool call: `call_func` (the floor: find, check, call), `Tool.execute`, `Toolbox.call`, `Toolbox.batch` of one call.
A turn of 8 sync tools, from an OpenAI Chat Completions response (the SDK's own object) to the `tool` messages:
`run_tool_calls` (sync) and `run_tool_calls_async`, `Toolbox.batch` of eight, beside `asyncio.to_thread` + `gather`
(each call's JSON read and the message written by hand, nothing checked) and openai-agents' tool invocation
(`FunctionTool.on_invoke_tool` of each call, gathered: what its runner does for a turn's function calls, checking the
arguments with pydantic and running sync tools through `asyncio.to_thread`).

CPU time (`time.process_time`, every thread's) per call or turn, the median of many: the machine is shared, and a
thread handoff's waiting is not work. Targets (issue 22): a batch of one call within a few µs of `Tool.execute`; a turn
at most openai-agents' and at most 1.2x to_thread + gather; sync `run_tool_calls` at most 1.1x its async form.
openai-agents is a peer we measure against, never a dependency.
"""
from __future__ import annotations

import asyncio, json, statistics, sys, time

from agents import function_tool
from agents.tool_context import ToolContext
from openai.types.chat import ChatCompletion

from funccall import Tool, Toolbox, call_func, run_tool_calls, run_tool_calls_async
from _timing import cpu_us

def get_weather(city: str, days: int = 1) -> str:
    "The weather in `city` for the next `days` days"
    return f'{city}: sunny for {days} days'

def add(a: int, b: int) -> int:
    "Add two integers"
    return a + b

def search(query: str, limit: int = 10) -> list:
    "Search the docs"
    return [query] * min(limit, 3)

def convert(amount: float, currency: str) -> float:
    "Convert an amount to `currency`"
    return amount * 1.1

def lookup(user_id: int) -> dict:
    "A user's record"
    return {'id': user_id, 'name': 'Ada'}

def translate(text: str, to: str = 'fr') -> str:
    "Translate `text`"
    return text[::-1]

def count(words: list[str]) -> int:
    "Number of words"
    return len(words)

def book(room: str, hours: int) -> bool:
    "Book a room"
    return hours < 8

FNS = [get_weather, add, search, convert, lookup, translate, count, book]
ARGS = [{'city': 'Paris', 'days': 2}, {'a': 1, 'b': 2}, {'query': 'tools'}, {'amount': 3.5, 'currency': 'EUR'}, {'user_id': 7},
        {'text': 'hello', 'to': 'de'}, {'words': ['a', 'b', 'c']}, {'room': 'A1', 'hours': 2}]
RESPONSE = ChatCompletion.model_validate({
    'id': 'c1', 'object': 'chat.completion', 'created': 0, 'model': 'm',
    'choices': [{'index': 0, 'finish_reason': 'tool_calls', 'message': {'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': f'call_{i}', 'type': 'function', 'function': {'name': f.__name__, 'arguments': json.dumps(a)}}
        for i, (f, a) in enumerate(zip(FNS, ARGS))]}}]})

ROUNDS = 25

_cpu_us = cpu_us

async def _acpu_us(make, n: int, rounds: int = 7) -> float:
    "`_cpu_us` of awaiting `make()`, inside one running loop"
    ts = []
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(n): await make()
        ts.append((time.process_time() - t) / n * 1e6)
    return statistics.median(ts)

def main():
    tools = Toolbox(FNS)
    one = Tool(add)
    ns = {f.__name__: f for f in FNS}
    calls = [(c.function.name, c.function.arguments, c.id) for c in RESPONSE.choices[0].message.tool_calls]
    text = calls[1][1]
    assert call_func('add', text, ns) == one.execute(text).value == tools.call('add', text).value == tools.batch([('add', text)])[0].value == 3
    assert [m['content'] for m in run_tool_calls(tools, RESPONSE)] == [m['content'] for m in asyncio.run(run_tool_calls_async(tools, RESPONSE))]
    agent_tools = {f.__name__: function_tool(f) for f in FNS}

    async def plain_turn():  # the floor of a concurrent turn: no check, no report
        async def run(nm, args, cid): return {'role': 'tool', 'tool_call_id': cid, 'content': str(await asyncio.to_thread(ns[nm], **json.loads(args)))}
        return await asyncio.gather(*(run(c.function.name, c.function.arguments, c.id) for c in RESPONSE.choices[0].message.tool_calls))

    async def agents_turn():
        async def run(nm, args, cid):
            ctx = ToolContext(context=None, tool_name=nm, tool_call_id=cid, tool_arguments=args)
            return {'role': 'tool', 'tool_call_id': cid, 'content': str(await agent_tools[nm].on_invoke_tool(ctx, args))}
        return await asyncio.gather(*(run(c.function.name, c.function.arguments, c.id) for c in RESPONSE.choices[0].message.tool_calls))

    async def async_round(n: int) -> dict:
        return {'turn_async': await _acpu_us(lambda: run_tool_calls_async(tools, RESPONSE), n, 1),
                'abatch8': await _acpu_us(lambda: tools.abatch(calls), n, 1),
                'plain': await _acpu_us(plain_turn, n, 1),
                'agents': await _acpu_us(agents_turn, n, 1)}

    loop = asyncio.new_event_loop()
    got = loop.run_until_complete(agents_turn())
    assert len(got) == 8 and not any('error' in m['content'].lower() for m in got), got
    single = {'call_func': _cpu_us(lambda: call_func('add', text, ns), 20_000),
              'execute': _cpu_us(lambda: one.execute(text), 20_000),
              'call': _cpu_us(lambda: tools.call('add', text), 20_000),
              'batch1': _cpu_us(lambda: tools.batch([('add', text)]), 20_000)}
    rounds = []  # every way of a turn once per round, one after another, so the machine's load weighs on them alike
    for _ in range(ROUNDS):
        r = {'turn_sync': _cpu_us(lambda: run_tool_calls(tools, RESPONSE), 40, 1), 'batch8': _cpu_us(lambda: tools.batch(calls), 40, 1),
             'call_func8': _cpu_us(lambda: [call_func(nm, a, ns) for nm, a, _ in calls], 400, 1)}
        r.update(loop.run_until_complete(async_round(40)))
        rounds.append(r)
    loop.close()
    turn = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    ratio = lambda a, b: statistics.median(r[a] / r[b] for r in rounds)

    print(f"python {sys.version.split()[0]}; CPU µs (all threads); one call: median of 7 rounds; a turn: median of {ROUNDS} rounds, "
          f"ratios the median of each round's\n")
    print('one call of add(a, b) from JSON text:')
    for k, label in (('call_func', 'call_func'), ('execute', 'Tool.execute'), ('call', 'Toolbox.call'), ('batch1', 'Toolbox.batch, one call')):
        print(f"  {label:28} {single[k]:8.2f}")
    gap = single['batch1'] - single['execute']
    print(f"  a batch of one over Tool.execute: +{gap:.1f} µs (target: a few µs: {'yes' if gap <= 5 else 'NO'})")
    print('\na turn of 8 sync tools, response -> result messages:')
    for k, label in (('call_func8', 'call_func x 8, one after another'), ('batch8', 'Toolbox.batch of 8'), ('abatch8', 'await Toolbox.abatch of 8'),
                     ('turn_sync', 'run_tool_calls'), ('turn_async', 'await run_tool_calls_async'),
                     ('plain', 'asyncio.to_thread + gather'), ('agents', 'openai-agents on_invoke_tool')):
        print(f"  {label:36} {turn[k]:8.1f}")
    r_agents, r_plain, r_sync = ratio('turn_sync', 'agents'), ratio('turn_sync', 'plain'), ratio('turn_sync', 'turn_async')
    print(f"  run_tool_calls / openai-agents: {r_agents:.2f} (target <= 1: {'yes' if r_agents <= 1 else 'NO'}); "
          f"/ to_thread + gather: {r_plain:.2f} (target <= 1.2: {'yes' if r_plain <= 1.2 else 'NO'}); "
          f"sync / async: {r_sync:.2f} (target <= 1.1: {'yes' if r_sync <= 1.1 else 'NO'})")
    print(f"  run_tool_calls_async / openai-agents: {ratio('turn_async', 'agents'):.2f}; / to_thread + gather: {ratio('turn_async', 'plain'):.2f}")

if __name__ == '__main__': main()
