"""The options of ``format("leveldb_log")``, parsed once on the driver into typed values.

Spark hands a data source its options as strings in a case-insensitive mapping; each parser
here names the option and the values it takes when a value is wrong, so a typo fails the query
when it is planned, not a task later.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from leveldb_log._core import RECOVERY_MODES
from leveldb_log._dialects import DIALECTS

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

#: Spark's parse modes (as its CSV and JSON sources spell them) and the recovery mode each
#: means when ``recovery`` is not given. DROPMALFORMED drops what is damaged, as PERMISSIVE
#: does: a log has no malformed row to keep beside the good ones.
MODES = {"PERMISSIVE": "skip", "DROPMALFORMED": "skip", "FAILFAST": "absolute"}


def text(options: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    """The option's string, or default when it is not set."""
    value = options.get(name)
    return default if value is None else str(value)


def flag(options: Mapping[str, str], name: str, default: bool) -> bool:
    """A boolean option: "true" or "false", in any case."""
    value = options.get(name)
    if value is None:
        return default
    lowered = str(value).strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError(f"option {name} must be true or false, not {value!r}")
    return lowered == "true"


def whole(
    options: Mapping[str, str], name: str, default: int | None, minimum: int = 0
) -> int | None:
    """A whole-number option of at least ``minimum``."""
    value = options.get(name)
    if value is None:
        return default
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f"option {name} must be a whole number, not {value!r}") from None
    if number < minimum:
        raise ValueError(f"option {name} must be at least {minimum}, not {number}")
    return number


def choice(
    options: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str | None
) -> str | None:
    """An option that takes one of ``allowed`` (compared without case)."""
    value = options.get(name)
    if value is None:
        return default
    for candidate in allowed:
        if str(value).strip().lower() == candidate.lower():
            return candidate
    raise ValueError(f"option {name} must be one of {', '.join(allowed)}, not {value!r}")


def paths(options: Mapping[str, str]) -> list[str]:
    """What ``load()`` was given: Spark passes one path as ``path`` and several as ``paths``
    (a JSON array)."""
    found: list[str] = []
    if options.get("paths"):
        found += [str(p) for p in json.loads(str(options["paths"]))]
    if options.get("path"):
        found.append(str(options["path"]))
    if not found:
        raise ValueError("no path: pass one or more paths, globs, folders or URLs to load()")
    return found


def storage_options(options: Mapping[str, str]) -> dict[str, Any] | None:
    """``storageOptions``: fsspec's options for URLs, as a JSON object."""
    value = options.get("storageOptions")
    if value is None:
        return None
    try:
        parsed = json.loads(str(value))
    except json.JSONDecodeError as e:
        raise ValueError(f"option storageOptions must be a JSON object: {e}") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"option storageOptions must be a JSON object, not {value!r}")
    return parsed


@dataclass(frozen=True)
class ReadOptions:
    """What every reading of ``leveldb_log`` (batch or streaming) shares."""

    dialect: str | None  # None: detected per file
    recovery: str
    verify_checksums: bool
    log_number: int | None
    storage_options: dict[str, Any] | None = field(default=None)


def read_options(options: Mapping[str, str]) -> ReadOptions:
    """The reading options: ``dialect``, ``recovery`` (or Spark's ``mode``),
    ``verifyChecksums``, ``logNumber`` and ``storageOptions``."""
    mode = choice(options, "mode", tuple(MODES), None)
    recovery = choice(options, "recovery", tuple(RECOVERY_MODES), None)
    if mode is not None and recovery is not None and MODES[mode] != recovery:
        raise ValueError(
            f"options mode={mode} and recovery={recovery} disagree: mode {mode} means "
            f"recovery {MODES[mode]}; give one of them"
        )
    return ReadOptions(
        dialect=_dialect(options),
        recovery=recovery or MODES[mode or "PERMISSIVE"],
        verify_checksums=flag(options, "verifyChecksums", True),
        log_number=whole(options, "logNumber", None),
        storage_options=storage_options(options),
    )


#: Spark's default for ``spark.sql.files.maxPartitionBytes`` and ``openCostInBytes``.
DEFAULT_PARTITION_BYTES = 128 << 20
DEFAULT_OPEN_COST = 4 << 20


@dataclass(frozen=True)
class Layout:
    """How a batch read of ``leveldb_log`` is cut into partitions and what its rows are."""

    include_path: bool
    decode: bool
    corruptions: bool
    partition_bytes: int
    open_cost: int
    path_glob: str | None


def layout(options: Mapping[str, str]) -> Layout:
    """The options that shape a batch read: ``includePath``, ``decode``, ``corruptions``,
    ``maxPartitionBytes``, ``openCostInBytes`` and ``pathGlobFilter``."""
    decode = flag(options, "decode", False)
    corruptions = flag(options, "corruptions", False)
    if decode and corruptions:
        raise ValueError("options decode and corruptions exclude each other: give one")
    return Layout(
        include_path=flag(options, "includePath", False),
        decode=decode,
        corruptions=corruptions,
        partition_bytes=whole(options, "maxPartitionBytes", DEFAULT_PARTITION_BYTES, 1) or 1,
        open_cost=whole(options, "openCostInBytes", DEFAULT_OPEN_COST, 0) or 0,
        path_glob=text(options, "pathGlobFilter"),
    )


def read_schema(options: Mapping[str, str]) -> StructType:
    """The rows of a batch or streaming read, as a pyspark ``StructType``:

    - ``offset long, data binary``, then ``path string`` with ``includePath=true``;
    - ``decode=true``: ``path string, offset long, sequence long, op string, cf long,
      key binary, value binary`` (one row per operation of a WAL);
    - ``corruptions=true``: ``path string, offset long, size long, reason string`` (one
      row per corruption the reading reports).
    """
    from pyspark.sql.types import (
        BinaryType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    shape = layout(options)
    if shape.decode:
        columns = [
            ("path", StringType()),
            ("offset", LongType()),
            ("sequence", LongType()),
            ("op", StringType()),
            ("cf", LongType()),
            ("key", BinaryType()),
            ("value", BinaryType()),
        ]
    elif shape.corruptions:
        columns = [
            ("path", StringType()),
            ("offset", LongType()),
            ("size", LongType()),
            ("reason", StringType()),
        ]
    else:
        columns = [("offset", LongType()), ("data", BinaryType())]
        if shape.include_path:
            columns.append(("path", StringType()))
    return StructType(
        [StructField(name, kind, nullable=name in NULLABLE) for name, kind in columns]
    )


#: The columns that may hold nulls: those of a decoded operation without a sequence
#: number, a column family, a key or a value (leveldb_log._wal_rows says which).
NULLABLE = frozenset({"sequence", "cf", "key", "value"})


def _dialect(options: Mapping[str, str]) -> str | None:
    """``dialect``: a dialect's name, or ``auto`` (the default) to detect it per file."""
    value = choice(options, "dialect", (*DIALECTS, "auto"), "auto")
    return None if value == "auto" else value
