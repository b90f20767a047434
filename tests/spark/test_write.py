"""``df.write.format("leveldb_log")`` on a real SparkSession: both save modes (and Spark's
refusal of the others), byte-exact round trips, the options, and a failing or aborted job
leaving nothing a reader sees."""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import leveldb_log
import pytest

pytestmark = pytest.mark.slow


def payloads(n: int, seed: int) -> list[bytes]:
    """Records of every kind: empty, every byte value, short, and spanning blocks."""
    rng = random.Random(seed)
    found = [b"", bytes(range(256)), b"\x00" * 40_000, rng.randbytes(100_000)]
    return found + [rng.randbytes(rng.randrange(1, 300)) for _ in range(n - len(found))]


def frame(spark: Any, records: list[bytes], partitions: int = 3) -> Any:
    """A DataFrame of ``records`` in a binary column ``data``, beside a ``seq`` column."""
    rows = [(i, r) for i, r in enumerate(records)]
    return spark.createDataFrame(rows, "seq long, data binary").repartition(partitions)


def visible(folder: Path) -> list[str]:
    """The names a reader of the folder reads."""
    return sorted(n for n in os.listdir(folder) if not n.startswith((".", "_")))


def read_back(folder: Path, dialect: str = "leveldb") -> Counter[bytes]:
    """Every record of every visible log of the folder, counted."""
    found: Counter[bytes] = Counter()
    for name in visible(folder):
        with leveldb_log.Reader(str(folder / name), dialect=dialect, recovery="absolute") as r:
            found.update(r)
    return found


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under the folder, hidden ones included, with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_append_writes_every_record_once(spark: Any, tmp_path: Path) -> None:
    records = payloads(500, seed=1)
    frame(spark, records).write.format("leveldb_log").mode("append").save(str(tmp_path))
    names = visible(tmp_path)
    assert len(names) == 3 and all(n.startswith("part-") and n.endswith(".log") for n in names)
    assert read_back(tmp_path) == Counter(records)
    assert sorted(os.listdir(tmp_path)) == names  # the staging folder is gone


def test_append_keeps_what_is_there(spark: Any, tmp_path: Path) -> None:
    first, second = payloads(50, seed=2), payloads(60, seed=3)
    (tmp_path / "mine.log").write_bytes(b"not touched")
    frame(spark, first).write.format("leveldb_log").mode("append").save(str(tmp_path))
    before = snapshot(tmp_path)
    frame(spark, second, 2).write.format("leveldb_log").mode("append").save(str(tmp_path))
    after = snapshot(tmp_path)
    assert {k: after[k] for k in before} == before
    assert len(visible(tmp_path)) == 1 + 3 + 2
    (tmp_path / "mine.log").unlink()
    assert read_back(tmp_path) == Counter(first) + Counter(second)


def test_overwrite_replaces_the_folders_logs(spark: Any, tmp_path: Path) -> None:
    frame(spark, payloads(40, seed=4)).write.format("leveldb_log").mode("append").save(
        str(tmp_path)
    )
    (tmp_path / "notes.txt").write_bytes(b"a visible file goes too")
    (tmp_path / ".hidden").write_bytes(b"kept")
    (tmp_path / "sub").mkdir()
    records = payloads(30, seed=5)
    frame(spark, records, 2).write.format("leveldb_log").mode("overwrite").save(str(tmp_path))
    assert len(visible(tmp_path)) == 3  # two logs and the folder sub
    assert (tmp_path / ".hidden").read_bytes() == b"kept" and (tmp_path / "sub").is_dir()
    (tmp_path / "sub").rmdir()
    assert read_back(tmp_path) == Counter(records)


@pytest.mark.parametrize("mode", ["errorifexists", "ignore", None])
def test_other_save_modes_are_refused_by_spark(
    spark: Any, tmp_path: Path, mode: str | None
) -> None:
    from pyspark.errors import AnalysisException

    (tmp_path / "000001.log").write_bytes(b"left alone")
    writer = frame(spark, [b"x"], 1).write.format("leveldb_log")
    if mode is not None:
        writer = writer.mode(mode)
    with pytest.raises(AnalysisException, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
        writer.save(str(tmp_path))
    assert snapshot(tmp_path) == {"000001.log": b"left alone"}


def test_string_column_is_written_as_utf8(spark: Any, tmp_path: Path) -> None:
    texts = ["", "plain", "déjà vu", "日本語", "emoji 🎉", "x" * 50_000]
    df = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "id long, name string")
    df.write.format("leveldb_log").mode("append").option("column", "name").save(str(tmp_path))
    assert read_back(tmp_path) == Counter(t.encode() for t in texts)


def test_the_only_column_is_written_whatever_its_name(spark: Any, tmp_path: Path) -> None:
    df = spark.createDataFrame([("a",), ("b",)], "line string")
    df.write.format("leveldb_log").mode("append").save(str(tmp_path))
    assert read_back(tmp_path) == Counter([b"a", b"b"])


