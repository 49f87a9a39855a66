"""`Tool`, `ToolResult`, `ToolGroup`, `Toolbox`, `StopRun`, `to_text`, `call_str`: the agent loop around `call_func`.

What the seeds ask for: a tool object with a canonical schema and execute/aexecute returning a success/failure
result (seed 002), hooks, middleware, confirmation, caching with a TTL and injected parameters (seed 002), tool
groups from classes and JSON-in/text-out invocation (seed 001), a tool manager with JSON/YAML definitions, call
expressions against a context and parallel calls (seed 003). A model's mistake or a tool's exception is a failure
result, never an exception; `StopRun` is the one exception that propagates.
Async tests use `asyncio.run` (no pytest-asyncio).
"""
import asyncio
import dataclasses
import datetime as dt
import inspect
import json
import threading
import time
from dataclasses import dataclass, field
from typing import List

import pydantic
import pytest
import yaml

import funccall.loop.pipeline
from funccall import (ExprError, SchemaError, SchemaWarning, StopRun, Tool, ToolGroup, ToolResult, Toolbox, call_func, call_str, get_schema, resolve_nm,
                      to_openai, to_text)

# --- tools used throughout ------------------------------------------------------------------------------

def lookup(symbol: str, limit: int = 5) -> str:
    """Look up recent prices for a ticker.

    Args:
        symbol (str): The ticker symbol.
        limit (int): How many rows to return.
    """
    return f'{symbol}:{limit}'


def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


async def adiv(a: float, b: float) -> float:
    "Divide two numbers."
    await asyncio.sleep(0)
    return a / b


def boom(x: int = 0) -> int:
    "Always fails."
    raise KeyError(f'no such key {x}')


def stop(a: int = 0, b: int = 0) -> int:
    "Stops the agent."
    raise StopRun('enough')


class Adder:
    "Adds a fixed amount."
    def __init__(self, n=10): self.n = n
    def __call__(self, a: int) -> int: return a + self.n


class AsyncDoubler:
    "Doubles, asynchronously."
    async def __call__(self, a: int) -> int: return a * 2


class Counter:
    "A function that counts its calls"
    def __init__(self, fn): self.fn, self.n = fn, 0
    def __call__(self, *a, **k):
        self.n += 1
        return self.fn(*a, **k)


def counted(fn):
    "`fn` with a call counter, keeping its name, docstring and signature (so `Tool` sees a plain function)"
    box = {'n': 0}
    if inspect.iscoroutinefunction(fn):
        async def wrapper(*a, **k):
            box['n'] += 1
            return await fn(*a, **k)
    else:
        def wrapper(*a, **k):
            box['n'] += 1
            return fn(*a, **k)
    wrapper.__name__, wrapper.__doc__, wrapper.__signature__ = fn.__name__, fn.__doc__, inspect.signature(fn)
    wrapper.__annotations__ = fn.__annotations__
    wrapper.calls = box
    return wrapper


def run(coro): return asyncio.run(coro)


@pytest.fixture
def clock(monkeypatch):
    "A fake `time.time` for cache TTLs: `clock[0] += 61` moves on a minute"
    now = [1_000_000.0]
    monkeypatch.setattr(funccall.loop.pipeline.time, 'time', lambda: now[0])
    return now


# --- Tool: what it wraps ----------------------------------------------------------------------------------

def test_tool_from_function():
    t = Tool(lookup)
    assert t.name == 'lookup'
    assert t.description.startswith('Look up recent prices for a ticker.')
    assert t.schema == get_schema(lookup, evalable=True)  # the canonical schema
    ps = t.schema['input_schema']
    assert ps['properties']['symbol'] == {'description': 'The ticker symbol.', 'type': 'string'}
    assert ps['properties']['limit']['default'] == 5 and ps['required'] == ['symbol']
    assert (t.strict, t.is_async, t.name_ok()) == (False, False, True)
    assert repr(t) == "Tool('lookup')"


def test_tool_from_bound_method():
    class Calc:
        def __init__(self): self.base = 100
        def add(self, a: int) -> int:
            "Add to the base."
            return self.base + a
    t = Tool(Calc().add)
    assert t.name == 'add' and 'self' not in t.schema['input_schema']['properties']
    assert t.execute({'a': 1}).value == 101


def test_tool_from_async_function():
    t = Tool(adiv)
    assert t.is_async and repr(t) == "Tool('adiv', async)"
    assert run(t.aexecute({'a': 1, 'b': 4})).value == 0.25
    assert t.execute({'a': 1, 'b': 4}).value == 0.25  # sync execute runs it in its own event loop


def test_tool_from_callable_object():
    t = Tool(Adder(5))
    assert not t.is_async and t.description.startswith('Adds a fixed amount.')
    assert list(t.schema['input_schema']['properties']) == ['a']
    assert t.execute({'a': 1}).value == 6 and run(t.aexecute({'a': 1})).value == 6


def test_tool_from_async_callable_object():
    t = Tool(AsyncDoubler())
    assert t.is_async
    assert t.execute({'a': 2}).value == 4 and run(t.aexecute({'a': 3})).value == 6


def test_callable_objects_get_usable_names():
    a, d = Tool(Adder()), Tool(AsyncDoubler())
    assert not a.name.startswith('_') and not d.name.startswith('_')
    assert len(Toolbox([a, d])) == 2


def test_name_and_description_can_be_given():
    t = Tool(add, name='plus', description='Sum of a and b.')
    assert (t.name, t.description, t.schema['name'], t.schema['description']) == ('plus', 'Sum of a and b.', 'plus', 'Sum of a and b.')
    assert t.execute({'a': 1, 'b': 2}).value == 3


def test_a_function_without_docstring_is_a_tool_with_a_warning():
    def nodoc(a: int): return a
    with pytest.warns(SchemaWarning, match="'test_a_function_without_docstring_is_a_tool_with_a_warning.<locals>.nodoc' has no docstring"):
        t = Tool(nodoc)
    assert t.description == '' and t.schema['input_schema']['required'] == ['a'] and t.execute({'a': '2'}).text == '2'
    assert Tool(nodoc, description='Given.').description == 'Given.'


def test_strict_flag_keeps_the_canonical_schema():
    "`strict` is a flag for rendering; the schema stays canonical, and a provider post-pass makes it strict"
    t = Tool(lookup, strict=True)
    assert t.strict is True and t.schema == Tool(lookup).schema
    rendered = to_openai(t.schema, strict=t.strict)['function']
    assert rendered['strict'] is True and rendered['parameters']['additionalProperties'] is False
    assert rendered['parameters']['required'] == ['symbol', 'limit']


def test_null_for_an_optional_argument_means_its_default():
    "Strict mode sends null for optional parameters"
    assert Tool(lookup, strict=True).execute({'symbol': 'A', 'limit': None}).value == 'A:5'


@pytest.mark.parametrize('nm,ok', [
    ('lookup', True), ('get-weather_2', True), ('A', True), ('a' * 64, True), ('a' * 65, False), ('with space', False),
    ('calc.add', False), ('ünï', False), ('a/b', False), ('a:b', False),
])
def test_name_ok(nm, ok):
    assert Tool(add, name=nm).name_ok() is ok


def test_name_ok_refuses_a_trailing_newline():
    assert Tool(add, name='add\n').name_ok() is False


# --- execute / aexecute: results -----------------------------------------------------------------------

def test_success_result():
    r = Tool(lookup).execute({'symbol': 'ACME', 'limit': 3}, call_id='call_1')
    assert isinstance(r, ToolResult)
    assert (r.name, r.arguments, r.status, r.value, r.error, r.call_id, r.cached, r.ok) == \
        ('lookup', {'symbol': 'ACME', 'limit': 3}, 'success', 'ACME:3', None, 'call_1', False, True)
    assert r.text == 'ACME:3'


