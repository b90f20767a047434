"""Tests of leveldb_log.Writer (docs/api.md, "Writer"): buffering, flush, sync and position, write
and write_many, close, repr, pickling, targets, bad input, I/O faults and threads. The modes
(w, x, and what "a" cuts back) are in tests/writer/test_writer_modes.py.

Expected bytes come from the reference model (tests/support/model.py).
"""

from __future__ import annotations

import errno
import io
import os
import pickle
import resource
import struct
import threading

import pytest
from leveldb_log import (
    HEADER_SIZE,
    Reader,
    Writer,
)
from support import model
from support.child import assert_passes_in_a_child
from support.files import read_file
from support.records import MIXED_SIZES, records_of
from support.threads import run_threads
from support.warned import READS_DAMAGE

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Writer: buffering, flush, sync, position
# ---------------------------------------------------------------------------


def test_writer_buffering_0_hands_every_record_to_os_before_write_returns(tmp_path):
    p = tmp_path / "unbuf.log"
    recs = records_of([5, 0, 300, 70000, 12, 200000, 33, 32761], b"u")
    follower = None
    with Writer(p, buffering=0) as w:
        follower = Reader(p)
        for r in recs:
            w.write(r)
            assert os.path.getsize(p) == w.position
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
        assert w.position == len(model.encode(recs)[0])
        assert list(Reader(p)) == []
        w.flush()
        assert os.path.getsize(p) == w.position
        assert list(Reader(p)) == recs
        w.write(b"more")
        assert os.path.getsize(p) == w.position - HEADER_SIZE - 4
    assert list(Reader(p)) == [*recs, b"more"]


def test_writer_default_buffering_flushes_on_its_own_once_the_buffer_fills(tmp_path):
    p = tmp_path / "buf.log"
    with Writer(p) as w:
        for i in range(200):
            w.write(b"%04d" % i + b"x" * 996)
        # 200 KB written through a default (small) buffer: most of it is out.
        assert os.path.getsize(p) > 100000
        assert os.path.getsize(p) <= w.position


@pytest.mark.parametrize("n", [1, 100, 1000, 5000])
def test_writer_buffering_n_flushes_when_about_n_bytes_are_buffered(tmp_path, n):
    p = tmp_path / "bufn.log"
    flushed_at = 0
    with Writer(p, buffering=n) as w:
        for i in range(300):
            w.write(b"r%d" % i + b"." * (i % 37))
            pending = w.position - flushed_at
            if pending >= n:
                flushed_at = w.position
            assert os.path.getsize(p) == flushed_at
        final = w.position
    assert os.path.getsize(p) == final


def test_writer_large_buffering_holds_a_large_record(tmp_path):
    p = tmp_path / "big.log"
    with Writer(p, buffering=1_000_000) as w:
        w.write(b"z" * 150000)
        assert os.path.getsize(p) == 0
        assert w.position == len(model.encode([b"z" * 150000])[0])
    assert list(Reader(p)) == [b"z" * 150000]


def test_writer_position_includes_buffered_bytes(tmp_path):
    p = tmp_path / "position.log"
    recs = records_of(MIXED_SIZES)
    with Writer(p) as w:
        assert w.position == 0
        for i, r in enumerate(recs):
            w.write(r)
            assert w.position == len(model.encode(recs[: i + 1])[0])


def test_writer_position_is_a_read_only_int_property_equal_to_the_flushed_size(tmp_path):
    # One name for "where the log goes on", as Reader.position: tell() is gone.
    p = tmp_path / "position.log"
    recs = records_of(MIXED_SIZES)
    assert not hasattr(Writer, "tell")
    assert isinstance(Writer.__dict__["position"].__doc__, str)
    with Writer(p) as w:
        assert not hasattr(w, "tell")
        w.write_many(recs[:3])
        w.flush()
        assert type(w.position) is int
        assert w.position == os.path.getsize(p) == len(model.encode(recs[:3])[0])
        with pytest.raises(AttributeError):
            w.position = 0
        with pytest.raises(AttributeError):
            del w.position
        assert w.position == os.path.getsize(p)
    with Writer(p, "a") as w:
        assert type(w.position) is int
        assert w.position == os.path.getsize(p) == len(model.encode(recs[:3])[0])
        w.write_many(recs[3:])
        w.flush()
        assert w.position == os.path.getsize(p) == len(model.encode(recs)[0])
    assert list(Reader(p)) == recs


