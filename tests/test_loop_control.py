"""The agent loop under control: traces (OpenTelemetry's in-memory exporter, the `funccall` logger), what a failure
tells the model, per-tool timeouts and retries, approvals that pause and resume (through JSON), stop, rich results
(checked by each provider SDK's own request types), every call answered (custom tool calls, items funccall can't
answer), and the provider options (examples, cache_control, tool_choice, name limits)."""
import asyncio, json, logging, struct, subprocess, sys, threading, zlib
from pathlib import Path

import anthropic.types as at
import mcp.types
import pytest
from anthropic.types import MessageParam, ToolResultBlockParam
from google.genai import types as gtypes
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolChoiceOptionParam, ChatCompletionToolUnionParam
from openai.types.responses import Response, ResponseInputParam, ToolParam as ResponsesToolParam
from openai.types.responses.response_create_params import ToolChoice as ResponsesToolChoice
from pydantic import TypeAdapter

from funccall import (Audio, CustomToolCall, File, Image, SchemaError, StopRun, Tool, ToolCall, ToolResult, Toolbox, ToolTimeout,
                      UnansweredCall, run_tool_calls, run_tool_calls_async, to_anthropic, tool_calls, tool_choice, tool_results)
from funccall.loop.content import parts

_anthropic_msg = TypeAdapter(MessageParam)  # kept alive: its `Iterable` content is validated lazily, while iterated

def run(coro): return asyncio.run(coro)

def png() -> bytes:
    "A real 1x1 PNG"
    def chunk(kind, data): return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1, 1, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(b'\x00\xff\x00\x00')) + chunk(b'IEND', b''))

PDF = b'%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n'

def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b

def boom(x: int) -> int:
    "Fails."
    raise ValueError(f'bad input {x}')

def delete_file(path: str) -> str:
    "Delete a file."
    return f'deleted {path}'

def finish(summary: str) -> str:
    "Say the work is done."
    raise StopRun(f'done: {summary}')

# --- traces ---------------------------------------------------------------------------------------------

@pytest.fixture
def spans():
    "An OpenTelemetry tracer provider with an in-memory exporter, for this test only"
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    exp, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    saved = trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE._done  # the API sets a provider once per process
    trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE._done = None, False
    trace.set_tracer_provider(provider)
    yield exp
    provider.shutdown()
    trace._TRACER_PROVIDER, trace._TRACER_PROVIDER_SET_ONCE._done = saved

