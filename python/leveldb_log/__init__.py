"""Read and write LevelDB's log format: CRC-32C-checked records in 32 KiB blocks.

Writing: Writer(path_or_file, mode="w", *, buffering=-1, closefd=False).
Reading: Reader(source, *, recovery="skip", verify_checksums=True, start=0,
end=None, on_corruption=None) iterates over the records; damage is reported
to on_corruption, or as a CorruptionWarning, or raised as CorruptionError,
as the recovery mode says.
Scale-out: splits(source, n=...) gives the byte ranges for
Reader(source, start=..., end=...); a Reader over a path pickles.
Forensics: scan(source) maps every region of the file (PhysicalRecord);
stats(source) counts them (LogStats). The leveldb module decodes LevelDB's own
payloads (WriteBatch, VersionEdit).
Checksums: crc32c, mask_crc, unmask_crc. help() of each name says more;
docs/api.md is the reference.

>>> import leveldb_log
>>> with leveldb_log.Writer("events.log") as w:     # doctest: +SKIP
...     w.write(b"payload")
"""

from __future__ import annotations

import importlib
from enum import IntEnum
from typing import TYPE_CHECKING

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
from leveldb_log._detect import detect_dialect
from leveldb_log._dialects import DIALECTS, Predecessor
from leveldb_log._errors import (
    Corruption,
    CorruptionError,
    CorruptionWarning,
    LogError,
    LogLockedError,
    TruncatedRecordError,
)
from leveldb_log._public import module_dir
from leveldb_log._scan import PhysicalRecord, scan
from leveldb_log._splits import splits
from leveldb_log._stats import LogStats, SizeBucket, stats
from leveldb_log._zstd import ZstdMissingError

if TYPE_CHECKING:
    from leveldb_log import leveldb, pebble, rocksdb  # the payload decoders
    from leveldb_log._database_logs import database_logs


def __getattr__(name: str) -> object:
    """The payload decoders (leveldb, rocksdb, pebble) and database_logs, imported when first
    asked for: together they take half the time of ``import leveldb_log``, and a program
    that only writes or reads records never uses them."""
    if name == "leveldb":
        return importlib.import_module("leveldb_log.leveldb")
    if name == "rocksdb":
        return importlib.import_module("leveldb_log.rocksdb")
    if name == "pebble":
        return importlib.import_module("leveldb_log.pebble")
    if name == "database_logs":
        return importlib.import_module("leveldb_log._database_logs").database_logs
    raise AttributeError(f"module 'leveldb_log' has no attribute {name!r}")


class RecordType(IntEnum):
    """Type byte of a physical record: the last byte of its 7-byte header.

    ZERO (0) marks preallocated space: the reader skips the rest of its block.
    FULL (1) holds a whole record. A record that does not fit in the rest of
    its block is split into a FIRST (2), any number of MIDDLE (3) and a LAST (4)
    fragment. Any other byte is an unknown type, which a reader reports as
    corruption ("unknown record type N") and scan() shows as it is.
    """

    ZERO = 0
    FULL = 1
    FIRST = 2
    MIDDLE = 3
    LAST = 4


__version__ = "0.1.0"

__all__ = [
    "BLOCK_SIZE",
    "DIALECTS",
    "HEADER_SIZE",
    "Corruption",
    "CorruptionError",
    "CorruptionWarning",
    "LogError",
    "LogLockedError",
    "LogStats",
    "PhysicalRecord",
    "Predecessor",
    "Reader",
    "RecordType",
    "SizeBucket",
    "TruncatedRecordError",
    "Writer",
    "ZstdMissingError",
    "crc32c",
    "crc32c_implementation",
    "crc32c_implementations",
    "database_logs",
    "detect_dialect",
    "leveldb",
    "mask_crc",
    "pebble",
    "rocksdb",
    "scan",
    "splits",
    "stats",
    "unmask_crc",
]
__dir__ = module_dir(globals())
