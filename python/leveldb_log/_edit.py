"""What LevelDB's and RocksDB's VersionEdits share: the internal key, the values of tags 5
(CompactPointer) and 6 (DeletedFile), and the handlers of the tags both engines read alike
(the comparator, the varint64 counters, an internal key's varstring).

leveldb.py and rocksdb.py export these values as their own; each keeps its own table of tag
handlers (docs/leveldb.md, docs/rocksdb.md), these among them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from leveldb_log._cursor import MAX_SEQUENCE, Cursor, Fields, Handler

if TYPE_CHECKING:
    from typing_extensions import Buffer


@dataclass(frozen=True, slots=True)
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

        Raises CorruptionError (a ValueError) at offset 0 if data is shorter than its
        8-byte trailer.
        """
        raw = bytes(data)
        if len(raw) < 8:
            raise Cursor("InternalKey", raw).error(
                f"internal key of {len(raw)} bytes is shorter than its 8-byte trailer", 0
            )
        (trailer,) = struct.unpack_from("<Q", raw, len(raw) - 8)
        return cls(raw[:-8], trailer >> 8, trailer & 0xFF)


@dataclass(frozen=True, slots=True)
class CompactPointer:
    """Where the next compaction of ``level`` starts (tag 5)."""

    level: int
    key: InternalKey


@dataclass(frozen=True, slots=True)
class DeletedFile:
    """Table file ``number`` leaves ``level`` (tag 6)."""

    level: int
    number: int


#: The tags holding one varint64, and the VersionEdit field each sets.
SCALAR_TAGS = {2: "log_number", 3: "next_file_number", 4: "last_sequence", 9: "prev_log_number"}


def internal_key(cur: Cursor, name: str) -> InternalKey:
    """A varstring holding an internal key (at least its 8-byte trailer)."""
    start = cur.pos
    raw = cur.string(name)
    if len(raw) < 8:
        raise cur.error(f"{name} of {len(raw)} bytes is shorter than its 8-byte trailer", start)
    return InternalKey.decode(raw)


def scalar(name: str) -> Handler:
    """The handler of a tag holding one varint64, stored as ``name``."""

    def handle(cur: Cursor, fields: Fields) -> None:
        """Decode the tag's varint64 into ``fields``."""
        fields.set(name, cur.varint(64, name.replace("_", " ")))

    return handle


def comparator(cur: Cursor, fields: Fields) -> None:
    """Tag 1: the comparator's name (undecodable bytes kept as surrogates)."""
    name = cur.string("comparator name")
    fields.set("comparator", name.decode("utf-8", "surrogateescape"))
