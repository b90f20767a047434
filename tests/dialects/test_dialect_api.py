"""The dialects' Python interface (docs/api.md, docs/rocksdb.md): options and their checks,
the log number, metadata attributes, compressed WALs and their extra, pickling, mode "a",
scan() and stats() in every dialect. Byte-level behaviour is checked against the model in
tests/dialects/test_dialects.py; this file checks what users call."""

from __future__ import annotations

import io
import os
import pickle
import struct
import sys
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import _zstd

RECORDS = [b"", b"x" * 10, b"y" * 40000, b"z" * 100, b"w" * 70000]


def crc_record(type_: int, payload: bytes, log_number: int | None = None) -> bytes:
    """One physical record, built by hand: 7-byte header, or 11 with a log number."""
    extra = b"" if log_number is None else struct.pack("<I", log_number)
    crc = leveldb_log.crc32c(bytes([type_]) + extra + payload)
    return struct.pack("<IHB", leveldb_log.mask_crc(crc), len(payload), type_) + extra + payload


def written(**kw: Any) -> bytes:
    buf = io.BytesIO()
    with leveldb_log.Writer(buf, **kw) as w:
        w.write_many(RECORDS)
    return buf.getvalue()


# ---- options --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "error", "text"),
    [
        ({"dialect": "lmdb"}, ValueError, "dialect must be"),
        ({"dialect": 3}, TypeError, "dialect must be a str"),
        ({"recycle": True}, ValueError, "recycle=True needs dialect='rocksdb'"),
        ({"compression": "zstd"}, ValueError, "compression needs dialect='rocksdb'"),
        ({"sync_offsets": True}, ValueError, "sync_offsets=True needs dialect='pebble'"),
        ({"dialect": "rocksdb", "compression": "lz4"}, ValueError, "compression must be"),
        ({"dialect": "rocksdb", "compression": 7}, TypeError, "compression must be"),
        ({"dialect": "rocksdb", "recycle": True}, ValueError, "log number"),
        ({"dialect": "pebble"}, ValueError, "log number"),
        ({"dialect": "pebble", "log_number": 3, "compression": "zstd"}, ValueError, "Pebble"),
        ({"dialect": "rocksdb", "sync_offsets": True}, ValueError, "Pebble's"),
        ({"log_number": 3}, ValueError, "log_number needs dialect"),
        ({"dialect": "rocksdb", "log_number": -1}, ValueError, "log_number"),
    ],
)
def test_writer_refuses_options_before_touching_the_target(
    tmp_path: Path, kw: dict[str, Any], error: type[Exception], text: str
) -> None:
    path = tmp_path / "000009-not-a-wal.bin"
    path.write_bytes(b"keep me")
    with pytest.raises(error, match=text):
        leveldb_log.Writer(path, "w", **kw)
    assert path.read_bytes() == b"keep me"


def test_reader_refuses_bad_dialect_options() -> None:
    with pytest.raises(ValueError, match="dialect must be"):
        leveldb_log.Reader(b"", dialect="LevelDB")
    with pytest.raises(ValueError, match="log_number needs dialect"):
        leveldb_log.Reader(b"", log_number=1)
    with pytest.raises(TypeError):
        leveldb_log.Reader(b"", dialect="rocksdb", log_number="1")


