"Checks on the corpus of real MCP tool schemas itself (tests/data/mcp_corpus/), which other tests run over"
import pytest
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from corpus import CORPUS_DIR, corpus_servers, load_corpus

KEYS = {'server', 'package', 'registry', 'version', 'command', 'collected', 'tools'}

def _walk(node):
    "Every dict inside `node`, `node` included"
    if isinstance(node, dict):
        yield node
        for v in node.values(): yield from _walk(v)
    elif isinstance(node, list):
        for v in node: yield from _walk(v)

def _validator(schema: dict):
    "The validator class of `schema`'s declared `$schema` (2020-12 when none); fails on a `$schema` jsonschema does not know"
    cls = validator_for(schema, default=None) if '$schema' in schema else Draft202012Validator
    assert cls is not None, f"unknown $schema {schema['$schema']!r}"
    return cls

def test_size():
    servers, tools = corpus_servers(), load_corpus()
    assert len(servers) >= 15, list(servers)
    assert len(servers) == len(list(CORPUS_DIR.glob('*.json'))), "two files hold the same server"
    assert len(tools) >= 300, len(tools)
    assert {s['registry'] for s in servers.values()} == {'npm', 'pypi'}

def test_records():
    for name, s in corpus_servers().items():
        assert KEYS <= s.keys(), (name, KEYS - s.keys())
        assert (CORPUS_DIR/f'{name}.json').exists(), f"{name}: a file is named after its server"
        assert s['registry'] in ('npm', 'pypi') and s['package'] and s['version'] and s['command'], s['server']
        assert s['tools'], f"{s['server']} listed no tools"
        names = [t['name'] for t in s['tools']]
        assert len(names) == len(set(names)), f"{s['server']}: duplicate tool names"

def test_readme_lists_every_server():
    readme = (CORPUS_DIR/'README.md').read_text()
    for name, s in corpus_servers().items(): assert f"| {name}.json | `{s['package']}` | {s['registry']} | {s['version']} |" in readme, name

def test_tools_have_names_and_object_input_schemas():
    for server, t in load_corpus():
        assert isinstance(t.get('name'), str) and t['name'], (server, t)
        s = t.get('inputSchema')
        assert isinstance(s, dict) and s.get('type') == 'object', (server, t['name'], s)

@pytest.mark.parametrize('key', ['inputSchema', 'outputSchema'])
def test_schemas_are_valid_json_schema(key):
    bad = []
    for server, t in load_corpus():
        if key not in t: continue
        try: _validator(t[key]).check_schema(t[key])
        except Exception as e: bad.append(f"{server}/{t['name']}: {str(e).splitlines()[0]}")
    assert not bad, '\n'.join(bad)

def test_variety():
    "The corpus covers the shapes the inverse meets in the wild: generated and hand-written, old drafts and new"
    schemas = [t['inputSchema'] for _, t in load_corpus()]
    declared = {s.get('$schema') for s in schemas}
    assert None in declared and any('draft-07' in (d or '') for d in declared), declared
    nodes = [n for s in schemas for n in _walk(s)]
    for k in ('$defs', '$ref', 'anyOf', 'enum', 'default', 'additionalProperties', 'items', 'format'):
        assert any(k in n for n in nodes), f"no schema in the corpus uses {k!r}"
    assert any(n.get('default', 0) is None for n in nodes), "no `default: null` (pydantic's optional fields)"
    assert any(t.get('outputSchema') for _, t in load_corpus())
    assert any(t.get('annotations') for _, t in load_corpus())

def test_loader_gives_fresh_copies():
    (name, tool), *_ = load_corpus()
    tool['inputSchema']['x-changed'] = True
    assert 'x-changed' not in load_corpus()[0][1]['inputSchema'] and 'x-changed' not in corpus_servers()[name]['tools'][0]['inputSchema']
