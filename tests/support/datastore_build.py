"""Export folders built as the Firebase emulator writes them, for the datastore tests.

- ``<name>.overall_export_metadata``: a log of two records, ``b"3"`` and an ExportMetadata
  message: one entry per kind folder, ``{1: {1: 2, 3: 3}, 2: metadata path, 3: entity
  count, 4: output bytes}``;
- ``all_namespaces/<kind folder>/<...>.export_metadata``: ``{1: {1: name, 2: start, 3:
  end}, 2: {1: kind, 2: output file names}}``;
- ``output-N``: a log of EntityProto records (encode_entity).

tests/datastore/test_datastore.py checks that rebuilding real emulator exports with this module
gives their files byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import leveldb_log
from leveldb_log.datastore import Entity, encode_entity

from support.wire import varint


def field(number: int, value: int | bytes) -> bytes:
    """One field: an int as a varint, bytes as length-delimited."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def write_log(path: Path, records: Sequence[bytes]) -> None:
    with leveldb_log.Writer(str(path)) as w:
        for r in records:
            w.write(r)


def write_export(
    folder: Path,
    kinds: Sequence[tuple[str, Sequence[Sequence[Entity]]]],
    *,
    name: str = "firestore_export",
    start: int = 1_600_000_000_000_000,
    end: int = 1_600_000_000_001_000,
    windows: bool = False,
) -> Path:
    """An export folder: for each (kind, files), a folder of output files, each file a list
    of entities ("" as the kind makes the emulator's all_kinds folder). Returns the overall
    metadata's path."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = b""
    for kind, files in kinds:
        sub = "all_kinds" if kind == "" else f"kind_{kind}"
        base = f"all_namespaces_{sub}"
        kdir = folder / "all_namespaces" / sub
        kdir.mkdir(parents=True, exist_ok=True)
        names, size, count = [], 0, 0
        for i, entities in enumerate(files):
            out = kdir / f"output-{i}"
            write_log(out, [encode_entity(e) for e in entities])
            names.append(f"output-{i}".encode())
            size += out.stat().st_size
            count += len(entities)
        meta = field(1, field(1, name.encode()) + field(2, start) + field(3, end))
        meta += field(2, field(1, kind.encode()) + b"".join(field(2, n) for n in names))
        (kdir / f"{base}.export_metadata").write_bytes(meta)
        sep = "\\" if windows else "/"
        rel = sep.join(["all_namespaces", sub, f"{base}.export_metadata"])
        head = field(1, 2) + field(3, 3)
        entries += field(
            1, field(1, head) + field(2, rel.encode()) + field(3, count) + field(4, size)
        )
    overall = folder / f"{name}.overall_export_metadata"
    write_log(overall, [b"3", entries])
    return overall


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under folder, by its path relative to it."""
    return {
        os.path.relpath(os.path.join(d, n), folder): Path(d, n).read_bytes()
        for d, _, names in os.walk(folder)
        for n in names
    }
