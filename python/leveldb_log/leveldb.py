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

Every decoder raises `ValueError` on a malformed payload, naming what is wrong and the
byte offset (within the payload) where it was found.  Integers are little-endian; a
varint holds 7 bits per byte, low bits first, the high bit meaning "more bytes follow".
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterable, Iterator
from enum import IntEnum
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

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

#: LevelDB's ``config::kNumLevels``: levels in a VersionEdit lie in ``range(NUM_LEVELS)``.
NUM_LEVELS = 7
#: Largest sequence number: it shares a fixed64 with the value type byte.
MAX_SEQUENCE = (1 << 56) - 1

WRITE_BATCH_HEADER_SIZE = 12  # fixed64 sequence + fixed32 count
_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1


class ValueType(IntEnum):
    """What an operation or internal key records (LevelDB's ``ValueType``)."""

    DELETION = 0
    VALUE = 1


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


class Put(NamedTuple):
    """Store ``value`` under ``key``."""

    key: bytes
    value: bytes


class Delete(NamedTuple):
    """Remove ``key``."""

    key: bytes


Operation: TypeAlias = Put | Delete


@dataclasses.dataclass(frozen=True)
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


@dataclasses.dataclass(frozen=True)
class InternalKey:
    """A user key with the sequence number and value type LevelDB appends to it."""

    user_key: bytes
    sequence: int
    value_type: int

    def encode(self) -> bytes:
        """The key's bytes: user key, then fixed64 ``sequence << 8 | value_type``.

        Raises ValueError if sequence does not fit in 56 bits or value_type in a byte.
        """
        if not 0 <= self.sequence <= MAX_SEQUENCE:
            raise ValueError(f"InternalKey: sequence {self.sequence} does not fit in 56 bits")
        if not 0 <= self.value_type <= 0xFF:
            raise ValueError(f"InternalKey: value type {self.value_type} does not fit in a byte")
        return bytes(self.user_key) + struct.pack("<Q", self.sequence << 8 | self.value_type)

    @classmethod
    def decode(cls, data: Buffer) -> InternalKey:
        """Split an internal key's bytes into user key, sequence and value type.

        Raises ValueError if data is shorter than its 8-byte trailer.
        """
        raw = bytes(data)
        if len(raw) < 8:
            raise ValueError(f"internal key of {len(raw)} bytes is shorter than its 8-byte trailer")
        (trailer,) = struct.unpack_from("<Q", raw, len(raw) - 8)
        return cls(raw[:-8], trailer >> 8, trailer & 0xFF)


class CompactPointer(NamedTuple):
    """Where the next compaction of ``level`` starts (tag 5)."""

    level: int
    key: InternalKey


class DeletedFile(NamedTuple):
    """Table file ``number`` leaves ``level`` (tag 6)."""

    level: int
    number: int


class NewFile(NamedTuple):
    """Table file ``number`` of ``file_size`` bytes joins ``level`` (tag 7)."""

    level: int
    number: int
    file_size: int
    smallest: InternalKey
    largest: InternalKey


@dataclasses.dataclass(frozen=True)
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


class _Cursor:
    """Reads fields from a payload left to right; every error names the byte offset."""

    def __init__(self, what: str, data: Buffer) -> None:
        self.what = what
        self.data = bytes(data)
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def error(self, message: str, at: int | None = None) -> ValueError:
        where = self.pos if at is None else at
        return ValueError(f"{self.what}: {message} at byte {where}")

    def fixed(self, size: int, name: str) -> int:
        if self.pos + size > len(self.data):
            raise self.error(f"truncated {name}")
        value = int.from_bytes(self.data[self.pos : self.pos + size], "little")
        self.pos += size
        return value

    def byte(self) -> int:
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self, bits: int, name: str = "") -> int:
        """A varint32 or varint64: at most ceil(bits / 7) bytes, value below 2**bits."""
        start = self.pos
        what = f"{name} (varint{bits})" if name else f"varint{bits}"
        max_bytes = (bits + 6) // 7
        result = 0
        for index in range(max_bytes):
            if self.pos >= len(self.data):
                raise self.error(f"truncated {what}", start)
            b = self.data[self.pos]
            self.pos += 1
            result |= (b & 0x7F) << (7 * index)
            if b < 0x80:
                if result >> bits:
                    raise self.error(f"{what} overflows {bits} bits", start)
                return result
        raise self.error(f"{what} longer than {max_bytes} bytes", start)

    def length_prefixed(self, name: str) -> bytes:
        start = self.pos
        length = self.varint(32)
        if self.pos + length > len(self.data):
            left = len(self.data) - self.pos
            raise self.error(f"{name} of {length} bytes runs past the end ({left} left)", start)
        value = self.data[self.pos : self.pos + length]
        self.pos += length
        return value

    def level(self) -> int:
        start = self.pos
        level = self.varint(32)
        if level >= NUM_LEVELS:
            raise self.error(f"level {level} out of range (LevelDB has {NUM_LEVELS})", start)
        return level

    def internal_key(self, name: str) -> InternalKey:
        start = self.pos
        raw = self.length_prefixed(name)
        try:
            return InternalKey.decode(raw)
        except ValueError as e:
            raise self.error(f"{name}: {e}", start) from None