def test_each_call_is_an_execute_tool_span(spans):
    tb = Toolbox([add, boom])
    tb.batch([('add', {'a': 1, 'b': '2'}, 'c1'), ('boom', {'x': 3}, 'c2'), ('add', {'a': 'x'}, 'c3'), ('nope', {}, 'c4')])
    by_id = {s.attributes.get('gen_ai.tool.call.id'): s for s in spans.get_finished_spans()}
    assert set(by_id) == {'c1', 'c2', 'c3', 'c4'}  # the refused calls too
    ok = by_id['c1']
    assert ok.name == 'execute_tool add'
    assert {k: ok.attributes[k] for k in ('gen_ai.operation.name', 'gen_ai.tool.name', 'gen_ai.tool.type')} == {
        'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'add', 'gen_ai.tool.type': 'function'}
    assert 'error.type' not in ok.attributes and ok.status.is_ok
    assert [(e.name, dict(e.attributes)) for e in ok.events] == [
        ('funccall.repair', {'funccall.argument': 'b', 'funccall.sent': 'str', 'funccall.made': 'int'})]  # '2' became 2
    assert by_id['c2'].attributes['error.type'] == 'ValueError' and not by_id['c2'].status.is_ok
    assert by_id['c3'].attributes['error.type'] == 'arguments'
    assert [e.name for e in by_id['c3'].events] == ['funccall.problem'] and '- a: expected an integer' in by_id['c3'].events[0].attributes['funccall.message']
    assert by_id['c4'].name == 'execute_tool nope' and by_id['c4'].attributes['error.type'] == 'name'
    assert not any('gen_ai.tool.call.arguments' in s.attributes for s in spans.get_finished_spans())  # content only on opt-in

def test_content_on_opt_in(spans):
    Toolbox([add], trace_content=True).call('add', {'a': 1, 'b': 2}, 'c1')
    [s] = spans.get_finished_spans()
    assert json.loads(s.attributes['gen_ai.tool.call.arguments']) == {'a': 1, 'b': 2} and s.attributes['gen_ai.tool.call.result'] == '3'

def test_the_tools_own_spans_nest_in_its_span(spans):
    from opentelemetry import trace
    def traced() -> str:
        "Makes a span of its own."
        with trace.get_tracer('app').start_as_current_span('inner'): return 'ok'
    run(Toolbox([traced]).acall('traced', {}))  # in a worker thread: the context goes with it
    outer, inner = sorted(spans.get_finished_spans(), key=lambda s: s.name)
    assert (inner.name, outer.name) == ('inner', 'execute_tool traced') and inner.parent.span_id == outer.context.span_id

def test_retries_timeouts_and_pending_are_traced(spans):
    n = []
    def flaky() -> str:
        "Fails once."
        n.append(1)
        if len(n) == 1: raise ConnectionError('reset')
        return 'ok'
    Tool(flaky, read_only=True, retries=1, retry_delay=0.001).execute()
    Tool(delete_file, requires_confirmation=True).execute({'path': 'x'})
    retry, pending = spans.get_finished_spans()
    assert [(e.name, e.attributes['funccall.attempt']) for e in retry.events] == [('funccall.retry', 1)] and 'error.type' not in retry.attributes
    assert [e.name for e in pending.events] == ['funccall.pending'] and pending.attributes['funccall.status'] == 'pending'

def test_the_logger_says_the_same_at_debug(caplog):
    with caplog.at_level(logging.DEBUG, logger='funccall'):
        Toolbox([add, boom]).batch([('add', {'a': 1, 'b': 2}, 'c1'), ('boom', {'x': 1}, 'c2')])
    lines = [r.getMessage() for r in caplog.records if r.name == 'funccall']
    assert 'execute_tool add (call c1) success' in lines and 'execute_tool boom (call c2) failure: tool' in lines

def test_no_opentelemetry_no_import():
    code = ("import sys, funccall\n"
            "def f(x: int) -> int:\n    'Echo.'\n    return x\n"
            "assert funccall.Toolbox([f]).call('f', {'x': 1}).value == 1\n"
            "print([m for m in sys.modules if m.startswith('opentelemetry')])")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '[]'

def test_on_result_sees_every_result():
    seen = []
    tb = Toolbox([add, Tool(delete_file, requires_confirmation=True)], on_result=seen.append)
    tb.call('add', {'a': 1, 'b': 2}); tb.call('nope', {})
    [p] = [r for r in tb.batch([('delete_file', {'path': 'a'}, 'c1')])]
    tb.resume(p, approve=False)
    assert [(r.name, r.status, r.failure) for r in seen] == [('add', 'success', None), ('nope', 'failure', 'name'),
                                                             ('delete_file', 'pending', None), ('delete_file', 'failure', 'declined')]

# --- what a failure tells the model ----------------------------------------------------------------------

def test_no_traceback_by_default_the_exception_kept():
    r = Toolbox([boom]).call('boom', {'x': 83})
    assert r.error == 'ValueError: bad input 83' and r.failure == 'tool'
    assert isinstance(r.exception, ValueError) and r.exception.args == ('bad input 83',)
    assert 'File' not in r.error and 'line' not in r.error

@pytest.mark.parametrize('args,kind', [({'a': 'x', 'b': 1}, 'arguments'), ('{"a": ', 'arguments')])
def test_failure_kinds(args, kind):
    r = Toolbox([add]).call('add', args)
    assert r.failure == kind and r.attempts == 1

# --- timeouts and retries ----------------------------------------------------------------------------

def blocker():
    "A sync tool that waits for `release`, and whether it was still waiting when its caller gave up"
    release = threading.Event()
    def wait() -> str:
        "Wait to be released."
        release.wait(30)
        return 'released'
    return wait, release

@pytest.mark.parametrize('how', ['execute', 'aexecute', 'call', 'acall', 'batch'])
def test_timeout_bounds_every_way_in(how):
    wait, release = blocker()
    t = Tool(wait, timeout=0.2)
    tb = Toolbox([t])
    try:
        r = {'execute': lambda: t.execute(), 'aexecute': lambda: run(t.aexecute()), 'call': lambda: tb.call('wait'),
             'acall': lambda: run(tb.acall('wait')), 'batch': lambda: tb.batch([('wait', {})])[0]}[how]()
        assert not release.is_set()  # the tool was still waiting: the result came from the timeout, not the tool
    finally: release.set()
    assert r.failure == 'timeout' and isinstance(r.exception, ToolTimeout)
    assert r.error == "TimeoutError: tool 'wait' did not finish within 0.2 s"

def test_an_async_tool_times_out_and_is_cancelled():
    cancelled = []
    async def nap() -> str:
        "Sleeps long."
        try: await asyncio.sleep(30)
        except asyncio.CancelledError: cancelled.append(1); raise
        return 'woke'
    r = run(Tool(nap, timeout=0.1).aexecute())
    assert r.failure == 'timeout' and cancelled == [1]

def flaky_tool(fails: int, exc=ConnectionError):
    calls = []
    def fetch(url: str) -> str:
        "Fetch a page."
        calls.append(url)
        if len(calls) <= fails: raise exc('reset by peer')
        return f'page {url}'
    return fetch, calls

def test_retries_for_a_read_only_tool():
    fetch, calls = flaky_tool(2)
    r = Tool(fetch, read_only=True, retries=2, retry_delay=0.001).execute({'url': 'u'})
    assert r.ok and r.value == 'page u' and r.attempts == 3 and len(calls) == 3

def test_retries_give_up_after_n():
    fetch, calls = flaky_tool(5)
    r = run(Tool(fetch, idempotent=True, retries=2, retry_delay=0.001).aexecute({'url': 'u'}))
    assert r.failure == 'tool' and r.attempts == 3 and len(calls) == 3 and isinstance(r.exception, ConnectionError)

def test_no_retry_by_default_for_a_tool_that_may_change_things():
    fetch, calls = flaky_tool(1)
    with pytest.raises(ValueError, match='idempotent=True or read_only=True, or .* retry_on='): Tool(fetch, retries=3)
    r = Tool(fetch, idempotent=False, read_only=False, retry_on=(KeyError,), retries=3, retry_delay=0.001).execute({'url': 'u'})
    assert r.failure == 'tool' and len(calls) == 1  # a ConnectionError isn't named: not retried

def test_retry_on_names_what_to_retry():
    fetch, calls = flaky_tool(1)
    assert Tool(fetch, retries=1, retry_on=(ConnectionError,), retry_delay=0.001).execute({'url': 'u'}).ok and len(calls) == 2
    fetch, calls = flaky_tool(1, KeyError)
    assert not Tool(fetch, read_only=True, retries=1, retry_on=(ConnectionError,), retry_delay=0.001).execute({'url': 'u'}).ok
    assert len(calls) == 1

def test_the_models_mistake_is_never_retried():
    fetch, calls = flaky_tool(0)
    r = Tool(fetch, read_only=True, retries=3, retry_delay=0.001).execute({'link': 'u'})
    assert r.failure == 'arguments' and calls == [] and r.attempts == 1

def test_a_timeout_is_retried_and_each_attempt_bounded():
    release, n = threading.Event(), []
    def slow_once() -> str:
        "Hangs the first time."
        n.append(1)
        if len(n) == 1: release.wait(30)
        return 'second try'
    try:
        r = Tool(slow_once, read_only=True, timeout=0.2, retries=1, retry_delay=0.001).execute()
        assert not release.is_set()
    finally: release.set()
    assert r.ok and r.value == 'second try' and r.attempts == 2

@pytest.mark.parametrize('kw', [{'timeout': 0}, {'timeout': -1}, {'timeout': '5'}, {'retries': -1}, {'retries': 1.5}])
def test_bad_timeout_or_retries(kw):
    with pytest.raises(ValueError): Tool(add, **kw)

# --- approvals that pause ---------------------------------------------------------------------------------

def claude_response(*calls) -> dict:
    return {'id': 'msg_1', 'type': 'message', 'role': 'assistant', 'model': 'claude-sonnet-4-5', 'stop_reason': 'tool_use',
            'stop_sequence': None, 'usage': {'input_tokens': 10, 'output_tokens': 10},
            'content': [{'type': 'tool_use', 'id': i, 'name': n, 'input': a} for n, a, i in calls]}

def test_pending_round_trip_through_json():
    ran = []
    def remove(path: str) -> str:
        "Delete a file."
        ran.append(path)
        return f'deleted {path}'
    tb = Toolbox([add, Tool(remove, requires_confirmation=True)], secret='s' * 32)
    msgs = run_tool_calls(tb, claude_response(('add', {'a': 1, 'b': 2}, 'toolu_1'), ('remove', {'path': '/tmp/x'}, 'toolu_2')))
    [p] = msgs.pending
    assert (p.status, p.call_id, p.arguments) == ('pending', 'toolu_2', {'path': '/tmp/x'}) and ran == []
    assert [b['tool_use_id'] for b in msgs[0]['content']] == ['toolu_1']  # only the answered call
    saved = json.dumps([r.to_dict() for r in msgs.results])  # the web app keeps the turn while its user decides
    done, pending = [ToolResult.from_dict(d) for d in json.loads(saved)]
    assert done.value == 3 and pending == p
    with pytest.raises(ValueError, match='waits for the user'): tool_results(msgs.results, 'anthropic')
    resumed = Toolbox([add, Tool(remove, requires_confirmation=True)], secret='s' * 32).resume(json.loads(saved)[1], approve=True)  # another process
    assert resumed.ok and resumed.value == 'deleted /tmp/x' and resumed.call_id == 'toolu_2' and ran == ['/tmp/x']
    [m] = tool_results([done, resumed], 'anthropic')
    assert [b['tool_use_id'] for b in m['content']] == ['toolu_1', 'toolu_2']
    list(_anthropic_msg.validate_python(m)['content'])

def test_resume_declined_and_edited():
    tb = Toolbox([Tool(add, requires_confirmation=True)])
    p = tb.call('add', {'a': 1, 'b': 2}, 'c9')
    no = tb.resume(p, approve=False)
    assert (no.status, no.failure, no.call_id) == ('failure', 'declined', 'c9') and 'declined' in no.error
    assert tb.resume(p, arguments={'a': 10, 'b': '5'}).value == 15  # edited, and coerced like the model's
    bad = run(tb.aresume(tb.call('add', {'a': 1, 'b': 2}, 'c10').to_dict(), arguments={'a': 'ten'}))
    assert bad.failure == 'arguments' and "- a: expected an integer, got 'ten'" in bad.error  # checked again
    with pytest.raises(ValueError, match='Only a pending result'): tb.resume(no)
    with pytest.raises(ValueError, match="Not a ToolResult"): tb.resume({'name': 'add'})

def test_a_confirm_callback_still_answers_at_once():
    r = Toolbox([Tool(add, requires_confirmation=True, confirm=lambda t, a: True)]).call('add', {'a': 1, 'b': 1})
    assert r.ok and r.value == 2

# --- stop -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('mode', ['sync', 'async'])
def test_stop_is_seen_and_every_call_answered(mode):
    tb = Toolbox([add, finish, Tool(delete_file, stop_after=True)])
    response = claude_response(('add', {'a': 1, 'b': 2}, 't1'), ('finish', {'summary': 'ok'}, 't2'), ('delete_file', {'path': 'p'}, 't3'))
    msgs = run_tool_calls(tb, response) if mode == 'sync' else run(run_tool_calls_async(tb, response))
    assert msgs.stop and [r.stop for r in msgs.results] == [False, True, True]
    blocks = msgs[0]['content']
    assert [(b['tool_use_id'], b['content'], b['is_error']) for b in blocks] == [
        ('t1', '3', False), ('t2', 'done: ok', False), ('t3', 'deleted p', False)]
    assert not run_tool_calls(Toolbox([add]), claude_response(('add', {'a': 1, 'b': 2}, 't1'))).stop

def test_no_calls_no_stop():
    msgs = run_tool_calls(Toolbox([add]), {'role': 'assistant', 'content': 'Hi'})
    assert msgs == [] and msgs.results == [] and not msgs.stop and msgs.pending == []

# --- rich results -----------------------------------------------------------------------------------------

def chart() -> list:
    "A chart and its caption."
    return ['Sales by month', Image(png()), File(PDF, 'application/pdf', name='report.pdf')]

def snapshot() -> Image:
    "A picture."
    return Image(png())

def voice() -> list:
    "A recording."
    return ['Listen:', Audio(b'RIFF....WAVEfmt ', 'audio/wav')]

RICH = [('chart', {}, 'c1'), ('snapshot', {}, 'c2'), ('voice', {}, 'c3'), ('add', {'a': 1, 'b': 2}, 'c4')]

def rich_results() -> list: return Toolbox([chart, snapshot, voice, add]).batch(RICH)

def test_rich_text_for_the_model():
    r = rich_results()
    assert r[0].text == 'Sales by month\n[image (image/png)]\n[file report.pdf (application/pdf)]'
    assert r[1].text == '[image (image/png)]' and r[3].text == '3'

def test_rich_anthropic_blocks():
    [m] = tool_results(rich_results(), 'anthropic')
    list(_anthropic_msg.validate_python(m)['content'])
    for b in m['content']: TypeAdapter(ToolResultBlockParam).validate_python(b)
    chart_blocks = m['content'][0]['content']
    assert [b['type'] for b in chart_blocks] == ['text', 'image', 'document']
    assert chart_blocks[1]['source'] == {'type': 'base64', 'media_type': 'image/png', 'data': Image(png()).b64()}
    assert "Claude can't take audio" in m['content'][2]['content'][1]['text']  # left out, saying so
    assert m['content'][3]['content'] == '3'

def test_rich_responses_items():
    out = tool_results(rich_results(), 'openai_responses')
    TypeAdapter(ResponseInputParam).validate_python(out)
    assert [i['type'] for i in out[0]['output']] == ['input_text', 'input_image', 'input_file']
    assert out[0]['output'][1]['image_url'].startswith('data:image/png;base64,') and out[0]['output'][2]['filename'] == 'report.pdf'
    assert out[3]['output'] == '3'

def test_rich_chat_completions_text_then_a_user_message():
    msgs = tool_results(rich_results(), 'openai')
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(msgs)
    assert [m['role'] for m in msgs] == ['tool'] * 4 + ['user']  # every tool message first, then the media
    assert msgs[0]['content'] == ('Sales by month\n[image (image/png)] (sent in the next user message)\n'
                                  '[file report.pdf (application/pdf)] (sent in the next user message)')
    kinds = [p['type'] for p in msgs[4]['content']]
    assert kinds == ['text', 'image_url', 'file', 'text', 'image_url', 'text', 'input_audio']

def test_rich_gemini_parts():
    [m] = tool_results(rich_results(), 'gemini')
    c = gtypes.Content.model_validate(m)
    fr = c.parts[0].function_response
    assert fr.response == {'output': 'Sales by month\n[image (image/png)]\n[file report.pdf (application/pdf)]'}
    assert [(p.inline_data.mime_type, p.inline_data.data) for p in fr.parts] == [('image/png', png()), ('application/pdf', PDF)]

def test_rich_results_survive_json():
    r = rich_results()[0]
    back = ToolResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.value == r.value and back.text == r.text

def test_rich_mcp_content_and_paths(tmp_path):
    from funccall.loop.content import mcp as mcp_content
    f = tmp_path / 'pic.png'
    f.write_bytes(png())
    img = Image(f)
    assert img.mime_type == 'image/png' and img.data == png() and img == Image(png())
    res = mcp.types.CallToolResult.model_validate({'content': mcp_content(parts(['x', img, Audio(b'ab', 'audio/wav'), File(PDF, 'application/pdf')]))})
    assert [type(c).__name__ for c in res.content] == ['TextContent', 'ImageContent', 'AudioContent', 'EmbeddedResource']
    with pytest.raises(TypeError): Image(42)

# --- every call answered ----------------------------------------------------------------------------------

def run_code(code: str) -> str:
    "Run a snippet of Python."
    return f'ran {len(code)} characters'

def responses_payload(*items) -> dict:
    return {'id': 'resp_1', 'object': 'response', 'created_at': 1, 'model': 'gpt-5', 'status': 'completed', 'parallel_tool_calls': True,
            'tool_choice': 'auto', 'tools': [], 'output': list(items)}

REASONING = {'type': 'reasoning', 'id': 'rs_1', 'summary': []}
FUNCTION = {'type': 'function_call', 'id': 'fc_1', 'call_id': 'call_1', 'name': 'add', 'arguments': '{"a": 1, "b": 2}', 'status': 'completed'}
CUSTOM = {'type': 'custom_tool_call', 'id': 'ctc_1', 'call_id': 'call_2', 'name': 'run_code', 'input': 'print("hi")\nx = {"a": 1}'}
SEARCH = {'type': 'tool_search_call', 'id': 'ts_1', 'call_id': 'call_3', 'arguments': {'query': 'x'}, 'execution': 'server', 'status': 'completed'}

def test_custom_tool_calls_are_run_and_answered():
    payload = responses_payload(REASONING, FUNCTION, CUSTOM, SEARCH)
    Response.model_validate(payload)  # the shape the SDK reads
    tb = Toolbox([add, Tool(run_code, text_input=True)])
    assert tool_calls(payload) == [ToolCall('add', {'a': 1, 'b': 2}, 'call_1'), CustomToolCall('run_code', CUSTOM['input'], 'call_2')]
    msgs = run_tool_calls(tb, Response.model_validate(payload))
    TypeAdapter(ResponseInputParam).validate_python(msgs)
    assert msgs == [{'type': 'function_call_output', 'call_id': 'call_1', 'output': '3'},
                    {'type': 'custom_tool_call_output', 'call_id': 'call_2', 'output': f"ran {len(CUSTOM['input'])} characters"}]  # the text as it came

def test_a_custom_call_of_a_function_tool_is_answered_with_an_error():
    msgs = run_tool_calls(Toolbox([add, run_code]), responses_payload(CUSTOM))
    assert msgs[0]['type'] == 'custom_tool_call_output' and msgs[0]['output'].startswith('ToolInputError')

def test_chat_custom_calls():
    message = {'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': 'call_7', 'type': 'custom', 'custom': {'name': 'run_code', 'input': '1 + 1'}}]}
    msgs = run_tool_calls(Toolbox([Tool(run_code, text_input=True)]), {'choices': [{'index': 0, 'message': message, 'finish_reason': 'tool_calls'}]})
    assert msgs == [{'role': 'tool', 'tool_call_id': 'call_7', 'content': 'ran 5 characters'}]
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python([message, *msgs])

