"""RocksDB and Pebble dialects: the C reader and writer against the model
(tests/support/model_dialects.py).

Reading: every dialect and recovery mode, clean logs of every kind, hand-made streams of
physical records of every type, random damage (flips, zeroed ranges, truncation, junk) and
recycled files (old data with the previous log number after the new log's end), random
ranges [start, end); the hand-built cases of tests/dialects/test_model_dialects.py (the recovery
table of docs/rocksdb.md, section 6.2) and the golden Pebble logs.  Writing: the C writer's
bytes equal the model writer's, in every dialect.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import pathlib
from typing import Any

import leveldb_log
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import model_dialects, reading
from support.damage import damage
from support.dialect_cases import GOLDEN, GOLDEN_DIR, TABLE_CASES
from support.profiles import differential
from support.reading import MODES, Outcome, assert_reader_contract, assert_same
from support.records import B, make_records, payload, size_lists
from support.warned import READS_DAMAGE


def zstd_module() -> Any:
    """The zstd binding the extra `leveldb-log[rocksdb]` would bring, or a skip."""
    for name in ("compression.zstd", "backports.zstd"):
        try:
            return __import__(name, fromlist=["compress"])
        except ImportError:
            pass
    return pytest.importorskip("zstandard")


def zstd_decompress(frame: bytes) -> bytes:
    mod = zstd_module()
    if mod.__name__ == "zstandard":  # frames without a content size need the streaming API
        return bytes(mod.ZstdDecompressor().decompressobj().decompress(frame))
    return bytes(mod.decompress(frame))


# ---------------------------------------------------------------------------
# reading with both, in comparable form
# ---------------------------------------------------------------------------


def attrs_of(reader: Any) -> dict[str, Any]:
    pred = reader.predecessor
    return {
        "dialect": reader.dialect,
        "log_number": reader.log_number,
        "recycled": reader.recycled,
        "compression": reader.compression,
        "timestamp_sizes": dict(reader.timestamp_sizes),
        "predecessor": None if pred is None else tuple(pred),
    }


def c_read(source: Any, **kw: Any) -> tuple[Outcome, dict[str, Any]]:
    """Reads with leveldb_log.Reader: everything observable, and the attributes after."""
    out = reading.c_read(source, attrs_of=attrs_of, **kw)
    return out, out.attrs


def model_read(data: bytes, **kw: Any) -> tuple[Outcome, dict[str, Any]]:
    res = model_dialects.read_dialect(data, **kw)
    out = Outcome(
        res.payloads,
        list(res.offsets),
        [(c.offset, c.size, c.reason) for c in res.corruptions],
        res.error,
        res.dropped_bytes,
    )
    pred = res.predecessor
    attrs = {
        "dialect": kw.get("dialect", "leveldb"),
        "log_number": res.log_number,
        "recycled": res.recycled,
        "compression": res.compression,
        "timestamp_sizes": res.timestamp_sizes,
        "predecessor": None if pred is None else (pred.log_number, pred.size, pred.last_sequence),
    }
    return out, attrs


def c_and_model_reads(
    data: bytes, **kw: Any
) -> tuple[Outcome, dict[str, Any], Outcome, dict[str, Any]]:
    """The C reader's read of `data` and the model's, each with the attributes the Reader
    exposes about the log."""
    got, got_attrs = c_read(data, **kw)
    want, want_attrs = model_read(data, **kw)
    return got, got_attrs, want, want_attrs


# ---------------------------------------------------------------------------
# logs
# ---------------------------------------------------------------------------


class Log(bytes):
    """A log's bytes, with how it was made and the reading arguments it needs."""

    how: str = ""
    dialect: str = "rocksdb"
    log_number: int | None = None

    def __repr__(self) -> str:
        return f"<{self.dialect} log of {len(self)} bytes, log {self.log_number}: {self.how}>"


def as_log(data: bytes, how: str, dialect: str, log_number: int | None) -> Log:
    log = Log(data)
    log.how, log.dialect, log.log_number = how, dialect, log_number
    return log


