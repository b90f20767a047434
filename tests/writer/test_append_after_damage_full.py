"""Appending never removes an intact record, after a truncation of each log of
tests/support/append_damage.py: at every offset of the one-block log, and in the first and the
last block of the longer ones at every offset within a header's length of a physical header,
the end of a header, a record's end or a block's end, and at every 7th offset between, where a
cut lands inside a payload (the behaviour tier, tests/writer/test_append_after_damage.py,
takes every 97th offset)."""

from __future__ import annotations

import collections
from pathlib import Path

import leveldb_log
import pytest
from support.append_damage import (
    DIALECTS,
    LOGS,
    Dialect,
    Log,
    assert_append_keeps_intact_records,
    build,
)

pytestmark = pytest.mark.slow

B = leveldb_log.BLOCK_SIZE


def near_boundaries(log: Log) -> set[int]:
    """The offsets within a header's length of a physical header, a header's end, a record's
    end or a block's end."""
    h = log.dialect.header
    marks = {*log.headers, *(at + h for at in log.headers), *log.ends}
    marks |= set(range(0, len(log.data) + B, B))
    return {at + d for at in marks for d in range(-h, h + 1) if 0 <= at + d <= len(log.data)}


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_truncations_at_every_boundary_keep_every_intact_record(
    tmp_path: Path, dialect: Dialect
) -> None:
    counts: collections.Counter[str] = collections.Counter()
    for name, sizes in LOGS.items():
        log = build(tmp_path / f"{name}.clean", sizes, dialect)
        assert log.tells == log.ends, dialect.name  # our layout is the Writer's
        n = len(log.data)
        last = (n - 1) // B * B
        ends = set(range(0, B, 7)) | set(range(last, n, 7)) | near_boundaries(log)
        cuts = set(range(n)) if n <= B else {at for at in ends if at < B or at >= last}
        for at in sorted(cuts):
            what = f"{name}: cut at {at}"
            counts[
                assert_append_keeps_intact_records(log, tmp_path / "case.log", what, log.data[:at])
            ] += 1
    print(f"{dialect.name}: {dict(counts)}")
    assert sum(counts.values()) >= 3000
