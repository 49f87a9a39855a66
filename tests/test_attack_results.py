"""Rich results under attack: a model chooses the path a tool hands to `Image`/`File`/`Audio`.

Each test makes the attack and asserts its effect did not happen: no byte of a file outside the folder is sent in any
provider's form, no str is read as a path, a FIFO doesn't hang the call, /dev/zero and /proc don't grow memory.
"""
import base64, os, threading, time, tracemalloc
from pathlib import Path

import pytest

from funccall import Audio, File, Image, Toolbox, tool_results
from funccall.loop import content
from funccall.loop.content import MAX_BYTES, PathRefused

SECRET = b'\x89PNG-not-really: SECRET-KEY-5f1c0ffee'
FORMATS = ('anthropic', 'openai', 'responses', 'gemini')

@pytest.fixture
def site(tmp_path):
    "A folder of charts the tool may read, a secret beside it, and the links an attacker would plant"
    charts, secret = tmp_path / 'charts', tmp_path / 'secret.png'
    (charts / 'sub').mkdir(parents=True)
    secret.write_bytes(SECRET)
    (charts / 'sales.png').write_bytes(b'\x89PNG sales')
    (charts / 'to_secret.png').symlink_to(secret)          # a symlink inside the folder, pointing out of it
    (charts / 'to_sales.png').symlink_to(charts / 'sales.png')  # one pointing inside: allowed
    (charts / 'sub' / 'up').symlink_to(tmp_path)            # a folder link out of it
    return charts

def sent(r) -> str:
    "Everything a result puts in each provider's messages, as text"
    return ''.join(repr(tool_results([r], f)) for f in FORMATS)

def leaked(text: str) -> bool:
    return any(x in text for x in (SECRET.decode('latin-1'), base64.b64encode(SECRET).decode(), 'root:x:0:0'))

def chart_box(charts):
    def chart(name: str) -> list:
        "A chart, by file name"
        return [f'Chart {name}', Image.from_path(name, root=charts)]
    return Toolbox([chart])

ESCAPES = ['../secret.png', 'sub/../../secret.png', 'to_secret.png', 'sub/up/secret.png', '/etc/passwd',
           '/proc/self/environ', '/proc/self/cwd/../secret.png', 'sub/up/charts/../secret.png', '....//secret.png']

@pytest.mark.parametrize('name', ESCAPES)
def test_a_model_chosen_path_never_leaves_the_folder(site, name):
    r = chart_box(site).call('chart', {'name': name}, call_id='c1')
    assert r.status == 'failure' and r.failure == 'tool'
    assert 'PathRefused' in r.error and not leaked(sent(r))

def test_the_folder_still_serves_its_own_files(site):
    "The refusals above are not a tool that refuses everything"
    box = chart_box(site)
    for name in ('sales.png', 'to_sales.png', 'sub/../sales.png', str(site / 'sales.png')):
        r = box.call('chart', {'name': name}, call_id='c1')
        assert r.ok and r.value[1].data == b'\x89PNG sales', name
        assert base64.b64encode(b'\x89PNG sales').decode() in repr(tool_results([r], 'anthropic'))

def test_a_str_is_never_a_path(site):
    "A tool that passes the model's string on gets a TypeError, not the file"
    def show(path: str) -> list:
        "Show a picture"
        return [Image(path)]
    for name in (str(site.parent / 'secret.png'), '/etc/passwd', 'secret.png'):
        r = Toolbox([show]).call('show', {'path': name}, call_id='c1')
        assert r.status == 'failure' and 'TypeError' in r.error and 'from_path' in r.error and not leaked(sent(r))
    for cls in (Image, File, Audio):
        with pytest.raises(TypeError, match='never read as a file'): cls(str(site / 'sales.png'))

def test_a_data_url_is_data():
    img = Image('data:image/gif;base64,' + base64.b64encode(b'GIF89a').decode())
    assert (img.data, img.mime_type, img.path) == (b'GIF89a', 'image/gif', None)
    with pytest.raises(ValueError, match='malformed'): Image('data:image/png;base64,@@@')

