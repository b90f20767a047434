"""The model's RocksDB and Pebble dialects (tests/support/model_dialects.py) against bytes built
by hand: the golden Pebble logs of tests/golden/pebble/ (made by tests/golden/make_pebble.py
from docs/rocksdb.md section 9), one hand-built log per row of the recovery table of
docs/rocksdb.md (section 6.2), the metadata records and the writers' layouts.

The cases (tests/support/dialect_cases.py) are shared with tests/dialects/test_dialects.py,
which holds the C reader to the same outcomes.
"""

from __future__ import annotations

import hashlib
import pathlib
from typing import Any

import pytest
from support import model, model_dialects
from support.dialect_cases import GOLDEN, GOLDEN_DIR, TABLE_CASES, chunk

B = model.BLOCK_SIZE
MODES = model.RECOVERY_MODES


def digest(records: list[bytes]) -> list[dict[str, Any]]:
    return [{"size": len(r), "sha256": hashlib.sha256(r).hexdigest()} for r in records]


# ---------------------------------------------------------------------------
# golden Pebble logs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GOLDEN))
@pytest.mark.parametrize("recovery", MODES)
def test_model_reads_the_golden_pebble_logs_as_expected(name: str, recovery: str) -> None:
    case = GOLDEN[name]
    data = (GOLDEN_DIR / f"{name}.log").read_bytes()
    assert len(data) == case["size"]
    want = case["modes"][recovery]
    got = model_dialects.read_dialect(
        data, dialect="pebble", recovery=recovery, log_number=case["log_number"]
    )
    assert digest(got.payloads) == want["records"]
    assert [[c.offset, c.size, c.reason] for c in got.corruptions] == want["corruptions"]
    assert got.error == want["error"]


