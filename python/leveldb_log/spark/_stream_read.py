"""Streaming reads of ``format("leveldb_log")``: the driver follows the logs of a folder (or
files, globs) as they grow and new ones appear; each micro-batch reads the bytes appended
since the last one, as byte ranges of the files, on the executors.

An offset is, for each file, a position such that every record whose first header lies
before it has been read, with what identifies the file (device, inode, a checksum of its
first bytes), its dialect, and its size, modification time and end when last looked at (a
file unchanged since is not read again). The driver finds a file's new end from its last
blocks alone (``_core._tail_end``: the end of the last complete record), so a record still
being written (a torn tail at the live end) waits for the next trigger and no byte of the
new range is read on the driver. Files are taken in name order (a WAL's number), and
``maxBytesPerTrigger`` admits their new bytes in that order. A file that shrinks below its
committed position, or is replaced by another file of the same name, fails the query unless
``onTruncate`` / ``onReplace`` say otherwise. Every micro-batch reads the ranges its offsets
name, whatever the run: a query killed and restarted from its checkpoint reads each record
exactly once (docs/spark.md, "Streaming").
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    SupportsTriggerAvailableNow,
)

from leveldb_log import _storage
from leveldb_log._core import _tail_end, crc32c
from leveldb_log._errors import LogError
from leveldb_log._files._listing import list_files
from leveldb_log._files._plan import Range, pack
from leveldb_log._files._read import check, resolve_dialect
from leveldb_log.spark import _options
from leveldb_log.spark._read import listing, schema_for, shaped_task

__all__ = ["LogStreamReader", "StreamOptions", "StreamPartition", "stream_options"]

log = logging.getLogger("leveldb_log.spark")

#: What a file that shrank below its committed position, or was replaced, makes the stream
#: do: fail the query (the default), read the file again from its start, or go on from its
#: current end without reading what it holds now. The last two log a warning.
POLICIES = ("error", "restart", "skip")

#: How many of a file's first bytes its checksum covers (fewer while the file is shorter).
HEAD_BYTES = 4096


@dataclass(frozen=True)
class StreamOptions:
    """The options only a streaming read takes."""

    max_bytes: int | None  # maxBytesPerTrigger
    on_truncate: str
    on_replace: str
    starting: str  # startingPosition: earliest or latest


def stream_options(options: Mapping[str, str]) -> StreamOptions:
    """``maxBytesPerTrigger``, ``onTruncate``, ``onReplace`` and ``startingPosition``."""
    return StreamOptions(
        max_bytes=_options.whole(options, "maxBytesPerTrigger", None, 1),
        on_truncate=_options.choice(options, "onTruncate", POLICIES, "error") or "error",
        on_replace=_options.choice(options, "onReplace", POLICIES, "error") or "error",
        starting=_options.choice(options, "startingPosition", ("earliest", "latest"), "earliest")
        or "earliest",
    )


class StreamPartition(InputPartition):
    """The ranges one task reads: (range, dialect) pairs, in file and offset order."""

    def __init__(self, pieces: Sequence[tuple[Range, str]]) -> None:
        super().__init__(tuple(pieces))
        self.pieces = tuple(pieces)


class LogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Plans and reads ``spark.readStream.format("leveldb_log")``."""

    def __init__(self, options: Mapping[str, str], schema: Any) -> None:
        self.read_options = _options.read_spec(options)
        self.layout = _options.layout(options)
        self.stream = stream_options(options)
        self.paths = _options.paths(options)
        self.listing = _options.list_options(options, None)
        self.columns = listing(options, self.read_options, missing_ok=True)[1]
        self.schema = schema_for(options, self.columns, schema)
        self.partition_of: dict[str, Any] = {}  # each file's key=value pairs, as listed
        if self.read_options.recovery == "point_in_time":
            raise ValueError(
                "recovery point_in_time ends a log at its first damage, which a stream "
                "following the log cannot do: use skip (mode PERMISSIVE), tolerate_tail "
                "or absolute (mode FAILFAST)"
            )
        check(self.read_options)
        self.local = [self._local(path) for path in self.paths]
        self.target: dict[str, int] | None = None  # Trigger.AvailableNow's end
        self.warned: set[tuple[str, int]] = set()

    # ---- offsets -------------------------------------------------------------------------

    def initialOffset(self) -> dict[str, Any]:
        """Nothing read yet (``startingPosition=earliest``, the default), or every file
        present at its current end (``latest``)."""
        if self.stream.starting == "earliest":
            return {"files": {}}
        files = {}
        listing = self._listing()
        for path in listing:
            entry = self._observe(path, None, listing)
            if entry is not None:
                files[path] = entry
        return {"files": files}

    def getDefaultReadLimit(self) -> ReadLimit:
        """``maxBytesPerTrigger`` as Spark's ReadMaxBytes, else everything available."""
        if self.stream.max_bytes is None:
            return ReadAllAvailable()
        return ReadMaxBytes(self.stream.max_bytes)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        """Each file's end (its last complete record's), within the limit and, under
        Trigger.AvailableNow, the target; files in name order."""
        budget = limit.max_bytes if isinstance(limit, ReadMaxBytes) else None
        before = start.get("files", {})
        files: dict[str, Any] = {}
        listing = self._listing()
        for path in listing:
            if self.target is not None and path not in self.target:
                continue
            entry = self._observe(path, before.get(path), listing)
            if entry is None:
                continue
            since = _since(before.get(path), entry)
            end = entry["pos"]
            if self.target is not None:
                end = max(since, min(end, self.target[path]))
            if budget is not None:
                end = since + min(end - since, budget)
                budget -= end - since
            files[path] = {**entry, "pos": end}
        for path in before.keys() - files.keys():
            if self.target is None or path in self.target:
                log.info("leveldb_log stream: %s is gone; no longer followed", path)
        return {"files": files}

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow: the ends of the files present now are the query's end."""
        self.target = {}
        listing = self._listing()
        for path in listing:
            entry = self._observe(path, None, listing)
            if entry is not None:
                self.target[path] = entry["pos"]

    # ---- planning and reading ------------------------------------------------------------

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[StreamPartition]:
        """The ranges [start, end) of every file with new records, cut at
        ``maxPartitionBytes`` and packed like a batch read's small files."""
        before = start.get("files", {})
        pieces: list[Range] = []
        dialects = {}
        for path, entry in sorted(end.get("files", {}).items()):
            since, until = _since(before.get(path), entry), entry["pos"]
            step = self.layout.partition_bytes
            values = self.partition_of.get(path, ())
            pieces += [
                Range(path, at, min(at + step, until), values) for at in range(since, until, step)
            ]
            dialects[path] = entry.get("dialect")
        groups = pack(pieces, self.layout.partition_bytes, self.layout.open_cost)
        return [StreamPartition([(p, dialects[p.path]) for p in group]) for group in groups]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        """Each range's rows as pyarrow RecordBatches, as a batch read shapes them (options,
        damage, modes)."""
        assert isinstance(partition, StreamPartition)  # what partitions() gave
        dialects = {piece.path: dialect for piece, dialect in partition.pieces}
        pieces = [piece for piece, _ in partition.pieces]
        yield from shaped_task(pieces, self.read_options, self.columns, self.schema, dialects)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to release: the logs are the writers'."""

    # ---- the files -----------------------------------------------------------------------

    def _local(self, path: str) -> str:
        """The plain path of a path or a ``file://`` URL; a stream reads the last blocks
        and the inodes of local files only."""
        if not _storage.is_url(path):
            return path
        local = _storage.local_path(path, self.read_options.storage_options)
        if local is None:
            raise ValueError(
                f"a stream follows local files only (it reads their last blocks and inodes), "
                f"not {path!r}"
            )
        return local

    def _listing(self) -> list[str]:
        """The files the paths name now, in name order per path; an empty folder is no
        error (a stream may start before the first log)."""
        found: list[str] = []
        for local in self.local:
            try:
                listed = list_files([local], self.listing)
            except FileNotFoundError:
                if not os.path.isdir(local):
                    raise
                listed = []
            found += [e.path for e in listed if e.path not in found]
            self.partition_of.update((e.path, e.partition) for e in listed)
        return found

    def _observe(
        self, path: str, before: dict[str, Any] | None, listing: list[str]
    ) -> dict[str, Any] | None:
        """The file's entry now: its end, identity and dialect, after checking it against
        its committed entry (``before``). None when it is gone. ``listing``: every file
        followed, in name order."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except FileNotFoundError:
            return None
        try:
            info = os.fstat(fd)
            if before is not None and _unchanged(info, before):
                return {**before, "pos": before["end"]}  # nothing read: an idle log
            entry: dict[str, Any] = dict(before) if before else {"pos": 0, "gen": 0, "base": 0}
            event = _change(fd, info, before)
            if event is not None:
                entry = self._act(path, event, info.st_size, entry)
            dialect: Any = entry.get("dialect") or resolve_dialect(self.read_options, path)
            end = _tail_end(
                fd,
                info.st_size,
                dialect,
                self.read_options.log_number,
                path,
                self.read_options.verify_checksums,
            )
            if entry.get("skip_to_end"):
                del entry["skip_to_end"]
                entry["base"] = end
            if end > 0:
                entry["dialect"] = dialect
            entry["pos"] = max(end, entry["pos"] if event is None else entry["base"])
            head = min(entry["pos"], HEAD_BYTES)
            entry.update(dev=info.st_dev, ino=info.st_ino, head=_crc(fd, head), headSize=head)
            entry.update(size=info.st_size, mtime=info.st_mtime_ns, end=entry["pos"])
            if end == 0 and info.st_size > 0:
                self._warn_not_log(path, info.st_size)
            elif end < info.st_size and listing[-1] != path:
                self._warn_torn(path, end, info.st_size)
            return entry
        finally:
            os.close(fd)

    def _act(self, path: str, event: str, size: int, entry: dict[str, Any]) -> dict[str, Any]:
        """What onTruncate / onReplace say to do with a file that shrank or was replaced:
        raise, or start a new generation of its entry (from its start, or its end)."""
        policy = self.stream.on_truncate if event == "truncated" else self.stream.on_replace
        option = "onTruncate" if event == "truncated" else "onReplace"
        what = (
            f"{path} was {event}: {size} bytes now, {entry['pos']} of which the stream had read"
            if event == "truncated"
            else f"{path} was replaced by another file (its inode or its first bytes changed) "
            f"after the stream had read {entry['pos']} bytes of it"
        )
        if policy == "error":
            raise LogError(
                f"leveldb_log stream: {what}. Set {option}=restart to read it again from its "
                f"start, or {option}=skip to go on from its current end"
            )
        log.warning(
            "leveldb_log stream: %s; %s=%s: %s",
            what,
            option,
            policy,
            "reading it again from its start" if policy == "restart" else "going on from its end",
        )
        fresh = {"pos": 0, "gen": entry["gen"] + 1, "base": 0}
        if policy == "skip":
            fresh["skip_to_end"] = True
        return fresh

    def _warn_not_log(self, path: str, size: int) -> None:
        """Say once of a file that holds bytes but no complete record: not a log (a
        stream reads nothing of it until a record appears)."""
        if (path, -1) not in self.warned:
            self.warned.add((path, -1))
            log.warning(
                "leveldb_log stream: %s holds %d bytes and no complete record: not a log? "
                "Nothing of it is read (name the logs with pathGlobFilter to leave it out)",
                path,
                size,
            )

    def _warn_torn(self, path: str, end: int, size: int) -> None:
        """Say once when a file that is not the newest ends in bytes after its last
        complete record: a writer's torn tail it may never finish, not read meanwhile."""
        if (path, size) not in self.warned:
            self.warned.add((path, size))
            log.warning(
                "leveldb_log stream: %s ends in %d bytes after its last complete record, "
                "and newer files exist: a torn tail, not read until it is completed",
                path,
                size - end,
            )


def _since(before: dict[str, Any] | None, entry: dict[str, Any]) -> int:
    """Where a micro-batch reads a file from: its committed position, or where a new
    generation of it begins (a new file: 0)."""
    if before is not None and before["gen"] == entry["gen"]:
        return int(before["pos"])
    return int(entry["base"])


def _crc(fd: int, n: int) -> int:
    return crc32c(os.pread(fd, n, 0)) if n > 0 else 0


def _unchanged(info: os.stat_result, before: dict[str, Any]) -> bool:
    """Whether the file is the one of ``before``, of the same size and modification time:
    then its end is the one found then, and no byte of it need be read again."""
    seen = (before.get(k) for k in ("dev", "ino", "size", "mtime"))
    return tuple(seen) == (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _change(fd: int, info: os.stat_result, before: dict[str, Any] | None) -> str | None:
    """ "replaced", "truncated" or None: what happened to the file since ``before``."""
    if before is None:
        return None
    if (info.st_dev, info.st_ino) != (before["dev"], before["ino"]):
        return "replaced"
    if info.st_size < before["pos"]:
        return "truncated"
    if _crc(fd, before["headSize"]) != before["head"]:
        return "replaced"
    return None
