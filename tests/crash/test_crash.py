"""Crash safety: a writer process killed with SIGKILL at random moments.

The writer (a child process) prints each record's index once ``write()`` has returned. After
the kill, the log must hold exactly a prefix of the records written, each intact and in order;
with ``buffering=0`` that prefix includes every record whose ``write()`` returned. A killed
writer leaves at most a torn tail: "skip" reports nothing and "absolute" raises only
``TruncatedRecordError``, at the tail. Appending with ``Writer(path, "a")`` afterwards (also
after zero fill, as preallocation leaves) gives a log that reads back in "absolute" mode as every
complete old record followed by the new ones.
"""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import leveldb_log
import pytest
from leveldb_log._core import _append_point
from support.records import record_end

B = leveldb_log.BLOCK_SIZE
H = leveldb_log.HEADER_SIZE
ROUNDS = 30

# Shared by the writer process and the checks: the records a writer with `seed` writes.
RECORDS_SRC = """
import functools, random

@functools.lru_cache(maxsize=4)
def pool(seed):
    return random.Random(seed).randbytes(300_000)

def payload(seed, i):
    # Cheap to make, so that the writer spends its time writing: kills then often land in
    # the middle of a write.
    r = random.Random(seed * 1_000_003 + i)
    x = r.random()
    n = r.randrange(20_000, 150_000) if x < 0.1 else (
        r.randrange(200, 20_000) if x < 0.3 else r.randrange(0, 200))
    at = r.randrange(300_000 - n)
    return b"%d:%d:" % (seed, i) + pool(seed)[at:at + n]
"""
_ns: dict = {}
exec(RECORDS_SRC, _ns)
payload = _ns["payload"]

WRITER_SRC = (
    RECORDS_SRC
    + """
import sys
import leveldb_log

path, target, mode, buffering, seed = sys.argv[1:6]
buffering, seed = int(buffering), int(seed)
if target == "path":
    w = leveldb_log.Writer(path, mode, buffering=buffering)
else:
    w = leveldb_log.Writer(open(path, "ab" if mode == "a" else "wb"), buffering=buffering)
print("ready", flush=True)
for i in range(1_000_000):
    w.write(payload(seed, i))
    print(i, flush=True)
"""
)


def start_writer(
    path: Path, target: str, buffering: int, seed: int, mode: str = "w"
) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER_SRC, str(path), target, mode, str(buffering), str(seed)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    return proc


def kill_at_random(proc: subprocess.Popen[str], rng: random.Random) -> int:
    """Kills the writer after a random time or a random number of records; returns how many
    records it reported as written (write() returned)."""
    assert proc.stdout is not None
    acked = 0
    if rng.random() < 0.5:
        time.sleep(rng.uniform(0, 0.2))
    else:
        wanted = rng.randrange(0, 300)
        while acked < wanted and proc.stdout.readline():
            acked += 1
    proc.send_signal(signal.SIGKILL)
    acked += sum(1 for _ in proc.stdout)  # lines already in the pipe
    proc.stdout.close()
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return acked


def read_all(path: Path, **kw: object) -> tuple[list[bytes], list[int], list[object]]:
    seen: list[object] = []
    records, offsets = [], []
    with leveldb_log.Reader(path, on_corruption=seen.append, **kw) as r:
        for rec in r:
            records.append(rec)
            offsets.append(r.last_record_offset)
    return records, offsets, seen


def layout(sizes: list[int], start: int = 0) -> list[tuple[int, int]]:
    """(offset, end) of records of these sizes written from `start` (docs/format.md, "Writing")."""
    out, pos = [], start
    for n in sizes:
        space = B - pos % B
        offset = pos + space if space < H else pos  # a record never starts in a trailer
        pos = record_end(pos, n)
        out.append((offset, pos))
    return out


def assert_killed_log_recovers(
    path: Path, seed: int, acked: int, unbuffered: bool, start: int = 0
) -> list[bytes]:
    """Asserts what a kill must leave (named assert_ so that a test calling it reads as the
    check it is; four tests share these ten checks); returns the records recovered (those of
    this writer, which began writing at offset `start`)."""
    size = path.stat().st_size
    records, offsets, seen = read_all(path, start=start)
    assert seen == [], "a killed writer leaves no mid-file damage"
    expected = [payload(seed, i) for i in range(len(records))]
    assert records == expected, "not a prefix of the records written"
    if unbuffered:
        assert len(records) >= acked, f"lost a returned record: {len(records)} < {acked}"
    places = layout([len(p) for p in expected], start)
    assert offsets == [off for off, _ in places]
    clean_end = places[-1][1] if places else start

    # The other recovery modes see the same records; "absolute" raises only at a torn tail.
    for mode in ("tolerate_tail", "point_in_time"):
        assert read_all(path, start=start, recovery=mode)[0] == records
    got: list[bytes] = []
    reports: list[object] = []
    try:
        with leveldb_log.Reader(
            path, start=start, recovery="absolute", on_corruption=reports.append
        ) as r:
            got.extend(r)
        # No error: the log ends with a complete record, or with the zeros closing its block
        # (the trailer is written before the next record, so a flush can end after it).
        trailer = -clean_end % B
        if size != clean_end:
            assert trailer < H and size == clean_end + trailer, (size, clean_end)
            assert path.read_bytes()[clean_end:] == bytes(trailer)
    except leveldb_log.TruncatedRecordError as e:
        assert e.offset >= clean_end and e.offset + e.size == size, (e, clean_end, size)
    assert got == records
    assert len(reports) <= 1
    return records


