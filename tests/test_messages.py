"""The provider round trip: calls read out of recorded responses (SDK objects and their dicts), results
written back and checked against the SDKs' own request types. No network: `tests/payloads/` holds the responses."""
import asyncio, json, subprocess, sys
from pathlib import Path
from typing import Literal

import pytest
from anthropic.types import Message, MessageParam, ToolResultBlockParam, UserMessageParam
from google.genai import types as gtypes
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam, ChatCompletionToolMessageParam
from openai.types.responses import Response, ResponseInputParam
from openai.types.responses.response_input_param import FunctionCallOutput
from pydantic import BaseModel, TypeAdapter

from funccall import ToolCall, ToolResult, Toolbox, run_tool_calls, run_tool_calls_async, tool_calls, tool_results

PAYLOADS = Path(__file__).parent / 'payloads'

def get_weather(city: str, unit: Literal['C', 'F'] = 'C') -> dict:
    "Current weather in `city`"
    return {'city': city, 'temp': 21 if unit == 'C' else 70, 'unit': unit}

def get_stock_price(symbol: str) -> float:
    "Latest price of `symbol`"
    raise KeyError(f'unknown symbol {symbol}')

def toolbox() -> Toolbox: return Toolbox([get_weather, get_stock_price])

# provider -> (recorded response, its SDK type)
SDK = {'openai': ('openai_chat.json', ChatCompletion), 'openai_responses': ('openai_responses.json', Response),
       'anthropic': ('anthropic.json', Message), 'gemini': ('gemini.json', gtypes.GenerateContentResponse)}

def payload(p: str) -> dict: return json.loads((PAYLOADS / SDK[p][0]).read_text())
def sdk_obj(p: str): return SDK[p][1].model_validate(payload(p))

# In each response: a call that works, one whose tool raises, one with bad arguments
EXPECTED = {
    'openai': [ToolCall('get_weather', {'city': 'Paris'}, 'call_9fJx2Qm8TpLk4VbN1sRw7ZcA'),
               ToolCall('get_stock_price', {'symbol': 'ZZZZ'}, 'call_Hq3Vd7YnB2mKx8PwT5sLe0Rj'),
               ToolCall('get_weather', '{"city": "Lyon", "unit": ', 'call_Z6tNc1WbX4rGf9MuK2pDy8Qs')],  # cut-off JSON stays text
    'openai_responses': [ToolCall('get_weather', {'city': 'Paris'}, 'call_Qw7Er2Ty9Ui4Op1As6Df3Gh'),
                         ToolCall('get_stock_price', {'symbol': 'ZZZZ'}, 'call_Jk8Lz5Xc2Vb7Nm4Qw1Er9Ty'),
                         ToolCall('get_weather', {'city': 'Lyon', 'unit': 'K'}, 'call_Ui3Op6As9Df2Gh5Jk8Lz1Xc')],
    'anthropic': [ToolCall('get_weather', {'city': 'Paris'}, 'toolu_01A8bC3dE5fG7hJ9kL2mN4pQ'),
                  ToolCall('get_stock_price', {'symbol': 'ZZZZ'}, 'toolu_01R6sT8uV1wX3yZ5aB7cD9eF'),
                  ToolCall('get_weather', {'city': 'Lyon', 'unit': 'kelvin'}, 'toolu_01G2hJ4kL6mN8pQ1rS3tU5vW')],
    'gemini': [ToolCall('get_weather', {'city': 'Paris'}, 'funccall-0-get_weather'),  # Gemini sent no ids: made ones
               ToolCall('get_stock_price', {'symbol': 'ZZZZ'}, 'funccall-1-get_stock_price'),
               ToolCall('get_weather', {'town': 'Lyon'}, 'funccall-2-get_weather')],
}

# provider -> paths from a whole response to each part of it that `tool_calls` takes
PARTS = {'openai': [(), ('choices', 0), ('choices', 0, 'message'), ('choices', 0, 'message', 'tool_calls')],
         'openai_responses': [(), ('output',)],
         'anthropic': [(), ('content',)],
         'gemini': [(), ('candidates', 0), ('candidates', 0, 'content'), ('candidates', 0, 'content', 'parts')]}

def at(o, path: tuple):
    for k in path: o = o[k] if isinstance(k, int) or isinstance(o, dict) else getattr(o, k)
    return o

FORMS = {'sdk': sdk_obj, 'json': payload, 'dump': lambda p: sdk_obj(p).model_dump()}  # a Gemini dump has snake_case keys

