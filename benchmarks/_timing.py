"""The one timer of the benchmarks: CPU time (`time.process_time`, every thread's), the median of rounds.

The machine is shared, so the clock's time is not ours alone; a median, not a minimum, is what a user sees.
"""
import statistics, time

def cpu_us(fn, n: int, rounds: int = 7) -> float:
    "Median over `rounds` of CPU µs per call of `fn`, `n` calls a round"
    ts = []
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(n): fn()
        ts.append((time.process_time() - t) / n * 1e6)
    return statistics.median(ts)

def cpu_us_each(fns: list, n: int, rounds: int = 7) -> list[float]:
    "Median over `rounds` of CPU µs per call of each of `fns`, their rounds taken in turn: a shared machine's load falls on each alike"
    ts = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, ts):
            t = time.process_time()
            for _ in range(n): fn()
            out.append((time.process_time() - t) / n * 1e6)
    return [statistics.median(x) for x in ts]
