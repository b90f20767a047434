"""Batch reads of ``format("leveldb_log")``: the driver lists the files (leveldb_log._files,
Spark's convention) and cuts them into byte ranges from the listing's sizes; each executor
reads its ranges into Arrow batches in Spark's types.

A partition is a list of ranges, packed as Spark packs small files: up to
``maxPartitionBytes`` a partition, each range counting ``openCostInBytes`` more. A record
belongs to the range holding its first header, so every record is read once, and filters on
``offset`` narrow the ranges exactly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from leveldb_log._files._listing import Entry, list_files
from leveldb_log._files._plan import Range, pack, plan
from leveldb_log._files._read import FileDamage, ReadSpec, check, read_ranges
from leveldb_log.spark import _options
from leveldb_log.spark._filters import Bounds, push
from leveldb_log.spark._partitions import Columns, partition_test

__all__ = [
    "FilteringLogReader",
    "LogPartition",
    "LogReader",
    "as_schema",
    "listing",
    "log_damage",
    "read_task",
    "schema_for",
    "shaped_task",
    "source_schema",
]

log = logging.getLogger("leveldb_log.spark")


class LogPartition(InputPartition):
    """The ranges one task reads, in order."""

    def __init__(self, pieces: Sequence[Range]) -> None:
        super().__init__(tuple(pieces))
        self.pieces = tuple(pieces)


class LogReader(DataSourceReader):
    """Plans and reads ``spark.read.format("leveldb_log")``."""

    def __init__(self, options: Mapping[str, str], schema: StructType | None) -> None:
        self.spec = _options.read_spec(options)
        self.layout = _options.layout(options)
        check(self.spec)
        self.entries, self.columns = listing(options, self.spec)
        self.schema = schema_for(options, self.columns, schema)
        self.bounds = Bounds()
        self.kept: list[Callable[[dict[str, Any]], bool]] = []  # tests of partition values

    def partitions(self) -> list[LogPartition]:
        """The ranges of every file, packed into partitions; no log byte is read here."""
        listed = [e for e in self.entries if self._keeps(e)]
        ranges = plan(listed, self.layout.partition_bytes, self.spec.recovery)
        pieces = [p for p in map(self.bounds.narrow, ranges) if p is not None]
        groups = pack(pieces, self.layout.partition_bytes, self.layout.open_cost)
        return [LogPartition(group) for group in groups]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Each range's rows, as the options shape them."""
        if not isinstance(partition, LogPartition):
            return  # Spark's stand-in when there is no partition: no file to read
        yield from shaped_task(partition.pieces, self.spec, self.columns, self.schema)

    def _keeps(self, entry: Entry) -> bool:
        if not self.bounds.keeps_path(entry.path):
            return False
        values = self.columns.values(entry.partition) if self.kept else {}
        return all(test(values) for test in self.kept)


class FilteringLogReader(LogReader):
    """A LogReader that narrows its ranges and files by the filters Spark pushes: the one
    ``reader()`` makes when the session enables ``spark.sql.python.filterPushdown.enabled``
    (Spark refuses a reader with pushFilters otherwise)."""

    def pushFilters(self, filters: list[Any]) -> list[Any]:
        """Keep what narrows ranges (``offset``) or files (``path``); give back the rest."""
        by_offset = self.spec.rows != "corruptions"  # a report's offset is no record's
        self.bounds, rest = push(filters, self.bounds, by_offset=by_offset)
        for f in rest:
            test = partition_test(f, self.columns.names)
            if test is not None:
                self.kept.append(test)  # prunes files; Spark still filters the rows
        return rest


