"""Pure-Python reference model of RocksDB's and Pebble's dialects of the log format.

The executable form of ``docs/rocksdb.md``: the longer headers (recyclable, with the log
number; Pebble's walSync, with the synced offset), metadata records, compressed records,
RocksDB's reason texts and recovery modes, Pebble's trailer.  Like ``tests/support/model.py``
(LevelDB's format, whose records, reports and reading this module builds on), it is meant
for differential tests against the C implementation: plain Python, standard library only,
no shared code with the package under test.

Public names::

    DIALECTS, header_size_of(dialect, rtype)
    encode_chunk(rtype, payload, log_number=None, synced_offset=None) -> bytes
    encode_rocksdb(records, log_number=0, recycle=False, compress=None, start=0)
    encode_pebble(records, log_number, start=0, synced_offsets=None, trailer=False)
    pebble_trailer(log_number) -> bytes
    set_compression_payload(value), udt_payload(pairs), predecessor_payload(...)
    read_dialect_events(data, dialect, ...) -> [Record | Corruption | TornTail | End | Meta]
    read_dialect(data, dialect=..., ...) -> DialectResult

Where docs/rocksdb.md leaves our API open, the choice is written as a comment marked
"CHOICE" (the C core makes the same ones).
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar

from support.model import (
    BAD_RECORD_LENGTH,
    BLOCK_SIZE,
    CHECKSUM_MISMATCH,
    ERROR_IN_MIDDLE,
    FIRST,
    FRAGMENT_OPEN_AT_EOF,
    FULL,
    HEADER_SIZE,
    LAST,
    MIDDLE,
    MISSING_START,
    PARTIAL_RECORD,
    RECOVERY_MODES,
    TRUNCATED_HEADER,
    TRUNCATED_PAYLOAD,
    ZERO,
    Corruption,
    ReadResult,
    Record,
    TornTail,
    crc32c,
    mask_crc,
    read_events,
    unknown_type_reason,
    unmask_crc,
)

_MASK32 = 0xFFFFFFFF  # a log number's low 32 bits, as a header holds them

DIALECTS = ("leveldb", "rocksdb", "pebble")

LEGACY_HEADER_SIZE = 7
RECYCLABLE_HEADER_SIZE = 11
WALSYNC_HEADER_SIZE = 19

RECYCLABLE_FULL = 5
RECYCLABLE_FIRST = 6
RECYCLABLE_MIDDLE = 7
RECYCLABLE_LAST = 8
SET_COMPRESSION = 9  # RocksDB: 7-byte header always
UDT_SIZES = 10
RECYCLABLE_UDT_SIZES = 11
PREDECESSOR = 130
RECYCLABLE_PREDECESSOR = 131
SAFE_IGNORE_MASK = 0x80
WALSYNC_FULL = 9  # Pebble only: 9..12 walSync FULL/FIRST/MIDDLE/LAST, 19-byte header
ZSTD = 7  # RocksDB's CompressionType kZSTD

_ROCKSDB_RECYCLABLE = frozenset({5, 6, 7, 8, RECYCLABLE_UDT_SIZES, RECYCLABLE_PREDECESSOR})

# RocksDB's reason texts (db/log_reader.cc as described in docs/rocksdb.md)
R_PARTIAL_1 = "partial record without end(1)"
R_PARTIAL_2 = "partial record without end(2)"
R_MISSING_1 = "missing start of fragmented record(1)"
R_MISSING_2 = "missing start of fragmented record(2)"
R_TRUNCATED_HEADER = "truncated header"
R_TRUNCATED_BODY = "truncated record body"
R_EOF_IN_RECORD = "error reading trailing data due to encountering EOF"
R_OLD_IN_RECORD = "error reading trailing data due to encountering old record"
R_MULTIPLE_COMPRESSION = "read multiple SetCompressionType records"
R_COMPRESSION_NOT_FIRST = "SetCompressionType not the first record"
R_BAD_COMPRESSION = "could not decode SetCompressionType record"
R_BAD_PREDECESSOR = "could not decode PredecessorWALInfoType record"
R_UDT_INTERSPERSED = "user-defined timestamp size record interspersed partial record"
R_BAD_UDT = "could not decode user-defined timestamp size record"
R_UDT_ZERO = "User-defined timestamp size record contains zero timestamp size."
R_UDT_UPDATE = "User-defined timestamp size record contains update to recorded column family."
# CHOICE: our own texts where RocksDB reports nothing (a recyclable record after legacy
# ones, where RocksDB loops; a frame that does not decompress, which RocksDB drops silently)
R_RECYCLABLE_NOT_FIRST = "recyclable record after legacy records"
R_DECOMPRESS = "could not decompress record"

#: Reasons that are torn tails in the RocksDB dialect (absolute: TruncatedRecordError).
#: An old record inside a fragmented record is not one: absolute raises CorruptionError.
ROCKSDB_TORN_REASONS = frozenset({R_TRUNCATED_HEADER, R_TRUNCATED_BODY, R_EOF_IN_RECORD})


def header_size_of(dialect: str, rtype: int) -> int:
    """The header size of a physical record of this type in this dialect."""
    if dialect == "rocksdb":
        return RECYCLABLE_HEADER_SIZE if rtype in _ROCKSDB_RECYCLABLE else HEADER_SIZE
    if dialect == "pebble":
        if 5 <= rtype <= 8:
            return RECYCLABLE_HEADER_SIZE
        if 9 <= rtype <= 12:
            return WALSYNC_HEADER_SIZE
    return HEADER_SIZE


def encode_chunk(
    rtype: int,
    payload: bytes,
    log_number: int | None = None,
    synced_offset: int | None = None,
) -> bytes:
    """One physical record with a 7-byte header, an 11-byte one (``log_number`` given) or
    Pebble's 19-byte walSync one (``synced_offset`` given too).  The CRC covers the header
    from its type byte on, then the payload."""
    payload = bytes(payload)
    if len(payload) > 0xFFFF:
        raise ValueError("payload too long for one physical record")
    tail = bytes([rtype])
    if log_number is not None:
        tail += (log_number & _MASK32).to_bytes(4, "little")
        if synced_offset is not None:
            tail += synced_offset.to_bytes(8, "little")
    elif synced_offset is not None:
        raise ValueError("a synced offset needs a log number")
    checksum = mask_crc(crc32c(tail + payload))
    return checksum.to_bytes(4, "little") + len(payload).to_bytes(2, "little") + tail + payload


def set_compression_payload(value: int = ZSTD) -> bytes:
    """The payload of a type-9 record: fixed32 CompressionType."""
    return value.to_bytes(4, "little")


def udt_payload(pairs: Iterable[tuple[int, int]]) -> bytes:
    """The payload of a type-10/11 record: {fixed32 column family, fixed16 size} each."""
    return b"".join(struct.pack("<IH", cf, size) for cf, size in pairs)


def predecessor_payload(log_number: int, size: int, last_sequence: int) -> bytes:
    """The payload of a type-130/131 record: three fixed64."""
    return struct.pack("<QQQ", log_number, size, last_sequence)


def _fragments(data: bytes, pos: int, hs: int) -> list[tuple[int, bytes]]:
    """Cuts `data` written at file offset `pos` into fragments, LevelDB's way with header
    size `hs`: a list of (zero padding before it, fragment bytes).  The padding fills a
    block's tail shorter than a header."""
    out = []
    i = 0
    first = True
    while first or i < len(data):
        space = BLOCK_SIZE - pos % BLOCK_SIZE
        pad = space if space < hs else 0
        pos += pad
        k = min(len(data) - i, BLOCK_SIZE - pos % BLOCK_SIZE - hs)
        out.append((pad, data[i : i + k]))
        pos += hs + k
        i += k
        first = False
    return out


