"""A process of its own for a model's program: what `code_tool(isolate=True)` and `python_isolated` run code in.

The application starts a small supervisor (this file, run as a script with the standard library only), which starts
the program. What holds, and where (`protections()` says which hold on this machine; a run refuses to start when
one it found at the probe fails to come up):
- everywhere (POSIX): an environment holding only what the developer passes (`env=`), `BASE_ENV` (and the
  application's `LD_LIBRARY_PATH`, which some Pythons need to start); no file
  descriptor but the program's three pipes; a new, empty working folder, removed afterwards; `RLIMIT_AS` (memory per
  process), `RLIMIT_FSIZE` (size of each file written), `RLIMIT_NOFILE` (`MAX_FILES`), no core files; the parent reads
  its pipes without blocking, under the deadline, keeping at most `max_output` bytes of what it writes to stderr (the
  rest is counted, not kept), and refuses a channel message over `MAX_MESSAGE` bytes or `MAX_VALUES` values before
  reading it; what the model reads of a result goes through `for_model` (cut, scrubbed, valid UTF-8);
- on Linux with user namespaces (`namespaces`): new user, PID, mount, IPC and host-name namespaces. The supervisor is the
  namespace's init: when it ends, the kernel kills everything in it, a `setsid` grandchild too. `/proc` shows the
  program's own processes only, so the application can't be found by its pid (not through `/proc/<pid>/mem`,
  `ptrace` or `process_vm_readv`), and the program runs with no capabilities, so it can't unmount that `/proc`, nor
  make a user namespace of its own to get some (`user.max_user_namespaces` is 0 in its own); every mount is read-only
  but the working folder (a memory file system of `memory_mb` and `MAX_INODES` files at most, its files counted as the
  program's memory),
  `/proc` too (its ids are the application's user's: as root's, a writable `/proc/sys` would set the host's sysctls),
  and `/dev` holds `null`, `zero`, `full`, `random` and `urandom`
  only (`read_only_files`); no network but a loopback that is down
  (`no_network`, unless `network=True`). The supervisor counts the tree's processes, threads and memory every 20 ms
  and ends it past `max_procs`, `MAX_THREADS` or `memory_mb`; `RLIMIT_NPROC` bounds it in the kernel too except for
  root, whom the kernel exempts (`kernel_process_limit`);
- on Linux without them: the supervisor is a child subreaper (a `setsid` grandchild is its to find and end), with
  the same counting, and the program can see and, as the same user, read the application's memory, signal it, and kill
  its supervisor first (then nothing counts or ends its tree: `deadline_kills_tree` is not claimed);
- on Linux, a new session keyring (the application's keys out of reach), and a seccomp filter refusing `ptrace`,
  `process_vm_readv`, `process_vm_writev` and `pidfd_getfd`, the calls that make memory no process maps (`memfd_create`,
  System V memory and queues), `io_uring`, the key calls and `socket(AF_UNIX)` (a socket file connects on a read-only
  mount: the application's, `docker.sock`) (x86-64 and arm64), after `PR_SET_NO_NEW_PRIVS` (`seccomp`, `no_new_privs`);
- elsewhere (macOS): the process group is killed at the deadline; a program that leaves it (`setsid`) outlives it.
None of this is a virtual machine: the program reads any file the user can read (as root, root's: the application's
`.env` too), the kernel memory its pipes and sockets hold is bounded by `MAX_FILES` only, and it shares the kernel.
"""
from __future__ import annotations

import json, os, signal, sys, time

__all__ = ['BASE_ENV', 'MEMORY_MB', 'MAX_PROCS', 'MAX_THREADS', 'MAX_FILES', 'MAX_OUTPUT', 'MAX_MESSAGE', 'MAX_DEPTH', 'MAX_VALUES',
           'FILE_MB', 'MAX_INODES', 'SandboxError', 'Sandbox', 'protections', 'scrub', 'for_model', 'MAX_RESULT', 'failure', 'import_path']

