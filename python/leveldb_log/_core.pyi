"""C core of leveldb_log: CRC-32C, Writer and Reader."""

# Type stubs of the C extension leveldb_log._core, and the one source of its docstrings:
# csrc/docstrings.py turns every docstring here (and each def's signature) into the C
# string macros the extension is compiled with, so help() and an IDE show the same text.

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any, Literal, NoReturn, Protocol

from typing_extensions import Buffer

from leveldb_log._dialects import Dialect, Predecessor
from leveldb_log._errors import Corruption

BLOCK_SIZE: int
HEADER_SIZE: int
DEFAULT_BUFFER_SIZE: int
crc32c_implementation: str
crc32c_implementations: tuple[str, ...]
RECORD_TYPES: dict[int, str]
RECOVERY_MODES: tuple[str, ...]
_DIALECTS: tuple[Dialect, ...]
_REASON_BAD_LENGTH: str
_REASON_CHECKSUM: str

StrPath = str | os.PathLike[str]
Recovery = Literal["skip", "tolerate_tail", "point_in_time", "absolute"]

class _WritableFile(Protocol):
    def write(self, data: bytes, /) -> int | None: ...

class _HasFileno(Protocol):
    def fileno(self) -> int: ...

class _ReadableFile(Protocol):
    def readinto(self, buffer: memoryview, /) -> int | None: ...

def crc32c(data: Buffer, value: int = 0) -> int:
    """CRC-32C (Castagnoli) of a bytes-like object, shaped like zlib.crc32.

    Arguments
      data: any bytes-like object.
      value: the CRC to continue from (0 to start), so that
        crc32c(b, crc32c(a)) == crc32c(a + b).

    Returns
      The CRC, an int in [0, 2**32).

    Raises
      TypeError: data is not bytes-like, or value is not an int.
      ValueError: value is outside [0, 2**32).
    """

def _append_point(
    path: StrPath, /, *, dialect: Dialect, log_number: int | None = None
) -> tuple[int, bool, int, tuple[int, int] | None]:
    """Where Writer(path, 'a', dialect=dialect) would resume, without
    changing the file.

    Returns
      (cut, fresh_block, clean_end, damage): the length mode 'a' cuts the
      log back to, whether the next record starts a block, the end of
      the last complete record, and (damaged_at, intact_at) when what
      looked like a torn tail from damaged_at on is followed by an intact
      record at intact_at (so it is damage and nothing is cut), else
      None.

    Raises
      CorruptionError: where mode 'a' would refuse the file; its
        no_log is True when the file holds no valid record at all.
      OSError: the file cannot be opened or read.
    """

def _lock_fd(fd: int, name: object, /) -> None:
    """Take the lock a Writer holds on its log, on an open descriptor.

    The lock is held until the descriptor is closed (the command line's
    write holds it on a log it replaces).

    Returns
      None.

    Raises
      LogLockedError: a Writer holds the file (name is the path named).
      OSError: the descriptor cannot be locked.
    """

def mask_crc(crc: int, /) -> int:
    """LevelDB's masked form of a CRC, the one stored in log headers.

    Masking keeps a CRC of data that itself holds CRCs from being
    degenerate. unmask_crc() undoes it.

    Arguments
      crc: an int in [0, 2**32).

    Returns
      The masked value, an int in [0, 2**32).

    Raises
      TypeError: crc is not an int.
      ValueError: crc is outside [0, 2**32).
    """

def unmask_crc(masked: int, /) -> int:
    """The CRC a masked value stands for: the inverse of mask_crc().

    Arguments
      masked: an int in [0, 2**32), as stored in a log header.

    Returns
      The CRC, an int in [0, 2**32).

    Raises
      TypeError: masked is not an int.
      ValueError: masked is outside [0, 2**32).
    """

def _test_sync_waiters(writer: Writer, /) -> int:
    """Threads in a group commit of the writer: the one flushing and those
    queued (internal: for tests, as leveldb_log._testing.sync_waiters).
    """

def _test_sync_flushes(writer: Writer, /) -> int:
    """fdatasync calls made by the writer's group commits (internal: for
    tests, as leveldb_log._testing.sync_flushes).
    """

def _test_range_syncs(writer: Writer, /) -> int:
    """Write-backs the writer started for bytes_per_sync (internal: for
    tests, as leveldb_log._testing.range_syncs).
    """

def _test_writer_bounced(writer: Writer, /) -> int:
    """Payloads the writer copied through its bounce buffer before writing,
    as the kernel would have copied them slowly from the caller's memory
    (internal: for tests, as leveldb_log._testing.writer_bounced).
    """

