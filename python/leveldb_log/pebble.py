"""Decode (and encode) Pebble's batches, the records of its write-ahead log (docs/rocksdb.md).

A Pebble batch has RocksDB's 12-byte header (fixed64 sequence number, fixed32 count), then
entries ``kind(1) key [value]``, key and value varint32-length-prefixed byte strings. There
are no column families and no two-phase-commit markers. Kinds that carry a value: Set (1),
Merge (2), RangeDelete (15, the value is the end key), RangeKeyDelete (19), RangeKeyUnset
(20), RangeKeySet (21), DeleteSized (23, the value is a varint), Excise (24) and
IngestSSTWithBlobs (26). Every other kind up to 30 is a key alone; a kind above 30 is
invalid. LogData (3) does not count in the header's count. The count is kept as the header
says, not checked: Pebble's own batch reader does not check it either.

The names are those of the leveldb and rocksdb modules: `decode_write_batch` gives a
`WriteBatch` whose ``ops`` are `Operation` values (frozen dataclasses, named after Pebble's
kinds), and range bounds are ``start`` and ``end``. `decode_write_batch` raises
`CorruptionError` (also a `ValueError`) on a malformed payload: its ``offset`` is the byte
offset *within the payload* where decoding failed, ``size`` the bytes from there to the
payload's end, ``reason`` what is wrong.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from leveldb_log._cursor import (
    MAX_SEQUENCE,
    U32,
    Cursor,
    put_string,
    put_varint,
)
from leveldb_log._public import module_dir

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = [
    "MAX_KIND",
    "MAX_SEQUENCE",
    "Delete",
    "DeleteSized",
    "Excise",
    "IngestSST",
    "IngestSSTWithBlobs",
    "LogData",
    "Merge",
    "Operation",
    "Other",
    "RangeDelete",
    "RangeKeyDelete",
    "RangeKeySet",
    "RangeKeyUnset",
    "Set",
    "SingleDelete",
    "WriteBatch",
    "decode_write_batch",
    "encode_write_batch",
]
__dir__ = module_dir(globals())

#: The largest valid kind (InternalKeyKindMax); a batch op above it is invalid.
MAX_KIND = 30


@dataclass(frozen=True, slots=True)
class Set:
    """Store ``value`` under ``key`` (kind 1)."""

    key: bytes
    value: bytes


@dataclass(frozen=True, slots=True)
class Delete:
    """Remove ``key`` (kind 0)."""

    key: bytes


@dataclass(frozen=True, slots=True)
class SingleDelete:
    """Remove ``key``, set once since its last delete (kind 7)."""

    key: bytes


@dataclass(frozen=True, slots=True)
class Merge:
    """Merge ``value`` into ``key`` (kind 2)."""

    key: bytes
    value: bytes


@dataclass(frozen=True, slots=True)
class LogData:
    """Bytes for the log only, never applied (kind 3; not counted)."""

    data: bytes


@dataclass(frozen=True, slots=True)
class RangeDelete:
    """Remove the point keys in ``[start, end)`` (kind 15)."""

    start: bytes
    end: bytes


@dataclass(frozen=True, slots=True)
class RangeKeySet:
    """Set a range key from ``start``; ``value`` (end key and suffix/value pairs) kept raw
    (kind 21)."""

    start: bytes
    value: bytes


@dataclass(frozen=True, slots=True)
class RangeKeyUnset:
    """Unset a range key from ``start``; ``value`` (end key and suffixes) kept raw (kind 20)."""

    start: bytes
    value: bytes


@dataclass(frozen=True, slots=True)
class RangeKeyDelete:
    """Remove the range keys in ``[start, end)`` (kind 19)."""

    start: bytes
    end: bytes


@dataclass(frozen=True, slots=True)
class DeleteSized:
    """Remove ``key``, whose shadowed op was about ``size`` bytes (kind 23)."""

    key: bytes
    size: int


@dataclass(frozen=True, slots=True)
class Excise:
    """Remove every point and range key in ``[start, end)`` while ingesting (kind 24)."""

    start: bytes
    end: bytes


@dataclass(frozen=True, slots=True)
class IngestSST:
    """Table ``table_number`` is ingested (kind 22: the key is the varint number)."""

    table_number: int


@dataclass(frozen=True, slots=True)
class IngestSSTWithBlobs:
    """Table ``table_number`` is ingested with blob files ``blob_ids`` (kind 26: the value
    is a varint count followed by that many varint ids)."""

    table_number: int
    blob_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Other:
    """An op of another valid kind (up to 30) that carries a key alone."""

    kind: int
    key: bytes


Operation: TypeAlias = (
    Set
    | Delete
    | SingleDelete
    | Merge
    | LogData
    | RangeDelete
    | RangeKeySet
    | RangeKeyUnset
    | RangeKeyDelete
    | DeleteSized
    | Excise
    | IngestSST
    | IngestSSTWithBlobs
    | Other
)

# kind -> op with two byte-string fields (key, value); kind -> op with a key alone.
_PAIRS: dict[int, Callable[[bytes, bytes], Operation]] = {
    1: Set,
    2: Merge,
    15: RangeDelete,
    19: RangeKeyDelete,
    20: RangeKeyUnset,
    21: RangeKeySet,
    24: Excise,
}
_SINGLES: dict[int, Callable[[bytes], Operation]] = {0: Delete, 3: LogData, 7: SingleDelete}
_DELETE_SIZED, _INGEST_SST, _INGEST_SST_WITH_BLOBS = 23, 22, 26
_KIND_OF: dict[type, int] = {
    Delete: 0,
    Set: 1,
    Merge: 2,
    LogData: 3,
    SingleDelete: 7,
    RangeDelete: 15,
    RangeKeyDelete: 19,
    RangeKeyUnset: 20,
    RangeKeySet: 21,
    IngestSST: 22,
    DeleteSized: 23,
    Excise: 24,
    IngestSSTWithBlobs: 26,
}


@dataclass(frozen=True)
class WriteBatch:
    """One record of a Pebble WAL (Pebble's batch): operations applied atomically.

    ``sequence`` and ``count`` are the header's; the count is kept as the header says, not
    checked (Pebble's reader does not check it). Made without a count, a WriteBatch counts
    its operations other than LogData, as Pebble does.
    """

    sequence: int
    ops: tuple[Operation, ...]
    count: int = None  # type: ignore[assignment]  # set by __post_init__ when not given

    def __post_init__(self) -> None:
        """Count the operations when no count is given."""
        if self.count is None:
            object.__setattr__(self, "count", sum(not isinstance(op, LogData) for op in self.ops))


def decode_write_batch(payload: Buffer) -> WriteBatch:
    """Decode a record of a Pebble WAL into a WriteBatch.

    Arguments
      payload: the record, any bytes-like object (as a Reader returns it).

    Returns
      A WriteBatch: the header's sequence number and count, and the operations.

    Raises
      CorruptionError (a ValueError): the payload is shorter than the 12-byte header, a
        kind above 30, a field cut short, or an integer field (DeleteSized's size,
        IngestSST's table number, IngestSSTWithBlobs' ids) that is not exactly its
        varints; its offset is the byte offset in the payload.
    """
    cur = Cursor("Pebble batch", payload)
    sequence, count = cur.batch_header()
    ops: list[Operation] = []
    while not cur.at_end():
        ops.append(_decode_op(cur))
    return WriteBatch(sequence, tuple(ops), count)


def _decode_op(cur: Cursor) -> Operation:
    """The operation at the cursor: kind, key and, for the kinds that have one, value."""
    start = cur.pos
    kind = cur.byte()
    if kind > MAX_KIND:
        raise cur.error(f"invalid key kind {kind:#x}", start)
    key_at = cur.pos
    key = cur.string("key")
    if kind in _PAIRS:
        return _PAIRS[kind](key, cur.string("value"))
    if kind in _SINGLES:
        return _SINGLES[kind](key)
    if kind == _INGEST_SST:
        return IngestSST(_varints(cur, key, key_at, 1, "table number")[0])
    if kind == _DELETE_SIZED:
        value_at = cur.pos
        return DeleteSized(key, _varints(cur, cur.string("value"), value_at, 1, "size")[0])
    if kind == _INGEST_SST_WITH_BLOBS:
        table = _varints(cur, key, key_at, 1, "table number")[0]
        value_at = cur.pos
        value = cur.string("value")
        return IngestSSTWithBlobs(table, _blob_ids(cur, value, value_at))
    return Other(kind, key)


def _varints(cur: Cursor, field: bytes, at: int, n: int, name: str) -> list[int]:
    """Exactly ``n`` varint64s making up ``field``, a string that began at ``at``."""
    inner = Cursor(cur.what, field)
    try:
        values = [inner.varint(64, name) for _ in range(n)]
    except ValueError:
        raise cur.error(f"{name} is not a valid varint", at) from None
    if not inner.at_end():
        raise cur.error(f"{name}: {len(field) - inner.pos} bytes after the varint", at)
    return values


def _blob_ids(cur: Cursor, value: bytes, at: int) -> tuple[int, ...]:
    """IngestSSTWithBlobs' value: a varint count, then that many varint blob ids."""
    inner = Cursor(cur.what, value)
    try:
        count = inner.varint(64, "blob id count")
        ids = tuple(inner.varint(64, "blob id") for _ in range(min(count, len(value))))
    except ValueError:
        raise cur.error("blob ids are not valid varints", at) from None
    if len(ids) != count or not inner.at_end():
        raise cur.error(f"blob ids do not fill their value (count {count})", at)
    return ids


def _encode_op(op: Operation) -> bytes:
    """One operation's bytes: kind, key and value as the kind has them."""
    if isinstance(op, Other):
        if not isinstance(op.kind, int) or not 0 <= op.kind <= MAX_KIND:
            raise ValueError(f"kind {op.kind!r} is not a valid kind (0 to {MAX_KIND})")
        return bytes([op.kind]) + put_string(op.key, "key")
    kind = _KIND_OF.get(type(op))
    if kind is None:
        raise TypeError(f"expected a leveldb_log.pebble operation, got {type(op).__name__}")
    out = bytearray([kind])
    if isinstance(op, IngestSST):
        out += put_string(put_varint(op.table_number, 64, "table number"), "key")
    elif isinstance(op, IngestSSTWithBlobs):
        out += put_string(put_varint(op.table_number, 64, "table number"), "key")
        ids = put_varint(len(op.blob_ids), 64, "blob id count")
        ids += b"".join(put_varint(i, 64, "blob id") for i in op.blob_ids)
        out += put_string(ids, "value")
    elif isinstance(op, DeleteSized):
        out += put_string(op.key, "key")
        out += put_string(put_varint(op.size, 64, "size"), "value")
    else:
        for field in dataclasses.fields(op):
            out += put_string(getattr(op, field.name), field.name)
    return bytes(out)


def encode_write_batch(sequence: int, ops: Iterable[Operation], count: int | None = None) -> bytes:
    """The WAL record Pebble would write for ops, numbered from sequence.

    Arguments
      sequence: the batch's sequence number (below 2**56).
      ops: an iterable of the operations of this module.
      count: the header's count; by default the operations other than LogData, as Pebble
        counts them.

    Returns
      The record's bytes, for Writer.write(); decode_write_batch() reads them back.

    Raises
      TypeError: an object that is not an operation of this module, or a key or value that
        is not bytes-like.
      ValueError: a sequence, count, number or kind out of range, or a field too long
        for its varint32 length.
    """
    body = bytearray()
    counted = 0
    for op in ops:
        body += _encode_op(op)
        counted += not isinstance(op, LogData)
    count = counted if count is None else count
    if not isinstance(count, int) or not 0 <= count <= U32:
        raise ValueError(f"count {count!r} does not fit in the fixed32 count")
    if not isinstance(sequence, int) or not 0 <= sequence <= MAX_SEQUENCE:
        raise ValueError(f"sequence {sequence!r} is out of range (0 to 2**56 - 1)")
    return struct.pack("<QI", sequence, count) + bytes(body)
