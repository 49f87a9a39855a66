"""Streams attacked as a hostile model (or server) would: every size a stream can make grow is bounded, `.partial` costs
time linear in the arguments, a call that can't be what it claims is refused (not run, answered with an error), and
`.message()` records exactly the calls that ran with exactly their arguments; no depth of nesting raises
`RecursionError`. The events go through each provider's own SDK client (server-sent events over an `httpx` mock
transport), as `test_stream.py`'s do; where an SDK refuses a malformed event itself, its dict form is fed directly."""
import copy, json, time, tracemalloc

import pytest
from sse import anthropic_client, chat_client, gemini_client, sse

from funccall import Toolbox, ToolCallStream, ToolInputError, run_tool_calls, tool_calls
from funccall.loop.stream import MAX_CHARS, StreamTooLong

PROVIDERS = ['openai', 'openai_responses', 'anthropic', 'gemini']
STREAMED = ['openai', 'openai_responses', 'anthropic']  # arguments streamed as JSON text

RAN = []  # the arguments each run of `f` got

def f(a: int = 0, s: str = '', xs: list = None) -> str:
    "Notes its arguments"
    RAN.append({k: v for k, v in (('a', a), ('s', s), ('xs', xs)) if v not in (0, '', None)})
    return 'ok'

TOOLS = Toolbox([f])

@pytest.fixture(autouse=True)
def _clear(): RAN.clear()

# --- each provider's events, in their JSON form -------------------------------------------------------------------

def _chunk(delta, finish=None):
    return {'id': 'chatcmpl-1', 'object': 'chat.completion.chunk', 'created': 0, 'model': 'gpt-4.1',
            'choices': [{'index': 0, 'delta': delta, 'logprobs': None, 'finish_reason': finish}]}

def _fc(cid, nm, args, status='in_progress', i=0):
    return {'type': 'function_call', 'id': f'fc_{i}', 'call_id': cid, 'name': nm, 'arguments': args, 'status': status}

def _gchunk(parts, finish=None):
    c = {'content': {'role': 'model', 'parts': parts}, 'index': 0, **({'finishReason': finish} if finish else {})}
    return {'candidates': [c], 'modelVersion': 'gemini-2.5-flash', 'responseId': 'r1'}

_HEAD = {'openai': [_chunk({'role': 'assistant', 'content': ''})],
         'openai_responses': [{'type': 'response.created', 'sequence_number': 0, 'response': {
             'id': 'resp_1', 'object': 'response', 'created_at': 0, 'model': 'gpt-4.1', 'status': 'in_progress', 'output': [],
             'parallel_tool_calls': True, 'tool_choice': 'auto', 'tools': []}}],
         'anthropic': [{'type': 'message_start', 'message': {'id': 'msg_1', 'type': 'message', 'role': 'assistant', 'content': [],
                                                             'model': 'claude', 'stop_reason': None, 'stop_sequence': None,
                                                             'usage': {'input_tokens': 1, 'output_tokens': 1}}}],
         'gemini': []}

def begin(p, i, cid, nm='f') -> list:
    "Events beginning a call at index `i`"
    if p == 'openai': return [_chunk({'tool_calls': [{'index': i, 'id': cid, 'type': 'function', 'function': {'name': nm, 'arguments': ''}}]})]
    if p == 'openai_responses': return [{'type': 'response.output_item.added', 'sequence_number': 1, 'output_index': i, 'item': _fc(cid, nm, '', i=i)}]
    return [{'type': 'content_block_start', 'index': i, 'content_block': {'type': 'tool_use', 'id': cid, 'name': nm, 'input': {}}}]

def piece(p, i, text) -> list:
    "An event carrying a piece of the arguments of the call at index `i`"
    if p == 'openai': return [_chunk({'tool_calls': [{'index': i, 'function': {'arguments': text}}]})]
    if p == 'openai_responses':
        return [{'type': 'response.function_call_arguments.delta', 'sequence_number': 2, 'item_id': f'fc_{i}', 'output_index': i, 'delta': text}]
    return [{'type': 'content_block_delta', 'index': i, 'delta': {'type': 'input_json_delta', 'partial_json': text}}]

