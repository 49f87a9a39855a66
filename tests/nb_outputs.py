"""Notebooks' saved outputs against what a Jupyter kernel gives today, and the command that refreshes them.

`tests/test_notebooks.py` executes every notebook in a real kernel (`run_in_kernel`) and compares each code cell's
fresh outputs with the saved ones (`stale_cells`). Run as a script, this module executes notebooks the same way and
saves the fresh outputs of each stale cell (`refresh`), leaving every other cell as it is:

    python tests/nb_outputs.py [nbs/01_schema.ipynb ...]   # every notebook in nbs/ when none is named

The kernel imports the funccall that this process imports (its folder goes first on the kernel's `PYTHONPATH`; the
script imports the checkout it is in), so outputs come from the code under test, never from another install.
"""
import difflib
import os
import re
import sys
import tempfile
from pathlib import Path

import nbformat

KERNEL = 'funccall-test'
REFRESH = 'python tests/nb_outputs.py'  # the command that refreshes stale outputs, from the checkout's root

# What legitimately varies from one run of an unchanged notebook to the next; nothing else is ignored.
# Each is (name, pattern, replacement). Prefer a notebook cell that prints something stable to a new entry here.
NORMALISERS = [
    # `repr` of an object without a repr of its own: a memory address, new in every process
    ('address', re.compile(r'\b0x[0-9a-f]{6,16}\b'), '0x…'),
    # ipykernel names a cell's code after its pid and a hash: `/tmp/ipykernel_1234/567.py` (in warnings, tracebacks)
    ('ipykernel cell file', re.compile(r'[^\s\'"]*ipykernel_\d+[/\\]\d+\.py'), '<ipykernel cell>'),
    # measured times depend on the machine and its load: `0.9 ms`, `took 1.2s`
    ('duration', re.compile(r'\b\d+(?:\.\d+)? ?(?:ms|µs|s)\b'), '<duration>'),
    # mcp-server-time answers with the clock and the day at the run: `'datetime': '2026-11-24T08:34:45+00:00'`
    ('clock', re.compile(r"""(['"](?:datetime|day_of_week)['"]: ['"])[^'"]*"""), r'\1<now>'),
]


def normalise(text: str,  # an output's text
              ) -> str:   # `text` with each of `NORMALISERS` applied
    "The text of an output with what varies between runs (addresses, ipykernel's cell files, durations, the clock) replaced"
    for _, pat, repl in NORMALISERS: text = pat.sub(repl, text)
    return text


def _text(v) -> str: return ''.join(v) if isinstance(v, list) else str(v)

def _shown(o) -> str:
    "One output that is not a stream, as text: its type, its mimetypes and their text, or its exception"
    kind = o['output_type']
    if kind == 'error':  # the traceback names files and line numbers of installed packages; the exception is what it shows
        return f"[error]\n{o['ename']}: {normalise(o['evalue'])}\n"
    data = o.get('data', {})
    # other data (images, widgets' state) counts by its mimetype: its bytes are no text a reader compares
    texts = ''.join(f"<{m}>\n{normalise(_text(data[m]))}\n" for m in sorted(data) if m.startswith('text/') or m == 'application/json')
    return f"[{kind} {', '.join(sorted(data))}]\n{texts}"


def render_outputs(outputs: list,  # a code cell's `outputs`, as nbformat stores them
                   ) -> str:       # one canonical text for all of them, normalised
    "What a reader sees of a cell's outputs: its streams' text, each result's text mimetypes, errors, in order"
    parts, streams = [], {}
    def flush():
        # the kernel sends stdout and stderr in chunks, each on its own schedule, so how their chunks interleave
        # varies from run to run: between two results, what counts is each stream's whole text
        parts.extend(f"[{nm}]\n{normalise(streams[nm])}\n" for nm in sorted(streams))
        streams.clear()
    for o in outputs:
        if o['output_type'] == 'stream': streams[o['name']] = streams.get(o['name'], '') + _text(o['text'])
        else: flush(); parts.append(_shown(o))
    flush()
    return ''.join(parts)