BASE_ENV = {'PATH': '/usr/local/bin:/usr/bin:/bin', 'LANG': 'C.UTF-8', 'PYTHONIOENCODING': 'utf-8'}  # (+ HOME and TMPDIR: the folder)
MEMORY_MB = 512        # the program's memory: its tree's resident memory (counted), and each process's address space
MAX_PROCS = 32         # processes (and, under the kernel's limit, threads) the program's tree may hold, itself included
MAX_THREADS = 256      # threads the program's tree may hold (counted: the kernel's limit exempts root)
MAX_FILES = 256        # descriptors each of its processes may hold: bounds the kernel memory its pipes and sockets hold
MAX_OUTPUT = 100_000   # bytes of the program's stderr kept; the rest is counted and reported as cut
MAX_MESSAGE = 16 << 20 # bytes of one line the program sends up its channel: a longer one ends it
FILE_MB = 256          # size of any one file the program writes (RLIMIT_FSIZE)
MAX_INODES = 32768     # files and folders its working folder may hold: an empty one holds no block, but kernel memory
_POLL = 0.02           # seconds between the supervisor's counts of processes and memory
_CFG = 'FUNCCALL_SANDBOX'  # the supervisor's settings, in its environment
_SUPERVISED = 2        # the supervisor's own processes that count towards `RLIMIT_NPROC` in its namespace

# --- the supervisor (run as a script: standard library only) ------------------------------------------------

_NEWNS, _NEWUTS, _NEWIPC, _NEWUSER, _NEWPID, _NEWNET = 0x20000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 8, 4096, 0x4000, 1 << 18
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_SECCOMP, _PR_SET_CHILD_SUBREAPER, _PR_SET_NO_NEW_PRIVS = 1, 4, 22, 36, 38
_MOUNT_SETATTR, _AT_RECURSIVE, _AT_FDCWD, _ATTR_RDONLY, _ATTR_NOSUID = 442, 0x8000, -100, 1, 2
_INNER_ID = 1000  # the program's uid and gid inside its user namespace: not 0, so it runs with no capabilities there
# seccomp: the architecture's audit number, the numbers of the calls refused: ptrace, process_vm_readv/writev,
# pidfd_getfd (another process's memory); memfd_create, memfd_secret, shmget, msgget (memory no process's PSS shows);
# io_uring_setup (its requests make sockets past the filter); add_key, request_key, keyctl (the application's session
# keyring: its keys would read back); and the number of `socket`, refused for AF_UNIX: a socket
# file on a read-only mount still connects (the application's, a database's, `docker.sock`), and the program's ids are its user's
_SECCOMP = {'x86_64': (0xC000003E, (101, 310, 311, 438, 319, 447, 29, 68, 425, 248, 249, 250), 41),
            'aarch64': (0xC00000B7, (117, 270, 271, 438, 279, 447, 194, 186, 425, 217, 218, 219), 198)}
_KEYCTL, _JOIN_SESSION_KEYRING = {'x86_64': 250, 'aarch64': 219}, 1

def _libc():
    import ctypes
    return ctypes, ctypes.CDLL(None, use_errno=True)

def _check(r: int, what: str) -> None:
    import ctypes
    if r != 0: raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")

def _enter_namespaces(network: bool) -> None:
    """New user, mount, PID, IPC and host-name namespaces (and network, unless `network`): this process maps its ids to
    `_INNER_ID`. IPC: the host's System V shared memory and queues are out of reach (as root's, they would open)"""
    ctypes, libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        try: os.setgroups([])  # root's supplementary groups would keep their access
        except OSError: pass
    _check(libc.unshare(_NEWUSER | _NEWNS | _NEWPID | _NEWIPC | _NEWUTS | (0 if network else _NEWNET)), 'unshare')
    for f, text in (('setgroups', 'deny'), ('uid_map', f'{_INNER_ID} {uid} 1'), ('gid_map', f'{_INNER_ID} {gid} 1')):
        with open(f'/proc/self/{f}', 'w') as fh: fh.write(text)

def _mount_attr(path: str, flags: int, set_: int, clr: int) -> None:
    ctypes, libc = _libc()
    class Attr(ctypes.Structure): _fields_ = [('set', ctypes.c_uint64), ('clr', ctypes.c_uint64), ('prop', ctypes.c_uint64), ('fd', ctypes.c_uint64)]
    a = Attr(set_, clr, 0, 0)
    _check(libc.syscall(_MOUNT_SETATTR, _AT_FDCWD, path.encode(), flags, ctypes.byref(a), ctypes.sizeof(a)), f'mount_setattr {path}')

