"""database_logs(): the logs of a LevelDB, RocksDB or Pebble database folder, as full paths.

The file layer lists the folder (leveldb_log._files._listing, the one lister of the engines
and the CLI), and leveldb_log._database decides from the names which files are logs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from leveldb_log import _storage
from leveldb_log._files._listing import database_names

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
    options = None if storage_options is None else dict(storage_options)
    url = _storage.is_url(text)
    if not url and options is not None:
        raise ValueError("storage_options applies to URLs (scheme://...)")
    local = _storage.local_path(text, options) if url else text
    names = database_names(text if local is None else local, options, manifest)
    if names is None:
        raise ValueError(f"not a database: no CURRENT in {text!r}")
    if local is None:
        return [f"{text.rstrip('/')}/{name}" for name in names]
    return [os.path.join(local, name) for name in names]
