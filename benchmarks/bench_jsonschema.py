"""funccall's JSON Schema validator beside `jsonschema`, `fastjsonschema`, `jsonschema-rs` and pydantic-core, in one run.

    python benchmarks/bench_jsonschema.py

The case is a realistic tool's arguments: ten parameters (four scalars, an array of integers, an array of strings
with a default, a free-form object, an object with two properties, a string enum, a date-time string). Timed:
compiling the schema, checking a valid argument dict (`is_valid`), an invalid one, and every problem of an invalid
one as text (what a model reads back): funccall's `problems` (and a built tool's `ToolInputError` text), jsonschema's and jsonschema-rs's `iter_errors`, and
pydantic-core's `ValidationError` text for a TypedDict of the same rules (strict, extra keys forbidden), which is the
target. Then the corpus of real MCP tools (`tests/data/mcp_corpus/`): each tool's arguments with one property given a
value of a type its schema forbids (a number for text, else text), every problem as text, funccall beside jsonschema-rs (pydantic has no validator
from a JSON Schema). fastjsonschema stops at draft 7 and raises at the first problem: it has `is_valid` rows only.

CPU time (`time.process_time`: the machine is shared), the median of 7 rounds. Target (issue 22): every problem as
text at most pydantic-core's time for the same report. The other validators are peers, never dependencies.
"""
from __future__ import annotations

import sys, warnings
from pathlib import Path
from typing import Literal

import fastjsonschema, jsonschema_rs
from jsonschema import Draft202012Validator
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import Annotated, NotRequired, TypedDict

from funccall import ToolInputError, mk_tool
from funccall._jsonschema import compile_schema
from _timing import cpu_us

SCHEMA = {'type': 'object', 'required': ['query', 'limit', 'ids'], 'additionalProperties': False, 'properties': {
    'query': {'type': 'string', 'description': 'What to look for'},
    'limit': {'type': 'integer', 'minimum': 1},
    'ratio': {'type': 'number'},
    'exact': {'type': 'boolean', 'default': False},
    'ids': {'type': 'array', 'items': {'type': 'integer'}},
    'tags': {'type': 'array', 'items': {'type': 'string'}, 'default': []},
    'extra': {'type': 'object'},
    'point': {'type': 'object', 'properties': {'x': {'type': 'number'}, 'y': {'type': 'number'}}, 'required': ['x', 'y']},
    'status': {'type': 'string', 'enum': ['open', 'shipped', 'cancelled']},
    'since': {'type': 'string', 'format': 'date-time'},
}}
GOOD = {'query': 'red shoes', 'limit': 10, 'ratio': 0.5, 'exact': True, 'ids': [1, 2, 3], 'tags': ['a', 'b'],
        'extra': {'k': 'v'}, 'point': {'x': 1.0, 'y': 2}, 'status': 'open', 'since': '2024-01-01T00:00:00Z'}
BAD = {**GOOD, 'limit': 0, 'ids': [1, 'two', 3], 'point': {'x': 1}, 'status': 'lost', 'color': 'red'}

class Point(TypedDict):
    x: float
    y: float

class Args(TypedDict):
    "SCHEMA's rules for pydantic-core"
    __pydantic_config__ = ConfigDict(extra='forbid', strict=True)
    query: str
    limit: Annotated[int, Field(ge=1)]
    ids: list[int]
    ratio: NotRequired[float]
    exact: NotRequired[bool]
    tags: NotRequired[list[str]]
    extra: NotRequired[dict]
    point: NotRequired[Point]
    status: NotRequired[Literal['open', 'shipped', 'cancelled']]
    since: NotRequired[str]

_us = cpu_us

def _valid(check):
    "`is_valid` of a validator that raises instead"
    def valid(v):
        try: check(v); return True
        except fastjsonschema.JsonSchemaException: return False
    return valid

def text_of(v, value) -> str: return '\n'.join(map(str, v.problems(value)))

def corpus_reports() -> tuple[float, float, int]:
    "CPU seconds for every problem as text over the corpus (one argument of each tool made wrong): funccall, jsonschema-rs"
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_corpus import corpus_calls
    cases = []
    for t, args, _ in corpus_calls():
        s, props = t['inputSchema'], t['inputSchema'].get('properties', {})
        for k in props:
            bad = {**args, k: 12345 if isinstance(args.get(k), str) else 'wrong'}  # the usual mistake: a number for text, or text
            rs = jsonschema_rs.validator_for(s, validate_formats=False)
            if not rs.is_valid(bad):
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    cases.append((compile_schema(s), rs, bad))
                break
    for ours, rs, bad in cases: assert text_of(ours, bad) and list(rs.iter_errors(bad))
    ours = sum(_us(lambda v=v, b=b: text_of(v, b), 50, 5) for v, _, b in cases)
    theirs = sum(_us(lambda v=v, b=b: '\n'.join(str(e) for e in v.iter_errors(b)), 50, 5) for _, v, b in cases)
    return ours / 1e6, theirs / 1e6, len(cases)

