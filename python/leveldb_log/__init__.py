"""Read and write LevelDB's log format: CRC-32C-checked records in 32 KiB blocks.

>>> import leveldb_log
>>> with leveldb_log.Writer("events.log") as w:     # doctest: +SKIP
...     w.write(b"payload")
"""

from __future__ import annotations

from enum import IntEnum

from leveldb_log._core import (
    BLOCK_SIZE,
    HEADER_SIZE,
    Reader,
    Writer,
    crc32c,
    crc32c_implementation,
    crc32c_implementations,
    mask_crc,
    unmask_crc,
)
from leveldb_log._errors import (
    Corruption,
    CorruptionError,
    CorruptionWarning,
    LogError,
    TruncatedRecordError,
)
from leveldb_log.scan import PhysicalRecord, scan
from leveldb_log.splits import splits

from leveldb_log import leveldb  # isort: skip  (the WriteBatch / VersionEdit decoders)
from leveldb_log import stats  # isort: skip  (a log's figures: stats.stats(source))


class RecordType(IntEnum):
    """Type byte of a physical record."""

    ZERO = 0
    FULL = 1
    FIRST = 2
    MIDDLE = 3
    LAST = 4


__version__ = "0.1.0"

__all__ = [
    "BLOCK_SIZE",
    "HEADER_SIZE",
    "Corruption",
    "CorruptionError",
    "CorruptionWarning",
    "LogError",
    "PhysicalRecord",
    "Reader",
    "RecordType",
    "TruncatedRecordError",
    "Writer",
    "crc32c",
    "crc32c_implementation",
    "crc32c_implementations",
    "leveldb",
    "mask_crc",
    "scan",
    "splits",
    "stats",
    "unmask_crc",
]
