"""The Ray Data classes behind leveldb_log.ray: a Datasource and a Datasink over the file
layer (leveldb_log._files), as thin as Ray's own file formats.

They subclass Ray's, so this module imports Ray; leveldb_log.ray imports it only when
read_logs or write_logs is called, and it imports nothing of leveldb_log.ray.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import ray.data
from ray.data.block import BlockAccessor, BlockMetadata
from ray.data.datasource import Datasink, Datasource, ReadTask
from ray.data.datasource.partitioning import PathPartitionParser

from leveldb_log._core import Writer
from leveldb_log._files._layout import check_columns, split
from leveldb_log._files._listing import ListOptions, has_extension, list_files, ray_hidden
from leveldb_log._files._plan import Range, plan
from leveldb_log._files._publish import Folder, write_partitioned, write_staged
from leveldb_log._files._read import ReadSpec, read_ranges, report_schema, warn_damage

__all__ = ["LogDatasink", "LogDatasource"]

#: A staged log and its final name, relative to the folder.
Move = tuple[str, str]

#: Bytes of records in each Arrow block a read task yields.
BATCH_BYTES = 16 << 20


class LogDatasource(Datasource):
    """The logs of read_logs: listed as Ray lists files, one read task per byte range."""

    def __init__(
        self,
        paths: Sequence[str],
        spec: ReadSpec,
        listing: ListOptions,
        blocksize: int | None,
        partitioning: Any = None,
        partition_filter: Any = None,
        file_extensions: Sequence[str] | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        entries = list_files(paths, listing)
        if not entries:  # as Ray's file readers say it
            raise ValueError(
                f"No files found under {list(paths)!r}. Note that listing skips names "
                "starting with '_' or '.'."
            )
        if partition_filter is not None:
            kept = set(partition_filter([e.path for e in entries]))
            entries = [e for e in entries if e.path in kept]
            if not entries:
                raise ValueError("No files left to read: check partition_filter")
        if file_extensions is not None:
            entries = [e for e in entries if has_extension(e.path, file_extensions)]
            if not entries:
                raise ValueError(f"No files with the extensions {list(file_extensions)}")
        self._ranges = plan(entries, blocksize, spec.recovery)
        self._spec = spec
        self._partitioning = partitioning

    def get_name(self) -> str:
        return "LevelDBLog"

    def estimate_inmemory_data_size(self) -> int:
        """About the bytes of log: a record's 7-byte header becomes its 16 bytes of offsets."""
        return sum(piece.size for piece in self._ranges)

    def schema(self) -> pa.Schema | None:
        """The schema of every block; None with a partitioning (its columns, strings, may
        differ between folders, as with Ray's own readers)."""
        if self._partitioning is not None:
            return None
        if self._spec.rows == "corruptions":
            schema = report_schema()
        elif self._spec.rows == "decode":
            from leveldb_log._wal_rows import ROW_SCHEMA

            schema = ROW_SCHEMA
        else:
            fields = [
                pa.field("offset", pa.uint64(), nullable=False),
                pa.field("data", pa.large_binary(), nullable=False),
            ]
            if self._spec.include_path:
                fields.append(pa.field("path", pa.string(), nullable=False))
            schema = pa.schema(fields)
        return schema

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: int | None = None,
        data_context: ray.data.DataContext | None = None,
    ) -> list[ReadTask]:
        """One task per range, whatever parallelism asks: the ranges are the plan."""
        schema = self.schema()
        return [
            ReadTask(
                functools.partial(_read, piece, self._spec, self._partitioning, schema),
                BlockMetadata(
                    num_rows=None, size_bytes=piece.size, input_files=(piece.path,), exec_stats=None
                ),
                schema=schema,
                per_task_row_limit=per_task_row_limit,
            )
            for piece in self._ranges
        ]


def _read(
    piece: Range, spec: ReadSpec, partitioning: Any, schema: pa.Schema | None
) -> Iterator[Any]:
    """A read task: the range's rows as Arrow tables, with its partition columns."""
    values = PathPartitionParser(partitioning)(piece.path) if partitioning is not None else {}
    # with corruptions, the rows are the report: no warning besides
    quiet = spec.rows == "corruptions"
    for batch in read_ranges([piece], spec, (lambda damage: None) if quiet else warn_damage):
        for name, value in values.items():
            batch = batch.append_column(
                pa.field(name, pa.string()),
                pa.repeat(pa.scalar(value, pa.string()), batch.num_rows),
            )
        yield pa.Table.from_batches([batch], schema=schema)


