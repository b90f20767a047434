"""The files that paths name, listed as the engine that asks lists them; no log byte read.

Each engine's own file sources give a folder its own meaning, and a user's habits follow
them, so the caller names its convention:

- ``"spark"`` (Spark's ``InMemoryFileIndex`` and partition discovery): a folder stands for
  the files directly in it, or, when folders under it are named ``key=value``, for the
  files in those (the key a partition column, the value its value); a file elsewhere is
  left out. ``recursive`` (``recursiveFileLookup``) takes every file under the folder and
  finds no partition. Names starting with ``.``, or with ``_`` and holding no ``=``, are
  hidden, as are ``_temporary`` folders.
- ``"ray"`` (Ray Data's file readers): a folder stands for every file under it, but those
  whose path below it starts with ``.`` or ``_``; partition values are for the caller to
  parse (Ray's own ``Partitioning``).
- ``"dask"`` (``fsspec.core.get_fs_token_paths``, as ``dask.bag.read_text`` lists): globs
  and paths as fsspec expands them.

In every convention a folder holding ``CURRENT`` is a LevelDB, RocksDB or Pebble database:
it stands for its write-ahead logs only (leveldb_log._database), with its MANIFEST on
request, and nothing else of it is listed.
"""

from __future__ import annotations

import errno
import functools
import glob
import os
import posixpath
import re
import stat
import sys
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from leveldb_log import _storage
from leveldb_log._database import database_files

__all__ = ["CONVENTIONS", "Entry", "ListOptions", "database_names", "has_extension", "list_files"]

CONVENTIONS = ("spark", "ray", "dask")

_GLOB = frozenset("*?[")


class Entry(NamedTuple):
    """One file to read: its path (as Reader opens it: a plain path, or a URL), size and
    modification time (nanoseconds since the epoch), and the ``key=value`` folders above it
    (within the base path) as (key, value) pairs, value None for Hive's null partition."""

    path: str
    size: int
    mtime_ns: int
    partition: tuple[tuple[str, str | None], ...] = ()


@dataclass(frozen=True)
class ListOptions:
    """How to list: the convention and the options the engines' file sources take."""

    convention: str = "spark"
    storage_options: dict[str, Any] | None = None
    name_glob: str | None = None  # Spark's pathGlobFilter: on file names, as Hadoop globs
    recursive: bool = False  # Spark's recursiveFileLookup
    base_path: str | None = None  # Spark's basePath
    modified_after_ns: int | None = None
    modified_before_ns: int | None = None
    ignore_missing: bool = False
    manifest: bool = False  # a database's MANIFEST too


#: The value Hive (and Spark) writes for a null partition value.
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def list_files(paths: Sequence[str], options: ListOptions) -> list[Entry]:
    """Every file the paths name, in the order given (a folder's files in path order).

    Raises
      FileNotFoundError: a path that names nothing (unless ignore_missing), a glob that
        matches nothing.
      ValueError: an unknown convention; Spark's conflicting partition folders; a basePath
        that is not above a path.
    """
    if options.convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}")
    if options.name_glob is not None:
        hadoop_glob(options.name_glob)  # a malformed one is refused before any listing
    found: list[Entry] = []
    for path in paths:
        tree = _Tree.of(path, options.storage_options)
        if options.convention == "spark":
            found += _spark(tree, path, options)
        elif options.convention == "ray":
            found += _ray(tree, path, options)
        else:
            found += _dask(tree, path, options)
    return [e for e in found if _kept(e, options)]


def _kept(entry: Entry, options: ListOptions) -> bool:
    name = _name(entry.path)
    if options.name_glob is not None and not hadoop_glob(options.name_glob).fullmatch(name):
        return False
    if options.modified_after_ns is not None and entry.mtime_ns <= options.modified_after_ns:
        return False
    return options.modified_before_ns is None or entry.mtime_ns < options.modified_before_ns


