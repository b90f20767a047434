"""Threads started together, switching fast when asked."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def fast_switching() -> Iterator[None]:
    """Threads switch every 10 microseconds, so that they really interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def run_threads(target: Callable[[int], Any], n: int, *, fast: bool = False) -> list[Any]:
    """Runs target(tid) in n threads started together (switching fast if asked) and returns
    their results by tid; re-raises the first exception."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def body(tid: int) -> None:
        try:
            barrier.wait()
            results[tid] = target(tid)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    with fast_switching() if fast else contextlib.nullcontext():
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return results
