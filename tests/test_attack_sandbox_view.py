"""What a sandboxed program sees of the host (`code_tool(isolate=True)`, `python_isolated`): a filesystem of its own
(the runtime read-only at neutral paths, its folder, a `/dev` and `/proc` of its own, what the developer lends), host
ids that own nothing when the application is root, and no host path in any spelling. Each test is a hostile program
(`test_attack_sandbox.run`); where this machine can't give it a filesystem of its own, `protections()` says so and the
test is skipped with that reason. The tests run as root in CI: the application's secrets are root's there."""
import base64, json, os, sys, uuid

import pytest

from funccall import Toolbox
from funccall.core._package import PACKAGE_DIR
from funccall.toolsets import _sandbox
from funccall.toolsets._rootfs import layout
from funccall.toolsets._sandbox import WORK, protections
from funccall.toolsets.codemode import code_tool
from funccall.toolsets.pytool import python_isolated
from test_attack_sandbox import HAVE, MODES, _needs, ping, run

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='the sandbox is tested on Linux, where its protections are claimed')

READ_ALL = """
import os
got = []
for p in {paths!r}:
    try:
        if os.path.isdir(p): got.append(sorted(os.listdir(p)))
        else:
            with open(p, 'rb') as f: got.append(f.read(200).decode(errors='replace'))
    except OSError as e: got.append(type(e).__name__)
import json
json.dumps(got)
"""

def _app_folder(tmp_path, monkeypatch):
    "An application's folder, as an attacker finds one: its `.env` (0600), the working folder, on `sys.path`"
    app = tmp_path / 'app'
    app.mkdir()
    (app / '.env').write_text('OPENAI_API_KEY=sk-the-apps-own-key\n')
    (app / '.env').chmod(0o600)
    monkeypatch.chdir(app)
    monkeypatch.syspath_prepend(str(app))
    return app

@pytest.mark.parametrize('mode', MODES)
def test_the_applications_secrets_are_out_of_reach(mode, tmp_path, monkeypatch):
    "As root: the app's `.env` (in its folder, by absolute path), `/etc/shadow`, `/root`, the home: none reads, none is listed"
    _needs('own_filesystem')
    app = _app_folder(tmp_path, monkeypatch)
    repo = os.path.dirname(PACKAGE_DIR)  # funccall's own folder's parent: here the application's checkout
    paths = [str(app / '.env'), str(app), '/etc/shadow', '/etc/passwd', '/root', os.path.expanduser('~'), repo,
             os.path.join(repo, 'README.md'), '/proc/1/root/etc/shadow']
    paths += [p for p in (sys.prefix, os.path.realpath(sys.base_prefix)) if not p.startswith('/usr')]  # (a system Python's is seen)
    got = json.loads(run(mode, READ_ALL.format(paths=paths)))
    assert len(got) == len(paths) and all(v in ('FileNotFoundError', 'PermissionError') for v in got), got
    assert 'sk-the-apps-own-key' not in json.dumps(got)

@pytest.mark.parametrize('mode', MODES)
def test_an_application_kept_inside_usr_is_covered(mode, monkeypatch):
    "`WORKDIR /usr/src/app`: the system's `/usr` is in view, the application's folder in it is not (its `.env` readable by all)"
    _needs('own_filesystem')
    if not os.access('/usr/src', os.W_OK): pytest.skip('/usr/src is not writable here: no application can be put there')
    app = f'/usr/src/fc-app-{uuid.uuid4().hex[:8]}'
    os.makedirs(f'{app}/pkg')
    try:
        with open(f'{app}/.env', 'w') as f: f.write('OPENAI_API_KEY=sk-the-apps-own-key\n')
        os.chmod(f'{app}/.env', 0o644)  # (readable by any id: only the cover keeps it out)
        monkeypatch.chdir(app)
        monkeypatch.syspath_prepend(f'{app}/pkg')
        got = json.loads(run(mode, READ_ALL.format(paths=[f'{app}/.env', app, f'{app}/pkg', '/usr/src'])))
    finally:
        import shutil
        shutil.rmtree(app)
    assert got[0] == 'FileNotFoundError' and got[1] == [] and got[2] == 'FileNotFoundError', got
    assert 'sk-the-apps-own-key' not in json.dumps(got)

