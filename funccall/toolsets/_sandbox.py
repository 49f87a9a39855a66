"""A process of its own for a model's program: what `code_tool(isolate=True)` and `python_isolated` run code in.

The application starts a small supervisor (this file, run as a script with the standard library only), which starts
the program. What holds, and where (`protections()` says which hold on this machine; a run refuses to start when
one it found at the probe fails to come up, and refuses to start at all without `own_filesystem` unless the developer
accepts that by name: `accept=('own_filesystem',)`):
- everywhere (POSIX): an environment holding only what the developer passes (`env=`), `BASE_ENV`, `HOME` and
  `TMPDIR` (its folder), `PYTHONPATH` (the interpreter's and the environment's site-packages only, never the
  application's folder) and `LD_LIBRARY_PATH` where the Python needs it; no file descriptor but the program's three
  pipes; a new, empty working folder, removed afterwards; `RLIMIT_AS` (memory per process), `RLIMIT_FSIZE` (size of
  each file written), `RLIMIT_NOFILE` (`MAX_FILES`), no core files, 64 queued signals and no message queue (counts of the
  application's user too); the parent reads its pipes without blocking, under
  the deadline, keeping at most `max_output` bytes of what it writes to stderr (the rest is counted, not kept), and
  refuses a channel message over `MAX_MESSAGE` bytes or `MAX_VALUES` values before reading it; what the model reads of
  a result goes through `for_model` (cut, scrubbed of the host's paths as a last net, valid UTF-8);
- on Linux with user namespaces (`namespaces`): new user, PID, mount, IPC, host-name and control group namespaces. The supervisor is the
  namespace's init: when it ends, the kernel kills everything in it, a `setsid` grandchild too. `/proc` shows the
  program's own processes only, so the application can't be found by its pid (not through `/proc/<pid>/mem`,
  `ptrace` or `process_vm_readv`), and the program runs with no capabilities, so it can't unmount anything, nor
  make a user namespace of its own to get some (`user.max_user_namespaces` is 0 in its own), nor take the inotify and
  fanotify instances of the application's user (charged to it too: every count of `/proc/sys/user` is 0 in its own).
  A filesystem of its own (`own_filesystem`, `_rootfs`): a root on a memory file system, built as bubblewrap builds
  one and entered with `pivot_root`, the host's root detached, holding the system's `/usr` and `/lib` (at their paths),
  the interpreter's prefix at `/python`, its site-packages at `/packages/<n>`, funccall at `/funccall` (so `sys.path`,
  `sys.executable`, the environment and every module's `__file__` name no host path), its working folder `WORK`
  (`/tmp`: a memory file system of `memory_mb` and `MAX_INODES` files at most, its files counted as the program's
  memory), a `/dev` of `null`, `zero`, `full`, `random` and `urandom` only, a `/proc` of its own, and what the
  developer lends (`mounts=`); never the application's folder (one inside `/usr` is covered), home, `/root` or `/etc`. Every mount is read-only but
  the working folder and what is lent writable, `/proc` too (`read_only_files`). Its ids: as root's, the host's
  `nobody` (`ids_own_nothing`: a root application's files are no more its than anyone's), else the application's user's
  (whose files it doesn't see). No network but a loopback that is down (`no_network`, unless `network=True`);
- on Linux with control groups this process may make (`_cgroup`: v2, or v1's `memory` and `pids`): a group per run,
  removed after it (one a killed application left behind, at the next start): `memory_mb` (+ `_SUPERVISOR_MB` for the
  supervisor) for all the tree maps and all the kernel holds for it, socket and pipe buffers, its memory file systems
  (`kernel_memory_limit`: a process the kernel kills for it ends the tree), and `max_procs` tasks, threads included:
  a `fork` or a thread past it fails (`kernel_process_limit`, which `RLIMIT_NPROC` gives too in its user namespace,
  where its ids are no root's), and one CPU's time where the `cpu` controller is there (`kernel_cpu_limit`). Beside
  them, and where they aren't, the supervisor counts the tree's processes, threads and memory every 20 ms and ends it
  past `max_procs`, `MAX_THREADS` or `memory_mb` (`tree_process_limit`, `tree_memory_limit`);
- on Linux without namespaces (only when accepted): the supervisor is a child subreaper (a `setsid` grandchild is its
  to find and end), with the same counting, and the program sees the host's files as the application's user, can
  read the application's memory, signal it, and kill its supervisor first (then nothing counts or ends its tree:
  `deadline_kills_tree` is not claimed);
- on Linux, a new session keyring (the application's keys out of reach), and a seccomp filter refusing `ptrace`,
  `process_vm_readv`, `process_vm_writev` and `pidfd_getfd`, the calls that make memory no process maps (`memfd_create`,
  System V memory and queues), `io_uring`, the key calls, `socket` but of AF_INET and AF_INET6 (an AF_UNIX socket file
  connects on a read-only mount: the application's, `docker.sock`; netlink's replies queue where nothing counts them) and
  `socketpair(AF_UNIX, SOCK_DGRAM)` (a datagram socket sends to any address: a host daemon's abstract one, with
  `network=True`) (x86-64 and arm64), after `PR_SET_NO_NEW_PRIVS` (`seccomp`, `no_new_privs`);
- elsewhere (macOS): the process group is killed at the deadline; a program that leaves it (`setsid`) outlives it.
The application killed (a SIGKILL too, at any moment of the start-up), on Linux its run ends with it: the supervisor
holds the read end of a pipe whose write end only the application holds (`_orphaned`), which reads as ended once the
application is gone, and ends the tree when it does (checked between its counts, every 20 ms); in the namespaces the
kernel's parent-death signal kills the supervisor and its init too (`_die_with`). An application's child forked without
`exec` holds the write end till it ends: then the signal only. Its control group is removed at the next start.
None of this is a virtual machine: the program shares the kernel. What it can still read of the host: the files of the
runtime it is lent (the standard library's build settings name where the interpreter was built, a `.pyc` where its
source was, an editable install's finder and `direct_url.json` its checkout), and `/proc/self/mountinfo`, where the
kernel names the host folder each of its mounts comes from (names, not ways in). What it can still use of the host's: a
folder lent writable is the host's disk: `FILE_MB` a file, and `MAX_LENT_FILES` files and folders made there (counted
as it runs, `_over_lent`: it may make those of 20 ms of the supervisor's more, more where the folder held many files already and its walks
are spaced, at most a tenth of the supervisor's time; one the application changes meanwhile counts too), but their
bytes are not bounded in all (lend a file system of the size you allow); there it may leave symbolic links and
FIFOs for the application to trip on; with `network=True` on cgroup v1, UDP buffers no group counts (v1 counts TCP's).
"""
from __future__ import annotations

