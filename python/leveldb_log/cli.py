"""The ``leveldb-log`` command line (also ``python -m leveldb_log``).

Subcommands: ``dump``, ``cat``, ``verify``, ``stats``, ``write``, ``split``; each has
``--help``. A LOG argument of ``-`` means standard input (standard output for ``write``).

Exit status: 0 on success; 1 when the log is corrupt (any corruption reported, a recovery
mode that refuses the log, a LevelDB payload that does not decode), or when standard output
is closed early (as Python itself does on a broken pipe); 2 on usage errors and when a file
cannot be opened, read or written, or the input of ``write`` is malformed; 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import base64
import importlib
import io
import json
import os
import re
import struct
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, cast

from leveldb_log._core import Reader, Writer
from leveldb_log._errors import Corruption, CorruptionError
from leveldb_log.leveldb import (
    Delete,
    InternalKey,
    VersionEdit,
    WriteBatch,
    decode_version_edit,
    decode_write_batch,
)
from leveldb_log.scan import PhysicalRecord, scan
from leveldb_log.splits import splits

__all__ = ["main"]

PROG = "leveldb-log"
EXIT_OK = 0
EXIT_CORRUPT = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 1  # what Python itself exits with on EPIPE

#: ``verify`` shows a progress bar (on a terminal, with tqdm) for logs at least this big.
PROGRESS_THRESHOLD = 16 << 20
#: ``cat --length-prefixed`` and ``write --length-prefixed``: 4-byte little-endian length.
_LENGTH_PREFIX = struct.Struct("<I")
_RECOVERY_MODES = ("skip", "tolerate_tail", "point_in_time", "absolute")
_TYPE_NAMES = {0: "ZERO", 1: "FULL", 2: "FIRST", 3: "MIDDLE", 4: "LAST"}


class UsageError(Exception):
    """Something the user asked for cannot be done: reported briefly, exit status 2."""


# ---------------------------------------------------------------------------
# Output helpers
# ---------------------------------------------------------------------------


def _escape_table(quote: str) -> list[str]:
    table = []
    for b in range(256):
        c = chr(b)
        if c == "\\":
            table.append("\\\\")
        elif 0x20 <= b < 0x7F and c != quote:
            table.append(c)
        else:
            table.append(f"\\x{b:02x}")
    return table


_ESCAPES = {"": _escape_table(""), "'": _escape_table("'")}
_NEEDS_ESCAPING = {
    "": re.compile(rb"[^\x20-\x5b\x5d-\x7e]"),
    "'": re.compile(rb"[^\x20-\x26\x28-\x5b\x5d-\x7e]"),
}


def escape(data: bytes, quote: str = "") -> str:
    """Bytes as text: printable ASCII as is, a backslash doubled, others (and quote) as \\xNN."""
    if not _NEEDS_ESCAPING[quote].search(data):
        return data.decode("ascii")
    table = _ESCAPES[quote]
    return "".join([table[b] for b in data])


def json_bytes(data: bytes) -> Any:
    """A JSON value for bytes: the string if they are UTF-8, else ``{"base64": ...}``."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


_RENDERERS: dict[str, Callable[[bytes], str]] = {
    "text": escape,
    "hex": lambda b: b.hex(),
    "base64": lambda b: base64.b64encode(b).decode("ascii"),
}


def _quoted(fmt: str) -> Callable[[bytes], str]:
    """The renderer for bytes shown between single quotes (``--leveldb``)."""
    return (lambda b: escape(b, "'")) if fmt == "text" else _RENDERERS[fmt]


