"""Batch reads of ``format("leveldb_log")``: the driver turns paths into byte ranges of
files (from their sizes alone), each executor reads its ranges into Arrow batches.

A partition is a list of pieces, (file, start, end) ranges from ``splits()``, packed as
Spark packs small files: up to ``maxPartitionBytes`` a partition, each piece counting
``openCostInBytes`` more. A record belongs to the range holding its first header, so every
record is read once, and filters on ``offset`` narrow the ranges exactly.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
from pyspark.sql.datasource import DataSourceReader, InputPartition

from leveldb_log._core import Reader
from leveldb_log._detect import detect_file_dialect
from leveldb_log._errors import Corruption, CorruptionError
from leveldb_log._splits import splits
from leveldb_log.spark import _files, _options
from leveldb_log.spark._filters import Bounds, push

__all__ = ["FilteringLogReader", "LogPartition", "LogReader", "Piece", "pack", "spark_batches"]

log = logging.getLogger("leveldb_log.spark")

_PATH = pa.field("path", pa.string(), nullable=False)


def spark_batches(
    reader: Reader,
    path: str | None = None,
    *,
    max_records: int = 65536,
    max_bytes: int = 4 << 20,
) -> Iterator[pa.RecordBatch]:
    """The reader's records as pyarrow RecordBatches in Spark's types.

    Arguments
      reader: an open Reader (advanced by the iteration, as iter_batches advances it).
      path: when given, a third column ``path`` (string) holding it on every row.
      max_records, max_bytes: as for Reader.iter_batches.

    Returns
      An iterator of RecordBatches with the columns offset (int64, Spark's long) and data
      (binary), then path (string) when asked: what a Python data source's read() may
      yield for the schema ``offset long, data binary[, path string]``.
    """
    batches = reader.iter_batches(
        max_records=max_records, max_bytes=max_bytes, offset_type="int64", data_type="binary"
    )
    for exported in batches:
        batch = pa.record_batch(exported)
        if path is not None:
            batch = batch.append_column(_PATH, pa.repeat(pa.scalar(path), batch.num_rows))
        yield batch


@dataclass(frozen=True)
class Piece:
    """A byte range of one file: the records whose first header lies in [start, end)."""

    path: str
    start: int
    end: int


class LogPartition(InputPartition):
    """The pieces one task reads, in order."""

    def __init__(self, pieces: Sequence[Piece]) -> None:
        super().__init__(tuple(pieces))
        self.pieces = tuple(pieces)


class LogReader(DataSourceReader):
    """Plans and reads ``spark.read.format("leveldb_log")``."""

    def __new__(cls, *args: Any, **kwargs: Any) -> LogReader:
        # Spark refuses a reader that defines pushFilters unless the session enables
        # spark.sql.python.filterPushdown.enabled: the filtering reader is made only where
        # Spark plans with pushdown on. (Unpickling calls __new__ without arguments.)
        if cls is LogReader and args and _pushing_down():
            cls = FilteringLogReader
        return super().__new__(cls)

    def __init__(self, options: Mapping[str, str], schema: Any) -> None:
        self.read_options = _options.read_options(options)
        self.layout = _options.layout(options)
        self.paths = _options.paths(options)
        self.bounds = Bounds()
        if self.read_options.dialect == "leveldb" and self.read_options.log_number is not None:
            raise ValueError("option logNumber applies to dialects rocksdb and pebble, not leveldb")

    def partitions(self) -> list[LogPartition]:
        """The pieces of every file, packed into partitions; no log byte is read here."""
        listed = _files.expand(self.paths, self.read_options.storage_options, self.layout.path_glob)
        pieces = []
        whole_files = self.read_options.recovery == "point_in_time"
        for path, size in listed:
            if not self.bounds.keeps_path(path):
                continue
            ranges = (
                [(0, size)]
                if whole_files
                else splits(_Sized(size), size=self.layout.partition_bytes)
            )
            for start, end in ranges:
                piece = self.bounds.narrow(Piece(path, start, end))
                if piece is not None:
                    pieces.append(piece)
        groups = pack(pieces, self.layout.partition_bytes, self.layout.open_cost)
        return [LogPartition(group) for group in groups]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Each piece's rows, as the options shape them."""
        if not isinstance(partition, LogPartition):
            return  # Spark's stand-in when there is no partition: no file to read
        for piece in partition.pieces:
            yield from _read_piece(piece, self.read_options, self.layout)


class FilteringLogReader(LogReader):
    """A LogReader that narrows its ranges and files by the filters Spark pushes."""

    def pushFilters(self, filters: list[Any]) -> list[Any]:
        """Keep what narrows ranges (``offset``) or files (``path``); give back the rest."""
        by_offset = not self.layout.corruptions  # a report's offset is no record's
        self.bounds, rest = push(filters, self.bounds, by_offset=by_offset)
        return rest


_PUSHDOWN_WORKER = "pyspark.sql.worker.data_source_pushdown_filters"


def _pushing_down() -> bool:
    """Whether the caller is Spark's planning worker that pushes filters down."""
    frame = sys._getframe(1)
    while frame is not None:
        spec = frame.f_globals.get("__spec__")
        if _PUSHDOWN_WORKER in (frame.f_globals.get("__name__"), getattr(spec, "name", None)):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


class _Sized:
    """A file's length as splits() takes it (a seekable object), from a listing: no
    second look at the file."""

    def __init__(self, size: int) -> None:
        self.size = size

    def seek(self, offset: int, whence: int = 0, /) -> int:
        return self.size if whence == 2 else offset

    def tell(self) -> int:
        return 0


def pack(pieces: list[Piece], limit: int, open_cost: int) -> list[list[Piece]]:
    """Consecutive pieces, grouped while a group's bytes (each piece counting
    ``open_cost`` more) stay within ``limit``, as Spark groups small files."""
    groups: list[list[Piece]] = []
    used = limit + 1
    for piece in pieces:
        cost = piece.end - piece.start + open_cost
        if used + cost > limit or not groups:
            groups.append([])
            used = 0
        groups[-1].append(piece)
        used += cost
    return groups


def _read_piece(
    piece: Piece,
    options: _options.ReadOptions,
    layout: _options.Layout,
    detected: str | None = None,
) -> Iterator[pa.RecordBatch]:
    """One piece's rows; its damage logged (and, with corruptions=true, its rows).
    ``detected``: the file's dialect when the caller has detected it already (the option
    ``dialect`` not given); else it is detected here."""
    found: list[Corruption] = []
    url_options = options.storage_options if _files.is_url(piece.path) else None
    dialect = options.dialect or detected or detect_file_dialect(piece.path, url_options)
    reader = _open(piece, options, dialect, found.append)
    try:
        with reader:
            if layout.corruptions:
                for _ in reader.iter_batches(max_bytes=4 << 20):
                    pass
            elif layout.decode:
                from leveldb_log._wal_rows import decode_batch

                malformed = None if options.recovery in _RAISING else _malformed(piece.path)
                decoder = _decoder(dialect, given=options.dialect is not None)
                for batch in spark_batches(reader):
                    yield decode_batch(batch, decoder, piece.path, malformed)
            else:
                yield from spark_batches(reader, piece.path if layout.include_path else None)
    except CorruptionError as e:
        raise type(e)(e.offset, e.size, e.reason, message=f"{piece.path}: {e}") from None
    finally:
        _report(piece, found)
    if layout.corruptions and found:
        yield _corruption_rows(piece.path, found)


def _decoder(dialect: str, given: bool) -> str:
    """The decoder of a file's records: its dialect's, except that a file detected as
    LevelDB's (legacy chunks only, as RocksDB writes a WAL without recycling) is decoded as
    RocksDB's batches, which LevelDB's are a subset of (their column family is then 0)."""
    return "rocksdb" if dialect == "leveldb" and not given else dialect


#: The recovery modes that raise at damage (FAILFAST's): a record no decoder takes fails too.
_RAISING = ("absolute", "tolerate_tail")


def _malformed(path: str) -> Callable[[int, CorruptionError], None]:
    """Log a record that is no write batch, which a decoding read leaves out."""

    def report(offset: int, error: CorruptionError) -> None:
        log.warning(
            "leveldb_log: %s: the record at offset %d is no write batch, left out: %s",
            path,
            offset,
            error,
        )

    return report


def _open(piece: Piece, options: _options.ReadOptions, dialect: str, found: Any) -> Reader:
    kwargs: dict[str, Any] = {
        "dialect": dialect,
        "recovery": options.recovery,
        "verify_checksums": options.verify_checksums,
        "start": piece.start,
        "end": piece.end,
        "on_corruption": found,
    }
    if dialect != "leveldb" and options.log_number is not None:
        kwargs["log_number"] = options.log_number
    if options.storage_options is not None and _files.is_url(piece.path):
        kwargs["storage_options"] = options.storage_options
    return Reader(piece.path, **kwargs)


def _report(piece: Piece, found: list[Corruption]) -> None:
    """Log the damage of one piece: Spark gives a Python source no way to send it to the
    driver, so it goes to the executor's log (its stderr), and corruptions=true reads it
    as rows."""
    if not found:
        return
    first = found[0]
    log.warning(
        "leveldb_log: %s: %d corruption(s), %d bytes dropped in bytes [%d, %d); "
        "the first at offset %d: %s",
        piece.path,
        len(found),
        sum(c.size for c in found),
        piece.start,
        piece.end,
        first.offset,
        first.reason,
    )


_REPORTS = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)


def _corruption_rows(path: str, found: list[Corruption]) -> pa.RecordBatch:
    """The reports of one piece as rows of ``corruptions=true``."""
    columns = [[path] * len(found), *map(list, zip(*found, strict=True))]
    return pa.record_batch(
        [pa.array(c, f.type) for c, f in zip(columns, _REPORTS, strict=True)], _REPORTS
    )
