"""The reader's short FULL records checked ahead (log_reader.c, "checked ahead"): after a
short FULL record, the next ones of its block are checksummed together and handed out
without the general step. Each test reads logs of many short records, where that path runs
on nearly every record, against the reference model: damage to any one record, ranges that
end or begin between any two, checksums off, a position and a switch to Arrow batches
taken after every record, and a range that reads on past its end into the next block.
"""

from __future__ import annotations

import io
from pathlib import Path

import leveldb_log
import pytest
from support import model
from support.reading import assert_same, c_read, model_read
from support.warned import READS_DAMAGE

# Lengths around the path's limits (records of at most 512 bytes, 4 KiB of them at a time):
# runs of short records broken by longer ones, empty records, and blocks filled to the end.
LENGTHS = [5, 0, 100, 512, 513, 7, 300, 300, 300, 300, 300, 300, 300, 300, 300, 40, 1000] * 14


def short_log() -> tuple[bytes, list[int], list[int]]:
    """A log of records of LENGTHS (each of a different byte), each record's offset, and
    where each ends."""
    buf = io.BytesIO()
    offsets, ends = [], []
    with leveldb_log.Writer(buf, "w") as w:
        for i, n in enumerate(LENGTHS):
            offsets.append(w.write(bytes([i % 251]) * n))
            ends.append(w.position)
    return buf.getvalue(), offsets, ends


LOG, OFFSETS, ENDS = short_log()


def test_the_log_spans_blocks_with_runs_of_short_records() -> None:
    assert len(LOG) > 2 * leveldb_log.BLOCK_SIZE
    assert model_read(LOG).records == [bytes([i % 251]) * n for i, n in enumerate(LENGTHS)]


@pytest.mark.parametrize("verify", [True, False])
@READS_DAMAGE
def test_damage_to_any_record_reads_as_the_model_says(verify: bool) -> None:
    for i, at in list(enumerate(OFFSETS))[::3]:
        for where in (6, 7 + LENGTHS[i] // 2):  # the type byte, or the payload
            if where == 7 + LENGTHS[i] // 2 and LENGTHS[i] == 0:
                continue
            log = bytearray(LOG)
            log[at + where] ^= 0x40
            got = c_read(bytes(log), verify_checksums=verify)
            assert_same(got, model_read(bytes(log), verify_checksums=verify), (i, where))


def test_ranges_beginning_and_ending_between_any_two_records() -> None:
    cuts = [*OFFSETS, len(LOG)]
    for a in range(0, len(cuts), 3):
        for b in range(a, len(cuts), 5):
            kw = {"start": cuts[a], "end": cuts[b]}
            assert_same(c_read(LOG, **kw), model_read(LOG, **kw), kw)


def unfinished_record_then_short_records() -> bytes:
    """A short record, a FIRST fragment filling block 0 whose record never ends, and short
    FULL records at the start of block 1: the first of them drops the open record, the
    others are checked ahead."""
    first = model.encode_physical(model.FULL, b"a")
    fill = model.BLOCK_SIZE - len(first) - 7
    head = first + model.encode_physical(
        model.FIRST, bytes(range(256)) * (fill // 256) + bytes(fill % 256)
    )
    return head + b"".join(
        model.encode_physical(model.FULL, bytes([i]) * (1 + i)) for i in range(4)
    )


@pytest.mark.parametrize("verify", [True, False])
@READS_DAMAGE
def test_a_range_read_on_past_its_end_returns_nothing_there(verify: bool) -> None:
    # A range ending in block 0 after the FIRST fragment reads on into block 1 to finish
    # that record: the records there begin past the range's end and are the next range's,
    # read one by one or in Arrow batches.
    pa = pytest.importorskip("pyarrow")
    log = unfinished_record_then_short_records()
    for end in (9, 100, model.BLOCK_SIZE - 1):
        for kw in ({"end": end}, {"start": end}):
            got = c_read(log, verify_checksums=verify, **kw)
            expected = model_read(log, verify_checksums=verify, **kw)
            assert_same(got, expected, kw)
            seen: list[tuple[int, int, str]] = []
            with leveldb_log.Reader(
                log, verify_checksums=verify, on_corruption=seen.append, **kw
            ) as r:
                batches = [pa.record_batch(b) for b in r.iter_batches(max_records=3)]
            assert [o for b in batches for o in b.column(0).to_pylist()] == expected.offsets, kw
            assert [tuple(c) for c in seen] == expected.corruptions, kw


def test_position_and_a_switch_to_batches_after_every_record() -> None:
    pa = pytest.importorskip("pyarrow")
    expected = model_read(LOG)
    for stop in range(0, len(OFFSETS), 7):
        with leveldb_log.Reader(LOG) as r:
            head = [next(r) for _ in range(stop)]
            # the position is where the last record read ends
            assert r.position == (ENDS[stop - 1] if stop else 0)
            batches = [pa.record_batch(b) for b in r.iter_batches(max_records=5)]
            rest = [d for b in batches for d in b.column(1).to_pylist()]
        assert head + rest == expected.records, stop


def test_a_file_read_through_blocks_gives_the_same(tmp_path: Path) -> None:
    path = tmp_path / "short.log"
    path.write_bytes(LOG)
    assert_same(c_read(path), model_read(LOG))
    with leveldb_log.Reader(path) as r:
        for _, at, end in zip(r, OFFSETS, ENDS, strict=True):
            assert (r.last_record_offset, r.position) == (at, end)