def _err(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def _describe(c: Corruption) -> str:
    return f"corruption at offset {c.offset}: {c.reason} ({c.size} bytes dropped)"


# ---------------------------------------------------------------------------
# Reading a LOG argument
# ---------------------------------------------------------------------------


def _source(path: str) -> str | io.BufferedReader:
    return cast(io.BufferedReader, sys.stdin.buffer) if path == "-" else path


def _open_reader(args: argparse.Namespace, on_corruption: Callable[[Corruption], object]) -> Reader:
    if args.end is not None and args.end < args.start:
        raise UsageError(f"--end {args.end} is before --start {args.start}")
    return Reader(
        _source(args.log),
        recovery=args.recovery,
        verify_checksums=args.verify_checksums,
        start=args.start,
        end=args.end,
        on_corruption=on_corruption,
    )


@dataclass
class _Damage:
    """Corruptions seen while reading, reported as they come."""

    report: Callable[[str], object]
    found: list[Corruption] = field(default_factory=list)

    def __call__(self, c: Corruption) -> None:
        self.found.append(c)
        self.report(_describe(c))


def _records(reader: Reader, name: str) -> Iterator[tuple[int, bytes]]:
    """(offset, payload) pairs; a refusing recovery mode just ends them (already reported)."""
    try:
        for record in reader:
            offset = reader.last_record_offset
            assert offset is not None  # set whenever a record was returned
            yield offset, record
    except CorruptionError:
        pass  # on_corruption saw it first
    except OSError as e:  # a read error (a directory fails only here): name the file
        if e.filename is None and name != "-":
            e.filename = name
        raise


# ---------------------------------------------------------------------------
# dump
# ---------------------------------------------------------------------------


def _kind(args: argparse.Namespace) -> str:
    if args.kind != "auto":
        return str(args.kind)
    name = os.path.basename(args.log)
    if name.startswith("MANIFEST"):
        return "manifest"
    if name.endswith(".log"):
        return "wal"
    raise UsageError(f"cannot tell whether {args.log!r} is a WAL or a MANIFEST: give --kind")


def _key_text(key: InternalKey, render: Callable[[bytes], str]) -> str:
    return f"'{render(key.user_key)}' @ {key.sequence} : {key.value_type}"


def _batch_text(offset: int, batch: WriteBatch, render: Callable[[bytes], str]) -> str:
    lines = [f"--- offset {offset}; sequence {batch.sequence}"]
    for op in batch.ops:
        if isinstance(op, Delete):
            lines.append(f"  del '{render(op.key)}'")
        else:
            lines.append(f"  put '{render(op.key)}' '{render(op.value)}'")
    return "\n".join(lines)


def _edit_text(offset: int, edit: VersionEdit, render: Callable[[bytes], str]) -> str:
    lines = [f"--- offset {offset}; VersionEdit {{"]
    for label, value in (
        ("Comparator", edit.comparator),
        ("LogNumber", edit.log_number),
        ("PrevLogNumber", edit.prev_log_number),
        ("NextFile", edit.next_file_number),
        ("LastSeq", edit.last_sequence),
    ):
        if value is not None:
            lines.append(f"  {label}: {value}")
    for level, key in edit.compact_pointers:
        lines.append(f"  CompactPointer: {level} {_key_text(key, render)}")
    for level, number in edit.deleted_files:
        lines.append(f"  RemoveFile: {level} {number}")
    for f in edit.new_files:
        keys = f"{_key_text(f.smallest, render)} .. {_key_text(f.largest, render)}"
        lines.append(f"  AddFile: {f.level} {f.number} {f.file_size} {keys}")
    lines.append("}")
    return "\n".join(lines)


def _key_json(key: InternalKey) -> dict[str, Any]:
    return {
        "user_key": json_bytes(key.user_key),
        "sequence": key.sequence,
        "value_type": key.value_type,
    }


def _batch_json(offset: int, batch: WriteBatch) -> dict[str, Any]:
    ops: list[dict[str, Any]] = []
    for op in batch.ops:
        if isinstance(op, Delete):
            ops.append({"op": "delete", "key": json_bytes(op.key)})
        else:
            ops.append({"op": "put", "key": json_bytes(op.key), "value": json_bytes(op.value)})
    return {"offset": offset, "sequence": batch.sequence, "count": batch.count, "ops": ops}


def _edit_json(offset: int, edit: VersionEdit) -> dict[str, Any]:
    out: dict[str, Any] = {"offset": offset}
    for name in (
        "comparator",
        "log_number",
        "prev_log_number",
        "next_file_number",
        "last_sequence",
    ):
        if getattr(edit, name) is not None:
            out[name] = getattr(edit, name)
    if edit.compact_pointers:
        out["compact_pointers"] = [
            {"level": level, "key": _key_json(key)} for level, key in edit.compact_pointers
        ]
    if edit.deleted_files:
        out["deleted_files"] = [
            {"level": level, "number": number} for level, number in edit.deleted_files
        ]
    if edit.new_files:
        out["new_files"] = [
            {
                "level": f.level,
                "number": f.number,
                "file_size": f.file_size,
                "smallest": _key_json(f.smallest),
                "largest": _key_json(f.largest),
            }
            for f in edit.new_files
        ]
    return out


def _format_leveldb(offset: int, payload: bytes, kind: str, fmt: str) -> str:
    """One decoded record; raises ValueError if the payload does not decode."""
    if kind == "wal":
        batch = decode_write_batch(payload)
        if fmt == "json":
            return json.dumps(_batch_json(offset, batch))
        return _batch_text(offset, batch, _quoted(fmt))
    edit = decode_version_edit(payload)
    if fmt == "json":
        return json.dumps(_edit_json(offset, edit))
    return _edit_text(offset, edit, _quoted(fmt))


def _format_plain(offset: int, payload: bytes, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"offset": offset, "length": len(payload), "data": json_bytes(payload)})
    return f"{offset}\t{len(payload)}\t{_RENDERERS[fmt](payload)}"


