"""format("leveldb_log")'s options: damage in every mode with its reports (rows, errors
naming file and offset, the executor's log), checksums off, dialects detected per file,
log numbers, and options refused at planning."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log._core import BLOCK_SIZE
from leveldb_log.spark._read import LogReader
from support.warned import READS_DAMAGE

pytestmark = pytest.mark.slow

RECORDS = [(b"r%03d-" % i) * (30 + i * 7) for i in range(200)]


def reader_rows(path: Path, **kwargs: Any) -> list[tuple[int, bytes]]:
    rows = []
    with leveldb_log.Reader(path, **kwargs) as reader:
        for record in reader:
            rows.append((reader.last_record_offset, record))
    return rows


def reports(path: Path, **kwargs: Any) -> list[tuple[str, int, int, str]]:
    found: list[Any] = []
    with leveldb_log.Reader(path, on_corruption=found.append, **kwargs) as reader:
        for _ in reader:
            pass
    return [(str(path), c.offset, c.size, c.reason) for c in found]


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log with a flipped byte in its second block's first record and a torn tail."""
    path = tmp_path_factory.mktemp("damaged") / "000005.log"
    with leveldb_log.Writer(path, "w") as w:
        for record in RECORDS:
            w.write(record)
    raw = bytearray(path.read_bytes())
    raw[BLOCK_SIZE + 20] ^= 0xFF
    path.write_bytes(bytes(raw[:-9]))
    return path


def load(spark: Any, path: Path, **options: str) -> Any:
    return spark.read.format("leveldb_log").options(**options).load(str(path))


def rows(df: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in df.collect()]


@READS_DAMAGE
def test_permissive_skips_damage_as_leveldb_does(spark: Any, damaged: Path) -> None:
    expected = reader_rows(damaged, recovery="skip")
    assert 0 < len(expected) < len(RECORDS)
    assert rows(load(spark, damaged)) == expected
    assert rows(load(spark, damaged, mode="PERMISSIVE", maxPartitionBytes="1")) == expected
    assert rows(load(spark, damaged, mode="DROPMALFORMED")) == expected


def test_corruptions_true_reads_the_reports_as_rows(spark: Any, damaged: Path) -> None:
    expected = reports(damaged, recovery="skip")
    assert (str(damaged), BLOCK_SIZE, BLOCK_SIZE, "checksum mismatch") in expected
    whole = load(spark, damaged, corruptions="true")
    assert whole.columns == ["path", "offset", "size", "reason"]
    assert rows(whole) == expected
    # Ranges report each corruption once too, in the order of the ranges
    by_block = load(spark, damaged, corruptions="true", maxPartitionBytes=str(BLOCK_SIZE))
    assert sorted(rows(by_block)) == sorted(expected)
    absolute = load(spark, damaged, corruptions="true", recovery="point_in_time")
    assert rows(absolute) == reports(damaged, recovery="point_in_time")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "FAILFAST"}, r"000005\.log: checksum mismatch at offset 32768"),
        ({"recovery": "absolute"}, r"000005\.log: checksum mismatch at offset 32768"),
        ({"recovery": "tolerate_tail"}, r"000005\.log: checksum mismatch at offset 32768"),
    ],
)
def test_failfast_fails_the_job_naming_file_and_offset(
    spark: Any, damaged: Path, options: dict[str, str], message: str
) -> None:
    with pytest.raises(Exception, match=message):
        load(spark, damaged, **options).collect()


def test_a_torn_tail_fails_only_absolute(spark: Any, damaged: Path, tmp_path: Path) -> None:
    torn = tmp_path / "torn.log"
    with leveldb_log.Writer(torn, "w") as w:
        for record in RECORDS[:20]:
            w.write(record)
    torn.write_bytes(torn.read_bytes()[:-5])
    expected = reader_rows(torn, recovery="tolerate_tail")
    assert rows(load(spark, torn, recovery="tolerate_tail")) == expected
    assert len(expected) == 19
    with pytest.raises(Exception, match=r"torn\.log: truncated payload at end of file"):
        load(spark, torn, mode="FAILFAST").collect()


@READS_DAMAGE
def test_point_in_time_stops_each_file_at_its_first_damage(spark: Any, damaged: Path) -> None:
    df = load(spark, damaged, recovery="point_in_time", maxPartitionBytes=str(BLOCK_SIZE))
    assert df.rdd.getNumPartitions() == 1  # one partition per file: it must stop there
    expected = reader_rows(damaged, recovery="point_in_time")
    assert rows(df) == expected
    assert expected == reader_rows(damaged)[: len(expected)]