def test_the_column_is_named_without_case_in_a_file_url(spark: Any, tmp_path: Path) -> None:
    df = spark.createDataFrame([(1, b"x", "y")], "id long, data binary, Payload string")
    writer = df.write.format("leveldb_log").mode("append").option("column", "PAYLOAD")
    writer.save(f"file:{tmp_path}/one")  # Hadoop's spelling
    writer.save(f"file://{tmp_path}/two")
    assert read_back(tmp_path / "one") == read_back(tmp_path / "two") == Counter([b"y"])


@pytest.mark.parametrize(
    "options",
    [
        {"dialect": "rocksdb"},
        {"dialect": "rocksdb", "compression": "zstd"},
        {"dialect": "pebble", "logNumber": "7"},
    ],
)
def test_dialects_read_back(spark: Any, tmp_path: Path, options: dict[str, str]) -> None:
    pytest.importorskip("zstandard") if "compression" in options else None
    records = payloads(80, seed=6)
    frame(spark, records, 2).write.format("leveldb_log").mode("append").options(**options).save(
        str(tmp_path)
    )
    assert read_back(tmp_path, options["dialect"]) == Counter(records)
    for name in visible(tmp_path):
        with leveldb_log.Reader(str(tmp_path / name), dialect=options["dialect"]) as r:
            list(r)
            if "compression" in options:
                assert r.compression == "zstd"
            if options["dialect"] == "pebble":
                assert r.log_number in (7, 8)


def test_numbered_names_go_on_from_the_folders_highest(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "000041.log").write_bytes(b"")
    df = frame(spark, payloads(20, seed=7), 2)
    df.write.format("leveldb_log").mode("append").option("naming", "number").save(str(tmp_path))
    assert visible(tmp_path) == ["000041.log", "000042.log", "000043.log"]


def test_a_taken_number_fails_the_commit_and_changes_nothing(spark: Any, tmp_path: Path) -> None:
    df = frame(spark, payloads(20, seed=8), 2)
    options = {"naming": "number", "logNumber": "1"}
    df.write.format("leveldb_log").mode("append").options(**options).save(str(tmp_path))
    before = snapshot(tmp_path)
    with pytest.raises(Exception, match=r"logs already there: 000001\.log, 000002\.log"):
        df.write.format("leveldb_log").mode("append").options(**options).save(str(tmp_path))
    assert snapshot(tmp_path) == before


def test_sync_writes_the_same_logs(spark: Any, tmp_path: Path) -> None:
    records = payloads(30, seed=9)
    frame(spark, records).write.format("leveldb_log").mode("append").option("sync", "true").save(
        str(tmp_path)
    )
    assert read_back(tmp_path) == Counter(records)


def test_an_empty_frame_writes_no_log(spark: Any, tmp_path: Path) -> None:
    frame(spark, [b"x"]).limit(0).write.format("leveldb_log").mode("append").save(str(tmp_path))
    assert os.listdir(tmp_path) == []


