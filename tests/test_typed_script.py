"""Typed as users check it: the typed user script (tests/typed/user_script.py) runs, and, in the tests marked typecheck
(CI runs them on Python 3.13), pyright and mypy read the typed scripts and the package clean, and pyright counts
funccall's public API typed.

The checkers are pinned in the dev extras: a new release's new rule should be taken on purpose, not by surprise."""
import json, os, shutil, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SCRIPT = ROOT / 'tests' / 'typed' / 'user_script.py'
OVERLOADS = ROOT / 'tests' / 'typed' / 'overloads.py'  # each overload's promise beside what runs: a checker's type never lies
EDGES = ROOT / 'tests' / 'typed' / 'edges_script.py'  # MCP both ways, code mode, search: checked, not run (pyright: strict)
MIN_COMPLETENESS = 95.0  # pyright --verifytypes, percent of exported symbols with a known type (issue 39's bar)

def _run(*cmd: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)

@pytest.mark.parametrize('script', [SCRIPT, OVERLOADS], ids=lambda p: p.name)
def test_the_typed_user_script_runs(script):
    r = _run(sys.executable, str(script), timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == 'ok', r.stderr[-3000:]

def _pyright(*args: str) -> subprocess.CompletedProcess:
    """pyright run by this Python (the `pyright` package's `python -m pyright`), reading this environment's packages and
    this checkout's funccall (an editable install's import hook is one pyright can't follow: PYTHONPATH names the folder)"""
    env = {**os.environ, 'PATH': f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", 'PYTHONPATH': str(ROOT)}
    return subprocess.run([sys.executable, '-m', 'pyright', *args], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)

needs_node = pytest.mark.skipif(shutil.which('node') is None and shutil.which('nodejs') is None, reason='pyright needs node')

@pytest.mark.typecheck
def test_mypy_strict_reads_the_user_script_clean():
    r = _run(sys.executable, '-m', 'mypy', '--strict', '--follow-imports=silent', '--no-incremental', str(SCRIPT), str(OVERLOADS), str(EDGES))  # (funccall's own code read as an installed package's is: its errors aren't the script's)
    assert r.returncode == 0, r.stdout[-5000:]

@pytest.mark.typecheck
def test_mypy_reads_the_package_clean():
    r = _run(sys.executable, '-m', 'mypy', '--no-incremental', '-p', 'funccall')
    assert r.returncode == 0, r.stdout[-5000:]

@pytest.mark.typecheck
@needs_node
def test_pyright_reads_the_user_script_and_the_package_clean():
    r = _pyright('--outputjson', 'funccall', str(SCRIPT), str(OVERLOADS), str(EDGES))
    out = json.loads(r.stdout)
    errors = [f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}" for d in out['generalDiagnostics'] if d['severity'] == 'error']
    assert not errors, '\n'.join(errors[:50])
    assert out['summary']['filesAnalyzed'] >= 60  # the package and the script were read, not an empty selection

@pytest.mark.typecheck
@needs_node
def test_pyright_counts_the_public_api_typed():
    r = _pyright('--outputjson', '--verifytypes', 'funccall', '--ignoreexternal')
    out = json.loads(r.stdout)['typeCompleteness']
    assert sum(out['exportedSymbolCounts'].values()) > 400, out['exportedSymbolCounts']  # the package was found and read
    unknown = [s['name'] for s in out['symbols'] if s['isExported'] and not s['isTypeKnown']][:40]
    assert out['completenessScore'] * 100 >= MIN_COMPLETENESS, unknown