def encode_rocksdb(
    records: Iterable[bytes],
    *,
    log_number: int = 0,
    recycle: bool = False,
    compress: Callable[[bytes], bytes] | None = None,
    start: int = 0,
) -> tuple[bytes, list[int]]:
    """What RocksDB's log::Writer appends to a log of ``start`` bytes: legacy types 1-4, or
    recyclable 5-8 with ``log_number``; with ``compress`` (record -> one compressed frame)
    a type-9 record first (at offset 0 only), then each record's frame cut into chunks of
    at most 32768 - header size bytes, each chunk into fragments (so a fragment may end
    before its block does).  Returns the bytes and each record's first header offset."""
    hs = RECYCLABLE_HEADER_SIZE if recycle else HEADER_SIZE
    base = 4 if recycle else 0
    ln = log_number if recycle else None
    out = bytearray()
    pos = start
    if compress is not None and start == 0:
        out += encode_chunk(SET_COMPRESSION, set_compression_payload(ZSTD))
        pos += len(out)
    offsets = []
    for record in records:
        data = bytes(record)
        if compress is not None and data:
            frame = bytes(compress(data))
            size = BLOCK_SIZE - hs
            chunks = [frame[i : i + size] for i in range(0, len(frame), size)] or [b""]
        else:
            chunks = [data]
        pieces: list[tuple[int, bytes]] = []
        for chunk in chunks:
            for pad, frag in _fragments(chunk, pos, hs):
                pieces.append((pad, frag))
                pos += pad + hs + len(frag)
        for i, (pad, frag) in enumerate(pieces):
            first, last = i == 0, i == len(pieces) - 1
            rtype = FULL if first and last else FIRST if first else LAST if last else MIDDLE
            out += bytes(pad)
            if first:
                offsets.append(start + len(out))
            out += encode_chunk(base + rtype, frag, ln)
    return bytes(out), offsets


