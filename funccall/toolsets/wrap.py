"""Toolboxes made from another toolbox's tools: renamed with a prefix, or only some of them.

    gh = prefixed(github_tools, 'gh')          # `gh_create_issue`, ... (two servers' `search` no longer clash)
    safe = filtered(box, lambda t: t.hints.get('read_only'))  # or a list of the names to keep
    Toolbox([gh, prefixed(gitlab_tools, 'gl')])

Each takes a `Toolbox` and gives a new one holding the tools `box` holds now (tools added to `box` later are not in
it), with `box`'s settings (injected values, context, concurrency, timeout, `on_result`, errors, tracing). A call by a
new name runs that tool's own pipeline, as a call of `box` would: a prefixed tool is the same tool (hooks, confirmation,
cache, injected parameters) under another name, which its definitions and results carry. Only a name the new toolbox
holds reaches a tool: a filtered-out tool, or a prefixed tool by its old name, is a `ToolNotFound`, as any other name.
"""
from __future__ import annotations

import copy, functools, re
from typing import Any, Callable, Iterable, TypeVar, overload

from ..loop.tools import Tool, Toolbox

__all__ = ['view', 'renamed', 'prefixed', 'filtered']

_Box = TypeVar('_Box', bound=Toolbox)

@overload
def view(box: Toolbox, cls: type[_Box], **attrs: Any) -> _Box: ...
@overload
def view(box: Toolbox, **attrs: Any) -> Toolbox: ...
def view(
    box: Toolbox,                  # the toolbox to share
    cls: type[Toolbox]=Toolbox,    # the class of the new toolbox: `Toolbox` or a subclass of it (the new toolbox's type)
    **attrs: Any,                  # attributes of the new toolbox instead of `box`'s (`tools=`, `groups=`...)
) -> Toolbox:                      # a toolbox sharing `box`'s state: its dicts (tools, injected values...) are `box`'s own
    "A toolbox of class `cls` over `box`'s tools and settings, `attrs` replacing some: what a wrapper of a toolbox starts from"
    if not isinstance(box, Toolbox): raise TypeError(f"view() takes a Toolbox, not a {type(box).__name__}")
    new = cls.__new__(cls)
    new.__dict__.update((k, v) for k, v in vars(box).items() if k in _state())  # what a wrapper of `box` added stays its own
    new.__dict__.update(attrs)
    return new

@functools.cache
def _state() -> frozenset[str]:
    "The attributes a `Toolbox` holds its state and settings in"
    return frozenset(vars(Toolbox()))

_prefix_re = re.compile(r'[a-zA-Z0-9_-]{1,64}')

def renamed(
    t: Tool,   # the tool
    nm: str,   # its new name
) -> Tool:     # a copy of `t` named `nm`
    "Tool `t` under name `nm`: the same function, options and pipeline (its cache too), another name in definitions and results"
    new = copy.copy(t)
    new.name = new.__name__ = nm
    new.schema = {**t.schema, 'name': nm}
    return new

def _subset(box: Toolbox, tools: dict[str, Tool], names: dict[str, str]) -> Toolbox:
    "A toolbox of `tools` with `box`'s settings; `names` maps each new name to its name in `box` (for its group)"
    groups = {nm: box.groups[old] for nm, old in names.items() if old in box.groups}
    return view(box, tools=tools, groups=groups, aliases={}, group_docs=dict(box.group_docs))

def prefixed(
    box: Toolbox,    # the tools to rename: a `Toolbox`
    prefix: str,     # put before each name: letters, digits, `_` and `-`
    sep: str='_',    # between the prefix and the name
) -> Toolbox:        # a new toolbox: each of `box`'s tools as `{prefix}{sep}{name}`
    "The tools of `box`, each named `{prefix}{sep}{name}`: tools of two servers that share names can be offered together"
    if not isinstance(prefix, str) or not _prefix_re.fullmatch(prefix) or not isinstance(sep, str) or not _prefix_re.fullmatch(sep or '_'):
        raise ValueError(f"prefixed(): prefix and sep may use only letters, digits, '_' and '-' (prefix up to 64), not {prefix!r}, {sep!r}")
    names = {f'{prefix}{sep}{nm}': nm for nm in box.tools}
    return _subset(box, {nm: renamed(box.tools[old], nm) for nm, old in names.items()}, names)

def filtered(
    box: Toolbox,                          # the tools to choose from: a `Toolbox`
    keep: Callable[[Tool], bool] | Iterable[str],  # `keep(tool) -> bool`, or the names of the tools to keep
) -> Toolbox:                              # a new toolbox of the tools kept, in `box`'s order
    "The tools of `box` that `keep` keeps: a predicate on each `Tool`, or a list of names (each must be one of `box`'s)"
    if callable(keep): names = [nm for nm, t in box.tools.items() if keep(t)]
    else:
        wanted = [keep] if isinstance(keep, str) else list(keep)
        if unknown := [nm for nm in wanted if nm not in box.tools]: raise ValueError(f"filtered(): no tool named {unknown[0]!r:.80} to keep")
        names = [nm for nm in box.tools if nm in wanted]
    return _subset(box, {nm: box.tools[nm] for nm in names}, {nm: nm for nm in names})
