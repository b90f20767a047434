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

import functools
import importlib
import os
import uuid
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from leveldb_log import _storage
from leveldb_log._core import RECOVERY_MODES, Reader
from leveldb_log._detect import detect_file_dialect
from leveldb_log._dialects import DIALECTS
from leveldb_log._errors import Corruption, CorruptionError, CorruptionWarning
from leveldb_log._public import module_dir
from leveldb_log.dask import DEFAULT_BLOCKSIZE, UrlPath, _expand, _file_parts, _Part

__all__ = ["DEFAULT_BLOCKSIZE", "DEFAULT_LOG_SIZE", "SAVE_MODES", "read_logs", "write_logs"]
__dir__ = module_dir(globals())

#: Bytes of records in each Arrow block a read task yields.
_BATCH_BYTES = 16 << 20


def _module(name: str) -> Any:
    """An optional dependency (ray, pyarrow, fsspec), imported on use: they are the extra
    leveldb-log[ray], and type checkers need neither them nor their stubs. Absolute
    imports reach the real Ray, not this module of the same name."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(
            f"leveldb_log.ray needs {name.split('.')[0]}: pip install 'leveldb-log[ray]'"
        ) from e


@dataclass(frozen=True)
class _ReadPlan:
    """What every read task of one ``read_logs`` call shares."""

    dialect: str | None  # None: detected per file, from its first block
    recovery: str
    verify_checksums: bool
    log_number: int | None
    include_paths: bool
    corruptions: bool
    decode: bool


def _check_read(plan: _ReadPlan, blocksize: int | None) -> None:
    """Refuse wrong options on the driver, before any task runs."""
    if plan.recovery not in RECOVERY_MODES:
        raise ValueError(
            f"recovery must be one of {', '.join(RECOVERY_MODES)}, not {plan.recovery!r}"
        )
    if plan.dialect is not None and plan.dialect not in DIALECTS:
        raise ValueError(
            f"dialect must be one of auto, {', '.join(DIALECTS)}, not {plan.dialect!r}"
        )
    if plan.recovery == "point_in_time" and blocksize is not None:
        raise ValueError(
            "recovery='point_in_time' stops a file at its first damage: it needs "
            "blocksize=None (one read task per file)"
        )
    if blocksize is not None and (isinstance(blocksize, bool) or blocksize < 1):
        raise ValueError(f"blocksize must be at least 1 or None, not {blocksize!r}")
    if plan.log_number is not None and plan.dialect == "leveldb":
        raise ValueError("log_number applies to the dialects rocksdb and pebble, not leveldb")
    if plan.decode and plan.corruptions:
        raise ValueError("decode and corruptions cannot be asked for together")


def _hidden(name: str) -> bool:
    """Files Ray's and Spark's readers leave out of a folder: names starting with . or _
    (a write's temporary files among them)."""
    return name.startswith((".", "_"))


def _files(
    urlpath: UrlPath, storage_options: Mapping[str, Any] | None
) -> tuple[list[str], dict[str, Any] | None]:
    """The files that paths, globs, URLs and folders name, as _expand gives them; a folder
    stands for the files under it (its hidden ones left out), in name order."""
    paths, url_options = _expand(urlpath, storage_options)
    fsspec = _module("fsspec.core")
    found: list[str] = []
    for path in paths:
        fs, inner = fsspec.url_to_fs(path, **(url_options or {}))
        fs.invalidate_cache()  # other processes may have written there since it last looked
        if not fs.isdir(inner):
            found.append(path)
            continue
        for name in sorted(fs.find(inner)):
            relative = name[len(inner.rstrip("/")) + 1 :]
            if not any(_hidden(part) for part in relative.split("/")):
                found.append(name if url_options is None else fs.unstrip_protocol(name))
    if not found:
        raise FileNotFoundError(f"no log file in {urlpath!r} (its files are all hidden?)")
    return found, url_options


def _reader_options(part: _Part, plan: _ReadPlan) -> dict[str, Any]:
    """The Reader's keyword arguments for one range; with dialect auto, the dialect is
    detected here, in the task, from the file's first block (planning reads no log bytes)."""
    options = dict(part.options)
    dialect = plan.dialect or detect_file_dialect(part.path, options.get("storage_options"))
    options["dialect"] = dialect
    if plan.log_number is not None and dialect != "leveldb":
        options["log_number"] = plan.log_number
    return options


class _Damage:
    """The on_corruption callback of one range: keeps every corruption reported there."""

    def __init__(self) -> None:
        self.found: list[Corruption] = []

    def __call__(self, corruption: Corruption) -> None:
        self.found.append(corruption)

    def warn(self, part: _Part) -> None:
        """One CorruptionWarning for the range, in the worker (Ray shows it in the
        driver's output, prefixed with the worker)."""
        if not self.found:
            return
        first = self.found[0]
        dropped = sum(c.size for c in self.found)
        end = "end" if part.end is None else part.end
        warnings.warn(
            CorruptionWarning(
                f"{part.path}: {len(self.found)} corruption(s), {dropped} bytes dropped in "
                f"[{part.start}, {end}); the first: {first.reason} at offset {first.offset} "
                "(read_logs(..., corruptions=True) lists them all)",
                first,
            ),
            stacklevel=2,
        )


def _read_range(part: _Part, plan: _ReadPlan) -> Iterator[Any]:
    """The read task of one range: its records (or decoded operations, or corruption
    reports) as Arrow tables of about _BATCH_BYTES each."""
    pa = _module("pyarrow")
    options = _reader_options(part, plan)
    damage = _Damage()
    with Reader(part.path, start=part.start, end=part.end, on_corruption=damage, **options) as r:
        for batch in _batches(r, part.path):
            if not plan.corruptions:
                yield _block(pa.record_batch(batch), part, plan, options["dialect"])
    if plan.corruptions:
        if damage.found:
            yield _reports(part.path, damage.found)
    else:
        damage.warn(part)


def _batches(reader: Reader, path: str) -> Iterator[Any]:
    """The reader's Arrow batches; its CorruptionError is raised again naming the file,
    which the Reader's message lacks."""
    try:
        yield from reader.iter_batches(max_bytes=_BATCH_BYTES)
    except CorruptionError as e:
        raise type(e)(e.offset, e.size, e.reason, message=f"{path}: {e}") from None


def _block(batch: Any, part: _Part, plan: _ReadPlan, dialect: str) -> Any:
    """One batch of records as the table a read task yields."""
    pa = _module("pyarrow")
    if plan.decode:
        wal_rows = importlib.import_module("leveldb_log._wal_rows")
        malformed = None if plan.recovery in _RAISING else _malformed(part.path)
        decoder = _decoder(dialect, given=plan.dialect is not None)
        return pa.Table.from_batches([wal_rows.decode_batch(batch, decoder, part.path, malformed)])
    table = pa.Table.from_batches([batch])
    if plan.include_paths:
        paths = pa.repeat(pa.scalar(part.path, pa.string()), table.num_rows)
        table = table.append_column(pa.field("path", pa.string(), nullable=False), paths)
    return table


def _decoder(dialect: str, given: bool) -> str:
    """How a file's records are decoded: as its dialect's batches, except that a file
    detected as LevelDB's is decoded as RocksDB's (a RocksDB WAL without recycling has
    LevelDB's framing, and LevelDB's batches are a subset of RocksDB's, in family 0), as
    Spark's decode option does."""
    return "rocksdb" if dialect == "leveldb" and not given else dialect


#: The recovery modes that raise at damage: a decoded record that is no write batch fails
#: the read there too.
_RAISING = ("tolerate_tail", "absolute")


def _malformed(path: str) -> Any:
    """Warn of a record that is no write batch, which decoding leaves out."""

    def report(offset: int, error: CorruptionError) -> None:
        warnings.warn(
            CorruptionWarning(
                f"{path}: the record at offset {offset} is no write batch, left out: {error}",
                error.corruption,
            ),
            stacklevel=2,
        )

    return report


def _reports(path: str, found: list[Corruption]) -> Any:
    """Corruption reports as a table: path, offset, size, reason."""
    pa = _module("pyarrow")
    return pa.Table.from_arrays(
        [
            pa.array([path] * len(found), pa.string()),
            pa.array([c.offset for c in found], pa.uint64()),
            pa.array([c.size for c in found], pa.uint64()),
            pa.array([c.reason for c in found], pa.string()),
        ],
        schema=_report_schema(),
    )


def _report_schema() -> Any:
    pa = _module("pyarrow")
    return pa.schema(
        [
            pa.field("path", pa.string(), nullable=False),
            pa.field("offset", pa.uint64(), nullable=False),
            pa.field("size", pa.uint64(), nullable=False),
            pa.field("reason", pa.string(), nullable=False),
        ]
    )


def _read_schema(plan: _ReadPlan) -> Any:
    """The schema of the dataset read_logs gives."""
    pa = _module("pyarrow")
    if plan.corruptions:
        return _report_schema()
    if plan.decode:
        return importlib.import_module("leveldb_log._wal_rows").ROW_SCHEMA
    fields = [
        pa.field("offset", pa.uint64(), nullable=False),
        pa.field("data", pa.large_binary(), nullable=False),
    ]
    if plan.include_paths:
        fields.append(pa.field("path", pa.string(), nullable=False))
    return pa.schema(fields)


def _range_size(part: _Part) -> int:
    """Bytes of log in a range (a whole file's size when the range has no end)."""
    if part.end is not None:
        return part.end - part.start
    return (
        _storage.size(part.path, part.options.get("storage_options"))
        if _storage.is_url(part.path)
        else os.path.getsize(part.path)
    )


def _read_tasks(
    parts: list[_Part], sizes: list[int], plan: _ReadPlan, per_task_row_limit: int | None
) -> list[Any]:
    """One Ray ReadTask per range, with what planning knows of it: its bytes (rows are
    unknown until read)."""
    datasource = _module("ray.data.datasource")
    block = _module("ray.data.block")
    schema = _read_schema(plan)
    tasks = []
    for part, size in zip(parts, sizes, strict=True):
        metadata = block.BlockMetadata(
            num_rows=None,
            size_bytes=size,
            input_files=[part.path],
            exec_stats=None,
        )
        read = functools.partial(_read_range, part, plan)
        tasks.append(
            datasource.ReadTask(
                read, metadata, schema=schema, per_task_row_limit=per_task_row_limit
            )
        )
    return tasks


# long: its docstring is the reference of every argument; the code is 20 lines
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
    num_cpus: float | None = None,
    num_gpus: float | None = None,
    memory: float | None = None,
    concurrency: int | None = None,
    ray_remote_args: dict[str, Any] | None = None,
) -> Any:
    """Read logs into a Ray Dataset, one read task per byte range.

    Arguments
      paths: a path, a URL (s3://bucket/logs/x.log), a glob of either, a folder (the files
        under it, leaving out names that start with . or _), or a list of them. Files are
        taken in sorted order.
      blocksize: bytes of log per read task (rounded to whole 32 KiB blocks): each file is
        cut with splits(size=blocksize). None: one task per file.
      dialect: "auto" (the default: detected per file from its first block, in the task),
        or "leveldb", "rocksdb", "pebble".
      recovery: as for Reader. "skip" (the default) reports damage and goes on;
        "tolerate_tail" and "absolute" fail the read with CorruptionError naming the file
        and offset; "point_in_time" ends a file at its first damage (needs
        blocksize=None).
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
        columns path, offset (uint64), size (uint64) and reason (string).
      num_cpus, num_gpus, memory, concurrency: as for Ray's own readers
        (ray.data.read_datasource): what each read task reserves, and how many run at
        once.
      ray_remote_args: any other option of the read tasks, handed to Ray as given (Ray
        deprecates it for the named arguments above).

    Returns
      A ray.data.Dataset (lazy). Its columns are offset (uint64: the record's first
      header) and data (large_binary: the payload), as Reader.iter_batches gives them.
      Every record and every corruption is read exactly once, whatever blocksize is.
      Damage skipped in "skip" or "point_in_time" is reported by a CorruptionWarning
      for each range that has any, in the worker that read it (Ray shows it in the
      driver's output), naming the file, the count and the bytes dropped.

    Raises
      FileNotFoundError: nothing matches paths, or only folders without a visible file.
      ValueError: an unknown dialect or recovery mode; point_in_time with a blocksize; a
        blocksize below 1; log_number with dialect leveldb; decode with corruptions.
      ImportError: ray, pyarrow or fsspec is missing (pip install 'leveldb-log[ray]').
      CorruptionError, from the dataset's execution: damage in a raising mode.
    """
    plan = _ReadPlan(
        dialect=None if dialect == "auto" else dialect,
        recovery=recovery,
        verify_checksums=verify_checksums,
        log_number=log_number,
        include_paths=include_paths,
        corruptions=corruptions,
        decode=decode,
    )
    _check_read(plan, blocksize)
    rdata = _module("ray.data")
    io = importlib.import_module("leveldb_log._ray_io")
    files, url_options = _files(paths, storage_options)
    options = {"recovery": recovery, "verify_checksums": verify_checksums}
    parts = _file_parts(files, url_options, blocksize, options)
    return rdata.read_datasource(
        io.LogDatasource(parts, plan),
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        memory=memory,
        concurrency=concurrency,
        ray_remote_args=ray_remote_args,
    )


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------