@pytest.mark.parametrize('item', [
    {'type': 'computer_call', 'id': 'cu_1', 'call_id': 'call_9', 'action': {'type': 'screenshot'}, 'pending_safety_checks': [], 'status': 'completed'},
    {'type': 'teleport_call', 'id': 'x_1', 'call_id': 'call_9'},  # a type funccall doesn't know
], ids=['computer_call', 'unknown'])
def test_calls_funccall_cannot_answer_raise(item):
    payload = responses_payload(FUNCTION, item)
    with pytest.raises(UnansweredCall, match=item['type']): run_tool_calls(Toolbox([add]), payload)
    assert tool_calls(payload, others='skip') == [ToolCall('add', {'a': 1, 'b': 2}, 'call_1')]
    chat = {'role': 'assistant', 'tool_calls': [{'id': 'c', 'type': 'mystery'}]}
    with pytest.raises(UnansweredCall, match='mystery'): tool_calls(chat)

def test_text_input_tools_render_as_custom_tools():
    lark = {'syntax': 'lark', 'definition': 'start: "SELECT " /[a-z]+/'}
    plain, constrained = Tool(run_code, text_input=True), Tool(run_code, name='sql', grammar=lark)
    chat = Toolbox([plain, constrained]).definitions('openai')
    TypeAdapter(list[ChatCompletionToolUnionParam]).validate_python(chat)
    assert chat[0] == {'type': 'custom', 'custom': {'name': 'run_code', 'description': plain.description, 'format': {'type': 'text'}}}
    assert chat[1]['custom']['format'] == {'type': 'grammar', 'grammar': lark}
    resp = Toolbox([plain, constrained]).definitions('responses')
    TypeAdapter(list[ResponsesToolParam]).validate_python(resp)
    assert resp[1] == {'type': 'custom', 'name': 'sql', 'description': plain.description, 'format': {'type': 'grammar', **lark}}
    assert Toolbox([plain]).definitions('anthropic')[0]['input_schema']['required'] == ['code']  # a function with one string elsewhere
    with pytest.raises(SchemaError, match='one str parameter'): Tool(add, text_input=True)
    with pytest.raises(SchemaError, match='grammar'): Tool(run_code, grammar={'syntax': 'ebnf', 'definition': ''})

