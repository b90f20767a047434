"""Decode (and encode) the payloads RocksDB keeps in its logs (docs/rocksdb.md).

A RocksDB database directory holds the same two kinds of log as LevelDB's:

- the write-ahead log ``NNNNNN.log``, one **WriteBatch** per record: a 12-byte header
  (fixed64 sequence, fixed32 count) and then entries, each a one-byte tag and its fields.
  Beside LevelDB's put (0x01) and delete (0x00), RocksDB has merges, single deletes, range
  deletes, blob indexes, wide-column entities, timed puts, log data and the markers of
  two-phase commit; most come in a *column family* variant whose tag is followed by a
  varint32 column family id (written only when that id is not 0). Log data and the
  markers are not counted in the header's count; every other entry is.
- the ``MANIFEST-NNNNNN`` descriptor, one **VersionEdit** per record: varint32 tags and
  their fields, LevelDB's tags plus RocksDB's (column families, atomic groups, table
  files with custom fields, blob files, WAL tracking, the DB id...). An unknown tag with
  bit 0x2000 set is followed by a varint32 length and skipped; any other unknown tag is an
  error.

Every decoder raises `CorruptionError` (also a `ValueError`) on a malformed payload: its
``offset`` is the byte offset *within the payload* where decoding failed, ``size`` the
bytes from there to the payload's end, ``reason`` what is wrong; ``str()`` says all three.
The decoded values are frozen dataclasses. Keys, values and ids are varint32-length-prefixed
byte strings; integers are little-endian.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from leveldb_log._cursor import (
    MAX_SEQUENCE,
    U32,
    U64,
    WRITE_BATCH_HEADER_SIZE,
    Cursor,
    Fields,
    Handler,
    as_bytes,
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
from leveldb_log._errors import CorruptionError
from leveldb_log._public import module_dir

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = [
    "MAX_SEQUENCE",
    "BeginPersistedPrepare",
    "BeginPrepare",
    "BeginUnprepare",
    "BlobFileAddition",
    "BlobFileGarbage",
    "BlobIndex",
    "Commit",
    "CommitWithTimestamp",
    "CompactPointer",
    "Delete",
    "DeleteRange",
    "DeletedFile",
    "EndPrepare",
    "InternalKey",
    "LogData",
    "Merge",
    "NewFile",
    "Noop",
    "Operation",
    "Put",
    "Rollback",
    "SingleDelete",
    "TimedPut",
    "VersionEdit",
    "WalAddition",
    "WalDeletion",
    "WideColumnEntity",
    "WriteBatch",
    "decode_version_edit",
    "decode_write_batch",
    "encode_write_batch",
]
__dir__ = module_dir(globals())


# ---------------------------------------------------------------------------
# WriteBatch operations
# ---------------------------------------------------------------------------
# Frozen dataclasses, not named tuples (as for every decoded value): a Put and a Merge with
# the same fields must not compare equal.


@dataclass(frozen=True, slots=True)
class Put:
    """Store ``value`` under ``key`` (tag 0x01; 0x05 in column family ``cf``)."""

    key: bytes
    value: bytes
    cf: int = 0


@dataclass(frozen=True, slots=True)
class Delete:
    """Remove ``key`` (tag 0x00; 0x04 in column family ``cf``)."""

    key: bytes
    cf: int = 0


@dataclass(frozen=True, slots=True)
class SingleDelete:
    """Remove ``key``, written once since its last put (tag 0x07; 0x08 with ``cf``)."""

    key: bytes
    cf: int = 0


@dataclass(frozen=True, slots=True)
class Merge:
    """Merge ``value`` into ``key`` with the merge operator (tag 0x02; 0x06 with ``cf``)."""

    key: bytes
    value: bytes
    cf: int = 0


@dataclass(frozen=True, slots=True)
class DeleteRange:
    """Remove the keys in ``[start, end)`` (tag 0x0F; 0x0E with ``cf``)."""

    start: bytes
    end: bytes
    cf: int = 0


@dataclass(frozen=True, slots=True)
class BlobIndex:
    """``key``'s value lives in a blob file; ``blob_index`` says where, kept raw
    (tag 0x11; 0x10 with ``cf``)."""

    key: bytes
    blob_index: bytes
    cf: int = 0


@dataclass(frozen=True, slots=True)
class WideColumnEntity:
    """Store a wide-column ``entity`` under ``key``, its serialized form kept raw
    (tag 0x16; 0x17 with ``cf``)."""

    key: bytes
    entity: bytes
    cf: int = 0


@dataclass(frozen=True, slots=True)
class TimedPut:
    """Store ``value`` under ``key``, written at unix time ``write_time`` (tag 0x18; 0x19
    with ``cf``). On the wire the value is followed by the fixed64 write time."""

    key: bytes
    value: bytes
    write_time: int
    cf: int = 0


@dataclass(frozen=True, slots=True)
class LogData:
    """Bytes written to the log only, never applied (tag 0x03; not counted)."""

    data: bytes


@dataclass(frozen=True, slots=True)
class BeginPrepare:
    """Two-phase commit: the prepared section starts (tag 0x09; not counted)."""


@dataclass(frozen=True, slots=True)
class BeginPersistedPrepare:
    """Two-phase commit: a persisted prepared section starts (tag 0x12; not counted)."""


@dataclass(frozen=True, slots=True)
class BeginUnprepare:
    """Two-phase commit: an unprepared section starts (tag 0x13; not counted)."""


@dataclass(frozen=True, slots=True)
class EndPrepare:
    """Two-phase commit: the prepared section of transaction ``xid`` ends (tag 0x0A)."""

    xid: bytes


@dataclass(frozen=True, slots=True)
class Commit:
    """Two-phase commit: transaction ``xid`` commits (tag 0x0B; not counted)."""

    xid: bytes


@dataclass(frozen=True, slots=True)
class CommitWithTimestamp:
    """Two-phase commit: transaction ``xid`` commits at ``commit_ts`` (tag 0x15)."""

    commit_ts: bytes
    xid: bytes


@dataclass(frozen=True, slots=True)
class Rollback:
    """Two-phase commit: transaction ``xid`` rolls back (tag 0x0C; not counted)."""

    xid: bytes


@dataclass(frozen=True, slots=True)
class Noop:
    """A placeholder entry (tag 0x0D; not counted)."""


Operation: TypeAlias = (
    Put
    | Delete
    | SingleDelete
    | Merge
    | DeleteRange
    | BlobIndex
    | WideColumnEntity
    | TimedPut
    | LogData
    | BeginPrepare
    | BeginPersistedPrepare
    | BeginUnprepare
    | EndPrepare
    | Commit
    | CommitWithTimestamp
    | Rollback
    | Noop
)

#: Operations counted in the header's count: those with a column family.
COUNTED = (Put, Delete, SingleDelete, Merge, DeleteRange, BlobIndex, WideColumnEntity, TimedPut)

# tag -> (operation, whether the tag is the column family variant)
_TAGS: dict[int, tuple[type[Operation], bool]] = {
    0x00: (Delete, False),
    0x01: (Put, False),
    0x02: (Merge, False),
    0x03: (LogData, False),
    0x04: (Delete, True),
    0x05: (Put, True),
    0x06: (Merge, True),
    0x07: (SingleDelete, False),
    0x08: (SingleDelete, True),
    0x09: (BeginPrepare, False),
    0x0A: (EndPrepare, False),
    0x0B: (Commit, False),
    0x0C: (Rollback, False),
    0x0D: (Noop, False),
    0x0E: (DeleteRange, True),
    0x0F: (DeleteRange, False),
    0x10: (BlobIndex, True),
    0x11: (BlobIndex, False),
    0x12: (BeginPersistedPrepare, False),
    0x13: (BeginUnprepare, False),
    0x15: (CommitWithTimestamp, False),
    0x16: (WideColumnEntity, False),
    0x17: (WideColumnEntity, True),
    0x18: (TimedPut, False),
    0x19: (TimedPut, True),
}
_TAG_OF = {entry: tag for tag, entry in _TAGS.items()}
_OPERATIONS = frozenset(cls for cls, _ in _TAGS.values())


def _wire_strings(cls: type[Operation]) -> tuple[str, ...]:
    """The byte-string fields of an operation, in wire order (TimedPut: key, value)."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("cf", "write_time"))


