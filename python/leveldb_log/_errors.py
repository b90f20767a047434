"""Exceptions and the corruption report shared by the C extension and Python code."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple


class Corruption(NamedTuple):
    """Bytes a reader dropped: where they begin, how many, and LevelDB's reason."""

    offset: int
    size: int
    reason: str


class LogError(Exception):
    """Base class of every error this package raises about a log."""


class CorruptionError(LogError, ValueError):
    """A log is damaged where the reader's recovery mode does not allow it, or a file is
    not a log where one is needed (``Writer(path, "a")``).

    ``offset``, ``size`` and ``reason`` say where the damage begins, how many bytes it
    covers and why; ``message``, when given, replaces the usual text of ``str()``.
    """

    def __init__(self, offset: int, size: int, reason: str, *, message: str | None = None) -> None:
        super().__init__(offset, size, reason)
        self.offset = offset
        self.size = size
        self.reason = reason
        self.message = message

    def __reduce__(self) -> tuple[Any, tuple[int, int, str]]:
        """Pickles with its message (exceptions pickle their ``args`` alone)."""
        return functools.partial(type(self), message=self.message), (
            self.offset,
            self.size,
            self.reason,
        )

    def __str__(self) -> str:
        if self.message is not None:
            return self.message
        return f"{self.reason} at offset {self.offset} ({self.size} bytes dropped)"

    @property
    def corruption(self) -> Corruption:
        """The same facts as the `Corruption` passed to ``on_corruption``."""
        return Corruption(self.offset, self.size, self.reason)


class TruncatedRecordError(CorruptionError):
    """The log ends in a torn record (raised only in ``"absolute"`` recovery)."""
