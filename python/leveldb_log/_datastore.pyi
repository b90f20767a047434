"""Stubs of leveldb_log._datastore, the C decoder of EntityProto records."""

from collections.abc import Callable
from datetime import tzinfo
from typing import Any

def _setup(
    entity: type[dict[str, Any]],
    key: type,
    geopoint: Callable[..., Any],
    raw_value: Callable[..., Any],
    user: Callable[..., Any],
    utc: tzinfo,
    /,
) -> None:
    """Hand the decoder the classes it builds (done once by leveldb_log.datastore)."""

def decode(record: Any, /) -> Any:
    """decode(record) -> Entity: one serialized EntityProto, decoded."""

def decode_columns(records: Any, /) -> tuple[int, tuple[list[Any], ...], list[str], list[Any]]:
    """decode_columns(records) -> (rows, keys, names, columns): records decoded into
    columns. keys: lists of app, namespace, database, path offsets (rows + 1), kinds, ids
    and names; columns: a (values, type mask) pair per name, each list `rows` long (None
    where a record lacks it)."""
