"""Filters Spark pushes to a ``leveldb_log`` read, as byte ranges and file choices.

A record's ``offset`` is where its first header lies, and a Reader over [start, end)
returns exactly the records whose first header lies there: so ``offset >= x`` is
``start = x``, ``offset < x`` is ``end = x``, and so on, honoured exactly. Filters on
``path`` choose files. What cannot be honoured exactly is handed back for Spark to apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

if TYPE_CHECKING:
    from leveldb_log._files._plan import Range

__all__ = ["Bounds", "push"]

PathTest = Callable[[str], bool]


@dataclass(frozen=True)
class Bounds:
    """The offsets [low, high) and the path tests a read keeps to (all when empty)."""

    low: int = 0
    high: int | None = None
    path_tests: tuple[PathTest, ...] = field(default=())

    def keeps_path(self, path: str) -> bool:
        return all(test(path) for test in self.path_tests)

    def narrow(self, piece: Range) -> Range | None:
        """The part of ``piece`` within the bounds, or None when nothing is left."""
        assert piece.end is not None  # planned ranges end where the listing's size did
        start = max(piece.start, self.low)
        end = piece.end if self.high is None else min(piece.end, self.high)
        return piece._replace(start=start, end=end) if start < end else None


def push(filters: Iterable[Any], bounds: Bounds, *, by_offset: bool) -> tuple[Bounds, list[Any]]:
    """Fold the filters Spark offers into ``bounds``; return the new bounds and the filters
    left for Spark (those not honoured exactly). ``by_offset`` False leaves every filter on
    ``offset`` to Spark."""
    rest = []
    for f in filters:
        column = getattr(f.child if isinstance(f, Not) else f, "attribute", None)
        narrowed = None
        if column == ("offset",) and by_offset:
            narrowed = _offset(f, bounds)
        elif column == ("path",):
            narrowed = _path(f, bounds)
        if narrowed is None:
            rest.append(f)
        else:
            bounds = narrowed
    return bounds, rest


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _offset(f: Any, bounds: Bounds) -> Bounds | None:
    """``bounds`` narrowed by a filter on offset, or None when it is not one of those."""
    if isinstance(f, IsNotNull):
        return bounds  # offset is never null
    value: Any = getattr(f, "value", None)
    if not _whole(value):
        return None
    low, high = {
        GreaterThan: (value + 1, None),
        GreaterThanOrEqual: (value, None),
        LessThan: (None, value),
        LessThanOrEqual: (None, value + 1),
        EqualTo: (value, value + 1),
    }.get(type(f), (None, None))
    if low is None and high is None:
        return None
    new_low = bounds.low if low is None else max(bounds.low, low)
    new_high = bounds.high
    if high is not None:
        new_high = max(0, high) if new_high is None else min(new_high, max(0, high))
    return Bounds(new_low, new_high, bounds.path_tests)


def _path(f: Any, bounds: Bounds) -> Bounds | None:
    """``bounds`` with a test for a filter on path, or None when it is not one of those."""
    test = _path_test(f.child if isinstance(f, Not) else f)
    if test is None:
        return None
    if isinstance(f, Not):
        positive = test

        def test(path: str) -> bool:
            return not positive(path)

    if isinstance(f, IsNotNull):
        return bounds
    return Bounds(bounds.low, bounds.high, (*bounds.path_tests, test))


def _path_test(f: Any) -> PathTest | None:
    if isinstance(f, IsNotNull):
        return lambda path: True
    value: Any = getattr(f, "value", None)
    if isinstance(f, In) and all(isinstance(v, str) for v in value):
        return frozenset(value).__contains__
    if not isinstance(value, str):
        return None
    tests: dict[type, PathTest] = {
        EqualTo: value.__eq__,
        StringStartsWith: lambda path: path.startswith(value),
        StringEndsWith: lambda path: path.endswith(value),
        StringContains: value.__contains__,
    }
    return tests.get(type(f))
