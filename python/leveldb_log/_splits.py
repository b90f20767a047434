"""Byte ranges that split a log across workers.

Each range is meant for ``Reader(source, start=start, end=end)``: a reader returns the
records whose first header lies in its range, so reading all ranges returns every record
exactly once. Cut points fall on block boundaries, where a reader starts without skipping
anything, so no worker reads a block another one owns (except to finish a record that
crosses its end).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from leveldb_log import _storage
from leveldb_log._core import BLOCK_SIZE

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["ranges", "splits"]


@runtime_checkable
class SeekableFile(Protocol):
    """A file object whose length can be found by seeking."""

    def seek(self, offset: int, whence: int = 0, /) -> int: ...
    def tell(self) -> int: ...


def splits(
    source: str | os.PathLike[str] | Buffer | SeekableFile,
    *,
    n: int | None = None,
    size: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> list[tuple[int, int]]:
    """Split source into consecutive (start, end) byte ranges covering the log.

    Each range is for Reader(source, start=start, end=end): a reader returns the
    records whose first header lies in its range, so the readers of all ranges
    together return every record and report every corruption exactly once.
    Every cut is a multiple of BLOCK_SIZE, so no worker reads a block another
    owns (except to finish a record that crosses its end).

    Arguments
      source: a path; a URL (scheme://..., such as s3://bucket/key.log),
        sized through fsspec (pip install 'leveldb-log[fsspec]'); a bytes-like
        object holding the log; or a seekable binary file object holding the
        log from its current position (which is restored). Only its length is
        read, by the call itself.
      n: at most n ranges, of nearly equal numbers of blocks.
      size: ranges of about size bytes (the nearest whole number of 32 KiB
        blocks, at least one).
      Give exactly one of n and size.
      storage_options: for a URL, the file system's options (as for Reader);
        None for none.

    Returns
      A list of (start, end) tuples: the first starts at 0, each next one
      where the previous ended, the last ends at the log's length. No range is
      empty, so an empty log gives [].

    Raises
      ValueError: not exactly one of n and size given, or one below 1;
        storage_options with a source that is no URL; a source that
        cannot seek (a FIFO, a pipe's file object), whose ranges no worker
        could reach.
      TypeError: a source or a count of the wrong type.
      FileNotFoundError, OSError: the path or URL cannot be read;
        IsADirectoryError for a directory.
      ImportError: a URL without fsspec (the message names the extra).
    """
    if (n is None) == (size is None):
        raise ValueError("splits() needs exactly one of n and size")
    return ranges(_length(source, storage_options), n=n, size=size)


def ranges(length: int, *, n: int | None = None, size: int | None = None) -> list[tuple[int, int]]:
    """The (start, end) ranges splits() gives for a log of ``length`` bytes: for callers
    that know the length already (a listing's sizes), so that no file is looked at again.
    Arguments and result as for splits()."""
    if (n is None) == (size is None):
        raise ValueError("splits() needs exactly one of n and size")
    blocks = -(-length // BLOCK_SIZE)  # ceil: the last block may be short
    if n is not None:
        _check_positive("n", n)
        parts = min(n, blocks)
        cuts = [blocks * i // parts * BLOCK_SIZE for i in range(parts)] if parts else []
    else:
        assert size is not None  # exactly one of them is given
        _check_positive("size", size)
        step = max(1, round(size / BLOCK_SIZE))
        cuts = [b * BLOCK_SIZE for b in range(0, blocks, step)]
    ends = [*cuts[1:], length] if cuts else []
    return list(zip(cuts, ends, strict=True))


def _file_size(path: str | os.PathLike[str]) -> int:
    """The length of the regular file at ``path``: a directory is IsADirectoryError, and
    anything else that is no regular file (a FIFO, a device) a ValueError, since workers
    could not seek in it to their ranges."""
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "splits() needs a log file, not a directory", path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(
            f"splits() needs a regular file that readers can seek in, and {os.fspath(path)!r} "
            "is not one (a FIFO or a device?): copy it to a file first"
        )
    return info.st_size


def _check_positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")


def _length(
    source: str | os.PathLike[str] | Buffer | SeekableFile,
    storage_options: Mapping[str, Any] | None,
) -> int:
    """Bytes of log in ``source``: a file's size, a buffer's size, or from a file's position."""
    if isinstance(source, (str, os.PathLike)) and _storage.is_url(source):
        return _storage.size(source, storage_options)
    if storage_options is not None:
        raise ValueError("storage_options applies to URLs (scheme://...)")
    if isinstance(source, (str, os.PathLike)):
        return _file_size(source)
    if isinstance(source, SeekableFile):
        seekable = getattr(source, "seekable", None)
        if seekable is not None and not seekable():
            raise ValueError(
                "splits() needs a source it can seek in, and this file object cannot "
                "seek (a pipe?): copy it to a file first"
            )
        here = source.tell()
        try:
            return source.seek(0, os.SEEK_END) - here
        finally:
            source.seek(here)
    try:
        with memoryview(source) as view:
            return view.nbytes
    except TypeError:
        raise TypeError(
            f"splits() needs a path, a bytes-like object or a seekable file, "
            f"not {type(source).__name__}"
        ) from None
