"""Logs as Dask collections, in Dask's own idiom (``dask.bag.read_avro`` / ``to_avro``).

- ``read_logs("s3://bucket/logs/*.log", blocksize=...)``: a bag of records, one partition
  per byte range of ``splits()``, across any number of files on any fsspec store;
- ``read_logs_dataframe(...)``: the same as an Arrow-backed ``dask.dataframe`` with the
  columns ``offset`` (uint64), ``data`` (large_binary) and ``path`` (string), built from
  ``Reader.iter_batches`` (no Python object per record);
- ``to_logs(bag, "out/part-*.log")``: one log per partition, written in parallel;
- ``read_export(path)``: the entities of a Firestore/Datastore export, one partition per
  output file (docs/datastore.md).

A record belongs to the range that holds its first header, so every record is read exactly
once and every corruption reported exactly once, whatever the partitioning.

Needs the extra ``leveldb-log[dask]`` (dask, pyarrow, fsspec). See docs/pipelines.md.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from leveldb_log import _storage
from leveldb_log._core import Writer
from leveldb_log._files._listing import ListOptions, list_files
from leveldb_log._files._plan import Range, plan
from leveldb_log._files._read import FileDamage, ReadSpec, check, read_ranges, warn_damage
from leveldb_log._optional import optional
from leveldb_log._public import module_dir
from leveldb_log.datastore._dask import read_export

__all__ = [
    "DEFAULT_BLOCKSIZE",
    "FileCorruption",
    "read_export",
    "read_logs",
    "read_logs_dataframe",
    "to_logs",
]
__dir__ = module_dir(globals())

#: Bytes of log per partition when ``blocksize`` is not given (rounded to whole blocks).
DEFAULT_BLOCKSIZE = 64 << 20

UrlPath = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _module(name: str) -> Any:
    """An optional dependency of the extra leveldb-log[dask], imported on use."""
    return optional(name, "dask")


class FileCorruption(NamedTuple):
    """A corruption of one file: where, how many bytes were dropped, and LevelDB's reason."""

    path: str
    offset: int
    size: int
    reason: str


def _names(urlpath: UrlPath) -> str | list[str]:
    """A path, URL or glob as a str; a list of them as a list of str."""
    if isinstance(urlpath, (str, os.PathLike)):
        return os.fspath(urlpath)
    return [os.fspath(p) for p in urlpath]


def _plan(
    urlpath: UrlPath,
    blocksize: int | None,
    storage_options: Mapping[str, Any] | None,
    spec: ReadSpec,
    manifest: bool,
) -> list[Range]:
    """Every (file, range) partition, in file order then log order: the files as
    dask.bag.read_text lists them (a database folder as its logs)."""
    if blocksize is not None and (isinstance(blocksize, bool) or blocksize < 1):
        raise ValueError(f"blocksize must be at least 1 or None, not {blocksize!r}")
    check(spec)
    listing = ListOptions("dask", spec.storage_options, manifest=manifest)
    names = _names(urlpath)
    entries = list_files([names] if isinstance(names, str) else names, listing)
    if not entries:
        raise FileNotFoundError(f"no file matches {urlpath!r}")
    return plan(entries, blocksize, spec.recovery)


def _spec(
    recovery: str,
    dialect: str,
    verify_checksums: bool,
    storage_options: Mapping[str, Any] | None,
) -> ReadSpec:
    options = dict(storage_options) if storage_options is not None else None
    return ReadSpec(dialect, recovery, verify_checksums, storage_options=options)


def _read_part(
    part: Range, spec: ReadSpec, include_path: bool, found: list[FileCorruption] | None = None
) -> list[Any]:
    """The records of one partition (with their path when asked); its damage warned of
    once, or kept in ``found``."""

    def keep(damage: FileDamage) -> None:
        assert found is not None  # keep is given only with a list
        found.extend(FileCorruption(part.path, *c) for c in damage.reports())

    records: list[Any] = []
    for batch in read_ranges([part], spec, warn_damage if found is None else keep):
        data = batch.column("data").to_pylist()
        records += [(d, part.path) for d in data] if include_path else data
    return records