# --- the payloads are what the SDKs return ----------------------------------------------------------

def extras(m, path='$'):
    "Fields the SDK's models don't know, anywhere in `m`: a misspelt payload would validate with them"
    if isinstance(m, BaseModel):
        if m.model_extra: yield path, m.model_extra
        for k in type(m).model_fields: yield from extras(getattr(m, k), f'{path}.{k}')
    elif isinstance(m, (list, tuple)):
        for i, v in enumerate(m): yield from extras(v, f'{path}[{i}]')

@pytest.mark.parametrize('p', SDK)
def test_payloads_are_sdk_responses(p):
    assert list(extras(sdk_obj(p))) == []

# --- reading calls ----------------------------------------------------------------------------------

@pytest.mark.parametrize('form', FORMS)
@pytest.mark.parametrize('p,path', [(p, path) for p, paths in PARTS.items() for path in paths])
def test_reads_calls_from_any_part_in_any_form(p, path, form):
    part = at(FORMS[form](p), path)
    assert tool_calls(part) == EXPECTED[p]  # the provider told from the shape
    assert tool_calls(part, p) == EXPECTED[p]

def test_gemini_made_ids_are_stable_and_given_ids_kept():
    assert tool_calls(sdk_obj('gemini')) == tool_calls(payload('gemini'))
    parts = [{'text': 'Checking.'}, {'functionCall': {'id': 'fc-7', 'name': 'get_weather', 'args': {'city': 'Oslo'}}},
             {'functionCall': {'name': 'get_weather'}}]
    assert tool_calls(parts) == [ToolCall('get_weather', {'city': 'Oslo'}, 'fc-7'), ToolCall('get_weather', {}, 'funccall-1-get_weather')]

@pytest.mark.parametrize('text,expected', [('{"a": 1}', {'a': 1}), ('', {}), ('  ', {}), (None, {}), ('[1, 2]', '[1, 2]'), ('{"a": ', '{"a": ')])
def test_argument_text(text, expected):
    call = {'id': 'call_1', 'type': 'function', 'function': {'name': 'f', 'arguments': text}}
    assert tool_calls([call]) == [ToolCall('f', expected, 'call_1')]

def test_responses_without_calls():
    assert tool_calls({'role': 'assistant', 'content': 'Hello!'}) == []  # a chat message leaves `tool_calls` out
    assert tool_calls([]) == [] and tool_calls([{'type': 'text', 'text': 'Hi'}]) == []
    assert tool_calls({'choices': []}) == []
    assert tool_calls({'candidates': [{'finishReason': 'SAFETY'}]}) == []
    assert run_tool_calls(toolbox(), {'id': 'msg_1', 'role': 'assistant', 'content': [{'type': 'text', 'text': 'Done.'}]}) == []

def test_skips_calls_that_run_elsewhere():
    blocks = [{'type': 'server_tool_use', 'id': 'srvtoolu_1', 'name': 'web_search', 'input': {'query': 'x'}},
              {'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather', 'input': {'city': 'Rome'}}]
    assert tool_calls(blocks) == [ToolCall('get_weather', {'city': 'Rome'}, 'toolu_1')]
    custom = {'id': 'call_2', 'type': 'custom', 'custom': {'name': 'grammar', 'input': 'x'}}  # answered now: see test_loop_control.py
    [c] = tool_calls({'role': 'assistant', 'tool_calls': [custom]})
    assert c == ToolCall('grammar', 'x', 'call_2') and c.kind == 'custom'

def test_bad_provider_and_unknown_shape():
    with pytest.raises(ValueError, match="Unknown provider 'cohere'"): tool_calls([], 'cohere')
    with pytest.raises(ValueError, match="provider="): tool_calls({'text': 'hi'})
    assert tool_calls(payload('openai'), 'OpenAI') == EXPECTED['openai']  # spelt as `tool_name` spells it

# --- writing results back, checked against the SDKs' request types -----------------------------------

def typed(T, d: dict):
    "Validate `d` against TypedDict `T`, and check it holds no key `T` lacks: a TypedDict ignores those"
    TypeAdapter(T).validate_python(d)
    assert set(d) <= set(T.__annotations__), set(d) - set(T.__annotations__)

_anthropic_msg = TypeAdapter(MessageParam)  # kept alive: its `Iterable` content is validated lazily, while iterated

def check_openai(msgs):
    for m in msgs: typed(ChatCompletionToolMessageParam, m)
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(msgs)

