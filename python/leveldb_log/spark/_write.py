"""``df.write.format("leveldb_log")``: one log per task, made visible by the job's commit.

Spark's commit protocol, on a file system: each task writes its log under a hidden staging
folder of the output folder (``.leveldb_log-staging-<job>``), named by its partition and its
task attempt, so that retried and speculative attempts never share a file; the driver's
``commit`` renames each log the tasks reported into its final name; ``abort`` deletes the
staging folder. Names that begin with ``.`` or ``_`` are hidden: readers of the folder (and
Spark's own file sources) skip them, so nothing a failed or aborted attempt leaves is read.

With the option ``partitionColumns``, each task splits its rows by those columns' values
(leveldb_log._files._layout) and stages one log per ``key=value`` folder, under the same
folders in the staging folder; the commit publishes the whole tree at once.

This module owns the staging names and the publishing of logs; the streaming writer
(_stream_write) uses the same pieces.
"""

from __future__ import annotations

import os
import re
import shutil
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import BinaryType, StringType, StructType

from leveldb_log._core import Writer
from leveldb_log._dialects import DIALECTS
from leveldb_log._files import _layout, _publish
from leveldb_log._files._listing import spark_hidden
from leveldb_log.spark._options import choice, flag, text, whole

#: The prefix of every hidden name this package writes into an output folder.
HIDDEN_PREFIX = ".leveldb_log-"

#: The file naming schemes: ``part`` (Spark's way: unique per job, so appends never collide)
#: and ``number`` (a WAL's ``NNNNNN.log``, numbered on from the folder's highest number).
NAMINGS = ("part", "number")

_NUMBERED = re.compile(r"^(\d+)\.log$")


@dataclass(frozen=True)
class WriteOptions:
    """The options of a write, parsed on the driver."""

    folder: str
    column: str
    dialect: str
    compression: str | None
    sync: bool
    naming: str
    log_number: int
    partitions: tuple[str, ...] = ()


def write_options(options: Mapping[str, str], schema: StructType) -> WriteOptions:
    """Parse the writing options: ``path`` (given to ``save()``), ``column``, ``dialect``,
    ``compression``, ``sync``, ``naming``, ``logNumber`` and ``partitionColumns``."""
    folder = output_folder(options)
    partitions = partition_columns(options, schema)
    dialect = choice(options, "dialect", DIALECTS, "leveldb") or "leveldb"
    compression = choice(options, "compression", ("none", "zstd"), "none")
    if compression == "zstd" and dialect != "rocksdb":
        raise ValueError(f"option compression=zstd needs dialect=rocksdb, not {dialect}")
    naming = choice(options, "naming", NAMINGS, "part") or "part"
    column = data_column(options, schema, partitions)
    check_partition_kinds(schema, partitions)
    first = whole(options, "logNumber", None, minimum=1)
    return WriteOptions(
        folder=folder,
        column=column,
        dialect=dialect,
        compression=None if compression == "none" else compression,
        sync=flag(options, "sync", False),
        naming=naming,
        log_number=first if first is not None else highest_number(folder, partitions) + 1,
        partitions=partitions,
    )


def partition_columns(options: Mapping[str, str], schema: StructType) -> tuple[str, ...]:
    """The columns of ``partitionColumns`` (names parted by commas, matched without case as
    Spark matches them): each must be in the DataFrame, once."""
    given = text(options, "partitionColumns")
    if given is None:
        return ()
    names = schema.fieldNames()
    found = []
    for name in (n.strip() for n in given.split(",")):
        same = [n for n in names if n.lower() == name.lower()]
        found.append(same[0] if name not in names and len(same) == 1 else name)
    if not all(found):
        raise ValueError(f"option partitionColumns={given!r} names an empty column")
    _layout.check_columns(found, names, record="")
    return tuple(found)


def check_partition_kinds(schema: StructType, partitions: tuple[str, ...]) -> None:
    """Refuse partition columns whose values do not read back from their text."""
    from pyspark.sql.pandas.types import to_arrow_type

    for name in partitions:
        _layout.check_kind(name, to_arrow_type(schema[name].dataType))


