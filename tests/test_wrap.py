"""Toolboxes made from a toolbox (`funccall.toolsets.wrap`): prefixed and filtered, and the deferred one (`funccall.toolsets.search`).

A call by a new name runs that tool's own pipeline (confirmation, injected values, hooks); and, attacked as
`tests/test_attack_names.py` attacks a toolbox, no other name reaches a tool: not a filtered-out tool's (by its name,
an alias a provider knew it by, a call expression, a provider's response), not a prefixed tool's old name, not an
attribute of a renamed tool. The toolbox wrapped is left as it was.
"""
import asyncio, json

import pytest

from funccall import Tool, ToolGroup, ToolNotFound, Toolbox, call_func, call_func_async, run_tool_calls
from funccall.toolsets.search import DeferredToolbox, deferred
from funccall.toolsets.wrap import filtered, prefixed, view
from test_attack_names import FORGED, RAN, _attack_names, _fresh, add, transfer  # noqa: F401 - `_fresh` empties RAN around each test

class Notes:
    "The user's notes"
    def find(self, query: str) -> list:
        "Find notes containing some words"
        RAN.append(('find', query))
        return ['a note']

def _box() -> Toolbox:
    return Toolbox([Tool(transfer, requires_confirmation=True, inject='account'), add, ToolGroup(Notes)], injected={'account': 'bob'})

def _refused(nm, ns):
    "Calling `nm` in `ns`, every way a caller can, is a `ToolNotFound`, and nothing runs"
    with pytest.raises(ToolNotFound): call_func(nm, FORGED, ns)
    with pytest.raises(ToolNotFound): asyncio.run(call_func_async(nm, FORGED, ns))
    if isinstance(ns, Toolbox):
        assert ns.call(nm, FORGED).failure == 'name'
        assert asyncio.run(ns.acall(nm, FORGED)).failure == 'name'
    assert RAN == [], (nm, RAN)

# --- prefixed ------------------------------------------------------------------------------------------------------

def test_prefixed_names_definitions_and_results_carry_the_new_names():
    box = _box()
    gh = prefixed(box, 'gh')
    assert list(gh.tools) == ['gh_transfer', 'gh_add', 'gh_notes-find'] and gh.groups == {'gh_notes-find': 'notes'}
    assert [d['function']['name'] for d in gh.definitions('openai')] == list(gh.tools)
    assert [d['name'] for d in gh.definitions('anthropic')] == list(gh.tools)
    r = gh.call('gh_add', {'a': 1, 'b': 2}, call_id='c1')
    assert r.ok and r.value == 3 and r.name == 'gh_add' and r.call_id == 'c1'
    [msg] = run_tool_calls(gh, {'candidates': [{'content': {'parts': [{'function_call': {'name': 'gh_add', 'args': {'a': 2, 'b': 2}}}]}}]})
    assert msg['parts'][0]['function_response']['name'] == 'gh_add'  # Gemini matches an answer by the name it called
    assert list(box.tools) == ['transfer', 'add', 'notes-find'] and box['add'].name == 'add'  # the wrapped toolbox unchanged
    assert box['add'].schema['name'] == 'add' and box.call('add', {'a': 1, 'b': 1}).name == 'add'
    assert prefixed(prefixed(box, 'a'), 'b', sep='-').tools.keys() >= {'b-a_add'}

def test_a_prefixed_tool_runs_its_own_pipeline():
    "Confirmation still asked (pending without anyone to ask), the injected account the box's, never the model's"
    gh = prefixed(_box(), 'gh')
    r = gh.call('gh_transfer', {'to': 'carol', 'amount': 5})
    assert r.status == 'pending' and RAN == []
    done = gh.resume(r)
    assert done.ok and done.value == 'bob->carol:5' and done.name == 'gh_transfer'
    RAN.clear()
    assert gh.call('gh_transfer', FORGED).failure == 'arguments' and RAN == []  # the model can't write the injected value
    seen = []
    hooked = prefixed(Toolbox([Tool(add, pre_hook=lambda t, a: seen.append(t.name))]), 'x')
    assert hooked.call('x_add', {'a': 1, 'b': 2}).value == 3 and seen == ['x_add']

def test_no_other_name_reaches_a_prefixed_tool():
    "The old names, attributes of the renamed tool, other spellings: unknown tools, through every namespace"
    gh = prefixed(_box(), 'gh')
    names = ['transfer', 'add', 'notes-find', 'notes.find', 'gh', 'gh_', 'gh_notes.find', 'gh.add', 'gh-add', 'GH_add', 'gh_add ',
             *_attack_names('gh_transfer', gh['gh_transfer']), *_attack_names('gh_add', gh['gh_add'])]
    for nm in names:
        for ns in (gh, [gh], {'x': 1} | gh.namespace()):
            if isinstance(ns, dict) and nm in ns: continue
            _refused(nm, ns)

