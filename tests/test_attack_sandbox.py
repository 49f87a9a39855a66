"""Escape attempts against the isolated modes (`code_tool(isolate=True)` and `python_isolated`, both run by
`funccall/_sandbox.py`): each test runs a hostile program in both, asserts the attack failed, that the application got
its answer within the deadline plus one second, and that its own memory grew by less than `RSS_MB` meanwhile. Where this
machine lacks what a protection needs, `protections()` says so and the test is skipped with that reason, not passed.
The tests run as root in CI: the protections are checked there as root (the harder case: root may trace any process)."""
import ctypes, json, os, socket, sys, threading, time, uuid

import pytest

from funccall import Toolbox
from funccall.toolsets._sandbox import (
    _DEVICES, MAX_DEPTH, MAX_FILES, MAX_INODES, MAX_MESSAGE, MAX_OUTPUT, MAX_PROCS, MAX_RESULT, MAX_THREADS, MEMORY_MB, WORK, protections
)
from funccall.toolsets.codemode import code_tool
from funccall.toolsets.pytool import python_isolated

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='the sandbox is tested on Linux, where its protections are claimed')

RSS_MB = 100  # the application's memory may grow this much while a hostile program runs
MODES = ['code', 'python_isolated']
HAVE = protections()

def ping() -> str:
    "Answer 'pong'"
    return 'pong'

def hang(seconds: float) -> str:
    "Sleep, then answer"
    time.sleep(seconds)
    return 'late'

class _Rss:
    "The peak growth of this process's resident memory (MB) while the block runs, sampled every 5 ms"
    def __enter__(self):
        self.base = self.peak = _rss()
        self.done = threading.Event()
        self.t = threading.Thread(target=self._watch, daemon=True)
        self.t.start()
        return self
    def _watch(self):
        while not self.done.wait(0.005): self.peak = max(self.peak, _rss())
    def __exit__(self, *exc):
        self.done.set(); self.t.join()
        self.grew = (max(self.peak, _rss()) - self.base) / 2 ** 20

def _rss() -> int:
    with open('/proc/self/statm') as f: return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')

def run(mode: str, code: str, timeout: float=3, memory_mb: int=None) -> str:
    "What the model reads from `code` run in `mode`; asserts the deadline and the application's memory held"
    with _Rss() as rss:
        start = time.monotonic()
        if mode == 'code':
            kw = {'memory_mb': memory_mb} if memory_mb else {}
            r = code_tool(Toolbox([ping, hang]), isolate=True, timeout=timeout, **kw).execute({'code': code})
            text = r.text if r.ok else r.error
        else: text = str(python_isolated(code, timeout=timeout))
        secs = time.monotonic() - start
    assert secs < timeout + 1, f'returned after {secs:.1f} s, past the deadline of {timeout} s + 1 s'
    assert rss.grew < RSS_MB, f'the application grew by {rss.grew:.0f} MB'
    return text

def _needs(what: str):
    if not HAVE[what]: pytest.skip(f'{what!r} does not hold on this machine (protections() says so)')

def _host_procs(marker: str) -> list:
    "This machine's processes named `marker` (what a hostile program names the ones it hides)"
    found = []
    for n in os.listdir('/proc'):
        try:
            with open(f'/proc/{n}/comm') as f:
                if f.read().strip() == marker: found.append(int(n))
        except (OSError, ValueError): pass
    return found

def _marker() -> str: return 'fc' + uuid.uuid4().hex[:12]  # a process name is at most 15 characters

NAME_ME = "import ctypes; ctypes.CDLL(None).prctl(15, {m!r}.encode(), 0, 0, 0)"  # PR_SET_NAME

# --- what the program sees of the application ---------------------------------------------------------------

@pytest.mark.parametrize('mode', MODES)
def test_the_applications_environment_is_not_there(mode, monkeypatch):
    monkeypatch.setenv('OPENAI_API_KEY', 'sk-secret-of-the-app')
    monkeypatch.setenv('FUNCCALL_MCP_SECRET', 'mcp-secret-of-the-app')
    code = ("import os\nseen = repr(dict(os.environ))\n"
            "for p in ['/proc/self/environ', f'/proc/{os.getppid()}/environ', '/proc/1/environ']:\n"
            "    try: seen += open(p, 'rb').read().decode(errors='replace')\n"
            "    except OSError: pass\n"
            "[sorted(os.environ), 'secret-of-the-app' in seen]")
    text = run(mode, code)
    assert 'secret-of-the-app' not in text and text.lower().endswith('false]')
    assert 'OPENAI_API_KEY' not in text and 'PATH' in text