log_numbers = st.integers(1, 10**6) | st.integers(2**32 - 2, 2**32 + 3)


@st.composite
def clean_logs(draw: Any, dialect: str | None = None) -> Log:
    dialect = dialect or draw(st.sampled_from(["rocksdb", "pebble"]))
    sizes = draw(size_lists(max_total=3 * B))
    salt = draw(st.integers(0, 9))
    records = make_records(sizes, salt)
    number = draw(log_numbers)
    if dialect == "rocksdb":
        recycle = draw(st.booleans())
        data, _ = model_dialects.encode_rocksdb(records, log_number=number, recycle=recycle)
        how = f"rocksdb records {sizes} salt {salt} recycle {recycle}"
        return as_log(data, how, dialect, number if recycle else None)
    synced = draw(st.none() | st.lists(st.integers(0, 4 * B), min_size=len(sizes)))
    trailer = draw(st.booleans())
    data, _ = model_dialects.encode_pebble(
        records, log_number=number, synced_offsets=synced, trailer=trailer
    )
    how = f"pebble records {sizes} salt {salt} synced {synced} trailer {trailer}"
    return as_log(data, how, dialect, number)


@st.composite
def recycled_logs(draw: Any) -> Log:
    """A new log written over an older one's file (same dialect, the previous log number):
    the old bytes stay after the new log's end; sometimes the new log is torn."""
    dialect = draw(st.sampled_from(["rocksdb", "pebble"]))
    number = draw(st.integers(2, 10**6))
    old_sizes = draw(size_lists(min_size=1, max_total=3 * B))
    new_sizes = draw(size_lists(max_total=2 * B))
    if dialect == "rocksdb":
        old, _ = model_dialects.encode_rocksdb(
            make_records(old_sizes, 1), log_number=number - 1, recycle=True
        )
        new, _ = model_dialects.encode_rocksdb(
            make_records(new_sizes, 2), log_number=number, recycle=True
        )
    else:
        old, _ = model_dialects.encode_pebble(make_records(old_sizes, 1), log_number=number - 1)
        new, _ = model_dialects.encode_pebble(make_records(new_sizes, 2), log_number=number)
    cut = draw(st.none() | st.integers(0, len(new)))
    if cut is not None:
        new = new[:cut]
    data = new + old[len(new) :]
    how = f"{dialect} new {new_sizes} cut {cut} over old {old_sizes}"
    return as_log(data, how, dialect, draw(st.sampled_from([number, None])))


def _soup_chunk(dialect: str, op: tuple[int, int, int, int], i: int, number: int) -> bytes:
    rtype, length, crc_ok, which_number = op
    hs = model_dialects.header_size_of(dialect, rtype)
    ln = None if hs == 7 else [number, number - 1, number + 1][which_number % 3]
    synced = None if hs != 19 else length * 1000 * which_number
    rec = bytearray(model_dialects.encode_chunk(rtype, payload(length, i), ln, synced))
    if not crc_ok:
        rec[0] ^= 0x5A
    return bytes(rec)


ROCKSDB_TYPES = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 127, 128, 130, 131, 200])
PEBBLE_TYPES = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 255])


