"""Limits the kernel enforces on a sandboxed program's whole tree (a control group per run, `_cgroup`): memory the
kernel holds for it (socket and pipe buffers) and the number of its tasks, at every instant rather than counted every
20 ms. Each test is a hostile program (`test_attack_sandbox.run`); where this machine offers no control group the
sandbox may make, `protections()` says so and the test is skipped with that reason."""
import os, sys, threading, time

import pytest

from funccall.toolsets import _cgroup, _sandbox
from test_attack_sandbox import HAVE, MAX_PROCS, MODES, _needs, run

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='the sandbox is tested on Linux, where its protections are claimed')

class _HostMemory:
    "The largest fall of this machine's available memory (MB) while the block runs, sampled every 5 ms"
    def __enter__(self):
        self.base = self.low = _available()
        self.done = threading.Event()
        self.t = threading.Thread(target=self._watch, daemon=True)
        self.t.start()
        return self
    def _watch(self):
        while not self.done.wait(0.005): self.low = min(self.low, _available())
    def __exit__(self, *exc):
        self.done.set(); self.t.join()
        self.fell = (self.base - self.low) / 2 ** 20

def _available() -> int:
    with open('/proc/meminfo') as f: return next(int(ln.split()[1]) << 10 for ln in f if ln.startswith('MemAvailable:'))

FILL = {  # kernel memory no process maps: a packet socket's queue (its SO_SNDBUF raised), a pipe (its size raised), netlink's
          # replies (no group counts them: 640 MB held before its socket was refused)
    'socketpair': """
def fill():
    import socket
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # (a datagram pair, the issue's, is refused now: the same queue)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20); b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    a.setblocking(False)
    n = 0
    while True:
        try: n += a.send(b'x' * 65000)
        except BlockingIOError: return (a, b), n
""",
    'stream socketpair': """
def fill():
    import socket
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20); b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    a.setblocking(False)
    n = 0
    while True:
        try: n += a.send(b'x' * 65536)
        except BlockingIOError: return (a, b), n
""",
    'pipe': """
def fill():
    import fcntl
    r, w = os.pipe()
    try: fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ: 1 MB, what an unprivileged process may ask
    except OSError: pass
    os.set_blocking(w, False)
    n = 0
    while True:
        try: n += os.write(w, b'x' * 65536)
        except BlockingIOError: return (r, w), n
""",
    'netlink': """
made = [0]
def fill():  # (the kernel's replies queue in the socket till it reads them: what no control group counts)
    import socket, struct
    if made[0] == 20: raise OSError('enough')  # 20 sockets a process, 8 MB queued in each: 640 MB for the four
    made[0] += 1
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    req = struct.pack('=LHHLL', 32, 18, 1, 0, 0) + struct.pack('=BxHiII', 0, 0, 1, 0, 0)  # RTM_GETLINK of `lo`
    for _ in range(4000): s.send(req)
    ino = str(os.fstat(s.fileno()).st_ino)
    with open('/proc/net/netlink') as f: return s, next(int(ln.split()[4]) for ln in f if ln.split()[-1] == ino)  # (its Rmem)
""",
}

FLOOD = """
import os, time
{fill}
for i in range(3):  # four processes, each filling buffers until its descriptors run out
    if os.fork() == 0: break
held, total = [], 0
try:
    while True:
        h, n = fill(); held.append(h); total += n
except OSError: pass
time.sleep(3)
f'queued {{total >> 20}} MB'
"""

@pytest.mark.parametrize('kind', FILL)
def test_kernel_buffers_count_against_the_memory_limit(kind):
    "With `memory_mb=64`, buffers the kernel holds for it (not its own memory: no count of its processes sees them) stop it"
    _needs('kernel_memory_limit')
    with _HostMemory() as host: text = run('code', FLOOD.format(fill=FILL[kind]), timeout=20, memory_mb=64)
    assert 'over 64 MB' in text or (text.startswith('queued') and int(text.split()[1]) < 128), text[-300:]
    assert host.fell < 300, f"the host's available memory fell by {host.fell:.0f} MB"