@pytest.mark.parametrize('mode', MODES)
def test_no_descriptor_but_the_pipes(mode):
    r, w = os.pipe()  # open in the application, inheritable: the program must not get it
    os.set_inheritable(r, True)
    try:
        text = run(mode, "import os\n[fd for fd in range(256) if os.path.exists(f'/proc/self/fd/{fd}')]")
    finally: os.close(r); os.close(w)
    assert set(eval(text)) <= {0, 1, 2, 3}  # stdin, stdout, stderr and the channel's copy of stdout  # noqa: S307

@pytest.mark.parametrize('mode', MODES)
def test_an_empty_folder_of_its_own_removed_afterwards(mode, monkeypatch):
    import tempfile
    made, mkdtemp = [], tempfile.mkdtemp
    monkeypatch.setattr(tempfile, 'mkdtemp', lambda *a, **kw: made.append(mkdtemp(*a, **kw)) or made[-1])
    text = run(mode, "import os\n[os.getcwd(), os.listdir('.'), open('made-here', 'w').write('x')]")
    folder, listed, wrote = eval(text)  # noqa: S307
    assert listed == [] and wrote == 1 and folder != os.getcwd() and made and not any(os.path.exists(f) for f in made)
    if HAVE['own_filesystem']: assert folder == WORK  # (the host's folder it is in is no path it sees)

@pytest.mark.parametrize('mode', MODES)
def test_the_applications_files_are_read_only(mode, tmp_path):
    _needs('read_only_files')
    target = tmp_path / 'app.py'
    target.write_text('ORIGINAL = True\n')
    text = run(mode, f"try: open({str(target)!r}, 'w').write('import evil')\nexcept OSError as e: print('refused:', type(e).__name__)")
    assert 'refused' in text and target.read_text() == 'ORIGINAL = True\n'

@pytest.mark.parametrize('mode', MODES)
def test_no_device_of_the_host_opens(mode):
    "As root (CI), the host's disks and consoles would open in the real `/dev`: the program's has the harmless ones only"
    _needs('read_only_files')
    host = sorted(f'/dev/{n}' for n in os.listdir('/dev') if n not in _DEVICES and _is_device(f'/dev/{n}'))
    code = (f"import os\nopened = []\nfor d in {host!r}:\n    try: os.close(os.open(d, os.O_RDONLY)); opened.append(d)\n"
            "    except OSError: pass\nwith open('/dev/null', 'w') as f: f.write('x')\n[opened, sorted(os.listdir('/dev'))]")
    opened, listed = eval(run(mode, code))  # noqa: S307
    assert opened == [] and {n for n in listed if _is_device(f'/dev/{n}') or n in _DEVICES} <= set(_DEVICES)

def _is_device(p: str) -> bool:
    import stat
    try: m = os.lstat(p).st_mode
    except OSError: return False
    return stat.S_ISCHR(m) or stat.S_ISBLK(m)

@pytest.mark.parametrize('mode', MODES)
def test_no_network(mode):
    _needs('no_network')
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0)); srv.listen()
    port = srv.getsockname()[1]
    try:
        text = run(mode, f"import socket\ntry: socket.create_connection(('127.0.0.1', {port}), timeout=1); r = 'connected'\nexcept OSError: r = 'refused'\nr")
    finally: srv.close()
    assert 'refused' in text and 'connected' not in text

def test_the_developer_chooses_the_programs_environment_and_network(monkeypatch):
    "code_tool's env= reaches the program (and nothing else of the application's); network=True lets it connect"
    monkeypatch.setenv('OPENAI_API_KEY', 'sk-app-secret')
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0)); srv.listen()
    port = srv.getsockname()[1]
    prog = (f"import os, socket\ntry: socket.create_connection(('127.0.0.1', {port}), timeout=2); r = 'connected'\n"
            "except OSError: r = 'refused'\n(os.environ.get('GREETING'), os.environ.get('OPENAI_API_KEY'), r)")
    try: r = code_tool(Toolbox([ping]), isolate=True, timeout=10, env={'GREETING': 'hi'}, network=True).execute({'code': prog})
    finally: srv.close()
    assert r.ok, r.error
    assert r.text == '["hi", null, "connected"]'

def test_env_and_network_are_refused_where_no_process_of_its_own_runs_the_program():
    for isolate in (False, 'monty'):
        with pytest.raises(ValueError, match='isolate=True'): code_tool(Toolbox([ping]), isolate=isolate, env={'A': '1'})
    with pytest.raises(ValueError, match='isolate=True'): code_tool(Toolbox([ping]), isolate=False, network=True)

# --- the host's kernel (the program's ids are the application's user's: as root, root's) -----------------------------

@pytest.mark.parametrize('mode', MODES)
def test_the_hosts_sysctls_and_sysrq_do_not_open_for_writing(mode):
    "As root's, a writable `/proc/sys` set the host's sysctls (`kernel.core_pattern`: a command the host runs as root)"
    _needs('read_only_files')
    targets = ['/proc/sys/kernel/core_pattern', '/proc/sys/kernel/hostname', '/proc/sys/vm/drop_caches', '/proc/sysrq-trigger',
               '/proc/sys/user/max_user_namespaces']
    code = (f"import os\nopened = []\nfor p in {targets!r}:\n"  # opened only, never written: the open is the test
            "    try: os.close(os.open(p, os.O_WRONLY)); opened.append(p)\n    except OSError: pass\nopened")
    assert run(mode, code) == '[]'

