"""Reading one large log in parallel (docs/parallel.md).

A log of about 300 MB (records from empty to several blocks, with two damaged places) is
written once per session. Its ranges, from ``splits()`` or cut anywhere, are read by Dask
(a bag on the local process scheduler) and by ``multiprocessing`` pools (fork and spawn),
and pickled Readers are sent to workers. Every way must agree with one sequential read:
the same records (count, bytes, an order-independent checksum of their CRC-32Cs, and an
ordered digest per range) and the same corruption reports, each exactly once.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import multiprocessing
import os
import pathlib
import pickle
import random
import struct
from collections.abc import Iterator
from typing import Any, NamedTuple

import dask.bag
import pytest
from leveldb_log import BLOCK_SIZE, Reader, Writer, crc32c
from leveldb_log.splits import splits
from support.warned import READS_DAMAGE

B = BLOCK_SIZE
LOG_SIZE = 300 * 2**20
WORKERS = 2
#: Start methods this platform has (Windows has no fork); the first is the cheapest.
CONTEXTS = [m for m in ("fork", "spawn") if m in multiprocessing.get_all_start_methods()]


# ---------------------------------------------------------------------------
# what a read sees, in comparable form
# ---------------------------------------------------------------------------


class Summary(NamedTuple):
    """What one reader returned: enough to compare reads without keeping the records."""

    count: int
    nbytes: int
    crc_xor: int  # xor of the records' CRC-32Cs: order-independent
    crc_sum: int  # their sum: order-independent, and catches a record seen twice
    ordered: int  # CRC-32C chained over (offset, length, crc) of each record, in order
    corruptions: tuple[tuple[int, int, str], ...]


def summarize(records: Iterator[tuple[int, bytes]], corruptions: list[Any]) -> Summary:
    count = nbytes = crc_xor = crc_sum = ordered = 0
    for offset, rec in records:
        crc = crc32c(rec)
        count += 1
        nbytes += len(rec)
        crc_xor ^= crc
        crc_sum += crc
        ordered = crc32c(struct.pack("<QQI", offset, len(rec), crc), ordered)
    return Summary(count, nbytes, crc_xor, crc_sum, ordered, tuple(map(tuple, corruptions)))


def with_offsets(reader: Reader) -> Iterator[tuple[int, bytes]]:
    for rec in reader:
        assert reader.last_record_offset is not None
        yield reader.last_record_offset, rec


def combine(parts: list[Summary]) -> Summary:
    """The summary of consecutive ranges read one after the other (reports sorted)."""
    total = Summary(0, 0, 0, 0, 0, ())
    for p in parts:
        total = Summary(
            total.count + p.count,
            total.nbytes + p.nbytes,
            total.crc_xor ^ p.crc_xor,
            total.crc_sum + p.crc_sum,
            0,  # ordered digests are compared range by range
            total.corruptions + p.corruptions,
        )
    # A report can come after a later one: "checksum mismatch" in a MIDDLE fragment is
    # reported before "error in middle of record" at the record's start. Compare sets.
    return total._replace(corruptions=tuple(sorted(total.corruptions)))


# ---------------------------------------------------------------------------
# worker functions (module level: spawned workers import them by name)
# ---------------------------------------------------------------------------


def read_range(path: str, start: int, end: int) -> Summary:
    """Reads the records whose first header lies in [start, end)."""
    corruptions: list[Any] = []
    with Reader(path, start=start, end=end, on_corruption=corruptions.append) as r:
        return summarize(with_offsets(r), corruptions)


def read_range_job(job: tuple[str, int, int]) -> tuple[int, Summary]:
    """read_range for a (path, start, end) job; returns the worker's process id too."""
    return os.getpid(), read_range(*job)


def finish_reader(reader: Reader) -> tuple[int | None, int, Summary, int]:
    """Reads what is left of a reader pickled to this worker. Returns where it arrived
    (last record offset, dropped bytes), what it read then, and its dropped bytes at the
    end (its reports went to its own callback, if any: the counter carries them)."""
    arrived_last, arrived_dropped = reader.last_record_offset, reader.dropped_bytes
    summary = summarize(with_offsets(reader), [])
    return arrived_last, arrived_dropped, summary, reader.dropped_bytes


# ---------------------------------------------------------------------------
# the log
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class BigLog:
    path: str
    size: int
    written: list[int]  # offset of every record written
    # what one Reader over the whole log returned:
    offsets: list[int]  # record offsets
    lengths: list[int]  # record lengths
    crcs: list[int]  # record CRC-32Cs
    corruptions: list[tuple[int, int, str]]  # reports

    def expected(self, start: int, end: int, after: int | None = None) -> Summary:
        """The sequential read restricted to the range [start, end): the records whose
        first header lies in it, and the reports whose dropped bytes begin in it; only
        those past offset `after`, if given (what a reader that returned the record at
        `after` has yet to yield)."""
        if after is not None:
            start = max(start, after + 1)
        lo, hi = bisect.bisect_left(self.offsets, start), bisect.bisect_left(self.offsets, end)
        ordered = crc_xor = crc_sum = 0
        for i in range(lo, hi):
            crc = self.crcs[i]
            ordered = crc32c(struct.pack("<QQI", self.offsets[i], self.lengths[i], crc), ordered)
            crc_xor ^= crc
            crc_sum += crc
        reports = tuple(c for c in self.corruptions if start <= c[0] < end)
        return Summary(hi - lo, sum(self.lengths[lo:hi]), crc_xor, crc_sum, ordered, reports)

    @property
    def sequential(self) -> Summary:
        return self.expected(0, self.size)


