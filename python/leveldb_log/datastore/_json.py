"""Entities and values as JSON: what ``leveldb-log dump --decode`` prints for an export,
and what Arrow columns of mixed or nested values hold.

- None, bool, int, str: themselves; a float: itself, and a non-finite one as the string
  "NaN", "Infinity" or "-Infinity" (JSON has no such numbers);
- bytes: base64 text; a datetime: RFC 3339 text in UTC with microseconds
  ("2024-01-31T12:00:00.000000Z");
- a Key: its path as an array of [kind, id_or_name] pairs;
- a GeoPoint: {"latitude": ..., "longitude": ...}; a User: an object of its fields;
- a map or embedded entity: an object; an array: an array;
- a RawValue: {"meaning": ..., "value": ...}.
"""

from __future__ import annotations

import base64
import datetime
import json
import math
from collections.abc import Mapping
from typing import Any

from leveldb_log.datastore._values import Entity, GeoPoint, Key, RawValue, User

__all__ = ["entity_json", "value_json"]


def _float(v: float) -> Any:
    if math.isfinite(v):
        return v
    return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")


def _when(v: datetime.datetime) -> str:
    return v.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ").rjust(27, "0")


def value_json(v: Any) -> Any:
    """A value as plain JSON data (dict, list, str, int, float, bool, None)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, bytes):
        return base64.b64encode(v).decode("ascii")
    if isinstance(v, datetime.datetime):
        return _when(v)
    if isinstance(v, Key):
        return [list(e) for e in v.path]
    if isinstance(v, GeoPoint):
        return {"latitude": _float(v.latitude), "longitude": _float(v.longitude)}
    if isinstance(v, User):
        return {k: x for k, x in v._asdict().items() if x is not None}
    if isinstance(v, RawValue):
        return {"meaning": v.meaning, "value": value_json(v.value)}
    if isinstance(v, Mapping):
        return {k: value_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [value_json(x) for x in v]
    raise TypeError(f"no JSON form for a {type(v).__name__}")


def entity_json(e: Entity) -> dict[str, Any]:
    """An entity as {"key": path, "namespace": ..., "properties": {...}}."""
    key = e.key
    return {
        "key": value_json(key) if key is not None else None,
        "namespace": key.namespace if key is not None else "",
        "properties": {k: value_json(v) for k, v in e.items()},
    }


def dumps(v: Any) -> str:
    """One value as JSON text (compact, non-ASCII kept)."""
    return json.dumps(value_json(v), ensure_ascii=False, separators=(",", ":"))
