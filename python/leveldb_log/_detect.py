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

`detect_dialect` walks the chunks of the first block from offset 0, trying for each type
the header sizes the dialects give it, and keeps going while a chunk's CRC checks out. Then:

1. a walSync chunk or a Pebble EOF trailer -> ``"pebble"``;
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

import struct
from typing import TYPE_CHECKING

from leveldb_log._core import BLOCK_SIZE, crc32c, mask_crc
from leveldb_log._dialects import Dialect

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["Dialect", "detect_dialect"]


_HEADER = struct.Struct("<IHB")  # masked CRC, payload length, type
_LEGACY, _RECYCLABLE, _WAL_SYNC = 7, 11, 19


def _crc_ok(block: bytes, pos: int, header_size: int, length: int) -> bool:
    """Whether the chunk at ``pos`` with this header size is whole and its CRC matches."""
    end = pos + header_size + length
    if end > len(block):
        return False
    stored: int = struct.unpack_from("<I", block, pos)[0]
    return mask_crc(crc32c(block[pos + 6 : end])) == stored


def _chunk(block: bytes, pos: int, kind: int, length: int) -> tuple[int, str] | None:
    """(header size, sign) of a valid chunk at ``pos``, or None where the walk stops.

    The sign is "legacy", "recyclable", "rocksdb" (a type only RocksDB writes) or
    "pebble" (a walSync chunk).
    """
    candidates: list[tuple[int, str]] = []
    if 1 <= kind <= 4:
        candidates = [(_LEGACY, "legacy")]
    elif 5 <= kind <= 8:
        candidates = [(_RECYCLABLE, "recyclable")]
    elif 9 <= kind <= 12:
        candidates = [(_WAL_SYNC, "pebble")]
        if kind == 9 and pos == 0 and length == 4:
            candidates.append((_LEGACY, "rocksdb"))
        elif kind in (10, 11):
            candidates.append((_LEGACY if kind == 10 else _RECYCLABLE, "rocksdb"))
    elif kind in (130, 131):
        candidates = [(_LEGACY if kind == 130 else _RECYCLABLE, "rocksdb")]
    for header_size, sign in candidates:
        if _crc_ok(block, pos, header_size, length):
            return header_size, sign
    return None


def _is_pebble_trailer(block: bytes, pos: int, log_number: int | None) -> bool:
    """A Pebble EOF trailer at ``pos``: FULL recyclable header, CRC 0, length 0, and the
    log number after the log's own (any number when no chunk gave the log's yet)."""
    if len(block) - pos < _RECYCLABLE:
        return False
    crc, length, kind = _HEADER.unpack_from(block, pos)
    (number,) = struct.unpack_from("<I", block, pos + 7)
    follows = log_number is None or number == (log_number + 1) & 0xFFFFFFFF
    return crc == 0 and length == 0 and kind == 5 and follows


def _signs(block: bytes) -> set[str]:
    """The signs of every chunk of the block that checks out, from offset 0 on."""
    signs: set[str] = set()
    pos = 0
    log_number: int | None = None
    while len(block) - pos >= _LEGACY:
        if _is_pebble_trailer(block, pos, log_number):
            signs.add("pebble")
            break
        _, length, kind = _HEADER.unpack_from(block, pos)
        found = _chunk(block, pos, kind, length)
        if found is None:
            break
        header_size, sign = found
        signs.add(sign)
        if header_size > _LEGACY and log_number is None:
            (log_number,) = struct.unpack_from("<I", block, pos + 7)
        pos += header_size + length
    return signs


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
    block = bytes(memoryview(first_block)[:BLOCK_SIZE])
    signs = _signs(block)
    if "pebble" in signs:
        return "leveldb" if "rocksdb" in signs else "pebble"
    if "rocksdb" in signs or "recyclable" in signs:
        return "rocksdb"
    return "leveldb"