def pebble_trailer(log_number: int) -> bytes:
    """Pebble's EOF trailer: a recyclable FULL header, CRC 0, length 0, log_number + 1."""
    return bytes(6) + bytes([RECYCLABLE_FULL]) + ((log_number + 1) & _MASK32).to_bytes(4, "little")


def encode_pebble(
    records: Iterable[bytes],
    *,
    log_number: int,
    start: int = 0,
    synced_offsets: Sequence[int] | None = None,
    trailer: bool = False,
) -> tuple[bytes, list[int]]:
    """What Pebble's LogWriter writes: recyclable chunks (5-8), or walSync chunks (9-12)
    carrying ``synced_offsets[i]`` for record i; after each chunk, fewer than header-size
    bytes left in the block are zero-filled at once.  ``trailer``: the EOF trailer that
    Close writes.  Returns the bytes and each record's first header offset."""
    walsync = synced_offsets is not None
    hs = WALSYNC_HEADER_SIZE if walsync else RECYCLABLE_HEADER_SIZE
    base = 8 if walsync else 4
    out = bytearray()
    pos = start
    offsets = []

    def pad_after() -> None:
        nonlocal pos
        space = BLOCK_SIZE - pos % BLOCK_SIZE
        if space < hs:
            out.extend(bytes(space))
            pos += space

    pad_after()  # (a log appended to: never by Pebble itself)
    for n, record in enumerate(records):
        data = bytes(record)
        synced = synced_offsets[n] if synced_offsets is not None else None
        i = 0
        first = True
        while first or i < len(data):
            k = min(len(data) - i, BLOCK_SIZE - pos % BLOCK_SIZE - hs)
            last = i + k == len(data)
            rtype = FULL if first and last else FIRST if first else LAST if last else MIDDLE
            if first:
                offsets.append(pos)
            chunk = encode_chunk(base + rtype, data[i : i + k], log_number, synced)
            out += chunk
            pos += len(chunk)
            i += k
            first = False
            pad_after()
    if trailer:
        out += pebble_trailer(log_number)
    return bytes(out), offsets


# ---------------------------------------------------------------------------
# Dialects: reading
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class End:
    """The end of the log at `offset` (old log number, Pebble's trailer, RocksDB's silent
    EOF): a read stops here, silently.  The event stream goes on after it (see read_dialect)."""

    offset: int


@dataclasses.dataclass(frozen=True)
class Meta:
    """A metadata record at `offset`: kind "compression" (value None or "zstd"),
    "timestamp_size" (value (column family, size)) or "predecessor" (value a Predecessor);
    or what the reader learnt there: "recycled" (the first recyclable header) and
    "log_number" (the number taken from it when none was given)."""

    offset: int
    kind: str
    value: object


@dataclasses.dataclass(frozen=True)
class Predecessor:
    """What a PredecessorWALInfo record says about the previous WAL."""

    log_number: int
    size: int
    last_sequence: int


