"""Streamed responses: `ToolCallStream` over real server-sent-event bytes read by the providers' own SDK clients (an
`httpx` mock transport stands in for the API), checked against each SDK's own accumulated final message and against
funccall's `tool_calls` of it; `run_tool_calls` starting calls while the stream still runs; malformed (eager) arguments
answered as a finished response's are; a property test over the real tool corpus, arguments cut anywhere and calls
interleaved."""
import asyncio, json, threading, time

import pytest
from conftest import examples
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from funccall import CustomToolCall, Tool, Toolbox, ToolCall, ToolCallStream, UnansweredCall, run_tool_calls, run_tool_calls_async, tool_calls
from funccall.loop.stream import is_stream
from sse import anthropic_client, chat_client, events, gemini_client, script, split, sse

CALLS = [('call_1', 'get_weather', {'city': 'Lisbon', 'unit': 'C', 'days': [1, 2.5], 'note': 'caf\u00e9 \U0001F600 "q"\n'}),
         ('call_2', 'list_orders', {})]
TEXTS = ['Let me ', 'check.']

def _pieces(calls, step=3):
    return [split(json.dumps(a), range(0, 10**4, step)) for _, _, a in calls]

def _expected(calls) -> list[ToolCall]: return [ToolCall(nm, a, cid) for cid, nm, a in calls]

def _no_stream_artifacts(d):
    "An SDK accumulator's message without what only streaming adds: `index` on each call, and nulls or '' for no text"
    if isinstance(d, dict): return {k: _no_stream_artifacts(v) for k, v in d.items() if k != 'index' and v not in (None, '')}
    if isinstance(d, list): return [_no_stream_artifacts(x) for x in d]
    return d

# --- the SDKs' own streams and accumulators ---------------------------------------------------------------------

def test_openai_chat_stream_equals_sdk_accumulation():
    from openai.lib.streaming.chat import ChatCompletionStreamState
    body = sse('openai', events('openai', CALLS, script(CALLS, TEXTS, _pieces(CALLS))))
    stream, state, got = ToolCallStream(), ChatCompletionStreamState(), []
    for chunk in chat_client(body).chat.completions.create(model='gpt-4.1', messages=[], stream=True):
        got += stream.feed(chunk)
        state.handle_chunk(chunk)
    final = state.get_final_completion()
    assert stream.provider == 'openai' and stream.calls == got == tool_calls(final) == _expected(CALLS)
    assert stream.message() == _no_stream_artifacts(final.choices[0].message.model_dump(exclude_none=True))
    assert stream.text == 'Let me check.' and stream.stop_reason == 'tool_calls' and stream.partial == {}

def test_openai_chat_stream_helper_events():
    "`client.chat.completions.stream()` yields its own events: the `chunk` ones carry the chunks"
    body = sse('openai', events('openai', CALLS, script(CALLS, (), _pieces(CALLS, 1))))
    stream = ToolCallStream()
    with chat_client(body).chat.completions.stream(model='gpt-4.1', messages=[]) as s:
        for e in s: stream.feed(e)
        final = s.get_final_completion()
    assert stream.calls == tool_calls(final) == _expected(CALLS)
    assert stream.message() == {**_no_stream_artifacts(final.choices[0].message.model_dump(exclude_none=True)), 'content': None}

def test_openai_responses_stream_equals_sdk_final_response():
    body = sse('openai_responses', events('openai_responses', CALLS, script(CALLS, TEXTS, _pieces(CALLS))))
    stream, got = ToolCallStream(), []
    with chat_client(body).responses.stream(model='gpt-4.1', input=[]) as s:
        for e in s: got += stream.feed(e)
        final = s.get_final_response()
    assert stream.provider == 'openai_responses' and stream.calls == got == tool_calls(final) == _expected(CALLS)
    assert stream.message() == [o.model_dump(exclude_none=True) for o in final.output]
    assert stream.text == 'Let me check.' and stream.stop_reason == 'completed'

def test_openai_responses_create_stream_true():
    body = sse('openai_responses', events('openai_responses', CALLS, script(CALLS, (), _pieces(CALLS, 1))))
    stream = ToolCallStream()
    for e in chat_client(body).responses.create(model='gpt-4.1', input=[], stream=True): stream.feed(e)
    assert stream.calls == _expected(CALLS) and tool_calls(stream.message(), 'openai_responses') == stream.calls

