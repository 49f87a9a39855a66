"""Notebooks in `nbs/` are documentation that runs: each is executed from scratch, and any cell that raises fails it."""
from pathlib import Path

import pytest
from execnb.shell import CaptureShell, read_nb

nbs = sorted((Path(__file__).parent.parent / 'nbs').glob('*.ipynb'))


@pytest.mark.parametrize('path', nbs, ids=[p.name for p in nbs])
def test_notebook_runs(path, monkeypatch):
    monkeypatch.chdir(path.parent)  # relative paths in a notebook are relative to it, as in Jupyter
    sh = CaptureShell(path)         # a fresh shell: nothing carries over from other notebooks or tests
    try: sh.run_all(read_nb(path), exc_stop=True)
    except Exception: pytest.fail(sh.prettytb(path), pytrace=False)
    finally: sh.close()