def decode_write_batch(payload: Buffer) -> WriteBatch:
    """Decode a WAL record (a record of a NNNNNN.log) into its sequence and operations.

    Arguments
      payload: the record, any bytes-like object (as a Reader returns it).

    Returns
      A WriteBatch: its first sequence number and its Put and Delete operations,
      in order (WriteBatch.numbered() gives each its own sequence number).

    Raises
      ValueError: the payload is shorter than the 12-byte header, an operation is
        cut short or has an unknown tag, or the count field disagrees with the
        operations found; the message names the byte offset in the payload.
    """
    cur = _Cursor("WriteBatch", payload)
    if len(cur.data) < WRITE_BATCH_HEADER_SIZE:
        raise ValueError(
            f"WriteBatch: {len(cur.data)} bytes is shorter than the "
            f"{WRITE_BATCH_HEADER_SIZE}-byte header (sequence, count)"
        )
    sequence = cur.fixed(8, "sequence")
    count = cur.fixed(4, "count")
    ops: list[Operation] = []
    while not cur.at_end():
        start = cur.pos
        tag = cur.byte()
        if tag == ValueType.VALUE:
            key = cur.length_prefixed("key")
            ops.append(Put(key, cur.length_prefixed("value")))
        elif tag == ValueType.DELETION:
            ops.append(Delete(cur.length_prefixed("key")))
        else:
            raise cur.error(f"unknown operation tag {tag}", start)
    if len(ops) != count:
        raise ValueError(f"WriteBatch: count says {count} operations but {len(ops)} found")
    return WriteBatch(sequence, tuple(ops))


_TAG_COMPARATOR = 1
_TAG_LOG_NUMBER = 2
_TAG_NEXT_FILE_NUMBER = 3
_TAG_LAST_SEQUENCE = 4
_TAG_COMPACT_POINTER = 5
_TAG_DELETED_FILE = 6
_TAG_NEW_FILE = 7
# Tag 8 held large value references in early LevelDB versions; no reader accepts it.
_TAG_PREV_LOG_NUMBER = 9

_SCALAR_TAGS = {
    _TAG_LOG_NUMBER: "log_number",
    _TAG_NEXT_FILE_NUMBER: "next_file_number",
    _TAG_LAST_SEQUENCE: "last_sequence",
    _TAG_PREV_LOG_NUMBER: "prev_log_number",
}


def decode_version_edit(payload: Buffer) -> VersionEdit:
    """Decode a MANIFEST record (of a MANIFEST-NNNNNN) into a VersionEdit.

    Arguments
      payload: the record, any bytes-like object (as a Reader returns it).

    Returns
      A VersionEdit; the fields the record does not set are None (or empty).

    Raises
      ValueError: an unknown tag, a field cut short, a varint that overflows, a
        level outside range(NUM_LEVELS) or an internal key shorter than 8 bytes;
        the message names the byte offset in the payload.
    """
    cur = _Cursor("VersionEdit", payload)
    comparator: str | None = None
    scalars: dict[str, int] = {}
    compact: list[CompactPointer] = []
    deleted: list[DeletedFile] = []
    new: list[NewFile] = []
    while not cur.at_end():
        start = cur.pos
        tag = cur.varint(32)
        if tag == _TAG_COMPARATOR:
            name = cur.length_prefixed("comparator name")
            comparator = name.decode("utf-8", "surrogateescape")
        elif tag in _SCALAR_TAGS:
            scalars[_SCALAR_TAGS[tag]] = cur.varint(64)
        elif tag == _TAG_COMPACT_POINTER:
            compact.append(CompactPointer(cur.level(), cur.internal_key("compact pointer key")))
        elif tag == _TAG_DELETED_FILE:
            deleted.append(DeletedFile(cur.level(), cur.varint(64)))
        elif tag == _TAG_NEW_FILE:
            level, number, size = cur.level(), cur.varint(64), cur.varint(64)
            smallest = cur.internal_key("smallest key")
            new.append(NewFile(level, number, size, smallest, cur.internal_key("largest key")))
        else:
            raise cur.error(f"unknown tag {tag}", start)
    return VersionEdit(
        comparator=comparator,
        log_number=scalars.get("log_number"),
        prev_log_number=scalars.get("prev_log_number"),
        next_file_number=scalars.get("next_file_number"),
        last_sequence=scalars.get("last_sequence"),
        compact_pointers=tuple(compact),
        deleted_files=tuple(deleted),
        new_files=tuple(new),
    )


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------


