"""Which dialect wrote a log: LevelDB, RocksDB or Pebble, told from its first block.

The three share 32 KiB blocks, the masked CRC-32C and the 7-byte header of types 1-4, and
differ in the types they add (docs/rocksdb.md):

- RocksDB: recyclable types 5-8 (11-byte header: + the low 32 bits of the log number),
  SetCompression (9, 7-byte header, only as the first record, 4-byte payload), user-defined
  timestamp sizes (10 with 7 bytes, 11 with 11) and predecessor WAL info (130 with 7
  bytes, 131 with 11).
- Pebble: its WAL writer always writes recyclable chunks (5-8), or walSync chunks (9-12,
  19-byte header: + log number + fixed64 synced offset), and closes the log with an EOF
  trailer: an 11-byte FULL header with CRC 0, length 0 and the log number plus one.

`detect_dialect` asks the core (``llog_detect_dialect``, csrc/core/log_detect.h), which
walks the chunks of the first block from offset 0, trying for each type the header sizes
the dialects' tables give it, and keeps going while a chunk's CRC checks out. Then:

1. a walSync chunk or a Pebble EOF trailer (the core's one rule: a header of the log
   number after the first chunk's; before any chunk has given one, the empty header
   with CRC 0 that Pebble's Close writes) -> ``"pebble"``;
2. a chunk only RocksDB writes (9 at offset 0 with length 4, 10, 11, 130, 131) ->
   ``"rocksdb"``;
3. recyclable chunks (5-8) and nothing else telling -> ``"rocksdb"``. RocksDB (with
   ``recycle_log_file_num``) and Pebble frame these chunks alike, and RocksDB's reader
   ends a Pebble log at its trailer (a record of another log number) as Pebble's does;
   LevelDB never writes them, so ``"leveldb"`` would be wrong for certain;
4. anything else (legacy chunks only, signs of two dialects at once, a damaged first
   chunk, an empty file) -> ``"leveldb"``, whose reader is also right for RocksDB's and
   Pebble's MANIFESTs (legacy chunks only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from leveldb_log._core import BLOCK_SIZE, _detect_dialect
from leveldb_log._dialects import Dialect

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["Dialect", "detect_dialect"]


def detect_dialect(first_block: Buffer) -> Dialect:
    """The dialect that wrote a log, from its first block (up to 32 KiB from offset 0).

    Arguments
      first_block: the log's first bytes, any bytes-like object; bytes past the first
        32 KiB are not looked at, and fewer are fine (a short log, or what a pipe had).

    Returns
      "pebble" for walSync chunks or a Pebble EOF trailer; "rocksdb" for a chunk type
      only RocksDB writes, or for recyclable chunks; "leveldb" otherwise (legacy chunks
      only, contradicting signs, a first chunk that does not check out, no bytes).
    """
    dialect, _ = _detect_dialect(bytes(memoryview(first_block)[:BLOCK_SIZE]))
    return "leveldb" if dialect is None else dialect
