"""An export folder's layout: which output files its metadata lists, in which order.

- ``<name>.overall_export_metadata``: a log of two records, a version and an ExportMetadata
  message whose entries (field 1) each name a per-kind metadata file (field 2, relative to
  the folder; ``\\`` separators when the emulator ran on Windows) and its entity count
  (field 3);
- ``*.export_metadata``: a bare message; field 2 holds the kind (1) and the output file
  names in order (2), relative to the metadata's own folder.

Files are read through ``_Store``: local paths with os, URLs with fsspec.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from leveldb_log import _storage
from leveldb_log._core import Reader

__all__ = ["Layout", "layout"]

OVERALL = ".overall_export_metadata"
PER_KIND = ".export_metadata"


class Layout(NamedTuple):
    """What a path names: the output files in order, and the entities the metadata
    states (None when no metadata says)."""

    files: list[str]
    expected: int | None


class _Store:
    """Reading and listing either local paths or one fsspec file system's."""

    def __init__(self, path: str, storage_options: Mapping[str, Any] | None) -> None:
        self.url = _storage.is_url(path)
        if not self.url and storage_options is not None:
            raise ValueError("storage_options is for a path given as a URL")
        self.fs: Any = _storage.filesystem(path, storage_options)[0] if self.url else None

    def join(self, folder: str, name: str) -> str:
        return posixpath.join(folder, name) if self.url else os.path.join(folder, name)

    def parent(self, path: str) -> str:
        return posixpath.dirname(path.rstrip("/")) if self.url else os.path.dirname(path)

    def isdir(self, path: str) -> bool:
        return bool(self.fs.isdir(path)) if self.url else os.path.isdir(path)

    def names(self, folder: str) -> list[str]:
        if not self.url:
            return sorted(os.listdir(folder))
        found = self.fs.ls(folder, detail=False)
        return sorted(posixpath.basename(p.rstrip("/")) for p in found)

    def read(self, path: str) -> bytes:
        if not self.url:
            with open(path, "rb") as f:
                return f.read()
        return bytes(self.fs.cat_file(path))


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field, value) of a message: varints as int, length-delimited as bytes."""
    i, n = 0, len(data)

    def varint() -> int:
        nonlocal i
        value = shift = 0
        while True:
            if i >= n or shift > 63:
                raise ValueError("truncated or overlong varint")
            b = data[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value

    while i < n:
        tag = varint()
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            yield field, varint()
        elif wire == 2:
            size = varint()
            if i + size > n:
                raise ValueError("a field runs past the end")
            yield field, data[i : i + size]
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unexpected wire type {wire}")


def _message(data: bytes | int, what: str) -> bytes:
    if not isinstance(data, bytes):
        raise ValueError(f"{what} is not a message")
    return data


def _per_kind(store: _Store, path: str) -> list[str]:
    """The output files a per-kind ``*.export_metadata`` lists, as paths."""
    folder = store.parent(path)
    files = []
    try:
        for field, value in _fields(store.read(path)):
            if field == 2:
                for f, v in _fields(_message(value, "the kind's entry")):
                    if f == 2:
                        name = _message(v, "an output file name").decode("utf-8")
                        files.append(store.join(folder, name))
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not an export_metadata file ({e})") from None
    return files


def _overall(store: _Store, path: str) -> Layout:
    """The output files of every per-kind metadata an overall metadata lists."""
    source: Any = path
    if store.url:
        source = store.read(path)
    with Reader(source, recovery="absolute") as reader:
        records = list(reader)
    if not records:
        raise ValueError(f"{path}: an overall_export_metadata log holds a version record")
    names, expected = [], 0
    try:
        for field, entry in _fields(records[1] if len(records) > 1 else b""):
            if field != 1:
                continue
            for f, v in _fields(_message(entry, "an entry")):
                if f == 2:
                    names.append(_message(v, "a metadata path").decode("utf-8"))
                elif f == 3 and isinstance(v, int):
                    expected += v
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not an overall_export_metadata log ({e})") from None
    folder, files = store.parent(path), []
    for name in names:  # "\\" when the emulator ran on Windows
        files += _per_kind(store, _joined(store, folder, name.replace("\\", "/")))
    return Layout(files, expected)


def _joined(store: _Store, folder: str, relative: str) -> str:
    path = folder
    for part in relative.split("/"):
        path = store.join(path, part)
    return path


def layout(path: str, storage_options: Mapping[str, Any] | None = None) -> Layout:
    """The output files ``path`` names: an export folder (holding one overall metadata), an
    overall or per-kind metadata file, or one output file."""
    store = _Store(path, storage_options)
    if store.isdir(path):
        found = [n for n in store.names(path) if n.endswith(OVERALL) and not n.startswith("._")]
        if len(found) != 1:
            what = "no" if not found else f"{len(found)}"
            raise ValueError(
                f"{path}: {what} *{OVERALL} file found; give the metadata file, a "
                f"*{PER_KIND} file or an output-N file instead"
            )
        return _overall(store, store.join(path, found[0]))
    if path.endswith(OVERALL):
        return _overall(store, path)
    if path.endswith(PER_KIND):
        return Layout(_per_kind(store, path), None)
    return Layout([path], None)