@pytest.mark.parametrize('mode', MODES)
def test_the_applications_unix_sockets_do_not_connect(mode, tmp_path):
    "A socket file on a read-only mount still connects (the application's own, a database's, `docker.sock`): not from here"
    _needs('seccomp')
    path = str(tmp_path / 'app.sock')
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path); srv.listen(1); srv.setblocking(False)
    try:
        code = (f"import ctypes, socket\nlibc = ctypes.CDLL(None, use_errno=True)\nout = []\n"
                f"try: s = socket.socket(socket.AF_UNIX); s.connect({path!r}); s.sendall(b'owned'); out.append('connected')\n"
                "except OSError: pass\n"
                "if libc.syscall(425, 8, ctypes.create_string_buffer(120)) >= 0: out.append('io_uring')\n"  # io_uring_setup: sockets past the filter
                "import asyncio\nout.append(asyncio.run(asyncio.sleep(0, 'asyncio works')))\nout")  # (its socketpair still opens)
        assert run(mode, code) in ("['asyncio works']", '["asyncio works"]')
        with pytest.raises(BlockingIOError): srv.accept()
    finally: srv.close()

FAMILIES = {'AF_NETLINK': 16, 'AF_PACKET': 17, 'AF_KEY': 15, 'AF_RDS': 21, 'AF_CAN': 29, 'AF_TIPC': 30, 'AF_BLUETOOTH': 31,
            'AF_ALG': 38, 'AF_VSOCK': 40, 'AF_QIPCRTR': 42, 'AF_SMC': 43, 'AF_XDP': 44}

@pytest.mark.parametrize('mode', MODES)
def test_no_socket_but_the_internets(mode):
    """netlink's replies queue in its socket where no control group counts them (500 MB held past a 64 MB limit:
    `test_kernel_buffers_count_against_the_memory_limit`); the other families are the kernel's least-travelled code"""
    _needs('seccomp')
    code = (f"import socket\nopened = []\nfor nm, fam in {FAMILIES!r}.items():\n"
            "    for kind in (socket.SOCK_RAW, socket.SOCK_DGRAM, socket.SOCK_STREAM, socket.SOCK_SEQPACKET):\n"
            "        try: socket.socket(fam, kind).close(); opened.append(nm)\n"
            "        except OSError: pass\n"
            "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()\n[opened, 'AF_INET opens']")
    assert run(mode, code).replace("'", '"') == '[[], "AF_INET opens"]'

@pytest.mark.parametrize('network', [False, True])
def test_a_datagram_socketpair_reaches_no_hosts_socket(network, tmp_path):
    """`socketpair(AF_UNIX, SOCK_DGRAM)` makes the AF_UNIX socket `socket()` refuses, and a datagram socket may `sendto` or
    `connect` to any address: a host daemon's abstract one (`network=True`: the host's network namespace, where the
    abstract names are; containerd-shim's was one) or a socket file it can see. Neither receives anything"""
    _needs('seccomp')
    name, path = f'\0fc-{uuid.uuid4().hex[:12]}'.encode(), str(tmp_path / 'log.sock')
    srvs = [socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(2)]
    srvs[0].bind(name); srvs[1].bind(path)
    os.chmod(tmp_path, 0o777); os.chmod(path, 0o777)  # (the program's ids are nobody's as root)
    code = (f"import socket\nsent = []\nfor to in ({name!r}, '/lent/log.sock'):\n"
            "    for how in ('sendto', 'connect'):\n"
            "        try:\n"
            "            a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)\n"
            "            a.sendto(b'owned', to) if how == 'sendto' else (a.connect(to), a.send(b'owned'))\n"
            "            sent.append(how)\n"
            "        except OSError: pass\n"
            "s, t = socket.socketpair()\ns.send(b'x')\n(sent, t.recv(1).decode())")  # (a stream pair still works: asyncio's, multiprocessing's)
    try:
        r = code_tool(Toolbox([ping]), isolate=True, timeout=10, network=network, mounts={str(tmp_path): '/lent'}).execute({'code': code})
        got = []
        for s in srvs:
            s.setblocking(False)
            try: got.append(s.recv(100))
            except BlockingIOError: pass
    finally:
        for s in srvs: s.close()
    assert got == [] and r.ok and r.text == '[[], "x"]', (got, r.text, r.error)

_KEYS = {'x86_64': (248, 249, 250), 'aarch64': (217, 218, 219)}.get(os.uname().machine)  # add_key, request_key, keyctl

