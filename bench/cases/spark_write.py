"""Spark write case (opt-in: `python -m bench --only spark_write`): ``df.write`` with
``format("leveldb_log")`` against Spark's own ``df.write.text`` on the same payloads, in one
local SparkSession (``local[2]``).

The payloads (100 B and 4 KiB, printable: they are lines of the text files too) are made
once per size into a cached DataFrame of one string column, in two partitions, so that each
job is the writing: both jobs read the same cached rows, and each writes one file per task
into a folder it overwrites (leveldb_log writes a string column's UTF-8 bytes). Every
round checks what each wrote (every record, as many bytes as it should).

The figure is the ratio of wall-clock times (the work runs in the JVM and Spark's Python
workers), the text source's over ours, median over interleaved rounds after one warm-up of
each. The target is >= 1x. Ours is measured twice: with Spark's defaults, and with Arrow
batches of at most 4 MiB (``spark.sql.execution.arrow.maxBytesPerBatch``, 64 MiB by
default), which docs/spark.md recommends for large records; the text source does not use
Arrow, so the setting changes nothing for it. Beside them, the floor of any Python data
source: a writer that reads its Arrow batches and drops them (what Spark's hand-over of the
rows to the Python worker costs, and no more).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

import leveldb_log

from bench.harness import Config, MiB
from bench.spark_session import spark_session

GOAL = 1.0
SIZES = (100, 4096)
PARTITIONS = 2
ARROW_BYTES = "spark.sql.execution.arrow.maxBytesPerBatch"
TUNED = 4 * MiB


def _payloads(spark: Any, size: int, n: int) -> Any:
    """A cached DataFrame of n printable payloads of ``size`` bytes (hex digits of SHA-256
    hashes), column ``data``, in PARTITIONS partitions."""
    hexes = -(-size // 64)
    expr = f"substr(repeat(sha2(CAST(id AS STRING), 256), {hexes}), 1, {size}) AS data"
    df = spark.range(0, n, numPartitions=PARTITIONS).selectExpr(expr).cache()
    assert df.count() == n
    return df


def _check_logs(folder: Path, n: int, size: int) -> None:
    """Every record was written, each of ``size`` bytes."""
    records = total = 0
    for name in os.listdir(folder):
        if not name.startswith((".", "_")):
            for batch in leveldb_log.Reader(str(folder / name)).iter_batches():
                records += len(batch)
                total += batch.nbytes - 16 * len(batch)
    assert (records, total) == (n, n * size), (records, total)


def _check_text(folder: Path, n: int, size: int) -> None:
    """The text files hold every payload and its newline."""
    total = sum(p.stat().st_size for p in folder.iterdir() if not p.name.startswith((".", "_")))
    assert total == n * (size + 1), total


def _register_floor(spark: Any) -> None:
    """``format("bench_drop")``: a Python Arrow writer that reads its batches and drops them,
    the least any Python data source's write costs. Defined here, in a function, so that
    Spark's workers get the classes by value."""
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class DropWriter(DataSourceArrowWriter):
        def write(self, iterator: Any) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

    class DropSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench_drop"

        def writer(self, schema: Any, overwrite: bool) -> DataSourceArrowWriter:
            return DropWriter()

    spark.dataSource.register(DropSource)


def _jobs(spark: Any, df: Any, logs: Path, texts: Path) -> dict[str, Any]:
    """The jobs of a round, by name: ours and the floor with Spark's Arrow batches and with
    batches of at most TUNED bytes, and the text source."""

    def python(fmt: str, batch_bytes: int | None) -> None:
        if batch_bytes is not None:
            spark.conf.set(ARROW_BYTES, str(batch_bytes))
        try:
            df.write.format(fmt).mode("overwrite").save(str(logs))
        finally:
            spark.conf.unset(ARROW_BYTES)

    return {
        "text": lambda: df.write.mode("overwrite").text(str(texts)),
        "leveldb_log": lambda: python("leveldb_log", None),
        "floor": lambda: python("bench_drop", None),
        "leveldb_log_4mib": lambda: python("leveldb_log", TUNED),
        "floor_4mib": lambda: python("bench_drop", TUNED),
    }


def _measure(cfg: Config, spark: Any, tmp: Path, size: int, n: int) -> dict[str, Any]:
    """Interleaved rounds of the jobs; round 0 warms up. The floor's jobs leave the logs of
    the job before them alone (they write nothing), which are checked after each round."""
    df = _payloads(spark, size, n)
    logs, texts = tmp / f"logs-{size}", tmp / f"text-{size}"
    jobs = _jobs(spark, df, logs, texts)
    times: dict[str, list[float]] = {k: [] for k in jobs}
    for rnd in range(cfg.rounds + 1):
        for name, job in jobs.items():
            t = time.perf_counter()
            job()
            elapsed = time.perf_counter() - t
            if rnd:
                times[name].append(elapsed)
        _check_logs(logs, n, size)
        _check_text(texts, n, size)
    df.unpersist()
    median = {f"seconds_{k}": statistics.median(v) for k, v in times.items()}
    return {
        "record_size": size,
        "records": n,
        **median,
        "rounds": times,
        "ratio": median["seconds_text"] / median["seconds_leveldb_log"],
        "ratio_4mib": median["seconds_text"] / median["seconds_leveldb_log_4mib"],
        "goal": GOAL,
    }


def spark_write(cfg: Config, tmp: Path, quick: bool, progress: bool) -> dict[str, Any] | None:
    """Our writer against ``df.write.text`` for each record size; None without pyspark."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return None
    total = (48 if quick else 200) * MiB
    spark = spark_session("leveldb-log-bench-write")
    _register_floor(spark)
    rows = []
    try:
        for size in SIZES:
            rows.append(_measure(cfg, spark, tmp, size, total // size))
            if progress:
                r = rows[-1]
                ratios = f"{r['ratio']:.2f}x, {r['ratio_4mib']:.2f}x"
                print(f"  spark write {size} B: {ratios}", flush=True)
    finally:
        spark.stop()
    return {"payload_bytes": total, "partitions": PARTITIONS, "sizes": rows}


def spark_write_table(row: dict[str, Any] | None, markdown: bool) -> str:
    """The Spark write rows, or why there are none."""
    if row is None:
        return "Spark write: pyspark is not installed (pip install '.[spark]')"
    heads = [
        "Spark local[2] (wall clock)",
        "df.write.text",
        "leveldb_log",
        "Python sink that drops its rows",
        "ratio",
    ]
    lines = []
    for r in row["sizes"]:
        for suffix, how in (("", "Spark's defaults"), ("_4mib", "Arrow batches <= 4 MiB")):
            ratio = r["ratio" + suffix]
            status = "met" if ratio >= r["goal"] else "MISSED"
            lines.append(
                [
                    f"write {r['records']} records of {r['record_size']} B "
                    f"in {row['partitions']} tasks, {how}",
                    f"{r['seconds_text']:.2f} s",
                    f"{r['seconds_leveldb_log' + suffix]:.2f} s",
                    f"{r['seconds_floor' + suffix]:.2f} s",
                    f"{ratio:.2f}x (goal >= {r['goal']}x: {status})",
                ]
            )
    if markdown:
        table = [heads, ["---"] * len(heads), *lines]
        return "\n".join("| " + " | ".join(r) + " |" for r in table)
    return "\n".join(
        "; ".join(f"{h}: {c}" for h, c in zip(heads, cells, strict=True)) for cells in lines
    )
