"""I/O faults: targets and sources that fail, and a disk that runs out of space.

For the writer: the error reaches the caller as the original exception, and a reader of what
was written recovers every record whose write() returned, intact and in order; a record whose
write() raised never comes back half. For the reader: the error reaches the caller, and neither
that reader (iterated again) nor a new one loses or repeats a record.
"""

from __future__ import annotations

import errno
import io
import os
import random
import subprocess
import sys
from pathlib import Path

import leveldb_log
import pytest

B = leveldb_log.BLOCK_SIZE
ROUNDS = 150


def random_records(rng: random.Random, n: int) -> list[bytes]:
    sizes = [
        rng.choice([0, 1, 7, 100, 2000, 32_754, 32_761, 32_768, 40_000, 100_000])
        if rng.random() < 0.3
        else rng.randrange(0, 500)
        for _ in range(n)
    ]
    return [b"%d:" % i + rng.randbytes(s) for i, s in enumerate(sizes)]


class FaultySink(io.RawIOBase):
    """A binary target that fails on chosen calls, or runs out of space.

    - write() calls numbered in `fail_writes` raise OSError(EIO) having written nothing;
    - flush() calls numbered in `fail_flushes` raise OSError(EIO) (the data stays written);
    - write() calls numbered in `block_writes` take half the bytes and raise BlockingIOError
      saying so (characters_written), as a non-blocking stream does;
    - with `capacity`, write() stores what fits and returns that count (a short write), and
      raises OSError(ENOSPC) once nothing fits; set capacity to None to free space.
    """

    def __init__(
        self,
        fail_writes: set[int] = frozenset(),
        fail_flushes: set[int] = frozenset(),
        capacity: int | None = None,
        block_writes: set[int] = frozenset(),
    ) -> None:
        super().__init__()
        self.data = bytearray()
        self.fail_writes, self.fail_flushes = fail_writes, fail_flushes
        self.block_writes = block_writes
        self.capacity = capacity
        self.writes = self.flushes = 0
        self.raised: list[OSError] = []

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        return len(self.data)

    def _raise(self, code: int) -> None:
        exc = OSError(code, os.strerror(code))
        self.raised.append(exc)
        raise exc

    def write(self, b: bytes) -> int:  # type: ignore[override]
        self.writes += 1
        if self.writes in self.fail_writes:
            self._raise(errno.EIO)
        data = bytes(b)
        if self.writes in self.block_writes:
            half = len(data) // 2
            self.data += data[:half]
            exc = BlockingIOError(errno.EAGAIN, "write would block", half)
            self.raised.append(exc)
            raise exc
        if self.capacity is not None:
            room = self.capacity - len(self.data)
            if room <= 0:
                self._raise(errno.ENOSPC)
            data = data[:room]
        self.data += data
        return len(data)

    def flush(self) -> None:
        self.flushes += 1
        if self.flushes in self.fail_flushes:
            self._raise(errno.EIO)


Caught = list[tuple[OSError, OSError | None]]  # (error caught, the sink's last raised)


def write_all(
    w: leveldb_log.Writer, sink: FaultySink, records: list[bytes], rng: random.Random
) -> tuple[list[bytes], list[bytes], Caught]:
    """Writes each record (flushing now and then); returns (written, refused, caught): the
    records whose write() returned, those whose write() raised, and each error caught with
    the last one the sink raised (the tests assert they are the same object: passed through
    unchanged)."""
    written, refused, caught = [], [], []
    for rec in records:
        try:
            w.write(rec)
            written.append(rec)
        except OSError as e:
            caught.append((e, sink.raised[-1] if sink.raised else None))
            refused.append(rec)
        if rng.random() < 0.1:
            try:
                w.flush()
            except OSError as e:
                caught.append((e, sink.raised[-1] if sink.raised else None))
    return written, refused, caught


