"""Folder layouts written twice, as logs and as text files of the same names and record
counts, so that an engine's reading of the logs can be held to its own text source's."""

from __future__ import annotations

from pathlib import Path

import leveldb_log


def write_layout(root: Path, layout: dict[str, int]) -> tuple[Path, Path]:
    """Each file of ``layout`` (a path relative to the folder -> its record count) under
    root/logs as a log and under root/text as lines; the two folders."""
    for kind in ("logs", "text"):
        (root / kind).mkdir(parents=True, exist_ok=True)
        for name, count in layout.items():
            path = root / kind / name
            path.parent.mkdir(parents=True, exist_ok=True)
            records = [f"{name}:{i}".encode() for i in range(count)]
            if kind == "logs":
                with leveldb_log.Writer(path) as w:
                    w.write_many(records)
            else:
                path.write_bytes(b"".join(r + b"\n" for r in records))
    return root / "logs", root / "text"
