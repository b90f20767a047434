"""Damage x append: every damage of a family applied to small logs, then an append.

The property (docs/format.md, "Appending"): after ``Writer(path, "a")``, one write and a
close, either the file is byte for byte as it was (the append was refused), or every byte up
to the end of the last intact record is unchanged and the new record reads back, last, in
"skip" mode. A record is intact when all its bytes are where the writer put them.

Shared by tests/writer/test_append_after_damage.py (a sample of each family, in the behaviour
tier) and tests/writer/test_append_after_damage_full.py (truncations at every boundary).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import leveldb_log
from leveldb_log import CorruptionError

B = leveldb_log.BLOCK_SIZE


@dataclasses.dataclass(frozen=True)
class Dialect:
    """How a log of one dialect is written and read back."""

    name: str
    writer: dict[str, Any]
    reader: dict[str, Any]
    header: int  # the physical header's size


DIALECTS = [
    Dialect("leveldb", {}, {}, 7),
    Dialect("rocksdb", {"dialect": "rocksdb"}, {"dialect": "rocksdb"}, 7),
    Dialect(
        "rocksdb-recyclable",
        {"dialect": "rocksdb", "recycle": True, "log_number": 7},
        {"dialect": "rocksdb", "log_number": 7},
        11,
    ),
    Dialect(
        "pebble",
        {"dialect": "pebble", "log_number": 7},
        {"dialect": "pebble", "log_number": 7},
        11,
    ),
]

#: Record sizes of the logs: one block; two blocks with a record across them (the
#: issue's 42 KiB log of 17 records); three blocks with a record over all three.
LOGS = {
    "one-block": [10, 0, 300, 1000, 50, 7],
    "two-blocks": [200] * 5 + [35000] + [100] * 11,
    "three-blocks": [500, 70000, 300, 300],
}


@dataclasses.dataclass
class Log:
    """A clean log and where its records and physical headers are."""

    data: bytes
    records: list[tuple[int, int]]  # (start, end) of each record's bytes
    headers: list[int]  # offsets of the physical headers
    dialect: Dialect
    tells: list[int]  # the Writer's position after each record: the tests compare it with ends

    @property
    def ends(self) -> list[int]:
        """Where each record ends, by the layout computed here."""
        return [end for _, end in self.records]


def _fragments(start: int, n: int, h: int) -> tuple[list[int], int]:
    """The headers of a record of n bytes written at `start`, and where it ends."""
    pos, left, first, heads = start, n, True, []
    while first or left > 0:
        if B - pos % B < h:  # a trailer too short for a header
            pos += B - pos % B
        heads.append(pos)
        k = min(left, B - pos % B - h)
        pos += h + k
        left -= k
        first = False
    return heads, pos


def payload(i: int, n: int) -> bytes:
    """Record i's bytes: never all zeros, distinct per record."""
    rnd = random.Random(i * 7919 + n)
    return bytes(rnd.randrange(1, 256) for _ in range(n))


def build(path: Path, sizes: list[int], dialect: Dialect) -> Log:
    """Writes the log of `sizes` at path; returns it with its layout, as computed here, and
    the Writer's position after each record (which the tests check against the layout)."""
    records, headers, tells = [], [], []
    with leveldb_log.Writer(path, "w", **dialect.writer) as w:
        for i, n in enumerate(sizes):
            start = w.position
            heads, end = _fragments(start, n, dialect.header)
            w.write(payload(i, n))
            tells.append(w.position)
            records.append((start, end))
            headers += heads
    return Log(path.read_bytes(), records, headers, dialect, tells)


def intact_end(log: Log, damaged: bytes) -> int:
    """The end of the last record whose bytes all survived the damage."""
    end = 0
    for start, stop in log.records:
        if stop <= len(damaged) and damaged[start:stop] == log.data[start:stop]:
            end = stop
    return end


# ---- the damage families ----------------------------------------------------------------


def flip(data: bytes, at: int, bit: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 1 << bit
    return bytes(out)


def header_flips(log: Log) -> Iterator[tuple[str, bytes]]:
    """Every single-bit flip of every header byte."""
    for h in log.headers:
        for at in range(h, min(h + log.dialect.header, len(log.data))):
            for bit in range(8):
                yield f"flip {at}.{bit}", flip(log.data, at, bit)


def payload_flips(log: Log, per_record: int = 3) -> Iterator[tuple[str, bytes]]:
    """Every bit of a sample of payload bytes: each record's first and last payload byte,
    and `per_record` more chosen by a seeded generator."""
    rnd = random.Random(len(log.data))
    in_header = {h + i for h in log.headers for i in range(log.dialect.header)}
    for start, end in log.records:
        body = [p for p in range(start, end) if p not in in_header]
        if not body:
            continue
        picks = {body[0], body[-1], *rnd.sample(body, min(per_record, len(body)))}
        for at in sorted(picks):
            for bit in range(8):
                yield f"flip {at}.{bit}", flip(log.data, at, bit)


def truncations(log: Log, stride: int = 1) -> Iterator[tuple[str, bytes]]:
    """The log cut at every offset (every `stride`-th, and both sides of every header) of
    its first and its last block."""
    n = len(log.data)
    last = (n - 1) // B * B
    near = {h + d for h in log.headers for d in range(-1, log.dialect.header + 2)}
    offsets = set(range(0, min(B, n), stride)) | set(range(last, n, stride))
    offsets |= {p for p in near if 0 <= p < n and (p < B or p >= last)}
    for at in sorted(offsets):
        yield f"cut at {at}", log.data[:at]


def zeroed_sectors(log: Log) -> Iterator[tuple[str, bytes]]:
    """512-byte and 4 KiB sectors zeroed at every aligned offset."""
    n = len(log.data)
    for size in (512, 4096):
        for at in range(0, n, size):
            stop = min(at + size, n)
            yield f"zero {size} at {at}", log.data[:at] + bytes(stop - at) + log.data[stop:]


def block_moves(log: Log) -> Iterator[tuple[str, bytes]]:
    """Each block duplicated in place, and each pair of neighbouring blocks swapped."""
    blocks = [log.data[i : i + B] for i in range(0, len(log.data), B)]
    for k in range(len(blocks)):
        yield f"block {k} twice", b"".join(blocks[: k + 1] + blocks[k:])
    for k in range(len(blocks) - 1):
        swapped = [*blocks[:k], blocks[k + 1], blocks[k], *blocks[k + 2 :]]
        yield f"blocks {k} and {k + 1} swapped", b"".join(swapped)


# ---- the check of the property ----------------------------------------------------------

NEW = b"appended after damage"


def assert_append_keeps_intact_records(log: Log, path: Path, what: str, damaged: bytes) -> str:
    """Writes `damaged` at path, appends NEW and asserts the property (the module's
    docstring); returns "refused" or "appended"."""
    path.write_bytes(damaged)
    try:
        w = leveldb_log.Writer(path, "a", **log.dialect.writer)
    except CorruptionError:
        assert path.read_bytes() == damaged, f"{what}: a refused append changed the file"
        return "refused"
    with w:
        w.write(NEW)
    after = path.read_bytes()
    keep = intact_end(log, damaged)
    assert after[:keep] == damaged[:keep], (
        f"{what}: the append changed bytes before {keep}, the end of the last intact record "
        f"(first difference at {next(i for i in range(keep) if after[i] != damaged[i])})"
    )
    got = list(
        leveldb_log.Reader(
            path, recovery="skip", on_corruption=lambda c: None, **log.dialect.reader
        )
    )
    assert got and got[-1] == NEW, (
        f"{what}: the new record does not read back last: {len(got)} read"
    )
    return "appended"