#: Bytes of rows a write task gathers into one log when ``log_size`` is not given.
DEFAULT_LOG_SIZE = 64 << 20

#: The save modes of Ray's own writers that write_logs takes (and "create", Ray's "error").
SAVE_MODES = ("append", "overwrite", "error", "ignore")


@dataclass(frozen=True)
class _WritePlan:
    """What every write task of one ``write_logs`` call shares."""

    folder: str  # a local path, or a URL
    storage_options: dict[str, Any] | None  # for a URL's file system
    column: str
    dialect: str
    compression: str | None
    sync: bool
    mode: str
    log_size: int
    job: str  # a fresh hex id: in the names of this write's logs and of its staging folder


def _filesystem(plan: _WritePlan) -> tuple[Any, str, bool]:
    """The folder's fsspec file system, its path there, and whether it is local."""
    fs, root = _module("fsspec.core").url_to_fs(plan.folder, **(plan.storage_options or {}))
    fs.invalidate_cache()  # the tasks wrote from other processes: list afresh
    return fs, root.rstrip("/") or "/", _storage.is_local(fs)


def _staging(root: str, plan: _WritePlan) -> str:
    """Where this write's logs wait for the commit: hidden from readers (read_logs and
    Spark leave names starting with _ out of a folder)."""
    return f"{root}/_temporary/{plan.job}"


