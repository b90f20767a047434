"""The group commit alone: N threads share one Writer and call `w.write(record, sync=True)`
in a loop for a while; prints records acknowledged a second, fdatasync calls a second, and
records a flush, for each thread count. The durable case of the suite (`python -m bench
--only durable`) sets ours beside the other stores; this one is for looking inside ours, a
variant at a time (bench/README.md, "Durable writes").

    python -m bench.group_commit                      # 1, 8 and 64 threads, 1 s each
    python -m bench.group_commit --threads 8 --seconds 2 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import leveldb_log

from bench.cases.durable import filesystem_of, fsync_latency
from bench.machine import cpu

RECORD = 100


def run(path: Path, threads: int, seconds: float) -> tuple[float, float, float]:
    """(records a second, fdatasync calls a second, records a flush) of one run."""
    w = leveldb_log.Writer(path, "w")
    counts = [0] * threads
    stop = threading.Event()
    start = threading.Barrier(threads + 1)

    def body(t: int) -> None:
        start.wait()
        n = 0
        while not stop.is_set():
            head = b"%d:%d:" % (t, n)
            w.write(head + b"r" * (RECORD - len(head)), sync=True)
            n += 1
        counts[t] = n

    workers = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    for th in workers:
        th.start()
    flushes0 = w._sync_flushes  # before any worker may write
    start.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for th in workers:
        th.join()
    elapsed = time.perf_counter() - t0
    flushes = w._sync_flushes - flushes0
    w.close()
    done = sum(counts)
    return done / elapsed, flushes / elapsed, done / max(flushes, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,8,64", help="thread counts, comma-separated")
    ap.add_argument("--seconds", type=float, default=1.0, help="length of one run")
    ap.add_argument("--rounds", type=int, default=3, help="runs per count (the median is shown)")
    ap.add_argument("--dir", type=Path, default=Path.cwd(), help="where the log is written")
    args = ap.parse_args()
    model, flags = cpu()
    have = ", ".join(f for f, on in (flags or {}).items() if on)
    with tempfile.TemporaryDirectory(prefix="llog-group-", dir=args.dir) as d:
        lat = fsync_latency(Path(d), 200)["fdatasync"]
        print(f"CPU: {model} ({have}); {filesystem_of(Path(d))}; write + fdatasync {lat:.0f} us")
        print(f"{'threads':>7}  {'records/s':>10}  {'flushes/s':>10}  {'records/flush':>13}")
        for n in (int(x) for x in args.threads.split(",")):
            runs = [run(Path(d) / "g.log", n, args.seconds) for _ in range(args.rounds)]
            rate, flushes, grouped = (statistics.median(r[i] for r in runs) for i in range(3))
            print(f"{n:>7}  {rate:>10,.0f}  {flushes:>10,.0f}  {grouped:>13.1f}")


if __name__ == "__main__":
    main()
