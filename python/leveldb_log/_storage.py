"""URLs as sources and targets: ``s3://``, ``gcs://``, ``memory://``, ``file://``, ...

Reader, Writer, scan(), stats(), splits() and the command line hand any ``scheme://...``
string to this module, which opens it with fsspec (the extra ``leveldb-log[fsspec]``). A plain
path never comes here, so reading and writing local files never imports fsspec.

A URL of the local file system (``file://``, ``local://``) is handed back as its plain
path: it is then read and written exactly as a path is (in place, appended to with mode
"a", pickled as what reopens it). Any other store gives a binary file object, which the
Reader or Writer owns and closes.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import io
import os
import re
from collections.abc import Iterator, Mapping
from typing import IO, Any, TypeVar

#: An fsspec file system. fsspec is optional and untyped: it is imported by name, so that
#: type checkers need neither it nor stubs for it.
AbstractFileSystem = Any

__all__ = [
    "FsspecMissingError",
    "filesystem",
    "is_local",
    "is_url",
    "local_path",
    "open_url",
    "reading",
    "size",
]

#: A scheme (RFC 3986: a letter, then letters, digits, "+", "-", ".") and "://".
#: csrc/py/io.c (llpy_is_url) applies the same test before importing this module.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")

_MODES = {"rb", "wb", "xb", "ab"}

T = TypeVar("T")


class FsspecMissingError(ImportError):
    """A URL was given, but fsspec (the extra ``leveldb-log[fsspec]``) is not installed."""


def is_url(obj: object) -> bool:
    """Whether ``obj`` is a str (or os.PathLike giving one) of the form ``scheme://...``.

    Arguments
      obj: anything; a source or target as Reader, Writer or splits() take it.

    Returns
      True for a URL, False for a plain path and for every other object.
    """
    if isinstance(obj, os.PathLike):
        obj = os.fspath(obj)
    return isinstance(obj, str) and _URL.match(obj) is not None


def filesystem(
    url: str, storage_options: Mapping[str, Any] | None = None
) -> tuple[AbstractFileSystem, str]:
    """The fsspec file system of ``url`` and the path within it.

    Arguments
      url: a URL (``scheme://...``).
      storage_options: keyword arguments of the file system (for s3fs, for instance
        ``{"anon": True}`` or ``{"client_kwargs": {"endpoint_url": ...}}``); None for none.

    Returns
      (fs, path), as fsspec.core.url_to_fs gives them.

    Raises
      FsspecMissingError (an ImportError): fsspec is not installed.
      ImportError, ValueError: fsspec knows no such protocol, or lacks its package.
      TypeError: storage_options is not a mapping.
    """
    try:
        core = importlib.import_module("fsspec.core")
    except ImportError as e:
        raise FsspecMissingError(
            f"opening {url!r} needs fsspec: pip install 'leveldb-log[fsspec]' "
            f"(and the package of its protocol, such as s3fs or gcsfs)"
        ) from e
    if storage_options is None:
        storage_options = {}
    if not isinstance(storage_options, Mapping):
        raise TypeError(
            f"storage_options must be a mapping or None, not {type(storage_options).__name__}"
        )
    fs, path = core.url_to_fs(url, **storage_options)
    return fs, str(path)


def is_local(fs: AbstractFileSystem) -> bool:
    """Whether an fsspec file system is the local one (its paths are plain paths)."""
    local = importlib.import_module("fsspec.implementations.local")
    return isinstance(fs, local.LocalFileSystem)


def local_path(
    url: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None
) -> str | None:
    """The plain path of a URL of the local file system (``file://``), else None.

    Raises
      FsspecMissingError (an ImportError): fsspec is not installed.
    """
    fs, path = filesystem(os.fspath(url), storage_options)
    return path if is_local(fs) else None


def open_url(
    url: str | os.PathLike[str], mode: str, storage_options: Mapping[str, Any] | None = None
) -> IO[bytes] | str:
    """Open ``url`` for a Reader ("rb") or a Writer ("wb", "xb", "ab").

    Arguments
      url: a URL (``scheme://...``); see is_url().
      mode: "rb", "wb", "xb" (the object must not exist yet) or "ab".
      storage_options: the file system's keyword arguments, or None.

    Returns
      For the local file system, the plain path (a str), which the caller opens as it
      opens any path. Otherwise a binary file object, which the caller owns and closes.

    Raises
      FsspecMissingError (an ImportError): fsspec is not installed.
      ValueError: an unknown mode; "ab" on a store other than the local file system
        (appending reads the log's tail and may cut a torn one back, which object
        stores cannot do), refused before anything is opened.
      FileExistsError: "xb" and the object exists (checked first, then created
        exclusively where the store can, as s3fs and memory:// do).
      FileNotFoundError, OSError: what the store raises.
    """
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {sorted(_MODES)}, not {mode!r}")
    text = os.fspath(url)
    fs, path = filesystem(text, storage_options)
    if is_local(fs):
        return str(path)
    if mode == "ab":
        raise ValueError(
            f"mode 'a' needs a local file: appending reads the log's tail and may cut a "
            f"torn one back, which {_protocol(fs)}:// cannot do; got {text!r}"
        )
    if mode == "xb" and fs.exists(path):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), text)
    if mode == "rb" and fs.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), text)
    with _naming(text):
        try:
            opened: IO[bytes] = fs.open(path, mode)
        except ValueError:
            if mode != "xb":
                raise
            opened = fs.open(path, "wb")  # a store that cannot create exclusively
    if mode == "rb" and isinstance(opened, io.BytesIO):
        # memory:// hands every opener the one BytesIO it stores: a reader gets its own
        # view of the bytes, so that readers do not move each other's position.
        opened = io.BytesIO(opened.getvalue())
    return opened


def reading(source: T, storage_options: Mapping[str, Any] | None) -> T | str | IO[bytes]:
    """What a function that reads ``source`` opens: a URL opened, any other source as is.

    Arguments
      source: a source as scan() and stats() take it (a path, a URL, a bytes-like object
        or a binary file object).
      storage_options: the file system's keyword arguments for a URL, or None.

    Returns
      For a URL, what open_url(source, "rb") gives: a plain path (the local file system)
      or a binary file object that the caller owns and closes. Any other source as given.

    Raises
      ValueError: storage_options with a source that is no URL (as Reader raises).
      FsspecMissingError (an ImportError), FileNotFoundError, OSError: see open_url().
    """
    if isinstance(source, (str, os.PathLike)) and is_url(source):
        return open_url(source, "rb", storage_options)
    if storage_options is not None:
        raise ValueError("storage_options applies to URLs (scheme://...)")
    return source


def size(url: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None) -> int:
    """The length in bytes of the object at ``url``.

    Raises
      FsspecMissingError (an ImportError): fsspec is not installed.
      FileNotFoundError, OSError: the object cannot be found or read.
    """
    text = os.fspath(url)
    fs, path = filesystem(text, storage_options)
    if is_local(fs):
        return os.stat(path).st_size
    with _naming(text):
        length = fs.size(path)
    if length is None:
        raise OSError(f"{text!r}: the store gives no size")
    return int(length)


@contextlib.contextmanager
def _naming(url: str) -> Iterator[None]:
    """A missing object raises FileNotFoundError naming the URL (stores name their own
    path, or nothing)."""
    try:
        yield
    except FileNotFoundError as e:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), url) from e


def _protocol(fs: AbstractFileSystem) -> str:
    protocol = fs.protocol
    return protocol if isinstance(protocol, str) else protocol[0]