def stale_cells(saved: nbformat.NotebookNode,  # the notebook as stored
                fresh: nbformat.NotebookNode,  # the same notebook just executed
                name: str,                     # the notebook's name, for the messages
                ) -> dict[int, str]:           # cell index: a message, for each code cell whose saved outputs are stale
    "Each code cell whose saved outputs are not what the kernel gave: notebook, cell index, first source line, a diff"
    msgs = {}
    for i, (old, new) in enumerate(zip(saved.cells, fresh.cells, strict=True)):
        if old.cell_type != 'code': continue
        want, got = render_outputs(old.outputs), render_outputs(new.outputs)
        if want == got: continue
        diff = difflib.unified_diff(want.splitlines(), got.splitlines(), 'saved', 'kernel', lineterm='')
        msgs[i] = f"{_where(name, i, old)}: the saved outputs are not what the kernel gives\n" + '\n'.join(diff)
    return msgs


def _where(name: str, i: int, cell) -> str: return f"{name} cell {i} ({(cell.source.splitlines() or [''])[0]!r})"


def install_kernel(prefix: str,  # a folder for the kernel spec
                   ) -> str:     # the folder that holds kernel specs, for `KernelSpecManager(kernel_dirs=[...])`
    "A kernel spec named `KERNEL` for this very Python (the one with funccall installed), in `prefix`"
    from ipykernel.kernelspec import install
    install(prefix=prefix, kernel_name=KERNEL)
    return str(Path(prefix) / 'share' / 'jupyter' / 'kernels')


def run_in_kernel(path: Path,       # a notebook
                  kernel_dirs: str,  # from `install_kernel`
                  ) -> nbformat.NotebookNode:  # the notebook executed from scratch, with fresh outputs
    "Execute `path` from scratch in a Jupyter kernel of this Python, in the notebook's folder, as `jupyter execute` does"
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    # only this spec: a user's own `python3` kernel may be another Python, without funccall
    ksm = KernelSpecManager(kernel_dirs=[kernel_dirs], ensure_native_kernel=False)
    assert ksm.get_kernel_spec(KERNEL).argv[0] == sys.executable
    import funccall
    root = str(Path(funccall.__file__).parent.parent)
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [root, os.environ.get('PYTHONPATH')]))}
    nb = nbformat.read(path, as_version=4)
    path = Path(path).resolve()
    client = NotebookClient(nb, km=KernelManager(kernel_name=KERNEL, kernel_spec_manager=ksm), timeout=300,
                            record_timing=False, resources={'metadata': {'path': str(path.parent)}})
    client.execute(env=env)  # raises `CellExecutionError` on a cell that raises
    return nb


def refresh(paths: list[Path],  # notebooks whose stale outputs to replace with a kernel's
            ) -> list[str]:     # the cells refreshed: notebook, cell index and first source line, as `stale_cells` names them
    "Execute each notebook in a kernel of this Python; save the fresh outputs of each stale cell, and nothing else"
    done = []
    with tempfile.TemporaryDirectory() as d:
        kernels = install_kernel(d)
        for p in paths:
            saved, fresh = nbformat.read(p, as_version=4), run_in_kernel(p, kernels)
            stale = stale_cells(saved, fresh, p.name)
            # cells whose outputs differ only by what `NORMALISERS` ignores keep their bytes: the diff shows real changes
            for i in stale:
                saved.cells[i].outputs, saved.cells[i].execution_count = fresh.cells[i].outputs, fresh.cells[i].execution_count
            if stale: nbformat.write(saved, p)
            done += [_where(p.name, i, saved.cells[i]) for i in stale]
    return done


if __name__ == '__main__':
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))  # this checkout's funccall, whatever else is installed
    nbs = root / 'nbs'
    done = refresh([Path(a) for a in sys.argv[1:]] or sorted(nbs.glob('*.ipynb')))
    print('\n'.join(f'refreshed {w}' for w in done) or 'every saved output is fresh')
