"""Every physical record of a log, damaged ones included: a map of the file's bytes.

`scan` parses blocks exactly as the reader does (docs/format.md, "Reading") but does not join
fragments into user records. It yields one `PhysicalRecord` per *region* of the file, in
file order; the regions tile the file: each one starts where the previous one ends
(``r.offset + r.size``), and the last ends at the file's length.

====================  ==============================================================
kind                  region
====================  ==============================================================
``"record"``          a physical record: its header (7 bytes in LevelDB's dialect; 11 or
                      19 for some types of RocksDB's and Pebble's, docs/rocksdb.md) and
                      ``length`` payload bytes.
                      ``checksum_ok`` is False for a CRC mismatch, None when checksums
                      are not verified. Its type may be any byte value.
``"trailer"``         the last bytes of a full block, too few for a header there: 1 to 6
                      in LevelDB's dialect, up to 18 in RocksDB's and Pebble's (their
                      longer headers, docs/rocksdb.md).
``"zero"``            a header with type 0 and length 0 (preallocated space) and the
                      rest of its block, which the reader skips silently.
``"garbage"``         bytes the reader drops as damage: from a header whose length runs
                      past its block, or after a record with a bad checksum, to the end
                      of the block. ``reason`` holds the reader's reason.
``"truncated"``       the cut-short end of the file (a torn tail): a partial header or
                      a payload that runs past the end of the final, short block.
                      ``reason`` is ``"a torn tail no writer leaves (not a log?)"`` when
                      its whole header has a type no writer writes or a length that
                      cannot fit its block (the Reader warns of that), else None.
``"end"``             Pebble's end of a closed log (dialect ``"pebble"``): a header
                      of the log's number plus one (before any record has said the
                      log's number: the empty one with checksum 0 that Pebble's
                      Close writes), and what follows it in its block (an older
                      log's bytes, in a recycled file).
====================  ==============================================================

For every kind but ``"record"``, ``length`` is the region's size. ``type`` is the header's
type byte when a whole header was read at ``offset``, else None.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    BinaryIO,
    Literal,
    NamedTuple,
    Protocol,
    TypeAlias,
    cast,
    runtime_checkable,
)

from leveldb_log import _core, _storage
from leveldb_log._core import BLOCK_SIZE, HEADER_SIZE
from leveldb_log._dialects import Dialect

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["BAD_RECORD_LENGTH", "CHECKSUM_MISMATCH", "Kind", "PhysicalRecord", "scan"]

Kind: TypeAlias = Literal["record", "trailer", "zero", "garbage", "truncated", "end"]

# The reader's reason texts for the two kinds of garbage (the core's).
BAD_RECORD_LENGTH: str = _core._REASON_BAD_LENGTH
CHECKSUM_MISMATCH: str = _core._REASON_CHECKSUM


@runtime_checkable
class ReadableFile(Protocol):
    """A binary file object: ``read(n)`` returns up to ``n`` bytes, ``b""`` at the end."""

    def read(self, size: int, /) -> bytes: ...


class PhysicalRecord(NamedTuple):
    """One region of a log file, as scan() yields it (a NamedTuple).

    offset: where the region begins in the file.
    kind: "record" (a header and its payload), "trailer" (the last bytes of
      a block, too few for a header: 1 to 6 in LevelDB's dialect, up to 18 in
      the others), "zero" (preallocated space: a type 0, length 0 header
      and the rest of its block), "garbage" (bytes a reader drops as damage),
      "truncated" (a torn tail: the cut-short end of the file) or "end"
      (Pebble's trailer of a closed log, and the rest of its block).
    type: the header's type byte (any value, see RecordType) when a whole
      header was read at offset, else None.
    length: a record's payload length (from its header); for the other
      kinds, the region's size.
    checksum_ok: for a record, whether its CRC matches (None when checksums
      are not verified); None for the other kinds.
    payload: the payload bytes of a record with scan(payloads=True), else
      None.
    reason: for "garbage", why the reader drops it (CHECKSUM_MISMATCH or
      BAD_RECORD_LENGTH); for "truncated", "a torn tail no writer leaves (not
      a log?)" when its whole header is one no writer writes; else None.
    header_size: a record's header size: 7, or 11 (recyclable records, which
      carry a log number) or 19 (Pebble's walSync chunks) in other dialects.
    log_number: the log number in a recyclable record's header, else None.
    """

    offset: int
    kind: Kind
    type: int | None
    length: int
    checksum_ok: bool | None
    payload: bytes | None = None
    reason: str | None = None
    header_size: int = HEADER_SIZE
    log_number: int | None = None

    @property
    def size(self) -> int:
        """Bytes the region covers: header and payload for a record, else ``length``."""
        return self.header_size + self.length if self.kind == "record" else self.length

    @property
    def end(self) -> int:
        """Offset just past the region (where the next one starts)."""
        return self.offset + self.size


def scan(
    source: str | os.PathLike[str] | Buffer | ReadableFile,
    *,
    payloads: bool = False,
    verify_checksums: bool = True,
    dialect: Dialect = "leveldb",
    log_number: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> Iterator[PhysicalRecord]:
    """Every region of the log in source, in file order: a map of its bytes.

    The regions tile the file (each begins where the one before ends, the last
    ends at the file's length); damaged regions are included and fragments are
    not joined into records. See PhysicalRecord for the kinds.

    Arguments
      source: a path; a URL (scheme://..., such as s3://bucket/key.log),
        opened with fsspec (pip install 'leveldb-log[fsspec]'); a bytes-like
        object holding the log; or a binary file object with read(), holding
        the log from its current position (offsets count from there). It
        is opened (or its buffer taken) by the call itself, so a missing
        path or a wrong type raises there, not at the first next(). It is
        read one block at a time, never whole; a file opened from a path or
        URL is closed once the iterator ends or is closed.
      payloads: True gives each "record" region its payload bytes.
      verify_checksums: False checks no CRC (checksum_ok is None) and a
        mismatch is not damage, as with Reader(verify_checksums=False).
      dialect: 'leveldb', 'rocksdb' or 'pebble': which header sizes the
        types have (RocksDB's metadata records are listed as records, with
        their type), as with Reader(dialect=...).
      log_number: the number the log's recyclable records carry (dialect
        'rocksdb' or 'pebble'), as with Reader(log_number=...): Pebble's
        trailer is told by it. None takes the first recyclable record's.
      storage_options: for a URL, the file system's options (as for Reader);
        None for none.

    Returns
      An iterator of PhysicalRecord, one per region.

    Raises
      FileNotFoundError, OSError: the path cannot be opened (at the call) or
        read (while iterating).
      TypeError: a source that is none of the above, a flag that is not a
        bool, or a log_number that is not an int (at the call).
      ValueError: an unknown dialect, a log_number that is negative or given
        with dialect 'leveldb', or storage_options with a source that is no
        URL (at the call).
      ImportError: a URL without fsspec (the message names the extra).
    """
    opts = _Options(
        _check_flag("payloads", payloads),
        _check_flag("verify_checksums", verify_checksums),
        *_core._log_options(dialect, log_number),
    )
    return _scan_source(source, storage_options, opts)


def _scan_source(
    source: str | os.PathLike[str] | Buffer | ReadableFile,
    storage_options: Mapping[str, Any] | None,
    opts: _Options,
) -> Iterator[PhysicalRecord]:
    """The regions of ``source``, opened (a path or URL) or taken (a buffer) now."""
    opened = _storage.reading(source, storage_options)
    if isinstance(opened, (str, os.PathLike)):
        return _scan_path(open(opened, "rb"), opts)
    if opened is not source:  # a URL's file object: scan's to close
        return _scan_path(cast(BinaryIO, opened), opts)
    if isinstance(source, ReadableFile):
        return _scan_blocks(_file_blocks(source), opts)
    if not isinstance(source, memoryview):
        try:
            memoryview(source).release()  # a buffer, or TypeError now
        except TypeError:
            raise TypeError(
                "scan() source must be a path, a bytes-like object or a binary file "
                f"object, not {type(source).__name__}"
            ) from None
    return _scan_blocks(_buffer_blocks(source), opts)


class _Options(NamedTuple):
    payloads: bool
    verify: bool
    dialect: Dialect
    log_number: int | None


def _check_flag(name: str, value: object) -> bool:
    """A flag argument: True or False only (the string "no" would be true)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def _scan_path(f: BinaryIO, opts: _Options) -> Iterator[PhysicalRecord]:
    """The regions of the file scan opened, which closes when they end or are dropped."""
    regions = _closing_regions(f, opts)
    # Started up to its `with`: an iterator dropped before its first region then closes the
    # file as it is collected (an unstarted generator never enters the block).
    next(regions)
    return cast(Iterator[PhysicalRecord], regions)


def _closing_regions(f: BinaryIO, opts: _Options) -> Iterator[PhysicalRecord | None]:
    with f:
        yield None
        yield from _scan_blocks(_file_blocks(f), opts)


def _file_blocks(f: ReadableFile) -> Iterator[bytes]:
    """Whole blocks from a file object; only the last may be short (short reads retried)."""
    while True:
        block = f.read(BLOCK_SIZE)
        if not block:
            return
        while len(block) < BLOCK_SIZE:
            more = f.read(BLOCK_SIZE - len(block))
            if not more:
                break
            block += more
        yield block
        if len(block) < BLOCK_SIZE:
            return


def _buffer_blocks(data: Buffer) -> Iterator[memoryview]:
    """Blocks of an in-memory log, as views (no copy)."""
    with memoryview(data) as view, view.cast("B") as flat:
        for start in range(0, len(flat), BLOCK_SIZE):
            yield flat[start : start + BLOCK_SIZE]


def _scan_blocks(
    blocks: Iterator[bytes] | Iterator[memoryview], opts: _Options
) -> Iterator[PhysicalRecord]:
    base = 0
    log_number = opts.log_number  # the log's: given, or learnt by the core's walker
    for block in blocks:
        # Only the final block can be short, and only there does a cut-short record mean
        # a torn tail rather than damage.
        short = len(block) < BLOCK_SIZE
        regions, log_number = _core._scan_block(block, short, opts.verify, opts.dialect, log_number)
        for position, kind, rtype, length, ok, reason, header_size, number in regions:
            data = None
            if opts.payloads and kind == "record":
                start = position + header_size
                data = bytes(block[start : start + length])
            yield PhysicalRecord(
                base + position, kind, rtype, length, ok, data, reason, header_size, number
            )
        base += len(block)
