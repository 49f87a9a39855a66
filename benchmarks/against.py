"""Every benchmark run on this checkout and on an earlier commit, in one run, each script's two outputs side by side.

    python benchmarks/against.py 2e88526                 # every bench_*.py
    python benchmarks/against.py 2e88526 loop stream     # bench_loop.py and bench_stream.py only

For a change that must leave speed alone (a refactor): the earlier commit is checked out in a temporary git worktree,
and each benchmark runs there with its own scripts (they spell that commit's API) and here with this checkout's, in
turn, base then head, so a shared machine's load falls on both alike. The scripts print their own ratios against
fastcore, pydantic and the other peers; compare those, not the raw microseconds.
"""
from __future__ import annotations

import os, subprocess, sys, tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

def _run(root: Path, script: str) -> str:
    "One benchmark script of checkout `root`, run with that checkout's package first on the path"
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(root), str(root / 'benchmarks')])}
    p = subprocess.run([sys.executable, script], cwd=root / 'benchmarks', env=env, capture_output=True, text=True)
    return p.stdout + (f'\n[exit {p.returncode}] {p.stderr.strip()[-600:]}' if p.returncode else '')

def main(ref: str, names: list[str]) -> None:
    repo = HERE.parent
    scripts = sorted(p.name for p in HERE.glob('bench_*.py'))
    if names: scripts = [s for s in scripts if s.removeprefix('bench_').removesuffix('.py') in names]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / 'base'
        subprocess.run(['git', '-C', str(repo), 'worktree', 'add', '--detach', '-q', str(base), ref], check=True)
        try:
            for s in scripts:
                print(f'=== {s}')
                print(f'--- {ref}:\n' + (_run(base, s) if (base / 'benchmarks' / s).exists() else '(not in that commit)\n'))
                print('--- this checkout:\n' + _run(repo, s), flush=True)
        finally: subprocess.run(['git', '-C', str(repo), 'worktree', 'remove', '--force', str(base)], check=False)

if __name__ == '__main__':
    if len(sys.argv) < 2: sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