def test_a_path_is_read_at_once(tmp_path):
    "The check and the read happen in the tool: a file changed or removed later changes nothing that is sent"
    f = tmp_path / 'a.png'
    f.write_bytes(b'first')
    img = Image(f)
    f.write_bytes(SECRET)
    f.unlink()
    assert img.data == b'first' and not leaked(repr(content.anthropic([img])))

def test_a_fifo_does_not_hang(site):
    fifo = site / 'pipe.png'
    os.mkfifo(fifo)
    got = []
    def attempt():
        for read in (lambda: Image.from_path('pipe.png', root=site), lambda: Image(fifo)):
            try: read()
            except PathRefused as e: got.append(str(e))
    th = threading.Thread(target=attempt, daemon=True)
    t0 = time.monotonic()
    th.start(); th.join(30)
    assert not th.is_alive(), 'opening a FIFO hung'
    assert len(got) == 2 and all('not a regular file' in e for e in got)
    print(f'FIFO refused in {time.monotonic() - t0:.3f}s')

@pytest.mark.parametrize('name', ['sub', '.', ''])
def test_a_folder_is_not_a_file(site, name):
    with pytest.raises(PathRefused, match='not a regular file'): File.from_path(name, root=site)

def _reads(monkeypatch) -> list:
    "Count the bytes `os.read` returns (it still reads: a spy, not a stand-in)"
    n, real = [], os.read
    monkeypatch.setattr(os, 'read', lambda fd, k: (b := real(fd, k), n.append(len(b)))[0])
    return n

def test_dev_zero_is_refused_with_no_byte_read(monkeypatch):
    n = _reads(monkeypatch)
    tracemalloc.start()
    try:
        with pytest.raises(PathRefused, match='not a regular file'): File(Path('/dev/zero'))
        peak = tracemalloc.get_traced_memory()[1]
    finally: tracemalloc.stop()
    assert sum(n) == 0 and peak < 1 << 20

def test_proc_file_that_claims_to_be_empty_stops_at_the_limit(monkeypatch):
    "/proc/self/environ is a regular file of size 0 that yields more: the read itself is bounded"
    n = _reads(monkeypatch)
    with pytest.raises(PathRefused, match='larger than 16 bytes'): File.from_path('/proc/self/environ', max_bytes=16)
    assert 0 < sum(n) <= 17

def test_a_huge_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    big = tmp_path / 'big.pdf'
    with open(big, 'wb') as f: f.truncate(8 * 2**30)  # sparse: 8 GiB on paper, nothing on disk
    n = _reads(monkeypatch)
    tracemalloc.start()
    try:
        for read in (lambda: File(big), lambda: File.from_path('big.pdf', root=tmp_path)):
            with pytest.raises(PathRefused, match=f'larger than {MAX_BYTES} bytes'): read()
        peak = tracemalloc.get_traced_memory()[1]
    finally: tracemalloc.stop()
    assert sum(n) == 0 and peak < 1 << 20

def test_a_file_that_grows_past_its_stat_is_cut_at_the_limit(tmp_path, monkeypatch):
    "fstat said small; the file grew before the read: still no more than limit + 1 bytes read"
    f = tmp_path / 'grow.txt'
    f.write_bytes(b'x' * 10)
    real_fstat = os.fstat
    def fstat(fd):
        st = real_fstat(fd)
        f.write_bytes(b'y' * 5000)  # grows between the check and the read
        return st
    monkeypatch.setattr(os, 'fstat', fstat)
    n = _reads(monkeypatch)
    with pytest.raises(PathRefused, match='larger than 100 bytes'): File.from_path(f, max_bytes=100)
    assert sum(n) <= 101

@pytest.mark.skipif(not content._WALK, reason='needs O_NOFOLLOW and dir_fd (POSIX)')
def test_a_folder_swapped_for_a_symlink_after_the_check_is_refused(site, monkeypatch):
    "The race: the path was checked when `sub/up` looked like a folder inside; at open it is a link out"
    monkeypatch.setattr(os.path, 'realpath', lambda p: os.path.normpath(os.path.abspath(p)))  # the check sees no link
    n = _reads(monkeypatch)
    with pytest.raises(PathRefused, match="can't read"): File.from_path('sub/up/secret.png', root=site)
    with pytest.raises(PathRefused, match="not a regular file"): File.from_path('to_secret.png', root=site)
    assert sum(n) == 0