def _read_part_reporting(
    part: Range, spec: ReadSpec, include_path: bool
) -> tuple[list[Any], list[FileCorruption]]:
    """The records of one partition, and the corruptions reported in it."""
    found: list[FileCorruption] = []
    return _read_part(part, spec, include_path, found), found


def read_logs(
    urlpath: UrlPath,
    blocksize: int | None = DEFAULT_BLOCKSIZE,
    recovery: str = "skip",
    dialect: str = "leveldb",
    storage_options: Mapping[str, Any] | None = None,
    include_path: bool = False,
    *,
    verify_checksums: bool = True,
    corruptions: bool = False,
    manifest: bool = False,
) -> Any:
    """Read logs into a Dask bag of records (bytes), as dask.bag.read_avro reads Avro.

    Arguments
      urlpath: a path, a URL (s3://bucket/logs/x.log), a glob of either
        ("s3://bucket/logs/*.log"), or a list of them: the files dask.bag.read_text
        would read, in sorted order; a database folder (one holding CURRENT) stands for
        its write-ahead logs, in log-number order.
      blocksize: bytes of log per partition (rounded to whole 32 KiB blocks): each file
        is cut with splits(size=blocksize). None: one partition per file.
      recovery: as for Reader. 'skip' reports damage and goes on; 'tolerate_tail' and
        'absolute' raise CorruptionError from the computation; 'point_in_time' stops a
        file at its first damage, so it reads each file in one partition, whatever
        blocksize is.
      dialect: as for Reader; passed on only when it is not 'leveldb'.
      storage_options: the file system's options for URLs (as for Reader).
      include_path: records as (record, path) tuples, path as the files were expanded.
      manifest: a database folder (one holding CURRENT) stands for its WALs; with True,
        for its MANIFEST too.
      verify_checksums: as for Reader.
      corruptions: also return a bag of FileCorruption(path, offset, size, reason), one
        per corruption; computing both bags together (dask.compute) reads each range once.

    Returns
      A dask.bag.Bag, one partition per range in file order then log order; with
      corruptions=True, the pair (records, corruptions). Every record and every
      corruption appears exactly once, whatever blocksize is. Without corruptions=True,
      damage is reported once per file a partition found damaged: a CorruptionWarning
      with the file, records read, corruptions, bytes dropped and the first corruption,
      issued where the partition is read (a worker's log, on a distributed cluster).

    Raises
      FileNotFoundError: nothing matches urlpath.
      ValueError: an unknown recovery mode or dialect (the Reader's own message); a
        blocksize below 1.
      ImportError: dask or fsspec is missing (pip install 'leveldb-log[dask]').
    """
    dask, db = _module("dask"), _module("dask.bag")
    spec = _spec(recovery, dialect, verify_checksums, storage_options)
    parts = _plan(urlpath, blocksize, storage_options, spec, manifest)
    if not corruptions:
        read = dask.delayed(_read_part, pure=True)
        return db.from_delayed([read(part, spec, include_path) for part in parts])
    reporting = dask.delayed(_read_part_reporting, pure=True, nout=2)
    both = [reporting(part, spec, include_path) for part in parts]
    return (
        db.from_delayed([records for records, _ in both]),
        db.from_delayed([found for _, found in both]),
    )


def _frame_part(part: Range, spec: ReadSpec) -> Any:
    """One partition as a pandas DataFrame of Arrow columns: offset, data, path."""
    pd, pa = _module("pandas"), _module("pyarrow")
    schema = _schema().append(pa.field("path", pa.string(), nullable=False))
    table = pa.Table.from_batches(list(read_ranges([part], spec, warn_damage)), schema=schema)
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def _schema() -> Any:
    """offset and data, as Reader.iter_batches gives them (pyarrow is imported on use)."""
    pa = _module("pyarrow")
    return pa.schema(
        [
            pa.field("offset", pa.uint64(), nullable=False),
            pa.field("data", pa.large_binary(), nullable=False),
        ]
    )


