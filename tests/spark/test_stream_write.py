"""``df.writeStream.format("leveldb_log")`` on a real SparkSession: one log per micro-batch and
partition, every record once across stops, restarts, replays and a query killed between the
sink's commit and Spark's."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import leveldb_log
import pytest

pytestmark = pytest.mark.slow

SINK = ".leveldb_log-sink"


def visible(folder: Path) -> list[str]:
    """The names a reader of the folder reads."""
    return sorted(n for n in os.listdir(folder) if not n.startswith((".", "_")))


def read_back(folder: Path) -> Counter[bytes]:
    """Every record of every visible log of the folder, counted."""
    found: Counter[bytes] = Counter()
    for name in visible(folder):
        with leveldb_log.Reader(str(folder / name), recovery="absolute") as r:
            found.update(r)
    return found


def wait_for(condition: Callable[[], bool], what: str, limit: float = 180) -> None:
    """Wait until ``condition()`` holds; fail, saying what was awaited, after ``limit`` s."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


def text_files(folder: Path, first: int, count: int, lines: int = 5) -> list[bytes]:
    """``count`` text files of ``lines`` numbered lines each; returns the lines."""
    folder.mkdir(exist_ok=True)
    written = []
    for i in range(first, first + count):
        rows = [f"file {i} line {j}" for j in range(lines)]
        (folder / f"f{i:03d}.txt").write_text("\n".join(rows) + "\n")
        written += [r.encode() for r in rows]
    return written


def run_available_now(spark: Any, source: Path, out: Path, checkpoint: Path) -> None:
    """Stream every text file of ``source`` not yet done into ``out``, one file a batch."""
    query = (
        spark.readStream.format("text")
        .option("maxFilesPerTrigger", 1)
        .load(str(source))
        .selectExpr("value AS data")
        .writeStream.format("leveldb_log")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(out))
    )
    query.awaitTermination()


def test_a_file_stream_restarted_writes_each_record_once(spark: Any, tmp_path: Path) -> None:
    source, out, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoint"
    first = text_files(source, 0, 2)
    run_available_now(spark, source, out, checkpoint)
    assert read_back(out) == Counter(first)
    second = text_files(source, 2, 1)
    run_available_now(spark, source, out, checkpoint)
    assert read_back(out) == Counter(first + second)
    assert visible(out) == [f"part-{b:012d}-00000.log" for b in range(3)]
    assert os.listdir(out / SINK / "staging") == []


def test_a_rate_stream_stopped_and_restarted_has_no_gap_and_no_duplicate(
    spark: Any, tmp_path: Path
) -> None:
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def committed() -> int:
        folder = out / SINK / "commits"
        return sum(1 for n in os.listdir(folder) if n.isdigit()) if folder.exists() else 0

    for target in (3, 6):
        query = (
            spark.readStream.format("rate-micro-batch")
            .option("rowsPerBatch", 7)
            .option("numPartitions", 2)
            .load()
            .selectExpr("CAST(value AS STRING) AS data")
            .writeStream.format("leveldb_log")
            .option("checkpointLocation", str(checkpoint))
            .trigger(processingTime="0 seconds")
            .start(str(out))
        )
        try:
            wait_for(
                lambda t=target, q=query: committed() >= t or not q.isActive,
                f"{target} committed batches",
            )
            assert query.exception() is None, query.exception()
        finally:
            query.stop()
    values = Counter(int(r) for r in read_back(out).elements())
    assert values == Counter(range(max(values) + 1))
    assert max(values) + 1 >= 6 * 7


def stream_writer(folder: Path, checkpoint: str = "/checkpoints/q1", **more: str) -> Any:
    from leveldb_log.spark._stream_write import LogStreamWriter
    from pyspark.sql.types import BinaryType, StructField, StructType

    options = {"path": str(folder), "checkpointLocation": checkpoint, **more}
    return LogStreamWriter(options, StructType([StructField("data", BinaryType())]), False)


def write_tasks(
    writer: Any, monkeypatch: pytest.MonkeyPatch, parts: list[list[bytes]], attempt: int
) -> list[Any]:
    """Run the writer's task side once per partition, as Spark's tasks do."""
    import pyarrow as pa
    from leveldb_log.spark import _write

    messages = []
    for partition, records in enumerate(parts):
        monkeypatch.setattr(_write, "task_ids", lambda p=partition: (p, attempt + p))
        monkeypatch.setattr("leveldb_log.spark._stream_write.task_ids", _write.task_ids)
        batch = pa.record_batch([pa.array(records, pa.binary())], names=["data"])
        messages.append(writer.write(iter([batch])))
    return messages