def flush_and_close(w: leveldb_log.Writer, sink: FaultySink) -> tuple[bool, Caught]:
    """Flushes until the target takes everything (at most 1000 tries), then closes (the
    target's own flush may still fail then, after every byte was written). Returns whether
    a flush succeeded, and the errors caught as write_all does."""
    caught: Caught = []
    flushed = False
    for _ in range(1000):
        try:
            w.flush()
            flushed = True
            break
        except OSError as e:
            caught.append((e, sink.raised[-1] if sink.raised else None))
    if flushed:
        try:
            w.close()
        except OSError as e:
            caught.append((e, sink.raised[-1] if sink.raised else None))
    return flushed, caught


def assert_recovered(got: list[bytes], records: list[bytes], written: list[bytes]) -> None:
    """got holds, in order, every record whose write() returned, and otherwise only records
    whose write() raised, whole: the buffered bytes of a refused record may still reach the
    target with a later flush."""
    acked = {id(r) for r in written}
    it = iter(got)
    nxt = next(it, None)
    for rec in records:
        if nxt is not None and nxt == rec:
            nxt = next(it, None)
        else:
            assert id(rec) not in acked, f"lost record {rec[:12]!r} whose write() returned"
    assert nxt is None, f"{nxt[:12]!r} is not a record written, or out of order"


def read(data: bytes, **kw: object) -> tuple[list[bytes], list[object]]:
    seen: list[object] = []
    return list(leveldb_log.Reader(data, on_corruption=seen.append, **kw)), seen


BUFFERINGS = [0, -1, 100, 5000]


@pytest.mark.parametrize("buffering", BUFFERINGS)
def test_failed_writes_raise_and_every_returned_record_is_recovered_intact(buffering: int) -> None:
    rng = random.Random(buffering)
    faults = 0
    for _ in range(ROUNDS):
        records = random_records(rng, rng.randrange(1, 30))
        calls = 40 if buffering in (0, 100) else 4  # about how many write() calls there are
        sink = FaultySink(fail_writes={rng.randrange(1, calls) for _ in range(rng.randrange(1, 4))})
        w = leveldb_log.Writer(sink, buffering=buffering)
        written, refused, caught = write_all(w, sink, records, rng)
        flushed, more = flush_and_close(w, sink)
        assert flushed and w.closed
        assert all(e is raised for e, raised in caught + more)  # the sink's, unchanged
        faults += len(sink.raised)
        got, seen = read(bytes(sink.data))
        assert_recovered(got, records, written)
        if not sink.raised:
            assert seen == [] and refused == []
    assert faults > ROUNDS // 2  # the faults did happen


@pytest.mark.parametrize("buffering", BUFFERINGS)
def test_partial_nonblocking_writes_raise_and_every_returned_record_is_recovered_intact(
    buffering: int,
) -> None:
    rng = random.Random(50 + buffering)
    faults = 0
    for _ in range(ROUNDS):
        records = random_records(rng, rng.randrange(1, 30))
        calls = 40 if buffering in (0, 100) else 4
        sink = FaultySink(block_writes={rng.randrange(1, calls) for _ in range(2)})
        w = leveldb_log.Writer(sink, buffering=buffering)
        written, _, caught = write_all(w, sink, records, rng)
        flushed, more = flush_and_close(w, sink)
        assert flushed and w.closed
        assert all(e is raised for e, raised in caught + more)  # the sink's, unchanged
        faults += len(sink.raised)
        got, _ = read(bytes(sink.data))
        assert_recovered(got, records, written)
    assert faults > ROUNDS // 2


@pytest.mark.parametrize("buffering", BUFFERINGS)
def test_failed_flushes_raise_and_lose_no_returned_record(buffering: int) -> None:
    """flush() of the target fails after the bytes were taken: a record whose write() raised
    may then be in the log, but whole; every record whose write() returned is there."""
    rng = random.Random(100 + buffering)
    for _ in range(ROUNDS):
        records = random_records(rng, rng.randrange(1, 30))
        sink = FaultySink(fail_flushes={rng.randrange(1, 30) for _ in range(3)})
        w = leveldb_log.Writer(sink, buffering=buffering)
        written, _, caught = write_all(w, sink, records, rng)
        flushed, more = flush_and_close(w, sink)
        assert flushed and w.closed
        assert all(e is raised for e, raised in caught + more)  # the sink's, unchanged
        got, seen = read(bytes(sink.data))
        assert seen == []
        assert_recovered(got, records, written)