import errno, json, os, signal, sys, time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING: import re

__all__ = ['BASE_ENV', 'MEMORY_MB', 'MAX_PROCS', 'MAX_THREADS', 'MAX_FILES', 'MAX_OUTPUT', 'MAX_MESSAGE', 'MAX_DEPTH', 'MAX_VALUES',
           'FILE_MB', 'MAX_INODES', 'MAX_LENT_FILES', 'SandboxError', 'Sandbox', 'protections', 'scrub', 'for_model', 'MAX_RESULT', 'failure', 'WORK',
           'ACCEPTABLE']

BASE_ENV = {'PATH': '/usr/local/bin:/usr/bin:/bin', 'LANG': 'C.UTF-8', 'PYTHONIOENCODING': 'utf-8'}  # (+ HOME and TMPDIR: the folder)
MEMORY_MB = 512        # the program's memory: its tree's, kernel buffers included (control group), counted, and each process's address space
MAX_PROCS = 32         # processes the program's tree may hold, itself included (and threads, where the kernel bounds them: its tasks)
MAX_THREADS = 256      # threads the program's tree may hold where only the count bounds them (no namespace, no control group)
MAX_FILES = 256        # descriptors each of its processes may hold: bounds the kernel memory its pipes and sockets hold without a group
MAX_OUTPUT = 100_000   # bytes of the program's stderr kept; the rest is counted and reported as cut
MAX_MESSAGE = 16 << 20 # bytes of one line the program sends up its channel: a longer one ends it
FILE_MB = 256          # size of any one file the program writes (RLIMIT_FSIZE)
MAX_INODES = 32768     # files and folders its working folder may hold: an empty one holds no block, but kernel memory
MAX_LENT_FILES = 32768 # files and folders it may make in what is lent writable (the host's disk), counted as it runs
_POLL = 0.02           # seconds between the supervisor's counts of processes and memory
_CFG = 'FUNCCALL_SANDBOX'  # the supervisor's settings, in its environment
_SIGNALS = 64          # signals its tree may have queued at once (`RLIMIT_SIGPENDING`; POSIX timers hold one each)
_SUPERVISED = 2        # the supervisor's own processes in the run's control group (and in `RLIMIT_NPROC`'s count, its init)

# --- the supervisor (run as a script: standard library only) ------------------------------------------------
# Coverage can't follow these into the supervisor (started with -I -S, an empty environment, then a root of its own):
# the attack tests run them, and `# pragma: no cover` keeps them out of a total that can't see them

_NEWNS, _NEWCGROUP, _NEWUTS, _NEWIPC, _NEWUSER, _NEWPID, _NEWNET = 0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 8, 4096, 0x4000, 1 << 18
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_SECCOMP, _PR_SET_CHILD_SUBREAPER, _PR_SET_NO_NEW_PRIVS = 1, 4, 22, 36, 38
_MOUNT_SETATTR, _AT_RECURSIVE, _AT_FDCWD, _ATTR_RDONLY, _ATTR_NOSUID = 442, 0x8000, -100, 1, 2
_INNER_ID = 1000  # the program's uid and gid inside its user namespace: not 0, so it runs with no capabilities there
_NOBODY = 65534   # the host ids a root application's program runs under (`nobody`: by convention they own nothing)
_PIVOT_ROOT = {'x86_64': 155, 'aarch64': 41}
_MNT_DETACH = 2
WORK = '/tmp'     # the program's working folder, `HOME` and `TMPDIR`, as it sees it (with a filesystem of its own)
# seccomp: the architecture's audit number, the numbers of the calls refused: ptrace, process_vm_readv/writev,
# pidfd_getfd (another process's memory); memfd_create, memfd_secret, shmget, msgget (memory no process's PSS shows);
# io_uring_setup (its requests make sockets past the filter); add_key, request_key, keyctl (the application's session
# keyring: its keys would read back); the number of `socket`, allowed for AF_INET and AF_INET6 only: an AF_UNIX socket
# file on a read-only mount still connects (the application's, a database's, `docker.sock`), and the program's ids are its user's;
# the kernel's netlink replies queue where no control group counts them (500 MB past a 64 MB limit); other families are
# the kernel's rarest code (AF_ALG, AF_VSOCK, AF_TIPC, ...);
# and of `socketpair`, refused for AF_UNIX datagrams: one may `sendto` or `connect` any address (a host daemon's abstract one)
_SECCOMP = {'x86_64': (0xC000003E, (101, 310, 311, 438, 319, 447, 29, 68, 425, 248, 249, 250), 41, 53),
            'aarch64': (0xC00000B7, (117, 270, 271, 438, 279, 447, 194, 186, 425, 217, 218, 219), 198, 199)}