def record_sizes(rng: random.Random) -> Iterator[int]:
    """Mostly small records, some of a block or so, a few spanning several blocks, and
    the sizes around a block's payload room."""
    edges = [0, 1, 6, 7, 8, B - 7, B - 8, B - 14, B, 2 * (B - 7), 3 * B + 1]
    while True:
        kind = rng.random()
        if kind < 0.55:
            yield rng.randrange(0, 300)
        elif kind < 0.85:
            yield rng.randrange(300, B)
        elif kind < 0.98:
            yield rng.randrange(B, 6 * B)
        else:
            yield rng.choice(edges)


def records(total: int) -> Iterator[bytes]:
    """Deterministic records of about `total` bytes, each different (a counter first)."""
    rng = random.Random(6)
    pool = rng.randbytes(1 << 22)
    written = 0
    for i, size in enumerate(record_sizes(rng)):
        if written >= total:
            return
        at = (i * 7919) % (len(pool) - size)
        yield (struct.pack("<Q", i) + pool[at : at + size])[:size]
        written += size


def damage(path: pathlib.Path, written: list[int]) -> None:
    """Flips a payload byte of a record a third of the way in and, two thirds in, a byte
    in the second block of a record spanning several blocks."""
    third = bisect.bisect_left(written, written[-1] // 3)
    big = next(
        i
        for i in range(bisect.bisect_left(written, 2 * written[-1] // 3), len(written) - 1)
        if written[i + 1] - written[i] > 3 * B
    )
    with open(path, "r+b") as f:
        for at in (written[third] + 9, written[big] + B + 100):
            f.seek(at)
            byte = f.read(1)
            f.seek(at)
            f.write(bytes([byte[0] ^ 0x20]))


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BigLog]:
    path = tmp_path_factory.mktemp("parallel") / "big.log"
    with Writer(path) as w:
        written = [w.write(rec) for rec in records(LOG_SIZE)]
    damage(path, written)
    log = BigLog(str(path), path.stat().st_size, written, [], [], [], [])
    with Reader(path, on_corruption=lambda c: log.corruptions.append(tuple(c))) as r:
        for offset, rec in with_offsets(r):
            log.offsets.append(offset)
            log.lengths.append(len(rec))
            log.crcs.append(crc32c(rec))
    yield log
    path.unlink()  # 300 MB: do not leave it to pytest's retention of temporary dirs


def by_process(results: list[tuple[int, Summary]]) -> tuple[set[int], list[Summary]]:
    """The ids of the processes that read the ranges, and each range's summary in order."""
    return {pid for pid, _ in results}, [summary for _, summary in results]


# ---------------------------------------------------------------------------
# the sequential read itself
# ---------------------------------------------------------------------------


def test_the_log_is_large_and_the_sequential_read_loses_only_damaged_records(
    big_log: BigLog,
) -> None:
    assert big_log.size >= LOG_SIZE
    assert max(b - a for a, b in zip(big_log.written, big_log.written[1:], strict=False)) > 3 * B
    reports = big_log.corruptions
    assert len(reports) >= 2
    assert {reason for _, _, reason in reports} >= {"checksum mismatch"}
    # Records returned are the records written, minus those overlapping dropped bytes.
    dropped = [(offset, offset + size) for offset, size, _ in reports]
    ends = [*big_log.written[1:], big_log.size]
    returned = set(big_log.offsets)
    assert returned <= set(big_log.written)
    for start, end in zip(big_log.written, ends, strict=True):
        overlaps = any(lo < end and start < hi for lo, hi in dropped)
        assert (start in returned) != overlaps, start
    assert 0 < len(big_log.written) - len(returned) < 10


# ---------------------------------------------------------------------------
# Dask
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("how", [{"n": 8}, {"size": 16 * 2**20}], ids=["n=8", "size=16MiB"])
def test_a_dask_bag_on_processes_reads_every_range_as_the_sequential_read(
    big_log: BigLog, how: dict[str, int]
) -> None:
    ranges = splits(big_log.path, **how)
    jobs = [(big_log.path, start, end) for start, end in ranges]
    bag = dask.bag.from_sequence(jobs, npartitions=len(jobs)).map(read_range_job)
    got = bag.compute(scheduler="processes", num_workers=WORKERS)
    pids, summaries = by_process(list(got))
    assert os.getpid() not in pids  # each range was read in another process
    assert summaries == [big_log.expected(start, end) for start, end in ranges]
    assert combine(summaries) == combine([big_log.sequential])  # the whole log, once


# ---------------------------------------------------------------------------
# multiprocessing
# ---------------------------------------------------------------------------

SPLITS = [
    {"n": 1},
    {"n": 2},
    {"n": 7},
    {"n": 64},
    {"size": B},  # one block per range: thousands of ranges, most inside records
    {"size": 5 * 2**20 + 12345},  # rounded to whole blocks
]


@pytest.mark.parametrize("how", SPLITS, ids=lambda h: "-".join(f"{k}={v}" for k, v in h.items()))
def test_a_pool_reads_ranges_from_splits_as_the_sequential_read(
    big_log: BigLog, how: dict[str, int]
) -> None:
    ranges = splits(big_log.path, **how)
    assert ranges[0][0] == 0 and ranges[-1][1] == big_log.size
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    with multiprocessing.get_context(CONTEXTS[0]).Pool(WORKERS) as pool:
        got = pool.map(read_range_job, [(big_log.path, s, e) for s, e in ranges], chunksize=64)
    pids, summaries = by_process(got)
    assert os.getpid() not in pids  # each range was read in another process
    assert summaries == [big_log.expected(start, end) for start, end in ranges]
    assert combine(summaries) == combine([big_log.sequential])  # the whole log, once


def test_a_spawn_pool_reads_ranges_from_splits_as_the_sequential_read(big_log: BigLog) -> None:
    ranges = splits(big_log.path, n=5)
    with multiprocessing.get_context("spawn").Pool(WORKERS) as pool:
        got = pool.map(read_range_job, [(big_log.path, s, e) for s, e in ranges])
    pids, summaries = by_process(got)
    assert os.getpid() not in pids  # each range was read in another process
    assert summaries == [big_log.expected(start, end) for start, end in ranges]
    assert combine(summaries) == combine([big_log.sequential])  # the whole log, once


def test_ranges_cut_anywhere_read_in_a_pool_as_the_sequential_read(big_log: BigLog) -> None:
    # Cuts off block boundaries: inside headers, inside fragments, on record starts, in
    # block trailers, at the damaged places.
    rng = random.Random(66)
    cuts = {rng.randrange(1, big_log.size) for _ in range(40)}
    some = rng.sample(big_log.written, 20)
    cuts |= {o + d for o in some for d in (-1, 0, 1, 3) if 0 < o + d < big_log.size}
    cuts |= {k * B - d for k in rng.sample(range(1, big_log.size // B), 20) for d in (1, 3, 6)}
    cuts |= {c[0] + d for c in big_log.sequential.corruptions for d in (-1, 0, 1)}
    bounds = [0, *sorted(c for c in cuts if 0 < c < big_log.size), big_log.size]
    ranges = list(itertools.pairwise(bounds))
    with multiprocessing.get_context(CONTEXTS[0]).Pool(WORKERS) as pool:
        got = pool.map(read_range_job, [(big_log.path, s, e) for s, e in ranges], chunksize=16)
    pids, summaries = by_process(got)
    assert os.getpid() not in pids  # each range was read in another process
    assert summaries == [big_log.expected(start, end) for start, end in ranges]
    assert combine(summaries) == combine([big_log.sequential])  # the whole log, once


@READS_DAMAGE
@pytest.mark.parametrize("context", CONTEXTS)
def test_pickled_readers_sent_to_a_pool_go_on_from_where_they_stood(
    big_log: BigLog, context: str
) -> None:
    ranges = splits(big_log.path, n=6)
    readers = []
    for i, (start, end) in enumerate(ranges):
        reader = Reader(big_log.path, start=start, end=end)
        for _ in range(i * 97):  # 0, 97, 194 ... records read before the trip
            next(reader)
        readers.append(reader)
    states = [(r.last_record_offset, r.dropped_bytes) for r in readers]
    with multiprocessing.get_context(context).Pool(WORKERS) as pool:
        got = pool.map(finish_reader, readers)
    for (start, end), (last, dropped), (arrived_last, arrived_dropped, summary, final) in zip(
        ranges, states, got, strict=True
    ):
        assert (arrived_last, arrived_dropped) == (last, dropped)
        rest = big_log.expected(start, end, after=last)
        assert summary[:5] == rest[:5]
        assert final == dropped + sum(size for _, size, _ in rest.corruptions)


@READS_DAMAGE
def test_a_whole_log_reader_pickled_mid_way_finishes_in_a_worker(big_log: BigLog) -> None:
    reader = Reader(big_log.path)
    half = len(big_log.offsets) // 2
    for _ in range(half):
        next(reader)
    assert len(pickle.dumps(reader)) < 1000  # a path, options and a position, no data
    with multiprocessing.get_context(CONTEXTS[0]).Pool(1) as pool:
        ((last, _, summary, final),) = pool.map(finish_reader, [reader])
    assert last == big_log.offsets[half - 1]
    assert summary[:5] == big_log.expected(0, big_log.size, after=last)[:5]
    assert final == sum(size for _, size, _ in big_log.corruptions)
