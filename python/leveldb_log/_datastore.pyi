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
