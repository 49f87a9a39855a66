"""Shared test helpers, plain functions: `from conftest import assert_valid_schema, examples`."""
import os, random
from types import SimpleNamespace

import pytest
from hypothesis import settings
from jsonschema import Draft202012Validator

# No example database: a property test passes or fails on what it draws this run, never on a failure some earlier run
# saved in `.hypothesis/` (which made the README's test command fail "by chance" on one machine and pass on another)
settings.register_profile('funccall', database=None)
settings.load_profile('funccall')

@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """How many worker processes pyproject's `-n auto` starts: none under `-s` (`--capture=no`), whose point is to see
    what tests print, which a worker's prints never reach; else xdist's own answer, one per core"""
    if config.option.capture == 'no': return 0


def pytest_configure(config):
    """One hash seed, drawn for this run, for the xdist workers the run starts: a set in a test's id (its repr) is then
    in the same order in every worker, which must collect the same ids"""
    if not hasattr(config, 'workerinput'): os.environ.setdefault('PYTHONHASHSEED', str(random.randrange(1, 2**32)))


_DESELECTED: list = []  # the node ids this process's collection left out (pyproject's `-m`)

def pytest_deselected(items):
    _DESELECTED.extend(i.nodeid for i in items)

def pytest_sessionfinish(session):
    """An xdist worker hands what it left out to the controller, whose summary counts it (see `pytest_testnodedown`),
    and, measured by coverage (CI), saves what it measured now"""
    if hasattr(session.config, 'workeroutput'):
        session.config.workeroutput['deselected'] = _DESELECTED
        save_coverage()

def save_coverage() -> None:
    """Write this process's coverage data now, if coverage measures it. An xdist worker must not wait for its exit to
    save: the controller SIGKILLs a worker still alive 10 s after the session ends (execnet's `Group.terminate`), and
    coverage saves at exit, after Python has joined every thread a test left running (a `concurrent.futures` worker
    busy with a slow call): such a worker's data was lost whole, now and then, and CI's total fell from 95% to 88%.
    A later save (at exit) writes the same file again, with whatever ran after this one."""
    try: from coverage import Coverage
    except ImportError: return
    if (cov := Coverage.current()) is not None: cov.save()

@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The controller's summary counts the tests the workers left out as deselected, once: every worker collects the
    whole suite and leaves out the same tests (the controller collects nothing itself)"""
    ids = getattr(node, 'workeroutput', {}).get('deselected', [])
    if ids and not _DESELECTED: node.config.hook.pytest_deselected(items=[SimpleNamespace(nodeid=i) for i in ids])


# CI runs every property test with its full number of examples on one Python, and with a share of them on the others
# (`FUNCCALL_EXAMPLES=0.2`): the same properties on every version, the long search once
_SHARE = float(os.environ.get('FUNCCALL_EXAMPLES', '1'))

def untraced_env() -> dict:
    """This process's environment without coverage's variables: a child Python started with it is not measured (CI's
    3.11 run measures every child), for a test of what the child itself imports or does under a trace function"""
    return {k: v for k, v in os.environ.items() if not k.startswith('COVERAGE')}


def examples(n: int) -> int:
    "`n` examples for a property test, times the share of them this run asks for (at least 2)"
    return max(2, round(n * _SHARE))


def _walk(node, path='#'):
    "Yield (path, dict) for every dict inside `node`"
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items(): yield from _walk(v, f'{path}/{k}')
    elif isinstance(node, list):
        for i, v in enumerate(node): yield from _walk(v, f'{path}/{i}')


def assert_valid_schema(s: dict) -> dict:
    """Check that `s` is a valid Draft 2020-12 schema, that every `$ref` points into its root `$defs`,
    and that there is no `$defs` anywhere but at the root. Returns `s`."""
    Draft202012Validator.check_schema(s)
    defs = s.get('$defs', {})
    for path, d in _walk(s):
        if '$defs' in d: assert path == '#', f'nested $defs at {path}'
        if '$ref' in d:
            ref = d['$ref']
            assert ref.startswith('#/$defs/'), f'{path}: $ref {ref!r} does not point into the root $defs'
            name = ref[len('#/$defs/'):]
            assert name in defs, f'{path}: $ref {ref!r} does not resolve; $defs has {sorted(defs)}'
    return s


def with_defs(s: dict, defs: dict) -> dict:
    "`handle_type`'s result `s` as a root schema holding the `defs` it filled"
    return {**s, '$defs': defs} if defs else dict(s)


# How many corpus tools each property touched, and which it skipped and why: printed after the run (and by each test
# with `-s`), so a property that quietly stops reaching the tools shows
_TOUCHED: dict = {}

def touched(prop: str, tool: str, outcome: str = 'checked') -> None:
    "Record that property `prop` reached corpus tool `tool` (`outcome` 'checked', or why it was skipped)"
    _touched_all(prop, outcome, [tool])

def _touched_all(prop: str, outcome: str, tools) -> None:
    _TOUCHED.setdefault(prop, {}).setdefault(outcome, set()).update(tools)

def touched_line(prop: str) -> str:
    "'prop: 1283 checked, 2 skipped (why)' for property `prop`"
    outs = _TOUCHED.get(prop, {})
    return f"{prop}: " + ', '.join(f'{len(v)} {k}' for k, v in sorted(outs.items(), key=lambda kv: kv[0] != 'checked'))

_SENT: dict = {}  # what this process's reports already carried, so each carries only what is new

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test's teardown report carries the corpus tools it touched that no report carried before: under xdist the tests
    run in worker processes, and the controller prints the summary from what their reports carried"""
    rep = (yield).get_result()
    if call.when != 'teardown': return
    new = [(p, o, sorted(ts - _SENT.get((p, o), set()))) for p, outs in _TOUCHED.items() for o, ts in outs.items()]
    new = [n for n in new if n[2]]
    for p, o, ts in new: _SENT.setdefault((p, o), set()).update(ts)
    if new: rep.user_properties.append(('touched', new))

def pytest_runtest_logreport(report):
    "Gather what each report carried (in the one process without xdist, in the controller with it)"
    for k, v in report.user_properties:
        if k == 'touched':
            for p, o, ts in v: _touched_all(p, o, ts)

def pytest_terminal_summary(terminalreporter):
    if not _TOUCHED: return
    terminalreporter.section('corpus tools each property touched')
    for prop in sorted(_TOUCHED): terminalreporter.write_line(touched_line(prop))


def all_any(tool):
    "The mutation round trips must catch: every annotation of `tool`'s built signature replaced by `Any` (in place; returns it)"
    import inspect
    from typing import Any
    sig = inspect.signature(tool)
    tool.__signature__ = sig.replace(parameters=[p.replace(annotation=Any) for p in sig.parameters.values()])
    tool.__annotations__ = {nm: Any for nm in tool.__annotations__}
    return tool
