"""Every way of running a tool's call goes through the one pipeline (`funccall.loop.pipeline`), exactly once, and the tool's
function never runs outside it; the pipeline and the batches sit below the tools in the import graph (issue 31)."""
import asyncio

import pytest

from funccall import Tool, Toolbox, call_func, call_func_async, run_tool_calls, run_tool_calls_async
from funccall.loop import pipeline

RAN = []  # (tool, inside the pipeline's steps) per run of a tool's function
_inside = []  # the steps running now

def add(a: int, b: int) -> int:
    "Add two integers"
    RAN.append(('add', bool(_inside)))
    return a + b

async def aadd(a: int, b: int) -> int:
    "Add two integers, asynchronously"
    RAN.append(('aadd', bool(_inside)))
    return a + b

@pytest.fixture
def steps(monkeypatch):
    "The tools whose pipeline ran, one entry per call"
    seen, real = [], pipeline._steps
    async def counted(t, *rest):
        seen.append(t.name)
        _inside.append(t.name)
        try: return await real(t, *rest)
        finally: _inside.pop()
    monkeypatch.setattr(pipeline, '_steps', counted)
    RAN.clear()
    return seen

TWO = [('add', {'a': 1, 'b': 2}, 'c1'), ('aadd', {'a': 3, 'b': 4}, 'c2')]
SYNC_TWO = [('add', {'a': 1, 'b': 2}, 'c1'), ('add', {'a': 3, 'b': 4}, 'c2')]

def _box(**kw) -> Toolbox: return Toolbox([add, aadd], **kw)

def _response(calls) -> dict:
    return {'id': 'r', 'object': 'chat.completion', 'created': 0, 'model': 'm', 'choices': [
        {'index': 0, 'finish_reason': 'tool_calls', 'message': {'role': 'assistant', 'content': None, 'tool_calls': [
            {'id': cid, 'type': 'function', 'function': {'name': nm, 'arguments': str(args).replace("'", '"')}}
            for nm, args, cid in calls]}}]}

WAYS = {
    'Tool.execute': lambda: [Tool(add).execute({'a': 1, 'b': 2})],
    'Tool.aexecute': lambda: [asyncio.run(Tool(aadd).aexecute({'a': 1, 'b': 2}))],
    'Tool.aexecute, inline': lambda: [asyncio.run(Tool(add).aexecute({'a': 1, 'b': 2}, in_thread=False))],
    'Tool()': lambda: [Tool(add)(a=1, b=2)],
    'Toolbox.call': lambda: [_box().call('add', {'a': 1, 'b': 2})],
    'Toolbox.acall': lambda: [asyncio.run(_box().acall('aadd', {'a': 1, 'b': 2}))],
    'batch of one': lambda: _box().batch(SYNC_TWO[:1]),
    'batch in threads': lambda: _box().batch(SYNC_TWO),
    'batch, the loop': lambda: _box().batch(TWO),
    'batch with a deadline': lambda: _box().batch(SYNC_TWO, timeout=30),
    'abatch in threads': lambda: asyncio.run(_box().abatch(SYNC_TWO)),
    'abatch, the loop': lambda: asyncio.run(_box().abatch(TWO)),
    'abatch with a deadline': lambda: asyncio.run(_box(timeout=30).abatch(TWO)),
    'call_expr': lambda: _box().call_expr('add(a=1, b=2)'),
    'acall_expr': lambda: asyncio.run(_box().acall_expr('[add(a=1, b=2), aadd(a=3, b=4)]')),
    'call_func of a Tool': lambda: [call_func('add', {'a': 1, 'b': 2}, [Tool(add)])],
    'call_func in a Toolbox': lambda: [call_func('add', {'a': 1, 'b': 2}, _box())],
    'call_func_async': lambda: [asyncio.run(call_func_async('aadd', {'a': 1, 'b': 2}, _box()))],
    'run_tool_calls': lambda: run_tool_calls(_box(), _response(TWO)),
    'run_tool_calls_async': lambda: asyncio.run(run_tool_calls_async(_box(), _response(TWO))),
}

@pytest.mark.parametrize('way', WAYS)
def test_each_way_of_running_a_call_goes_through_the_pipeline_once(steps, way):
    rs = WAYS[way]()
    assert all(getattr(r, 'ok', True) for r in rs), rs
    n = len(rs)
    assert len(steps) == n and len(RAN) == n  # one pipeline per call, and one run of the function per pipeline
    assert all(inside for _, inside in RAN), RAN  # no run of the function outside the pipeline's steps

def test_a_resumed_call_goes_through_the_pipeline(steps):
    tb = Toolbox([Tool(add, requires_confirmation=True)])
    pending = tb.call('add', {'a': 1, 'b': 2})
    assert pending.status == 'pending' and RAN == []
    assert tb.resume(pending.to_dict()).value == 3 and steps == ['add', 'add'] and RAN == [('add', True)]
    done, ran = tb.call('add', {'a': 1, 'b': 2}, call_id='c9'), len(RAN)
    assert done.status == 'pending'
    with pytest.raises(ValueError, match='Only a pending result'): tb.resume(tb.resume(done))  # answered once: not again
    assert len(RAN) == ran + 1  # the second resume ran nothing

def test_code_mode_runs_each_tool_call_through_the_pipeline(steps):
    from funccall.toolsets.codemode import code_tool
    run_code = code_tool(_box(), isolate=False)
    r = run_code.execute({'code': 'print(add(a=1, b=2) + aadd(a=3, b=4))'})
    assert r.ok and '10' in r.text
    assert steps == ['run_code', 'add', 'aadd'] and [nm for nm, _ in RAN] == ['add', 'aadd'] and all(i for _, i in RAN)

def test_an_unknown_name_in_a_batch_runs_no_pipeline(steps):
    rs = _box().batch([('nope', {}), ('add', {'a': 1, 'b': 2})])
    assert [r.failure for r in rs] == ['name', None] and steps == ['add'] and RAN == [('add', True)]
