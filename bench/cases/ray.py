"""Ray case (opt-in: `python -m bench --only ray`): leveldb_log.ray.read_logs against Ray
Data's own ray.data.read_text on the same payloads, in one local Ray instance of 2 CPUs.

The payloads are printable records (100 B and 4 KiB), written once as logs and once as text
files of one payload a line, in the same number of files (so that both sources get as many
read tasks). Each job computes what Spark's `sum(length(data))` computes, the total bytes of
the payloads, with the same map_batches on both datasets: only the source differs.

The figure is the ratio of wall-clock times (the work runs in Ray's worker processes), the
text source's over ours, median over interleaved rounds after one warm-up of each. The
target is >= 1x.
"""

from __future__ import annotations

import os
import random
import statistics
import string
import time
from pathlib import Path
from typing import Any

import leveldb_log

from bench.harness import Config, MiB

GOAL = 1.0
SIZES = (100, 4096)
FILES = 4


def _payloads(size: int, total: int) -> tuple[list[bytes], int]:
    """Printable records of `size` bytes (no newline: they are lines too), about `total`
    bytes of them, cut from one random text; and their count."""
    rng = random.Random(size)
    text = "".join(rng.choices(string.ascii_letters + string.digits + " ", k=4 * MiB)).encode()
    n = total // size
    step = len(text) - size
    return [text[(i * 7919) % step : (i * 7919) % step + size] for i in range(n)], n


def _files(tmp: Path, size: int, total: int) -> tuple[Path, Path, int]:
    """The payloads as FILES logs in one folder and FILES text files in another."""
    records, n = _payloads(size, total)
    logs, texts = tmp / f"logs-{size}", tmp / f"text-{size}"
    logs.mkdir()
    texts.mkdir()
    per = -(-n // FILES)
    for k in range(FILES):
        part = records[k * per : (k + 1) * per]
        with leveldb_log.Writer(logs / f"{k}.log", buffering=4 * MiB) as w:
            w.write_many(part)
        (texts / f"{k}.txt").write_bytes(b"\n".join(part) + b"\n")
    return logs, texts, n


def _payload_bytes(table: Any) -> Any:
    """On a worker: one batch's payload bytes, as a one-row table."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = table.column(0)
    total = pc.sum(pc.binary_length(column)).as_py() if len(column) else 0
    return pa.table({"bytes": [total or 0], "rows": [len(column)]})


def _job(ds: Any) -> tuple[int, int]:
    """(records, payload bytes) of a dataset of one column of payloads."""
    rows = ds.map_batches(_payload_bytes, batch_format="pyarrow", batch_size=None).take_all()
    return sum(r["rows"] for r in rows), sum(r["bytes"] for r in rows)


def _measure(cfg: Config, logs: Path, texts: Path, n: int, size: int) -> dict[str, Any]:
    """Interleaved rounds of both jobs; round 0 warms up."""
    import ray.data
    from leveldb_log.ray import read_logs

    jobs = {
        "read_logs": lambda: read_logs(str(logs)).select_columns(["data"]),
        "read_text": lambda: ray.data.read_text(str(texts)),
    }
    times: dict[str, list[float]] = {k: [] for k in jobs}
    for rnd in range(cfg.rounds + 1):
        for name, make in jobs.items():
            t = time.perf_counter()
            got = _job(make())
            elapsed = time.perf_counter() - t
            assert got == (n, n * size), (name, got)  # the same work, every record once
            if rnd:
                times[name].append(elapsed)
    ours, text = statistics.median(times["read_logs"]), statistics.median(times["read_text"])
    return {
        "record_size": size,
        "records": n,
        "seconds_read_logs": ours,
        "seconds_read_text": text,
        "rounds": times,
        "ratio": text / ours,
        "goal": GOAL,
    }


def ray_read(cfg: Config, tmp: Path, quick: bool, progress: bool) -> dict[str, Any] | None:
    """read_logs against read_text for each record size; None without Ray."""
    try:
        import ray
    except ImportError:
        return None
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # listen on loopback
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    total = (48 if quick else 200) * MiB
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    rows = []
    try:
        for size in SIZES:
            logs, texts, n = _files(tmp, size, total)
            rows.append(_measure(cfg, logs, texts, n, size))
            if progress:
                print(f"  ray {size} B: {rows[-1]['ratio']:.2f}x", flush=True)
    finally:
        ray.shutdown()
    return {"payload_bytes": total, "files": FILES, "sizes": rows}


def ray_table(row: dict[str, Any] | None, markdown: bool) -> str:
    """The Ray rows, or why there are none."""
    if row is None:
        return "Ray read_logs: ray is not installed (pip install '.[ray]')"
    heads = ["Ray Data, 2 CPUs (wall clock)", "read_text", "read_logs", "ratio"]
    lines = []
    for r in row["sizes"]:
        status = "met" if r["ratio"] >= r["goal"] else "MISSED"
        lines.append(
            [
                f"sum of payload bytes, {r['records']} records of {r['record_size']} B "
                f"in {row['files']} files",
                f"{r['seconds_read_text']:.2f} s",
                f"{r['seconds_read_logs']:.2f} s",
                f"{r['ratio']:.2f}x (goal >= {r['goal']}x: {status})",
            ]
        )
    if markdown:
        table = [heads, ["---"] * len(heads), *lines]
        return "\n".join("| " + " | ".join(r) + " |" for r in table)
    return "\n".join(
        "; ".join(f"{h}: {c}" for h, c in zip(heads, cells, strict=True)) for cells in lines
    )