_KEYCTL, _JOIN_SESSION_KEYRING = {'x86_64': 250, 'aarch64': 219}, 1

def _libc() -> tuple[Any, Any]:  # pragma: no cover (the supervisor's): (the `ctypes` module, the C library)
    import ctypes
    return ctypes, ctypes.CDLL(None, use_errno=True)

def _check(r: int, what: str) -> None:  # pragma: no cover (the supervisor's)
    import ctypes
    if r != 0: raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")

def _enter_namespaces(network: bool, ids: tuple) -> None:  # pragma: no cover (the supervisor's)
    """New user, mount, PID, IPC, host-name and control group namespaces (and network, unless `network`), where `_INNER_ID` is host
    user and group `ids`. A helper forked first, still in the application's user namespace, writes the maps: only from
    there may root map the program to ids other than its own. IPC: the host's System V memory and queues out of reach"""
    ctypes, libc = _libc()
    if os.getuid() == 0:
        try: os.setgroups([])  # root's supplementary groups would keep their access
        except OSError: pass
    me, (r, w) = os.getpid(), os.pipe()
    if (helper := os.fork()) == 0:
        os.close(w)
        if os.read(r, 1) != b'u': os._exit(1)  # (nothing: the unshare failed)
        try:
            for f, text in (('setgroups', 'deny'), ('uid_map', f'{_INNER_ID} {ids[0]} 1'), ('gid_map', f'{_INNER_ID} {ids[1]} 1')):
                with open(f'/proc/{me}/{f}', 'w') as fh: fh.write(text)
        except OSError: os._exit(1)
        os._exit(0)
    os.close(r)
    # (control group: after it joined the run's, which becomes its `/`: the host's group and the application's pid unnamed)
    flags = _NEWUSER | _NEWNS | _NEWPID | _NEWIPC | _NEWUTS | _NEWCGROUP | (0 if network else _NEWNET)
    try: _check(libc.unshare(flags), 'unshare')
    except OSError:
        os.close(w); os.waitpid(helper, 0)
        raise
    os.write(w, b'u'); os.close(w)
    if os.waitstatus_to_exitcode(os.waitpid(helper, 0)[1]) != 0: raise OSError(1, 'the id maps could not be written')

def _mount_attr(path: str, flags: int, set_: int, clr: int) -> None:  # pragma: no cover (the supervisor's)
    import ctypes  # (the module itself: its classes are bases here)
    _, libc = _libc()
    class Attr(ctypes.Structure): _fields_ = [('set', ctypes.c_uint64), ('clr', ctypes.c_uint64), ('prop', ctypes.c_uint64), ('fd', ctypes.c_uint64)]
    a = Attr(set_, clr, 0, 0)
    _check(libc.syscall(_MOUNT_SETATTR, _AT_FDCWD, path.encode(), flags, ctypes.byref(a), ctypes.sizeof(a)), f'mount_setattr {path}')

def _mount(src, dst: str, fstype, flags: int, opts=None, what: str='') -> None:  # pragma: no cover (the supervisor's)
    _, libc = _libc()
    enc = lambda v: v.encode() if isinstance(v, str) else v
    _check(libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(opts)), f'mount {what or dst}')

