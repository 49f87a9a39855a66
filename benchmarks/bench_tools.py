"""The tool pipeline's own cost: `Tool.execute` and `Toolbox.call` beside `call_func` (the same checked call with
nothing around it) and fastcore.funccall's `call_func`, in one run; then the same call traced, to show what tracing
costs when it is on and that it costs nothing when it is off.

    python benchmarks/bench_tools.py

Targets: `Tool.execute` of `add(a, b)` within 2.5x `call_func`'s time with tracing off (the pipeline: injected values,
hooks, confirmation, cache, timeout and retries, a trace when anyone listens); the `funccall` logger left at WARNING and
no OpenTelemetry provider cost one dict look-up and one level check per call.
The machine may be shared: compare the ratios of one run, and take the median of a few runs.
"""
import logging, timeit

from fastcore import funccall as fc

import funccall

def add(a: int, b: int) -> int:
    "Add two integers"
    return a + b

ARGS = {'a': 1, 'b': 2}

def best(f, n: int = 5000, repeat: int = 15) -> float:
    "Microseconds per call, the best of `repeat` runs"
    return min(timeit.repeat(f, number=n, repeat=repeat)) / n * 1e6

def main():
    tool, box, ns = funccall.Tool(add), funccall.Toolbox([add]), [add]
    floor = best(lambda: funccall.call_func('add', ARGS, ns))
    rows = [('fastcore.funccall.call_func (unchecked)', best(lambda: fc.call_func('add', ARGS, ns))),
            ('funccall.call_func', floor),
            ('Tool.execute', best(lambda: tool.execute(ARGS))),
            ('Toolbox.call', best(lambda: box.call('add', ARGS)))]
    logger = logging.getLogger('funccall')
    logger.addHandler(logging.NullHandler())
    logger.setLevel(logging.DEBUG)
    rows.append(('Tool.execute, logger at DEBUG', best(lambda: tool.execute(ARGS), 2000, 5)))
    logger.setLevel(logging.WARNING)
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError: pass
    else:
        trace.set_tracer_provider(TracerProvider())  # spans made and ended, exported nowhere
        rows.append(('Tool.execute, OpenTelemetry span', best(lambda: tool.execute(ARGS), 2000, 5)))
    for nm, us in rows: print(f'{nm:42} {us:7.2f} µs  {us / floor:5.2f}x call_func')

if __name__ == '__main__': main()
