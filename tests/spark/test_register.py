"""register(): the session's settings that cut reads into partitions become the sources'
defaults, since Spark hands a Python data source none of its settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import leveldb_log
import leveldb_log.spark
import pytest
from leveldb_log.spark import byte_size

pytestmark = pytest.mark.slow


@pytest.fixture
def ten_blocks(tmp_path: Path) -> Path:
    """A log of ten full blocks (one record of 32 KiB - 7 bytes in each)."""
    path = tmp_path / "ten.log"
    with leveldb_log.Writer(path) as w:
        w.write_many(
            bytes([i]) * (leveldb_log.BLOCK_SIZE - leveldb_log.HEADER_SIZE) for i in range(10)
        )
    assert path.stat().st_size == 10 * leveldb_log.BLOCK_SIZE
    return path


def partitions(spark: Any, path: Path, **options: str) -> int:
    return int(
        spark.read.format("leveldb_log").options(**options).load(str(path)).rdd.getNumPartitions()
    )


def test_max_partition_bytes_of_the_session_sizes_the_partitions(
    spark: Any, ten_blocks: Path
) -> None:
    conf = spark.conf
    try:
        conf.set("spark.sql.files.maxPartitionBytes", "64k")
        conf.set("spark.sql.files.openCostInBytes", "0")
        leveldb_log.spark.register(spark)
        assert partitions(spark, ten_blocks) == 5
        # an option given to the read still wins
        assert partitions(spark, ten_blocks, maxPartitionBytes=str(32 << 10)) == 10
        conf.set("spark.sql.files.maxPartitionBytes", "160KB")
        assert partitions(spark, ten_blocks) == 5  # taken when register() ran
        leveldb_log.spark.register(spark)
        assert partitions(spark, ten_blocks) == 2
    finally:
        conf.unset("spark.sql.files.maxPartitionBytes")
        conf.unset("spark.sql.files.openCostInBytes")
        leveldb_log.spark.register(spark)
    assert partitions(spark, ten_blocks) == 1  # Spark's defaults: 128 MiB, 4 MiB to open


def test_the_rows_are_the_same_whatever_the_session_settings(spark: Any, ten_blocks: Path) -> None:
    try:
        spark.conf.set("spark.sql.files.maxPartitionBytes", "32k")
        leveldb_log.spark.register(spark)
        rows = spark.read.format("leveldb_log").load(str(ten_blocks)).orderBy("offset").collect()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        leveldb_log.spark.register(spark)
    reader = leveldb_log.Reader(ten_blocks)
    expected = [(reader.last_record_offset, record) for record in reader]
    assert [(row.offset, bytes(row.data)) for row in rows] == expected


@pytest.mark.parametrize(
    ("text", "size"),
    [("128MB", 128 << 20), ("4m", 4 << 20), ("134217728b", 134217728), ("7", 7), ("1g", 1 << 30)],
)
def test_byte_sizes_as_spark_writes_them(text: str, size: int) -> None:
    assert byte_size(text, "maxPartitionBytes") == size


@pytest.mark.parametrize("text", ["", "12q", "mb", "1.5g", "-1"])
def test_a_setting_that_is_no_byte_size_is_refused_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match=r"spark\.sql\.files\.maxPartitionBytes is no byte size"):
        byte_size(text, "maxPartitionBytes")
