"""Differential properties: the C extension against the reference model (tests/support/model.py).

Writing: Writer output (bytes, offsets, position) equals model.encode, from any starting length.
Reading: Reader output (records, last_record_offset, on_corruption reports, errors,
dropped_bytes) equals model.read, for every kind of source, any chunking of a file
object, any range [start, end), every recovery mode, checksums on and off.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import pathlib
from collections.abc import Iterator
from typing import Any, NamedTuple

import leveldb_log
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from support import model
from support.damage import soup_bytes, soup_ops
from support.logs import as_log, clean_logs, damaged_logs, draw_range, offsets_strategy
from support.profiles import differential
from support.reading import MODES, Outcome, assert_reader_contract, assert_same, c_read, model_read
from support.records import (
    B,
    H,
    encode_sizes,
    filler_sizes,
    layout,
    make_records,
    size_lists,
)
from support.warned import READS_DAMAGE


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tmp_path_factory.mktemp("differential")


# ---------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------


class ChunkedRaw(io.RawIOBase):
    """A raw stream whose readinto returns at most `chunk` bytes per call."""

    def __init__(self, data: bytes, chunk: int, seekable: bool) -> None:
        self._data = bytes(data)
        self._pos = 0
        self._chunk = chunk
        self._seekable = seekable
        self.calls = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._seekable

    def readinto(self, b: Any) -> int:
        self.calls += 1
        n = max(0, min(len(b), self._chunk, len(self._data) - self._pos))
        b[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n

    def seek(self, offset: int, whence: int = 0) -> int:
        if not self._seekable:
            raise io.UnsupportedOperation("seek")
        base = {0: 0, 1: self._pos, 2: len(self._data)}[whence]
        self._pos = base + offset
        return self._pos

    def tell(self) -> int:
        if not self._seekable:
            raise io.UnsupportedOperation("tell")
        return self._pos


SOURCE_KINDS = [
    "bytes",
    "bytearray",
    "memoryview",
    "mmap",
    "str-path",
    "pathlib-path",
    "file-object",
    "bytesio",
]


@contextlib.contextmanager
def source_of(kind: str, data: bytes, workdir: pathlib.Path) -> Iterator[Any]:
    path = workdir / "source.log"
    if kind in ("mmap", "str-path", "pathlib-path", "file-object"):
        path.write_bytes(data)
    if kind == "bytes":
        yield bytes(data)
    elif kind == "bytearray":
        yield bytearray(data)
    elif kind == "memoryview":
        yield memoryview(bytearray(data))
    elif kind == "mmap":
        assume(len(data) > 0)  # a file of length 0 cannot be mapped
        with open(path, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                yield mm
            finally:
                mm.close()  # BufferError if the reader still held the buffer
    elif kind == "str-path":
        yield str(path)
    elif kind == "pathlib-path":
        yield path
    elif kind == "file-object":
        with open(path, "rb") as f:
            yield f
    elif kind == "bytesio":
        yield io.BytesIO(data)
    else:  # pragma: no cover
        raise AssertionError(kind)


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------

WRAPS = {"bytes": bytes, "bytearray": bytearray, "memoryview": memoryview}
BUFFERINGS = st.sampled_from([-1, 0, 1, 100, 4096, 40000, 1 << 20])


class Written(NamedTuple):
    """What writing the records showed: write()'s offsets ([] with write_many), write_many's
    count (None with write), the position after each write() (after write_many: once), and, with
    a sink, what the target held after each write()."""

    offsets: list[int]
    count: int | None
    tells: list[int]
    sunk: list[bytes] | None


def write_all(
    w: leveldb_log.Writer, records: list[bytes], wrap: str, how: str, sink: Any | None = None
) -> Written:
    """Writes records with write() or write_many(), each wrapped in WRAPS[wrap]."""
    if how == "write_many":
        count = w.write_many(WRAPS[wrap](r) for r in records)
        return Written([], count, [w.position], None)
    offsets, tells, sunk = [], [], []
    for rec in records:
        offsets.append(w.write(WRAPS[wrap](rec)))
        tells.append(w.position)
        if sink is not None:
            sunk.append(sink())
    return Written(offsets, None, tells, sunk if sink is not None else None)


def should_write(
    how: str,
    records: list[bytes],
    offsets: list[int],
    tells: list[int],
    start: int = 0,
    unbuffered_data: bytes | None = None,
) -> Written:
    """What write_all must show: write() returns each record's offset and the position its end,
    and an unbuffered target (buffering=0) holds the log up to that end at once;
    write_many returns the count, and the position the last end (`start` when none)."""
    if how == "write_many":
        return Written([], len(records), [tells[-1] if tells else start], None)
    sunk = None if unbuffered_data is None else [unbuffered_data[: t - start] for t in tells]
    return Written(offsets, None, tells, sunk)


@differential()
@given(
    clean=clean_logs(),
    buffering=BUFFERINGS,
    wrap=st.sampled_from(sorted(WRAPS)),
    how=st.sampled_from(["write", "write_many"]),
)
def test_writer_to_bytesio_produces_model_bytes_offsets_and_position(clean, buffering, wrap, how):
    log, records = clean
    lay = layout(records)
    expected, offsets = model.encode(records)
    assert (lay.data, lay.offsets) == (expected, offsets)
    f = io.BytesIO()
    w = leveldb_log.Writer(f, buffering=buffering)
    assert w.position == 0
    sink = f.getvalue if buffering == 0 and how == "write" else None
    written = write_all(w, records, wrap, how, sink)
    data = expected if sink else None
    assert written == should_write(how, records, offsets, lay.tells, unbuffered_data=data)
    w.flush()
    assert f.getvalue() == expected
    w.close()
    w.close()  # idempotent
    assert not f.closed  # not ours to close
    assert f.getvalue() == expected == log


@differential()
@given(
    clean=clean_logs(),
    buffering=BUFFERINGS,
    wrap=st.sampled_from(sorted(WRAPS)),
    how=st.sampled_from(["write", "write_many"]),
    mode=st.sampled_from(["w", "x"]),
    pathtype=st.sampled_from([str, pathlib.Path]),
)
def test_writer_to_path_produces_model_bytes_offsets_and_position(
    workdir, clean, buffering, wrap, how, mode, pathtype
):
    _, records = clean
    lay = layout(records)
    path = workdir / "written.log"
    path.write_bytes(b"old contents to be truncated" * 100)
    if mode == "x":
        path.unlink()
    with leveldb_log.Writer(pathtype(path), mode, buffering=buffering) as w:
        sink = path.read_bytes if buffering == 0 and how == "write" else None
        written = write_all(w, records, wrap, how, sink)
        data = lay.data if sink else None
        assert written == should_write(how, records, lay.offsets, lay.tells, unbuffered_data=data)
    assert path.read_bytes() == lay.data


# Where a log may end inside its last block: anywhere but 1..6 (a record never ends there).
TAILS = st.none() | st.sampled_from([0, 7, 8, *range(32754, 32768)]) | st.integers(7, B - 1)


@st.composite
def prefix_logs(draw: Any) -> Any:
    """A valid log (records, bytes) whose length lands anywhere in a block, including
    its last 7 bytes (where the next record starts with padding or an empty header)."""
    sizes = draw(size_lists(max_size=4, max_total=3 * B))
    salt = draw(st.integers(0, 9))
    records = make_records(sizes, salt)
    tail = draw(TAILS)
    if tail is not None:
        length = len(model.encode(records)[0])
        records += make_records(filler_sizes(length, tail), salt + 50)
    data = model.encode(records)[0]
    if tail is not None:
        assert len(data) % B == tail
    return records, as_log(data, f"records {sizes} salt {salt} tail {tail}")


@differential()
@given(
    prefix=prefix_logs(),
    second=size_lists(max_size=5, max_total=2 * B),
    buffering=BUFFERINGS,
    how=st.sampled_from(["write", "write_many"]),
    target=st.sampled_from(["append-mode path", "file object at its end", "bytesio at its end"]),
)
def test_writes_resume_at_any_log_length(workdir, prefix, second, buffering, how, target):
    first_records, first = prefix
    second_records = make_records(second, 77)
    lay = layout(second_records, start=len(first))
    expected_tail, expected_offsets = model.encode(second_records, start=len(first))
    assert (lay.data, lay.offsets) == (expected_tail, expected_offsets)
    path = workdir / "appended.log"
    path.write_bytes(first)
    if target == "append-mode path":
        with leveldb_log.Writer(path, "a", buffering=buffering) as w:
            assert w.position == len(first)
            written = write_all(w, second_records, "bytes", how)
        tells, start = lay.tells, len(first)
        result = path.read_bytes()
    else:
        # A file object holds a log from its position: what it holds before is a prefix,
        # whatever its length, and the log's offsets count from there (as a Reader's do).
        own = layout(second_records)
        f = open(path, "r+b") if target == "file object at its end" else io.BytesIO(first)
        with f:
            f.seek(0, os.SEEK_END)
            with leveldb_log.Writer(f, buffering=buffering) as w:
                assert w.position == 0
                written = write_all(w, second_records, "bytes", how)
            assert not f.closed
            f.seek(len(first))
            assert list(leveldb_log.Reader(f, recovery="absolute")) == second_records
            f.seek(0)
            result = f.read()
        expected_tail, expected_offsets = own.data, own.offsets
        tells, start = own.tells, 0
    assert written == should_write(how, second_records, expected_offsets, tells, start)
    assert result == first + expected_tail
    if target != "append-mode path":
        return  # (the log after the prefix was read back from the object above)
    # and the whole reads back as one clean log, even in absolute mode
    out = c_read(result, recovery="absolute")
    assert_reader_contract(out)
    assert out.records == first_records + second_records
    assert out.offsets == model.encode(first_records)[1] + expected_offsets
    assert out.corruptions == [] and out.error is None


# ---------------------------------------------------------------------------
# reading from every kind of source
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SOURCE_KINDS)
@differential(0.3)
@given(clean=clean_logs(), recovery=st.sampled_from(MODES))
def test_reader_returns_records_and_offsets_from_every_source_kind(workdir, kind, clean, recovery):
    log, records = clean
    lay = layout(records)
    with source_of(kind, log, workdir) as source:
        out = c_read(source, recovery=recovery)
        assert_reader_contract(out)
    assert out.records == records
    assert out.offsets == lay.offsets
    assert out.corruptions == [] and out.error is None and out.dropped_bytes == 0
    assert_same(out, model_read(log, recovery=recovery))


@READS_DAMAGE
@pytest.mark.parametrize("kind", SOURCE_KINDS)
@differential(0.2)
@given(log=damaged_logs(), recovery=st.sampled_from(MODES), verify=st.booleans(), data=st.data())
def test_reader_matches_model_on_damaged_logs_from_every_source_kind(
    workdir, kind, log, recovery, verify, data
):
    start, end = draw_range(data.draw, log) if data.draw(st.booleans()) else (0, None)
    kw = dict(recovery=recovery, verify_checksums=verify, start=start, end=end)
    with source_of(kind, log, workdir) as source:
        out = c_read(source, **kw)
        assert_reader_contract(out)
    assert_same(out, model_read(log, **kw), kw)


CHUNKS = st.integers(1, 70000) | st.sampled_from(
    [1, 2, 3, 6, 7, 8, 4095, 4096, 32767, 32768, 32769, 65536, 70000]
)


@READS_DAMAGE
@pytest.mark.parametrize("seekable", [True, False], ids=["seekable", "non-seekable"])
@differential(0.5)
@given(
    log=damaged_logs() | clean_logs().map(lambda c: c[0]),
    chunk=CHUNKS,
    recovery=st.sampled_from(MODES),
    verify=st.booleans(),
    skip=st.integers(0, 40),
    data=st.data(),
)
def test_file_object_read_in_any_chunk_size_matches_model(
    seekable, log, chunk, recovery, verify, skip, data
):
    start, end = draw_range(data.draw, log) if data.draw(st.booleans()) else (0, None)
    kw = dict(recovery=recovery, verify_checksums=verify, start=start, end=end)
    # the stream holds `skip` unrelated bytes first: the log starts at its position
    stream = ChunkedRaw(b"\xff" * skip + log, chunk, seekable)
    consumed = b""
    while len(consumed) < skip:
        consumed += stream.read(skip - len(consumed))
    assert consumed == b"\xff" * skip
    out = c_read(stream, **kw)
    assert_reader_contract(out)
    assert_same(out, model_read(log, **kw), kw)
    if log and (start, end) == (0, None):
        assert stream.calls > 0  # it was read through readinto


# ---------------------------------------------------------------------------
# ranges
# ---------------------------------------------------------------------------


def read_cuts(source: Any, cuts: list[int], **kw: Any) -> list[Outcome]:
    bounds = list(zip(cuts, [*cuts[1:], None], strict=True))
    return [c_read(source, start=s, end=e, **kw) for s, e in bounds]


@differential(0.6)
@given(
    clean=clean_logs(max_total=5 * B),
    recovery=st.sampled_from(MODES),
    as_path=st.booleans(),
    data=st.data(),
)
def test_cutting_a_clean_log_anywhere_returns_every_record_once_and_no_corruption(
    workdir, clean, recovery, as_path, data
):
    log, records = clean
    lay = layout(records)
    n = len(log)
    near_records = [o + d for o in lay.offsets for d in (-1, 0, 1) if 0 <= o + d <= n]
    points = data.draw(
        st.lists(
            offsets_strategy(log)
            | (st.sampled_from(near_records) if near_records else st.integers(0, n)),
            max_size=8,
        )
    )
    cuts = sorted({0, n, *points})
    source: Any = log
    if as_path:
        source = workdir / "cut.log"
        source.write_bytes(log)
    parts = read_cuts(source, cuts, recovery=recovery)
    bounds = list(zip(cuts, [*cuts[1:], None], strict=True))
    for (s, e), part in zip(bounds, parts, strict=True):
        assert_reader_contract(part)
        assert part.corruptions == [] and part.error is None and part.dropped_bytes == 0
        assert part.offsets == [o for o in lay.offsets if s <= o and (e is None or o < e)]
    assert [r for p in parts for r in p.records] == records
    assert [o for p in parts for o in p.offsets] == lay.offsets


@READS_DAMAGE
@differential(0.6)
@given(log=damaged_logs(), verify=st.booleans(), data=st.data())
def test_cutting_a_damaged_log_reports_each_record_and_corruption_exactly_once(log, verify, data):
    n = len(log)
    points = data.draw(st.lists(offsets_strategy(log), max_size=8))
    cuts = sorted({0, *points})
    whole = c_read(log, verify_checksums=verify)
    assert_reader_contract(whole)
    assert_same(whole, model_read(log, verify_checksums=verify))
    parts = read_cuts(log, cuts, verify_checksums=verify)
    for part in parts:
        assert_reader_contract(part)
    assert [r for p in parts for r in p.records] == whole.records, cuts
    assert [o for p in parts for o in p.offsets] == whole.offsets, cuts
    # each report exactly once (a report about an open record comes after later bytes'
    # reports in a whole read, so the order across ranges may differ)
    assert sorted(c for p in parts for c in p.corruptions) == sorted(whole.corruptions), cuts
    assert sum(p.dropped_bytes for p in parts) == whole.dropped_bytes, cuts
    assert n == len(log)


@READS_DAMAGE
@differential(0.8)
@given(log=damaged_logs(), data=st.data())
def test_ranges_of_a_damaged_log_match_model_in_every_recovery_mode(log, data):
    for _ in range(data.draw(st.integers(1, 4))):
        start, end = draw_range(data.draw, log)
        verify = data.draw(st.booleans())
        for recovery in MODES:
            kw = dict(recovery=recovery, verify_checksums=verify, start=start, end=end)
            got = c_read(log, **kw)
            assert_reader_contract(got)
            assert_same(got, model_read(log, **kw), kw)


@READS_DAMAGE
@differential(0.5)
@given(ops=soup_ops, data=st.data())
def test_ranges_of_hand_made_physical_records_match_model_in_every_recovery_mode(ops, data):
    log = soup_bytes(ops)
    ranges = [(0, None)] + [draw_range(data.draw, log) for _ in range(data.draw(st.integers(1, 4)))]
    for start, end in ranges:
        verify = data.draw(st.booleans())
        for recovery in MODES:
            kw = dict(recovery=recovery, verify_checksums=verify, start=start, end=end)
            got = c_read(log, **kw)
            assert_reader_contract(got)
            assert_same(got, model_read(log, **kw), kw)


@READS_DAMAGE
@differential(0.5)
@given(log=damaged_logs(), recovery=st.sampled_from(MODES), data=st.data())
def test_verify_checksums_false_matches_model(log, recovery, data):
    start, end = draw_range(data.draw, log) if data.draw(st.booleans()) else (0, None)
    kw = dict(recovery=recovery, verify_checksums=False, start=start, end=end)
    got = c_read(log, **kw)
    assert_reader_contract(got)
    assert_same(got, model_read(log, **kw), kw)


@READS_DAMAGE
@differential(0.5)
@given(
    sizes=st.lists(st.integers(B - H + 1, 5 * B // 2), min_size=1, max_size=2),
    rtype=st.integers(0, 255),
    length=st.integers(0, 40) | st.integers(0, 0xFFFF),
    good_crc=st.booleans(),
    which=st.integers(0, 10),
    data=st.data(),
)
def test_range_starting_at_a_block_boundary_inside_a_fragmented_record_matches_model(
    sizes, rtype, length, good_crc, which, data
):
    """The look-back a range start needs: the header at a block start (a MIDDLE or LAST of
    an open record) replaced by any type and length, checksum valid or not; a range
    beginning at each block boundary must see what a whole read sees there."""
    log = bytearray(encode_sizes(sizes))
    starts = [
        k * B
        for k in range(1, len(log) // B + 1)
        if k * B + H <= len(log) and log[k * B + 6] in (3, 4)
    ]
    assert starts  # records of 32762 bytes and more always continue in the next block
    h = starts[which % len(starts)]
    body = bytes([rtype]) + bytes(log[h + H : h + H + length])
    crc = model.mask_crc(model.crc32c(body)) ^ (0 if good_crc else 1)
    log[h : h + H] = crc.to_bytes(4, "little") + length.to_bytes(2, "little") + bytes([rtype])
    log = bytes(log)
    verify = data.draw(st.booleans())
    for k in sorted({0, h // B - 1, h // B, h // B + 1} & set(range(len(log) // B + 1))):
        for end in (None, data.draw(st.integers(k * B, len(log) + 1))):
            for recovery in MODES:
                kw = dict(recovery=recovery, verify_checksums=verify, start=k * B, end=end)
                got = c_read(log, **kw)
                assert_reader_contract(got)
                assert_same(got, model_read(log, **kw), kw)


def test_range_starting_where_a_torn_fragmented_record_continues_reports_nothing():
    """The writer died inside the LAST header of a record begun in block 0: the torn tail
    begins at offset 0, so a range starting at block 1 has nothing to report, in any mode."""
    data = model.encode([b"x" * 40000])[0][: B + 3]
    whole = c_read(data, recovery="absolute")
    assert_reader_contract(whole)
    assert whole.error == "truncated"
    assert whole.corruptions == [(0, B + 3, "truncated header at end of file")]
    for recovery in MODES:
        kw = dict(recovery=recovery, start=B)
        out = c_read(data, **kw)
        assert_reader_contract(out)
        assert_same(out, model_read(data, **kw), kw)
        assert out.corruptions == [] and out.error is None


def test_unknown_type_at_a_block_start_inside_a_record_is_reported_once_across_a_cut_there():
    data = (
        model.encode_physical(model.FIRST, b"a" * (B - H))
        + model.encode_physical(9, b"xyz")
        + model.encode_physical(model.FULL, b"ok")
    )
    whole = c_read(data)
    assert_reader_contract(whole)
    assert whole.records == [b"ok"]
    assert whole.corruptions == [(0, B - H + 3, "unknown record type 9")]
    first, second = read_cuts(data, [0, B])
    assert_reader_contract(first)
    assert_reader_contract(second)
    assert first.corruptions == whole.corruptions
    assert second.records == [b"ok"] and second.corruptions == []
