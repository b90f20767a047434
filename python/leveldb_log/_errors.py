"""Exceptions and the corruption report shared by the C extension and Python code."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple


class Corruption(NamedTuple):
    """Bytes a reader dropped: where they begin, how many, and LevelDB's reason.

    What a Reader's on_corruption callback receives, and what a CorruptionError's
    .corruption holds. A NamedTuple:

    offset: the file offset where the dropped bytes begin.
    size: how many bytes were dropped (the sum over reports is the reader's
      dropped_bytes).
    reason: LevelDB's text: "checksum mismatch", "bad record length", "partial
      record without end", "missing start of fragmented record", "error in
      middle of record" or "unknown record type N"; for a torn tail, reported
      in "absolute" mode only, "truncated header at end of file", "truncated
      payload at end of file" or "fragmented record open at end of file".
    """

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
    with the callback, except for a file that ends in bytes no writer leaves: no corruption
    is reported there (LevelDB's reader ends the log silently), so it warns in every mode.
    """

    def __init__(self, message: str, corruption: Corruption | None = None) -> None:
        super().__init__(message)
        self.corruption = corruption


class LogError(Exception):
    """Base class of every error this package raises about a log.

    Its subclasses are CorruptionError and TruncatedRecordError. An error of the
    OS (OSError) or of an argument (TypeError, ValueError) is not a LogError.
    """


class CorruptionError(LogError, ValueError):
    """A log is damaged where the reader's recovery mode does not allow it, or a file is
    not a log where one is needed.

    Raised by
      Reader's next() at a corruption, in "tolerate_tail" and "absolute" modes,
        after the records before it were returned; str() is then
        "<reason> at offset N (M bytes dropped)".
      Writer(path, "a") when the file does not end like a log; str() is then
        "<path> does not end like a log: <why> at offset N; it was left as it
        was", and the file was not changed.
      the payload decoders (leveldb_log.leveldb, .rocksdb, .pebble) on a
        malformed payload: offset is then the byte offset *within the payload*
        where decoding failed, size the bytes from there to the payload's end;
        str() is "<WriteBatch|VersionEdit|Pebble batch>: <reason> at byte N".
    It is also a ValueError, so ``except ValueError`` catches it.

    Arguments
      offset, size, reason: where the damage begins (a file offset from a
        reader or writer, a payload offset from a decoder), how many bytes it
        covers, and why (kept as attributes of the same names).
      message: when given, the text of str() (kept as .message; else None).

    A CorruptionError pickles with its message.
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
        """The same facts as a Corruption: Corruption(offset, size, reason)."""
        return Corruption(self.offset, self.size, self.reason)


class TruncatedRecordError(CorruptionError):
    """The log ends in a torn record: raised by next() in "absolute" mode only.

    A torn tail is what a crash leaves at the end of a log: a partial header, a
    payload cut short, or a fragmented record without its last fragment. The
    records before it were returned first. reason is "truncated header at end of
    file", "truncated payload at end of file" or "fragmented record open at end
    of file". The other modes stop quietly before a torn tail instead. A
    CorruptionError, so ``except CorruptionError`` catches it too.
    """


class LogLockedError(OSError):
    """Another Writer holds the log open: raised by ``Writer(path)`` (and the
    command line's ``write``), before the file is changed in any way.

    Each Writer on a path holds an exclusive advisory lock on the file until it
    is closed, so that two writers never interleave their records. An OSError
    (``errno.EAGAIN``); ``filename`` is the path given, and ``pid`` the process
    holding the lock where the OS tells (Linux, from ``/proc``), else None. It
    may be this process. ``Writer(path, lock=False)`` neither takes nor checks
    the lock.
    """

    pid: int | None = None
