"""Exceptions and the corruption report shared by the C extension and Python code."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple


class Corruption(NamedTuple):
    """Bytes a reader dropped: where they begin, how many, and LevelDB's reason."""

    offset: int
    size: int
    reason: str


class CorruptionWarning(UserWarning):
    """A ``Reader`` skipped damage (or stopped before it, in ``"point_in_time"``) and no
    ``on_corruption`` callback was given to hear of it; or a file ends in bytes no writer of
    this format leaves (likely not a log at all).

    One is issued through :mod:`warnings` for each corruption, with the same text for every
    corruption of a source, so by default a script sees it once per place it reads from;
    ``corruption`` holds that corruption's `Corruption`. ``python -W error`` (or
    ``warnings.simplefilter("error", CorruptionWarning)``) turns the first into an
    exception, and a filter silences them. Passing ``on_corruption`` replaces the warning
    with the callback.
    """

    def __init__(self, message: str, corruption: Corruption | None = None) -> None:
        super().__init__(message)
        self.corruption = corruption


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