def _column(block: Any, name: str) -> Any:
    """The records of one block: its column ``name``, binary or string (written as UTF-8)."""
    pa = _module("pyarrow")
    table = _module("ray.data.block").BlockAccessor.for_block(block).to_arrow()
    if name not in table.column_names:
        raise ValueError(
            f"write_logs: the dataset has no column {name!r} (it has {table.column_names}); "
            "name the records' column with column="
        )
    column = table.column(name)
    kind = column.type
    if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)) and not (
        pa.types.is_string(kind) or pa.types.is_large_string(kind)
    ):
        if not (pa.types.is_binary_view(kind) or pa.types.is_string_view(kind)):
            raise TypeError(
                f"write_logs: column {name!r} is {kind}; it must be binary or string (UTF-8)"
            )
    return column


def _write_task(plan: _WritePlan, blocks: Any, task: int) -> tuple[str, str, int] | None:
    """One write task: its blocks as one log under a temporary name in the staging folder.
    Returns (temporary path, final path, records), or None when it had no records; a
    failure removes what it wrote and raises."""
    writer_module = importlib.import_module("leveldb_log._core")
    fs, root, local = _filesystem(plan)
    staging = _staging(root, plan)
    fs.makedirs(staging, exist_ok=True)
    temp = f"{staging}/{task:05d}-{uuid.uuid4().hex}.log"
    count = 0
    try:
        with writer_module.Writer(
            temp if local else fs.unstrip_protocol(temp),
            "x",
            dialect=plan.dialect,
            log_number=_log_number(plan, task),
            compression=plan.compression,
            storage_options=None if local else plan.storage_options,
        ) as w:
            for block in blocks:
                if _module("ray.data.block").BlockAccessor.for_block(block).num_rows():
                    count += w.write_many(_column(block, plan.column))
            if plan.sync and local:
                w.sync()
    except BaseException:
        _remove(fs, temp)
        raise
    if count == 0:
        _remove(fs, temp)
        return None
    return temp, f"{root}/part-{task:05d}-{plan.job}.log", count


