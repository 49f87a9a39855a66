"""`help()` that tells the story: a public function's parameters are described in `# comments` beside them, which
`help()`, an editor's hover and `inspect.getdoc` don't read. `add_param_docs` appends those comments to the docstring as
a Google `Args:` section, the layout `help()` prints as it is and editors render as a list. (Not a `Returns:` section:
a docstring's own returns section is part of the tool description `get_schema` writes, and a function's schema must
not change for being documented; the return annotation's comment is in the schema's description already.)

Done once, at import, for the objects a package exports (its `__all__`); the comments stay the one place each parameter
is described. A function funccall hands to a model as a tool is left alone: its docstring is the tool's description.
"""
from __future__ import annotations

import dataclasses, inspect, warnings, weakref
from collections.abc import Iterable

from ._docs import Docs, class_docs, func_docs
from ._types import code_params

__all__ = ['add_param_docs']

def _section(title: str, rows: dict[str, str]) -> str:
    "A Google section: `title:`, then a line a row, `name: description` indented under it (a description's own lines deeper)"
    return f"{title}:\n" + '\n'.join(f"    {k}: " + '\n        '.join(v.splitlines()) for k, v in rows.items())

def _described(doc: str | None, d: Docs, params: list[str]) -> str | None:
    "`doc` with the `Args:` section `d`'s comments give, or `None` when they give none the docstring lacks"
    rows = {k: d.comments[k] for k in params if d.comments.get(k) and k not in d.doc_params}
    if not rows: return None
    return '\n\n'.join([*([inspect.cleandoc(doc)] if doc else []), _section('Args', rows)])

def _params(f) -> list[str]:
    "`f`'s parameter names in the signature's order, `self`/`cls` of a method left out"
    ps = [nm for nm, _, _ in code_params(f)]
    return ps[1:] if ps and ps[0] in ('self', 'cls') else ps

def _has_source(f) -> bool:
    "Whether `f` was written in a file (not made by `exec`, as a dataclass's `__init__` is): only then has it comments"
    return not f.__code__.co_filename.startswith('<')

_documented: weakref.WeakSet[object] = weakref.WeakSet()  # what was given its section: a second pass (a package reloaded) adds none

def _first_time(o: object) -> bool:
    "Whether `o` is documented here for the first time (a class's `Docs` are cached: its docstring's new section unread)"
    if o in _documented: return False
    _documented.add(o)
    return True

def _document_function(f) -> None:
    if not _has_source(f) or not _first_time(f): return
    new = _described(f.__doc__, func_docs(f), _params(f))
    if new is not None: f.__doc__ = new

def _document_class(cls: type) -> None:
    if not _first_time(cls): return
    init = vars(cls).get('__init__')
    if dataclasses.is_dataclass(cls):  # its fields' comments describe the parameters of the `__init__` it was given
        new = _described(vars(cls).get('__doc__'), class_docs(cls), [f.name for f in dataclasses.fields(cls) if f.init])
        if new is not None: cls.__doc__ = new
    elif inspect.isfunction(init) and _has_source(init):
        new = _described(vars(cls).get('__doc__'), func_docs(init), _params(init))
        if new is not None: cls.__doc__ = new
    for nm, v in vars(cls).items():
        if nm.startswith('_') and nm != '__call__': continue
        v = getattr(v, '__func__', v)  # a classmethod's or staticmethod's function
        if isinstance(v, property): v = v.fget
        if inspect.isfunction(v): _document_function(v)

def add_param_docs(
    objs: Iterable[object],  # the functions and classes a package exports
) -> None:
    "Append to each function's (each class's and its public methods') docstring the `Args:` its `# comments` describe"
    with warnings.catch_warnings():  # (a function without source has no comments to add: nothing to warn of here)
        warnings.simplefilter('ignore')
        for o in objs:
            if isinstance(o, type): _document_class(o)
            elif inspect.isfunction(o): _document_function(o)
