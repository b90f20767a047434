"""A WAL as a table: LevelDB, RocksDB and Pebble write batches as one row per operation.

Engine-neutral (Spark's ``decode`` option and Ray's ``decode=`` both call `decode_batch`):
it takes the records as an Arrow batch of (offset, data) and gives an Arrow batch of
operations, `ROW_SCHEMA`:

========  ======  ===================================================================
column    type    what
========  ======  ===================================================================
path      string  the log the record came from
offset    int64   where the record's first header lies (every operation of a record
                  shares it)
sequence  int64   the operation's sequence number; null for what takes none (RocksDB's
                  log data and two-phase-commit markers, Pebble's log data)
op        string  the operation's class name in the dialect's decoder module
                  (leveldb: Put, Delete; rocksdb: Put, Merge, DeleteRange, ...;
                  pebble: Set, Delete, RangeDelete, ...)
cf        int64   RocksDB's column family (0 is the default); null for LevelDB, Pebble
                  and RocksDB's operations without one
key       binary  the key, or a range's start; null where there is none
value     binary  the value, a range's end, a blob index, a wide-column entity, log
                  data or a transaction id; null where there is none
========  ======  ===================================================================

A field that is no byte string (a TimedPut's write time, a DeleteSized's size, an ingested
table's number) is not in the row: decode the record with the dialect's module for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

from leveldb_log import leveldb, pebble, rocksdb
from leveldb_log._errors import CorruptionError

__all__ = ["ROW_SCHEMA", "decode_batch"]

ROW_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("sequence", pa.int64()),
        pa.field("op", pa.string(), nullable=False),
        pa.field("cf", pa.int64()),
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
    ]
)

#: Each dialect's decoder, and which of its operations take a sequence number.
_DECODERS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], bool]]] = {
    "leveldb": (leveldb.decode_write_batch, lambda op: True),
    "rocksdb": (rocksdb.decode_write_batch, lambda op: isinstance(op, rocksdb.COUNTED)),
    "pebble": (pebble.decode_write_batch, lambda op: not isinstance(op, pebble.LogData)),
}

_KEY_FIELDS = ("key", "start")
_VALUE_FIELDS = ("value", "end", "blob_index", "entity", "data", "xid")

Malformed = Callable[[int, CorruptionError], object]


def decode_batch(
    batch: pa.RecordBatch,
    dialect: str,
    path: str,
    on_malformed: Malformed | None = None,
) -> pa.RecordBatch:
    """Decode a batch of WAL records into one row per operation.

    Arguments
      batch: a pyarrow RecordBatch with the columns ``offset`` (an integer type) and
        ``data`` (binary or large_binary), as Reader.iter_batches (or Spark's read) gives.
      dialect: "leveldb", "rocksdb" or "pebble": how the records are decoded.
      path: the log's name, put in every row.
      on_malformed: None raises at a record that is no write batch; a callable
        ``(record offset, error)`` is called instead and the record left out.

    Returns
      A pyarrow RecordBatch of `ROW_SCHEMA`, the records' operations in log order.

    Raises
      ValueError: an unknown dialect.
      CorruptionError: a malformed record and no on_malformed; its message names the path
        and the record's offset, and its offset is the byte within the payload.
    """
    if dialect not in _DECODERS:
        raise ValueError(f"dialect must be one of {', '.join(_DECODERS)}, not {dialect!r}")
    decode, counted = _DECODERS[dialect]
    columns: dict[str, list[Any]] = {name: [] for name in ROW_SCHEMA.names}
    offsets = batch.column("offset").to_pylist()
    for offset, data in zip(offsets, batch.column("data"), strict=True):
        try:
            write_batch = decode(data.as_buffer())
        except CorruptionError as e:
            if on_malformed is None:
                message = f"{path}: the record at offset {offset} is no write batch: {e}"
                raise CorruptionError(e.offset, e.size, e.reason, message=message) from None
            on_malformed(offset, e)
            continue
        for sequence, op in _numbered(write_batch, counted):
            _append(columns, path, offset, sequence, op)
    return pa.record_batch([pa.array(columns[f.name], f.type) for f in ROW_SCHEMA], ROW_SCHEMA)


def _numbered(write_batch: Any, counted: Callable[[Any], bool]) -> Iterator[tuple[int | None, Any]]:
    """Each operation with its sequence number (None for one that takes none)."""
    sequence = write_batch.sequence
    for op in write_batch.ops:
        if counted(op):
            yield sequence, op
            sequence += 1
        else:
            yield None, op


def _append(
    columns: dict[str, list[Any]], path: str, offset: int, sequence: int | None, op: Any
) -> None:
    columns["path"].append(path)
    columns["offset"].append(offset)
    columns["sequence"].append(sequence)
    columns["op"].append(type(op).__name__)
    columns["cf"].append(getattr(op, "cf", None))
    columns["key"].append(_first(op, _KEY_FIELDS))
    columns["value"].append(_first(op, _VALUE_FIELDS))


def _first(op: Any, names: tuple[str, ...]) -> bytes | None:
    """The first of the named byte-string fields the operation has."""
    for name in names:
        value = getattr(op, name, None)
        if isinstance(value, bytes):
            return value
    return None