DialectEvent = Record | Corruption | TornTail | End | Meta


class _DialectAssembler:
    """Fragment assembly shared by the RocksDB and Pebble readers (events in order)."""

    def __init__(self, suffixes: bool, decompress: Callable[[bytes], bytes] | None) -> None:
        self.events: list[DialectEvent] = []
        self.is_open = False
        self.open_offset = 0
        self.parts = bytearray()
        self.suffixes = suffixes  # "(1)"/"(2)" on structural reasons, as LevelDB and RocksDB add
        self.decompress = decompress
        self.compressed = False
        self.first_record_read = False

    def reason(self, text: str, n: int) -> str:
        return f"{text}({n})" if self.suffixes else text

    def report(self, offset: int, size: int, reason: str) -> None:
        self.events.append(Corruption(offset, size, reason))

    def drop_open(self) -> None:
        self.is_open = False
        self.open_offset = 0
        self.parts = bytearray()

    def middle_error(self) -> None:
        """A bad physical record: the open record (if any) is lost."""
        if self.is_open:
            self.report(self.open_offset, len(self.parts), ERROR_IN_MIDDLE)
        self.drop_open()

    def _emit(self, offset: int, payload: bytes) -> None:
        data = bytes(payload)
        if self.compressed and data:
            # CHOICE: one frame per logical record, decompressed whole;
            # a bad frame drops the record, reported once at its offset.
            if self.decompress is None:
                raise ValueError("a compressed log: give read_dialect a decompress function")
            try:
                data = bytes(self.decompress(data))
            except Exception:
                self.report(offset, len(payload), R_DECOMPRESS)
                return
        self.first_record_read = True
        self.events.append(Record(offset, data))

    def data(self, offset: int, position: int, payload: bytes) -> None:
        """A good data fragment: position 1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST."""
        if position in (FULL, FIRST):
            if self.is_open and len(self.parts) > 0:
                n = 1 if position == FULL else 2
                self.report(self.open_offset, len(self.parts), self.reason(PARTIAL_RECORD, n))
            self.drop_open()
            if position == FULL:
                self._emit(offset, payload)
            else:
                self.is_open = True
                self.open_offset = offset
                self.parts = bytearray(payload)
        elif not self.is_open:
            n = 1 if position == MIDDLE else 2
            self.report(offset, len(payload), self.reason(MISSING_START, n))
        elif position == MIDDLE:
            self.parts += payload
        else:
            whole = bytes(self.parts + payload)
            at = self.open_offset
            self.drop_open()
            self._emit(at, whole)


def _u32(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 4], "little")


def _crc_ok(data: bytes, p: int, hs: int, length: int) -> bool:
    stored = unmask_crc(_u32(data, p))
    return stored == crc32c(data[p + 6 : p + hs + length])


@dataclasses.dataclass
class _BlockReader:
    """The walk over the file's blocks that both dialects' readers share: each reads one
    block at a time (`block` returns False when the log ended inside it) and says what the
    end of the file means (`eof`)."""

    suffixes: ClassVar[bool]  # the dialect's "(1)"/"(2)" reason suffixes (_DialectAssembler)
    data: bytes
    mode: str  # the recovery mode
    log_number: int | None
    verify: bool  # verify_checksums
    decompress: Callable[[bytes], bytes] | None = None
    recycled: bool = dataclasses.field(default=False, init=False)
    asm: _DialectAssembler = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.asm = _DialectAssembler(self.suffixes, self.decompress)

    def block(self, block_start: int, block_end: int, short: bool) -> bool:
        raise NotImplementedError

    def eof(self) -> None:
        raise NotImplementedError

    def run(self) -> list[DialectEvent]:
        n = len(self.data)
        block_start = 0
        while block_start < n:
            block_end = min(block_start + BLOCK_SIZE, n)
            if not self.block(block_start, block_end, block_end - block_start < BLOCK_SIZE):
                return self.asm.events
            block_start += BLOCK_SIZE
        self.eof()
        return self.asm.events


