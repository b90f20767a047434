"""Leak checks that load cannot move: a cycle run many times must leave behind no Python
allocation, no C allocation and no mapping.

Each check counts what is allocated, which neither the scheduler nor the kernel's paging
changes (the resident size, which both do, is never read):

- Python's allocations (objects, and the extension's PyMem buffers): tracemalloc's traced
  blocks and bytes, compared before and after a run of cycles;
- C's allocations (the C core's reader state, record and block buffers, the Arrow structs):
  the bytes malloc has handed out and not taken back, glibc's mallinfo2();
- mappings (the Arrow buffers that pages.c maps itself): the process's virtual size.

The C and mapping counts are read after each of many rounds of cycles, and the median growth
of a round is judged: a leak grows every round, while a cache filled once, an allocator
keeping a freed block or taking a new arena, grows one round and not the others.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import itertools
import statistics
import tracemalloc
from collections.abc import Callable

ROUNDS = 10  # rounds of cycles whose C and mapping growth is judged


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


LIBC = ctypes.CDLL(None)  # the process's C library, and what it exports
LIBC.malloc.restype, LIBC.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
LIBC.free.restype, LIBC.free.argtypes = None, [ctypes.c_void_p]


@functools.cache
def _mallinfo2() -> Callable[[], _MallInfo2]:
    """glibc's mallinfo2(), once it has been seen to count a block malloc hands out."""
    fn = getattr(LIBC, "mallinfo2", None)
    assert fn is not None, "counting C allocations needs glibc's mallinfo2() (glibc 2.33+)"
    fn.restype = _MallInfo2
    fn.argtypes = []
    before = _in_use(fn())
    probe = LIBC.malloc(1 << 20)
    seen = _in_use(fn()) - before
    LIBC.free(probe)
    assert seen >= 1 << 20, (
        "mallinfo2() does not see the blocks malloc hands out here (another allocator "
        "preloaded, such as AddressSanitizer's?)"
    )
    return fn  # type: ignore[no-any-return]


def _in_use(info: _MallInfo2) -> int:
    """The bytes malloc has handed out and not taken back, in every arena: those of its
    heaps (uordblks) and those it mapped for large blocks (hblkhd)."""
    return int(info.uordblks + info.hblkhd)


def malloc_bytes() -> int:
    """The bytes malloc has handed out and not taken back (glibc's count)."""
    return _in_use(_mallinfo2()())


def mapped_bytes() -> int:
    """The process's virtual size: every mapping, including those made with mmap directly."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmSize in /proc/self/status")


def run(cycle: Callable[[], None], n: int) -> None:
    """Runs cycle() n times, collecting garbage every 100: what the collector frees is no
    leak, but the free-threaded one waits for the process to grow by a tenth first."""
    for i in range(1, n + 1):
        cycle()
        if i % 100 == 0:
            gc.collect()


def assert_no_leak(cycle: Callable[[], None], n: int, also_ignoring: str | None = None) -> None:
    """Runs cycle() n // 4 times to warm up, then n times under tracemalloc, then n times
    more in ROUNDS rounds, and asserts that over the traced run Python's allocations grew by
    fewer than n // 10 blocks (one leaked object a cycle is n) and 8 bytes a cycle (the
    smallest Python object is 16), and that the median round grew malloc's bytes by less than
    8 a cycle (its smallest block takes 32) and the virtual size by less than a page a cycle
    (a mapping takes at least one). Allocations made in this file, and in the file
    also_ignoring names (a caller's cycles), are not traced. The objects alive before it
    starts are frozen (gc.freeze) meanwhile: a collection then walks only what the cycles
    made, not the whole heap of a test process that has run hundreds of tests before."""
    gc.collect()
    gc.freeze()
    try:
        run(cycle, n // 4)
        assert_traced_flat(cycle, n, also_ignoring)
        assert_rounds_flat(cycle, n)
    finally:
        gc.unfreeze()


def assert_traced_flat(cycle: Callable[[], None], n: int, also_ignoring: str | None) -> None:
    """The Python allocations left by n cycles, as tracemalloc counts them."""
    tracemalloc.start(10)
    try:
        gc.collect()
        before = tracemalloc.take_snapshot()
        run(cycle, n)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    skipped = [tracemalloc.__file__, __file__, *([also_ignoring] if also_ignoring else [])]
    ignore = [tracemalloc.Filter(False, name) for name in skipped]
    diff = after.filter_traces(ignore).compare_to(before.filter_traces(ignore), "traceback")
    grown = sum(d.size_diff for d in diff)
    blocks = sum(d.count_diff for d in diff)
    top = "\n".join(str(line) for d in diff[:3] for line in d.traceback.format()[-4:])
    assert blocks < n // 10 and grown < 8 * n, (
        f"Python's traced allocations grew by {blocks} blocks, {grown} bytes over {n} "
        f"cycles:\n{top}"
    )


def assert_rounds_flat(cycle: Callable[[], None], n: int) -> None:
    """The C allocations and mappings left by n cycles, as the median of ROUNDS rounds."""
    per_round = max(1, n // ROUNDS)
    gc.collect()
    readings = [(malloc_bytes(), mapped_bytes())]
    for _ in range(ROUNDS):
        run(cycle, per_round)
        gc.collect()
        readings.append((malloc_bytes(), mapped_bytes()))
    for i, (what, bound) in enumerate((("malloc's bytes in use", 8), ("the virtual size", 4096))):
        growth = [after[i] - before[i] for before, after in itertools.pairwise(readings)]
        median = statistics.median(growth)
        assert median < bound * per_round, (
            f"{what} grew by a median {median} bytes a round of {per_round} cycles "
            f"(at most {bound} a cycle allowed); every round: {growth}"
        )
