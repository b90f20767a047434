"""Export.to_arrow(): entities as one pyarrow Table.

Columns: ``__key__`` (a struct: project, namespace, path as a list of {kind, id, name},
and the last element's kind, id and name), then one column per property name in order of
first appearance. A column whose values share one type gets that type's Arrow type (bool,
int64, float64, large_string, large_binary, timestamp[us, UTC], a {latitude, longitude}
struct, the key struct); ints mixed with floats give float64 when every int is exact in a
double. Anything else (maps, arrays, users, raw values, other mixtures) is JSON text, as
_json.py writes it, in a large_string column whose field metadata says
``{"leveldb_log.datastore": "json"}``. A missing property and a null are both null.
"""

from __future__ import annotations

import datetime
import gc
import importlib
import itertools
from collections.abc import Iterable
from typing import Any

from leveldb_log.datastore._json import dumps
from leveldb_log.datastore._values import Entity, GeoPoint, Key

__all__ = ["table"]

JSON_METADATA = {b"leveldb_log.datastore": b"json"}
_EXACT = 1 << 53  # ints up to this are exact in a float64


def _pyarrow() -> Any:
    try:
        return importlib.import_module("pyarrow")
    except ImportError as e:
        raise ImportError(
            "Export.to_arrow() needs pyarrow: pip install 'leveldb-log[arrow]'"
        ) from e


def _key_type(pa: Any) -> Any:
    element = pa.struct([("kind", pa.string()), ("id", pa.int64()), ("name", pa.string())])
    return pa.struct(
        [
            ("project", pa.string()),
            ("namespace", pa.string()),
            ("path", pa.list_(element)),
            ("kind", pa.string()),
            ("id", pa.int64()),
            ("name", pa.string()),
        ]
    )


def _keys(pa: Any, keys: list[Key | None]) -> Any:
    """The key struct array (null where a key is None), built column by column."""
    paths = [k.path if k is not None else () for k in keys]
    offsets = [0, *itertools.accumulate(map(len, paths))]
    flat = list(itertools.chain.from_iterable(paths))
    ions = [e[1] for e in flat]
    typ = _key_type(pa)
    elements = pa.StructArray.from_arrays(
        [
            pa.array([e[0] for e in flat], pa.string()),
            pa.array([v if type(v) is int else None for v in ions], pa.int64()),
            pa.array([v if type(v) is str else None for v in ions], pa.string()),
        ],
        fields=list(typ.field("path").type.value_type),
    )
    apps = [k.app if k is not None else None for k in keys]
    projects = {a: Key((), app=a).project for a in set(apps) if a is not None}
    last = [p[-1] if p else (None, None) for p in paths]
    children = [
        pa.array([projects.get(a) for a in apps], pa.string()),  # type: ignore[arg-type]
        pa.array([k.namespace if k is not None else None for k in keys], pa.string()),
        pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), elements),
        pa.array([e[0] for e in last], pa.string()),
        pa.array([e[1] if type(e[1]) is int else None for e in last], pa.int64()),
        pa.array([e[1] if type(e[1]) is str else None for e in last], pa.string()),
    ]
    mask = pa.array([k is None for k in keys], pa.bool_()) if None in keys else None
    return pa.StructArray.from_arrays(children, fields=list(typ), mask=mask)


def _points(pa: Any, values: list[Any]) -> Any:
    lat = pa.array([v.latitude if v is not None else None for v in values], pa.float64())
    lon = pa.array([v.longitude if v is not None else None for v in values], pa.float64())
    mask = pa.array([v is None for v in values], pa.bool_())
    return pa.StructArray.from_arrays([lat, lon], names=["latitude", "longitude"], mask=mask)


def _column(pa: Any, name: str, values: list[Any]) -> tuple[Any, Any]:
    """(array, field) of one property's values, typed as the module docstring says."""
    types = {type(v) for v in values}
    types.discard(type(None))
    simple = {
        bool: pa.bool_(),
        int: pa.int64(),
        float: pa.float64(),
        str: pa.large_string(),
        bytes: pa.large_binary(),
        datetime.datetime: pa.timestamp("us", tz="UTC"),
    }
    if not types:
        array = pa.nulls(len(values))
    elif len(types) == 1 and next(iter(types)) in simple:
        array = pa.array(values, simple[next(iter(types))])
    elif types == {int, float} and all(-_EXACT <= v <= _EXACT for v in values if type(v) is int):
        array = pa.array([None if v is None else float(v) for v in values], pa.float64())
    elif types == {GeoPoint}:
        array = _points(pa, values)
    elif types == {Key}:
        array = _keys(pa, values)
    else:
        text = [None if v is None else dumps(v) for v in values]
        array = pa.array(text, pa.large_string())
        return array, pa.field(name, array.type, metadata=JSON_METADATA)
    return array, pa.field(name, array.type)


def table(entities: Iterable[Entity]) -> Any:
    """The entities as a pyarrow.Table (see the module docstring)."""
    pa = _pyarrow()
    collecting = gc.isenabled()
    gc.disable()  # entities kept alive would make each collection walk all the others
    try:
        rows = list(entities)
    finally:
        if collecting:
            gc.enable()
    names: dict[str, Any] = {}
    for e in rows:
        names.update(e)  # only the keys matter: every name, in order of first appearance
    arrays, fields = [_keys(pa, [e.key for e in rows])], [pa.field("__key__", _key_type(pa))]
    for name in names:
        array, field = _column(pa, name, [e.get(name) for e in rows])
        arrays.append(array)
        fields.append(field)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
