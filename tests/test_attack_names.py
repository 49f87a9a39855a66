"""Attacks on tool names: through a `Toolbox`, a `ToolGroup`, or a list, tuple or dict of `Tool`s, a model's name reaches
a tool that namespace advertises and nothing else, and a call always runs that tool's pipeline.

Each test does what a hostile model would: names an attribute of a `Tool` (`transfer.fn` skipped the confirmation and
let the model write the injected `account`), of a toolbox or of a group, with every separator the resolver reads, through
every namespace `call_func`, `call_func_async` and call expressions take; and asserts the raw function never ran (`RAN`)
and the error is a `ToolNotFound` naming what was asked and what is offered.
"""
import asyncio, json

import pytest

from funccall import (ExprError, StopRun, Tool, ToolGroup, ToolNotFound, Toolbox, call_func, call_func_async, coerce_inputs, get_schema_nm,
                      mk_ns, parse_calls, resolve_nm)
from funccall._load import TargetError, load_target

RAN = []  # every run of a raw function below


@pytest.fixture(autouse=True)
def _fresh():
    RAN.clear()
    yield
    RAN.clear()


def transfer(to: str, amount: int, account: str) -> str:
    "Move money from the user's account"
    RAN.append(('transfer', to, amount, account))
    return f'{account}->{to}:{amount}'


def add(a: int, b: int) -> int:
    "Add two numbers"
    RAN.append(('add', a, b))
    return a + b


class Vault:
    "What a vault offers"
    def balance(self, account: str) -> int:
        "The balance of an account"
        RAN.append(('balance', account))
        return 100

    def wipe(self) -> str:
        "Wipe every account (left out of the group)"
        RAN.append(('wipe',))
        return 'wiped'

    def audit(self):  # no docstring: a group skips it
        RAN.append(('audit',))

    def _drain(self): RAN.append(('drain',))


def _transfer_tool(**kw) -> Tool: return Tool(transfer, requires_confirmation=True, inject=('account',), **kw)

def _group() -> ToolGroup: return ToolGroup(Vault(), exclude=('wipe',))

FORGED = {'to': 'mallory', 'amount': 10**6, 'account': 'alice'}  # the model writes the injected account itself

def _namespaces() -> dict:
    "Every namespace that holds the confirmed, injected `transfer` tool, fresh"
    t = _transfer_tool()
    return {'Toolbox': Toolbox([t], injected={'account': 'alice'}), 'list': [t], 'tuple': (t,), 'dict': {'transfer': t},
            'list holding a Toolbox': [Toolbox([t], injected={'account': 'alice'}), add],
            'dict under another name': {'pay': t}}

def _attack_names(head: str, obj) -> list:
    "Every attribute of `obj` (its class's too, dunders and private ones) after `head`, with each separator the resolver reads"
    attrs = sorted(set(dir(obj)) | set(vars(obj)) | {'fn', 'fn.__globals__', 'fn.__globals__.clear', '__wrapped__.__globals__'})
    return [f'{head}{sep}{a.replace(".", sep)}' for a in attrs for sep in '.-']

def _refused(nm, ns, asked=None) -> ToolNotFound:
    "Call `nm` in `ns` both ways a caller can, sync and async; each must be a `ToolNotFound` naming it, and nothing may run"
    with pytest.raises(ToolNotFound) as ei: call_func(nm, FORGED, ns)
    text = call_func(nm, FORGED, ns, raise_on_err=False)
    with pytest.raises(ToolNotFound): asyncio.run(call_func_async(nm, FORGED, ns))
    atext = asyncio.run(call_func_async(nm, FORGED, ns, raise_on_err=False))
    assert RAN == [], (nm, RAN)
    e = ei.value
    assert e.name == (asked or nm) and str(e).startswith(f'Unknown tool {asked or nm!r:.80}; available tools: ')
    assert text == atext and text.startswith(f"ToolNotFound: Unknown tool {asked or nm!r:.80}; available tools: ")
    return e