@st.composite
def soup_logs(draw: Any) -> Log:
    """Physical records of any type of the dialect, right or wrong checksum and log number,
    metadata payloads that decode or not, zeros and junk in between."""
    dialect = draw(st.sampled_from(["rocksdb", "pebble"]))
    number = draw(st.integers(2, 1000))
    types = ROCKSDB_TYPES if dialect == "rocksdb" else PEBBLE_TYPES
    out = bytearray()
    ops = draw(
        st.lists(
            st.one_of(
                st.tuples(
                    st.just("rec"),
                    st.tuples(
                        types,
                        st.integers(0, 40) | st.integers(0, 3000) | st.sampled_from([4, 6, 24]),
                        st.integers(0, 6).map(bool),
                        st.integers(0, 8).map(lambda k: 0 if k > 2 else k),
                    ),
                ),
                st.tuples(st.just("fill"), st.tuples(types, st.integers(0, 20))),
                st.tuples(st.just("zeros"), st.integers(1, 60)),
                st.tuples(st.just("junk"), st.integers(1, 40)),
            ),
            min_size=1,
            max_size=12,
        )
    )
    for i, (kind, arg) in enumerate(ops):
        if kind == "rec":
            out += _soup_chunk(dialect, arg, i, number)
        elif kind == "fill":  # a record leaving `arg[1]` bytes in its block
            rtype, left = arg
            hs = model_dialects.header_size_of(dialect, rtype)
            space = B - len(out) % B
            if space < hs + left:
                out += bytes(space)
                space = B
            out += _soup_chunk(dialect, (rtype, space - hs - left, True, 0), i, number)
        elif kind == "zeros":
            out += bytes(arg)
        else:
            out += payload(arg, i)
    return as_log(bytes(out), f"soup {ops}", dialect, draw(st.sampled_from([number, None])))


@st.composite
def damaged_logs(draw: Any) -> Log:
    which = draw(st.integers(0, 3))
    if which == 0:
        return draw(soup_logs())
    if which == 1:
        return draw(recycled_logs())
    clean = draw(clean_logs())
    kinds = ("flip", "zero", "overwrite", "truncate", "insert")
    damaged, done, _ = damage(draw, clean, kinds=kinds)
    return as_log(damaged, f"{clean.how}, damage {done}", clean.dialect, clean.log_number)


def draw_range(draw: Any, data: bytes) -> tuple[int, int | None]:
    near = st.integers(0, len(data) // B + 1).flatmap(
        lambda k: st.integers(max(0, k * B - 20), k * B + 20)
    )
    a = draw(st.integers(0, len(data) + 2) | near)
    if draw(st.integers(0, 3)) == 0:
        return a, None
    b = draw(st.integers(0, len(data) + 2) | near)
    return (a, b) if a <= b else (b, a)


# ---------------------------------------------------------------------------
# reading: properties
# ---------------------------------------------------------------------------


@differential()
@given(log=clean_logs(), recovery=st.sampled_from(MODES))
def test_clean_logs_read_as_the_model_reads_them(log: Log, recovery: str) -> None:
    kw = {"dialect": log.dialect, "log_number": log.log_number, "recovery": recovery}
    out, attrs, model_out, model_attrs = c_and_model_reads(log, **kw)
    assert_reader_contract(out)
    assert_same(out, model_out, kw)
    assert attrs == model_attrs, kw
    assert out.corruptions == [] and out.error is None


@READS_DAMAGE
@differential()
@given(log=damaged_logs(), recovery=st.sampled_from(MODES), verify=st.booleans())
def test_damaged_logs_read_as_the_model_reads_them(log: Log, recovery: str, verify: bool) -> None:
    kw = dict(dialect=log.dialect, log_number=log.log_number, recovery=recovery)
    kw.update(verify_checksums=verify)
    out, attrs, model_out, model_attrs = c_and_model_reads(log, **kw)
    assert_reader_contract(out)
    assert_same(out, model_out, kw)
    assert attrs == model_attrs, kw


@READS_DAMAGE
@pytest.mark.parametrize("log_number", [2, None])
@pytest.mark.parametrize("end", [1, B, B + 1, None])
def test_a_range_finishing_a_record_past_its_end_claims_nothing_learnt_there(
    log_number: int | None, end: int | None
) -> None:
    # A FIRST fills block 0; block 1 opens with an older log's recyclable record. The range
    # [0, 1) reads on into block 1 to finish the open record, but the same range of a whole
    # read learns nothing there, so `recycled` stays False (Hypothesis found the difference).
    first = model_dialects.encode_chunk(2, payload(B - 7, 0))
    data = Log(first + model_dialects.encode_chunk(5, b"", log_number=0))
    data.how, data.log_number = "FIRST filling block 0, an old log's FULL", log_number
    kw = dict(dialect="rocksdb", log_number=log_number, recovery="skip", end=end)
    out, attrs, model_out, model_attrs = c_and_model_reads(data, **kw)
    assert_same(out, model_out, kw)
    assert attrs == model_attrs, kw
    assert attrs["recycled"] == (end is None or end > B)