def stop(p, i, cid, text, nm='f') -> list:
    "The events ending the call at index `i` (Responses' repeat its arguments)"
    if p == 'openai': return []
    if p == 'openai_responses':
        return [{'type': 'response.function_call_arguments.done', 'sequence_number': 3, 'item_id': f'fc_{i}', 'output_index': i,
                 'arguments': text, 'name': nm},
                {'type': 'response.output_item.done', 'sequence_number': 4, 'output_index': i, 'item': _fc(cid, nm, text, 'completed', i)}]
    return [{'type': 'content_block_stop', 'index': i}]

def finish(p) -> list:
    if p == 'openai': return [_chunk({}, 'tool_calls')]
    if p == 'openai_responses': return [{'type': 'response.completed', 'sequence_number': 9, 'response': {**_HEAD[p][0]['response'], 'status': 'completed'}}]
    if p == 'anthropic':
        return [{'type': 'message_delta', 'delta': {'stop_reason': 'tool_use', 'stop_sequence': None}, 'usage': {'output_tokens': 5}},
                {'type': 'message_stop'}]
    return [_gchunk([], 'STOP')]

def call(p, i, cid, text, nm='f', pieces=None) -> list:
    "A whole call at index `i`: begun, its arguments in `pieces` (default one), ended"
    if p == 'gemini': return [_gchunk([{'functionCall': {'id': cid, 'name': nm, 'args': json.loads(text)}}])]
    return [*begin(p, i, cid, nm), *[e for t in (pieces or [text]) for e in piece(p, i, t)], *stop(p, i, cid, text, nm)]

def response(p, *parts) -> list: return [*_HEAD[p], *[e for x in parts for e in x], *finish(p)]

def sdk(p, evs):
    "The events as the provider's SDK client yields them, read from their server-sent-event bytes"
    body = sse(p, evs)
    if p == 'openai': return chat_client(body).chat.completions.create(model='m', messages=[], stream=True)
    if p == 'openai_responses': return chat_client(body).responses.create(model='m', input=[], stream=True)
    if p == 'anthropic': return anthropic_client(body).messages.create(model='c', max_tokens=9, messages=[], stream=True)
    return gemini_client(body).models.generate_content_stream(model='gemini-2.5-flash', contents='hi')

def run(p, evs, through_sdk=True):
    "Run the calls of a stream; the stream, the answers"
    stream = ToolCallStream()
    msgs = run_tool_calls(TOOLS, stream.watch(sdk(p, evs) if through_sdk else iter(evs)))
    return stream, msgs

def assert_truthful(p, stream, msgs):
    """What ran is what the message records: the same calls in the same order, each call that ran with exactly the
    arguments the tool got; every call answered, and no answer without its call"""
    calls, recorded = stream.calls, tool_calls(stream.message(), p)
    assert [(c.id, c.name) for c in recorded] == [(c.id, c.name) for c in calls]
    for rec, c in zip(recorded, calls):
        if isinstance(c.arguments, dict): assert rec.arguments == c.arguments
    assert [r.call_id for r in msgs.results] == [c.id for c in calls]
    for r, c in zip(msgs.results, calls):
        if isinstance(c.arguments, ToolInputError): assert not r.ok and r.failure == 'arguments', r
    ran = [c.arguments for c, r in zip(calls, msgs.results) if r.ok]
    assert sorted(map(json.dumps, RAN)) == sorted(json.dumps({k: v for k, v in a.items() if v}) for a in ran)

def refused(c, why: str) -> bool:
    return isinstance(c.arguments, ToolInputError) and why in str(c.arguments)

# --- reused indices and ids ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('p', STREAMED)
def test_a_reused_index_is_a_refused_call_and_the_message_records_both(p):
    evs = response(p, call(p, 0, 'c1', '{"a": 1}'), call(p, 0, 'c2', '{"a": 2}'))
    stream, msgs = run(p, evs)
    assert RAN == [{'a': 1}]  # the second call, at the first's index, never ran
    [first, second] = stream.calls
    assert first.arguments == {'a': 1} and refused(second, "index 0 is another item's")
    assert 'ToolInputError' in msgs.results[1].error and 'did not run' in msgs.results[1].error
    assert_truthful(p, stream, msgs)

