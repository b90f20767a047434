"""Partitioned writes, ``option("partitionColumns", ...)``: the key=value folders Spark's own
``partitionBy`` lays out (escaping and nulls included), read back with their columns by this
source and by Spark's text source, one commit for the whole tree, and the save modes."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import leveldb_log
import pytest

pytestmark = pytest.mark.slow

#: A value with every character Spark escapes in a folder name (and some it does not).
EVERY_CHARACTER = "".join(chr(c) for c in range(1, 128))
KEYS = ["x", "a b/c", None, EVERY_CHARACTER]


def rows(count: int = 24) -> list[tuple[Any, ...]]:
    """(k, n, data): four values of k (a null, one needing escapes), two of n."""
    return [(KEYS[i % 4], i % 2, f"record {i}".encode()) for i in range(count)]


def frame(spark: Any, data: list[tuple[Any, ...]], partitions: int = 2) -> Any:
    return spark.createDataFrame(data, "k string, n int, data binary").repartition(partitions)


def save(df: Any, path: Path, mode: str = "append", columns: str = "k,n", **options: Any) -> None:
    writer = df.write.format("leveldb_log").mode(mode).option("partitionColumns", columns)
    writer.options(**options).save(str(path))


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root, hidden ones included, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def records(root: Path) -> dict[str, int]:
    """Every visible log below root -> its records."""
    found = {}
    for name in snapshot(root):
        if not name.rsplit("/", 1)[-1].startswith((".", "_")):
            with leveldb_log.Reader(root / name, recovery="absolute") as r:
                found[name] = len(list(r))
    return found


def folders(root: Path) -> set[str]:
    """The folders holding the visible files below root."""
    return {
        str(p.parent.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith((".", "_"))
    }


def visible(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if not n.startswith((".", "_")))


def test_a_partitioned_write_reads_back_as_spark_lays_it_out(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    logs, text = tmp_path / "logs", tmp_path / "text"
    df = frame(spark, rows())
    save(df, logs)
    # Spark's own partitionBy names the same folders: its escaping and nulls are ours
    df.withColumn("data", F.col("data").cast("string")).write.partitionBy("k", "n").text(str(text))
    assert folders(logs) == folders(text) and len(folders(logs)) == 4
    assert visible(logs) == visible(text)
    # our source: the same rows, with the partition columns typed by Spark's inference
    back = spark.read.format("leveldb_log").option("includePath", "true").load(str(logs))
    assert [(f.name, f.dataType.simpleString()) for f in back.schema.fields][-2:] == [
        ("k", "string"),
        ("n", "int"),
    ]
    got = back.select("k", "n", "data", "path").collect()
    assert Counter((r.k, r.n, bytes(r.data)) for r in got) == Counter(rows())
    # Spark's text source over the logs: the same files and partition columns; over its own
    # text tree, the same rows per partition
    theirs = spark.read.text(str(logs)).withColumn("file", F.input_file_name())
    assert theirs.schema.fields[1:] == back.schema.fields[-2:] + theirs.schema.fields[-1:]
    files = {os.path.relpath(r.path, logs) for r in got}
    text_files = {unquote(f.removeprefix("file:")) for f in theirs.inputFiles()}
    assert files == {os.path.relpath(f, logs) for f in text_files}
    counts = Counter((r.k, r.n) for r in got)
    text_rows = spark.read.text(str(text)).select("k", "n").collect()
    assert counts == Counter((r.k, r.n) for r in text_rows)


def test_an_aborted_partitioned_job_leaves_the_tree_as_it_was(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    def poison(k, data):  # no hints: Spark would look in them for a pandas UDF
        if data == b"record 21":
            raise RuntimeError("poison record 21")
        return data

    save(frame(spark, rows(8)), tmp_path)
    before = snapshot(tmp_path)
    # one task: a second one could still be running when the job is aborted
    df = frame(spark, rows(), 1).withColumn("data", F.udf(poison, "binary")("k", "data"))
    for mode in ("append", "overwrite"):
        with pytest.raises(Exception, match="poison record 21"):
            save(df, tmp_path, mode)
        assert snapshot(tmp_path) == before


def test_save_modes_on_a_partitioned_tree(spark: Any, tmp_path: Path) -> None:
    from pyspark.errors import AnalysisException

    save(frame(spark, rows(8), 1), tmp_path)
    save(frame(spark, rows(8), 1), tmp_path)  # append: a second log in each folder
    first = records(tmp_path)
    assert len(first) == 8 and set(first.values()) == {2}
    assert Counter(name.rsplit("/", 1)[0] for name in first) == dict.fromkeys(folders(tmp_path), 2)
    (tmp_path / "_notes").write_bytes(b"hidden: kept")
    before = snapshot(tmp_path)
    for mode in ("error", "ignore"):
        with pytest.raises(AnalysisException, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
            save(frame(spark, rows(8)), tmp_path, mode)
    assert snapshot(tmp_path) == before
    # overwrite: the tree's files are replaced, the folders left empty go too
    fresh = spark.createDataFrame([("y", 7, b"new")], "k string, n int, data binary")
    save(fresh, tmp_path, "overwrite")
    now = records(tmp_path)
    assert list(now.values()) == [1] and next(iter(now)).startswith("k=y/n=7/part-")
    assert sorted(os.listdir(tmp_path)) == ["_notes", "k=y"]
    assert (tmp_path / "_notes").read_bytes() == b"hidden: kept"


@pytest.mark.parametrize(
    ("columns", "options", "message"),
    [
        ("k,nope", {}, "no partition column 'nope'"),
        ("k,data", {}, "partition column 'data' is the column written as records"),
        ("k", {"column": "k"}, "partition column 'k' is the column written as records"),
        ("k,K", {}, "partition column 'k' is named twice"),
        ("k,f", {}, "partition column 'f' is double"),
        ("k,", {}, "names an empty column"),
    ],
)
def test_partition_columns_that_cannot_be_written_fail_when_planned(
    spark: Any, tmp_path: Path, columns: str, options: dict[str, str], message: str
) -> None:
    out = tmp_path / "out"
    df = spark.createDataFrame([], "k string, n int, f double, data binary")
    with pytest.raises(Exception, match=message):
        save(df, out, columns=columns, **options)
    assert not out.exists()


def test_a_string_record_column_beside_its_partitions_is_the_one_written(
    spark: Any, tmp_path: Path
) -> None:
    """With no column option and no ``data``, the only column besides the partition
    columns is written."""
    df = spark.createDataFrame([("a", "one"), ("b", "two")], "k string, text string")
    save(df, tmp_path, columns="k")
    assert folders(tmp_path) == {"k=a", "k=b"}
    back = spark.read.format("leveldb_log").load(str(tmp_path)).collect()
    assert sorted((r.k, bytes(r.data)) for r in back) == [("a", b"one"), ("b", b"two")]


def direct_writer(path: Path, options: dict[str, str], overwrite: bool = False) -> Any:
    """The batch writer as Spark's driver builds it, for a (k string, data binary) frame."""
    from leveldb_log.spark import _write
    from pyspark.sql.types import BinaryType, StringType, StructField, StructType

    schema = StructType([StructField("k", StringType()), StructField("data", BinaryType())])
    return _write.LogWriter(
        {"path": str(path), "partitionColumns": "k", **options}, schema, overwrite
    )


