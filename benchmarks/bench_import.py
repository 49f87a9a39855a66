"""`import funccall` beside `import fastcore.funccall`, each in fresh Pythons.

    python benchmarks/bench_import.py [runs]

Both packages are byte-compiled first (as `pip install` leaves them; this machine sets PYTHONDONTWRITEBYTECODE, so
without it every run would compile the sources and time that instead). Each run is a fresh Python timing its one
import in CPU time (`time.process_time`: the machine is shared); the figures are the medians. Target (issue 22):
`import funccall` at most 0.7x `import fastcore.funccall`. fastcore is a peer we measure against, never a dependency.
"""
from __future__ import annotations

import compileall, importlib.util, statistics, subprocess, sys
from pathlib import Path

def _cpu_ms(module: str) -> float:
    code = f"import time; t = time.process_time(); import {module}; print((time.process_time() - t) * 1e3)"
    return float(subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout)

def main(runs: int = 9):
    for m in ('funccall', 'fastcore'):
        compileall.compile_dir(str(Path(importlib.util.find_spec(m).origin).parent), quiet=1)
    ours, ref = [], []
    for _ in range(runs): ours.append(_cpu_ms('funccall')); ref.append(_cpu_ms('fastcore.funccall'))  # alternated: load weighs alike
    a, b = statistics.median(ours), statistics.median(ref)
    print(f"python {sys.version.split()[0]}; CPU ms, median of {runs} fresh processes")
    print(f"import funccall {a:.1f} ms, import fastcore.funccall {b:.1f} ms: ratio {a / b:.2f} (target <= 0.7: {'yes' if a / b <= 0.7 else 'NO'})")
    loaded = subprocess.run([sys.executable, '-c', "import sys, funccall; print(' '.join(m for m in ('asyncio', 'concurrent.futures', "
                             "'subprocess', 'ctypes', 'tempfile', 'hashlib', 'ssl') if m in sys.modules))"], capture_output=True, text=True).stdout
    print(f"loaded by `import funccall` of asyncio, concurrent.futures, subprocess, ctypes, tempfile, hashlib, ssl: {loaded.strip() or 'none'}")

if __name__ == '__main__': main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