def snapshot(folder: Path) -> dict[str, bytes]:
    return {n: (folder / n).read_bytes() for n in visible(folder)}


def test_a_replayed_batch_is_not_written_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = stream_writer(tmp_path)
    batch = [[b"a", b"b"], [b"c"]]
    writer.commit(write_tasks(writer, monkeypatch, batch, attempt=0), 4)
    before = snapshot(tmp_path)
    assert list(before) == ["part-000000000004-00000.log", "part-000000000004-00001.log"]
    replay = stream_writer(tmp_path)  # Spark builds a writer for every commit
    replay.commit(write_tasks(replay, monkeypatch, [[b"a"], [b"b", b"c"]], attempt=10), 4)
    assert snapshot(tmp_path) == before
    assert os.listdir(tmp_path / SINK / "staging") == []
    assert read_back(tmp_path) == Counter([b"a", b"b", b"c"])


def test_a_commit_that_died_half_way_is_redone_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leveldb_log._files import _publish
    from leveldb_log.spark import _write

    writer = stream_writer(tmp_path)
    messages = write_tasks(writer, monkeypatch, [[b"a"], [b"b"], [b"c"]], attempt=0)
    renames = []
    real_replace = os.replace

    def dying_replace(src: str, dst: str) -> None:
        if "staging" in str(src):
            renames.append(dst)
            if len(renames) == 2:
                raise OSError("the driver died here")
        real_replace(src, dst)

    monkeypatch.setattr(_write.os, "replace", dying_replace)
    # a driver that dies takes nothing back
    monkeypatch.setattr(_publish.Folder, "remove", lambda self, path: None)
    with pytest.raises(OSError, match="the driver died here"):
        writer.commit(messages, 7)
    monkeypatch.setattr(_write.os, "replace", real_replace)
    monkeypatch.undo()
    assert visible(tmp_path) == ["part-000000000007-00000.log"]
    replay = stream_writer(tmp_path)  # the replay has two partitions, not three
    replay.commit(write_tasks(replay, monkeypatch, [[b"a", b"b"], [b"c"]], attempt=20), 7)
    assert visible(tmp_path) == ["part-000000000007-00000.log", "part-000000000007-00001.log"]
    assert read_back(tmp_path) == Counter([b"a", b"b", b"c"])


def test_abort_deletes_the_batchs_staged_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = stream_writer(tmp_path)
    messages = write_tasks(writer, monkeypatch, [[b"a"], [b"b"]], attempt=0)
    writer.abort([messages[0], None], 0)
    assert visible(tmp_path) == [] and os.listdir(tmp_path / SINK / "staging") == []
    assert os.listdir(tmp_path / SINK / "commits") == []


def test_the_batch_options_apply_to_a_streams_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = stream_writer(tmp_path, dialect="pebble", logNumber="9", sync="true")
    writer.commit(write_tasks(writer, monkeypatch, [[b"a", b"b" * 70_000]], attempt=0), 2)
    with leveldb_log.Reader(str(tmp_path / "part-000000000002-00000.log"), dialect="pebble") as r:
        assert list(r) == [b"a", b"b" * 70_000] and r.log_number == 9
    with pytest.raises(ValueError, match="naming=number is for batch writes"):
        stream_writer(tmp_path, naming="number")


def test_a_name_taken_by_another_file_is_refused_and_never_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    foreign = tmp_path / "part-000000000005-00000.log"
    foreign.write_bytes(b"not the sink's")
    for attempt in (0, 10):  # the replay of the failed commit refuses it too
        writer = stream_writer(tmp_path)
        messages = write_tasks(writer, monkeypatch, [[b"a"]], attempt=attempt)
        with pytest.raises(FileExistsError, match=r"part-000000000005-00000\.log"):
            writer.commit(messages, 5)
    assert foreign.read_bytes() == b"not the sink's" and visible(tmp_path) == [foreign.name]