@pytest.mark.parametrize('mode', MODES)
def test_the_applications_session_keyring_is_not_the_programs(mode):
    "A key the application holds in its session keyring (a login's credentials, say) doesn't read back in the program"
    if _KEYS is None: pytest.skip(f'no key syscall numbers for {os.uname().machine}')
    add, req, ctl = _KEYS
    libc = ctypes.CDLL(None, use_errno=True)
    name, secret = f'fc-{uuid.uuid4().hex[:8]}'.encode(), b'the-keyring-secret-' + uuid.uuid4().hex.encode()
    kid = libc.syscall(add, b'user', name, secret, len(secret), -3)  # KEY_SPEC_SESSION_KEYRING
    if kid < 0: pytest.skip(f'this machine gives no session keyring (add_key: errno {ctypes.get_errno()})')
    try:
        code = (f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nbuf = ctypes.create_string_buffer(200)\n"
                f"got = [libc.syscall({ctl}, 11, {kid}, buf, 200)]\n"  # KEYCTL_READ, by its id
                f"kid = libc.syscall({req}, b'user', {name!r}, None, 0)\n"  # found by its name in the session keyring
                f"got += [kid, libc.syscall({ctl}, 11, kid, buf, 200), buf.raw]\ngot")
        text = run(mode, code)
        assert secret.decode() not in text and text.replace(' ', '').startswith(('[-1,-1,-1,', "[-1,-1,-1,"))
    finally: libc.syscall(ctl, 3, kid)  # KEYCTL_REVOKE

INT80 = """
import ctypes, mmap, os
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3')  # mov eax, 20 (getpid in the 32-bit table); int 0x80; ret
getpid32 = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
pid = os.fork()
if pid == 0: os._exit(getpid32() & 0xff)  # (in a child: a kernel without the 32-bit entry ends it with a signal)
os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
"""

@pytest.mark.parametrize('mode', MODES)
def test_the_32_bit_system_call_entry_is_refused(mode):
    "`int 0x80` reaches the 32-bit table, where `ptrace` has another number: every call made there is refused"
    _needs('seccomp')
    if os.uname().machine != 'x86_64': pytest.skip('int 0x80 is an x86-64 attack')
    assert run(mode, INT80) == '255'  # -EPERM's low byte; the call itself would give the child's pid (2 here)

NESTED_TMPFS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.getuid(), os.getgid()
if libc.unshare(0x10000000 | 0x20000) != 0: r = ('refused', ctypes.get_errno())  # CLONE_NEWUSER | CLONE_NEWNS
else:
    for f, t in (('setgroups', 'deny'), ('uid_map', f'0 {uid} 1'), ('gid_map', f'0 {gid} 1')):
        with open(f'/proc/self/{f}', 'w') as fh: fh.write(t)
    r = ('mounted', libc.mount(b'none', b'/tmp', b'tmpfs', 0, b'size=8m'))
r
"""

@pytest.mark.parametrize('mode', MODES)
def test_no_user_namespace_of_its_own(mode):
    "In a user namespace of its own it could mount a memory file system that nothing counts against its memory"
    _needs('namespaces')
    assert run(mode, NESTED_TMPFS).replace('"', "'").strip('()[]') == "'refused', 28"  # ENOSPC: user.max_user_namespaces is 0

@pytest.mark.parametrize('mode', MODES)
def test_the_hosts_shared_memory_is_out_of_reach(mode):
    "A System V segment of the application's (its user's: as root, root's) neither opens nor is seen"
    _needs('namespaces')
    libc = ctypes.CDLL(None, use_errno=True)
    key = int(uuid.uuid4().hex[:7], 16)
    shm = libc.shmget(key, 4096, 0o1600)  # IPC_CREAT | 0600
    assert shm >= 0
    try:
        code = f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n[libc.shmget({key}, 0, 0), open('/proc/sysvipc/shm').read().count('\\n')]"
        assert run(mode, code) in ('[-1, 1]', '[-1, 0]')  # refused; only the header line, no segment listed
    finally: libc.shmctl(shm, 0, None)  # IPC_RMID

@pytest.mark.parametrize('mode', MODES)
def test_memory_that_no_process_maps_cant_be_made(mode):
    "A memfd written to, a SysV segment or queue filled: memory no process's PSS shows, so the tree's count would miss it"
    _needs('seccomp')
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nout = []\n"
            "try: os.memfd_create('x'); out.append('memfd')\nexcept OSError: pass\n"
            "if libc.shmget(0, 64 << 20, 0o1600) >= 0: out.append('shm')\n"  # IPC_PRIVATE
            "if libc.msgget(0, 0o1600) >= 0: out.append('msg')\nout")
    assert run(mode, code) == '[]'

@pytest.mark.parametrize('mode', MODES)
def test_threads_are_bounded_for_the_whole_tree(mode):
    "Where the kernel bounds the tree's tasks, a thread past the limit never starts; elsewhere the tree is counted and ended"
    _needs('tree_process_limit')
    code = ("import threading, time\nthreading.stack_size(1 << 16)\nn = 0\n"
            f"try:\n    for i in range({MAX_THREADS + 50}): threading.Thread(target=time.sleep, args=(10,), daemon=True).start(); n += 1\n"
            "except RuntimeError: pass\nf'started {n}'")
    text = run(mode, code, timeout=6)
    if HAVE['kernel_process_limit']: assert text.strip("'\"") == f'started {MAX_PROCS - 1}'  # (its own main thread is one task)
    else: assert f'more than {MAX_THREADS} threads' in text

@pytest.mark.parametrize('mode', MODES)
def test_descriptors_are_bounded(mode):
    "Each pipe or socket holds kernel memory no count sees: the number a process may open is bounded"
    code = ("import os, resource\nfds = []\ntry:\n    while len(fds) < 5000: fds += os.pipe()\nexcept OSError: pass\n"
            "try: resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096)); raised = True\nexcept (OSError, ValueError): raised = False\n[len(fds), raised]")
    n, raised = json.loads(run(mode, code).replace('False', 'false').replace('True', 'true'))
    assert n <= MAX_FILES and raised is False

# --- the application's memory ------------------------------------------------------------------------------

SECRET = bytearray(b'the-application-secret-' + uuid.uuid4().hex.encode())  # in this process's memory, at a known address

def _secret_addr() -> int: return ctypes.addressof((ctypes.c_char * len(SECRET)).from_buffer(SECRET))

@pytest.mark.parametrize('mode', MODES)
def test_proc_mem_of_the_application_can_be_neither_read_nor_written(mode):
    _needs('application_memory_hidden')
    before = bytes(SECRET)
    code = f"""
