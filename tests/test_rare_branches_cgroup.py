"""`_cgroup`'s rare branches: what it does with an unreadable or odd `/proc`, a group it can't make or remove, and the
sweep's cases (a group whose application is alive, a name that isn't a run's, a group that won't go). The kernel's own
control groups where this machine lets this process make them (skipped elsewhere, saying so); a folder tree standing in
for a hierarchy otherwise (cgroup v2's files are plain files there: what is checked is what funccall writes)."""
import io, os, subprocess, sys, time

import pytest

from funccall.toolsets import _cgroup

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='control groups are Linux')

def _fake_found(monkeypatch, found):
    "Make `available()` answer `found` (the process-wide answer is cached: restored after the test)"
    monkeypatch.setattr(_cgroup, '_found', [found])

def _proc(monkeypatch, **texts):
    "`/proc/self/<name>` read by `_cgroup` as `texts[name]` (None: unreadable)"
    def fake_open(path, *a, **kw):
        text = texts[os.path.basename(path)]
        if text is None: raise PermissionError(13, 'denied', path)
        return io.StringIO(text)
    monkeypatch.setattr(_cgroup, 'open', fake_open, raising=False)

def test_unreadable_proc_files_mean_no_groups_not_an_error(monkeypatch):
    "A /proc this process can't read (a hardened container): no hierarchy, no group, and a run says why it has none"
    _proc(monkeypatch, mountinfo=None, cgroup=None)
    assert _cgroup._mounts() == [] and _cgroup._own_groups() == {}
    _fake_found(monkeypatch, _cgroup._find())
    assert _cgroup.available() is None
    with pytest.raises(OSError, match='no control group this process may make'): _cgroup.Cgroup(64, 10)
    assert _cgroup.sweep() == 0

def test_a_malformed_proc_line_ends_the_reading_keeping_what_came_before(monkeypatch):
    "A line of a layout it doesn't know stops the parse without an error; the lines read before it still count"
    good = '30 25 0:26 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n'
    _proc(monkeypatch, mountinfo=good + '31 25 0:27 / /x rw - cgroup\n' + good.replace('pids', 'cpu'), cgroup='8:pids:/a\nbroken\n4:memory:/b\n')
    assert _cgroup._mounts() == [('/sys/fs/cgroup/pids', '/', 'cgroup', {'rw', 'pids'})]
    assert _cgroup._own_groups() == {'pids': '/a'}

@pytest.mark.parametrize('root,path,expected', [
    ('/', '/a/b', 'M/a/b'),
    ('/docker/abc', '/docker/abc', 'M/'),
    ('/docker/abc', '/docker/abc/run', 'M/run'),
    ('/docker/abc', '/docker/abcdef', None),  # (a sibling sharing the root's prefix: not under this mount)
    ('/docker/abc', '/other', None),          # (a group outside what the mount shows: a container's view of the host)
])
def test_a_group_outside_what_a_mount_shows_has_no_folder(root, path, expected):
    assert _cgroup._folder('M', root, path) == expected

def test_v2_without_readable_subtree_control_gives_no_group(tmp_path, monkeypatch):
    "A unified hierarchy whose groups show no `cgroup.subtree_control` (none passed down, or unreadable): no group there"
    (tmp_path / 'app').mkdir()
    monkeypatch.setattr(_cgroup, '_mounts', lambda: [(str(tmp_path), '/', 'cgroup2', {'rw'})])
    monkeypatch.setattr(_cgroup, '_own_groups', lambda: {'': '/app'})
    assert _cgroup._passes_down(str(tmp_path / 'app')) == set()
    assert _cgroup._find() is None

def test_v2_group_gets_every_limit_and_is_reported_by_its_events(tmp_path, monkeypatch):
    "cgroup v2: memory, no swap, the task count, one CPU; its OOM kills read from `memory.events`"
    _fake_found(monkeypatch, {'version': 2, 'dirs': {'': str(tmp_path)}, 'controllers': {'memory', 'pids', 'cpu'}})
    g = _cgroup.Cgroup(64, 10)
    d = g.dirs['']
    assert os.path.basename(d).startswith(f'funccall-{os.getpid()}-') and os.path.dirname(d) == str(tmp_path)
    files = {nm: open(os.path.join(d, nm)).read() for nm in os.listdir(d)}
    assert files == {'memory.max': str(64 << 20), 'pids.max': '10', 'memory.swap.max': '0', 'cpu.max': '100000 100000'}
    assert g.procs == [os.path.join(d, 'cgroup.procs')] and g.events == os.path.join(d, 'memory.events')
    assert g.oom_kills() == 0  # (no events file: none counted)
    with open(g.events, 'w') as f: f.write('low 0\nhigh 0\nmax 5\noom 2\noom_kill 2\noom_group_kill 0\n')
    assert g.oom_kills() == 2
    with open(g.events, 'w') as f: f.write('oom_kill\n')  # (a line it can't read: none counted, no error)
    assert g.oom_kills() == 0