@READS_DAMAGE
def test_verify_checksums_false_returns_the_damaged_payload(spark: Any, damaged: Path) -> None:
    expected = reader_rows(damaged, verify_checksums=False)
    assert expected != reader_rows(damaged)
    assert rows(load(spark, damaged, verifyChecksums="false")) == expected


def test_damage_is_logged_by_the_task_that_meets_it(
    damaged: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Spark gives a Python source no channel to the driver: the task logs it (the
    # executor's stderr), as this reader's read() does here, in this process.
    reader = LogReader({"path": str(damaged)}, None)
    with caplog.at_level(logging.WARNING, logger="leveldb_log.spark"):
        for partition in reader.partitions():
            for _ in reader.read(partition):
                pass
    (record,) = caplog.records
    found = reports(damaged)
    (_, offset, _, reason) = found[0]
    records = len(reader_rows(damaged, on_corruption=lambda c: None))
    assert record.getMessage() == (
        f"leveldb_log: {damaged}: {records} record(s) read; {len(found)} corruption(s), "
        f"{sum(r[2] for r in found)} bytes dropped; the first at offset {offset}: {reason}"
    )


@pytest.fixture(scope="module")
def dialect_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One log of each dialect in one folder, the RocksDB one with recyclable records."""
    folder = tmp_path_factory.mktemp("dialects")
    for name, kwargs in [
        ("000007.log", {"dialect": "rocksdb", "recycle": True}),
        ("000008.log", {}),
        ("000009.log", {"dialect": "pebble"}),
    ]:
        with leveldb_log.Writer(folder / name, "w", **kwargs) as w:
            for record in RECORDS[:50]:
                w.write(record)
    return folder


def test_dialects_are_detected_per_file(spark: Any, dialect_logs: Path) -> None:
    df = load(spark, dialect_logs, includePath="true")
    expected = [
        (offset, record, str(dialect_logs / name))
        for name, dialect in [
            ("000007.log", "rocksdb"),
            ("000008.log", "leveldb"),
            ("000009.log", "pebble"),
        ]
        for offset, record in reader_rows(dialect_logs / name, dialect=dialect)
    ]
    assert [r[1] for r in expected] == RECORDS[:50] * 3
    assert rows(df) == expected


def test_a_dialect_given_applies_to_every_file(spark: Any, dialect_logs: Path) -> None:
    rocksdb = dialect_logs / "000007.log"
    as_leveldb = rows(load(spark, rocksdb, dialect="leveldb", corruptions="true"))
    assert as_leveldb == reports(rocksdb, dialect="leveldb")
    assert as_leveldb  # LevelDB does not know recyclable records
    assert rows(load(spark, rocksdb, dialect="RocksDB")) == reader_rows(rocksdb, dialect="rocksdb")


def test_log_number_holds_recyclable_records_to_it(spark: Any, dialect_logs: Path) -> None:
    rocksdb = dialect_logs / "000007.log"
    assert rows(load(spark, rocksdb, logNumber="7")) == reader_rows(rocksdb, dialect="rocksdb")
    other = reader_rows(rocksdb, dialect="rocksdb", log_number=8)
    assert other == []  # another log's records: an older log's data
    assert rows(load(spark, rocksdb, logNumber="8")) == other


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "LENIENT"}, "option mode must be one of PERMISSIVE, DROPMALFORMED, FAILFAST"),
        ({"mode": "FAILFAST", "recovery": "skip"}, "options mode=FAILFAST and recovery=skip"),
        ({"recovery": "best"}, "option recovery must be one of"),
        ({"dialect": "sqlite"}, "option dialect must be one of"),
        ({"verifyChecksums": "yes"}, "option verifyChecksums must be true or false"),
        ({"maxPartitionBytes": "0"}, "option maxPartitionBytes must be at least 1"),
        ({"logNumber": "x"}, "option logNumber must be a whole number"),
        ({"dialect": "leveldb", "logNumber": "3"}, "log_number needs dialect 'rocksdb' or"),
        ({"decode": "true", "corruptions": "true"}, "decode and corruptions exclude"),
        ({"storageOptions": "[1]"}, "option storageOptions must be a JSON object"),
    ],
)
def test_a_wrong_option_fails_when_the_query_is_planned(
    spark: Any, damaged: Path, options: dict[str, str], message: str
) -> None:
    with pytest.raises(Exception, match=message):
        load(spark, damaged, **options).collect()