def _varint(value: int, bits: int, name: str) -> bytes:
    if value < 0 or value >> bits:
        raise ValueError(f"{name} {value} does not fit in an unsigned {bits}-bit varint")
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_prefixed(data: Buffer, name: str) -> bytes:
    raw = bytes(data)
    return _varint(len(raw), 32, f"{name} length") + raw


def encode_write_batch(sequence: int, ops: Iterable[Operation]) -> bytes:
    """A WAL record holding ops numbered from sequence (what LevelDB appends).

    Arguments
      sequence: the first operation's sequence number; the last one's must stay
        below 2**56 (LevelDB's limit, MAX_SEQUENCE).
      ops: an iterable of Put and Delete.

    Returns
      The record's bytes, for Writer.write(); decode_write_batch() reads it back.

    Raises
      TypeError: an operation that is neither a Put nor a Delete.
      ValueError: a sequence out of range, more than 2**32 - 1 operations, or a
        key or value too long for its varint32 length.
    """
    body = bytearray()
    count = 0
    for op in ops:
        if isinstance(op, Put):
            body += bytes([ValueType.VALUE])
            body += _length_prefixed(op.key, "key") + _length_prefixed(op.value, "value")
        elif isinstance(op, Delete):
            body += bytes([ValueType.DELETION]) + _length_prefixed(op.key, "key")
        else:
            raise TypeError(f"expected Put or Delete, got {type(op).__name__}")
        count += 1
    if count > _U32:
        raise ValueError(f"{count} operations do not fit in the fixed32 count")
    if sequence < 0 or sequence + max(count - 1, 0) > MAX_SEQUENCE:
        raise ValueError(f"sequence {sequence} with {count} operations exceeds 2**56 - 1")
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

    def scalar(tag: int, value: int | None, name: str) -> None:
        if value is not None:
            out.extend(_varint(tag, 32, "tag") + _varint(value, 64, name))

    if edit.comparator is not None:
        name = edit.comparator.encode("utf-8", "surrogateescape")
        out += _varint(_TAG_COMPARATOR, 32, "tag") + _length_prefixed(name, "comparator")
    scalar(_TAG_LOG_NUMBER, edit.log_number, "log number")
    scalar(_TAG_PREV_LOG_NUMBER, edit.prev_log_number, "prev log number")
    scalar(_TAG_NEXT_FILE_NUMBER, edit.next_file_number, "next file number")
    scalar(_TAG_LAST_SEQUENCE, edit.last_sequence, "last sequence")
    for level, key in edit.compact_pointers:
        out += _varint(_TAG_COMPACT_POINTER, 32, "tag") + _level(level)
        out += _length_prefixed(key.encode(), "key")
    for level, number in edit.deleted_files:
        out += _varint(_TAG_DELETED_FILE, 32, "tag") + _level(level)
        out += _varint(number, 64, "file number")
    for f in edit.new_files:
        out += _varint(_TAG_NEW_FILE, 32, "tag") + _level(f.level)
        out += _varint(f.number, 64, "file number") + _varint(f.file_size, 64, "file size")
        out += _length_prefixed(f.smallest.encode(), "smallest key")
        out += _length_prefixed(f.largest.encode(), "largest key")
    return bytes(out)


def _level(level: int) -> bytes:
    if not 0 <= level < NUM_LEVELS:
        raise ValueError(f"level {level} out of range (LevelDB has {NUM_LEVELS})")
    return _varint(level, 32, "level")