@dataclasses.dataclass
class Appended:
    """What appending after a kill did. Either mode "a" refused the file (`refusal`, the
    append point's error; whether Writer(path, "a") raised CorruptionError too; whether the
    file is byte for byte as before), or it appended `new`, and `read` is the "absolute"
    read that followed: (records, reports)."""

    new: list[bytes]
    refusal: leveldb_log.CorruptionError | None = None
    writer_refused: bool = False
    file_unchanged: bool = False
    read: tuple[list[bytes], list[object]] = ([], [])


def append_after_kill(path: Path, old: list[bytes], rng: random.Random, start: int = 0) -> Appended:
    """Appends new records with mode "a" and reads the log from `start` in "absolute" mode."""
    new = [
        b"after the crash %d" % rng.randrange(10**9),
        rng.randbytes(rng.randrange(0, 100_000)),
        b"",
    ]
    before = path.read_bytes()
    if not old and before:
        # A kill inside the first record's write leaves no valid record at all: mode "a"
        # refuses such a file and leaves it as it was (docs/format.md, "Appending").
        try:
            _append_point(path, dialect="leveldb")
        except leveldb_log.CorruptionError as e:
            try:
                leveldb_log.Writer(path, "a").close()
                writer_refused = False
            except leveldb_log.CorruptionError:
                writer_refused = True
            return Appended(new, e, writer_refused, path.read_bytes() == before)
    with leveldb_log.Writer(path, "a", buffering=rng.choice([0, -1, 4096])) as w:
        for rec in new:
            w.write(rec)
    records, _, seen = read_all(path, start=start, recovery="absolute")
    return Appended(new, read=(records, seen))


WRITERS = [("path", 0), ("path", -1), ("file object", 0), ("file object", -1)]


@pytest.mark.parametrize(
    ("target", "buffering"),
    WRITERS,
    ids=[f"{t.replace(' ', '_')}-buffering{b}" for t, b in WRITERS],
)
def test_killed_writer_leaves_a_prefix_and_append_reads_clean_in_absolute_mode(
    tmp_path: Path, target: str, buffering: int
) -> None:
    rng = random.Random(f"{target}{buffering}")
    # Where a kill lands is up to the OS: each round checks what it left, whatever that is.
    # A torn record, which a writer handing each record to the OS in one call rarely
    # leaves, is made on purpose in the torn_record tests below.
    for round_ in range(ROUNDS):
        path = tmp_path / f"log{round_}"
        seed = rng.randrange(10**6)
        proc = start_writer(path, "path" if target == "path" else "file", buffering, seed)
        acked = kill_at_random(proc, rng)
        records = assert_killed_log_recovers(path, seed, acked, unbuffered=buffering == 0)
        after = append_after_kill(path, records, rng)
        if after.refusal:  # no valid record was left: mode "a" refuses the file
            assert after.refusal.no_log and after.writer_refused and after.file_unchanged
        else:
            assert after.read == (records + after.new, [])


def test_repeated_crashes_with_append_keep_every_complete_record(tmp_path: Path) -> None:
    """A service that is killed and reopens its log with mode "a", again and again."""
    rng = random.Random(7)
    path = tmp_path / "wal"
    kept: list[bytes] = []
    for stage in range(15):
        seed = 1000 + stage
        buffering = rng.choice([0, -1])
        proc = start_writer(path, "path", buffering, seed, mode="a")
        acked = kill_at_random(proc, rng)
        # Mode "a" cut the previous torn tail: this stage's records begin where the kept
        # ones end, and reading from there yields a prefix of them.
        start = layout([len(r) for r in kept])[-1][1] if kept else 0
        assert read_all(path)[0][: len(kept)] == kept
        kept += assert_killed_log_recovers(
            path, seed, acked, unbuffered=buffering == 0, start=start
        )
    after = append_after_kill(path, kept, rng)
    if after.refusal:  # no valid record was left: mode "a" refuses the file
        assert after.refusal.no_log and after.writer_refused and after.file_unchanged
    else:
        assert after.read == (kept + after.new, [])


def zero_fill(path: Path, rng: random.Random, past_block_end: bool) -> None:
    """Extends the file with zeros, as a preallocated file holds past what was written."""
    size = path.stat().st_size
    room = B - size % B
    if past_block_end:
        extra = rng.randrange(room, room + 2 * B)
    else:
        extra = rng.randrange(1, room) if room > 1 else 0
    os.truncate(path, size + extra)