BOMB = """
import os, threading, time
seen = [0]
def watch():  # what the program itself can count of its tree, every half millisecond
    while not done:
        seen[0] = max(seen[0], sum(1 for p in os.listdir('/proc') if p.isdigit()))
        time.sleep(0.0005)
done = False
t = threading.Thread(target=watch); t.start()
failed, me = 0, os.getpid()
for i in range(12):  # 12 nested forks: 4,096 processes if nothing stops them
    try: os.fork()
    except OSError: failed += 1
time.sleep(0.5)
if os.getpid() != me: os._exit(0)
time.sleep(0.5)
done = True; t.join()
f'at most {{seen[0]}} processes; {{failed}} forks failed'
"""

@pytest.mark.parametrize('mode', MODES)
def test_a_fork_bomb_never_exceeds_the_process_limit(mode):
    "12 nested forks: the kernel refuses each fork past the limit, so the tree never holds more, at any instant"
    _needs('kernel_process_limit')
    text = run(mode, BOMB.format(), timeout=10)
    assert text.strip('\'"').startswith('at most'), text[-300:]
    most, failed = int(text.split()[2]), int(text.split()[4])
    assert failed > 0 and most <= MAX_PROCS + 1, text  # (its supervisor's init is in its `/proc` too)

def _groups() -> list:
    "This process's run groups still there"
    found = _cgroup.available() or {'dirs': {}}
    mine = f'funccall-{os.getpid()}-'
    return [nm for d in found['dirs'].values() for nm in os.listdir(d) if nm.startswith(mine)]

def test_each_runs_group_is_removed_after_it(tmp_path):
    _needs('kernel_memory_limit')
    run('code', "import os\nfor i in range(3):\n    if os.fork() == 0: break\nb'x' * (10 << 20)\n'ok'")
    run('python_isolated', "while True: pass", timeout=1)  # (ended at its deadline)
    assert _groups() == []

def test_protections_report_the_kernels_limits():
    "What this machine's control groups give: both limits, when the sandbox may make groups here"
    found = _cgroup.available()
    if found is None: assert not HAVE['kernel_memory_limit']
    else: assert HAVE['kernel_memory_limit'] is ('memory' in _sandbox._cgroups()) and HAVE['kernel_process_limit']

def test_the_tree_gets_one_cpu_at_most():
    """Eight processes spinning, all in a group whose quota is one CPU's time per period; on a quiet machine the kernel is
    seen to throttle it (on a busy one the group gets less than a CPU anyway: nothing to throttle)"""
    _needs('kernel_cpu_limit')
    spin = "import os, time\nfor i in range(7):\n    if os.fork() == 0: break\nend = time.time() + 2\nwhile time.time() < end: pass"
    with _sandbox.Sandbox([sys.executable, '-S', '-c', spin], 10) as sb:
        folder = sb.cgroup.dirs.get('cpu') or sb.cgroup.dirs['']
        time.sleep(1)
        with open(os.path.join(folder, 'cgroup.procs')) as f: inside = len(f.read().split())
        quiet = os.getloadavg()[0] < 1.5
        sb.finish()
        if 'cpu' in sb.cgroup.dirs:
            with open(os.path.join(folder, 'cpu.cfs_quota_us')) as f, open(os.path.join(folder, 'cpu.cfs_period_us')) as g: quota = (f.read(), g.read())
            assert quota[0] == quota[1] == '100000\n'
        else:
            with open(os.path.join(folder, 'cpu.max')) as f: assert f.read().split() == ['100000', '100000']
        with open(os.path.join(folder, 'cpu.stat')) as f: stat = dict(ln.split() for ln in f)
    assert inside >= 8 + 2  # (the eight, and the supervisor's two)
    if quiet: assert int(stat['nr_throttled']) > 0, stat

