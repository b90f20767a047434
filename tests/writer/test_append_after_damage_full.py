"""Appending never removes an intact record, after a truncation at every offset of the first
and the last block of each log of tests/support/append_damage.py: every dialect on the last blocks
and the one-block log, LevelDB's also on every offset of the first block (the behaviour tier,
tests/writer/test_append_after_damage.py, takes every 97th there)."""

from __future__ import annotations

import collections
from pathlib import Path

import leveldb_log
import pytest
from support.append_damage import DIALECTS, LOGS, Dialect, assert_append_keeps_intact_records, build

pytestmark = pytest.mark.slow

B = leveldb_log.BLOCK_SIZE


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_every_truncation_keeps_every_intact_record(tmp_path: Path, dialect: Dialect) -> None:
    counts: collections.Counter[str] = collections.Counter()
    for name, sizes in LOGS.items():
        log = build(tmp_path / f"{name}.clean", sizes, dialect)
        assert log.tells == log.ends, dialect.name  # our layout is the Writer's
        n = len(log.data)
        last = (n - 1) // B * B
        first = range(min(B, n)) if dialect.name == "leveldb" or n <= B else range(0, B, 7)
        for at in sorted(set(first) | set(range(last, n))):
            what = f"{name}: cut at {at}"
            counts[
                assert_append_keeps_intact_records(log, tmp_path / "case.log", what, log.data[:at])
            ] += 1
    print(f"{dialect.name}: {dict(counts)}")
    assert sum(counts.values()) >= 3 * 1400
