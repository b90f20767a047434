"""``df.writeStream.format("leveldb_log")``: one log per micro-batch and partition, made
visible by the batch's commit, exactly once across replays.

Tasks stage their logs as the batch writer's do (_write), in the hidden folder
``.leveldb_log-sink/staging`` of the output folder. The driver's ``commit(messages, batchId)``
renames them to ``part-<batch id>-<partition>.log`` and records the batch as committed in
``.leveldb_log-sink/commits/<batch id>``. Spark replays a batch whose commit it did not
record in its checkpoint (the query died after the sink's commit, before its own); the sink
then finds the batch recorded and discards the replay's logs, so no record is written twice.
A commit that died half way leaves ``<batch id>.pending``, the names it was publishing: the
replay deletes those before publishing its own, so the batch is written exactly once.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Mapping
from typing import Any

from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from leveldb_log._files._publish import sync_folder
from leveldb_log.spark._write import (
    HIDDEN_PREFIX,
    LogCommitMessage,
    check_free,
    check_writable,
    publish,
    staged_moves,
    staged_path,
    task_ids,
    write_options,
    write_staged,
)

#: The sink's hidden folder inside the output folder.
SINK = HIDDEN_PREFIX + "sink"


def stream_name(batch_id: int, partition: int) -> str:
    """A committed log's name: name order is batch order, then partition order."""
    return f"part-{batch_id:012d}-{partition:05d}.log"


class LogStreamWriter(DataSourceStreamArrowWriter):
    """Writes each micro-batch's partitions as logs, committed with the batch id.

    Spark builds one on the driver for the tasks, and another for each commit: it holds
    nothing but the parsed options, and every commit reads the sink's state from the folder.
    ``overwrite`` (the Complete output mode): each batch's logs replace the folder's others.
    """

    def __init__(self, options: Mapping[str, str], schema: StructType, overwrite: bool):
        self.opts = write_options(options, schema)
        if self.opts.partitions:
            raise ValueError(
                "option partitionColumns is for batch writes: a stream's logs are not "
                "partitioned into folders"
            )
        if self.opts.naming != "part":
            raise ValueError(
                "option naming=number is for batch writes: a stream names its logs by batch "
                "id and partition"
            )
        self.overwrite = overwrite
        self.sink = os.path.join(self.opts.folder, SINK)
        self.staging = os.path.join(self.sink, "staging")
        self.commits = os.path.join(self.sink, "commits")
        self.checkpoint = checkpoint_of(options)
        check_writable(self.opts)
        check_owner(self.sink, self.checkpoint)
        os.makedirs(self.staging, exist_ok=True)
        os.makedirs(self.commits, exist_ok=True)

    def write(self, iterator: Iterator[Any]) -> LogCommitMessage:
        """In a task: write its rows to a staged log named by partition and attempt."""
        partition, attempt = task_ids()
        staged = staged_path(self.staging, partition, attempt)
        records = write_staged(staged, iterator, self.opts, self.opts.log_number)
        return LogCommitMessage(partition, staged if records else None, records)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """On the driver: publish the batch's logs, once per batch id (a replay of a batch
        already committed is discarded)."""
        moves = staged_moves(messages, lambda p: stream_name(batchId, p))
        done = os.path.join(self.commits, str(batchId))
        if os.path.exists(done):
            discard(staged for staged, _ in moves)
            return
        claim(self.sink, self.checkpoint)
        pending = done + ".pending"
        if os.path.exists(pending):
            discard(os.path.join(self.opts.folder, n) for n in read_names(pending))
        if not self.overwrite:
            check_free(self.opts.folder, moves)  # a name not ours is never recorded as ours
        write_names(pending, [final for _, final in moves], self.opts.sync)
        publish(self.opts.folder, moves, self.overwrite, self.opts.sync)
        os.replace(pending, done)
        if self.opts.sync:
            sync_folder(self.commits)
        clear(self.staging)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """On the driver, a task of the batch failed: delete what was staged."""
        clear(self.staging)

    def __repr__(self) -> str:
        mode = "complete" if self.overwrite else "append"
        return f"<leveldb_log LogStreamWriter {self.opts.folder!r} {mode}>"


def checkpoint_of(options: Mapping[str, str]) -> str | None:
    """The query's checkpoint folder (``checkpointLocation``), which says which query a
    sink's batch ids belong to; None when Spark's conf chose it."""
    location = options.get("checkpointLocation")
    if not location:
        return None
    location = str(location)
    return (
        location if "://" in location or location.startswith("file:") else os.path.abspath(location)
    )


def check_owner(sink: str, checkpoint: str | None) -> None:
    """Refuse a query whose checkpoint is not the one the folder's batches were committed
    with: its batch ids start again at 0, and batches the sink has already committed would
    be taken for replays and dropped."""
    owner_file = os.path.join(sink, "checkpoint")
    if checkpoint is None or not os.path.exists(owner_file):
        return
    with open(owner_file, encoding="utf-8") as f:
        owner = f.read()
    if owner != checkpoint:
        raise ValueError(
            f"{os.path.dirname(sink)} holds the logs of the stream checkpointed at {owner}, "
            f"not {checkpoint}: write this query to another folder, or delete {sink} to "
            "let the new query number its batches afresh there"
        )


def claim(sink: str, checkpoint: str | None) -> None:
    """Record the query's checkpoint with the sink's first commit (see check_owner)."""
    owner_file = os.path.join(sink, "checkpoint")
    check_owner(sink, checkpoint)
    if checkpoint is not None and not os.path.exists(owner_file):
        with open(owner_file + ".new", "w", encoding="utf-8") as f:
            f.write(checkpoint)
        os.replace(owner_file + ".new", owner_file)


def discard(paths: Any) -> None:
    """Delete the files, those already gone included."""
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def clear(staging: str) -> None:
    """Delete what tasks left staged: a batch's commit or abort ends its tasks' work (a
    late speculative copy's log stays hidden until the next batch clears it)."""
    for entry in os.scandir(staging):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            discard([entry.path])


def write_names(path: str, names: list[str], sync: bool) -> None:
    """Record the names a commit publishes, atomically (write aside, then rename)."""
    aside = path + ".new"
    with open(aside, "w", encoding="utf-8") as f:
        json.dump(names, f)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(aside, path)


def read_names(path: str) -> list[str]:
    """The names a commit recorded."""
    with open(path, encoding="utf-8") as f:
        names = json.load(f)
    return [str(n) for n in names]
