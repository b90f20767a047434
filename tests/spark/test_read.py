"""spark.read.format("leveldb_log"): what it lists, how it cuts files into partitions, and
that its rows are byte for byte what a Reader returns."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log._core import BLOCK_SIZE

pytestmark = pytest.mark.slow


def write_log(path: Path, records: list[bytes], dialect: str = "leveldb") -> Path:
    kwargs = {} if dialect == "leveldb" else {"dialect": dialect}
    with leveldb_log.Writer(path, "w", **kwargs) as w:
        for record in records:
            w.write(record)
    return path


def reader_rows(path: Path | str, **kwargs: Any) -> list[tuple[int, bytes]]:
    """(offset, record) for every record a Reader returns."""
    rows = []
    with leveldb_log.Reader(path, **kwargs) as reader:
        for record in reader:
            rows.append((reader.last_record_offset, record))
    return rows


def records(tag: str, n: int, size: int) -> list[bytes]:
    return [(f"{tag}-{i}-".encode() * size)[: size + i % 7] for i in range(n)]


def spark_rows(df: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in df.collect()]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of three logs of records that cross blocks, a hidden file and a file whose
    name starts with an underscore (both left out of a folder's listing)."""
    folder = tmp_path_factory.mktemp("logs")
    write_log(folder / "000003.log", records("c", 300, 900))
    write_log(folder / "000001.log", records("a", 40, 5000))
    write_log(folder / "000002.log", [b"", b"x" * (3 * BLOCK_SIZE), b"y"])
    write_log(folder / ".hidden.log", [b"hidden"])
    write_log(folder / "_part.log", [b"in progress"])
    return folder


def expected(folder: Path, names: list[str]) -> list[tuple[int, bytes, str]]:
    return [(o, r, str(folder / n)) for n in names for o, r in reader_rows(folder / n)]


NAMES = ["000001.log", "000002.log", "000003.log"]


def test_a_folder_reads_its_files_in_name_order_byte_for_byte(spark: Any, logs: Path) -> None:
    df = spark.read.format("leveldb_log").option("includePath", "true").load(str(logs))
    assert df.columns == ["offset", "data", "path"]
    assert spark_rows(df) == expected(logs, NAMES)


@pytest.mark.parametrize("size", [BLOCK_SIZE, 5 * BLOCK_SIZE, 1 << 30])
def test_every_partition_size_reads_every_record_once(spark: Any, logs: Path, size: int) -> None:
    df = (
        spark.read.format("leveldb_log")
        .option("includePath", "true")
        .option("maxPartitionBytes", str(size))
        .load(str(logs))
    )
    assert spark_rows(df) == expected(logs, NAMES)


def test_partitions_are_block_ranges_packed_up_to_max_partition_bytes(
    spark: Any, logs: Path
) -> None:
    sizes = [os.path.getsize(logs / n) for n in NAMES]
    blocks = sum(-(-s // BLOCK_SIZE) for s in sizes)
    one_block = spark.read.format("leveldb_log").option("maxPartitionBytes", str(BLOCK_SIZE))
    assert one_block.load(str(logs)).rdd.getNumPartitions() == blocks
    packed = one_block.option("maxPartitionBytes", str(1 << 30))
    assert packed.load(str(logs)).rdd.getNumPartitions() == 1
    # Each file fits in sum(sizes), but not with the cost of opening it added (4 MiB)
    exact = one_block.option("maxPartitionBytes", str(sum(sizes)))
    assert exact.load(str(logs)).rdd.getNumPartitions() == 3
    assert exact.option("openCostInBytes", "0").load(str(logs)).rdd.getNumPartitions() == 1


def test_paths_globs_lists_and_file_urls(spark: Any, logs: Path) -> None:
    reader = spark.read.format("leveldb_log").option("includePath", "true")
    glob = reader.load(str(logs / "00000[13].log"))
    assert spark_rows(glob) == expected(logs, ["000001.log", "000003.log"])
    listed = reader.load([str(logs / "000003.log"), str(logs / "000002.log")])
    assert spark_rows(listed) == expected(logs, ["000003.log", "000002.log"])
    named = reader.load(str(logs / "_part.log"))
    assert spark_rows(named) == expected(logs, ["_part.log"])
    url = reader.option("storageOptions", '{"auto_mkdir": false}').load(f"file://{logs}")
    assert spark_rows(url) == expected(logs, NAMES)


def test_path_glob_filter_keeps_matching_names(spark: Any, logs: Path) -> None:
    df = (
        spark.read.format("leveldb_log")
        .option("includePath", "true")
        .option("pathGlobFilter", "*2.log")
        .load(str(logs))
    )
    assert spark_rows(df) == expected(logs, ["000002.log"])


def test_without_include_path_the_columns_are_offset_and_data(spark: Any, logs: Path) -> None:
    df = spark.read.format("leveldb_log").load(str(logs / "000002.log"))
    assert [(f.name, f.dataType.simpleString(), f.nullable) for f in df.schema] == [
        ("offset", "bigint", False),
        ("data", "binary", False),
    ]
    assert spark_rows(df) == reader_rows(logs / "000002.log")


def test_a_missing_path_fails_naming_it(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"no-such\.log"):
        spark.read.format("leveldb_log").load(str(tmp_path / "no-such.log")).collect()
    with pytest.raises(Exception, match=r"no file matches .*\*\.log"):
        spark.read.format("leveldb_log").load(str(tmp_path / "*.log")).collect()


def test_a_folder_without_logs_has_no_rows(spark: Any, tmp_path: Path) -> None:
    write_log(tmp_path / "_in_progress.log", [b"not yet"])
    assert spark.read.format("leveldb_log").load(str(tmp_path)).collect() == []


def test_planning_reads_no_byte_of_a_log(logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from leveldb_log._files import _read as layer
    from leveldb_log.spark import _read

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"planning opened {args[:1]}")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(os, "open", refuse)
    reader = _read.LogReader({"path": str(logs), "maxPartitionBytes": str(BLOCK_SIZE)}, None)
    # (the options' check reads an empty buffer; "auto" is told by the Reader in the task)
    monkeypatch.setattr(layer, "Reader", refuse)
    pieces = [p for partition in reader.partitions() for p in partition.pieces]
    sizes = {n: os.path.getsize(logs / n) for n in NAMES}
    assert [(p.path, p.start) for p in pieces] == [
        (str(logs / n), start) for n in NAMES for start in range(0, sizes[n], BLOCK_SIZE)
    ]
    assert [p.end for p in pieces if p.end % BLOCK_SIZE] == [sizes[n] for n in NAMES]


def test_batches_come_in_sparks_types_from_the_reader_itself(logs: Path) -> None:
    """A Spark read asks the Reader for int64 offsets and binary payloads (32-bit offsets):
    Spark's long and binary, with no cast of a batch."""
    import dataclasses

    import pyarrow as pa
    from leveldb_log._files._plan import Range
    from leveldb_log._files._read import read_ranges
    from leveldb_log.spark._options import read_spec

    path = logs / "000001.log"
    spec = dataclasses.replace(read_spec({"includePath": "true"}), max_records=7)
    batches = list(read_ranges([Range(str(path), 0, None)], spec, print))
    assert len(batches) > 1
    for batch in batches:
        assert batch.schema.types == [pa.int64(), pa.binary(), pa.string()]
    rows = [row for batch in batches for row in zip(*batch.to_pydict().values(), strict=True)]
    assert rows == [(o, r, str(path)) for o, r in reader_rows(path)]
