"""The README's streaming loops run as written, for all four providers, against their SDK clients over a mock
transport: the first turn streams two tool calls, the second the answer; the second request must carry the
assistant's message that `ToolCallStream.message()` built (put through the SDK's own request serialisation), then
the answers, and the loop returns the streamed text."""
import json, re
from pathlib import Path

import pytest

from funccall import Toolbox
from sse import anthropic_client, chat_client, events, gemini_client, script, sse

README = Path(__file__).parent.parent / 'README.md'

def _streaming_block() -> str:
    section = README.read_text().split('## Streaming', 1)[1]
    return re.findall(r'```python\n(.*?)```', section, re.S)[0]

def get_weather(city: str) -> str:
    "Weather in a city"
    return f'{city}: 21 C'

def list_orders() -> list:
    "The orders"
    return ['o-1']

CALLS = [('call_1', 'get_weather', {'city': 'Lisbon'}), ('call_2', 'list_orders', {})]
ANSWER = ['21 C in Lisbon; ', 'one order.']

def _bodies(p: str) -> list[bytes]:
    return [sse(p, events(p, CALLS, script(CALLS, (), [list(json.dumps(a)) for _, _, a in CALLS]))),
            sse(p, events(p, [], script([], ANSWER)))]

@pytest.fixture
def ns() -> dict:
    ns = {'tools': Toolbox([get_weather, list_orders])}
    exec(compile(_streaming_block(), '<README streaming>', 'exec'), ns)
    return ns

def test_chat_stream(ns):
    seen = []
    assert ns['chat_stream'](chat_client(_bodies('openai'), seen), [{'role': 'user', 'content': 'hi'}], 'gpt-4.1') == ''.join(ANSWER)
    sent = json.loads(seen[1].content)['messages']
    assert [m['role'] for m in sent] == ['user', 'assistant', 'tool', 'tool']
    assert [c['function']['arguments'] for c in sent[1]['tool_calls']] == ['{"city": "Lisbon"}', '{}']
    assert [m['content'] for m in sent[2:]] == ['Lisbon: 21 C', '["o-1"]']

def test_responses_stream(ns):
    seen = []
    assert ns['responses_stream'](chat_client(_bodies('openai_responses'), seen), [{'role': 'user', 'content': 'hi'}], 'gpt-4.1') == ''.join(ANSWER)
    sent = json.loads(seen[1].content)['input']
    assert [i.get('type', i.get('role')) for i in sent] == ['user', 'function_call', 'function_call', 'function_call_output', 'function_call_output']
    assert sent[1]['call_id'] == 'call_1' and sent[1]['arguments'] == '{"city": "Lisbon"}' and sent[3]['output'] == 'Lisbon: 21 C'

def test_claude_stream(ns):
    seen = []
    assert ns['claude_stream'](anthropic_client(_bodies('anthropic'), seen), [{'role': 'user', 'content': 'hi'}], 'claude') == ''.join(ANSWER)
    sent = json.loads(seen[1].content)['messages']
    assert sent[1] == {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'call_1', 'name': 'get_weather', 'input': {'city': 'Lisbon'}},
                                                        {'type': 'tool_use', 'id': 'call_2', 'name': 'list_orders', 'input': {}}]}
    assert [b['tool_use_id'] for b in sent[2]['content']] == ['call_1', 'call_2']

def test_gemini_stream(ns):
    seen = []
    assert ns['gemini_stream'](gemini_client(_bodies('gemini'), seen), [{'role': 'user', 'parts': [{'text': 'hi'}]}], 'gemini-2.5-flash') == ''.join(ANSWER)
    sent = json.loads(seen[1].content)
    contents = sent['contents']
    assert [c['role'] for c in contents] == ['user', 'model', 'user']
    assert [p['functionCall']['name'] for p in contents[1]['parts']] == ['get_weather', 'list_orders']
    assert [p['functionResponse']['response'] for p in contents[2]['parts']] == [{'output': 'Lisbon: 21 C'}, {'output': ['o-1']}]
    assert sent['tools'][0]['functionDeclarations'][0]['name'] == 'get_weather'