class LogDatasink(Datasink[Any]):
    """The logs of write_logs: one per write task, staged under ``_temporary/<job>`` of
    the folder and renamed into place when every task has succeeded (Ray's
    _FileDatasink's protocol, its file system on ``self``). With ``partition_cols``, a
    task writes one log into each key=value folder its rows belong to."""

    def __init__(
        self,
        path: str,
        *,
        column: str,
        writer_options: dict[str, Any],
        sync: bool,
        mode: str,
        log_size: int,
        storage_options: dict[str, Any] | None,
        partition_cols: Sequence[str] = (),
    ) -> None:
        self.folder = Folder(path, storage_options)
        self.partition_cols = tuple(partition_cols)
        self.column = column
        self.writer_options = writer_options
        self.sync = sync
        self.mode = mode
        self.log_size = log_size
        self.job = uuid.uuid4().hex[:12]
        self.staging = self.folder.path("_temporary", self.job)
        self.written: list[str] = []
        self.skipped = False
        self.started = False

    def get_name(self) -> str:
        return "LevelDBLog"

    @property
    def min_bytes_per_write(self) -> int:
        """Ray gathers about this many bytes of rows for each write task: one log each."""
        return self.log_size

    def on_write_start(self, schema: Any = None) -> None:
        """Apply the save mode to the folder as it is now, then make it (once: write_logs
        calls it before Ray does, so that nothing runs for a refused or ignored write)."""
        if self.started:
            return
        self.started = True
        if self.mode in ("error", "ignore") and self.folder.exists(self.folder.root):
            if self.mode == "error":
                raise FileExistsError(f"write_logs: {self.folder.location} exists (mode='error')")
            self.skipped = True
            return
        self.folder.makedirs(self.folder.root)

    def write(self, blocks: Any, ctx: Any) -> Move | list[Move] | None:
        """One task: its blocks as one log under a staging name: (staged, final name), or
        None when it had no records; with partition columns, one log per key=value folder:
        a list of those (None: no log)."""
        if self.skipped:
            return None
        self.folder.makedirs(self.staging)
        task = ctx.task_idx
        name = f"{task:05d}-{uuid.uuid4().hex}.log"
        final = f"part-{task:05d}-{self.job}.log"
        log_number = task + 1 if self.writer_options["dialect"] == "pebble" else None

        def open_log(target: str, mode: Any) -> Writer:
            options = {**self.writer_options, **self.folder.writer_options()}
            return Writer(target, mode, log_number=log_number, **options)

        if self.partition_cols:
            logs = write_partitioned(
                self.folder,
                self.staging,
                (piece for block in blocks for piece in self._pieces(block)),
                name,
                open_log,
                sync=self.sync,
                column=self.column,
            )
            return [(staged, f"{folder}/{final}") for staged, folder, _ in logs] or None
        staged = self.folder.join(self.staging, name)
        columns = (c for c in map(self._column, blocks) if c is not None)
        written = write_staged(
            self.folder, staged, columns, open_log, sync=self.sync, column=self.column
        )
        return (staged, final) if written else None

    def _pieces(self, block: Any) -> Iterator[tuple[str, Any]]:
        """A block's records by key=value folder."""
        if self._column(block) is None:
            return iter(())
        table = BlockAccessor.for_block(block).to_arrow()
        check_columns(self.partition_cols, table.column_names, self.column)
        return split(table, self.partition_cols, self.column)

    def _column(self, block: Any) -> Any:
        """The records of one block: its column, binary or string (written as UTF-8);
        None for a block without rows (Ray's may have no columns either)."""
        table = BlockAccessor.for_block(block).to_arrow()
        if table.num_rows == 0:
            return None
        if self.column not in table.column_names:
            raise ValueError(
                f"write_logs: the dataset has no column {self.column!r} (it has "
                f"{table.column_names}); name the records' column with column="
            )
        column = table.column(self.column)
        if not _bytes_like(column.type):
            raise TypeError(
                f"write_logs: column {self.column!r} is {column.type}; it must be binary or "
                "string (UTF-8)"
            )
        return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)

    def on_write_complete(self, write_result: Any) -> None:
        """Every task done: rename each log into place (with overwrite, then remove what
        the folder held), and remove the staging."""
        moves = sorted(
            (
                m
                for w in write_result.write_returns
                if w
                for m in ([w] if isinstance(w, tuple) else w)
            ),
            key=lambda m: m[1],
        )
        try:
            if not self.skipped:
                self.written = self.folder.publish(
                    moves,
                    replace=self.mode == "overwrite",
                    sync=self.sync,
                    hidden=ray_hidden,
                    tree=bool(self.partition_cols),
                )
        finally:
            self._clean()

    def on_write_failed(self, error: Exception) -> None:
        self._clean()

    def _clean(self) -> None:
        self.folder.remove(self.staging)
        self.folder.remove_if_empty(self.folder.path("_temporary"))


def _bytes_like(kind: Any) -> bool:
    types = pa.types
    return bool(
        types.is_binary(kind)
        or types.is_large_binary(kind)
        or types.is_string(kind)
        or types.is_large_string(kind)
        or types.is_binary_view(kind)
        or types.is_string_view(kind)
    )
