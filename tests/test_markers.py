"""README promises the default test run installs nothing large unannounced: every fixture that installs npm software
(node 22, the conformance suite, the Inspector: hundreds of MB) is reached only by tests marked `npm`, which the
default run deselects. Checked from what pytest itself collects and reports, not from reading the markers."""
import ast, subprocess, sys
from pathlib import Path

HERE = Path(__file__).parent

def _installing_fixtures() -> dict:
    "Test files -> the fixtures in them whose body installs with npm (`npm_installed(...)` or an `npm install` command)"
    out = {}
    for p in sorted(HERE.glob('test_*.py')):
        tree = ast.parse(p.read_text())
        for f in ast.walk(tree):
            if isinstance(f, ast.FunctionDef) and any(ast.unparse(d).startswith('pytest.fixture') for d in f.decorator_list):
                body = ast.unparse(f)
                if 'npm_installed(' in body or "'npm', 'install'" in body: out.setdefault(p, []).append(f.name)
    return out

def test_the_finder_finds_the_installing_fixtures():
    found = {p.name: names for p, names in _installing_fixtures().items()}
    assert {'test_mcp_conformance.py', 'test_mcp_tasks_client.py', 'test_mcp_edges.py'} <= set(found), found
    assert 'inspector' in found['test_mcp_edges.py']

def test_the_default_run_reaches_no_fixture_that_installs_with_npm():
    fixtures = _installing_fixtures()
    out = subprocess.run([sys.executable, '-m', 'pytest', '--fixtures-per-test', '-q', '-p', 'no:cacheprovider', '-n', '0',
                          *map(str, fixtures)], capture_output=True, text=True, cwd=HERE.parent, timeout=300).stdout
    assert 'fixtures used by' in out, out[-2000:]  # the default run collects some tests of these files
    used = {ln.split()[0] for ln in out.splitlines() if ln and not ln.startswith((' ', '-', '='))}
    assert not used & {n for names in fixtures.values() for n in names}, out[-2000:]