@pytest.mark.parametrize(
    "past_block_end", [False, True], ids=["zeros_within_last_block", "zeros_past_block_end"]
)
def test_append_after_kill_and_zero_fill_reads_clean_in_absolute_mode(
    tmp_path: Path, past_block_end: bool
) -> None:
    rng = random.Random(int(past_block_end))
    for round_ in range(15):
        path = tmp_path / f"log{round_}"
        seed = rng.randrange(10**6)
        proc = start_writer(path, "path", rng.choice([0, -1]), seed)
        acked = kill_at_random(proc, rng)
        records = assert_killed_log_recovers(path, seed, acked, unbuffered=False)
        zero_fill(path, rng, past_block_end)
        after = append_after_kill(path, records, rng)
        if after.refusal:  # no valid record was left: mode "a" refuses the file
            assert after.refusal.no_log and after.writer_refused and after.file_unchanged
        else:
            assert after.read == (records + after.new, [])


def _torn_log(cut: int) -> tuple[bytes, list[bytes]]:
    """A complete record, then a record of four fragments (FIRST, MIDDLE, MIDDLE, LAST), the
    log cut at offset `cut`; returns the bytes and the complete records."""
    done = [b"complete record"]
    buf = bytearray()
    with leveldb_log.Writer(_BytesSink(buf)) as w:
        w.write(done[0])
        w.write(bytes(range(256)) * (3 * B // 256))
    if cut >= len(buf):
        raise ValueError(f"cut {cut} is past the log's {len(buf)} bytes")
    return bytes(buf[:cut]), done


class _BytesSink:
    def __init__(self, buf: bytearray) -> None:
        self.buf = buf

    def write(self, data: bytes) -> int:
        self.buf += data
        return len(data)


CUTS = {
    "mid_first_fragment": 500,
    "first_fragment_whole_at_block_end": B,
    "mid_middle_header": B + 3,
    "mid_middle_fragment": B + 100,
    "two_fragments_whole": 2 * B,
}


@pytest.mark.parametrize(
    "fill", ["zeros_within_last_block", "zeros_to_block_end", "zeros_over_several_blocks"]
)
@pytest.mark.parametrize("cut", list(CUTS.values()), ids=list(CUTS))
def test_append_after_torn_record_and_zero_fill_reads_clean_in_absolute_mode(
    tmp_path: Path, cut: int, fill: str
) -> None:
    """The deterministic cases behind the random ones above: a crash in a preallocated file
    leaves a torn record followed by zeros."""
    torn, done = _torn_log(cut)
    size = len(torn)
    target = {
        "zeros_within_last_block": size + min(1000, B - 1 - size % B),
        "zeros_to_block_end": (size // B + 1) * B,
        "zeros_over_several_blocks": (size // B + 3) * B,
    }[fill]
    path = tmp_path / "log"
    path.write_bytes(torn + bytes(target - size))
    with leveldb_log.Writer(path, "a") as w:
        w.write(b"new")
    records, _, seen = read_all(path, recovery="absolute")
    assert (records, seen) == ([*done, b"new"], [])


@pytest.mark.parametrize("cut", list(CUTS.values()), ids=list(CUTS))
def test_append_after_torn_record_reads_clean_in_absolute_mode(tmp_path: Path, cut: int) -> None:
    torn, done = _torn_log(cut)
    path = tmp_path / "log"
    path.write_bytes(torn)
    with leveldb_log.Writer(path, "a") as w:
        w.write(b"new")
    records, _, seen = read_all(path, recovery="absolute")
    assert (records, seen) == ([*done, b"new"], [])


def test_a_kill_just_after_a_block_trailer_passes_the_kill_checks(tmp_path: Path) -> None:
    """A buffered writer flushes the zeros that close a block before the next record's
    bytes: a kill between the two leaves a clean log that ends in that trailer."""

    def trailer_cuts(seed: int) -> list[tuple[int, int]]:  # (records, end) before a trailer
        ends = [end for _, end in layout([len(payload(seed, i)) for i in range(300)])]
        return [(i + 1, end) for i, end in enumerate(ends) if 0 < -end % B < H]

    seed, (n, end) = next((s, cuts[0]) for s in range(1000) if (cuts := trailer_cuts(s)))
    records = [payload(seed, i) for i in range(n)]
    path = tmp_path / "log"
    with leveldb_log.Writer(path) as w:
        w.write_many(records)
    with open(path, "ab") as f:
        f.write(bytes(-end % B))  # the trailer, as the next write() would begin
    assert path.stat().st_size % B == 0
    assert assert_killed_log_recovers(path, seed, n, unbuffered=False) == records
    after = append_after_kill(path, records, random.Random(1))
    if after.refusal:  # no valid record was left: mode "a" refuses the file
        assert after.refusal.no_log and after.writer_refused and after.file_unchanged
    else:
        assert after.read == (records + after.new, [])