# --- provider options ---------------------------------------------------------------------------------------

def test_examples_become_input_examples_checked():
    t = Tool(add, examples=[{'a': 1, 'b': 2}], provider_options={'anthropic': {'cache_control': {'type': 'ephemeral'}}})
    d = t.definition('anthropic')
    TypeAdapter(at.ToolParam).validate_python(d)
    assert d['input_examples'] == [{'a': 1, 'b': 2}] and d['cache_control'] == {'type': 'ephemeral'}
    assert 'cache_control' not in t.definition('openai') and 'input_examples' not in t.definition('responses')
    with pytest.raises(SchemaError, match=r"example 1 doesn't fit .*'b'"): Tool(add, examples=[{'a': 1, 'b': 2}, {'a': 1, 'b': 'two'}])
    with pytest.raises(SchemaError, match='not an object'): Tool(add, examples=[[1, 2]])

def test_provider_options_for_responses():
    d = Tool(add, provider_options={'responses': {'defer_loading': True}}).definition('responses')
    TypeAdapter(ResponsesToolParam).validate_python(d)
    assert d['defer_loading'] is True

def test_claude_names_up_to_128():
    long = 'a' * 100
    assert to_anthropic({'name': long, 'description': 'x', 'input_schema': {'type': 'object', 'properties': {}}})['name'] == long
    with pytest.raises(SchemaError, match='not valid for Anthropic'):
        to_anthropic({'name': 'a' * 129, 'description': 'x', 'input_schema': {'type': 'object', 'properties': {}}})

