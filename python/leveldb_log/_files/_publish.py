"""Publishing written logs: each is written under a hidden staging name, and renamed into
its final name only when the whole job commits; the folder is then synced, and an abort
removes what was staged. Readers of the folder skip hidden names, so nothing a failed or
aborted write leaves is ever read.

Local folders use os (renames are atomic); any other store goes through fsspec, whose
"rename" may be a copy. The Spark writer and Ray's sink both publish here.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from leveldb_log import _storage
from leveldb_log._core import Writer

__all__ = ["Folder", "sync_folder", "write_partitioned", "write_staged"]


def sync_folder(path: str) -> None:
    """Make a local folder's entries (names made, renamed or removed in it) durable: the one
    folder sync of the package (the CLI's writes, the engines' commits).

    A folder that may be written but not opened (no read permission), and a file system
    that refuses fsync on a folder, have nothing more to give: no error. Any other failure
    of the sync is raised, since what was renamed may not last."""
    try:
        fd = os.open(path or ".", os.O_RDONLY)
    except PermissionError:
        return
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
    finally:
        os.close(fd)


class Folder:
    """An output folder: a local path, or a URL with its storage options."""

    def __init__(self, location: str, storage_options: dict[str, Any] | None = None) -> None:
        self.location = location
        self.storage_options = storage_options
        self.fs: Any | None = None  # None: the local file system, through os
        self.root = location
        if _storage.is_url(location):
            fs, inner = _storage.filesystem(location, storage_options)
            if _storage.is_local(fs):
                self.root = inner
            else:
                fs.invalidate_cache()  # tasks wrote from other processes: list afresh
                self.fs, self.root = fs, inner
        self.root = self.root.rstrip("/") or "/"

    @property
    def local(self) -> bool:
        return self.fs is None

    def path(self, *names: str) -> str:
        """A path inside the folder (inner: as its file system names it)."""
        return self.join(self.root, *names)

    def join(self, inner: str, *names: str) -> str:
        """A path below the inner path ``inner``."""
        return posixpath.join(inner, *names) if self.fs else os.path.join(inner, *names)

    def target(self, inner: str) -> str:
        """A path inside the folder as Writer and Reader open it."""
        return inner if self.fs is None else str(self.fs.unstrip_protocol(inner))

    def writer_options(self) -> dict[str, Any]:
        return {} if self.fs is None else {"storage_options": self.storage_options}

    def exists(self, inner: str) -> bool:
        return os.path.lexists(inner) if self.fs is None else bool(self.fs.exists(inner))

    def makedirs(self, inner: str) -> None:
        if self.fs is None:
            os.makedirs(inner, exist_ok=True)
        else:
            self.fs.makedirs(inner, exist_ok=True)

    def remove(self, inner: str) -> None:
        """Remove a file or a folder (and what it holds), if it is there."""
        if self.fs is not None:
            if self.fs.exists(inner):
                self.fs.rm(inner, recursive=True)
        elif os.path.isdir(inner) and not os.path.islink(inner):
            import shutil

            shutil.rmtree(inner, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(inner)

    def remove_if_empty(self, inner: str) -> None:
        if self.fs is None:
            with contextlib.suppress(OSError):
                os.rmdir(inner)
        elif self.fs.exists(inner) and not self.fs.ls(inner, detail=False):
            self.fs.rmdir(inner)

    def visible_files(self, hidden: Callable[[str], bool]) -> list[str]:
        """The names of the files directly in the folder that readers see, in name order
        (folders are not listed)."""
        if not self.exists(self.root):
            return []
        if self.fs is None:
            with os.scandir(self.root) as entries:
                names = [e.name for e in entries if not e.is_dir()]
        else:
            infos = self.fs.ls(self.root, detail=True)
            names = [
                i["name"].rstrip("/").rsplit("/", 1)[-1] for i in infos if i["type"] != "directory"
            ]
        return sorted(n for n in names if not hidden(n))

    def visible_tree(self, hidden: Callable[[str], bool]) -> list[str]:
        """The files readers see anywhere below the folder, as relative paths with ``/``,
        in name order; hidden names (files or folders) and what they hold are left out."""
        if not self.exists(self.root):
            return []
        if self.fs is None:
            found = []
            for top, folders, files in os.walk(self.root):
                folders[:] = [f for f in folders if not hidden(f)]
                relative = os.path.relpath(top, self.root).replace(os.sep, "/")
                prefix = "" if relative == "." else relative + "/"
                found += [prefix + f for f in files if not hidden(f)]
            return sorted(found)
        names = (str(p)[len(self.root) :].lstrip("/") for p in self.fs.find(self.root))
        return sorted(n for n in names if not any(map(hidden, n.split("/"))))

    def _prune(self, relative: str) -> None:
        """Remove the emptied folders of a removed file, up to the folder (not included)."""
        parts = relative.split("/")[:-1]
        while parts:
            self.remove_if_empty(self.path(*parts))
            parts.pop()

    def _move(self, staged: str, final: str) -> None:
        if self.fs is None:
            os.replace(staged, final)
        else:
            self.fs.mv(staged, final)

    def publish(
        self,
        moves: Sequence[tuple[str, str]],
        *,
        replace: bool,
        sync: bool,
        hidden: Callable[[str], bool],
        tree: bool = False,
    ) -> list[str]:
        """Rename each staged log (an inner path) to its final name (relative to the
        folder, perhaps with key=value folders); return the final paths as Reader opens
        them. ``replace``: the files readers saw in the folder before are removed (its
        folders are left; with ``tree``, the files readers see in its folders too, and
        the folders that leaves empty), after the new logs are in place (a crash in
        between leaves both, never neither); otherwise
        a final name that exists is refused before anything moves. A failed rename takes
        back those made."""
        earlier: list[str] = []
        if replace:
            earlier = self.visible_tree(hidden) if tree else self.visible_files(hidden)
        if not replace:
            self.check_free(final for _, final in moves)
        placed: list[str] = []
        try:
            for staged, final in moves:
                path = self.path(final)
                self.makedirs(posixpath.dirname(path) if self.fs else os.path.dirname(path))
                self._move(staged, path)
                placed.append(path)
            if sync and self.fs is None and placed:
                for folder in sorted({os.path.dirname(p) for p in placed}):
                    sync_folder(folder)
        except BaseException:
            for path in placed:
                self.remove(path)
            raise
        kept = {final if tree else final.split("/", 1)[0] for _, final in moves}
        for name in earlier:
            if name not in kept:
                self.remove(self.path(*name.split("/")))
                self._prune(name)
        return [self.target(p) for p in placed]

    def check_free(self, finals: Iterable[str]) -> None:
        """Refuse, before anything is renamed, final names that exist already."""
        taken = [final for final in finals if self.exists(self.path(final))]
        if taken:
            raise FileExistsError(f"{self.location}: logs already there: {', '.join(taken)}")


def write_staged(
    folder: Folder,
    staged: str,
    columns: Iterable[Any],
    open_log: Callable[[str, Literal["x"]], Writer],
    *,
    sync: bool,
    column: str,
) -> int:
    """Write the records of every Arrow column (binary or string) to a new log at the
    inner path ``staged``; return how many. No records: no file. On any error the file
    is removed and the error raised; a null names the column and its row in the task."""
    writer = None
    records = 0
    try:
        for values in columns:
            if len(values) == 0:
                continue
            if writer is None:
                writer = open_log(folder.target(staged), "x")  # a staged name is new
            records += _write_column(writer, values, column, records)
        if writer is not None:
            if sync and folder.local:
                writer.sync()
            writer.close()
    except BaseException:
        if writer is not None:
            with contextlib.suppress(Exception):  # the first error is the one to raise
                writer.close()
            folder.remove(staged)
        raise
    return records


def write_partitioned(
    folder: Folder,
    staging: str,
    pieces: Iterable[tuple[str, Any]],
    name: str,
    open_log: Callable[[str, Literal["x"]], Writer],
    *,
    sync: bool,
    column: str,
) -> list[tuple[str, str, int]]:
    """Write each (relative key=value folder, Arrow column of records) piece to the log
    ``name`` of its folder under the inner path ``staging`` (one log a folder, open until
    the pieces end); return (staged log, relative folder, records) for each. A folder
    without records has no log. On any error every log is removed and the error raised."""
    logs: dict[str, tuple[Writer, str]] = {}
    counts: dict[str, int] = {}
    try:
        for relative, values in pieces:
            if len(values) == 0:
                continue
            if relative not in logs:
                staged = folder.join(staging, *relative.split("/"), name)
                _make_below(folder, staging, relative.split("/"))
                logs[relative] = (open_log(folder.target(staged), "x"), staged)
                counts[relative] = 0
            writer = logs[relative][0]
            counts[relative] += _write_column(writer, values, column, counts[relative])
        for writer, _ in logs.values():
            if sync and folder.local:
                writer.sync()
            writer.close()
    except BaseException:
        for writer, staged in logs.values():
            with contextlib.suppress(Exception):  # the first error is the one to raise
                writer.close()
            folder.remove(staged)
        raise
    return [(staged, relative, counts[relative]) for relative, (_, staged) in logs.items()]


def _make_below(folder: Folder, top: str, names: list[str]) -> None:
    """Make the folders ``names`` below the inner path ``top``, which must exist: a task
    that runs on after its job was aborted (its staging deleted) fails, rather than
    staging logs again where no abort will delete them."""
    if not folder.local:
        folder.makedirs(folder.join(top, *names))
        return
    path = top
    for name in names:
        path = os.path.join(path, name)
        with contextlib.suppress(FileExistsError):
            os.mkdir(path)


def _write_column(writer: Writer, values: Any, column: str, before: int) -> int:
    """Write one Arrow column's values; a null is refused naming the column and its row."""
    if values.null_count:
        import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]

        row = before + int(pc.index(pc.is_null(values), True).as_py())
        raise ValueError(
            f"column {column!r} has a null at row {row} of the partition: fill or drop "
            "nulls first (df.na.drop(subset=[...]), or coalesce it with a value)"
        )
    return writer.write_many(values)