def test_anthropic_stream_equals_sdk_final_message():
    body = sse('anthropic', events('anthropic', CALLS, script(CALLS, TEXTS, _pieces(CALLS))))
    stream, got = ToolCallStream(), []
    with anthropic_client(body).messages.stream(model='claude', max_tokens=100, messages=[]) as s:
        for e in s: got += stream.feed(e)  # the helper's own `text` and `input_json` events come too: they are skipped
        final = s.get_final_message()
    assert stream.provider == 'anthropic' and stream.calls == got == tool_calls(final) == _expected(CALLS)
    assert stream.message() == {'role': 'assistant', 'content': [b.model_dump(exclude_none=True) for b in final.content]}
    assert stream.text == 'Let me check.' and stream.stop_reason == 'tool_use'

def test_anthropic_create_stream_true():
    body = sse('anthropic', events('anthropic', CALLS, script(CALLS, TEXTS, _pieces(CALLS, 1))))
    stream = ToolCallStream()
    for e in anthropic_client(body).messages.create(model='claude', max_tokens=100, messages=[], stream=True): stream.feed(e)
    assert stream.calls == _expected(CALLS) and tool_calls(stream.message()['content']) == stream.calls

def test_anthropic_thinking_and_citations_come_back_as_the_sdk_accumulates_them():
    "With extended thinking, the thinking block (and its signature) must go back unchanged with the tool calls"
    evs = [{'type': 'message_start', 'message': {'id': 'msg_1', 'type': 'message', 'role': 'assistant', 'content': [], 'model': 'claude',
                                                 'stop_reason': None, 'stop_sequence': None, 'usage': {'input_tokens': 1, 'output_tokens': 1}}},
           {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'thinking', 'thinking': '', 'signature': ''}},
           *[{'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'thinking_delta', 'thinking': t}} for t in ['The user ', 'wants weather.']],
           {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'signature_delta', 'signature': 'EqQBCgIYAhIM1gbcDa9GJwZA'}},
           {'type': 'content_block_stop', 'index': 0},
           {'type': 'content_block_start', 'index': 1, 'content_block': {'type': 'text', 'text': ''}},
           {'type': 'content_block_delta', 'index': 1, 'delta': {'type': 'text_delta', 'text': 'Per the doc, '}},
           {'type': 'content_block_delta', 'index': 1, 'delta': {'type': 'citations_delta', 'citation': {
               'type': 'char_location', 'cited_text': 'Lisbon', 'document_index': 0, 'document_title': 'Cities', 'start_char_index': 0,
               'end_char_index': 6}}},
           {'type': 'content_block_stop', 'index': 1},
           {'type': 'content_block_start', 'index': 2, 'content_block': {'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather', 'input': {}}},
           *[{'type': 'content_block_delta', 'index': 2, 'delta': {'type': 'input_json_delta', 'partial_json': p}} for p in ['{"city"', ': "Lisbon"}']],
           {'type': 'content_block_stop', 'index': 2},
           {'type': 'message_delta', 'delta': {'stop_reason': 'tool_use', 'stop_sequence': None}, 'usage': {'output_tokens': 5}},
           {'type': 'message_stop'}]
    stream = ToolCallStream()
    with anthropic_client(sse('anthropic', evs)).messages.stream(model='claude', max_tokens=100, messages=[]) as s:
        for e in s: stream.feed(e)
        final = s.get_final_message()
    assert stream.message() == {'role': 'assistant', 'content': [b.model_dump(exclude_none=True) for b in final.content]}
    assert stream.message()['content'][0] == {'type': 'thinking', 'thinking': 'The user wants weather.', 'signature': 'EqQBCgIYAhIM1gbcDa9GJwZA'}
    assert stream.text == 'Per the doc, ' and stream.calls == [ToolCall('get_weather', {'city': 'Lisbon'}, 'toolu_1')]