@pytest.mark.parametrize('args', [('auto',), ('required',), ('none',), ('required', 'add'), ('auto', ['add', 'boom']),
                                  ('required', ['add', 'boom'])])
def test_tool_choice_openai(args):
    chat, resp = tool_choice('openai', *args), tool_choice('responses', *args)
    TypeAdapter(ChatCompletionToolChoiceOptionParam).validate_python(chat['tool_choice'])
    TypeAdapter(ResponsesToolChoice).validate_python(resp['tool_choice'])
    if isinstance(args[-1], list): assert chat['tool_choice']['type'] == resp['tool_choice']['type'] == 'allowed_tools'

def test_tool_choice_anthropic_and_gemini():
    assert tool_choice('anthropic', 'required') == {'tool_choice': {'type': 'any'}}
    c = tool_choice('anthropic', 'required', add, parallel=False)
    TypeAdapter(at.ToolChoiceParam).validate_python(c['tool_choice'])
    assert c == {'tool_choice': {'type': 'tool', 'name': 'add', 'disable_parallel_tool_use': True}}
    with pytest.raises(ValueError, match='one tool at most'): tool_choice('anthropic', 'required', ['add', 'boom'])
    g = tool_choice('gemini', 'required', [Tool(add)])
    assert gtypes.GenerateContentConfig(**g).tool_config.function_calling_config.allowed_function_names == ['add']
    assert tool_choice('gemini', 'auto', ['add'])['tool_config']['function_calling_config']['mode'] == 'VALIDATED'
    with pytest.raises(ValueError, match='mode'): tool_choice('openai', 'sometimes')
    with pytest.raises(ValueError, match='Unknown provider'): tool_choice('cohere')

