"""Notebooks in `nbs/` are documentation that runs, wherever a user runs them.

Every stored notebook (whoever adds one: the test finds them all) is valid nbformat, as Jupyter checks it on opening,
and is executed from scratch twice: by execnb's shell (fast, in this process) and through a real Jupyter kernel
(`nbclient` + `ipykernel`, as `jupyter nbconvert --execute` runs it). The two name cells differently (`<...>` against
ipykernel's `/tmp/ipykernel_N/M.py`), so reading comments from source is tested both ways. Any cell that raises fails
the notebook. Each notebook says which extras it needs, as an install line that works from a clone of the repository.

What a reader sees saved in a notebook is what the kernel gives today: each code cell's fresh outputs (streams, each
result's text, errors) must equal its saved ones, but for what varies from run to run (`nb_outputs.NORMALISERS`:
addresses, ipykernel's cell files, durations, the clock). A stale cell fails the test with a diff; refresh every stale
output of every notebook, and only those, with `python tests/nb_outputs.py` (or name the notebooks to refresh).
"""
import ast
import re
import sys
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from execnb.shell import CaptureShell, read_nb
from packaging.requirements import Requirement  # pytest's own dependency
from packaging.utils import canonicalize_name

from nb_outputs import REFRESH, install_kernel, run_in_kernel, stale_cells

try: import tomllib
except ImportError: import tomli as tomllib  # Python 3.10: pytest's own dependency there

NBS = Path(__file__).parent.parent / 'nbs'
nbs = sorted(NBS.glob('*.ipynb'))
ids = [p.name for p in nbs]


def test_there_are_notebooks():
    assert len(nbs) >= 9


@pytest.mark.parametrize('path', nbs, ids=ids)
def test_notebook_is_valid_nbformat(path):
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    assert nb.nbformat == 4
    nbformat.validate(nb)  # raises `ValidationError` (e.g. `metadata.execution.total` written as a number)


@pytest.mark.parametrize('path', nbs, ids=ids)
def test_notebook_is_stored_as_nbformat_writes_it(path):
    "Keys sorted, one-space indent, as Jupyter and `python tests/nb_outputs.py` save it: a refresh's diff is outputs only"
    assert path.read_text() == nbformat.writes(nbformat.read(path, as_version=4)) + '\n'


# an install line that works from a clone, as no index serves funccall yet: `pip install -e .` or `-e '.[a,b]'`, then packages
INSTALL = re.compile(r"^Needs .*from a clone of the repository, `pip install -e (?:\.|'\.\[(?P<extras>[\w,-]+)\]')(?P<pkgs>(?: [\w.-]+)*)`", re.M)


def _dists(reqs: list[str], extras: set[str]) -> set[str]:
    "The installed distributions that requirements `reqs` (with `extras` asked for) bring, and all they require in turn"
    seen, todo = set(), [(r, frozenset(extras)) for r in reqs]
    while todo:
        r, ex = todo.pop()
        req = Requirement(r)
        if req.marker and not any(req.marker.evaluate({'extra': e}) for e in ex | {''}): continue
        nm = canonicalize_name(req.name)
        if (nm, ex := frozenset(req.extras)) in seen: continue
        try: dist = metadata.distribution(nm)
        except metadata.PackageNotFoundError: continue  # not installed, so nothing the notebook imports comes from it
        seen.add((nm, ex))
        todo += [(r2, ex) for r2 in dist.requires or []]
    return {nm for nm, _ in seen}


USES = {'funccall.mcp': 'mcp'}  # funccall's modules that import an extra's package as they load: a notebook using one uses it


def _imports(nb) -> set[str]:
    "Top-level modules the notebook's code imports, or runs with `-m`, other than funccall and the standard library"
    mods = set()
    for c in nb.cells:
        if c.cell_type != 'code': continue
        for n in ast.walk(ast.parse(c.source)):
            if isinstance(n, ast.Import): mods |= {a.name for a in n.names}
            elif isinstance(n, ast.ImportFrom) and not n.level: mods.add(n.module)
        mods |= set(re.findall(r"'-m', '([\w.]+)'", c.source))
    mods |= {USES[m] for m in mods if m in USES}
    return {m.split('.')[0] for m in mods} - set(sys.stdlib_module_names) - {'funccall'}