@pytest.mark.parametrize('args', ['{"symbol": "ACME", "limit": 3}', ' {"symbol": "ACME", "limit": "3"} ', {'symbol': 'ACME', 'limit': '3'}])
def test_json_text_and_repairable_arguments(args):
    "Models send the JSON text, and numbers as strings: both are taken"
    assert Tool(lookup).execute(args).value == 'ACME:3'
    assert run(Tool(lookup).aexecute(args)).value == 'ACME:3'


@pytest.mark.parametrize('args', [None, '', '   ', {}, '{}'])
def test_no_arguments(args):
    def now() -> str:
        "The time."
        return 'noon'
    assert Tool(now).execute(args).value == 'noon'


MODEL_MISTAKES = [
    # (arguments, words the message must contain)
    ('{"symbol": ', 'not valid JSON'),
    ('[1, 2]', 'JSON object'),
    ('"ACME"', 'JSON object'),
    ([1, 2], 'JSON object'),
    ({}, "argument 'symbol': missing"),
    ({'symbol': 'A', 'extra': 1}, "argument 'extra': unknown"),
    ({'symbol': 'A', 'limit': 'many'}, "argument 'limit'"),
    ({'symbol': ['A']}, "argument 'symbol'"),
    ({'symbol': 'A', 'limit': 1.5}, "argument 'limit'"),
]


@pytest.mark.parametrize('args,words', MODEL_MISTAKES)
@pytest.mark.parametrize('mode', ['sync', 'async'])
def test_model_mistakes_are_failure_results(args, words, mode):
    fn = counted(lookup)
    t = Tool(fn)
    r = t.execute(args) if mode == 'sync' else run(t.aexecute(args))
    assert (r.status, r.ok, r.value) == ('failure', False, None)
    assert r.error.startswith('ToolInputError: ') and words in r.error
    assert r.text == r.error
    assert fn.calls['n'] == 0  # checked before the call
    assert isinstance(r.arguments, dict)


@pytest.mark.parametrize('mode', ['sync', 'async'])
def test_an_exception_in_the_tool_is_a_failure_result(mode):
    t = Tool(boom)
    r = t.execute({'x': 7}) if mode == 'sync' else run(t.aexecute({'x': 7}))
    assert not r.ok and r.value is None
    assert r.error == "KeyError: 'no such key 7'"  # type and message: no traceback, no file, by default
    assert isinstance(r.exception, KeyError) and r.failure == 'tool'


@pytest.mark.parametrize('mode', ['sync', 'async'])
def test_errors_traceback_shows_the_tools_own_frames(mode):
    tb = Toolbox([boom], errors='traceback')
    r = tb.call('boom', {'x': 7}) if mode == 'sync' else run(tb.acall('boom', {'x': 7}))
    assert r.error.startswith("KeyError: 'no such key 7'")
    assert 'in boom' in r.error and 'raise KeyError' in r.error  # the tool's own frame
    assert 'File "tools.py"' not in r.error and 'File "call.py"' not in r.error and '/funccall/' not in r.error  # not the library's
    assert 'in boom' not in Toolbox([boom]).call('boom', {'x': 7}).error
    with pytest.raises(ValueError, match="'message' or 'traceback'"): Toolbox([boom], errors='full')


def test_an_exception_in_an_async_tool_is_a_failure_result():
    r = run(Tool(adiv).aexecute({'a': 1, 'b': 0}))
    assert not r.ok and r.error.startswith('ZeroDivisionError')


def test_a_failure_never_raises_for_odd_values():
    class Weird(Exception):
        def __str__(self): return 'weird ' * 3
    def raises_weird() -> None:
        "Raises an odd exception."
        raise Weird()
    r = Tool(raises_weird).execute()
    assert not r.ok and 'Weird' in r.error and 'weird weird' in r.error  # the exception's name, then its message


def test_async_tool_executed_synchronously_inside_an_event_loop():
    "Run on a loop of its own in a thread of its own, as in a notebook: its value, or its failure as a result"
    async def main(): return Tool(adiv).execute({'a': 1, 'b': 2}), Tool(adiv).execute({'a': 1, 'b': 0})
    r, bad = run(main())
    assert r.ok and r.value == 0.5
    assert not bad.ok and bad.error.startswith('ZeroDivisionError')


def test_aexecute_runs_a_sync_tool_in_a_worker_thread():
    def where() -> int:
        "The thread it runs in."
        return threading.get_ident()
    async def main():
        return threading.get_ident(), (await Tool(where).aexecute()).value, (await Tool(where).aexecute(in_thread=False)).value
    loop_thread, worker, inline = run(main())
    assert worker != loop_thread and inline == loop_thread


def test_input_errors_name_the_tool_as_the_model_knows_it():
    r = Tool(add, name='plus').execute({'a': 1})
    assert "'plus'" in r.error


# --- StopRun ------------------------------------------------------------------------------------------

def _raise_stop(*a): raise StopRun('from a hook')


async def _araise_stop(*a): raise StopRun('from an async hook')


@pytest.mark.parametrize('make', [
    lambda: Tool(stop),
    lambda: Tool(add, pre_hook=_raise_stop),
    lambda: Tool(add, post_hook=_raise_stop),
    lambda: Tool(add, middleware=(_raise_stop,)),
    lambda: Tool(add, requires_confirmation=True, confirm=_raise_stop),
    lambda: Tool(add, requires_confirmation=True, confirm=_araise_stop),
], ids=['tool', 'pre_hook', 'post_hook', 'middleware', 'confirm', 'async confirm'])
@pytest.mark.parametrize('mode', ['sync', 'async'])
def test_stoprun_ends_the_call_with_stop_set(make, mode):
    t = make()
    r = t.execute({'a': 1, 'b': 2}) if mode == 'sync' else run(t.aexecute({'a': 1, 'b': 2}))
    assert r.stop and r.ok and isinstance(r.exception, StopRun)
    assert r.text in ('enough', 'from a hook', 'from an async hook')  # the call is answered with the StopRun's message


def test_stoprun_through_the_toolbox_keeps_the_other_calls():
    tb = Toolbox([stop, add])
    assert tb.call('stop', {}).stop and run(tb.acall('stop', {})).stop
    assert [r.stop for r in tb.call_expr('stop()')] == [True]
    a, b = tb.batch([('add', {'a': 1, 'b': 2}), ('stop', {})])
    assert (a.value, a.stop, b.stop) == (3, False, True)


def test_stoprun_is_an_exception():
    assert issubclass(StopRun, Exception)


# --- hooks and middleware ------------------------------------------------------------------------------

def test_pre_hook_may_return_new_arguments():
    seen = []
    def pre(tool, args):
        seen.append((tool.name, dict(args)))
        return {**args, 'a': args['a'] * 10}
    r = Tool(add, pre_hook=pre).execute({'a': 1, 'b': 2})
    assert r.value == 12 and seen == [('add', {'a': 1, 'b': 2})]


def test_pre_hook_returning_none_keeps_the_arguments():
    assert Tool(add, pre_hook=lambda t, a: None).execute({'a': 1, 'b': 2}).value == 3


def test_pre_hook_arguments_are_still_checked():
    r = Tool(add, pre_hook=lambda t, a: {**a, 'b': 'two'}).execute({'a': 1, 'b': 2})
    assert not r.ok and "argument 'b'" in r.error


def test_post_hook_may_return_a_new_value():
    seen = []
    def post(tool, args, v):
        seen.append((tool.name, args, v))
        return v * 100
    assert Tool(add, post_hook=post).execute({'a': 1, 'b': 2}).value == 300
    assert seen == [('add', {'a': 1, 'b': 2}, 3)]
    assert Tool(add, post_hook=lambda t, a, v: None).execute({'a': 1, 'b': 2}).value == 3


