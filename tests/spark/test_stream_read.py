"""``spark.readStream.format("leveldb_log")`` on a real SparkSession: a log appended by
another process while the stream runs, a query killed with SIGKILL and restarted from its
checkpoint, rotation, truncation and replacement, the torn tail at the live end and
``maxBytesPerTrigger``. Every record must come out exactly once, in order per file.

Runs are made deterministic with ``trigger(availableNow=True)`` and ``processAllAvailable()``;
nothing waits on a timing but the kill, which waits for a committed batch.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import leveldb_log
import pytest

pytestmark = pytest.mark.slow

#: The records of the writer processes: numbered, of sizes that leave torn tails and span
#: blocks, so a trigger often finds a record half written.
RECORDS_SRC = """
import random

def record(i):
    r = random.Random(i)
    n = r.choice([0, 10, 100, 1000, 20_000, 40_000])
    return b"%06d:" % i + r.randbytes(n)
"""
_ns: dict[str, Any] = {}
exec(RECORDS_SRC, _ns)
record = _ns["record"]

#: Appends records first..last-1 with sync=True to each named log in turn (rotation: the
#: next file is created once the one before is closed).
WRITER_SRC = (
    RECORDS_SRC
    + """
import sys
import leveldb_log

folder, names, first, last = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4])
share = (last - first) // len(names)
for k, name in enumerate(names):
    with leveldb_log.Writer(folder + "/" + name, "a", sync=True) as w:
        for i in range(first + k * share, last if k == len(names) - 1 else first + (k + 1) * share):
            w.write(record(i))
"""
)

#: A query in a process of its own (its own local SparkSession, as conftest.py makes one): the
#: logs of a folder into a parquet folder (Spark's exactly-once file sink), through a
#: checkpoint. "follow" runs until killed; "available" reads what is there and exits.
QUERY_SRC = """
import os, sys
os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
import leveldb_log.spark
from pyspark.sql import SparkSession

folder, checkpoint, out, how = sys.argv[1:5]
spark = (
    SparkSession.builder.master("local[1]").appName("leveldb-log-stream-query")
    .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
    .config("spark.sql.shuffle.partitions", "1").getOrCreate()
)
leveldb_log.spark.register(spark)
stream = (
    spark.readStream.format("leveldb_log").option("includePath", "true").load(folder)
    .writeStream.format("parquet").option("checkpointLocation", checkpoint)
)
if how == "follow":
    query = stream.trigger(processingTime="200 milliseconds").start(out)
    print("started", flush=True)
    query.awaitTermination()
else:
    stream.trigger(availableNow=True).start(out).awaitTermination()
"""


def write(folder: Path, names: list[str], first: int, last: int) -> subprocess.Popen[bytes]:
    """A process appending records first..last-1 to the named logs, in turn."""
    args = [str(folder), ",".join(names), str(first), str(last)]
    return subprocess.Popen([sys.executable, "-c", WRITER_SRC, *args])


def query(folder: Path, checkpoint: Path, out: Path, how: str) -> subprocess.Popen[str]:
    """A query process (a process group of its own: the JVM dies with it)."""
    return subprocess.Popen(
        [sys.executable, "-c", QUERY_SRC, str(folder), str(checkpoint), str(out), how],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(condition: Any, what: str, limit: float = 300) -> None:
    """Wait until condition() holds (a deadline only against a hang)."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.1)


def check_exactly_once(rows: list[Any], expected: dict[str, list[bytes]]) -> None:
    """Each file's records exactly once, in the file's order (by offset)."""
    by_file: dict[str, list[tuple[int, bytes]]] = {}
    for row in rows:
        by_file.setdefault(os.path.basename(row["path"]), []).append((row["offset"], row["data"]))
    got = {name: [bytes(d) for _, d in sorted(found)] for name, found in by_file.items()}
    want = {name: records for name, records in expected.items() if records}
    assert got.keys() == want.keys()
    for name in want:
        assert len(got[name]) == len(want[name]), name
        assert got[name] == want[name], name


def offsets(progress: Any, key: str) -> dict[str, Any]:
    """A micro-batch's start or end offset (progress reports give them as JSON)."""
    value = progress["sources"][0][key]
    parsed = json.loads(value) if isinstance(value, str) else value
    return (parsed or {"files": {}})["files"]


def stream(spark: Any, folder: Path, **options: str) -> Any:
    reader = spark.readStream.format("leveldb_log").option("includePath", "true")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(folder))


def run_available(spark: Any, folder: Path, checkpoint: Path, out: Path, **options: str) -> Any:
    """One Trigger.AvailableNow run into a parquet folder; the query, once terminated."""
    q = (
        stream(spark, folder, **options)
        .writeStream.format("parquet")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start(str(out))
    )
    q.awaitTermination()
    return q


