"""The names funccall's annotations share: what a JSON object, a tool and a namespace are to a type checker.

Kept apart so every layer can import them; they cost nothing at run time (aliases, not classes)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, Union

if TYPE_CHECKING: from ._ns import ToolHolder

__all__ = ['JsonDict', 'ToolFn', 'Namespace', 'Arguments', 'R']

JsonDict = dict[str, Any]          # a JSON object: a schema, a tool's arguments, a provider's message
ToolFn = Callable[..., Any]        # anything a model's call can run: a function, a method, a class, a callable object
# what `call_func` resolves names in (`mk_ns`): a dict, a list of tools, a `Toolbox` or `ToolGroup`, one function, or nothing
Namespace = Union[Mapping[str, Any], Iterable[Any], 'ToolHolder', ToolFn, None]
Arguments = Union[Mapping[str, Any], str, None]  # a tool call's arguments as a model sends them: an object, its JSON text, or nothing
R = TypeVar('R')                   # a tool's return type, carried through to what a call gives back