@functools.lru_cache(maxsize=16)
def hadoop_glob(pattern: str) -> re.Pattern[str]:
    """A glob as Hadoop's GlobPattern reads it (Spark's pathGlobFilter): ``*``, ``?``,
    ``[...]`` (``[^...]`` or ``[!...]`` negated), ``{a,b}`` alternatives (nested too),
    and ``\\`` taking the next character as it is.

    Raises
      ValueError: a group or a character class left open, a pattern ending in ``\\``, or
        ``\\`` before a letter or a digit (Hadoop hands ``\\z`` on to Java's regular
        expressions, where it means the end of the name: nothing this glob could say).
    """
    out, braces, i = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        i += 1
        if c == "\\":
            if i == len(pattern):
                raise ValueError(f"pathGlobFilter {pattern!r} ends with a lone backslash")
            if pattern[i].isalnum():
                raise ValueError(
                    f"pathGlobFilter {pattern!r}: a backslash escapes punctuation only "
                    f"(Hadoop gives \\{pattern[i]} to Java's regular expressions)"
                )
            out.append(re.escape(pattern[i]))
            i += 1
        elif c == "[":
            end = _class_end(pattern, i)
            body = pattern[i:end]
            if body[:1] in ("^", "!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c in "{}," and (c == "{" or braces):
            braces += {"{": 1, "}": -1, ",": 0}[c]
            out.append({"{": "(?:", "}": ")", ",": "|"}[c])
        else:
            out.append({"*": ".*", "?": "."}.get(c) or re.escape(c))
    if braces:
        raise ValueError(f"pathGlobFilter {pattern!r} leaves a {{ group open")
    return re.compile("".join(out), re.DOTALL)


def _class_end(pattern: str, start: int) -> int:
    """Where the character class opened before start closes (a "]" first in it is one of
    its characters)."""
    end = pattern.find("]", start + 1 if pattern[start : start + 1] in ("^", "!") else start)
    if end < 0:
        raise ValueError(f"pathGlobFilter {pattern!r} leaves a [ class open")
    return end


def has_extension(path: str, extensions: Sequence[str]) -> bool:
    """Whether a file's name ends in one of the extensions (Ray's file_extensions)."""
    return _name(path).lower().endswith(tuple("." + x.lower() for x in extensions))


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


# ---- the file systems ----------------------------------------------------------------------


class _Stat(NamedTuple):
    is_dir: bool
    size: int
    mtime_ns: int


class _Tree:
    """One file system: the local one through os, any other store through fsspec."""

    def __init__(self, fs: Any | None) -> None:
        self.fs = fs  # None: local

    @classmethod
    def of(cls, path: str, storage_options: dict[str, Any] | None) -> _Tree:
        if not _storage.is_url(path) or _storage.local_path(path, storage_options) is not None:
            return cls(None)
        fs, _ = _storage.filesystem(path, storage_options)
        fs.invalidate_cache()  # other processes may have written there since it last looked
        return cls(fs)

    def inner(self, path: str) -> str:
        """The path within the file system (a local URL as its plain path); a relative
        local path made absolute, as the engines' own file sources make it: the tasks that
        read it run in other folders."""
        if not _storage.is_url(path):
            return os.path.abspath(path)
        if self.fs is None:
            return _storage.local_path(path) or path
        return str(self.fs._strip_protocol(path))

    def outer(self, inner: str) -> str:
        """A path within the file system as Reader opens it."""
        return inner if self.fs is None else str(self.fs.unstrip_protocol(inner))

    def stat(self, inner: str) -> _Stat:
        if self.fs is None:
            info = os.stat(inner)
            if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                raise ValueError(f"{inner!r} is not a regular file (a FIFO or a device?)")
            return _Stat(stat.S_ISDIR(info.st_mode), info.st_size, info.st_mtime_ns)
        return _fs_stat(self.fs.info(inner))

    def entries(self, folder: str) -> list[tuple[str, _Stat]]:
        """(name, stat) of a folder's entries, in name order."""
        if self.fs is None:
            with os.scandir(folder) as it:
                found = [(e.name, _entry_stat(e)) for e in it]
        else:
            found = [(_name(i["name"]), _fs_stat(i)) for i in self.fs.ls(folder, detail=True)]
        return sorted((n, s) for n, s in found if s is not None)

    def glob(self, pattern: str) -> list[str]:
        if self.fs is None:  # names starting with "." match too, as with fsspec's glob
            if sys.version_info >= (3, 11):
                return sorted(glob.glob(pattern, include_hidden=True))
            return sorted(glob.glob(pattern))
        return sorted(self.fs.glob(pattern))

    def join(self, folder: str, name: str) -> str:
        if self.fs is None:
            return os.path.join(folder, name)
        return posixpath.join(folder, name)

    def read(self, inner: str) -> bytes:
        if self.fs is None:
            with open(inner, "rb") as f:
                return f.read()
        return bytes(self.fs.cat_file(inner))


def _entry_stat(entry: os.DirEntry[str]) -> _Stat | None:
    """A folder entry's stat (symbolic links followed); None for what is neither a file
    nor a folder, or a link to nothing."""
    try:
        info = entry.stat()
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode):
        return _Stat(stat.S_ISDIR(info.st_mode), info.st_size, info.st_mtime_ns)
    return None


def _fs_stat(info: dict[str, Any]) -> _Stat:
    mtime = info.get("mtime", info.get("LastModified", info.get("created", 0)))
    if hasattr(mtime, "timestamp"):
        mtime = mtime.timestamp()
    return _Stat(info["type"] == "directory", int(info.get("size") or 0), int(float(mtime) * 1e9))


# ---- folders and databases -----------------------------------------------------------------


def _database(tree: _Tree, folder: str, names: list[str], manifest: bool) -> list[str] | None:
    """The names to read in a folder when it is a database, else None."""
    current = None
    if manifest and "CURRENT" in names:
        current = tree.read(tree.join(folder, "CURRENT"))
    return database_files(names, manifest=manifest, current=current)


def database_names(
    path: str, storage_options: dict[str, Any] | None, manifest: bool
) -> list[str] | None:
    """The names of the files to read in the folder a path or URL names, in their order,
    when it is a database; None when it is a folder but no database.

    Raises
      FileNotFoundError: nothing there. NotADirectoryError: a file.
      OSError: the folder or CURRENT cannot be read. ValueError: with manifest, a bad CURRENT.
    """
    tree = _Tree.of(path, storage_options)
    inner = tree.inner(path)
    if not tree.stat(inner).is_dir:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
    names = [name for name, info in tree.entries(inner) if not info.is_dir]
    return _database(tree, inner, names, manifest)


def _walk(
    tree: _Tree, folder: str, hidden: Any, recursive: bool, manifest: bool
) -> Iterator[tuple[str, str, _Stat]]:
    """(folder, file path, stat) of the files in a folder (and under it, when recursive),
    hidden names left out; a database folder gives its logs only, in their order. Otherwise
    in path order: a folder sorts as its name and a "/", as the paths of its files do."""
    entries = sorted(tree.entries(folder), key=lambda e: e[0] + "/" if e[1].is_dir else e[0])
    names = [n for n, _ in entries]
    logs = _database(tree, folder, names, manifest)
    if logs is not None:
        by_name = dict(entries)
        for name in logs:
            yield folder, tree.join(folder, name), by_name[name]
        return
    for name, info in entries:
        if hidden(name):
            continue
        if not info.is_dir:
            yield folder, tree.join(folder, name), info
        elif recursive:
            yield from _walk(tree, tree.join(folder, name), hidden, recursive, manifest)


def _roots(tree: _Tree, path: str, ignore_missing: bool) -> list[tuple[str, _Stat]]:
    """The paths a path or glob names, with their stats."""
    inner = tree.inner(path)
    if _GLOB & set(inner):
        matches = tree.glob(inner)
        if not matches and not ignore_missing:
            raise FileNotFoundError(f"no file matches {path!r}")
        return [(m, tree.stat(m)) for m in matches]
    try:
        return [(inner, tree.stat(inner))]
    except FileNotFoundError:
        if ignore_missing:
            return []
        raise FileNotFoundError(f"no such file or folder: {path!r}") from None


# ---- Spark ---------------------------------------------------------------------------------


def spark_hidden(name: str) -> bool:
    """Spark's file sources leave these names out of a folder (InMemoryFileIndex)."""
    return (
        (name.startswith("_") and "=" not in name)
        or name.startswith(".")
        or name.endswith("._COPYING_")
    )


def _spark(tree: _Tree, path: str, options: ListOptions) -> list[Entry]:
    """Spark's listing of one path (see the module's docstring)."""
    leaves: dict[str, list[tuple[str, _Stat]]] = {}  # folder -> its files
    bases: list[str] = []
    for root, info in _roots(tree, path, options.ignore_missing):
        if not info.is_dir:
            leaves.setdefault(posixpath.dirname(root) or ".", []).append((root, info))
            bases.append(posixpath.dirname(root) or ".")
            continue
        bases.append(root)
        for folder, file, st in _walk(tree, root, spark_hidden, True, options.manifest):
            leaves.setdefault(folder, []).append((file, st))
    if options.recursive:
        return [Entry(tree.outer(f), s.size, s.mtime_ns) for fs in leaves.values() for f, s in fs]
    if options.base_path is not None:
        base = tree.inner(options.base_path).rstrip("/") or "/"
        _check_base(base, bases)
        bases = [base]
    return _spark_partitions(tree, leaves, {b.rstrip("/") or "/" for b in bases})


def _check_base(base: str, roots: list[str]) -> None:
    for root in roots:
        if root != base and not root.startswith(base.rstrip("/") + "/"):
            raise ValueError(f"option basePath {base!r} is not above the path {root!r}")


def _spark_partitions(
    tree: _Tree, leaves: dict[str, list[tuple[str, _Stat]]], bases: set[str]
) -> list[Entry]:
    """Spark's partition discovery: the folders' key=value names up to a base path. Once
    any folder has partition values, only the files of such folders are read."""
    parsed = {folder: _parse_partition(folder, bases) for folder in leaves}
    if not any(values for values, _ in parsed.values()):
        return [
            Entry(tree.outer(f), s.size, s.mtime_ns)
            for folder, files in leaves.items()
            if folder.rstrip("/") in bases or folder in bases
            for f, s in files
        ]
    found_bases = {base for _, base in parsed.values()}
    if len(found_bases) > 1:
        raise ValueError(
            "Conflicting directory structures detected (as Spark says): the folders "
            f"{', '.join(sorted(found_bases))} would each be a table's base; read them "
            "apart, or give the option basePath"
        )
    keys = {tuple(k for k, _ in values) for values, _ in parsed.values() if values}
    if len(keys) > 1:
        raise ValueError(
            "Conflicting partition column names detected (as Spark says): "
            + "; ".join(", ".join(k) for k in sorted(keys))
        )
    return [
        Entry(tree.outer(f), s.size, s.mtime_ns, parsed[folder][0])
        for folder, files in leaves.items()
        if parsed[folder][0]
        for f, s in files
    ]


def _parse_partition(
    folder: str, bases: set[str]
) -> tuple[tuple[tuple[str, str | None], ...], str]:
    """Spark's parsePartition: walking up from a folder to a base path, the key=value
    names, until the first name that is none once one was found. Returns the values (top
    first) and the folder where the walk stopped (the table's base)."""
    columns: list[tuple[str, str | None]] = []
    current = folder.rstrip("/") or "/"
    while current not in bases:
        name = posixpath.basename(current)
        if name.lower() == "_temporary":
            return (), folder
        column = _column(name)
        if column is not None:
            columns.append(column)
        parent = posixpath.dirname(current)
        if (column is None and columns) or parent == current or not parent:
            break
        current = parent
    if not columns:
        return (), folder
    return tuple(reversed(columns)), current


def _column(name: str) -> tuple[str, str | None] | None:
    """(key, value) of a folder named key=value (escaped as Hive escapes), else None."""
    key, sep, value = name.partition("=")
    if not sep or not key:
        return None
    raw = urllib.parse.unquote(value)
    return urllib.parse.unquote(key), None if raw == HIVE_NULL else raw


# ---- Ray and Dask --------------------------------------------------------------------------


def ray_hidden(relative: str) -> bool:
    """Ray's file readers leave out a folder's files whose path below it starts with
    these (ray.data's _expand_directory)."""
    return relative.startswith((".", "_"))


def _ray(tree: _Tree, path: str, options: ListOptions) -> list[Entry]:
    found = []
    for root, info in _roots(tree, path, options.ignore_missing):
        if not info.is_dir:
            found.append(Entry(tree.outer(root), info.size, info.mtime_ns))
            continue
        prefix = root.rstrip("/") + "/"
        files = _walk(tree, root, lambda name: False, True, options.manifest)
        found += [
            Entry(tree.outer(f), s.size, s.mtime_ns)
            for _, f, s in files
            if not ray_hidden(f[len(prefix) :])
        ]
    return found


def _dask(tree: _Tree, path: str, options: ListOptions) -> list[Entry]:
    """fsspec's expansion (get_fs_token_paths, as dask.bag.read_text lists): a glob's
    files, a file; a database folder's logs."""
    found = []
    for root, info in _roots(tree, path, options.ignore_missing):
        if not info.is_dir:
            found.append(Entry(tree.outer(root), info.size, info.mtime_ns))
            continue
        names = [n for n, _ in tree.entries(root)]
        if _database(tree, root, names, options.manifest) is None:
            if _GLOB & set(tree.inner(path)):
                continue  # fsspec's glob leaves folders out
            raise IsADirectoryError(f"{path!r} is a folder (name its files, or a glob)")
        found += [
            Entry(tree.outer(f), s.size, s.mtime_ns)
            for _, f, s in _walk(tree, root, lambda name: False, False, options.manifest)
        ]
    return found