def parquet_rows(spark: Any, out: Path) -> list[Any]:
    return spark.read.parquet(str(out)).collect() if (out / "_spark_metadata").exists() else []


def logs(names_records: dict[str, list[bytes]], folder: Path) -> None:
    for name, records in names_records.items():
        with leveldb_log.Writer(str(folder / name), "a") as w:
            w.write_many(records)


def test_a_killed_query_restarted_from_its_checkpoint_reads_each_record_once(
    spark: Any, tmp_path: Path
) -> None:
    folder, checkpoint, out = tmp_path / "logs", tmp_path / "checkpoint", tmp_path / "out"
    folder.mkdir()
    names = ["000001.log", "000002.log"]
    running = query(folder, checkpoint, out, "follow")
    try:
        assert running.stdout is not None and running.stdout.readline() == "started\n"
        writer = write(folder, names, 0, 600)
        # Killed once a batch with records is committed, the writer still writing or not.
        wait_for(lambda: (out / "_spark_metadata" / "0").exists(), "a committed batch")
    finally:
        os.killpg(running.pid, signal.SIGKILL)
        running.communicate()  # waits, and closes its pipe
    assert writer.wait() == 0
    assert parquet_rows(spark, out)  # the killed run had committed records
    again = query(folder, checkpoint, out, "available")
    again.communicate()
    assert again.returncode == 0
    expected = {
        name: [record(i) for i in range(k * 300, (k + 1) * 300)] for k, name in enumerate(names)
    }
    check_exactly_once(parquet_rows(spark, out), expected)