# ---- log numbers ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["000123.log", "000123-002.log"])
def test_the_log_number_comes_from_the_file_name(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    with leveldb_log.Writer(path, dialect="rocksdb", recycle=True) as w:
        w.write_many(RECORDS)
    with leveldb_log.Reader(path, dialect="rocksdb") as r:
        assert r.log_number == 123
        assert list(r) == RECORDS and r.recycled
    # with another number, every record is an older log's: the log ends at once
    with leveldb_log.Reader(path, dialect="rocksdb", log_number=124, recovery="absolute") as r:
        assert list(r) == [] and r.log_number == 124


def test_without_a_name_the_first_recyclable_record_gives_the_log_number() -> None:
    log = written(dialect="rocksdb", recycle=True, log_number=2**32 + 5)
    with leveldb_log.Reader(log, dialect="rocksdb") as r:
        assert r.log_number is None and not r.recycled
        assert list(r) == RECORDS
        assert r.log_number == 5 and r.recycled  # the low 32 bits, as stored
    # a LevelDB-layout log has none
    with leveldb_log.Reader(written(dialect="rocksdb"), dialect="rocksdb") as r:
        assert list(r) == RECORDS and r.log_number is None and not r.recycled


def test_a_range_learns_the_log_number_and_compression_from_block_zero() -> None:
    log = written(dialect="rocksdb", recycle=True, log_number=77, compression="zstd")
    got = []
    for start, end in leveldb_log.splits(log, size=leveldb_log.BLOCK_SIZE):
        with leveldb_log.Reader(log, dialect="rocksdb", start=start, end=end) as r:
            got += list(r)
            assert r.compression == "zstd" and r.log_number == 77
    assert got == RECORDS


# ---- metadata records -----------------------------------------------------------------


def test_metadata_records_are_exposed_not_yielded() -> None:
    udt = struct.pack("<IH", 1, 8) + struct.pack("<IH", 4, 16)
    pred = struct.pack("<QQQ", 41, 9000, 123456)
    log = (
        crc_record(130, pred)
        + crc_record(10, udt)
        + crc_record(5, b"batch", log_number=8)
        + crc_record(11, struct.pack("<IH", 9, 4), log_number=8)
        + crc_record(5, b"second", log_number=8)
    )
    seen: list[Any] = []
    with leveldb_log.Reader(log, dialect="rocksdb", on_corruption=seen.append) as r:
        assert list(r) == [b"batch", b"second"]
        assert r.predecessor == leveldb_log.Predecessor(41, 9000, 123456)
        assert r.timestamp_sizes == {1: 8, 4: 16, 9: 4}
        sizes = r.timestamp_sizes
        sizes[99] = 1  # a copy
        assert 99 not in r.timestamp_sizes
        assert r.compression is None
    assert seen == []
    # LevelDB's dialect reports them as unknown types
    seen.clear()
    assert list(leveldb_log.Reader(log, on_corruption=seen.append)) == []
    assert [c.reason for c in seen][:2] == ["unknown record type 130", "unknown record type 10"]


def test_scan_shows_metadata_records_with_their_offsets_and_log_numbers() -> None:
    log = written(dialect="rocksdb", recycle=True, log_number=3, compression="zstd")
    regions = list(leveldb_log.scan(log, dialect="rocksdb"))
    assert (regions[0].offset, regions[0].type, regions[0].header_size) == (0, 9, 7)
    assert regions[0].log_number is None and regions[0].checksum_ok
    records = [r for r in regions if r.kind == "record"][1:]
    assert {(r.header_size, r.log_number) for r in records} == {(11, 3)}
    assert all(r.checksum_ok for r in records)
    assert regions[-1].end == len(log)
    # read as LevelDB's, the longer headers fail their checksums
    assert any(r.checksum_ok is False for r in leveldb_log.scan(log))


def test_scan_shows_pebbles_trailer_and_stats_finds_a_closed_log_clean() -> None:
    log = written(dialect="pebble", log_number=12)
    last = list(leveldb_log.scan(log, dialect="pebble"))[-1]
    assert (last.kind, last.offset, last.end) == ("end", len(log) - 11, len(log))
    s = leveldb_log.stats(log, dialect="pebble")
    assert (s.records, s.torn_tail_bytes, s.corrupt) == (len(RECORDS), 0, False)
    with leveldb_log.Reader(log, dialect="pebble") as r:
        assert list(r) == RECORDS and r.position == len(log)


# ---- compressed WALs ------------------------------------------------------------------


def test_a_compressed_wal_starts_with_its_compression_record_and_reads_back() -> None:
    log = written(dialect="rocksdb", compression="zstd")
    assert log[6] == 9 and log[7:11] == b"\x07\0\0\0"
    with leveldb_log.Reader(log, dialect="rocksdb", recovery="absolute") as r:
        assert list(r) == RECORDS and r.compression == "zstd"
    # LevelDB's dialect returns the frames as stored (and the type 9 record is unknown)
    frames = list(leveldb_log.Reader(log, on_corruption=lambda c: None))
    assert [_zstd.decompressor().decompress(f) if f else f for f in frames] == RECORDS


def test_a_damaged_frame_is_reported_not_returned() -> None:
    log = bytearray(written(dialect="rocksdb", compression="zstd", log_number=None))
    # the payload of the second record (b"x" * 10, one frame) gets a flipped byte, with its
    # checksum fixed up: only zstd can tell
    regions = [r for r in leveldb_log.scan(bytes(log), dialect="rocksdb") if r.kind == "record"]
    second = regions[2]
    at = second.offset + second.header_size + second.length - 2
    log[at] ^= 0xFF
    payload = bytes(log[second.offset + 7 : second.end])
    crc = leveldb_log.mask_crc(leveldb_log.crc32c(bytes([log[second.offset + 6]]) + payload))
    log[second.offset : second.offset + 4] = struct.pack("<I", crc)
    seen: list[Any] = []
    with leveldb_log.Reader(bytes(log), dialect="rocksdb", on_corruption=seen.append) as r:
        assert list(r) == [RECORDS[0], *RECORDS[2:]]
    assert [(c.offset, c.reason) for c in seen] == [(second.offset, "could not decompress record")]


def test_without_a_zstd_binding_the_error_names_the_extra(monkeypatch: Any) -> None:
    log = written(dialect="rocksdb", compression="zstd")

    def missing() -> None:
        raise _zstd.ZstdMissingError("install it with: pip install 'leveldb-log[rocksdb]'")

    monkeypatch.setattr(_zstd, "require", missing)
    with pytest.raises(ImportError, match=r"leveldb-log\[rocksdb\]"):
        list(leveldb_log.Reader(log, dialect="rocksdb"))
    with pytest.raises(leveldb_log.ZstdMissingError):
        leveldb_log.Writer(io.BytesIO(), dialect="rocksdb", compression="zstd")
    # nothing else changes: an uncompressed WAL reads as ever
    assert list(leveldb_log.Reader(written(dialect="rocksdb"), dialect="rocksdb")) == RECORDS


def test_the_missing_binding_error_comes_from_the_import_itself(monkeypatch: Any) -> None:
    for name in ("compression.zstd", "backports.zstd", "zstandard"):
        monkeypatch.setitem(sys.modules, name, None)  # an import of it fails
    monkeypatch.setattr(_zstd, "_backend", None)
    with pytest.raises(leveldb_log.ZstdMissingError, match=r"leveldb-log\[rocksdb\]"):
        _zstd.require()


# ---- pickling, mode "a" ----------------------------------------------------------------


@pytest.mark.parametrize(
    "kw", [{"dialect": "rocksdb", "recycle": True}, {"dialect": "pebble"}, {"dialect": "rocksdb"}]
)
def test_a_reader_pickles_with_its_dialect_and_resumes(tmp_path: Path, kw: dict[str, Any]) -> None:
    path = tmp_path / "000042.log"
    with leveldb_log.Writer(path, **kw) as w:
        w.write_many(RECORDS)
    with leveldb_log.Reader(path, dialect=kw["dialect"]) as r:
        first = [next(r), next(r)]
        copy = pickle.loads(pickle.dumps(r))
    with copy:
        assert copy.dialect == kw["dialect"]
        assert first + list(copy) == RECORDS
        if kw.get("recycle") or kw["dialect"] == "pebble":
            assert copy.log_number == 42


@pytest.mark.parametrize(
    "kw",
    [
        {"dialect": "rocksdb"},
        {"dialect": "rocksdb", "recycle": True},
        {"dialect": "rocksdb", "compression": "zstd"},
        {"dialect": "pebble"},
        {"dialect": "pebble", "sync_offsets": True},
    ],
)
def test_mode_a_cuts_a_torn_tail_and_appends_in_every_dialect(
    tmp_path: Path, kw: dict[str, Any]
) -> None:
    path = tmp_path / "000005.log"
    with leveldb_log.Writer(path, **kw) as w:
        w.write_many(RECORDS)
        w.flush()
        whole = w.position
        w.write(b"torn" * 100)
    size = os.path.getsize(path)
    with open(path, "r+b") as f:  # the last record (and Pebble's trailer) cut short
        f.truncate(size - 30)
    with leveldb_log.Writer(path, "a", **kw) as w:
        assert w.position == whole
        w.write(b"after")
    with leveldb_log.Reader(path, dialect=kw["dialect"], recovery="absolute") as r:
        assert list(r) == [*RECORDS, b"after"]


def test_mode_a_keeps_a_compressed_wal_compressed(tmp_path: Path) -> None:
    path = tmp_path / "000006.log"
    with leveldb_log.Writer(path, dialect="rocksdb", compression="zstd") as w:
        w.write(b"one")
    before = path.read_bytes()
    with pytest.raises(ValueError, match="compression='zstd'"):
        leveldb_log.Writer(path, "a", dialect="rocksdb")
    plain = tmp_path / "000007.log"
    with leveldb_log.Writer(plain, dialect="rocksdb") as w:
        w.write(b"one")
    with pytest.raises(ValueError, match="not a compressed WAL"):
        leveldb_log.Writer(plain, "a", dialect="rocksdb", compression="zstd")
    assert path.read_bytes() == before
    with leveldb_log.Writer(path, "a", dialect="rocksdb", compression="zstd") as w:
        w.write(b"two")
    assert list(leveldb_log.Reader(path, dialect="rocksdb")) == [b"one", b"two"]


def test_pebble_sync_offsets_carry_the_offset_last_synced(tmp_path: Path) -> None:
    path = tmp_path / "000008.log"
    with leveldb_log.Writer(path, dialect="pebble", sync_offsets=True) as w:
        w.write(b"a")
        w.sync()
        synced = w.position
        w.write(b"b")
    regions = [r for r in leveldb_log.scan(path, dialect="pebble") if r.kind == "record"]
    offsets = [struct.unpack_from("<Q", path.read_bytes(), r.offset + 11)[0] for r in regions]
    assert [r.header_size for r in regions] == [19, 19]
    assert offsets == [0, synced]
    assert list(leveldb_log.Reader(path, dialect="pebble")) == [b"a", b"b"]


@pytest.mark.parametrize(
    "kw",
    [
        {"dialect": "rocksdb", "recycle": True},
        {"dialect": "rocksdb", "compression": "zstd"},
        {"dialect": "pebble", "sync_offsets": True},
    ],
)
def test_a_reader_follows_a_growing_log_in_every_dialect(
    tmp_path: Path, kw: dict[str, Any]
) -> None:
    path = tmp_path / "000031.log"
    got: list[bytes] = []
    with leveldb_log.Writer(path, buffering=0, **kw) as w:
        with leveldb_log.Reader(path, dialect=kw["dialect"], recovery="absolute") as r:
            for i, rec in enumerate(RECORDS):
                w.write(rec)
                got += list(r)  # what is there so far, then the end for now
                assert got == RECORDS[: i + 1]
            w.close()  # (Pebble's trailer: the end for good)
            assert list(r) == []
