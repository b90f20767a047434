"""database_logs(): the logs of a LevelDB, RocksDB or Pebble database folder, as full paths.

The folder is listed (a local one with os.scandir, a URL's with fsspec) and ``CURRENT``
read when the MANIFEST is asked for; `leveldb_log._database.database_files` decides from
the names which files are logs.
"""

from __future__ import annotations

import errno
import os
import posixpath
from collections.abc import Mapping
from typing import Any

from leveldb_log import _storage
from leveldb_log._database import database_files

__all__ = ["database_logs"]


def database_logs(
    path: str | os.PathLike[str],
    *,
    manifest: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> list[str]:
    """The write-ahead logs of a database folder, to read in this order.

    Arguments
      path: a LevelDB, RocksDB or Pebble database folder (one holding ``CURRENT``), as a
        path or a URL (``s3://bucket/db``: needs fsspec, ``leveldb-log[fsspec]``).
      manifest: also the live MANIFEST (the one ``CURRENT`` names), first.
      storage_options: for a URL, its file system's keyword arguments.

    Returns
      Full paths (URLs for a URL): the logs ``NNNNNN.log`` in log-number order, the
      MANIFEST first with manifest=True. Table files (``.ldb``, ``.sst``), ``LOG``,
      ``CURRENT``, ``LOCK``, ``OPTIONS-*`` and other MANIFESTs are never among them
      (leveldb_log._database says which names are which). Read each with
      ``Reader(name, dialect="auto")``.

    Raises
      FileNotFoundError: no such folder. NotADirectoryError: path is a file.
      ValueError: the folder is no database (``not a database: no CURRENT in ...``); with
        manifest=True, a CURRENT that is malformed or names a missing MANIFEST;
        storage_options for a path that is no URL.
      OSError: the folder or CURRENT cannot be read.
    """
    text = os.fspath(path)
    if _storage.is_url(text):
        local = _storage.local_path(text, storage_options)
        if local is None:
            return _url_logs(text, manifest, storage_options)
        text = local
    elif storage_options is not None:
        raise ValueError("storage_options applies to URLs (scheme://...)")
    with os.scandir(text) as entries:
        names = [e.name for e in entries if not e.is_dir()]
    current = _read_current(os.path.join(text, "CURRENT"), names, manifest, open)
    found = database_files(names, manifest=manifest, current=current)
    if found is None:
        raise ValueError(f"not a database: no CURRENT in {text!r}")
    return [os.path.join(text, name) for name in found]


def _url_logs(url: str, manifest: bool, storage_options: Mapping[str, Any] | None) -> list[str]:
    """database_logs() for a folder on a store other than the local file system."""
    fs, inner = _storage.filesystem(url, storage_options)
    if not fs.exists(inner):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), url)
    if not fs.isdir(inner):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), url)
    fs.invalidate_cache(inner)  # the database may have written since fsspec last looked
    names = [
        posixpath.basename(entry["name"].rstrip("/"))
        for entry in fs.ls(inner, detail=True)
        if entry.get("type") != "directory"
    ]
    base = url.rstrip("/")
    current = _read_current(inner.rstrip("/") + "/CURRENT", names, manifest, fs.open)
    found = database_files(names, manifest=manifest, current=current)
    if found is None:
        raise ValueError(f"not a database: no CURRENT in {url!r}")
    return [f"{base}/{name}" for name in found]


def _read_current(where: str, names: list[str], manifest: bool, opener: Any) -> bytes | None:
    """CURRENT's bytes, when the MANIFEST is asked for and the folder has a CURRENT."""
    if not manifest or "CURRENT" not in names:
        return None
    with opener(where, "rb") as f:
        data: bytes = f.read(4096)  # a MANIFEST's name and a newline
    return data