@READS_DAMAGE
@differential()
@given(log=damaged_logs() | clean_logs(), recovery=st.sampled_from(MODES), data=st.data())
def test_ranges_read_as_the_model_reads_them(log: Log, recovery: str, data: Any) -> None:
    start, end = draw_range(data.draw, log)
    kw = dict(dialect=log.dialect, log_number=log.log_number, recovery=recovery)
    kw.update(start=start, end=end)
    out, attrs, model_out, model_attrs = c_and_model_reads(log, **kw)
    assert_reader_contract(out)
    assert_same(out, model_out, kw)
    assert attrs == model_attrs, kw


@READS_DAMAGE
@differential()
@given(log=damaged_logs() | clean_logs(), data=st.data())
def test_consecutive_ranges_read_every_record_once_in_rocksdb_skip_mode(
    log: Log, data: Any
) -> None:
    """RocksDB's skip mode has no end before EOF: cut anywhere, the ranges together read
    exactly what the whole read does (records and offsets; each range the reports that
    begin in it, in the whole read's order: one step can report a later offset first, a
    bad record before the record it cuts short)."""
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(log) + 1), max_size=4))))
    bounds = [0, *cuts, None]
    kw = dict(dialect="rocksdb", log_number=log.log_number, recovery="skip")
    whole, _ = c_read(log, **kw)
    assert_reader_contract(whole)
    parts = []
    for a, b in itertools.pairwise(bounds):
        part, _ = c_read(log, start=a, end=b, **kw)
        assert_reader_contract(part)
        inside = [c for c in whole.corruptions if c[0] >= a and (b is None or c[0] < b)]
        assert part.corruptions == inside, (a, b)
        parts.append(part)
    assert [r for p in parts for r in p.records] == whole.records
    assert [o for p in parts for o in p.offsets] == whole.offsets


# ---------------------------------------------------------------------------
# reading: hand-built cases and golden files
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TABLE_CASES))
@pytest.mark.parametrize("recovery", MODES)
def test_reader_follows_the_rocksdb_recovery_table(name: str, recovery: str) -> None:
    data, log_number, modes = TABLE_CASES[name]
    records, corruptions, error = modes[recovery]
    kw = {"dialect": "rocksdb", "recovery": recovery, "log_number": log_number}
    out, attrs, model_out, model_attrs = c_and_model_reads(data, **kw)
    assert_reader_contract(out)
    assert_same(out, model_out, kw)
    assert attrs == model_attrs, kw
    assert (out.records, out.corruptions, out.error) == (records, corruptions, error)


@pytest.mark.parametrize("name", sorted(GOLDEN))
@pytest.mark.parametrize("recovery", MODES)
def test_reader_reads_the_golden_pebble_logs_as_expected(name: str, recovery: str) -> None:
    case = GOLDEN[name]
    path = GOLDEN_DIR / f"{name}.log"
    want = case["modes"][recovery]
    kw = {"dialect": "pebble", "recovery": recovery, "log_number": case["log_number"]}
    out, attrs, model_out, model_attrs = c_and_model_reads(path.read_bytes(), **kw)
    assert_reader_contract(out)
    assert_same(out, model_out, kw)
    assert attrs == model_attrs, kw
    digests = [{"size": len(r), "sha256": hashlib.sha256(r).hexdigest()} for r in out.records]
    assert digests == want["records"]
    assert [list(c) for c in out.corruptions] == want["corruptions"]
    assert out.error == want["error"]