def _fake_v2(tmp_path, monkeypatch, own: set, parent: set) -> str:
    "A unified hierarchy in `tmp_path`: this process in app/main, passing `own` down, its parent app passing `parent` down"
    main = tmp_path / 'app' / 'main'
    main.mkdir(parents=True)
    (main / 'cgroup.subtree_control').write_text(' '.join(sorted(own)))
    (main.parent / 'cgroup.subtree_control').write_text(' '.join(sorted(parent)))
    monkeypatch.setattr(_cgroup, '_mounts', lambda: [(str(tmp_path), '/', 'cgroup2', {'rw'})])
    monkeypatch.setattr(_cgroup, '_own_groups', lambda: {'': '/app/main'})
    return str(main)

def test_on_cgroup_v2_groups_go_where_controllers_are_passed_down_and_nothing_is_changed(tmp_path, monkeypatch):
    "Its own group when it passes memory and pids down; else the delegated one above it; else none (never enabling any)"
    main = _fake_v2(tmp_path, monkeypatch, {'memory', 'pids', 'cpu'}, set())
    assert _cgroup._find() == {'version': 2, 'dirs': {'': main}, 'controllers': {'memory', 'pids', 'cpu'}}
    main = _fake_v2(tmp_path / 'b', monkeypatch, set(), {'memory', 'pids'})
    assert _cgroup._find() == {'version': 2, 'dirs': {'': os.path.dirname(main)}, 'controllers': {'memory', 'pids'}}
    main = _fake_v2(tmp_path / 'c', monkeypatch, {'memory'}, {'cpu'})
    assert _cgroup._find() is None
    assert (tmp_path / 'c' / 'app' / 'main' / 'cgroup.subtree_control').read_text() == 'memory'  # (left as it was)

# --- counts the kernel keeps per user: the program's charged to the application's user too ----------------------------

_ONE = {  # one of each, made with ctypes: a value >= 0 when it was made (the program keeps them; the application frees its own)
    'inotify instances': ("libc.inotify_init()", "os.close"),
    'fanotify groups': ("libc.fanotify_init(0x200, 0)", "os.close"),  # FAN_REPORT_FID: what an unprivileged process may ask
    'queued signals': ("0 if libc.timer_create(1, None, ctypes.byref(t := ctypes.c_void_p())) == 0 else -1", None),  # (each preallocates one)
    'message queue bytes': ("libc.mq_open(f'/fc{uuid.uuid4().hex}'.encode(), 0o102, 0o600, None)", "libc.mq_close"),
}

def host_can(kind: str) -> str:
    "Make one of `kind` in the application, as a program is holding all it may: 'ok', or why it failed"
    import ctypes, uuid
    libc = ctypes.CDLL(None, use_errno=True)
    made, free = _ONE[kind]
    got = eval(made, {'libc': libc, 'ctypes': ctypes, 'uuid': uuid})
    if got < 0: return os.strerror(ctypes.get_errno())
    if free: eval(free, {'os': os, 'libc': libc})(got)
    return 'ok'

HOG = """
import ctypes, os, uuid
libc = ctypes.CDLL(None, use_errno=True)
held = 0
while held < 200_000 and ({made}) >= 0: held += 1
host_can(kind={kind!r})
"""

@pytest.mark.parametrize('kind', _ONE)
def test_the_programs_per_user_counts_leave_the_applications_alone(kind):
    """inotify and fanotify instances, queued signals (a POSIX timer holds one) and POSIX message queue bytes are counted
    per user, and a user namespace's counts are charged to the user who made it too: as root's, root's across the host.
    A program holding all it may leaves the application (and every process of its user) able to make its own"""
    _needs('namespaces')
    if (alone := host_can(kind)) != 'ok': pytest.skip(f'the application itself makes no {kind} here: {alone}')  # (an old kernel's fanotify)
    from funccall import Toolbox
    from funccall.toolsets.codemode import code_tool
    r = code_tool(Toolbox([host_can]), isolate=True, timeout=20).execute({'code': HOG.format(made=_ONE[kind][0], kind=kind)})
    assert r.ok and r.text == 'ok', (r.text, r.error)