def _test_before_sync(writer: Writer, hook: Callable[[], object] | None, /) -> None:
    """Set the callable the leader of the writer's group commit calls
    before its fdatasync, without the writer's lock; None for none
    (internal: for tests, as leveldb_log._testing.before_sync).
    """

def _slow_copy_window(max: int, /) -> int:
    """Internal, for tests: payloads whose place lies 1 to max bytes past
    their source modulo the page are read through the block buffer
    rather than in place (31 at import; 0: none; 4095: all but those
    at distance 0).

    Returns
      The previous max.
    """

def _scan_block(
    block: Buffer,
    final: bool,
    verify_checksums: bool,
    dialect: Dialect = "leveldb",
    log_number: int | None = None,
    /,
) -> tuple[
    list[
        tuple[
            int,
            Literal["record", "trailer", "zero", "garbage", "truncated", "end"],
            int | None,
            int,
            bool | None,
            str | None,
            int,
            int | None,
        ]
    ],
    int | None,
]:
    """The regions of one block, by the core's walker (for _scan.py).

    Returns
      (a list of (position, kind, type, length, checksum_ok, reason,
      header_size, log_number), the log's number after the block or None).
    """

def _detect_dialect(
    first_bytes: Buffer, log_number: int | None = None, /
) -> tuple[Dialect | None, str]:
    """The dialect that wrote a log, from its first bytes (for _detect.py).

    Returns
      (dialect or None when unknown, the reason).
    """

def _log_options(dialect: Dialect, log_number: int | None = None, /) -> tuple[Dialect, int | None]:
    """The dialect and log number, checked as a Reader checks them (for scan.py).

    Returns
      (the dialect's name, the log number or None).
    """

def _tail_end(
    fd: int | _HasFileno,
    size: int,
    dialect: Dialect,
    log_number: int | None = None,
    path: StrPath | None = None,
    verify_checksums: bool = True,
    /,
) -> int:
    """Where the last complete record of the log open at fd ends (for the
    Spark stream reader), reading only its last blocks' headers.

    Arguments
      fd: a descriptor (or an object with fileno()) open for reading.
      size: the log's size in bytes, as the caller saw it.
      dialect, log_number: as a Reader takes them; without log_number,
        the number in path's name (NNNNNN.log), as a Reader of that path
        takes it, else the one in the file's first recyclable header.
      path: the log's path, for the number in its name (not opened).
      verify_checksums: stop before a record of the blocks walked whose
        checksum fails (a writer that extends its file before filling
        it leaves zeros after a whole header); False for logs written
        without valid checksums.

    Returns
      A record boundary at or before size: every record whose first
      header lies before it is complete in the file. For a log a writer
      wrote, cut anywhere, the end of its last complete record (the
      position a Reader of that prefix reaches).

    Raises
      OSError: the log cannot be read.
      ValueError, TypeError: bad arguments.
    """

def _test_blocks_in_place(reader: Reader, /) -> int:
    """Blocks whose payload reader read from its file straight into a
    record (a test hook: leveldb_log._testing.blocks_in_place).
    """

def _test_blocks_bounced(reader: Reader, /) -> int:
    """Of those, blocks read through the block buffer instead, as the
    kernel would have copied them slowly in place (a test hook:
    leveldb_log._testing.blocks_bounced).
    """

class _ArrowStream(Protocol):
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

class _ArrowArray(Protocol):
    def __arrow_c_array__(
        self, requested_schema: object | None = None
    ) -> tuple[object, object]: ...

_ArrowData = _ArrowStream | _ArrowArray