@READS_DAMAGE
@pytest.mark.parametrize("dialect", ["rocksdb", "pebble"])
def test_the_log_number_comes_from_the_file_name(dialect: str, tmp_path: pathlib.Path) -> None:
    """NNNNNN.log (and Pebble's NNNNNN-XXX.log segments) name the log number: the old
    data of log 41 after log 42's records is not read, whatever the first record says."""
    if dialect == "rocksdb":
        new, _ = model_dialects.encode_rocksdb([b"new"], log_number=42, recycle=True)
        old, _ = model_dialects.encode_rocksdb([b"x" * 20, b"old"], log_number=41, recycle=True)
    else:
        new, _ = model_dialects.encode_pebble([b"new"], log_number=42)
        old, _ = model_dialects.encode_pebble([b"x" * 20, b"old"], log_number=41)
    data = new + old[len(new) :]
    names = ["000042.log"] + (["000042-001.log"] if dialect == "pebble" else [])
    for name in names:
        path = tmp_path / name
        path.write_bytes(data)
        with leveldb_log.Reader(path, dialect=dialect, recovery="point_in_time") as r:
            assert list(r) == [b"new"]
            assert r.log_number == 42 and r.recycled
    # from bytes, the first recyclable record's number
    with leveldb_log.Reader(old, dialect=dialect) as r:
        assert list(r) == [b"x" * 20, b"old"] and r.log_number == 41


def test_metadata_records_are_exposed_by_the_reader() -> None:
    data = model_dialects.encode_chunk(130, model_dialects.predecessor_payload(6, 1234, 99))
    data += model_dialects.encode_chunk(10, model_dialects.udt_payload([(0, 8), (3, 16)]))
    data += model_dialects.encode_chunk(1, b"batch")
    out, attrs = c_read(data, dialect="rocksdb", recovery="absolute")
    assert_reader_contract(out)
    assert out.records == [b"batch"] and out.corruptions == []
    assert attrs["timestamp_sizes"] == {0: 8, 3: 16}
    assert attrs["predecessor"] == (6, 1234, 99)
    assert leveldb_log.DIALECTS == ("leveldb", "rocksdb", "pebble")
    kw = {"dialect": "rocksdb", "recovery": "absolute"}
    out, attrs, model_out, model_attrs = c_and_model_reads(data, **kw)
    assert_reader_contract(out)
    assert_same(out, model_out, kw)
    assert attrs == model_attrs, kw


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------


def c_write(target: Any, records: list[bytes], **kw: Any) -> list[int]:
    with leveldb_log.Writer(target, **kw) as w:
        return [w.write(r) for r in records]


@differential()
@given(sizes=size_lists(max_total=3 * B), number=log_numbers, recycle=st.booleans())
def test_rocksdb_writer_writes_what_the_model_writes(
    sizes: list[int], number: int, recycle: bool
) -> None:
    records = make_records(sizes)
    buf = io.BytesIO()
    offsets = c_write(buf, records, dialect="rocksdb", log_number=number, recycle=recycle)
    want, want_offsets = model_dialects.encode_rocksdb(records, log_number=number, recycle=recycle)
    assert buf.getvalue() == want
    assert offsets == want_offsets


@differential()
@given(sizes=size_lists(max_total=3 * B), number=log_numbers)
def test_pebble_writer_writes_what_the_model_writes(sizes: list[int], number: int) -> None:
    records = make_records(sizes)
    buf = io.BytesIO()
    offsets = c_write(buf, records, dialect="pebble", log_number=number)
    want, want_offsets = model_dialects.encode_pebble(records, log_number=number, trailer=True)
    assert buf.getvalue() == want
    assert offsets == want_offsets


def chunk_headers(data: bytes, dialect: str) -> list[tuple[int, int, int]]:
    """(offset, type, header size) of each chunk of a clean log, zero fill skipped."""
    out, p = [], 0
    while p + 7 <= len(data):
        rtype = data[p + 6]
        hs = model_dialects.header_size_of(dialect, rtype)
        if rtype == 0 or B - p % B < hs:
            p += B - p % B
            continue
        out.append((p, rtype, hs))
        p += hs + (data[p + 4] | data[p + 5] << 8)
    return out