def cmd_dump(args: argparse.Namespace) -> int:
    kind = _kind(args) if args.leveldb else ""
    damage = _Damage(_err)
    undecodable = 0
    out = sys.stdout
    with _open_reader(args, damage) as reader:
        for offset, payload in _records(reader, args.log):
            if not args.leveldb:
                out.write(_format_plain(offset, payload, args.format) + "\n")
                continue
            try:
                out.write(_format_leveldb(offset, payload, kind, args.format) + "\n")
            except ValueError as e:
                undecodable += 1
                _err(f"record at offset {offset}: {e}")
    return EXIT_CORRUPT if damage.found or undecodable else EXIT_OK


# ---------------------------------------------------------------------------
# cat
# ---------------------------------------------------------------------------

_DELIMITERS = {"newline": b"\n", "nul": b"\0", "none": b""}


def cmd_cat(args: argparse.Namespace) -> int:
    damage = _Damage(_err)
    out = sys.stdout.buffer
    delimiter = _DELIMITERS[args.delimiter]
    with _open_reader(args, damage) as reader:
        for _, payload in _records(reader, args.log):
            if args.length_prefixed:
                if len(payload) > 0xFFFFFFFF:
                    raise UsageError("record too long for a 4-byte length prefix")
                out.write(_LENGTH_PREFIX.pack(len(payload)))
                out.write(payload)
            else:
                out.write(payload)
                out.write(delimiter)
    return EXIT_CORRUPT if damage.found else EXIT_OK


# ---------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------


def _log_size(args: argparse.Namespace) -> int | None:
    if args.log == "-":
        return None
    return os.stat(args.log).st_size


