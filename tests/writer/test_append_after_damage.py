"""Appending never removes an intact record: damage x append, sampled (docs/format.md,
"Appending"; the families and the check are in tests/support/append_damage.py).

Each family runs on three small logs (one block; two blocks with a record across them;
three blocks with a record over all three) in each dialect: every single-bit flip of every
header byte, every bit of a sample of payload bytes, truncations (every 97th offset of the
first and last blocks, and both sides of every header), zeroed 512-byte and 4 KiB sectors at
every aligned offset, and each block duplicated or swapped with its neighbour. Every
truncation offset runs in tests/writer/test_append_after_damage_full.py.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from pathlib import Path

import leveldb_log
import pytest
from support.append_damage import (
    DIALECTS,
    LOGS,
    NEW,
    Dialect,
    Log,
    assert_append_keeps_intact_records,
    block_moves,
    build,
    header_flips,
    intact_end,
    payload_flips,
    truncations,
    zeroed_sectors,
)
from support.cli import run_cli_asserting_no_traceback

FAMILIES: dict[str, Callable[[Log], Iterator[tuple[str, bytes]]]] = {
    "header bits": header_flips,
    "payload bits": payload_flips,
    "truncation": lambda log: truncations(log, stride=97),
    "zeroed sectors": zeroed_sectors,
    "blocks moved": block_moves,
}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_appending_after_damage_keeps_every_intact_record(
    tmp_path: Path, dialect: Dialect, family: str
) -> None:
    counts: collections.Counter[str] = collections.Counter()
    for name, sizes in LOGS.items():
        log = build(tmp_path / f"{name}.clean", sizes, dialect)
        assert log.tells == log.ends, dialect.name  # our layout is the Writer's
        for what, damaged in FAMILIES[family](log):
            counts[
                assert_append_keeps_intact_records(
                    log, tmp_path / "case.log", f"{name}: {what}", damaged
                )
            ] += 1
    print(f"{dialect.name}, {family}: {dict(counts)}")
    assert sum(counts.values()) >= len(LOGS)  # every family has cases on every log
    assert counts["appended"] > 0


def test_a_length_flipped_past_the_end_keeps_the_records_after_it(tmp_path: Path) -> None:
    # The case: one bit of the length of the fragment that opens block 1 makes it
    # reach past the end of the file, so the reader takes it for a torn tail; the append
    # used to cut the file back to the end of block 0's last record, taking the intact
    # records of block 1 with it.
    log = build(tmp_path / "clean.log", LOGS["two-blocks"], DIALECTS[0])
    assert log.tells == log.ends, DIALECTS[0].name  # our layout is the Writer's
    opening = leveldb_log.BLOCK_SIZE
    assert opening in log.headers
    length = log.data[opening + 4] | log.data[opening + 5] << 8
    bit = next(
        b
        for b in range(8)
        if not log.data[opening + 5] >> b & 1
        and opening + 7 + length + (256 << b) > len(log.data)
        and 7 + length + (256 << b) <= leveldb_log.BLOCK_SIZE
    )
    damaged = bytearray(log.data)
    damaged[opening + 5] ^= 1 << bit
    path = tmp_path / "case.log"
    path.write_bytes(damaged)
    cut, fresh, clean, found = leveldb_log._core._append_point(path, dialect="leveldb")
    assert (cut, fresh, clean) == (len(damaged), True, log.records[5][0])
    assert found == (log.records[5][0], log.records[6][0])
    assert (
        assert_append_keeps_intact_records(log, path, "a length past the end", bytes(damaged))
        == "appended"
    )
    assert path.read_bytes()[: len(damaged)] == damaged


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_verify_calls_a_torn_looking_record_before_intact_ones_damage(
    tmp_path: Path, dialect: Dialect
) -> None:
    log = build(tmp_path / "clean.log", LOGS["one-block"], dialect)
    assert log.tells == log.ends, dialect.name  # our layout is the Writer's
    second = log.records[1][0]  # its length's high byte, +4096: past the end of the file
    damaged = bytearray(log.data)
    damaged[second + 5] ^= 0x10
    path = tmp_path / "case.log"
    path.write_bytes(damaged)
    result = run_cli_asserting_no_traceback(
        "verify", "--dialect", dialect.reader.get("dialect", "leveldb"), path
    )
    out = result.stdout.decode()
    assert result.returncode == 1, out
    assert "damage before intact records" in out and f"offset {log.records[2][0]}" in out, out
    assert "OK" not in out


def test_write_append_keeps_every_intact_record(tmp_path: Path) -> None:
    # The CLI's write --append, on a sample of the header flips of the one-block log.
    log = build(tmp_path / "clean.log", LOGS["one-block"], DIALECTS[0])
    assert log.tells == log.ends, DIALECTS[0].name  # our layout is the Writer's
    cases = list(header_flips(log))[::9]
    path = tmp_path / "case.log"
    outcomes: collections.Counter[int] = collections.Counter()
    for what, damaged in cases:
        path.write_bytes(damaged)
        result = run_cli_asserting_no_traceback("write", "--append", path, input=NEW + b"\n")
        outcomes[result.returncode] += 1
        after = path.read_bytes()
        if result.returncode != 0:
            assert after == damaged, what
            continue
        keep = intact_end(log, damaged)
        assert after[:keep] == damaged[:keep], what
        got = list(leveldb_log.Reader(path, recovery="skip", on_corruption=lambda c: None))
        assert got[-1] == NEW, what
    print(f"write --append: {len(cases)} cases, exit statuses {dict(outcomes)}")
    assert len(cases) >= 30 and outcomes[0] > 0