def test_openai_calls_sent_whole_without_an_index_and_one_id_twice_run_once():
    p, whole = 'openai', [_chunk({'tool_calls': [{'id': 'c1', 'type': 'function', 'function': {'name': 'f', 'arguments': f'{{"a": {a}}}'}}]})
                          for a in (1, 2)]
    stream, msgs = run(p, response(p, whole))
    assert RAN == [{'a': 1}] and refused(stream.calls[1], "id 'c1' is another call's")
    assert_truthful(p, stream, msgs)

@pytest.mark.parametrize('p', STREAMED)
def test_an_id_that_is_no_text_is_refused_and_partial_still_reads(p):
    evs = response(p, [*begin(p, 0, ['c1']), *piece(p, 0, '{"a": 1')], call(p, 1, 'c2', '{"a": 2}'))
    stream = ToolCallStream()
    for e in evs[:len(_HEAD[p]) + 2]: stream.feed(e)
    assert stream.partial == {}  # the call whose id is a list is refused: not shown (nor a TypeError)
    msgs = run_tool_calls(TOOLS, stream.watch(iter(evs[len(_HEAD[p]) + 2:])))
    assert RAN == [{'a': 2}] and refused(stream.calls[0], 'its id is a list') and len(msgs.results) == 2

def test_gemini_an_id_that_is_no_text_is_refused():
    evs = [_gchunk([{'functionCall': {'id': ['g1'], 'name': 'f', 'args': {'a': 1}}}]), *_vertex([{'jsonPath': '$.a', 'numberValue': 2}])]
    evs[1]['candidates'][0]['content']['parts'][0]['functionCall']['id'] = {'x': 1}
    stream, msgs = run('gemini', evs, through_sdk=False)
    assert RAN == [] and all(refused(c, 'its id is a') for c in stream.calls)
    assert_truthful('gemini', stream, msgs)

@pytest.mark.parametrize('p', STREAMED)
def test_a_call_without_an_id_is_refused_and_answered_under_an_id_of_ours(p):
    evs = response(p, call(p, 0, None, '{"a": 1}'), call(p, 1, 'c2', '{"a": 2}'))
    stream, msgs = run(p, evs, through_sdk=False)  # (before, the tool ran, then writing its answer raised: no id to answer)
    assert RAN == [{'a': 2}] and refused(stream.calls[0], 'without an id') and stream.calls[0].id == 'no-id-1'
    assert_truthful(p, stream, msgs)

@pytest.mark.parametrize('p', PROVIDERS)
@pytest.mark.parametrize('nm', [['f'], {'a': 1}, 5, None])
def test_a_name_that_is_no_text_is_an_unknown_tool_not_a_type_error(p, nm):
    stream, msgs = run(p, response(p, call(p, 0, 'c1', '{"a": 1}', nm=nm)), through_sdk=False)
    assert RAN == [] and msgs.results[0].failure == 'name'
    assert_truthful(p, stream, msgs)

@pytest.mark.parametrize('p', PROVIDERS)
def test_a_reused_call_id_is_refused(p):
    evs = response(p, call(p, 0, 'c1', '{"a": 1}'), call(p, 1, 'c1', '{"a": 2}'))
    stream, msgs = run(p, evs)
    assert RAN == [{'a': 1}]
    assert refused(stream.calls[1], "id 'c1' is another call's")
    assert_truthful(p, stream, msgs)

# (an OpenAI call without an index is an OpenAI-compatible server's sending it whole: read by its id)
@pytest.mark.parametrize('p,bad', [(p, bad) for p in STREAMED for bad in ['1', 1.0, [1], None] if (p, bad) != ('openai', None)])
def test_a_mixed_or_non_integer_index_is_refused_not_a_type_error(p, bad):
    evs = response(p, call(p, 0, 'c1', '{"a": 1}'), call(p, bad, 'c2', '{"a": 2}'), call(p, 2, 'c3', '{"a": 3}'))
    # the SDKs make '1' and 1.0 the integer 1 (and OpenAI's drops a list): those come as dicts, as a client of another kind sends them
    stream, msgs = run(p, evs, through_sdk=isinstance(bad, list) and p != 'openai')
    assert sorted(map(json.dumps, RAN)) == ['{"a": 1}', '{"a": 3}']
    assert [c.id for c in stream.calls] == ['c1', 'c3', 'c2']  # the one without an integer index last
    assert refused(stream.calls[2], 'its index is a')
    assert_truthful(p, stream, msgs)