class _Progress:
    """A tqdm bar over file offsets on standard error, or nothing."""

    def __init__(self, total: int | None, mode: str) -> None:
        self.bar: Any = None
        self.done = 0
        wanted = mode == "always" or (
            mode == "auto"
            and total is not None
            and total >= PROGRESS_THRESHOLD
            and sys.stderr.isatty()
        )
        if not wanted:
            return
        try:
            tqdm: Any = importlib.import_module("tqdm").tqdm
        except ImportError:
            return
        self.bar = tqdm(
            total=total, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr, leave=False
        )

    def update(self, position: int | None) -> None:
        if self.bar is not None and position is not None and position > self.done:
            self.bar.update(position - self.done)
            self.done = position

    def write(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
        else:
            print(line)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def cmd_verify(args: argparse.Namespace) -> int:
    size = _log_size(args)
    progress = _Progress(size, args.progress)
    damage = _Damage(progress.write if not args.quiet else (lambda line: None))
    records = 0
    try:
        with _open_reader(args, damage) as reader:
            for _ in _records(reader, args.log):
                records += 1
                if progress.bar is not None:
                    progress.update(reader.position)
            progress.update(reader.position)
            position = reader.position
    finally:
        progress.close()
    if args.quiet:
        return EXIT_CORRUPT if damage.found else EXIT_OK
    # The reader stops before a torn tail; other modes may have stopped earlier (at damage).
    finished = args.recovery == "skip" or not damage.found
    torn = args.end is None and size is not None and position is not None and position < size
    if torn and finished:
        assert size is not None and position is not None  # for mypy: torn says so
        print(f"note: the log ends in a torn tail at offset {position} ({size - position} bytes)")
    if damage.found:
        dropped = sum(c.size for c in damage.found)
        print(
            f"{args.log}: CORRUPT: {len(damage.found)} corruption(s), {dropped} bytes dropped, "
            f"{records} records read"
        )
        return EXIT_CORRUPT
    print(f"{args.log}: OK: {records} records")
    return EXIT_OK


# ---------------------------------------------------------------------------
# stats
# ---------------------------------------------------------------------------


@dataclass
class LogStats:
    """What ``stats`` reports; records are joined from `scan` by the reader's rules."""

    file_bytes: int = 0
    records: int = 0
    record_bytes: int = 0
    physical_records: int = 0
    header_bytes: int = 0
    fragment_types: Counter[str] = field(default_factory=Counter)
    bad_checksums: int = 0
    trailer_bytes: int = 0
    zero_bytes: int = 0
    garbage_bytes: int = 0
    torn_tail_bytes: int = 0
    dropped_bytes: int = 0
    sizes: Counter[int] = field(default_factory=Counter)  # bit length of size -> records
    # The open fragmented record, if any: its payload bytes so far, and its first header.
    _open: int | None = field(default=None, repr=False)
    _open_at: int = field(default=0, repr=False)

    def add(self, r: PhysicalRecord) -> None:
        self.file_bytes = r.end
        if r.kind == "record":
            self._record(r)
        elif r.kind == "trailer":
            self.trailer_bytes += r.size
        elif r.kind == "zero":
            self.zero_bytes += r.size
            self._drop_open()  # "error in middle of record"
        elif r.kind == "garbage":
            self.garbage_bytes += r.size
            self.dropped_bytes += r.size
            self._drop_open()
        else:  # truncated: a torn tail, not corruption; it begins with the open record
            self._torn(self._open_at if self._open is not None else r.offset)

    def finish(self) -> None:
        """Call after the last region: a record still open at the end is a torn tail too."""
        if self._open is not None:
            self._torn(self._open_at)

    def _torn(self, start: int) -> None:
        self.torn_tail_bytes = self.file_bytes - start
        self._open = None

    def _record(self, r: PhysicalRecord) -> None:
        assert r.type is not None  # every record has a header
        self.physical_records += 1
        self.header_bytes += r.size - r.length
        self.fragment_types[_TYPE_NAMES.get(r.type, f"type {r.type}")] += 1
        if r.checksum_ok is False:
            self.bad_checksums += 1
            self.dropped_bytes += r.size  # with the garbage after it: the rest of the block
            self._drop_open()
            return
        if r.type in (1, 2):  # FULL, FIRST: an open record without its end is dropped
            if self._open:  # (silently when it is an old writer's empty FIRST)
                self.dropped_bytes += self._open
            self._open = None
            if r.type == 1:
                self._complete(r.length)
            else:
                self._open, self._open_at = r.length, r.offset
        elif r.type in (3, 4):  # MIDDLE, LAST
            if self._open is None:
                self.dropped_bytes += r.length  # missing start of fragmented record
            elif r.type == 3:
                self._open += r.length
            else:
                self._complete(self._open + r.length)
                self._open = None
        else:  # unknown record type: dropped with the open record
            self.dropped_bytes += r.length + (self._open or 0)
            self._open = None

    def _drop_open(self) -> None:
        if self._open is not None:
            self.dropped_bytes += self._open
            self._open = None

    def _complete(self, length: int) -> None:
        self.records += 1
        self.record_bytes += length
        self.sizes[length.bit_length()] += 1

    @property
    def corrupt(self) -> bool:
        return self.dropped_bytes > 0 or self.bad_checksums > 0 or self.garbage_bytes > 0


def collect_stats(source: str | IO[bytes], verify_checksums: bool = True) -> LogStats:
    """Tally every region of a log (one pass of `scan`, one block in memory at a time)."""
    stats = LogStats()
    for region in scan(source, verify_checksums=verify_checksums):
        stats.add(region)
    stats.finish()
    return stats


def _bucket_range(bucket: int) -> tuple[int, int]:
    """Sizes counted in a bucket: 0 for bucket 0, else ``[2**(b-1), 2**b - 1]``."""
    return (0, 0) if bucket == 0 else (1 << (bucket - 1), (1 << bucket) - 1)


def _stats_json(stats: LogStats) -> dict[str, Any]:
    return {
        "file_bytes": stats.file_bytes,
        "records": stats.records,
        "record_bytes": stats.record_bytes,
        "physical_records": stats.physical_records,
        "header_bytes": stats.header_bytes,
        "fragment_types": dict(sorted(stats.fragment_types.items())),
        "bad_checksums": stats.bad_checksums,
        "trailer_bytes": stats.trailer_bytes,
        "zero_bytes": stats.zero_bytes,
        "garbage_bytes": stats.garbage_bytes,
        "torn_tail_bytes": stats.torn_tail_bytes,
        "dropped_bytes": stats.dropped_bytes,
        "record_sizes": [
            {"min": lo, "max": hi, "count": stats.sizes[b]}
            for b in sorted(stats.sizes)
            for lo, hi in [_bucket_range(b)]
        ],
    }


def _stats_text(stats: LogStats) -> list[str]:
    rows: list[tuple[str, object]] = [
        ("file bytes", stats.file_bytes),
        ("records", stats.records),
        ("record bytes", stats.record_bytes),
        ("physical records", stats.physical_records),
    ]
    rows += [(f"  {name}", count) for name, count in sorted(stats.fragment_types.items())]
    rows += [
        ("header bytes", stats.header_bytes),
        ("trailer bytes", stats.trailer_bytes),
        ("zero-fill bytes", stats.zero_bytes),
        ("torn tail bytes", stats.torn_tail_bytes),
        ("bad checksums", stats.bad_checksums),
        ("garbage bytes", stats.garbage_bytes),
        ("dropped bytes", stats.dropped_bytes),
    ]
    lines = [f"{label:<18}{value:>12}" for label, value in rows]
    if stats.sizes:
        lines.append("record sizes:")
        most = max(stats.sizes.values())
        for b in sorted(stats.sizes):
            lo, hi = _bucket_range(b)
            count = stats.sizes[b]
            bar = "#" * max(1, round(40 * count / most))
            lines.append(f"  {lo:>10} - {hi:<10}{count:>10}  {bar}")
    return lines


def cmd_stats(args: argparse.Namespace) -> int:
    stats = collect_stats(_source(args.log), args.verify_checksums)
    if args.json:
        print(json.dumps(_stats_json(stats)))
    else:
        print("\n".join(_stats_text(stats)))
    return EXIT_CORRUPT if stats.corrupt else EXIT_OK


# ---------------------------------------------------------------------------
# write
# ---------------------------------------------------------------------------


def _lines(f: IO[bytes]) -> Iterator[bytes]:
    for line in f:
        yield line[:-1] if line.endswith(b"\n") else line


def _jsonl(f: IO[bytes]) -> Iterator[bytes]:
    for number, line in enumerate(f, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
            if isinstance(value, str):
                yield value.encode("utf-8")
            elif isinstance(value, dict) and set(value) == {"base64"}:
                yield base64.b64decode(value["base64"], validate=True)
            else:
                raise ValueError('expected a JSON string or {"base64": "..."}')
        except (ValueError, TypeError, UnicodeError) as e:
            raise UsageError(f"input line {number}: {e}") from None


def _length_prefixed(f: IO[bytes]) -> Iterator[bytes]:
    while True:
        prefix = f.read(_LENGTH_PREFIX.size)
        if not prefix:
            return
        if len(prefix) < _LENGTH_PREFIX.size:
            raise UsageError("input ends inside a 4-byte length prefix")
        (length,) = _LENGTH_PREFIX.unpack(prefix)
        payload = f.read(length)
        if len(payload) < length:
            raise UsageError(f"input ends inside a record: {len(payload)} of {length} bytes")
        yield payload


_INPUT_FORMATS: dict[str, Callable[[IO[bytes]], Iterator[bytes]]] = {
    "lines": _lines,
    "jsonl": _jsonl,
    "length-prefixed": _length_prefixed,
}


def cmd_write(args: argparse.Namespace) -> int:
    fmt = "length-prefixed" if args.length_prefixed else args.format
    records = _INPUT_FORMATS[fmt]
    if args.log == "-" and (args.append or _appends_to_a_log(sys.stdout)):
        raise UsageError("to append to a log, give its name and --append (not '>>')")
    if args.input == "-":
        _write_records(args, records(sys.stdin.buffer))
    else:
        with open(args.input, "rb") as f:
            _write_records(args, records(f))
    return EXIT_OK


def _appends_to_a_log(stream: IO[str]) -> bool:
    """Is ``stream`` a non-empty file opened for appending (``>> old.log``)? The writer
    would take the end of the file for offset 0 and misalign every block."""
    try:
        import fcntl  # POSIX only

        fd = stream.fileno()
        return bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND) and os.fstat(fd).st_size > 0
    except (ImportError, OSError, ValueError, io.UnsupportedOperation):
        return False


def _write_records(args: argparse.Namespace, records: Iterator[bytes]) -> None:
    if args.log == "-":
        with Writer(sys.stdout.buffer) as w:
            w.write_many(records)
        sys.stdout.buffer.flush()
    else:
        with Writer(args.log, "a" if args.append else "w") as w:
            w.write_many(records)


# ---------------------------------------------------------------------------
# split
# ---------------------------------------------------------------------------


def cmd_split(args: argparse.Namespace) -> int:
    source = _source(args.log)
    if args.log == "-" and not sys.stdin.buffer.seekable():
        raise UsageError("split needs a file (standard input is not seekable)")
    for start, end in splits(source, n=args.n, size=args.size):
        print(start, end)
    return EXIT_OK


# ---------------------------------------------------------------------------
# Argument parsing
# ---------------------------------------------------------------------------

_SUFFIXES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """A byte count: ``123``, ``0x400``, or with a binary suffix: ``64k``, ``16MiB``, ``1G``."""
    s = text.strip().lower().removesuffix("ib").removesuffix("b")
    number, suffix = (s[:-1], s[-1]) if s and s[-1] in "kmgt" else (s, "")
    try:
        value = int(number, 0) * _SUFFIXES[suffix]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a byte count: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _positive_size(text: str) -> int:
    value = parse_size(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte: {text!r}")
    return value


def _add_log(
    p: argparse.ArgumentParser, what: str = "the log to read ('-': standard input)"
) -> None:
    p.add_argument("log", metavar="LOG", help=what)


def _add_reading_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--recovery",
        choices=_RECOVERY_MODES,
        default="skip",
        help="what a corruption does (default: skip, LevelDB's: report it and go on)",
    )
    p.add_argument(
        "--no-verify-checksums",
        dest="verify_checksums",
        action="store_false",
        help="do not check CRCs",
    )
    p.add_argument(
        "--start",
        type=parse_size,
        default=0,
        metavar="OFFSET",
        help="only records whose first header is at or after OFFSET",
    )
    p.add_argument(
        "--end",
        type=parse_size,
        default=None,
        metavar="OFFSET",
        help="only records whose first header is before OFFSET",
    )


def _dump_parser(sub: Any) -> None:
    p = sub.add_parser(
        "dump",
        help="print every record with its offset",
        description=(
            "Print every record, one per line: offset, length and the payload (text: "
            "printable ASCII as is, other bytes as \\xNN, a backslash as \\\\). With "
            "--leveldb, decode each record as LevelDB does in its own logs: a WriteBatch "
            "(NNNNNN.log) or a VersionEdit (MANIFEST-NNNNNN). Corruptions go to standard error."
        ),
    )
    _add_log(p)
    p.add_argument(
        "--format",
        choices=("text", "hex", "base64", "json"),
        default="text",
        help="how payloads are shown (default: text); json: one JSON object per line, "
        'payloads as strings when UTF-8, else {"base64": ...}',
    )
    p.add_argument(
        "--leveldb", action="store_true", help="decode WriteBatch / VersionEdit payloads"
    )
    p.add_argument(
        "--kind",
        choices=("wal", "manifest", "auto"),
        default="auto",
        help="with --leveldb: what the log holds (default: auto, from the file name)",
    )
    _add_reading_options(p)
    p.set_defaults(run=cmd_dump)


def _cat_parser(sub: Any) -> None:
    p = sub.add_parser(
        "cat",
        help="write raw payloads to standard output",
        description="Write each record's payload to standard output, followed by a delimiter "
        "(default: a newline) or preceded by its length.",
    )
    _add_log(p)
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--delimiter",
        choices=tuple(_DELIMITERS),
        default="newline",
        help="written after each record (default: newline)",
    )
    group.add_argument(
        "--length-prefixed",
        action="store_true",
        help="write each record's length first, as 4 bytes, unsigned little-endian",
    )
    _add_reading_options(p)
    p.set_defaults(run=cmd_cat)