@pytest.mark.parametrize('mode', MODES)
def test_the_root_holds_only_the_runtime_its_folder_dev_and_proc(mode):
    "What it lists of `/`: no host folder (not `/root`, `/home`, `/work`, `/etc`'s files, `/var`) but the runtime"
    _needs('own_filesystem')
    code = "import json, os\njson.dumps([sorted(os.listdir('/')), sorted(os.listdir('/etc')), os.getcwd()])"
    top, etc, cwd = json.loads(run(mode, code))
    assert set(top) <= {'usr', 'bin', 'sbin', 'lib', 'lib64', 'lib32', 'libx32', 'etc', 'python', 'packages', 'funccall', 'tmp', 'dev', 'proc'}
    assert set(etc) <= {'ld.so.cache'} and cwd == WORK

@pytest.mark.parametrize('mode', MODES)
def test_the_runtime_cant_be_written(mode):
    "The interpreter, its standard library, site-packages and funccall are bound read-only (as root's, writable files)"
    _needs('own_filesystem')
    code = """
import os, sys, json as j
out = []
for p in [sys.executable, os.__file__, j.__file__, os.path.join(os.path.dirname(os.__file__), 'evil.py'),
          *(os.path.join(d, 'evil.py') for d in sys.path if d)]:
    try: open(p, 'ab').close(); out.append(p)
    except OSError: pass
out
"""
    assert run(mode, code) == '[]'

@pytest.mark.parametrize('mode', MODES)
def test_it_runs_under_host_ids_that_own_nothing(mode):
    "As root the application's program is not: its ids on the host are `nobody`'s (a root-owned 0600 file stays shut)"
    _needs('own_filesystem')
    text = run(mode, "import json\njson.dumps(open('/proc/self/uid_map').read().split() + open('/proc/self/gid_map').read().split())")
    inner, host, _, ginner, ghost, _ = json.loads(text)
    assert inner == ginner == '1000'
    if os.getuid() == 0: assert (host, ghost) == ('65534', '65534') and HAVE['ids_own_nothing']
    else: assert host == str(os.getuid())

# --- what the developer lends -------------------------------------------------------------------------------------

def test_what_is_lent_is_visible_and_read_only_unless_asked(tmp_path):
    "`mounts=`: a folder lent read-only reads and can't be written; one lent 'rw' takes a file; nothing else of the host shows"
    _needs('own_filesystem')
    data, out = tmp_path / 'data', tmp_path / 'out'
    data.mkdir(); out.mkdir()
    (data / 'in.txt').write_text('lent')
    for d in (tmp_path, data, out): d.chmod(0o777)  # (as root the program's ids are nobody's: the folders must let others in)
    (data / 'in.txt').chmod(0o666)
    code = """
out = [open('/data/in.txt').read()]
for p in ('/data/in.txt', '/data/new.txt'):
    try: open(p, 'a').write('x'); out.append('wrote ' + p)
    except OSError as e: out.append(type(e).__name__)
open('/out/made.txt', 'w').write('made')
import os
out + [os.path.exists(%r)]
""" % str(tmp_path)
    r = code_tool(Toolbox([ping]), isolate=True, timeout=10, mounts={str(data): '/data', str(out): ('/out', 'rw')}).execute({'code': code})
    assert r.ok, r.error
    assert json.loads(r.text) == ['lent', 'OSError', 'OSError', False]
    assert (data / 'in.txt').read_text() == 'lent' and not (data / 'new.txt').exists() and (out / 'made.txt').read_text() == 'made'

