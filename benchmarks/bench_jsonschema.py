"""funccall's JSON Schema validator beside `jsonschema`, `fastjsonschema`, `jsonschema-rs` and pydantic-core, in one run.

    python benchmarks/bench_jsonschema.py

The case is a realistic tool's arguments: ten parameters (four scalars, an array of integers, an array of strings
with a default, a free-form object, an object with two properties, a string enum, a date-time string). Timed:
compiling the schema, checking a valid argument dict (`is_valid`), an invalid one, and every problem of an invalid
one as text (what a model reads back): funccall's `problems` (and a built tool's `ToolInputError` text), jsonschema's
and jsonschema-rs's `iter_errors`, and pydantic-core's `ValidationError` text for a TypedDict of the same rules
(strict, extra keys forbidden), which is the target. Then the corpus of real MCP tools (`tests/data/mcp_corpus/`):
each tool's arguments with one property given a value of a type its schema forbids (a number for text, else text),
every problem as text, funccall beside jsonschema-rs, and beside pydantic-core for the tools whose rules it can be
given (pydantic has no validator from a JSON Schema: `core_schema_of` translates the keywords most tools use, and a
tool with any other is left out of that comparison). fastjsonschema stops at draft 7 and raises at the first
problem: it has `is_valid` rows only.

CPU time (`time.process_time`: the machine is shared), the median of 7 rounds (5 per corpus tool); the reports that
are compared are timed side by side, their rounds taken in turn, so a change in the machine's load falls on each
alike. Target (issue 22): every problem as text at most pydantic-core's time for the same report. The other
validators are peers, never dependencies.
"""
from __future__ import annotations

import sys, warnings
from pathlib import Path
from typing import Literal

import fastjsonschema, jsonschema_rs
from jsonschema import Draft202012Validator
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import SchemaValidator, core_schema as cs
from typing_extensions import Annotated, NotRequired, TypedDict

from funccall import ToolInputError, mk_tool
from funccall.core._jsonschema import compile_schema
from _timing import cpu_us, cpu_us_each

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

_NOTES = frozenset(('description', 'title', 'default', 'examples', 'format', '$schema'))  # keywords that never refuse

def core_schema_of(s):
    """pydantic-core's schema with the rules of JSON Schema `s` (strict, extra keys as `additionalProperties` says), for
    the keywords most tools use; None when `s` has one this doesn't translate (`$ref`, `oneOf`, `allOf`, ...)"""
    if s is True or s == {}: return cs.any_schema()
    if not isinstance(s, dict): return None
    kw, t = s.keys() - _NOTES, s.get('type')
    if 'enum' in s:
        ok = kw <= {'enum', 'type'} and s['enum'] and all(isinstance(x, str) for x in s['enum']) and t in (None, 'string')
        return cs.literal_schema(s['enum']) if ok else None
    if isinstance(t, list):
        rest = [x for x in t if x != 'null']
        inner = core_schema_of({**s, 'type': rest[0]}) if len(rest) == 1 else None
        return None if inner is None else cs.nullable_schema(inner) if 'null' in t else inner
    if t is None and kw == {'anyOf'} and isinstance(s['anyOf'], list):
        subs = [core_schema_of(x) for x in s['anyOf']]
        return None if None in subs else cs.union_schema(subs)
    nums = dict(ge=s.get('minimum'), le=s.get('maximum'), gt=s.get('exclusiveMinimum'), lt=s.get('exclusiveMaximum'))
    if t == 'string' and kw <= {'type', 'minLength', 'maxLength', 'pattern'}:
        return cs.str_schema(strict=True, min_length=s.get('minLength'), max_length=s.get('maxLength'), pattern=s.get('pattern'))
    if t == 'integer' and kw <= {'type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'}: return cs.int_schema(strict=True, **nums)
    if t == 'number' and kw <= {'type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'}: return cs.float_schema(strict=True, **nums)
    if t == 'boolean' and kw == {'type'}: return cs.bool_schema(strict=True)
    if t == 'null' and kw == {'type'}: return cs.none_schema()
    if t == 'array' and kw <= {'type', 'items', 'minItems', 'maxItems'}:
        items = core_schema_of(s.get('items', True))
        return None if items is None else cs.list_schema(items, min_length=s.get('minItems'), max_length=s.get('maxItems'), strict=True)
    if t == 'object' and kw <= {'type', 'properties', 'required', 'additionalProperties'}:
        props, req, extra = s.get('properties', {}), s.get('required', []), s.get('additionalProperties', True)
        fields = {k: core_schema_of(x) for k, x in props.items()}
        extras = core_schema_of(extra) if extra is not False else None
        if None in fields.values() or (extra is not False and extras is None) or not isinstance(req, list): return None
        if not props: return cs.dict_schema(cs.str_schema(), extras, strict=True)
        return cs.typed_dict_schema({k: cs.typed_dict_field(x, required=k in req) for k, x in fields.items()}, strict=True,
                                    extra_behavior='forbid' if extra is False else 'allow', extras_schema=None if extra is False else extras)
    return None