@differential()
@given(sizes=size_lists(min_size=1, max_total=3 * B))
def test_pebble_writer_with_sync_offsets_writes_walsync_chunks(sizes: list[int]) -> None:
    """walSync chunks laid out as the model lays them, carrying an offset already written
    (the C writer's choice of which: read back from its chunks, one per record)."""
    records = make_records(sizes)
    buf = io.BytesIO()
    c_write(buf, records, dialect="pebble", log_number=5, sync_offsets=True)
    got = buf.getvalue()
    heads = chunk_headers(got, "pebble")
    assert all(9 <= t <= 12 for _, t, _ in heads[:-1]) and heads[-1][1] == 5  # trailer
    firsts = [p for p, t, _ in heads if t in (9, 10)]  # each record's first chunk
    synced = [int.from_bytes(got[p + 11 : p + 19], "little") for p in firsts]
    assert all(s <= p for s, p in zip(synced, firsts, strict=True))
    assert synced == sorted(synced)
    want, _ = model_dialects.encode_pebble(
        records, log_number=5, synced_offsets=synced, trailer=True
    )
    assert got == want


def test_writer_takes_the_log_number_from_the_file_name(tmp_path: pathlib.Path) -> None:
    records = [b"a", b"b" * 40000]
    path = tmp_path / "000077.log"
    c_write(path, records, dialect="rocksdb", recycle=True)
    assert (
        path.read_bytes() == model_dialects.encode_rocksdb(records, log_number=77, recycle=True)[0]
    )
    c_write(path, records, dialect="pebble")
    assert (
        path.read_bytes() == model_dialects.encode_pebble(records, log_number=77, trailer=True)[0]
    )
    with pytest.raises(ValueError):
        c_write(io.BytesIO(), records, dialect="rocksdb", recycle=True)
    with pytest.raises(ValueError):
        c_write(io.BytesIO(), records, dialect="pebble")