def _log_number(plan: _WritePlan, task: int) -> int | None:
    """Pebble's records carry a log number: the task's index plus one (a reader takes it
    from the first record, as the logs are not named NNNNNN.log)."""
    return task + 1 if plan.dialect == "pebble" else None


def _remove(fs: Any, path: str) -> None:
    """Remove a file or folder if it is there."""
    if fs.exists(path):
        fs.rm(path, recursive=True)


def _visible(fs: Any, root: str) -> list[str]:
    """What a reader of the folder sees in it: its entries, but hidden ones."""
    if not fs.exists(root):
        return []
    return [p for p in fs.ls(root, detail=False) if not _hidden(p.rstrip("/").rsplit("/", 1)[-1])]


def _commit(plan: _WritePlan, written: list[tuple[str, str, int]]) -> list[str]:
    """Once every task has succeeded: rename each log into place (and for overwrite, then
    remove what the folder held before). A failed rename takes back those made."""
    fs, root, local = _filesystem(plan)
    old = _visible(fs, root) if plan.mode == "overwrite" else []
    placed: list[str] = []
    try:
        for temp, final, _ in sorted(written, key=lambda w: w[1]):
            if local:
                os.rename(temp, final)
            else:
                fs.mv(temp, final)
            placed.append(final)
        if plan.sync and local:
            _fsync_folder(root)
    except BaseException:
        for final in placed:
            _remove(fs, final)
        raise
    for path in old:
        fs.rm(path, recursive=True)
    _abort(plan)
    return placed if local else [fs.unstrip_protocol(p) for p in placed]


