"""Spark streaming case (opt-in: `python -m bench --only spark_stream`): the latency from a
durable write to the record's row in a memory sink, through
``spark.readStream.format("leveldb_log")`` with a 1 s processing-time trigger, on a local
SparkSession (``local[2]``).

A Writer with ``sync=True`` appends one record at a time; the clock starts when ``write()``
returns (the record is on disk) and stops when a count of the memory table first includes
it (polled every 20 ms: each poll is a small Spark job, so a figure is an upper bound by up
to one poll). Writes are spread over the trigger's period by a random pause, so the median
counts the wait for the next trigger as a user sees it. The target is a median <= 2 s.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

import leveldb_log

from bench.harness import Config
from bench.spark_session import spark_session

GOAL = 2.0  # seconds, median
TRIGGER = "1 second"
POLL = 0.02


def _seen(spark: Any, table: str) -> int:
    return int(spark.sql(f"select count(*) from {table}").first()[0])


def _latency(spark: Any, writer: leveldb_log.Writer, table: str, n: int) -> float:
    """Seconds from the durable write of record n (0-based) to its row in the table."""
    writer.write(b"record %d " % n + bytes(100))
    written = time.perf_counter()
    deadline = written + 60
    while _seen(spark, table) <= n:
        if time.perf_counter() > deadline:
            raise RuntimeError(f"record {n} never reached the memory sink")
        time.sleep(POLL)
    return time.perf_counter() - written


def spark_stream_latency(
    cfg: Config, tmp: Path, quick: bool, progress: bool
) -> dict[str, Any] | None:
    """The latencies of a few durable writes to a running stream, and their median."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return None
    spark = spark_session("leveldb-log-bench-stream", **{"spark.sql.shuffle.partitions": "2"})
    folder = tmp / "logs"
    folder.mkdir()
    rng = random.Random(5)
    samples: list[float] = []
    count = 5 if quick else 5 * cfg.rounds
    try:
        with leveldb_log.Writer(folder / "000001.log", sync=True) as writer:
            query = (
                spark.readStream.format("leveldb_log")
                .load(str(folder))
                .writeStream.format("memory")
                .queryName("bench_stream")
                .trigger(processingTime=TRIGGER)
                .start()
            )
            try:
                _latency(spark, writer, "bench_stream", 0)  # warm-up: workers, imports
                for n in range(1, count + 1):
                    time.sleep(rng.random())  # anywhere in the trigger's period
                    samples.append(_latency(spark, writer, "bench_stream", n))
                    if progress:
                        print(f"  spark stream latency {n}: {samples[-1]:.3f} s", flush=True)
            finally:
                query.stop()
    finally:
        spark.stop()
    return {
        "trigger": TRIGGER,
        "writes": len(samples),
        "latencies_s": samples,
        "median_s": statistics.median(samples),
        "max_s": max(samples),
        "goal_s": GOAL,
    }


def spark_stream_table(row: dict[str, Any] | None, markdown: bool) -> str:
    """The streaming row, or why there is none."""
    if row is None:
        return "Spark streaming latency: pyspark is not installed (pip install '.[spark]')"
    status = "met" if row["median_s"] <= row["goal_s"] else "MISSED"
    cells = [
        f"durable write -> memory sink, trigger {row['trigger']}, {row['writes']} writes",
        f"{row['median_s']:.2f} s",
        f"{row['max_s']:.2f} s",
        f"goal median <= {row['goal_s']:.0f} s: {status}",
    ]
    heads = ["Spark readStream (wall clock)", "median", "max", "target"]
    if markdown:
        rows = [heads, ["---"] * len(heads), cells]
        return "\n".join("| " + " | ".join(r) + " |" for r in rows)
    return "\n".join(f"{h}: {c}" for h, c in zip(heads, cells, strict=True))