def test_gemini_thought_signatures_go_back_with_their_calls():
    "Gemini 3 refuses a function call sent back without the thought signature it came with"
    chunks = [{'candidates': [{'content': {'role': 'model', 'parts': [
        {'functionCall': {'name': 'get_weather', 'args': {'city': 'Lisbon'}}, 'thoughtSignature': 'c2lnbmF0dXJl'}]}, 'finishReason': 'STOP'}]}]
    seen = []
    client = gemini_client([sse('gemini', chunks), sse('gemini', events('gemini', [], script([], ['ok'])))], seen)
    stream = ToolCallStream()
    msgs = run_tool_calls(TOOLS, stream.watch(client.models.generate_content_stream(model='gemini-2.5-flash', contents='hi')))
    client.models.generate_content_stream(model='gemini-2.5-flash', contents=[stream.message(), *msgs]).__next__()
    sent = json.loads(seen[1].content)['contents']
    assert sent[0]['parts'] == [{'functionCall': {'name': 'get_weather', 'args': {'city': 'Lisbon'}}, 'thoughtSignature': 'c2lnbmF0dXJl'}]
    assert sent[1]['parts'][0]['functionResponse']['response'] == {'output': 'Lisbon: 21 C'}

def test_gemini_stream_equals_the_whole_response():
    from google.genai import types
    body = sse('gemini', events('gemini', CALLS, script(CALLS, TEXTS)))
    stream, got = ToolCallStream(), []
    chunks = list(gemini_client(body).models.generate_content_stream(model='gemini-2.5-flash', contents='hi'))
    for c in chunks: got += stream.feed(c)
    whole = types.GenerateContentResponse(candidates=[types.Candidate(content=types.Content(role='model', parts=[
        types.Part(text='Let me check.'), *[types.Part(function_call=types.FunctionCall(id=i, name=n, args=a)) for i, n, a in CALLS]]))])
    assert stream.provider == 'gemini' and stream.calls == got == tool_calls(whole) == _expected(CALLS)
    assert stream.message() == whole.candidates[0].content.model_dump(exclude_none=True) and stream.text == 'Let me check.'

def test_gemini_calls_without_ids_get_the_ids_a_whole_response_gets():
    calls = [(None, 'get_weather', {'city': 'Oslo'}), (None, 'get_weather', {'city': 'Rome'})]
    body = sse('gemini', events('gemini', calls, script(calls)))
    stream = ToolCallStream()
    for c in gemini_client(body).models.generate_content_stream(model='gemini-2.5-flash', contents='hi'): stream.feed(c)
    assert [c.id for c in stream.calls] == ['funccall-0-get_weather', 'funccall-1-get_weather']
    assert stream.calls == tool_calls(stream.message(), 'gemini')

def test_vertex_streamed_function_call_arguments():
    "Vertex AI's `stream_function_call_arguments`: a call's arguments come as `partial_args` (a JSON path and a value) until `willContinue` ends"
    def chunk(fc, finish=None):
        return {'candidates': [{'content': {'role': 'model', 'parts': [{'functionCall': fc}]}, 'index': 0, **({'finishReason': finish} if finish else {})}]}
    chunks = [chunk({'name': 'get_weather', 'willContinue': True}),
              chunk({'partialArgs': [{'jsonPath': '$.city', 'stringValue': 'Lis', 'willContinue': True}], 'willContinue': True}),
              chunk({'partialArgs': [{'jsonPath': '$.city', 'stringValue': 'bon'}], 'willContinue': True}),
              chunk({'partialArgs': [{'jsonPath': '$.days[0]', 'numberValue': 1}, {'jsonPath': '$.days[1]', 'numberValue': 2},
                                     {'jsonPath': "$.opts['deep']", 'boolValue': True}, {'jsonPath': '$.note', 'nullValue': 'NULL_VALUE'}],
                     'willContinue': True}),
              chunk({}),
              chunk({'name': 'list_orders', 'args': {}}, 'STOP')]
    stream, got, partials = ToolCallStream(), [], []
    for i, c in enumerate(gemini_client(sse('gemini', chunks)).models.generate_content_stream(model='gemini-2.5-flash', contents='hi')):
        got += [(i, tc) for tc in stream.feed(c)]
        partials.append(stream.partial)
    args = {'city': 'Lisbon', 'days': [1, 2], 'opts': {'deep': True}, 'note': None}
    assert got == [(4, ToolCall('get_weather', args, 'funccall-0-get_weather')), (5, ToolCall('list_orders', {}, 'funccall-1-list_orders'))]
    assert partials[:3] == [{'funccall-0-get_weather': {}}, {'funccall-0-get_weather': {'city': 'Lis'}}, {'funccall-0-get_weather': {'city': 'Lisbon'}}]
    assert stream.message() == {'role': 'model', 'parts': [{'function_call': {'name': 'get_weather', 'args': args}},
                                                           {'function_call': {'name': 'list_orders', 'args': {}}}]}
    assert tool_calls(stream.message(), 'gemini') == stream.calls == [tc for _, tc in got]