def _mounts(folder: str, mb: int) -> None:
    """As the namespace's init: mounts private, all read-only but `folder`, a memory file system of `mb` MB at most
    (what it holds counts as the program's memory, and goes with the namespace), and a read-only `/proc` of this namespace,
    in which no user namespace can be made"""
    ctypes, libc = _libc()
    _check(libc.mount(None, b'/', None, _MS_REC | _MS_PRIVATE, None), 'mount --make-rprivate /')
    opts = f'size={mb}m,nr_inodes={MAX_INODES},mode=700'.encode()
    _check(libc.mount(b'tmpfs', folder.encode(), b'tmpfs', _MS_NOSUID | _MS_NODEV, opts), 'mount the working folder')
    _devices()
    _mount_attr('/', _AT_RECURSIVE, _ATTR_RDONLY | _ATTR_NOSUID, 0)
    _mount_attr(folder, 0, 0, _ATTR_RDONLY)
    _check(libc.mount(b'proc', b'/proc', b'proc', _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None), 'mount /proc')
    # a user namespace of its own would give the program the right to mount file systems (a memory one nothing counts)
    with open('/proc/sys/user/max_user_namespaces', 'w') as f: f.write('0')
    # read-only: the program's ids are the application's user's, so as root's its `/proc/sys` would set the host's sysctls
    # (`kernel.core_pattern`: a command the host's kernel runs as root), its `/proc/sysrq-trigger` reboot the host
    _mount_attr('/proc', 0, _ATTR_RDONLY, 0)

_DEVICES = ('null', 'zero', 'full', 'random', 'urandom')  # the device files the program finds in its `/dev`: no disk, no console

def _devices() -> None:
    "A `/dev` of `_DEVICES` only: a process of root's (as the kernel sees it) could open the host's disks in the real one"
    ctypes, libc = _libc()
    fds = {nm: os.open(f'/dev/{nm}', os.O_PATH) for nm in _DEVICES if os.path.exists(f'/dev/{nm}')}
    _check(libc.mount(b'tmpfs', b'/dev', b'tmpfs', _MS_NOSUID | _MS_NOEXEC, b'mode=755,size=64k'), 'mount /dev')
    for nm, fd in fds.items():
        open(f'/dev/{nm}', 'w').close()
        _check(libc.mount(f'/proc/self/fd/{fd}'.encode(), f'/dev/{nm}'.encode(), None, _MS_BIND, None), f'bind /dev/{nm}')
        os.close(fd)
    for nm, to in (('fd', '/proc/self/fd'), ('stdin', '/proc/self/fd/0'), ('stdout', '/proc/self/fd/1'), ('stderr', '/proc/self/fd/2')):
        os.symlink(to, f'/dev/{nm}')

def _seccomp() -> None:
    "Refuse the calls of `_SECCOMP` and `socket(AF_UNIX, ...)` (EPERM), and every call of a foreign architecture"
    ctypes, libc = _libc()
    arch, nrs, sock = _SECCOMP[os.uname().machine]
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # (offsets in seccomp_data: 0 the call's number, 4 the arch, 16 its first argument)
    ops = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, deny), (ld, 0, 0, 0), (jge, 'deny', 0, 0x40000000)]  # x32 calls: refused
    ops += [(jeq, 'deny', 0, nr) for nr in nrs]
    ops += [(jeq, 0, 'allow', sock), (ld, 0, 0, 16), (jeq, 'deny', 'allow', 1)]  # socket(AF_UNIX, ...)
    ops += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    at = {'allow': len(ops) - 2, 'deny': len(ops) - 1}
    prog = [(c, at[t] - i - 1 if t in at else t, at[f] - i - 1 if f in at else f, k) for i, (c, t, f, k) in enumerate(ops)]
    class Filter(ctypes.Structure): _fields_ = [('code', ctypes.c_uint16), ('jt', ctypes.c_uint8), ('jf', ctypes.c_uint8), ('k', ctypes.c_uint32)]
    class Prog(ctypes.Structure): _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.POINTER(Filter))]
    arr = (Filter * len(prog))(*[Filter(*x) for x in prog])
    p = Prog(len(prog), arr)
    _check(libc.prctl(_PR_SET_SECCOMP, 2, ctypes.byref(p), 0, 0), 'seccomp')