def test_a_group_that_wont_go_is_left_for_the_sweep_after_the_wait(tmp_path, monkeypatch):
    "close() retries a group that can't be removed yet (its processes still going) for `wait` seconds, then leaves it"
    _fake_found(monkeypatch, {'version': 2, 'dirs': {'': str(tmp_path)}, 'controllers': {'memory', 'pids'}})
    g = _cgroup.Cgroup(64, 10)  # (in a plain folder its limit files keep it from being removed, as processes would)
    t0 = time.monotonic()
    g.close(wait=0.1)
    assert 0.1 <= time.monotonic() - t0 < 1 and os.path.isdir(g.dirs[''])
    for nm in os.listdir(g.dirs['']): os.remove(os.path.join(g.dirs[''], nm))
    g.close()
    assert not os.path.exists(g.dirs[''])
    g.close()  # (gone already: nothing to do, no error)

def test_v1_with_only_the_pids_controller(tmp_path, monkeypatch):
    "cgroup v1 where only `pids` may be used: its limit alone, and no OOM count to read (none, rather than an error)"
    _fake_found(monkeypatch, {'version': 1, 'dirs': {'pids': str(tmp_path)}, 'controllers': {'pids'}})
    g = _cgroup.Cgroup(64, 7)
    assert os.listdir(g.dirs['pids']) == ['pids.max'] and open(os.path.join(g.dirs['pids'], 'pids.max')).read() == '7'
    assert g.events is None and g.oom_kills() == 0

def test_a_group_half_made_is_removed_when_the_next_cant_be(tmp_path, monkeypatch):
    "v1 makes one group per controller: when one can't be made, those made before it are removed, and the error raised"
    (tmp_path / 'memory').mkdir()  # (and no `pids` folder: its hierarchy unmounted since)
    _fake_found(monkeypatch, {'version': 1, 'dirs': {'memory': str(tmp_path / 'memory'), 'pids': str(tmp_path / 'pids')},
                              'controllers': {'memory', 'pids'}})
    with pytest.raises(OSError): _cgroup.Cgroup(64, 10)
    assert os.listdir(tmp_path / 'memory') == []

def _real_v1() -> dict:
    found = _cgroup.available()
    if found is None or found['version'] != 1 or 'pids' not in found['dirs']: pytest.skip('no cgroup v1 pids hierarchy this process may use')
    return found

def test_a_limit_the_kernel_refuses_fails_the_group_and_leaves_none(monkeypatch):
    "The kernel refusing a limit (a task count below zero) is an error naming it, and no half-limited group is left"
    found = _real_v1()
    mine = lambda: {c: {nm for nm in os.listdir(d) if nm.startswith(f'funccall-{os.getpid()}-')} for c, d in found['dirs'].items()}  # noqa: E731
    before = mine()  # (this process's: other processes' runs come and go in the same folders meanwhile)
    with pytest.raises(OSError, match=r'cgroup: pids\.max could not be set'): _cgroup.Cgroup(64, -1)
    assert mine() == before

def test_a_real_group_holding_a_process_waits_then_goes_once_it_has_ended():
    "The kernel refuses to remove a group with a process in it: close() waits `wait` s, leaves it, and removes it later"
    _real_v1()
    g = _cgroup.Cgroup(64, 10)
    p = subprocess.Popen(['sleep', '30'])
    try:
        for procs in g.procs:
            with open(procs, 'w') as f: f.write(str(p.pid))
        g.close(wait=0.1)
        assert all(os.path.isdir(d) for d in g.dirs.values())
    finally: p.kill(); p.wait()
    g.close(wait=5)
    assert not any(os.path.exists(d) for d in g.dirs.values())

def test_sweep_removes_only_the_groups_of_applications_gone(tmp_path, monkeypatch):
    """Kept: a group of a live application (this one; pid 1, which this process may not signal), a name that isn't
    `funccall-<pid>-<n>`, one that can't be removed; a hierarchy folder that can't be listed is passed over"""
    keep = [f'funccall-{os.getpid()}-0', 'funccall-1-0', 'funccall-x-0', 'other-999999999-0', 'funccall-999999998-0']
    for nm in keep + ['funccall-999999999-0', 'funccall-999999999-1']: (tmp_path / nm).mkdir()
    (tmp_path / 'funccall-999999998-0' / 'cgroup.procs').write_text('')  # (not empty: can't be removed)
    _fake_found(monkeypatch, {'version': 1, 'dirs': {'memory': str(tmp_path / 'gone'), 'pids': str(tmp_path)}, 'controllers': {'pids'}})
    assert _cgroup.sweep() == 2
    assert sorted(os.listdir(tmp_path)) == sorted(keep)

def test_a_process_this_one_may_not_signal_counts_as_alive():
    "`kill(pid, 0)` refused (another user's process) means the process exists: its group is not swept"
    if os.getuid() != 0: code = 'from funccall.toolsets._cgroup import _alive; print(_alive(1), _alive(999999999))'
    else:  # (root may signal anyone: the check runs as nobody, root kept as the saved id so the process can write its coverage data after)
        code = ('import os; from funccall.toolsets._cgroup import _alive; os.setresuid(65534, 65534, 0)\n'
                'r = _alive(1), _alive(999999999); os.setresuid(0, 0, 0); print(*r)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=30,
                         env={**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)})
    assert out.stdout.split() == ['True', 'False'], out.stderr
