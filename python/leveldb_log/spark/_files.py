"""The files a read names: paths, globs, folders and fsspec URLs, with their sizes, listed
without reading a byte of any log.

A folder stands for the files directly in it, in name order, except those whose names
begin with ``_`` or ``.`` (as Spark's file sources skip them: a writer's files in progress,
checksums, markers). A glob stands for what it matches, in name order, a matched folder for
its files. A file named outright is read whatever its name.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from collections.abc import Sequence
from typing import Any

from leveldb_log import _storage

__all__ = ["expand", "is_url"]

is_url = _storage.is_url

_GLOB = frozenset("*?[")


def expand(
    paths: Sequence[str], storage_options: dict[str, Any] | None, name_glob: str | None
) -> list[tuple[str, int]]:
    """(file, size) for every file the paths name, in the order they are given.

    Arguments
      paths: paths, globs, folders or URLs (``scheme://...``, opened with fsspec).
      storage_options: fsspec's options for the URLs, or None.
      name_glob: when given, only the files whose names match it (Spark's
        ``pathGlobFilter``).

    Raises
      FileNotFoundError: a path that names nothing, or a glob that matches nothing (a
        folder without files is no error: it has none to read).
    """
    found: list[tuple[str, int]] = []
    for path in paths:
        local = _local(path, storage_options)
        found += _expand_local(local) if local is not None else _expand_url(path, storage_options)
    if name_glob is not None:
        found = [(p, n) for p, n in found if fnmatch.fnmatchcase(_name(p), name_glob)]
    return found


def _local(path: str, storage_options: dict[str, Any] | None) -> str | None:
    """The plain path of a local path or a URL of the local file system, else None."""
    if not is_url(path):
        return path
    return _storage.local_path(path, storage_options)


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def _expand_local(path: str) -> list[tuple[str, int]]:
    if _GLOB & set(path):
        found = []
        matches = sorted(glob.glob(path))
        if not matches:
            raise FileNotFoundError(f"no file matches {path!r}")
        for match in matches:
            found += _folder(match) if os.path.isdir(match) else [(match, _size(match))]
        return found
    if os.path.isdir(path):
        return _folder(path)
    return [(path, _size(path))]


def _size(path: str) -> int:
    """A regular file's size (a FIFO or device cannot be cut into ranges)."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path!r} is not a regular file (a FIFO or a device?)")
    return info.st_size


def _folder(path: str) -> list[tuple[str, int]]:
    """The regular files directly in a folder, in name order, hidden ones left out."""
    with os.scandir(path) as entries:
        files = [
            (e.path, e.stat().st_size)
            for e in entries
            if not _hidden(e.name) and e.is_file(follow_symlinks=True)
        ]
    return sorted(files)


def _expand_url(url: str, storage_options: dict[str, Any] | None) -> list[tuple[str, int]]:
    fs, root = _storage.filesystem(url, storage_options)
    if _GLOB & set(root):
        infos = sorted(fs.glob(root, detail=True).values(), key=lambda i: i["name"])
        if not infos:
            raise FileNotFoundError(f"no file matches {url!r}")
    else:
        infos = [fs.info(root)]
    found = []
    for info in infos:
        if info["type"] == "directory":
            listing = sorted(fs.ls(info["name"], detail=True), key=lambda i: i["name"])
            found += [
                (fs.unstrip_protocol(i["name"]), int(i["size"]))
                for i in listing
                if i["type"] == "file" and not _hidden(_name(i["name"]))
            ]
        else:
            found.append((fs.unstrip_protocol(info["name"]), int(info["size"])))
    return found
