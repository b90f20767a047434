"""Exceptions and the corruption report shared by the C extension and Python code."""

from __future__ import annotations

from typing import NamedTuple


class Corruption(NamedTuple):
    """Bytes a reader dropped: where they begin, how many, and LevelDB's reason."""

    offset: int
    size: int
    reason: str


class LogError(Exception):
    """Base class of every error this package raises about a log."""


class CorruptionError(LogError, ValueError):
    """A log is damaged where the reader's recovery mode does not allow it."""

    def __init__(self, offset: int, size: int, reason: str) -> None:
        super().__init__(offset, size, reason)
        self.offset = offset
        self.size = size
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.reason} at offset {self.offset} ({self.size} bytes dropped)"

    @property
    def corruption(self) -> Corruption:
        """The same facts as the `Corruption` passed to ``on_corruption``."""
        return Corruption(self.offset, self.size, self.reason)


class TruncatedRecordError(CorruptionError):
    """The log ends in a torn record (raised only in ``"absolute"`` recovery)."""
