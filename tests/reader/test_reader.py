"""Tests of leveldb_log.Reader (docs/api.md, "Reader"): sources (paths, bytes-like objects,
mmap, file objects, pipes and FIFOs), iteration, properties and lifecycle, following a growing
log, bad input and threads.

Expected reading results come from the reference model (tests/support/model.py).
"""

from __future__ import annotations

import errno
import io
import mmap
import os
import pickle
import struct
import threading

import pytest
from leveldb_log import (
    BLOCK_SIZE,
    HEADER_SIZE,
    Corruption,
    Reader,
    TruncatedRecordError,
    Writer,
)
from support import model
from support.child import assert_passes_in_a_child
from support.files import read_file, write_raw
from support.records import MIXED_SIZES, records_of
from support.threads import run_threads
from support.warned import READS_DAMAGE

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def append_raw(path, data):
    with open(path, "ab") as f:
        f.write(data)


class FailingSource(io.RawIOBase):
    """A readable source that serves `data` up to `fail_at`, then raises."""

    def __init__(self, data, fail_at):
        self.data = data
        self.pos = 0
        self.fail_at = fail_at
        self.exc = OSError(errno.EIO, "test source broke")

    def readable(self):
        return True

    def seekable(self):
        return False

    def readinto(self, b):
        if self.pos >= self.fail_at:
            raise self.exc
        n = min(len(b), self.fail_at - self.pos, len(self.data) - self.pos)
        b[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n


# ---------------------------------------------------------------------------
# Reader: sources
# ---------------------------------------------------------------------------


@pytest.fixture
def sample_log():
    recs = records_of(MIXED_SIZES)
    data, offsets = model.encode(recs)
    return recs, data, offsets


def test_reader_over_str_and_pathlib_paths(tmp_path, sample_log):
    recs, data, _ = sample_log
    p = tmp_path / "r.log"
    write_raw(p, data)
    assert list(Reader(str(p))) == recs
    assert list(Reader(p)) == recs


def test_reader_missing_path_raises_file_not_found_at_construction(tmp_path):
    with pytest.raises(FileNotFoundError):
        Reader(tmp_path / "missing.log")
    with pytest.raises(FileNotFoundError):
        Reader(str(tmp_path / "no" / "such" / "dir.log"))


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "memoryview-slice"])
def test_reader_over_bytes_like_sources(sample_log, kind):
    recs, data, _ = sample_log
    if kind == "bytes":
        src = data
    elif kind == "bytearray":
        src = bytearray(data)
    elif kind == "memoryview":
        src = memoryview(data)
    else:
        src = memoryview(b"JUNK" + data + b"")[4:]
    assert list(Reader(src)) == recs