def test_hook_exceptions_are_failure_results():
    def bad(*a): raise RuntimeError('hook broke')
    for t in [Tool(add, pre_hook=bad), Tool(add, post_hook=bad)]:
        r = t.execute({'a': 1, 'b': 2})
        assert not r.ok and r.error.startswith('RuntimeError: hook broke')


def _logging_mw(log, tag, f=lambda v: v):
    def mw(tool, args, call_next):
        log.append(f'{tag} in')
        v = call_next()
        log.append(f'{tag} out')
        return f(v)
    return mw


def test_middleware_order_first_listed_is_outermost():
    log = []
    def tool_fn(a: int, b: int) -> int:
        "Add, logged."
        log.append('tool')
        return a + b
    pre = lambda t, a: log.append('pre')
    post = lambda t, a, v: log.append('post')
    t = Tool(tool_fn, pre_hook=pre, post_hook=post,
             middleware=(_logging_mw(log, 'outer', lambda v: v * 2), _logging_mw(log, 'inner', lambda v: v + 100)))
    assert t.execute({'a': 1, 'b': 2}).value == (3 + 100) * 2
    assert log == ['pre', 'outer in', 'inner in', 'tool', 'inner out', 'outer out', 'post']


def test_middleware_receives_the_tool_and_arguments():
    seen = []
    def mw(tool, args, call_next):
        seen.append((tool.name, args))
        return call_next()
    Tool(add, middleware=(mw,)).execute({'a': 1, 'b': 2})
    assert seen == [('add', {'a': 1, 'b': 2})]


@pytest.mark.parametrize('mode', ['sync', 'async'])
def test_middleware_can_short_circuit(mode):
    fn = counted(add)
    t = Tool(fn, middleware=(lambda tool, args, call_next: 'blocked by policy',))
    r = t.execute({'a': 1, 'b': 2}) if mode == 'sync' else run(t.aexecute({'a': 1, 'b': 2}))
    assert r.ok and r.value == 'blocked by policy' and fn.calls['n'] == 0


@pytest.mark.parametrize('mode', ['sync', 'async'])
def test_middleware_exception_is_a_failure(mode):
    def mw(tool, args, call_next): raise PermissionError('not allowed')
    t = Tool(add, middleware=(mw,))
    r = t.execute({'a': 1, 'b': 2}) if mode == 'sync' else run(t.aexecute({'a': 1, 'b': 2}))
    assert not r.ok and r.error.startswith('PermissionError: not allowed')


def test_middleware_sees_the_tool_exception():
    caught = []
    def mw(tool, args, call_next):
        try: return call_next()
        except KeyError as e:
            caught.append(e)
            return 'recovered'
    r = Tool(boom, middleware=(mw,)).execute({'x': 1})
    assert r.value == 'recovered' and len(caught) == 1


def test_async_middleware_and_hooks_in_aexecute():
    log = []
    async def outer(tool, args, call_next):
        log.append('outer')
        return (await call_next()) * 2
    async def inner(tool, args, call_next):
        log.append('inner')
        return (await call_next()) + 100
    async def pre(tool, args): return {**args, 'a': 10}
    async def post(tool, args, v): return v + 1
    for fn, expected in [(add, (12 + 100) * 2 + 1), (adiv, (5.0 + 100) * 2 + 1)]:
        log.clear()
        r = run(Tool(fn, pre_hook=pre, post_hook=post, middleware=(outer, inner)).aexecute({'a': 1, 'b': 2}))
        assert r.ok and r.value == expected and r.arguments == {'a': 10, 'b': 2}
        assert log == ['outer', 'inner']


def test_async_middleware_can_short_circuit_in_aexecute():
    async def deny(tool, args, call_next): return 'denied'
    fn = counted(adiv)
    assert run(Tool(fn, middleware=(deny,)).aexecute({'a': 1, 'b': 2})).value == 'denied' and fn.calls['n'] == 0


def test_sync_pass_through_middleware_in_aexecute():
    "A sync middleware that returns `call_next()` unchanged works in aexecute too"
    log = []
    def mw(tool, args, call_next):
        log.append(tool.name)
        return call_next()
    assert run(Tool(add, middleware=(mw,)).aexecute({'a': 1, 'b': 2})).value == 3 and log == ['add']


def test_sync_middleware_using_the_result_works_in_aexecute():
    log = []
    t = Tool(add, middleware=(_logging_mw(log, 'mw', lambda v: v * 2),))
    assert t.execute({'a': 1, 'b': 2}).value == 6
    r = run(t.aexecute({'a': 1, 'b': 2}))
    assert r.ok and r.value == 6


async def _apre(tool, args): return {**args, 'a': 10}
async def _apost(tool, args, v): return v * 2
async def _amw(tool, args, call_next): return (await call_next()) * 2


@pytest.mark.parametrize('kw,expected', [({'pre_hook': _apre}, 12), ({'post_hook': _apost}, 6), ({'middleware': (_amw,)}, 6)],
                         ids=['pre_hook', 'post_hook', 'middleware'])
def test_async_hooks_in_execute(kw, expected):
    r = Tool(add, **kw).execute({'a': 1, 'b': 2})
    assert not inspect.isawaitable(r.value)
    assert r.ok and r.value == expected


# --- confirmation --------------------------------------------------------------------------------------

@pytest.mark.parametrize('mode', ['sync', 'async'])
def test_no_confirm_callback_means_pending(mode):
    fn = counted(add)
    t = Tool(fn, requires_confirmation=True)
    r = t.execute({'a': 1, 'b': 2}, call_id='c1') if mode == 'sync' else run(t.aexecute({'a': 1, 'b': 2}, call_id='c1'))
    assert not r.ok and r.status == 'pending' and fn.calls['n'] == 0
    assert (r.arguments, r.call_id) == ({'a': 1, 'b': 2}, 'c1') and 'add(a=1, b=2)' in r.text


def _sync_yes(tool, args): return True
def _sync_no(tool, args): return False
async def _async_yes(tool, args): return True
async def _async_no(tool, args): return False


@pytest.mark.parametrize('confirm,ok', [(_sync_yes, True), (_sync_no, False), (_async_yes, True), (_async_no, False)],
                         ids=['sync yes', 'sync no', 'async yes', 'async no'])
@pytest.mark.parametrize('mode', ['sync', 'async'])
def test_confirm_callback(confirm, ok, mode):
    fn = counted(add)
    t = Tool(fn, requires_confirmation=True, confirm=confirm)
    r = t.execute({'a': 1, 'b': 2}) if mode == 'sync' else run(t.aexecute({'a': 1, 'b': 2}))
    assert r.ok is ok and fn.calls['n'] == int(ok)
    if ok: assert r.value == 3
    else: assert r.status == 'failure' and r.value is None and 'declined' in r.error


def test_confirm_receives_the_tool_and_arguments():
    seen = []
    def confirm(tool, args):
        seen.append((tool.name, args))
        return True
    Tool(add, requires_confirmation=True, confirm=confirm).execute('{"a": 1, "b": 2}')
    assert seen == [('add', {'a': 1, 'b': 2})]


def test_confirm_is_asked_only_when_required():
    asked = []
    Tool(add, confirm=lambda t, a: asked.append(1) or False).execute({'a': 1, 'b': 2})
    assert asked == []


def test_a_broken_confirm_is_a_failure_and_the_tool_does_not_run():
    def confirm(tool, args): raise RuntimeError('no terminal')
    fn = counted(add)
    r = Tool(fn, requires_confirmation=True, confirm=confirm).execute({'a': 1, 'b': 2})
    assert not r.ok and 'no terminal' in r.error and fn.calls['n'] == 0


def test_confirmation_in_a_toolbox():
    tb = Toolbox([Tool(add, requires_confirmation=True, confirm=_sync_no), Tool(lookup, requires_confirmation=True, confirm=_async_yes)])
    a, b = tb.batch([('add', {'a': 1, 'b': 2}), ('lookup', {'symbol': 'X'})])
    assert not a.ok and 'declined' in a.error and b.value == 'X:5'