@pytest.mark.parametrize("recycle", [False, True])
def test_rocksdb_writer_appends_as_the_model_appends(recycle: bool, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "000009.log"
    first, second = make_records([100, 40000]), make_records([32760, 5, 0], 3)
    c_write(path, first, dialect="rocksdb", recycle=recycle)
    before = path.read_bytes()
    c_write(path, second, mode="a", dialect="rocksdb", recycle=recycle)
    more, _ = model_dialects.encode_rocksdb(
        second, log_number=9, recycle=recycle, start=len(before)
    )
    assert path.read_bytes() == before + more


@pytest.mark.parametrize("recycle", [False, True])
def test_rocksdb_compressed_writer_frames_as_the_model_frames(
    recycle: bool, tmp_path: pathlib.Path
) -> None:
    """One zstd frame per record (with a content checksum), cut into chunks and fragments
    as the model cuts them; the reader and the model read the records back."""
    zstd_module()
    records = [b"", b"hello " * 10, payload(70000, 1), payload(3, 2), bytes(200000)]
    path = tmp_path / "000012.log"
    c_write(path, records, dialect="rocksdb", recycle=recycle, compression="zstd")
    got = path.read_bytes()
    raw = model_dialects.read_dialect(
        got, dialect="rocksdb", decompress=lambda f: f, recovery="absolute"
    )
    assert raw.error is None and raw.compression == "zstd"
    frames = raw.payloads
    assert len(frames) == len(records)
    for frame, record in zip(frames, records, strict=True):
        if record:
            assert frame[:4] == b"\x28\xb5\x2f\xfd" and frame[4] & 0x04  # checksum flag
            assert zstd_decompress(frame) == record
        else:
            assert frame == b""
    it = iter([f for f in frames if f])  # the model compresses non-empty records only
    want, _ = model_dialects.encode_rocksdb(
        records, log_number=12, recycle=recycle, compress=lambda r: next(it)
    )
    assert got == want
    for recovery in MODES:
        c_out, attrs = c_read(path, dialect="rocksdb", recovery=recovery)
        assert_reader_contract(c_out)
        m_out, _ = model_read(
            got,
            dialect="rocksdb",
            recovery=recovery,
            log_number=12 if recycle else None,
            decompress=zstd_decompress,
        )
        assert_same(c_out, m_out, recovery)
        assert c_out.records == records and attrs["compression"] == "zstd"


# ---------------------------------------------------------------------------
# the model alone, on the same logs (these hold whatever the C core does)
# ---------------------------------------------------------------------------


@differential()
@given(log=clean_logs(), recovery=st.sampled_from(MODES))
def test_model_reads_back_every_clean_log(log: Log, recovery: str) -> None:
    sizes = [int(s) for s in log.how.split("[", 1)[1].split("]", 1)[0].split(",") if s.strip()]
    salt = int(log.how.split("salt ", 1)[1].split()[0])
    res = model_dialects.read_dialect(
        log, dialect=log.dialect, log_number=log.log_number, recovery=recovery
    )
    assert res.payloads == make_records(sizes, salt)
    assert res.corruptions == [] and res.error is None


@differential()
@given(log=damaged_logs(), recovery=st.sampled_from(MODES), data=st.data())
def test_model_ranges_keep_the_whole_reads_events_in_skip_mode(
    log: Log, recovery: str, data: Any
) -> None:
    """Consecutive ranges of the model: in RocksDB's skip mode exactly the whole read;
    in every dialect and mode, each range's records are whole-read events of that range."""
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(log) + 1), max_size=4))))
    bounds = [0, *cuts, None]
    kw = dict(dialect=log.dialect, log_number=log.log_number, recovery=recovery)
    whole = model_dialects.read_dialect(log, **kw)
    parts = [
        model_dialects.read_dialect(log, start=a, end=b, **kw)
        for a, b in itertools.pairwise(bounds)
    ]
    for part in parts:
        assert part.dropped_bytes == sum(c.size for c in part.corruptions)
        assert (part.error is None) or part.corruptions
    if log.dialect == "rocksdb" and recovery == "skip":
        assert [r for p in parts for r in p.records] == whole.records
        for (a, b), part in zip(itertools.pairwise(bounds), parts, strict=True):
            inside = [c for c in whole.corruptions if c.offset >= a and (b is None or c.offset < b)]
            assert part.corruptions == inside


def zstd_compress(data: bytes) -> bytes:
    mod = zstd_module()
    if mod.__name__ == "zstandard":
        return bytes(mod.ZstdCompressor(write_checksum=True).compress(data))
    return bytes(mod.compress(data, options={mod.CompressionParameter.checksum_flag: 1}))


@READS_DAMAGE
@differential()
@given(
    sizes=size_lists(min_size=1, max_total=3 * B),
    recycle=st.booleans(),
    recovery=st.sampled_from(MODES),
    data=st.data(),
)
def test_damaged_compressed_logs_read_as_the_model_reads_them(
    sizes: list[int], recycle: bool, recovery: str, data: Any
) -> None:
    """zstd-compressed WALs (a type-9 record, then one frame per record), damaged."""
    zstd_module()
    records = [r[: len(r) // 2] + bytes(len(r) - len(r) // 2) for r in make_records(sizes)]
    clean, _ = model_dialects.encode_rocksdb(
        records, log_number=3, recycle=recycle, compress=zstd_compress
    )
    log, done = clean, []
    if data.draw(st.booleans()):
        kinds = ("flip", "zero", "overwrite", "truncate", "insert")
        log, done, _ = damage(data.draw, clean, kinds=kinds)
    kw: dict[str, Any] = dict(dialect="rocksdb", recovery=recovery)
    got, got_attrs = c_read(log, **kw)
    assert_reader_contract(got)
    want, want_attrs = model_read(log, decompress=zstd_decompress, **kw)
    assert_same(got, want, (sizes, recycle, done))
    assert got_attrs == want_attrs
