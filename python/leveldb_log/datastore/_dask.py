"""leveldb_log.dask.read_export: an export's entities as a Dask bag, one partition per
output file, or per byte range of one (``blocksize``), read in parallel."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from typing import Any

from leveldb_log._optional import optional
from leveldb_log._splits import splits
from leveldb_log.datastore._export import Export
from leveldb_log.datastore._values import Entity


def _read_part(export: Export, path: str, start: int, end: int | None) -> list[Entity]:
    return list(export.read_file(path, start, end))


def read_export(
    path: str | os.PathLike[str],
    *,
    kinds: Collection[str] | str | None = None,
    namespaces: Collection[str] | str | None = None,
    blocksize: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> Any:
    """The entities of a Firestore or Datastore export as a dask.bag.Bag of Entity.

    Arguments
      path, kinds, namespaces, storage_options: as leveldb_log.datastore.read_export.
      blocksize: None for one partition per output file; else bytes of output file per
        partition (byte ranges of splits(): every record read once).

    Returns
      A Bag of Entity, in the export's order; bag.to_dataframe() makes a data frame of
      the properties. Damage is reported as CorruptionWarning by the workers.

    Raises
      ImportError: dask is missing (pip install 'leveldb-log[dask]').
      As read_export: ValueError for a malformed export; from compute(),
      EntityDecodeError for a record that is not an entity.
    """
    db, dask = optional("dask.bag", "dask"), optional("dask", "dask")
    if blocksize is not None and (isinstance(blocksize, bool) or blocksize < 1):
        raise ValueError(f"blocksize must be at least 1 or None, not {blocksize!r}")
    export = Export(path, kinds=kinds, namespaces=namespaces, storage_options=storage_options)
    options = export._storage_options
    parts: list[tuple[str, int, int | None]] = []
    for f in export.files:
        if blocksize is None:
            parts.append((f, 0, None))
        else:
            parts += [(f, s, e) for s, e in splits(f, size=blocksize, storage_options=options)]
    if not parts:
        return db.from_sequence([], npartitions=1)
    read = dask.delayed(_read_part, pure=True)
    return db.from_delayed([read(export, f, s, e) for f, s, e in parts])