def test_a_fifo_swapped_in_after_the_stat_is_refused_on_the_open_descriptor(site, monkeypatch):
    "The race the other way: `stat` saw a regular file, `open` meets a FIFO; opened non-blocking, fstat refuses it at once"
    os.mkfifo(site / 'late.png')
    real_stat, regular = os.stat, os.stat(site / 'sales.png')
    monkeypatch.setattr(os, 'stat', lambda p, *a, **k: regular if str(p).endswith('late.png') else real_stat(p, *a, **k))
    got = []
    def attempt():
        for read in (lambda: Image.from_path('late.png', root=site), lambda: Image(site / 'late.png')):
            try: read()
            except PathRefused as e: got.append(str(e))
    th = threading.Thread(target=attempt, daemon=True)
    th.start(); th.join(30)
    assert not th.is_alive() and len(got) == 2 and all('not a regular file' in e for e in got)

def test_mcp_content_of_a_refused_path_holds_no_secret(site):
    "The MCP server renders what the tool returned; a refused read returns nothing to render"
    box = chart_box(site)
    r = box.call('chart', {'name': 'to_secret.png'}, call_id='c1')
    assert r.status == 'failure' and not leaked(repr(r))
    ok = box.call('chart', {'name': 'sales.png'}, call_id='c2')
    items = content.mcp(content.parts(ok.value))
    assert [i['type'] for i in items] == ['text', 'image'] and base64.b64decode(items[1]['data']) == b'\x89PNG sales'

# --- second review: paths spelled to slip past, links the kernel makes, media that come back ------------------------

def test_a_long_path_is_refused_at_once(site):
    "'sub/../' 100,000 times took 3.6 s to resolve (quadratic) and was then read; no path the OS can open is that long"
    for name in ('sub/../' * 100_000 + 'sales.png', 'a/' * 100_000 + 'x', '/' + 'x' * 5000):
        t = time.process_time()
        r = chart_box(site).call('chart', {'name': name}, call_id='c1')
        assert r.status == 'failure' and 'longer than 4096' in r.error and time.process_time() - t < 0.5
        with pytest.raises(PathRefused, match='longer than'): File(Path(name))
    assert chart_box(site).call('chart', {'name': 'sub/../' * 500 + 'sales.png'}, call_id='c2').ok  # (a long path it may open)

@pytest.mark.parametrize('name', ['sales.png\0', '\0../secret.png', 'to_secret.png\0.png', '../secret.png\0sales.png'])
def test_a_nul_byte_is_refused(site, name):
    r = chart_box(site).call('chart', {'name': name}, call_id='c1')
    assert r.status == 'failure' and 'PathRefused' in r.error and not leaked(sent(r))

def test_root_spelled_any_way_confines_the_same(site, tmp_path, monkeypatch):
    "A root that is a symlink, relative, with a trailing slash, or the prefix of a sibling folder"
    (tmp_path / 'charts2').mkdir()
    (tmp_path / 'charts2' / 'x.png').write_bytes(SECRET)
    (tmp_path / 'link').symlink_to(site)
    monkeypatch.chdir(tmp_path)
    for root in (site, tmp_path / 'link', 'charts', './charts/', str(site) + '/', str(site) + '//', 'link/sub/..'):
        assert Image.from_path('sales.png', root=root).data == b'\x89PNG sales', root
        for name in ('../charts2/x.png', str(tmp_path / 'charts2' / 'x.png'), '../secret.png', '../link/../secret.png'):
            with pytest.raises(PathRefused, match='outside'): Image.from_path(name, root=root)