FILL_LENT = """
import os
os.chdir('/out')
for level in range({deep}):  # (a chain of folders, deeper than a path may name: {deep} x 31 characters)
    os.mkdir('d' * 30); os.chdir('d' * 30)
n = 0
try:
    for i in range({files}):
        if i % 50 == 0: os.mkdir(f'f{{i}}')  # (50 files a folder)
        os.close(os.open(f'f{{i - i % 50}}/{{i}}', os.O_CREAT | os.O_WRONLY)); n += 1
except OSError as e: print(type(e).__name__, e)
f'made {{n}}'
"""

def _lend_writable(tmp_path, monkeypatch, most: int, code: str, before: int=0, timeout: float=60) -> tuple:
    "Run `code` with `tmp_path/out` lent writable, the run's bound on what it makes there `most`: (its result, files and folders now there)"
    _needs('own_filesystem')
    monkeypatch.setattr(_sandbox, 'MAX_LENT_FILES', most)
    out = tmp_path / 'out'
    out.mkdir(); out.chmod(0o777)  # (as root the program's ids are nobody's: the folder must let others in)
    for i in range(before): (out / f'old{i}').touch()
    r = code_tool(Toolbox([ping]), isolate=True, timeout=timeout, mounts={str(out): ('/out', 'rw')}).execute({'code': code})
    return (r.text if r.ok else r.error), sum(len(dirs) + len(files) for _, dirs, files, _ in os.fwalk(out)) - before  # (by descriptors: deep too)

def test_the_files_made_in_a_folder_lent_writable_are_bounded(tmp_path, monkeypatch):
    "It's the host's disk: a program that makes files there until stopped is ended soon after `MAX_LENT_FILES` (here 300)"
    text, made = _lend_writable(tmp_path, monkeypatch, 300, FILL_LENT.format(deep=0, files=5000))
    assert 'it made more than 300 files and folders in /out' in text, text[-300:]
    assert 300 < made < 5000, made  # stopped before it made them all (counted every 20 ms of the supervisor's: a few dozen more, idle)

@pytest.mark.slow  # 32,768 files on this machine's disk: half a minute here
def test_the_files_made_in_a_folder_lent_writable_are_bounded_at_the_real_bound(tmp_path, monkeypatch):
    "The same flood, the bound `MAX_LENT_FILES` as it ships"
    most = _sandbox.MAX_LENT_FILES
    text, made = _lend_writable(tmp_path, monkeypatch, most, FILL_LENT.format(deep=0, files=2 * most), timeout=300)
    assert f'it made more than {most} files and folders in /out' in text, text[-300:]
    assert most < made < most * 1.5, made

def test_files_deeper_than_a_path_may_name_are_counted(tmp_path, monkeypatch):
    "150 folders deep, past `PATH_MAX` (4096 characters): a walk by paths would see 130 folders there and nothing below"
    text, made = _lend_writable(tmp_path, monkeypatch, 300, FILL_LENT.format(deep=150, files=5000))
    assert 'it made more than 300 files and folders in /out' in text, text[-300:]
    assert made < 5000, made  # stopped before it made them all

def test_what_a_lent_folder_held_before_is_not_counted(tmp_path, monkeypatch):
    "1,000 files there before the run, 200 made by it: under the bound of 300"
    text, made = _lend_writable(tmp_path, monkeypatch, 300, FILL_LENT.format(deep=0, files=196), before=1000)
    assert text.strip('\'"') == 'made 196' and made == 200, (text[-300:], made)

@pytest.mark.parametrize('inside', ['relative', '/', '/usr/evil', '/proc/x', '/dev', '/python', '/packages/0/x', '/funccall', '/a/../etc',
                                    '/etc/passwd'])
def test_a_lent_path_that_would_hide_the_runtime_is_refused(inside, tmp_path):
    with pytest.raises(ValueError, match='mounts'): layout({str(tmp_path): inside}, package=PACKAGE_DIR)

def test_a_lent_path_that_doesnt_exist_or_has_a_bad_mode_is_refused(tmp_path):
    with pytest.raises(ValueError, match='does not exist'): layout({str(tmp_path / 'none'): '/data'})
    with pytest.raises(ValueError, match="'ro' or 'rw'"): layout({str(tmp_path): ('/data', 'rwx')})

