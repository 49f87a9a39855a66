"""The sandbox's parent side, its rare branches: settings refused before anything starts, a control group that can't be
made or a supervisor that can't be started (nothing left behind: no folder, no group, no descriptor), what the supervisor
said when its status has a line that isn't JSON, each way a program ends as the error it reads as.
(The supervisor itself runs in a process coverage can't follow: `test_attack_sandbox*` are its tests.)"""
import os, sys, tempfile

import pytest

from funccall.toolsets import _cgroup, _sandbox
from funccall.toolsets._sandbox import Sandbox, SandboxError

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='the sandbox is tested on Linux, where its protections are claimed')

PLAIN = {'namespaces': False, 'seccomp': False, 'network': True, 'cgroup': False}  # (the least a POSIX machine gives: starts fastest)
HELLO = [sys.executable, '-S', '-c', 'import sys; sys.stderr.write("hello")']

@pytest.fixture(autouse=True)
def _own_tmp(tmp_path, monkeypatch):
    "Runs' folders made in a folder of this test's own (other workers' runs make theirs in the shared one meanwhile)"
    (tmp_path / 'runs').mkdir()
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path / 'runs'))

def _pipes() -> set:
    "The pipes this process holds open (a run's are its channel, its stderr and its status)"
    out = set()
    for fd in os.listdir('/proc/self/fd'):
        try: target = os.readlink(f'/proc/self/fd/{fd}')
        except OSError: continue  # (the listing's own descriptor, closed already)
        if target.startswith('pipe:'): out.add((fd, target))
    return out

def _left(pipes: set) -> tuple:
    "What a run left: its folder, and pipes not held before it"
    return os.listdir(tempfile.gettempdir()), _pipes() - pipes

def test_settings_it_cant_honour_are_refused_before_anything_starts():
    before = _pipes()
    with pytest.raises(ValueError, match=r"accept=\('no_such',\): what may be accepted missing is"): Sandbox(HELLO, 5, accept=('no_such',))
    with pytest.raises(ValueError, match='mounts= needs a filesystem of its own'): Sandbox(HELLO, 5, mounts={'/etc': '/etc'}, _settings=PLAIN)
    assert _left(before) == ([], set())

def test_a_control_group_that_cant_be_made_fails_the_start_and_leaves_nothing(monkeypatch):
    "No group where one is needed: a start error saying so, its folder removed; the probe reads it as the setting not working"
    monkeypatch.setattr(_cgroup, '_found', [None])  # (no control group this process may make)
    monkeypatch.setattr(_sandbox, '_swept', [0])
    before = _pipes()
    with pytest.raises(SandboxError, match='it could not start: its control group: no control group this process may make') as e:
        Sandbox(HELLO, 5, _settings={**PLAIN, 'cgroup': True})
    assert e.value.kind == 'start' and _left(before) == ([], set())
    assert _sandbox._works(**{**PLAIN, 'cgroup': True}) is False
    assert _sandbox._works(**PLAIN) is True  # (the same probe without a group: it starts)

def test_a_supervisor_that_cant_be_started_leaves_no_folder_group_or_descriptor(monkeypatch, tmp_path):
    "Its interpreter gone (the application's venv removed under it): the error as it is, and nothing of the run left"
    (groups := tmp_path / 'groups').mkdir()
    monkeypatch.setattr(_cgroup, '_found', [{'version': 2, 'dirs': {'': str(groups)}, 'controllers': {'memory', 'pids'}}])
    monkeypatch.setattr(_sandbox, '_swept', [0])
    monkeypatch.setattr(_cgroup, '_write', lambda *a: True)  # (a group of plain folders: no limit files left in it)
    monkeypatch.setattr(sys, 'executable', str(tmp_path / 'no-python'))
    before = _pipes()
    with pytest.raises(FileNotFoundError): Sandbox(HELLO, 5, _settings={**PLAIN, 'cgroup': True})
    assert _left(before) == ([], set()) and os.listdir(groups) == []

def _bare(**attrs) -> Sandbox:
    "A Sandbox's state after a run, without running one"
    sb = Sandbox.__new__(Sandbox)
    sb.ended, sb.status_buf, sb.cgroup, sb.memory_mb = None, b'', None, 64
    sb.__dict__.update(attrs)
    return sb

def test_the_supervisors_status_lines_that_arent_json_are_passed_over_and_a_failure_wins():
    sb = _bare(status_buf=b'\xffnot json\n{"exit": 3}\n[1, 2]\n{"failed": "namespaces: EPERM"}\n{"exit": 1}\n')
    sb._status_end()
    assert sb.ended == {'failed': 'namespaces: EPERM'}
    sb = _bare(status_buf=b'half a li')
    sb._status_end()
    assert sb.ended is None

@pytest.mark.parametrize('ended,kind,message', [
    ({'over': 'its memory went over 64 MB'}, 'over', 'it was stopped: its memory went over 64 MB'),
    ({'failed': 'mounts: EACCES'}, 'start', 'it could not start: mounts: EACCES'),
    ({'exit': 3}, 'ended', 'it ended with exit code 3'),
    (None, 'ended', 'it ended with exit code None'),  # (a supervisor killed before it said anything)
])
def test_each_way_a_program_ends_reads_as_its_error(ended, kind, message):
    e = _bare(ended=ended).ended_error()
    assert (e.kind, str(e)) == (kind, message)

def test_the_kernels_memory_kill_is_named_unless_the_start_failed(tmp_path, monkeypatch):
    "The group's OOM count: the kernel stopped it for its memory (a failed start says why it failed instead)"
    monkeypatch.setattr(_cgroup, '_found', [{'version': 2, 'dirs': {'': str(tmp_path)}, 'controllers': {'memory', 'pids'}}])
    g = _cgroup.Cgroup(64, 10)
    with open(g.events, 'w') as f: f.write('oom 1\noom_kill 1\n')
    e = _bare(cgroup=g, ended={'exit': -9}).ended_error()
    assert (e.kind, str(e)) == ('over', "it was stopped: its memory went over 64 MB (the kernel's limit)")
    assert _bare(cgroup=g, ended={'failed': 'cgroup: EACCES'}).ended_error().kind == 'start'

def test_a_closed_run_leaves_nothing():
    "A run closed (its supervisor killed, its pipes and folder gone): no folder, no descriptor left"
    before = _pipes()
    with Sandbox(HELLO, 10, _settings=PLAIN) as sb:
        sb.finish()
        assert sb.output() == 'hello' and sb.ended == {'exit': 0}
    assert _left(before) == ([], set())

def test_a_message_to_a_program_that_never_reads_it_neither_blocks_nor_fails():
    "A message bigger than a pipe holds, queued for a program that closed its stdin: the run ends as the program did"
    sb = Sandbox([sys.executable, '-S', '-c', 'import os, time; os.close(0); time.sleep(0.3)'], 10, _settings=PLAIN)
    with sb:
        sb.send({'x': 'y' * (1 << 20)})
        assert sb.receive() is None
        sb.finish()
        assert sb.ended == {'exit': 0} and sb.left() > 5
