"""The reading of planned ranges into Arrow batches, for every engine.

One task reads its ranges in order and gives, per the spec:

- ``records``: offset and data in the Arrow types asked for, then ``path`` on request;
- ``decode``: one row per operation of a WAL's write batches (leveldb_log._wal_rows);
- ``corruptions``: the damage instead, one row per corruption: path, offset, size, reason
  (`report_schema`), and a row for a file that ends in bytes no writer leaves (not a log).

Damage is summed up once per file: when a task is done with a file, ``on_damage`` gets its
`FileDamage` (records read, corruptions, bytes dropped, records that were no write batch),
so an engine logs one line for it, never one per record. A raising recovery mode raises
CorruptionError naming the file.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from leveldb_log import _storage
from leveldb_log._core import Reader
from leveldb_log._errors import Corruption, CorruptionError, CorruptionWarning
from leveldb_log._files._plan import Range

if TYPE_CHECKING:  # pyarrow comes with the engines' extras: imported where it is used
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

__all__ = [
    "ROWS",
    "FileDamage",
    "ReadSpec",
    "check",
    "read_ranges",
    "report_schema",
    "resolve_dialect",
    "warn_damage",
]

#: What a read gives: the records, the operations of decoded WALs, or the damage.
ROWS = ("records", "decode", "corruptions")

#: The recovery modes that raise at damage; a decoded record that is no write batch
#: fails the read in them too.
RAISING = ("tolerate_tail", "absolute")

#: The reason of the report for a file that ends in bytes no writer leaves.
NOT_A_LOG = "a torn tail no writer leaves (not a log?)"


@dataclass(frozen=True)
class ReadSpec:
    """What every range of one read shares."""

    dialect: str = "auto"  # "auto": told per file (resolve_dialect)
    recovery: str = "skip"
    verify_checksums: bool = True
    log_number: int | None = None
    storage_options: dict[str, Any] | None = None
    rows: str = "records"  # one of ROWS
    include_path: bool = False
    offset_type: Literal["uint64", "int64"] = "uint64"  # int64: Spark's long
    data_type: Literal["large_binary", "binary"] = "large_binary"
    max_records: int = 65536  # in each batch
    max_bytes: int = 4 << 20  # of records in each batch
    ignore_missing: bool = False  # a file gone since the listing is read as empty
    ignore_corrupt: bool = False  # a raising mode ends a damaged file instead of the read


def check(spec: ReadSpec) -> None:
    """Refuse, on the driver, what every task would refuse: the Reader's own argument
    parser judges the options (a log number with the leveldb dialect, an unknown mode or
    dialect), over an empty log."""
    if spec.rows not in ROWS:
        raise ValueError(f"rows must be one of {', '.join(ROWS)}, not {spec.rows!r}")
    with Reader(b"", **_options(spec, spec.dialect, Range("", 0, None))):
        pass


def resolve_dialect(spec: ReadSpec, path: str) -> str:
    """The dialect a file is read in: the spec's, or for "auto" the one the C Reader tells
    from its first block (for a caller that needs the name before it reads, such as a
    stream finding a log's end; a range is read with "auto" itself)."""
    if spec.dialect != "auto":
        return spec.dialect
    with Reader(path, **_options(spec, "auto", Range(path, 0, 0))) as reader:
        return reader.dialect


def _options(spec: ReadSpec, dialect: str, piece: Range) -> dict[str, Any]:
    """The Reader's keyword arguments for one range."""
    options: dict[str, Any] = {
        "dialect": dialect,
        "recovery": spec.recovery,
        "verify_checksums": spec.verify_checksums,
        "start": piece.start,
        "end": piece.end,
    }
    if spec.log_number is not None and not (spec.dialect == "auto" and dialect == "leveldb"):
        options["log_number"] = spec.log_number
    if spec.storage_options is not None and _storage.is_url(piece.path):
        options["storage_options"] = spec.storage_options
    return options


@dataclass
class FileDamage:
    """What one task found wrong in one file."""

    path: str
    records: int = 0
    corruptions: list[Corruption] = field(default_factory=list)
    not_batches: int = 0  # decoded records that were no write batch (left out)
    first_not_batch: str | None = None
    not_a_log: Corruption | None = None
    ended: str | None = None  # ignore_corrupt / ignore_missing: why the file was left

    @property
    def dropped(self) -> int:
        return sum(c.size for c in self.corruptions)

    def summary(self) -> str | None:
        """One line for the file, or None when nothing was wrong."""
        parts = []
        if self.corruptions:
            first = self.corruptions[0]
            parts.append(
                f"{len(self.corruptions)} corruption(s), {self.dropped} bytes dropped; the "
                f"first at offset {first.offset}: {first.reason}"
            )
        if self.not_a_log is not None:
            parts.append(f"not a log? it ends in bytes no writer leaves at {self.not_a_log.offset}")
        if self.not_batches:
            parts.append(
                f"{self.not_batches} record(s) are no write batch, left out (the first: "
                f"{self.first_not_batch})"
            )
        if self.ended is not None:
            parts.append(self.ended)
        if not parts:
            return None
        return f"{self.path}: {self.records} record(s) read; " + "; ".join(parts)

    def reports(self) -> list[Corruption]:
        """Every report of the file, the not-a-log one included."""
        return [*self.corruptions, *([self.not_a_log] if self.not_a_log else [])]


def report_schema(offset_type: str = "uint64") -> pa.Schema:
    """The rows of ``corruptions``: path, offset, size, reason."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    number = pa.int64() if offset_type == "int64" else pa.uint64()
    return pa.schema(
        [
            pa.field("path", pa.string(), nullable=False),
            pa.field("offset", number, nullable=False),
            pa.field("size", number, nullable=False),
            pa.field("reason", pa.string(), nullable=False),
        ]
    )


def read_ranges(
    pieces: Iterable[Range],
    spec: ReadSpec,
    on_damage: Callable[[FileDamage], object],
    dialects: Callable[[Range], str | None] = lambda piece: None,
    finish: Callable[[Range, pa.RecordBatch], pa.RecordBatch] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The batches of a task's ranges, in order; ``on_damage`` hears once of each file
    with something wrong, when the task is done with it (with corruptions too, before its
    rows). ``dialects``: a range's dialect when the caller knows it already.
    ``finish``: what the engine does to each batch of rows (not to reports) last, such
    as adding partition columns."""
    damage: FileDamage | None = None
    for piece in pieces:
        if damage is None or damage.path != piece.path:
            if damage is not None:
                yield from _finish(damage, spec, on_damage)
            damage = FileDamage(piece.path)
        for batch in _read_range(piece, spec, damage, dialects(piece)):
            yield batch if finish is None else finish(piece, batch)
    if damage is not None:
        yield from _finish(damage, spec, on_damage)


def _finish(
    damage: FileDamage, spec: ReadSpec, on_damage: Callable[[FileDamage], object]
) -> Iterator[pa.RecordBatch]:
    if damage.summary() is not None:
        on_damage(damage)
    found = damage.reports()
    if spec.rows == "corruptions" and found:
        yield _report_rows(damage.path, found, spec.offset_type)


def _report_rows(path: str, found: list[Corruption], offset_type: str) -> pa.RecordBatch:
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    schema = report_schema(offset_type)
    columns = [[path] * len(found), *map(list, zip(*found, strict=True))]
    return pa.record_batch(
        [pa.array(c, f.type) for c, f in zip(columns, schema, strict=True)], schema
    )


def _read_range(
    piece: Range, spec: ReadSpec, damage: FileDamage, dialect: str | None
) -> Iterator[pa.RecordBatch]:
    try:
        dialect = dialect or spec.dialect  # "auto": the Reader tells it from block 0
        reader = Reader(
            piece.path, on_corruption=damage.corruptions.append, **_options(spec, dialect, piece)
        )
    except FileNotFoundError:
        if not spec.ignore_missing:
            raise
        damage.ended = "gone since it was listed: left out (missing files ignored)"
        return
    try:
        with reader:
            for batch in _batches(reader, spec, damage):
                if spec.rows != "corruptions":
                    yield _shape(batch, piece, spec, damage, reader.dialect)
    except CorruptionError as e:
        if not spec.ignore_corrupt:
            named = str(e) if str(e).startswith(piece.path) else f"{piece.path}: {e}"
            raise type(e)(e.offset, e.size, e.reason, message=named) from None
        if e.corruption not in damage.corruptions:  # on_corruption heard of it first
            damage.corruptions.append(e.corruption)
        damage.ended = f"the rest of it left out (corrupt files ignored) after: {e}"


def _batches(reader: Reader, spec: ReadSpec, damage: FileDamage) -> Iterator[pa.RecordBatch]:
    """The reader's batches; the warning of a file that is no log is kept as a report
    (each batch is read inside catch_warnings, never across a yield)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    batches = reader.iter_batches(
        max_records=spec.max_records,
        max_bytes=spec.max_bytes,
        offset_type=spec.offset_type,
        data_type=spec.data_type,
    )
    while True:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CorruptionWarning)
            exported = next(batches, None)
        for w in caught:
            corruption = getattr(w.message, "corruption", None)
            if isinstance(w.message, CorruptionWarning) and corruption is not None:
                damage.not_a_log = damage.not_a_log or corruption
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if exported is None:
            return
        batch = pa.record_batch(exported)
        damage.records += batch.num_rows
        yield batch


def _shape(
    batch: pa.RecordBatch, piece: Range, spec: ReadSpec, damage: FileDamage, dialect: str
) -> pa.RecordBatch:
    """One batch of records as the spec's rows."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    if spec.rows == "decode":
        from leveldb_log._wal_rows import decode_batch

        def not_batch(offset: int, error: CorruptionError) -> None:
            damage.not_batches += 1
            if damage.first_not_batch is None:
                damage.first_not_batch = f"offset {offset}: {error}"

        malformed = None if spec.recovery in RAISING else not_batch
        return decode_batch(batch, _decoder(spec, dialect), piece.path, malformed)
    if spec.include_path:
        path = pa.field("path", pa.string(), nullable=False)
        return batch.append_column(path, pa.repeat(pa.scalar(piece.path), batch.num_rows))
    return batch


def _decoder(spec: ReadSpec, dialect: str) -> str:
    """How a file's records are decoded: as its dialect's batches, except that a file
    told LevelDB's by "auto" is decoded as RocksDB's (a RocksDB WAL without recycling is
    framed as LevelDB's, and LevelDB's batches read the same, in column family 0)."""
    return "rocksdb" if dialect == "leveldb" and spec.dialect == "auto" else dialect


def warn_damage(damage: FileDamage) -> None:
    """One CorruptionWarning for a file with something wrong: for engines that show a
    task's warnings (Ray in the driver's output, Dask where the partition is read)."""
    found = damage.reports()
    text = f"{damage.summary()} (read with corruptions to list every report)"
    warnings.warn(CorruptionWarning(text, found[0] if found else None), stacklevel=2)
