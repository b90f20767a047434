"""CRC-32C of every leveldb_log path against the crc32c and google-crc32c packages.

One worker process per path (LEVELDB_LOG_CRC32C=<name>) and one for the packages; the
parent asks them in turn, round after round, so that all are measured interleaved on the
same (shared, noisy) machine. Each sample is process CPU time over enough calls to take
about 2 ms; a ratio is the faster package's time over the path's in the same round, and
the table shows the median ratio over the rounds.

    python bench/crc_compare.py [ROUNDS]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

SIZES = [64, 4096, 32768, 1 << 20, 16 << 20]
LABELS = ["64 B", "4 KiB", "32 KiB", "1 MiB", "16 MiB"]


def _functions() -> dict[str, Callable[[bytes], int]]:
    if os.environ.get("LEVELDB_LOG_CRC32C"):
        import leveldb_log

        return {"ours": lambda b: leveldb_log.crc32c(b, 0)}
    import crc32c
    import google_crc32c

    return {"crc32c": crc32c.crc32c, "google_crc32c": google_crc32c.value}


def worker() -> None:
    """Answers "<function> <size> <calls>" lines with the CPU nanoseconds they took."""
    funcs = _functions()
    data = bytes((i * 2654435761 >> 13) & 0xFF for i in range(SIZES[-1]))
    views = {n: data[:n] for n in SIZES}
    print(" ".join(funcs), flush=True)
    for line in sys.stdin:
        name, size, calls = line.split()
        f, buf, n = funcs[name], views[int(size)], int(calls)
        t0 = time.process_time_ns()
        for _ in range(n):
            f(buf)
        print(time.process_time_ns() - t0, flush=True)


class Worker:
    """A worker process and the functions it offers."""

    def __init__(self, impl: str | None) -> None:
        env = dict(os.environ)
        env.pop("LEVELDB_LOG_CRC32C", None)
        if impl:
            env["LEVELDB_LOG_CRC32C"] = impl
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout and self.proc.stdin
        self.names = self.proc.stdout.readline().split()

    def time(self, name: str, size: int, calls: int) -> float:
        """CPU seconds per call."""
        assert self.proc.stdout and self.proc.stdin
        self.proc.stdin.write(f"{name} {size} {calls}\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline()) / 1e9 / calls


def main() -> None:
    """Runs the rounds and prints the table."""
    import leveldb_log

    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    paths = list(leveldb_log.crc32c_implementations)
    paths.remove("portable")
    workers = {p: Worker(p) for p in paths}
    pkg = Worker(None)
    calls = {n: max(1, int(2e-3 / (n / 20e9 + 150e-9))) for n in SIZES}
    ratios: dict[str, list[list[float]]] = {p: [[] for _ in SIZES] for p in paths}
    pkg_gbps: list[list[float]] = [[] for _ in SIZES]
    for _ in range(rounds):
        for s, n in enumerate(SIZES):
            best = min(pkg.time(f, n, calls[n]) for f in pkg.names)
            pkg_gbps[s].append(n / best / 1e9)
            for p in paths:
                ratios[p][s].append(best / workers[p].time("ours", n, calls[n]))
    print(f"CPU: {cpu_model()}; chosen: {leveldb_log.crc32c_implementation}; {rounds} rounds")
    print(f"| path vs faster package | {' | '.join(LABELS)} |")
    print("|---" * (len(SIZES) + 1) + "|")
    for p in paths:
        cells = " | ".join(f"{statistics.median(r):.2f}x" for r in ratios[p])
        print(f"| {p} | {cells} |")
    cells = " | ".join(f"{statistics.median(g):.1f}" for g in pkg_gbps)
    print(f"| (faster package, GB/s) | {cells} |")


def cpu_model() -> str:
    """The CPU model and the flags that matter, from /proc/cpuinfo."""
    model, flags = "?", set[str]()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "?":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    wanted = ["sse4_2", "pclmulqdq", "avx2", "vpclmulqdq", "avx512f", "avx512vl"]
    return model + " [" + " ".join(f for f in wanted if f in flags) + "]"


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker()
    else:
        main()