@dataclasses.dataclass
class _RocksDBReader(_BlockReader):
    """RocksDB's log::Reader (docs/rocksdb.md sections 1-6) in one recovery mode, over the
    whole file from offset 0, as a list of events."""

    suffixes: ClassVar[bool] = True
    compression_read: bool = dataclasses.field(default=False, init=False)
    udt: dict[int, int] = dataclasses.field(default_factory=dict, init=False)

    @property
    def reports_torn(self) -> bool:
        return self.mode in ("point_in_time", "absolute")

    # -- what ReadRecord does with each outcome of ReadPhysicalRecord --

    def torn(self, offset: int, size: int, reason: str) -> None:
        if self.reports_torn:
            self.asm.events.append(TornTail(offset, size, reason))

    def eof(self) -> None:
        a = self.asm
        if a.is_open:
            self.torn(a.open_offset, len(a.parts), R_EOF_IN_RECORD)
        a.drop_open()

    def old_record(self, p: int) -> None:
        a = self.asm
        if self.mode == "skip":  # kSkipAnyCorruptedRecords: a kBadRecord
            a.middle_error()
            return
        if a.is_open and self.reports_torn:
            # a corruption, not a torn tail: absolute raises CorruptionError
            a.report(a.open_offset, len(a.parts), R_OLD_IN_RECORD)
        a.drop_open()
        a.events.append(End(p))

    def bad_block(self, p: int, left: int, reason: str) -> None:
        """Bad length (not at EOF) or checksum: the rest of the block is dropped."""
        if self.recycled and self.mode == "tolerate_tail":
            self.asm.drop_open()
            self.asm.events.append(End(p))
            return
        self.asm.report(p, left, reason)
        self.asm.middle_error()

    def metadata(self, p: int, rtype: int, payload: bytes) -> None:
        a = self.asm
        if a.is_open:
            # CHOICE: the open record is dropped (RocksDB keeps "in a fragmented record"
            # with its bytes cleared, so a later LAST would return a record's tail).  A
            # timestamp-size record reports it with RocksDB's text, only when some payload
            # is lost (RocksDB: !scratch->empty()); the others are not fragments, so they
            # end the record as a bad physical record does (reported even when empty)
            if rtype in (UDT_SIZES, RECYCLABLE_UDT_SIZES):
                if len(a.parts) > 0:
                    a.report(a.open_offset, len(a.parts), R_UDT_INTERSPERSED)
                a.drop_open()
            else:
                a.middle_error()
        if rtype == SET_COMPRESSION:
            self.set_compression(p, payload)
        elif rtype in (UDT_SIZES, RECYCLABLE_UDT_SIZES):
            self.timestamp_sizes(p, payload)
        elif len(payload) != 24:  # exactly three fixed64 (RocksDB decodes the first 24)
            a.report(p, len(payload), R_BAD_PREDECESSOR)
        else:
            pred = Predecessor(*struct.unpack_from("<QQQ", payload))
            a.events.append(Meta(p, "predecessor", pred))

    def set_compression(self, p: int, payload: bytes) -> None:
        a = self.asm
        if self.compression_read:
            a.report(p, len(payload), R_MULTIPLE_COMPRESSION)
        if a.first_record_read:
            a.report(p, len(payload), R_COMPRESSION_NOT_FIRST)
        # exactly a fixed32, as a predecessor record is exactly 24 bytes (RocksDB's
        # GetFixed32 would ignore bytes after the first 4)
        value = _u32(payload, 0) if len(payload) == 4 else -1
        if value not in (0, ZSTD):
            a.report(p, len(payload), R_BAD_COMPRESSION)
            return
        self.compression_read = True
        a.compressed = value == ZSTD
        a.events.append(Meta(p, "compression", "zstd" if value == ZSTD else None))

    def timestamp_sizes(self, p: int, payload: bytes) -> None:
        a = self.asm
        if len(payload) % 6 != 0:
            a.report(p, len(payload), R_BAD_UDT)
            return
        for at in range(0, len(payload), 6):
            cf, size = struct.unpack_from("<IH", payload, at)
            if size == 0:
                a.report(p, len(payload), R_UDT_ZERO)
                return
            if cf in self.udt:
                a.report(p, len(payload), R_UDT_UPDATE)
                return
            self.udt[cf] = size
            a.events.append(Meta(p, "timestamp_size", (cf, size)))

    def record(self, p: int, rtype: int, payload: bytes) -> None:
        a = self.asm
        if 1 <= rtype <= 8:
            a.data(p, (rtype - 1) % 4 + 1, payload)
        elif rtype in (SET_COMPRESSION, UDT_SIZES, RECYCLABLE_UDT_SIZES):
            self.metadata(p, rtype, payload)
        elif rtype in (PREDECESSOR, RECYCLABLE_PREDECESSOR):
            self.metadata(p, rtype, payload)
        else:
            if not rtype & SAFE_IGNORE_MASK:
                at = a.open_offset if a.is_open else p
                size = len(payload) + (len(a.parts) if a.is_open else 0)
                a.report(at, size, unknown_type_reason(rtype))
            a.drop_open()

    # -- ReadPhysicalRecord over one block --

    def block(self, block_start: int, block_end: int, short: bool) -> bool:
        """Reads one block; False when the log ended for good (EOF in the last block)."""
        data, a = self.data, self.asm
        p = block_start
        while True:
            left = block_end - p
            if left < HEADER_SIZE:
                if short and left > 0:
                    self.torn(p, left, R_TRUNCATED_HEADER)
                    self.eof()
                    return False
                return True  # the block's trailer, or the clean end of the last block
            length = data[p + 4] | data[p + 5] << 8
            rtype = data[p + 6]
            hs = HEADER_SIZE
            if rtype in _ROCKSDB_RECYCLABLE:
                hs = RECYCLABLE_HEADER_SIZE
                if a.first_record_read and not self.recycled:
                    # CHOICE: RocksDB loops here; drop the block, report
                    a.report(p, left, R_RECYCLABLE_NOT_FIRST)
                    a.middle_error()
                    return True
                if not self.recycled:
                    a.events.append(Meta(p, "recycled", True))
                self.recycled = True
                if left < hs:
                    if short:
                        self.torn(p, left, R_TRUNCATED_HEADER)
                        self.eof()
                        return False
                    return True  # dropped with the block's tail by ReadMore
            if hs + length > left:
                if short:
                    self.torn(p, left, R_TRUNCATED_BODY)
                    a.drop_open()
                    return False
                self.bad_block(p, left, BAD_RECORD_LENGTH)
                return True
            if hs == RECYCLABLE_HEADER_SIZE:
                number = _u32(data, p + 7)
                if self.log_number is None:
                    self.log_number = number
                    a.events.append(Meta(p, "log_number", number))
                if number != self.log_number & _MASK32:
                    self.old_record(p)
                    p += hs + length
                    continue
            if rtype == ZERO and length == 0:
                a.middle_error()  # preallocated zeros: the rest of the block, silently
                return True
            if self.verify and not _crc_ok(data, p, hs, length):
                self.bad_block(p, left, CHECKSUM_MISMATCH)
                return True
            payload = data[p + hs : p + hs + length]
            self.record(p, rtype, payload)
            p += hs + length


