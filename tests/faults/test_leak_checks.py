"""The leak checks of support.leaks, shown to report leaks planted in a cycle, each by the
count that sees it, and not to take an allocation made once for a leak."""

from __future__ import annotations

import ctypes
import mmap

import pytest
from support import leaks

N = 400  # cycles: ROUNDS rounds of 40 after the traced run
PLANTED = ctypes.c_void_p * (3 * N)  # room for what every call of a cycle keeps
LIBC = leaks.LIBC
LIBC.mmap.restype = ctypes.c_void_p
LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, *[ctypes.c_int] * 3, ctypes.c_long]
LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAPPED = 1 << 16  # 16 pages


def map_anonymous(size: int) -> int:
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    p = LIBC.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, flags, -1, 0)
    assert p not in (None, ctypes.c_void_p(-1).value)
    return int(p)


class Keeper:
    """A cycle that keeps what keep(i) returns on its i-th call in an array made beforehand,
    so that keeping it allocates nothing; release(address) gives each back at the end."""

    def __init__(self, keep, release) -> None:  # type: ignore[no-untyped-def]
        self.kept = PLANTED()
        self.calls = [0]
        self.keep, self.release = keep, release

    def __call__(self) -> None:
        self.kept[self.calls[0]] = self.keep(self.calls[0])
        self.calls[0] += 1

    def release_all(self) -> None:
        for address in self.kept[: self.calls[0]]:
            if address:
                self.release(address)


def test_python_objects_kept_every_cycle_are_reported_by_their_traced_blocks() -> None:
    kept: list[object] = []  # (and the list grows too, a block now and then)
    with pytest.raises(AssertionError, match=r"Python's traced allocations grew by 40[0-9] "):
        leaks.assert_no_leak(lambda: kept.append(object()), N)


def test_memory_malloced_every_cycle_and_never_freed_is_reported() -> None:
    keeper = Keeper(lambda i: LIBC.malloc(64), LIBC.free)
    try:
        with pytest.raises(AssertionError, match="malloc's bytes in use grew by a median"):
            leaks.assert_no_leak(keeper, N)
    finally:
        keeper.release_all()


def test_a_mapping_made_every_cycle_and_never_unmapped_is_reported() -> None:
    keeper = Keeper(lambda i: map_anonymous(MAPPED), lambda p: LIBC.munmap(p, MAPPED))
    try:
        with pytest.raises(AssertionError, match="the virtual size grew by a median"):
            leaks.assert_no_leak(keeper, N)
    finally:
        keeper.release_all()


def test_memory_taken_once_and_memory_given_back_are_no_leak() -> None:
    """A cache filled once (here a megabyte malloced and a mapping of eight, kept, in the
    middle of the rounds) grows one round only; memory freed in the cycle that took it grows
    none."""
    once = N // 4 + N + 4 * (N // leaks.ROUNDS) + 7  # a call in the fifth round

    def cycle_malloc(i: int) -> int | None:
        LIBC.free(LIBC.malloc(64))
        return LIBC.malloc(1 << 20) if i == once else None

    def cycle_map(i: int) -> int | None:
        LIBC.munmap(map_anonymous(MAPPED), MAPPED)
        return map_anonymous(8 << 20) if i == once else None

    by_malloc = Keeper(cycle_malloc, LIBC.free)
    by_map = Keeper(cycle_map, lambda p: LIBC.munmap(p, 8 << 20))
    try:
        leaks.assert_no_leak(by_malloc, N)
        leaks.assert_no_leak(by_map, N)
        assert by_malloc.calls[0] == by_map.calls[0] == N // 4 + 2 * N  # every cycle ran
        assert sum(1 for p in by_malloc.kept if p) == sum(1 for p in by_map.kept if p) == 1
    finally:
        by_malloc.release_all()
        by_map.release_all()


def test_the_counts_see_what_they_count() -> None:
    """malloc's count sees a hundred blocks the size of a small record (but for the few
    that its per-thread cache held freed: those count as in use throughout), and the virtual
    size a mapping of one page."""
    before = leaks.malloc_bytes()
    blocks = [LIBC.malloc(64) for _ in range(100)]
    grown = leaks.malloc_bytes() - before
    for p in blocks:
        LIBC.free(p)
    assert grown >= 64 * 90
    before = leaks.mapped_bytes()
    q = map_anonymous(mmap.PAGESIZE)
    grown = leaks.mapped_bytes() - before
    LIBC.munmap(q, mmap.PAGESIZE)
    assert grown == mmap.PAGESIZE