class Writer:
    """Write records to a LevelDB log.

    Arguments
      target: a path (str or os.PathLike; bytes are refused, since a
        Reader reads bytes as the log itself), or a binary file object
        open for writing, which holds the log from its position now: the
        log's offsets and blocks count from there, as a Reader given the
        object at that position counts them (one opened for appending to
        bytes already there is refused: use mode 'a' with its path).
      mode: for a path ('w' only for a file object):
        'w'  create the file, or truncate it;
        'x'  create it; FileExistsError if it exists;
        'a'  append to an existing log (created if missing), resuming
             block alignment from its length; see "Mode 'a'".
      buffering: as for open(): -1 a default buffer (64 KiB); 0 hands
        each record to the OS (or the file object) before write()
        returns; n > 0 a buffer of about n bytes (n at most 2**30).
      closefd: True also closes a file object when the writer closes (a
        path the writer opened is always closed). closefd, recycle and
        sync_offsets must be bools (TypeError).
      dialect: 'leveldb' (the default), 'rocksdb' or 'pebble'; see
        "Dialects".
      log_number: the number recyclable records carry; None takes it
        from a path named NNNNNN.log.
      recycle: 'rocksdb' only: write recyclable records (types 5-8, with
        the log number), as RocksDB does with recycle_log_file_num.
      compression: 'rocksdb' only: None, or 'zstd' to write each record
        as one zstd frame after a compression record, as RocksDB's
        wal_compression does (needs the extra leveldb-log[rocksdb]).
      sync_offsets: 'pebble' only: write walSync chunks, which carry the
        offset last made durable by sync().
      storage_options: for a target given as a URL (scheme://...: s3://,
        gcs://, memory://, file://, ...), which fsspec opens (pip install
        'leveldb-log[fsspec]'): the file system's options, such as
        {'anon': True}; None for none. A local file system's URL is
        written as a path. Other stores take 'w' and 'x', not 'a'
        (ValueError, before anything is opened); the writer owns the
        object it opens there, and close() closes (so commits) it.
      sync: the default of write() and write_many(): True makes every
        call return only once its records are durable.
      bytes_per_sync: a path only: start writing back every N bytes
        handed to the OS (sync_file_range on Linux), so that a sync never
        finds a huge dirty range; 0 (the default) is off.
      preallocate: a path only: reserve N bytes of disk ahead of the log
        as it grows, without changing its size (Linux, macOS); 0 is off.
      lock: False neither takes nor checks the lock on a path (see "One
        Writer per file"), for file systems without working locks.

    Returns
      A Writer; write(), write_many(), flush(), sync(), close(), the
      property position (where the next record goes), and the options it
      was given as read-only properties (dialect, log_number, compression,
      recycle, sync_offsets, sync_default for sync=, buffering,
      bytes_per_sync, preallocate, mode, name).
      In a with statement it is closed on exit.

    Mode 'a'
      A crash can leave the end of a log torn: valid fragments of one
      unfinished record, one incomplete record, zero fill. 'a' cuts
      exactly that back to the end of the last complete record, so the
      new records read back cleanly even in 'absolute' mode. Damage in
      the middle of the log is left alone (the new records then start at
      the next block boundary). If anything else ends the file, or a
      non-empty file holds no valid record at all (a file of zeros is
      fine), 'a' raises CorruptionError ("<path> does not end like a log:
      <why> at offset N; it was left as it was") and does not change the
      file.

    Buffering: flush() and sync()
      Records wait in the buffer (unless buffering=0) until it fills, or
      flush(), sync() or close(). flush() hands them to the OS: a crash
      of the process no longer loses them, and readers of the file see
      them. sync() is flush() then fsync: only that survives a power
      loss. A failed write raises the original exception; the record is
      not written later, and no record is ever half returned as valid.

    Durability
      write(..., sync=True) returns once the record survives a power
      loss. Threads doing so at once share flushes (group commit): the
      first leads one fdatasync without the GIL for every record written
      until then; the others queue and return when a flush that began
      after their record was written ends. From asyncio: await
      asyncio.to_thread(w.write, record, sync=True). A failed fdatasync
      fails every waiter and every later sync. See docs/api.md.

    One Writer per file
      A Writer on a path holds an exclusive advisory lock on the file
      until it closes; another Writer on it, in any process, raises
      LogLockedError before anything is truncated or cut. Readers never
      lock. File objects, devices and FIFOs are not locked.

    Closing
      close() flushes and closes. A closed writer's methods and position
      raise ValueError ("I/O operation on closed Writer"); closed, name,
      mode and the options stay readable, as a closed file's do. A
      Writer never closed is flushed and closed when collected, with a
      ResourceWarning if records were still buffered then, as an
      unclosed file does.

    Dialects
      'rocksdb' writes what RocksDB replays: LevelDB's layout, or
      recyclable records (recycle=True), or a compressed WAL. 'pebble'
      always writes recyclable chunks (or walSync ones) and ends the log
      with Pebble's trailer when closed. Mode 'a' keeps a compressed
      WAL compressed: appending with another compression setting raises
      ValueError. See docs/rocksdb.md.

    Threads and pickling
      A Writer may be shared by threads: each call holds its lock. A
      call on it from a file object's method it is calling raises
      RuntimeError instead of deadlocking. A Writer cannot be pickled
      (TypeError).

    Raises
      TypeError: a target that is neither a path nor an object with
        write(), or bytes (not taken as a path: pass a str or an
        os.PathLike); a file object whose write() refuses bytes (a text file:
        open it with 'wb' or 'ab'); mode or buffering of the wrong type;
        sync or lock not a bool; bytes_per_sync or preallocate not an int.
      ValueError: a mode other than 'w', 'x' or 'a' (or other than 'w'
        for a file object, other than 'w' or 'x' for a URL of a store
        other than the local file system); buffering below -1 or above
        2**30 (the message names buffering); storage_options with a
        target that is no URL; an unknown dialect, or options the
        dialect does not have; recyclable records without a log number;
        bytes_per_sync or preallocate negative, or given for a file
        object or URL.
      ImportError (ZstdMissingError): compression='zstd' with no zstd
        binding installed; the message names the extra.
      FileExistsError ('x'), OSError: the path cannot be opened.
      LogLockedError (an OSError): another Writer holds the file.
      CorruptionError: mode 'a' on a file that does not end like a log.
      ImportError: a URL without fsspec (the message names the extra).
    """

    def __init__(
        self,
        target: StrPath | os.PathLike[bytes] | _WritableFile,
        mode: Literal["w", "a", "x"] = "w",
        *,
        buffering: int = -1,
        closefd: bool = False,
        dialect: Dialect = "leveldb",
        log_number: int | None = None,
        recycle: bool = False,
        compression: Literal["zstd"] | None = None,
        sync_offsets: bool = False,
        storage_options: Mapping[str, Any] | None = None,
        sync: bool = False,
        bytes_per_sync: int | None = 0,
        preallocate: int | None = 0,
        lock: bool = True,
    ) -> None: ...
    @property
    def closed(self) -> bool:
        """True once close() was called."""
    @property
    def position(self) -> int:
        """Offset where writing goes on: the log's length in bytes, buffered
        records included. The next record starts there, unless its block has
        no room left for a header (it then starts at the next block).
        ValueError once closed.
        """
    @property
    def mode(self) -> str:
        """The mode: 'w', 'a' or 'x' ('w' for a file object)."""
    @property
    def name(self) -> object:
        """The target given: the path, or the file object."""
    @property
    def dialect(self) -> Dialect:
        """The dialect written: 'leveldb', 'rocksdb' or 'pebble'."""
    @property
    def log_number(self) -> int | None:
        """The log number recyclable records carry (given, or taken from a
        path named NNNNNN.log); None when there is none.
        """
    @property
    def compression(self) -> Literal["zstd"] | None:
        """'zstd' when each record is written as one zstd frame, else None."""
    @property
    def recycle(self) -> bool:
        """True when the records are recyclable (they carry the log number):
        recycle=True, and always for 'pebble'.
        """
    @property
    def sync_offsets(self) -> bool:
        """True when Pebble's walSync chunks are written (sync_offsets=True)."""
    @property
    def sync_default(self) -> bool:
        """The sync= given to Writer(): what write() and write_many() do
        when their own sync is None (True: return once durable).
        """
    @property
    def buffering(self) -> int:
        """Bytes buffered before they are handed over: 0 for none, the
        default size (64 KiB) for buffering=-1.
        """
    @property
    def bytes_per_sync(self) -> int:
        """Write-back is started every this many bytes; 0 is off."""
    @property
    def preallocate(self) -> int:
        """Bytes of disk reserved ahead of the log; 0 is off."""
    def write(self, data: Buffer, /, *, sync: bool | None = None) -> int:
        """Append one record.

        Arguments
          data: a bytes-like object (bytes, bytearray, memoryview, ...),
            empty included.
          sync: True returns only once the record is durable (see
            "Durability"); False may leave it in the buffer; None (the
            default) takes the Writer's sync=.

        Returns
          The record's offset: where its first header lies in the log.

        Raises
          TypeError: data is not bytes-like; sync is not a bool or None.
          ValueError: the writer is closed.
          OSError, or what the file object raised: the record is not written
            (now or later); the records before it are kept. With sync=True
            this includes a record queued behind a flush whose hand-over to
            the OS, made by the next leader, failed (an OSError with that
            errno, EIO for a file object's other exceptions).
          OSError while making it durable: the record was written, but is
            not known to be durable (see sync()).
        """
    def write_many(
        self, records: Iterable[Buffer] | _ArrowData, /, *, sync: bool | None = None
    ) -> int:
        """Append every record of an iterable, in order, under one lock.

        Arguments
          records: an iterable of bytes-like objects; or Arrow data: an
            object exporting __arrow_c_stream__ (chunked too) or
            __arrow_c_array__ of type binary, large_binary, string or
            large_string (or their view types), written straight from its
            buffers (strings as their UTF-8 bytes).
          sync: as for write(): True returns once every record is durable,
            for the cost of one flush.

        Returns
          How many records were written.

        Raises
          As write(), and whatever the iterable raises; the records before
          the error are handed over all the same. The exception's .written
          says how many of the call's records reached the target (the file
          or file object); when handing them over failed (ENOSPC, say), the
          call's records that did not reach it are dropped, as a failed
          write()'s record is, and never written later: records[e.written:]
          is what to retry. Records buffered by earlier calls stay
          buffered. A list or a tuple is checked whole first: an item that
          is not bytes-like is a TypeError before any is written.
          TypeError: records is bytes-like or a str (one record: use
            write()), or not iterable.
          TypeError: Arrow data of another type (the message names it).
          ValueError: Arrow data holding a null: nothing is written.
        """
    def flush(self) -> None:
        """Hand the buffered records to the OS, or to the file object.

        A file object's own flush() is then called, if it has one. After
        flush() a crash of the process loses no record written so far, and
        readers of the file see them; a power loss still may lose them (see
        sync()).

        Returns
          None.

        Raises
          ValueError: the writer is closed.
          OSError, or what the file object raised.
        """
    def sync(self) -> None:
        """flush(), then make the records written so far durable: they
        survive a power loss.

        fdatasync on Linux, fcntl(F_FULLFSYNC) on macOS, FlushFileBuffers on
        Windows, fsync elsewhere; for a file object, through its fileno().
        The first sync of a log the Writer created syncs its directory too.
        Threads syncing at once share one flush (see "Durability").

        Returns
          None.

        Raises
          ValueError: the writer is closed.
          OSError: the flush or the sync failed. Once a sync failed, every
            later one raises: the OS may have dropped what it could not
            write, and no later sync can tell.
          io.UnsupportedOperation or AttributeError: a file object with no
            file descriptor (io.BytesIO, for instance).
        """
    def close(self) -> None:
        """Flush and close; calling it again does nothing.

        A path the writer opened is closed, and its lock released; a file
        object only with closefd=True. Threads still waiting for a durable
        write get one more flush first. Every other method of a closed
        writer raises ValueError.

        Returns
          None.

        Raises
          OSError, or what the file object raised while flushing or closing
          (the writer is closed all the same).
        """
    def __enter__(self) -> Writer:
        """Return the writer itself, for a with statement.

        Raises
          ValueError: the writer is closed.
        """
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None:
        """Close the writer (see close()); an exception is not suppressed."""
    def __reduce__(self) -> NoReturn:
        """Refuse to pickle: a Writer's state cannot travel to another process.

        Raises
          TypeError: always.
        """