@pytest.mark.parametrize('p', STREAMED)
@pytest.mark.parametrize('bad', [5, ['{"a": 1}'], {'a': 1}])
def test_arguments_that_are_no_text_are_refused(p, bad):
    evs = response(p, call(p, 0, 'c1', '{"a": 1}', pieces=['{"a"', bad, ': 1}']), call(p, 1, 'c2', '{"a": 2}'))
    stream, msgs = run(p, evs, through_sdk=p != 'openai_responses')  # (the Responses SDK checks its deltas are text)
    assert RAN == [{'a': 2}] and refused(stream.calls[0], 'not text')
    assert_truthful(p, stream, msgs)

def test_responses_arguments_changed_at_done_are_refused_and_the_streamed_ones_recorded():
    p = 'openai_responses'
    evs = response(p, call(p, 0, 'c1', '{"a": 1}'))
    for e in evs:
        if e['type'] == 'response.function_call_arguments.done': e['arguments'] = '{"a": 666}'
        if e['type'] == 'response.output_item.done': e['item']['arguments'] = '{"a": 666}'
    stream, msgs = run(p, evs)
    assert RAN == [] and refused(stream.calls[0], 'arguments at done are not those streamed')
    assert stream.message()[0]['arguments'] == '{"a": 1}'
    assert_truthful(p, stream, msgs)

def test_responses_a_done_item_naming_another_tool_is_recorded_as_what_ran():
    p = 'openai_responses'
    evs = response(p, call(p, 0, 'c1', '{"a": 1}'))
    for e in evs:
        if e['type'] == 'response.output_item.done': e['item'].update(name='delete_everything', call_id='c666')
    stream, msgs = run(p, evs)
    assert RAN == [{'a': 1}] and stream.message()[0]['name'] == 'f' and stream.message()[0]['call_id'] == 'c1'
    assert_truthful(p, stream, msgs)

def test_responses_arguments_given_only_at_done_run_as_given():
    p = 'openai_responses'
    evs = response(p, [*begin(p, 0, 'c1'), *stop(p, 0, 'c1', '{"a": 4}')])
    stream, msgs = run(p, evs)
    assert RAN == [{'a': 4}] and stream.message()[0]['arguments'] == '{"a": 4}'
    assert_truthful(p, stream, msgs)

def test_responses_a_whole_item_done_twice_at_one_index_runs_once():
    p = 'openai_responses'
    custom = {'type': 'custom_tool_call', 'id': 'ctc_1', 'call_id': 'c9', 'name': 'f', 'input': 'x'}
    done = [{'type': 'response.output_item.done', 'sequence_number': 5, 'output_index': 0, 'item': dict(custom, call_id=cid)}
            for cid in ('c8', 'c9')]
    stream = ToolCallStream()
    for e in response(p, done): stream.feed(e)
    [one, two] = stream.calls
    assert one.id == 'c8' and not isinstance(one.arguments, ToolInputError) and refused(two, "index 0 is another item's")
    assert [c.id for c in tool_calls(stream.message(), p)] == ['c8', 'c9']

@pytest.mark.parametrize('p', ['openai', 'anthropic'])
def test_text_after_the_closing_brace_is_not_recorded_as_what_ran(p):
    evs = response(p, call(p, 0, 'c1', '{"a": 1}', pieces=['{"a": 1} ', 'tail', '}{"a": 2}']))
    stream, msgs = run(p, evs)
    assert RAN == [{'a': 1}] and tool_calls(stream.message(), p)[0].arguments == {'a': 1}
    assert_truthful(p, stream, msgs)