def batch(keys: list[str], data: list[bytes]) -> Any:
    import pyarrow as pa

    return pa.record_batch([pa.array(keys), pa.array(data, pa.binary())], names=["k", "data"])


def test_a_task_that_fails_deletes_every_log_it_staged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leveldb_log.spark import _write

    writer = direct_writer(tmp_path, {})
    monkeypatch.setattr(_write, "task_ids", lambda: (3, 9))

    def batches() -> Any:
        yield batch(["a", "b", "a"], [b"1", b"2", b"3"])
        raise RuntimeError("poison row")

    with pytest.raises(RuntimeError, match="poison row"):
        writer.write(batches())
    assert [files for _, _, files in os.walk(writer.staging) if files] == []
    writer.abort([None])
    assert snapshot(tmp_path) == {} and os.listdir(tmp_path) == []


def test_numbered_names_go_on_from_the_trees_highest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leveldb_log.spark import _write

    (tmp_path / "k=a").mkdir()
    with leveldb_log.Writer(tmp_path / "k=a" / "000003.log") as w:
        w.write(b"earlier")
    writer = direct_writer(tmp_path, {"naming": "number"})
    monkeypatch.setattr(_write, "task_ids", lambda: (0, 1))
    message = writer.write(iter([batch(["a", "b"], [b"1", b"2"])]))
    writer.commit([message])
    assert records(tmp_path) == {"k=a/000003.log": 1, "k=a/000004.log": 1, "k=b/000004.log": 1}


def test_a_stream_refuses_partition_columns(tmp_path: Path) -> None:
    from leveldb_log.spark._stream_write import LogStreamWriter
    from pyspark.sql.types import BinaryType, StringType, StructField, StructType

    schema = StructType([StructField("k", StringType()), StructField("data", BinaryType())])
    options = {"path": str(tmp_path / "out"), "partitionColumns": "k"}
    with pytest.raises(ValueError, match="partitionColumns is for batch writes"):
        LogStreamWriter(options, schema, False)
    assert not (tmp_path / "out").exists()