# --- caching -------------------------------------------------------------------------------------------

def _data(x: int) -> dict:
    "Some data for x."
    return {'x': x, 'at': time.perf_counter()}


def test_no_cache_by_default():
    fn = counted(_data)
    t = Tool(fn)
    assert not t.execute({'x': 1}).cached and not t.execute({'x': 1}).cached and fn.calls['n'] == 2


def test_memory_cache_by_arguments(clock):
    fn = counted(_data)
    t = Tool(fn, cache_ttl=60)
    r1, r2, r3 = t.execute({'x': 1}), t.execute('{"x": 1}'), t.execute({'x': 2})
    assert (r1.cached, r2.cached, r3.cached) == (False, True, False)
    assert r2.value == r1.value and r2.ok and fn.calls['n'] == 2


def test_memory_cache_expires(clock):
    fn = counted(_data)
    t = Tool(fn, cache_ttl=60)
    t.execute({'x': 1})
    clock[0] += 59
    assert t.execute({'x': 1}).cached
    clock[0] += 2
    r = t.execute({'x': 1})
    assert not r.cached and fn.calls['n'] == 2
    assert t.execute({'x': 1}).cached  # the fresh value is cached again


def test_memory_cache_expires_in_real_time():
    fn = counted(_data)
    t = Tool(fn, cache_ttl=0.05)
    t.execute({'x': 1})
    assert t.execute({'x': 1}).cached
    time.sleep(0.08)
    assert not t.execute({'x': 1}).cached and fn.calls['n'] == 2


def test_failures_are_not_cached(clock):
    fn = counted(boom)
    t = Tool(fn, cache_ttl=60)
    assert not t.execute({'x': 1}).ok and not t.execute({'x': 1}).ok and fn.calls['n'] == 2


def test_cache_in_aexecute_and_for_async_tools(clock):
    fn = counted(adiv)
    t = Tool(fn, cache_ttl=60)
    assert not run(t.aexecute({'a': 1, 'b': 2})).cached
    r = run(t.aexecute({'a': 1, 'b': 2}))
    assert r.cached and r.value == 0.5
    assert t.execute({'a': 1, 'b': 2}).cached and fn.calls['n'] == 1  # one cache for both paths


def test_cache_hit_skips_the_call_and_the_middleware(clock):
    log = []
    t = Tool(add, cache_ttl=60, middleware=(_logging_mw(log, 'mw'),))
    t.execute({'a': 1, 'b': 2})
    assert t.execute({'a': 1, 'b': 2}).cached and log == ['mw in', 'mw out']


def test_disk_cache_is_shared_by_tools_with_the_same_folder(tmp_path, clock):
    fn = counted(_data)
    r1 = Tool(fn, cache_ttl=60, cache_dir=tmp_path).execute({'x': 1})
    files = list(tmp_path.glob('*.json'))
    assert len(files) == 1 and json.loads(files[0].read_text())[1] == r1.value  # JSON on disk
    r2 = Tool(fn, cache_ttl=60, cache_dir=tmp_path).execute({'x': 1})  # a new instance: nothing in memory
    assert r2.cached and r2.value == r1.value and fn.calls['n'] == 1


def test_disk_cache_expired_entries_are_not_used(tmp_path, clock):
    fn = counted(_data)
    Tool(fn, cache_ttl=60, cache_dir=tmp_path).execute({'x': 1})
    clock[0] += 61
    r = Tool(fn, cache_ttl=60, cache_dir=tmp_path).execute({'x': 1})
    assert not r.cached and fn.calls['n'] == 2


def test_disk_cache_folder_is_made(tmp_path, clock):
    folder = tmp_path / 'a' / 'b'
    Tool(_data, cache_ttl=60, cache_dir=str(folder)).execute({'x': 1})
    assert len(list(folder.glob('*.json'))) == 1


def test_disk_cache_ignores_a_corrupt_entry(tmp_path, clock):
    fn = counted(_data)
    Tool(fn, cache_ttl=60, cache_dir=tmp_path).execute({'x': 1})
    for p in tmp_path.glob('*.json'): p.write_text('{not json')
    r = Tool(fn, cache_ttl=60, cache_dir=tmp_path).execute({'x': 1})
    assert r.ok and not r.cached and fn.calls['n'] == 2


def test_disk_cache_of_a_value_json_cannot_hold_stays_in_memory(tmp_path, clock):
    class Opaque:
        pass
    def make() -> object:
        "An opaque value."
        return Opaque()
    t = Tool(make, cache_ttl=60, cache_dir=tmp_path)
    r = t.execute()
    assert r.ok and t.execute().cached and list(tmp_path.glob('*.json')) == []


def _gen(n: int):
    "Yields n numbers."
    yield from range(n)


async def _agen(n: int):
    "Yields n numbers, asynchronously."
    for i in range(n): yield i


def test_generators_are_never_cached(clock, tmp_path):
    t = Tool(_gen, cache_ttl=60, cache_dir=tmp_path)
    r1, r2 = t.execute({'n': 3}), t.execute({'n': 3})
    assert r1.ok and r2.ok and not r2.cached and r1.value is not r2.value
    assert list(r2.value) == [0, 1, 2]
    ta = Tool(_agen, cache_ttl=60)
    a1, a2 = run(ta.aexecute({'n': 2})), run(ta.aexecute({'n': 2}))
    assert a1.ok and not a2.cached and a1.value is not a2.value
    assert list(tmp_path.iterdir()) == []


def test_cache_key_includes_the_tool_name(tmp_path, clock):
    "Two tools sharing a cache folder don't see each other's results"
    Tool(add, cache_ttl=60, cache_dir=tmp_path).execute({'a': 1, 'b': 2})
    r = Tool(lambda a, b: a * b, name='mul', description='Multiply.', cache_ttl=60, cache_dir=tmp_path).execute({'a': 1, 'b': 2})
    assert not r.cached and r.value == 2


def test_cache_key_includes_injected_values(clock):
    def whoami(q: str, session: str) -> str:
        "Who is asking."
        return f'{q} for {session}'
    t = Tool(whoami, inject=('session',), cache_ttl=60)
    assert t.execute({'q': 'data'}, injected={'session': 'alice'}).value == 'data for alice'
    assert t.execute({'q': 'data'}, injected={'session': 'bob'}).value == 'data for bob'


# --- injected parameters -------------------------------------------------------------------------------

def search_db(query: str, session, limit: int = 3) -> str:
    "Search the database."
    return f'{session}:{query}:{limit}'


def test_injected_parameters_are_left_out_of_the_schema():
    t = Tool(search_db, inject=('session',))
    ps = t.schema['input_schema']
    assert list(ps['properties']) == ['query', 'limit'] and ps['required'] == ['query']
    assert 'session' not in json.dumps(t.schema)


def test_injected_values_come_from_the_context():
    t = Tool(search_db, inject=('session',))
    assert t.execute({'query': 'q'}, injected={'session': 'S1'}).value == 'S1:q:3'
    assert run(t.aexecute('{"query": "q", "limit": 1}', injected={'session': 'S2'})).value == 'S2:q:1'
    tb = Toolbox([t], injected={'session': 'S3'})
    assert tb.call('search_db', {'query': 'q'}).value == 'S3:q:3'
    assert run(tb.acall('search_db', {'query': 'q'})).value == 'S3:q:3'
    assert tb.batch([('search_db', {'query': 'q'})])[0].value == 'S3:q:3'
    assert tb.call_expr('search_db(query="q")')[0].value == 'S3:q:3'
    assert tb.call_expr('search_db("q", 2)')[0].value == 'S3:q:2'  # positional arguments skip the injected one


def test_injected_value_may_be_any_object():
    sess = object()
    def uses(x: int, session) -> bool:
        "Uses the session."
        return session is sess
    assert Tool(uses, inject=('session',)).execute({'x': 1}, injected={'session': sess}).value is True