def _limits(cfg: dict) -> None:
    import resource
    mb = cfg['memory_mb'] << 20
    limits = [(resource.RLIMIT_AS, mb), (resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, cfg['file_mb'] << 20),
              (resource.RLIMIT_NOFILE, MAX_FILES)]
    # the count of processes is the user's own only in a user namespace of its own: elsewhere it counts all the user's
    if cfg['namespaces']: limits.append((resource.RLIMIT_NPROC, cfg['max_procs'] + _SUPERVISED))
    for r, v in limits:
        hard = resource.getrlimit(r)[1]
        v = v if hard == resource.RLIM_INFINITY else min(v, hard)  # (a lower limit the application runs under stays)
        resource.setrlimit(r, (v, v))

def _start_program(cfg: dict, status) -> int:
    "Fork the program: its limits, its folder, no new privileges, the seccomp filter, then exec"
    pid = os.fork()
    if pid: return pid
    try:
        for s in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT): signal.signal(s, signal.SIG_DFL)
        _limits(cfg)
        os.chdir(cfg['folder'])
        if cfg['linux']:
            _, libc = _libc()
            # a new session keyring: the application's keys are no longer the program's (where seccomp isn't there to refuse keyctl)
            if (nr := _KEYCTL.get(os.uname().machine)): libc.syscall(nr, _JOIN_SESSION_KEYRING, None)
            _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 'no_new_privs')
            if cfg['seccomp']: _seccomp()
        os.execve(cfg['argv'][0], cfg['argv'], cfg['env'])
    except BaseException as e:  # noqa: BLE001 - the program didn't start: say why, for the parent
        _say(status, {'failed': f'{type(e).__name__}: {e}'})
    os._exit(127)

def _say(status, msg: dict) -> None:
    try: os.write(status, (json.dumps(msg) + '\n').encode())
    except OSError: pass