@pytest.mark.parametrize('prefix', ['a.b', 'a b', '', 'x' * 65, 'é', None, 'a\x00', '__class__.'])
def test_a_prefix_that_would_make_a_dotted_or_odd_name_is_refused(prefix):
    with pytest.raises(ValueError, match='prefix'): prefixed(_box(), prefix)
    with pytest.raises(ValueError, match='prefix'): prefixed(_box(), 'ok', sep='.')

# --- filtered ------------------------------------------------------------------------------------------------------

def test_filtered_keeps_what_a_predicate_or_a_list_keeps():
    box = _box()
    assert list(filtered(box, ['add', 'notes-find']).tools) == ['add', 'notes-find']
    assert list(filtered(box, lambda t: not t.requires_confirmation).tools) == ['add', 'notes-find']
    assert list(filtered(box, 'add').tools) == ['add']
    assert filtered(box, ['notes-find']).groups == {'notes-find': 'notes'}
    with pytest.raises(ValueError, match='no tool named'): filtered(box, ['add', 'wipe'])
    f = filtered(box, ['add'])
    assert f.injected is box.injected and f.call('add', {'a': 2, 'b': 3}).value == 5  # the box's settings
    assert list(box.tools) == ['transfer', 'add', 'notes-find']

def test_a_filtered_out_tool_is_out_of_reach():
    "By its name, an alias a provider knew it by, a call expression, a batch, a provider's response: never run"
    long_name = Tool(transfer, name='t' * 70, inject='account')
    box = Toolbox([long_name, add], injected={'account': 'bob'})
    box.definitions('openai', rename=True)  # the box now calls the long name by a shorter alias
    [alias] = [a for a, nm in box.aliases.items() if nm == 't' * 70]
    assert box.call(alias, {'to': 'x', 'amount': 1}).ok
    RAN.clear()
    f = filtered(box, ['add'])
    for nm in ('t' * 70, alias, *_attack_names('add', f['add'])): _refused(nm, f)
    assert [r.failure for r in f.batch([(alias, {'to': 'x', 'amount': 1}), ('t' * 70, {})])] == ['name', 'name']
    assert f.call_expr(f"{alias}(to='x', amount=1)")[0].failure == 'name'
    resp = {'role': 'assistant', 'tool_calls': [{'id': 'c1', 'type': 'function', 'function': {'name': alias, 'arguments': json.dumps(FORGED)}}]}
    assert run_tool_calls(f, resp).results[0].failure == 'name'
    assert RAN == []
    assert f.definitions('openai') == [add_def for add_def in box.definitions('openai', rename=True) if add_def['function']['name'] == 'add']

# --- deferred ------------------------------------------------------------------------------------------------------

def test_deferred_shares_the_toolbox_and_runs_its_search_tool():
    box = _box()
    d = deferred(box)
    assert isinstance(d, DeferredToolbox) and isinstance(d, Toolbox) and d.tools is box.tools and d.injected is box.injected
    def weather(city: str) -> str:
        "Today's weather forecast for a city"
        return 'sunny'
    box.add(weather)  # added to the wrapped toolbox: the deferred one finds it
    r = d.call('search_tools', {'query': 'weather forecast'})
    assert r.ok and r.value.names[0] == 'weather' and d.loaded[0] == 'weather'
    assert box.call('search_tools', {'query': 'x'}).failure == 'name'  # the wrapped toolbox knows no search tool
    assert 'search_tools' not in [t.name for t in d] and len(d) == len(box)
    for nm in _attack_names('search_tools', d.search_tool): _refused(nm, d)

def test_a_client_search_a_plain_toolbox_cannot_answer_raises():
    "Left unanswered, the next request would fail for its missing output: the developer hears of it now"
    from funccall import UnansweredCall
    items = [{'type': 'tool_search_call', 'call_id': 'ts', 'execution': 'client', 'arguments': {'query': 'add'}}]
    with pytest.raises(UnansweredCall, match='deferred'): run_tool_calls(_box(), items, provider='responses')
    assert run_tool_calls(_box(), items, provider='responses', others='skip') == []
    assert run_tool_calls(deferred(_box(), search='client'), items, provider='responses')[0]['type'] == 'tool_search_output'

def test_view_takes_a_toolbox_only():
    with pytest.raises(TypeError, match='Toolbox'): view([add])
    f = filtered(deferred(_box()), ['add'])
    assert f.call('search_tools', {'query': 'x'}).failure == 'name' and type(f) is Toolbox  # a plain toolbox again
    assert not hasattr(f, 'loaded') and not hasattr(f, 'search_tool')  # the deferred toolbox's own state stays its own