@pytest.mark.parametrize('args', [{'query': 'q', 'session': 'evil'}, '{"query": "q", "session": "evil"}'])
def test_the_model_may_not_pass_injected_values(args):
    fn = counted(search_db)
    r = Tool(fn, inject=('session',)).execute(args, injected={'session': 'S'})
    assert not r.ok and "'session'" in r.error and 'application' in r.error and fn.calls['n'] == 0


def test_missing_injected_value_is_raised_to_the_developer_naming_the_parameter():
    "A developer's mistake: raised as a TypeError naming what is missing, never handed to the model as a result"
    fn = counted(search_db)
    t = Tool(fn, inject=('session',))
    for go in [lambda: t.execute({'query': 'q'}), lambda: t.execute({'query': 'q'}, injected={'other': 1}),
               lambda: run(t.aexecute({'query': 'q'})), lambda: Toolbox([t]).call('search_db', {'query': 'q'}),
               lambda: Toolbox([t]).batch([('search_db', {'query': 'q'})]), lambda: t.execute('not json')]:
        with pytest.raises(TypeError, match="'session'.*injected"): go()
    assert fn.calls['n'] == 0


def test_injected_methods_and_self():
    class Repo:
        def find(self, name: str, user) -> str:
            "Find a record."
            return f'{user}/{name}'
    t = Tool(Repo().find, inject=('user',))
    assert list(t.schema['input_schema']['properties']) == ['name']
    assert t.execute({'name': 'n'}, injected={'user': 'u'}).value == 'u/n'


def test_injecting_an_unknown_parameter_is_a_developer_error():
    with pytest.raises((SchemaError, TypeError, ValueError)): Tool(add, inject=('session',))


def test_injected_values_are_not_readable_from_call_expressions():
    def echo(text: str) -> str:
        "Echo the text."
        return text
    def fetch(url: str, api_key: str) -> str:
        "Fetch with the key."
        return 'ok'
    tb = Toolbox([echo, Tool(fetch, inject=('api_key',))], injected={'api_key': 'SECRET-123'})
    assert tb.call_expr('fetch(url="u")')[0].value == 'ok'
    r = tb.call_expr('echo(text=api_key)')[0]
    assert 'SECRET-123' not in repr(r)


# --- results as text -----------------------------------------------------------------------------------

@dataclass
class Pt:
    x: int
    y: int


class Quote(pydantic.BaseModel):
    symbol: str
    at: dt.datetime
    prices: List[float] = []


TEXTS = [
    ('hello', 'hello'),
    ('', ''),
    ('ünï ✓', 'ünï ✓'),
    ('{"already": "json"}', '{"already": "json"}'),
    ({'a': 1, 'b': [1, 2]}, '{"a": 1, "b": [1, 2]}'),
    ({'k': 'ünï'}, '{"k": "ünï"}'),
    ([1, 'two', None], '[1, "two", null]'),
    ((1, 2), '[1, 2]'),
    ({3, 1, 2}, '[1, 2, 3]'),
    (Pt(1, 2), '{"x": 1, "y": 2}'),
    ([Pt(1, 2)], '[{"x": 1, "y": 2}]'),
    (Quote(symbol='A', at=dt.datetime(2024, 1, 2, 3, 4), prices=[1.5]), '{"symbol": "A", "at": "2024-01-02T03:04:00", "prices": [1.5]}'),
    (dt.datetime(2024, 1, 2, 3, 4, 5), '"2024-01-02T03:04:05"'),
    (dt.date(2024, 1, 2), '"2024-01-02"'),
    ({'when': dt.date(2024, 1, 2)}, '{"when": "2024-01-02"}'),
    (None, 'null'),
    (3, '3'),
    (2.5, '2.5'),
    (True, 'true'),
]


@pytest.mark.parametrize('v,expected', TEXTS)
def test_to_text(v, expected):
    assert to_text(v) == expected
    if not isinstance(v, str): json.loads(to_text(v))  # data is JSON


def test_to_text_falls_back_to_str():
    class Thing:
        def __str__(self): return 'a thing'
    assert to_text(Thing()) == 'a thing'
    o = object()
    assert to_text(o) == str(o)
    assert to_text({'k': o}) == str({'k': o})  # not JSON: the whole value as its str


def test_to_text_limit_cuts_clearly():
    s = to_text('x' * 50, 10)
    assert s.startswith('x' * 10) and not s.startswith('x' * 11)
    assert 'cut' in s and '10' in s and '50' in s
    assert to_text('x' * 10, 10) == 'x' * 10  # exactly the limit: not cut
    assert to_text(list(range(100)), 20).startswith('[0, 1, 2, 3, 4, 5, 6') and 'cut' in to_text(list(range(100)), 20)


def test_result_text():
    r = Tool(lambda: {'a': 'x' * 100}, name='big', description='Big.', max_chars=30).execute()
    assert r.value == {'a': 'x' * 100}  # the value is whole; only the text is cut
    assert r.text.startswith('{"a": "xxx') and 'cut' in r.text and len(r.text) < 100
    assert Tool(lambda: None, name='nothing', description='Nothing.').execute().text == 'null'
    f = Tool(boom, max_chars=5).execute()
    assert f.text == f.error  # an error is never cut to the value's limit


def test_to_text_of_a_self_referencing_value():
    @dataclass
    class Node:
        name: str
        parent: object = None
        children: list = field(default_factory=list)
    root = Node('root')
    root.children.append(Node('leaf', root))
    def tree() -> Node:
        "A tree."
        return root
    r = Tool(tree).execute()
    assert r.ok and 'root' in r.text
    loop = []
    loop.append(loop)
    assert to_text(loop) == '[[...]]'


def test_disk_cache_of_a_self_referencing_value(tmp_path):
    loop = []
    loop.append(loop)
    def make() -> list:
        "A loop."
        return loop
    assert Tool(make, cache_ttl=60, cache_dir=tmp_path).execute().ok


# --- call_str ------------------------------------------------------------------------------------------

def test_call_str():
    assert call_str('lookup', {'symbol': 'ACME', 'limit': 3}) == "lookup(symbol='ACME', limit=3)"
    assert call_str('now', {}) == 'now()'
    assert call_str('f', {'x': None, 'l': [1, 2], 'd': {'k': True}}) == "f(x=None, l=[1, 2], d={'k': True})"
    assert Tool(lookup).call_str({'symbol': 'ACME'}) == "lookup(symbol='ACME')"


def test_call_str_is_one_short_line():
    s = call_str('f', {'text': 'line one\nline two ' * 50})
    assert '\n' not in s and len(s) < 100 and s.startswith("f(text='line one\\nline two")
    s = call_str('f', {f'k{i}': 'v' * 50 for i in range(20)})
    assert len(s) <= 200 and s.startswith('f(k0=') and s.endswith('...)')
    assert len(call_str('f', {'a': 'x' * 500}, width=40)) <= 40


# --- ToolGroup -----------------------------------------------------------------------------------------

class Calc:
    "A calculator with memory."
    def __init__(self): self.memory = 0

    def add(self, a: int, b: int) -> int:
        "Add two numbers."
        return a + b

    async def div(self, a: float, b: float) -> float:
        "Divide two numbers."
        return a / b

    def remember(self, v: int) -> int:
        "Store a value."
        self.memory = v
        return v

    def undocumented(self, a: int) -> int:
        return a

    def _private(self) -> None:
        "Not a tool."

    @staticmethod
    def neg(x: int) -> int:
        "Negate."
        return -x

    @classmethod
    def name_of(cls) -> str:
        "The class name."
        return cls.__name__

    @property
    def total(self) -> int:
        "A property, not a tool."
        return self.memory


GROUP_NAMES = ['calc-add', 'calc-div', 'calc-remember', 'calc-neg', 'calc-name_of']


