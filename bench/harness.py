"""The measuring machinery: contenders, interleaved rounds, clocks and ratios.

A case's contenders run round-robin (the order rotating every round), each measurement
lasting about ``Config.seconds``, for a warm-up round that is thrown away and then
``Config.rounds`` rounds. A ratio is the median of the per-round ratios; a rate is the
median of the per-round rates. Nothing here knows what a case measures (see
bench/cases/) or how it is shown (see bench/report.py).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

KiB = 1024
MiB = 1024 * 1024


def size_name(size: int) -> str:
    """A size as the tables show it: "100 B", "4 KiB", "16 MiB"."""
    if size >= MiB:
        return f"{size // MiB} MiB"
    if size >= KiB:
        return f"{size // KiB} KiB"
    return f"{size} B"


def _not_here(_arg: Any) -> Any:
    """setup/run of a contender measured in another process (only its samples are here)."""
    raise RuntimeError("this contender was measured in another process")


@dataclass
class Contender:
    """One way of doing a case's work: setup(n) prepares n records' worth, run() does it."""

    name: str
    role: str  # ours / ours_many / ours_new / model / tfrecord / tfrecord_framing / raw ...
    setup: Callable[[int], Any] = _not_here
    run: Callable[[Any], object] = _not_here
    max_n: int = 1
    probe_n: int = 1
    # filled in by measure()
    n: int = 0
    passes: int = 1
    samples: list[float] = field(default_factory=list)  # seconds per pass, measured rounds


@dataclass
class Case:
    """What one row group measures: its contenders, and which roles are compared."""

    key: str
    op: str  # crc32c / write / read
    size: int
    target: str  # memory / file / buffer
    contenders: list[Contender]
    ours: list[str]  # roles whose ratios are reported
    bases: list[str]  # roles they are compared with
    crc32c_path: str | None = None  # crc32c cases: the CRC-32C implementation measured


@dataclass
class Config:
    """How long and how much: per measurement, rounds, and data budgets."""

    seconds: float
    rounds: int
    max_bytes: int
    peak_log_bytes: int
    clock: str = "cpu"


# The clock of every measurement: CPU time of this process (user + system) by default, so
# that time spent waiting for a CPU while other processes run is not counted; or wall time.
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def timed(c: Contender, state: Any, passes: int, clock: Callable[[], float]) -> float:
    """Seconds per pass of c.run(state), garbage collector off (as timeit does). The young
    generation is collected first; a full collection walks every live object (the cases'
    data), which cost more than the measurements themselves in a --smoke run."""
    gc.collect(0)
    gc.disable()
    try:
        t0 = clock()
        for _ in range(passes):
            c.run(state)
        return (clock() - t0) / passes
    finally:
        gc.enable()


def calibrate(c: Contender, cfg: Config) -> Any:
    """Time a small probe, then pick a record count (capped by the data budget) and a
    number of passes so that one measurement takes about cfg.seconds; returns the state."""
    clock = CLOCKS[cfg.clock]
    n = max(1, min(c.probe_n, c.max_n))
    state = c.setup(n)
    per_record = min(timed(c, state, 1, clock) for _ in range(2)) / n
    want = max(1, int(cfg.seconds / max(per_record, 1e-12)))
    if want > n:
        c.n = min(want, c.max_n)
        state = None  # let the probe's data go before making the full set
        state = c.setup(c.n)
    else:
        c.n = n
    c.passes = max(1, round(cfg.seconds / (per_record * c.n)))
    return state


def measure(case: Case, cfg: Config, progress: bool) -> None:
    """Calibrate every contender, then run the interleaved rounds, filling c.samples."""
    started = time.perf_counter()
    clock = CLOCKS[cfg.clock]
    states = [calibrate(c, cfg) for c in case.contenders]
    gc.collect()  # what the calibration left, once before the rounds
    k = len(case.contenders)
    for r in range(cfg.rounds + 1):  # round 0 is the warm-up
        for i in range(k):
            j = (i + r) % k
            c = case.contenders[j]
            t = timed(c, states[j], c.passes, clock)
            if r > 0:
                c.samples.append(t)
    if progress:
        took = time.perf_counter() - started
        print(f"  {case.key}: {took:.1f} s", file=sys.stderr, flush=True)


def rates(c: Contender) -> list[float]:
    """Records (or calls) per second in each measured round."""
    return [c.n / t for t in c.samples]


def median_rate(c: Contender) -> float:
    """The median of the per-round rates."""
    return statistics.median(rates(c))


def summary(c: Contender, size: int) -> dict[str, Any]:
    """Every number of one contender, for the tables and the JSON file."""
    med = statistics.median(c.samples)
    return {
        "name": c.name,
        "role": c.role,
        "records_per_pass": c.n,
        "passes": c.passes,
        "seconds_per_pass": c.samples,
        "median_seconds": med,
        "records_per_s": c.n / med,
        "mb_per_s": c.n * size / med / 1e6,
        "spread": (max(c.samples) - min(c.samples)) / med,
    }


def ratio(a: Contender, b: Contender) -> float:
    """Median over rounds of rate(a) / rate(b)."""
    return statistics.median(x / y for x, y in zip(rates(a), rates(b), strict=True))


def by_role(case: Case, role: str) -> Contender | None:
    """The case's first contender of that role, if it has one."""
    return next((c for c in case.contenders if c.role == role), None)


def case_ratios(case: Case) -> dict[str, dict[str, float]]:
    """For each of our roles, its ratio against each baseline role present."""
    out: dict[str, dict[str, float]] = {}
    for o in case.ours:
        oc = by_role(case, o)
        if oc is None:
            continue
        out[o] = {}
        # Writer(path) truncates: it is compared with raw writes to a truncated file only.
        pairs = {"raw": "raw_new"} if o == "ours_new" else {b: b for b in case.bases}
        for column, b in pairs.items():
            bc = by_role(case, b)
            if bc is not None:
                out[o][column] = ratio(oc, bc)
    return out


def faster_package_ratio(case: Case) -> float | None:
    """Ours against the fastest "package" contender of each round, median over rounds."""
    oc = by_role(case, "ours")
    pkgs = [c for c in case.contenders if c.role == "package"]
    if oc is None or not pkgs:
        return None
    per_round = zip(rates(oc), *(rates(p) for p in pkgs), strict=True)
    ratios: list[float] = [r[0] / max(r[1:]) for r in per_round]
    return statistics.median(ratios)