def check_responses(msgs):
    for m in msgs: typed(FunctionCallOutput, m)
    TypeAdapter(ResponseInputParam).validate_python(msgs)

def check_anthropic(msgs):
    [m] = msgs
    typed(UserMessageParam, m)
    for b in m['content']: typed(ToolResultBlockParam, b)
    list(_anthropic_msg.validate_python(m)['content'])

def check_gemini(msgs):
    [m] = msgs
    c = gtypes.Content.model_validate(m)  # its models forbid unknown fields
    assert c.role == 'user' and all(p.function_response for p in c.parts)

CHECKS = {'openai': check_openai, 'openai_responses': check_responses, 'anthropic': check_anthropic, 'gemini': check_gemini}

def answer(p: str) -> tuple[list[ToolResult], list[dict]]:
    calls = tool_calls(sdk_obj(p))
    results = toolbox().batch(calls)  # a ToolCall unpacks as (name, args, call_id)
    return results, tool_results(results, p)

@pytest.mark.parametrize('p', SDK)
def test_results_validate_as_requests(p):
    results, msgs = answer(p)
    assert [r.call_id for r in results] == [c.id for c in EXPECTED[p]]
    assert [r.ok for r in results] == [True, False, False]
    assert results[1].error.startswith("KeyError: 'unknown symbol ZZZZ'")
    assert results[2].error.startswith('ToolInputError')
    CHECKS[p](msgs)

def test_openai_chat_messages():
    results, msgs = answer('openai')
    assert msgs[0] == {'role': 'tool', 'tool_call_id': 'call_9fJx2Qm8TpLk4VbN1sRw7ZcA', 'content': '{"city": "Paris", "temp": 21, "unit": "C"}'}
    assert [m['content'] for m in msgs[1:]] == [r.error for r in results[1:]]
    assert 'not valid JSON' in msgs[2]['content']

def test_openai_responses_items():
    results, msgs = answer('openai_responses')
    assert msgs[0] == {'type': 'function_call_output', 'call_id': 'call_Qw7Er2Ty9Ui4Op1As6Df3Gh', 'output': '{"city": "Paris", "temp": 21, "unit": "C"}'}
    assert [m['output'] for m in msgs[1:]] == [r.error for r in results[1:]]

def test_anthropic_one_message_with_is_error():
    results, [m] = answer('anthropic')
    assert m['role'] == 'user' and [b['tool_use_id'] for b in m['content']] == [c.id for c in EXPECTED['anthropic']]
    assert [b['is_error'] for b in m['content']] == [False, True, True]
    assert m['content'][0]['content'] == '{"city": "Paris", "temp": 21, "unit": "C"}'
    assert 'ZZZZ' in m['content'][1]['content'] and "'unit'" in m['content'][2]['content']

def test_gemini_output_and_error():
    results, [m] = answer('gemini')
    frs = [p['function_response'] for p in m['parts']]
    assert frs[0] == {'name': 'get_weather', 'response': {'output': {'city': 'Paris', 'temp': 21, 'unit': 'C'}}}  # data as data, no made-up id
    assert [fr['response'] for fr in frs[1:]] == [{'error': r.error} for r in results[1:]]
    assert 'town' in frs[2]['response']['error']

def test_gemini_answers_given_ids_and_sends_text_when_cut():
    r = ToolResult('get_weather', {}, 'success', value={'temp': 21}, call_id='fc-7', limit=5)
    [m] = tool_results([r], 'gemini')
    assert m['parts'] == [{'function_response': {'id': 'fc-7', 'name': 'get_weather', 'response': {'output': r.text}}}]
    check_gemini([m])

def test_no_results_no_messages():
    assert all(tool_results([], p) == [] for p in SDK)

@pytest.mark.parametrize('p', ['openai', 'openai_responses', 'anthropic'])
def test_a_result_without_call_id_cannot_answer(p):
    with pytest.raises(ValueError, match="'get_weather' has no call_id"):
        tool_results([ToolResult('get_weather', {}, 'success', value=1)], p)

# --- both -------------------------------------------------------------------------------------------

@pytest.mark.parametrize('p', SDK)
def test_run_tool_calls(p):
    expected = answer(p)[1]
    assert run_tool_calls(toolbox(), sdk_obj(p)) == expected
    assert asyncio.run(run_tool_calls_async(toolbox(), payload(p), p)) == expected

def test_import_needs_no_sdk():
    code = "import sys, funccall; print([m for m in ('openai', 'anthropic', 'google.genai') if m in sys.modules])"
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '[]'
