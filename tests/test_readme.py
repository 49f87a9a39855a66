"""The README says what is true: every ```python block runs as pasted, in order, in one fresh interpreter and in a real
Jupyter kernel (a running event loop, as users run it), each `expr  # value` giving that value; its figures are what
the commands it cites print, and its test command lints. The blocks are read and run by `readme_blocks.py`."""
import json, re, subprocess, sys
from pathlib import Path

import pytest

from readme_blocks import blocks, run_shown
from nb_outputs import KERNEL
from test_notebooks import kernel_dirs  # noqa: F401 - the fixture: a kernel spec for this Python

ROOT = Path(__file__).parent.parent
README = ROOT / 'README.md'
RUNNER = Path(__file__).parent / 'readme_blocks.py'

def _session(readme: Path) -> tuple[int, dict]:
    "Every block of `readme` run in a fresh interpreter (`readme_blocks.py`): its exit status and report"
    r = subprocess.run([sys.executable, str(RUNNER), str(readme)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.stdout.strip(), r.stderr[-3000:]
    return r.returncode, json.loads(r.stdout.splitlines()[-1])

def test_every_readme_block_runs_in_order_in_one_fresh_interpreter():
    rc, report = _session(README)
    assert report['failed'] is None and rc == 0, report['failed'] and f"README.md line {report['failed'][0]}:\n{report['failed'][1]}"
    fences = re.findall(r'^```(\S*)', README.read_text(), re.M)[::2]  # each block's opening fence
    assert not [f for f in fences if f.startswith('py') and f != 'python'], fences  # a `py`/`pycon` block would go unrun
    assert len(report['run']) + len(report['not_run']) == fences.count('python')  # every block run, or marked and counted
    assert report['not_run'] == []  # none needs a live API: the stand-in model answers the loops
    assert sum(n for _, n in report['run']) >= 29  # the values shown and checked (29 when written)

def test_the_session_fails_on_a_raising_block_or_a_wrong_value_and_counts_marked_blocks(tmp_path):
    "The runner attacked: each bad README must fail it, at the block that is wrong"
    cases = {'raises': ('x = 1', 'undefined_name + 1', 6), 'wrong value': ('x = 1', 'x + 1  # 3', 6),
             'wrong error': ('x = 1', "int('a')  # TypeError: ...", 6), 'a later name': ('y = z', 'z = 1', 2)}
    for what, (first, second, line) in cases.items():
        (readme := tmp_path / f'{what}.md').write_text(f'```python\n{first}\n```\n\n```python\n{second}\n```\n')
        rc, report = _session(readme)
        assert rc == 1 and report['failed'][0] == line, (what, report)
    (readme := tmp_path / 'marked.md').write_text("```python\nx = 2\n```\n<!-- not run: needs a live API -->\n```python\nboom()\n```\n"
                                                  "```python\nx * 2  # 4\n```\n")
    rc, report = _session(readme)
    assert rc == 0 and report == {'run': [[2, 0], [9, 1]], 'not_run': [[6, 'needs a live API']], 'failed': None}

def test_every_readme_block_runs_in_a_jupyter_kernel(kernel_dirs):  # noqa: F811
    """Pasted into notebook cells, in a real kernel, whose event loop runs while a cell does: the sync loops and
    `run_tool_calls` run there as in a script (in a thread of their own), each `# value` the same"""
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    ksm = KernelSpecManager(kernel_dirs=[kernel_dirs], ensure_native_kernel=False)
    run = [b for b in blocks(README.read_text()) if not b['not_run']]
    cells = [f"import sys; sys.path.insert(0, {str(RUNNER.parent)!r})\nfrom readme_blocks import run_shown as _run_shown\n"
             "from funccall.core._run import loop_running\nassert loop_running()  # what the sync forms meet in a notebook"]
    cells += [f"_run_shown({b['src']!r}, globals(), '<README.md line {b['line']}>')" for b in run]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = NotebookClient(nb, km=KernelManager(kernel_name=KERNEL, kernel_spec_manager=ksm), timeout=300,
                            resources={'metadata': {'path': str(ROOT)}})
    try: client.execute()
    except CellExecutionError as e: pytest.fail(f"README under ipykernel:\n{e}"[-4000:], pytrace=False)
    checked = [c.outputs[-1]['data']['text/plain'] for c in nb.cells[1:] if c.outputs]
    assert sum(map(int, checked)) >= 29

def test_readme_structured_outputs_snippet_runs_as_written():
    "The snippet alone, pasted into a fresh namespace, runs: its imports are there, and each `# value` is what it gives"
    [src] = [b['src'] for b in blocks(README.read_text()) if 'output_format' in b['src'] and '@dataclass' in b['src']]
    assert run_shown(src, {}) >= 4

@pytest.mark.corpus  # a pytest run over the whole corpus: CI runs it
def test_readme_strict_figures_are_what_the_cited_command_prints():
    "The corpus figures in the Providers bullet, against the output of the command the README cites for them"
    text = ' '.join(README.read_text().split())
    m = re.search(r"Over the (\d+) tools of the real MCP servers in `tests/data/mcp_corpus/`, (\d+) \((\d+)%\) go strict on OpenAI "
                  r"and (\d+) \((\d+)%\) on Claude \(`(pytest -s [^`]+)`", text)
    assert m, 'the README no longer gives the strict figures in the form this test reads'
    cmd = m[6].split()
    assert cmd[:2] == ['pytest', '-s']
    r = subprocess.run([sys.executable, '-m', *cmd, '-q', '-p', 'no:cacheprovider'], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:]
    printed = re.search(r'strict over (\d+) corpus tools: OpenAI (\d+) \((\d+)%\), Claude (\d+) \((\d+)%\)', r.stdout)
    assert printed, r.stdout[-2000:]
    assert m.groups()[:5] == printed.groups()

def test_the_readme_test_command_lints():
    "The README says `python -m pytest` runs lint: this is that lint, `ruff check .` with the project's settings"
    pytest.importorskip('ruff')
    r = subprocess.run([sys.executable, '-m', 'ruff', 'check', '.'], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:]