def test_another_querys_batches_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = stream_writer(tmp_path, "/checkpoints/q1")
    writer.commit(write_tasks(writer, monkeypatch, [[b"a"]], attempt=0), 0)
    with pytest.raises(ValueError, match="holds the logs of the stream checkpointed at"):
        stream_writer(tmp_path, "/checkpoints/q2")
    assert read_back(tmp_path) == Counter([b"a"])


def test_a_null_fails_the_batch_and_leaves_nothing(spark: Any, tmp_path: Path) -> None:
    source, out, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoint"
    text_files(source, 0, 1)
    query = (
        spark.readStream.format("text")
        .load(str(source))
        .selectExpr("IF(value LIKE '%line 3', NULL, value) AS data")
        .writeStream.format("leveldb_log")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(out))
    )
    with pytest.raises(Exception, match=r"column 'data' has a null at row \d+ of the partition"):
        query.awaitTermination()
    assert visible(out) == [] and os.listdir(out / SINK / "commits") == []


CHILD = """
import os, sys, time
sys.path[:0] = [{spark_tests!r}, {tests!r}]  # conftest.py: the one beside this test
from conftest import new_session
from leveldb_log.spark._source import LogDataSource
from leveldb_log.spark._stream_write import LogStreamWriter

source, out, checkpoint, mark, release = sys.argv[1:6]
spark = new_session(app="leveldb-log-killed-stream")


class StallingWriter(LogStreamWriter):
    # Commits batch 0 in the sink, then holds Spark's commit back until the test has killed
    # the query: the checkpoint then has batch 0's offsets and not its commit.
    def commit(self, messages, batchId):
        super().commit(messages, batchId)
        if batchId == 0:
            open(mark, "w").close()
            deadline = time.monotonic() + 300
            while not os.path.exists(release) and time.monotonic() < deadline:
                time.sleep(0.05)
            os._exit(1)


class StallingSource(LogDataSource):
    def streamWriter(self, schema, overwrite):
        return StallingWriter(self.options, schema, overwrite)


spark.dataSource.register(StallingSource)
query = (
    spark.readStream.format("text").option("maxFilesPerTrigger", 1).load(source)
    .selectExpr("value AS data").writeStream.format("leveldb_log")
    .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(out)
)
query.awaitTermination()
"""


def test_a_query_killed_after_the_sinks_commit_replays_without_duplicates(
    spark: Any, tmp_path: Path
) -> None:
    source, out, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoint"
    mark, release = tmp_path / "committed", tmp_path / "release"
    records = text_files(source, 0, 2)
    script = tmp_path / "child.py"
    here = Path(__file__).parent
    script.write_text(CHILD.format(tests=str(here.parent), spark_tests=str(here)))
    args = [sys.executable, str(script), *map(str, (source, out, checkpoint, mark, release))]
    log = tmp_path / "child.err"
    with open(log, "wb") as err:
        child = subprocess.Popen(args, start_new_session=True, stdout=err, stderr=err)
    try:
        wait_for(lambda: mark.exists() or child.poll() is not None, "the sink's commit")
        assert child.poll() is None, log.read_text()[-3000:]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        release.touch()
    assert (checkpoint / "offsets" / "0").exists() and not (checkpoint / "commits" / "0").exists()
    assert (out / SINK / "commits" / "0").exists()
    committed_once = (out / visible(out)[0]).read_bytes()
    run_available_now(spark, source, out, checkpoint)  # replays batch 0, then runs batch 1
    assert (checkpoint / "commits" / "0").exists() and (checkpoint / "commits" / "1").exists()
    assert (out / "part-000000000000-00000.log").read_bytes() == committed_once
    assert read_back(out) == Counter(records)
    assert visible(out) == [f"part-{b:012d}-00000.log" for b in range(2)]


def test_complete_mode_replaces_the_logs_with_every_batch(spark: Any, tmp_path: Path) -> None:
    source, out, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoint"
    text_files(source, 0, 2, lines=3)
    query = (
        spark.readStream.format("text")
        .option("maxFilesPerTrigger", 1)
        .load(str(source))
        .groupBy()
        .count()
        .selectExpr("CAST(count AS STRING) AS data")
        .writeStream.format("leveldb_log")
        .outputMode("complete")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(out))
    )
    query.awaitTermination()
    assert visible(out) == ["part-000000000001-00000.log"]
    assert read_back(out) == Counter([b"6"])