# operation -> its byte-string fields, in wire order
_STRINGS = {cls: _wire_strings(cls) for cls in _OPERATIONS}


@dataclass(frozen=True)
class WriteBatch:
    """One WAL record: operations applied atomically, numbered from ``sequence``."""

    sequence: int
    ops: tuple[Operation, ...]

    @property
    def count(self) -> int:
        """The header's count: the operations that take a sequence number (`COUNTED`)."""
        return sum(isinstance(op, COUNTED) for op in self.ops)

    def numbered(self) -> Iterator[tuple[int, Operation]]:
        """Each counted operation with its own sequence number, ``sequence`` upwards (log
        data and two-phase-commit markers take none and are left out)."""
        sequence = self.sequence
        for op in self.ops:
            if isinstance(op, COUNTED):
                yield sequence, op
                sequence += 1


# ---------------------------------------------------------------------------
# VersionEdit values
# ---------------------------------------------------------------------------


# CompactPointer (tag 5, RocksDB's compact cursor) and DeletedFile (tag 6) are LevelDB's.


@dataclass(frozen=True)
class NewFile:
    """Table file ``number`` of ``file_size`` bytes joins ``level``.

    ``tag`` is the form it was written in: 7 (LevelDB's), 100 (+ sequence numbers), 102
    (+ path id) or 103 (+ custom fields, what RocksDB writes). The custom fields of form
    103 that the record holds are set; the others keep their defaults. ``ignored`` holds
    the custom fields this decoder does not know and RocksDB may ignore, as
    ``(tag, raw value)`` pairs.
    """

    level: int
    number: int
    file_size: int
    smallest: InternalKey
    largest: InternalKey
    smallest_seqno: int | None = None
    largest_seqno: int | None = None
    path_id: int = 0
    tag: int = 103
    need_compaction: bool = False
    oldest_blob_file_number: int | None = None
    oldest_ancester_time: int | None = None
    file_creation_time: int | None = None
    file_checksum: bytes | None = None
    file_checksum_func_name: bytes | None = None
    temperature: int | None = None
    min_timestamp: bytes | None = None
    max_timestamp: bytes | None = None
    unique_id: bytes | None = None
    epoch_number: int | None = None
    compensated_range_deletion_size: int | None = None
    tail_size: int | None = None
    user_defined_timestamps_persisted: bool | None = None
    file_open_metadata: bytes | None = None
    ignored: tuple[tuple[int, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class BlobFileAddition:
    """A blob file joins the database (tag 400). ``custom_fields`` holds the ignorable
    custom fields as ``(tag, raw value)`` pairs."""

    number: int
    total_blob_count: int
    total_blob_bytes: int
    checksum_method: bytes
    checksum_value: bytes
    custom_fields: tuple[tuple[int, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class BlobFileGarbage:
    """Garbage found in a blob file (tag 401)."""

    number: int
    garbage_blob_count: int
    garbage_blob_bytes: int
    custom_fields: tuple[tuple[int, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class WalAddition:
    """WAL ``number`` is tracked; ``synced_size`` when the record says (tags 8196, 8199)."""

    number: int
    synced_size: int | None = None


@dataclass(frozen=True, slots=True)
class WalDeletion:
    """Every WAL numbered below ``number`` is obsolete (tags 8197, 8200)."""

    number: int


@dataclass(frozen=True)
class VersionEdit:
    """One MANIFEST record of RocksDB.

    Scalar fields are ``None`` when the edit does not set them; if it sets one twice, the
    last value wins. ``column_family`` is the column family the edit applies to (0, the
    default, when not written). ``ignored`` holds the tags with bit 0x2000 that this
    decoder does not know, as ``(tag, raw value)`` pairs, skipped as RocksDB skips them.
    """

    comparator: str | None = None
    db_id: str | None = None
    log_number: int | None = None
    prev_log_number: int | None = None
    next_file_number: int | None = None
    last_sequence: int | None = None
    min_log_number_to_keep: int | None = None
    max_column_family: int | None = None
    column_family: int = 0
    column_family_add: str | None = None
    column_family_drop: bool = False
    remaining_entries: int | None = None
    full_history_ts_low: bytes | None = None
    persist_user_defined_timestamps: bool | None = None
    last_compacted_manifest_file_size: int | None = None
    compact_pointers: tuple[CompactPointer, ...] = ()
    deleted_files: tuple[DeletedFile, ...] = ()
    new_files: tuple[NewFile, ...] = ()
    blob_file_additions: tuple[BlobFileAddition, ...] = ()
    blob_file_garbages: tuple[BlobFileGarbage, ...] = ()
    wal_additions: tuple[WalAddition, ...] = ()
    wal_deletions: tuple[WalDeletion, ...] = ()
    subcompaction_progress: tuple[bytes, ...] = ()
    ignored: tuple[tuple[int, bytes], ...] = ()

    @property
    def in_atomic_group(self) -> bool:
        """True when the edit belongs to an atomic group (tag 300)."""
        return self.remaining_entries is not None


# ---------------------------------------------------------------------------
# WriteBatch
# ---------------------------------------------------------------------------


def decode_write_batch(payload: Buffer) -> WriteBatch:
    """Decode a RocksDB WAL record (a record of a NNNNNN.log) into a WriteBatch.

    Arguments
      payload: the record, any bytes-like object (as a Reader returns it).

    Returns
      A WriteBatch: its first sequence number and its operations in order, column
      family variants as the operation with ``cf`` set.

    Raises
      CorruptionError (a ValueError): the payload is shorter than the 12-byte header, a
        field is cut short, a tag is unknown (0x14 and anything above 0x19), a timed
        put's value has no 8-byte write time, or the header's count differs from the
        counted operations ("WriteBatch has wrong count"); its offset is the byte offset
        in the payload.
    """
    cur = Cursor("WriteBatch", payload)
    sequence, count = cur.batch_header()
    ops: list[Operation] = []
    counted = 0
    while not cur.at_end():
        op = _decode_operation(cur)
        counted += isinstance(op, COUNTED)
        ops.append(op)
    if counted != count:
        raise CorruptionError(
            WRITE_BATCH_HEADER_SIZE - 4,
            4,
            "WriteBatch has wrong count",
            message=f"WriteBatch has wrong count: the header says {count}, "
            f"{counted} counted operations found (count at byte 8)",
        )
    return WriteBatch(sequence, tuple(ops))


def _decode_operation(cur: Cursor) -> Operation:
    """The operation at the cursor: its tag, column family id if any, then its fields."""
    start = cur.pos
    tag = cur.byte()
    if tag not in _TAGS:
        raise cur.error(f"unknown WriteBatch tag {tag}", start)
    cls, with_cf = _TAGS[tag]
    cf = cur.varint(32, "column family") if with_cf else 0
    strings = [cur.string(name) for name in _STRINGS[cls]]
    if cls is TimedPut:
        packed = strings[1]
        if len(packed) < 8:
            raise cur.error(f"timed put value of {len(packed)} bytes has no write time", start)
        (write_time,) = struct.unpack_from("<Q", packed, len(packed) - 8)
        return TimedPut(strings[0], packed[:-8], write_time, cf)
    make: Callable[..., Operation] = cls
    return make(*strings, cf) if cls in COUNTED else make(*strings)


def _encode_operation(op: Operation) -> bytes:
    """One operation's bytes: tag (the column family variant when cf is not 0), fields."""
    cls = type(op)
    if cls not in _OPERATIONS:
        raise TypeError(f"expected a leveldb_log.rocksdb operation, got {cls.__name__}")
    cf = getattr(op, "cf", 0)
    out = bytearray([_TAG_OF[(cls, cf != 0)]])
    if cf != 0:
        out += put_varint(cf, 32, "column family")
    for name in _STRINGS[cls]:
        value = as_bytes(getattr(op, name), name)
        if isinstance(op, TimedPut) and name == "value":
            if not isinstance(op.write_time, int) or not 0 <= op.write_time <= U64:
                raise ValueError(f"write_time {op.write_time!r} does not fit in a fixed64")
            value += struct.pack("<Q", op.write_time)
        out += put_string(value, name)
    return bytes(out)


def encode_write_batch(sequence: int, ops: Iterable[Operation]) -> bytes:
    """The WAL record RocksDB would write for ops, numbered from sequence.

    Arguments
      sequence: the first counted operation's sequence number; the last one's must stay
        below 2**56 (MAX_SEQUENCE).
      ops: an iterable of the operations of this module; an operation with ``cf`` not 0
        is written as its column family variant, as RocksDB does.

    Returns
      The record's bytes, for Writer.write(); decode_write_batch() reads them back.

    Raises
      TypeError: an object that is not an operation of this module, or a key, value or
        id that is not bytes-like.
      ValueError: a sequence out of range, more than 2**32 - 1 counted operations, a
        column family id or write time out of range, or a field too long for its
        varint32 length.
    """
    body = bytearray()
    count = 0
    for op in ops:
        body += _encode_operation(op)
        count += isinstance(op, COUNTED)
    if count > U32:
        raise ValueError(f"{count} operations do not fit in the fixed32 count")
    if not isinstance(sequence, int) or sequence < 0 or sequence + max(count - 1, 0) > MAX_SEQUENCE:
        raise ValueError(f"sequence {sequence!r} with {count} operations exceeds 2**56 - 1")
    return struct.pack("<QI", sequence, count) + bytes(body)


# ---------------------------------------------------------------------------
# VersionEdit
# ---------------------------------------------------------------------------

_SAFE_IGNORE = 0x2000  # an unknown VersionEdit tag with this bit is skipped
_CUSTOM_NOT_IGNORABLE = 0x40  # an unknown custom field with this bit is an error


# NewFile4 custom fields: tag -> (field, decoding)
_CUSTOM_FIELDS: dict[int, tuple[str, str]] = {
    2: ("need_compaction", "flag"),
    3: ("min_log_number_to_keep", "fixed64"),
    4: ("oldest_blob_file_number", "varint"),
    5: ("oldest_ancester_time", "varint"),
    6: ("file_creation_time", "varint"),
    7: ("file_checksum", "raw"),
    8: ("file_checksum_func_name", "raw"),
    9: ("temperature", "byte"),
    10: ("min_timestamp", "raw"),
    11: ("max_timestamp", "raw"),
    12: ("unique_id", "unique_id"),
    13: ("epoch_number", "varint"),
    14: ("compensated_range_deletion_size", "varint"),
    15: ("tail_size", "varint"),
    16: ("user_defined_timestamps_persisted", "bool"),
    17: ("file_open_metadata", "raw"),
    65: ("path_id", "path_id"),
}
_NEW_FILE_TERMINATE = 1
_BLOB_END_MARKER = 0


def decode_version_edit(payload: Buffer) -> VersionEdit:
    """Decode a RocksDB MANIFEST record (of a MANIFEST-NNNNNN) into a VersionEdit.

    Arguments
      payload: the record, any bytes-like object (as a Reader returns it).

    Returns
      A VersionEdit; the fields the record does not set are None (or empty).

    Raises
      CorruptionError (a ValueError): an unknown tag without bit 0x2000 ("unknown tag"),
        an unknown NewFile4 custom field with bit 0x40 ("new-file4 custom field not
        supported"), a field cut short, a varint that overflows, an internal key
        shorter than 8 bytes, or a value out of its range; its offset is the byte
        offset in the payload.
    """
    fields = decode_tags(Cursor("VersionEdit", payload), _EDIT_TAGS, _SAFE_IGNORE)
    return fields.build(VersionEdit)


def _text(raw: bytes) -> str:
    """A name from the payload as text (undecodable bytes kept as surrogates)."""
    return raw.decode("utf-8", "surrogateescape")


def _db_id(cur: Cursor, fields: Fields) -> None:
    """Tag 8193: the database's id."""
    fields.set("db_id", _text(cur.string("db id")))


def _compact_pointer(cur: Cursor, fields: Fields) -> None:
    """Tag 5 (RocksDB's compact cursor): a level and the internal key its next compaction
    starts at."""
    level = cur.varint(32, "level")
    fields.add("compact_pointers", CompactPointer(level, internal_key(cur, "compact pointer key")))


def _deleted_file(cur: Cursor, fields: Fields) -> None:
    """Tag 6: a level and the number of a table file leaving it."""
    level = cur.varint(32, "level")
    fields.add("deleted_files", DeletedFile(level, cur.varint(64, "file number")))


def _new_file(tag: int) -> Handler:
    """The handler of the table file forms 7, 100, 102 and 103."""

    def handle(cur: Cursor, fields: Fields) -> None:
        """Decode the tag's fields into ``fields``."""
        level, number = cur.varint(32, "level"), cur.varint(64, "file number")
        path_id = cur.varint(32, "path id") if tag == 102 else 0
        size = cur.varint(64, "file size")
        smallest, largest = internal_key(cur, "smallest key"), internal_key(cur, "largest key")
        file: dict[str, object] = {"path_id": path_id, "tag": tag}
        if tag != 7:
            file["smallest_seqno"] = cur.varint(64, "smallest seqno")
            file["largest_seqno"] = cur.varint(64, "largest seqno")
        if tag == 103:
            _custom_fields(cur, fields, file)
        new = NewFile(level, number, size, smallest, largest, **file)  # type: ignore[arg-type]
        fields.add("new_files", new)

    return handle


def _custom_fields(cur: Cursor, fields: Fields, file: dict[str, object]) -> None:
    """NewFile4's custom fields, up to kTerminate (1), into ``file`` (one of them, the
    minimum log number to keep, belongs to the edit's ``fields``)."""
    ignored: list[tuple[int, bytes]] = []
    while True:
        start = cur.pos
        tag = cur.varint(32, "new-file4 custom field tag")
        if tag == _NEW_FILE_TERMINATE:
            break
        value_at = cur.pos
        value = cur.string(f"new-file4 custom field {tag}")
        if tag not in _CUSTOM_FIELDS:
            if tag & _CUSTOM_NOT_IGNORABLE:
                raise cur.error(f"new-file4 custom field not supported (tag {tag})", start)
            ignored.append((tag, value))
            continue
        name, how = _CUSTOM_FIELDS[tag]
        decoded = _custom_value(cur, value, value_at, name, how)
        if name == "min_log_number_to_keep":
            fields.set(name, decoded)
        else:
            file[name] = decoded
    file["ignored"] = tuple(ignored)


def _custom_value(cur: Cursor, value: bytes, at: int, name: str, how: str) -> object:
    """A NewFile4 custom field's value, decoded as ``how`` says."""
    inner = Cursor(cur.what, value)
    if how == "raw":
        return value
    if how == "varint":
        try:
            return inner.varint(64, name)
        except CorruptionError:
            raise cur.error(f"invalid {name.replace('_', ' ')}", at) from None
    if how == "fixed64":
        if len(value) < 8:
            raise cur.error("deleted log number malformatted", at)
        return int.from_bytes(value[:8], "little")
    if how == "unique_id":
        if len(value) not in (16, 24):
            raise cur.error(f"invalid unique id of {len(value)} bytes", at)
        return value
    if len(value) != 1:
        raise cur.error(f"{name} field wrong size ({len(value)} bytes)", at)
    if how == "path_id" and value[0] > 3:
        raise cur.error(f"path_id wrong value {value[0]}", at)
    if how == "flag":
        return value[0] == 1
    if how == "bool":
        return value[0] != 0
    return value[0]


def _u32(field: str) -> Handler:
    """The handler of a tag holding one varint32, stored as ``field``."""

    def handle(cur: Cursor, fields: Fields) -> None:
        """Decode the tag's fields into ``fields``."""
        fields.set(field, cur.varint(32, field.replace("_", " ")))

    return handle


def _cf_add(cur: Cursor, fields: Fields) -> None:
    """Tag 201: the name of a column family created."""
    fields.set("column_family_add", _text(cur.string("column family name")))


def _cf_drop(cur: Cursor, fields: Fields) -> None:
    """Tag 202: the edit's column family is dropped (no payload)."""
    fields.set("column_family_drop", True)


def _blob_custom_fields(cur: Cursor, what: str) -> tuple[tuple[int, bytes], ...]:
    """A blob file record's custom fields, up to the end marker (0)."""
    fields: list[tuple[int, bytes]] = []
    while True:
        start = cur.pos
        tag = cur.varint(32, f"{what} custom field tag")
        if tag == _BLOB_END_MARKER:
            return tuple(fields)
        if tag & _CUSTOM_NOT_IGNORABLE:
            raise cur.error(f"{what}: forward incompatible custom field {tag}", start)
        fields.append((tag, cur.string(f"{what} custom field {tag}")))


def _blob_addition(cur: Cursor, fields: Fields) -> None:
    """Tags 400 and 8194: a blob file added."""
    number = cur.varint(64, "blob file number")
    count, size = cur.varint(64, "total blob count"), cur.varint(64, "total blob bytes")
    method, value = cur.string("checksum method"), cur.string("checksum value")
    custom = _blob_custom_fields(cur, "blob file addition")
    addition = BlobFileAddition(number, count, size, method, value, custom)
    fields.add("blob_file_additions", addition)


def _blob_garbage(cur: Cursor, fields: Fields) -> None:
    """Tags 401 and 8195: garbage in a blob file."""
    number = cur.varint(64, "blob file number")
    count, size = cur.varint(64, "garbage blob count"), cur.varint(64, "garbage blob bytes")
    custom = _blob_custom_fields(cur, "blob file garbage")
    fields.add("blob_file_garbages", BlobFileGarbage(number, count, size, custom))


def _wal_addition_fields(cur: Cursor) -> WalAddition:
    """A WalAddition: varint64 log number, then tagged fields up to kTerminate (1)."""
    number = cur.varint(64, "WAL number")
    synced_size = None
    while True:
        start = cur.pos
        tag = cur.varint(32, "WAL addition tag")
        if tag == 1:
            return WalAddition(number, synced_size)
        if tag != 2:
            raise cur.error(f"WalAddition: unknown tag {tag}", start)
        synced_size = cur.varint(64, "WAL synced size")


def _wal_addition(cur: Cursor, fields: Fields) -> None:
    """Tag 8196: a WalAddition inline."""
    fields.add("wal_additions", _wal_addition_fields(cur))


def _wal_addition2(cur: Cursor, fields: Fields) -> None:
    """Tag 8199: a WalAddition inside a varstring."""
    inner = cur.inner("WAL addition")
    fields.add("wal_additions", _wal_addition_fields(inner))


def _wal_deletion(cur: Cursor, fields: Fields) -> None:
    """Tag 8197: a WalDeletion inline."""
    fields.add("wal_deletions", WalDeletion(cur.varint(64, "WAL number")))


def _wal_deletion2(cur: Cursor, fields: Fields) -> None:
    """Tag 8200: a WalDeletion inside a varstring."""
    inner = cur.inner("WAL deletion")
    fields.add("wal_deletions", WalDeletion(inner.varint(64, "WAL number")))


def _ts_low(cur: Cursor, fields: Fields) -> None:
    """Tag 8198: the full history timestamp low, never empty."""
    start = cur.pos
    value = cur.string("full history ts low")
    if not value:
        raise cur.error("empty full history ts low", start)
    fields.set("full_history_ts_low", value)


def _persist_udt(cur: Cursor, fields: Fields) -> None:
    """Tag 8201: whether user-defined timestamps are persisted (one byte)."""
    start = cur.pos
    value = cur.string("persist user-defined timestamps")
    if len(value) != 1:
        raise cur.error(f"persist user-defined timestamps of {len(value)} bytes, not 1", start)
    fields.set("persist_user_defined_timestamps", value[0] != 0)


def _subcompaction(cur: Cursor, fields: Fields) -> None:
    """Tag 8202: subcompaction progress, kept raw."""
    fields.add("subcompaction_progress", cur.string("subcompaction progress"))


def _manifest_size(cur: Cursor, fields: Fields) -> None:
    """Tag 8203: a varint64 inside a varstring."""
    inner = cur.inner("last compacted manifest file size")
    fields.set("last_compacted_manifest_file_size", inner.varint(64, "manifest file size"))


_EDIT_TAGS: dict[int, Handler] = {
    1: comparator,
    **{tag: scalar(name) for tag, name in {**SCALAR_TAGS, 10: "min_log_number_to_keep"}.items()},
    5: _compact_pointer,
    6: _deleted_file,
    7: _new_file(7),
    100: _new_file(100),
    102: _new_file(102),
    103: _new_file(103),
    200: _u32("column_family"),
    201: _cf_add,
    202: _cf_drop,
    203: _u32("max_column_family"),
    300: _u32("remaining_entries"),
    400: _blob_addition,
    401: _blob_garbage,
    8193: _db_id,
    8194: _blob_addition,
    8195: _blob_garbage,
    8196: _wal_addition,
    8197: _wal_deletion,
    8198: _ts_low,
    8199: _wal_addition2,
    8200: _wal_deletion2,
    8201: _persist_udt,
    8202: _subcompaction,
    8203: _manifest_size,
}
