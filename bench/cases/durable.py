"""Durable writes (opt-in: `python -m bench --only durable`): 100 B records made durable one
call at a time, from 1, 8 and 64 threads, side by side in one run:

- ours: one Writer shared by the threads, `w.write(record, sync=True)` (group commit);
- sqlite3 in WAL mode with synchronous=FULL, one connection per thread, one INSERT per
  transaction;
- plyvel (LevelDB) `db.put(key, record, sync=True)`, and rocksdict (RocksDB) `db.put(key,
  record, write_opt)` with a synced WriteOptions, one database shared by the threads;
- the floor: `os.write` then `os.fdatasync` in a loop on one descriptor the threads share.

A figure is records acknowledged per second of wall-clock time (the time spent waiting for
the disk is the point, so the CPU clock of the other cases cannot measure it), the median
over interleaved rounds: each round runs every contender at every thread count once, the
order rotating from round to round. The header adds the file system the files live on and
the latency of one fdatasync there.

Targets (issue 28): ours at 8 threads >= 5x ours at 1 thread and >= 5x sqlite3 at 8
threads; at 64 threads >= 10x ours at 1 thread; ours at 1 thread >= 0.9x the floor.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import leveldb_log
from leveldb_log import _testing

from bench.harness import Config

THREADS = (1, 8, 64)
RECORD = 100
#: target name -> (numerator, denominator, goal): (contender, threads) pairs.
TARGETS = {
    "ours 8 threads / ours 1 thread": (("ours", 8), ("ours", 1), 5.0),
    "ours 8 threads / sqlite3 8 threads": (("ours", 8), ("sqlite3", 8), 5.0),
    "ours 64 threads / ours 1 thread": (("ours", 64), ("ours", 1), 10.0),
    "ours 1 thread / os.write+fdatasync 1 thread": (("ours", 1), ("floor", 1), 0.9),
}

# A contender: opens its store in a directory and returns (put(thread, i), close()); ours's
# close() also returns how many fdatasync calls its group commits made.
Opened = tuple[Callable[[int, int], None], Callable[[], int | None]]


def _record(t: int, i: int) -> bytes:
    head = b"%d:%d:" % (t, i)
    return head + b"r" * (RECORD - len(head))


def ours(d: Path, threads: int) -> Opened:
    w = leveldb_log.Writer(d / "ours.log", sync=True)

    def close() -> int:
        flushes = _testing.sync_flushes(w)  # internal, for tests and this row
        w.close()
        return flushes

    return lambda t, i: w.write(_record(t, i)), close


def _floor(d: Path, threads: int) -> Opened:
    fd = os.open(d / "floor.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)

    def put(t: int, i: int) -> None:
        os.write(fd, _record(t, i))
        os.fdatasync(fd)

    return put, lambda: os.close(fd)


def _sqlite3(d: Path, threads: int) -> Opened:
    path = d / "sqlite.db"
    setup = sqlite3.connect(path)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.execute("CREATE TABLE IF NOT EXISTS log (k TEXT PRIMARY KEY, v BLOB)")
    setup.commit()
    setup.close()
    conns = []
    for _ in range(threads):
        c = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        c.execute("PRAGMA synchronous=FULL")
        conns.append(c)

    def put(t: int, i: int) -> None:
        conns[t].execute("INSERT INTO log VALUES (?, ?)", (f"{t}:{i}", _record(t, i)))

    def close() -> None:
        for c in conns:
            c.close()

    return put, close


def _plyvel(d: Path, threads: int) -> Opened:
    import plyvel

    db = plyvel.DB(str(d / "plyvel"), create_if_missing=True)
    return lambda t, i: db.put(b"%d:%d" % (t, i), _record(t, i), sync=True), db.close


def _rocksdict(d: Path, threads: int) -> Opened:
    from rocksdict import Options, Rdict, WriteOptions

    db = Rdict(str(d / "rocksdict"), Options(raw_mode=True))
    opt = WriteOptions()
    opt.sync = True
    return lambda t, i: db.put(b"%d:%d" % (t, i), _record(t, i), opt), db.close


def _available() -> dict[str, Callable[[Path, int], Opened]]:
    found: dict[str, Callable[[Path, int], Opened]] = {
        "ours": ours,
        "floor": _floor,
        "sqlite3": _sqlite3,
    }
    for name, make in (("plyvel", _plyvel), ("rocksdict", _rocksdict)):
        try:
            __import__(name)
        except ImportError:
            continue
        found[name] = make
    return found


def measure_rate(
    make: Callable[[Path, int], Opened], d: Path, threads: int, seconds: float
) -> tuple[float, float | None]:
    """Records acknowledged per second by `threads` threads putting for `seconds`, and the
    records per fdatasync when the contender tells its fdatasync calls."""
    if d.exists():
        shutil.rmtree(d)
    d.mkdir()
    put, close = make(d, threads)
    counts = [0] * threads
    start = threading.Barrier(threads + 1)
    stop = threading.Event()

    def body(t: int) -> None:
        start.wait()
        i = 0
        while not stop.is_set():
            put(t, i)
            i += 1
        counts[t] = i

    ts = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    for th in ts:
        th.start()
    start.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for th in ts:
        th.join()
    elapsed = time.perf_counter() - t0
    flushes = close()
    done = sum(counts)
    return done / elapsed, done / flushes if flushes else None


def filesystem_of(d: Path) -> str:
    """The type and device of the mount that holds d (/proc/mounts), or '?'."""
    best, found = "", "?"
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return found
    real = str(d.resolve())
    for line in mounts:
        dev, mnt, fstype = line.split()[:3]
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, found = mnt, f"{fstype} ({dev} on {mnt})"
    return found


def fsync_latency(d: Path, n: int) -> dict[str, float]:
    """Median microseconds of one os.write of RECORD bytes + os.fdatasync, and + os.fsync."""
    path = d / "latency"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    out = {}
    try:
        for name, sync in (("fdatasync", os.fdatasync), ("fsync", os.fsync)):
            times = []
            for i in range(n):
                t = time.perf_counter()
                os.write(fd, _record(0, i))
                sync(fd)
                times.append(time.perf_counter() - t)
            out[name] = statistics.median(times) * 1e6
    finally:
        os.close(fd)
        path.unlink()
    return out


def durable_rates(cfg: Config, tmp: Path, quick: bool, progress: bool) -> dict[str, Any]:
    """Every contender at every thread count, interleaved rounds; the medians and targets."""
    seconds = 0.05 if cfg.seconds < 0.01 else (0.5 if quick else 1.0)
    rounds = max(1, cfg.rounds if cfg.seconds >= 0.01 else 1)
    rounds = min(rounds, 3 if quick else 5)
    makers = _available()
    info = {
        "filesystem": filesystem_of(tmp),
        "latency_us": fsync_latency(tmp, 20 if cfg.seconds < 0.01 else 300),
        "record_size": RECORD,
        "seconds": seconds,
        "rounds": rounds,
    }
    runs = [(name, n) for name in makers for n in THREADS]
    samples: dict[str, list[float]] = {f"{name}/{n}": [] for name, n in runs}
    per_flush: dict[str, list[float]] = {}
    for rnd in range(rounds):
        shift = rnd % len(runs)
        for name, n in runs[shift:] + runs[:shift]:
            rate, grouped = measure_rate(makers[name], tmp / "db", n, seconds)
            samples[f"{name}/{n}"].append(rate)
            if grouped is not None:
                per_flush.setdefault(f"{name}/{n}", []).append(grouped)
        if progress:
            print(f"  durable round {rnd + 1}/{rounds}", flush=True)
    rates = {k: statistics.median(v) for k, v in samples.items()}
    targets = []
    for label, ((a, na), (b, nb), goal) in TARGETS.items():
        if f"{a}/{na}" in rates and f"{b}/{nb}" in rates:
            ratio = rates[f"{a}/{na}"] / rates[f"{b}/{nb}"]
            targets.append({"target": label, "ratio": ratio, "goal": goal, "met": ratio >= goal})
    grouped = {k: statistics.median(v) for k, v in per_flush.items()}
    return (
        info
        | {"contenders": list(makers), "rates": rates, "samples": samples}
        | {"records_per_fdatasync": grouped, "targets": targets}
    )


NAMES = {
    "ours": "leveldb_log write(sync=True)",
    "floor": "os.write + os.fdatasync (floor)",
    "sqlite3": "sqlite3 WAL, synchronous=FULL",
    "plyvel": "plyvel put(sync=True)",
    "rocksdict": "rocksdict put, sync=True",
}


def durable_table(row: dict[str, Any], markdown: bool) -> str:
    """The rates table and the targets, as text or markdown."""
    lat = row["latency_us"]
    lines = [
        f"Durable {row['record_size']} B records/s (wall clock, median of {row['rounds']} "
        f"rounds of {row['seconds']} s); file system: {row['filesystem']}; one write + "
        f"fdatasync: {lat['fdatasync']:.0f} us, write + fsync: {lat['fsync']:.0f} us",
        "",
    ]
    heads = ["contender", *(f"{n} thread{'s' if n > 1 else ''}" for n in THREADS)]
    body = [
        [NAMES[name], *(f"{row['rates'][f'{name}/{n}']:,.0f}" for n in THREADS)]
        for name in row["contenders"]
    ]
    grouped = row.get("records_per_fdatasync", {})
    if all(f"ours/{n}" in grouped for n in THREADS):
        body.append(
            ["  (ours: records per fdatasync)", *(f"{grouped[f'ours/{n}']:.1f}" for n in THREADS)]
        )
    targets = [
        [t["target"], f"{t['ratio']:.2f}x", f">= {t['goal']}x", "met" if t["met"] else "MISSED"]
        for t in row["targets"]
    ]
    for table in ([heads, *body], [["target", "ratio", "goal", ""], *targets]):
        if markdown:
            table = [table[0], ["---"] * len(table[0]), *table[1:]]
            lines += ["| " + " | ".join(r) + " |" for r in table]
        else:
            widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
            lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in table]
        lines.append("")
    return "\n".join(lines).rstrip()