def test_group_from_an_object():
    c = Calc()
    g = ToolGroup(c)
    assert g.obj is c and g.prefix == 'calc'
    assert list(g.tools) == GROUP_NAMES  # public documented methods, in definition order
    assert all(isinstance(t, Tool) and t.name == nm and t.name_ok() for nm, t in g.tools.items())
    assert repr(g).startswith("ToolGroup('calc'")


def test_group_from_a_class_instantiates_it():
    g = ToolGroup(Calc)
    assert isinstance(g.obj, Calc) and list(g.tools) == GROUP_NAMES


def test_group_leaves_out_private_undocumented_and_properties():
    names = list(ToolGroup(Calc).tools)
    assert not any(n.endswith(('_private', 'undocumented', 'total', '__init__')) for n in names)


def test_group_schemas_leave_out_self():
    g = ToolGroup(Calc)
    for t in g.tools.values(): assert 'self' not in t.schema['input_schema']['properties'] and 'cls' not in t.schema['input_schema']['properties']
    assert g.tools['calc-add'].schema['input_schema']['required'] == ['a', 'b']
    assert g.tools['calc-add'].description.startswith('Add two numbers.')


def test_group_sync_and_async_methods_run_on_the_object():
    g = ToolGroup(Calc)
    assert g.tools['calc-add'].execute({'a': 1, 'b': 2}).value == 3
    assert not g.tools['calc-add'].is_async and g.tools['calc-div'].is_async
    assert run(g.tools['calc-div'].aexecute({'a': 1, 'b': 4})).value == 0.25
    assert g.tools['calc-div'].execute({'a': 1, 'b': 4}).value == 0.25
    g.tools['calc-remember'].execute({'v': 7})
    assert g.obj.memory == 7  # the group's own object
    assert g.tools['calc-neg'].execute({'x': 3}).value == -3
    assert g.tools['calc-name_of'].execute().value == 'Calc'


def test_group_names_resolve_back_through_the_namespace():
    g = ToolGroup(Calc)
    ns = {'calc': g.obj}
    for nm in ['calc-add', 'calc-div', 'calc-remember']:
        f = resolve_nm(nm, ns)
        assert f.__self__ is g.obj and f.__name__ == nm.split('-')[1]
    assert call_func('calc-add', {'a': 1, 'b': 2}, ns) == 3
    call_func('calc-remember', '{"v": 9}', ns)
    assert g.obj.memory == 9


def test_group_prefix_include_exclude():
    assert list(ToolGroup(Calc, prefix='math').tools) == [n.replace('calc', 'math') for n in GROUP_NAMES]
    assert list(ToolGroup(Calc, include=('add', 'neg')).tools) == ['calc-add', 'calc-neg']
    assert list(ToolGroup(Calc, exclude=('div', 'remember')).tools) == ['calc-add', 'calc-neg', 'calc-name_of']


@pytest.mark.parametrize('prefix', ['bad-prefix', 'calc.x', 'with space', ''])
def test_group_prefix_must_resolve(prefix):
    if prefix == '':
        assert ToolGroup(Calc, prefix=prefix).prefix == 'calc'  # empty: the default
        return
    with pytest.raises(ValueError, match='prefix'): ToolGroup(Calc, prefix=prefix)


def test_group_inherits_methods():
    class SciCalc(Calc):
        def sqrt(self, x: float) -> float:
            "Square root."
            return x ** 0.5
        def add(self, a: int, b: int) -> int:
            "Add, scientifically."
            return a + b + 0
    g = ToolGroup(SciCalc)
    assert set(g.tools) == {n.replace('calc', 'scicalc') for n in GROUP_NAMES} | {'scicalc-sqrt'}
    assert g.tools['scicalc-add'].description.startswith('Add, scientifically.')


def test_group_passes_tool_options_on(clock):
    g = ToolGroup(Calc, cache_ttl=60, strict=True)
    t = g.tools['calc-add']
    assert t.strict
    t.execute({'a': 1, 'b': 2})
    assert t.execute({'a': 1, 'b': 2}).cached


def test_group_with_injected_parameter():
    class Store:
        def get(self, key: str, user) -> str:
            "Get a value for the user."
            return f'{user}:{key}'
    g = ToolGroup(Store(), inject=('user',))
    assert list(g.tools['store-get'].schema['input_schema']['properties']) == ['key']
    assert Toolbox([g], injected={'user': 'u1'}).call('store-get', {'key': 'k'}).value == 'u1:k'


def test_group_injects_only_into_methods_that_take_the_parameter():
    class Svc:
        def add(self, a: int, b: int) -> int:
            "Add."
            return a + b
        def whoami(self, session) -> str:
            "The session's user."
            return session
    tb = Toolbox([ToolGroup(Svc, inject=('session',))], injected={'session': 'S'})
    assert tb.call('svc-whoami', {}).value == 'S'
    assert tb.call('svc-add', {'a': 1, 'b': 2}).value == 3


def test_seed_001_tool_group_with_pydantic_models():
    "Seed 001: a class's async method taking and returning pydantic models, JSON text in, text out, extra fields refused"
    class ToolBaseModel(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra='forbid')

    class SearchQuery(ToolBaseModel):
        "Finds relevant documents in a database."
        phrase: str = pydantic.Field(..., description='A search phrase that captures what the user is looking for.')

    class SearchResultItem(ToolBaseModel):
        "A document in the database that matches the user's query."
        id: str = pydantic.Field(..., description='Unique identifier for the document found in the database.')
        content: str = pydantic.Field(..., description='Document text in Markdown format.')
        similarity: int = pydantic.Field(..., description='Similarity from 0 to 100.')

    class Connection:
        async def execute(self, sql): return [{'id': '1', 'content': '# Doc', 'similarity': 90}]

    class SearchToolGroup:
        "Finds relevant documents in a database."
        def __init__(self, connection): self.connection = connection

        async def find_documents(self, query: SearchQuery) -> list[SearchResultItem]:
            "Performs a search on the database to find documents that match the search phrase."
            return [SearchResultItem(**row) for row in await self.connection.execute('SELECT ...')]

    tb = Toolbox([ToolGroup(SearchToolGroup(Connection()), prefix='search')])
    t = tb['search-find_documents']
    assert t.is_async
    s = t.schema['input_schema']
    assert s['$defs']['SearchQuery']['properties']['phrase']['description'].startswith('A search phrase')
    [r] = run(tb.abatch([('search-find_documents', '{"query": {"phrase": "docs"}}', 'call_1')]))
    assert r.ok and r.call_id == 'call_1'
    assert json.loads(r.text) == [{'id': '1', 'content': '# Doc', 'similarity': 90}]
    bad = run(tb.acall('search-find_documents', '{"query": {"phrase": "docs", "extra": 1}}'))
    assert not bad.ok and 'extra' in bad.error.lower()


# --- Toolbox -------------------------------------------------------------------------------------------

def test_toolbox_holds_functions_tools_and_groups():
    tb = Toolbox([add, Tool(lookup, name='quote'), ToolGroup(Calc)])
    assert list(tb.tools) == ['add', 'quote', *GROUP_NAMES] and len(tb) == 2 + len(GROUP_NAMES)
    assert isinstance(tb['add'], Tool) and [t.name for t in tb] == list(tb.tools)
    assert tb.add(adiv) is tb and 'adiv' in tb.tools
    assert repr(tb).startswith("Toolbox(['add', 'quote'")


@pytest.mark.parametrize('second', [add, lambda: Tool(add), lambda: Tool(lookup, name='add'), lambda: ToolGroup(Calc)])
def test_toolbox_duplicate_names_are_an_error(second):
    tb = Toolbox([add, ToolGroup(Calc)])
    item = second if second is add else second()
    with pytest.raises(ValueError, match='Two tools are named'): tb.add(item)


