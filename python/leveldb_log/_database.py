"""Which files of a LevelDB, RocksDB or Pebble database folder are logs.

A folder holding ``CURRENT`` is a database. Its write-ahead logs are ``NNNNNN.log`` (read in
log-number order); its MANIFEST is the one ``CURRENT`` names; everything else (``.ldb`` and
``.sst`` tables, ``LOG``, ``LOCK``, ``OPTIONS-*``, ``CURRENT`` itself) is no log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["database_files"]

_WAL = re.compile(r"^(\d+)\.log$")
_MANIFEST = re.compile(r"^MANIFEST-\d+$")


def database_files(
    names: Iterable[str], *, manifest: bool = False, current: bytes | None = None
) -> list[str] | None:
    """The names to read in one folder, if it is a database.

    Arguments
      names: the base names of the folder's entries.
      manifest: add the MANIFEST that ``current`` names.
      current: the contents of the folder's CURRENT (needed with manifest=True).

    Returns
      None when the folder is not a database (no CURRENT); else its WALs in log-number
      order, then, with manifest=True, the MANIFEST CURRENT names (when it is among
      ``names``).
    """
    names = list(names)
    if "CURRENT" not in names:
        return None
    wals = sorted((m for m in map(_WAL.match, names) if m), key=lambda m: int(m.group(1)))
    found = [m.group(0) for m in wals]
    if manifest and current is not None:
        named = current.decode("utf-8", "replace").strip()
        if _MANIFEST.match(named) and named in names:
            found.append(named)
    return found
