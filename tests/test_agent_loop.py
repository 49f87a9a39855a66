"""The README's agent loops, run against the real provider SDKs over a local mock transport (no network): the model
first asks for three tool calls (one works, one tool fails, one call is malformed), then answers. Each loop must
send the assistant's message before the results, answer every call by its id, send requests the SDK's own types
accept, and stop when the model stops calling tools. Also `run_tool_calls`' per-request `injected=`."""
import asyncio, json, re
from pathlib import Path

import anthropic, httpx, httpx2, openai, pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter

from funccall import Tool, Toolbox, run_tool_calls, run_tool_calls_async
from test_messages import get_stock_price, get_weather  # the same two tools the recorded payloads call

ROOT = Path(__file__).parent.parent
PAYLOADS = Path(__file__).parent / 'payloads'

def readme_loops() -> dict:
    "The functions of the README's agent-loop block, defined over the tools the recorded responses call"
    block = re.search(r'## An agent loop\n.*?```python\n(.*?)```', (ROOT / 'README.md').read_text(), re.S).group(1)
    ns = {'silly_sum': get_weather}  # defined in the README's tour, the block before
    exec(compile(block, '<README agent loop>', 'exec'), ns)
    ns['tools'] = Toolbox([get_weather, get_stock_price])  # the README's `tools`, swapped for the recorded calls' tools
    return ns

class Recorded:
    "A mock HTTP transport answering each request with the next recorded response, keeping the request bodies"
    def __init__(self, *names, http=httpx):  # anthropic's SDK speaks httpx2, openai's httpx
        self.replies, self.sent, self.http = [json.loads((PAYLOADS / f'{n}.json').read_text()) for n in names], [], http
    def __call__(self, request):
        self.sent.append(json.loads(request.content))
        return self.http.Response(200, json=self.replies[len(self.sent) - 1])
    def client(self): return self.http.Client(transport=self.http.MockTransport(self), base_url='http://model.test')

QUESTION = {'role': 'user', 'content': 'Weather in Paris and Lyon, and the price of ZZZZ?'}

def test_openai_chat_loop():
    rec = Recorded('openai_chat', 'openai_chat_final')
    client = openai.OpenAI(api_key='test', base_url='http://model.test/v1', http_client=rec.client(), max_retries=0)
    messages = [dict(QUESTION)]
    answer = readme_loops()['chat'](client, messages, 'gpt-4.1')
    assert answer.startswith('Paris is 21') and len(rec.sent) == 2  # it stopped when the model stopped calling tools
    second = rec.sent[1]['messages']
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(second)
    assert [m['role'] for m in second] == ['user', 'assistant', 'tool', 'tool', 'tool']  # the calls' message before the answers
    call_ids = [c['id'] for c in second[1]['tool_calls']]
    assert [m['tool_call_id'] for m in second[2:]] == call_ids
    paris, price, lyon = (m['content'] for m in second[2:])
    assert json.loads(paris) == {'city': 'Paris', 'temp': 21, 'unit': 'C'}
    assert price.startswith('KeyError') and lyon.startswith('ToolInputError')  # failures go to the model as text
    assert rec.sent[1]['tools'] == rec.sent[0]['tools'] and len(messages) == 6  # and the final answer

def test_openai_responses_loop():
    rec = Recorded('openai_responses', 'openai_responses_final')
    client = openai.OpenAI(api_key='test', base_url='http://model.test/v1', http_client=rec.client(), max_retries=0)
    answer = readme_loops()['responses'](client, [dict(QUESTION)], 'o4-mini')
    assert answer.startswith('Paris is 21') and len(rec.sent) == 2
    second = rec.sent[1]['input']
    TypeAdapter(ResponseInputParam).validate_python(second)
    kinds = [i.get('type', i.get('role')) for i in second]
    assert kinds == ['user', 'reasoning', 'function_call', 'function_call', 'function_call', *['function_call_output'] * 3]
    assert [i['call_id'] for i in second[5:]] == [i['call_id'] for i in second[2:5]]

def test_anthropic_loop():
    rec = Recorded('anthropic', 'anthropic_final', http=httpx2)
    client = anthropic.Anthropic(api_key='test', base_url='http://model.test', http_client=rec.client(), max_retries=0)
    answer = readme_loops()['claude'](client, [dict(QUESTION)], 'test-model')
    assert answer.startswith('Paris is 21') and len(rec.sent) == 2
    second = rec.sent[1]['messages']
    TypeAdapter(list[MessageParam]).validate_python(second)
    assert [m['role'] for m in second] == ['user', 'assistant', 'user']
    uses = [b['id'] for b in second[1]['content'] if b['type'] == 'tool_use']
    results = second[2]['content']
    assert [b['tool_use_id'] for b in results] == uses and [b['is_error'] for b in results] == [False, True, True]

# --- injected values, per request ------------------------------------------------------------------------

def _orders_box():
    def list_orders(customer_id: str, status: str = 'open') -> list:
        "List the customer's orders"
        return [customer_id, status]
    return Toolbox([Tool(list_orders, inject=('customer_id',))])

CALL = ChatCompletion.model_validate({
    'id': 'c', 'object': 'chat.completion', 'created': 0, 'model': 'm',
    'choices': [{'index': 0, 'finish_reason': 'tool_calls', 'message': {'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': 'call_1', 'type': 'function', 'function': {'name': 'list_orders', 'arguments': '{"status": "shipped"}'}}]}}]})

def test_injected_values_per_request():
    box = _orders_box()
    for user in ('u1', 'u2'):  # one toolbox, a request per user
        [msg] = run_tool_calls(box, CALL, injected={'customer_id': user})
        assert json.loads(msg['content']) == [user, 'shipped']
    [msg] = asyncio.run(run_tool_calls_async(box, CALL, injected={'customer_id': 'u3'}))
    assert json.loads(msg['content']) == ['u3', 'shipped']

def test_a_missing_injected_value_raises_for_the_developer():
    with pytest.raises(TypeError, match="'customer_id'.*injected"): run_tool_calls(_orders_box(), CALL)
    with pytest.raises(TypeError, match="'customer_id'"): asyncio.run(run_tool_calls_async(_orders_box(), CALL))

def test_inside_an_event_loop_the_sync_form_answers_as_the_async_one():
    "As in a notebook cell: the sync loop's `run_tool_calls` gives what `await run_tool_calls_async` gives, and raises what it raises"
    async def main():
        sync = run_tool_calls(_orders_box(), CALL, injected={'customer_id': 'u'})
        with pytest.raises(TypeError, match="'customer_id'"): run_tool_calls(_orders_box(), CALL)
        return sync, await run_tool_calls_async(_orders_box(), CALL, injected={'customer_id': 'u'})
    sync, awaited = asyncio.run(main())
    assert sync == awaited and json.loads(sync[0]['content']) == ['u', 'shipped']