def test_toolbox_definitions():
    tb = Toolbox([add, lookup, ToolGroup(Calc)])
    s = tb.schemas()
    assert s == [t.schema for t in tb] and [d['name'] for d in s] == ['add', 'lookup', *GROUP_NAMES]
    assert json.loads(tb.as_json()) == s
    assert json.loads(tb.as_json(indent=None)) == s and '\n' not in tb.as_json(indent=None)
    assert yaml.safe_load(tb.as_yaml()) == s


def test_toolbox_definitions_round_trip_with_defaults_of_many_kinds():
    import enum
    from pathlib import Path
    from typing import Literal

    class Color(enum.Enum):
        RED = 'red'

    def many(a: tuple = (1, 2), b: frozenset = frozenset({1}), d: bytes = b'x', e: Path = Path('/tmp'), g: dt.date = dt.date(2024, 1, 1),
             h: Color = Color.RED, i: Literal['x', 'y'] = 'x', j: dict = None, k: str = 'ünï') -> None:
        "Many defaults."
    tb = Toolbox([many])
    assert json.loads(tb.as_json()) == tb.schemas()
    assert yaml.safe_load(tb.as_yaml()) == tb.schemas()
    assert 'ünï' in tb.as_yaml() and 'ünï' in tb.as_json()  # readable, not escaped


def test_toolbox_call():
    tb = Toolbox([add, lookup])
    assert tb.call('add', {'a': 1, 'b': 2}).value == 3
    assert tb.call('add', '{"a": 1, "b": 2}', call_id='c9').call_id == 'c9'
    assert tb.call('lookup', '{"symbol": "X"}').text == 'X:5'
    assert run(tb.acall('add', {'a': 1, 'b': 2}, 'c1')).value == 3


@pytest.mark.parametrize('name', ['nope', '', 'add ', 'ADD', '__class__', None, 3, ['add']])
def test_toolbox_unknown_tool_is_a_failure(name):
    tb = Toolbox([add, lookup])
    for r in [tb.call(name, {}, call_id='c'), run(tb.acall(name, {}, call_id='c'))]:
        assert not r.ok and r.error.startswith('ToolNotFound') and r.call_id == 'c'
        assert "'add'" in r.error and "'lookup'" in r.error  # what is available


# --- call expressions, with seed 003's examples --------------------------------------------------------

def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


async def divide(a: float, b: float) -> float:
    """Divide two numbers."""
    await asyncio.sleep(0)
    return float(a) / b


async def search(query: str) -> List[str]:
    """Search for query and return a list of results."""
    return ['result1' + query, 'result2' + query]


@dataclass
class Point:
    x: int
    y: int


def add_points(p1: Point, p2: Point) -> Point:
    "Add two points."
    return Point(p1.x + p2.x, p1.y + p2.y)


@pytest.fixture
def seed3():
    np = pytest.importorskip('numpy')

    def numpy_sum(arr: np.ndarray) -> float:
        """Sum the elements of an array."""
        return np.sum(arr)
    return Toolbox([multiply, add, divide, search, numpy_sum, add_points],
                   context={'x': 2, 'y': 0, 'np.array': np.array, 'np': np, 'Point': Point})


SEED3 = [
    ('add(a=2, b=3)', 'add', 5),
    ('search(query="something")', 'search', ['result1something', 'result2something']),
    ('add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))', 'add_points', Point(4, 6)),
    ('numpy_sum(arr=np.array([[1, 2], [3, 4]]))', 'numpy_sum', 10),
    ('multiply(a=2, b=x)', 'multiply', 4),
    ('multiply(a=2, b=2)', 'multiply', 4),
    ('divide(a=2.0, b=3.0)', 'divide', 2 / 3),
    ('add(a=y, b=5)', 'add', 5),
    ('add(a=0, b=5)', 'add', 5),
    ('get_current_weather("San Francisco, CA", unit="celsius")', None, None),  # not a tool here: a failure result
]


@pytest.mark.parametrize('text,name,value', SEED3)
def test_seed_003_call_expressions(seed3, text, name, value):
    for [r] in [seed3.call_expr(text), run(seed3.acall_expr(text))]:
        if name is None:
            assert not r.ok and 'Unknown tool' in r.error
            continue
        assert r.ok, r.error
        assert r.name == name and r.value == value


def test_seed_003_arguments_are_built_from_the_context(seed3):
    [r] = seed3.call_expr('add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))')
    assert r.arguments == {'p1': Point(1, 2), 'p2': Point(3, 4)} and r.text == '{"x": 4, "y": 6}'
    [r] = seed3.call_expr('numpy_sum(arr=np.array([[1, 2], [3, 4]]))')
    assert type(r.arguments['arr']).__name__ == 'ndarray' and r.text == '10'


def test_seed_003_lists_of_calls(seed3):
    text = '[add(a=2, b=3), search(query="something"), add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4)), ' \
           'numpy_sum(arr=np.array([[1, 2], [3, 4]])), multiply(a=2, b=x), divide(a=2.0, b=3.0), add(a=y, b=5)]'
    expected = [5, ['result1something', 'result2something'], Point(4, 6), 10, 4, 2 / 3, 5]
    for rs in [seed3.call_expr(text), run(seed3.acall_expr(text))]:
        assert [r.value for r in rs] == expected and all(r.ok for r in rs)


def test_seed_003_numpy_from_a_list(seed3):
    [r] = seed3.call_expr('numpy_sum(arr=[[1, 2], [3, 4]])')
    assert r.ok and r.value == 10


def test_call_expr_positional_arguments():
    tb = Toolbox([add, lookup])
    assert tb.call_expr('add(2, 3)')[0].value == 5
    assert tb.call_expr('add(2, b=3)')[0].arguments == {'a': 2, 'b': 3}
    assert tb.call_expr('lookup("ACME")')[0].value == 'ACME:5'
    [r] = tb.call_expr('add(1, 2, 3)')
    assert not r.ok and 'at most 2' in r.error


def test_call_expr_failures_are_results():
    tb = Toolbox([add], context={'x': 2})
    for text, words in [('nope(a=1)', 'Unknown tool'), ('add(a=1 + 1, b=2)', 'BinOp'), ('add(a=__import__("os"), b=1)', 'Dunder'),
                        ('add(a=', 'Not a valid'), ('add(a="x", b=1)', "argument 'a'"), ('add(a=1)', 'missing'), (None, 'must be a string')]:
        for rs in [tb.call_expr(text), run(tb.acall_expr(text))]:
            assert len(rs) == 1 and not rs[0].ok and words in rs[0].error
    assert tb.call_expr('[]') == []


def test_call_expr_one_failing_call_keeps_the_others():
    tb = Toolbox([add, boom])
    rs = tb.call_expr('[add(a=1, b=2), boom(x=1), add(a="bad", b=1), add(a=3, b=4)]')
    assert [r.ok for r in rs] == [True, False, False, True] and rs[3].value == 7


def test_call_expr_one_unparseable_call_keeps_the_others():
    rs = Toolbox([add]).call_expr('[add(a=1, b=2), nope(a=1)]')
    assert len(rs) == 2 and rs[0].value == 3 and not rs[1].ok


def test_call_expr_argument_given_twice():
    [r] = Toolbox([add]).call_expr('add(2, a=3)')
    assert not r.ok and "'a'" in r.error


def test_call_expr_reaches_group_tools():
    [r] = Toolbox([ToolGroup(Calc)]).call_expr('calc.add(a=1, b=2)')
    assert r.ok and r.value == 3


def test_acall_expr_runs_calls_concurrently():
    async def nap(s: float) -> float:
        "Sleep a while."
        await asyncio.sleep(s)
        return s
    def snooze(s: float) -> float:
        "Sleep a while, blocking."
        time.sleep(s)
        return s
    tb = Toolbox([nap, snooze])
    t0 = time.perf_counter()
    rs = run(tb.acall_expr('[nap(s=0.2), nap(s=0.2), snooze(s=0.2), snooze(s=0.2)]'))
    assert [r.value for r in rs] == [0.2] * 4 and time.perf_counter() - t0 < 0.5


