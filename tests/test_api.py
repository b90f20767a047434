"""Tests of the public Python API of leveldb_log (API.md): Writer, Reader, checksums,
constants, errors, bad input, I/O faults and threads.

Expected bytes and reading results come from the reference model (tests/model.py).
"""

from __future__ import annotations

import errno
import io
import mmap
import os
import pickle
import resource
import struct
import subprocess
import sys
import threading

import leveldb_log
import pytest
from leveldb_log import (
    BLOCK_SIZE,
    HEADER_SIZE,
    Corruption,
    CorruptionError,
    LogError,
    Reader,
    RecordType,
    TruncatedRecordError,
    Writer,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model
from conftest import run_threads

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def records_of(sizes, tag=b""):
    """Distinct, recognisable payloads of the given sizes."""
    out = []
    for i, n in enumerate(sizes):
        head = tag + b"%05d:" % i
        body = bytes((i * 7 + j) % 251 for j in range(min(n, 251)))
        data = (head + body * (n // max(len(body), 1) + 1))[:n] if n else b""
        out.append(data)
    return out


MIXED_SIZES = [0, 1, 10, 100, 1000, 31000, 7, 40000, 5, 100000, 2, 32761, 32754, 300, 0]


def write_raw(path, data):
    with open(path, "wb") as f:
        f.write(data)


def append_raw(path, data):
    with open(path, "ab") as f:
        f.write(data)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


class FlakyRaw(io.RawIOBase):
    """A binary sink that accepts at most `limit` bytes, then raises OSError.

    It takes what fits (a short write), and raises on the next call when full.
    Setting limit to None makes it work again.
    """

    def __init__(self, limit):
        self.data = bytearray()
        self.limit = limit
        self.raised = []

    def writable(self):
        return True

    def write(self, b):
        b = bytes(b)
        room = len(b) if self.limit is None else self.limit - len(self.data)
        if room <= 0:
            exc = OSError(errno.ENOSPC, "test sink is full")
            self.raised.append(exc)
            raise exc
        self.data += b[:room]
        return min(room, len(b))


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
# Writer: modes
# ---------------------------------------------------------------------------


def test_writer_mode_w_creates_and_produces_model_bytes_and_offsets(tmp_path):
    p = tmp_path / "w.log"
    recs = records_of(MIXED_SIZES)
    with Writer(p) as w:
        offsets = [w.write(r) for r in recs]
    expected, expected_offsets = model.encode(recs)
    assert offsets == expected_offsets
    assert read_file(p) == expected


def test_writer_mode_w_truncates_existing_file(tmp_path):
    p = tmp_path / "w.log"
    write_raw(p, b"\xff" * 100000)
    with Writer(str(p), "w") as w:
        assert w.tell() == 0
        assert w.write(b"fresh") == 0
    assert read_file(p) == model.encode([b"fresh"])[0]


def test_writer_mode_x_refuses_existing_path_and_leaves_it_alone(tmp_path):
    p = tmp_path / "x.log"
    original = model.encode([b"keep me"])[0]
    write_raw(p, original)
    with pytest.raises(FileExistsError):
        Writer(p, "x")
    assert read_file(p) == original


def test_writer_mode_x_creates_missing_path(tmp_path):
    p = tmp_path / "x.log"
    with Writer(p, "x") as w:
        w.write(b"new")
    assert list(Reader(p)) == [b"new"]


def test_writer_mode_a_creates_missing_path(tmp_path):
    p = tmp_path / "a.log"
    with Writer(p, "a") as w:
        assert w.tell() == 0
        assert w.write(b"first") == 0
    assert read_file(p) == model.encode([b"first"])[0]


def _append_and_check(p, old, old_bytes, new):
    """Appends `new` with mode "a" to the log at p whose complete records are `old`
    (`old_bytes` encoded) and checks offsets, bytes, and that every complete old record
    comes back, then the new ones, even in "absolute" mode."""
    with Writer(p, "a") as w:
        assert w.tell() == len(old_bytes)
        offsets = [w.write(r) for r in new]
    new_bytes, new_offsets = model.encode(new, start=len(old_bytes))
    assert offsets == new_offsets
    assert read_file(p) == old_bytes + new_bytes
    assert list(Reader(p, recovery="absolute")) == old + new


@pytest.mark.parametrize(
    "old_sizes",
    [
        [10],
        [32768 - 7 - 3],  # log ends 3 bytes before the block end (trailer zone)
        [32768 - 7 - 7],  # exactly 7 bytes left in the block
        [32768 - 7],  # log ends on a block boundary
        [5000, 70000, 12],  # a fragmented record then a small one
        [100000],  # ends with a fragmented record
    ],
)
def test_writer_mode_a_appends_resuming_block_alignment(tmp_path, old_sizes):
    p = tmp_path / "a.log"
    old = records_of(old_sizes, b"old")
    new = records_of([0, 3, 40000, 17], b"new")
    old_bytes, _ = model.encode(old)
    with Writer(p) as w:
        w.write_many(old)
    assert os.path.getsize(p) == len(old_bytes)
    _append_and_check(p, old, old_bytes, new)


def _torn_tail(kind, start):
    if kind == "truncated header":
        return model.encode([b"h" * 50], start=start)[0][:4]
    if kind == "truncated header (1 byte)":
        return model.encode([b"h" * 50], start=start)[0][:1]
    if kind == "truncated payload":
        return model.encode([b"p" * 500], start=start)[0][:300]
    if kind == "FIRST without LAST":
        return model.encode([b"f" * 100000], start=start)[0][:70000]
    if kind == "FIRST+MIDDLE without LAST (ends on block edge)":
        enc = model.encode([b"f" * 200000], start=start)[0]
        cut = (BLOCK_SIZE - start % BLOCK_SIZE) + 2 * BLOCK_SIZE
        return enc[:cut]
    if kind == "zero fill 100 KB":
        return bytes(100 * 1024)
    if kind == "zero fill, whole blocks":
        return bytes((BLOCK_SIZE - start % BLOCK_SIZE) + 2 * BLOCK_SIZE)
    if kind == "torn payload then zero fill":
        return model.encode([b"p" * 500], start=start)[0][:300] + bytes(50000)
    raise AssertionError(kind)


TORN_KINDS = [
    "truncated header",
    "truncated header (1 byte)",
    "truncated payload",
    "FIRST without LAST",
    "FIRST+MIDDLE without LAST (ends on block edge)",
    "zero fill 100 KB",
    "zero fill, whole blocks",
]


@pytest.mark.parametrize("kind", TORN_KINDS)
@pytest.mark.parametrize("old_sizes", [[], [100, 200, 300], [3000] * 20, [50, 70000]])
def test_writer_mode_a_cuts_torn_tail_or_zero_fill_back_to_last_complete_record(
    tmp_path, kind, old_sizes
):
    p = tmp_path / "torn.log"
    old = records_of(old_sizes, b"old")
    old_bytes, _ = model.encode(old)
    write_raw(p, old_bytes + _torn_tail(kind, len(old_bytes)))
    new = records_of([10, 0, 50000, 20], b"new")
    _append_and_check(p, old, old_bytes, new)


@pytest.mark.parametrize("old_sizes", [[], [100, 200, 300], [3000] * 20])
def test_writer_mode_a_cuts_a_record_torn_inside_zero_fill_back(tmp_path, old_sizes):
    # A crash inside preallocated space leaves a torn record followed by zeros,
    # which readers see as a checksum mismatch; "a" recognizes it as a crash
    # (only a torn tail once the zeros are set aside) and cuts it back, so the
    # log reads back cleanly in "absolute" mode.
    p = tmp_path / "torn_in_zeros.log"
    old = records_of(old_sizes, b"old")
    old_bytes, _ = model.encode(old)
    torn = model.encode([b"p" * 500], start=len(old_bytes))[0][:300]
    original = old_bytes + torn + bytes(50000)
    write_raw(p, original)
    assert model.read(original).corruptions  # damage to a reader, as it stands
    new = records_of([10, 0, 50000, 20], b"new")
    with Writer(p, "a") as w:
        offsets = [w.write(r) for r in new]
    assert offsets == model.encode(new, start=len(old_bytes))[1]
    assert read_file(p) == old_bytes + model.encode(new, start=len(old_bytes))[0]
    assert list(Reader(p, recovery="absolute")) == old + new


def test_writer_mode_a_keeps_a_record_whose_payload_ends_in_zeros(tmp_path):
    # Setting trailing zeros aside must never cut into a complete record.
    p = tmp_path / "zeros_in_payload.log"
    old = [b"a" * 10, b"b" + bytes(70000)]
    old_bytes, _ = model.encode(old)
    write_raw(p, old_bytes + model.encode([b"c" * 900], start=len(old_bytes))[0][:200])
    with Writer(p, "a") as w:
        w.write(b"new")
    assert list(Reader(p, recovery="absolute")) == [*old, b"new"]


def test_writer_mode_a_on_file_of_only_zeros_starts_at_zero(tmp_path):
    p = tmp_path / "zeros.log"
    write_raw(p, bytes(100 * 1024))
    with Writer(p, "a") as w:
        assert w.write(b"first") == 0
    assert list(Reader(p, recovery="absolute")) == [b"first"]


def test_writer_mode_a_with_damage_near_tail_starts_new_records_at_block_boundary(tmp_path):
    p = tmp_path / "damaged.log"
    old = records_of([3000] * 40, b"old")  # about 3.7 blocks
    old_bytes, old_offsets = model.encode(old)
    victim = 38  # in the last block, followed by complete records in that block
    damaged = bytearray(old_bytes)
    damaged[old_offsets[victim] + HEADER_SIZE + 10] ^= 0x5A  # flip a payload byte
    damaged += model.encode([b"t" * 500], start=len(damaged))[0][:100]  # torn tail
    write_raw(p, bytes(damaged))
    new = records_of([10, 40000, 0, 7], b"new")
    with Writer(p, "a") as w:
        offsets = [w.write(r) for r in new]
    assert offsets[0] % BLOCK_SIZE == 0
    assert offsets[0] > old_offsets[victim]
    # The damage itself is left untouched.
    data = read_file(p)
    assert data[: len(old_bytes)] == bytes(damaged[: len(old_bytes)])
    reports = []
    got = list(Reader(p, recovery="skip", on_corruption=reports.append))
    assert got == old[:victim] + new
    assert reports and reports[0].offset == old_offsets[victim]
    assert reports[0].reason == "checksum mismatch"
    # The new records never share a block with damage.
    assert all(c.offset // BLOCK_SIZE < offsets[0] // BLOCK_SIZE for c in reports)


def test_writer_mode_a_with_early_damage_and_torn_tail_new_records_read_back(tmp_path):
    p = tmp_path / "damaged.log"
    old = records_of([3000] * 40, b"old")
    old_bytes, old_offsets = model.encode(old)
    victim = 3  # block 0
    damaged = bytearray(old_bytes)
    damaged[old_offsets[victim] + HEADER_SIZE + 10] ^= 0x5A
    damaged += model.encode([b"t" * 500], start=len(damaged))[0][:100]
    write_raw(p, bytes(damaged))
    new = records_of([10, 40000, 0, 7], b"new")
    with Writer(p, "a") as w:
        offsets = [w.write(r) for r in new]
    reports = []
    got = list(Reader(p, recovery="skip", on_corruption=reports.append))
    expected_old = model.read(bytes(damaged)).payloads
    assert got == expected_old + new
    assert reports[0].offset == old_offsets[victim]
    assert all(c.offset // BLOCK_SIZE < offsets[0] // BLOCK_SIZE for c in reports)


# ---------------------------------------------------------------------------
# Writer: buffering, flush, sync, tell
# ---------------------------------------------------------------------------


def test_writer_buffering_0_hands_every_record_to_os_before_write_returns(tmp_path):
    p = tmp_path / "unbuf.log"
    recs = records_of([5, 0, 300, 70000, 12, 200000, 33, 32761], b"u")
    follower = None
    with Writer(p, buffering=0) as w:
        follower = Reader(p)
        for r in recs:
            w.write(r)
            assert os.path.getsize(p) == w.tell()
            # A second reader sees the record while the writer is still open.
            assert list(follower) == [r]
    follower.close()
    assert read_file(p) == model.encode(recs)[0]


def test_writer_default_buffering_keeps_small_records_until_flush(tmp_path):
    p = tmp_path / "buf.log"
    recs = records_of([100] * 10, b"b")
    with Writer(p) as w:
        for r in recs:
            w.write(r)
        assert os.path.getsize(p) == 0
        assert w.tell() == len(model.encode(recs)[0])
        assert list(Reader(p)) == []
        w.flush()
        assert os.path.getsize(p) == w.tell()
        assert list(Reader(p)) == recs
        w.write(b"more")
        assert os.path.getsize(p) == w.tell() - HEADER_SIZE - 4
    assert list(Reader(p)) == [*recs, b"more"]


def test_writer_default_buffering_flushes_on_its_own_once_the_buffer_fills(tmp_path):
    p = tmp_path / "buf.log"
    with Writer(p) as w:
        for i in range(200):
            w.write(b"%04d" % i + b"x" * 996)
        # 200 KB written through a default (small) buffer: most of it is out.
        assert os.path.getsize(p) > 100000
        assert os.path.getsize(p) <= w.tell()


@pytest.mark.parametrize("n", [1, 100, 1000, 5000])
def test_writer_buffering_n_flushes_when_about_n_bytes_are_buffered(tmp_path, n):
    p = tmp_path / "bufn.log"
    flushed_at = 0
    with Writer(p, buffering=n) as w:
        for i in range(300):
            w.write(b"r%d" % i + b"." * (i % 37))
            pending = w.tell() - flushed_at
            if pending >= n:
                flushed_at = w.tell()
            assert os.path.getsize(p) == flushed_at
        final = w.tell()
    assert os.path.getsize(p) == final


def test_writer_large_buffering_holds_a_large_record(tmp_path):
    p = tmp_path / "big.log"
    with Writer(p, buffering=1_000_000) as w:
        w.write(b"z" * 150000)
        assert os.path.getsize(p) == 0
        assert w.tell() == len(model.encode([b"z" * 150000])[0])
    assert list(Reader(p)) == [b"z" * 150000]


def test_writer_tell_includes_buffered_bytes(tmp_path):
    p = tmp_path / "tell.log"
    recs = records_of(MIXED_SIZES)
    with Writer(p) as w:
        assert w.tell() == 0
        for i, r in enumerate(recs):
            w.write(r)
            assert w.tell() == len(model.encode(recs[: i + 1])[0])


def test_writer_flush_hands_bytes_to_file_object(tmp_path):
    bio = io.BytesIO()
    w = Writer(bio)
    w.write(b"abc")
    assert bio.getvalue() == b""
    w.flush()
    assert bio.getvalue() == model.encode([b"abc"])[0]
    w.close()


def test_writer_sync_on_path(tmp_path):
    p = tmp_path / "sync.log"
    with Writer(p) as w:
        w.write(b"durable")
        assert w.sync() is None
        assert os.path.getsize(p) == w.tell()
        assert list(Reader(p)) == [b"durable"]


def test_writer_sync_on_file_object_with_fileno(tmp_path):
    p = tmp_path / "sync.log"
    with open(p, "wb") as f:
        w = Writer(f)
        w.write(b"durable")
        w.sync()
        # flushed through the file object's own buffer too
        assert os.path.getsize(p) == w.tell()
        w.close()
        assert not f.closed


def test_writer_sync_on_bytesio_raises_unsupported_operation_after_flushing():
    bio = io.BytesIO()
    w = Writer(bio)
    w.write(b"abc")
    with pytest.raises(io.UnsupportedOperation):
        w.sync()
    # sync flushes first: the record reached the object
    assert bio.getvalue() == model.encode([b"abc"])[0]
    w.write(b"def")  # the writer is still usable
    w.close()
    assert list(Reader(bio.getvalue())) == [b"abc", b"def"]


# ---------------------------------------------------------------------------
# Writer: write, write_many, close, repr, pickling, targets
# ---------------------------------------------------------------------------


def test_writer_write_returns_record_offsets_matching_reader(tmp_path):
    p = tmp_path / "off.log"
    recs = records_of(MIXED_SIZES)
    with Writer(p) as w:
        offsets = [w.write(r) for r in recs]
    r = Reader(p)
    seen = []
    for rec in r:
        seen.append((r.last_record_offset, rec))
    assert seen == list(zip(offsets, recs, strict=True))


def test_writer_write_many_accepts_generator_and_returns_count(tmp_path):
    p = tmp_path / "many.log"
    with Writer(p) as w:
        assert w.write_many(b"g%d" % i for i in range(1000)) == 1000
        assert w.write_many([]) == 0
        assert w.write_many(iter(())) == 0
    assert list(Reader(p)) == [b"g%d" % i for i in range(1000)]


def test_writer_write_many_accepts_bytearray_and_memoryview_items(tmp_path):
    p = tmp_path / "many.log"
    big = bytearray(b"m" * 70000)
    items = [
        bytearray(b"ba"),
        memoryview(b"mv-bytes"),
        memoryview(b"0123456789")[2:5],
        big,
        b"",
        memoryview(big),
    ]
    with Writer(p) as w:
        assert w.write_many(items) == len(items)
        assert w.write(bytearray(b"one")) is not None
        assert isinstance(w.write(memoryview(b"two")), int)
    assert list(Reader(p)) == [bytes(x) for x in items] + [b"one", b"two"]


def test_writer_write_many_generator_error_keeps_earlier_records(tmp_path):
    p = tmp_path / "gen.log"

    def gen():
        yield b"a"
        yield b"b"
        raise KeyError("boom")

    with Writer(p) as w:
        with pytest.raises(KeyError):
            w.write_many(gen())
        w.write(b"c")
    assert list(Reader(p)) == [b"a", b"b", b"c"]


def test_writer_context_manager_closes_and_returns_self(tmp_path):
    p = tmp_path / "cm.log"
    with Writer(p) as w:
        assert isinstance(w, Writer)
        w.write(b"x")
        assert not w.closed
    assert w.closed
    assert list(Reader(p)) == [b"x"]


def test_writer_context_manager_closes_on_exception(tmp_path):
    p = tmp_path / "cm.log"
    with pytest.raises(RuntimeError):
        with Writer(p) as w:
            w.write(b"before")
            raise RuntimeError("inside")
    assert w.closed
    assert list(Reader(p)) == [b"before"]


def test_writer_close_is_idempotent(tmp_path):
    p = tmp_path / "close.log"
    w = Writer(p)
    w.write(b"x")
    assert w.close() is None
    assert w.close() is None
    assert w.closed
    assert list(Reader(p)) == [b"x"]


@pytest.mark.parametrize(
    "call",
    [
        lambda w: w.write(b"x"),
        lambda w: w.write_many([b"x"]),
        lambda w: w.flush(),
        lambda w: w.sync(),
        lambda w: w.tell(),
        lambda w: w.__enter__(),
    ],
)
def test_writer_use_after_close_raises_value_error(tmp_path, call):
    p = tmp_path / "closed.log"
    w = Writer(p)
    w.write(b"kept")
    w.close()
    with pytest.raises(ValueError):
        call(w)
    assert list(Reader(p)) == [b"kept"]


def test_writer_does_not_close_file_object_it_did_not_open():
    bio = io.BytesIO()
    with Writer(bio) as w:
        w.write(b"x")
    assert not bio.closed
    assert list(Reader(bio.getvalue())) == [b"x"]
    w2 = Writer(bio, closefd=False)
    w2.close()
    assert not bio.closed


def test_writer_closefd_true_closes_file_object(tmp_path):
    f = open(tmp_path / "cfd.log", "wb")
    w = Writer(f, closefd=True)
    w.write(b"x")
    w.close()
    assert f.closed
    assert list(Reader(tmp_path / "cfd.log")) == [b"x"]


def test_writer_repr_mentions_target_and_state(tmp_path):
    p = tmp_path / "repr.log"
    w = Writer(str(p))
    text = repr(w)
    assert "Writer" in text and str(p) in text
    w.close()
    assert str(p) in repr(w) and "closed" in repr(w)
    bio = io.BytesIO()
    assert "BytesIO" in repr(Writer(bio))


def test_writer_pickling_raises_type_error(tmp_path):
    with Writer(tmp_path / "p.log") as w:
        with pytest.raises(TypeError):
            pickle.dumps(w)
    w2 = Writer(io.BytesIO())
    with pytest.raises(TypeError):
        pickle.dumps(w2)


def test_writer_and_reader_accept_pathlike(tmp_path):
    class MyPath:
        def __init__(self, p):
            self.p = p

        def __fspath__(self):
            return self.p

    p = tmp_path / "pl.log"
    with Writer(p) as w:
        w.write(b"pathlib")
    with Writer(MyPath(str(p)), "a") as w:
        w.write(b"fspath")
    assert list(Reader(p)) == [b"pathlib", b"fspath"]
    assert list(Reader(MyPath(str(p)))) == [b"pathlib", b"fspath"]


def test_writer_file_object_resumes_alignment_at_its_position():
    existing, _ = model.encode(records_of([32700], b"e"))
    bio = io.BytesIO(existing)
    bio.seek(0, io.SEEK_END)
    new = records_of([100, 40000], b"n")
    with Writer(bio) as w:
        assert w.tell() == len(existing)
        offsets = [w.write(r) for r in new]
    enc, exp_offsets = model.encode(new, start=len(existing))
    assert offsets == exp_offsets
    assert bio.getvalue() == existing + enc


def test_writer_non_seekable_pipe_target_starts_at_zero_and_round_trips():
    rfd, wfd = os.pipe()
    received = bytearray()

    def drain():
        with open(rfd, "rb", buffering=0) as src:
            while True:
                chunk = src.read(65536)
                if not chunk:
                    return
                received.extend(chunk)

    t = threading.Thread(target=drain)
    t.start()
    recs = records_of([10, 0, 50000, 32761, 3], b"pipe")
    try:
        with open(wfd, "wb", buffering=0) as sink:
            w = Writer(sink)
            assert w.tell() == 0
            offsets = [w.write(r) for r in recs]
            w.close()
            assert not sink.closed
    finally:
        t.join(10)
    assert not t.is_alive()
    enc, exp_offsets = model.encode(recs)
    assert offsets == exp_offsets
    assert bytes(received) == enc
    assert list(Reader(bytes(received))) == recs


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


@pytest.mark.parametrize("target", [123, None, 1.5, object(), [b"x"]])
def test_writer_rejects_non_path_non_file_target(target):
    with pytest.raises(TypeError):
        Writer(target)


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


@pytest.mark.parametrize(
    "kwargs,exc",
    [
        ({"mode": "r"}, ValueError),
        ({"mode": "wb"}, ValueError),
        ({"mode": ""}, ValueError),
        ({"mode": 1}, TypeError),
        ({"buffering": -5}, ValueError),
        ({"buffering": -2}, ValueError),
        ({"buffering": "x"}, TypeError),
        ({"buffering": 1.5}, TypeError),
    ],
)
def test_writer_rejects_bad_options(tmp_path, kwargs, exc):
    p = tmp_path / "bad.log"
    with pytest.raises(exc):
        Writer(p, **kwargs)
    assert not p.exists()  # nothing was created


def test_writer_buffering_is_keyword_only(tmp_path):
    with pytest.raises(TypeError):
        Writer(tmp_path / "k.log", "w", 0)


def test_writer_mode_other_than_w_rejected_for_file_object():
    with pytest.raises(ValueError):
        Writer(io.BytesIO(), "a")


@pytest.mark.parametrize("bad", ["str", None, 5, 1.5, [b"x"], object()])
def test_writer_write_rejects_non_bytes_like(tmp_path, bad):
    p = tmp_path / "wb.log"
    with Writer(p) as w:
        w.write(b"before")
        with pytest.raises(TypeError):
            w.write(bad)
        assert w.tell() == len(model.encode([b"before"])[0])
        w.write(b"after")
    assert list(Reader(p)) == [b"before", b"after"]


def test_writer_write_many_bad_item_keeps_earlier_records(tmp_path):
    p = tmp_path / "wm.log"
    with Writer(p) as w:
        with pytest.raises(TypeError):
            w.write_many([b"a", 5])
        assert w.tell() == len(model.encode([b"a"])[0])
    assert list(Reader(p)) == [b"a"]
    with Writer(p, buffering=0) as w:
        with pytest.raises(TypeError):
            w.write_many([b"a", b"b", "c", b"d"])
        assert list(Reader(p)) == [b"a", b"b"]  # already handed to the OS


def test_writer_write_many_rejects_non_iterable(tmp_path):
    with Writer(tmp_path / "ni.log") as w:
        with pytest.raises(TypeError):
            w.write_many(5)
        with pytest.raises(TypeError):
            w.write_many(None)


def test_writer_directory_path_raises_is_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError):
        Writer(tmp_path)
    with pytest.raises(IsADirectoryError):
        Writer(tmp_path, "a")


def test_reader_directory_path_raises_is_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError):
        list(Reader(tmp_path))


@pytest.mark.parametrize("mode", ["w", "x", "a"])
def test_writer_file_in_missing_directory_raises_file_not_found(tmp_path, mode):
    with pytest.raises(FileNotFoundError):
        Writer(tmp_path / "missing" / "f.log", mode)


def test_writer_unwritable_device_raises_oserror_unbuffered():
    w = Writer("/dev/full", buffering=0)
    with pytest.raises(OSError) as info:
        w.write(b"x" * 10)
    assert info.value.errno == errno.ENOSPC
    w.close()  # the record of a write() that raised is not kept back for later
    assert w.closed
    w.close()  # idempotent


def test_writer_unwritable_device_raises_oserror_on_flush():
    w = Writer("/dev/full")
    w.write(b"buffered")  # nothing reaches the OS yet
    with pytest.raises(OSError) as info:
        w.flush()
    assert info.value.errno == errno.ENOSPC
    with pytest.raises(OSError):
        w.close()
    assert w.closed


def _write_until_fault(w, make_record, buffering, is_fault):
    ok, all_recs = [], []
    i = 0
    while True:
        r = make_record(i)
        i += 1
        all_recs.append(r)
        try:
            w.write(r)
            ok.append(r)
            if buffering != 0:
                w.flush()
        except OSError as e:
            assert is_fault(e)
            return ok, all_recs, r
        assert i < 10000, "the fault never happened"


def _check_after_fault(got, ok, failed, later, all_recs):
    # every record whose write (and flush) returned comes back, in order
    assert got[: len(ok)] == ok
    # then, at most, the record that was being written when the fault hit
    middle = got[len(ok) : len(got) - len(later)]
    if ok and ok[-1] is failed:  # write returned, the flush after it failed
        assert middle == []
    else:
        assert middle in ([], [failed])
    # then every record written after the target recovered
    assert got[len(got) - len(later) :] == later
    # nothing that was not written
    assert all(g in all_recs or g in later for g in got)


def _sized(i):
    sizes = [10, 300, 100000, 5000, 70000, 0, 32761, 40000]
    return b"%06d" % i + bytes([i % 256]) * sizes[i % len(sizes)]


@pytest.mark.parametrize("buffering", [0, -1, 1000])
@pytest.mark.parametrize("limit", [5, 1000, 33000, 70000, 150000, 250000, 400003])
def test_writer_file_object_fault_mid_write_propagates_and_log_recovers(buffering, limit):
    sink = FlakyRaw(limit)
    w = Writer(sink, buffering=buffering)
    ok, all_recs, failed = _write_until_fault(w, _sized, buffering, lambda e: e is sink.raised[-1])
    assert len(sink.raised) == 1  # the original exception instance propagated
    # What the target holds now is a log a reader recovers from.
    now = list(Reader(bytes(sink.data)))
    if buffering == 0:
        assert now == ok  # each returned write was handed to the target
    else:
        assert now == ok[: len(now)] and len(now) >= len(ok) - 1
    # The target works again: the writer keeps going.
    sink.limit = None
    later = [b"later%02d" % j + b"." * (j * 997 % 5000) for j in range(30)]
    for r in later:
        w.write(r)
    w.close()
    assert not sink.closed
    got = list(Reader(bytes(sink.data), recovery="skip"))
    _check_after_fault(got, ok, failed, later, all_recs)


@pytest.mark.parametrize("buffering", [0, -1])
@pytest.mark.parametrize("limit", [5, 1000, 33000, 70000, 150000, 250000])
def test_writer_path_os_error_mid_write_propagates_and_log_recovers(tmp_path, buffering, limit):
    # RLIMIT_FSIZE makes write(2) fail with EFBIG past `limit` bytes (Python
    # ignores SIGXFSZ), which exercises the descriptor path, GIL released.
    p = tmp_path / "fsize.log"
    w = Writer(p, buffering=buffering)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        ok, all_recs, failed = _write_until_fault(
            w, _sized, buffering, lambda e: e.errno == errno.EFBIG
        )
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    now = list(Reader(p))
    if buffering == 0:
        assert now == ok
    else:
        assert now == ok[: len(now)] and len(now) >= len(ok) - 1
    later = [b"later%02d" % j + b"." * (j * 997 % 5000) for j in range(30)]
    for r in later:
        w.write(r)
    w.close()
    got = list(Reader(p, recovery="skip"))
    _check_after_fault(got, ok, failed, later, all_recs)


def test_writer_fault_exception_is_the_original_instance():
    class Custom(OSError):
        pass

    class Sink(io.RawIOBase):
        def __init__(self):
            self.exc = Custom(errno.EIO, "custom")

        def writable(self):
            return True

        def write(self, b):
            raise self.exc

    sink = Sink()
    w = Writer(sink, buffering=0)
    with pytest.raises(Custom) as info:
        w.write(b"x")
    assert info.value is sink.exc
    w.close()  # nothing kept back: the record of a write() that raised is dropped
    assert w.closed
    w2 = Writer(sink)
    w2.write(b"x")
    with pytest.raises(Custom) as info:
        w2.flush()
    assert info.value is sink.exc
    with pytest.raises(Custom):
        w2.close()
    assert w2.closed


# ---------------------------------------------------------------------------
# Checksums, constants, errors
# ---------------------------------------------------------------------------


def test_crc32c_known_values():
    assert leveldb_log.crc32c(b"123456789") == 0xE3069283
    assert leveldb_log.crc32c(b"") == 0
    assert leveldb_log.crc32c(b"\x00" * 32) == 0x8A9136AA
    assert leveldb_log.crc32c(b"\xff" * 32) == 0x62A8AB43


@pytest.mark.parametrize("n", [0, 1, 3, 7, 8, 15, 16, 63, 64, 1000, 4097, 70000])
def test_crc32c_matches_model_for_bytes_like_types(n):
    data = bytes((i * 131 + 7) % 256 for i in range(n))
    expected = model.crc32c(data)
    assert leveldb_log.crc32c(data) == expected
    assert leveldb_log.crc32c(bytearray(data)) == expected
    assert leveldb_log.crc32c(memoryview(data)) == expected
    assert leveldb_log.crc32c(data=data, value=0) == expected


def test_crc32c_chunked_continuation_matches_whole():
    data = bytes((i * 97 + 3) % 256 for i in range(100000))
    whole = leveldb_log.crc32c(data)
    assert whole == model.crc32c(data)
    for cuts in ([1], [7, 8, 9], [65535, 65536], [3, 50000, 99999]):
        value = 0
        prev = 0
        for c in [*cuts, len(data)]:
            value = leveldb_log.crc32c(memoryview(data)[prev:c], value)
            prev = c
        assert value == whole
    assert leveldb_log.crc32c(b"456789", leveldb_log.crc32c(b"123")) == 0xE3069283
    assert leveldb_log.crc32c(b"abc", 12345) == model.crc32c(b"abc", 12345)


def test_crc32c_rejects_non_bytes_like():
    for bad in ("str", None, 5, [1, 2]):
        with pytest.raises(TypeError):
            leveldb_log.crc32c(bad)
    with pytest.raises(TypeError):
        leveldb_log.crc32c(b"x", "1")
    with pytest.raises(TypeError):
        leveldb_log.crc32c(b"x", 1.0)


@pytest.mark.parametrize("value", [-1, 2**32, 2**32 + 5, 2**64, 2**64 + 5, -(2**64) + 1])
def test_crc32c_value_out_of_32_bits_raises_value_error(value):
    with pytest.raises(ValueError):
        leveldb_log.crc32c(b"abc", value)


def test_mask_unmask_are_inverse_and_match_model():
    values = [
        0,
        1,
        0x7FFF,
        0x8000,
        0xA282EAD8,
        0xDEADBEEF,
        0xFFFFFFFF,
        *(model.crc32c(b"%d" % i) for i in range(200)),
    ]
    for v in values:
        m = leveldb_log.mask_crc(v)
        assert m == model.mask_crc(v)
        assert leveldb_log.unmask_crc(m) == v
        assert leveldb_log.mask_crc(leveldb_log.unmask_crc(v)) == v
        assert 0 <= m < 2**32
    # reference bytes: FULL b"foo" stores masked crc 0x7ab35fdd
    assert leveldb_log.mask_crc(leveldb_log.crc32c(b"\x01foo")) == 0x7AB35FDD


@pytest.mark.parametrize("func", ["mask_crc", "unmask_crc"])
def test_mask_unmask_range_and_type_errors(func):
    f = getattr(leveldb_log, func)
    for bad in (-1, 2**32, 2**64, 2**100, -(2**64)):
        with pytest.raises(ValueError):
            f(bad)
    for bad in (1.0, "1", None, b"\x01"):
        with pytest.raises(TypeError):
            f(bad)


def test_constants_and_record_types():
    assert BLOCK_SIZE == 32768
    assert HEADER_SIZE == 7
    import enum

    assert issubclass(RecordType, enum.IntEnum)
    assert [(m.name, m.value) for m in RecordType] == [
        ("ZERO", 0),
        ("FULL", 1),
        ("FIRST", 2),
        ("MIDDLE", 3),
        ("LAST", 4),
    ]
    assert RecordType(1) is RecordType.FULL
    assert RecordType.LAST == 4


def test_exception_hierarchy_and_corruption_tuple():
    assert issubclass(LogError, Exception)
    assert issubclass(CorruptionError, LogError)
    assert issubclass(CorruptionError, ValueError)
    assert issubclass(TruncatedRecordError, CorruptionError)
    e = CorruptionError(5, 6, "checksum mismatch")
    assert (e.offset, e.size, e.reason) == (5, 6, "checksum mismatch")
    c = Corruption(1, 2, "bad record length")
    assert c._fields == ("offset", "size", "reason")
    assert isinstance(c, tuple)
    assert (c.offset, c.size, c.reason) == (1, 2, "bad record length")
    assert c == (1, 2, "bad record length")


def test_corruption_error_raised_by_reader_carries_details():
    data, offsets = model.encode([b"a" * 10, b"b" * 10, b"c" * 10])
    damaged = bytearray(data)
    damaged[offsets[1] + HEADER_SIZE] ^= 1
    with pytest.raises(CorruptionError) as info:
        list(Reader(bytes(damaged), recovery="tolerate_tail"))
    assert not isinstance(info.value, TruncatedRecordError)
    assert isinstance(info.value, ValueError) and isinstance(info.value, LogError)
    assert info.value.offset == offsets[1]
    assert info.value.reason == "checksum mismatch"
    assert info.value.size == len(damaged) - offsets[1]


def test_crc32c_implementation_is_a_nonempty_str():
    assert isinstance(leveldb_log.crc32c_implementation, str)
    assert leveldb_log.crc32c_implementation


# ---------------------------------------------------------------------------
# Threads
# ---------------------------------------------------------------------------


def _thread_record(tid, seq):
    size = (seq * 37 + tid * 11) % 1500
    if seq % 250 == 0:
        size = 40000 + tid
    head = struct.pack("<HI", tid, seq)
    return head + bytes([(tid * 13 + seq) % 251]) * size


def _run_isolated(body, *args, timeout=20):
    """Runs test_api.<body>(*args) in a child interpreter.

    The thread tests share one native object between threads; a crash or a
    deadlock there must fail the test, not kill or hang the whole run.
    """
    code = (
        "import faulthandler, sys\n"
        "faulthandler.enable()\n"
        f"faulthandler.dump_traceback_later({timeout - 5}, exit=True)\n"
        f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
        "import test_api\n"
        f"test_api.{body}(*{args!r})\n"
        "print('CHILD-OK')\n"
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:  # pragma: no cover - reported
        pytest.fail(f"{body}{args} hung (deadlock?): {e.stderr!s:.3000}")
    assert proc.returncode == 0 and "CHILD-OK" in proc.stdout, (
        f"{body}{args} failed in the child: returncode {proc.returncode} "
        f"(negative: killed by that signal; 1 with 'Timeout': deadlock)\n"
        f"{proc.stderr[-4000:]}"
    )


def _writer_threads_body(path, buffering):
    n_threads, per_thread = 8, 2000
    with Writer(path, buffering=buffering) as w:
        offsets = run_threads(
            lambda tid: [w.write(_thread_record(tid, seq)) for seq in range(per_thread)],
            n_threads,
        )

    r = Reader(path, recovery="absolute")
    by_offset = {}
    seen = set()
    last_seq = [-1] * n_threads
    for rec in r:
        tid, seq = struct.unpack_from("<HI", rec)
        assert rec == _thread_record(tid, seq)  # intact
        assert (tid, seq) not in seen  # exactly once
        seen.add((tid, seq))
        assert seq > last_seq[tid]  # each thread's records in its order
        last_seq[tid] = seq
        by_offset[r.last_record_offset] = (tid, seq)
    assert len(seen) == n_threads * per_thread
    assert r.dropped_bytes == 0
    for tid in range(n_threads):
        assert [by_offset[o] for o in offsets[tid]] == [(tid, s) for s in range(per_thread)]


@pytest.mark.parametrize("buffering", [-1, 0])
def test_writer_shared_by_threads_writes_every_record_once_intact(tmp_path, buffering):
    _run_isolated("_writer_threads_body", str(tmp_path / "threads.log"), buffering)


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
    _run_isolated("_reader_threads_body", str(tmp_path / "shared.log"), source_kind)


@pytest.mark.parametrize("size", [10, 40000, 200000])
def test_a_record_whose_write_raised_never_reaches_the_log_later(size):
    # Unbuffered: the flush inside write() fails, so write() raises; once the target
    # works again, that record must not turn up (a caller retrying it would get two).
    class Flaky(io.RawIOBase):
        def __init__(self):
            self.failing = False
            self.data = bytearray()

        def writable(self):
            return True

        def write(self, b):
            if self.failing:
                raise OSError(errno.EIO, "flaky")
            self.data += b
            return len(b)

    sink = Flaky()
    w = Writer(sink, buffering=0)
    w.write(b"one" * size)
    sink.failing = True
    with pytest.raises(OSError):
        w.write(b"two" * size)
    sink.failing = False
    w.write(b"three" * size)
    w.close()
    assert list(Reader(bytes(sink.data), recovery="absolute")) == [b"one" * size, b"three" * size]