def output_folder(options: Mapping[str, str]) -> str:
    """The folder given to ``save()``: a local path, or a ``file:`` URL (``file:///x`` or
    Hadoop's ``file:/x``). Other stores have no rename, which the commit protocol needs."""
    path = text(options, "path")
    if not path:
        raise ValueError("no path: pass the output folder to save()")
    if path.startswith("file:"):
        return urllib.parse.unquote(urllib.parse.urlsplit(path).path)
    if "://" in path:
        raise ValueError(
            f"leveldb_log writes to a folder of a local or shared file system (it renames "
            f"logs on commit), not to {path!r}"
        )
    return path


def data_column(
    options: Mapping[str, str], schema: StructType, partitions: tuple[str, ...] = ()
) -> str:
    """The column whose values become records: ``column``, else ``data``, else the only
    column besides the partition columns. It must be binary or string (written as UTF-8),
    and not a partition column."""
    names = schema.fieldNames()
    name = text(options, "column")
    if name is None:
        rest = [n for n in names if n not in partitions]
        name = "data" if "data" in names or len(rest) != 1 else rest[0]
    same = [n for n in names if n.lower() == name.lower()]
    if name not in names and len(same) == 1:
        name = same[0]  # as Spark resolves column names, without case
    if name not in names:
        raise ValueError(
            f"no column {name!r} to write as records (the columns: {', '.join(names)}); "
            "name one with the option column"
        )
    kind = schema[name].dataType
    if not isinstance(kind, (BinaryType, StringType)):
        raise ValueError(
            f"column {name!r} is {kind.simpleString()}: leveldb_log writes a binary or "
            "string column (cast it)"
        )
    _layout.check_columns(partitions, names, record=name)
    return name


def highest_number(folder: str, partitions: tuple[str, ...] = ()) -> int:
    """The highest number of a ``NNNNNN.log`` in ``folder`` (with partition columns: in
    its partition folders; 0 if none): numbered logs go on from it."""
    if partitions:
        tree = _publish.Folder(folder).visible_tree(spark_hidden)
        names = [name.rsplit("/", 1)[-1] for name in tree]
    else:
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            return 0
    numbers = [int(m.group(1)) for m in map(_NUMBERED.match, names) if m]
    return max(numbers, default=0)


def check_writable(opts: WriteOptions) -> None:
    """Fail while planning, not in every task, when the Writer cannot take the options
    (compression without a zstd binding, say)."""
    import io

    open_log(io.BytesIO(), "w", opts, opts.log_number).close()


@dataclass(frozen=True)
class LogCommitMessage(WriterCommitMessage):
    """What a task reports: its partition, and the staged log (None: it had no records);
    with partition columns, ``logs`` instead: (staged log, its key=value folder) each."""

    partition: int
    staged: str | None
    records: int
    logs: tuple[tuple[str, str], ...] = ()