# --- the README's block runs ----------------------------------------------------------------------------

def test_readme_loop_control_block():
    "The README's block, after the blocks before it (the stand-in model's `reply`): each call answered in the provider's types, by id"
    from readme_blocks import blocks, run_shown
    ns = {}
    for b in blocks((Path(__file__).parent.parent / 'README.md').read_text()):
        run_shown(b['src'], ns, f"<README.md line {b['line']}>")
        if 'def delete_order' in b['src']: break
    [m] = ns['messages'][2:]
    list(_anthropic_msg.validate_python(m)['content'])
    assert [b['tool_use_id'] for b in m['content']] == ['t1', 't2', 't3', 't4'] and ns['stop']
    assert m['content'][1]['content'] == 'deleted 7' and m['content'][2]['content'][1]['type'] == 'image'
    assert sorted(ns['log'][:4]) == [('delete_order', 'pending'), ('fetch', 'success'), ('finish', 'success'), ('snapshot', 'success')]
    assert ns['log'][4] == ('delete_order', 'success')  # the batch's results as they come, then the resumed call

# --- MCP: rich content, the trace context in `_meta` ---------------------------------------------------------

def mcp_call(server, name, args, **kw):
    from mcp import Client
    async def go():
        async with Client(server) as c: return await c.call_tool(name, args, **kw)
    return run(asyncio.wait_for(go(), 20))

