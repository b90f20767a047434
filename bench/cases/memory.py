"""Peak memory: a subprocess reads a log much larger than its largest record and reports
its peak resident set, against a subprocess that only imports the same modules. Readers:
Reader(path), Reader(file object), Reader(path).iter_batches(max_bytes=BATCH_BYTES) (whose
bound is the batch, a block and the largest record) in a for loop, which keeps each batch
while it asks for the next, and with each batch dropped first (what iter_batches itself
holds), and tfrecord's iterator."""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import leveldb_log

from bench.baselines import tf_reader, tfrecord_bytes
from bench.data import Data
from bench.harness import Config, KiB, MiB

PEAK_SCRIPT = r"""
import resource, sys
mode = sys.argv[1]
if mode.startswith("tfrecord"):
    import tfrecord.reader
import leveldb_log
if mode == "path":
    for r in leveldb_log.Reader(sys.argv[2]):
        pass
elif mode == "file":
    with open(sys.argv[2], "rb") as f:
        for r in leveldb_log.Reader(f):
            pass
elif mode == "batches":  # the loop keeps each batch while the next is read
    for b in leveldb_log.Reader(sys.argv[2]).iter_batches(max_bytes=int(sys.argv[3])):
        pass
elif mode == "batches-dropped":  # each batch let go of before the next
    for b in leveldb_log.Reader(sys.argv[2]).iter_batches(max_bytes=int(sys.argv[3])):
        del b
elif mode == "tfrecord":
    for r in tfrecord.reader.tfrecord_iterator(sys.argv[2]):
        pass
# ru_maxrss survives execve: a child started by a large parent reports the parent's size.
# VmHWM is the peak of this process image alone; ru_maxrss is the fallback.
try:
    with open("/proc/self/status") as f:
        print(next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")))
except (OSError, StopIteration):
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


#: iter_batches' batch size in the peak-memory row.
BATCH_BYTES = 4 * MiB


def peak_rss_kib(mode: str, path: str, repeat: int = 3) -> int:
    """The median over repeat runs of the child's peak RSS in KiB."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", PEAK_SCRIPT, mode, path, str(BATCH_BYTES)],
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(int(out.stdout.split()[-1]))
    return int(statistics.median(runs))


def peak_row(name: str, size: int, log_size: int, base: int, rss: int) -> dict[str, Any]:
    """One row of the peak-memory table."""
    delta = max(0, rss - base) * KiB
    return {
        "reader": name,
        "record_size": size,
        "log_bytes": log_size,
        "baseline_peak_rss_kib": base,
        "peak_rss_kib": rss,
        "delta_bytes": delta,
        "delta_per_largest_record": delta / size,
        "delta_per_log": delta / log_size,
    }


def _ours(path: Path, size: int, n: int) -> list[dict[str, Any]]:
    """Write a log of n records of size bytes, then Reader(path) and Reader(file)."""
    with leveldb_log.Writer(path) as w:
        blob = random.Random(7).randbytes(min(size * n, 8 * MiB) + size)
        step = len(blob) - size
        w.write_many(blob[(i * size) % step : (i * size) % step + size] for i in range(n))
    log_size = path.stat().st_size
    base = peak_rss_kib("import", str(path))
    rows = []
    for mode in ("path", "file"):
        rss = peak_rss_kib(mode, str(path))
        rows.append(peak_row(f"Reader({mode})", size, log_size, base, rss))
    for mode, how in (("batches", ""), ("batches-dropped", ", each dropped")):
        name = f"iter_batches(max_bytes={BATCH_BYTES >> 20} MiB){how}"
        row = peak_row(name, size, log_size, base, peak_rss_kib(mode, str(path)))
        # what the issue bounds it by: the batch, one block, the largest record
        row["bound_bytes"] = BATCH_BYTES + leveldb_log.BLOCK_SIZE + size
        rows.append(row)
    path.unlink()
    return rows


def _tfrecord(tpath: Path, size: int, n: int) -> dict[str, Any]:
    """Write a tfrecord file of n records of size bytes, then tfrecord_iterator."""
    frame = tfrecord_bytes([random.Random(8).randbytes(size)])
    per_write = max(1, MiB // len(frame))
    with open(tpath, "wb") as f:
        for i in range(0, n, per_write):
            f.write(frame * min(per_write, n - i))
    tbase = peak_rss_kib("tfrecord-import", str(tpath))
    rss = peak_rss_kib("tfrecord", str(tpath))
    row = peak_row("tfrecord_iterator", size, tpath.stat().st_size, tbase, rss)
    tpath.unlink()
    return row


def peak_memory(data: Data, cfg: Config) -> list[dict[str, Any]]:
    """The peak-memory rows: 100 B and 1 MiB records, ours and tfrecord's reader."""
    rows = []
    for size in (100, MiB):
        n = max(1, cfg.peak_log_bytes // size)
        rows += _ours(data.tmp / f"peak-{size}.log", size, n)
        if tf_reader is not None:
            rows.append(_tfrecord(data.tmp / f"peak-{size}.tfrecord", size, n))
    return rows
