"""The stream reader's driver side without a SparkSession: offsets, limits, the checks of a
file's identity, and the ranges planned, called as Spark's planner calls them."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log._errors import LogError

pytestmark = pytest.mark.slow

pytest.importorskip("pyspark")

from leveldb_log.spark import _stream_read  # noqa: E402
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxBytes  # noqa: E402

ALL = ReadAllAvailable()


def reader(folder: Path, **options: str) -> _stream_read.LogStreamReader:
    return _stream_read.LogStreamReader({"path": str(folder), **options}, None)


def write(path: Path, records: list[bytes]) -> None:
    with leveldb_log.Writer(path, "a") as w:
        w.write_many(records)


def ends(offset: dict[str, Any]) -> dict[str, int]:
    return {os.path.basename(p): e["pos"] for p, e in offset["files"].items()}


def test_an_idle_file_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "000001.log", [b"x" * 100] * 10)
    r = reader(tmp_path)
    first = r.latestOffset(r.initialOffset(), ALL)
    calls: list[int] = []
    real = _stream_read._tail_end

    def counting(*args: Any) -> int:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(_stream_read, "_tail_end", counting)
    assert r.latestOffset(first, ALL) == first
    assert calls == []
    write(tmp_path / "000001.log", [b"y"])
    assert ends(r.latestOffset(first, ALL)) == {"000001.log": 1070 + 8}
    assert calls == [1]


def test_the_end_is_the_last_complete_record(tmp_path: Path) -> None:
    log = tmp_path / "000001.log"
    write(log, [b"a" * 10, b"b" * 50_000])
    data = log.read_bytes()
    log.write_bytes(data[:-5])  # the second record's last fragment cut short
    r = reader(tmp_path)
    start = r.initialOffset()
    end = r.latestOffset(start, ALL)
    assert ends(end) == {"000001.log": 17}
    (piece, dialect), *_ = [p for part in r.partitions(start, end) for p in part.pieces]
    assert (piece.start, piece.end, dialect) == (0, 17, "leveldb")


def test_max_bytes_admits_files_in_name_order(tmp_path: Path) -> None:
    for name in ("000002.log", "000001.log"):
        write(tmp_path / name, [b"r" * 93] * 10)  # 1000 bytes each
    r = reader(tmp_path, maxBytesPerTrigger="1500")
    assert isinstance(r.getDefaultReadLimit(), ReadMaxBytes)
    start = r.initialOffset()
    one = r.latestOffset(start, ReadMaxBytes(1500))
    assert ends(one) == {"000001.log": 1000, "000002.log": 500}
    two = r.latestOffset(one, ReadMaxBytes(1500))
    assert ends(two) == {"000001.log": 1000, "000002.log": 1000}
    assert r.latestOffset(two, ReadMaxBytes(1500)) == two
    ranges = [
        (os.path.basename(p.path), p.start, p.end)
        for part in r.partitions(one, two)
        for p, _ in part.pieces
    ]
    assert ranges == [("000002.log", 500, 1000)]


def test_available_now_stops_at_what_was_there(tmp_path: Path) -> None:
    write(tmp_path / "000001.log", [b"a" * 93] * 2)
    r = reader(tmp_path)
    start = r.initialOffset()
    r.prepareForTriggerAvailableNow()
    write(tmp_path / "000001.log", [b"b" * 93])
    write(tmp_path / "000002.log", [b"c" * 93])
    assert ends(r.latestOffset(start, ALL)) == {"000001.log": 200}


def test_a_file_rewritten_in_place_is_a_replaced_file(tmp_path: Path) -> None:
    log = tmp_path / "000001.log"
    write(log, [b"a" * 93] * 3)
    r = reader(tmp_path)
    committed = r.latestOffset(r.initialOffset(), ALL)
    other = io.BytesIO()
    with leveldb_log.Writer(other) as w:
        w.write_many([b"b" * 93] * 3)
    with open(log, "r+b") as f:  # the same inode and size, other records
        f.write(other.getvalue())
    os.utime(log, ns=(1, 1))
    with pytest.raises(LogError, match="was replaced by another file"):
        r.latestOffset(committed, ALL)
    restart = reader(tmp_path, onReplace="restart")
    again = restart.latestOffset(committed, ALL)
    assert [
        (p.start, p.end) for part in restart.partitions(committed, again) for p, _ in part.pieces
    ] == [(0, 300)]


def test_ranges_are_cut_at_max_partition_bytes(tmp_path: Path) -> None:
    write(tmp_path / "000001.log", [b"z" * 93] * 100)  # 10,000 bytes
    r = reader(tmp_path, maxPartitionBytes="4096", openCostInBytes="0")
    start = r.initialOffset()
    parts = r.partitions(start, r.latestOffset(start, ALL))
    assert [[(p.start, p.end) for p, _ in part.pieces] for part in parts] == [
        [(0, 4096)],
        [(4096, 8192)],
        [(8192, 10_000)],
    ]


def test_latest_starts_at_the_current_ends(tmp_path: Path) -> None:
    write(tmp_path / "000001.log", [b"old" * 31] * 2)
    r = reader(tmp_path, startingPosition="latest")
    start = r.initialOffset()
    assert ends(start) == {"000001.log": 200}
    write(tmp_path / "000001.log", [b"new" * 31])
    end = r.latestOffset(start, ALL)
    assert [(p.start, p.end) for part in r.partitions(start, end) for p, _ in part.pieces] == [
        (200, 300)
    ]


def test_a_torn_tail_before_a_newer_file_is_waited_for_and_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = tmp_path / "000001.log"
    write(old, [b"a" * 93, b"b" * 93])
    old.write_bytes(old.read_bytes()[:-10])  # a writer died in its second record
    write(tmp_path / "000002.log", [b"c" * 93])
    r = reader(tmp_path)
    with caplog.at_level("WARNING", logger="leveldb_log.spark"):
        first = r.latestOffset(r.initialOffset(), ALL)
        r.latestOffset(first, ALL)
        os.utime(old, ns=(2, 2))  # looked at again, unchanged
        r.latestOffset(first, ALL)
    assert ends(first) == {"000001.log": 100, "000002.log": 100}
    warnings = [m for m in caplog.messages if "torn tail" in m]
    assert warnings == [
        f"leveldb_log stream: {old} ends in 90 bytes after its last complete record, and "
        "newer files exist: a torn tail, not read until it is completed"
    ]


def test_a_deleted_file_is_no_longer_followed(tmp_path: Path) -> None:
    write(tmp_path / "000001.log", [b"a" * 93])
    write(tmp_path / "000002.log", [b"b" * 93])
    r = reader(tmp_path)
    first = r.latestOffset(r.initialOffset(), ALL)
    (tmp_path / "000001.log").unlink()  # a database removes its old WALs
    assert ends(r.latestOffset(first, ALL)) == {"000002.log": 100}


def test_a_file_that_is_no_log_is_reported_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    write(tmp_path / "000001.log", [b"x" * 100] * 3)
    (tmp_path / "notes.txt").write_bytes(b"not a log, a note\n" * 40)
    r = reader(tmp_path)
    with caplog.at_level(logging.WARNING, logger="leveldb_log.spark"):
        offset = r.latestOffset(r.initialOffset(), ALL)
        offset = r.latestOffset(offset, ALL)
        write(tmp_path / "000001.log", [b"y"])
        r.latestOffset(offset, ALL)
    (record,) = caplog.records
    assert f"{tmp_path / 'notes.txt'} holds 720 bytes and no complete record" in record.getMessage()
    assert ends(offset) == {"000001.log": 321, "notes.txt": 0}
