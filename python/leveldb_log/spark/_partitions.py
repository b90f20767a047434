"""Partition columns as Spark's file sources type them: the values of ``key=value`` folders
(leveldb_log._files._listing finds them) inferred as int, long, decimal (an integer beyond a
long, or a number in Java's BigDecimal syntax without a fraction, up to 38 digits), double,
timestamp, date or string (``spark.sql.sources.partitionColumnTypeInference.enabled``),
``__HIVE_DEFAULT_PARTITION__`` as null, the types of one column widened across folders as
Spark widens them (PartitioningUtils); and the filters on them that prune files.
tests/spark/test_layouts.py holds each rule to Spark's own text source, value by value.
"""

from __future__ import annotations

import datetime
import decimal
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
    DecimalType,
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
_BIG_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")  # Java's BigDecimal(String)
_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# Spark parses partition timestamps as "yyyy-MM-dd HH:mm:ss[.S]": one digit of fraction.
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d)?")
#: Spark's widest decimal, and the decimal precisions an int and a long widen to.
_MAX_PRECISION = 38
_INTEGRAL_PRECISION = {"int": 10, "long": 20}
_EXACT = decimal.Context(prec=2 * _MAX_PRECISION)

#: The numeric kinds in the order they widen (Spark's findWiderTypeForTwo); a decimal kind is
#: "decimal(P)", of precision P and scale 0.
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
    if _INT.fullmatch(raw) and -(2**63) <= int(raw) < 2**63:
        return "int" if -(2**31) <= int(raw) < 2**31 else "long"
    precision = _decimal_precision(raw)
    if precision is not None:
        return f"decimal({precision})"
    if _DOUBLE.fullmatch(raw.strip()):
        return "double"
    if _TIMESTAMP.fullmatch(raw) and _parse_timestamp(raw, "UTC") is not None:
        return "timestamp"
    if _DATE.fullmatch(raw) and _parse_date(raw) is not None:
        return "date"
    return "string"


def _decimal_precision(raw: str) -> int | None:
    """The precision of raw as Spark's decimal of scale 0, when it is one: a BigDecimal of
    scale 0 or less (a negative scale counts as that many more digits), at most 38 digits."""
    if not _BIG_DECIMAL.fullmatch(raw):
        return None
    _, digits, exponent = decimal.Decimal(raw).as_tuple()
    assert isinstance(exponent, int)  # finite: the pattern admits no NaN or Infinity
    if exponent < 0:
        return None  # a fraction: double
    precision = len(digits) + exponent
    return precision if precision <= _MAX_PRECISION else None


def _precision(kind: str) -> int | None:
    """The precision of a decimal kind, or of the decimal an int or a long widens to."""
    if kind.startswith("decimal("):
        return int(kind[len("decimal(") : -1])
    return _INTEGRAL_PRECISION.get(kind)


def wider(a: str, b: str) -> str:
    """The kind both values fit in."""
    if a == b or b == "null":
        return a
    if a == "null":
        return b
    if a in _ORDER and b in _ORDER:
        return a if _ORDER[a] > _ORDER[b] else b
    pa_, pb = _precision(a), _precision(b)
    if pa_ and pb:  # a decimal with an int, a long or a decimal (with a double: string)
        return f"decimal({min(_MAX_PRECISION, max(pa_, pb))})"
    if {a, b} == {"date", "timestamp"}:
        return "timestamp"
    return "string"


def _decimal_value(raw: str, kind: str) -> decimal.Decimal | None:
    """raw as a decimal of scale 0 that fits the kind's precision, else None."""
    if not _BIG_DECIMAL.fullmatch(raw):
        return None
    exact = _EXACT.quantize(decimal.Decimal(raw), decimal.Decimal(1))
    if exact != decimal.Decimal(raw) or len(exact.as_tuple().digits) > (_precision(kind) or 0):
        return None
    return exact


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
    except (ValueError, ArithmeticError):  # decimal's errors are ArithmeticErrors
        return None


def _value(raw: str | None, kind: str, zone: str) -> Any:
    if raw is None:
        return None
    if kind in ("int", "long"):
        return int(raw)
    if kind.startswith("decimal("):
        return _decimal_value(raw, kind)
    if kind == "double":
        text = raw.strip().rstrip("fFdD")
        return float(text.replace("Infinity", "inf"))
    if kind == "timestamp":  # a date in a column widened to timestamps: its midnight
        if _DATE.fullmatch(raw):
            raw += " 00:00:00"
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
        return [StructField(n, _spark_type(self.kinds[n]), nullable=True) for n in self.names]

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


def _spark_type(kind: str) -> DataType:
    precision = _precision(kind)
    if kind.startswith("decimal(") and precision is not None:
        return DecimalType(precision, 0)
    return _SPARK_TYPES[kind]


def _arrow_type(kind: str) -> pa.DataType:
    if kind.startswith("decimal("):
        return pa.decimal128(_precision(kind), 0)
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
