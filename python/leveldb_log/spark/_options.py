"""The options of ``format("leveldb_log")``, parsed once on the driver into typed values.

Spark hands a data source its options as strings in a case-insensitive mapping; each parser
here names the option and the values it takes when a value is wrong, so a typo fails the query
when it is planned, not a task later.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from leveldb_log._core import RECOVERY_MODES
from leveldb_log._dialects import DIALECTS
from leveldb_log._files._listing import ListOptions
from leveldb_log._files._read import ReadSpec

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


def read_spec(options: Mapping[str, str]) -> ReadSpec:
    """How every range is read (leveldb_log._files._read), in Spark's types: ``dialect``,
    ``recovery`` (or Spark's ``mode``), ``verifyChecksums``, ``logNumber``,
    ``storageOptions``, ``decode``, ``corruptions``, ``includePath``,
    ``ignoreCorruptFiles`` and ``ignoreMissingFiles``."""
    mode = choice(options, "mode", tuple(MODES), None)
    recovery = choice(options, "recovery", tuple(RECOVERY_MODES), None)
    if mode is not None and recovery is not None and MODES[mode] != recovery:
        raise ValueError(
            f"options mode={mode} and recovery={recovery} disagree: mode {mode} means "
            f"recovery {MODES[mode]}; give one of them"
        )
    decode = flag(options, "decode", False)
    corruptions = flag(options, "corruptions", False)
    if decode and corruptions:
        raise ValueError("options decode and corruptions exclude each other: give one")
    return ReadSpec(
        dialect=choice(options, "dialect", (*DIALECTS, "auto"), "auto") or "auto",
        recovery=recovery or MODES[mode or "PERMISSIVE"],
        verify_checksums=flag(options, "verifyChecksums", True),
        log_number=whole(options, "logNumber", None),
        storage_options=storage_options(options),
        rows="decode" if decode else "corruptions" if corruptions else "records",
        include_path=flag(options, "includePath", False),
        offset_type="int64",
        data_type="binary",
        ignore_missing=flag(options, "ignoreMissingFiles", False),
        ignore_corrupt=flag(options, "ignoreCorruptFiles", False),
    )


def list_options(options: Mapping[str, str], storage: dict[str, Any] | None) -> ListOptions:
    """How the paths are listed, as Spark's file sources list them: ``pathGlobFilter``,
    ``recursiveFileLookup``, ``basePath``, ``modifiedBefore``, ``modifiedAfter``,
    ``ignoreMissingFiles`` and ``manifest`` (a database folder's MANIFEST too)."""
    return ListOptions(
        convention="spark",
        storage_options=storage,
        name_glob=text(options, "pathGlobFilter"),
        recursive=flag(options, "recursiveFileLookup", False),
        base_path=text(options, "basePath"),
        modified_after_ns=_instant(options, "modifiedAfter"),
        modified_before_ns=_instant(options, "modifiedBefore"),
        ignore_missing=flag(options, "ignoreMissingFiles", False),
        manifest=flag(options, "manifest", False),
    )


#: Whether partition values are typed (register() reads the session's setting).
TYPE_INFERENCE = "spark.sql.sources.partitionColumnTypeInference.enabled"

#: Whether the session lets Python sources push filters down (register() reads it).
PUSHDOWN = "spark.sql.python.filterPushdown.enabled"

#: The session's time zone, which register() takes (Spark reads modifiedBefore and
#: modifiedAfter in it when they name no zone).
TIME_ZONE = "spark.sql.session.timeZone"


def _instant(options: Mapping[str, str], name: str) -> int | None:
    """``modifiedBefore`` / ``modifiedAfter``: a time as Spark takes it
    (``2026-11-01T10:00:00``, in the session's time zone), in nanoseconds since the epoch."""
    import datetime
    import zoneinfo

    value = text(options, name)
    if value is None:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(
            f"option {name} must be a time as YYYY-MM-DDTHH:mm:ss, not {value!r}"
        ) from None
    if moment.tzinfo is None:
        zone = text(options, TIME_ZONE) or "UTC"
        moment = moment.replace(tzinfo=zoneinfo.ZoneInfo(zone))
    return int(moment.timestamp() * 1_000_000) * 1000


#: Spark's default for ``spark.sql.files.maxPartitionBytes`` and ``openCostInBytes``.
DEFAULT_PARTITION_BYTES = 128 << 20
DEFAULT_OPEN_COST = 4 << 20


@dataclass(frozen=True)
class Layout:
    """How a read of ``leveldb_log`` is cut into partitions."""

    partition_bytes: int
    open_cost: int


def layout(options: Mapping[str, str]) -> Layout:
    """``maxPartitionBytes`` and ``openCostInBytes``."""
    return Layout(
        partition_bytes=whole(options, "maxPartitionBytes", DEFAULT_PARTITION_BYTES, 1) or 1,
        open_cost=whole(options, "openCostInBytes", DEFAULT_OPEN_COST, 0) or 0,
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

    shape = read_spec(options)
    if shape.rows == "decode":
        columns = [
            ("path", StringType()),
            ("offset", LongType()),
            ("sequence", LongType()),
            ("op", StringType()),
            ("cf", LongType()),
            ("key", BinaryType()),
            ("value", BinaryType()),
        ]
    elif shape.rows == "corruptions":
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
