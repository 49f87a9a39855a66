"""What funccall's MCP client and server share: how an output schema wraps a value as `{"result": value}`, and an
exception's message cut short for a log line or an error result."""
from __future__ import annotations

from typing import Any, TypeGuard

__all__ = ['WRAP', 'is_wrapper', 'value_schema', 'short']

WRAP = 'x-fastmcp-wrap-result'  # fastmcp's mark of an output schema that wraps its value as `{"result": value}`: its client unwraps it

def value_schema(s: dict[str, Any] | None) -> dict[str, Any] | None:
    "The schema of the value a built tool returns: the output schema, or what it wraps as `{'result': value}`"
    if not is_wrapper(s): return s
    return {**s['properties']['result'], **({'$defs': s['$defs']} if '$defs' in s else {})}

def is_wrapper(s: dict[str, Any] | None) -> TypeGuard[dict[str, Any]]:
    "Whether output schema `s` wraps a value as `{'result': value}`: fastmcp marks it; funccall's server sends the bare shape"
    if not s: return False
    if s.get(WRAP): return True
    return set(s) - {'$defs', WRAP} == {'type', 'properties', 'required'} and list(s['properties']) == ['result'] and s['required'] == ['result']

def short(e: BaseException, n: int=500) -> str:
    "`e`'s message, cut after `n` characters (one whose `str` fails says so, rather than fail again)"
    try: s = str(e)
    except Exception: s = f'<{type(e).__name__} whose message fails>'
    return s if len(s) <= n else s[:n] + '...'
