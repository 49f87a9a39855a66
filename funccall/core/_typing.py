"""The names funccall's annotations share: what a JSON object, a tool and a namespace are to a type checker.

Kept apart so every layer can import them; they cost nothing at run time (aliases, not classes)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar, Union

__all__ = ['JsonDict', 'ToolFn', 'HoldsTools', 'Namespace', 'Arguments', 'R']

JsonDict = dict[str, Any]          # a JSON object: a schema, a tool's arguments, a provider's message
ToolFn = Callable[..., Any]        # anything a model's call can run: a function, a method, a class, a callable object

class HoldsTools(Protocol):
    "What holds named tools, as a namespace (`_ns.ToolHolder`: a `Toolbox`, a `ToolGroup`): `namespace()` gives them by name"
    def namespace(self) -> dict[str, Any]: ...

# what `call_func` resolves names in (`mk_ns`): a dict, a list of tools, a `Toolbox` or `ToolGroup`, one function, or nothing
Namespace = Union[Mapping[str, Any], Iterable[Any], HoldsTools, ToolFn, None]
Arguments = Union[Mapping[str, Any], str, None]  # a tool call's arguments as a model sends them: an object, its JSON text, or nothing
R = TypeVar('R')                   # a tool's return type, carried through to what a call gives back
