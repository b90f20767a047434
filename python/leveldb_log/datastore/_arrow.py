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

import contextlib
import datetime
import gc
import importlib
import itertools
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

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


class _KeyLists(NamedTuple):
    """Keys as flat lists: per key its app, namespace and database; per path element its
    kind, id and name; offsets[i]:offsets[i + 1] are key i's elements."""

    apps: list[str | None]
    namespaces: list[str | None]
    databases: list[str | None]
    offsets: list[int]
    kinds: list[str]
    ids: list[int | None]
    names: list[str | None]


def _flatten(keys: list[Key | None]) -> _KeyLists:
    """Key objects (None for none) as _KeyLists."""
    paths = [k.path if k is not None else () for k in keys]
    flat = list(itertools.chain.from_iterable(paths))
    ions = [e[1] for e in flat]
    return _KeyLists(
        [k.app if k is not None else None for k in keys],
        [k.namespace if k is not None else None for k in keys],
        [k.database if k is not None else None for k in keys],
        [0, *itertools.accumulate(map(len, paths))],
        [e[0] for e in flat],
        [v if type(v) is int else None for v in ions],
        [v if type(v) is str else None for v in ions],
    )


def _keys(pa: Any, k: _KeyLists) -> Any:
    """The key struct array (null where a key's app is None), built column by column."""
    typ = _key_type(pa)
    elements = pa.StructArray.from_arrays(
        [
            pa.array(k.kinds, pa.string()),
            pa.array(k.ids, pa.int64()),
            pa.array(k.names, pa.string()),
        ],
        fields=list(typ.field("path").type.value_type),
    )
    projects = {a: Key((), app=a).project for a in set(k.apps) if a is not None}
    offsets = k.offsets
    last = [b - 1 if b > a else None for a, b in itertools.pairwise(offsets)]
    children = [
        pa.array([projects.get(a) for a in k.apps], pa.string()),  # type: ignore[arg-type]
        pa.array(k.namespaces, pa.string()),
        pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), elements),
        pa.array([k.kinds[i] if i is not None else None for i in last], pa.string()),
        pa.array([k.ids[i] if i is not None else None for i in last], pa.int64()),
        pa.array([k.names[i] if i is not None else None for i in last], pa.string()),
    ]
    missing = [a is None for a in k.apps]
    mask = pa.array(missing, pa.bool_()) if any(missing) else None
    return pa.StructArray.from_arrays(children, fields=list(typ), mask=mask)


def _points(pa: Any, values: list[Any]) -> Any:
    lat = pa.array([v.latitude if v is not None else None for v in values], pa.float64())
    lon = pa.array([v.longitude if v is not None else None for v in values], pa.float64())
    mask = pa.array([v is None for v in values], pa.bool_())
    return pa.StructArray.from_arrays([lat, lon], names=["latitude", "longitude"], mask=mask)


def _column(pa: Any, name: str, values: list[Any], types: set[type]) -> tuple[Any, Any]:
    """(array, field) of one property's values, whose types (None's left out) are
    ``types``, typed as the module docstring says."""
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
        array = _keys(pa, _flatten(values))
    else:
        text = [None if v is None else dumps(v) for v in values]
        array = pa.array(text, pa.large_string())
        return array, pa.field(name, array.type, metadata=JSON_METADATA)
    return array, pa.field(name, array.type)


def _no_gc() -> Any:
    """A context that holds off the cyclic collector: while many new objects stay alive,
    each collection would walk all the others."""

    @contextlib.contextmanager
    def held() -> Iterator[None]:
        collecting = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if collecting:
                gc.enable()

    return held()


def table(entities: Iterable[Entity]) -> Any:
    """Entities as a pyarrow.Table (see the module docstring)."""
    pa = _pyarrow()
    with _no_gc():
        rows = list(entities)
    names: dict[str, Any] = {}
    for e in rows:
        names.update(e)  # only the keys matter: every name, in order of first appearance
    arrays = [_keys(pa, _flatten([e.key for e in rows]))]
    fields = [pa.field("__key__", _key_type(pa))]
    for name in names:
        values = [e.get(name) for e in rows]
        array, field = _column(pa, name, values, {type(v) for v in values} - {type(None)})
        arrays.append(array)
        fields.append(field)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


# The type bits of decode_columns' masks (csrc/datastore/py/ds_columns.c), as Python types.
_BITS: tuple[tuple[int, type], ...] = (
    (2, bool),
    (4, int),
    (8, float),
    (16, str),
    (32, bytes),
    (64, datetime.datetime),
    (128, object),  # anything else: JSON
    (256, GeoPoint),
    (512, Key),
)


def columns_table(decoded: tuple[int, tuple[list[Any], ...], list[str], list[Any]]) -> Any:
    """A pyarrow.Table of what _datastore.decode_columns returns."""
    pa = _pyarrow()
    _, keys, names, columns = decoded
    arrays = [_keys(pa, _KeyLists(*keys))]
    fields = [pa.field("__key__", _key_type(pa))]
    for name, (values, mask) in zip(names, columns, strict=True):
        types = {t for bit, t in _BITS if mask & bit}
        array, field = _column(pa, name, values, types)
        arrays.append(array)
        fields.append(field)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