def test_writer_flush_hands_bytes_to_file_object(tmp_path):
    bio = io.BytesIO()
    w = Writer(bio)
    w.write(b"abc")
    assert bio.getvalue() == b""
    w.flush()
    assert bio.getvalue() == model.encode([b"abc"])[0]
    w.close()


class _Keeper(io.BytesIO):
    """A file object that keeps every object write() is given."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: list[object] = []

    def write(self, b):  # type: ignore[override]
        self.kept.append(b)
        return super().write(b)


def test_writer_hands_a_file_object_that_may_keep_it_a_copy_that_stays():
    # a BytesIO or FileIO gets views of the buffer; anything else, bytes
    recs = records_of(MIXED_SIZES * 3)
    f = _Keeper()
    with Writer(f) as w:
        w.write_many(recs)
    assert all(type(b) is bytes for b in f.kept)
    assert b"".join(f.kept) == f.getvalue() == model.encode(recs)[0]


def test_writer_into_bytesio_and_fileio_writes_the_model_bytes(tmp_path):
    recs = records_of(MIXED_SIZES * 3)
    bio = io.BytesIO()
    with Writer(bio, buffering=100) as w:
        w.write_many(recs)
    with open(tmp_path / "raw.log", "wb", buffering=0) as raw:
        assert type(raw) is io.FileIO
        with Writer(raw) as w:
            w.write_many(recs)
    assert bio.getvalue() == read_file(tmp_path / "raw.log") == model.encode(recs)[0]


def test_writer_into_a_file_object_opened_for_reading_is_refused_at_once(tmp_path):
    p = tmp_path / "ro.log"
    p.write_bytes(b"")
    for buffering in (0, -1):
        with open(p, "rb", buffering=buffering) as f, pytest.raises(TypeError, match="writable"):
            Writer(f)
    assert read_file(p) == b""


def test_writer_into_a_target_that_refuses_raises_its_error():
    class Refusing(io.RawIOBase):
        def writable(self):
            return True

        def write(self, b):
            raise io.UnsupportedOperation("refused")

    w = Writer(Refusing())
    w.write(b"abc")
    with pytest.raises(io.UnsupportedOperation):
        w.flush()
    with pytest.raises(io.UnsupportedOperation):
        w.close()  # the records are still not written: said again
    assert w.closed


def test_writer_sync_on_path(tmp_path):
    p = tmp_path / "sync.log"
    with Writer(p) as w:
        w.write(b"durable")
        assert w.sync() is None
        assert os.path.getsize(p) == w.position
        assert list(Reader(p)) == [b"durable"]


def test_writer_sync_on_file_object_with_fileno(tmp_path):
    p = tmp_path / "sync.log"
    with open(p, "wb") as f:
        w = Writer(f)
        w.write(b"durable")
        w.sync()
        # flushed through the file object's own buffer too
        assert os.path.getsize(p) == w.position
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
        lambda w: w.position,
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


def test_writer_file_object_starts_the_log_at_its_position():
    prefix = b"p" * 32700  # whatever the object holds before the log
    bio = io.BytesIO(prefix)
    bio.seek(0, io.SEEK_END)
    new = records_of([100, 40000], b"n")
    with Writer(bio) as w:
        assert w.position == 0
        offsets = [w.write(r) for r in new]
    enc, exp_offsets = model.encode(new)
    assert offsets == exp_offsets
    assert bio.getvalue() == prefix + enc


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
            assert w.position == 0
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
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("target", [123, None, 1.5, object(), [b"x"]])
def test_writer_rejects_non_path_non_file_target(target):
    with pytest.raises(TypeError):
        Writer(target)


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
        assert w.position == len(model.encode([b"before"])[0])
        w.write(b"after")
    assert list(Reader(p)) == [b"before", b"after"]


def test_writer_write_many_bad_item_of_an_iterator_keeps_earlier_records(tmp_path):
    p = tmp_path / "wm.log"
    with Writer(p) as w:
        with pytest.raises(TypeError) as raised:
            w.write_many(iter([b"a", 5]))
        assert raised.value.written == 1
        assert w.position == len(model.encode([b"a"])[0])
    assert list(Reader(p)) == [b"a"]
    with Writer(p, buffering=0) as w:
        with pytest.raises(TypeError) as raised:
            w.write_many(iter([b"a", b"b", "c", b"d"]))
        assert raised.value.written == 2
        assert list(Reader(p)) == [b"a", b"b"]  # already handed to the OS


def test_writer_write_many_bad_item_of_a_sequence_writes_nothing(tmp_path):
    p = tmp_path / "wm.log"
    for records in ([b"a", 5], (b"a", b"b", "c", b"d")):
        with Writer(p) as w:
            with pytest.raises(TypeError, match="none of the") as raised:
                w.write_many(records)
            assert raised.value.written == 0
            assert w.position == 0
        assert read_file(p) == b""


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


def _write_until_fault(w, make_record, buffering):
    """Writes (and, buffered, flushes) records until the target fails, at most 10000:
    (records whose write returned, all records tried, the one being written at the fault,
    the error), the last two None if no fault happened."""
    ok, all_recs = [], []
    for i in range(10000):
        r = make_record(i)
        all_recs.append(r)
        try:
            w.write(r)
            ok.append(r)
            if buffering != 0:
                w.flush()
        except OSError as e:
            return ok, all_recs, r, e
    return ok, all_recs, None, None


def _split_after_fault(got, ok, later):
    """The records read after a fault, cut as the writer wrote them: the first len(ok),
    those after them up to the last len(later), and those last len(later)."""
    return got[: len(ok)], got[len(ok) : len(got) - len(later)], got[len(got) - len(later) :]


def _sized(i):
    sizes = [10, 300, 100000, 5000, 70000, 0, 32761, 40000]
    return b"%06d" % i + bytes([i % 256]) * sizes[i % len(sizes)]


@READS_DAMAGE
@pytest.mark.parametrize("buffering", [0, -1, 1000])
@pytest.mark.parametrize("limit", [5, 1000, 33000, 70000, 150000, 250000, 400003])
def test_writer_file_object_fault_mid_write_propagates_and_log_recovers(buffering, limit):
    sink = FlakyRaw(limit)
    w = Writer(sink, buffering=buffering)
    ok, all_recs, failed, error = _write_until_fault(w, _sized, buffering)
    assert error is not None and error is sink.raised[-1]
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
    written, middle, after = _split_after_fault(got, ok, later)
    # every record whose write (and flush) returned comes back, in order, then every
    # record written after the target recovered, and nothing that was not written
    assert written == ok and after == later
    assert all(g in all_recs or g in later for g in got)
    # between them, at most the record being written at the fault; none if its write
    # returned and the flush after it failed
    assert middle in ([[]] if ok and ok[-1] is failed else [[], [failed]])


@READS_DAMAGE
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
        ok, all_recs, failed, error = _write_until_fault(w, _sized, buffering)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert error is not None and error.errno == errno.EFBIG
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
    written, middle, after = _split_after_fault(got, ok, later)
    # every record whose write (and flush) returned comes back, in order, then every
    # record written after the target recovered, and nothing that was not written
    assert written == ok and after == later
    assert all(g in all_recs or g in later for g in got)
    # between them, at most the record being written at the fault; none if its write
    # returned and the flush after it failed
    assert middle in ([[]] if ok and ok[-1] is failed else [[], [failed]])


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
# Threads
# ---------------------------------------------------------------------------


def _thread_record(tid, seq):
    size = (seq * 37 + tid * 11) % 1500
    if seq % 250 == 0:
        size = 40000 + tid
    head = struct.pack("<HI", tid, seq)
    return head + bytes([(tid * 13 + seq) % 251]) * size


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
    assert_passes_in_a_child(
        "test_writer", "_writer_threads_body", str(tmp_path / "threads.log"), buffering
    )


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
