"""Pure-Python reference model of the LevelDB log format.

This module is the executable form of ``docs/format.md`` (writing and LevelDB's
reader) and of the reading part of ``docs/api.md`` (start/end ranges and recovery
modes).  It is meant for differential tests against the C implementation, so
it is written to be obviously correct rather than fast: plain Python, standard
library only, no shared code with the package under test. The one exception is
speed where it costs most: crc32c() hands its bytes to the google-crc32c
package's C code when it is installed (the test extra has it), an implementation
independent of this package's, held to this module's table and bitwise
definition in tests/format/test_model.py. The table in pure Python was three
fifths of the differential tests' time.

Public names::

    BLOCK_SIZE, HEADER_SIZE, ZERO, FULL, FIRST, MIDDLE, LAST
    crc32c(data, value=0) -> int
    mask_crc(crc) -> int, unmask_crc(masked) -> int
    encode_physical(rtype, payload) -> bytes
    encode(records, start=0) -> (bytes, [record offsets])
    read_events(data, verify_checksums=True) -> [Record | Corruption | TornTail]
    read(data, *, recovery="skip", verify_checksums=True, start=0, end=None) -> ReadResult

RocksDB's and Pebble's dialects (``docs/rocksdb.md``) are modelled in
``tests/support/model_dialects.py``, on top of this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

_google_crc32c: Any
try:
    import google_crc32c as _google_crc32c
except ImportError:  # the pure-Python table below serves
    _google_crc32c = None
else:
    if _google_crc32c.implementation != "c":  # its own pure-Python fallback: no faster
        _google_crc32c = None

BLOCK_SIZE = 32768
HEADER_SIZE = 7

ZERO = 0
FULL = 1
FIRST = 2
MIDDLE = 3
LAST = 4

RECOVERY_MODES = ("skip", "tolerate_tail", "point_in_time", "absolute")

# Reason texts (LevelDB's, plus this project's texts for the torn tail).
BAD_RECORD_LENGTH = "bad record length"
CHECKSUM_MISMATCH = "checksum mismatch"
PARTIAL_RECORD = "partial record without end"
MISSING_START = "missing start of fragmented record"
ERROR_IN_MIDDLE = "error in middle of record"
TRUNCATED_HEADER = "truncated header at end of file"
TRUNCATED_PAYLOAD = "truncated payload at end of file"
FRAGMENT_OPEN_AT_EOF = "fragmented record open at end of file"


def unknown_type_reason(rtype: int) -> str:
    return f"unknown record type {rtype}"


# ---------------------------------------------------------------------------
# CRC-32C (Castagnoli), reflected polynomial 0x82F63B78, init/xorout 0xFFFFFFFF
# ---------------------------------------------------------------------------

_POLY = 0x82F63B78
_MASK32 = 0xFFFFFFFF


def crc32c_bitwise(data: bytes, value: int = 0) -> int:
    """CRC-32C one bit at a time: the definition.  Slow; used to check the table."""
    crc = value ^ _MASK32
    for byte in bytes(data):
        crc ^= byte
        for _ in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ _POLY
            else:
                crc = crc >> 1
    return crc ^ _MASK32


def _make_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            if c & 1:
                c = (c >> 1) ^ _POLY
            else:
                c = c >> 1
        table.append(c)
    return table


_TABLE = _make_table()


def crc32c(data: bytes, value: int = 0) -> int:
    """CRC-32C of ``data``, continuing from a previous result ``value`` (like zlib.crc32).

    ``crc32c(a + b) == crc32c(b, crc32c(a))``. By google-crc32c's C code when it is
    installed, else by crc32c_table().
    """
    if _google_crc32c is not None:
        return int(_google_crc32c.extend(value & _MASK32, bytes(data)))
    return crc32c_table(data, value)


def crc32c_table(data: bytes, value: int = 0) -> int:
    """crc32c() a byte at a time from a 256-entry table, in plain Python."""
    crc = (value & _MASK32) ^ _MASK32
    table = _TABLE
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ _MASK32


_MASK_DELTA = 0xA282EAD8


def mask_crc(c: int) -> int:
    """Rotate right by 15 bits, then add a constant (mod 2**32)."""
    c &= _MASK32
    rotated = ((c >> 15) | (c << 17)) & _MASK32
    return (rotated + _MASK_DELTA) & _MASK32


def unmask_crc(m: int) -> int:
    """Inverse of mask_crc."""
    r = (m - _MASK_DELTA) & _MASK32
    return ((r >> 17) | (r << 15)) & _MASK32


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def encode_physical(rtype: int, payload: bytes) -> bytes:
    """One physical record: masked crc (LE32), length (LE16), type byte, payload."""
    payload = bytes(payload)
    if not 0 <= rtype <= 255:
        raise ValueError("record type must fit in a byte")
    if len(payload) > 0xFFFF:
        raise ValueError("payload too long for one physical record")
    type_byte = bytes([rtype])
    checksum = mask_crc(crc32c(type_byte + payload))
    header = checksum.to_bytes(4, "little") + len(payload).to_bytes(2, "little") + type_byte
    return header + payload


def encode(records: Iterable[bytes], start: int = 0) -> tuple[bytes, list[int]]:
    """What a LevelDB writer appends to a log that already holds ``start`` bytes.

    Returns the appended bytes and, for each user record, the file offset
    (counting the ``start`` existing bytes) of its first header.
    """
    if start < 0:
        raise ValueError("start must be >= 0")
    out = bytearray()
    offsets = []
    block_offset = start % BLOCK_SIZE  # position inside the current block

    for record in records:
        data = bytes(record)
        pos = 0  # how much of `data` has been written
        is_first_fragment = True
        while True:
            space = BLOCK_SIZE - block_offset
            if space < HEADER_SIZE:
                # Trailer: zero-fill the rest of the block, go on in the next one.
                out += bytes(space)
                block_offset = 0
                space = BLOCK_SIZE
            room = space - HEADER_SIZE  # payload bytes that fit in this block
            remaining = len(data) - pos
            fragment_len = min(remaining, room)
            is_last_fragment = fragment_len == remaining
            if is_first_fragment and is_last_fragment:
                rtype = FULL
            elif is_first_fragment:
                rtype = FIRST
            elif is_last_fragment:
                rtype = LAST
            else:
                rtype = MIDDLE
            if is_first_fragment:
                offsets.append(start + len(out))
            out += encode_physical(rtype, data[pos : pos + fragment_len])
            block_offset += HEADER_SIZE + fragment_len
            pos += fragment_len
            is_first_fragment = False
            if is_last_fragment:
                break

    return bytes(out), offsets


# ---------------------------------------------------------------------------
# Reading: events
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Record:
    """A complete user record; offset of its first (FULL or FIRST) header."""

    offset: int
    data: bytes


@dataclasses.dataclass(frozen=True)
class Corruption:
    """Mid-file corruption: dropped bytes begin at offset, size bytes, LevelDB's reason."""

    offset: int
    size: int
    reason: str