import os
got = []
for pid in [{os.getpid()}, os.getppid(), 1] + [int(p) for p in os.listdir('/proc') if p.isdigit()]:
    if pid == os.getpid(): continue
    for how in ('rb', 'r+b'):
        try:
            with open(f'/proc/{{pid}}/mem', how, buffering=0) as f:
                f.seek({_secret_addr()})
                got.append((pid, how, f.write(b'OWNED') if '+' in how else f.read({len(SECRET)})))
        except (OSError, ValueError, OverflowError): pass
got
"""
    text = run(mode, code)
    assert text == '[]' and bytes(SECRET) == before
    assert os.getpid() not in eval(run(mode, "import os\n[int(p) for p in os.listdir('/proc') if p.isdigit()]"))  # noqa: S307

@pytest.mark.parametrize('mode', MODES)
def test_ptrace_and_process_vm_readv_fail(mode):
    _needs('application_memory_hidden')
    code = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure): _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
buf = ctypes.create_string_buffer({len(SECRET)})
local, remote = iovec(ctypes.addressof(buf), {len(SECRET)}), iovec({_secret_addr()}, {len(SECRET)})
nr = {{'x86_64': 310, 'aarch64': 270}}[os.uname().machine]
out = []
for pid in ({os.getpid()}, os.getppid(), 1):
    out.append(('attach', pid, libc.ptrace(16, pid, None, None), ctypes.get_errno()))  # PTRACE_ATTACH
    out.append(('seize', pid, libc.ptrace(0x4206, pid, None, None), ctypes.get_errno()))  # PTRACE_SEIZE
    out.append(('readv', pid, libc.syscall(nr, pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0), ctypes.get_errno()))
[o for o in out if o[2] != -1] or 'all refused'
"""
    text = run(mode, code)
    assert text == 'all refused' and SECRET.decode() not in text

@pytest.mark.parametrize('mode', MODES)
def test_seccomp_refuses_ptrace_of_its_own_child(mode):
    "Even a process it may otherwise trace (its own child) can't be: the filter refuses the call itself"
    _needs('seccomp')
    code = ("import ctypes, os, time\nlibc = ctypes.CDLL(None, use_errno=True)\npid = os.fork()\n"
            "if pid == 0: time.sleep(5); os._exit(0)\n"
            "r = libc.ptrace(16, pid, None, None), ctypes.get_errno()\nos.kill(pid, 9)\nr")
    assert run(mode, code) in ('(-1, 1)', '[-1, 1]')  # EPERM

# --- deadlines, processes and memory -------------------------------------------------------------------------

DOUBLE_FORK = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        {name}
        while True: time.sleep(0.01)
    os._exit(0)
