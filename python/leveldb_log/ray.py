"""Logs as Ray Data datasets: ``read_logs`` and ``write_logs``.

- ``read_logs("logs/*.log")``: a ``ray.data.Dataset`` with one read task per byte range of
  ``splits()``, in Arrow's types as the Reader gives them: ``offset`` (uint64), ``data``
  (large_binary), and ``path`` (string) on request; or, with ``decode=True``, one row per
  operation of a LevelDB, RocksDB or Pebble WAL; or, with ``corruptions=True``, the damage
  the logs hold, one row per corruption.
- ``write_logs(ds, "out/")``: one log per write task, each task given about ``log_size`` bytes
  of records, written under a hidden temporary name and renamed into place only once every
  task has succeeded.

A record belongs to the range that holds its first header, so every record is read exactly
once and every corruption reported exactly once, however the files are cut.

Ray is imported only when one of these is called; it needs the extra ``leveldb-log[ray]``.
See docs/ray.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from leveldb_log._core import Writer
from leveldb_log._files._layout import check_columns, check_kind
from leveldb_log._files._listing import ListOptions
from leveldb_log._files._read import ReadSpec, check
from leveldb_log._optional import optional
from leveldb_log._public import module_dir

__all__ = ["DEFAULT_BLOCKSIZE", "DEFAULT_LOG_SIZE", "SAVE_MODES", "read_logs", "write_logs"]
__dir__ = module_dir(globals())

#: Bytes of log per read task when ``blocksize`` is not given (rounded to whole blocks).
DEFAULT_BLOCKSIZE = 64 << 20

#: Bytes of rows a write task gathers into one log when ``log_size`` is not given.
DEFAULT_LOG_SIZE = 64 << 20

#: The save modes of Ray's own writers that write_logs takes (and "create", Ray's "error").
SAVE_MODES = ("append", "overwrite", "error", "ignore")

UrlPath = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _io() -> Any:
    """leveldb_log._ray_io, which imports Ray (and pyarrow)."""
    optional("ray.data", "ray")
    optional("pyarrow", "ray")
    return optional("leveldb_log._ray_io", "ray")


def _names(paths: UrlPath) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _check_partitions(ds: Any, partition_cols: Any, column: str) -> tuple[str, ...]:
    """write_logs' partition columns, refused on the driver where they can be."""
    if partition_cols is None:
        return ()
    if isinstance(partition_cols, str) or not all(isinstance(c, str) for c in partition_cols):
        raise TypeError(f"partition_cols must be a list of column names, not {partition_cols!r}")
    partitions = tuple(partition_cols)
    schema = ds.schema(fetch_if_missing=False)
    names = list(schema.names) if schema is not None else [*partitions, column]
    check_columns(partitions, names, column)
    if schema is not None:
        for name in partitions:
            check_kind(name, schema.types[names.index(name)])
    return partitions