def test_openai_a_name_sent_after_the_call_ran_is_not_recorded():
    "A call whose name comes in a delta after its arguments closed ran nameless (an unknown tool): the message says so too"
    evs = [*_HEAD['openai'], _chunk({'tool_calls': [{'index': 0, 'id': 'c1', 'type': 'function', 'function': {'arguments': '{"a": 1}'}}]}),
           _chunk({'tool_calls': [{'index': 0, 'function': {'name': 'f', 'arguments': ''}}]}), *finish('openai')]
    stream, msgs = run('openai', evs, through_sdk=False)
    assert RAN == [] and not msgs.results[0].ok and stream.message()['tool_calls'][0]['function']['name'] != 'f'
    assert_truthful('openai', stream, msgs)

@pytest.mark.parametrize('p', STREAMED)
@pytest.mark.parametrize('pieces', [['"ab', 'c"'], ['true'], ['null'], ['123', ' '], ['"abc" ', 'x']])
def test_arguments_that_are_no_object_are_answered_never_a_type_error(p, pieces):
    "Arguments that are a string, a literal or a number: that call is answered with why and runs nothing, the stream goes on"
    evs = response(p, call(p, 0, 'c1', ''.join(pieces), pieces=pieces), call(p, 1, 'c2', '{"a": 2}'))
    stream, msgs = run(p, evs)
    assert RAN == [{'a': 2}] and not msgs.results[0].ok and msgs.results[1].ok
    assert_truthful(p, stream, msgs)

_ODD = [None, 1, 1.5, True, 'x', [], {}, [1], {'a': 1}, object()]

def _fields(o, at=()):
    "The paths to every field of event `o`, itself first"
    yield at
    items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
    for k, v in items: yield from _fields(v, (*at, k))

def _with(e, at: tuple, v):
    "Event `e` with the field at `at` replaced by `v`"
    if not at: return v
    e = copy.deepcopy(e)
    node = e
    for k in at[:-1]: node = node[k]
    node[at[-1]] = v
    return e

@pytest.mark.parametrize('p', PROVIDERS)
def test_any_field_of_any_event_of_another_type_is_never_a_crash(p):
    "Each field of each event replaced in turn by a value of another kind: feeding, ending and reading the stream never raise"
    if p == 'gemini': evs = _vertex([{'jsonPath': '$.s', 'stringValue': 'ab', 'willContinue': True}], [{'jsonPath': '$.xs[0]', 'numberValue': 1}]) + finish(p)
    else: evs = response(p, call(p, 0, 'c1', '{"a": 1, "s": "x"}', pieces=['{"a": 1,', ' "s": "x"}']), call(p, 1, 'c2', '{"a": 2}'))
    tried = 0
    for i, e in enumerate(evs):
        for at in list(_fields(e)):
            for v in _ODD:
                stream = ToolCallStream()
                try:
                    for x in [*evs[:i], _with(e, at, v), *evs[i + 1:]]: stream.feed(x)
                except ValueError as err:  # a first event that is no provider's: the one clear error
                    assert i == 0 and "Can't tell which provider" in str(err), (i, at, v, err)
                    continue
                stream.end(), stream.partial, stream.message(), stream.text
                tried += 1
    assert tried > 500

@pytest.mark.parametrize('cut', ['MAX_TOKENS', None])
def test_gemini_a_call_the_response_ended_inside_never_runs_with_what_came(cut):
    "`$.s` was still streaming (`/home/user` of a longer path) when the response stopped, or its events ran out: nothing runs"
    evs = _vertex([{'jsonPath': '$.s', 'stringValue': '/home/user', 'willContinue': True}], end=False)
    if cut: evs.append(_gchunk([{'text': ''}], cut))
    stream, msgs = run('gemini', evs, through_sdk=False)
    assert RAN == [] and refused(stream.calls[0], 'the response ended before its arguments did') and not msgs.results[0].ok
    assert_truthful('gemini', stream, msgs)

@pytest.mark.parametrize('text', ['{"a": 1', '{"a": "x', '{"xs": [1, 2', '{'])
def test_anthropic_a_call_the_stream_ended_inside_is_recorded_with_the_text_it_ran_with(text):
    "Not with the object read so far: the call ran with its unfinished text (and was told so), and the message says that text"
    evs = [*_HEAD['anthropic'], *begin('anthropic', 0, 'c1'), *piece('anthropic', 0, text)]
    stream, msgs = run('anthropic', evs, through_sdk=False)
    assert RAN == [] and not msgs.results[0].ok and stream.calls[0].arguments == text
    assert [b['input'] for b in stream.message()['content'] if b['type'] == 'tool_use'] == [{'INVALID_JSON': text}]