def test_a_null_fails_the_job_and_leaves_nothing(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    (tmp_path / "000001.log").write_bytes(b"left alone")
    df = frame(spark, payloads(300, seed=10)).withColumn(
        "data", F.when(F.col("seq") == 299, F.lit(None)).otherwise(F.col("data"))
    )
    for mode in ("append", "overwrite"):
        with pytest.raises(
            Exception, match=r"column 'data' has a null at row \d+ of the partition"
        ):
            df.write.format("leveldb_log").mode(mode).save(str(tmp_path))
        assert snapshot(tmp_path) == {"000001.log": b"left alone"}


def test_a_failing_udf_fails_the_job_and_leaves_nothing(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    def poison(seq, data):  # no hints: Spark would look in them for a pandas UDF
        if seq == 150:
            raise RuntimeError("poison record 150")
        return data

    (tmp_path / "kept.log").write_bytes(b"left alone")
    udf = F.udf(poison, "binary")
    df = frame(spark, payloads(300, seed=11)).withColumn("data", udf("seq", "data"))
    with pytest.raises(Exception, match="poison record 150"):
        df.write.format("leveldb_log").mode("overwrite").save(str(tmp_path))
    assert snapshot(tmp_path) == {"kept.log": b"left alone"}


@pytest.mark.parametrize(
    ("options", "schema", "message"),
    [
        ({}, "id long, n long", "no column 'data' to write as records"),
        ({"column": "n"}, "id long, n long", "column 'n' is bigint"),
        ({"compression": "zstd"}, "data binary", "compression=zstd needs dialect=rocksdb"),
        ({"dialect": "sqlite"}, "data binary", "option dialect must be one of"),
        ({"naming": "random"}, "data binary", "option naming must be one of"),
        ({"sync": "yes"}, "data binary", "option sync must be true or false"),
    ],
)
def test_bad_options_fail_before_any_task(
    spark: Any, tmp_path: Path, options: dict[str, str], schema: str, message: str
) -> None:
    out = tmp_path / "out"
    df = spark.createDataFrame([], schema)
    with pytest.raises(Exception, match=message):
        df.write.format("leveldb_log").mode("append").options(**options).save(str(out))
    assert not out.exists()


def test_a_url_other_than_file_is_refused(spark: Any) -> None:
    df = spark.createDataFrame([], "data binary")
    with pytest.raises(Exception, match="not to 's3://bucket/logs'"):
        df.write.format("leveldb_log").mode("append").save("s3://bucket/logs")


def test_only_the_committed_attempt_of_a_partition_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two attempts of partition 0 (a retry, or a speculative copy) both write; the driver
    commits the one Spark's coordinator let through: the other's log is never visible."""
    import pyarrow as pa
    from leveldb_log.spark import _write
    from pyspark.sql.types import BinaryType, StructField, StructType

    schema = StructType([StructField("data", BinaryType())])
    writer = _write.LogWriter({"path": str(tmp_path)}, schema, False)
    messages = []
    for attempt, payload in ((11, b"first attempt"), (12, b"second attempt")):
        monkeypatch.setattr(_write, "task_ids", lambda a=attempt: (0, a))
        batch = pa.record_batch([pa.array([payload], pa.binary())], names=["data"])
        messages.append(writer.write(iter([batch])))
    assert visible(tmp_path) == []
    writer.commit([messages[1]])
    assert read_back(tmp_path) == Counter([b"second attempt"])
    assert sorted(os.listdir(tmp_path)) == visible(tmp_path)


def test_abort_deletes_what_the_tasks_staged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa
    from leveldb_log.spark import _write
    from pyspark.sql.types import BinaryType, StructField, StructType

    (tmp_path / "kept.log").write_bytes(b"left alone")
    schema = StructType([StructField("data", BinaryType())])
    writer = _write.LogWriter({"path": str(tmp_path)}, schema, True)
    monkeypatch.setattr(_write, "task_ids", lambda: (0, 1))
    batch = pa.record_batch([pa.array([b"staged"], pa.binary())], names=["data"])
    message = writer.write(iter([batch]))
    assert message.staged is not None and os.path.exists(message.staged)
    writer.abort([message, None])
    assert snapshot(tmp_path) == {"kept.log": b"left alone"}


def test_a_task_that_fails_deletes_its_own_staged_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before abort runs, and even if it never does (a driver that dies)."""
    import pyarrow as pa
    from leveldb_log.spark import _write
    from pyspark.sql.types import BinaryType, StructField, StructType

    schema = StructType([StructField("data", BinaryType())])
    writer = _write.LogWriter({"path": str(tmp_path)}, schema, False)
    monkeypatch.setattr(_write, "task_ids", lambda: (3, 9))

    def batches() -> Any:
        yield pa.record_batch([pa.array([b"written"] * 1000, pa.binary())], names=["data"])
        raise RuntimeError("poison row")

    with pytest.raises(RuntimeError, match="poison row"):
        writer.write(batches())
    assert os.listdir(writer.staging) == []


RETRY_CHILD = """
import json, os, sys
sys.path[:0] = [{spark_tests!r}, {tests!r}]  # conftest.py: the one beside this test
from conftest import new_session
from pyspark import TaskContext
from pyspark.sql import functions as F

out = sys.argv[1]
spark = new_session(master="local[2,2]", app="leveldb-log-retried-task")  # 2 attempts a task
spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "50")


def first_attempt_fails(seq, data):
    context = TaskContext.get()
    if seq == 900 and context.attemptNumber() == 0:
        raise RuntimeError("the first attempt dies")
    return data


udf = F.udf(first_attempt_fails, "binary")
rows = [(i, b"record %d" % i) for i in range(1000)]
df = spark.createDataFrame(rows, "seq long, data binary").coalesce(1)
df.select(udf("seq", "data").alias("data")).write.format("leveldb_log").mode("append").save(out)
spark.stop()
"""


def test_a_retried_task_is_written_once(tmp_path: Path) -> None:
    """A task whose first attempt dies after writing part of its log (Spark retries it:
    local[2,2]): only the second attempt's log is published, and nothing stays staged."""
    import subprocess
    import sys

    from support.engines import spark_missing

    reason = spark_missing()
    if reason is not None:
        pytest.skip(reason)
    here = Path(__file__).parent
    script = tmp_path / "child.py"
    script.write_text(RETRY_CHILD.format(spark_tests=str(here), tests=str(here.parent)))
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, str(script), str(out)], capture_output=True, timeout=600, check=False
    )
    stderr = run.stderr.decode(errors="replace")
    assert run.returncode == 0, stderr[-5000:]
    assert "the first attempt dies" in stderr  # the first attempt did fail
    assert read_back(out) == Counter(b"record %d" % i for i in range(1000))
    assert len(visible(out)) == 1 and sorted(os.listdir(out)) == visible(out)