# --- a Tool's attributes -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize('kind', list(_namespaces()))
def test_no_attribute_of_a_tool_is_a_tool(kind):
    "`transfer.fn` ran the raw function: no confirmation asked, the model's `account` used. Now every attribute is refused"
    ns = _namespaces()[kind]
    head = 'pay' if kind == 'dict under another name' else 'transfer'
    names = _attack_names(head, _transfer_tool())
    assert f'{head}.fn' in names and f'{head}-execute' in names and f'{head}.to_dict' in names and f'{head}-__call__' in names
    for nm in names:
        e = _refused(nm, ns)
        assert head in e.available  # what the model may call instead: the tool itself, nothing of it

def test_a_tool_held_by_an_object_is_its_pipeline_and_nothing_of_it():
    "In a plain namespace an object's attribute that is a `Tool` resolves to the tool: its pipeline runs, its insides never"
    class Bank: pass
    bank = Bank()
    bank.transfer = _transfer_tool()
    ns = {'bank': bank}
    for nm in _attack_names('bank.transfer', bank.transfer): _refused(nm, ns)
    with pytest.raises(TypeError, match="needs 'account'"): call_func('bank.transfer', {'to': 'bob', 'amount': 1}, ns)  # no toolbox supplies it
    bank.transfer = Tool(add, requires_confirmation=True)
    with pytest.raises(PermissionError, match="needs the user's confirmation"): call_func('bank.transfer', {'a': 1, 'b': 2}, ns)
    assert RAN == []

def test_resolve_nm_mk_ns_and_get_schema_nm_never_reach_into_a_tool():
    t = _transfer_tool()
    for ns in (mk_ns([t]), mk_ns(Toolbox([t])), {'transfer': t}):
        assert resolve_nm('transfer', ns) is t
        for nm in ('transfer.fn', 'transfer-fn', 'transfer.execute', 'transfer.__wrapped__', 'transfer._checker'):
            with pytest.raises(ToolNotFound): resolve_nm(nm, ns)
            with pytest.raises(ToolNotFound): get_schema_nm(nm, ns)
    assert RAN == []

# --- a toolbox's and a group's attributes ------------------------------------------------------------------------------

def test_no_attribute_of_a_toolbox_is_a_tool():
    "A toolbox's own methods (`call` takes `injected`, `resume` approves) are no tools, by any name, in any namespace"
    box = Toolbox([_transfer_tool()], injected={'account': 'alice'})
    for nm in sorted(set(dir(box)) | set(vars(box))):
        _refused(nm, box)  # the toolbox itself as the namespace: its tools' names only
        _refused(nm, [box])
    holder = {'box': box}
    for nm in _attack_names('box', box) + ['box.tools.transfer', 'box-tools-transfer', 'box.transfer', 'box-transfer']:
        _refused(nm, holder)
    with pytest.raises(ToolNotFound): call_func('box.call', {'name': 'transfer', 'args': {'to': 'm', 'amount': 1}, 'injected': {'account': 'x'}}, holder)
    assert RAN == []

@pytest.mark.parametrize('kind', ['ToolGroup', 'Toolbox of the group', 'list holding the group', 'dict holding the group'])
def test_a_group_reaches_its_tools_only(kind):
    "Left-out, undocumented and private methods of the group's object, and the group's own attributes, stay out of reach"
    g = _group()
    assert list(g.tools) == ['vault-balance']
    ns = {'ToolGroup': g, 'Toolbox of the group': Toolbox([g]), 'list holding the group': [g], 'dict holding the group': {'g': g}}[kind]
    head = 'g' if kind == 'dict holding the group' else 'vault'
    names = [f'{head}{sep}{m}' for sep in '.-' for m in ('wipe', 'audit', '_drain', 'obj', 'obj.wipe', 'balance.fn', 'balance.__self__.wipe')]
    names += [f'vault-balance{sep}{a}' for sep in '.-' for a in ('fn', 'fn.__self__.wipe', 'execute', '__wrapped__')]
    names += _attack_names(head, g) + ['obj.wipe', 'obj-wipe', 'Vault.wipe']
    for nm in names: _refused(nm, ns)
    if kind != 'dict holding the group':
        assert call_func('vault-balance', {'account': 'a'}, ns) == 100 and RAN == [('balance', 'a')]

