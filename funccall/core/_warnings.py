"Warnings funccall gives the developer, pointed at the developer's own line"
from __future__ import annotations

import sys

from ._package import is_own

__all__ = ['SchemaWarning', 'caller_level']

class SchemaWarning(UserWarning):
    "Something in a tool's definition the schema had to leave out, such as a default JSON can't hold"

def caller_level() -> int:
    "The `stacklevel` that points a warning at the first frame outside funccall"
    f, level = sys._getframe(1), 1
    while f is not None and is_own(f.f_code.co_filename): f, level = f.f_back, level + 1
    return level
