"""Limits the kernel enforces on a sandboxed program's whole tree (`_sandbox`): a control group of its own per run.

- cgroup v2, where this process's group, or the one above it (a delegated subtree), already passes `memory` and `pids`
  down (it changes no group's controllers; a group with processes of its own can't pass them down):
  `memory.max` (what the tree maps, and the kernel memory it makes: socket and pipe buffers, its memory file systems,
  page cache), `memory.swap.max` 0, `pids.max` (a `fork` or a new thread past it fails), `cpu.max` one CPU;
- cgroup v1 (`memory` and `pids` mounted apart, as on this machine): `memory.limit_in_bytes` (which counts kernel
  memory on kernels where `memory.kmem.limit_in_bytes` is gone, and is set too where it isn't),
  `memory.memsw.limit_in_bytes` where swap is counted, `memory.kmem.tcp.limit_in_bytes` (TCP buffers), `pids.max`,
  and one CPU (`cpu.cfs_quota_us`) where `cpu` is mounted.
Each group is made in this process's own group, named `funccall-<pid>-<n>`, and removed when its run is closed; one
left behind by an application that was killed (its pid gone) is removed by the next run's start (`sweep`).
"""
from __future__ import annotations

import itertools, os, time

__all__ = ['Cgroup', 'available', 'sweep']

_PREFIX = 'funccall-'
_runs = itertools.count()

def _mounts() -> list:
    "(mount point, root, type, options) of each cgroup file system this process sees"
    out = []
    try:
        with open('/proc/self/mountinfo') as f:
            for line in f:
                pre, _, post = line.partition(' - ')
                fields, (fstype, _, opts) = pre.split(), post.split()[:3]
                if fstype in ('cgroup', 'cgroup2'): out.append((fields[4], fields[3], fstype, set(opts.split(','))))
    except (OSError, ValueError): pass
    return out

def _own_groups() -> dict:
    "This process's group per hierarchy: controller name (or '' for v2) -> its path"
    out = {}
    try:
        with open('/proc/self/cgroup') as f:
            for line in f:
                _, ctl, path = line.rstrip('\n').split(':', 2)
                for c in ctl.split(',') if ctl else ['']: out[c] = path
    except (OSError, ValueError): pass
    return out

def _folder(mount: str, root: str, path: str) -> str | None:
    "The folder of group `path` under a mount of hierarchy root `root` at `mount`, if this mount shows it"
    if root != '/' and path != root and not path.startswith(root + '/'): return None
    rel = path[len(root):] if root != '/' else path
    return os.path.join(mount, rel.lstrip('/'))

_found: list = []

def available() -> dict | None:
    "{'version': 1 | 2, 'dirs': {controller (v1) or '' (v2): folder}, 'controllers': {...}} where this process may make groups, else None"
    if not _found: _found.append(_find())
    return _found[0]

def _find() -> dict | None:
    own, mounts = _own_groups(), _mounts()
    v2 = next((m for m in mounts if m[2] == 'cgroup2'), None)
    if v2 and '' in own and (d := _folder(v2[0], v2[1], own[''])):
        for cand in (d, os.path.dirname(d)):  # its own group, else the one it was delegated (its parent: groups made beside it)
            if {'memory', 'pids'} <= (ctls := _passes_down(cand)): return {'version': 2, 'dirs': {'': cand}, 'controllers': ctls}
    dirs = {}
    for ctl in ('memory', 'pids', 'cpu'):
        m = next((m for m in mounts if m[2] == 'cgroup' and ctl in m[3]), None)
        if m and ctl in own and (d := _folder(m[0], m[1], own[ctl])) and os.access(d, os.W_OK): dirs[ctl] = d
    return {'version': 1, 'dirs': dirs, 'controllers': set(dirs)} if {'memory', 'pids'} & set(dirs) else None

