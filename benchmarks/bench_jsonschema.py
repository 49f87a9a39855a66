"""funccall's JSON Schema validator beside `jsonschema` (and `fastjsonschema`, when installed), in one run.

    python benchmarks/bench_jsonschema.py

The case is a realistic tool's arguments: ten parameters (four scalars, an array of integers, an array of strings
with a default, a free-form object, an object with two properties, a string enum, a date-time string). Timed:
compiling the schema, checking a valid argument dict (`is_valid`), and reporting an invalid one (`problems`).
"""
import timeit

from jsonschema import Draft202012Validator

from funccall._jsonschema import compile_schema

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

def _us(fn, n) -> float:
    "Best of 7 runs of `n` calls, in µs per call"
    return min(timeit.repeat(fn, number=n, repeat=7)) / n * 1e6

def main():
    ours, theirs = compile_schema(SCHEMA), Draft202012Validator(SCHEMA)
    assert ours.is_valid(GOOD) and theirs.is_valid(GOOD) and not ours.is_valid(BAD) and not theirs.is_valid(BAD)
    rows = [('compile the schema', _us(lambda: compile_schema(SCHEMA), 2_000), _us(lambda: Draft202012Validator(SCHEMA), 2_000)),
            ('is_valid, valid arguments', _us(lambda: ours.is_valid(GOOD), 100_000), _us(lambda: theirs.is_valid(GOOD), 2_000)),
            ('is_valid, invalid arguments', _us(lambda: ours.is_valid(BAD), 100_000), _us(lambda: theirs.is_valid(BAD), 2_000)),
            ('all problems, invalid arguments', _us(lambda: ours.problems(BAD), 10_000), _us(lambda: list(theirs.iter_errors(BAD)), 1_000))]
    try:
        import fastjsonschema
        fast = fastjsonschema.compile({**SCHEMA, '$schema': 'http://json-schema.org/draft-07/schema#'})
        def fast_valid():
            try: fast(GOOD); return True
            except fastjsonschema.JsonSchemaException: return False
        extra = f"fastjsonschema (draft 7): is_valid, valid arguments {_us(fast_valid, 20_000):.3f} µs"
    except ImportError: extra = 'fastjsonschema: not installed'
    print(f"{'case':36} {'funccall µs':>12} {'jsonschema µs':>14} {'ratio':>8}")
    for case, a, b in rows: print(f"{case:36} {a:12.3f} {b:14.3f} {a / b:8.4f}")
    print(extra)
    print('problems:', *ours.problems(BAD), sep='\n  ')

if __name__ == '__main__': main()
