"""Statistics of a log: records, bytes, fragment types, padding and damage.

`stats` walks the log twice, with the two tools that already know its rules: `scan` for the
physical layout (headers, fragment types, trailers, zero-fill, garbage, bad checksums) and a
`Reader` in ``"skip"`` mode, LevelDB's, for what a reader gets from it (the user records,
the bytes it drops as corruption, and where an incomplete record at the end begins). Nothing
here joins fragments into records. See docs/format.md for the layout and docs/api.md for
the reader. The package exports `stats`, `LogStats` and `SizeBucket`.

>>> import leveldb_log
>>> s = leveldb_log.stats("000003.log")         # doctest: +SKIP
>>> s.records, s.dropped_bytes, s.corrupt       # doctest: +SKIP
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, NamedTuple, Protocol, TypeAlias, cast

from leveldb_log import _core, _storage
from leveldb_log._core import RECORD_TYPES, Reader
from leveldb_log._dialects import Dialect
from leveldb_log._scan import PhysicalRecord, _check_flag, scan

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["LogFile", "LogStats", "SizeBucket", "stats"]


class SizeBucket(NamedTuple):
    """The user records whose size lies in ``[low, high]``: one bar of a size histogram.

    ``LogStats.record_sizes`` holds one per non-empty bucket. A bucket is 0 alone, or a
    power-of-two range ``[2**(b-1), 2**b - 1]``; ``records`` is how many records it holds.
    """

    low: int
    high: int
    records: int


@dataclass(frozen=True)
class LogStats:
    """What `stats` found in a log; every count is of the whole file.

    Attributes:
        file_bytes: the file's length.
        records: user records the reader returns (skip mode).
        record_bytes: their payload bytes in all.
        physical_records: headers with their payloads (``scan`` kind ``"record"``), damaged
            ones included.
        header_bytes: the bytes of those headers: 7 each in LevelDB's layout, 11 for
            recyclable records (RocksDB, Pebble), 19 for Pebble's walSync chunks.
        fragment_types: ``(name, count)`` pairs of the physical records' types, sorted by
            name; names from ``_core.RECORD_TYPES``, else ``"type N"`` for an unknown byte.
        bad_checksums: physical records whose CRC does not match (0 without verification).
        trailer_bytes: the bytes at the end of full blocks too few for a header there (1
            to 6 in LevelDB's dialect, up to 18 with RocksDB's and Pebble's longer headers).
        zero_bytes: preallocated space (a type 0, length 0 header and the rest of its block).
        garbage_bytes: bytes dropped as damage after a bad length or a bad checksum.
        torn_tail_bytes: the incomplete end of the file, from the first header of the record
            cut short (not corruption: a writer stopped there).
        dropped_bytes: the bytes of every corruption the reader reports (its
            ``dropped_bytes``): garbage, bad records, and the fragments of records it drops.
        record_sizes: the user records by size, one `SizeBucket` per non-empty bucket, in
            ascending order.
        corruptions: how many corruptions the reader reports (some drop no bytes: an
            empty record of an unknown type).
    """

    file_bytes: int
    records: int
    record_bytes: int
    physical_records: int
    header_bytes: int
    fragment_types: tuple[tuple[str, int], ...]
    bad_checksums: int
    trailer_bytes: int
    zero_bytes: int
    garbage_bytes: int
    torn_tail_bytes: int
    dropped_bytes: int
    record_sizes: tuple[SizeBucket, ...]
    corruptions: int = 0

    @property
    def corrupt(self) -> bool:
        """True when the log holds damage (a torn tail alone is not damage)."""
        return (
            self.corruptions > 0
            or self.dropped_bytes > 0
            or self.bad_checksums > 0
            or self.garbage_bytes > 0
        )


@dataclass
class _Layout:
    """The tallies of one `scan` pass."""

    file_bytes: int = 0
    physical_records: int = 0
    header_bytes: int = 0
    fragment_types: Counter[str] = field(default_factory=Counter)
    bad_checksums: int = 0
    trailer_bytes: int = 0
    zero_bytes: int = 0
    garbage_bytes: int = 0
    last_kind: str | None = None

    def add(self, region: PhysicalRecord) -> None:
        """Count one region of the file."""
        self.file_bytes = region.end
        self.last_kind = region.kind
        if region.kind == "record":
            assert region.type is not None  # every record has a header
            self.physical_records += 1
            self.header_bytes += region.size - region.length
            self.fragment_types[RECORD_TYPES.get(region.type, f"type {region.type}")] += 1
            self.bad_checksums += region.checksum_ok is False
        elif region.kind == "trailer":
            self.trailer_bytes += region.size
        elif region.kind == "zero":
            self.zero_bytes += region.size
        elif region.kind == "garbage":
            self.garbage_bytes += region.size


@dataclass
class _Reading:
    """What the reader returned and dropped, and where it stopped."""

    records: int = 0
    record_bytes: int = 0
    sizes: Counter[int] = field(default_factory=Counter)  # bit length of size -> records
    dropped_bytes: int = 0
    corruptions: int = 0
    position: int = 0


class LogFile(Protocol):
    """A binary file object as `stats` reads it: what `scan` and `Reader` both need."""

    def read(self, size: int, /) -> bytes:
        """Up to ``size`` bytes; ``b""`` at the end (what `scan` calls)."""
        ...

    def readinto(self, buffer: memoryview, /) -> int | None:
        """Fill ``buffer``; the number of bytes read, 0 at the end (what `Reader` calls)."""
        ...


class _SeekableFile(LogFile, Protocol):
    """A `LogFile` that can go back: read twice, from where it stood."""

    def seekable(self) -> bool:
        """True if `seek` works (False for a pipe)."""
        ...

    def tell(self) -> int:
        """The current position."""
        ...

    def seek(self, offset: int, /) -> int:
        """Go to ``offset``."""
        ...


_COPY_CHUNK = 1 << 20

Source: TypeAlias = "str | os.PathLike[str] | Buffer | LogFile"


class _Opts(NamedTuple):
    """How both passes read: checksums verified or not, the dialect and log number."""

    verify: bool
    dialect: Dialect
    log_number: int | None


def stats(
    source: Source,
    *,
    verify_checksums: bool = True,
    dialect: Dialect = "leveldb",
    log_number: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> LogStats:
    """The statistics of the log in source: what ``leveldb-log stats`` prints.

    One pass of scan() counts the physical layout, one pass of a Reader in
    "skip" mode what a reader gets and drops.

    Arguments
      source: a path (a FIFO or a device is read once, through a
        temporary copy); a URL (scheme://..., such as s3://bucket/key.log),
        opened with fsspec (pip install 'leveldb-log[fsspec]'); a bytes-like
        object holding the log; or a binary file object holding the log from
        its current position (offsets count from there). A seekable file is
        read twice and left at its end; a file that cannot seek (a pipe) is
        first copied to a temporary file. Files are read a block at a time,
        never whole into memory.
      verify_checksums: False checks no CRC, as with
        Reader(verify_checksums=False).
      dialect: 'leveldb', 'rocksdb' or 'pebble', as with Reader(dialect=...).
      log_number: the number the log's recyclable records carry, as with
        Reader(log_number=...); None: the reader takes it from a WAL's file
        name, else both passes from the first recyclable record.
      storage_options: for a URL, the file system's options (as for Reader);
        None for none.

    Returns
      A LogStats (see its fields); LogStats.corrupt says whether the log
      holds damage.

    Raises
      FileNotFoundError, OSError: the file cannot be opened or read.
      TypeError: verify_checksums is not a bool, or log_number not an int.
      ValueError: an unknown dialect, a log_number that is negative or given
        with dialect 'leveldb', or storage_options with a source that is no
        URL.
      ImportError: a URL without fsspec (the message names the extra).
    """
    opts = _Opts(
        _check_flag("verify_checksums", verify_checksums),
        *_core._log_options(dialect, log_number),
    )
    opened = _storage.reading(source, storage_options)
    if isinstance(opened, (str, os.PathLike)):
        return _of_path(opened, opts)
    if opened is not source:  # a URL's file object, read here and closed
        with cast(IO[bytes], opened) as stream:
            return _of_file(cast(LogFile, stream), opts)
    try:
        view = memoryview(source)  # type: ignore[arg-type]  # a buffer, else a file
    except TypeError:
        return _of_file(cast(LogFile, source), opts)
    with view:  # an mmap is read as a buffer from its start, not through its read()
        return _of(view, opts)


def _of_path(path: str | os.PathLike[str], opts: _Opts) -> LogStats:
    """The figures of a path: a regular file is read twice in place, a FIFO or a device
    opened and read once."""
    if _regular(path):
        return _of(path, opts)
    with open(path, "rb") as stream:
        return _of_file(cast(LogFile, stream), opts)


def _regular(path: str | os.PathLike[str]) -> bool:
    """Can ``path`` be opened twice and read the same (not a FIFO nor a device)?"""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # the open reports it, with the file's name
        return True


def _of(source: str | os.PathLike[str] | memoryview, opts: _Opts) -> LogStats:
    """The figures of a path or a buffer: scan it, then read it."""
    return _combine(_layout(source, opts), _read(source, opts))


def _of_file(stream: LogFile, opts: _Opts) -> LogStats:
    """The figures of a file object, read twice (a pipe through a temporary copy)."""
    if _seekable(stream):
        return _of_seekable(cast(_SeekableFile, stream), opts)
    import tempfile  # only for pipes: keeps `import leveldb_log` light

    with tempfile.TemporaryFile() as copy:
        while chunk := stream.read(_COPY_CHUNK):
            copy.write(chunk)
        copy.seek(0)
        return _of_seekable(copy, opts)


def _seekable(stream: LogFile) -> bool:
    """Can ``stream`` go back to where it is (a file, not a pipe)?"""
    try:
        return bool(cast(_SeekableFile, stream).seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _of_seekable(stream: _SeekableFile, opts: _Opts) -> LogStats:
    """Scan from the current position, then come back there for the reader."""
    start = stream.tell()
    layout = _layout(stream, opts)
    stream.seek(start)
    return _combine(layout, _read(stream, opts))


def _layout(source: Source, opts: _Opts) -> _Layout:
    """Tally the regions `scan` finds in ``source``."""
    layout = _Layout()
    regions = scan(
        source, verify_checksums=opts.verify, dialect=opts.dialect, log_number=opts.log_number
    )
    for region in regions:
        layout.add(region)
    return layout


def _read(source: Source, opts: _Opts) -> _Reading:
    """Read ``source`` through in skip mode: records, dropped bytes, final position."""
    reading = _Reading()

    # The damage is what these statistics count: heard, not warned of.
    def count(_: object) -> None:
        reading.corruptions += 1

    with Reader(
        source,
        recovery="skip",
        verify_checksums=opts.verify,
        dialect=opts.dialect,
        log_number=opts.log_number,
        on_corruption=count,
    ) as reader:
        for record in reader:
            reading.records += 1
            reading.record_bytes += len(record)
            reading.sizes[len(record).bit_length()] += 1
        reading.dropped_bytes = reader.dropped_bytes
        position = reader.position
        assert position is not None  # None only once the reader is closed
        reading.position = position
    return reading


def torn_tail_bytes(file_bytes: int, position: int, ends_in_zero_fill: bool) -> int:
    """Bytes of the torn tail: what the reader left unconsumed at the end of the file.

    The one count of it, for `stats` and ``leveldb-log verify``. The reader does not consume
    an incomplete record at the end (it may yet be completed), so it stops at its first
    header (``position``); nor zero fill in the final block (scan's last region ``"zero"``),
    which is not torn. After a bad checksum in the final block it goes on from the block's
    end, past the file's.
    """
    if ends_in_zero_fill or position >= file_bytes:
        return 0
    return file_bytes - position


def _bucket(bits: int, count: int) -> SizeBucket:
    """The bucket of sizes whose bit length is ``bits``."""
    if bits == 0:
        return SizeBucket(0, 0, count)
    return SizeBucket(1 << (bits - 1), (1 << bits) - 1, count)


def _combine(layout: _Layout, reading: _Reading) -> LogStats:
    """The figures of both passes, as one `LogStats`."""
    return LogStats(
        file_bytes=layout.file_bytes,
        records=reading.records,
        record_bytes=reading.record_bytes,
        physical_records=layout.physical_records,
        header_bytes=layout.header_bytes,
        fragment_types=tuple(sorted(layout.fragment_types.items())),
        bad_checksums=layout.bad_checksums,
        trailer_bytes=layout.trailer_bytes,
        zero_bytes=layout.zero_bytes,
        garbage_bytes=layout.garbage_bytes,
        torn_tail_bytes=torn_tail_bytes(
            layout.file_bytes, reading.position, layout.last_kind == "zero"
        ),
        dropped_bytes=reading.dropped_bytes,
        record_sizes=tuple(_bucket(b, reading.sizes[b]) for b in sorted(reading.sizes)),
        corruptions=reading.corruptions,
    )
