"""Spark batch read case (opt-in: `python -m bench --only spark_read`):
``spark.read.format("leveldb_log")`` against Spark's own ``text`` source on the same payloads
(one per line), on a local SparkSession (``local[2]``), and the planning of a folder of
10,000 small logs.

For each record size (100 B and 4 KiB, about 200 MiB of payload; 20 MiB with --quick) the
two jobs are ``count()`` and ``sum(length(data))`` (``length(value)`` for text: the payloads
are ASCII, so characters are bytes). Each job runs once to warm up (page cache, Python
workers), then in interleaved rounds; the figure is the median wall-clock time (the work is
in the JVM and the Python workers, not this process). A ratio is text's time over ours:
above 1 is faster than text. Targets: sum(length(data)) >= 1.2x, count() >= 0.5x.

Planning: the seconds from ``load(folder)`` to the number of partitions known (Spark asks
the source for its partitions), over 10,000 one-record logs; target <= 5 s. Both sources
take Spark's default partition size (128 MiB).
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

import leveldb_log

from bench.harness import Config, MiB
from bench.spark_session import spark_session

GOALS = {"count": 0.5, "sum_length": 1.2}
PLAN_GOAL = 5.0  # seconds
PLAN_FILES = 10_000
SIZES = (100, 4096)


def _payloads(size: int, total: int) -> list[bytes]:
    """About ``total`` bytes of distinct printable records of ``size`` bytes (no newline)."""
    rng = random.Random(size)
    alphabet = bytes(range(33, 127))
    pool = bytes(rng.choice(alphabet) for _ in range(1 << 16)) * 2
    n = max(1, total // size)
    return [pool[(i * 7919) % (1 << 16) :][:size] for i in range(n)]


def _files(tmp: Path, size: int, total: int) -> tuple[Path, Path, int]:
    """The same payloads as a log and as a text file: (log, text, records)."""
    records = _payloads(size, total)
    log, text = tmp / f"records-{size}.log", tmp / f"records-{size}.txt"
    with leveldb_log.Writer(log, "w", buffering=4 * MiB) as w:
        w.write_many(records)
    with text.open("wb") as f:
        for record in records:
            f.write(record + b"\n")
    return log, text, len(records)


def _jobs(spark: Any, log: Path, text: Path) -> dict[tuple[str, str], Any]:
    """(source, job) -> a function running the job and returning its result."""
    ours = spark.read.format("leveldb_log").load(str(log))
    lines = spark.read.text(str(text))
    return {
        ("ours", "count"): ours.count,
        ("text", "count"): lines.count,
        ("ours", "sum_length"): lambda: ours.selectExpr("sum(length(data))").first()[0],
        ("text", "sum_length"): lambda: lines.selectExpr("sum(length(value))").first()[0],
    }


def _measure(spark: Any, log: Path, text: Path, n: int, size: int, rounds: int) -> list[Any]:
    """The rows of one record size: median seconds of each source per job, and the ratio."""
    jobs = _jobs(spark, log, text)
    expected = {"count": n, "sum_length": n * size}
    times: dict[tuple[str, str], list[float]] = {key: [] for key in jobs}
    for rnd in range(rounds + 1):  # round 0 warms up
        for key, job in jobs.items():
            t = time.perf_counter()
            got = job()
            elapsed = time.perf_counter() - t
            assert got == expected[key[1]], (key, got)  # the same work, every record once
            if rnd:
                times[key].append(elapsed)
    rows = []
    for job, goal in GOALS.items():
        ours = statistics.median(times[("ours", job)])
        text_s = statistics.median(times[("text", job)])
        rows.append(
            {
                "size": size,
                "records": n,
                "job": job,
                "ours": ours,
                "text": text_s,
                "ratio": text_s / ours,
                "goal": goal,
            }
        )
    return rows


def _planning(spark: Any, tmp: Path) -> dict[str, Any]:
    """Seconds to plan a read of PLAN_FILES one-record logs (listing and sizes only)."""
    folder = tmp / "many"
    folder.mkdir()
    for i in range(PLAN_FILES):
        with leveldb_log.Writer(folder / f"{i:06d}.log", "w") as w:
            w.write(b"x" * 100)
    reader = spark.read.format("leveldb_log")
    reader.load(str(folder)).rdd.getNumPartitions()  # warm-up: workers, imports
    t = time.perf_counter()
    partitions = reader.load(str(folder)).rdd.getNumPartitions()
    seconds = time.perf_counter() - t
    return {"files": PLAN_FILES, "partitions": partitions, "seconds": seconds, "goal": PLAN_GOAL}


def spark_read(cfg: Config, tmp: Path, quick: bool, progress: bool) -> dict[str, Any] | None:
    """The read rows for each record size and the planning row (None without pyspark)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return None
    spark = spark_session("leveldb-log-bench-read")
    total = (20 if quick else 200) * MiB
    rows = []
    try:
        for size in SIZES:
            log, text, n = _files(tmp, size, total)
            rows += _measure(spark, log, text, n, size, cfg.rounds)
            if progress:
                print(f"  spark read {size} B: {rows[-2:]}", flush=True)
            log.unlink()
            text.unlink()
        planning = _planning(spark, tmp)
    finally:
        spark.stop()
    return {"reads": rows, "planning": planning}


def spark_read_table(result: dict[str, Any] | None, markdown: bool) -> str:
    """The read rows and the planning row, or why there are none."""
    if result is None:
        return "Spark read: pyspark is not installed (pip install '.[spark]')"
    heads = ["Spark read (local[2], wall clock)", "text source", "leveldb_log", "ratio"]
    table = []
    for row in result["reads"]:
        status = "met" if row["ratio"] >= row["goal"] else "MISSED"
        job = "count()" if row["job"] == "count" else "sum(length(data))"
        table.append(
            [
                f"{job}, {row['records']} records of {row['size']} B",
                f"{row['text']:.2f} s",
                f"{row['ours']:.2f} s",
                f"{row['ratio']:.2f}x (goal >= {row['goal']}x: {status})",
            ]
        )
    plan = result["planning"]
    status = "met" if plan["seconds"] <= plan["goal"] else "MISSED"
    table.append(
        [
            f"planning {plan['files']} logs ({plan['partitions']} partitions)",
            "",
            f"{plan['seconds']:.2f} s",
            f"goal <= {plan['goal']:.0f} s: {status}",
        ]
    )
    if markdown:
        rows = [heads, ["---"] * len(heads), *table]
        return "\n".join("| " + " | ".join(r) + " |" for r in rows)
    return "\n".join(" | ".join(r) for r in [heads, *table])
