"""Partition columns as Spark's file sources type them: the values of ``key=value`` folders
(leveldb_log._files._listing finds them) inferred as int, long, double, timestamp, date or
string (``spark.sql.sources.partitionColumnTypeInference.enabled``), ``__HIVE_DEFAULT_
PARTITION__`` as null, the types of one column widened across folders as Spark widens them
(PartitioningUtils); and the filters on them that prune files.
"""

from __future__ import annotations

import datetime
import re
import zoneinfo
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
)
from pyspark.sql.types import (
    DataType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    TimestampType,
)

from leveldb_log._files._listing import Entry

__all__ = ["Columns", "columns_of"]

_INT = re.compile(r"[+-]?\d+")
_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?")

#: The inferred kinds, each with the kinds it widens to (Spark's findWiderTypeForTwo).
_ORDER = {"null": 0, "int": 1, "long": 2, "double": 3}
_SPARK_TYPES: dict[str, DataType] = {
    "null": StringType(),  # a column of nulls only: Spark gives it string
    "int": IntegerType(),
    "long": LongType(),
    "double": DoubleType(),
    "date": DateType(),
    "timestamp": TimestampType(),
    "string": StringType(),
}


def infer(raw: str | None, inference: bool) -> str:
    """The kind of one folder's value, as PartitioningUtils.inferPartitionColumnValue."""
    if raw is None:
        return "null"
    if not inference:
        return "string"
    if _INT.fullmatch(raw):
        return (
            "int"
            if -(2**31) <= int(raw) < 2**31
            else "long"
            if -(2**63) <= int(raw) < 2**63
            else "string"
        )
    if _DOUBLE.fullmatch(raw.strip()):
        return "double"
    if _TIMESTAMP.fullmatch(raw) and _parse_timestamp(raw, "UTC") is not None:
        return "timestamp"
    if _DATE.fullmatch(raw) and _parse_date(raw) is not None:
        return "date"
    return "string"


def wider(a: str, b: str) -> str:
    """The kind both values fit in."""
    if a == b or b == "null":
        return a
    if a == "null":
        return b
    if a in _ORDER and b in _ORDER:
        return a if _ORDER[a] > _ORDER[b] else b
    if {a, b} == {"date", "timestamp"}:
        return "timestamp"
    return "string"


def _parse_date(raw: str) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(raw)
    except ValueError:
        return None


def _parse_timestamp(raw: str, zone: str) -> datetime.datetime | None:
    try:
        moment = datetime.datetime.fromisoformat(raw)
    except ValueError:
        return None
    return moment.replace(tzinfo=zoneinfo.ZoneInfo(zone))


def value(raw: str | None, kind: str, zone: str) -> Any:
    """A folder's value as a Python value of its column's kind (None when it is none of
    that kind: a folder a stream found after the column was typed)."""
    try:
        return _value(raw, kind, zone)
    except ValueError:
        return None


def _value(raw: str | None, kind: str, zone: str) -> Any:
    if raw is None:
        return None
    if kind in ("int", "long"):
        return int(raw)
    if kind == "double":
        text = raw.strip().rstrip("fFdD")
        return float(text.replace("Infinity", "inf"))
    if kind == "timestamp":
        return _parse_timestamp(raw, zone) if _TIMESTAMP.fullmatch(raw) else None
    if kind == "date":
        return _parse_date(raw)
    return raw


class Columns:
    """The partition columns of one listing: names, kinds, and each file's typed values."""

    def __init__(self, entries: Sequence[Entry], inference: bool, zone: str) -> None:
        self.names: list[str] = []
        kinds: dict[str, str] = {}
        for entry in entries:
            for key, raw in entry.partition:
                if key not in kinds:
                    self.names.append(key)
                kinds[key] = wider(kinds.get(key, "null"), infer(raw, inference))
        self.kinds = kinds
        self.zone = zone

    def fields(self) -> list[StructField]:
        return [StructField(n, _SPARK_TYPES[self.kinds[n]], nullable=True) for n in self.names]

    def values(self, partition: Iterable[tuple[str, str | None]]) -> dict[str, Any]:
        """A file's typed values, by column."""
        return {key: value(raw, self.kinds[key], self.zone) for key, raw in partition}

    def arrays(self, partition: Iterable[tuple[str, str | None]], rows: int) -> list[Any]:
        """The partition columns of a batch of ``rows`` rows from one file (Arrow)."""
        values = self.values(partition)
        return [
            pa.repeat(pa.scalar(values.get(n), _arrow_type(self.kinds[n])), rows)
            for n in self.names
        ]


def _arrow_type(kind: str) -> pa.DataType:
    return {
        "int": pa.int32(),
        "long": pa.int64(),
        "double": pa.float64(),
        "date": pa.date32(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }.get(kind, pa.string())


def columns_of(entries: Sequence[Entry], inference: bool, zone: str) -> Columns:
    return Columns(entries, inference, zone)


def partition_test(f: Any, names: Sequence[str]) -> Any:
    """A test of a file's typed values (a dict) for a filter on a partition column, or
    None when the filter is on no partition column or of a kind not handled here. It
    never drops a file the filter would keep rows of (a value it cannot compare keeps the
    file), and Spark still applies the filter to the rows."""
    negate = isinstance(f, Not)
    inner = f.child if negate else f
    column = getattr(inner, "attribute", None)
    if column is None or len(column) != 1 or column[0] not in names:
        return None
    test = _test(inner, column[0])
    if test is None:
        return None

    def keeps(values: dict[str, Any]) -> bool:
        verdict = test(values)
        return True if verdict is None else verdict != negate

    return keeps


def _test(f: Any, name: str) -> Any:
    """True, False, or None where the value cannot be compared with the filter's."""
    target: Any = getattr(f, "value", None)
    if isinstance(f, In):
        targets = list(target)
        return lambda values: values.get(name) in targets
    checks: dict[type, Callable[[Any], bool]] = {
        EqualTo: lambda v: v is not None and v == target,
        EqualNullSafe: lambda v: v == target,
        GreaterThan: lambda v: v is not None and v > target,
        GreaterThanOrEqual: lambda v: v is not None and v >= target,
        LessThan: lambda v: v is not None and v < target,
        LessThanOrEqual: lambda v: v is not None and v <= target,
        IsNull: lambda v: v is None,
        IsNotNull: lambda v: v is not None,
    }
    check = checks.get(type(f))
    if check is None:
        return None

    def test(values: dict[str, Any]) -> bool | None:
        try:
            return bool(check(values.get(name)))
        except TypeError:
            return None

    return test