@pytest.mark.parametrize('p', STREAMED)
def test_a_stream_whose_events_run_out_answers_every_call_it_records(p):
    evs = response(p, call(p, 0, 'c1', '{"a": 1}'), [*begin(p, 1, 'c2'), *piece(p, 1, '{"a": 2')])[:-len(finish(p))]
    stream, msgs = run(p, evs)
    assert [c.id for c in stream.calls] == ['c1', 'c2'] and len(msgs.results) == 2
    assert_truthful(p, stream, msgs)

# --- Gemini's streamed arguments (Vertex AI `partial_args`) ------------------------------------------------------------

def _vertex(*partials, name='f', end=True) -> list:
    "A Gemini call whose arguments stream as `partial_args` (one list per chunk)"
    evs = [_gchunk([{'functionCall': {'name': name, 'willContinue': True}}])]
    evs += [_gchunk([{'functionCall': {'partialArgs': pa, 'willContinue': True}}]) for pa in partials]
    return evs + ([_gchunk([{'functionCall': {}}], 'STOP')] if end else [])

def _peak(fn) -> int:
    "The most memory `fn()` held at once, in bytes"
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally: tracemalloc.stop()

@pytest.mark.parametrize('path', ['$.xs[1000000000]', '$.xs[0][5]', '$.xs[99999999999999999999999999999]'])
def test_gemini_an_index_past_the_end_of_a_list_allocates_nothing_and_is_refused(path):
    evs = _vertex([{'jsonPath': '$.a', 'numberValue': 1}, {'jsonPath': path, 'stringValue': 'x'}])
    out = {}
    peak = _peak(lambda: out.update(zip(('stream', 'msgs'), run('gemini', evs, through_sdk=False))))
    assert peak < 2_000_000, peak  # a list of 10^9 items is 8 GB
    stream, msgs = out['stream'], out['msgs']
    assert RAN == [] and refused(stream.calls[0], 'skips items')
    assert_truthful('gemini', stream, msgs)

def test_gemini_through_the_sdk_too():
    evs = _vertex([{'jsonPath': '$.xs[1000000000]', 'stringValue': 'x'}])
    stream, msgs = run('gemini', evs)
    assert RAN == [] and refused(stream.calls[0], 'skips items')

@pytest.mark.parametrize('arg,why', [
    ({'jsonPath': '$' + '.a' * 100_000, 'numberValue': 1}, 'deep'),
    ({'jsonPath': '$' + '[0]' * 100_000, 'numberValue': 1}, 'deep'),
    ({'jsonPath': '$', 'numberValue': 1}, 'names no argument'),
    ({'jsonPath': 5, 'numberValue': 1}, 'not text'),
    ({'jsonPath': ['$.a'], 'numberValue': 1}, 'not text'),
    ({'jsonPath': '$.a..b', 'numberValue': 1}, 'none funccall reads'),
    ({'jsonPath': '$.a', 'stringValue': 5}, 'is a int'),
    ({'jsonPath': '$.a', 'numberValue': True}, 'is a bool'),
    ({'jsonPath': '$.a', 'numberValue': '1'}, 'is a str'),
    ({'jsonPath': '$.a', 'boolValue': 'yes'}, 'is a str'),
    ({'jsonPath': '$.a.b', 'numberValue': 1}, 'goes into a int'),    # $.a is 1: no object
    ({'jsonPath': '$[0]', 'numberValue': 1}, 'takes an index of a dict'),
    ({'jsonPath': '$.a[0]', 'numberValue': 1}, 'goes into a int'),
])
def test_gemini_paths_and_values_that_cant_be_are_refused_clearly(arg, why):
    evs = _vertex([{'jsonPath': '$.a', 'numberValue': 1}], [arg])
    stream, msgs = run('gemini', evs, through_sdk=False)
    assert RAN == [] and refused(stream.calls[0], why), stream.calls[0].arguments
    assert_truthful('gemini', stream, msgs)

