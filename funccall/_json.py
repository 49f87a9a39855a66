"Python values to JSON-safe values: defaults in schemas, results for the model"
from __future__ import annotations

import base64, dataclasses, datetime as dt, enum
from decimal import Decimal
from pathlib import PurePath
from uuid import UUID

__all__ = ['jsonable']

_plain = (str, int, float, bool, type(None))

def jsonable(v):
    "`v` as a value `json.dumps` takes without a `default=`; raises `TypeError` for what JSON can't hold"
    if isinstance(v, enum.Enum):
        try: return jsonable(v.value)
        except TypeError: return v.name  # members whose values JSON can't hold are sent by name
    if isinstance(v, _plain): return v
    if isinstance(v, dict):
        if not all(isinstance(k, (str, int, float, bool)) for k in v): raise TypeError(f"dict keys must be strings, not in {v!r}")
        return {str(k) if not isinstance(k, str) else k: jsonable(x) for k, x in v.items()}
    if hasattr(v, '_asdict') and isinstance(v, tuple): return jsonable(v._asdict())  # a NamedTuple
    if isinstance(v, (list, tuple)): return [jsonable(x) for x in v]
    if isinstance(v, (set, frozenset)):
        items = [jsonable(x) for x in v]
        try: return sorted(items)
        except TypeError: return items
    if isinstance(v, (dt.datetime, dt.date, dt.time)): return v.isoformat()
    if isinstance(v, (PurePath, UUID, Decimal)): return str(v)
    if isinstance(v, (bytes, bytearray)): return base64.b64encode(v).decode()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if hasattr(v, 'model_dump') and not isinstance(v, type): return v.model_dump(mode='json')  # pydantic
    raise TypeError(f"{type(v).__name__} value {v!r:.60} can't be held by JSON")
