"""Shared test helpers. `assert_valid_schema` is a plain function: `from conftest import assert_valid_schema`."""
from jsonschema import Draft202012Validator


def _walk(node, path='#'):
    "Yield (path, dict) for every dict inside `node`"
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items(): yield from _walk(v, f'{path}/{k}')
    elif isinstance(node, list):
        for i, v in enumerate(node): yield from _walk(v, f'{path}/{i}')


def assert_valid_schema(s: dict) -> dict:
    """Check that `s` is a valid Draft 2020-12 schema, that every `$ref` points into its root `$defs`,
    and that there is no `$defs` anywhere but at the root. Returns `s`."""
    Draft202012Validator.check_schema(s)
    defs = s.get('$defs', {})
    for path, d in _walk(s):
        if '$defs' in d: assert path == '#', f'nested $defs at {path}'
        if '$ref' in d:
            ref = d['$ref']
            assert ref.startswith('#/$defs/'), f'{path}: $ref {ref!r} does not point into the root $defs'
            name = ref[len('#/$defs/'):]
            assert name in defs, f'{path}: $ref {ref!r} does not resolve; $defs has {sorted(defs)}'
    return s


def with_defs(s: dict, defs: dict) -> dict:
    "`handle_type`'s result `s` as a root schema holding the `defs` it filled"
    return {**s, '$defs': defs} if defs else dict(s)
