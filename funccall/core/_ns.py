"""Namespaces of callable tools, and resolving a model's (dotted) tool name inside one and nowhere else.

A name resolves only to what a schema could have advertised: a callable held in the namespace, or a public
callable reached through public attributes of objects held in it (`calc.add`, `db.users.find`). Never a
segment starting with `_`, never an attribute of a module, never a method of a builtin value
(`calc.history.clear`), never a non-callable, never an attribute of a `Sealed` object (a `Tool`, `Toolbox` or
`ToolGroup`: `transfer.fn` would skip the tool's confirmation and let the model write its injected values).
A `ToolHolder`'s names are its tools' names only, run by the holder itself (`find_tool`). Resolution reads
attributes statically, so no property or `__getattr__` of the caller's objects runs while a name is looked up.
"""
from __future__ import annotations

import types
from collections import abc
from collections.abc import Iterable, Mapping
from typing import Any

from ._types import instance_dict, type_has
from ._typing import Namespace

__all__ = ['mk_ns', 'resolve_nm', 'find_tool', 'public_methods', 'ToolNotFound', 'Sealed', 'ToolHolder']

class ToolNotFound(LookupError):
    "A tool name from the model that is not in the namespace"
    name: str                  # the name as the model sent it
    available: list[str]       # the names it could have used

    def __init__(self, nm: str, available: Iterable[str]=()):
        self.name, self.available = nm, list(available)
        avail = ', '.join(map(repr, self.available[:20])) + (', ...' if len(self.available) > 20 else '')
        super().__init__(f"Unknown tool {nm!r:.80}; available tools: {avail or 'none'}")

class Sealed:
    """What a model's name may name but never reach into (a `Tool`, `Toolbox`, `ToolGroup`): no attribute of it resolves.
    A sealed callable (a `Tool`) runs its own pipeline: `call_func` calls its `execute`/`aexecute`, never its function"""
    __slots__ = ()

class ToolHolder(Sealed):
    """What holds named tools (`Toolbox`, `ToolGroup`): `namespace()` gives them, under the names the model calls them by;
    `call(name, args)` / `acall` run one through the holder's pipeline, a `ToolResult`"""
    tools: dict[str, Any]
    def namespace(self) -> dict[str, Any]: return dict(self.tools)

def _sources(fs: Any) -> list[tuple[Mapping[str, Any], ToolHolder | None]]:
    "What namespace `fs` merges, in order: `(names, holder)` pairs, `holder` the `ToolHolder` that runs those tools, or None"
    res: list[tuple[Mapping[str, Any], ToolHolder | None]] = []
    for o in (fs if issubclass(type(fs), (list, tuple)) else [fs]):
        if issubclass(type(o), abc.Mapping): res.append((o, None))
        elif issubclass(type(o), ToolHolder): res.append((o.namespace(), o))
        elif callable(o) and type(nm := _name(o)) is str: res.append(({nm: o}, None))
        else: raise TypeError(f"mk_ns can't name a {_type_name(type(o))} object; put it in a dict under the name the model will use")
    return res

def _merged(fs: Any, nm: str | None=None) -> tuple[dict[str, Any], ToolHolder | None]:
    "The namespace list `fs` makes (a later name wins), and the `ToolHolder` that runs tool `nm` in it, if one does"
    merged: dict[str, Any] = {}
    holder = None
    for names, h in _sources(fs):
        merged.update(names)
        if nm is not None and nm in names: holder = h  # (None again when a later function or mapping takes the name)
    return merged, holder

def mk_ns(
    fs: Namespace,  # a function, a mapping of names to callables, a `Toolbox` or `ToolGroup`, or a list mixing them
) -> Mapping[str, Any]:  # name -> callable (a mapping given comes back as it is)
    "A namespace of callables: functions under their `__name__`, mappings and toolboxes' tools merged in"
    # (read off `type(fs)`, so no `__class__` of the caller's runs; checkers don't narrow on it)
    if type(fs) is dict or issubclass(type(fs), abc.Mapping): return fs  # type: ignore[return-value]
    if issubclass(type(fs), ToolHolder): return fs.namespace()  # type: ignore[union-attr]
    return _merged(fs)[0]

def find_tool(
    nm: str,        # a tool name as the model sent it
    fs: Namespace,  # the namespace, as `mk_ns` takes it
) -> Any:           # the `ToolHolder` that runs it, or the callable
    """What runs tool `nm` of `fs`: the `ToolHolder` offering that name (the namespace itself, when it is one: its tools'
    exact names only), else what `resolve_nm` finds in `mk_ns(fs)`; raises `ToolNotFound`"""
    if fs is None: return resolve_nm(nm, {})
    if issubclass(type(fs), ToolHolder): return fs
    if type(fs) is dict or issubclass(type(fs), abc.Mapping): return resolve_nm(nm, fs)  # type: ignore[arg-type]  # (as in `mk_ns`)
    merged, holder = _merged(fs, nm if type(nm) is str else None)
    return holder if holder is not None else resolve_nm(nm, merged)

# Names read through the interpreter's own descriptors: a `__name__` property or `__getattr__` of the caller's never runs
_type_name = type.__dict__['__name__'].__get__
_own_name = {types.FunctionType: types.FunctionType.__dict__['__name__'].__get__,
             types.BuiltinFunctionType: types.BuiltinFunctionType.__dict__['__name__'].__get__}

