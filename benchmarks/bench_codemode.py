"""Code mode's three places to run a program, side by side: time per `run_code` call and what each allows.

    python benchmarks/bench_codemode.py

One toolbox of three small tools; a program that calls each once and returns a value. For each mode: the wall time
of one `run_code` call (median of 5; `isolate=True` starts a Python process per call, monty a worker per call), and
whether a program can import a module, define a class, read a file, and reach the application's modules.
"""
import statistics, time

from funccall import Tool, Toolbox
from funccall.toolsets.codemode import code_tool

def add(a: int, b: int) -> int:
    "Add two numbers"
    return a + b

def whoami(user_id: int) -> str:
    "The current user"
    return f'user{user_id}'

def upper(s: str) -> str:
    "Upper-case a text"
    return s.upper()

PROGRAM = "x = add(1, 2)\nname = whoami()\n[x, upper(name)]"
PROBES = {
    'import a module': 'import json\njson.dumps([1])',
    'define a class': 'class A:\n    v = 1\nA.v',
    'read a file': "open('/proc/self/status').read()[:0]",  # (a file every mode that reads files has: a sandbox has no /etc/hostname)
    "see the application's modules": "import sys\n'bench_codemode' in sys.modules or '__main__' in sys.modules and hasattr(sys.modules['__main__'], 'PROGRAM')",
}

def main():
    box = Toolbox([add, Tool(whoami, inject=('user_id',)), upper], injected={'user_id': 7})
    print(f"{'mode':10} {'ms per run_code':>16}  " + '  '.join(PROBES))
    for mode in (False, True, 'monty'):
        tool = code_tool(box, isolate=mode, timeout=30)
        assert tool.execute({'code': PROGRAM}).text == '[3, "USER7"]'
        times = []
        for _ in range(5):
            t = time.perf_counter()
            tool.execute({'code': PROGRAM})
            times.append(time.perf_counter() - t)
        probes = []
        for code in PROBES.values():
            r = tool.execute({'code': code})
            probes.append('no' if not r.ok or r.text in ('false', 'False') else 'yes')
        print(f"{str(mode):10} {statistics.median(times) * 1000:16.1f}  " + '  '.join(f'{p:>{len(k)}}' for p, k in zip(probes, PROBES)))

if __name__ == '__main__': main()
