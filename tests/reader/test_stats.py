"""leveldb_log.stats(): the figures of a log, from scan (layout) and Reader (records, damage).

Exact figures on hand-made logs (clean, fragmented, damaged, torn, zero-filled), the same
figures from every kind of source, and properties against the pure-Python model on
damaged logs.
"""

from __future__ import annotations

import io
import mmap
import os
import pathlib
import subprocess
import sys
from collections import Counter
from dataclasses import FrozenInstanceError, asdict

import leveldb_log
import pytest
from hypothesis import given
from hypothesis import strategies as st
from leveldb_log import LogStats, SizeBucket, stats
from leveldb_log._core import RECORD_TYPES
from support import model
from support.damage import damage
from support.profiles import scaled
from support.records import make_records, size_lists
from support.warned import READS_DAMAGE

B = leveldb_log.BLOCK_SIZE
H = leveldb_log.HEADER_SIZE
ROOM = B - H  # payload bytes of a fragment that fills a block

EMPTY = {
    "file_bytes": 0,
    "records": 0,
    "record_bytes": 0,
    "physical_records": 0,
    "header_bytes": 0,
    "fragment_types": (),
    "bad_checksums": 0,
    "trailer_bytes": 0,
    "zero_bytes": 0,
    "garbage_bytes": 0,
    "torn_tail_bytes": 0,
    "dropped_bytes": 0,
    "record_sizes": (),
    "corruptions": 0,
}


def figures(s: LogStats) -> dict[str, object]:
    """The fields of ``s`` as a dict (buckets as plain tuples)."""
    return {k: (tuple(map(tuple, v)) if k == "record_sizes" else v) for k, v in asdict(s).items()}


def expect(**changes: object) -> dict[str, object]:
    """The figures of an empty log, with ``changes``."""
    return {**EMPTY, **changes}


# ---------------------------------------------------------------------------
# hand-made logs
# ---------------------------------------------------------------------------


def test_an_empty_log() -> None:
    s = stats(b"")
    assert figures(s) == expect()
    assert not s.corrupt


def test_the_format_md_worked_example() -> None:
    # docs/format.md: FULL in block 0, FIRST / MIDDLE / LAST over blocks 0-2, FULL, trailer
    log, offsets = model.encode([b"a" * 1000, b"b" * 97270, b"c" * 8000])
    assert offsets == [0, 1007, 98304]
    s = stats(log)
    assert figures(s) == expect(
        file_bytes=106311,
        records=3,
        record_bytes=106270,
        physical_records=5,
        header_bytes=35,
        fragment_types=(("FIRST", 1), ("FULL", 2), ("LAST", 1), ("MIDDLE", 1)),
        trailer_bytes=6,
        record_sizes=((512, 1023, 1), (4096, 8191, 1), (65536, 131071, 1)),
    )
    assert not s.corrupt


def test_one_record_in_four_fragments_and_an_empty_one() -> None:
    log, _ = model.encode([b"x" * (3 * ROOM + 1717), b""])
    assert figures(stats(log)) == expect(
        file_bytes=3 * B + H + 1717 + H,
        records=2,
        record_bytes=3 * ROOM + 1717,
        physical_records=5,
        header_bytes=5 * H,
        fragment_types=(("FIRST", 1), ("FULL", 1), ("LAST", 1), ("MIDDLE", 2)),
        record_sizes=((0, 0, 1), (65536, 131071, 1)),
    )


@READS_DAMAGE
def test_a_bad_checksum_in_the_first_fragment_drops_the_whole_record() -> None:
    log = bytearray(model.encode([b"x" * 40000, b"y" * 10])[0])
    log[H + 5] ^= 1  # in the FIRST fragment, which fills block 0
    s = stats(bytes(log))
    last = 40000 - ROOM  # the LAST fragment, in block 1, without its start
    assert figures(s) == expect(
        file_bytes=B + H + last + H + 10,
        records=1,
        record_bytes=10,
        physical_records=3,
        header_bytes=3 * H,
        fragment_types=(("FIRST", 1), ("FULL", 1), ("LAST", 1)),
        bad_checksums=1,
        dropped_bytes=B + last,
        corruptions=2,  # the bad checksum, then the LAST with no start
        record_sizes=((8, 15, 1),),
    )
    assert s.corrupt
    with leveldb_log.Reader(bytes(log)) as r:
        assert list(r) == [b"y" * 10] and r.dropped_bytes == s.dropped_bytes