def test_a_group_of_a_toolbox_or_a_tool_is_refused():
    "A `ToolGroup` would offer the machinery's own methods (`execute`, `call`, `resume`) as tools"
    for obj in (Toolbox([add]), Tool(add), _group()):
        with pytest.raises(TypeError, match='itself to a Toolbox'): ToolGroup(obj)

# --- the pipeline always runs ------------------------------------------------------------------------------------------

def test_through_a_toolbox_the_user_is_asked_and_the_application_supplies_the_account():
    asked = []
    def confirm(tool, args): asked.append((tool.name, dict(args))); return True
    box = Toolbox([_transfer_tool(confirm=confirm)], injected={'account': 'alice'})
    assert call_func('transfer', {'to': 'bob', 'amount': 5}, box) == 'alice->bob:5'
    assert asyncio.run(call_func_async('transfer', {'to': 'bob', 'amount': 6}, box)) == 'alice->bob:6'
    assert asked == [('transfer', {'to': 'bob', 'amount': 5}), ('transfer', {'to': 'bob', 'amount': 6})]
    assert RAN == [('transfer', 'bob', 5, 'alice'), ('transfer', 'bob', 6, 'alice')]

@pytest.mark.parametrize('kind', list(_namespaces()))
def test_the_model_cannot_write_an_injected_value(kind):
    "The tool's own name with the injected `account` among the arguments: refused before anything is asked or run"
    ns = _namespaces()[kind]
    nm = 'pay' if kind == 'dict under another name' else 'transfer'
    in_box = kind in ('Toolbox', 'list holding a Toolbox')
    err, words = (ValueError, "'account' is supplied by the application") if in_box else (TypeError, "needs 'account'")  # nobody supplies it
    for go in (lambda: call_func(nm, FORGED, ns), lambda: asyncio.run(call_func_async(nm, FORGED, ns))):
        with pytest.raises(err, match=words): go()
    if in_box: assert call_func(nm, FORGED, ns, raise_on_err=False).startswith("ToolInputError: Tool 'transfer': 'account' is supplied")
    assert RAN == []

@pytest.mark.parametrize('kind', list(_namespaces()))
def test_a_call_needing_approval_without_anyone_to_ask_does_not_run(kind):
    ns = _namespaces()[kind]
    nm = 'pay' if kind == 'dict under another name' else 'transfer'
    if kind not in ('Toolbox', 'list holding a Toolbox'):  # outside a toolbox, nobody supplies the account: the developer's mistake
        with pytest.raises(TypeError, match="needs 'account'"): call_func(nm, {'to': 'bob', 'amount': 5}, ns)
        assert RAN == []
        return
    with pytest.raises(PermissionError, match="needs the user's confirmation.*Toolbox.resume"): call_func(nm, {'to': 'bob', 'amount': 5}, ns)
    with pytest.raises(PermissionError): asyncio.run(call_func_async(nm, {'to': 'bob', 'amount': 5}, ns))
    assert call_func(nm, {'to': 'bob', 'amount': 5}, ns, raise_on_err=False).startswith("PermissionError: Tool 'transfer' needs")
    assert RAN == []

def test_a_tool_checked_before_is_still_called_through_its_pipeline():
    "A plan kept for the tool (`coerce_inputs` made one) must not let `call_func`'s fast path call the `Tool` bare"
    t = Tool(add, requires_confirmation=True)
    assert coerce_inputs(t, {'a': '1', 'b': 2}) == {'a': 1, 'b': 2}
    for _ in range(2):
        with pytest.raises(PermissionError, match="needs the user's confirmation"): call_func('add', {'a': 1, 'b': 2}, {'add': t})
    assert RAN == []

def test_a_declined_call_does_not_run():
    box = Toolbox([_transfer_tool(confirm=lambda tool, args: False)], injected={'account': 'alice'})
    with pytest.raises(PermissionError, match='The user declined to run transfer'): call_func('transfer', {'to': 'bob', 'amount': 5}, box)
    assert call_func('transfer', {'to': 'bob', 'amount': 5}, box, raise_on_err=False).startswith('The user declined')
    assert RAN == []

