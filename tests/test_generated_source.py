"""The code funccall generates (the validator's, built tools') can be read: named, in `linecache` (bounded), kept on its
object, and written to the folder `FUNCCALL_SHOW_CODE` names. Each promise of core/_source.py attacked."""
import inspect, linecache, os, re, traceback, warnings

import pytest

from funccall import ToolInputError, mk_tool
from funccall.core import _source, inverse
from funccall.core._jsonschema import compile_schema
from funccall.core._source import KEPT, SHOW_CODE

SCHEMA = {'type': 'object', 'properties': {'q': {'type': 'string'}, 'approval-policy': {'type': 'integer'}}, 'required': ['q']}

@pytest.fixture(autouse=True)
def _no_folder(monkeypatch):
    monkeypatch.delenv(SHOW_CODE, raising=False)

class _Hostile(dict):
    "A dict whose `get` fails: the generated check raises from inside its own lines"
    def get(self, *a): raise KeyError('hostile get')

def _frames(e: BaseException) -> list:
    return traceback.extract_tb(e.__traceback__)

def _hot(disp, name='search', schema=SCHEMA):
    "A built tool called often enough to run code of its own"
    fn = mk_tool(disp, {'name': name, 'description': '', 'input_schema': schema})
    for _ in range(inverse._HOT + 1): fn('x')
    return fn

def _boom(name, /, **kw):
    if kw.get('q') == 'boom': raise RuntimeError('the dispatcher failed')
    return kw

def test_a_failing_validator_check_names_its_file_and_shows_its_line():
    v = compile_schema(SCHEMA, where="Tool 'search'")
    with pytest.raises(KeyError) as e: v.is_valid(_Hostile(q='x'))
    fr = _frames(e.value)[-2]  # (the last is `get`'s own)
    assert re.fullmatch(r"<funccall validator check: Tool 'search' #\d+>", fr.filename), fr.filename
    assert fr.line == "x1 = x0.get('q', _M)"
    assert fr.filename == v.is_valid.__code__.co_filename and v.is_valid.__source__ in v.source
    assert inspect.getsource(v.is_valid).rstrip('\n') == v.is_valid.__source__  # (what `pdb`'s `list` reads too)
    assert linecache.getline(fr.filename, fr.lineno).strip() == fr.line

def test_the_validator_report_is_named_and_kept_once_made():
    v = compile_schema(SCHEMA, where="Tool 'search'")
    assert 'def is_valid(x0):' in v.source and 'out.append' not in v.source  # no report yet: a one-off refusal makes none
    for _ in range(2): v.problems({'q': 1})
    assert re.fullmatch(r"<funccall validator report: Tool 'search' #\d+>", v._report.__code__.co_filename)
    assert v._report.__source__ in v.source and 'out.append' in v.source

def test_a_failing_built_tool_call_names_the_tool_and_shows_its_line():
    first = mk_tool(_boom, {'name': 'search', 'description': '', 'input_schema': SCHEMA})
    with pytest.raises(RuntimeError) as e: first('boom')
    names = [fr.filename for fr in _frames(e.value)]
    entry = next(fr for fr in _frames(e.value) if fr.filename.startswith('<funccall tool entry'))
    assert re.fullmatch(r'<funccall tool entry \(2 parameters\) #\d+>', entry.filename) and entry.line == 'return _slow_args(extra, a0, a1)', names
    hot = _hot(_boom)
    with pytest.raises(RuntimeError) as e: hot('boom')
    fr = next(fr for fr in _frames(e.value) if fr.filename.startswith('<funccall tool '))
    assert re.fullmatch(r"<funccall tool 'search' #\d+>", fr.filename) and fr.name == 'search'
    assert fr.line == 'return _disp(_name, _K0=a0)'
    # its source, as it runs in this tool: which parameter and property each `a0`... is
    assert hot.__source__ == ''.join(linecache.getlines(fr.filename))
    assert "#   a1 (_K1, _P1): parameter 'approval_policy', property 'approval-policy'" in hot.__source__