class Reader(Iterator[bytes]):
    """Iterate over the records of a LevelDB log, as bytes, in write order.

    Arguments
      source: the log, opened here (a missing path raises at the call):
        - a path (str or os.PathLike);
        - a URL (scheme://...), opened with fsspec: see storage_options;
        - a bytes-like object (bytes, bytearray, memoryview, mmap, ...),
          read in place, never copied whole, and released when the
          reader is closed or exhausted;
        - a binary file object with readinto(), holding the log from its
          position when the reader is made.
      recovery: what damage does: 'skip' (the default), 'tolerate_tail',
        'point_in_time' or 'absolute'; see "Recovery modes".
      verify_checksums: False skips CRC checks (LevelDB's
        checksum=false): a damaged payload is then returned as data.
      start, end: only the records whose first header lies in
        [start, end); end=None reads to the end. See "Ranges".
      on_corruption: None, or a callable given a Corruption(offset,
        size, reason) for each damage reported; see "Reports".
      dialect: 'leveldb' (the default), 'rocksdb', 'pebble', or 'auto':
        told from the log's first block; see "Dialects".
      log_number: the number recyclable records must carry (RocksDB,
        Pebble); None takes it from a path named NNNNNN.log, else from
        the first recyclable record. With 'auto', used when the log is
        not LevelDB's.
      storage_options: for a source given as a URL (s3://, gcs://,
        memory://, file://, ...), which fsspec opens (pip install
        'leveldb-log[fsspec]'): the file system's options, such as
        {'anon': True}; None for none. A local file system's URL is read
        as a path; any other store's object through a file object the
        reader owns and closes.

    Returns
      An iterator: next() gives the next record's payload (bytes).
      Properties: name, last_record_offset, dropped_bytes, position,
      closed and the options. close(), or a with statement, releases the
      source; a closed reader's position and methods that need the
      source raise ValueError, its other properties stay readable.

    Dialects
      'rocksdb' reads RocksDB's WALs and MANIFESTs: recyclable records
      (11-byte headers with the log number), metadata records (never
      returned: see compression, timestamp_sizes, predecessor), unknown
      types with bit 0x80 skipped, RocksDB's reason texts. A recyclable
      record of another log number is an older log's data: the log ends
      before it, except in 'skip' mode, which skips it. In a recycled log
      'tolerate_tail' ends at damage; 'point_in_time' reports a torn tail.
      A zstd-compressed WAL is decompressed record by record (this needs
      the extra leveldb-log[rocksdb]). 'pebble' reads Pebble's WALs:
      recyclable and walSync chunks (19-byte headers), ending at its
      end-of-log trailer. See docs/rocksdb.md.

      'auto' reads block 0 (the log's first 32 KiB) when the reader is
      made, whatever start is (from a pipe: its first 32 KiB, or all of
      it if shorter), and reads the log exactly as a reader made with
      the dialect detect_dialect() tells from it would (given the
      log_number, or the file name's); the property dialect then names
      it. A block 0 that tells nothing is read as LevelDB's: an empty
      log, one whose first record is damaged or still being written.
      While such a block 0 is shorter than a block and nothing of it
      was read, it is told again when the log has grown (following a
      log from its creation); a range past block 0 reads nothing
      meanwhile. A pickled reader keeps the dialect told.

    Recovery modes
      A torn tail is what a crash leaves at the end of a log: a partial
      header, a payload cut short, or a fragmented record without its
      last fragment. Any other damage is corruption.

      recovery         corruption mid-file           torn tail
      'skip'           reported and skipped;         stops before it,
                       reading goes on (LevelDB's)   unreported
      'tolerate_tail'  raises CorruptionError        stops before it,
                                                     unreported
      'point_in_time'  reported; iteration ends      stops before it,
                       cleanly before it             unreported
      'absolute'       raises CorruptionError        raises
                                                     TruncatedRecordError

      In every mode the records before the damage are returned first.

    Reports
      Without on_corruption, 'skip' and 'point_in_time' issue a
      leveldb_log.CorruptionWarning (a UserWarning) through warnings for
      each corruption they skip or stop before: shown once per place by
      default, an exception under -W error, silenced by a filter. The
      raising modes raise instead. A given on_corruption replaces the
      warning: it is called for every corruption (in 'absolute', for the
      torn tail too) before the mode acts on it, without the reader's
      lock held, so it may use the reader; what it raises propagates
      from next(). A file that ends in bytes no writer of the format
      leaves (not a log?) warns once in every mode, with or without
      on_corruption: LevelDB's reader reports no corruption there.

    Ranges
      A record belongs to the range that holds its first header: the
      reader returns exactly the records whose first header lies in
      [start, end), reading past end to finish the last of them. Readers
      over consecutive ranges (see splits()) together return every
      record and report every corruption exactly once, wherever the cuts
      fall (a corruption by the range its dropped bytes begin in).

    Following a growing log
      Over a path or a file object, iteration stops at the current end
      of the log; iterate again later for the records appended since. An
      incomplete record at the end is not consumed until it is complete.
      A buffer does not grow: the reader is finished at its end. Do not
      follow a live log in 'absolute' mode: its torn tail raises. Over a
      path, a file that shrinks below position (truncated or rewritten)
      or is replaced (another file at the path, as after a rename) warns
      once, with a RuntimeWarning saying which; the reader then returns
      nothing more from it: open a new Reader.
      Reader(source, start=position) resumes where a reader stood, after
      a restart too.

    Pickling
      A reader over a path or a URL pickles as what reopens it: the
      path or URL, its options (on_corruption and storage_options must
      be picklable) and its progress.
      Unpickled (or copied with copy.copy or copy.deepcopy) it goes on
      exactly where the original stood; a file that is gone by then
      raises FileNotFoundError. A reader over a buffer or a file object,
      or a closed one, refuses with TypeError.

    Threads
      A reader may be shared by threads: each call holds its lock. A
      call on it from a file object's method it is calling raises
      RuntimeError instead of deadlocking.

    Raises
      FileNotFoundError, OSError: the path cannot be opened (at the
        call); reading fails (from next(): the original OSError).
      TypeError: a source of another kind; an argument of the wrong
        type; on_corruption not callable.
      ValueError: an unknown recovery mode or dialect; start or end
        negative or above 2**64 - 1 (the message names which); end <
        start; log_number with dialect 'leveldb'; next(), position and
        the other calls that need the source on a closed reader;
        storage_options with a source that is no URL.
      CorruptionError, TruncatedRecordError: from next(), as the
        recovery mode says.
      ImportError: a URL without fsspec (the message names the extra);
        ZstdMissingError, from next(): a compressed WAL with no zstd
        binding installed (the message names the extra).
    """

    def __init__(
        self,
        source: StrPath | Buffer | _ReadableFile,
        *,
        dialect: Dialect | Literal["auto"] = "leveldb",
        log_number: int | None = None,
        recovery: Recovery = "skip",
        verify_checksums: bool = True,
        start: int = 0,
        end: int | None = None,
        on_corruption: Callable[[Corruption], object] | None = None,
        storage_options: Mapping[str, Any] | None = None,
    ) -> None: ...
    @property
    def dialect(self) -> Dialect:
        """The dialect read: 'leveldb', 'rocksdb' or 'pebble'; with
        dialect='auto', the one told from block 0 (see "Dialects").
        """
    @property
    def log_number(self) -> int | None:
        """The log number recyclable records are held to (given, from the
        file name, or the first recyclable record's), or None.
        """
    @property
    def compression(self) -> Literal["zstd"] | None:
        """'zstd' once the log said its records are compressed, else None."""
    @property
    def timestamp_sizes(self) -> dict[int, int]:
        """Column family id -> user-defined timestamp size, as the log's
        records stated them so far (a copy).
        """
    @property
    def predecessor(self) -> Predecessor | None:
        """The previous WAL as the log recorded it: Predecessor(log_number,
        size, last_sequence), or None.
        """
    @property
    def recycled(self) -> bool:
        """True once a recyclable record (one with a log number) was read."""
    @property
    def last_record_offset(self) -> int | None:
        """Offset of the first header of the record returned last (None
        before the first).
        """
    @property
    def dropped_bytes(self) -> int:
        """Total bytes of the corruptions reported so far."""
    @property
    def name(self) -> str | None:
        """The source's name: a path or URL as given (os.fspath of an
        os.PathLike, decoded as os.fsdecode does when it is bytes), a file
        object's name when it is a path, else None (a bytes-like source, a
        file object without one). Readable once closed.
        """
    @property
    def closed(self) -> bool:
        """True once close() was called."""
    @property
    def recovery(self) -> Recovery:
        """The recovery mode: 'skip', 'tolerate_tail', 'point_in_time'
        or 'absolute'.
        """
    @property
    def verify_checksums(self) -> bool:
        """Whether CRCs are checked."""
    @property
    def start(self) -> int:
        """First offset of the range read: records whose first header lies
        before it are not returned.
        """
    @property
    def end(self) -> int | None:
        """End of the range read: records whose first header lies at or
        after it are not returned (None: no end).
        """
    @property
    def position(self) -> int:
        """Offset where reading goes on: Reader(source, start=position)
        returns exactly the records this reader has yet to return.
        ValueError once closed (as io's position methods): the options
        and counters stay readable.
        """
    def _restore(self, last: int | None, dropped: int, finished: bool, /) -> None:
        """Set the progress counters of an unpickled reader (internal).

        Arguments
          last: last_record_offset, or None; dropped: dropped_bytes;
          finished: whether the original had reached the end of a buffer.

        Returns
          None.
        """
    def iter_batches(
        self,
        *,
        max_records: int = 65536,
        max_bytes: int = 1048576,
        offset_type: Literal["uint64", "int64"] = "uint64",
        data_type: Literal["large_binary", "binary"] = "large_binary",
    ) -> BatchIterator:
        """Iterate over the records as Arrow batches (leveldb_log.Batch).

        Each batch has the columns offset (uint64, or int64) and data
        (large_binary, or binary) and exports __arrow_c_array__:
        pyarrow.record_batch(batch) takes it, in those types, without a
        cast. The records, reports and errors are those of iterating the
        reader itself (which it advances): an exception comes after a batch
        of the records before it. Following a growing log, the iterator
        stops at the current end and can be resumed later.

        Arguments
          max_records: at most this many records a batch (>= 1).
          max_bytes: a batch ends with the record that brings its size
            (Batch.nbytes: payloads and 16 bytes a record, 12 with
            data_type "binary") to this many bytes or more (>= 1): it is
            smaller than max_bytes plus its last record's payload and 16.
            Batches that are all kept (a table) fill faster at 4 MiB:
            buffers that large come in huge pages.
          offset_type: "uint64" (Arrow format "L") or "int64" ("l"), as
            Spark wants it; the values are the same.
          data_type: "large_binary" (64-bit offsets, format "Z") or
            "binary" (32-bit offsets, "z"). A binary batch holds at most
            2**31-1 bytes of payload: the record that would take it past
            that begins the next batch (it has been read: the reader's
            position and last_record_offset are past it meanwhile).

        Returns
          An iterator of Batch objects.

        Raises
          TypeError: offset_type or data_type is not a str.
          ValueError: a limit below 1; an offset_type or data_type not
            listed above; the reader is closed (at the call, or from next()
            once closed meanwhile); a record
            larger than 2**31-1 bytes with data_type "binary" (from next(),
            after a batch of the records before it; the message gives its
            offset and size).
          As iteration does: CorruptionError and the rest.
        """
    def to_arrow(
        self,
        *,
        offset_type: Literal["uint64", "int64"] = "uint64",
        data_type: Literal["large_binary", "binary"] = "large_binary",
    ) -> Any:
        """Read the rest of the records into a pyarrow.Table.

        The table pyarrow.table(reader) makes: the columns offset and data,
        in the types asked for (see iter_batches). It reads the reader to
        its end, advancing it; reports and errors are iteration's.

        Arguments
          offset_type: "uint64" or "int64", as for iter_batches.
          data_type: "large_binary" or "binary", as for iter_batches.

        Returns
          A pyarrow.Table.

        Raises
          ImportError: pyarrow is missing (pip install
            'leveldb-log[arrow]').
          TypeError, ValueError: as iter_batches; ValueError for a closed
            reader, or one whose Arrow export was read to the end.
          As iteration does: CorruptionError and the rest (as pyarrow
            passes on an error of the stream).
        """
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Export the records as an Arrow C stream of iter_batches() batches.

        pyarrow.table(reader), polars.DataFrame(reader) and DuckDB's
        FROM reader read the log through it. Reading the stream advances
        the reader, so a reader partly read exports the rest; one whose
        export was read to the end refuses another (ValueError), as a
        spent pyarrow reader does. An exception raised while reading ends
        the stream with an error whose text (get_last_error) is
        'Type: message'.

        Arguments
          requested_schema: an "arrow_schema" PyCapsule: when it is
            struct<offset: uint64 or int64, data: large_binary or binary>
            (those field names; nullability and metadata aside), the
            batches come in those types, as iter_batches(offset_type=...,
            data_type=...) makes them; anything else is ignored (the
            protocol's best effort) and the types are uint64 and
            large_binary.

        Returns
          A PyCapsule named "arrow_array_stream".

        Raises
          ValueError: the reader is closed; an earlier export was read to
            the end.
        """
    def __iter__(self) -> Reader: ...
    def __next__(self) -> bytes: ...
    def close(self) -> None:
        """Release the source; calling it again does nothing.

        A path or URL the reader opened is closed; a buffer is released; a
        file object is left open. Iterating a closed reader raises
        ValueError.

        Returns
          None.
        """
    def __enter__(self) -> Reader:
        """Return the reader itself, for a with statement.

        Raises
          ValueError: the reader is closed.
        """
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None:
        """Close the reader (see close()); an exception is not suppressed."""
    def __reduce__(self) -> tuple[Callable[..., Reader], tuple[Any, ...]]:
        """Pickle a reader over a path as what reopens it where it stands.

        Returns
          (leveldb_log._restore.restore_reader, (path, options, progress)).

        Raises
          TypeError: the reader is over a buffer or a file object, or is
            inside its on_corruption callback.
          ValueError: the reader is closed.
        """

class Batch:
    """Records of a log as Arrow data, from Reader.iter_batches().

    len() is the number of records. Columns: offset (uint64, or int64:
    where each record's first header lies) and data (large_binary, or
    binary: the payload), in the types iter_batches was asked for.
    Exported with __arrow_c_array__, so that for instance
    pyarrow.record_batch(batch) takes it without a copy.
    """
    def __len__(self) -> int: ...
    @property
    def nbytes(self) -> int:
        """Bytes of the batch's columns: its records' payloads and 16 a record.

        (Its offset and where its payload ends: as pyarrow's RecordBatch.nbytes
        counts them; 12 a record in a binary column, whose ends take 4.)
        """
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """Export the batch through the Arrow C data interface.

        Arguments
          requested_schema: ignored (the protocol's best effort): the
            columns keep the types the batch was made in.

        Returns
          (schema, array): PyCapsules named "arrow_schema" and
          "arrow_array" holding a struct array of two children. The
          array shares the batch's buffers, freed once the last holder
          releases them.
        """
    def __arrow_c_schema__(self) -> object:
        """Export the batch's type through the Arrow C data interface.

        Returns
          A PyCapsule named "arrow_schema": struct<offset: uint64,
          data: large_binary>, or the types iter_batches was asked for.
        """

class BatchIterator(Iterator[Batch]):
    """The iterator Reader.iter_batches() returns: Batch objects, in log order."""
    def __iter__(self) -> BatchIterator: ...
    def __next__(self) -> Batch: ...
