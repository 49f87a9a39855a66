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
import re
from pathlib import Path

import nbformat
import pytest
from execnb.shell import CaptureShell, read_nb
from nb_outputs import REFRESH, install_kernel, run_in_kernel, stale_cells

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


@pytest.mark.parametrize('path', nbs, ids=ids)
def test_notebook_says_what_it_needs(path):
    "The first cell tells the reader what to install: funccall alone, or the extras and packages it uses"
    nb = nbformat.read(path, as_version=4)
    intro = nb.cells[0].source
    assert nb.cells[0].cell_type == 'markdown' and re.search(r"^Needs .*`pip install [^`]+`", intro, re.M), intro[-300:]


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