def test_gemini_a_part_naming_another_call_ends_the_one_streaming():
    evs = _vertex([{'jsonPath': '$.a', 'numberValue': 1}], end=False) + [_gchunk([{'functionCall': {'name': 'f', 'args': {'a': 2}, 'id': 'g2'}}])]
    evs[-1]['candidates'][0]['content']['parts'].insert(0, {'functionCall': {'name': 'other', 'args': {}}})
    stream, msgs = run('gemini', evs + finish('gemini'), through_sdk=False)
    assert [c.name for c in stream.calls] == ['f', 'other', 'f'] and sorted(map(json.dumps, RAN)) == ['{"a": 1}', '{"a": 2}']
    assert_truthful('gemini', stream, msgs)

def test_gemini_a_string_in_many_pieces_is_read_in_linear_time():
    def go(n):
        evs = _vertex(*[[{'jsonPath': '$.s', 'stringValue': 'x' * 4, 'willContinue': True}] for _ in range(n // 4)])
        stream, t = ToolCallStream(), time.perf_counter()
        for e in evs:
            stream.feed(e)
            assert isinstance(stream.partial, dict)  # read after every event, as a UI would
        assert stream.calls[0].arguments == {'s': 'x' * (n // 4 * 4)}
        return time.perf_counter() - t
    assert _linear(go, 10_000, 80_000)

# --- `.partial` in linear time --------------------------------------------------------------------------------------------

def _linear(go, small=20_000, big=160_000) -> bool:
    "Whether `go(n)`'s time grows about as `n` (8x the size: 8x the time; quadratic would be 64x), with a wide margin for a busy machine"
    t_small = min(go(small) for _ in range(3))
    t_big = go(big)
    assert t_big < 10, t_big
    return t_big / max(t_small, 1e-3) < 24

def _array_events(p, n: int) -> list:
    text = json.dumps({'xs': list(range(n // 7))})
    if p == 'gemini':
        return _vertex(*[[{'jsonPath': f'$.xs[{i}]', 'numberValue': i}] for i in range(n // 7)])
    return response(p, call(p, 0, 'c1', text, pieces=[text[i:i + 4] for i in range(0, len(text), 4)]))

@pytest.mark.slow  # timed against a deadline: run on the one Python CI doesn't share a core with three others
@pytest.mark.parametrize('p', PROVIDERS)
def test_reading_partial_after_every_event_of_a_160_kb_array_is_linear(p):
    def go(n):
        evs = _array_events(p, n)
        stream, t = ToolCallStream(), time.perf_counter()
        for e in evs:
            stream.feed(e)
            assert isinstance(stream.partial, dict)  # read after every event, as a UI would
        assert stream.calls[0].arguments == {'xs': list(range(n // 7))}
        return time.perf_counter() - t
    assert _linear(go)

@pytest.mark.parametrize('p', PROVIDERS)
@pytest.mark.parametrize('partial', [True, False])
def test_a_partial_or_message_kept_is_not_changed_by_later_pieces(p, partial):
    """`.partial` hands out the arguments without copying them: what the caller keeps must still be copied before it changes;
    a message kept alone (`.partial` never read) too: Gemini's held the live arguments"""
    evs, stream, kept = _array_events(p, 300), ToolCallStream(), []
    for e in evs:
        stream.feed(e)
        if partial and stream.partial: kept.append((stream.partial, json.dumps(stream.partial)))  # (`.partial` read twice, kept once)
        kept.append((m := stream.message(), json.dumps(m)))  # (Anthropic's holds the arguments so far as an object)
    assert len(kept) > 20 and all(json.dumps(k) == shown for k, shown in kept)

# --- sizes bounded: text, thinking, arguments -----------------------------------------------------------------------

def _endless(p):
    "A response whose text never ends: 1,000 characters an event"
    yield from _HEAD[p]
    if p == 'openai_responses':
        yield {'type': 'response.output_item.added', 'sequence_number': 1, 'output_index': 0,
               'item': {'type': 'message', 'id': 'msg_1', 'role': 'assistant', 'status': 'in_progress', 'content': []}}
    if p == 'anthropic': yield {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'text', 'text': ''}}
    t = 'x' * 1000
    while True:
        if p == 'openai': yield _chunk({'content': t})
        elif p == 'openai_responses':
            yield {'type': 'response.output_text.delta', 'sequence_number': 2, 'item_id': 'msg_1', 'output_index': 0, 'content_index': 0, 'delta': t}
        elif p == 'anthropic': yield {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'text_delta', 'text': t}}
        else: yield _gchunk([{'text': t}])

def _endless_args(p):
    "A call whose arguments never end"
    if p == 'gemini':
        yield from _vertex(end=False)
        while True: yield _gchunk([{'functionCall': {'partialArgs': [{'jsonPath': '$.s', 'stringValue': 'x' * 1000, 'willContinue': True}],
                                                     'willContinue': True}}])
    yield from [*_HEAD[p], *begin(p, 0, 'c1'), *piece(p, 0, '{"s": "')]
    while True: yield from piece(p, 0, 'x' * 1000)

@pytest.mark.parametrize('p', PROVIDERS)
@pytest.mark.parametrize('endless', [_endless, _endless_args])
def test_an_endless_stream_stops_at_max_chars_with_a_clear_error_in_bounded_memory(p, endless):
    stream = ToolCallStream(max_chars=1_000_000)
    def go():
        with pytest.raises(StreamTooLong, match='max_chars=1,000,000'):
            for e in endless(p): stream.feed(e)
    assert _peak(go) < 12_000_000  # a few copies of 1 MB of text at most, however long the stream runs
    assert RAN == []

def test_anthropic_text_that_comes_with_each_block_start_counts_against_max_chars():
    "Blocks that begin with their text, one after another without end: the text counts, not one item per block"
    def blocks():
        yield from _HEAD['anthropic']
        for i in range(10_000):
            yield {'type': 'content_block_start', 'index': i, 'content_block': {'type': 'text', 'text': 'x' * 100_000}}
            yield {'type': 'content_block_stop', 'index': i}
    stream = ToolCallStream(max_chars=1_000_000)
    with pytest.raises(StreamTooLong, match='max_chars=1,000,000'):
        for e in blocks(): stream.feed(e)
    assert len(stream.message()['content']) <= 11

def test_run_tool_calls_over_an_endless_stream_raises_the_clear_error():
    stream = ToolCallStream(max_chars=100_000)
    with pytest.raises(StreamTooLong): run_tool_calls(TOOLS, stream.watch(_endless('anthropic')))
    assert MAX_CHARS == 10_000_000 and ToolCallStream().max_chars == MAX_CHARS

@pytest.mark.parametrize('bad', [None, 0, -1, '10', 1.5, float('inf'), True])
def test_a_cap_that_is_no_positive_int_is_refused_when_the_stream_is_made(bad):
    "Not a TypeError at the first event, nor a cap that takes nothing (or everything)"
    with pytest.raises(ValueError, match='max_chars is a positive int'): ToolCallStream(max_chars=bad)

# --- depth ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('p', STREAMED)
@pytest.mark.parametrize('depth', [600, 200_000])
def test_arguments_nested_at_any_depth_are_a_clear_refusal_never_a_recursion_error(p, depth):
    text = '{"xs": ' + '[' * depth + ']' * depth + '}'
    evs = response(p, call(p, 0, 'c1', text, pieces=[text[i:i + 1000] for i in range(0, len(text), 1000)]))
    stream = ToolCallStream()
    for e in evs:
        stream.feed(e)
        assert isinstance(stream.partial, dict)  # a snapshot at any depth: no recursion
    msgs = run_tool_calls(TOOLS, evs)
    assert RAN == [] and refused(stream.calls[0], 'nest more than 512 deep') and not msgs.results[0].ok
    json.dumps(stream.message())[:10]  # the message is JSON the SDK can send

def test_a_structured_reply_nested_at_any_depth_is_a_clear_error_never_a_recursion_error():
    from dataclasses import dataclass
    from typing import Any

    from funccall import OutputError, parse_output_stream

    @dataclass
    class Turn:
        "A turn"
        x: Any = None
    text = '{"x": ' + '[' * 200_000 + ']' * 200_000 + '}'
    with pytest.raises(OutputError, match='nested too deeply'):
        for _ in parse_output_stream(Turn, [text[i:i + 1000] for i in range(0, len(text), 1000)]): pass