def test_mcp_server_sends_rich_content():
    from funccall.mcp import mk_server
    r = mcp_call(mk_server([chart, voice]), 'chart', {})
    assert [c.type for c in r.content] == ['text', 'image', 'resource'] and not r.is_error
    assert r.content[1].mime_type == 'image/png' and r.content[1].data == Image(png()).b64()
    assert r.content[2].resource.mime_type == 'application/pdf'
    assert [c.type for c in mcp_call(mk_server([voice]), 'voice', {}).content] == ['text', 'audio']

def test_mcp_client_sends_the_trace_context(spans):
    from opentelemetry import trace
    from funccall.mcp import MCPClient
    from mcp.server import Server
    seen = []
    echo = mcp.types.Tool(name='echo', description='Echo', input_schema={'type': 'object', 'properties': {'t': {'type': 'string'}}})
    async def list_tools(ctx, params): return mcp.types.ListToolsResult(tools=[echo])
    async def call_tool(ctx, params):
        seen.append(params.meta)
        return mcp.types.CallToolResult(content=[mcp.types.TextContent(text=params.arguments['t'])])
    with MCPClient(Server('rec', on_list_tools=list_tools, on_call_tool=call_tool), timeout=20) as c:
        with trace.get_tracer('app').start_as_current_span('agent turn') as turn:
            assert c.tools()['echo'](t='hi') == 'hi'
    traceparent = (seen[0] or {}).get('traceparent')  # the request's `_meta`
    assert traceparent.split('-')[:3] == ['00', f'{turn.get_span_context().trace_id:032x}', f'{turn.get_span_context().span_id:016x}']