def test_hooks_and_the_cache_run_around_a_tool_in_a_list():
    seen = []
    t = Tool(add, pre_hook=lambda tool, args: seen.append(('pre', dict(args))), post_hook=lambda tool, args, v: v * 10, cache_ttl=60)
    for ns in ([t], {'add': t}, (t,), Toolbox([t])):
        assert call_func('add', {'a': 1, 'b': 2}, ns) == 30
    assert RAN == [('add', 1, 2)] and len(seen) == 4  # the hook on every call, the function once: the cache answered the rest

# --- one contract: the tool's value, errors as raise_on_err says -------------------------------------------------------

@pytest.mark.parametrize('ns', [[add], {'add': add}, [Tool(add)], {'add': Tool(add)}, Toolbox([add]), [Toolbox([add])], (Tool(add),)],
                         ids=['functions', 'dict', 'list of Tools', 'dict of Tools', 'Toolbox', 'list holding a Toolbox', 'tuple of Tools'])
def test_call_func_gives_the_value_whatever_the_namespace(ns):
    assert call_func('add', {'a': 1, 'b': 2}, ns) == 3
    assert asyncio.run(call_func_async('add', '{"a": 1, "b": "2"}', ns)) == 3
    with pytest.raises(ValueError): call_func('add', {'a': 'x', 'b': 2}, ns)
    assert call_func('add', {'a': 'x', 'b': 2}, ns, raise_on_err=False).startswith("ToolInputError: Tool 'add', argument 'a'")

def test_a_tools_exception_is_raised_or_told_the_same_way():
    def boom(x: int) -> int:
        "Fail"
        raise KeyError('nope')
    for ns in ([boom], Toolbox([boom]), [Tool(boom)]):
        with pytest.raises(KeyError, match='nope'): call_func('boom', {'x': 1}, ns)
        assert call_func('boom', {'x': 1}, ns, raise_on_err=False).startswith("KeyError: 'nope'")

def test_stop_run_is_raised_through_a_toolbox_as_from_a_function():
    def halt() -> str:
        "Stop"
        raise StopRun('enough')
    for ns in ([halt], Toolbox([halt])):
        with pytest.raises(StopRun, match='enough'): call_func('halt', {}, ns)

# --- call expressions --------------------------------------------------------------------------------------------------

EXPRS = ['transfer.fn(to="mallory", amount=1000000, account="alice")', 'transfer.execute({"to": "mallory", "amount": 1})',
         'transfer.definition()', 'transfer.to_dict()', 'transfer.__call__(to="m", amount=1)', 'call(name="transfer", args={})',
         'vault.balance.fn(account="a")', 'vault.obj.wipe()', 'vault.wipe()', 'vault.audit()', '[add(a=1, b=2), transfer.fn(to="m", amount=1, account="a")]']

@pytest.mark.parametrize('text', EXPRS)
def test_a_call_expression_names_a_tool_or_nothing(text):
    box = Toolbox([_transfer_tool(), _group(), add], injected={'account': 'alice'})
    for rs in (box.call_expr(text), asyncio.run(box.acall_expr(text))):
        bad = [r for r in rs if r.name != 'add']
        assert len(bad) == 1 and bad[0].failure == 'name' and isinstance(bad[0].exception, ToolNotFound)
        assert bad[0].error.startswith('ToolNotFound: Unknown tool ') and "the tools are ['add', 'transfer', 'vault-balance']" in bad[0].error
    with pytest.raises(ToolNotFound) as ei: parse_calls(text, box.tools)
    assert isinstance(ei.value, ExprError) and ei.value.available == ['add', 'transfer', 'vault-balance']  # caught either way
    assert [r for r in RAN if r[0] != 'add'] == []

def test_a_call_expression_reaches_no_attribute_of_a_context_tool():
    "The context names values exactly: `helper.fn` is no name in it"
    box = Toolbox([add], context={'helper': _transfer_tool()})
    for text in ('add(a=helper.fn(to="m", amount=1, account="a"), b=1)', 'add(a=helper.execute({}), b=1)', 'transfer-fn(to="m")'):
        [r] = box.call_expr(text)
        assert not r.ok and r.failure == 'arguments' and isinstance(r.exception, ExprError)
    assert RAN == []

# --- the command line --------------------------------------------------------------------------------------------------

