"Warnings funccall gives the developer, pointed at the developer's own line"
from __future__ import annotations

import os, sys

__all__ = ['SchemaWarning', 'caller_level']

class SchemaWarning(UserWarning):
    "Something in a tool's definition the schema had to leave out, such as a default JSON can't hold"

_pkg_dir = os.path.dirname(__file__) + os.sep  # funccall's folder: its subpackages' frames are its own too

def caller_level() -> int:
    "The `stacklevel` that points a warning at the first frame outside funccall"
    f, level = sys._getframe(1), 1
    while f is not None and f.f_code.co_filename.startswith(_pkg_dir): f, level = f.f_back, level + 1
    return level