def test_a_second_process_appends_while_the_stream_runs(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    q = stream(spark, folder).writeStream.format("memory").queryName("appended").start()
    try:
        writer = write(folder, ["000001.log"], 0, 400)
        assert writer.wait() == 0
        q.processAllAvailable()
        rows = spark.sql("select * from appended").collect()
    finally:
        q.stop()
    check_exactly_once(rows, {"000001.log": [record(i) for i in range(400)]})


def test_a_torn_tail_at_the_live_end_waits_for_its_record(spark: Any, tmp_path: Path) -> None:
    folder, checkpoint, out = tmp_path / "logs", tmp_path / "checkpoint", tmp_path / "out"
    folder.mkdir()
    records = [b"one", b"two" * 20_000, b"three"]
    whole = tmp_path / "whole.log"
    logs({"whole.log": records}, tmp_path)
    data = whole.read_bytes()
    log = folder / "000001.log"
    cut = len(data) - 200  # inside the LAST fragment of "two", in the second block
    log.write_bytes(data[:cut])
    run_available(spark, folder, checkpoint, out, mode="FAILFAST")  # nothing reported
    check_exactly_once(parquet_rows(spark, out), {"000001.log": records[:1]})
    with open(log, "ab") as f:
        f.write(data[cut:])
    run_available(spark, folder, checkpoint, out, mode="FAILFAST")
    check_exactly_once(parquet_rows(spark, out), {"000001.log": records})


def test_a_rotated_log_is_read_to_its_end_then_the_next(spark: Any, tmp_path: Path) -> None:
    folder, checkpoint, out = tmp_path / "logs", tmp_path / "checkpoint", tmp_path / "out"
    folder.mkdir()
    first = [record(i) for i in range(50)]
    second = [record(i) for i in range(50, 90)]
    logs({"000001.log": first[:20]}, folder)
    run_available(spark, folder, checkpoint, out)
    logs({"000001.log": first[20:]}, folder)  # the last records of the old log ...
    logs({"000002.log": second}, folder)  # ... then the new log
    run_available(spark, folder, checkpoint, out)
    check_exactly_once(parquet_rows(spark, out), {"000001.log": first, "000002.log": second})


def failure(spark: Any, folder: Path, checkpoint: Path, out: Path, **options: str) -> str:
    """The message of the query that fails."""
    from pyspark.errors import StreamingQueryException

    with pytest.raises(StreamingQueryException) as caught:
        run_available(spark, folder, checkpoint, out, **options)
    return str(caught.value)


def test_a_truncated_log_fails_the_query_or_restarts_by_option(spark: Any, tmp_path: Path) -> None:
    folder, checkpoint, out = tmp_path / "logs", tmp_path / "checkpoint", tmp_path / "out"
    folder.mkdir()
    log = folder / "000001.log"
    logs({"000001.log": [b"a" * 100, b"b" * 100]}, folder)
    run_available(spark, folder, checkpoint, out)
    with open(log, "r+b") as f:  # the same file, cut below what the stream read
        f.truncate(107)
    message = failure(spark, folder, checkpoint, out)
    assert f"{log} was truncated: 107 bytes now, 214 of which the stream had read" in message
    assert "onTruncate=restart" in message
    assert log.stat().st_size == 107  # the file is left as it was
    logs({"000001.log": [b"c" * 10]}, folder)  # the log goes on after its first record
    run_available(spark, folder, checkpoint, out, onTruncate="restart")
    data = sorted(bytes(r["data"]) for r in parquet_rows(spark, out))
    assert data == sorted([b"a" * 100, b"b" * 100, b"a" * 100, b"c" * 10])


def test_a_replaced_log_fails_the_query_or_is_skipped_by_option(spark: Any, tmp_path: Path) -> None:
    folder, checkpoint, out = tmp_path / "logs", tmp_path / "checkpoint", tmp_path / "out"
    folder.mkdir()
    logs({"000001.log": [b"old"] * 3}, folder)
    run_available(spark, folder, checkpoint, out)
    logs({"new.log": [b"new"] * 5}, tmp_path)
    os.replace(tmp_path / "new.log", folder / "000001.log")  # another file, the same name
    message = failure(spark, folder, checkpoint, out)
    assert f"{folder / '000001.log'} was replaced by another file" in message
    assert "onReplace=skip" in message
    run_available(spark, folder, checkpoint, out, onReplace="skip")  # its records are passed
    logs({"000001.log": [b"after"]}, folder)
    run_available(spark, folder, checkpoint, out, onReplace="skip")
    assert sorted(bytes(r["data"]) for r in parquet_rows(spark, out)) == [b"after"] + [b"old"] * 3


def test_max_bytes_per_trigger_spreads_a_backlog_over_batches(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    first = [record(i) for i in range(100)]
    second = [record(i) for i in range(100, 130)]
    logs({"000001.log": first, "000002.log": second}, folder)
    size = sum(p.stat().st_size for p in folder.iterdir())
    q = (
        stream(spark, folder, maxBytesPerTrigger=str(size // 5))
        .writeStream.format("memory")
        .queryName("limited")
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    rows = spark.sql("select * from limited").collect()
    check_exactly_once(rows, {"000001.log": first, "000002.log": second})
    batches = [p for p in q.recentProgress if p["numInputRows"] > 0]
    assert len(batches) >= 5
    one, two = (str(folder / name) for name in ("000001.log", "000002.log"))
    for p in batches:  # each batch's new bytes stay within the limit, in name order
        start, end = (offsets(p, key) for key in ("startOffset", "endOffset"))
        new = {path: e["pos"] - start.get(path, {"pos": 0})["pos"] for path, e in end.items()}
        assert sum(new.values()) <= size // 5
        if new.get(two, 0) > 0:
            assert end[one]["pos"] == (folder / "000001.log").stat().st_size


def test_options_are_checked_when_the_query_starts(spark: Any, tmp_path: Path) -> None:
    for options, text in [
        ({"recovery": "point_in_time"}, "recovery point_in_time ends a log"),
        ({"onTruncate": "ignore"}, "option onTruncate must be one of error, restart, skip"),
        ({"maxBytesPerTrigger": "0"}, "option maxBytesPerTrigger must be at least 1"),
    ]:
        with pytest.raises(Exception, match=text):
            q = (
                stream(spark, tmp_path, **options)
                .writeStream.format("memory")
                .queryName("refused")
                .start()
            )
            try:
                q.processAllAvailable()
            finally:
                q.stop()


def test_a_decoded_wal_streams_the_rows_a_batch_read_decodes(spark: Any, tmp_path: Path) -> None:
    """decode=true on a stream: the WAL as a change feed, one row per operation, the same
    rows as the batch read's, over two triggers of one checkpoint."""
    from leveldb_log.leveldb import Delete, Put, encode_write_batch

    folder, checkpoint, out = tmp_path / "wal", tmp_path / "checkpoint", tmp_path / "out"
    folder.mkdir()
    batches = [
        encode_write_batch(10, [Put(b"a", b"1"), Put(b"b", b"2")]),
        encode_write_batch(12, [Delete(b"a")]),
        encode_write_batch(13, [Put(b"c", b"3")]),
    ]
    logs({"000003.log": batches[:2]}, folder)

    def run() -> None:
        reader = spark.readStream.format("leveldb_log").option("decode", "true")
        q = (
            reader.load(str(folder))
            .writeStream.format("parquet")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start(str(out))
        )
        q.awaitTermination()

    run()
    assert len(parquet_rows(spark, out)) == 3
    logs({"000003.log": batches[2:]}, folder)
    run()
    streamed = parquet_rows(spark, out)
    decoded = spark.read.format("leveldb_log").option("decode", "true").load(str(folder))
    assert sorted(map(tuple, streamed)) == sorted(map(tuple, decoded.collect()))
    ops = sorted((r["sequence"], r["op"], bytes(r["key"])) for r in streamed)
    assert ops == [(10, "Put", b"a"), (11, "Put", b"b"), (12, "Delete", b"a"), (13, "Put", b"c")]