def _new_root(cfg: dict) -> None:  # pragma: no cover (the supervisor's)
    """As the namespace's init: a root of its own, built on a memory file system over the (empty) host folder the way
    bubblewrap builds one: the runtime and what the developer lends bound in (from descriptors opened while this
    process could still reach them: as root's, `/root` is 0700 to any other id), the working folder (`WORK`, a memory
    file system of `memory_mb` MB and `MAX_INODES` files at most, its files counted as the program's memory), a `/dev`
    of `_DEVICES`, a `/proc` of this namespace (no user namespace can be made in it). Then `pivot_root` into it, the
    host's root detached, and every mount read-only but the working folder and what was lent writable"""
    ctypes, libc = _libc()
    binds = [(os.open(src, os.O_PATH), dst, kind) for src, dst, kind in cfg['binds']]
    devs = {nm: os.open(f'/dev/{nm}', os.O_PATH) for nm in _DEVICES if os.path.exists(f'/dev/{nm}')}
    _mount(None, '/', None, _MS_REC | _MS_PRIVATE, what='--make-rprivate /')
    own = f'uid={_INNER_ID},gid={_INNER_ID}'  # (its files made by the program's ids: a root's are no id in this namespace)
    _mount('tmpfs', cfg['folder'], 'tmpfs', _MS_NOSUID | _MS_NODEV, f'size=1m,nr_inodes=4096,mode=755,{own}', 'the new root')
    os.chdir(cfg['folder'])  # (by its path, as the application's user: into the new root, over the folder)
    # from here on the ids the program has: a root's files are reachable only through the descriptors (caps in the namespace stay)
    os.setresgid(_INNER_ID, _INNER_ID, _INNER_ID)
    os.setresuid(_INNER_ID, _INNER_ID, _INNER_ID)
    for d in ('dev', 'proc', WORK.strip('/')): os.mkdir(d)
    for link, target in cfg['links']: os.symlink(target, link.lstrip('/'))
    _mount('tmpfs', WORK.lstrip('/'), 'tmpfs', _MS_NOSUID | _MS_NODEV,
           f'size={cfg["memory_mb"]}m,nr_inodes={MAX_INODES},mode=700,{own}', 'the working folder')
    for fd, dst, kind in binds:
        at = dst.lstrip('/')
        os.makedirs(os.path.dirname(at) or '.', exist_ok=True)
        if kind.startswith('file'): open(at, 'x').close()
        else: os.makedirs(at, exist_ok=True)
        _mount(f'/proc/self/fd/{fd}', at, None, _MS_BIND | _MS_REC, what=dst)
        os.close(fd)
    for app in cfg['hidden']:  # the application's folders inside a system folder: covered by an empty one
        try: _mount('tmpfs', app.lstrip('/'), 'tmpfs', _MS_NOSUID | _MS_NODEV, 'size=4k,nr_inodes=16,mode=755', what=app)
        except OSError as e:
            if e.errno not in (errno.EACCES, errno.ENOENT): raise  # (a folder the program's ids can't reach either)
    _mount('tmpfs', 'dev', 'tmpfs', _MS_NOSUID | _MS_NOEXEC, 'mode=755,size=64k', '/dev')
    for nm, fd in devs.items():
        open(f'dev/{nm}', 'x').close()
        _mount(f'/proc/self/fd/{fd}', f'dev/{nm}', None, _MS_BIND, what=f'/dev/{nm}')
        os.close(fd)
    for nm, to in (('fd', '/proc/self/fd'), ('stdin', '/proc/self/fd/0'), ('stdout', '/proc/self/fd/1'), ('stderr', '/proc/self/fd/2')):
        os.symlink(to, f'dev/{nm}')
    _mount('proc', 'proc', 'proc', _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, what='/proc')
    _check(libc.syscall(_PIVOT_ROOT[os.uname().machine], b'.', b'.'), 'pivot_root')  # the old root now over the new one
    _check(libc.umount2(b'.', _MNT_DETACH), 'detach the host\'s root')
    os.chdir('/')
    # every count of this user namespace at 0: a user namespace of its own would give the program the right to mount file
    # systems (a memory one nothing counts); inotify and fanotify instances and watches are charged to the user who made
    # this namespace too (as root's, root's across the host: 128 instances exhausted, every root process's inotify failed)
    for nm in sorted(os.listdir('/proc/sys/user')):
        with open(f'/proc/sys/user/{nm}', 'w') as f: f.write('0')
    # read-only, `/proc` too: no sysctl of this namespace is the program's to set
    _mount_attr('/', _AT_RECURSIVE, _ATTR_RDONLY | _ATTR_NOSUID, 0)
    for _, dst, kind in [(None, WORK, 'dir rw'), *cfg['binds']]:
        if kind.endswith(' rw'): _mount_attr(dst, 0, 0, _ATTR_RDONLY)

_DEVICES = ('null', 'zero', 'full', 'random', 'urandom')  # the device files the program finds in its `/dev`: no disk, no console

def _seccomp() -> None:  # pragma: no cover (the supervisor's)
    "Refuse the calls of `_SECCOMP`, `socket` but of AF_INET and AF_INET6, `socketpair(AF_UNIX, SOCK_DGRAM)` (EPERM), a foreign architecture's"
    import ctypes  # (the module itself: its classes are bases here)
    _, libc = _libc()
    arch, nrs, sock, pair = _SECCOMP[os.uname().machine]
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    ld, jeq, jge, ret, and_ = 0x20, 0x15, 0x35, 0x06, 0x54  # (offsets in seccomp_data: 0 the call's number, 4 the arch, 16, 24 its arguments)
    ops: list[Any] = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, deny), (ld, 0, 0, 0), (jge, 'deny', 0, 0x40000000)]  # x32 calls: refused
    ops += [(jeq, 'deny', 0, nr) for nr in nrs]
    ops += [(jeq, 'socket', 0, sock), (jeq, 0, 'allow', pair), (ld, 0, 0, 24), (and_, 0, 0, 0xF), (jeq, 0, 'allow', 2),  # SOCK_DGRAM
            (ld, 0, 0, 16), (jeq, 'deny', 'allow', 1)]  # AF_UNIX
    ops += ['socket', (ld, 0, 0, 16), (jeq, 'allow', 0, 2), (jeq, 'allow', 'deny', 10)]  # AF_INET, AF_INET6: no other family
    ops += ['allow', (ret, 0, 0, allow), 'deny', (ret, 0, 0, deny)]
    at: dict[str, int]; code: list[Any]
    at, code = {}, []  # (a label names the position of the instruction after it: jumps are counted from the next one)
    for op in ops:
        if isinstance(op, str): at[op] = len(code)
        else: code.append(op)
    prog = [(c, at[t] - i - 1 if t in at else t, at[f] - i - 1 if f in at else f, k) for i, (c, t, f, k) in enumerate(code)]
    class Filter(ctypes.Structure): _fields_ = [('code', ctypes.c_uint16), ('jt', ctypes.c_uint8), ('jf', ctypes.c_uint8), ('k', ctypes.c_uint32)]
    class Prog(ctypes.Structure): _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.POINTER(Filter))]
    arr = (Filter * len(prog))(*[Filter(*x) for x in prog])
    p = Prog(len(prog), arr)
    _check(libc.prctl(_PR_SET_SECCOMP, 2, ctypes.byref(p), 0, 0), 'seccomp')