def test_the_show_code_folder_gets_every_source_compiled_under_its_real_path(tmp_path, monkeypatch):
    folder = tmp_path / 'made' / 'here'  # made when missing
    monkeypatch.setenv(SHOW_CODE, str(folder))
    v = compile_schema(SCHEMA, where="Tool 'search'")
    v.is_valid({'q': 'x'})
    hot = _hot(_boom)
    for f in (v.is_valid, hot):
        path = f.__code__.co_filename
        assert os.path.dirname(path) == str(folder) and open(path).read() == f.__source__
    with pytest.raises(RuntimeError) as e: hot('boom')
    fr = next(fr for fr in _frames(e.value) if fr.filename.startswith(str(folder)))
    assert fr.line == 'return _disp(_name, _K0=a0)'  # read from the file, as a debugger does
    assert all(re.fullmatch(r'funccall_\d+_\d+_[A-Za-z0-9_-]*\.py', p.name) for p in folder.iterdir())

def test_nothing_is_written_when_the_variable_is_unset(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    v = compile_schema(SCHEMA, where="Tool 'search'")
    v.is_valid({'q': 'x'})
    for _ in range(2): v.problems({'q': 1})
    _hot(_boom)
    assert list(tmp_path.iterdir()) == []
    assert v.is_valid.__code__.co_filename.startswith('<funccall ')

HOSTILE = ['../../escaped', '/etc/passwd', '..', 'a\x00b', 'x' * 10_000, '..\\..\\win', 'line\nbreak>', 'é/ü', '<>', '']

def test_a_hostile_tool_name_cannot_escape_the_folder_or_break_the_write(tmp_path, monkeypatch):
    folder, outside = tmp_path / 'code', set(tmp_path.iterdir())
    monkeypatch.setenv(SHOW_CODE, str(folder))
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # (a failed write would warn)
        for nm in HOSTILE:
            fn = _hot(_boom, nm)
            assert fn('x') == {'q': 'x'}
            for _ in range(2):  # refused twice: the validator's check and its report are generated too
                with pytest.raises(ToolInputError): fn(5)
    files = list(folder.iterdir())
    assert len(files) >= 3 * len(HOSTILE) and set(tmp_path.iterdir()) == outside | {folder}
    for p in files:
        assert p.parent == folder and len(p.name) < 100 and re.fullmatch(r'[A-Za-z0-9_.-]+', p.name), p.name
        compile(p.read_text(), str(p), 'exec')  # written whole

def test_a_hostile_name_in_memory_is_one_short_line_that_compiles():
    for nm in HOSTILE:
        name = _source.source_name(f'tool {nm!r}', 'x = 1\n')
        assert name.startswith('<funccall tool ') and name.endswith('>') and name.count('>') == 1, name
        assert len(name) < 120 and '\n' not in name and '\x00' not in name
        assert linecache.getline(name, 1) == 'x = 1\n'
        compile('x = 1\n', name, 'exec')

def test_an_unwritable_folder_warns_and_keeps_the_code_in_memory(tmp_path, monkeypatch):
    (blocked := tmp_path / 'a-file').write_text('')
    monkeypatch.setenv(SHOW_CODE, str(blocked))
    with pytest.warns(RuntimeWarning, match=SHOW_CODE):
        v = compile_schema({'type': 'integer'})
        assert v.is_valid(3) and not v.is_valid('3')
    assert v.is_valid.__code__.co_filename.startswith('<funccall validator check')

def test_linecache_holds_at_most_kept_generated_sources_and_checkcache_keeps_them():
    def ours() -> list:  # (the shared templates have a bound of their own: see the test below)
        return [k for k in linecache.cache if k.startswith('<funccall ') and not k.startswith('<funccall tool entry')]
    made = []
    for i in range(KEPT + 200):  # each a validator of its own, each generating its check
        v = compile_schema({'type': 'object', 'properties': {f'p{i}': {'type': 'integer'}}})
        v.is_valid({})
        made.append(v.is_valid.__code__.co_filename)
    assert len(ours()) <= KEPT
    assert made[0] not in linecache.cache and made[-1] in linecache.cache  # the oldest dropped, the newest kept
    linecache.checkcache()
    assert made[-1] in linecache.cache and len(ours()) <= KEPT
    v = compile_schema({'type': 'object', 'properties': {'p0': {'type': 'integer'}}})  # a dropped one's function still works
    assert v.is_valid({'p0': 1}) and not v.is_valid({'p0': 'x'})

def test_the_entry_code_every_tool_runs_keeps_its_lines_through_a_flood_of_other_sources():
    "Templates are kept apart: KEPT newer sources (each tool's own code, validators) don't push them out"
    first = mk_tool(_boom, {'name': 'early', 'description': '', 'input_schema': SCHEMA})
    entry = first.__code__.co_filename
    for i in range(KEPT + 10): _source.source_name('filler', f'x = {i}\n')
    assert linecache.getline(entry, 2).strip() == 'return _slow_args(extra, a0, a1)'
    before = [k for k in linecache.cache if k.startswith('<funccall tool entry')]
    for n in range(_source.KEPT_SHARED + 20): _source.source_name(f'tool entry ({n} parameters)', 'x = 1\n', shared=True)
    assert len([k for k in linecache.cache if k.startswith('<funccall tool entry')]) <= _source.KEPT_SHARED and before

def test_pdb_lists_the_generated_line_a_call_failed_at():
    "Post-mortem in a real `pdb`: `list` shows the generated source around the failing line, `where` names the file"
    import io, pdb
    hot = _hot(_boom)
    with pytest.raises(RuntimeError) as e: hot('boom')
    tb = e.value.__traceback__
    while tb.tb_next is not None and not tb.tb_frame.f_code.co_filename.startswith("<funccall tool 'search'"): tb = tb.tb_next
    out = io.StringIO()
    dbg = pdb.Pdb(stdin=io.StringIO('list\nwhere\nquit\n'), stdout=out, nosigint=True)
    dbg.use_rawinput = False
    dbg.reset()
    dbg.interaction(None, tb)
    shown = out.getvalue()
    assert "return _disp(_name, _K0=a0)" in shown and '->' in shown and "<funccall tool 'search' #" in shown, shown

def test_generated_code_is_funccalls_own_and_only_it(tmp_path, monkeypatch):
    "Tracebacks a model reads drop funccall's frames: generated ones too, wherever they were written; never a user's file"
    from funccall.core._package import is_own
    assert is_own('<funccall tool entry (1 parameters) #3>') and not is_own('<code>') and not is_own('<funccall>')
    shown = str(tmp_path / 'funccall_1_2_tool.py')
    monkeypatch.delenv('FUNCCALL_SHOW_CODE', raising=False)
    assert not is_own(shown)  # the folder is funccall's only while the variable names it
    monkeypatch.setenv('FUNCCALL_SHOW_CODE', str(tmp_path))
    assert is_own(shown)
    assert not is_own(str(tmp_path / 'mine.py')) and not is_own(str(tmp_path / 'sub' / 'funccall_1_2_tool.py'))

def test_a_link_planted_at_the_predictable_filename_is_never_written_through(tmp_path, monkeypatch):
    "The file's name is predictable (pid, number, name): a symlink someone put there is replaced, its target untouched"
    import itertools
    folder, victim = tmp_path / 'code', tmp_path / 'victim.txt'
    folder.mkdir(), victim.write_text('precious')
    monkeypatch.setenv(SHOW_CODE, str(folder))
    monkeypatch.setattr(_source, '_numbers', itertools.count(10**9))
    link = folder / f'funccall_{os.getpid()}_{10**9}_validator_check.py'
    link.symlink_to(victim)
    stale = folder / f'funccall_{os.getpid()}_{10**9 + 1}_validator_check.py'
    stale.write_text('old = 1\n')  # a file left by an earlier process with the same pid: replaced, as before
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert _source.source_name('validator check', 'x = 1\n') == str(link)
        assert _source.source_name('validator check', 'y = 2\n') == str(stale)
    assert victim.read_text() == 'precious'
    assert not link.is_symlink() and link.read_text() == 'x = 1\n' and stale.read_text() == 'y = 2\n'