# long: its docstring is the reference of every argument; the code is 25 lines
def read_logs(
    paths: UrlPath,
    *,
    blocksize: int | None = DEFAULT_BLOCKSIZE,
    dialect: str = "auto",
    recovery: str = "skip",
    verify_checksums: bool = True,
    log_number: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
    include_paths: bool = False,
    decode: bool = False,
    corruptions: bool = False,
    partitioning: Any = None,
    partition_filter: Any = None,
    file_extensions: Sequence[str] | None = None,
    ignore_missing_paths: bool = False,
    manifest: bool = False,
    num_cpus: float | None = None,
    num_gpus: float | None = None,
    memory: float | None = None,
    concurrency: int | None = None,
    ray_remote_args: dict[str, Any] | None = None,
) -> Any:
    """Read logs into a Ray Dataset, one read task per byte range.

    Arguments
      paths: a path, a URL (s3://bucket/logs/x.log), a glob of either, a folder (every
        file under it, as Ray's readers list one: those whose path below it starts with .
        or _ left out; a database folder stands for its WALs), or a list of them.
      blocksize: bytes of log per read task (rounded to whole 32 KiB blocks): each file is
        cut with splits(size=blocksize). None: one task per file.
      dialect: "auto" (the default: detected per file from its first block, in the task),
        or "leveldb", "rocksdb", "pebble".
      recovery: as for Reader. "skip" (the default) reports damage and goes on;
        "tolerate_tail" and "absolute" fail the read with CorruptionError naming the file
        and offset; "point_in_time" ends a file at its first damage, so it
        reads each file in one task, whatever blocksize is (as Spark's reads do).
      verify_checksums: as for Reader.
      log_number: the number recyclable records must carry (RocksDB, Pebble); None takes
        it from a file named NNNNNN.log, else from the first recyclable record.
      storage_options: the file system's options for URLs (as for Reader).
      include_paths: add the column path (string), each file as it was expanded.
      decode: one row per operation of a WAL's write batches instead of one per record:
        path (string), offset, sequence, cf (int64), op (string: the operation's class
        in leveldb_log.leveldb, .rocksdb or .pebble), key, value (binary); see
        docs/ray.md "Decoded WALs". With dialect auto, a file detected as LevelDB's is
        decoded as RocksDB's batches (a RocksDB WAL without recycling is framed as
        LevelDB's; LevelDB's batches read the same, in column family 0). A record that is
        no write batch fails the read in the raising modes, and is left out with a
        CorruptionWarning in the others.
      corruptions: instead of records, the damage: one row per corruption, with the
        columns path, offset (uint64), size (uint64) and reason (string); a file that
        ends in bytes no writer leaves (not a log?) has a row too.
      partitioning: a ray.data.datasource.Partitioning, as Ray's readers take it
        (Partitioning("hive") for key=value folders): its columns are added as strings.
      partition_filter: a PathPartitionFilter (or any callable from a list of paths to
        the paths to keep), as Ray's readers take it.
      file_extensions: only the files whose names end in one of these (without the dot,
        compared without case).
      ignore_missing_paths: a path that names nothing is no error (read as no file).
      manifest: a database folder (one holding CURRENT) stands for its WALs; with True,
        for its MANIFEST too.
      num_cpus, num_gpus, memory, concurrency: as for Ray's own readers
        (ray.data.read_datasource): what each read task reserves, and how many run at
        once.
      ray_remote_args: any other option of the read tasks, handed to Ray as given (Ray
        deprecates it for the named arguments above).

    Returns
      A ray.data.Dataset (lazy). Its columns are offset (uint64: the record's first
      header) and data (large_binary: the payload), as Reader.iter_batches gives them.
      Every record and every corruption is read exactly once, whatever blocksize is.
      Damage skipped in "skip" or "point_in_time" is reported by one CorruptionWarning
      for each file a task found damaged, in the worker that read it (Ray shows it in
      the driver's output): the file, the records read, the corruptions, the bytes
      dropped, the first corruption, and the records decode left out.

    Raises
      FileNotFoundError: a path that names nothing (unless ignore_missing_paths), a glob
        that matches nothing.
      ValueError: no file to read (as Ray's readers say it: folders without a visible
        file, or none left by partition_filter or file_extensions).
      ValueError: an unknown dialect or recovery mode (the Reader's own message); a
        blocksize below 1; log_number with dialect leveldb; decode with corruptions.
      ImportError: ray, pyarrow or fsspec is missing (pip install 'leveldb-log[ray]').
      CorruptionError, from the dataset's execution: damage in a raising mode.
    """
    if blocksize is not None and (isinstance(blocksize, bool) or blocksize < 1):
        raise ValueError(f"blocksize must be at least 1 or None, not {blocksize!r}")
    if decode and corruptions:
        raise ValueError("decode and corruptions cannot be asked for together")
    options = dict(storage_options) if storage_options is not None else None
    spec = ReadSpec(
        dialect=dialect,
        recovery=recovery,
        verify_checksums=verify_checksums,
        log_number=log_number,
        storage_options=options,
        rows="decode" if decode else "corruptions" if corruptions else "records",
        include_path=include_paths,
        max_bytes=16 << 20,
        ignore_missing=ignore_missing_paths,
    )
    check(spec)
    listing = ListOptions(
        convention="ray",
        storage_options=options,
        ignore_missing=ignore_missing_paths,
        manifest=manifest,
    )
    source = _io().LogDatasource(
        _names(paths), spec, listing, blocksize, partitioning, partition_filter, file_extensions
    )
    return optional("ray.data", "ray").read_datasource(
        source,
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        memory=memory,
        concurrency=concurrency,
        ray_remote_args=ray_remote_args,
    )


def _save_mode(mode: Any) -> str:
    """A save mode's name, from a str or a ray.data.SaveMode (whose CREATE is ERROR)."""
    name = str(getattr(mode, "value", mode))
    return "error" if name == "create" else name


class _Discard:
    """A file object that keeps nothing: a Writer over it checks the options."""

    def write(self, data: bytes) -> int:
        return len(data)


