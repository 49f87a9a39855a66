"""Structured outputs: the request parameter for each provider, validated with its SDK's types, and the parser's round
trip instance -> JSON -> instance for every class kind."""
import json
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Optional

import anthropic.types
import pytest
from google.genai import types as gtypes
from jsonschema import Draft202012Validator
from openai.types.chat.completion_create_params import ResponseFormat
from openai.types.responses import ResponseTextConfigParam
from pydantic import BaseModel, TypeAdapter
from test_providers_sdk import strict_violations
from typing_extensions import NotRequired, TypedDict

from funccall import OutputError, ProviderWarning, Report, SchemaError, output_format, output_schema, parse_output
from funccall.core._json import jsonable

@dataclass
class Turn:
    "One turn of a dialogue"
    speaker: Literal['user', 'assistant']  # who spoke
    text: str
    score: Optional[float] = None
    tags: list[str] = field(default_factory=list)

class Address(TypedDict):
    "A postal address"
    street: str
    zip: NotRequired[str]

class Span(NamedTuple):
    start: int
    end: int = -1

class Person(BaseModel):
    "Someone"
    name: str
    age: int = 0
    home: Optional[Address] = None

class Point:
    "A point"
    def __init__(self, x: float, y: float = 0.0): self.x, self.y = x, y
    def __eq__(self, o): return isinstance(o, Point) and (self.x, self.y) == (o.x, o.y)

@dataclass
class Node:
    "A tree"
    value: int
    kids: list['Node'] = field(default_factory=list)

def _json(v) -> str:
    if isinstance(v, Point): return json.dumps({'x': v.x, 'y': v.y})
    if isinstance(v, BaseModel): return v.model_dump_json()
    if isinstance(v, list): return '[' + ','.join(map(_json, v)) + ']'
    return json.dumps(jsonable(v))

CASES = [
    (Turn, Turn('user', 'hi', 0.5, ['a'])),
    (Address, {'street': 'Main', 'zip': '123'}),
    (Address, {'street': 'Main'}),
    (Span, Span(1, 4)),
    (Person, Person(name='A', age=3, home={'street': 'x'})),
    (Point, Point(1.5, 2.0)),
    (Node, Node(1, [Node(2)])),
    (list[Turn], [Turn('user', 'a'), Turn('assistant', 'b', None, [])]),
    (Literal['yes', 'no'], 'no'),
    (int, 7),
    (Optional[Span], None),
]
IDS = ['dataclass', 'typeddict', 'typeddict-partial', 'namedtuple', 'pydantic', 'plain-class', 'recursive', 'list', 'literal', 'int', 'optional']

@pytest.mark.parametrize('t,v', CASES, ids=IDS)
def test_round_trip(t, v):
    "instance -> JSON (as the model would send it) -> parser -> an equal instance"
    sent = _wrap(t, v)
    assert parse_output(t, sent) == v
    Draft202012Validator(output_schema(t)).validate(json.loads(sent))  # and the JSON fits the schema asked for

CHAT, RESPONSES = TypeAdapter(ResponseFormat), TypeAdapter(ResponseTextConfigParam)
CLAUDE = TypeAdapter(anthropic.types.OutputConfigParam)

@pytest.mark.parametrize('t', [t for t, _ in CASES], ids=IDS)
def test_every_provider_takes_the_format(t):
    rep = Report()
    o = output_format(t, 'openai', report=rep)['response_format']
    assert CHAT.validate_python(o) == o
    r = output_format(t, 'responses', report=rep)['text']
    assert RESPONSES.validate_python(r) == r and r['format']['name'] == o['json_schema']['name']
    assert o['json_schema']['strict'] is True and strict_violations(o['json_schema']['schema']) == []
    g = output_format(t, 'gemini', report=rep)
    cfg = gtypes.GenerateContentConfig(**g)
    assert cfg.response_json_schema == g['response_json_schema'] and cfg.response_mime_type == 'application/json'
    if t is Node:  # recursion: Claude has none, and its output format is always constrained
        with pytest.raises(SchemaError, match="can't be a Claude output format .*recursive"): output_format(t, 'anthropic')
        return
    a = output_format(t, 'anthropic', report=rep)['output_config']
    assert CLAUDE.validate_python(a) == a
    assert strict_violations(a['format']['schema'], claude=True) == []
    assert not rep.lost

def test_strict_nulls_come_back_as_defaults():
    "OpenAI strict makes optional fields required and nullable; null means the default"
    s = output_format(Turn)['response_format']['json_schema']['schema']
    assert s['required'] == ['speaker', 'text', 'score', 'tags']
    reply = '{"speaker": "assistant", "text": "ok", "score": null, "tags": null}'
    Draft202012Validator(s).validate(json.loads(reply))
    assert parse_output(Turn, reply) == Turn('assistant', 'ok')

def test_class_docstrings_reach_the_model():
    s = output_format(list[Turn], 'anthropic')['output_config']['format']['schema']
    assert s['$defs']['Turn']['description'] == 'One turn of a dialogue'
    assert output_format(Person)['response_format']['json_schema']['schema']['description'] == 'Someone'

def test_errors_the_model_can_act_on():
    with pytest.raises(OutputError, match=r"(?s)doesn't fit Turn.*- speaker: expected one of 'user', 'assistant', got 'bob'.*- text: missing"):
        parse_output(Turn, '{"speaker": "bob"}')
    with pytest.raises(OutputError, match='The reply is not JSON'): parse_output(Turn, 'Sure! Here it is')
    with pytest.raises(OutputError, match=r'\{"value": \.\.\.\}'): parse_output(list[Turn], '[]')
    with pytest.raises(OutputError, match=r"value\[0\]\.text: missing"): parse_output(list[Turn], '{"value": [{"speaker": "user"}]}')

def test_what_strict_mode_cant_hold_is_sent_non_strict_and_reported():
    with pytest.warns(ProviderWarning, match="can't be strict for OpenAI"):
        o = output_format(dict[str, int])['response_format']['json_schema']
    assert o['strict'] is False
    with pytest.raises(SchemaError, match="can't be a Claude output format"): output_format(dict[str, int], 'anthropic')
    with pytest.raises(ValueError, match='Unknown provider'): output_format(Turn, 'cohere')

def _wrap(t, v) -> str:
    "The JSON a model sends for `v`: a type that is not an object comes wrapped as `{\"value\": ...}`"
    text = _json(v)
    return text if output_schema(t).get('properties', {}).keys() != {'value'} else json.dumps({'value': json.loads(text)})
