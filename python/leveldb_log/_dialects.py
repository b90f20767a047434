"""The dialects a log can be written in, and what RocksDB's metadata records state.

See docs/rocksdb.md: ``"leveldb"`` is LevelDB's format; ``"rocksdb"`` adds recyclable
records (with a log number), metadata records and zstd-compressed WALs; ``"pebble"`` adds
walSync chunks and an end-of-log trailer.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, TypeAlias

from leveldb_log import _core

__all__ = ["DIALECTS", "Dialect", "Predecessor"]

# For type checkers only: the names come from the core's list (tests check they agree).
Dialect: TypeAlias = Literal["leveldb", "rocksdb", "pebble"]

DIALECTS: tuple[Dialect, ...] = _core._DIALECTS


class Predecessor(NamedTuple):
    """The WAL before this one, as RocksDB recorded it at this WAL's start.

    RocksDB writes it (with ``track_and_verify_wals``) right after the compression record,
    so that recovery can tell a missing WAL from the end of the history. A `Reader` in the
    ``"rocksdb"`` dialect exposes it as ``Reader.predecessor``.
    """

    log_number: int
    """The previous WAL's log number."""
    size: int
    """Its size in bytes when it was closed."""
    last_sequence: int
    """The last sequence number written to it."""