def _passes_down(d: str) -> set:
    "The controllers groups made in `d` get ('memory', 'pids', 'cpu'), where this process may make them (nothing is changed)"
    try:
        with open(os.path.join(d, 'cgroup.subtree_control')) as f: ctls = set(f.read().split())
    except OSError: return set()
    return ctls & {'memory', 'pids', 'cpu'} if os.access(d, os.W_OK) else set()

def _write(folder: str, name: str, value) -> bool:
    try:
        with open(os.path.join(folder, name), 'w') as f: f.write(str(value))
        return True
    except OSError: return False

class Cgroup:
    "A group for one run: made with its limits set, `procs` the files its supervisor joins it by, `close()` removes it"
    def __init__(self, memory_mb: int, tasks: int):
        found = available()
        if found is None: raise OSError('no control group this process may make')
        name, self.version = f'{_PREFIX}{os.getpid()}-{next(_runs)}', found['version']
        self.dirs = {c: os.path.join(d, name) for c, d in found['dirs'].items()}
        try:
            for d in self.dirs.values(): os.mkdir(d, 0o700)
            self._limit(memory_mb << 20, tasks)
        except OSError:
            self.close()
            raise
        self.procs = [os.path.join(d, 'cgroup.procs') for d in self.dirs.values()]
        mem = self.dirs.get('' if self.version == 2 else 'memory')
        self.events = mem and os.path.join(mem, 'memory.events' if self.version == 2 else 'memory.oom_control')  # (its `oom_kill` count)

    def _limit(self, mem: int, tasks: int) -> None:
        def must(folder, name, value):
            if not _write(folder, name, value): raise OSError(f'cgroup: {name} could not be set')
        if self.version == 2:
            d = self.dirs['']
            must(d, 'memory.max', mem); must(d, 'pids.max', tasks)
            _write(d, 'memory.swap.max', 0); _write(d, 'cpu.max', '100000 100000')  # (where swap and the cpu controller are)
            return
        if (m := self.dirs.get('memory')):
            _write(m, 'memory.kmem.limit_in_bytes', mem)  # (gone on new kernels, where the limit below counts kernel memory)
            must(m, 'memory.limit_in_bytes', mem)
            _write(m, 'memory.memsw.limit_in_bytes', mem)  # (where swap is counted)
            _write(m, 'memory.kmem.tcp.limit_in_bytes', mem)  # (v1 counts TCP buffers apart, and only once this is set)
        if (p := self.dirs.get('pids')): must(p, 'pids.max', tasks)
        if (c := self.dirs.get('cpu')): must(c, 'cpu.cfs_period_us', 100_000); must(c, 'cpu.cfs_quota_us', 100_000)

    def oom_kills(self) -> int:
        "How many of the run's processes the kernel killed for going over its memory"
        try:
            with open(self.events) as fh: return sum(int(ln.split()[1]) for ln in fh if ln.startswith('oom_kill '))  # type: ignore[arg-type]  # (None: TypeError)
        except (OSError, TypeError, ValueError, IndexError): return 0

    def close(self, wait: float=1.0) -> None:
        "Remove the group (its processes are gone, or going: waited for `wait` s at most)"
        end = time.monotonic() + wait
        for d in self.dirs.values():
            while True:
                try: os.rmdir(d); break
                except FileNotFoundError: break
                except OSError:
                    if time.monotonic() > end: break  # (left for `sweep`)
                    time.sleep(0.01)

def sweep() -> int:
    "Remove the groups of runs whose application is gone (killed before it could): how many were removed"
    found, n = available(), 0
    for d in (found or {}).get('dirs', {}).values():
        try: names = [nm for nm in os.listdir(d) if nm.startswith(_PREFIX)]
        except OSError: continue
        for nm in names:
            pid = nm[len(_PREFIX):].split('-')[0]
            if pid.isdigit() and not _alive(int(pid)):
                try: os.rmdir(os.path.join(d, nm)); n += 1
                except OSError: pass
    return n

def _alive(pid: int) -> bool:
    try: os.kill(pid, 0)
    except ProcessLookupError: return False
    except PermissionError: return True
    return True
