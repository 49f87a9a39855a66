"""The names funccall's annotations share: what a JSON object, a tool and a namespace are to a type checker.

Kept apart so every layer can import them; they cost nothing at run time (aliases, not classes)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, Union

__all__ = ['JsonDict', 'ToolFn', 'Namespace', 'R']

JsonDict = dict[str, Any]          # a JSON object: a schema, a tool's arguments, a provider's message
ToolFn = Callable[..., Any]        # anything a model's call can run: a function, a method, a class, a callable object
Namespace = Union[Mapping[str, Any], Iterable[Any], None]  # what `call_func` resolves names in: a dict, a list of tools, a Toolbox
R = TypeVar('R')                   # a tool's return type, carried through to what a call gives back
