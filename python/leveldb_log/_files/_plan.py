"""Byte ranges of listed files, and tasks made of them, from the listing's sizes alone.

A record belongs to the range that holds its first header, so readers of consecutive
ranges return every record, and report every corruption, exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from leveldb_log._files._listing import Entry
from leveldb_log._splits import ranges

__all__ = ["Range", "pack", "plan"]


class Range(NamedTuple):
    """The records of one file whose first header lies in [start, end); end None: to the
    file's end. ``partition`` is the file's (key, value) pairs from its listing."""

    path: str
    start: int
    end: int | None
    partition: tuple[tuple[str, str | None], ...] = ()

    @property
    def size(self) -> int:
        """Bytes of log the range covers (for planning; a whole-file range's are its
        file's, which plan() puts in end)."""
        return (self.end or 0) - self.start


def plan(entries: Sequence[Entry], size: int | None, recovery: str = "skip") -> list[Range]:
    """The ranges of each file, in listing order: cut every ``size`` bytes (whole blocks,
    as splits() cuts), or one range per file when size is None. Recovery point_in_time
    ends a file at its first damage, which a range after it cannot know: it reads every
    file whole, in every engine. An empty file has no range. No file is looked at again:
    the sizes are the listing's."""
    if recovery == "point_in_time":
        size = None
    found: list[Range] = []
    for entry in entries:
        if size is None:
            if entry.size:
                found.append(Range(entry.path, 0, entry.size, entry.partition))
            continue
        found += [
            Range(entry.path, start, end, entry.partition)
            for start, end in ranges(entry.size, size=size)
        ]
    return found


def pack(pieces: Sequence[Range], limit: int, open_cost: int) -> list[list[Range]]:
    """Consecutive ranges, grouped while a group's bytes (each range counting
    ``open_cost`` more) stay within ``limit``, as Spark groups small files."""
    groups: list[list[Range]] = []
    used = limit + 1
    for piece in pieces:
        cost = piece.size + open_cost
        if used + cost > limit or not groups:
            groups.append([])
            used = 0
        groups[-1].append(piece)
        used += cost
    return groups
