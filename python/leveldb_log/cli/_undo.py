"""The undo record of ``leveldb-log write --append``: what a crash in the middle leaves undone.

A log has no commit marker: the records of an append that a crash (a power loss, SIGKILL)
cut short would stay readable, the old log plus only some of the new records. So before the
log changes, the append makes an undo record durable beside it, ``.NAME.append-undo``: the
log's length, where mode "a" cuts it, the bytes it cuts and the CRC-32 of each new record.
The append removes it once its records are synced. The next ``write`` or ``write --append``
to the log that finds one puts the log back as it was before the interrupted command (and
says so on standard error), then goes on; but only if every record after the cut is one of
the append's, in order: records another writer added since are never removed (the undo
record is then dropped, and that said). An undo record that does not check out was never
durable, so the log was never touched: it is removed.

Format: MAGIC, then four little-endian signed 64-bit integers (the cut, the log's length or
-1 for no log, the number of saved bytes, the number of new records), the saved bytes (the
cut-away bytes up to the last non-zero one: zeros past it come back by extending the file),
the records' CRC-32s (4 bytes each), and the CRC-32 (zlib) of everything before it.
"""

from __future__ import annotations

import array
import os
import struct
import sys
import zlib
from collections.abc import Iterable
from typing import IO

from leveldb_log._core import Reader
from leveldb_log._files._publish import sync_folder

__all__ = ["discard", "path_for", "roll_back_interrupted", "write"]

MAGIC = b"leveldb-log append undo 1\n"
_HEADER = struct.Struct("<qqqq")
_CRC = struct.Struct("<I")


def path_for(log: str) -> str:
    """Where the undo record of an append to ``log`` lives: hidden, beside the log."""
    directory, name = os.path.split(os.path.realpath(log))
    return os.path.join(directory, f".{name}.append-undo")


def write(log: str, cut: int, tail: IO[bytes], size: int, records: Iterable[bytes]) -> str:
    """Make the undo record of appending ``records`` durable (file and name); its path."""
    kept = _last_non_zero(tail)
    crcs = array.array("I", (zlib.crc32(r) for r in records))
    if sys.byteorder == "big":
        crcs.byteswap()
    undo = path_for(log)
    with open(undo, "wb") as f:
        crc = _put(f, MAGIC + _HEADER.pack(cut, size, kept, len(crcs)), 0)
        tail.seek(0)
        while kept > 0 and (chunk := tail.read(min(kept, 1 << 20))):
            crc = _put(f, chunk, crc)
            kept -= len(chunk)
        crc = _put(f, crcs.tobytes(), crc)
        f.write(_CRC.pack(crc))
        f.flush()
        os.fsync(f.fileno())
    sync_folder(os.path.dirname(undo))
    return undo


def discard(undo: str) -> None:
    """The append is done (or put back): remove its undo record, durably."""
    try:
        os.unlink(undo)
    except FileNotFoundError:
        return
    sync_folder(os.path.dirname(undo))


def roll_back_interrupted(log: str) -> str | None:
    """Put ``log`` back as it was before an append a crash interrupted, if one was and the
    log holds nothing else since; None, or what was done (for standard error)."""
    undo = path_for(log)
    try:
        with open(undo, "rb") as f:
            blob = f.read()
    except FileNotFoundError:
        return None
    found = _parse(blob)
    said = None
    if found is not None:
        cut, size, saved, crcs = found
        if _only_these_after(log, max(cut, 0) if size >= 0 else 0, crcs):
            _put_back(log, cut, size, saved)
            said = "put back as it was before an interrupted 'write --append'"
        else:
            said = (
                f"not put back as it was before an interrupted 'write --append' ({undo}): "
                "records were added since"
            )
    discard(undo)
    return said


def _only_these_after(log: str, start: int, crcs: list[int]) -> bool:
    """Whether every record of ``log`` from ``start`` on is one of ``crcs``' records, in
    order (a crash may have lost some and torn the last)."""
    try:
        reader = Reader(log, start=start, on_corruption=lambda c: None)
    except FileNotFoundError:
        return True
    expected = iter(crcs)  # `in` consumes it up to the match: a subsequence test
    with reader:
        return all(zlib.crc32(record) in expected for record in reader)


def _put_back(log: str, cut: int, size: int, saved: bytes) -> None:
    if size < 0:  # the append made the log
        try:
            os.unlink(log)
        except FileNotFoundError:
            pass
        sync_folder(os.path.dirname(log))
        return
    with open(log, "r+b") as f:
        f.truncate(cut)
        f.seek(cut)
        f.write(saved)
        f.truncate(size)
        f.flush()
        os.fsync(f.fileno())


def _parse(blob: bytes) -> tuple[int, int, bytes, list[int]] | None:
    """(cut, size, saved bytes, record CRCs) of a whole undo record, or None for a torn one."""
    start = len(MAGIC) + _HEADER.size
    if len(blob) < start + _CRC.size or not blob.startswith(MAGIC):
        return None
    cut, size, kept, count = _HEADER.unpack_from(blob, len(MAGIC))
    (crc,) = _CRC.unpack_from(blob, len(blob) - _CRC.size)
    if kept < 0 or count < 0 or len(blob) != start + kept + 4 * count + _CRC.size:
        return None
    if zlib.crc32(blob[: -_CRC.size]) != crc:
        return None
    crcs = array.array("I", blob[start + kept : start + kept + 4 * count])
    if sys.byteorder == "big":
        crcs.byteswap()
    return cut, size, blob[start : start + kept], crcs.tolist()


def _put(f: IO[bytes], data: bytes, crc: int) -> int:
    f.write(data)
    return zlib.crc32(data, crc)


def _last_non_zero(tail: IO[bytes]) -> int:
    """How many bytes of ``tail`` are worth keeping: up to its last non-zero byte."""
    tail.seek(0)
    at = kept = 0
    while chunk := tail.read(1 << 20):
        stripped = len(chunk.rstrip(b"\0"))
        if stripped:
            kept = at + stripped
        at += len(chunk)
    return kept