def _limits(cfg: dict) -> None:  # pragma: no cover (the supervisor's)
    import resource
    mb = cfg['memory_mb'] << 20
    # queued signals (a POSIX timer holds one) and message queues' bytes are counted per user, a user namespace's charged to
    # its maker's too: all it may queue was all the application's user may (as root's, every root process's `sigqueue` failed)
    limits = [(resource.RLIMIT_AS, mb), (resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, cfg['file_mb'] << 20),
              (resource.RLIMIT_NOFILE, MAX_FILES), (resource.RLIMIT_SIGPENDING, _SIGNALS), (resource.RLIMIT_MSGQUEUE, 0)]
    # the count of processes is the user's own only in a user namespace of its own: elsewhere it counts all the user's
    if cfg['namespaces']: limits.append((resource.RLIMIT_NPROC, cfg['max_procs'] + _SUPERVISED))
    for r, v in limits:
        hard = resource.getrlimit(r)[1]
        v = v if hard == resource.RLIM_INFINITY else min(v, hard)  # (a lower limit the application runs under stays)
        resource.setrlimit(r, (v, v))

def _start_program(cfg: dict, status) -> int:  # pragma: no cover (the supervisor's)
    "Fork the program: its limits, its folder, no new privileges, the seccomp filter, then exec"
    pid = os.fork()
    if pid: return pid
    try:
        for s in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT): signal.signal(s, signal.SIG_DFL)
        _limits(cfg)
        os.chdir(cfg['folder'])  # (`WORK`, in a filesystem of its own)
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

def _say(status, msg: dict) -> None:  # pragma: no cover (the supervisor's)
    try: os.write(status, (json.dumps(msg) + '\n').encode())
    except OSError: pass

def _tree(init: bool) -> list[int]:  # pragma: no cover (the supervisor's)
    "The program's processes: all but this one in its PID namespace, else this process's descendants"
    kids: dict[int, list[int]]
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

def _threads(pids: list[int]) -> int:  # pragma: no cover (the supervisor's)
    "The threads `pids` hold (those still there)"
    total = 0
    for p in pids:
        try:
            with open(f'/proc/{p}/stat', 'rb') as f: total += int(f.read().rsplit(b')', 1)[1].split()[17])
        except (OSError, ValueError, IndexError): pass
    return total

def _resident(pids: list[int]) -> int:  # pragma: no cover (the supervisor's)
    """Bytes of memory `pids` hold (those still there): each one's share of its pages (PSS), so forks sharing them count
    once, in memory and in swap (`madvise(MADV_PAGEOUT)` sends a process's own pages there)"""
    total = 0
    for p in pids:
        try:
            with open(f'/proc/{p}/smaps_rollup', 'rb') as f: text = f.read()
            total += sum(int(text.split(k, 1)[1].split()[0]) << 10 for k in (b'\nPss:', b'\nSwapPss:') if k in text)
        except (OSError, ValueError, IndexError): pass
    return total

def _folder_size(folder: str, init: bool) -> int:  # pragma: no cover (the supervisor's)
    "Bytes the files of the working folder hold, when it is a memory file system of its own (in the namespaces)"
    if not init: return 0
    st = os.statvfs(folder)
    return (st.f_blocks - st.f_bfree) * st.f_frsize

def _end_tree(init: bool) -> None:  # pragma: no cover (the supervisor's)
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

def _reap() -> dict:  # pragma: no cover (the supervisor's)
    "Reap the ended children: pid -> wait status"
    done: dict[int, int] = {}
    while True:
        try: pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError: return done
        if pid == 0: return done
        done[pid] = st

def _oom_kills(fd) -> int:  # pragma: no cover (the supervisor's)
    "The kernel's kills for memory in the run's control group (its `oom_kill` count), read from `fd`"
    if fd is None: return 0
    try: return sum(int(ln.split()[1]) for ln in os.pread(fd, 4096, 0).splitlines() if ln.startswith(b'oom_kill '))
    except (OSError, ValueError, IndexError): return 0

def _inodes_used(path: str) -> int | None:  # pragma: no cover (the supervisor's)
    "The files and folders of `path`'s file system in use, or None where it doesn't count them (btrfs)"
    try: st = os.statvfs(path)
    except OSError: return None
    return st.f_files - st.f_ffree if st.f_files else None

