"""The official JSON Schema Test Suite (draft 2020-12 and draft 7) against funccall's validator.

For every keyword the validator enforces, every test must give `valid` as the suite states, through both `is_valid`
and `problems` (empty exactly when valid). For what it doesn't enforce (see `funccall.core._jsonschema`'s docstring), only
the valid instances are checked: they must be accepted, since a keyword we don't enforce must never cause a refusal.
"""
import json, warnings
from pathlib import Path

import pytest

from funccall.core._inputs import Problem
from funccall.core._jsonschema import compile_schema
from funccall.core.schema import SchemaWarning

SUITE = Path(__file__).parent / 'data' / 'json-schema-test-suite'
DRAFTS = {'draft2020-12': '2020-12', 'draft7': 'draft7'}

# Files whose keyword is an annotation here (format, content*) or not followed ($dynamicRef): valid instances only
NOT_ENFORCED_FILES = {'format.json', 'content.json', 'dynamicRef.json'}
# Groups that need what the validator deliberately leaves out: valid instances only
NOT_ENFORCED_GROUPS = {
    'validate definition against metaschema': 'a remote $ref (the metaschema) is never fetched',
    'remote ref, containing refs itself': 'a remote $ref is never fetched',
    'unevaluatedItems with $dynamicRef': '$dynamicRef is not followed',
    'unevaluatedProperties with $dynamicRef': '$dynamicRef is not followed',
}
# The one known deviation, where a valid instance is refused: the schema's `$schema` names a custom metaschema whose
# `$vocabulary` turns validation off; metaschemas are never fetched, so the validator can't know. Checked below to
# still be the only one.
KNOWN_DEVIATIONS = {('vocabulary.json', 'schema that uses custom metaschema with with no validation vocabulary')}

def _cases():
    for folder, draft in DRAFTS.items():
        for f in sorted((SUITE / folder).glob('*.json')): yield pytest.param(f, draft, id=f'{folder}/{f.name}')

def _check(v, data):
    "is_valid and problems, which must agree"
    ok, probs = v.is_valid(data), v.problems(data)
    assert all(isinstance(p, Problem) and isinstance(p.message, str) and p.message for p in probs)
    assert ok == (not probs), f'is_valid {ok} but problems {probs}'
    return ok

@pytest.mark.parametrize('path,draft', list(_cases()))
def test_suite_file(path, draft):
    wrong = []
    for g in json.loads(path.read_text()):
        if (path.name, g['description']) in KNOWN_DEVIATIONS: continue
        enforced = path.name not in NOT_ENFORCED_FILES and g['description'] not in NOT_ENFORCED_GROUPS
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', SchemaWarning)  # a pattern we don't check warns; nothing else may be raised
            v = compile_schema(g['schema'], draft=draft)
        for t in g['tests']:
            if not enforced and not t['valid']: continue
            if _check(v, t['data']) != t['valid']: wrong.append(f"{g['description']} / {t['description']}: expected valid={t['valid']}")
    assert not wrong, '\n'.join(wrong)

def test_known_deviations_are_still_the_only_ones():
    "The deviation listed above refuses a valid instance; if it stops doing so, take it off the list"
    for name, desc in KNOWN_DEVIATIONS:
        g = next(g for g in json.loads((SUITE / 'draft2020-12' / name).read_text()) if g['description'] == desc)
        v = compile_schema(g['schema'])
        assert any(t['valid'] and not v.is_valid(t['data']) for t in g['tests'])

def test_suite_has_the_files():
    "The copy in tests/data holds what the suite test claims to run"
    names = {p.name for p in (SUITE / 'draft2020-12').glob('*.json')}
    assert {'unevaluatedProperties.json', 'ref.json', 'prefixItems.json', 'optional-ecmascript-regex.json'} <= names
    assert len(list((SUITE / 'draft7').glob('*.json'))) >= 37