def test_a_command_line_target_reaches_nothing_of_a_toolbox(tmp_path):
    p = tmp_path / 'bank_tools.py'
    p.write_text('from funccall import Tool, Toolbox\n'
                 'def transfer(to: str, account: str) -> str:\n    "Move money"\n    return to\n'
                 "box = Toolbox([Tool(transfer, requires_confirmation=True, inject='account')])\n")
    [box] = load_target(f'{p}:box')
    assert list(box.tools) == ['transfer']
    for nm in ('box.call', 'box-call', 'box.tools', 'box.resume', 'box.add'):
        with pytest.raises(TargetError, match='has no tool'): load_target(f'{p}:{nm}')

# --- a tool under another name -----------------------------------------------------------------------------------------

def test_a_tool_of_a_tool_is_refused():
    "Its pipeline ran inside the outer one: a confirmation became the success text 'Waiting for the user's approval', forever"
    for inner in (_transfer_tool(), Tool(add, requires_confirmation=True)):
        with pytest.raises(TypeError, match='Tool of a Tool: use the Tool itself'): Tool(inner, name='pay')
    assert RAN == []

def test_an_mcp_server_serving_a_tool_under_another_name_keeps_its_pipeline():
    "`mk_server({'pay': tool})` wrapped the tool: the client's user was never asked, and the model read a pending approval as success"
    from funccall.mcp import MCPClient, MCPToolError, mk_server
    t = Tool(transfer, inject='account')
    server = mk_server({'plus': Tool(add, requires_confirmation=True), 'pay': t}, injected={'account': 'alice'})
    with MCPClient(server, timeout=20, check=False) as c:  # (the server checks)
        with pytest.raises(MCPToolError, match="Tool 'plus' needs the user's confirmation, and this MCP client can't ask"): c.tools()['plus'](a=1, b=2)
        assert 'account' not in {s['name']: s for s in c.schemas()}['pay']['input_schema']['properties']
        assert c.tools()['pay'](to='bob', amount=5) == 'alice->bob:5'
        with pytest.raises(MCPToolError, match="'account' is supplied by the application"): c.tools()['pay'](**FORGED)
    assert RAN == [('transfer', 'bob', 5, 'alice')]
    assert t.name == 'transfer' and t.schema['name'] == 'transfer'  # the developer's tool is left as it was

# --- spellings ----------------------------------------------------------------------------------------------------------

SPELLINGS = ['transfer ', ' transfer', 'Transfer', 'TRANSFER', 'transfer\x00', 'transfer\n', 'transfer.', '.transfer', 'transfer..fn',
             'transfer-', '-transfer', 'transfer--fn', 'ｔｒａｎｓｆｅｒ', 'transfer\u200b', 'trans\u00adfer', 'transfer\u2024fn', 'transfer\uff0efn',
             'transfer/fn', 'transfer:fn', 'transfer[fn]', 'transfer().fn', 'transfer.fn()', '', '.', '-', '..', 'transfer' + '.fn' * 100_000,
             'a.' * 100_000]

@pytest.mark.parametrize('kind', list(_namespaces()))
def test_no_other_spelling_of_a_tool_name_reaches_anything(kind):
    "Whitespace, case, look-alikes (full-width letters, a one-dot leader), empty segments, control characters, 100,000 segments"
    ns = _namespaces()[kind]
    for nm in SPELLINGS:
        with pytest.raises(ToolNotFound) as ei: call_func(nm, FORGED, ns)
        assert len(str(ei.value)) < 500  # a long name is named, not echoed
    assert RAN == []

def test_an_objects_getattr_never_runs_and_a_bound_methods_object_is_out_of_reach():
    "A name is read from dicts only: `__getattr__` answering any name is never asked; a method's `__self__` holds the secrets"
    class Anything:
        def __getattr__(self, nm):
            RAN.append(('getattr', nm))
            return lambda **kw: RAN.append(('called', nm))
    class Service:
        def __init__(self): self.api_key = 'secret'
        def lookup(self, q: str) -> str:
            "Look up q"
            return q
    svc = Service()
    for ns in ({'any': Anything()}, [Tool(svc.lookup)], Toolbox([svc.lookup]), {'lookup': Tool(svc.lookup)}, [{'svc': Tool(svc.lookup)}]):
        for nm in ('any.transfer', 'any-x', 'any.__call__', 'lookup.__self__', 'lookup.__self__.api_key', 'lookup.fn.__self__',
                   'lookup-fn-__self__-lookup', 'lookup.__func__', 'svc.fn', 'svc.__self__'):
            with pytest.raises(ToolNotFound): call_func(nm, {'q': 'x'}, ns)
    assert RAN == []