def read_task(
    pieces: Sequence[Range],
    spec: ReadSpec,
    dialects: Mapping[str, str | None] | None = None,
    finish: Callable[[Range, pa.RecordBatch], pa.RecordBatch] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The rows of a task's ranges; each damaged file logged once (log_damage).
    ``dialects``: each file's dialect, where the caller knows it already."""
    known = dialects or {}
    yield from read_ranges(pieces, spec, log_damage, lambda piece: known.get(piece.path), finish)


def shaped_task(
    pieces: Sequence[Range],
    spec: ReadSpec,
    columns: Columns,
    schema: StructType,
    dialects: Mapping[str, str | None] | None = None,
) -> Iterator[pa.RecordBatch]:
    """read_task's rows as ``schema`` has them: with their partition columns (but for
    reports), in its order and nullability."""
    target = to_arrow_schema(schema, timezone="UTC")
    if spec.rows == "corruptions":
        for batch in read_task(pieces, spec, dialects):
            yield as_schema(batch, None, None, target)
        return

    def finish(piece: Range, batch: pa.RecordBatch) -> pa.RecordBatch:
        return as_schema(batch, piece, columns, target)

    yield from read_task(pieces, spec, dialects, finish)


def listing(
    options: Mapping[str, str], spec: ReadSpec, missing_ok: bool = False
) -> tuple[list[Entry], Columns]:
    """The files of a read, and their partition columns, typed as Spark types them.
    ``missing_ok``: a path that names nothing yet lists no file (a stream's)."""
    found = _options.list_options(options, spec.storage_options)
    try:
        entries = list_files(_options.paths(options), found)
    except FileNotFoundError:
        if not missing_ok:
            raise
        entries = []
    inference = _options.flag(options, _options.TYPE_INFERENCE, True)
    zone = _options.text(options, _options.TIME_ZONE) or "UTC"
    return entries, Columns(entries, inference, zone)


def _own_schema(options: Mapping[str, str], columns: Columns) -> StructType:
    """The rows the options ask for, then the partition columns (not for reports)."""
    schema = _options.read_schema(options)
    if _options.flag(options, "corruptions", False):
        return schema
    for field in columns.fields():
        if field.name not in schema.fieldNames():
            schema = schema.add(field)
    return schema


def source_schema(options: Mapping[str, str]) -> StructType:
    """The schema of ``format("leveldb_log")`` when the user gives none."""
    spec = _options.read_spec(options)
    return _own_schema(options, listing(options, spec, missing_ok=True)[1])


def schema_for(
    options: Mapping[str, str], columns: Columns, wanted: StructType | None
) -> StructType:
    """The rows a read gives: the user's schema (checked), else its own."""
    own = _own_schema(options, columns)
    return own if wanted is None else _served(wanted, own)


def _served(wanted: StructType, own: StructType) -> StructType:
    """A user's schema, when every column is one the read has, of the same type (in any
    order, nullable or not); else ValueError naming the column, when the query is planned."""
    have = {f.name.lower(): f for f in own.fields}
    for field in wanted.fields:
        mine = have.get(field.name.lower())
        if mine is None:
            raise ValueError(
                f"the schema's column {field.name!r} is none a leveldb_log read gives (it "
                f"gives {', '.join(own.fieldNames())}, as its options ask)"
            )
        if mine.dataType != field.dataType:
            raise ValueError(
                f"the schema's column {field.name!r} is {field.dataType.simpleString()}, "
                f"and the read gives it as {mine.dataType.simpleString()}"
            )
    return wanted


def as_schema(
    batch: pa.RecordBatch, piece: Range | None, columns: Columns | None, target: pa.Schema
) -> pa.RecordBatch:
    """A batch with the partition columns added, in the columns and order of ``target``
    (the user's schema, or the read's own), each as nullable as the schema says."""
    if columns is not None and piece is not None and columns.names:
        arrays = columns.arrays(piece.partition, batch.num_rows)
        for name, array in zip(columns.names, arrays, strict=True):
            if name not in batch.schema.names:
                batch = batch.append_column(name, array)
    by_name = {n.lower(): i for i, n in enumerate(batch.schema.names)}
    arrays = [batch.column(by_name[f.name.lower()]).cast(f.type) for f in target]
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def log_damage(damage: FileDamage) -> None:
    """One line for a damaged file: Spark gives a Python source no way to send it to the
    driver, so it goes to the executor's log (its stderr); corruptions=true reads it as
    rows."""
    log.warning("leveldb_log: %s", damage.summary())
