"""Leak checks: a cycle run many times must grow neither traced memory nor the resident
size."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def run(cycle: Callable[[], None], n: int) -> None:
    """Runs cycle() n times, collecting garbage every 100: what the collector frees is no
    leak, but the free-threaded one waits for the process to grow by a tenth first, and the
    resident size keeps the high-water mark of the cycles left to it (their block buffers)."""
    for i in range(1, n + 1):
        cycle()
        if i % 100 == 0:
            gc.collect()


def assert_no_leak(cycle: Callable[[], None], n: int, also_ignoring: str | None = None) -> None:
    """Runs cycle() n // 4 times to warm up, then n times under tracemalloc, then 2 n more
    times, and asserts that the traced memory grew by less than 8 bytes a cycle (the smallest
    Python object is 16) and the resident size by less than 1 MiB (a reader's C state alone
    is a few hundred bytes). Allocations made in this file, and in the file also_ignoring
    names (a caller's cycles), are not counted. The objects alive before it starts are frozen
    (gc.freeze) meanwhile: a collection then walks only what the cycles made, not the whole
    heap of a test process that has run hundreds of tests before this one."""
    gc.collect()
    gc.freeze()
    try:
        measure(cycle, n, also_ignoring)
    finally:
        gc.unfreeze()


def measure(cycle: Callable[[], None], n: int, also_ignoring: str | None) -> None:
    """assert_no_leak's rounds and bounds."""
    run(cycle, n // 4)
    gc.collect()
    rss_before = rss_bytes()
    tracemalloc.start(10)
    try:
        gc.collect()
        before = tracemalloc.take_snapshot()
        run(cycle, n)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    run(cycle, 2 * n)
    gc.collect()
    rss_grown = rss_bytes() - rss_before
    skipped = [tracemalloc.__file__, __file__, *([also_ignoring] if also_ignoring else [])]
    ignore = [tracemalloc.Filter(False, name) for name in skipped]
    diff = after.filter_traces(ignore).compare_to(before.filter_traces(ignore), "traceback")
    grown = sum(d.size_diff for d in diff)
    top = "\n".join(str(line) for d in diff[:3] for line in d.traceback.format()[-4:])
    assert grown < 8 * n, f"traced memory grew by {grown} bytes over {n} cycles:\n{top}"
    assert rss_grown < 1024 * 1024, f"resident size grew by {rss_grown} bytes"