def core_validator(s):
    "pydantic-core's validator for JSON Schema `s` (see `core_schema_of`), or None"
    try: return SchemaValidator(c) if (c := core_schema_of(s)) is not None else None
    except Exception: return None  # noqa: BLE001 - a pattern Rust's regex can't read: not compared

def core_text(v, value) -> str | None:
    "pydantic-core's `ValidationError` text for `value`, or None when it is valid"
    try: v.validate_python(value)
    except ValidationError as e: return str(e)

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
    # each tool's reports side by side (`cpu_us_each`): funccall, jsonschema-rs, and pydantic-core where it can be given
    # the tool's rules (see `core_schema_of`) and refuses the value too
    ours = theirs = ours_p = pyd = 0.0
    n_p = 0
    for v, rs, b in cases:
        c = core_validator(v.schema)
        fns = [lambda v=v, b=b: text_of(v, b), lambda rs=rs, b=b: '\n'.join(str(e) for e in rs.iter_errors(b))]
        if c is not None and core_text(c, b) is not None: fns.append(lambda c=c, b=b: core_text(c, b))
        ts = cpu_us_each(fns, 50, 5)
        ours, theirs = ours + ts[0], theirs + ts[1]
        if len(ts) == 3: ours_p, pyd, n_p = ours_p + ts[0], pyd + ts[2], n_p + 1
    return ours / 1e6, theirs / 1e6, len(cases), ours_p / 1e6, pyd / 1e6, n_p

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
    tool = mk_tool(lambda name, **kw: kw, {'name': 'search', 'description': 'Search', 'input_schema': SCHEMA})
    # the reports side by side, their rounds in turn (funccall, jsonschema-rs, pydantic-core, a built tool's refusal)
    *texts, refused = cpu_us_each([lambda: text_of(ours, BAD), lambda: '\n'.join(str(e) for e in rs.iter_errors(BAD)),
                                   lambda: pyd_text(BAD), lambda: refusal_text(tool)], 3_000)
    rows = [  # case, funccall, jsonschema, jsonschema-rs, fastjsonschema, pydantic-core (None: no such row)
        ('compile the schema', _us(lambda: compile_schema(SCHEMA).is_valid(GOOD), 300), _us(lambda: Draft202012Validator(SCHEMA), 300),
         _us(lambda: jsonschema_rs.validator_for(SCHEMA, validate_formats=False), 300), _us(lambda: fastjsonschema.compile(SCHEMA), 30), None),
        ('is_valid, valid arguments', _us(lambda: ours.is_valid(GOOD), 20_000), _us(lambda: js.is_valid(GOOD), 1_000),
         _us(lambda: rs.is_valid(GOOD), 20_000), _us(lambda: fast(GOOD), 20_000), _us(lambda: ta.validate_python(GOOD), 20_000)),
        ('is_valid, invalid arguments', _us(lambda: ours.is_valid(BAD), 20_000), _us(lambda: js.is_valid(BAD), 1_000),
         _us(lambda: rs.is_valid(BAD), 20_000), _us(lambda: fast(BAD), 20_000), None),
        ('every problem as text', texts[0], _us(lambda: '\n'.join(str(e) for e in js.iter_errors(BAD)), 300), texts[1], None, texts[2])]
    print(f"python {sys.version.split()[0]}; CPU µs, median of 7 rounds ('compile' for funccall includes generating its check)\n")
    print(f"{'case':32} {'funccall':>9} {'jsonschema':>11} {'jsonschema-rs':>14} {'fastjsonschema':>15} {'pydantic-core':>14}")
    fmt = lambda x: f"{'-':>9}" if x is None else f"{x:9.2f}"
    for case, a, b, c, d, e in rows: print(f"{case:32} {a:9.2f} {b:11.2f} {c:14.2f} {fmt(d):>15} {fmt(e):>14}")
    a, e = rows[3][1], rows[3][5]
    print(f"\nevery problem as text: funccall / pydantic-core {a / e:.2f} (target <= 1: {'yes' if a <= e else 'NO'}); "
          f"/ jsonschema-rs {a / rows[3][3]:.2f}")
    print(f"a built tool's refusal of the same arguments (the ToolInputError text): funccall {refused:.2f} µs, pydantic-core "
          f"{e:.2f} µs, ratio {refused / e:.2f}")
    ours_c, rs_c, n, ours_p, pyd_c, n_p = corpus_reports()
    print(f"corpus, {n} tools with one argument wrong, every problem as text: funccall {ours_c * 1e3:.2f} ms, jsonschema-rs "
          f"{rs_c * 1e3:.2f} ms, ratio {ours_c / rs_c:.2f}")
    print(f"  the {n_p} of them pydantic-core can be given the rules of: funccall {ours_p * 1e3:.2f} ms, pydantic-core "
          f"{pyd_c * 1e3:.2f} ms, ratio {ours_p / pyd_c:.2f} (target <= 1: {'yes' if ours_p <= pyd_c else 'NO'})")
    print('\nproblems:', *ours.problems(BAD), sep='\n  ')

if __name__ == '__main__': main()
