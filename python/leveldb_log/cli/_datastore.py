"""Firestore / Datastore exports on the command line: ``dump --decode`` prints entities as
JSON lines, ``stats`` counts them per kind (leveldb_log.datastore)."""

from __future__ import annotations

import argparse
import collections
import json
import os
import posixpath
import re
from collections.abc import Iterable, Iterator
from typing import Any

from leveldb_log import _storage
from leveldb_log.cli._common import EXIT_CORRUPT, EXIT_OK, Damage, err, storage_options

_OUTPUT = re.compile(r"output-\d+")
_METADATA = (".overall_export_metadata", ".export_metadata")


def is_export(args: argparse.Namespace) -> bool:
    """Whether LOG names an export: ``--kind export``, a folder, a metadata file or a file
    named ``output-N``."""
    path = args.log
    if getattr(args, "kind", None) == "export":
        return True
    if path == "-":
        return False
    if path.endswith(_METADATA) or _OUTPUT.fullmatch(os.path.basename(path.rstrip("/"))):
        return True
    names = _folder_names(args)
    return names is not None and _holds_metadata(names)


def _folder_names(args: argparse.Namespace) -> list[str] | None:
    """The names in the folder LOG, local or on a store (gs://bucket/export); None when it
    is no folder, or cannot be listed (the log's own reading reports what is wrong)."""
    path = args.log
    if not _storage.is_url(path):
        return os.listdir(path) if os.path.isdir(path) else None
    try:
        fs, inner = _storage.filesystem(path, storage_options(args))
        if not fs.isdir(inner):
            return None
        return [os.path.basename(p.rstrip("/")) for p in fs.ls(inner, detail=False)]
    except (ImportError, ValueError, OSError):
        return None


def _holds_metadata(names: Iterable[str]) -> bool:
    """Whether a folder's names include an overall metadata file (other folders are no
    export: reading them as a log says what is wrong)."""
    return any(n.endswith(_METADATA[0]) and not n.startswith("._") for n in names)


def is_one_file(path: str) -> bool:
    """An output file (not a folder or a metadata file): it is a log with figures too."""
    return _OUTPUT.fullmatch(os.path.basename(path)) is not None


def _entities(args: argparse.Namespace, damage: Damage) -> Iterator[Any]:
    from leveldb_log.datastore import read_export

    return iter(read_export(args.log, on_corruption=damage, storage_options=storage_options(args)))


def logs(args: argparse.Namespace) -> list[str]:
    """Every log of the export LOG names, as ``verify`` checks them: its overall metadata
    (a log too) when LOG is a folder or that file, then each output file its metadata lists."""
    from leveldb_log.datastore import read_export
    from leveldb_log.datastore._metadata import OVERALL

    export = read_export(args.log, storage_options=storage_options(args))
    path = args.log
    if path.endswith(OVERALL):
        return [path, *export.files]
    names = _folder_names(args) or []
    overall = [n for n in names if n.endswith(OVERALL) and not n.startswith("._")]
    join = posixpath.join if _storage.is_url(path) else os.path.join
    return [join(path, n) for n in overall] + list(export.files)  # one: read_export checked


def dump(args: argparse.Namespace) -> int:
    """Every entity as one JSON line: {"key": path, "namespace": ..., "properties": ...}."""
    from leveldb_log.datastore import EntityDecodeError
    from leveldb_log.datastore._json import entity_json

    damage = Damage(err)
    try:
        for e in _entities(args, damage):
            print(json.dumps(entity_json(e), ensure_ascii=False))
    except EntityDecodeError as e:
        err(str(e))
        return EXIT_CORRUPT
    return EXIT_CORRUPT if damage.found else EXIT_OK


def counts(args: argparse.Namespace) -> tuple[collections.Counter[str], Damage, str | None]:
    """Entities per kind; the damage met; the error that stopped the count, if any."""
    from leveldb_log.datastore import EntityDecodeError

    kinds: collections.Counter[str] = collections.Counter()
    damage = Damage(err)
    try:
        for e in _entities(args, damage):
            kinds[e.key.kind] += 1
    except EntityDecodeError as e:
        return kinds, damage, str(e)
    return kinds, damage, None


def count_rows(kinds: collections.Counter[str]) -> list[tuple[str, int]]:
    """The counts as (label, count) rows: the total, then each kind (most first)."""
    rows = [("entities", sum(kinds.values()))]
    rows += [(f"  {kind}", n) for kind, n in sorted(kinds.items(), key=lambda x: (-x[1], x[0]))]
    return rows


def count_lines(kinds: collections.Counter[str]) -> list[str]:
    """The counts as a table, its labels' column as wide as the longest label needs."""
    rows = count_rows(kinds)
    width = max(18, *(len(label) + 2 for label, _ in rows))
    return [f"{label:<{width}}{n:>12}" for label, n in rows]


def count_json(kinds: collections.Counter[str]) -> dict[str, Any]:
    return {"entities": sum(kinds.values()), "kinds": dict(sorted(kinds.items()))}


def stats(args: argparse.Namespace) -> int:
    """Entity counts of an export folder or metadata file (no log figures: many files)."""
    kinds, damage, error = counts(args)
    if error is not None:
        err(error)
    if args.json:
        print(json.dumps(count_json(kinds)))
    else:
        print("\n".join(count_lines(kinds)))
    return EXIT_CORRUPT if damage.found or error else EXIT_OK