def _made_since(path: str, since: float, most: int) -> int:  # pragma: no cover (the supervisor's)
    """The files and folders under `path` made (or changed: their ctime) since `since`, counted up to `most` + 1; walked by
    descriptors, one folder open a level, so that a tree deeper than a path may name is counted too (one deeper than this
    process may hold folders open counts as over)"""
    try: top = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError: return 0
    n, stack = 0, [(top, os.scandir(top))]
    try:
        while stack and n <= most:
            fd, it = stack[-1]
            if (e := next(it, None)) is None:
                it.close(); os.close(fd); stack.pop()
                continue
            try:
                if e.stat(follow_symlinks=False).st_ctime >= since: n += 1
                if e.is_dir(follow_symlinks=False):
                    sub = os.open(e.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                    stack.append((sub, os.scandir(sub)))
            except OSError as err:
                if err.errno in (errno.EMFILE, errno.ENFILE): return most + 1
    finally:
        for fd, it in stack: it.close(); os.close(fd)
    return n

def _over_lent(lent: list, since: float, most: int) -> str | None:  # pragma: no cover (the supervisor's)
    """The folder lent writable the program made more than `most` files and folders in, if one: a walk of it (what is new
    since `since`) says. It walks when its file system's count of files in use grew by more than `most` since the last walk
    (one call: [path, that count, the time of the next walk]), and every 20 ms all the same (others' files removed
    meanwhile hide the program's from the count; some file systems, btrfs, count none), or 10 times as long as its last
    walk took (a folder lent with many files of its own: a tenth of a CPU at most)"""
    for entry in lent:
        path, base, due = entry
        used, now = _inodes_used(path), time.monotonic()
        if now < due and (used is None or base is None or used - base <= most): continue
        if (made := _made_since(path, since, most)) > most: return path
        entry[1:] = used if used is None else used - made, time.monotonic() + max(0.02, 10 * (time.monotonic() - now))
    return None

def _supervise(cfg: dict, status, init: bool) -> None:  # pragma: no cover (the supervisor's)
    "Run the program, counting its tree's processes and memory and what it makes in what is lent; end the tree when it ends or goes over"
    # (what is new there is what changed since: a file system's clock may lag a tick, 10 ms at most, behind)
    lent, since = [[p, _inodes_used(p), 0] for p in cfg['lent_rw']], time.time() - 0.01
    if lent:  # (its walk holds two descriptors a level of the tree: all this process may)
        import resource
        resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)  # pyright: ignore[reportArgumentType]
    prog, why = _start_program(cfg, status), None
    while True:
        st = _reap().get(prog)
        if st is not None: break
        if _oom_kills(cfg['oom']):  # the kernel killed one of its processes: the whole tree goes, as when counted
            why = f"its memory went over {cfg['memory_mb']} MB (the kernel's limit)"
            break
        if cfg['linux']:
            pids = _tree(init)
            if len(pids) > cfg['max_procs']: why = f"it started more than {cfg['max_procs']} processes"
            elif _threads(pids) > MAX_THREADS: why = f"it started more than {MAX_THREADS} threads"
            elif (rss := _resident(pids) + _folder_size(cfg['folder'], init)) > cfg['memory_mb'] << 20:
                why = f"its processes and files used {rss >> 20} MB, over {cfg['memory_mb']} MB"
            elif lent and (full := _over_lent(lent, since, cfg['lent_files'])):
                why = f"it made more than {cfg['lent_files']} files and folders in {full}"
            if why: break
        if _orphaned(cfg['lifeline'], _POLL):  # (its wait between counts) the application is gone: no one waits for the tree
            why = 'its application ended'
            break
    _end_tree(init)
    _say(status, {'over': why} if why else {'exit': os.waitstatus_to_exitcode(st)})  # type: ignore[arg-type]  # (no `why`: it ended)
    os._exit(0)

def _orphaned(lifeline: int, wait: float=0) -> bool:  # pragma: no cover (the supervisor's)
    """Whether the application is gone (waiting `wait` s at most): `lifeline` is the read end of a pipe whose write end only
    the application holds, never written to: the kernel closes it when the application ends, however it ends (a SIGKILL too),
    and then the pipe reads as ended for good, before or after this asks: no moment of the start-up can miss it"""
    import select
    poll = select.poll()
    poll.register(lifeline, select.POLLIN)
    return bool(poll.poll(wait * 1000))

def _die_with(lifeline: int) -> None:  # pragma: no cover (the supervisor's)
    """Be killed when the parent ends (`PR_SET_PDEATHSIG`), then end if the application already had (`_orphaned`): the
    kernel never signals for a parent gone before the call. Called again after each change of ids (the kernel clears the
    signal then) and in a forked child (which doesn't inherit it)"""
    _libc()[1].prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if _orphaned(lifeline): os._exit(1)

def _blank_command_line() -> None:  # pragma: no cover (the supervisor's)
    """Overwrite this process's command line and first environment where the kernel shows them (`/proc/<pid>/cmdline`, as
    the namespace's init its program reads it): they name the host's interpreter and this file. The memory is this
    process's own, which Python copied at its start and never reads again (what `setproctitle` writes)"""
    ctypes, _ = _libc()
    try:
        with open('/proc/self/stat', 'rb') as f: fields = f.read().rsplit(b')', 1)[1].split()
        arg_start, arg_end, env_start, env_end = (int(fields[i]) for i in (45, 46, 47, 48))  # (fields 48-51 of stat(5))
    except (OSError, ValueError, IndexError): return
    for start, end in ((arg_start, arg_end), (env_start, env_end)):
        if 0 < start < end: ctypes.memset(start, 0, end - start)
    title = b'funccall-sandbox'
    if arg_end - arg_start > len(title): ctypes.memmove(arg_start, title, len(title))