def refusal_text(tool) -> str:
    "What a built tool's refusal of BAD tells the model: `ToolInputError`'s text"
    try: tool(**BAD)
    except ToolInputError as e: return str(e)
    raise AssertionError('BAD was accepted')

def main():
    ours, js, rs = compile_schema(SCHEMA), Draft202012Validator(SCHEMA), jsonschema_rs.validator_for(SCHEMA, validate_formats=False)
    fast = _valid(fastjsonschema.compile({**SCHEMA, '$schema': 'http://json-schema.org/draft-07/schema#'}))
    ta = TypeAdapter(Args)
    def pyd_text(v):
        try: ta.validate_python(v)
        except ValidationError as e: return str(e)
    for check in (ours.is_valid, js.is_valid, rs.is_valid, fast, lambda v: pyd_text(v) is None): assert check(GOOD) and not check(BAD)
    assert len(ours.problems(BAD)) == len(list(js.iter_errors(BAD))) == len(list(rs.iter_errors(BAD))) == 5
    rows = [  # case, funccall, jsonschema, jsonschema-rs, fastjsonschema, pydantic-core (None: no such row)
        ('compile the schema', _us(lambda: compile_schema(SCHEMA).is_valid(GOOD), 300), _us(lambda: Draft202012Validator(SCHEMA), 300),
         _us(lambda: jsonschema_rs.validator_for(SCHEMA, validate_formats=False), 300), _us(lambda: fastjsonschema.compile(SCHEMA), 30), None),
        ('is_valid, valid arguments', _us(lambda: ours.is_valid(GOOD), 20_000), _us(lambda: js.is_valid(GOOD), 1_000),
         _us(lambda: rs.is_valid(GOOD), 20_000), _us(lambda: fast(GOOD), 20_000), _us(lambda: ta.validate_python(GOOD), 20_000)),
        ('is_valid, invalid arguments', _us(lambda: ours.is_valid(BAD), 20_000), _us(lambda: js.is_valid(BAD), 1_000),
         _us(lambda: rs.is_valid(BAD), 20_000), _us(lambda: fast(BAD), 20_000), None),
        ('every problem as text', _us(lambda: text_of(ours, BAD), 3_000), _us(lambda: '\n'.join(str(e) for e in js.iter_errors(BAD)), 300),
         _us(lambda: '\n'.join(str(e) for e in rs.iter_errors(BAD)), 3_000), None, _us(lambda: pyd_text(BAD), 3_000))]
    print(f"python {sys.version.split()[0]}; CPU µs, median of 7 rounds ('compile' for funccall includes generating its check)\n")
    print(f"{'case':32} {'funccall':>9} {'jsonschema':>11} {'jsonschema-rs':>14} {'fastjsonschema':>15} {'pydantic-core':>14}")
    fmt = lambda x: f"{'-':>9}" if x is None else f"{x:9.2f}"
    for case, a, b, c, d, e in rows: print(f"{case:32} {a:9.2f} {b:11.2f} {c:14.2f} {fmt(d):>15} {fmt(e):>14}")
    a, e = rows[3][1], rows[3][5]
    print(f"\nevery problem as text: funccall / pydantic-core {a / e:.2f} (target <= 1: {'yes' if a <= e else 'NO'}); "
          f"/ jsonschema-rs {a / rows[3][3]:.2f}")
    tool = mk_tool(lambda name, **kw: kw, {'name': 'search', 'description': 'Search', 'input_schema': SCHEMA})
    refused, pyd = _us(lambda: refusal_text(tool), 3_000), _us(lambda: pyd_text(BAD), 3_000)
    print(f"a built tool's refusal of the same arguments (the ToolInputError text): funccall {refused:.2f} µs, pydantic-core "
          f"{pyd:.2f} µs, ratio {refused / pyd:.2f}")
    ours_c, rs_c, n = corpus_reports()
    print(f"corpus, {n} tools with one argument wrong, every problem as text: funccall {ours_c * 1e3:.2f} ms, jsonschema-rs "
          f"{rs_c * 1e3:.2f} ms, ratio {ours_c / rs_c:.2f}")
    print('\nproblems:', *ours.problems(BAD), sep='\n  ')

if __name__ == '__main__': main()