@dataclasses.dataclass
class _PebbleReader(_BlockReader):
    """The Pebble dialect as this package reads it (docs/rocksdb.md, "Pebble's chunks and
    trailer"), over the whole file, as a list of events.

    Pebble's own reader, on an invalid chunk, reads ahead for a later walSync chunk of the
    log whose synced offset lies beyond it, and calls the chunk corruption only then (else an
    unexpected end of file); it also tells zeroed chunks apart.  docs/rocksdb.md says this
    package does not: chunks are framed by type (7-, 11- or 19-byte headers) and read with
    LevelDB's rules and texts (zero fill skips the rest of the block silently; a bad
    checksum, a chunk that straddles its block or an unknown type is a corruption, reported
    per recovery mode; the torn tail is LevelDB's), plus the log numbers: a recyclable chunk
    of number log_number + 1 at a record start is Close's trailer (consumed; the log ends,
    in every mode), and any other number is an older log's data, as in RocksDB's dialect
    (skip mode skips it; the other modes end the log before it; inside a record,
    point_in_time and absolute report "error reading trailing data due to encountering old
    record", skip "error in middle of record")."""

    suffixes: ClassVar[bool] = False

    def torn(self, p: int, reason: str) -> None:
        """LevelDB's torn tail: from the open record (or p) to the end of the file."""
        a = self.asm
        start = a.open_offset if a.is_open else p
        a.events.append(TornTail(start, len(self.data) - start, reason))
        a.drop_open()

    def bad(self, p: int, left: int, reason: str | None) -> None:
        """A bad chunk (or zero fill, reason None): the rest of the block is dropped."""
        if reason is not None:
            self.asm.report(p, left, reason)
        self.asm.middle_error()

    def other_number(self, p: int, number: int) -> None:
        """A chunk whose log number is not ours: the trailer, or an older log's data."""
        a = self.asm
        assert self.log_number is not None
        if not a.is_open and number == (self.log_number + 1) & _MASK32:
            a.events.append(End(p))  # Close's trailer: the end, in every mode
        elif self.mode == "skip":
            a.middle_error()
        else:
            if a.is_open and self.mode in ("point_in_time", "absolute"):
                a.report(a.open_offset, len(a.parts), R_OLD_IN_RECORD)
            a.drop_open()
            a.events.append(End(p))

    def chunk(self, p: int, rtype: int, payload: bytes) -> None:
        a = self.asm
        if 1 <= rtype <= 12:
            a.data(p, (rtype - 1) % 4 + 1, payload)
            return
        at = a.open_offset if a.is_open else p
        size = len(payload) + (len(a.parts) if a.is_open else 0)
        a.report(at, size, unknown_type_reason(rtype))
        a.drop_open()

    def block(self, block_start: int, block_end: int, short: bool) -> bool:
        """Reads one block; False when the log ended for good (EOF in the last block)."""
        data = self.data
        p = block_start
        while True:
            left = block_end - p
            if left < HEADER_SIZE:
                if short and left > 0:
                    self.torn(p, TRUNCATED_HEADER)
                    return False
                return True  # the block's trailer, or the clean end of the last block
            length = data[p + 4] | data[p + 5] << 8
            rtype = data[p + 6]
            hs = header_size_of("pebble", rtype)
            if hs > HEADER_SIZE:
                if not self.recycled:
                    self.asm.events.append(Meta(p, "recycled", True))
                self.recycled = True
                if left < hs:
                    if short:
                        self.torn(p, TRUNCATED_HEADER)
                        return False
                    return True  # too short for its header: the block's trailer
            if hs + length > left:
                if short:
                    self.torn(p, TRUNCATED_PAYLOAD)
                    return False
                self.bad(p, left, BAD_RECORD_LENGTH)
                return True
            if rtype == ZERO and length == 0:
                self.bad(p, left, None)  # zero fill: the rest of the block, silently
                return True
            if hs > HEADER_SIZE:
                number = _u32(data, p + 7)
                if self.log_number is None:
                    # Close's exact trailer first says the log's number is one less
                    closing = data[p : p + 7] == bytes(6) + bytes([RECYCLABLE_FULL])
                    self.log_number = (number - 1) & _MASK32 if closing else number
                    self.asm.events.append(Meta(p, "log_number", self.log_number))
                if number != self.log_number & _MASK32:
                    self.other_number(p, number)  # consumed unchecked, like RocksDB's
                    p += hs + length
                    continue
            if self.verify and not _crc_ok(data, p, hs, length):
                self.bad(p, left, CHECKSUM_MISMATCH)
                return True
            self.chunk(p, rtype, data[p + hs : p + hs + length])
            p += hs + length

    def eof(self) -> None:
        """A record still open at the end of the file is a torn tail."""
        a = self.asm
        if a.is_open:
            size = len(self.data) - a.open_offset
            a.events.append(TornTail(a.open_offset, size, FRAGMENT_OPEN_AT_EOF))
            a.drop_open()


