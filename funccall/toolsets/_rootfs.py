"""What a sandboxed program's own filesystem holds (`_sandbox`'s supervisor builds it): the Python runtime, bound
read-only at neutral paths, and what the developer lends; nothing else of the host's.

- the system's folders where they are (`/usr`, `/lib`, ...: bubblewrap's `--ro-bind /usr /usr`) and `/etc/ld.so.cache`
  (plus `resolv.conf`, `hosts`, `nsswitch.conf` and `ssl` when the program may use the network);
- the interpreter's prefix at `/python` unless it is one of those (a pyenv Python lives under `/root`), the folders of
  `sys.path` packages were installed into (`_site_dirs`) each at `/packages/<n>`, funccall's own folder at `/funccall`
  unless it is in one of them. Only these: never the application's folder, nor any other folder of its `sys.path`;
- the application's own folders (its working folder, its script's, the home, its sources on `sys.path`) covered by an
  empty folder where they lie inside one of the system's (`WORKDIR /usr/src/app`);
- `lent`: `{host path: path in the sandbox}` (read-only), or `{host path: (path, 'rw')}` (writable).
The supervisor adds the working folder (`_sandbox.WORK`), a `/dev` and a `/proc` of its own.
"""
from __future__ import annotations

import os, site, sys, sysconfig
from typing import Any

__all__ = ['Layout', 'layout', 'host_env']

SYSTEM = ('/usr', '/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32')  # bound at the same paths (or linked, as on the host)
ETC = ('ld.so.cache',)                                                     # the loader's cache: libraries found as on the host
NET_ETC = ('resolv.conf', 'hosts', 'nsswitch.conf', 'ssl')                 # names and certificates, with the network
_RESERVED = ('/proc', '/dev', '/python', '/packages', '/funccall')         # the supervisor's or the runtime's

class Layout:
    """The mounts of a program's filesystem: `binds` [(host path, path inside, 'dir' | 'file', + ' rw' if writable)],
    `links` [(path, target)], `hidden` [path]: the application's folders inside a bound system folder, covered"""
    def __init__(self): self.binds, self.links, self.hidden = [], [], []

    def bind(self, host: str, inside: str, rw: bool=False) -> None:
        self.binds.append((host, inside, ('dir' if os.path.isdir(host) else 'file') + (' rw' if rw else '')))

    def inside(
        self,
        path: str,  # a host path
    ) -> str | None:  # where the program sees it, or None when it can't
        "The path inside of host `path`, through the bind that holds it (the deepest)"
        path, under = os.path.realpath(path), lambda p, top: p == top or p.startswith(top + '/')
        for host, ins, _ in sorted(self.binds, key=lambda b: len(b[0]), reverse=True):
            if under(path, host): return None if any(under(path, h) and len(h) > len(host) for h in self.hidden) else ins + path[len(host):]
        return None

    def command(
        self,
        argv: list,  # a command line naming host paths: this Python (`sys.executable`), funccall's folder
    ) -> list:       # it as the program sees it (a venv's copied interpreter: the one it was made from)
        "`argv` with each host path the layout holds written as the program sees it"
        def inside(a: str) -> str:
            if a == sys.executable: return self.inside(a) or self.inside(getattr(sys, '_base_executable', a)) or a
            return (self.inside(a) or a) if os.path.isabs(a) and os.path.exists(a) else a
        return [inside(a) for a in argv]

    def env(self) -> dict:
        "The program's `PYTHONPATH` (the site-packages as it sees them) and, for a Python that needs it, `LD_LIBRARY_PATH`"
        out = {'PYTHONPATH': os.pathsep.join(p for p in map(self.inside, _site_dirs()) if p)}
        libs = [*os.environ.get('LD_LIBRARY_PATH', '').split(os.pathsep), sysconfig.get_config_var('LIBDIR') or '']
        if (libs := [p for p in (self.inside(p) for p in libs if os.path.isabs(p)) if p]):
            out['LD_LIBRARY_PATH'] = os.pathsep.join(dict.fromkeys(libs))
        return out

def host_env() -> dict:
    "`Layout.env` for a program that sees the host's filesystem: the site-packages where they are, the application's `LD_LIBRARY_PATH`"
    return {'PYTHONPATH': os.pathsep.join(_site_dirs()), **{k: os.environ[k] for k in ('LD_LIBRARY_PATH',) if k in os.environ}}

