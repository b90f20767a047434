"""Firestore and Datastore exports: entities out of ``gcloud firestore export`` /
``gcloud datastore export`` folders and the Firebase emulator's exports.

- ``read_export(path)`` iterates the entities (Entity: a dict of properties with ``.key``)
  of an export folder, a metadata file or one output file; ``.to_arrow()`` and
  ``__arrow_c_stream__`` give a table (pyarrow, polars, DuckDB);
- ``decode_entity(record)`` / ``encode_entity(entity)``: one record, the legacy App Engine
  EntityProto, decoded in C / encoded;
- values: None, bool, int, float, str, bytes, aware UTC datetime, GeoPoint, Key, User,
  dict (maps), Entity (embedded entities with a key), list; RawValue for a meaning this
  reader does not know.

See docs/datastore.md.
"""

from __future__ import annotations

from typing import Any

from leveldb_log import _datastore
from leveldb_log._public import module_dir
from leveldb_log.datastore._encode import encode_entity
from leveldb_log.datastore._export import EntityDecodeError, Export, read_export
from leveldb_log.datastore._values import Entity, GeoPoint, Key, RawValue, User

__all__ = [
    "Entity",
    "EntityDecodeError",
    "Export",
    "GeoPoint",
    "Key",
    "RawValue",
    "User",
    "decode_entity",
    "encode_entity",
    "read_export",
]
__dir__ = module_dir(globals())


def decode_entity(record: Any) -> Entity:
    """One serialized EntityProto (an output file's record) as an Entity.

    Arguments
      record: bytes or any bytes-like object.

    Returns
      The Entity, with its key and its properties as docs/datastore.md's table says.

    Raises
      TypeError: record is not bytes-like.
      ValueError: record is not an EntityProto (malformed, truncated, without a key).
    """
    entity: Entity = _datastore.decode(record)
    return entity
