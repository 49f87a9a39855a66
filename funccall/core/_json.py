"""Python values to JSON values: defaults in schemas, results for the model, arguments for a built tool.

`is_json(v)` says whether `v` is already plain JSON (exactly dict with string keys, list, str, int, float, bool,
None), which is what a built tool sends on unchanged; `jsonable(v)` gives the JSON form of anything else a
caller may reasonably pass: dates and times as ISO text, UUID/Path/Decimal as text, Enum members as their value,
bytes as base64, dataclasses, NamedTuples and pydantic models as objects, sets and tuples as arrays.
"""
from __future__ import annotations

import base64, dataclasses, datetime as dt, enum
from decimal import Decimal
from pathlib import PurePath
from uuid import UUID

__all__ = ['jsonable', 'is_json', 'nesting', 'MAX_NESTING', 'too_deep']

_SCALARS = frozenset({str, int, float, bool, type(None)})
_plain = (str, int, float, bool, type(None))

def is_json(
    v,  # any value
) -> bool:  # True when `v` is made only of exact JSON types (a `str` subclass, a tuple or a non-string key is not)
    "Whether `v` is already a plain JSON value, so it can be sent as it is"
    try: return _is_json(v)
    except RecursionError: return False  # nested deeper than Python recurses (or a list holding itself): not plainly JSON

def _is_json(v) -> bool:
    t = type(v)
    if t in _SCALARS: return True
    if t is list:
        for x in v:
            if type(x) not in _SCALARS and not _is_json(x): return False
        return True
    if t is dict:
        for k, x in v.items():
            if type(k) is not str or (type(x) not in _SCALARS and not _is_json(x)): return False
        return True
    return False

def jsonable(
    v,  # a Python value
):      # `v` as a value `json.dumps` takes without a `default=`; raises `TypeError` for what JSON can't hold
    "The JSON form of `v`: ISO text for dates and times, text for UUID/Path/Decimal, an Enum member's value, and so on"
    try: return _jsonable(v)
    except RecursionError:  # (a default that holds itself reached `get_schema` as a RecursionError, not its warning)
        raise TypeError(f"{type(v).__name__} value holds itself, or is nested deeper than Python recurses: JSON can't hold it") from None

def _jsonable(v):
    t = type(v)
    if t in _SCALARS: return v
    if isinstance(v, enum.Enum):
        try: return _jsonable(v.value)
        except TypeError: return v.name  # members whose values JSON can't hold are sent by name
    if isinstance(v, _plain):  # a subclass of a JSON scalar goes out as the scalar itself
        return str(v) if isinstance(v, str) else float(v) if isinstance(v, float) else int(v)  # type: ignore[arg-type]  # an int or bool subclass
    if isinstance(v, dict):
        if not all(isinstance(k, (str, int, float, bool)) for k in v): raise TypeError(f"dict keys must be strings, not in {v!r:.60}")
        return {str(k) if not isinstance(k, str) else k: _jsonable(x) for k, x in v.items()}
    if hasattr(v, '_asdict') and isinstance(v, tuple): return _jsonable(v._asdict())  # type: ignore[attr-defined]  # a NamedTuple
    if isinstance(v, (list, tuple)): return [_jsonable(x) for x in v]
    if isinstance(v, (set, frozenset)):
        items = [_jsonable(x) for x in v]
        try: return sorted(items)
        except TypeError: return items
    if isinstance(v, (dt.datetime, dt.date, dt.time)): return v.isoformat()
    if isinstance(v, (PurePath, UUID, Decimal)): return str(v)
    if isinstance(v, (bytes, bytearray)): return base64.b64encode(v).decode()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if hasattr(v, 'model_dump') and not isinstance(v, type): return v.model_dump(mode='json', by_alias=True)  # pydantic: as its schema spells it
    raise TypeError(f"{type(v).__name__} value {v!r:.60} can't be held by JSON")

# How deep (dicts and lists inside each other) a schema may be for funccall to render it: its walkers recurse, and
# 200 levels (100 nested objects: a schema node and its `properties`) leave half of Python's stack spare. No provider
# takes as much (OpenAI's strict mode: 10 objects)
MAX_NESTING = 200

def nesting(
    v,             # a JSON-like value: dicts, lists, scalars
    stop:int | None=None, # stop counting past this depth (bounded time for a hostile value)
) -> int:          # how many dicts and lists deep `v` goes (a scalar is 0), walked without recursion
    "The depth of `v`'s nesting"
    deepest, todo = 0, [(v, 1)]
    while todo:
        x, d = todo.pop()
        if not isinstance(x, (dict, list, tuple)): continue
        deepest = max(deepest, d)
        if stop is not None and deepest > stop: return deepest
        todo += [(y, d + 1) for y in (x.values() if isinstance(x, dict) else x)]
    return deepest

def too_deep(
    s,                     # a schema
    where:str,             # what it is, for the message: "Tool 'search': its input schema"
    limit:int=MAX_NESTING, # the deepest allowed
) -> str | None:           # why `s` is too deep to render, or None
    "A message naming how deep `s` is when it is deeper than `limit`"
    n = nesting(s, 4 * limit)
    if n <= limit: return None
    return (f"{where} is nested {f'over {n - 1}' if n > 4 * limit else n} levels deep (dicts and lists); funccall renders schemas up to "
            f"{limit} levels (OpenAI's strict mode takes 10 nested objects): flatten it, or name repeated parts in $defs")