def _site_dirs() -> list:
    """The folders of `sys.path` that hold installed packages: the interpreter's and the environment's site-packages,
    and any other that pip installed into (a `.dist-info` in it: `PYTHONPATH=/opt/deps`); never a folder of sources"""
    sites = {os.path.realpath(p) for p in [*site.getsitepackages(), sysconfig.get_paths()['purelib'], sysconfig.get_paths()['platlib']]}
    if site.ENABLE_USER_SITE: sites.add(os.path.realpath(site.getusersitepackages()))
    return list(dict.fromkeys(p for p in map(os.path.realpath, filter(None, sys.path)) if os.path.isdir(p) and (p in sites or _installed(p))))

def _app_folders() -> list:
    "The application's own folders: its working folder, its script's, the home, and the folders of sources on `sys.path`"
    main = getattr(sys.modules.get('__main__'), '__file__', None)
    found = [os.getcwd(), os.path.expanduser('~'), *([os.path.dirname(main)] if main else []),
             *(p for p in filter(None, sys.path) if os.path.isdir(p))]
    sites, stdlib = set(_site_dirs()), _stdlib()
    runtime = lambda p: p in sites or any(p == d or p.startswith(d + '/') for d in stdlib)
    return list(dict.fromkeys(p for p in map(os.path.realpath, found) if p != '/' and not runtime(p)))

def _stdlib() -> list:
    "The standard library's folders: its sources and its extension modules (`lib-dynload`)"
    dirs = [*(sysconfig.get_paths()[k] for k in ('stdlib', 'platstdlib')), sysconfig.get_config_var('DESTSHARED')]
    return [os.path.realpath(d) for d in dirs if d]

def _installed(folder: str) -> bool:
    try: return any(nm.endswith('.dist-info') for nm in os.listdir(folder))
    except OSError: return False

def layout(
    lent: dict[str, Any] | None=None,  # {host path: path inside} read-only, or {host path: (path inside, 'rw')}
    network: bool=False,   # the program may use the network: the resolver's files too
    package: str | None=None,  # funccall's folder (bound at `/funccall` unless site-packages holds it)
) -> Layout:
    "The filesystem a program gets: the runtime at neutral paths, and what is lent (`ValueError` for a path it can't lend)"
    lo = Layout()
    for d in SYSTEM:
        if os.path.islink(d): lo.links.append((d, os.readlink(d)))
        elif os.path.isdir(d): lo.bind(d, d)
    for f in (*ETC, *(NET_ETC if network else ())):
        if os.path.exists(p := f'/etc/{f}'): lo.bind(os.path.realpath(p), p)
    prefix = os.path.realpath(sys.base_prefix)
    runtime = [prefix, *_stdlib()]
    for app in _app_folders():  # (`WORKDIR /usr/src/app`: under `/usr`, and so in view, unless covered)
        if lo.inside(app) == app and app not in SYSTEM and not any(r == app or r.startswith(app + '/') for r in runtime):
            lo.hidden.append(app)
    if lo.inside(prefix) is None: lo.bind(prefix, '/python')
    for i, d in enumerate(d for d in _site_dirs() if lo.inside(d) is None): lo.bind(d, f'/packages/{i}')
    if package and lo.inside(package) is None: lo.bind(os.path.realpath(package), '/funccall')
    for host, to in (lent or {}).items():
        inside, mode = (to, 'ro') if isinstance(to, str) else tuple(to)
        _check_lent(lo, host, inside, mode)
        lo.bind(os.path.realpath(host), os.path.normpath(inside), rw=mode == 'rw')
    return lo

def _check_lent(lo: Layout, host: str, inside: str, mode: str) -> None:
    "A lent path must exist, and go where it hides nothing of the runtime, the supervisor's or another lent one's"
    if mode not in ('ro', 'rw'): raise ValueError(f"mounts: {host!r}: the mode is 'ro' or 'rw', not {mode!r}")
    if not os.path.exists(host): raise ValueError(f"mounts: {host!r} does not exist")
    if not (isinstance(inside, str) and os.path.isabs(inside)) or '..' in inside.split('/'):
        raise ValueError(f"mounts: {host!r}: its path in the sandbox must be absolute, without '..': {inside!r}")
    inside = os.path.normpath(inside)
    if inside == '/': raise ValueError(f"mounts: {host!r} can't be the sandbox's root")
    taken = [b[1] for b in lo.binds] + [lk[0] for lk in lo.links] + list(_RESERVED) + ['/etc']
    for t in taken:
        if inside == t or inside.startswith(t.rstrip('/') + '/') or t.startswith(inside + '/'):
            raise ValueError(f"mounts: {host!r} can't go at {inside!r}: it would be in or over {t!r}")
