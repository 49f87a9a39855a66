"""The seam between the pipeline and a tool: `pipeline.PipelineTool` lists exactly what the pipeline reads of a tool, and
the pipeline runs any object that has those attributes, not only a `Tool`. And `run_tool_calls` takes what its
parameter's type (`tools.Tools`) says: a toolbox, one function or `Tool`, a list or tuple of them, a dict of them."""
import ast, asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from funccall import SchemaError, Tool, ToolResult, run_tool_calls, run_tool_calls_async
from funccall.loop import batches, pipeline
from funccall.loop.pipeline import Plan, PipelineTool

def add(a: int, b: int) -> int:
    "Add two numbers"
    return a + b

def _attrs_read(module) -> set:
    "The attributes the module's code reads of `t`, its name for the tool, anywhere"
    tree = ast.parse(Path(module.__file__).read_text())
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == 't'}

MEMBERS = [k for k, v in vars(PipelineTool).items() if isinstance(v, property)]

def test_the_protocol_lists_exactly_what_the_pipeline_and_batches_read_of_a_tool():
    declared = set(MEMBERS)
    assert _attrs_read(pipeline) | _attrs_read(batches) == declared  # one read and not declared, or declared and never read, fails
    assert len(declared) == 19

def test_a_tool_has_every_attribute_the_protocol_names():
    t = Tool(add)
    assert [k for k in MEMBERS if not hasattr(t, k)] == []

@dataclass(frozen=True)
class Bare:
    "Not a `Tool`: the Protocol's attributes and nothing else; frozen, as the pipeline only reads them"
    fn: Callable[..., Any] = add
    name: str = 'add'
    description: str = 'Add two numbers'
    is_async: bool = False
    inject: frozenset = frozenset()  # any collection of names: the pipeline only iterates it and asks `in`
    fold: str | None = None
    requires_confirmation: bool = False
    confirm: Any = None
    pre_hook: Any = None
    post_hook: Any = None
    middleware: tuple = ()
    timeout: float | None = None
    retries: int = 0
    retry_on: tuple | None = None
    retry_delay: float = 0.0
    hints: dict = field(default_factory=dict)
    max_chars: int | None = 100
    stop_after: bool = False
    plan: Plan = field(default_factory=lambda: Plan(add, False, None, None, ()))

def _bare(**kw) -> Bare:
    b = Bare(**kw)
    return Bare(**kw, plan=Plan(b.fn, False, None, None, (b.confirm, b.pre_hook, b.post_hook, *b.middleware)))

def test_an_object_that_is_no_tool_runs_through_the_pipeline_its_arguments_coerced():
    r = pipeline.execute(_bare(), {'a': '1', 'b': 2}, None, 'c1')
    assert (r.status, r.value, r.call_id, r.name) == ('success', 3, 'c1', 'add')

def test_the_pipeline_hands_the_object_itself_to_its_hooks_and_middleware():
    seen = []
    def pre(t, args): seen.append(('pre', t)); return {**args, 'b': 10}
    def mw(t, args, call_next): seen.append(('mw', t)); return call_next()
    b = _bare(pre_hook=pre, middleware=(mw,))
    r = pipeline.execute(b, {'a': 1, 'b': 2}, None, None)
    assert r.value == 11 and seen == [('pre', b), ('mw', b)]

def greet(name: str, user: str) -> str: return f'{name}, from {user}'
def greet_as_the_model_sees_it(name: str) -> str: raise NotImplementedError

def test_the_objects_injected_parameters_come_from_the_application_only():
    b = Bare(fn=greet, name='greet', inject=frozenset({'user'}), plan=Plan(greet_as_the_model_sees_it, False, None, None, ()))
    assert pipeline.execute(b, {'name': 'hi'}, {'user': 'ann', 'other': 1}, None).value == 'hi, from ann'
    r = pipeline.execute(b, {'name': 'hi', 'user': 'mallory'}, {'user': 'ann'}, None)  # the model may not name it
    assert (r.status, r.failure) == ('failure', 'arguments') and 'supplied by the application' in r.error
    with pytest.raises(TypeError, match="needs 'user'"):  # the developer's mistake: raised, never the model's to read
        pipeline.execute(b, {'name': 'hi'}, {}, None)