def test_magic_links_of_proc_are_refused(site):
    "/proc/self/fd/N and /proc/self/root lead anywhere: a link to them inside the folder, or the path itself, is refused"
    secret = site.parent / 'secret.png'
    fd = os.open(secret, os.O_RDONLY)
    try:
        (site / 'fd.png').symlink_to(f'/proc/self/fd/{fd}')
        (site / 'rootfs').symlink_to('/proc/self/root')
        names = ['fd.png', f'rootfs{secret}', f'/proc/self/fd/{fd}', f'/proc/self/root{secret}', f'/proc/{os.getpid()}/fd/{fd}',
                 f'/dev/fd/{fd}', '/proc/self/cwd/secret.png']
        for name in names:
            r = chart_box(site).call('chart', {'name': name}, call_id='c1')
            assert r.status == 'failure' and 'PathRefused' in r.error and not leaked(sent(r)), name
    finally: os.close(fd)

def test_a_pathlike_is_asked_for_its_path_once(site, tmp_path):
    "A PathLike whose `__fspath__` answers differently each time read one file and named another"
    class Flip:
        n = 0
        def __fspath__(self):
            Flip.n += 1
            return str(site / 'sales.png') if Flip.n == 1 else str(tmp_path / 'secret.png')
    img = Image(Flip())
    assert img.data == b'\x89PNG sales' and img.path == site / 'sales.png' and Flip.n == 1
    class Bytes(os.PathLike):
        def __fspath__(self): return os.fsencode(site / 'sales.png')
    assert Image(Bytes()).data == Image.from_path(Bytes(), root=site).data == b'\x89PNG sales'

def test_a_data_url_names_a_mime_type_only():
    "The type goes into every provider's request and the model's text: a 1 MB or multi-line one is refused"
    for head in ('x' * 1_000_000, 'text/html\n<script>', 'image/png;charset=x', 'image/', '/png', 'image png'):
        with pytest.raises(ValueError, match='MIME type'): Image(f'data:{head};base64,AAAA')
    assert Image('data:image/svg+xml;base64,AAAA').mime_type == 'image/svg+xml'

def _item(n_bytes: int, mime='image/png') -> dict:
    return {'type': 'image', 'data': base64.b64encode(b'\0' * n_bytes).decode(), 'mimeType': mime}

def test_an_mcp_servers_image_over_the_limit_is_left_out_undecoded():
    "A hostile server's 40 MB image was decoded whole and sent; now a line says it was left out, and nothing is decoded"
    big = _item(MAX_BYTES + 3)
    tracemalloc.start()
    try:
        ps = content.parts([big, 'caption'])
        peak = tracemalloc.get_traced_memory()[1]
    finally: tracemalloc.stop()
    assert peak < 1 << 20 and ps[1] == 'caption' and 'left out' in ps[0] and big['data'][:100] not in ps[0]
    assert content.parts(big) == ps[:1]
    ok = content.parts([_item(MAX_BYTES)])
    assert isinstance(ok[0], Image) and len(ok[0].data) == MAX_BYTES

def test_an_mcp_item_with_a_bad_mime_type_is_no_medium():
    assert content.parts([_item(3, 'text/html\n<b>')]) is None and content.parts([_item(3, 'x' * 300)]) is None

def test_a_kept_result_read_back_is_checked():
    "ToolResult.from_dict (a pending approval the application kept, maybe in a client's hands) decoded any base64 unchecked"
    from funccall import ToolResult
    def kept(**medium):
        return {'name': 'chart', 'arguments': {}, 'status': 'success',
                'value': [{'funccall_content': 'image', 'mime_type': 'image/png', 'name': None, 'data': 'AAAA', **medium}]}
    assert ToolResult.from_dict(kept()).value[0].data == b'\0\0\0'
    huge = base64.b64encode(b'\0' * (MAX_BYTES + 3)).decode()
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match='at most'): ToolResult.from_dict(kept(data=huge))
        peak = tracemalloc.get_traced_memory()[1]
    finally: tracemalloc.stop()
    assert peak < 1 << 20
    for bad in ({'data': '@@@@'}, {'data': 5}, {'mime_type': 'text/html\n'}, {'mime_type': None}, {'name': ['x']}):
        with pytest.raises(ValueError): ToolResult.from_dict(kept(**bad))

def test_repr_of_a_long_path_is_short(site):
    img = Image.from_path('sub/../' * 500 + 'sales.png', root=site)
    assert len(repr(img)) < 200
