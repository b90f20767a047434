"""Unpickling support: a pickled Reader over a path reopens where it stood."""

from __future__ import annotations

from typing import Any

from leveldb_log._core import Reader


def restore_reader(
    path: Any, options: dict[str, Any], progress: tuple[int | None, int, bool]
) -> Reader:
    """Reopen `path` at the pickled position, with the reader's options and counters."""
    reader = Reader(path, **options)
    last_record_offset, dropped_bytes, finished = progress
    reader._restore(last_record_offset, dropped_bytes, finished)
    return reader