def _meta() -> Any:
    """The empty frame that describes a partition."""
    pd, pa = _module("pandas"), _module("pyarrow")
    schema = _schema().append(pa.field("path", pa.string(), nullable=False))
    return schema.empty_table().to_pandas(types_mapper=pd.ArrowDtype)


def read_logs_dataframe(
    urlpath: UrlPath,
    blocksize: int | None = DEFAULT_BLOCKSIZE,
    recovery: str = "skip",
    dialect: str = "leveldb",
    storage_options: Mapping[str, Any] | None = None,
    *,
    verify_checksums: bool = True,
    max_records: int = 65536,
    max_bytes: int = 4 << 20,
) -> Any:
    """Read logs into a Dask DataFrame of Arrow columns, one partition per range.

    The columns are offset (uint64: the record's first header), data (large_binary: the
    payload) and path (string: the file, as read_logs names it), each a pandas ArrowDtype.
    Each partition is built from Reader.iter_batches, so no Python object is made per
    record. The arguments are read_logs' (max_records and max_bytes go to iter_batches);
    damage is reported as read_logs reports it (one CorruptionWarning per damaged file).

    Returns
      A dask.dataframe.DataFrame with unknown divisions.

    Raises
      As read_logs does.
    """
    dd = _module("dask.dataframe")
    spec = _spec(recovery, dialect, verify_checksums, storage_options)
    spec = dataclasses.replace(
        spec, include_path=True, max_records=max_records, max_bytes=max_bytes
    )
    parts = _plan(urlpath, blocksize, storage_options, spec, False)
    return dd.from_map(_frame_part, parts, spec=spec, meta=_meta(), enforce_metadata=False)


def _write_part(records: Any, url: str, storage_options: dict[str, Any] | None) -> str:
    """Write one partition's records as a whole log at ``url``; return ``url``."""
    with Writer(url, "w", storage_options=storage_options) as w:
        w.write_many(records)
    return url


def to_logs(
    bag: Any,
    path: UrlPath,
    name_function: Callable[[int], str] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    compute: bool = True,
) -> Any:
    """Write a bag of records as one log per partition, in parallel, as dask.bag.to_avro.

    Arguments
      bag: a Dask bag of bytes-like records.
      path: a path or URL with one "*" ("out/part-*.log", "s3://bucket/out/*.log"),
        which becomes name_function(i) for partition i; a directory, which gets
        "0.part", "1.part"... (Dask's names); or a list of one path per partition.
        Local directories are created.
      name_function: i -> the text that replaces "*" (default: str(i)).
      storage_options: the file system's options for URLs (as for Writer).
      compute: True writes now; False returns the delayed writes.

    Returns
      The list of the logs written (compute=True), or a list of dask.delayed objects,
      one per partition, each giving its log's path or URL.

    Raises
      ImportError: dask or fsspec is missing (pip install 'leveldb-log[dask]').
      What the Writer raises, from the computation.
    """
    dask = _module("dask")
    get_fs_token_paths = _module("fsspec.core").get_fs_token_paths
    fs, _, paths = get_fs_token_paths(
        _names(path),
        mode="wb",
        num=bag.npartitions,
        name_function=name_function,
        storage_options=storage_options,
    )
    if _storage.is_local(fs):
        for p in paths:
            fs.makedirs(fs._parent(p), exist_ok=True)
        urls, options = list(paths), None
    else:
        urls, options = [fs.unstrip_protocol(p) for p in paths], dict(storage_options or {})
    write = dask.delayed(_write_part, pure=False)
    writes = [write(part, url, options) for part, url in zip(bag.to_delayed(), urls, strict=True)]
    if not compute:
        return writes
    return list(dask.compute(*writes))