@dataclasses.dataclass
class DialectResult(ReadResult):
    """ReadResult plus what the reader exposes about the log."""

    log_number: int | None = None
    recycled: bool = False
    compression: str | None = None
    timestamp_sizes: dict[int, int] = dataclasses.field(default_factory=dict)
    predecessor: Predecessor | None = None


def read_dialect_events(
    data: bytes,
    dialect: str,
    *,
    recovery: str = "skip",
    log_number: int | None = None,
    verify_checksums: bool = True,
    decompress: Callable[[bytes], bytes] | None = None,
) -> tuple[list[DialectEvent], int | None, bool]:
    """The whole file read from offset 0 in a dialect: (events, log number, recycled).
    RocksDB's events depend on the recovery mode; the LevelDB dialect is read_events."""
    data = bytes(data)
    if dialect == "leveldb":
        return list(read_events(data, verify_checksums)), log_number, False
    reader: _RocksDBReader | _PebbleReader
    if dialect == "rocksdb":
        reader = _RocksDBReader(data, recovery, log_number, verify_checksums, decompress)
    elif dialect == "pebble":
        reader = _PebbleReader(data, recovery, log_number, verify_checksums)
    else:
        raise ValueError(f"unknown dialect {dialect!r}")
    events = reader.run()
    return events, reader.log_number, reader.recycled


