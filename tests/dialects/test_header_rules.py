"""The core's header rules as every part of the package applies them (csrc/core/log_header.h).

Pebble's end-of-log trailer is one rule for the reader, scan, detect_dialect and the append
point (docs/rocksdb.md, "Pebble's chunks and trailer"): with the log's number known, a longer
header of that number plus one, whatever it holds; before anything has said the number,
only the exact header Pebble's Close writes.  And _append_point says with a flag, not a
text, that a file holds no valid record.
"""

from __future__ import annotations

import struct
from pathlib import Path

import leveldb_log
import pytest
from leveldb_log import CorruptionError, detect_dialect, scan
from leveldb_log._core import _append_point


def chunk(kind: int, payload: bytes, log_number: int) -> bytes:
    """A recyclable physical record: 11-byte header, then the payload."""
    body = bytes([kind]) + struct.pack("<I", log_number) + payload
    crc = leveldb_log.mask_crc(leveldb_log.crc32c(body))
    return struct.pack("<IH", crc, len(payload)) + body


def close_header(next_number: int) -> bytes:
    """What Pebble's Close writes: type 5, length 0, checksum 0, the next log number."""
    return struct.pack("<IHBI", 0, 0, 5, next_number)


def read(data: bytes, recovery: str = "absolute", **options: object) -> list[bytes]:
    with leveldb_log.Reader(data, dialect="pebble", recovery=recovery, **options) as r:  # type: ignore[arg-type]
        return list(r)


def kinds(data: bytes) -> list[str]:
    return [r.kind for r in scan(data, dialect="pebble")]


def test_a_header_of_the_next_number_ends_the_log_whatever_it_holds() -> None:
    # Not Close's exact header (a payload, a valid checksum), but of the next number.
    data = chunk(5, b"a", 7) + chunk(5, b"b", 8)
    assert read(data) == [b"a"]
    assert kinds(data) == ["record", "end"]  # the old scan called it a record
    assert detect_dialect(data) == "pebble"  # the old detection said "rocksdb"


def test_closes_header_of_another_number_is_no_trailer_once_the_number_is_known() -> None:
    data = chunk(5, b"a", 7) + close_header(9) + chunk(5, b"more", 7)
    assert "end" not in kinds(data)  # the old scan ended the log here
    assert detect_dialect(data) == "rocksdb"
    # An older log's chunk: "skip" reads on past it, as it would not past the trailer.
    assert read(data) == [b"a"]
    assert read(data, recovery="skip") == [b"a", b"more"]
    assert read(chunk(5, b"a", 7) + close_header(8) + chunk(5, b"more", 7), recovery="skip") == [
        b"a"
    ]


def test_a_closed_empty_log_read_without_its_number_ends_at_its_trailer() -> None:
    data = close_header(8)
    assert read(data) == []  # the old reader reported a checksum mismatch
    assert kinds(data) == ["end"]
    assert detect_dialect(data) == "pebble"
    with leveldb_log.Reader(data, dialect="pebble") as r:
        assert list(r) == []
        assert r.log_number == 7  # one less than the trailer's


def test_a_given_number_decides_for_the_first_header_too() -> None:
    assert read(close_header(8), log_number=7) == []
    # Of log 3, Close's header of log 7 is an older log's chunk, which "skip" reads past.
    assert read(close_header(8) + chunk(5, b"x", 3), log_number=3, recovery="skip") == [b"x"]


def test_append_point_flags_a_file_with_no_valid_record(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_bytes(b"just some text, no log at all\n" * 3)
    with pytest.raises(CorruptionError) as no_log:
        _append_point(text, dialect="leveldb")
    assert no_log.value.no_log is True  # type: ignore[attr-defined]
    log = tmp_path / "000007.log"
    with leveldb_log.Writer(log) as w:
        w.write(b"record")
    # A torn header of a type no writer writes: refused, but the file holds a record.
    log.write_bytes(log.read_bytes() + b"\0\0\0\0\x30\0\xee" + b"x" * 10)
    with pytest.raises(CorruptionError) as refused:
        _append_point(log, dialect="leveldb")
    assert refused.value.no_log is False  # type: ignore[attr-defined]


def test_append_point_takes_the_dialect_always(tmp_path: Path) -> None:
    log = tmp_path / "000007.log"
    with leveldb_log.Writer(log, dialect="pebble") as w:
        w.write(b"record")
    with pytest.raises(TypeError, match="dialect"):
        _append_point(log)  # type: ignore[call-arg]
    cut, fresh, clean, damage = _append_point(log, dialect="pebble")
    assert (cut, fresh, damage) == (clean, False, None)  # the trailer is cut back
    assert clean == log.stat().st_size - 11


def test_scan_carries_the_log_number_across_blocks() -> None:
    # Block 0: one record of log 7 filling it; block 1 begins with a header of log 8.
    first = chunk(5, b"a" * (leveldb_log.BLOCK_SIZE - 11), 7)
    data = first + chunk(5, b"b", 8)
    assert [(r.offset, r.kind) for r in scan(data, dialect="pebble")] == [
        (0, "record"),
        (leveldb_log.BLOCK_SIZE, "end"),
    ]
    assert read(data) == [b"a" * (leveldb_log.BLOCK_SIZE - 11)]


def test_detect_dialect_is_the_cores_verdict() -> None:
    from leveldb_log._core import _detect_dialect

    assert _detect_dialect(b"") == (None, "no intact record at the start")
    dialect, reason = _detect_dialect(close_header(8), 7)
    assert (dialect, reason) == ("pebble", "a walSync record or Pebble's trailer")
    assert _detect_dialect(close_header(8), 3)[0] is None  # log 3: no record checks out