# --- where the kernel can't give it a filesystem of its own -------------------------------------------------------

def test_without_its_own_filesystem_isolate_true_refuses_unless_accepted(monkeypatch):
    "A machine without user namespaces: `isolate=True` refuses to start; `accept=('own_filesystem',)` runs it so, by name"
    claims = {**protections(), 'namespaces': False, 'own_filesystem': False, 'read_only_files': False, 'application_memory_hidden': False}
    monkeypatch.setitem(_sandbox._probed, False, claims)
    with pytest.raises(RuntimeError, match="accept=\\('own_filesystem',\\)"): code_tool(Toolbox([ping]), isolate=True)
    assert 'filesystem of its own' in python_isolated('1 + 1')
    r = code_tool(Toolbox([ping]), isolate=True, timeout=10, accept=('own_filesystem',)).execute({'code': 'ping()'})
    assert r.ok and r.text == 'pong', r.error
    with pytest.raises(ValueError, match='what may be accepted'): code_tool(Toolbox([ping]), isolate=True, accept=('no_network',))
    with pytest.raises(ValueError, match='mounts= needs'): code_tool(Toolbox([ping]), isolate=True, accept=('own_filesystem',), mounts={'/tmp': '/data'})

# --- host paths, in any spelling -------------------------------------------------------------------------------------

LEAK = """
import base64, os, sys
seen = [repr(sys.path), repr(dict(os.environ)), sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix,
        repr(sys.argv), repr(sys.orig_argv), os.getcwd()]
seen += [str(getattr(m, '__file__', None)) for m in list(sys.modules.values())]
seen += [repr(getattr(m, '__path__', None)) for m in list(sys.modules.values())]
for p in ('/proc/self/cmdline', '/proc/self/maps', '/proc/self/environ', '/proc/1/cmdline', '/proc/1/comm', '/proc/1/environ'):
    try: seen.append(open(p, 'rb').read().decode(errors='replace'))  # (its supervisor's, the namespace's init, too)
    except OSError: pass
text = '\\n'.join(seen)
import json
json.dumps([text[::-1], base64.b64encode(text.encode()).decode()])
"""

@pytest.mark.parametrize('mode', MODES)
def test_no_host_path_in_any_spelling(mode, tmp_path, monkeypatch):
    """Its sys.path, environment, every module's `__file__`, its own and its supervisor's command lines, its memory map,
    reversed and base64: no host path in any decoding (the scrub can't help)"""
    _needs('own_filesystem')
    _app_folder(tmp_path, monkeypatch)
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join(sys.path))
    rev, b64 = json.loads(run(mode, LEAK, timeout=10))
    decoded = [rev[::-1], base64.b64decode(b64).decode()]
    stdlib = layout(package=PACKAGE_DIR).inside(os.path.dirname(os.__file__))  # (`/python/lib/python3.x`, or a system Python's own)
    assert decoded[0] == decoded[1] and stdlib in decoded[0] and "'/funccall'" in decoded[0]
    host = {os.path.dirname(PACKAGE_DIR), PACKAGE_DIR, os.path.realpath(sys.base_prefix), sys.base_prefix, sys.prefix,
            str(tmp_path), '/root', *filter(None, sys.path)}
    host = {p for p in host if layout().inside(p) != p}  # (a system Python's folders, `/usr/lib/python3.x`, are where they are)
    for text in decoded:
        found = sorted(p for p in host if p in text)
        assert not found, found

@pytest.mark.parametrize('mode', MODES)
def test_its_control_group_names_nothing_of_the_host(mode):
    "`/proc/self/cgroup` named the container's group and the run's (`funccall-<the application's pid>-<n>`): a group of its own, `/`"
    _needs('namespaces')
    groups = run(mode, "sorted({ln.split(':', 2)[2] for ln in open('/proc/self/cgroup').read().splitlines()})")
    assert groups in ("['/']", '["/"]'), groups
