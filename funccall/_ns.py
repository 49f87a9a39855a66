"""Namespaces of callable tools, and resolving a model's (dotted) tool name inside one and nowhere else.

A name resolves only to what a schema could have advertised: a callable held in the namespace, or a public
callable reached through public attributes of objects held in it (`calc.add`, `db.users.find`). Never a
segment starting with `_`, never an attribute of a module, never a method of a builtin value
(`calc.history.clear`), never a non-callable. Resolution reads attributes statically, so no property or
`__getattr__` of the caller's objects runs while a name is looked up.
"""
from __future__ import annotations

import inspect, types
from collections import abc
from typing import Any

__all__ = ['mk_ns', 'resolve_nm', 'ToolNotFound']

class ToolNotFound(LookupError):
    "A tool name from the model that is not in the namespace"
    def __init__(self, nm: str, available=()):
        self.name, self.available = nm, list(available)
        avail = ', '.join(map(repr, self.available[:20])) + (', ...' if len(self.available) > 20 else '')
        super().__init__(f"Unknown tool {nm!r:.80}; available tools: {avail or 'none'}")

def mk_ns(
    fs,  # a function, a mapping of names to callables, or a list mixing both
) -> dict:  # name -> callable
    "A namespace of callables: functions under their `__name__`, mappings merged in"
    if type(fs) is dict or isinstance(fs, abc.Mapping): return fs
    merged = {}
    for o in (fs if isinstance(fs, (list, tuple)) else [fs]):
        if isinstance(o, abc.Mapping): merged.update(o)
        elif callable(o) and hasattr(o, '__name__'): merged[o.__name__] = o
    return merged

# Values whose methods are never tools: a model must not reach `history.clear` on a list attribute
_builtin_values = (str, bytes, bytearray, int, float, complex, bool, list, tuple, dict, set, frozenset, type(None), range, memoryview)

def _static_attr(o, nm: str):
    "Attribute `nm` of `o` without running descriptors other than plain functions, or raise `AttributeError`"
    v = inspect.getattr_static(o, nm)
    if isinstance(v, (staticmethod, classmethod)) or inspect.isfunction(v) or inspect.ismethoddescriptor(v): return getattr(o, nm)
    if isinstance(v, property) or hasattr(type(v), '__get__') and not callable(v): raise AttributeError(nm)
    return v

def _advertisable(o) -> bool:
    return callable(o) and not isinstance(o, types.ModuleType)

def _available(ns) -> list:
    return [k for k, v in ns.items() if isinstance(k, str) and not k.startswith('_') and callable(v) and not isinstance(v, types.ModuleType)]

def resolve_nm(
    nm: str,  # a tool name as the model sent it: `f`, `obj.method`, or its provider-safe form `obj-method`
    ns,       # the namespace the tools were advertised from (see `mk_ns`)
) -> Any:     # the callable
    "Find tool `nm` in namespace `ns`; raises `ToolNotFound` for anything a schema could not have advertised"
    if not isinstance(nm, str) or not nm: raise ToolNotFound(repr(nm), _available(ns))
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
        if isinstance(o, (types.ModuleType, *_builtin_values)) or inspect.isroutine(o):
            raise ToolNotFound(nm, _available(ns))
        try: o = _static_attr(o, p)
        except AttributeError: raise ToolNotFound(nm, _available(ns)) from None
    if not _advertisable(o): raise ToolNotFound(nm, _available(ns))
    return o