@pytest.mark.parametrize('args', [{'to': 'm', 'amount': 1, 'Account': 'evil'}, {'to': 'm', 'amount': 1, 'account ': 'evil'},
                                  {'to': 'm', 'amount': 1, 'ACCOUNT': 'evil'}, {'to': 'm', 'amount': 1, 'acc_ount': 'evil'},
                                  {'to': 'm', 'amount': 1, 'kwargs': {'account': 'evil'}},
                                  '{"to": "m", "amount": 1, "\\u0061ccount": "evil"}', '{"to": "m", "amount": 1, "account": "x", "account": "evil"}',
                                  '"{\\"to\\": \\"m\\", \\"amount\\": 1, \\"account\\": \\"evil\\"}"'])
def test_no_spelling_of_an_injected_argument_is_the_injected_value(args):
    "Other cases, spaces, underscores, JSON escapes, a duplicate key, a nested dict, JSON inside JSON: refused, or never the account"
    seen = []
    def pay(to: str, amount: int, account: str, **extra) -> str:
        "Pay, keeping what else was sent"
        seen.append((account, extra))
        return account
    box = Toolbox([Tool(transfer, inject='account'), Tool(pay, inject='account')], injected={'account': 'alice'})
    for nm in ('transfer', 'pay'):
        for r in (box.call(nm, args), asyncio.run(box.acall(nm, args))):
            assert not r.ok or r.value == 'alice->m:1' or r.value == 'alice', r
    assert all(a == 'alice' for a, _ in seen) and all(r[3] == 'alice' for r in RAN)

def test_a_call_expression_reads_names_as_python_does_and_still_runs_the_pipeline():
    "The parser folds look-alikes (NFKC): `ｔransfer` is `transfer`, through its pipeline; `ａccount=` is `account=`, refused"
    box = Toolbox([_transfer_tool(confirm=lambda tool, args: True)], injected={'account': 'alice'})
    [r] = box.call_expr('ｔransfer(to="m", amount=1)')
    assert r.ok and r.value == 'alice->m:1'
    for text in ('transfer(to="m", amount=1, ａccount="evil")', 'transfer.ｆn(to="m", amount=1, account="evil")', 'transfer("m", 1, "evil")'):
        [r] = box.call_expr(text)
        assert not r.ok
    assert RAN == [('transfer', 'm', 1, 'alice')]

# --- a provider's response naming attributes -----------------------------------------------------------------------------

@pytest.mark.parametrize('tools', ['list of Tools', 'Toolbox'])
def test_a_providers_response_naming_attributes_runs_nothing(tools):
    "What `run_tool_calls` reads from each provider's response: a tool's attribute is an unknown tool there too"
    from funccall import run_tool_calls
    t = _transfer_tool()
    box = [t, add] if tools == 'list of Tools' else Toolbox([t, add], injected={'account': 'alice'})
    names = ['transfer.fn', 'transfer-fn', 'transfer.execute', 'transfer.__call__', 'add.__wrapped__', '__class__', 'call', 'resume']
    args = json.dumps(FORGED)
    responses = {
        'openai': {'role': 'assistant', 'tool_calls': [{'id': f'c{i}', 'type': 'function', 'function': {'name': nm, 'arguments': args}}
                                                       for i, nm in enumerate(names)]},
        'anthropic': {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': f'c{i}', 'name': nm, 'input': FORGED} for i, nm in enumerate(names)]},
        'openai_responses': [{'type': 'function_call', 'call_id': f'c{i}', 'name': nm, 'arguments': args} for i, nm in enumerate(names)]}
    for p, resp in responses.items():
        msgs = run_tool_calls(box, resp, provider=p)
        assert len(msgs.results) == len(names) and all(r.failure == 'name' for r in msgs.results), p
    assert RAN == []
