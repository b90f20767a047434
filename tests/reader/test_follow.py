"""Following a growing log: a writer process appends while a reader iterates again and again.

The writer appends thousands of records of mixed sizes (some span several blocks) and
flushes at random points, unbuffered or with small buffers, so the reader often finds a record
only partly written. Every record must come out exactly once, in order, and an incomplete tail
must never yield or report anything (on_corruption stays silent in "skip" mode).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import leveldb_log
import pytest

N_RECORDS = 3000

RECORDS_SRC = """
import random

def payload(seed, i):
    r = random.Random(seed * 1_000_003 + i)
    x = r.random()
    n = r.randrange(33_000, 120_000) if x < 0.08 else (
        r.randrange(200, 33_000) if x < 0.3 else r.randrange(0, 200))
    return b"%d:" % i + r.randbytes(n)
"""
_ns: dict = {}
exec(RECORDS_SRC, _ns)
payload = _ns["payload"]

WRITER_SRC = (
    RECORDS_SRC
    + """
import sys, time
import leveldb_log

path, buffering, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r = random.Random(seed)
with leveldb_log.Writer(path, "a", buffering=buffering) as w:
    for i in range(n):
        w.write(payload(seed, i))
        x = r.random()
        if x < 0.05:
            w.flush()
        elif x < 0.07:
            time.sleep(0.001)  # let the reader catch up with a partial tail
"""
)


def follow(
    path: Path, source: str, recovery: str, buffering: int, seed: int
) -> tuple[int, list[bytes], list[object]]:
    """Follows the log while a writer process writes it: the writer's exit status, the
    records read, and the reports."""
    path.write_bytes(b"")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER_SRC, str(path), str(buffering), str(seed), str(N_RECORDS)]
    )
    seen: list[object] = []
    got: list[bytes] = []
    f = open(path, "rb") if source == "file object" else None
    try:
        reader = leveldb_log.Reader(
            f if f is not None else path, recovery=recovery, on_corruption=seen.append
        )
        with reader:
            while True:
                finished = writer.poll() is not None  # checked before the last pass
                got.extend(reader)
                if finished:
                    break
    finally:
        writer.wait()
        if f is not None:
            f.close()
    return writer.returncode, got, seen


@pytest.mark.parametrize("buffering", [0, 100, 5000, -1])
@pytest.mark.parametrize("source", ["path", "file object"])
def test_reader_following_a_growing_log_yields_every_record_once_and_reports_nothing(
    tmp_path: Path, source: str, buffering: int
) -> None:
    seed = buffering + 10 * len(source)
    returncode, got, seen = follow(tmp_path / "log", source, "skip", buffering, seed)
    assert returncode == 0 and seen == []
    assert got == [payload(seed, i) for i in range(N_RECORDS)]


def test_tolerate_tail_reader_following_a_growing_log_never_raises(tmp_path: Path) -> None:
    returncode, got, seen = follow(tmp_path / "log", "path", "tolerate_tail", 0, seed=99)
    assert returncode == 0 and seen == []
    assert got == [payload(99, i) for i in range(N_RECORDS)]


def test_reader_resumes_inside_a_record_written_byte_by_byte(tmp_path: Path) -> None:
    """The slowest writer possible: the log grows one byte at a time and is read after each."""
    rng = random.Random(5)
    records = [rng.randbytes(n) for n in (0, 5, 40_000, 7, 32_761, 70_000, 1)]
    buf = bytearray()

    class Sink:
        def write(self, data: bytes) -> int:
            buf.extend(data)
            return len(data)

    with leveldb_log.Writer(Sink()) as w:
        for rec in records:
            w.write(rec)
    path = tmp_path / "log"
    path.write_bytes(b"")
    got: list[bytes] = []
    seen: list[object] = []
    step = 1
    with (
        open(path, "ab", buffering=0) as out,
        leveldb_log.Reader(path, on_corruption=seen.append) as r,
    ):
        pos = 0
        while pos < len(buf):
            # byte by byte around headers and block ends, in bigger steps inside payloads
            step = 1 if pos % leveldb_log.BLOCK_SIZE < 16 or rng.random() < 0.02 else 997
            out.write(buf[pos : pos + step])
            pos += step
            got.extend(r)
            assert seen == []
            assert got == records[: len(got)]
    assert got == records


@pytest.mark.parametrize("source", ["path", "file object"])
@pytest.mark.parametrize("torn", [True, False], ids=["ends-inside-a-record", "ends-clean"])
def test_a_reader_at_its_end_sees_a_record_completed_later_on_its_very_next_call(
    tmp_path: Path, source: str, torn: bool
) -> None:
    # RocksDB's ClearEofSingleBlock: the call that returned the last whole record had
    # already read to the end of the file; the file then grows to complete the next record,
    # which the very next call returns (it used to raise a stale StopIteration once).
    log = tmp_path / "growing.log"
    with leveldb_log.Writer(log) as w:
        w.write(b"a" * 100)
        w.write(b"b" * 100)
    full = log.read_bytes()
    log.write_bytes(full[: 107 + 50] if torn else full[:107])
    with open(log, "rb") as f, leveldb_log.Reader(f if source == "file object" else log) as r:
        assert next(r) == b"a" * 100
        log.write_bytes(full)
        assert next(r) == b"b" * 100
        with pytest.raises(StopIteration):
            next(r)


def test_an_arrow_batch_at_the_end_sees_a_record_completed_later(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    log = tmp_path / "growing.log"
    with leveldb_log.Writer(log) as w:
        w.write(b"a" * 100)
        w.write(b"b" * 100)
    full = log.read_bytes()
    log.write_bytes(full[:150])
    with leveldb_log.Reader(log) as r:
        assert next(r) == b"a" * 100
        log.write_bytes(full)
        table = pa.table(r)
    assert table["data"].to_pylist() == [b"b" * 100] and table["offset"].to_pylist() == [107]