def _fsync_folder(path: str) -> None:
    """Make the renames into a local folder durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _abort(plan: _WritePlan) -> None:
    """Remove this write's staging folder, and _temporary if nothing else is staged."""
    fs, root, _ = _filesystem(plan)
    _remove(fs, _staging(root, plan))
    parent = f"{root}/_temporary"
    if fs.exists(parent) and not fs.ls(parent, detail=False):
        fs.rmdir(parent)


def _save_mode(mode: Any) -> str:
    """A save mode's name, from a str or a ray.data.SaveMode (whose CREATE is ERROR)."""
    name = str(getattr(mode, "value", mode))
    return "error" if name == "create" else name


def _check_write(plan: _WritePlan) -> None:
    """Refuse wrong options on the driver, before any task runs."""
    if plan.mode not in SAVE_MODES:
        raise ValueError(f"mode must be one of {', '.join(SAVE_MODES)}, not {plan.mode!r}")
    if isinstance(plan.log_size, bool) or not isinstance(plan.log_size, int):
        raise TypeError(f"log_size must be an int, not {type(plan.log_size).__name__}")
    if plan.log_size < 1:
        raise ValueError(f"log_size must be at least 1, not {plan.log_size}")
    core = importlib.import_module("leveldb_log._core")
    # a Writer over nothing checks dialect and compression as every task's will
    with core.Writer(
        _Discard(),
        dialect=plan.dialect,
        compression=plan.compression,
        log_number=_log_number(plan, 0),
    ):
        pass


class _Discard:
    """A file object that keeps nothing (for _check_write)."""

    def write(self, data: bytes) -> int:
        return len(data)


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
        logs; "overwrite" replaces what the folder holds, once the new logs are in place;
        "error" (or "create") refuses a path that exists (FileExistsError); "ignore" writes
        nothing there. Ray's "upsert" has no meaning for logs (ValueError).
      log_size: the bytes of rows Ray gathers for each write task (its
        min_bytes_per_write): each log holds at least that much but the last, or
        whatever one input block holds beyond it.
      storage_options: the file system's options for a URL.
      ray_remote_args, concurrency: as for Dataset.write_datasink.

    Returns
      The logs written, in name order (none for an empty dataset or mode "ignore").

    Raises
      ValueError: an unknown mode; log_size below 1; a dialect or compression the
        Writer refuses; from the tasks, a missing column or a null record.
      TypeError: a column that is neither binary nor string.
      FileExistsError: mode "error" and the path exists.
      ImportError: ray, pyarrow or fsspec is missing (pip install 'leveldb-log[ray]'), or
        Ray is too old to gather rows by bytes for its write tasks.
    """
    plan = _WritePlan(
        folder=os.fspath(path),
        storage_options=dict(storage_options) if storage_options is not None else None,
        column=column,
        dialect=dialect,
        compression=compression,
        sync=sync,
        mode=_save_mode(mode),
        log_size=log_size,
        job=uuid.uuid4().hex[:12],
    )
    _check_write(plan)
    if not hasattr(_module("ray.data").Datasink, "min_bytes_per_write"):
        raise ImportError(
            "write_logs needs a Ray whose Datasink has min_bytes_per_write (2.60 has it), "
            "or it would write one log per block: pip install -U 'leveldb-log[ray]'"
        )
    fs, root, _ = _filesystem(plan)
    if plan.mode in ("error", "ignore") and fs.exists(root):
        if plan.mode == "ignore":
            return []
        raise FileExistsError(f"write_logs: {plan.folder} exists (mode='error')")
    fs.makedirs(root, exist_ok=True)
    sink = importlib.import_module("leveldb_log._ray_io").LogDatasink(plan)
    ds.write_datasink(sink, ray_remote_args=ray_remote_args, concurrency=concurrency)
    return list(sink.written)
