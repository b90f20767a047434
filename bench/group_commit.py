"""The group commit alone: N threads share one Writer and call `w.write(record, sync=True)`
in a loop for a while; prints records acknowledged a second, fdatasync calls a second, and
records a flush, for each thread count. The durable case of the suite (`python -m bench
--only durable`) sets ours beside the other stores; this one is for looking inside ours, a
variant at a time (bench/DURABLE.md).

    python -m bench.group_commit                      # 1, 8 and 64 threads, 1 s each
    python -m bench.group_commit --threads 8 --seconds 2 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench.cases.durable import filesystem_of, fsync_latency, measure_rate, ours
from bench.machine import cpu


def run(d: Path, threads: int, seconds: float) -> tuple[float, float, float]:
    """(records a second, fdatasync calls a second, records a flush) of one run, in the
    durable case's harness and with its contender for ours."""
    rate, grouped = measure_rate(ours, d, threads, seconds)
    assert grouped is not None  # ours tells its fdatasync calls
    return rate, rate / grouped, grouped


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
            runs = [run(Path(d) / "db", n, args.seconds) for _ in range(args.rounds)]
            rate, flushes, grouped = (statistics.median(r[i] for r in runs) for i in range(3))
            print(f"{n:>7}  {rate:>10,.0f}  {flushes:>10,.0f}  {grouped:>13.1f}")


if __name__ == "__main__":
    main()
