"The package as a user meets it: its public API, its optional dependencies, its command line"
import json, subprocess, sys

import funccall

def _py(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)

def test_public_api_is_listed_and_exists():
    assert funccall.__all__ and all(hasattr(funccall, nm) for nm in funccall.__all__)
    for nm in ('get_schema', 'get_schema_nm', 'handle_type', 'call_func', 'call_func_async', 'mk_ns', 'resolve_nm', 'python'):
        assert nm in funccall.__all__

def test_optional_libraries_are_not_imported_for_plain_functions():
    r = _py('import sys, funccall\n'
            'def f(a: int, b: list[str] = None) -> int:\n    "Plain."\n    return a\n'
            'funccall.get_schema(f); funccall.call_func("f", {"a": 1}, [f])\n'
            'print(sorted(m for m in ("pydantic", "docstring_parser", "yaml", "mcp") if m in sys.modules))')
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '[]'

def test_main_job_prints_the_example_schemas():
    r = subprocess.run([sys.executable, '-m', 'funccall'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    tools = json.loads(r.stdout)
    assert [t['name'] for t in tools] == ['get_weather', 'add_note', 'book_meeting']
    assert tools[2]['input_schema']['$defs']['Person']['properties']['email']['description'] == 'Where the invitation goes'

def test_bad_target_is_one_line_and_exit_2():
    r = subprocess.run([sys.executable, '-m', 'funccall', 'schema', 'no_such_module_xyz'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.count('\n') == 1 and 'no_such_module_xyz' in r.stderr and 'Traceback' not in r.stderr


# --- the package as an index would serve it ---------------------------------------------------------------------

import re, tarfile, zipfile  # noqa: E402
from email.parser import Parser  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

try: import tomllib
except ImportError: import tomli as tomllib  # Python 3.10 (the dev extra has it)

ROOT = Path(__file__).parent.parent
PYPROJECT = tomllib.loads((ROOT / 'pyproject.toml').read_text())

@pytest.fixture(scope='module')
def dists(tmp_path_factory) -> dict:
    "The sdist and the wheel `python -m build` makes of this checkout (no build isolation: the dev extra has setuptools)"
    pytest.importorskip('build')
    import shutil
    out, src = tmp_path_factory.mktemp('dist'), tmp_path_factory.mktemp('src') / 'funccall'
    # built from a copy: a build writes `funccall.egg-info` beside the sources, where CI is installing other Pythons' meanwhile
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns('.git', '.venv', '*.egg-info', '__pycache__', '.pytest_cache', 'dist', 'build',
                                                             '.coverage*', '.ruff_cache', '.hypothesis'))
    r = subprocess.run([sys.executable, '-m', 'build', '--no-isolation', '--sdist', '--wheel', '-o', str(out), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return {'sdist': next(out.glob('*.tar.gz')), 'wheel': next(out.glob('*.whl'))}

def test_the_sdist_is_the_library_and_ships_no_tests_it_cant_run(dists):
    "The tests need the notebooks, benchmarks and servers of a clone: an sdist holding them alone couldn't pass them"
    with tarfile.open(dists['sdist']) as t: names = [n.split('/', 1)[1] for n in t.getnames() if '/' in n]
    tops = {n.split('/', 1)[0] for n in names}
    assert tops <= {'funccall', 'funccall.egg-info', 'LICENSE', 'README.md', 'pyproject.toml', 'setup.cfg', 'MANIFEST.in', 'PKG-INFO'}, tops
    assert 'funccall/py.typed' in names and not any(n.endswith('.pyc') for n in names)

def test_the_wheel_says_what_it_is_and_offers_every_extra(dists):
    with zipfile.ZipFile(dists['wheel']) as z:
        meta = Parser().parsestr(z.read(next(n for n in z.namelist() if n.endswith('.dist-info/METADATA'))).decode())
        assert 'funccall/py.typed' in z.namelist()
    extras = set(PYPROJECT['project']['optional-dependencies'])
    assert set(meta.get_all('Provides-Extra')) == extras
    for field in ('Summary', 'License-Expression', 'Requires-Python', 'Keywords', 'Author'):
        assert meta[field], field
    assert 'Development Status :: 4 - Beta' in meta.get_all('Classifier')
    assert 'fastcore>=1.8' in meta.get_all('Requires-Dist')
    assert meta.get_payload().startswith('# funccall')  # the README is the long description

def test_the_readme_lists_every_extra_a_user_can_install():
    "The README's 'Extras:' sentence names each extra pyproject offers (but `dev`, the test dependencies, and `all`)"
    m = re.search(r'Extras: (.+?)\.\s', (ROOT / 'README.md').read_text(), re.S)
    assert m, 'no "Extras: ..." sentence in the README'
    listed = set(re.findall(r'`([\w-]+)` \(', m[1]))  # each extra is named, then what it is for in parentheses
    assert listed == set(PYPROJECT['project']['optional-dependencies']) - {'dev', 'all'}, listed

def test_the_redis_extra_brings_what_RedisStore_needs():
    "RedisStore lives in funccall.mcp, which needs the MCP SDK: `[redis]` installs both"
    reqs = PYPROJECT['project']['optional-dependencies']['redis']
    assert {re.split('[<>=;\\[ ]', r, maxsplit=1)[0] for r in reqs} >= {'redis', 'mcp'}
