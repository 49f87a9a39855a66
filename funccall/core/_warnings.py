"Warnings funccall gives the developer, pointed at the developer's own line"
from __future__ import annotations

import sys, warnings
from types import FrameType

from ._package import is_own

__all__ = ['SchemaWarning', 'caller_level', 'warn_undocumented']

class SchemaWarning(UserWarning):
    "Something in a tool's definition the schema had to leave out, such as a default JSON can't hold"

def caller_level() -> int:
    "The `stacklevel` that points a warning at the first frame outside funccall"
    f: FrameType | None
    f, level = sys._getframe(1), 1
    while f is not None and is_own(f.f_code.co_filename): f, level = f.f_back, level + 1
    return level

def warn_undocumented(
    what: str,   # 'Function' or 'Class'
    where: str,  # its qualified name
    alt: str='', # another fix the caller offers: ' or pass description='
) -> None:
    "The `SchemaWarning` for a tool built without a docstring: the model has its name and parameters, not what it is for"
    warnings.warn(f"{what} {where!r} has no docstring: the tool has no description, so the model has only its name and parameters "
                  f"to go on; add a docstring saying what it does (the model reads it to decide when to call the tool){alt}",
                  SchemaWarning, stacklevel=caller_level())