@pytest.mark.parametrize("buffering", BUFFERINGS)
def test_out_of_space_raises_enospc_and_leaves_a_clean_prefix(buffering: int) -> None:
    rng = random.Random(200 + buffering)
    for _ in range(ROUNDS):
        records = random_records(rng, rng.randrange(1, 30))
        total = len(records) * 8 + sum(map(len, records))
        sink = FaultySink(capacity=rng.randrange(0, total + 1))
        w = leveldb_log.Writer(sink, buffering=buffering)
        written = []
        error = None
        for rec in records:
            try:
                w.write(rec)
            except OSError as e:
                error = e
                break
            written.append(rec)
        if error is None:
            try:
                w.flush()
            except OSError as e:
                error = e
        data = bytes(sink.data)
        got, seen = read(data)
        assert seen == [], "running out of space leaves only a torn tail"
        assert got == records[: len(got)]
        if buffering == 0:
            assert got == written
        if error is not None:
            assert error.errno == errno.ENOSPC and error is sink.raised[-1]
        else:
            assert got == records
        # "absolute" sees the same records and at most a torn tail.
        reports: list[object] = []
        try:
            absolute = list(
                leveldb_log.Reader(data, recovery="absolute", on_corruption=reports.append)
            )
        except leveldb_log.TruncatedRecordError as e:
            assert e.offset + e.size == len(data)
            absolute = got
        assert absolute == got
        # Space comes back: the writer goes on, and nothing written is lost.
        sink.capacity = None
        more = [b"more:" + rec for rec in random_records(rng, 3)]
        for rec in more:
            w.write(rec)
        w.close()
        got, _ = read(bytes(sink.data))
        attempted = records[: len(written) + (error is not None)]
        assert_recovered(got, attempted + more, written + more)


# Real kernel faults for a path target: a file-size limit makes write(2) write short and then
# fail with EFBIG, exactly as a full disk does (ENOSPC).
FSIZE_WRITER = """
import random, resource, signal, sys
import leveldb_log

path, limit, buffering, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
rng = random.Random(seed)
w = leveldb_log.Writer(path, buffering=buffering)
i = 0
try:
    while True:
        w.write(b"%d:" % i + rng.randbytes(rng.choice([10, 300, 5000, 40000, 90000])))
        print(i, flush=True)
        i += 1
except OSError as e:
    print("error", e.errno, flush=True)
try:
    w.close()
except OSError as e:
    print("close error", e.errno, flush=True)
"""