@pytest.mark.parametrize('path', nbs, ids=ids)
def test_notebook_says_what_it_needs(path):
    "The first cell says what to install from a clone: the extras whose packages the notebook uses, and what else it imports or runs"
    nb = nbformat.read(path, as_version=4)
    intro = nb.cells[0].source
    needs = [ln for ln in intro.splitlines() if ln.startswith('Needs')]
    assert nb.cells[0].cell_type == 'markdown' and (m := INSTALL.search(intro)), \
        f"{path.name}: no line 'Needs ...: from a clone of the repository, `pip install -e ...`' in the first cell: {needs}"
    project = tomllib.loads((NBS.parent / 'pyproject.toml').read_text())['project']
    extras = set((m['extras'] or '').split(',')) - {''}
    assert extras <= set(project['optional-dependencies']) - {'dev'}, extras
    # a module belongs to its distributions (a namespace such as `google` to several: one of them will do)
    by_module = metadata.packages_distributions()
    used = {mod: {canonicalize_name(d) for d in by_module.get(mod, [mod])} for mod in _imports(nb)}
    named = {e: {canonicalize_name(Requirement(r).name) for r in reqs} for e, reqs in project['optional-dependencies'].items()
             if e not in ('dev', 'all')}
    for dists in used.values():  # a package an extra brings comes through one of the extras that bring it (mcp: `mcp`, `redis`)
        providing = sorted(e for e, direct in named.items() if dists & direct)
        assert not providing or extras & set(providing), f"{path.name} uses the {providing[0]!r} extra: name it"
    reqs = project['dependencies'] + [r for e in extras for r in project['optional-dependencies'][e]] + m['pkgs'].split()
    brought = _dists(reqs, set())
    missing = sorted(mod for mod, d in used.items() if not d & brought)
    assert not missing, f"{path.name} uses {missing}, which `pip install -e {m[0].split(' -e ')[1]}` does not bring"


# (notebook, an install line that would not do, what the test says is missing)
SHORT = [('00_tour.ipynb', '`pip install funccall`', 'no line'),  # no index serves it
         ('01_schema.ipynb', '`pip install -e .`', "the 'pydantic' extra"),
         ('04_mcp.ipynb', '`pip install -e . mcp-server-time`', "the 'mcp' extra"),  # the server brings `mcp`, not the pin
         ('08_agent_loop.ipynb', '`pip install -e . openai`', "['anthropic']"),
         ('09_streaming.ipynb', '`pip install -e . openai anthropic google-genai`', "['httpx']"),
         ('10_large_toolsets.ipynb', "`pip install -e '.[mcp]' mcp-server-time pydantic-monty`", "['mcp_server_git']")]


@pytest.mark.parametrize('name,line,missing', SHORT, ids=[s[0] for s in SHORT])
def test_an_install_line_that_falls_short_fails(name, line, missing, tmp_path):
    nb = nbformat.read(NBS / name, as_version=4)
    nb.cells[0].source = re.sub(r'`pip install [^`]*`', line, nb.cells[0].source)
    nbformat.write(nb, tmp_path / name)
    with pytest.raises(AssertionError, match=re.escape(missing)): test_notebook_says_what_it_needs(tmp_path / name)


@pytest.mark.parametrize('path', nbs, ids=ids)
def test_notebook_shows_no_private_paths(path):
    "What a reader sees names what they can import (`funccall.ToolInputError`), and no platform's path class"
    text = path.read_text()
    assert not re.search(r'funccall\._\w+\.|funccall\.inverse\.|PosixPath|WindowsPath', text)


@pytest.mark.parametrize('path', nbs, ids=ids)
def test_notebook_runs(path, monkeypatch):
    monkeypatch.chdir(path.parent)  # relative paths in a notebook are relative to it, as in Jupyter
    sh = CaptureShell(path)         # a fresh shell: nothing carries over from other notebooks or tests
    try: sh.run_all(read_nb(path), exc_stop=True)
    except Exception: pytest.fail(sh.prettytb(path), pytrace=False)
    finally: sh.close()


@pytest.fixture(scope='module')
def kernel_dirs(tmp_path_factory) -> str:
    "A kernel spec for this very Python (the one running the tests, with funccall installed), in a folder of its own"
    pytest.importorskip('nbclient')
    pytest.importorskip('ipykernel')
    return install_kernel(str(tmp_path_factory.mktemp('kernel')))


@pytest.mark.parametrize('path', nbs, ids=ids)
def test_notebook_runs_in_a_jupyter_kernel(path, kernel_dirs):
    "Every cell runs, and gives the outputs saved with it (what varies between runs aside: see `NORMALISERS`)"
    from nbclient.exceptions import CellExecutionError
    try: fresh = run_in_kernel(path, kernel_dirs)
    except CellExecutionError as e: pytest.fail(f"{path.name} under ipykernel:\n{e}"[-4000:], pytrace=False)
    if stale := stale_cells(nbformat.read(path, as_version=4), fresh, path.name):
        pytest.fail('\n\n'.join(stale.values()) + f"\n\nrefresh them with `{REFRESH}`", pytrace=False)