def test_call_expr_does_not_leak_into_the_tools_names():
    "Context callables run; tools are not in the expression's context unless put there"
    fn = counted(add)
    tb = Toolbox([fn])
    [r] = tb.call_expr('add(a=add(a=1, b=2), b=1)')
    assert not r.ok and 'Unknown name' in r.error and fn.calls['n'] == 0
    assert r.error.startswith(ExprError.__name__)


# --- batches -------------------------------------------------------------------------------------------

class Gauge:
    "Counts how many calls run at once"
    def __init__(self): self.now = self.max = 0; self.lock = threading.Lock()
    def __enter__(self):
        with self.lock:
            self.now += 1
            self.max = max(self.max, self.now)
    def __exit__(self, *a):
        with self.lock: self.now -= 1


def _gauged_tools(g: Gauge):
    def sync_work(i: int) -> int:
        "Blocking work."
        with g: time.sleep(0.1)  # long enough that the limit is reached even on a loaded machine
        return i
    async def async_work(i: int, s: float = 0.1) -> int:
        "Async work."
        with g: await asyncio.sleep(s)
        return i
    return Toolbox([sync_work, async_work])


@pytest.mark.parametrize('name', ['sync_work', 'async_work'])
@pytest.mark.parametrize('limit', [1, 3, 5])
def test_batch_concurrency_limit(name, limit):
    g = Gauge()
    tb = _gauged_tools(g)
    rs = tb.batch([(name, {'i': i}) for i in range(12)], max_concurrency=limit)
    assert [r.value for r in rs] == list(range(12))
    assert g.max == limit  # reached, never passed


def test_batch_default_concurrency_is_the_toolbox_s():
    g = Gauge()
    tb = _gauged_tools(g)
    tb.max_concurrency = 4
    tb.batch([('async_work', {'i': i}) for i in range(12)])
    assert g.max == 4


def test_batch_runs_sync_tools_in_threads_and_in_parallel():
    idents = set()
    def work(i: int) -> int:
        "Blocking work."
        idents.add(threading.get_ident())
        time.sleep(0.3)
        return i
    t0 = time.perf_counter()
    rs = Toolbox([work], max_concurrency=8).batch([('work', {'i': i}) for i in range(8)])
    assert [r.value for r in rs] == list(range(8)) and time.perf_counter() - t0 < 1.8  # one after another: 2.4 s
    assert threading.get_ident() not in idents and len(idents) > 1


def test_batch_results_are_in_call_order():
    async def nap(i: int) -> int:
        "Later calls finish first."
        await asyncio.sleep(0.005 * (10 - i))
        return i
    rs = Toolbox([nap], max_concurrency=10).batch([('nap', {'i': i}, f'c{i}') for i in range(10)])
    assert [r.value for r in rs] == list(range(10)) and [r.call_id for r in rs] == [f'c{i}' for i in range(10)]


def test_batch_timeout_is_per_call_and_a_failure():
    finished = []
    async def nap(s: float) -> float:
        "Sleep a while."
        await asyncio.sleep(s)
        finished.append(s)
        return s
    tb = Toolbox([nap, add])
    t0 = time.perf_counter()
    rs = tb.batch([('nap', {'s': 5}, 'slow'), ('nap', {'s': 0.01}), ('add', {'a': 1, 'b': 2})], timeout=1)
    assert time.perf_counter() - t0 < 4  # the slow call is cancelled, not waited for
    assert [r.ok for r in rs] == [False, True, True] and rs[1].value == 0.01 and rs[2].value == 3
    assert rs[0].error.startswith('TimeoutError') and 'within 1 s' in rs[0].error and rs[0].call_id == 'slow' and rs[0].name == 'nap'
    assert finished == [0.01]


def test_batch_timeout_of_a_sync_tool():
    def block(s: float) -> str:
        "Blocks a while."
        time.sleep(s)
        return 'done'
    rs = Toolbox([block, add], timeout=0.5).batch([('block', {'s': 2}), ('add', {'a': 1, 'b': 2})])
    assert not rs[0].ok and rs[0].error.startswith('TimeoutError') and rs[1].value == 3


def test_batch_timeout_counts_from_the_start_of_the_call_not_the_queue():
    "Ten 50 ms calls one at a time with a 100 ms timeout: each call is within its time, though the batch takes 500 ms"
    async def nap(i: int) -> int:
        "A short nap."
        await asyncio.sleep(0.05)
        return i
    rs = Toolbox([nap]).batch([('nap', {'i': i}) for i in range(6)], max_concurrency=1, timeout=0.2)
    assert all(r.ok for r in rs)


def test_batch_one_failure_never_loses_the_others():
    tb = Toolbox([add, boom, adiv], context={})
    calls = [('add', {'a': 1, 'b': 2}), ('boom', {'x': 1}), ('nope', {}), ('add', '{"a": 1'), ('add', {'a': 'x', 'b': 1}),
             ('adiv', {'a': 1, 'b': 0}), ('adiv', {'a': 1, 'b': 2}), (None, {}), ('add', '{"a": 5, "b": 5}', 'last')]
    rs = tb.batch(calls)
    assert [r.ok for r in rs] == [True, False, False, False, False, False, True, False, True]
    assert rs[0].value == 3 and rs[6].value == 0.5 and rs[8].value == 10 and rs[8].call_id == 'last'
    assert [r.name for r in rs] == ['add', 'boom', 'nope', 'add', 'add', 'adiv', 'adiv', 'None', 'add']


def test_batch_of_1000_calls_loses_none():
    def ident(i: int) -> int:
        "Identity."
        return i
    async def aident(i: int) -> int:
        "Identity, async."
        return i
    tb = Toolbox([ident, aident], max_concurrency=64)
    calls = [('ident' if i % 2 else 'aident', {'i': i}, f'c{i}') for i in range(1000)]
    rs = tb.batch(calls)  # (how fast: benchmarks/, not a timed test)
    assert len(rs) == 1000 and all(r.ok for r in rs)
    assert [r.value for r in rs] == list(range(1000)) and [r.call_id for r in rs] == [f'c{i}' for i in range(1000)]


def test_abatch_in_an_event_loop_and_empty_batches():
    tb = Toolbox([add, adiv])
    async def main():
        return await tb.abatch([('add', {'a': 1, 'b': 2}), ('adiv', {'a': 1, 'b': 2})]), await tb.abatch([])
    rs, empty = run(main())
    assert [r.value for r in rs] == [3, 0.5] and empty == []
    assert tb.batch([]) == []


def test_sync_batch_inside_an_event_loop_runs():
    "In a thread of its own, as `abatch` would: one call or several, with a deadline or without"
    tb = Toolbox([add, adiv])
    async def main(): return tb.batch([('add', {'a': 1, 'b': 2})]), tb.batch([('add', {'a': 1, 'b': 1}), ('adiv', {'a': 1, 'b': 4})], timeout=5)
    one, two = run(main())
    assert [r.value for r in one] == [3] and [r.value for r in two] == [2, 0.25]


def test_seed_002_lookup_example():
    "Seed 002: `FunctionCall(function=fn, arguments={'symbol': 'ACME', 'limit': 3}).execute()` and `get_call_str()`"
    t = Tool(lookup)
    assert t.name == 'lookup' and t.schema['input_schema']['required'] == ['symbol']
    r = t.execute({'symbol': 'ACME', 'limit': 3})
    assert (r.status, r.value, r.error) == ('success', 'ACME:3', None)
    assert t.call_str(r.arguments) == "lookup(symbol='ACME', limit=3)"
    assert dataclasses.is_dataclass(r)