@dataclasses.dataclass(frozen=True)
class TornTail:
    """The silent end-of-log case (truncated header/payload, or open fragmented record)."""

    offset: int
    size: int
    reason: str


Event = Record | Corruption | TornTail


class _Assembler:
    """Joins physical records into user records, collecting events in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.is_open = False
        self.open_offset = 0
        self.parts = bytearray()

    def _drop_open(self) -> None:
        self.is_open = False
        self.open_offset = 0
        self.parts = bytearray()

    def _report_partial_if_needed(self) -> None:
        # An open record that gets replaced by a new FULL/FIRST.  An open record
        # with no payload yet (an old writer's empty FIRST) is dropped silently.
        if self.is_open and len(self.parts) > 0:
            self.events.append(Corruption(self.open_offset, len(self.parts), PARTIAL_RECORD))
        self._drop_open()

    def physical(self, offset: int, rtype: int, payload: bytes) -> None:
        if rtype == FULL:
            self._report_partial_if_needed()
            self.events.append(Record(offset, payload))
        elif rtype == FIRST:
            self._report_partial_if_needed()
            self.is_open = True
            self.open_offset = offset
            self.parts = bytearray(payload)
        elif rtype == MIDDLE:
            if self.is_open:
                self.parts += payload
            else:
                self.events.append(Corruption(offset, len(payload), MISSING_START))
        elif rtype == LAST:
            if self.is_open:
                self.parts += payload
                self.events.append(Record(self.open_offset, bytes(self.parts)))
                self._drop_open()
            else:
                self.events.append(Corruption(offset, len(payload), MISSING_START))
        else:
            reason = unknown_type_reason(rtype)
            if self.is_open:
                size = len(payload) + len(self.parts)
                self.events.append(Corruption(self.open_offset, size, reason))
                self._drop_open()
            else:
                self.events.append(Corruption(offset, len(payload), reason))

    def bad_physical(self, report: Corruption | None) -> None:
        """A bad physical record; `report` is its own corruption (None for the zero skip)."""
        if report is not None:
            self.events.append(report)
        if self.is_open:
            self.events.append(Corruption(self.open_offset, len(self.parts), ERROR_IN_MIDDLE))
            self._drop_open()

    def truncated_at_end(self, p: int, data_len: int, reason: str) -> None:
        offset = self.open_offset if self.is_open else p
        self.events.append(TornTail(offset, data_len - offset, reason))
        self._drop_open()

    def clean_end(self, data_len: int) -> None:
        if self.is_open:
            self.events.append(
                TornTail(self.open_offset, data_len - self.open_offset, FRAGMENT_OPEN_AT_EOF)
            )
            self._drop_open()


def read_events(data: bytes, verify_checksums: bool = True) -> list[Event]:
    """LevelDB's log reader over the whole of ``data`` from offset 0, as events."""
    data = bytes(data)
    n = len(data)
    asm = _Assembler()

    block_start = 0
    while block_start < n:
        block_end = min(block_start + BLOCK_SIZE, n)
        is_short_final = (block_end - block_start) < BLOCK_SIZE
        p = block_start
        while True:
            left = block_end - p
            if left < HEADER_SIZE:
                if not is_short_final:
                    break  # trailer: skip to the next block
                if left > 0:
                    asm.truncated_at_end(p, n, TRUNCATED_HEADER)
                    return asm.events
                break  # clean end of the short final block
            length = data[p + 4] | (data[p + 5] << 8)
            rtype = data[p + 6]
            if HEADER_SIZE + length > left:
                if is_short_final:
                    asm.truncated_at_end(p, n, TRUNCATED_PAYLOAD)
                    return asm.events
                asm.bad_physical(Corruption(p, left, BAD_RECORD_LENGTH))
                break  # next block
            if rtype == ZERO and length == 0:
                asm.bad_physical(None)  # preallocated space: skip the block silently
                break
            payload = data[p + HEADER_SIZE : p + HEADER_SIZE + length]
            if verify_checksums:
                stored = unmask_crc(int.from_bytes(data[p : p + 4], "little"))
                actual = crc32c(bytes([rtype]) + payload)
                if stored != actual:
                    asm.bad_physical(Corruption(p, left, CHECKSUM_MISMATCH))
                    break  # next block
            asm.physical(p, rtype, payload)
            p += HEADER_SIZE + length
        block_start += BLOCK_SIZE

    asm.clean_end(n)
    return asm.events