def read_dialect(
    data: bytes,
    *,
    dialect: str = "leveldb",
    recovery: str = "skip",
    log_number: int | None = None,
    verify_checksums: bool = True,
    start: int = 0,
    end: int | None = None,
    decompress: Callable[[bytes], bytes] | None = None,
) -> DialectResult:
    """What Reader(data, dialect=..., log_number=..., recovery=..., start=..., end=...)
    yields, reports, raises and exposes.

    The events of the whole file are kept when their offset lies in [start, end); the mode
    then acts on them in order: a record is yielded; a corruption is reported, then skip
    goes on, point_in_time stops, tolerate_tail and absolute raise; a torn tail ends the
    read (reported and raised as "truncated" in absolute; in the RocksDB dialect, reported
    in point_in_time too, with the open record after a cut header); an End ends it
    silently; metadata update the attributes."""
    if recovery not in RECOVERY_MODES:
        raise ValueError(f"unknown recovery mode {recovery!r}")
    events, number, recycled = read_dialect_events(
        data,
        dialect,
        recovery=recovery,
        log_number=log_number,
        verify_checksums=verify_checksums,
        decompress=decompress,
    )
    del number, recycled  # as far as the read went (below), not the whole file's
    out = DialectResult([], [], None, 0, log_number=log_number)
    if end is not None and start >= end:
        return out  # a range that reads nothing learns nothing either (only what was given)
    # CHOICE: compression is the file's (its record sits at offset 0)
    for event in events:
        if isinstance(event, Meta) and event.kind == "compression":
            if end is None or event.offset < end:
                out.compression = event.value  # type: ignore[assignment]
    # A cut header with a record open gives two torn-tail events, both reported (RocksDB
    # reports the header, then the open record); a range that leaves the first out leaves
    # out the second too.
    events = [
        e
        for i, e in enumerate(events)
        if not (
            isinstance(e, TornTail)
            and i > 0
            and isinstance(events[i - 1], TornTail)
            and not (start <= events[i - 1].offset and (end is None or events[i - 1].offset < end))
        )
    ]
    for i, event in enumerate(events):
        if end is not None and event.offset >= end:
            continue
        if isinstance(event, Meta) and event.kind == "recycled":
            out.recycled = True  # learnt from the file's start, also for a range
        elif isinstance(event, Meta) and event.kind == "log_number":
            out.log_number = event.value  # type: ignore[assignment]
        if event.offset < start:
            continue
        if isinstance(event, Record):
            out.records.append(event)
        elif isinstance(event, Meta):
            if event.kind == "timestamp_size":
                cf, size = event.value  # type: ignore[misc]
                out.timestamp_sizes[cf] = size
            elif event.kind == "predecessor":
                out.predecessor = event.value  # type: ignore[assignment]
        elif isinstance(event, Corruption):
            out.corruptions.append(event)
            if recovery == "point_in_time":
                break
            if recovery != "skip":
                out.error = "corruption"
                break
        elif isinstance(event, TornTail):
            if recovery == "absolute":
                out.corruptions.append(event)
                out.error = "truncated"
            elif recovery == "point_in_time" and dialect == "rocksdb":
                out.corruptions.append(event)
            if i + 1 < len(events) and isinstance(events[i + 1], TornTail):
                continue
            break
        else:  # End
            break
    out.dropped_bytes = sum(c.size for c in out.corruptions)
    return out
