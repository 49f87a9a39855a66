"""Name lookup runs no code of the caller's: `__dict__`, `__class__` and `__name__` are read through the
interpreter's own descriptors, in `resolve_nm`, `mk_ns`, schemas and calls."""
import asyncio

import pytest

from funccall import ToolNotFound, call_func, call_func_async, get_schema, mk_ns, resolve_nm


class Spy:
    "Records every property or `__getattr__` of the caller's that runs"
    def __init__(self): self.ran = []


def _with_dict_property(spy):
    class Api:
        @property
        def __dict__(self):
            spy.ran.append('__dict__')
            return {'ok': lambda: 'from the property'}
        def ok(self):
            "A method"
            return 'ok'
    return Api()


def test_a_dict_property_does_not_run_when_a_method_is_resolved():
    spy = Spy()
    api = _with_dict_property(spy)
    assert resolve_nm('api.ok', {'api': api})() == 'ok'
    with pytest.raises(ToolNotFound): resolve_nm('api.nope', {'api': api})
    assert spy.ran == []


def _callable_with_class_property(spy):
    class Adder:
        def __call__(self, a: int, b: int = 1) -> int:
            "Add two numbers"
            return a + b
        @property
        def __class__(self):
            spy.ran.append('__class__')
            return Adder
    return Adder()


def test_a_class_property_does_not_run_in_schema_or_calls():
    spy = Spy()
    add = _callable_with_class_property(spy)
    assert get_schema(add, name='add')['input_schema']['required'] == ['a']
    assert call_func('add', {'a': 2}, {'add': add}) == 3
    assert asyncio.run(call_func_async('add', {'a': 2, 'b': 5}, {'add': add})) == 7
    assert spy.ran == []


def test_mk_ns_reads_names_without_running_getattr():
    spy = Spy()
    class Tool:
        def __call__(self): return 1
        def __getattr__(self, nm):
            spy.ran.append(nm)
            return 'injected'
    with pytest.raises(TypeError, match="mk_ns can't name a Tool object"): mk_ns([Tool()])
    assert spy.ran == []


def test_mk_ns_reads_names_without_running_name_properties():
    spy = Spy()
    class Meta(type):
        @property
        def __name__(cls):
            spy.ran.append('meta __name__')
            return 'fake'
    class Named(metaclass=Meta):
        def __call__(self): return 1
    def f(): return 2
    class Obj:
        __name__ = 'obj_tool'
        def __call__(self): return 3
    ns = mk_ns([f, Named, Obj(), print])
    assert sorted(ns) == ['Named', 'f', 'obj_tool', 'print']
    assert spy.ran == []


def test_mk_ns_methods_are_named_by_their_function():
    class Calc:
        def add(self, a: int): return a + 1
    c = Calc()
    assert mk_ns([c.add]) == {'add': c.add}


def test_a_module_namespace_offers_nothing_of_its_tools_toolboxes_and_groups():
    "`call_func(name, args, globals())` in a module that builds a toolbox: `box.call` took the model's `injected`, `pay.fn` ran bare"
    from funccall import Tool, ToolGroup, Toolbox
    ran = []
    def transfer(to: str, account: str) -> str:
        "Move money"
        ran.append(account)
        return to
    class Vault:
        def wipe(self) -> str:
            "Wipe"
            ran.append('wipe')
            return 'wiped'
    pay = Tool(transfer, requires_confirmation=True, inject='account')
    ns = {'pay': pay, 'box': Toolbox([pay], injected={'account': 'alice'}), 'vault': ToolGroup(Vault())}
    for nm in ('box.call', 'box-call', 'box.add', 'box.resume', 'box.tools', 'box.batch', 'pay.fn', 'pay-fn', 'pay.execute',
               'pay.aexecute', 'pay.confirm', 'pay.definition', 'vault.call', 'vault.obj.wipe', 'vault-obj-wipe', 'vault.wipe', 'vault-wipe'):
        with pytest.raises(ToolNotFound) as ei: call_func(nm, {'name': 'transfer', 'args': {'to': 'm'}, 'injected': {'account': 'x'}}, ns)
        assert ei.value.available == ['pay']  # the tool itself; no method of the machinery is offered
    assert ran == []