def _boot(cfg: dict) -> None:  # pragma: no cover (the supervisor's)
    "The supervisor: namespaces if asked, then run the program; tells the parent on `status` what happened"
    status = cfg['status']
    if cfg['linux']: _blank_command_line()
    for fd in (status, cfg['lifeline']): os.set_inheritable(fd, False)  # (the program's exec closes them)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the program may signal its supervisor: only a kill ends it (and the program with it)
    # The application killed, the run goes too. The lifeline (`_orphaned`) is what can't be missed: `_supervise` ends the
    # tree when it reads as ended. Beside it, in the namespaces, the kernel's parent-death signal, faster. (Not `getppid()`
    # compared to its value at the start: the application may be gone before this process reads it, its parent then init.)
    # Without namespaces none: the supervisor killed would leave the program's tree behind, where no init's end takes it
    if cfg['namespaces']: _die_with(cfg['lifeline'])
    try:  # the kernel's limits: this process and all it starts, before any of them
        for procs in cfg['cgroups']:
            with open(procs, 'w') as f: f.write(str(os.getpid()))
        cfg['oom'] = os.open(cfg['oom_events'], os.O_RDONLY) if cfg['oom_events'] else None  # (read after the host's files are gone)
    except OSError as e:
        _say(status, {'failed': f'cgroup: {e.strerror}'}); os._exit(1)
    try:
        if cfg['namespaces']:
            _enter_namespaces(cfg['network'], tuple(cfg['ids']))
            _die_with(cfg['lifeline'])  # (its ids are the new namespace's now)
    except OSError as e:
        _say(status, {'failed': f'namespaces: {e}'}); os._exit(1)
    if not cfg['namespaces']:
        if cfg['linux']:
            _, libc = _libc()
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        _supervise(cfg, status, False)
    import resource  # noqa: F401 - (imported while the host's standard library is still in view: the program's limits need it)
    if (pid := os.fork()):  # this process stays outside the PID namespace: it waits for its init, as the parent's child
        os.waitpid(pid, 0)
        os._exit(0)
    try:
        _, libc = _libc()
        # killed with the process outside (a kill of its process group reaches this one too: between the two, no gap). Its
        # parent is outside the PID namespace, so `getppid()` is 0 here: the lifeline tells whether the application is gone
        _die_with(cfg['lifeline'])
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        _new_root(cfg)
        # again: `_new_root` changed its ids, which cleared the signal (as root's, host root to `nobody`: a killed
        # application's supervisor went, and this init, the namespace's and so the program's life, stayed)
        _die_with(cfg['lifeline'])
    except OSError as e:
        _say(status, {'failed': f'mounts: {e}'}); os._exit(1)
    _supervise({**cfg, 'folder': WORK}, status, True)

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
    cgroup = linux and _cgroups() is not None and _works(namespaces=ns, seccomp=seccomp, network=network, cgroup=True)
    held = (_cgroups() or set()) if cgroup else set()
    # without a PID namespace the program may kill its supervisor first (same user), and leave a `setsid` grandchild behind
    return {'empty_environment': posix, 'no_inherited_files': posix, 'own_folder': posix, 'deadline_kills_tree': ns,
            'namespaces': ns, 'own_filesystem': ns, 'ids_own_nothing': ns and os.getuid() == 0,
            'application_memory_hidden': ns, 'read_only_files': ns, 'no_network': ns and not network,
            'no_new_privs': linux, 'seccomp': seccomp, 'tree_memory_limit': linux and os.path.exists('/proc/self/smaps_rollup'),
            'tree_process_limit': linux, 'kernel_memory_limit': 'memory' in held,
            # in its user namespace the program's ids are no root's, so `RLIMIT_NPROC` holds too
            'kernel_process_limit': 'pids' in held or ns, 'kernel_cpu_limit': 'cpu' in held}

def _cgroups() -> set | None:
    "The controllers a group of the sandbox's own can have here ('memory', 'pids', 'cpu'), or None"
    from ._cgroup import available
    found = available()
    return None if found is None else set(found['controllers'])

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

_HOST_PATH: re.Pattern[str] | None = None

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
        paths = sorted({d.rstrip(os.sep) for d in dirs if d and len(d) > 1}, key=len, reverse=True)
        _HOST_PATH = re.compile('|'.join(re.escape(d) for d in paths)) if paths else re.compile(r'(?!)')
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
    "`LD_LIBRARY_PATH`, when the application has one: some Python builds need it to start (the supervisor: the host's Python)"
    return {k: os.environ[k] for k in ('LD_LIBRARY_PATH',) if k in os.environ}

def _nonblock(fd: int) -> None: os.set_blocking(fd, False)

def _package_dir() -> str:
    from ..core._package import PACKAGE_DIR
    return PACKAGE_DIR

ACCEPTABLE = ('own_filesystem',)  # the protections a developer may accept missing, by name (`Sandbox(accept=)`, `code_tool(accept=)`)
_SUPERVISOR_MB = 32  # the supervisor's own memory, in the run's group beside the program's `memory_mb`
_swept: list = []

def _new_cgroup(memory_mb: int, max_procs: int):
    "A control group for one run, the kernel's limits set (groups left by a killed application removed first, once)"
    from ._cgroup import Cgroup, sweep
    if not _swept: _swept.append(sweep())
    return Cgroup(memory_mb + _SUPERVISOR_MB, max_procs + _SUPERVISED)

