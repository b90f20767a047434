"""Benchmarks of leveldb_log against the obvious alternatives, as ratios.

    python -m bench [--quick | --smoke] [--markdown] [--json PATH] [--only crc,write,read,memory]
    python -m bench --only dask     (opt-in: Dask read_logs on 1 and 2 workers)
    python -m bench --only durable  (opt-in: durable writes from 1, 8, 64 threads)
    python -m bench --only ray      (opt-in: Ray read_logs against ray.data.read_text)
    python -m bench --only spark_stream  (opt-in: Spark streaming, durable write to memory sink)
    python -m bench --only spark_write  (opt-in: Spark df.write against df.write.text)
    python -m bench --only spark_read  (opt-in: Spark read against its text source, planning)

(from the repository root). Every run starts with the CPU, the flags that matter to
CRC-32C and the chosen CRC-32C path; the tables follow when the run ends. See
bench/README.md for the method and what each row means.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench.baselines import missing
from bench.harness import CLOCKS, Config, MiB
from bench.machine import loadavg, machine_info
from bench.report import evaluate_targets, header, json_doc, report
from bench.suite import OPT_IN, OPT_IN_SECTIONS, SECTIONS, run_opt_in, run_suite


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short run (about a minute at most)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="every case once on a few MiB of data: checks that the suite runs (its figures "
        "mean nothing; tests/meta/test_bench_programs.py uses it)",
    )
    ap.add_argument("--markdown", action="store_true", help="print markdown tables")
    ap.add_argument("--json", type=Path, metavar="PATH", help="also write every number here")
    ap.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help="comma-separated subset of "
        + ",".join(SECTIONS + OPT_IN)
        + f" (default: all but the opt-in {','.join(OPT_IN)})",
    )
    ap.add_argument("--rounds", type=int, help="measured rounds (default 7, quick 3)")
    ap.add_argument("--seconds", type=float, help="per measurement (default 0.1, quick 0.04)")
    ap.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="cpu: process CPU time, robust on a shared box (default); wall: elapsed time",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return ap.parse_args(argv)


def config(args: argparse.Namespace) -> Config:
    """What the options ask for: the reference run, --quick, or --smoke."""
    if args.smoke:
        return Config(
            seconds=args.seconds or 0.002,
            rounds=args.rounds or 1,
            max_bytes=2 * MiB,
            peak_log_bytes=4 * MiB,
            clock=args.clock,
        )
    return Config(
        seconds=args.seconds or (0.04 if args.quick else 0.1),
        rounds=args.rounds or (3 if args.quick else 7),
        max_bytes=(32 if args.quick else 64) * MiB,
        peak_log_bytes=(32 if args.quick else 256) * MiB,
        clock=args.clock,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; print the header at once and the tables at the end."""
    args = parse_args(argv)
    cfg = config(args)
    if missing():
        print(
            f"note: {', '.join(missing())} not installed (pip install '.[bench]'): "
            "those baselines are left out",
            file=sys.stderr,
        )
    info = machine_info()
    info["clock"] = args.clock
    print(header(info, args.markdown), flush=True)
    started = time.perf_counter()
    cases, peaks = run_suite(cfg, set(args.only.split(",")), not args.quiet)
    opt_in = run_opt_in(cfg, set(args.only.split(",")), args.quick, not args.quiet)
    info["loadavg_end"] = loadavg()
    info["elapsed_s"] = time.perf_counter() - started
    targets = evaluate_targets(cases, info["crc32c_implementation"])
    print(report(info, cfg, cases, peaks, targets, args.markdown))
    for name, row in opt_in.items():
        print("\n" + OPT_IN_SECTIONS[name].table(row, args.markdown))
    if args.json:
        doc = json_doc(info, cfg, args.quick, cases, peaks, targets) | opt_in
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