def test_a_bad_checksum_drops_the_rest_of_its_block_as_garbage() -> None:
    log = bytearray(model.encode([b"a" * 100, b"b" * 200, b"c" * 300])[0])
    log[H + 10] ^= 0x80  # in the first record's payload
    s = stats(bytes(log))
    assert figures(s) == expect(
        file_bytes=3 * H + 600,
        physical_records=1,
        header_bytes=H,
        fragment_types=(("FULL", 1),),
        bad_checksums=1,
        garbage_bytes=2 * H + 500,
        dropped_bytes=3 * H + 600,  # the bad record and the garbage after it
        corruptions=1,
    )
    assert s.corrupt
    # without checksums, the same bytes are three whole records
    unchecked = stats(bytes(log), verify_checksums=False)
    assert (unchecked.records, unchecked.record_bytes, unchecked.corrupt) == (3, 600, False)
    assert (unchecked.bad_checksums, unchecked.dropped_bytes) == (0, 0)


def test_a_bad_length_makes_garbage_of_the_rest_of_a_full_block() -> None:
    log = bytearray(model.encode([b"a" * 100, b"b" * 40000])[0])
    log[100 + H + 4 : 100 + H + 6] = (60000).to_bytes(2, "little")  # FIRST's length
    s = stats(bytes(log))
    assert figures(s) == expect(
        file_bytes=len(log),
        records=1,
        record_bytes=100,
        physical_records=2,  # FULL, and the LAST without its start
        header_bytes=2 * H,
        fragment_types=(("FULL", 1), ("LAST", 1)),
        garbage_bytes=B - (H + 100),
        dropped_bytes=B - (H + 100) + 40000 - (ROOM - H - 100),
        corruptions=2,
        record_sizes=((64, 127, 1),),
    )


def test_an_unknown_type_is_named_by_its_byte_and_dropped() -> None:
    log = model.encode([b"a"])[0] + model.encode_physical(9, b"zz") + model.encode([b"b"])[0]
    s = stats(log)
    assert s.fragment_types == ((RECORD_TYPES[1], 2), ("type 9", 1))
    assert (s.records, s.record_bytes, s.dropped_bytes, s.bad_checksums) == (2, 2, 2, 0)
    assert s.corrupt


def test_a_torn_tail_counts_from_the_first_header_of_the_cut_record() -> None:
    log = model.encode([b"a" * 100, b"b" * 50000])[0][:40000]  # cut inside the LAST
    s = stats(log)
    assert figures(s) == expect(
        file_bytes=40000,
        records=1,
        record_bytes=100,
        physical_records=2,
        header_bytes=2 * H,
        fragment_types=(("FIRST", 1), ("FULL", 1)),
        torn_tail_bytes=40000 - (H + 100),
        record_sizes=((64, 127, 1),),
    )
    assert not s.corrupt  # a writer stopped there: not damage


def test_a_record_left_open_at_a_block_boundary_is_a_torn_tail() -> None:
    log = model.encode([b"a" * 100, b"b" * 50000])[0][:B]
    s = stats(log)
    assert (s.file_bytes, s.records, s.torn_tail_bytes, s.dropped_bytes) == (B, 1, B - 107, 0)
    assert s.fragment_types == (("FIRST", 1), ("FULL", 1))


def test_a_cut_header_is_a_torn_tail() -> None:
    log = model.encode([b"a" * 10, b"b" * 10])[0][:-14]  # 3 bytes of the second header
    s = stats(log)
    assert (s.file_bytes, s.records, s.torn_tail_bytes, s.corrupt) == (H + 13, 1, 3, False)


def test_zero_fill_at_the_end_is_neither_torn_nor_damage() -> None:
    log = model.encode([b"a" * 10])[0] + bytes(100)
    s = stats(log)
    assert figures(s) == expect(
        file_bytes=H + 10 + 100,
        records=1,
        record_bytes=10,
        physical_records=1,
        header_bytes=H,
        fragment_types=(("FULL", 1),),
        zero_bytes=100,
        record_sizes=((8, 15, 1),),
    )
    assert not s.corrupt


def test_the_figures_are_frozen() -> None:
    s = stats(model.encode([b"abc"])[0])
    with pytest.raises(FrozenInstanceError):
        s.records = 2  # type: ignore[misc]
    assert s.record_sizes == (SizeBucket(low=2, high=3, records=1),)
    again = stats(bytearray(model.encode([b"abc"])[0]))
    assert s == again and hash(s) == hash(again)


# ---------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------


