"""`parse_output_stream`: a structured reply read as it streams, through the OpenAI SDK's own stream of content
deltas: the fields complete so far at each step, coerced as `parse_output` coerces them, then the same instance
(or the same `OutputError`) that `parse_output` gives for the whole text."""
import asyncio, datetime as dt, json
from dataclasses import dataclass

import pydantic
import pytest

from funccall import OutputError, parse_output, parse_output_stream
from sse import chat_client, sse

@dataclass
class Item:
    name: str
    qty: int

@dataclass
class Order:
    id: int
    when: dt.date
    items: list[Item]
    note: str = ''

REPLY = {'id': 7, 'when': '2026-11-24', 'items': [{'name': 'pen', 'qty': 2}, {'name': 'ink', 'qty': 1}], 'note': 'asap'}

def _chunks(text: str, size: int):
    "The Chat Completions chunks carrying `text` as the assistant's content"
    def chunk(delta, finish=None):
        return {'id': 'c', 'object': 'chat.completion.chunk', 'created': 0, 'model': 'm', 'choices': [{'index': 0, 'delta': delta, 'finish_reason': finish}]}
    return [chunk({'role': 'assistant', 'content': ''}), *[chunk({'content': text[i:i + size]}) for i in range(0, len(text), size)], chunk({}, 'stop')]

def test_fields_so_far_at_each_step_then_the_instance():
    text = json.dumps(REPLY)
    stream = chat_client(sse('openai', _chunks(text, 1))).chat.completions.create(model='m', messages=[], stream=True)
    steps = list(parse_output_stream(Order, (c.choices[0].delta.content or '' for c in stream)))
    assert steps[-1] == parse_output(Order, text) and isinstance(steps[-1], Order)
    partial = steps[:-1]
    assert partial[0] == {} and {'id': 7} in partial
    assert all(s.get('when') in (None, dt.date(2026, 11, 24)) for s in partial)  # coerced, and only once the date is whole
    assert {'id': 7, 'when': dt.date(2026, 11, 24), 'items': [Item('pen', 2)]} in partial  # finished items, as instances
    assert [s['note'] for s in partial if 'note' in s] == ['', 'a', 'as', 'asa', 'asap']  # a string as far as it has come
    assert all(a != b for a, b in zip(partial, partial[1:]))  # a step only when something changed
    for a, b in zip(partial, partial[1:]): assert set(a) <= set(b)  # a field, once there, stays

def test_a_type_that_is_not_an_object_streams_as_value():
    text = json.dumps({'value': REPLY['items']})
    steps = list(parse_output_stream(list[Item], [text[i:i + 3] for i in range(0, len(text), 3)]))
    assert steps[-1] == [Item('pen', 2), Item('ink', 1)]
    assert {'value': [Item('pen', 2)]} in steps[:-1] and {'value': []} in steps[:-1]

def test_a_reply_that_does_not_fit_fails_as_parse_output_fails():
    for bad in (json.dumps(REPLY)[:-5], json.dumps({**REPLY, 'when': 'soon'})):
        with pytest.raises(OutputError) as whole: parse_output(Order, bad)
        with pytest.raises(OutputError) as streamed: list(parse_output_stream(Order, list(bad)))
        assert str(streamed.value) == str(whole.value)

class Turn(pydantic.BaseModel):
    speaker: str = pydantic.Field(alias='who')
    words: list[str]

def test_async_pieces_and_a_pydantic_model_with_an_alias():
    text = json.dumps({'who': 'Ann', 'words': ['hi', 'thére']}, ensure_ascii=False)
    async def pieces():
        data = text.encode()
        for i in range(len(data)): yield data[i:i + 1]  # bytes as a raw stream gives them, a character split
    async def go(): return [x async for x in parse_output_stream(Turn, pieces())]
    steps = asyncio.run(go())
    assert steps[-1] == Turn(who='Ann', words=['hi', 'thére'])
    assert {'speaker': 'Ann', 'words': ['hi']} in steps  # the Python name