class Sandbox:
    "A program run under the protections that hold here (`protections()`), talked to over its stdin/stdout as JSON lines"
    p: Any                         # the supervisor's `subprocess.Popen`: its stdin, stdout and stderr are pipes (never None)
    ended: dict[str, Any] | None   # the program's last word (its result, or how it ended), once it came
    def __init__(
        self,
        argv: list,                  # the program's command line (its executable by absolute path)
        timeout: float,              # seconds it may run, from the start: then its whole tree is killed
        memory_mb: int=MEMORY_MB,    # memory of its whole tree, and address space of each process
        max_procs: int=MAX_PROCS,    # processes its tree may hold
        env: dict[str, str] | None=None,  # its environment, over `BASE_ENV` (nothing else of the application's)
        network: bool=False,         # let it use the network (where it can be cut at all: `protections()`)
        max_output: int=MAX_OUTPUT,  # bytes of its stderr kept
        mounts: dict[str, Any] | None=None,  # what it may see of the host: {host path: path inside} read-only, {host path: (path, 'rw')} writable
        accept: tuple=(),            # protections missing here that the developer accepts by name: ('own_filesystem',)
        _settings: dict[str, Any] | None=None,  # (the probe's own settings)
    ):
        import shutil, subprocess, tempfile
        from ._rootfs import host_env, layout
        if os.name != 'posix': raise NotImplementedError("An isolated process needs POSIX (process groups, rlimits, non-blocking pipes)")
        self.deadline, self.timeout, self.max_output = time.monotonic() + timeout, timeout, max_output
        self.head, self.tail, self.err_seen = bytearray(), bytearray(), 0  # stderr: its first and last `max_output // 2` bytes
        self.buf, self.pending, self.ended, self.status_buf = bytearray(), b'', None, b''
        self._rmtree, self.cgroup, self.memory_mb = shutil.rmtree, None, int(memory_mb)
        if set(accept) - set(ACCEPTABLE): raise ValueError(f"accept={tuple(accept)!r}: what may be accepted missing is {ACCEPTABLE!r}")
        if _settings is None:
            got = protections(network)
            if not got['own_filesystem'] and 'own_filesystem' not in accept:
                raise SandboxError("it can't have a filesystem of its own on this machine (user namespaces are needed), so it "
                                   "would read every file the application's user can: accept that by name to run it anyway", 'refused')
            _settings = {'namespaces': got['namespaces'], 'seccomp': got['seccomp'], 'network': network,
                         'cgroup': got['kernel_memory_limit']}
        if mounts and not _settings['namespaces']: raise ValueError("mounts= needs a filesystem of its own (protections()['own_filesystem'])")
        lo = layout(mounts, network, _package_dir()) if _settings['namespaces'] else None
        self.folder = tempfile.mkdtemp(prefix='funccall-')
        os.chmod(self.folder, 0o700)
        linux = sys.platform.startswith('linux')
        home = WORK if lo else self.folder
        env = {**BASE_ENV, **(lo.env() if lo else host_env()), 'HOME': home, 'TMPDIR': home, **{str(k): str(v) for k, v in (env or {}).items()}}
        argv = lo.command([str(a) for a in argv]) if lo else [str(a) for a in argv]
        try:
            if _settings.get('cgroup'): self.cgroup = _new_cgroup(self.memory_mb, int(max_procs))
        except OSError as e:
            self._rmtree(self.folder, ignore_errors=True)
            raise SandboxError(f"it could not start: its control group: {e}", 'start') from None
        r, w = os.pipe()
        # the supervisor's lifeline: the read end its; the write end only this process's (close-on-exec: no other child's),
        # never written, so that it reads as ended once this process is gone (`_orphaned`)
        self.lifeline, life = os.pipe()[::-1]
        uid, gid = (_NOBODY, _NOBODY) if os.getuid() == 0 else (os.getuid(), os.getgid())
        cfg = {**_settings, 'linux': linux, 'folder': self.folder, 'memory_mb': self.memory_mb, 'max_procs': int(max_procs),
               'file_mb': FILE_MB, 'status': w, 'lifeline': life, 'lent_files': MAX_LENT_FILES, 'argv': argv, 'env': env, 'ids': [uid, gid],
               'lent_rw': [dst for _, dst, kind in lo.binds if kind.endswith(' rw')] if lo else [],
               'binds': lo.binds if lo else [], 'links': lo.links if lo else [], 'hidden': lo.hidden if lo else [],
               'cgroups': self.cgroup.procs if self.cgroup else [],
               'oom_events': self.cgroup.events if self.cgroup else None}
        try:
            # the settings (the program's environment among them) in the supervisor's environment, which only its user may
            # read, not on its command line, which anyone may
            self.p = subprocess.Popen([sys.executable, '-I', '-S', os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(w, life), close_fds=True,
                                      env={**_loader_env(), _CFG: json.dumps(cfg)}, cwd=self.folder, start_new_session=True)
        except BaseException:
            for fd in (r, w, life, self.lifeline): os.close(fd)
            self._rmtree(self.folder, ignore_errors=True)
            if self.cgroup: self.cgroup.close()
            raise
        os.close(w); os.close(life)
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
        "Why the program ended before answering, as the supervisor told it (after `finish`), or the kernel's memory limit"
        how = self.ended or {}
        if self.cgroup and self.cgroup.oom_kills() and 'failed' not in how:
            return SandboxError(f"it was stopped: its memory went over {self.memory_mb} MB (the kernel's limit)", 'over')
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
        for fd in (self.status, self.lifeline):
            try: os.close(fd)
            except OSError: pass
        self._rmtree(self.folder, ignore_errors=True)
        if self.cgroup: self.cgroup.close()

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

if __name__ == '__main__': _boot(json.loads(os.environ.pop(_CFG)))  # pragma: no cover (the supervisor's)
