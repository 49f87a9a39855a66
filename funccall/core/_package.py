"""The package itself: its version, and its folder, so tracebacks and warnings can tell funccall's code from the caller's.

A leaf: every layer may import it (the command line and the MCP server report the version)."""
from __future__ import annotations

import os

__all__ = ['VERSION', 'PACKAGE_DIR', 'is_own']

VERSION = '0.1.0'
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # funccall/ (this is funccall/core/_package.py)
_PREFIX = PACKAGE_DIR + os.sep

def is_own(
    filename: str,  # a code object's `co_filename`, absolute
) -> bool:
    "Whether code from `filename` is funccall's own, in any of its subpackages"
    return filename.startswith(_PREFIX)
