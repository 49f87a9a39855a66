"""CI's coverage total counts every worker: a worker the xdist controller kills at the end still handed in its data.

xdist's controller SIGKILLs a worker process still alive 10 s after the session ends (execnet's `Group.terminate`), and
coverage saves a process's data at exit, after Python joins the threads a test left running: a worker holding such a
thread lost its whole data, and CI's total fell from 95% to 88% on some runs. `conftest.save_coverage` saves it when
the worker's session ends. This runs a small suite, with the project's own conftest, under `coverage run -m pytest -n 1`
as CI does, one test leaving a thread running for longer than the controller waits, and checks the worker's lines count.
"""
import shutil, subprocess, sys, textwrap
from pathlib import Path

import pytest

from conftest import untraced_env

MEASURED = '''
def measured(x):
    if x > 1:
        return 'big'
    return 'small'
'''

LINGERING = '''
import threading, time
from measured import measured

def test_measured_and_a_thread_left_running():
    assert measured(2) == 'big' and measured(0) == 'small'
    threading.Thread(target=time.sleep, args=(25,)).start()  # not a daemon: the worker's exit waits for it
'''

@pytest.mark.slow  # the controller waits 10 s for the worker before it kills it
def test_a_worker_killed_after_its_session_keeps_its_coverage(tmp_path):
    shutil.copy(Path(__file__).parent / 'conftest.py', tmp_path / 'conftest.py')
    (tmp_path / 'measured.py').write_text(textwrap.dedent(MEASURED))
    (tmp_path / 'test_lingering.py').write_text(textwrap.dedent(LINGERING))
    (tmp_path / '.coveragerc').write_text('[run]\nsource = measured\npatch = subprocess\nsigterm = true\n'
                                          'disable_warnings = no-data-collected\n')
    env = untraced_env()  # a run of its own, not measured by this one's coverage
    run = lambda *a, **kw: subprocess.run([sys.executable, '-m', *a], cwd=tmp_path, env=env, capture_output=True, text=True, **kw)
    r = run('coverage', 'run', '-p', '-m', 'pytest', '-p', 'no:cacheprovider', '-q', '-n', '1', '-m', '', timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert '1 passed' in r.stdout
    assert run('coverage', 'combine', '-q', timeout=60).returncode == 0
    report = run('coverage', 'report', '--show-missing', timeout=60)
    assert report.returncode == 0, report.stdout + report.stderr
    line = next(ln for ln in report.stdout.splitlines() if ln.startswith('measured'))
    assert line.split()[-2:] == ['0', '100%'], report.stdout  # every line of `measured` ran in the worker, and counts
