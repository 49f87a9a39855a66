"""An application killed (SIGKILL: nothing of it runs after) while a sandboxed run starts or runs: its supervisor and the
model's program end with it within `GONE` seconds, whatever moment of the start-up the kill lands on, and the run's
control group is removed at the next start (`_sandbox._orphaned`, `_sandbox._die_with`, `_cgroup.sweep`). The program
never ends by itself: what ends it is the application's death, or nothing."""
import os, random, signal, subprocess, sys, time, uuid

import pytest

from conftest import examples
from funccall.toolsets import _cgroup, _sandbox
from test_attack_sandbox import HAVE, _needs, run

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='the sandbox is tested on Linux, where its protections are claimed')

GONE = 5  # seconds after the application's death by which no process of its run may remain

APP = """
import os, signal, sys, threading, time
from funccall.toolsets._sandbox import Sandbox
when, delay, mark, namespaces = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4] == 'namespaces'
settings = {'namespaces': namespaces, 'seccomp': %(seccomp)r, 'network': False, 'cgroup': %(cgroup)r}  # (no probe: a fast start)
def die(): time.sleep(delay); os.kill(os.getpid(), signal.SIGKILL)
if when == 'during': threading.Thread(target=die, daemon=True).start()  # (the supervisor's fork and exec among the moments)
sb = Sandbox([sys.executable, '-S', '-c', f'import time; time.sleep(1000)  # {mark}'], 1000, _settings=settings)
print(sb.p.pid, flush=True)
if when == 'after': die()
time.sleep(1000)
"""

def _app(when: str, delay: float, mark: str, mode: str) -> subprocess.Popen:
    "An application that starts a run of a program that never ends, and kills itself `delay` s after (or while) it starts it"
    code = APP % {'seccomp': HAVE['seccomp'], 'cgroup': HAVE['kernel_memory_limit']}
    return subprocess.Popen([sys.executable, '-c', code, when, str(delay), mark, mode], stdout=subprocess.PIPE,
                            env={**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)})

def _run_processes(app: int, supervisor: int | None, mark: str) -> dict:
    """The processes of a run of application `app` still running: the program (`mark` in its command line), those of the
    supervisor's session (`supervisor`, a session leader: its init and the program's tree), and those in the run's groups.
    Not the ended ones, left for their new parent to reap (here, as a zombie, for over a second)"""
    found = {}
    for n in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{n}/cmdline', 'rb') as f: cmd = f.read()
            with open(f'/proc/{n}/stat', 'rb') as f: state, _, _, session = f.read().rsplit(b')', 1)[1].split()[:4]
        except (OSError, ValueError): continue
        if state != b'Z' and (mark.encode() in cmd or int(session) == supervisor): found[int(n)] = _described(n)
    for d in _groups_of(app):
        try:
            with open(os.path.join(d, 'cgroup.procs')) as f: pids = f.read().split()
        except OSError: continue
        for n in pids:
            if (how := _described(n)) and not how.startswith('Z'): found.setdefault(int(n), how)
    return found

def _described(pid: str) -> str:
    "A process as the failure shows it: its state, command line, parent and ids ('' once it is gone)"
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f: cmd = f.read()[:60].replace(b'\0', b' ').decode(errors='replace')
        with open(f'/proc/{pid}/status') as f: st = dict(ln.split(':', 1) for ln in f if ln.startswith(('State', 'PPid', 'Uid', 'NSpid')))
    except OSError: return ''
    return f"{st['State'].split()[0]} {cmd!r} ppid {st['PPid'].strip()} uid {st['Uid'].split()[0]} nspid {' '.join(st['NSpid'].split())}"

def _groups_of(app: int) -> list:
    "The run groups application `app` made that are still there"
    dirs = (_cgroup.available() or {'dirs': {}})['dirs'].values()
    return [os.path.join(d, nm) for d in dirs for nm in os.listdir(d) if nm.startswith(f'funccall-{app}-')]

def _killed_run(when: str, delay: float, mode: str) -> tuple:
    """Kill an application `delay` s after (`when`='after') or while (`when`='during') it starts a run; then (its pid, the
    run's processes still there `GONE` s after its death: pid -> what it is). Those are killed, the test's to clean up"""
    mark = 'fc-killed-' + uuid.uuid4().hex
    p = _app(when, delay, mark, mode)
    out = p.communicate(timeout=60)[0].split()
    assert p.returncode == -signal.SIGKILL, (p.returncode, out)
    supervisor, end = int(out[0]) if out else None, time.monotonic() + GONE
    while (left := _run_processes(p.pid, supervisor, mark)) and time.monotonic() < end: time.sleep(0.05)
    for pid in left:
        try: os.kill(pid, signal.SIGKILL)
        except OSError: pass
    return p.pid, left

MOMENTS = [('during', d) for d in (0.002, 0.005, 0.01)] + [('after', d) for d in (0, 0.002, 0.01, 0.03, 0.06, 0.1, 0.3)]
MODES = ['namespaces', 'no namespaces']

def _mode(mode: str):
    if mode == 'namespaces': _needs('namespaces')

@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('when, delay', MOMENTS)
def test_a_killed_applications_run_ends_with_it(when, delay, mode):
    """Killed as its supervisor starts (before it asked for the parent-death signal: it is init's child by then), as it
    enters its namespaces, builds its root (which changes its ids: the kernel clears the signal), runs the program"""
    _mode(mode)
    left = _killed_run(when, delay, mode)[1]
    _cgroup.sweep()  # (its group, empty: not left to the next test's start)
    assert not left, f'{GONE} s after the application died: {left}'

@pytest.mark.slow  # 2 x 40 killed applications (CI's share of them: FUNCCALL_EXAMPLES), with a process spinning beside them
@pytest.mark.parametrize('mode', MODES)
def test_killed_applications_runs_end_with_them_at_any_moment_under_load(mode):
    "Moments drawn over the whole start-up, while a busy process takes a CPU (the other tests, in CI, the other): none of the runs stays"
    _mode(mode)
    spin, n = subprocess.Popen([sys.executable, '-c', 'while True: pass']), examples(40)
    try:
        failed = []
        for i in range(n):
            when, delay = ('during', random.uniform(0, 0.02)) if i % 4 == 0 else ('after', random.uniform(0, 0.4))
            if (left := _killed_run(when, delay, mode)[1]): failed.append((when, round(delay, 3), left))
    finally:
        spin.kill(); spin.wait()
        _cgroup.sweep()
    assert not failed, f'{len(failed)} of {n} runs stayed after their application died: {failed[:3]}'

def test_the_group_of_a_killed_application_is_swept_at_the_next_start(monkeypatch):
    "An application killed mid-run can't remove its run's group; its processes end with it, and the next start of a sandbox removes it"
    _needs('kernel_memory_limit')
    app, left = _killed_run('after', 0.2, 'namespaces' if HAVE['namespaces'] else 'no namespaces')
    assert not left, f'{GONE} s after the application died: {left}'
    groups = _groups_of(app)
    assert groups, 'the killed application left no group: nothing to sweep'
    monkeypatch.setattr(_sandbox, '_swept', [])
    run('python_isolated', '1')
    assert not [d for d in groups if os.path.exists(d)]
