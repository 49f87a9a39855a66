"""The comparer behind `test_notebook_runs_in_a_jupyter_kernel` fails on a stale saved output, and only on one.

Stale outputs are planted: in notebooks built here from nbformat's own output nodes, in copies of the real notebooks,
and in a notebook run in a real kernel, where `refresh` must replace exactly the stale cells.
"""
import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from nb_outputs import NORMALISERS, install_kernel, refresh, render_outputs, stale_cells
import test_notebooks  # not its test functions by name: pytest would collect them here too

ROOT = Path(__file__).parent.parent


def out(text: str = 'x', kind: str = 'execute_result', **data):
    "An output as the kernel gives it: a stream's text, or a result with `text/plain` and any other mimetypes"
    if kind == 'stream': return new_output('stream', name=data.get('name', 'stdout'), text=text)
    if kind == 'error': return new_output('error', ename='ValueError', evalue=text, traceback=[f'ValueError: {text}'])
    return new_output(kind, data={'text/plain': text, **data}, **({'execution_count': 1} if kind == 'execute_result' else {}))


def nb_of(*outputs: list) -> nbformat.NotebookNode:
    "A notebook: a markdown cell, then one code cell per list of outputs, each cell's first line naming it"
    return new_notebook(cells=[new_markdown_cell('# title')] + [new_code_cell(f'cell_{i} = 1\nprint(cell_{i})', outputs=o)
                                                                 for i, o in enumerate(outputs)])


FRESH = [[out('hi\n', 'stream')], [out("{'a': 1}")], [out('<b>x</b>', 'display_data', **{'text/html': '<b>x</b>'})],
         [out('boom', 'error')], [out('pic', 'display_data', **{'image/png': 'iVBORw0KGgo='})], []]

# (what went stale, which cell, how the saved outputs differ from FRESH's)
PLANTED = [
    ('stream text', 0, lambda c: c.outputs[0].update(text='hello\n')),
    ('a stream saved as stderr', 0, lambda c: c.outputs[0].update(name='stderr')),
    ('text/plain', 1, lambda c: c.outputs[0].data.update({'text/plain': "{'a': 2}"})),
    ('an execute_result saved as display_data', 1, lambda c: c.outputs[0].update(output_type='display_data')),
    ('other text mimetype', 2, lambda c: c.outputs[0].data.update({'text/html': '<i>x</i>'})),
    ('error', 3, lambda c: c.outputs[0].update(evalue='bang')),
    ('no saved output while the kernel gives one', 1, lambda c: c.outputs.clear()),
    ('a saved output the kernel no longer gives', 5, lambda c: c.outputs.append(out('old'))),
    ('an image no longer shown', 4, lambda c: c.outputs[0].data.pop('image/png')),
    ('an output twice', 0, lambda c: c.outputs.append(out('hi\n', 'stream'))),
]