@pytest.mark.parametrize("buffering", [0, -1])
def test_file_size_limit_on_a_path_target_raises_efbig_and_append_recovers(
    tmp_path: Path, buffering: int
) -> None:
    rng = random.Random(300 + buffering)
    for round_ in range(12):
        path = tmp_path / f"log{round_}"
        seed = rng.randrange(10**6)
        limit = rng.randrange(1, 400_000)
        out = subprocess.run(
            [sys.executable, "-c", FSIZE_WRITER, str(path), str(limit), str(buffering), str(seed)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
        assert f"error {errno.EFBIG}" in out
        acked = sum(1 for line in out if line.isdigit())
        gen = random.Random(seed)
        expected = [
            b"%d:" % i + gen.randbytes(gen.choice([10, 300, 5000, 40000, 90000]))
            for i in range(acked + 1)
        ]
        data = path.read_bytes()
        assert 0 < len(data) <= limit
        got, seen = read(data)
        assert seen == []
        assert got == expected[: len(got)]
        if buffering == 0:
            assert len(got) >= acked
        if not any(r.kind == "record" and r.checksum_ok for r in leveldb_log.scan(data)):
            # The limit cut the first record: no valid record at all, so no log that
            # mode "a" may cut (docs/format.md, "Appending"); the file stays as it is.
            with pytest.raises(leveldb_log.CorruptionError, match="does not end like a log"):
                leveldb_log.Writer(path, "a")
            assert path.read_bytes() == data
            continue
        with leveldb_log.Writer(path, "a") as w:
            w.write(b"after the fault")
        assert read(path.read_bytes(), recovery="absolute") == ([*got, b"after the fault"], [])


@pytest.mark.parametrize("buffering", [0, -1])
def test_dev_full_raises_enospc_from_write_or_flush_and_close(buffering: int) -> None:
    if not os.path.exists("/dev/full"):
        pytest.fail("/dev/full is part of every Linux system this project supports")
    w = leveldb_log.Writer("/dev/full", buffering=buffering)
    if buffering == 0:
        with pytest.raises(OSError) as info:
            w.write(b"record")
    else:
        w.write(b"record")  # buffered: the error comes with the flush
        with pytest.raises(OSError) as info:
            w.flush()
    assert info.value.errno == errno.ENOSPC
    with pytest.raises(OSError) as info:
        w.write(b"x" * 100_000)  # too large for the buffer: written at once
    assert info.value.errno == errno.ENOSPC
    if buffering == 0:
        # Every write() raised and none of their records is kept back for later (a
        # retry would write them twice): close() has nothing left to write.
        w.close()
    else:
        # b"record"'s write() returned: it is kept, and close() fails to write it too.
        with pytest.raises(OSError):
            w.close()
    assert w.closed


class FaultySource(io.RawIOBase):
    """A log to read that fails on chosen readinto()/seek() calls and reads short at random."""

    def __init__(
        self, data: bytes, fail_reads: set[int], fail_seeks: set[int], rng: random.Random
    ) -> None:
        super().__init__()
        self.buf = io.BytesIO(data)
        self.fail_reads, self.fail_seeks = fail_reads, fail_seeks
        self.reads = self.seeks = 0
        self.rng = rng
        self.raised: list[OSError] = []

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.buf.tell()

    def seek(self, pos: int, whence: int = 0) -> int:
        self.seeks += 1
        if self.seeks in self.fail_seeks:
            self.raised.append(OSError(errno.EIO, "injected seek error"))
            raise self.raised[-1]
        return self.buf.seek(pos, whence)

    def readinto(self, b: memoryview) -> int:  # type: ignore[override]
        self.reads += 1
        if self.reads in self.fail_reads:
            self.raised.append(OSError(errno.EIO, "injected read error"))
            raise self.raised[-1]
        n = len(b) if self.rng.random() < 0.7 else self.rng.randrange(1, len(b) + 1)
        chunk = self.buf.read(n)
        b[: len(chunk)] = chunk
        return len(chunk)


@pytest.mark.parametrize("recovery", ["skip", "absolute"])
def test_read_errors_reach_the_caller_and_reading_on_loses_nothing(recovery: str) -> None:
    rng = random.Random(recovery)
    errors = 0
    for _ in range(ROUNDS):
        records = random_records(rng, rng.randrange(1, 40))
        sink = FaultySink()
        with leveldb_log.Writer(sink) as w:
            w.write_many(records)
        buf = bytes(sink.data)
        clean = FaultySource(buf, set(), set(), rng)
        assert list(leveldb_log.Reader(clean, recovery=recovery)) == records
        # Fail some of the calls a clean read makes (the count varies with short reads).
        src = FaultySource(
            buf,
            {rng.randrange(1, clean.reads + 1) for _ in range(3)},
            {rng.randrange(1, clean.seeks + 2) for _ in range(2)},
            rng,
        )
        got: list[bytes] = []
        with leveldb_log.Reader(src, recovery=recovery) as r:
            for _attempt in range(20):
                try:
                    got.extend(r)
                    break
                except OSError as e:
                    # One of the injected errors itself (a failed seek is followed by a
                    # seek to the end, to tell a refused seek past the end: that one may
                    # fail too, and the first error is the one raised).
                    assert any(e is injected for injected in src.raised)
                    errors += 1
                    assert got == records[: len(got)]
        assert got == records, "the same reader, iterated again, lost or repeated a record"
        fresh = FaultySource(buf, set(), set(), rng)
        assert list(leveldb_log.Reader(fresh, recovery=recovery)) == records
    assert errors > ROUNDS // 2
