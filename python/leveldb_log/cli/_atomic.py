"""All or nothing for ``leveldb-log write``: a command that fails leaves its log as it was.

- Replacing a log (no ``--append``): the records go into a temporary file beside the log,
  which is synced and renamed over the log only once every record is in. Its name says
  whose it is (``_leftovers``), so that one a killed command left is removed by the next.
  A target that exists and is not a regular file (``/dev/null``, a FIFO) is written in
  place: it cannot be replaced by a rename.
- A URL of a store (``to_url``): the input is spooled whole, then written as one object.
- Appending (``--append``): the input is parsed completely first (into a spool), so that
  bad input never touches the log. Mode "a" may cut a crashed writer's leftovers before
  the first record: those bytes are saved first, and if writing then fails (a full disk,
  say) the log is cut back and they are put back, byte for byte. A crash cannot run that
  code: an undo record made durable first lets the next ``write`` put the log back
  (``_undo``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO

from leveldb_log._core import Writer, _append_point, _lock_fd
from leveldb_log._files._publish import sync_folder
from leveldb_log.cli import _leftovers, _undo
from leveldb_log.cli._common import (
    LENGTH_PREFIX,
    UsageError,
    err,
    fsspec_needed,
    shown,
    storage_options,
)

__all__ = ["append", "replace", "to_url"]

_SPOOL_IN_MEMORY = 64 << 20  # a spool this large stays in memory, beyond that on disk


def replace(path: str, records: Iterable[bytes]) -> None:
    """Write ``records`` as the whole log at ``path``, atomically where ``path`` allows.

    The new log is a new file renamed over the old one: a hard link to the old log keeps
    the old log (a symbolic link is followed, and its target replaced)."""
    typed, path = path, os.path.realpath(path)  # messages name the log as typed
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        with Writer(path) as w:
            w.write_many(records)
        return
    directory = os.path.dirname(path)
    _leftovers.remove_for(path, typed)
    with _locked(path):  # a Writer holding the log refuses the command, not its records
        _roll_back_interrupted(path, typed)
        with _leftovers.naming(path, shown_as=typed):
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=_leftovers.prefix(path), suffix=".tmp")
        os.close(fd)
        try:
            with _leftovers.naming(path, tmp, typed), Writer(tmp, "w") as w:
                w.write_many(records)
                w.sync()
            os.chmod(tmp, _mode_for(path))
            os.replace(tmp, path)
        except BaseException:
            _remove(tmp)
            raise
    sync_folder(directory)


def append(path: str, records: Iterable[bytes]) -> None:
    """Append ``records`` to the log at ``path`` (mode "a"), or change nothing on failure."""
    # The lock is held from before an interrupted append is put back, and the tail saved,
    # until the tail is put back, if it must be.
    with _spool(records) as spool, _locked(path):
        _roll_back_interrupted(path)
        saved = _save_tail(path)  # raises CorruptionError where "a" would refuse
        try:
            _make_undo(path, saved, spool)
            with Writer(path, "a", lock=False) as w:
                w.write_many(_unspool(spool))
                w.sync()
        except BaseException:
            _restore_tail(path, saved)
            raise
        finally:
            saved[1].close()
            _undo.discard(_undo.path_for(path))  # (also one interrupted while made)


def to_url(args: argparse.Namespace, records: Iterable[bytes]) -> None:
    """``write`` to a LOG given as a URL of a store (``file://`` LOGs are paths by now):
    the input is read and checked whole first, so that bad input never reaches the store,
    then written as one object, which the store shows once it is closed. ``--append`` is
    refused, before anything (appending reads the log's tail and may cut it)."""
    options = storage_options(args)
    if args.append:
        raise UsageError(f"--append needs a local file, not '{shown(args.log)}'")
    with (
        _spool(records) as spool,
        fsspec_needed(),
        Writer(args.log, "w", storage_options=options) as w,
    ):
        w.write_many(_unspool(spool))


def _make_undo(path: str, saved: tuple[int, IO[bytes], int], spool: IO[bytes]) -> None:
    """Make the undo record durable; not for a log that is not a regular file (a device has
    nothing to put back), nor where none can be made (said on standard error)."""
    if saved[2] >= 0 and not stat.S_ISREG(os.stat(path).st_mode):
        return
    try:
        _undo.write(path, *saved, _unspool(spool))
    except OSError as e:
        err(
            f"{shown(path)}: cannot make an undo record ({e.strerror or e}): a crash during this "
            "append would leave the log with only some of the new records"
        )
    finally:
        spool.seek(0)


def _roll_back_interrupted(path: str, typed: str | None = None) -> None:
    said = _undo.roll_back_interrupted(path)
    if said is not None:
        err(f"{shown(path if typed is None else typed)}: {said}")


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """Hold the lock a Writer holds on the log at ``path`` (LogLockedError if one does);
    nothing to hold when there is no log yet, or it cannot be opened for writing (then no
    Writer can hold it either)."""
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, PermissionError):
        yield
        return
    try:
        _lock_fd(fd, path)
        yield
    finally:
        os.close(fd)


def _mode_for(path: str) -> int:
    """The permission bits the log keeps (an existing one's), or a new file's (umask)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _spool(records: Iterable[bytes]) -> IO[bytes]:
    """Every record, length-prefixed, in a temporary file: all the input, read and checked."""
    spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)
    try:
        for record in records:
            spool.write(LENGTH_PREFIX.pack(len(record)))
            spool.write(record)
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return spool


def _unspool(spool: IO[bytes]) -> Iterator[bytes]:
    while prefix := spool.read(LENGTH_PREFIX.size):
        (length,) = LENGTH_PREFIX.unpack(prefix)
        yield spool.read(length)


def _save_tail(path: str) -> tuple[int, IO[bytes], int]:
    """(where "a" will cut, the bytes it will cut, the log's length), or (0, empty, -1)
    when there is no log yet (mode "a" makes one)."""
    saved = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)
    try:
        try:
            size = os.path.getsize(path)
        except FileNotFoundError:
            return 0, saved, -1
        cut = _append_point(path, dialect="leveldb")[0] if size else 0  # append()'s Writer
        with open(path, "rb") as f:
            f.seek(cut)
            while chunk := f.read(1 << 20):
                saved.write(chunk)
    except BaseException:  # a log "a" refuses: the caller gets no file to close
        saved.close()
        raise
    return cut, saved, size


def _restore_tail(path: str, saved: tuple[int, IO[bytes], int]) -> None:
    """Put the log back as it was before the command: cut, then the saved bytes."""
    cut, tail, size = saved
    if size < 0:  # there was no log: there is none now
        _remove(path)
        return
    tail.seek(0)
    with open(path, "r+b") as f:
        f.truncate(cut)
        f.seek(cut)
        while chunk := tail.read(1 << 20):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