def _tree(init: bool) -> list[int]:
    "The program's processes: all but this one in its PID namespace, else this process's descendants"
    me, kids = os.getpid(), {}
    try: names = os.listdir('/proc')
    except OSError: return []
    if init: return [int(n) for n in names if n.isdigit() and int(n) != me]
    for n in names:
        if not n.isdigit(): continue
        try:
            with open(f'/proc/{n}/stat', 'rb') as f: ppid = int(f.read().rsplit(b')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError): continue
        kids.setdefault(ppid, []).append(int(n))
    out, todo = [], [me]
    while todo: todo += (k := kids.get(todo.pop(), [])); out += k
    return out

def _threads(pids: list[int]) -> int:
    "The threads `pids` hold (those still there)"
    total = 0
    for p in pids:
        try:
            with open(f'/proc/{p}/stat', 'rb') as f: total += int(f.read().rsplit(b')', 1)[1].split()[17])
        except (OSError, ValueError, IndexError): pass
    return total

def _resident(pids: list[int]) -> int:
    """Bytes of memory `pids` hold (those still there): each one's share of its pages (PSS), so forks sharing them count
    once, in memory and in swap (`madvise(MADV_PAGEOUT)` sends a process's own pages there)"""
    total = 0
    for p in pids:
        try:
            with open(f'/proc/{p}/smaps_rollup', 'rb') as f: text = f.read()
            total += sum(int(text.split(k, 1)[1].split()[0]) << 10 for k in (b'\nPss:', b'\nSwapPss:') if k in text)
        except (OSError, ValueError, IndexError): pass
    return total

def _folder_size(folder: str, init: bool) -> int:
    "Bytes the files of the working folder hold, when it is a memory file system of its own (in the namespaces)"
    if not init: return 0
    st = os.statvfs(folder)
    return (st.f_blocks - st.f_bfree) * st.f_frsize

def _end_tree(init: bool) -> None:
    "Kill every process of the program's tree"
    if init:
        try: os.kill(-1, signal.SIGKILL)  # as a PID namespace's init: every other process in it
        except OSError: pass
        return
    for _ in range(100):  # a tree that forks while it is killed: again, until none is left
        pids = _tree(False)
        if not pids: return
        for p in pids:
            try: os.kill(p, signal.SIGKILL)
            except OSError: pass
        _reap()

def _reap() -> dict:
    "Reap the ended children: pid -> wait status"
    done = {}
    while True:
        try: pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError: return done
        if pid == 0: return done
        done[pid] = st

def _supervise(cfg: dict, status, init: bool) -> None:
    "Run the program, counting its tree's processes and memory; end the tree when the program ends or goes over"
    prog, why = _start_program(cfg, status), None
    while True:
        st = _reap().get(prog)
        if st is not None: break
        if cfg['linux']:
            pids = _tree(init)
            if len(pids) > cfg['max_procs']: why = f"it started more than {cfg['max_procs']} processes"
            elif _threads(pids) > MAX_THREADS: why = f"it started more than {MAX_THREADS} threads"
            elif (rss := _resident(pids) + _folder_size(cfg['folder'], init)) > cfg['memory_mb'] << 20:
                why = f"its processes and files used {rss >> 20} MB, over {cfg['memory_mb']} MB"
            if why: break
        time.sleep(_POLL)
    _end_tree(init)
    _say(status, {'over': why} if why else {'exit': os.waitstatus_to_exitcode(st)})
    os._exit(0)

def _boot(cfg: dict) -> None:
    "The supervisor: namespaces if asked, then run the program; tells the parent on `status` what happened"
    status = cfg['status']
    os.set_inheritable(status, False)  # (the program's exec closes it)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the program may signal its supervisor: only a kill ends it (and the program with it)
    if cfg['linux']:  # the application killed, this goes too (the application's thread that started it waits in `Sandbox` till it ends)
        app = os.getppid()
        _libc()[1].prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != app: os._exit(1)
    try:
        if cfg['namespaces']: _enter_namespaces(cfg['network'])
    except OSError as e:
        _say(status, {'failed': f'namespaces: {e}'}); os._exit(1)
    if not cfg['namespaces']:
        if cfg['linux']:
            _, libc = _libc()
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        _supervise(cfg, status, False)
    if (pid := os.fork()):  # this process stays outside the PID namespace: it waits for its init, as the parent's child
        os.waitpid(pid, 0)
        os._exit(0)
    try:
        _, libc = _libc()
        # killed with the process outside (a kill of its process group reaches this one too: between the two, no gap)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        _mounts(cfg['folder'], cfg['memory_mb'])
    except OSError as e:
        _say(status, {'failed': f'mounts: {e}'}); os._exit(1)
    _supervise(cfg, status, True)

# --- what works here ------------------------------------------------------------------------------------------

_probed: dict = {}

def protections(
    network: bool=False,  # whether the program may use the network
) -> dict:                # protection -> whether it holds for a program started here (probed once, then cached)
    "What a sandboxed program can't do on this machine: each protection `Sandbox` sets up, and whether it holds here"
    if network not in _probed: _probed[network] = _probe(network)
    return dict(_probed[network])

def _probe(network: bool) -> dict:
    linux, posix = sys.platform.startswith('linux'), os.name == 'posix'
    ns = linux and _works(namespaces=True, seccomp=False, network=network)  # each apart: one failing doesn't hide the other
    seccomp = linux and os.uname().machine in _SECCOMP and _works(namespaces=ns, seccomp=True, network=network)
    # without a PID namespace the program may kill its supervisor first (same user), and leave a `setsid` grandchild behind
    return {'empty_environment': posix, 'no_inherited_files': posix, 'own_folder': posix, 'deadline_kills_tree': ns,
            'namespaces': ns, 'application_memory_hidden': ns, 'read_only_files': ns, 'no_network': ns and not network,
            'no_new_privs': linux, 'seccomp': seccomp, 'tree_memory_limit': linux and os.path.exists('/proc/self/smaps_rollup'),
            'tree_process_limit': linux,
            'kernel_process_limit': ns and os.getuid() != 0}

def _works(**kw) -> bool:
    "Whether a program starts under these settings"
    try:
        with Sandbox([sys.executable, '-S', '-c', 'import sys; sys.stderr.write("ok")'], timeout=20, _settings=kw) as sb:
            sb.finish()
            return sb.output().strip() == 'ok' and sb.ended == {'exit': 0}
    except (SandboxError, OSError):
        return False

# --- the parent's side ------------------------------------------------------------------------------------------

class SandboxError(Exception):
    "The program's process failed (`kind`: 'timeout', 'over', 'protocol', 'ended', 'start'); the message says why, without host paths"
    def __init__(self, msg: str, kind: str):
        super().__init__(msg)
        self.kind = kind

_HOST_PATH = None

def scrub(
    text: str,  # text the model will read: a traceback, an error
) -> str:       # `text` with the host's library and interpreter folders replaced by `<lib>`
    "Text for the model without the paths of this machine's Python installation, virtual environment or funccall"
    global _HOST_PATH
    if _HOST_PATH is None:
        import re, sysconfig
        top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the folder funccall/ is in
        dirs = {top, sys.prefix, sys.base_prefix, sys.exec_prefix,
                *(sysconfig.get_paths().get(k) for k in ('stdlib', 'purelib', 'platlib')), *(p for p in sys.path if p and os.path.isabs(p))}
        dirs = sorted({d.rstrip(os.sep) for d in dirs if d and len(d) > 1}, key=len, reverse=True)
        _HOST_PATH = re.compile('|'.join(re.escape(d) for d in dirs)) if dirs else re.compile(r'(?!)')
    return _HOST_PATH.sub('<lib>', text)

MAX_RESULT = 200_000  # characters of a program's result (what it printed, its value) the model reads; the rest is cut

def for_model(
    text: str,             # what a program sent as its result: anything its process could forge
    limit: int=MAX_RESULT, # characters kept; the model is told how many more were cut
) -> str:                  # `text` scrubbed (`scrub`), cut to `limit`, and valid UTF-8 (a lone surrogate becomes '?')
    "A program's result as the model may read it: no host paths, bounded, encodable"
    clean = scrub(text[:2 * limit])  # scrubbed before the cut, which could split a path (twice the limit: bounded time)
    cut = len(clean) - limit + max(0, len(text) - 2 * limit)
    text = clean[:limit] + (f'\n[... {cut} more characters cut]' if cut > 0 else '')
    return text.encode('utf-8', 'replace').decode('utf-8')

_TB = 'Traceback (most recent call last):'

def failure(
    e: SandboxError,       # what went wrong
    sb: Sandbox | None,    # the program's sandbox, if it started: the end of its stderr is shown
    timeout: float,        # its deadline, in seconds
) -> str:                  # a traceback for a timeout (as the `python` tool reports one), else what happened, for the model
    "What the model reads when a sandboxed program failed, without paths of this machine"
    if e.kind == 'timeout':
        return f'{_TB}\n  File "<code>", in <module>\n    (stopped after {timeout:g} s; its process was killed)\nTimeoutError'
    why = f"broke its channel's protocol: {e}" if e.kind == 'protocol' else str(e).removeprefix('it ')
    return scrub(f"The program's process {why}\n{sb.output_end() if sb is not None else ''}".rstrip())

def _loader_env() -> dict:
    "`LD_LIBRARY_PATH`, when the application has one: some Python builds need it to start"
    return {k: os.environ[k] for k in ('LD_LIBRARY_PATH',) if k in os.environ}

def import_path() -> dict:
    "The environment that lets a program import what this process imports: `PYTHONPATH`, this process's `sys.path`"
    return {'PYTHONPATH': os.pathsep.join(p for p in sys.path if p)}

def _nonblock(fd: int) -> None: os.set_blocking(fd, False)

class Sandbox:
    "A program run under the protections that hold here (`protections()`), talked to over its stdin/stdout as JSON lines"
    def __init__(
        self,
        argv: list,                  # the program's command line (its executable by absolute path)
        timeout: float,              # seconds it may run, from the start: then its whole tree is killed
        memory_mb: int=MEMORY_MB,    # memory of its whole tree, and address space of each process
        max_procs: int=MAX_PROCS,    # processes its tree may hold
        env: dict=None,              # its environment, over `BASE_ENV` (nothing else of the application's)
        network: bool=False,         # let it use the network (where it can be cut at all: `protections()`)
        max_output: int=MAX_OUTPUT,  # bytes of its stderr kept
        _settings: dict=None,        # (the probe's own settings)
    ):
        import shutil, subprocess, tempfile
        if os.name != 'posix': raise NotImplementedError("An isolated process needs POSIX (process groups, rlimits, non-blocking pipes)")
        self.deadline, self.timeout, self.max_output = time.monotonic() + timeout, timeout, max_output
        self.head, self.tail, self.err_seen = bytearray(), bytearray(), 0  # stderr: its first and last `max_output // 2` bytes
        self.buf, self.pending, self.ended, self.status_buf = bytearray(), b'', None, b''
        self._rmtree = shutil.rmtree
        if _settings is None:
            got = protections(network)
            _settings = {'namespaces': got['namespaces'], 'seccomp': got['seccomp'], 'network': network}
        self.folder = tempfile.mkdtemp(prefix='funccall-')
        os.chmod(self.folder, 0o700)
        linux = sys.platform.startswith('linux')
        r, w = os.pipe()
        cfg = {**_settings, 'linux': linux, 'folder': self.folder, 'memory_mb': int(memory_mb), 'max_procs': int(max_procs),
               'file_mb': FILE_MB, 'status': w, 'argv': [str(a) for a in argv],
               'env': {**BASE_ENV, **_loader_env(), 'HOME': self.folder, 'TMPDIR': self.folder, **{str(k): str(v) for k, v in (env or {}).items()}}}
        try:
            # the settings (the program's environment among them) in the supervisor's environment, which only its user may
            # read, not on its command line, which anyone may
            self.p = subprocess.Popen([sys.executable, '-I', '-S', os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(w,), close_fds=True,
                                      env={**_loader_env(), _CFG: json.dumps(cfg)}, cwd=self.folder, start_new_session=True)
        except BaseException:
            os.close(r); os.close(w); self._rmtree(self.folder, ignore_errors=True)
            raise
        os.close(w)
        self.status = r
        for fd in (self.p.stdin.fileno(), self.p.stdout.fileno(), self.p.stderr.fileno(), r): _nonblock(fd)
        self.open = {self.p.stdout.fileno(), self.p.stderr.fileno(), r}

    def __enter__(self): return self
    def __exit__(self, *exc): self.close()

    def left(self) -> float: return self.deadline - time.monotonic()

    def send(self, msg) -> None:
        "Queue `msg` for the program, as one JSON line: written as the program reads (never blocking), while `receive` waits"
        if self.pending: raise SandboxError("it sent a message before reading the answer to its last one", 'protocol')
        self.pending = (json.dumps(msg, default=str) + '\n').encode()

    def receive(self):  # the next JSON value the program sent, or None once it ended
        "The program's next message (one JSON line, parsed), waiting for it no later than the deadline"
        while True:
            if (end := self.buf.find(b'\n')) >= 0:
                line = bytes(self.buf[:end])
                del self.buf[:end + 1]
                return _parse(line)
            if self.p.stdout.fileno() not in self.open: return None
            self._pump()

    def finish(self) -> None:
        "Wait (to the deadline) for the program and its supervisor to end and say how"
        while self.open: self._pump()
        self.buf.clear()

    def _pump(self) -> None:
        "Wait for the program (no later than the deadline): take what it wrote, give it what is queued"
        import select
        if (left := self.left()) <= 0: raise SandboxError(f"stopped after {self.timeout:g} s; its processes were killed", 'timeout')
        poll = select.poll()  # (not `select`: it fails on descriptors past 1024, which an application may well hold)
        for fd in self.open: poll.register(fd, select.POLLIN)
        if self.pending: poll.register(self.p.stdin.fileno(), select.POLLOUT)
        for fd, _ in poll.poll(min(left, 1.0) * 1000):
            if fd == self.p.stdin.fileno(): self._write()
            else: self._read(fd)

    def _write(self) -> None:
        try: n = os.write(self.p.stdin.fileno(), self.pending)
        except BlockingIOError: return
        except (BrokenPipeError, OSError): self.pending = b''; return  # it stopped reading for good: what it says next tells
        self.pending = self.pending[n:]

    def _read(self, fd: int) -> None:
        try: chunk = os.read(fd, 1 << 16)
        except BlockingIOError: return
        except OSError: chunk = b''
        if not chunk: self.open.discard(fd); return self._status_end() if fd == self.status else None
        if fd == self.p.stdout.fileno():
            if len(self.buf) + len(chunk) > MAX_MESSAGE and b'\n' not in chunk:
                raise SandboxError(f"it sent a message over {MAX_MESSAGE >> 20} MB", 'protocol')
            self.buf += chunk
        elif fd == self.p.stderr.fileno():
            self.err_seen, half = self.err_seen + len(chunk), self.max_output // 2
            take = max(0, half - len(self.head))
            self.head += chunk[:take]
            self.tail += chunk[take:]
            del self.tail[:-half or len(self.tail)]
        else: self.status_buf += chunk

    def _status_end(self) -> None:
        "What the supervisor said, once it closed its side"
        for ln in self.status_buf.splitlines():
            try: msg = json.loads(ln)
            except ValueError: continue
            if isinstance(msg, dict) and ('failed' in msg or self.ended is None): self.ended = msg

    def output(self) -> str:
        "What the program wrote to stderr: its first and last `max_output // 2` bytes, saying how much was cut between"
        cut = self.err_seen - len(self.head) - len(self.tail)
        mid = f"\n[... {cut} bytes of output cut ...]\n" if cut else ''
        return self.head.decode(errors='replace') + mid + self.tail.decode(errors='replace')

    def output_end(self, n: int=2000) -> str:
        "The last `n` characters of the program's stderr, saying how much was written in all when that is more"
        text = self.output()
        if len(text) <= n and self.err_seen <= n: return text
        return f"[... the last {n} characters of {self.err_seen} bytes of output:]\n{text[-n:]}"

    def ended_error(self) -> SandboxError:
        "Why the program ended before answering, as the supervisor told it (after `finish`)"
        how = self.ended or {}
        if 'over' in how: return SandboxError(f"it was stopped: {how['over']}", 'over')
        if 'failed' in how: return SandboxError(f"it could not start: {how['failed']}", 'start')
        return SandboxError(f"it ended with exit code {how.get('exit')}", 'ended')

    def close(self) -> None:
        "Kill the supervisor (its namespace, and so every process of the program, goes with it) and remove the folder"
        try: os.killpg(self.p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError): pass
        self.p.wait()
        self._gone()
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            try: f.close()
            except OSError: pass
        try: os.close(self.status)
        except OSError: pass
        self._rmtree(self.folder, ignore_errors=True)

    def _gone(self, wait: float=0.5) -> None:
        "Wait (`wait` s at most) till no process holds the program's pipes: the kernel ends a namespace's processes after its init"
        import select
        end, poll = time.monotonic() + wait, select.poll()
        fds = {self.p.stdout.fileno(), self.p.stderr.fileno()}
        for fd in fds: poll.register(fd, select.POLLIN)
        while fds and (left := end - time.monotonic()) > 0:
            for fd, ev in poll.poll(left * 1000):
                if ev & select.POLLHUP and fd in fds: fds.discard(fd); poll.unregister(fd)
                elif ev & select.POLLIN:
                    try: os.read(fd, 1 << 16)  # (what it still wrote: discarded)
                    except OSError: pass

MAX_DEPTH = 100  # levels of nesting of a message from the program: deeper ones would overflow the stack of what reads them
MAX_VALUES = 250_000  # commas, brackets and braces in one message (its values at most): each costs the parent ~100 bytes and ~1 µs to read

def _parse(line: bytes):
    "One line of the channel as JSON, or a `SandboxError` saying what is wrong with it"
    deep = SandboxError(f"it sent a message nested over {MAX_DEPTH} levels deep", 'protocol')
    if sum(line.count(c) for c in (b',', b'[', b'{')) > MAX_VALUES:  # (counted in the text, strings too: cheap, before any is made)
        raise SandboxError(f"it sent a message of over {MAX_VALUES:,} values (commas, brackets and braces)", 'protocol')
    try: v = json.loads(line)
    except RecursionError: raise deep from None
    except ValueError as e: raise SandboxError(f"it sent a line that is not JSON ({str(e)[:100]})", 'protocol') from None
    if _depth(v) > MAX_DEPTH: raise deep
    return v

def _depth(v) -> int:
    "How deep `v` (JSON data) nests, counted without recursion"
    deepest, todo = 0, [(v, 1)] if type(v) in (dict, list) else []
    while todo:  # (only containers are queued: a message of many scalars costs one pass in C per container)
        x, d = todo.pop()
        if d > deepest: deepest = d
        todo += [(y, d + 1) for y in (x.values() if type(x) is dict else x) if type(y) in (dict, list)]
    return deepest

if __name__ == '__main__': _boot(json.loads(os.environ.pop(_CFG)))
