"""C decoder of the legacy EntityProto (Firestore and Datastore exports)."""

# Type stubs of the C extension leveldb_log._datastore, and the one source of its
# docstrings: csrc/docstrings.py turns them (and each def's signature) into the C string
# macros the extension is compiled with.

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
    """One serialized EntityProto, decoded: an Entity."""

def decode_columns(records: Any, /) -> tuple[int, tuple[list[Any], ...], list[str], list[Any]]:
    """Records decoded into columns: (rows, keys, names, columns).

    keys: lists of app, namespace, database, path offsets (rows + 1), kinds, ids and names;
    columns: a (values, type mask) pair per name, each list `rows` long (None where a
    record lacks it).
    """