def test_reader_over_mmap_releases_it_when_closed(tmp_path, sample_log):
    recs, data, _ = sample_log
    p = tmp_path / "m.log"
    write_raw(p, data)
    with open(p, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    r = Reader(mm)
    assert next(r) == recs[0]
    with pytest.raises(BufferError):
        mm.close()  # still exported to the reader
    r.close()
    mm.close()  # released now
    assert mm.closed


def test_reader_over_mmap_reads_all_records(tmp_path, sample_log):
    recs, data, _ = sample_log
    p = tmp_path / "m.log"
    write_raw(p, data)
    with open(p, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    assert list(Reader(mm)) == recs
    mm.close()


def test_reader_releases_bytearray_on_close(sample_log):
    recs, data, _ = sample_log
    ba = bytearray(data)
    r = Reader(ba)
    assert next(r) == recs[0]
    with pytest.raises(BufferError):
        ba.extend(b"x")
    r.close()
    ba.extend(b"x")  # resizable again
    del ba[-1]


def test_reader_releases_bytearray_when_exhausted(sample_log):
    recs, data, _ = sample_log
    ba = bytearray(data)
    r = Reader(ba)
    assert list(r) == recs
    ba.extend(b"x")  # no export left
    assert ba[:-1] == data
    r.close()


def test_reader_releases_memoryview_when_exhausted(sample_log):
    recs, data, _ = sample_log
    mv = memoryview(bytearray(data))
    r = Reader(mv)
    assert next(r) == recs[0]
    with pytest.raises(BufferError):
        mv.release()
    assert list(r) == recs[1:]
    mv.release()


def test_reader_over_bytesio(sample_log):
    recs, data, offsets = sample_log
    r = Reader(io.BytesIO(data))
    got = [(rec, r.last_record_offset) for rec in r]
    assert got == list(zip(recs, offsets, strict=True))


def test_reader_over_file_object_positioned_at_k_holds_log_from_k(sample_log):
    recs, data, offsets = sample_log
    k = 12345
    bio = io.BytesIO(b"\xee" * k + data)
    bio.seek(k)
    r = Reader(bio)
    got = [(rec, r.last_record_offset) for rec in r]
    assert got == list(zip(recs, offsets, strict=True))  # offsets relative to k


def test_reader_over_file_object_with_start_seeks(sample_log):
    _, data, offsets = sample_log
    for start in (1, offsets[5], offsets[7] + 1, BLOCK_SIZE, 70000):
        expected = model.read(data, start=start)
        r = Reader(io.BytesIO(data), start=start)
        got = [(rec, r.last_record_offset) for rec in r]
        assert got == [(x.data, x.offset) for x in expected.records]
        assert expected.records  # a meaningful range


def test_reader_over_open_binary_file(tmp_path, sample_log):
    recs, data, _ = sample_log
    p = tmp_path / "f.log"
    write_raw(p, data)
    with open(p, "rb") as f:
        assert list(Reader(f)) == recs
        assert not f.closed
    with open(p, "rb", buffering=0) as f:
        with Reader(f) as r:
            assert list(r) == recs
        assert not f.closed


@pytest.mark.parametrize("start", [0, 1, 5000, BLOCK_SIZE, 40000, 150000])
def test_reader_over_pipe_with_start_reads_and_discards(sample_log, start):
    _, data, _ = sample_log
    rfd, wfd = os.pipe()

    def feed():
        with open(wfd, "wb", buffering=0) as sink:
            sink.write(data)

    t = threading.Thread(target=feed)
    t.start()
    try:
        with open(rfd, "rb", buffering=0) as src:
            assert not src.seekable()
            r = Reader(src, start=start)
            got = [(rec, r.last_record_offset) for rec in r]
    finally:
        t.join(10)
    expected = model.read(data, start=start)
    assert got == [(x.data, x.offset) for x in expected.records]


@pytest.mark.parametrize("start", [0, 5000, 40000])
def test_reader_over_fifo_path_reads_in_order(tmp_path, sample_log, start):
    _, data, _ = sample_log
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as sink:
            sink.write(data)

    t = threading.Thread(target=feed)
    t.start()
    try:
        r = Reader(fifo, start=start)  # blocks in open() until the writer opens
        got = [(rec, r.last_record_offset) for rec in r]
        r.close()
    finally:
        t.join(10)
    expected = model.read(data, start=start)
    assert got == [(x.data, x.offset) for x in expected.records]


def test_reader_file_object_read_error_propagates_original_exception(sample_log):
    recs, data, _ = sample_log
    src = FailingSource(data, fail_at=BLOCK_SIZE + 100)
    r = Reader(src)
    got = []
    with pytest.raises(OSError) as info:
        for rec in r:
            got.append(rec)
    assert info.value is src.exc
    assert got == recs[: len(got)]


# ---------------------------------------------------------------------------
# Reader: iteration, properties, lifecycle
# ---------------------------------------------------------------------------


def test_reader_last_record_offset_is_none_before_first_record(sample_log):
    recs, data, offsets = sample_log
    r = Reader(data)
    assert r.last_record_offset is None
    for i, rec in enumerate(r):
        assert rec == recs[i]
        assert r.last_record_offset == offsets[i]
    assert r.last_record_offset == offsets[-1]


def test_reader_is_an_iterator(sample_log):
    recs, data, _ = sample_log
    r = Reader(data)
    assert iter(r) is r
    assert next(r) == recs[0]
    assert next(r) == recs[1]
    assert list(r) == recs[2:]
    with pytest.raises(StopIteration):
        next(r)


def test_reader_dropped_bytes_totals_corruptions(sample_log):
    _, data, offsets = sample_log
    damaged = bytearray(data)
    damaged[offsets[2] + HEADER_SIZE + 3] ^= 1
    damaged[offsets[9] + HEADER_SIZE + 3] ^= 1
    expected = model.read(bytes(damaged))
    reports = []
    r = Reader(bytes(damaged), on_corruption=reports.append)
    assert r.dropped_bytes == 0
    assert list(r) == expected.payloads
    assert r.dropped_bytes == expected.dropped_bytes > 0
    assert [tuple(c) for c in reports] == [
        (c.offset, c.size, c.reason) for c in expected.corruptions
    ]
    assert all(isinstance(c, Corruption) for c in reports)


@READS_DAMAGE
def test_reader_verify_checksums_false_returns_record_with_wrong_crc():
    data, offsets = model.encode([b"alpha", b"bravo", b"charlie"])
    damaged = bytearray(data)
    damaged[offsets[1] + HEADER_SIZE] = ord("B")  # payload changed, CRC not
    assert list(Reader(bytes(damaged))) == [b"alpha"]
    r = Reader(bytes(damaged), verify_checksums=False)
    assert r.verify_checksums is False
    assert list(r) == [b"alpha", b"Bravo", b"charlie"]


def test_reader_properties(tmp_path):
    p = tmp_path / "props.log"
    write_raw(p, model.encode([b"x"])[0])
    r = Reader(p)
    assert (r.recovery, r.start, r.end, r.closed, r.verify_checksums) == (
        "skip",
        0,
        None,
        False,
        True,
    )
    for mode in ("skip", "tolerate_tail", "point_in_time", "absolute"):
        r2 = Reader(p, recovery=mode, start=3, end=99)
        assert (r2.recovery, r2.start, r2.end) == (mode, 3, 99)
        r2.close()
        assert r2.closed
    r.close()
    assert r.closed


def test_reader_close_is_idempotent_and_iterating_closed_raises_value_error(sample_log):
    _, data, _ = sample_log
    r = Reader(data)
    next(r)
    assert r.close() is None
    assert r.close() is None
    assert r.closed
    with pytest.raises(ValueError):
        next(r)
    with pytest.raises(ValueError):
        iter(r)
    with pytest.raises(ValueError):
        list(r)
    with pytest.raises(ValueError):
        with r:
            pass


def test_reader_close_releases_path_descriptor(tmp_path, sample_log):
    _, data, _ = sample_log
    p = tmp_path / "fd.log"
    write_raw(p, data)
    before = set(os.listdir("/proc/self/fd"))
    r = Reader(p)
    next(r)
    assert len(set(os.listdir("/proc/self/fd")) - before) == 1
    r.close()
    assert set(os.listdir("/proc/self/fd")) - before == set()


def test_reader_context_manager(sample_log, tmp_path):
    recs, data, _ = sample_log
    p = tmp_path / "cm.log"
    write_raw(p, data)
    with Reader(p) as r:
        assert isinstance(r, Reader)
        assert next(r) == recs[0]
    assert r.closed
    with pytest.raises(ValueError):
        next(r)


def test_reader_repr(tmp_path):
    p = tmp_path / "repr.log"
    write_raw(p, b"")
    r = Reader(str(p))
    assert "Reader" in repr(r) and str(p) in repr(r)
    r.close()
    assert "closed" in repr(r)
    assert "bytes" in repr(Reader(b""))
    assert "BytesIO" in repr(Reader(io.BytesIO()))


def test_reader_pickling_over_buffer_or_file_object_raises_type_error(sample_log):
    _, data, _ = sample_log
    for src in (data, bytearray(data), memoryview(data), io.BytesIO(data)):
        r = Reader(src)
        with pytest.raises(TypeError):
            pickle.dumps(r)
        r.close()


def test_reader_over_path_pickles_and_resumes_where_it_was(tmp_path, sample_log):
    recs, data, offsets = sample_log
    p = tmp_path / "pk.log"
    write_raw(p, data)
    r = Reader(p, recovery="tolerate_tail")
    for _ in range(5):
        next(r)
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.recovery == "tolerate_tail"
    assert r2.last_record_offset == offsets[4]
    got = [(rec, r2.last_record_offset) for rec in r2]
    assert got == list(zip(recs[5:], offsets[5:], strict=True))
    assert list(r) == recs[5:]  # the original goes on independently
    r.close()
    r2.close()


def test_reader_on_corruption_callback_exception_propagates(sample_log):
    recs, data, offsets = sample_log
    damaged = bytearray(data)
    damaged[offsets[3] + HEADER_SIZE + 1] ^= 0x80

    class Boom(Exception):
        pass

    def cb(c):
        raise Boom(c)

    r = Reader(bytes(damaged), on_corruption=cb)
    got = []
    with pytest.raises(Boom) as info:
        for rec in r:
            got.append(rec)
    assert got == recs[:3]
    assert info.value.args[0].offset == offsets[3]


def test_reader_on_corruption_called_for_torn_tail_in_absolute_mode():
    data, offsets = model.encode([b"a", b"b" * 100])
    torn = data[:-10]
    reports = []
    r = Reader(torn, recovery="absolute", on_corruption=reports.append)
    with pytest.raises(TruncatedRecordError) as info:
        list(r)
    assert len(reports) == 1
    assert reports[0].offset == offsets[1] == info.value.offset
    assert info.value.size == reports[0].size == len(torn) - offsets[1]
    assert info.value.reason == reports[0].reason


# ---------------------------------------------------------------------------
# Reader: following a growing log
# ---------------------------------------------------------------------------


def test_reader_follows_log_appended_by_another_writer(tmp_path):
    p = tmp_path / "grow.log"
    with Writer(p) as w:
        w.write_many([b"one", b"two"])
    r = Reader(p)
    assert list(r) == [b"one", b"two"]
    assert list(r) == []
    with Writer(p, "a") as w:
        w.write_many([b"three", b"x" * 50000])
    assert list(r) == [b"three", b"x" * 50000]
    with Writer(p, "a", buffering=0) as w:
        for i in range(5):
            w.write(b"live%d" % i)
            assert list(r) == [b"live%d" % i]
    assert list(r) == []
    r.close()


def test_reader_follows_raw_appends_across_blocks(tmp_path):
    p = tmp_path / "grow.log"
    write_raw(p, b"")
    r = Reader(p)
    assert list(r) == []
    everything = []
    for step in range(6):
        recs = records_of([100, 20000, 33000, 0, 7][: step + 1], b"s%d" % step)
        enc, offsets = model.encode(recs, start=os.path.getsize(p))
        append_raw(p, enc)
        got = []
        for rec in r:
            got.append((rec, r.last_record_offset))
        assert got == list(zip(recs, offsets, strict=True))
        everything += recs
    r.close()
    assert list(Reader(p)) == everything


def _growing_case(size_before, record_size):
    old = records_of([size_before], b"old") if size_before else []
    data, _ = model.encode(old)
    new = b"N" * record_size
    enc, offsets = model.encode([new], start=len(data))
    return old, data, new, enc, offsets[0]


CUTS = [1, 3, 6, 7, 8, "half", -1]


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize(
    "size_before,record_size",
    [
        (100, 200),  # small record inside block 0
        (32700, 300),  # the new record starts after a trailer
        (100, 70000),  # a fragmented record
        (0, 100000),
    ],
)
def test_reader_incomplete_tail_is_not_consumed_until_complete_path(
    tmp_path, cut, size_before, record_size
):
    old, data, new, enc, offset = _growing_case(size_before, record_size)
    cut = len(enc) // 2 if cut == "half" else (len(enc) - 1 if cut == -1 else cut)
    p = tmp_path / "tail.log"
    write_raw(p, data)
    r = Reader(p)
    assert list(r) == old
    append_raw(p, enc[:cut])
    assert list(r) == []
    assert list(r) == []  # asking again changes nothing
    append_raw(p, enc[cut:])
    got = [(rec, r.last_record_offset) for rec in r]
    assert got == [(new, offset)]
    append_raw(p, model.encode([b"after"], start=len(data) + len(enc))[0])
    assert list(r) == [b"after"]
    r.close()


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("size_before,record_size", [(100, 200), (100, 70000)])
def test_reader_incomplete_tail_is_not_consumed_until_complete_file_object(
    tmp_path, cut, size_before, record_size
):
    old, data, new, enc, offset = _growing_case(size_before, record_size)
    cut = len(enc) // 2 if cut == "half" else (len(enc) - 1 if cut == -1 else cut)
    p = tmp_path / "tail.log"
    write_raw(p, data)
    with open(p, "rb") as src:
        r = Reader(src)
        assert list(r) == old
        append_raw(p, enc[:cut])
        assert list(r) == []
        append_raw(p, enc[cut:])
        got = [(rec, r.last_record_offset) for rec in r]
        assert got == [(new, offset)]
        r.close()
        assert not src.closed


def test_reader_file_object_follows_growing_log(tmp_path):
    p = tmp_path / "fo.log"
    write_raw(p, model.encode([b"a", b"b" * 40000])[0])
    with open(p, "rb", buffering=0) as src:
        r = Reader(src)
        assert list(r) == [b"a", b"b" * 40000]
        with Writer(p, "a") as w:
            w.write_many([b"c" * 60000, b"d"])
        assert list(r) == [b"c" * 60000, b"d"]
        assert list(r) == []


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("source", [123, None, 1.5, object(), [b"x"]])
def test_reader_rejects_unsupported_source(source):
    with pytest.raises(TypeError):
        Reader(source)


@pytest.mark.parametrize(
    "kwargs,exc",
    [
        ({"recovery": 1}, TypeError),
        ({"recovery": None}, TypeError),
        ({"recovery": "bogus"}, ValueError),
        ({"recovery": "SKIP"}, ValueError),
        ({"start": -1}, ValueError),
        ({"start": "x"}, TypeError),
        ({"start": 1.0}, TypeError),
        ({"end": -1}, ValueError),
        ({"end": "x"}, TypeError),
        ({"on_corruption": 5}, TypeError),
        ({"no_such_option": 1}, TypeError),
    ],
)
def test_reader_rejects_bad_options(tmp_path, kwargs, exc):
    p = tmp_path / "bad.log"
    write_raw(p, model.encode([b"x"])[0])
    with pytest.raises(exc):
        Reader(p, **kwargs)
    with pytest.raises(exc):
        Reader(b"", **kwargs)


def test_reader_options_are_keyword_only():
    with pytest.raises(TypeError):
        Reader(b"", "skip")


def test_reader_directory_path_raises_is_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError):
        list(Reader(tmp_path))


# ---------------------------------------------------------------------------
# Threads
# ---------------------------------------------------------------------------


def _shared_reader_record(i):
    return struct.pack("<I", i) + b"r" * ((i * 53) % 900 + (30000 if i % 997 == 0 else 0))


def _reader_threads_body(path, source_kind):
    n = 20000
    recs = [_shared_reader_record(i) for i in range(n)]
    with Writer(path) as w:
        w.write_many(recs)
    source = path if source_kind == "path" else read_file(path)
    r = Reader(source)
    results = run_threads(lambda k: list(r), 4)
    everything = [struct.unpack_from("<I", rec)[0] for res in results for rec in res]
    assert sorted(everything) == list(range(n))  # every record exactly once
    for res in results:
        ids = [struct.unpack_from("<I", rec)[0] for rec in res]
        assert ids == sorted(ids)  # each thread sees them in log order
        for rec in res:
            assert rec == recs[struct.unpack_from("<I", rec)[0]]
    r.close()


@pytest.mark.parametrize("source_kind", ["path", "bytes"])
def test_reader_shared_by_threads_delivers_every_record_once(tmp_path, source_kind):
    assert_passes_in_a_child(
        "test_reader", "_reader_threads_body", str(tmp_path / "shared.log"), source_kind
    )