@pytest.mark.parametrize('what,i,plant', PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_stale_output_is_found_in_its_cell(what, i, plant):
    fresh = nb_of(*FRESH)
    saved = copy.deepcopy(fresh)
    assert stale_cells(saved, fresh, 'demo.ipynb') == {}
    plant(saved.cells[i + 1])
    stale = stale_cells(saved, fresh, 'demo.ipynb')
    assert list(stale) == [i + 1], what  # that cell, and no other
    head, *diff = stale[i + 1].splitlines()
    assert head == f"demo.ipynb cell {i + 1} ('cell_{i} = 1'): the saved outputs are not what the kernel gives"
    assert diff[:2] == ['--- saved', '+++ kernel'] and any(ln[0] in '+-' for ln in diff[2:])


# what each of NORMALISERS lets vary: (normaliser, saved text, fresh text)
VARIES = [
    ('address', '<Foo object at 0x7f3a2b1c9d50>', '<Foo object at 0x7f11aa22bb33>'),
    ('ipykernel cell file', '/tmp/ipykernel_16016/4275006362.py:18: SchemaWarning: w',
     '/tmp/ipykernel_12770/4275006362.py:18: SchemaWarning: w'),
    ('duration', "[('get_weather ran', '0.9 ms'), ('took', '1.2s')]", "[('get_weather ran', '12.0 ms'), ('took', '3s')]"),
    ('clock', "{'datetime': '2026-11-24T08:34:45+00:00', 'day_of_week': 'Tuesday'}",
     "{'datetime': '2026-12-02T01:07:08+00:00', 'day_of_week': 'Wednesday'}"),
]


def test_every_normaliser_is_shown_varying():
    assert [v[0] for v in VARIES] == [n[0] for n in NORMALISERS]


@pytest.mark.parametrize('name,old,new', VARIES, ids=[v[0] for v in VARIES])
def test_what_varies_between_runs_is_no_stale_output(name, old, new):
    for kind in ('stream', 'execute_result', 'error'):
        assert stale_cells(nb_of([out(old, kind)]), nb_of([out(new, kind)]), 'demo.ipynb') == {}, (name, kind)
        # the normaliser hides only what varies: a word changed beside it is still stale
        assert list(stale_cells(nb_of([out(old + ' a', kind)]), nb_of([out(new + ' b', kind)]), 'demo.ipynb')) == [1], (name, kind)


@pytest.mark.parametrize('text', ['see 0x1f for the flag', "{'datetimes': '2026-11-24'}", 'version 3.11', 'Ana has 25 seats'])
def test_normalisers_leave_alike_text_alone(text):
    "Text that only looks like what varies (a short hex number, a key of another name, a version) is compared as is"
    assert render_outputs([out(text)]) == f"[execute_result text/plain]\n<text/plain>\n{text}\n"


def test_streams_compare_by_their_text_not_their_chunks():
    "The kernel flushes stdout and stderr on their own schedules: how their chunks interleave is no change"
    saved = [out('a\n', 'stream'), out('w1\n', 'stream', name='stderr'), out('b\n', 'stream'), out('r'), out('c\n', 'stream')]
    fresh = [out('a\nb\n', 'stream'), out('w', 'stream', name='stderr'), out('1\n', 'stream', name='stderr'), out('r'),
             out('c', 'stream'), out('\n', 'stream')]
    assert render_outputs(saved) == render_outputs(fresh)
    # but text printed before a result and after it are not the same cell's output
    moved = [out('a\nb\n', 'stream'), out('w1\n', 'stream', name='stderr'), out('c\n', 'stream'), out('r')]
    assert render_outputs(moved) != render_outputs(fresh)


@pytest.mark.parametrize('path', test_notebooks.nbs, ids=test_notebooks.ids)
def test_every_saved_output_of_a_real_notebook_is_compared(path):
    "In each real notebook, a change to any one output's text is found in its cell, and only there"
    saved = nbformat.read(path, as_version=4)
    assert stale_cells(saved, saved, path.name) == {}
    planted = 0
    for i, cell in enumerate(saved.cells):
        for j in range(len(cell.get('outputs', []))):
            stale = copy.deepcopy(saved)
            o2 = stale.cells[i].outputs[j]
            if o2.output_type == 'stream': o2.text = 'Stale ' + o2.text
            elif o2.output_type == 'error': o2.evalue = 'Stale ' + o2.evalue
            else:
                m = next(m for m in o2.data if m.startswith('text/'))
                o2.data[m] = 'Stale ' + ''.join(o2.data[m])
            assert list(stale_cells(stale, saved, path.name)) == [i]
            planted += 1
    assert planted, 'a notebook without outputs'


@pytest.fixture(scope='module')
def kernel_dirs(tmp_path_factory) -> str:
    return install_kernel(str(tmp_path_factory.mktemp('kernel')))


def test_the_kernel_test_fails_on_a_stale_output_of_a_real_notebook(tmp_path, kernel_dirs):
    "The test every notebook runs, given a real notebook with one output gone stale"
    path = tmp_path / test_notebooks.nbs[0].name
    shutil.copy(test_notebooks.nbs[0], path)
    nb = nbformat.read(path, as_version=4)
    i = next(i for i, c in enumerate(nb.cells) if c.get('outputs'))
    nb.cells[i].outputs[0].data['text/plain'] = "'an old value'"
    nbformat.write(nb, path)
    with pytest.raises(pytest.fail.Exception) as e: test_notebooks.test_notebook_runs_in_a_jupyter_kernel(path, kernel_dirs)
    first = nb.cells[i].source.splitlines()[0]
    assert f"{path.name} cell {i} ({first!r}): the saved outputs are not what the kernel gives" in str(e.value)
    assert "-'an old value'" in str(e.value) and 'python tests/nb_outputs.py' in str(e.value)


def test_refresh_replaces_only_stale_outputs_with_the_kernels(tmp_path, kernel_dirs, monkeypatch):
    "Run in a real kernel, from a PYTHONPATH that names another funccall: the fresh outputs come from this one"
    decoy = tmp_path / 'decoy' / 'funccall'
    decoy.mkdir(parents=True)
    (decoy / '__init__.py').write_text('')
    monkeypatch.setenv('PYTHONPATH', str(decoy.parent))
    import funccall
    cells = ["import funccall; funccall.__file__", "import time; print(f'{time.perf_counter() % 1:.3f} s')",
             "print('a'); 6 * 7", "{'k': 1}"]
    nb = new_notebook(cells=[new_markdown_cell('# demo')] + [new_code_cell(c) for c in cells])
    path = tmp_path / 'demo.ipynb'
    nbformat.write(nb, path)
    assert refresh([path]) == [f"demo.ipynb cell {i} ({c!r})" for i, c in enumerate(cells, 1)]  # none had outputs saved
    saved = nbformat.read(path, as_version=4)
    assert saved.cells[1].outputs[0].data['text/plain'] == repr(funccall.__file__)
    assert render_outputs(saved.cells[3].outputs) == "[stdout]\na\n\n[execute_result text/plain]\n<text/plain>\n42\n"
    # plant: one output stale, one merely timed differently; the refresh rewrites the stale one and no other byte
    saved.cells[4].outputs[0].data['text/plain'] = "{'k': 0}"
    saved.cells[2].outputs[0].text = '9.999 s\n'
    nbformat.write(saved, path)
    before = path.read_text()
    assert refresh([path]) == ["demo.ipynb cell 4 (\"{'k': 1}\")"]
    after = path.read_text()
    assert after == before.replace("\"{'k': 0}\"", "\"{'k': 1}\"") and '9.999 s' in after
    assert refresh([path]) == []  # fresh now: nothing rewritten


def test_the_refresh_command_runs_from_the_checkout(tmp_path):
    "`python tests/nb_outputs.py NOTEBOOK`, as the test's failure says, from any folder"
    path = tmp_path / 'one.ipynb'
    nbformat.write(new_notebook(cells=[new_code_cell('import funccall; funccall.__file__')]), path)
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}  # nothing but the script itself says which funccall
    r = subprocess.run([sys.executable, str(ROOT / 'tests' / 'nb_outputs.py'), str(path)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "refreshed one.ipynb cell 0 ('import funccall; funccall.__file__')\n", r.stderr[-2000:]
    assert nbformat.read(path, as_version=4).cells[0].outputs[0].data['text/plain'] == repr(str(ROOT / 'funccall' / '__init__.py'))
