"""A database folder's files by their names: which are write-ahead logs, which MANIFEST is live.

LevelDB (db/filename.cc), RocksDB (file/filename.cc) and Pebble (internal/base/filenames.go)
name the files of a database folder alike:

=============================  ==========================================================
``NNNNNN.log``                 a write-ahead log, numbered (6 digits or more); Pebble also
                               writes a log in segments, ``NNNNNN-SSS.log`` after the first
``MANIFEST-NNNNNN``            a MANIFEST (VersionEdits), of which ``CURRENT`` names the live
                               one (``MANIFEST-000005`` and a newline)
``CURRENT``                    that name; Pebble's newer format versions name the live
                               MANIFEST in a marker file instead,
                               ``marker.manifest.IIIIII.MANIFEST-NNNNNN``, the highest
                               ``IIIIII`` live
``NNNNNN.ldb``, ``.sst``       table files (LevelDB writes ``.ldb`` and reads both)
``NNNNNN.blob``                RocksDB's and Pebble's blob files
``LOG``, ``LOG.old*``          the info log, plain text (RocksDB adds a time to old ones)
``LOCK``, ``IDENTITY``,        the lock, RocksDB's id, the options the database was opened
``OPTIONS-NNNNNN``             with (RocksDB and Pebble)
``*.dbtmp``                    a file being written, renamed once complete (Pebble:
                               ``temporary.NNNNNN.dbtmp``, ``CURRENT.NNNNNN.dbtmp``)
``archive/``                   RocksDB's folder of obsolete logs kept for
                               ``WAL_ttl_seconds``: already in tables, not replayed
=============================  ==========================================================

Only the logs and the live MANIFEST are in the log format: `database_files` picks them out
of a folder's names. It does no I/O (the caller lists the folder and reads ``CURRENT``), so
that every engine's lister and the CLI share it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["database_files", "is_database"]

#: A write-ahead log's name: its number, and Pebble's segment index after the first.
_LOG = re.compile(r"([0-9]+)(?:-([0-9]+))?\.log")
#: A MANIFEST's name.
_MANIFEST = re.compile(r"MANIFEST-[0-9]+")
#: Pebble's marker naming the live MANIFEST: its iteration and the MANIFEST.
_MARKER = re.compile(r"marker\.manifest\.([0-9]+)\.(MANIFEST-[0-9]+)")


def is_database(names: Iterable[str]) -> bool:
    """Whether base names are a database folder's: one names ``CURRENT`` or a Pebble
    MANIFEST marker (a database of Pebble's newer format versions has no ``CURRENT``)."""
    return any(name == "CURRENT" or _MARKER.fullmatch(name) for name in names)


def database_files(
    names: Iterable[str], *, manifest: bool = False, current: bytes | None = None
) -> list[str] | None:
    """The names to read in a database folder, given the base names of its files.

    Arguments
      names: the base names of the files in one folder (in any order).
      manifest: also the live MANIFEST, first: the order in which a database recovers.
      current: the bytes of ``CURRENT`` (``b"MANIFEST-000005\\n"``), needed with
        ``manifest=True`` unless the folder names its MANIFEST in a Pebble marker.

    Returns
      None when the folder is no database (neither ``CURRENT`` nor a Pebble marker is in
      names); else the write-ahead logs (``NNNNNN.log`` and Pebble's ``NNNNNN-SSS.log``
      segments) in log-number order, numerically, a log's segments in order, preceded with
      manifest=True by the live MANIFEST. Table files, ``LOG``, ``LOG.old*``, ``CURRENT``,
      ``LOCK``, ``OPTIONS-*``, ``IDENTITY``, other MANIFESTs and ``*.dbtmp`` files are
      never in it.

    Raises
      ValueError: manifest=True and CURRENT is not given, is malformed (LevelDB's rule: a
        MANIFEST's name and a newline) or names a MANIFEST that is not in names.
    """
    present = set(names)
    if not is_database(present):
        return None
    logs = sorted(
        (int(m[1]), int(m[2] or 0), name)
        for name in present
        if (m := _LOG.fullmatch(name)) is not None
    )
    found = [name for _, _, name in logs]
    if manifest:
        found.insert(0, _live_manifest(present, current))
    return found


def _live_manifest(present: set[str], current: bytes | None) -> str:
    """The MANIFEST that CURRENT (or, without one, the newest Pebble marker) names."""
    if "CURRENT" not in present:
        markers = [m for name in present if (m := _MARKER.fullmatch(name)) is not None]
        name = max(markers, key=lambda m: int(m[1]))[2]
        return _present(name, present, "the manifest marker")
    if current is None:
        raise ValueError("manifest=True needs current, the bytes of CURRENT")
    if not current.endswith(b"\n"):
        raise ValueError(f"CURRENT does not end with a newline: {current[:80]!r}")
    text = current[:-1].decode("ascii", "replace")
    if _MANIFEST.fullmatch(text) is None:
        raise ValueError(f"CURRENT names no MANIFEST: {current[:80]!r}")
    return _present(text, present, "CURRENT")


def _present(name: str, present: set[str], by: str) -> str:
    """``name``, once it is known to be in the folder."""
    if name not in present:
        raise ValueError(f"{by} names {name}, which is not in the folder")
    return name