def test_mcp_server_joins_the_callers_trace(spans):
    from funccall.mcp import mk_server
    trace_id, span_id = 0x0af7651916cd43dd8448eb211c80319c, 0xb7ad6b7169203331
    mcp_call(mk_server([add]), 'add', {'a': 1, 'b': 2}, meta={'traceparent': f'00-{trace_id:032x}-{span_id:016x}-01'})
    [s] = spans.get_finished_spans()
    assert s.name == 'execute_tool add' and s.context.trace_id == trace_id and s.parent.span_id == span_id

def test_mcp_server_media_only_tool_has_no_output_schema():
    from funccall.mcp import mk_server, output_schema
    assert output_schema(Tool(snapshot)) is None
    r = mcp_call(mk_server([snapshot]), 'snapshot', {})
    assert [c.type for c in r.content] == ['image'] and r.structured_content is None

def test_check_reports_an_example_that_does_not_fit(tmp_path, capsys):
    from funccall.cli import main
    f = tmp_path / 'mytools.py'
    f.write_text("from funccall import Tool\n\ndef add(a: int, b: int) -> int:\n    'Add two numbers.'\n    return a + b\n\n"
                 "tools = [Tool(add, examples=[{'a': 1, 'b': 'two'}])]\n")
    assert main(['check', str(f)]) != 0
    assert "example 0 doesn't fit its schema (b: expected an integer, got 'two')" in capsys.readouterr().err

def test_tool_choice_of_a_custom_tool():
    t = Tool(run_code, text_input=True)
    chat, resp = tool_choice('openai', 'required', t), tool_choice('responses', 'required', [t, 'add'])
    TypeAdapter(ChatCompletionToolChoiceOptionParam).validate_python(chat['tool_choice'])
    TypeAdapter(ResponsesToolChoice).validate_python(resp['tool_choice'])
    assert chat['tool_choice'] == {'type': 'custom', 'custom': {'name': 'run_code'}}
    assert resp['tool_choice']['tools'] == [{'type': 'custom', 'name': 'run_code'}, {'type': 'function', 'name': 'add'}]

def test_a_call_expression_that_cannot_be_read_is_the_models_mistake():
    seen = []
    [r] = Toolbox([add], on_result=seen.append).call_expr('add(1, ')
    assert r.failure == 'arguments' and seen == [r]

def test_an_mcp_servers_images_pass_through_to_each_provider():
    "What an MCPClient tool returns for an image (its MCP JSON item) goes out as an image, not as base64 text"
    from funccall.loop.content import mcp as mcp_content
    item = {'type': 'image', 'data': Image(png()).b64(), 'mimeType': 'image/png'}
    def proxied() -> list:
        "An MCP server's picture, as MCPClient returns it."
        return [item, 'a tiny image']
    [r] = Toolbox([proxied]).batch([('proxied', {}, 't1')])
    [m] = tool_results([r], 'anthropic')
    assert [b['type'] for b in m['content'][0]['content']] == ['image', 'text']
    assert mcp_content(parts(r.value)) == [item, {'type': 'text', 'text': 'a tiny image'}]  # back to MCP unchanged
    assert parts([{'type': 'image', 'data': 'not base64!', 'mimeType': 'image/png'}]) is None  # only real items
    assert parts({'type': 'image', 'note': 'a dict of mine'}) is None

def test_a_call_run_sync_inside_a_loop_is_a_span_of_the_callers(spans):
    from opentelemetry import trace
    async def anap() -> str:
        "Async."
        return 'ok'
    from opentelemetry.sdk.trace import SpanProcessor
    started = []
    class Count(SpanProcessor):
        def on_start(self, span, parent_context=None): started.append(span.name)
    trace.get_tracer_provider().add_span_processor(Count())
    async def main():  # inside a running loop: run in a thread of its own, in a copy of this context (its current span)
        with trace.get_tracer('app').start_as_current_span('turn') as turn: return Tool(anap).execute(), turn
    r, turn = run(main())
    assert r.ok and r.value == 'ok' and started == ['turn', 'execute_tool anap']
    [span] = [s for s in spans.get_finished_spans() if s.name == 'execute_tool anap']
    assert span.parent.span_id == turn.get_span_context().span_id  # the caller's span, through the copied context
    assert not trace.get_current_span().get_span_context().is_valid  # none left open here