# ---------------------------------------------------------------------------
# Reading: ranges and recovery modes
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class ReadResult:
    records: list[Record]
    corruptions: list[Corruption | TornTail]  # what on_corruption receives, in order
    error: str | None  # None, "corruption" or "truncated": what the reader raises at the end
    dropped_bytes: int

    @property
    def payloads(self) -> list[bytes]:
        return [r.data for r in self.records]

    @property
    def offsets(self) -> list[int]:
        return [r.offset for r in self.records]


def read(
    data: bytes,
    *,
    recovery: str = "skip",
    verify_checksums: bool = True,
    start: int = 0,
    end: int | None = None,
) -> ReadResult:
    """What a Reader(data, recovery=..., start=..., end=...) yields, reports and raises."""
    if recovery not in RECOVERY_MODES:
        raise ValueError(f"unknown recovery mode {recovery!r}")

    def in_range(offset: int) -> bool:
        return offset >= start and (end is None or offset < end)

    kept = [e for e in read_events(data, verify_checksums) if in_range(e.offset)]

    records: list[Record] = []
    corruptions: list[Corruption | TornTail] = []
    error: str | None = None

    for event in kept:
        if isinstance(event, Record):
            records.append(event)
        elif isinstance(event, Corruption):
            if recovery == "skip":
                corruptions.append(event)
            elif recovery == "point_in_time":
                corruptions.append(event)
                break
            else:  # tolerate_tail, absolute
                corruptions.append(event)
                error = "corruption"
                break
        elif isinstance(event, TornTail):
            if recovery == "absolute":
                corruptions.append(event)
                error = "truncated"
            break  # always the last event anyway
        else:  # pragma: no cover
            raise AssertionError(event)

    dropped = sum(c.size for c in corruptions)
    return ReadResult(records, corruptions, error, dropped)