def _verify_parser(sub: Any) -> None:
    p = sub.add_parser(
        "verify",
        help="report every corruption; exit 1 if any",
        description="Read the whole log and report every corruption with its offset, size "
        "and LevelDB's reason, then a summary. Exit status 1 if the log is corrupt. A "
        "progress bar appears on standard error for logs of 16 MiB and more when it is a "
        "terminal and tqdm is installed (pip install 'leveldb-log[progress]').",
    )
    _add_log(p)
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing; exit status only")
    bar = p.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        dest="progress",
        action="store_const",
        const="always",
        default="auto",
        help="always show a progress bar (needs tqdm)",
    )
    bar.add_argument(
        "--no-progress",
        dest="progress",
        action="store_const",
        const="never",
        help="never show a progress bar",
    )
    _add_reading_options(p)
    p.set_defaults(run=cmd_verify)


def _stats_parser(sub: Any) -> None:
    p = sub.add_parser(
        "stats",
        help="counts of records, bytes, fragment types, padding and damage",
        description="Walk every physical record once and report record and byte counts, "
        "fragment types, trailer, zero-fill, torn-tail (from the first header of the record "
        "cut short), garbage and dropped bytes (as the reader in skip mode drops them) and a "
        "histogram of record sizes (power-of-two buckets). Exit status 1 if the log is corrupt.",
    )
    _add_log(p)
    p.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    p.add_argument(
        "--no-verify-checksums",
        dest="verify_checksums",
        action="store_false",
        help="do not check CRCs",
    )
    p.set_defaults(run=cmd_stats)