time.sleep(0.3)
"""

@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('ends', ['on time', 'at the deadline'])
def test_a_setsid_grandchild_is_gone_when_the_call_returns(mode, ends):
    _needs('deadline_kills_tree')
    m = _marker()
    code = DOUBLE_FORK.format(name=NAME_ME.format(m=m)) + ('while True: pass\n' if ends == 'at the deadline' else '"back"')
    text = run(mode, code, timeout=2 if ends == 'at the deadline' else 6)  # (on time even on a loaded machine)
    assert ('TimeoutError' in text) == (ends == 'at the deadline'), text
    end = time.monotonic() + 1
    while _host_procs(m) and time.monotonic() < end: time.sleep(0.05)
    assert _host_procs(m) == []

@pytest.mark.parametrize('mode', MODES)
def test_a_fork_bomb_is_bounded(mode):
    "200 forks, each child asleep (it can't harm the machine): the tree is stopped past `MAX_PROCS`, none is left"
    m = _marker()
    code = f"""
import os, time
n = 0
for i in range(200):
    try: pid = os.fork()
    except OSError: break
    if pid == 0:
        {NAME_ME.format(m=m)}
        time.sleep(30); os._exit(0)
    n += 1
time.sleep(2)
f'forked {{n}}'
"""
    text = run(mode, code, timeout=8)
    assert f'more than {MAX_PROCS} processes' in text or (text.startswith('forked') and int(text.split()[1]) < MAX_PROCS)
    time.sleep(0.3)
    assert _host_procs(m) == []

@pytest.mark.parametrize('mode', MODES)
def test_memory_over_the_limit_across_forks_is_refused(mode):
    "Four processes of 200 MB each: each under the limit, together over it"
    code = """
import os, time
for i in range(3):
    if os.fork() == 0: break