def _name(o: Any) -> str | None:
    "`o.__name__` when it is a plain value: a function's, a class's, a method's function's, or one in a dict"
    t = type(o)
    if t in _own_name: return _own_name[t](o)
    if issubclass(t, type): return _type_name(o)
    if t is types.MethodType: return _name(o.__func__)
    if '__name__' in (d := instance_dict(o)): return d['__name__']
    try: v, _ = _class_attr(t, '__name__')
    except AttributeError: return None
    return v if type(v) is str else None

# Values never traversed: a model must not reach `history.clear` on a list attribute, nor `os.system`, nor `transfer.fn`
_opaque = (Sealed, types.ModuleType, str, bytes, bytearray, int, float, complex, bool, list, tuple, dict, set, frozenset, type(None),
           range, memoryview, types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.BuiltinMethodType)

# Reading a class's MRO and dict through `type`'s own descriptors runs no code of the caller's metaclass
_mro, _cdict = type.__dict__['__mro__'].__get__, type.__dict__['__dict__'].__get__

def _class_attr(cls: type, nm: str) -> tuple[Any, type]:
    "`nm` as found in the dicts of `cls`'s MRO, and the class holding it"
    for klass in _mro(cls):
        d = _cdict(klass)
        if nm in d: return d[nm], klass
    raise AttributeError(nm)

def _is_slot(v: Any, owner: type) -> bool:
    "A `__slots__` attribute of a class written in Python (not a C member such as `partial.func`)"
    return type(v) is types.MemberDescriptorType and '__slots__' in _cdict(owner)

def _method(v: Any, o: Any, cls: Any) -> Any:
    "`v` from a class dict as a bound tool, when it is a method written in Python; else `None`"
    tv = type(v)
    if tv is types.FunctionType: return types.MethodType(v, o) if o is not None else None  # unbound through a class: no
    if tv is staticmethod and type(v.__func__) is types.FunctionType: return v.__func__
    if tv is classmethod and type(v.__func__) is types.FunctionType: return types.MethodType(v.__func__, cls)
    return None

def _static_attr(o: Any, nm: str) -> Any:
    "Attribute `nm` of `o`, reading only dicts and slots: no property, descriptor or `__getattr__` of the caller's runs"
    if issubclass(type(o), type):  # a class: its static and class methods and nested classes
        v, _ = _class_attr(o, nm)
        if (m := _method(v, None, o)) is not None: return m
        if issubclass(type(v), type): return v
        raise AttributeError(nm)
    t = type(o)
    owner: type | None
    try: v, owner = _class_attr(t, nm)
    except AttributeError: v = owner = None
    if owner is not None and (type_has(type(v), '__set__') or type_has(type(v), '__delete__')):  # data descriptors win
        if _is_slot(v, owner): return v.__get__(o, t)  # pyright: ignore[reportOptionalMemberAccess]  # `owner` is set: so is `v`
        raise AttributeError(nm)
    d = instance_dict(o)
    if nm in d: return d[nm]
    if owner is None: raise AttributeError(nm)
    if (m := _method(v, o, t)) is not None: return m
    if type_has(type(v), '__get__'): raise AttributeError(nm)  # cached_property, C methods (`array.pop`), ...
    return v

def _advertisable(o: Any) -> bool: return callable(o) and not issubclass(type(o), types.ModuleType)

def public_methods(
    obj: Any,            # an object whose methods a model may call
) -> dict[str, Any]:     # name -> bound method, base classes' first, in definition order
    "The methods written in Python that `obj` offers under public names, read without running any of its code"
    res: dict[str, Any] = {}
    for klass in reversed(_mro(type(obj))[:-1]):
        for nm, m in _cdict(klass).items():
            if not nm.startswith('_') and (bound := _method(m, obj, type(obj))) is not None: res[nm] = bound
    return res

def _available(ns: Mapping[str, Any]) -> list[str]:
    "Names a model could have been offered: the namespace's callables, and the public methods of its objects"
    res: list[str] = []
    for k, v in ns.items():
        if type(k) is not str or k.startswith('_'): continue
        if _advertisable(v): res.append(k)
        elif not issubclass(type(v), _opaque): res += [f'{k}.{nm}' for nm in public_methods(v)]
    return res

def resolve_nm(
    nm: str,                # a tool name as the model sent it: `f`, `obj.method`, or its provider-safe form `obj-method`
    ns: Mapping[str, Any],  # the namespace the tools were advertised from, as `mk_ns` makes it
) -> Any:                   # the callable
    "Find tool `nm` in namespace `ns`; raises `ToolNotFound` for anything a schema could not have advertised"
    if type(nm) is not str or not nm: raise ToolNotFound(repr(nm), _available(ns))
    if nm in ns and not nm.startswith('_'):
        o = ns[nm]
        if _advertisable(o): return o
        raise ToolNotFound(nm, _available(ns))
    parts = nm.split('.') if '.' in nm else nm.split('-')
    if len(parts) == 1: raise ToolNotFound(nm, _available(ns))
    if any(not p or p.startswith('_') for p in parts): raise ToolNotFound(nm, _available(ns))
    head = parts[0]
    if head not in ns: raise ToolNotFound(nm, _available(ns))
    o = ns[head]
    for p in parts[1:]:
        if issubclass(type(o), _opaque): raise ToolNotFound(nm, _available(ns))
        try: o = _static_attr(o, p)
        except AttributeError: raise ToolNotFound(nm, _available(ns)) from None
    if not _advertisable(o): raise ToolNotFound(nm, _available(ns))
    return o