def task_ids() -> tuple[int, int]:
    """The running task's partition and attempt ids (unique within the application)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        raise RuntimeError("leveldb_log's writer runs in a Spark task")
    return context.partitionId(), context.taskAttemptId()


def staged_path(staging: str, partition: int, attempt: int) -> str:
    """A new name in ``staging`` for a task attempt's log. The random part keeps it new even
    where attempt ids start again (a streaming query restarted in a new application)."""
    token = uuid.uuid4().hex[:8]
    return os.path.join(staging, f"part-{partition:05d}-attempt-{attempt}-{token}.log")


def write_staged(path: str, batches: Iterable[Any], opts: WriteOptions, log_number: int) -> int:
    """Write the column of every Arrow batch to a new log at ``path``; return the number of
    records. No records: no file. On any error the file is deleted and the error raised."""
    return _publish.write_staged(
        _publish.Folder(opts.folder),
        path,
        (batch.column(opts.column) for batch in batches),
        lambda target, mode: open_log(target, mode, opts, log_number),
        sync=opts.sync,
        column=opts.column,
    )


def open_log(target: Any, mode: Literal["w", "x"], opts: WriteOptions, log_number: int) -> Writer:
    """A Writer on ``target`` with the options (the log number only where records carry
    it: Pebble's)."""
    settings: dict[str, Any] = {"dialect": opts.dialect, "compression": opts.compression}
    if opts.dialect == "pebble":
        settings["log_number"] = log_number
    return Writer(target, mode, **settings)


def staged_moves(
    messages: list[WriterCommitMessage | None], name: Callable[[int], str]
) -> list[tuple[str, str]]:
    """(staged log, final name) for every task that wrote a log, ``name`` giving the final
    name of a partition's log."""
    moves = []
    for m in messages:
        if isinstance(m, LogCommitMessage):
            if m.staged is not None:
                moves.append((m.staged, name(m.partition)))
            moves += [(staged, f"{folder}/{name(m.partition)}") for staged, folder in m.logs]
    return moves


def check_free(folder: str, moves: list[tuple[str, str]]) -> None:
    """Refuse, before anything is renamed, final names that exist already."""
    _publish.Folder(folder).check_free(final for _, final in moves)


def publish(
    folder: str, moves: list[tuple[str, str]], replace: bool, sync: bool, tree: bool = False
) -> None:
    """Rename each staged log to its final name in ``folder`` (leveldb_log._files._publish).
    ``replace``: what the folder held before (with ``tree``, in its folders too) is
    deleted, after the new logs are in place. Otherwise a final name that exists is
    refused."""
    _publish.Folder(folder).publish(
        moves, replace=replace, sync=sync, hidden=spark_hidden, tree=tree
    )


def final_name(opts: WriteOptions, partition: int, job: str) -> str:
    """The name a task's log gets on commit."""
    if opts.naming == "number":
        return f"{opts.log_number + partition:06d}.log"
    return f"part-{partition:05d}-{job}.log"


class LogWriter(DataSourceArrowWriter):
    """Writes each task's rows as one log, staged until the job commits.

    Built on the driver (and pickled to the tasks): it parses the options, checks that the
    Writer takes them, and creates the output folder and the job's staging folder.
    """

    def __init__(self, options: Mapping[str, str], schema: StructType, overwrite: bool):
        self.opts = write_options(options, schema)
        self.overwrite = overwrite
        self.job = uuid.uuid4().hex[:12]
        self.staging = os.path.join(self.opts.folder, f"{HIDDEN_PREFIX}staging-{self.job}")
        check_writable(self.opts)
        os.makedirs(self.staging)

    def write(self, iterator: Iterator[Any]) -> LogCommitMessage:
        """In a task: write its rows to a staged log named by partition and attempt."""
        partition, attempt = task_ids()
        staged = staged_path(self.staging, partition, attempt)
        number = self.opts.log_number + partition
        if self.opts.partitions:
            return self.write_partitioned(iterator, staged, partition, number)
        records = write_staged(staged, iterator, self.opts, number)
        return LogCommitMessage(partition, staged if records else None, records)

    def write_partitioned(
        self, iterator: Iterator[Any], staged: str, partition: int, number: int
    ) -> LogCommitMessage:
        """A task's rows split into their key=value folders: one staged log each."""
        opts = self.opts
        pieces = (
            p for batch in iterator for p in _layout.split(batch, opts.partitions, opts.column)
        )
        logs = _publish.write_partitioned(
            _publish.Folder(opts.folder),
            self.staging,
            pieces,
            os.path.basename(staged),
            lambda target, mode: open_log(target, mode, opts, number),
            sync=opts.sync,
            column=opts.column,
        )
        return LogCommitMessage(
            partition,
            None,
            sum(records for _, _, records in logs),
            tuple((path, folder) for path, folder, _ in logs),
        )

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """On the driver, every task done: rename the staged logs into the folder (with
        Overwrite, then delete its earlier logs), and remove the staging folder."""
        moves = staged_moves(messages, lambda p: final_name(self.opts, p, self.job))
        tree = bool(self.opts.partitions)
        publish(self.opts.folder, moves, self.overwrite, self.opts.sync, tree)
        shutil.rmtree(self.staging, ignore_errors=True)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """On the driver, a task failed: delete everything staged; the folder is untouched."""
        shutil.rmtree(self.staging, ignore_errors=True)

    def __repr__(self) -> str:
        mode = "overwrite" if self.overwrite else "append"
        return f"<leveldb_log LogWriter {self.opts.folder!r} {mode} job {self.job}>"
