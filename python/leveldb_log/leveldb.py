"""Decode (and encode) the payloads LevelDB keeps in its own logs.

A LevelDB database directory holds two kinds of log (docs/leveldb.md walks through both):

- the write-ahead log ``NNNNNN.log``, one **WriteBatch** per record::

      fixed64 sequence | fixed32 count | count x (0x01 key value | 0x00 key)

  where ``key`` and ``value`` are varint32-length-prefixed byte strings, and the i-th
  operation of the batch gets sequence number ``sequence + i``;

- the ``MANIFEST-NNNNNN`` descriptor, one **VersionEdit** per record: a sequence of
  varint32 tags, each followed by its fields:

  ===  =================  ==========================================================
  tag  name               fields
  ===  =================  ==========================================================
  1    comparator         length-prefixed name
  2    log number         varint64
  3    next file number   varint64
  4    last sequence      varint64
  5    compact pointer    varint32 level, length-prefixed internal key
  6    deleted file       varint32 level, varint64 file number
  7    new file           varint32 level, varint64 number, varint64 size,
                          length-prefixed smallest and largest internal keys
  9    prev log number    varint64
  ===  =================  ==========================================================

An *internal key* is the user key followed by a fixed64 ``sequence << 8 | value_type``.

Every decoder raises `CorruptionError` (also a `ValueError`) on a malformed payload: its
``offset`` is the byte offset *within the payload* where decoding failed, ``size`` the bytes
from there to the payload's end, ``reason`` what is wrong; ``str()`` says all three, as
``"<WriteBatch|VersionEdit>: <reason> at byte <offset>"``. The decoded values are frozen
dataclasses. Integers are little-endian; a varint holds 7 bits per byte, low bits first,
the high bit meaning "more bytes follow".
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, TypeAlias

from leveldb_log._cursor import (
    MAX_SEQUENCE,
    U32,
    Cursor,
    Fields,
    Handler,
    decode_tags,
    put_string,
    put_varint,
)
from leveldb_log._edit import (
    SCALAR_TAGS,
    CompactPointer,
    DeletedFile,
    InternalKey,
    comparator,
    internal_key,
    scalar,
)
from leveldb_log._public import module_dir

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = [
    "MAX_SEQUENCE",
    "NUM_LEVELS",
    "CompactPointer",
    "Delete",
    "DeletedFile",
    "InternalKey",
    "NewFile",
    "Operation",
    "Put",
    "ValueType",
    "VersionEdit",
    "WriteBatch",
    "decode_version_edit",
    "decode_write_batch",
    "encode_version_edit",
    "encode_write_batch",
]
__dir__ = module_dir(globals())

#: LevelDB's ``config::kNumLevels``: levels in a VersionEdit lie in ``range(NUM_LEVELS)``.
NUM_LEVELS = 7


class ValueType(IntEnum):
    """What an operation or internal key records (LevelDB's ``ValueType``)."""

    DELETION = 0
    VALUE = 1


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------
# Frozen dataclasses, not named tuples, here as in the rocksdb and pebble modules: a value
# is equal only to a value of its own class (a named tuple equals any tuple of its fields).


@dataclass(frozen=True, slots=True)
class Put:
    """Store ``value`` under ``key``."""

    key: bytes
    value: bytes


@dataclass(frozen=True, slots=True)
class Delete:
    """Remove ``key``."""

    key: bytes


Operation: TypeAlias = Put | Delete


@dataclass(frozen=True)
class WriteBatch:
    """One WAL record: operations applied atomically, numbered from ``sequence``."""

    sequence: int
    ops: tuple[Operation, ...]

    @property
    def count(self) -> int:
        """How many operations the batch holds (its header's count field)."""
        return len(self.ops)

    def numbered(self) -> Iterator[tuple[int, Operation]]:
        """Each operation with its own sequence number, ``sequence + index``."""
        for index, op in enumerate(self.ops):
            yield self.sequence + index, op


@dataclass(frozen=True, slots=True)
class NewFile:
    """Table file ``number`` of ``file_size`` bytes joins ``level`` (tag 7)."""

    level: int
    number: int
    file_size: int
    smallest: InternalKey
    largest: InternalKey


@dataclass(frozen=True)
class VersionEdit:
    """One MANIFEST record: a change to the set of table files and the DB's counters.

    Scalar fields are ``None`` when the edit does not set them.  If a payload sets one twice,
    the last value wins, as in LevelDB.
    """

    comparator: str | None = None
    log_number: int | None = None
    prev_log_number: int | None = None
    next_file_number: int | None = None
    last_sequence: int | None = None
    compact_pointers: tuple[CompactPointer, ...] = ()
    deleted_files: tuple[DeletedFile, ...] = ()
    new_files: tuple[NewFile, ...] = ()


# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------


def decode_write_batch(payload: Buffer) -> WriteBatch:
    """Decode a WAL record (a record of a NNNNNN.log) into its sequence and operations.

    Arguments
      payload: the record, any bytes-like object (as a Reader returns it).

    Returns
      A WriteBatch: its first sequence number and its Put and Delete operations,
      in order (WriteBatch.numbered() gives each its own sequence number).

    Raises
      CorruptionError (a ValueError): the payload is shorter than the 12-byte
        header, an operation is cut short or has an unknown tag, or the count
        field disagrees with the operations found; its offset is the byte offset
        in the payload where decoding failed.
    """
    cur = Cursor("WriteBatch", payload)
    sequence, count = cur.batch_header()
    ops: list[Operation] = []
    while not cur.at_end():
        start = cur.pos
        tag = cur.byte()
        if tag == ValueType.VALUE:
            key = cur.string("key")
            ops.append(Put(key, cur.string("value")))
        elif tag == ValueType.DELETION:
            ops.append(Delete(cur.string("key")))
        else:
            raise cur.error(f"unknown operation tag {tag}", start)
    if len(ops) != count:
        raise cur.error(f"count says {count} operations but {len(ops)} found", 8)
    return WriteBatch(sequence, tuple(ops))


_TAG_COMPARATOR = 1
_TAG_COMPACT_POINTER = 5
_TAG_DELETED_FILE = 6
_TAG_NEW_FILE = 7
# Tag 8 held large value references in early LevelDB versions; no reader accepts it.


def _level(cur: Cursor) -> int:
    """A varint32 level, in range(NUM_LEVELS)."""
    start = cur.pos
    level = cur.varint(32, "level")
    if level >= NUM_LEVELS:
        raise cur.error(f"level {level} out of range (LevelDB has {NUM_LEVELS})", start)
    return level


def _compact_pointer(cur: Cursor, fields: Fields) -> None:
    """Tag 5: a level and the internal key its next compaction starts at."""
    level = _level(cur)
    fields.add("compact_pointers", CompactPointer(level, internal_key(cur, "compact pointer key")))


def _deleted_file(cur: Cursor, fields: Fields) -> None:
    """Tag 6: a level and the number of a table file leaving it."""
    level = _level(cur)
    fields.add("deleted_files", DeletedFile(level, cur.varint(64, "file number")))


def _new_file(cur: Cursor, fields: Fields) -> None:
    """Tag 7: a table file joining a level, its size and its smallest and largest keys."""
    level, number = _level(cur), cur.varint(64, "file number")
    size = cur.varint(64, "file size")
    smallest = internal_key(cur, "smallest key")
    fields.add(
        "new_files", NewFile(level, number, size, smallest, internal_key(cur, "largest key"))
    )


_EDIT_TAGS: dict[int, Handler] = {
    _TAG_COMPARATOR: comparator,
    **{tag: scalar(name) for tag, name in SCALAR_TAGS.items()},
    _TAG_COMPACT_POINTER: _compact_pointer,
    _TAG_DELETED_FILE: _deleted_file,
    _TAG_NEW_FILE: _new_file,
}


def decode_version_edit(payload: Buffer) -> VersionEdit:
    """Decode a MANIFEST record (of a MANIFEST-NNNNNN) into a VersionEdit.

    Arguments
      payload: the record, any bytes-like object (as a Reader returns it).

    Returns
      A VersionEdit; the fields the record does not set are None (or empty).

    Raises
      CorruptionError (a ValueError): an unknown tag, a field cut short, a
        varint that overflows, a level outside range(NUM_LEVELS) or an internal
        key shorter than 8 bytes; its offset is the byte offset in the payload
        where decoding failed.
    """
    return decode_tags(Cursor("VersionEdit", payload), _EDIT_TAGS).build(VersionEdit)


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------


def encode_write_batch(sequence: int, ops: Iterable[Operation]) -> bytes:
    """A WAL record holding ops numbered from sequence (what LevelDB appends).

    Arguments
      sequence: the first operation's sequence number; the last one's must stay
        below 2**56 (LevelDB's limit, MAX_SEQUENCE).
      ops: an iterable of Put and Delete.

    Returns
      The record's bytes, for Writer.write(); decode_write_batch() reads it back.

    Raises
      TypeError: an operation that is neither a Put nor a Delete, or a key or
        value that is not bytes-like.
      ValueError: a sequence out of range, more than 2**32 - 1 operations, or a
        key or value too long for its varint32 length.
    """
    body = bytearray()
    count = 0
    for op in ops:
        if isinstance(op, Put):
            body += bytes([ValueType.VALUE])
            body += put_string(op.key, "key") + put_string(op.value, "value")
        elif isinstance(op, Delete):
            body += bytes([ValueType.DELETION]) + put_string(op.key, "key")
        else:
            raise TypeError(f"expected Put or Delete, got {type(op).__name__}")
        count += 1
    if count > U32:
        raise ValueError(f"{count} operations do not fit in the fixed32 count")
    if not isinstance(sequence, int) or sequence < 0 or sequence + max(count - 1, 0) > MAX_SEQUENCE:
        raise ValueError(f"sequence {sequence!r} with {count} operations exceeds 2**56 - 1")
    return struct.pack("<QI", sequence, count) + bytes(body)


def encode_version_edit(edit: VersionEdit) -> bytes:
    """The MANIFEST record for edit, fields in LevelDB's order (its EncodeTo).

    Arguments
      edit: a VersionEdit; its None fields are left out.

    Returns
      The record's bytes, for Writer.write(); decode_version_edit() reads it back.

    Raises
      ValueError: a level outside range(NUM_LEVELS), a number that does not fit
        its varint, or an InternalKey that cannot be encoded.
    """
    out = bytearray()

    def tagged(tag: int, value: int | None, name: str) -> None:
        if value is not None:
            out.extend(put_varint(tag, 32, "tag") + put_varint(value, 64, name))

    if edit.comparator is not None:
        name = edit.comparator.encode("utf-8", "surrogateescape")
        out += put_varint(_TAG_COMPARATOR, 32, "tag") + put_string(name, "comparator")
    tagged(2, edit.log_number, "log number")
    tagged(9, edit.prev_log_number, "prev log number")
    tagged(3, edit.next_file_number, "next file number")
    tagged(4, edit.last_sequence, "last sequence")
    for pointer in edit.compact_pointers:
        out += put_varint(_TAG_COMPACT_POINTER, 32, "tag") + _put_level(pointer.level)
        out += put_string(pointer.key.encode(), "key")
    for deleted in edit.deleted_files:
        out += put_varint(_TAG_DELETED_FILE, 32, "tag") + _put_level(deleted.level)
        out += put_varint(deleted.number, 64, "file number")
    for f in edit.new_files:
        out += put_varint(_TAG_NEW_FILE, 32, "tag") + _put_level(f.level)
        out += put_varint(f.number, 64, "file number") + put_varint(f.file_size, 64, "file size")
        out += put_string(f.smallest.encode(), "smallest key")
        out += put_string(f.largest.encode(), "largest key")
    return bytes(out)


def _put_level(level: int) -> bytes:
    if not 0 <= level < NUM_LEVELS:
        raise ValueError(f"level {level} out of range (LevelDB has {NUM_LEVELS})")
    return put_varint(level, 32, "level")
