"""A database folder as LOG: ``cat db/``, ``dump db/``, ``verify db/`` read its logs.

A folder holding ``CURRENT`` (LevelDB, RocksDB, Pebble) is read as its write-ahead logs,
in log-number order, each in the dialect its first block tells (``--dialect auto``, the
default); ``--manifest`` adds the live MANIFEST, first. Table files, ``LOG``, ``CURRENT``
and the rest are never read as logs (`leveldb_log.database_logs` picks the logs out), so
nothing warns about them. Any other folder is refused: it is no database.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from leveldb_log import _storage
from leveldb_log._database_logs import database_logs
from leveldb_log.cli._common import UsageError, shown, storage_options

__all__ = ["add_manifest", "each", "logs"]


def add_manifest(p: argparse.ArgumentParser) -> None:
    """``--manifest``: with a database folder as LOG, its live MANIFEST too."""
    p.add_argument(
        "--manifest",
        action="store_true",
        help="with a database folder as LOG (one holding CURRENT): read its live MANIFEST "
        "too, before its logs",
    )


def logs(args: argparse.Namespace) -> list[str] | None:
    """The logs to read when LOG is a folder: a database's, as database_logs() lists them;
    None when LOG is no folder (it is read as the log it is).

    Raises
      UsageError: --manifest with a LOG that is no folder.
      ValueError: a folder that is no database (no CURRENT in it), or whose CURRENT is
        malformed (with --manifest).
    """
    manifest = getattr(args, "manifest", False)
    if not _is_folder(args):
        if manifest:
            raise UsageError(f"--manifest applies to a database folder, not '{shown(args.log)}'")
        return None
    try:
        return database_logs(args.log, manifest=manifest, storage_options=storage_options(args))
    except ValueError as e:
        raise UsageError(str(e)) from None


def each(args: argparse.Namespace, names: list[str]) -> Iterator[argparse.Namespace]:
    """``args`` once for each log of a database folder, with LOG set to it."""
    for name in names:
        yield argparse.Namespace(**{**vars(args), "log": name, "manifest": False})


def _is_folder(args: argparse.Namespace) -> bool:
    """Whether LOG is a folder, local or on a store (s3://bucket/db/); False when that cannot
    be told (no fsspec, a store that fails): reading LOG as a log then says what is wrong."""
    if args.log == "-":
        return False
    if not _storage.is_url(args.log):
        return os.path.isdir(args.log)
    try:
        fs, inner = _storage.filesystem(args.log, storage_options(args))
        return bool(fs.isdir(inner))
    except (ImportError, ValueError, OSError):
        return False