def test_a_bad_call_of_the_object_is_a_failure_result_never_an_exception():
    r = pipeline.execute(_bare(), {'a': 'one', 'b': 2}, None, None)
    assert (r.status, r.failure) == ('failure', 'arguments') and 'a' in r.error

def test_the_object_asks_for_confirmation_and_is_pending_without_anyone_to_ask():
    r = pipeline.execute(_bare(requires_confirmation=True), {'a': 1, 'b': 2}, None, 'c2')
    assert (r.status, r.value) == ('pending', None)

def test_the_objects_timeout_bounds_its_run_on_the_loop():
    import time
    def slow(a: int, b: int) -> int: time.sleep(0.5); return a + b
    r = asyncio.run(pipeline.run(_bare(fn=slow, timeout=0.05), {'a': 1, 'b': 2}, None, None, None, False))
    assert (r.status, r.failure) == ('failure', 'timeout')

def test_a_batch_runs_the_object_whole_in_worker_threads():
    b = batches.Batch([(_bare(), 'add', {'a': 1, 'b': 2}, 'x'), (_bare(), 'add', {'a': 3, 'b': 4}, 'y'),
                       (None, 'nope', {}, 'z')], ['add'], {})
    rs = batches.batch(b, 4, None)
    assert [(r.status, r.value, r.call_id) for r in rs] == [('success', 3, 'x'), ('success', 7, 'y'), ('failure', None, 'z')]
    assert rs[2].failure == 'name'

# --- what run_tool_calls takes --------------------------------------------------------------------------------

def _response(*calls) -> dict:
    return {'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': cid, 'type': 'function', 'function': {'name': nm, 'arguments': '{"a": 1, "b": 2}'}} for nm, cid in calls]}}]}

def mul(a: int, b: int) -> int:
    "Multiply two numbers"
    return a * b

@pytest.mark.parametrize('tools', [
    pytest.param([add, Tool(mul)], id='a list of a function and a Tool'),
    pytest.param((add, Tool(mul)), id='a tuple'),
    pytest.param({'add': add, 'mul': Tool(mul)}, id='a dict'),
])
def test_run_tool_calls_takes_every_form_its_type_names(tools):
    for msgs in (run_tool_calls(tools, _response(('add', 'c1'), ('mul', 'c2'))),
                 asyncio.run(run_tool_calls_async(tools, _response(('add', 'c1'), ('mul', 'c2'))))):
        assert [m['content'] for m in msgs] == ['3', '2']
        assert all(isinstance(r, ToolResult) for r in msgs.results)

def test_run_tool_calls_takes_one_function_or_one_tool():
    assert [m['content'] for m in run_tool_calls(add, _response(('add', 'c1')))] == ['3']
    assert [m['content'] for m in run_tool_calls(Tool(mul), _response(('mul', 'c1')))] == ['2']

def test_a_sequence_other_than_a_list_or_tuple_is_refused_as_no_tool():
    class Seq:  # a Sequence to a type checker's eye, not a list: `Tool` refuses it, clearly
        def __len__(self): return 1
        def __getitem__(self, i): return [add][i]
    with pytest.raises(SchemaError, match='not a callable object'):
        run_tool_calls(Seq(), _response(('add', 'c1')))

# --- ToolCall's fields on a NamedTuple base (so a checker reads `kind` as no field): nothing a user sees changed ----------

def test_a_tool_call_is_still_the_three_fields_it_unpacks_as_with_its_kind_apart():
    from funccall import CustomToolCall, ToolCall
    c, cc = ToolCall('add', {'a': 1}, 'c1'), CustomToolCall('run', 'text', 'c2')
    name, args, cid = c
    assert (name, args, cid, len(c), c._fields) == ('add', {'a': 1}, 'c1', 3, ('name', 'arguments', 'id'))
    assert (c.kind, cc.kind, repr(c)) == ('function', 'custom', "ToolCall(name='add', arguments={'a': 1}, id='c1')")
    assert type(cc._replace(arguments='x')) is CustomToolCall and not hasattr(c, '__dict__')
