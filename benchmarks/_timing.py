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