def _write_parser(sub: Any) -> None:
    p = sub.add_parser(
        "write",
        help="write records from standard input into a log",
        description="Write records read from standard input (or --input) into LOG ('-': "
        "standard output). Input formats: lines (each line without its \\n is a record; "
        "a last line without \\n too), jsonl (each non-blank line a JSON string, stored "
        'as UTF-8, or {"base64": "..."}), length-prefixed (4-byte unsigned little-endian '
        "length, then the record: what cat --length-prefixed writes).",
    )
    _add_log(p, "the log to write ('-': standard output)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument(
        "--format",
        choices=tuple(_INPUT_FORMATS),
        default="lines",
        help="input format (default: lines)",
    )
    fmt.add_argument(
        "--length-prefixed", action="store_true", help="same as --format length-prefixed"
    )
    p.add_argument(
        "-a",
        "--append",
        action="store_true",
        help="append to LOG (cutting a torn tail back first) instead of replacing it",
    )
    p.add_argument(
        "-i", "--input", default="-", metavar="FILE", help="read records from FILE (default: -)"
    )
    p.set_defaults(run=cmd_write)


def _split_parser(sub: Any) -> None:
    p = sub.add_parser(
        "split",
        help="byte ranges that split the log across workers",
        description="Print byte ranges covering the log, one 'START END' per line, cut at "
        "block boundaries. Reading each range with Reader(start=START, end=END) returns "
        "every record exactly once.",
    )
    _add_log(p, "the log to split (a file, or '-' if standard input is one)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("-n", type=_positive_int, metavar="N", help="at most N ranges")
    how.add_argument(
        "--size",
        type=_positive_size,
        metavar="BYTES",
        help="ranges of about BYTES each (whole 32 KiB blocks; suffixes k, M, G)",
    )
    p.set_defaults(run=cmd_split)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Read, check and write LevelDB log files (write-ahead logs, MANIFESTs).",
        epilog="Exit status: 0 success, 1 corrupt log, 2 usage or I/O error.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (
        _dump_parser,
        _cat_parser,
        _verify_parser,
        _stats_parser,
        _write_parser,
        _split_parser,
    ):
        add(sub)
    return parser


# ---------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------


def _silence_stdout() -> None:
    """Standard output went away (``dump | head``): as the Python docs advise, point it at
    /dev/null, so that the interpreter's last flush does not fail again on exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _file_error(e: OSError) -> str:
    name = f" {e.filename!r}" if e.filename is not None else ""
    return f"cannot access{name}: {e.strerror or e}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, or a usage error argparse already reported
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    try:
        status: int = args.run(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except UsageError as e:
        _err(str(e))
        return EXIT_USAGE
    except OSError as e:
        _err(_file_error(e))
        return EXIT_USAGE
    except ValueError as e:  # e.g. a Writer or Reader refusing an argument
        _err(str(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