def test_dict_events_read_as_sdk_objects_are():
    for p in ('openai', 'openai_responses', 'anthropic', 'gemini'):
        stream = ToolCallStream()
        for e in events(p, CALLS, script(CALLS, TEXTS, _pieces(CALLS))): stream.feed(e)
        assert stream.calls == _expected(CALLS) and stream.text == 'Let me check.', p

def test_the_message_mid_stream_holds_what_has_come():
    text = json.dumps(CALLS[0][2])
    steps = [('text', 'Let me '), ('start', 0), ('args', 0, text[:12])]
    mid = {}
    for p in ('openai', 'openai_responses', 'anthropic'):
        stream = ToolCallStream()
        for e in events(p, CALLS[:1], steps)[:{'openai': -1, 'anthropic': -2}.get(p)]:  # (before the events that end the response)
            stream.feed(e)
        mid[p] = stream.message()
    assert mid['openai'] == {'role': 'assistant', 'content': 'Let me ', 'tool_calls': [
        {'id': 'call_1', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': text[:12]}}]}
    assert [i['type'] for i in mid['openai_responses']] == ['message', 'function_call']
    assert mid['openai_responses'][0]['content'][0]['text'] == 'Let me ' and mid['openai_responses'][1]['arguments'] == text[:12]
    assert mid['anthropic']['content'] == [{'type': 'text', 'text': 'Let me '},
                                           {'type': 'tool_use', 'id': 'call_1', 'name': 'get_weather', 'input': {'city': 'Li'}}]

def test_openai_compatible_calls_sent_whole_without_an_index():
    chunk = events('openai', [], [])[0]
    calls = [{'id': cid, 'type': 'function', 'function': {'name': nm, 'arguments': json.dumps(a)}} for cid, nm, a in CALLS]
    stream = ToolCallStream()
    got = [c for e in [{**chunk, 'choices': [{'index': 0, 'delta': {'tool_calls': [tc]}, 'finish_reason': None}]} for tc in calls] for c in stream.feed(e)]
    assert got == stream.calls == _expected(CALLS)

def test_provider_is_told_or_refused():
    with pytest.raises(ValueError, match="Can't tell which provider's stream event a int is"): ToolCallStream().feed(3)
    with pytest.raises(ValueError, match='Unknown provider'): ToolCallStream('mistral')
    assert ToolCallStream('responses').provider == 'openai_responses'

# --- calls as soon as their arguments close ---------------------------------------------------------------------

def test_each_call_comes_at_the_event_closing_its_arguments_and_interleaved_calls_keep_their_order():
    calls = [('a', 'f', {'x': [1, 2, 3]}), ('b', 'g', {'y': 'z'})]
    texts = [json.dumps(a) for _, _, a in calls]
    # the second call starts and closes while the first is still streaming
    steps = [('start', 0), ('args', 0, texts[0][:5]), ('start', 1), ('args', 1, texts[1]), ('args', 0, texts[0][5:]), ('stop', 1), ('stop', 0)]
    for p in ('openai', 'openai_responses', 'anthropic'):
        evs, stream, when = events(p, calls, steps), ToolCallStream(), {}
        for i, e in enumerate(evs):
            for c in stream.feed(e): when[c.id] = i
        closing = next(i for i, e in enumerate(evs) if _args_of(p, e, 1) == texts[1])
        closing = _done_of(p, evs, 1, closing)
        assert when['b'] == closing < when['a'] < len(evs) - 1, p
        assert stream.calls == _expected(calls), p  # the response's order, not the order they closed in

def test_partial_arguments_while_a_call_streams():
    stream, seen = ToolCallStream(), []
    text = '{"city": "Lisbon", "days": [1, 2, 3], "note": "a long note"}'
    for e in events('anthropic', CALLS[:1], [('start', 0), *[('args', 0, ch) for ch in text]]):
        stream.feed(e)
        if 'call_1' in stream.partial: seen.append(stream.partial['call_1'])
    assert [json.loads(json.dumps(x)) for x in seen] == seen  # what was shown stays as it was shown: the later pieces didn't change it
    seen = [json.dumps(x) for x in seen]
    assert seen[0] == '{}' and '{"city": "Lis"}' in seen and '{"city": "Lisbon", "days": [1, 2]}' in seen
    assert '{"city": "Lisbon", "days": [1, 2, 3], "note": "a long no"}' in seen
    assert not any('"days": [1, 2, 3], "no' in s and '"note"' not in s for s in seen)  # a key shows only with its value begun
    assert stream.calls == [ToolCall('get_weather', json.loads(text), 'call_1')] and stream.partial == {}

# --- malformed arguments ----------------------------------------------------------------------------------------

def get_weather(city: str, unit: str = 'C', days: list[float] = None, note: str = '') -> str:
    "Weather in a city"
    return f'{city}: 21 {unit}'

def list_orders() -> list:
    "The orders"
    return ['o-1']

TOOLS = Toolbox([get_weather, list_orders])

def test_eager_streaming_invalid_json_is_answered_as_a_finished_malformed_call_is():
    bad = '{"city": "Lisbon", "unit": C}'  # `eager_input_streaming` passes the model's text on unchecked
    steps = [('start', 0), *[('args', 0, ch) for ch in bad], ('stop', 0)]
    body = sse('anthropic', events('anthropic', [('toolu_1', 'get_weather', {})], steps))
    stream = ToolCallStream()
    [answer] = run_tool_calls(TOOLS, stream.watch(anthropic_client(body).messages.create(model='c', max_tokens=9, messages=[], stream=True)))
    finished = {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather', 'input': bad}]}
    assert answer == run_tool_calls(TOOLS, finished)[0]
    [block] = answer['content']
    assert block['is_error'] and 'not valid JSON (Expecting value' in block['content'] and bad in block['content'], block
    assert stream.calls == [ToolCall('get_weather', bad, 'toolu_1')]
    # the assistant's message holds the text wrapped, as Anthropic's docs advise: `input` must be an object
    assert stream.message()['content'] == [{'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather', 'input': {'INVALID_JSON': bad}}]

def test_unfinished_arguments_complete_at_the_end_of_the_response():
    evs = events('openai', [('c1', 'get_weather', {})], [('start', 0), ('args', 0, '{"city": "Lis')])
    stream = ToolCallStream()
    assert [c for e in evs[:-1] for c in stream.feed(e)] == [] and stream.partial == {'c1': {'city': 'Lis'}}
    assert stream.feed(evs[-1]) == [ToolCall('get_weather', '{"city": "Lis', 'c1')]  # cut off (max_tokens): the text, reported when run

# --- running calls while the stream runs ------------------------------------------------------------------------

def test_run_tool_calls_starts_each_call_before_the_stream_ends():
    started, order = threading.Event(), []
    def slow_first(x: int) -> int:
        "Waits"
        time.sleep(0.2); order.append('slow'); return x
    def quick(x: int) -> int:
        "Returns at once"
        started.set(); order.append('quick'); return x
    tools = Toolbox([slow_first, quick])
    calls = [('c1', 'slow_first', {'x': 1}), ('c2', 'quick', {'x': 2})]
    evs = events('openai', calls, script(calls))
    def gen():
        for e in evs:
            yield e
            if e['choices'][0]['delta'].get('tool_calls', [{}])[0].get('function', {}).get('arguments') == '{"x": 2}':
                assert started.wait(10), 'quick did not start before the stream went on'  # started while the stream is still open
    msgs = run_tool_calls(tools, gen())
    assert order == ['quick', 'slow'] or order == ['slow', 'quick']
    assert [(m['tool_call_id'], m['content']) for m in msgs] == [('c1', '1'), ('c2', '2')]  # call order, whatever finished first

def test_a_call_starts_within_events_of_closing_when_the_events_come_faster_than_they_are_read():
    "A sync iterable is read in a thread of its own: the events queue up, and each still gives the running calls a turn"
    stream, at = ToolCallStream(), []
    async def note(x: int) -> int:
        "Notes how many events after its own the stream had read when it ran"
        at.append(len(stream.text)); return x
    calls = [('c1', 'note', {'x': 1})]
    evs = events('openai', calls, script(calls))
    text = {**evs[0], 'choices': [{'index': 0, 'delta': {'content': 'x'}, 'finish_reason': None}]}
    evs = evs[:-1] + [text] * 5000 + evs[-1:]  # the text after the call: one character an event
    run_tool_calls(Toolbox([note]), stream.watch(iter(evs)))
    assert at and at[0] <= 5, at

def test_run_tool_calls_async_over_the_sdks_async_streams():
    async def go():
        body = sse('openai', events('openai', CALLS, script(CALLS, TEXTS, _pieces(CALLS))))
        client = chat_client(body, asynchronous=True)
        stream = ToolCallStream()
        msgs = await run_tool_calls_async(TOOLS, stream.watch(await client.chat.completions.create(model='m', messages=[], stream=True)))
        body = sse('anthropic', events('anthropic', CALLS, script(CALLS, TEXTS, _pieces(CALLS))))
        aclient = anthropic_client(body, asynchronous=True)
        amsgs = await run_tool_calls_async(TOOLS, await aclient.messages.create(model='c', max_tokens=9, messages=[], stream=True))
        body = sse('gemini', events('gemini', CALLS, script(CALLS, TEXTS)))
        gclient = gemini_client(body, asynchronous=True)
        gmsgs = await run_tool_calls_async(TOOLS, await gclient.aio.models.generate_content_stream(model='gemini-2.5-flash', contents='hi'))
        return stream, msgs, amsgs, gmsgs
    stream, msgs, amsgs, gmsgs = asyncio.run(go())
    assert stream.calls == _expected(CALLS) and stream.text == 'Let me check.'
    assert [m['content'] for m in msgs] == ['Lisbon: 21 C', '["o-1"]']
    assert [b['content'] for b in amsgs[0]['content']] == ['Lisbon: 21 C', '["o-1"]']
    assert [p['function_response']['response'] for p in gmsgs[0]['parts']] == [{'output': 'Lisbon: 21 C'}, {'output': ['o-1']}]

def test_run_tool_calls_over_a_responses_stream_and_a_list_of_events():
    body = sse('openai_responses', events('openai_responses', CALLS, script(CALLS, TEXTS, _pieces(CALLS))))
    msgs = run_tool_calls(TOOLS, chat_client(body).responses.create(model='m', input=[], stream=True))
    assert [(m['type'], m['call_id']) for m in msgs] == [('function_call_output', 'call_1'), ('function_call_output', 'call_2')]
    evs = events('openai', CALLS, script(CALLS))
    assert is_stream(evs) and not is_stream(evs[0]) and not is_stream([]) and run_tool_calls(TOOLS, evs) == run_tool_calls(TOOLS, msgs_chat())

def msgs_chat() -> dict:
    return {'role': 'assistant', 'tool_calls': [{'id': i, 'type': 'function', 'function': {'name': n, 'arguments': json.dumps(a)}}
                                                for i, n, a in CALLS]}

def test_watching_a_stream_sync_and_async_yields_its_events_read():
    evs = events('anthropic', CALLS, script(CALLS, TEXTS, _pieces(CALLS)))
    stream = ToolCallStream()
    texts = [stream.text for _ in stream.watch(iter(evs))]  # read as each event passes
    assert texts[-1] == 'Let me check.' and 'Let me ' in texts and stream.calls == _expected(CALLS)
    async def agen():
        for e in evs: yield e
    async def go():
        s = ToolCallStream()
        return s, [len(s.calls) async for _ in s.watch(agen())]
    s, counts = asyncio.run(go())
    assert s.calls == _expected(CALLS) and counts[0] == 0 and counts[-1] == 2

def test_a_refusal_and_injected_values_through_a_stream():
    chunk = events('openai', [], [('text', '')])[0]
    refusal = [{**chunk, 'choices': [{'index': 0, 'delta': {'refusal': r}, 'finish_reason': None}]} for r in ("I can't ", 'help.')]
    stream = ToolCallStream()
    for e in [*refusal, {**chunk, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]}]: stream.feed(e)
    assert stream.message() == {'role': 'assistant', 'content': None, 'refusal': "I can't help."} and stream.calls == []
    def whose(user: str, n: int) -> str:
        "The user's n"
        return f'{user}:{n}'
    calls = [('c1', 'whose', {'n': 1})]
    msgs = run_tool_calls(Toolbox([Tool(whose, inject=('user',))]), events('openai', calls, script(calls)), injected={'user': 'ann'})
    assert [m['content'] for m in msgs] == ['ann:1']

def run_code(code: str) -> str:
    "Runs code"
    return f'ran {len(code)} characters'

def _responses_with(*items) -> list:
    "A Responses stream of a reasoning item, a streamed function call, and `items` (each added, then done whole)"
    evs = events('openai_responses', CALLS[:1], script(CALLS[:1], (), _pieces(CALLS[:1])))
    done, seq = evs.pop(), 1000
    for k, item in enumerate(items, start=1):
        evs += [{'type': 'response.output_item.added', 'sequence_number': seq, 'output_index': k, 'item': {**item, 'input': ''}},
                *[{'type': 'response.custom_tool_call_input.delta', 'sequence_number': seq + 1 + i, 'output_index': k, 'item_id': item['id'],
                   'delta': ch} for i, ch in enumerate(item.get('input', ''))],
                {'type': 'response.output_item.done', 'sequence_number': seq + 999, 'output_index': k, 'item': item}]
        seq += 1000
    return evs + [{**done, 'response': {**done['response'], 'output': [*done['response']['output'], *items]}}]

def test_responses_custom_tool_calls_in_a_stream_are_run_and_answered():
    code = 'print("hi")\nx = {"a": 1}'
    custom = {'type': 'custom_tool_call', 'id': 'ctc_1', 'call_id': 'call_9', 'name': 'run_code', 'input': code}
    stream = ToolCallStream()
    msgs = run_tool_calls(Toolbox([get_weather, Tool(run_code, text_input=True)]),
                          stream.watch(chat_client(sse('openai_responses', _responses_with(custom))).responses.create(model='m', input=[], stream=True)))
    assert stream.calls == [*_expected(CALLS[:1]), CustomToolCall('run_code', code, 'call_9')]
    assert [(m['type'], m['output']) for m in msgs] == [('function_call_output', 'Lisbon: 21 C'), ('custom_tool_call_output', f'ran {len(code)} characters')]
    assert stream.message()[1] == custom

def test_a_call_funccall_cant_answer_in_a_stream_raises_or_is_skipped():
    computer = {'type': 'computer_call', 'id': 'cu_1', 'call_id': 'call_8', 'action': {'type': 'screenshot'}, 'pending_safety_checks': [],
                'status': 'completed'}
    with pytest.raises(UnansweredCall): run_tool_calls(TOOLS, _responses_with(computer))
    assert [m['call_id'] for m in run_tool_calls(TOOLS, _responses_with(computer), others='skip')] == ['call_1']

def test_a_stream_that_fails_cancels_its_calls_and_raises():
    evs = events('openai', CALLS, script(CALLS))
    def gen():
        yield from evs[:3]
        raise ConnectionError('the connection dropped')
    with pytest.raises(ConnectionError, match='dropped'): run_tool_calls(TOOLS, gen())

# --- a property: the real tool corpus, arguments cut anywhere, calls interleaved ---------------------------------

def _is_part(p, v) -> bool:
    "Whether `p` is what a reader may show of `v` before it is whole: finished members equal, the last one begun"
    if isinstance(v, dict):
        if not isinstance(p, dict) or list(p) != list(v)[:len(p)]: return False
        return all(p[k] == v[k] for k in list(p)[:-1]) and (not p or _is_part(p[list(p)[-1]], v[list(p)[-1]]))
    if isinstance(v, list):
        return isinstance(p, list) and len(p) <= len(v) and p[:-1] == v[:max(len(p) - 1, 0)] and (not p or _is_part(p[-1], v[len(p) - 1]))
    if isinstance(v, str): return isinstance(p, str) and v.startswith(p)
    return p == v

def _corpus():
    import test_inverse_corpus as tic  # its strategies: arguments drawn from each tool's own schema
    picks = [i for i in range(0, len(tic.TOOLS), 7) if tic._args_strategy(i)[0] is not None]
    return tic, picks

@settings(max_examples=examples(60), deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])
@given(data=st.data())
def test_corpus_arguments_cut_anywhere_come_back_whole_as_soon_as_they_close(data):
    tic, picks = _corpus()
    provider = data.draw(st.sampled_from(['openai', 'openai_responses', 'anthropic', 'gemini']), label='provider')
    n = data.draw(st.integers(1, 3), label='calls')
    calls, texts = [], []
    for j in range(n):
        i = data.draw(st.sampled_from(picks), label='tool')
        args = data.draw(tic._args_strategy(i)[0], label='arguments')
        assume(isinstance(args, dict))
        calls.append((f'call_{j}', tic.TOOLS[i][1]['name'], args))
        texts.append(json.dumps(args, ensure_ascii=data.draw(st.booleans(), label='ascii'), indent=data.draw(st.sampled_from([None, 1]))))
    one_char = data.draw(st.booleans(), label='one character at a time')
    pieces = [list(t) if one_char else split(t, data.draw(st.lists(st.integers(1, max(1, len(t) - 1)), max_size=20), label='cuts'))
              for t in texts]
    lanes = [[('start', j), *[('args', j, p) for p in pieces[j]], ('stop', j)] for j in range(n)]
    order = data.draw(st.permutations([j for j in range(n) for _ in lanes[j]]), label='interleaving')
    at = [0] * n
    steps = []
    for j in order: steps.append(lanes[j][at[j]]); at[j] += 1
    evs, stream, when = events(provider, calls, steps), ToolCallStream(), {}
    for k, e in enumerate(evs):
        for c in stream.feed(e):
            assert c.id not in when, 'a call came twice'
            when[c.id] = k
        for cid, p in stream.partial.items():
            assert _is_part(p, calls[int(cid.split('_')[1])][2]), (p, cid)
    in_order = [calls[s[1]] for s in steps if s[0] == 'stop'] if provider == 'gemini' else calls  # Gemini's come whole, as each ends
    assert stream.calls == _expected(in_order)
    assert tool_calls(stream.message(), provider) == stream.calls
    if provider != 'gemini':  # Gemini sends calls whole; the others' come with the event holding their last character (Responses': its done)
        for j, (cid, _, _) in enumerate(calls):
            last = _done_of(provider, evs, j, max(k for k, e in enumerate(evs) if _args_of(provider, e, j) is not None))
            assert when[cid] == last < len(evs) - 1, (provider, cid)

def _done_of(provider: str, evs: list, j: int, last: int) -> int:
    "The event completing call `j` whose last piece of arguments is event `last`: that one, but for Responses its `done`"
    if provider != 'openai_responses': return last
    return next(k for k, e in enumerate(evs) if e['type'] == 'response.function_call_arguments.done' and e['item_id'] == f'fc_{j}')

def _args_of(provider: str, e: dict, j: int):
    "The piece of call `j`'s arguments event `e` carries, or None"
    if provider == 'openai':
        return next((t['function']['arguments'] for t in e['choices'][0]['delta'].get('tool_calls', [])
                     if t['index'] == j and t['function'].get('arguments')), None)
    if provider == 'openai_responses': return e['delta'] if e['type'] == 'response.function_call_arguments.delta' and e['item_id'] == f'fc_{j}' else None
    ok = e['type'] == 'content_block_delta' and e['index'] == j and e['delta']['type'] == 'input_json_delta'
    return e['delta']['partial_json'] if ok else None
