"""Firestore / Datastore exports on the command line: ``dump --decode`` prints entities as
JSON lines, ``stats`` counts them per kind (leveldb_log.datastore)."""

from __future__ import annotations

import argparse
import collections
import json
import os
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
    if not _storage.is_url(path):
        return os.path.isdir(path) and _holds_metadata(os.listdir(path))
    try:  # a folder on a store (gs://bucket/export): its file system says
        fs, inner = _storage.filesystem(path, storage_options(args))
        if not fs.isdir(inner):
            return False
        return _holds_metadata(os.path.basename(p.rstrip("/")) for p in fs.ls(inner, detail=False))
    except (ImportError, ValueError, OSError):
        return False  # the log's own reading reports what is wrong


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


def count_lines(kinds: collections.Counter[str]) -> list[str]:
    """The counts as table rows: the total, then each kind (most first)."""
    lines = [f"{'entities':<18}{sum(kinds.values()):>12}"]
    lines += [
        f"  {kind:<16}{n:>12}" for kind, n in sorted(kinds.items(), key=lambda x: (-x[1], x[0]))
    ]
    return lines


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