def test_golden_pebble_files_are_what_the_script_makes(tmp_path: pathlib.Path) -> None:
    """The checked-in files are the script's output (no hand edits drift from it)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_pebble", GOLDEN_DIR.parent / "make_pebble.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, (data, _log, _modes) in mod.build().items():
        assert (GOLDEN_DIR / f"{name}.log").read_bytes() == data, name


def test_model_pebble_writer_makes_the_golden_clean_logs() -> None:
    big = (b"pebble-record " * 3000)[:40000]
    recyclable, offsets = model_dialects.encode_pebble([b"alpha", big], log_number=7, trailer=True)
    assert recyclable == (GOLDEN_DIR / "clean_recyclable.log").read_bytes()
    assert offsets == [0, 16]
    walsync, offsets = model_dialects.encode_pebble(
        [b"alpha", big], log_number=7, synced_offsets=[0, 24], trailer=True
    )
    assert walsync == (GOLDEN_DIR / "clean_walsync.log").read_bytes()
    assert offsets == [0, 24]


@pytest.mark.parametrize("walsync", [False, True])
def test_model_pebble_writer_pads_after_each_chunk(walsync: bool) -> None:
    hs = 19 if walsync else 11
    # a record leaving hs - 1 bytes in block 0: zeroed at once, before the next record
    size = B - hs - (hs - 1)
    synced = [0, 0] if walsync else None
    data, offsets = model_dialects.encode_pebble(
        [b"x" * size, b"y"], log_number=3, synced_offsets=synced
    )
    assert offsets == [0, B]
    assert data[B - (hs - 1) : B] == bytes(hs - 1)
    only, _ = model_dialects.encode_pebble([b"x" * size], log_number=3, synced_offsets=synced)
    assert len(only) == B  # the padding is written with the chunk, not before the next
    got = model_dialects.read_dialect(data, dialect="pebble", log_number=3)
    assert got.payloads == [b"x" * size, b"y"] and got.corruptions == []


# ---------------------------------------------------------------------------
# RocksDB: one hand-built log per row of docs/rocksdb.md section 6.2
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TABLE_CASES))
@pytest.mark.parametrize("recovery", MODES)
def test_model_follows_the_rocksdb_recovery_table(name: str, recovery: str) -> None:
    data, log_number, modes = TABLE_CASES[name]
    records, corruptions, error = modes[recovery]
    got = model_dialects.read_dialect(
        data, dialect="rocksdb", recovery=recovery, log_number=log_number
    )
    assert got.payloads == records
    assert [(c.offset, c.size, c.reason) for c in got.corruptions] == corruptions
    assert got.error == error
    assert got.dropped_bytes == sum(c[1] for c in corruptions)


def test_model_rocksdb_fragment_reasons_carry_the_numbered_suffixes() -> None:
    data = chunk(3, b"mm") + chunk(4, b"ll") + chunk(2, b"f1") + chunk(1, b"x")
    data += chunk(2, b"f2") + chunk(2, b"f3") + chunk(4, b"e")
    got = model_dialects.read_dialect(data, dialect="rocksdb")
    assert got.payloads == [b"x", b"f3e"]
    assert [(c.offset, c.reason) for c in got.corruptions] == [
        (0, "missing start of fragmented record(1)"),
        (9, "missing start of fragmented record(2)"),
        (18, "partial record without end(1)"),
        (35, "partial record without end(2)"),
    ]


def test_model_takes_the_log_number_from_the_first_recyclable_record() -> None:
    data = chunk(5, b"a", 41) + chunk(5, b"b", 41) + chunk(5, b"old", 40)
    got = model_dialects.read_dialect(data, dialect="rocksdb", recovery="point_in_time")
    assert (got.log_number, got.recycled, got.payloads) == (41, True, [b"a", b"b"])
    # given explicitly, every record here is old: the log ends at once
    got = model_dialects.read_dialect(data, dialect="rocksdb", log_number=7, recovery="absolute")
    assert got.payloads == [] and got.corruptions == [] and got.error is None
    # the comparison is on the low 32 bits
    got = model_dialects.read_dialect(data, dialect="rocksdb", log_number=41 + (1 << 32))
    assert got.payloads == [b"a", b"b"]


def test_model_recyclable_record_after_a_legacy_one_is_reported() -> None:
    data = chunk(1, b"a") + chunk(5, b"b", 3) + chunk(1, b"lost")
    data += bytes(B - len(data)) + chunk(1, b"c")
    got = model_dialects.read_dialect(data, dialect="rocksdb")
    assert got.payloads == [b"a", b"c"]
    assert [(c.offset, c.size, c.reason) for c in got.corruptions] == [
        (8, B - 8, "recyclable record after legacy records")
    ]


def test_model_a_range_stops_at_an_end_and_the_next_range_reads_on() -> None:
    """An old record ends the range it is in; the whole-file stream goes on after it."""
    data = chunk(5, b"a", 9) + chunk(5, b"old", 8) + chunk(5, b"d", 9)
    whole = model_dialects.read_dialect(data, dialect="rocksdb", recovery="absolute")
    assert whole.payloads == [b"a"]
    later = model_dialects.read_dialect(data, dialect="rocksdb", recovery="absolute", start=13)
    assert later.payloads == [b"d"]


# ---------------------------------------------------------------------------
# RocksDB metadata records
# ---------------------------------------------------------------------------


def test_model_metadata_records_are_exposed_not_yielded() -> None:
    data = chunk(130, model_dialects.predecessor_payload(6, 1234, 99))
    data += chunk(10, model_dialects.udt_payload([(0, 8), (3, 16)]))
    data += chunk(1, b"batch")
    data += chunk(10, model_dialects.udt_payload([(4, 8)]))
    got = model_dialects.read_dialect(data, dialect="rocksdb", recovery="absolute")
    assert got.payloads == [b"batch"] and got.corruptions == []
    assert got.predecessor == model_dialects.Predecessor(6, 1234, 99)
    assert got.timestamp_sizes == {0: 8, 3: 16, 4: 8}
    assert got.compression is None
    # the recyclable variants carry the log number
    data = chunk(131, model_dialects.predecessor_payload(6, 1, 2), 7) + chunk(11, b"", 7)
    data += chunk(5, b"x", 7)
    got = model_dialects.read_dialect(data, dialect="rocksdb")
    assert got.payloads == [b"x"] and got.predecessor == model_dialects.Predecessor(6, 1, 2)
    assert got.log_number == 7 and got.recycled


@pytest.mark.parametrize(
    "payload, reason, applied",
    [
        (b"\x00" * 5, "could not decode user-defined timestamp size record", {1: 8}),
        (model_dialects.udt_payload([(2, 8), (3, 0)]), model_dialects.R_UDT_ZERO, {1: 8, 2: 8}),
        (model_dialects.udt_payload([(2, 8), (1, 4)]), model_dialects.R_UDT_UPDATE, {1: 8, 2: 8}),
    ],
)
def test_model_timestamp_size_record_checks(payload: bytes, reason: str, applied: dict) -> None:
    data = chunk(10, model_dialects.udt_payload([(1, 8)])) + chunk(10, payload) + chunk(1, b"x")
    got = model_dialects.read_dialect(data, dialect="rocksdb")
    assert got.payloads == [b"x"]
    assert [(c.offset, c.size, c.reason) for c in got.corruptions] == [(13, len(payload), reason)]
    assert got.timestamp_sizes == applied


def test_model_set_compression_checks() -> None:
    rec9 = chunk(9, model_dialects.set_compression_payload(model_dialects.ZSTD))
    data = rec9 + chunk(1, b"x") + rec9 + chunk(9, b"\x01\x00\x00\x00")
    got = model_dialects.read_dialect(data, dialect="rocksdb", decompress=lambda b: b[::-1])
    assert got.payloads == [b"x"]  # one byte: its own reverse
    assert [(c.offset, c.reason) for c in got.corruptions] == [
        (19, "read multiple SetCompressionType records"),
        (19, "SetCompressionType not the first record"),
        (30, "read multiple SetCompressionType records"),
        (30, "SetCompressionType not the first record"),
        (30, "could not decode SetCompressionType record"),
    ]
    assert got.compression == "zstd"


def test_model_a_compression_record_that_does_not_decode_is_not_read() -> None:
    """RocksDB sets compression_type_record_read_ only when the record decodes, so a bad
    one does not make the next one a "multiple"; the payload is exactly a fixed32."""
    data = chunk(9, b"\x01\x00\x00\x00") + chunk(9, b"\x00" * 5) + chunk(9, b"\x00" * 4)
    data += chunk(1, b"x")
    got = model_dialects.read_dialect(data, dialect="rocksdb")
    assert got.payloads == [b"x"] and got.compression is None
    assert [(c.offset, c.size, c.reason) for c in got.corruptions] == [
        (0, 4, "could not decode SetCompressionType record"),
        (11, 5, "could not decode SetCompressionType record"),
    ]


def test_model_metadata_inside_a_fragmented_record_drops_it() -> None:
    data = chunk(2, b"part") + chunk(10, model_dialects.udt_payload([(1, 8)])) + chunk(4, b"end")
    got = model_dialects.read_dialect(data, dialect="rocksdb")
    assert got.payloads == []
    assert [(c.offset, c.size, c.reason) for c in got.corruptions] == [
        (0, 4, "user-defined timestamp size record interspersed partial record"),
        (24, 3, "missing start of fragmented record(2)"),
    ]


@pytest.mark.parametrize("rtype", [9, 130])
def test_model_other_metadata_end_an_open_record_even_an_empty_one(rtype: int) -> None:
    meta = (
        model_dialects.set_compression_payload(0)
        if rtype == 9
        else model_dialects.predecessor_payload(1, 2, 3)
    )
    for part in (b"part", b""):
        data = chunk(2, part) + chunk(rtype, meta) + chunk(4, b"end") + chunk(1, b"x")
        got = model_dialects.read_dialect(data, dialect="rocksdb")
        assert got.payloads == [b"x"]
        lost = 7 + len(part) + 7 + len(meta)
        assert [(c.offset, c.size, c.reason) for c in got.corruptions] == [
            (0, len(part), "error in middle of record"),
            (lost, 3, "missing start of fragmented record(2)"),
        ]


def test_model_a_range_that_reads_nothing_learns_nothing() -> None:
    data = (
        chunk(9, model_dialects.set_compression_payload(0))
        + chunk(5, b"a" * 30, 3)
        + chunk(5, b"b", 3)
    )
    got = model_dialects.read_dialect(data, dialect="rocksdb", start=20, end=20)
    assert (got.log_number, got.recycled, got.compression, got.payloads) == (None, False, None, [])
    got = model_dialects.read_dialect(data, dialect="rocksdb", start=20, end=20, log_number=3)
    assert (got.log_number, got.recycled) == (3, False)
    got = model_dialects.read_dialect(data, dialect="rocksdb", start=20, end=len(data))
    assert (got.log_number, got.recycled, got.payloads) == (3, True, [b"b"])


@pytest.mark.parametrize("size", [0, 23, 25, 48])
def test_model_a_predecessor_record_of_other_than_24_bytes_is_reported(size: int) -> None:
    data = chunk(130, b"\x01" * size) + chunk(1, b"x")
    got = model_dialects.read_dialect(data, dialect="rocksdb")
    assert got.payloads == [b"x"] and got.predecessor is None
    assert [(c.offset, c.size, c.reason) for c in got.corruptions] == [
        (0, size, "could not decode PredecessorWALInfoType record")
    ]


# ---------------------------------------------------------------------------
# RocksDB writer layouts
# ---------------------------------------------------------------------------


def test_model_rocksdb_legacy_writer_is_the_leveldb_layout() -> None:
    records = [b"", b"a" * 40000, b"b" * (B - 7)]
    for start in (0, 5, B - 7, B - 6):
        legacy = model_dialects.encode_rocksdb(records, start=start)
        assert legacy == model.encode(records, start=start)


def test_model_rocksdb_recycled_writer_by_hand() -> None:
    size = B - 11 - 10  # leaves 10 bytes: fewer than 11, zero-filled
    data, offsets = model_dialects.encode_rocksdb([b"r" * size, b"s"], log_number=77, recycle=True)
    assert data == chunk(5, b"r" * size, 77) + bytes(10) + chunk(5, b"s", 77)
    assert offsets == [0, B]
    data, offsets = model_dialects.encode_rocksdb([b"t" * B], log_number=77, recycle=True)
    assert data == chunk(6, b"t" * (B - 11), 77) + chunk(8, b"t" * 11, 77)


def test_model_rocksdb_compressed_writer_cuts_frames_into_chunks() -> None:
    """A frame is cut in chunks of 32768 - header size bytes; each chunk in fragments, so
    a fragment can end before its block does (toy transform: the record reversed)."""

    def rev(b: bytes) -> bytes:
        return b[::-1]

    record = bytes(range(256)) * 300  # 76800 bytes: chunks 32761, 32761, 11278
    data, offsets = model_dialects.encode_rocksdb([record, b""], compress=rev)
    frame = record[::-1]
    c1, c2, c3 = frame[:32761], frame[32761:65522], frame[65522:]
    want = chunk(9, model_dialects.set_compression_payload(7))  # 0..11
    want += chunk(2, c1[: B - 11 - 7], None)  # fills block 0
    want += chunk(3, c1[B - 18 :])  # the rest of chunk 1: 11 bytes at block 1's start
    want += chunk(3, c2[: B - 18 - 7])  # chunk 2 from offset 18 of block 1: fills it
    want += chunk(3, c2[B - 25 :]) + chunk(4, c3)  # block 2: 18 bytes, then chunk 3
    want += chunk(1, b"")  # an empty record: an empty FULL, no frame
    assert offsets == [11, len(want) - 7]
    assert data == want
    got = model_dialects.read_dialect(data, dialect="rocksdb", decompress=rev, recovery="absolute")
    assert got.payloads == [record, b""] and got.compression == "zstd"


def test_model_a_frame_that_does_not_decompress_is_reported() -> None:
    def strict(b: bytes) -> bytes:
        if not b.startswith(b"Z"):
            raise ValueError("not a frame")
        return b[1:]

    data = chunk(9, model_dialects.set_compression_payload(7)) + chunk(1, b"Zok") + chunk(1, b"bad")
    data += chunk(1, b"Zyes")
    got = model_dialects.read_dialect(data, dialect="rocksdb", decompress=strict)
    assert got.payloads == [b"ok", b"yes"]
    assert [(c.offset, c.size, c.reason) for c in got.corruptions] == [
        (21, 3, "could not decompress record")
    ]


# ---------------------------------------------------------------------------
# Pebble: what the golden files do not show
# ---------------------------------------------------------------------------


def test_model_pebble_old_data_is_skipped_in_skip_mode_only() -> None:
    data = chunk(5, b"a", 8) + chunk(5, b"old", 7) + chunk(5, b"b", 8)
    for mode in MODES:
        got = model_dialects.read_dialect(data, dialect="pebble", recovery=mode, log_number=8)
        assert got.payloads == ([b"a", b"b"] if mode == "skip" else [b"a"])
        assert got.corruptions == [] and got.error is None


def test_model_pebble_trailer_before_a_range_ends_nothing() -> None:
    data = chunk(5, b"a", 7) + model_dialects.pebble_trailer(7) + chunk(5, b"b", 7)
    assert model_dialects.read_dialect(data, dialect="pebble").payloads == [b"a"]
    got = model_dialects.read_dialect(data, dialect="pebble", start=13, recovery="absolute")
    assert got.payloads == [b"b"] and got.error is None


def test_model_pebble_unknown_types_and_torn_tails_are_leveldb_s() -> None:
    data = chunk(5, b"a", 7) + chunk(13, b"zz") + chunk(5, b"c", 7)
    got = model_dialects.read_dialect(data, dialect="pebble", recovery="skip")
    assert got.payloads == [b"a", b"c"]
    assert [(c.offset, c.size, c.reason) for c in got.corruptions] == [
        (12, 2, "unknown record type 13")
    ]
    # a recyclable header cut short at the end of the file: a truncated header, even with
    # 7 bytes or more of it there
    data = chunk(5, b"a", 7) + chunk(5, b"b", 7)[:9]
    got = model_dialects.read_dialect(data, dialect="pebble", recovery="absolute")
    assert got.payloads == [b"a"] and got.error == "truncated"
    assert [(c.offset, c.size, c.reason) for c in got.corruptions] == [
        (12, 9, "truncated header at end of file")
    ]
