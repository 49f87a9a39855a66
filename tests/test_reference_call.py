"""Reference acceptance cases (seed 000): the "Python tool", "Tool Calling" and "Async function calling" examples
from toolslm's funccall docs.

Every expected value below is copied exactly from the seed (`shared/seeds/000_*.txt`), in the order the
seed shows them. The seed is the truth: never edit an expected value to make a test pass. The example
functions and classes are defined at module level exactly as in the seed, since funccall reads parameter
descriptions from their source comments (docments style) and some examples look names up in this module's
`globals()`. Async examples are run with `asyncio.run` so no pytest-asyncio is needed.
"""
import asyncio, time
from pathlib import Path

import pytest

from funccall import call_func, call_func_async, get_schema, get_schema_nm, mk_ns, python, resolve_nm
from funccall.toolsets.pytool import _run


# ---------------------------------------------------------------------------------------------------------
# Example functions and classes, as written in the seed
# ---------------------------------------------------------------------------------------------------------

class ClassA:
    "I am a class"
    def f(self, a:int): # That is `a`
        "Do a thing"
        return 1
    def __call__(self, b:str): # That is `b`
        "Do another thing"
        return 2

ca = ClassA()


def sums(a, b): return a + b


def path_test(
    a: Path,  # a type hint
    b: Path   # b type hint
):
    "Mandatory docstring"
    return a/b


async def asums(a, b): return a + b


class B:
    async def g(self, x:int): return x*2

b = B()


# ---------------------------------------------------------------------------------------------------------
# Python tool: _run
# ---------------------------------------------------------------------------------------------------------

def test_run_returns_last_expression():
    assert _run('import math;math.factorial(12)') == 479001600


def test_run_returns_printed_output():
    assert _run('print(1+1)') == '2'


# ---------------------------------------------------------------------------------------------------------
# Python tool: python
# ---------------------------------------------------------------------------------------------------------

def test_python_multiline_function_definition():
    assert python("""def factorial(n):
    if n == 0 or n == 1: return 1
    else: return n * factorial(n-1)
factorial(5)""") == 120


def test_python_timeout_returns_traceback_string():
    start = time.monotonic()
    r = python('import time; time.sleep(10)', timeout=1)
    elapsed = time.monotonic() - start
    assert elapsed < 5, f'python(..., timeout=1) took {elapsed:.1f}s'
    assert isinstance(r, str)
    assert 'TimeoutError' in r
    lines = [l for l in r.splitlines() if l.strip()]
    assert lines[-1].strip().startswith('TimeoutError'), lines[-1]


def test_python_uses_callers_globals_by_default():
    # Seed: `python("a=1")` then `a` is 1; a unique name stands in for `a` so this module's globals stay clean.
    assert '_py_glb_probe' not in globals()
    try:
        python("_py_glb_probe=1")
        assert globals()['_py_glb_probe'] == 1
        # Pass a different glb if needed
        glb = {}
        python("_py_glb_probe=3", glb=glb)
        assert (globals()['_py_glb_probe'], glb['_py_glb_probe']) == (1, 3)
    finally:
        globals().pop('_py_glb_probe', None)


def test_python_explicit_glb_leaves_callers_globals_untouched():
    glb = {}
    try:
        python("_py_glb_probe2=3", glb=glb)
        assert glb['_py_glb_probe2'] == 3
        assert '_py_glb_probe2' not in globals()
    finally:
        globals().pop('_py_glb_probe2', None)


def test_get_schema_of_python():
    assert get_schema(python) == {'name': 'python',
     'description': 'Executes python `code` with `timeout` and returning final expression (similar to IPython).',
     'input_schema': {'type': 'object',
      'properties': {'code': {'description': 'Code to execute', 'type': 'string'},
       'glb': {'description': 'Globals namespace',
        'default': None,
        'anyOf': [{'type': 'object'}, {'type': 'null'}]},
       'loc': {'description': 'Locals namespace',
        'default': None,
        'anyOf': [{'type': 'object'}, {'type': 'null'}]},
       'timeout': {'description': 'Maximum run time in seconds',
        'default': 3600,
        'type': 'integer'}},
      'required': ['code']}}


# ---------------------------------------------------------------------------------------------------------
# Tool Calling: mk_ns, resolve_nm, get_schema_nm
# ---------------------------------------------------------------------------------------------------------

def test_mk_ns():
    ns = mk_ns(sums)
    assert ns == {'sums': sums}
    assert ns['sums'](1, 2) == 3


def test_resolve_nm_bound_method():
    assert resolve_nm('ca.f', globals()) == ca.f


def test_get_schema_nm_keeps_dotted_name():
    schema = get_schema_nm('ca.f', {'ca': ca})
    assert schema['name'] == 'ca.f'
    assert schema == {'name': 'ca.f',
     'description': 'Do a thing',
     'input_schema': {'type': 'object',
      'properties': {'a': {'description': 'That is `a`', 'type': 'integer'}},
      'required': ['a']}}


# ---------------------------------------------------------------------------------------------------------
# Tool Calling: call_func
# ---------------------------------------------------------------------------------------------------------

def test_call_func_with_list_ns():
    assert call_func('sums', {'a': 1, 'b': 2}, ns=[sums]) == 3


def test_call_func_error_returned_when_not_raising():
    ns = mk_ns(sums)
    r = call_func('sums', {'a': 1, 'b': '3'}, ns=ns, raise_on_err=False)
    assert "unsupported operand type(s) for +: 'int' and 'str'" in r


def test_call_func_raises_by_default():
    ns = mk_ns(sums)
    with pytest.raises(TypeError):
        call_func('sums', {'a': 1, 'b': '3'}, ns=ns)


def test_call_func_converts_str_to_path():
    assert call_func('path_test', {'a': '/home', 'b': 'user'}, ns=[path_test]) == Path('/home/user')


def test_call_func_dotted_name_in_globals():
    assert call_func('ca.f', {'a': 5}, ns=globals()) == 1


# ---------------------------------------------------------------------------------------------------------
# Async function calling: call_func_async
# ---------------------------------------------------------------------------------------------------------

def test_mk_ns_async_function():
    ns = mk_ns(asums)
    assert ns == {'asums': asums}


def test_call_func_async_async_function():
    assert asyncio.run(call_func_async('asums', {'a': 1, 'b': 2}, ns=[asums])) == 3


def test_call_func_async_sync_function():
    assert asyncio.run(call_func_async('sums', {'a': 1, 'b': 2}, ns=[sums])) == 3


def test_call_func_async_error_returned_when_not_raising():
    r = asyncio.run(call_func_async('asums', {'a': 1, 'b': '2'}, ns=[asums], raise_on_err=False))
    assert "unsupported operand type(s) for +: 'int' and 'str'" in r


def test_call_func_async_raises_when_raise_on_err():
    with pytest.raises(TypeError):
        asyncio.run(call_func_async('asums', {'a': 1, 'b': '2'}, ns=[asums], raise_on_err=True))


def test_call_func_async_dotted_async_method_in_globals():
    res = asyncio.run(call_func_async('b.g', {'x': 5}, ns=globals()))
    assert res == 10