def _check_write(mode: str, log_size: Any, writer_options: dict[str, Any]) -> None:
    """Refuse wrong options on the driver, before any task runs."""
    if mode not in SAVE_MODES:
        raise ValueError(f"mode must be one of {', '.join(SAVE_MODES)}, not {mode!r}")
    if isinstance(log_size, bool) or not isinstance(log_size, int):
        raise TypeError(f"log_size must be an int, not {type(log_size).__name__}")
    if log_size < 1:
        raise ValueError(f"log_size must be at least 1, not {log_size}")
    pebble = writer_options["dialect"] == "pebble"
    with Writer(_Discard(), log_number=1 if pebble else None, **writer_options):
        pass


# long: its docstring is the reference of every argument; the code is 20 lines
def write_logs(
    ds: Any,
    path: str | os.PathLike[str],
    *,
    column: str = "data",
    dialect: str = "leveldb",
    compression: str | None = None,
    sync: bool = False,
    mode: str = "append",
    log_size: int = DEFAULT_LOG_SIZE,
    storage_options: Mapping[str, Any] | None = None,
    partition_cols: Sequence[str] | None = None,
    ray_remote_args: dict[str, Any] | None = None,
    concurrency: int | None = None,
) -> list[str]:
    """Write a Ray Dataset's records as logs in a folder: one log per write task, each of
    about log_size bytes of rows.

    Every write task writes its log under a hidden temporary name (in
    ``<path>/_temporary/``); only when every task has succeeded are the logs renamed into
    place, as ``part-NNNNN-<id>.log``. A failed write leaves no log a reader sees, and in
    mode "overwrite" the folder as it was.

    Arguments
      ds: a ray.data.Dataset.
      path: the folder (created if missing): a path, or a URL with storage_options (a
        store whose renames are copies then commits each log by a copy).
      column: the records' column: binary, or string (written as its UTF-8 bytes). Nulls
        are refused (ValueError, from the task).
      dialect, compression: as for Writer ("leveldb", "rocksdb" or "pebble"; "zstd" with
        "rocksdb"). Pebble's records carry a log number: each log's is its task's index
        plus one.
      sync: make each log durable before it is committed, and the renames after (local
        folders).
      mode: Ray's save modes, as names or ray.data.SaveMode: "append" (the default) adds
        logs; "overwrite" replaces the files the folder holds (not its folders, nor hidden
        names), once the new logs are in place;
        "error" (or "create") refuses a path that exists (FileExistsError); "ignore" writes
        nothing there. Ray's "upsert" has no meaning for logs (ValueError).
      log_size: the bytes of rows Ray gathers for each write task (its
        min_bytes_per_write): each log holds at least that much but the last, or
        whatever one input block holds beyond it.
      storage_options: the file system's options for a URL.
      partition_cols: columns whose values lay the logs out in Hive-style ``key=value``
        folders (as Dataset.write_parquet's partition_cols; named and escaped as Spark
        names them, a null or "" as ``__HIVE_DEFAULT_PARTITION__``): each write task
        writes one log into each folder its rows belong to. They must be string,
        integer, boolean or date columns, and not the records' column. With "overwrite",
        the files of the whole tree are replaced.
      ray_remote_args, concurrency: as for Dataset.write_datasink.

    Returns
      The logs written, in name order (none for an empty dataset or mode "ignore").

    Raises
      ValueError: an unknown mode; log_size below 1; a dialect or compression the
        Writer refuses; a partition column that is the records' column, is named twice,
        or (when the dataset's schema is known without running it; else from the
        tasks) is missing or of another type; from the tasks, a missing column or a
        null record.
      TypeError: a column that is neither binary nor string.
      FileExistsError: mode "error" and the path exists.
      ImportError: ray, pyarrow or fsspec is missing (pip install 'leveldb-log[ray]'), or
        Ray is too old to gather rows by bytes for its write tasks.
    """
    writer_options = {"dialect": dialect, "compression": compression}
    name = _save_mode(mode)
    _check_write(name, log_size, writer_options)
    partitions = _check_partitions(ds, partition_cols, column)
    io = _io()
    if not hasattr(optional("ray.data", "ray").Datasink, "min_bytes_per_write"):
        raise ImportError(
            "write_logs needs a Ray whose Datasink has min_bytes_per_write (2.60 has it), "
            "or it would write one log per block: pip install -U 'leveldb-log[ray]'"
        )
    sink = io.LogDatasink(
        os.fspath(path),
        column=column,
        writer_options=writer_options,
        sync=sync,
        mode=name,
        log_size=log_size,
        storage_options=dict(storage_options) if storage_options is not None else None,
        partition_cols=partitions,
    )
    sink.on_write_start()  # the save mode, before any task runs
    if sink.skipped:
        return []
    ds.write_datasink(sink, ray_remote_args=ray_remote_args, concurrency=concurrency)
    return list(sink.written)
