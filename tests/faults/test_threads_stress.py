"""Threads sharing one Writer or one Reader, under stress.

A shared Writer: every record comes back intact, never interleaved with another, and each
thread's records in the order that thread wrote them, at the offsets write() returned. A shared
Reader: every record is delivered exactly once, to some thread, and each corruption is reported
once. Closing an object while other threads use it ends their work with ValueError (or the end
of iteration), never a crash. Records of 64 KiB and more are encoded without the GIL, so threads
really run inside the C code at the same time.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from support.threads import run_threads

N_THREADS = 8
PER_THREAD = 600


def record(tid: int, seq: int) -> bytes:
    r = random.Random(tid * 100_003 + seq)
    x = r.random()
    n = (
        r.randrange(64 * 1024, 200_000)
        if x < 0.05
        else (r.randrange(100, 40_000) if x < 0.25 else r.randrange(0, 100))
    )
    return b"T%02d:%05d:" % (tid, seq) + r.randbytes(n)


def parse(rec: bytes) -> tuple[int, int]:
    return int(rec[1:3]), int(rec[4:9])


def read_back(path: Path) -> tuple[list[bytes], list[int], list[object]]:
    """The records of the log at `path` read in "absolute" mode, their offsets, the reports."""
    seen: list[object] = []
    records, offsets = [], []
    with leveldb_log.Reader(path, recovery="absolute", on_corruption=seen.append) as r:
        for rec in r:
            records.append(rec)
            offsets.append(r.last_record_offset)
    return records, offsets, seen


@pytest.mark.parametrize("buffering", [0, -1])
@pytest.mark.parametrize("target", ["path", "file object"])
def test_shared_writer_keeps_every_record_intact_and_in_thread_order(
    tmp_path: Path, target: str, buffering: int
) -> None:
    path = tmp_path / "log"
    f = open(path, "wb") if target == "file object" else None
    w = leveldb_log.Writer(f if f is not None else path, buffering=buffering)

    def writer(tid: int) -> dict[int, int]:
        rng = random.Random(tid)
        offsets: dict[int, int] = {}
        seq = 0
        while seq < PER_THREAD:
            x = rng.random()
            if x < 0.1:  # a batch
                k = min(rng.randrange(1, 6), PER_THREAD - seq)
                assert w.write_many(record(tid, seq + j) for j in range(k)) == k
                seq += k
                continue
            offsets[seq] = w.write(record(tid, seq))
            seq += 1
            if x > 0.97:
                w.flush()
            elif x > 0.94:
                assert w.position >= offsets[seq - 1]
        return offsets

    results = run_threads(writer, N_THREADS, fast=True)
    w.close()
    if f is not None:
        f.close()
    records, offsets, seen = read_back(path)
    assert seen == []
    assert len(records) == N_THREADS * PER_THREAD
    next_seq = [0] * N_THREADS
    for rec, off in zip(records, offsets, strict=True):
        tid, seq = parse(rec)
        assert seq == next_seq[tid], f"thread {tid}: record {seq} after {next_seq[tid] - 1}"
        next_seq[tid] += 1
        assert rec == record(tid, seq), f"record {tid}/{seq} damaged or interleaved"
        if seq in results[tid]:
            assert results[tid][seq] == off, "write() returned another offset"
    assert offsets == sorted(set(offsets))


def make_log(path: Path, n: int = 4000) -> list[bytes]:
    records = [record(i % N_THREADS, i) for i in range(n)]
    with leveldb_log.Writer(path) as w:
        w.write_many(records)
    return records


SOURCES = ["path", "bytes", "file object", "memoryview"]


def open_source(path: Path, kind: str) -> Any:
    if kind == "path":
        return path
    if kind == "file object":
        return open(path, "rb")
    data = path.read_bytes()
    return data if kind == "bytes" else memoryview(bytearray(data))


@pytest.mark.parametrize("kind", SOURCES)
def test_shared_reader_delivers_every_record_exactly_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "log"
    records = make_log(path)
    source = open_source(path, kind)
    reader = leveldb_log.Reader(source)

    def consume(tid: int) -> list[bytes]:
        mine = []
        for rec in reader:
            mine.append(rec)
        return mine

    results = run_threads(consume, N_THREADS, fast=True)
    reader.close()
    for part in results:  # each thread saw its records in log order
        positions = [int(rec[4:9]) for rec in part]
        assert positions == sorted(positions)
    got = sorted((rec for part in results for rec in part), key=lambda r: int(r[4:9]))
    assert got == records  # each record exactly once, whichever threads the OS ran
    if kind == "file object":
        source.close()


def test_shared_reader_reports_each_corruption_once(tmp_path: Path) -> None:
    path = tmp_path / "log"
    records = make_log(path)
    data = bytearray(path.read_bytes())
    rng = random.Random(3)
    for _ in range(12):  # scattered damage
        data[rng.randrange(len(data))] ^= 0x55
    expected_seen: list[object] = []
    expected = list(leveldb_log.Reader(bytes(data), on_corruption=expected_seen.append))
    assert expected_seen and len(expected) < len(records)

    seen: list[object] = []
    lock = threading.Lock()

    def report(c: object) -> None:
        with lock:
            seen.append(c)

    reader = leveldb_log.Reader(bytes(data), on_corruption=report)
    results = run_threads(lambda tid: list(reader), N_THREADS, fast=True)
    got = sorted((rec for part in results for rec in part), key=lambda r: int(r[4:9]))
    assert got == expected
    assert sorted(seen) == sorted(expected_seen)  # type: ignore[type-var]
    assert reader.dropped_bytes == sum(c.size for c in expected_seen)  # type: ignore[attr-defined]


def test_closing_a_shared_reader_while_threads_iterate_never_crashes(tmp_path: Path) -> None:
    path = tmp_path / "log"
    records = make_log(path)
    for round_ in range(20):
        reader = leveldb_log.Reader(path if round_ % 2 else path.read_bytes())

        def consume(
            tid: int, reader: leveldb_log.Reader = reader, round_: int = round_
        ) -> list[bytes]:
            mine: list[bytes] = []
            if tid == 0:
                for _ in range(50 * round_):
                    next(reader, None)
                reader.close()
                return mine
            try:
                for rec in reader:
                    mine.append(rec)
            except ValueError as e:
                assert "closed" in str(e)
            return mine

        results = run_threads(consume, N_THREADS, fast=True)
        got = sorted((rec for part in results for rec in part), key=lambda r: int(r[4:9]))
        assert len(set(got)) == len(got)
        assert all(rec == records[int(rec[4:9])] for rec in got)


def test_closing_a_shared_writer_while_threads_write_keeps_what_was_written(tmp_path: Path) -> None:
    for round_ in range(10):
        path = tmp_path / f"log{round_}"
        w = leveldb_log.Writer(path, buffering=round_ % 2 - 1)

        def writer(tid: int, w: leveldb_log.Writer = w, round_: int = round_) -> list[int]:
            done: list[int] = []
            if tid == 0:
                for _ in range(30 * round_):
                    w.write(b"T00:%05d:" % len(done))
                    done.append(len(done))
                w.close()
                return done
            for seq in range(PER_THREAD):
                try:
                    w.write(record(tid, seq))
                except ValueError as e:
                    assert "closed" in str(e)
                    break
                done.append(seq)
            return done

        results = run_threads(writer, N_THREADS, fast=True)
        records, _, seen = read_back(path)
        assert seen == []
        by_thread: dict[int, list[int]] = {}
        for rec in records:
            tid, seq = parse(rec)
            by_thread.setdefault(tid, []).append(seq)
            if tid:
                assert rec == record(tid, seq)
        for tid, done in enumerate(results):
            assert by_thread.get(tid, []) == done, f"thread {tid}"
