"""Class docstrings for provider renders: each `$defs` class described as its docstring says.

`get_schema` keeps the reference's form (a class's `title`, no description); a model reads more from the
docstring, as pydantic-based peers show it.
"""
from __future__ import annotations

import re

from ._docs import doc_text
from ._types import SchemaError, fields, kind, signature

__all__ = ['with_class_docs']

def _classes(t, out: dict) -> dict:
    "Every class annotation `t` holds, by the names `$defs` may give it"
    try: info = kind(t)
    except SchemaError: return out
    if info.kind in ('typeddict', 'namedtuple', 'dataclass', 'model', 'class'):
        c = info.t
        if c in out.values(): return out
        out[c.__name__] = out[f"{c.__module__}.{c.__qualname__}".replace('<locals>.', '')] = c
        for f in fields(info): _classes(f.anno, out)
    elif info.kind in ('union', 'list', 'set', 'tuple', 'dict'):
        for a in info.args:
            if a is not Ellipsis: _classes(a, out)
    return out

def _class_doc(c) -> str:
    d = doc_text(c)
    return '' if re.fullmatch(rf'{re.escape(c.__name__)}\(.*\)', d) else d  # `N(a, b)`: the text NamedTuple writes for no docstring

def with_class_docs(
    s:dict,  # a tool schema, `get_schema(f, evalable=True)` (changed in place)
    f,       # the callable it was made from, or None
) -> dict:   # `s`
    "`s` with each `$defs` class described by its docstring, as provider renders show a model (`get_schema` keeps the reference's form)"
    params = next((v for k, v in s.items() if k not in ('name', 'description') and isinstance(v, dict)), {})
    defs = params.get('$defs')
    if not defs or f is None: return s
    found: dict = {}
    try:
        if isinstance(f, type): _classes(f, found)  # a class as the tool: its fields' classes
        else:
            for p in signature(f).params: _classes(p.anno, found)
    except (SchemaError, TypeError, ValueError): return s  # the schema was made; its class docs are a nicety
    for nm, d in defs.items():
        if nm in found and 'description' not in d and (doc := _class_doc(found[nm])): defs[nm] = {**d, 'description': doc}
    return s
