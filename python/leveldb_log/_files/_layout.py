"""Partitioned writes: rows split by the values of their partition columns into Hive-style
``key=value`` folders, named as Spark names them, so that Spark's partition discovery, this
package's readers and Ray's ``Partitioning("hive")`` all read the tree back.

A value is written as its text (integers in decimal, booleans ``true``/``false``, dates
``YYYY-MM-DD``); a null or an empty string as ``__HIVE_DEFAULT_PARTITION__``; the characters
Spark escapes (``ExternalCatalogUtils.escapePathName``) as ``%XX``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from leveldb_log._files._listing import HIVE_NULL

__all__ = ["check_columns", "check_kind", "escape", "folder", "split"]

#: The characters Spark escapes in a partition folder's name (on every system but
#: Windows, where it escapes `` <>|`` too).
_ESCAPED = frozenset(chr(c) for c in range(1, 0x20)) | frozenset("\"#%'*/:=?\\\x7f{[]^")

#: Arrow types whose text Spark infers back to the same value (pyarrow.types predicates).
_KINDS = ("is_string", "is_large_string", "is_integer", "is_boolean", "is_date32")


def escape(value: str) -> str:
    """``value`` as a folder name's part, escaped as Spark escapes it."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def folder(columns: Sequence[str], values: Sequence[str | None]) -> str:
    """The relative folder ``k1=v1/k2=v2`` of one combination of partition values."""
    return "/".join(
        f"{escape(name)}={HIVE_NULL if not value else escape(value)}"
        for name, value in zip(columns, values, strict=True)
    )


def check_columns(partitions: Sequence[str], names: Sequence[str], record: str) -> None:
    """Refuse partition columns that are not among ``names``, repeat, or are the record
    column ``record``: each error names the column."""
    seen: set[str] = set()
    for name in partitions:
        if name not in names:
            raise ValueError(f"no partition column {name!r} (the columns: {', '.join(names)})")
        if name == record:
            raise ValueError(
                f"partition column {name!r} is the column written as records: name another"
            )
        if name in seen:
            raise ValueError(f"partition column {name!r} is named twice")
        seen.add(name)


def check_kind(name: str, kind: Any) -> None:
    """Refuse a partition column whose type does not read back from its text (a float,
    a timestamp, a decimal, a binary): the error names the column."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    if not any(getattr(pa.types, test)(kind) for test in _KINDS):
        raise ValueError(
            f"partition column {name!r} is {kind}: partition by a string, integer, boolean "
            "or date column (cast it)"
        )


def split(table: Any, partitions: Sequence[str], record: str) -> Iterator[tuple[str, Any]]:
    """(relative folder, the record column's values) for each combination of partition
    values in an Arrow table or record batch, in the order the combinations first appear."""
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]

    keys = []
    for name in partitions:
        column = table.column(name)
        check_kind(name, column.type)
        keys.append(pc.cast(column, pa.string()).to_pylist())
    rows: dict[tuple[str | None, ...], list[int]] = {}
    for row, key in enumerate(zip(*keys, strict=True)):
        rows.setdefault(key, []).append(row)
    values = table.column(record)
    if hasattr(values, "combine_chunks"):  # a table's column: one array to take from
        values = values.combine_chunks()
    for key, taken in rows.items():
        yield folder(partitions, key), values.take(pa.array(taken, pa.int64()))