class Pipe(io.RawIOBase):
    """A file object that cannot seek, over bytes (like standard input from a pipe)."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        return self._data.readinto(buffer)


def test_every_kind_of_source_gives_the_same_figures(tmp_path: pathlib.Path) -> None:
    log = bytearray(model.encode([b"a" * 100, b"b" * 50000, b"c" * 9])[0][:-3])
    log[H + 3] ^= 1
    path = tmp_path / "x.log"
    path.write_bytes(log)
    expected = stats(bytes(log))
    assert expected.corrupt and expected.torn_tail_bytes > 0
    assert stats(path) == stats(str(path)) == expected
    assert stats(log) == stats(memoryview(log)) == expected
    pipe = Pipe(bytes(log))
    assert not pipe.seekable()
    assert stats(pipe) == expected
    with open(path, "rb") as f:
        assert stats(f) == expected
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            m.seek(10)  # a buffer: read from its start, whatever its read() position
            assert stats(m) == expected
    # a file object holds the log from its current position
    shifted = io.BytesIO(b"junk" + bytes(log))
    shifted.seek(4)
    assert stats(shifted) == expected
    piped = io.BufferedReader(Pipe(b"junk" + bytes(log)))
    assert piped.read(4) == b"junk"
    assert stats(piped) == expected


def test_a_missing_file_raises_with_its_name(tmp_path: pathlib.Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        stats(tmp_path / "missing.log")
    assert caught.value.filename == str(tmp_path / "missing.log")


# The reading process opens the FIFO once: a second open would wait for a writer that has
# gone, and the timeout fails the test.
FIFO_READER = """
import sys, threading
import leveldb_log
path, log = sys.argv[1], bytes.fromhex(sys.argv[2])
def write():
    with open(path, "wb") as fifo:
        fifo.write(log)
threading.Thread(target=write, daemon=True).start()
print(repr(leveldb_log.stats(path)))
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_path_is_read_once(tmp_path: pathlib.Path) -> None:
    log = bytearray(model.encode([b"a" * 100, b"b" * 50000, b"c" * 9])[0][:-3])
    log[H + 3] ^= 1
    fifo = tmp_path / "x.log"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-c", FIFO_READER, str(fifo), log.hex()],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr(stats(bytes(log)))


# ---------------------------------------------------------------------------
# properties against the model
# ---------------------------------------------------------------------------


@READS_DAMAGE
@scaled(0.5)
@given(size_lists(min_size=1), st.data())
def test_stats_count_what_the_reader_returns_and_drops(
    sizes: list[int], data: st.DataObject
) -> None:
    # (moved from test_cli.py: cli.collect_stats is now leveldb_log.stats)
    clean, _ = model.encode(make_records(sizes))
    broken, _, _ = damage(data.draw, clean)
    reports: list[leveldb_log.Corruption] = []
    with leveldb_log.Reader(broken, on_corruption=reports.append) as r:
        records = list(r)
        dropped = r.dropped_bytes
    stats_ = stats(broken)
    torn = [e for e in model.read_events(broken) if isinstance(e, model.TornTail)]
    assert stats_.torn_tail_bytes == sum(e.size for e in torn)
    assert stats_.records == len(records)
    assert stats_.record_bytes == sum(map(len, records))
    assert stats_.dropped_bytes == dropped
    assert stats_.file_bytes == len(broken)
    # Some reports drop no bytes (an orphan empty fragment): corrupt counts reports.
    assert stats_.corruptions == len(reports)
    assert stats_.corrupt == bool(reports)


@READS_DAMAGE
@scaled(0.5)
@given(size_lists(min_size=0), st.data(), st.booleans())
def test_stats_agree_with_the_model(sizes: list[int], data: st.DataObject, verify: bool) -> None:
    clean, _ = model.encode(make_records(sizes))
    log = damage(data.draw, clean)[0] if data.draw(st.booleans(), "damaged") else clean
    s = stats(log, verify_checksums=verify)
    events = model.read_events(log, verify)
    result = model.read(log, verify_checksums=verify)
    corruptions = [e for e in events if isinstance(e, model.Corruption)]
    sizes_found = Counter(len(r.data).bit_length() for r in result.records)
    assert s.records == len(result.records)
    assert s.record_bytes == sum(len(r.data) for r in result.records)
    assert [(b.records, b.low.bit_length()) for b in s.record_sizes] == [
        (sizes_found[bits], bits) for bits in sorted(sizes_found)
    ]
    assert s.dropped_bytes == result.dropped_bytes == sum(c.size for c in corruptions)
    assert s.bad_checksums == sum(c.reason == model.CHECKSUM_MISMATCH for c in corruptions)
    assert s.torn_tail_bytes == sum(e.size for e in events if isinstance(e, model.TornTail))
    assert s.corrupt == bool(corruptions)
    assert s.file_bytes == len(log) and s.header_bytes == H * s.physical_records
    assert sum(n for _, n in s.fragment_types) == s.physical_records
    if log is clean:
        assert s.physical_records == sum(1 for _ in model_fragments(clean))
        assert s.torn_tail_bytes == s.dropped_bytes == s.garbage_bytes == 0


def model_fragments(log: bytes) -> list[int]:
    """Offsets of the physical records of a clean log, walked by the format's rules."""
    found, p = [], 0
    while p < len(log):
        left = B - p % B
        if left < H:
            p += left
            continue
        found.append(p)
        p += H + int.from_bytes(log[p + 4 : p + 6], "little")
    return found