block = b'x' * (200 << 20)
time.sleep(3)
'kept it'
"""
    limit = 256 if mode == 'code' else MEMORY_MB
    text = run(mode, code, timeout=8, memory_mb=256 if mode == 'code' else None)
    assert 'kept it' not in text and f'over {limit} MB' in text

@pytest.mark.parametrize('mode', MODES)
def test_files_it_writes_count_as_its_memory(mode):
    "600 MB of files in its folder: not on the host's disk, and over the limit"
    _needs('read_only_files')
    code = "import time\nfor i in range(3): open(f'f{i}', 'wb').write(b'x' * (200 << 20))\ntime.sleep(3)\n'kept'"
    limit = 256 if mode == 'code' else MEMORY_MB
    free = os.statvfs('/tmp').f_bavail * os.statvfs('/tmp').f_frsize
    text = run(mode, code, timeout=8, memory_mb=256 if mode == 'code' else None)
    assert 'kept' not in text and (f'over {limit} MB' in text or 'No space left' in text), text[-300:]
    assert os.statvfs('/tmp').f_bavail * os.statvfs('/tmp').f_frsize > free - (400 << 20)  # (other processes write there too)

def _swap() -> bool:
    with open('/proc/swaps') as f: return len(f.read().splitlines()) > 1

def test_memory_sent_to_swap_still_counts():
    "`madvise(MADV_PAGEOUT)` moves a process's own pages to swap, out of its PSS: the count takes its swap share too"
    if not _swap(): pytest.skip('this machine has no swap, so no page can be sent there')
    from funccall.toolsets._sandbox import Sandbox
    code = ("import ctypes, mmap, os, time\nfor i in range(3):\n    if os.fork() == 0: break\n"
            "m = mmap.mmap(-1, 100 << 20)\nfor j in range(0, len(m), 4096): m[j] = 1\n"
            "ctypes.CDLL(None).madvise(ctypes.c_void_p(ctypes.addressof(ctypes.c_char.from_buffer(m))), len(m), 21)\n"  # MADV_PAGEOUT
            "time.sleep(5)")
    with Sandbox([sys.executable, '-S', '-c', code], 10, memory_mb=256) as sb:
        sb.finish()
        assert 'over 256 MB' in sb.ended.get('over', ''), sb.ended

@pytest.mark.parametrize('mode', MODES)
def test_empty_files_are_bounded(mode):
    "An empty file holds no block of the folder (so nothing of its memory count) but kernel memory: their number is bounded"
    _needs('read_only_files')
    code = (f"import os\nn = 0\ntry:\n    for i in range({MAX_INODES + 100}): os.close(os.open(f'f{{i}}', os.O_CREAT | os.O_WRONLY)); n += 1\n"
            "except OSError: pass\n[n, os.statvfs('.').f_files]")
    made, most = json.loads(run(mode, code, timeout=20))
    assert made < MAX_INODES and most == MAX_INODES

@pytest.mark.parametrize('mode', MODES)
def test_one_process_over_the_limit_gets_a_memory_error(mode):
    text = run(mode, "x = b'x' * (2 << 30)\nlen(x)", memory_mb=256 if mode == 'code' else None)
    assert 'MemoryError' in text

def test_a_program_that_never_reads_its_answers():
    "It sends 5,000 calls without reading one answer: the application never blocks writing to it"
    code = ("import json, os, time\nline = json.dumps({'call': 'ping', 'args': {}}).encode() + b'\\n'\n"
            "for i in range(5000): os.write(3, line)\ntime.sleep(10)")
    text = run('code', code, timeout=3)
    assert 'before reading the answer' in text or 'TimeoutError' in text

@pytest.mark.parametrize('tool', ['ping()', 'hang(0.4)', 'hang(30)'])
def test_a_loop_over_tool_calls_stops_at_the_deadline(tool):
    text = run('code', f'while True: {tool}', timeout=2)
    assert 'TimeoutError' in text and 'stopped after 2 s' in text

# --- output ----------------------------------------------------------------------------------------------------

@pytest.mark.slow  # timed against a deadline: run on the one Python CI doesn't share a core with three others
@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('fd', [1, 2])
def test_a_flood_of_output_is_cut(mode, fd):
    "It tries to write 1 GB (to its stdout or stderr), then fails: the application keeps a bounded part, and says so"
    code = f"import os\nchunk = b'y' * (1 << 20)\nfor i in range(1024): os.write({fd}, chunk)\nos._exit(7)"
    text = run(mode, code, timeout=10)  # (1 GB through a pipe takes 1-3 s on a loaded machine)
    assert 'exit code 7' in text and 'bytes of output' in text and len(text) < MAX_OUTPUT

# --- the channel ----------------------------------------------------------------------------------------------

FORGED = {  # each, Python making the line the program writes to its channel
    'not JSON': "b'{\"call\": '",
    'not an object': "b'[1, 2, 3]'",
    'name not a string': "b'{\"call\": 5, \"args\": {}}'",
    'arguments not an object': "b'{\"call\": \"ping\", \"args\": [1]}'",
    'unknown op': "b'{\"op\": \"exec\", \"code\": \"import os\"}'",
    'done without fields': "b'{\"done\": true}'",
    'deep nesting': "b'[' * 100_000 + b']' * 100_000",
    'just deep enough to hurt': f"b'{{\"call\": \"ping\", \"args\": {{\"a\": ' + b'[' * {MAX_DEPTH + 5} + b']' * {MAX_DEPTH + 5} + b'}}}}'",
    'a huge line': f"b'x' * {MAX_MESSAGE + (1 << 20)}",
    'millions of values': "b'{\"call\": \"ping\", \"args\": {\"a\": [' + b'{},' * 5_000_000 + b'{}]}}'",  # ~800 MB and 40 s to read
    'a result of the wrong types': "b'{\"repr\": 5, \"literal\": \"yes\"}'",
    'a literal too deep to read': "b'{\"repr\": \"' + b'[' * 100_000 + b'\", \"literal\": true}'",
}

@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('kind', FORGED)
def test_forged_channel_lines_become_a_clear_error(mode, kind):
    code = f"import os, time\ndata = {FORGED[kind]} + b'\\n'\nwhile data: data = data[os.write(3, data):]\ntime.sleep(10)"
    text = run(mode, code, timeout=4)
    if mode == 'python_isolated' and kind == 'a literal too deep to read': assert text.startswith('[[[')  # not a literal: its text
    else: assert "The program's process broke its channel's protocol: it sent" in text, text[:300]

@pytest.mark.parametrize('mode', MODES)
def test_a_closed_channel_reads_as_the_process_ending(mode):
    text = run(mode, "import os\nos.close(3); os.close(1); os.close(0)\nos._exit(0)")
    assert 'ended with exit code 0' in text and 'subprocess' not in text and 'TimeoutExpired' not in text

@pytest.mark.parametrize('mode', MODES)
def test_no_host_path_reaches_the_model(mode):
    text = run(mode, "import json\njson.loads('{')")
    assert 'JSONDecodeError' in text and _shown_stdlib() in text
    for p in {sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.__file__))}: assert p not in text

def _shown_stdlib() -> str:
    "How the standard library's folder reaches the model: at its neutral path in a filesystem of its own, else scrubbed"
    from funccall.core._package import PACKAGE_DIR
    from funccall.toolsets._rootfs import layout
    host = os.path.dirname(os.__file__)
    inside = layout(package=PACKAGE_DIR).inside(host) if HAVE['own_filesystem'] else host
    return inside if inside != host else '<lib>'  # (a system Python's `/usr/lib/python3.x` is where it is: scrubbed)

FORGED_RESULT = {  # a result its process forges on the channel, of any size
    'code': "json.dumps({'done': True, 'printed': 'p' * 6_000_000, 'value': 'v' * 6_000_000, 'failed': False})",
    'python_isolated': "json.dumps({'repr': 'r' * 12_000_000, 'literal': False})",
}

@pytest.mark.parametrize('mode', MODES)
def test_a_forged_result_is_cut(mode):
    code = f"import json, os, time\ndata = ({FORGED_RESULT[mode]} + '\\n').encode()\nwhile data: data = data[os.write(3, data):]\ntime.sleep(10)"
    text = run(mode, code, timeout=8)
    assert len(text) < MAX_RESULT + 200 and text.rstrip().endswith(('more characters cut]', 'cut at 100000 characters]'))

@pytest.mark.parametrize('mode', MODES)
def test_a_literal_value_carries_no_host_path(mode):
    text = run(mode, "import sys, os\n[sys.path, os.__file__]")
    assert _shown_stdlib() in text
    for p in {sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.__file__))}: assert p not in text

def test_the_cut_of_a_result_splits_no_host_path():
    "Cut first, a path across the cut would keep its first half, which no longer reads as a path to scrub"
    half = len(sys.base_prefix) // 2  # (the interpreter's folder: the same in the program's process)
    text = run('code', f"import sys\n'a' * {MAX_RESULT - half} + sys.base_prefix + 'b' * 100")
    assert sys.base_prefix[:half] not in text and text.rstrip().endswith('characters]')  # (cut, and said so)

@pytest.mark.parametrize('mode', MODES)
def test_a_lone_surrogate_reaches_the_model_as_utf8(mode):
    "Text no UTF-8 carries would raise in the application where it encodes the model's request"
    text = run(mode, "'a\\ud800b'")
    assert text.encode('utf-8') and text.startswith(('a', "'a")) and '\ud800' not in text

def _cgroups_here() -> set:
    from funccall.toolsets._sandbox import _cgroups
    return _cgroups() or set()

def test_protections_are_claimed_only_where_they_hold():
    "What `protections()` claims is what a program meets: here, the namespaces it needs for memory and files"
    assert HAVE['application_memory_hidden'] == HAVE['namespaces'] == HAVE['read_only_files']
    assert HAVE['own_filesystem'] == HAVE['namespaces'] and HAVE['ids_own_nothing'] is (HAVE['namespaces'] and os.getuid() == 0)
    # `RLIMIT_NPROC` holds in its user namespace, where its ids are no root's; a control group's `pids.max` anywhere
    assert HAVE['kernel_process_limit'] is (HAVE['namespaces'] or _cgroups_here() >= {'pids'})
    assert HAVE['kernel_memory_limit'] is ('memory' in _cgroups_here())
    assert HAVE['empty_environment'] and HAVE['deadline_kills_tree'] == HAVE['namespaces']

# --- without namespaces (a machine that has none: the fallback, forced here) -------------------------------------

NO_NS = {'namespaces': False, 'seccomp': HAVE['seccomp'], 'network': True}

def _bare(code: str, timeout: float=6):
    "How a program ends under the fallback supervisor (a subreaper, no namespaces): its status, its stderr"
    from funccall.toolsets._sandbox import Sandbox
    with Sandbox([sys.executable, '-S', '-c', code], timeout, _settings=NO_NS) as sb:
        sb.finish()
        return sb.ended, sb.output()

def test_without_namespaces_a_subreaper_still_ends_a_setsid_grandchild():
    m = _marker()
    ended, _ = _bare(DOUBLE_FORK.format(name=NAME_ME.format(m=m)))
    assert ended == {'exit': 0}
    end = time.monotonic() + 1
    while _host_procs(m) and time.monotonic() < end: time.sleep(0.05)
    assert _host_procs(m) == []

def test_without_namespaces_processes_and_memory_are_still_counted():
    m = _marker()
    bomb = f"import os, time\nfor i in range(200):\n    if os.fork() == 0: {NAME_ME.format(m=m)}; time.sleep(30); os._exit(0)\ntime.sleep(5)"
    assert _bare(bomb)[0] == {'over': f'it started more than {MAX_PROCS} processes'}
    time.sleep(0.3)
    assert _host_procs(m) == []
    hog = "import os, time\nfor i in range(3):\n    if os.fork() == 0: break\nblock = b'x' * (200 << 20)\ntime.sleep(5)"
    assert f'over {MEMORY_MB} MB' in _bare(hog)[0]['over']

def test_without_namespaces_killing_the_supervisor_is_a_limit_protections_admit(monkeypatch):
    "Same user, it may kill its supervisor, and its `setsid` grandchild lives on: so the fallback claims no deadline for the tree"
    import funccall.toolsets._sandbox as sandbox
    m = _marker()
    code = DOUBLE_FORK.format(name=NAME_ME.format(m=m)) + "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(5)"
    try:
        with pytest.raises(sandbox.SandboxError): _bare(code, timeout=2)  # (its supervisor dead, the deadline ends the call)
        assert _host_procs(m), 'the grandchild was ended after all: the README and protections() can claim the deadline here'
    finally:
        for p in _host_procs(m): os.kill(p, 9)
    real = sandbox._works
    monkeypatch.setattr(sandbox, '_works', lambda **kw: False if kw['namespaces'] else real(**kw))  # a machine without them
    claims = sandbox._probe(False)
    assert not claims['namespaces'] and not claims['deadline_kills_tree'] and not claims['application_memory_hidden']
