"""The torn tail is counted once (_stats.torn_tail_bytes): `stats` and
``leveldb-log verify`` give the same figure for every way a log can end."""

from __future__ import annotations

import re
from pathlib import Path

import leveldb_log
import pytest
from leveldb_log._core import BLOCK_SIZE

from tests.support import model
from tests.support.cli import run_cli_asserting_no_traceback

RECORDS = [b"one", b"two" * 1000, b"three" * 9000, b"four" * 20]


def log_ending(how: str) -> bytes:
    log, _ = model.encode(RECORDS)
    if how == "whole":
        return log
    if how == "cut payload":
        return log[:-50]
    if how == "cut header":
        return log[: len(log) - len(RECORDS[-1]) - 3]
    if how == "cut mid-record":  # the fragmented record's LAST lost
        return log[: BLOCK_SIZE + 100]
    assert how == "zero fill"
    return log + b"\0" * 100  # preallocated space in the final block


@pytest.mark.parametrize(
    "how", ["whole", "cut payload", "cut header", "cut mid-record", "zero fill"]
)
def test_stats_and_verify_count_the_same_torn_tail(tmp_path: Path, how: str) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(log_ending(how))
    torn = leveldb_log.stats(path).torn_tail_bytes
    out = run_cli_asserting_no_traceback("verify", path).stdout.decode()
    noted = re.search(r"torn tail at offset \d+ \((\d+) bytes\)", out)
    assert (int(noted.group(1)) if noted else 0) == torn
    assert (torn > 0) == how.startswith("cut")
    assert ("ends in zero fill" in out) == (how == "zero fill")


def test_the_count_is_what_the_reader_left_unless_zero_fill_ends_the_file() -> None:
    from leveldb_log._stats import torn_tail_bytes

    assert torn_tail_bytes(100, 60, False) == 40
    assert torn_tail_bytes(100, 60, True) == 0
    assert torn_tail_bytes(100, 100, False) == 0
    assert torn_tail_bytes(100, BLOCK_SIZE, False) == 0  # past the end: a bad final block
