"""Streamed tool calls: a 1 MB argument arriving one character at a time, and the time from a call's closing brace
to its tool starting.

    python benchmarks/bench_stream.py            # add --quick for a 100 KB argument

1. A tool call whose argument is 1 MB of code (with escapes: quotes, newlines, non-ASCII), sent as Anthropic
   `input_json_delta` events of one character each (their dict form), read by:
   - funccall's `ToolCallStream` (events in, the call out when its object closes), and its JSON reader alone;
   - re-parsing each prefix with `jiter`'s partial mode (`from_json(buf, partial_mode=True)`), as the Anthropic
     SDK's stream helper does for each delta;
   - re-parsing each prefix with `json.loads` (the naive way to learn when the arguments close).
   The two re-parsers cost time quadratic in the length: they are run on prefixes of a 20 KB and a 40 KB argument,
   and their time for 1 MB extrapolated from those (time ~ n^2; the printed fit shows the exponent measured). One
   `json.loads` of the whole text is printed as the floor.
2. `run_tool_calls` over a stream (a generator of Chat Completions chunks) whose first call closes and then the
   stream runs on 50 ms more: the time from yielding the chunk holding the closing brace to the tool's first line,
   median of 30 runs, for a sync tool (run in a worker thread) and an async tool; and, for comparison, when the
   tool would start if calls were read only from the finished response (after the stream's end).
"""
import json, math, statistics, sys, time

from jiter import from_json

from funccall import Toolbox, ToolCallStream, run_tool_calls
from funccall.core._jsonstream import JsonStream

QUICK = '--quick' in sys.argv
SIZE = 100_000 if QUICK else 1_000_000

def code(n: int) -> str:
    "n characters of Python-like source, with the quotes, newlines and non-ASCII that make a JSON string escape"
    line = 'print("h\u00e9llo", x[1:2])  # caf\u00e9\n'
    return (line * (n // len(line) + 1))[:n]

def args_text(n: int) -> str:
    "The arguments' JSON text, about `n` characters long"
    escaped = len(json.dumps(code(1000))) / 1000
    return json.dumps({'path': 'big.py', 'code': code(int(n / escaped))})

def anthropic_events(text: str) -> list:
    start = [{'type': 'message_start', 'message': {'id': 'm', 'type': 'message', 'role': 'assistant', 'content': [], 'model': 'c',
                                                   'stop_reason': None, 'stop_sequence': None, 'usage': {'input_tokens': 1, 'output_tokens': 1}}},
             {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'tool_use', 'id': 't1', 'name': 'write', 'input': {}}}]
    deltas = [{'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': ch}} for ch in text]
    return start + deltas + [{'type': 'content_block_stop', 'index': 0}, {'type': 'message_stop'}]

def t_stream(evs) -> float:
    s, t = ToolCallStream(), time.perf_counter()
    for e in evs:
        if s.feed(e): done = time.perf_counter()
    assert s.calls and isinstance(s.calls[0].arguments, dict)
    return done - t

def t_reader(text: str) -> float:
    r, t = JsonStream(), time.perf_counter()
    for ch in text: r.feed(ch)
    assert r.done
    return time.perf_counter() - t

def t_jiter(text: str) -> float:
    buf, t = b'', time.perf_counter()
    for ch in text:
        buf += ch.encode()
        v = from_json(buf, partial_mode=True)
    assert v['path'] == 'big.py'
    return time.perf_counter() - t

def t_json(text: str) -> float:
    buf, t, v = '', time.perf_counter(), None
    for ch in text:
        buf += ch
        try: v = json.loads(buf)
        except ValueError: pass
    assert v is not None
    return time.perf_counter() - t

def extrapolate(f, small: int, big: int, target: int) -> tuple[float, float]:
    "f's time for `target` characters from its times at `small` and `big`, as a power law; and the exponent"
    a, b = f(args_text(small)), f(args_text(big))
    k = math.log(b / a) / math.log(big / small)
    return b * (target / big) ** k, k

def part1():
    text = args_text(SIZE)
    evs = anthropic_events(text)
    n = len(text)
    stream, reader = min(t_stream(evs) for _ in range(3)), min(t_reader(text) for _ in range(3))
    whole = min(timeit_once(lambda: json.loads(text)) for _ in range(5))
    jit, kj = extrapolate(t_jiter, 20_000, 40_000, SIZE)
    naive, kn = extrapolate(t_json, 20_000, 40_000, SIZE)
    print(f'1. A {n / 1e6:.2f} MB argument, one character per event ({n:,} events)')
    print(f'   funccall ToolCallStream (events in, call out):   {stream:8.2f} s   {stream / n * 1e6:5.2f} us/char')
    print(f'   funccall JSON reader alone:                     {reader:8.2f} s   {reader / n * 1e6:5.2f} us/char')
    print(f'   jiter partial mode, each prefix (extrapolated): {jit:8.0f} s   {jit / stream:7.0f}x funccall   (measured n^{kj:.2f})')
    print(f'   json.loads, each prefix (extrapolated):         {naive:8.0f} s   {naive / stream:7.0f}x funccall   (measured n^{kn:.2f})')
    print(f'   one json.loads of the whole text (the floor):   {whole * 1e3:8.2f} ms')

def timeit_once(f) -> float:
    t = time.perf_counter(); f(); return time.perf_counter() - t

def part2():
    stamps = {}
    def sync_tool(x: int) -> int:
        "A sync tool"
        stamps['start'] = time.perf_counter(); return x
    async def async_tool(x: int) -> int:
        "An async tool"
        stamps['start'] = time.perf_counter(); return x
    tools = Toolbox([sync_tool, async_tool])
    def chunk(delta, finish=None):
        return {'id': 'c', 'object': 'chat.completion.chunk', 'created': 0, 'model': 'm', 'choices': [{'index': 0, 'delta': delta, 'finish_reason': finish}]}
    def events(name):
        yield chunk({'role': 'assistant', 'tool_calls': [{'index': 0, 'id': 'c1', 'type': 'function', 'function': {'name': name, 'arguments': ''}}]})
        yield chunk({'tool_calls': [{'index': 0, 'function': {'arguments': '{"x": 1'}}]})
        stamps['brace'] = time.perf_counter()
        yield chunk({'tool_calls': [{'index': 0, 'function': {'arguments': '}'}}]})
        time.sleep(0.05)  # the rest of the stream: another call, text, the final chunk
        stamps['end'] = time.perf_counter()
        yield chunk({}, 'tool_calls')
    print('2. From the chunk holding a call\'s closing brace to its tool starting (median of 30; the stream runs on 50 ms)')
    for name in ('sync_tool', 'async_tool'):
        lat, before, finished = [], [], []
        for _ in range(30):
            run_tool_calls(tools, events(name))
            lat.append(stamps['start'] - stamps['brace']); before.append(stamps['end'] - stamps['start']); finished.append(stamps['end'] - stamps['brace'])
        print(f'   {name:10}: started {statistics.median(lat) * 1e3:6.2f} ms after the brace, {statistics.median(before) * 1e3:5.1f} ms before the stream ended'
              f'   (read from the finished response: >= {statistics.median(finished) * 1e3:.1f} ms after the brace)')

if __name__ == '__main__':
    part1()
    part2()
