"""``leveldb-log write``: records from lines, JSON lines or length-prefixed input into a log."""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING

from leveldb_log import _storage
from leveldb_log._core import Writer
from leveldb_log._public import module_dir
from leveldb_log.cli import _atomic, _signals
from leveldb_log.cli._common import EXIT_OK, LENGTH_PREFIX, UsageError, add_log
from leveldb_log.cli._progress import Counting, Progress, add_progress

if TYPE_CHECKING:
    from leveldb_log.cli._common import Subparsers

__all__ = ["register", "run"]
__dir__ = module_dir(globals())


def _lines(f: IO[bytes]) -> Iterator[bytes]:
    """Each line without its newline (a last line without one too)."""
    for line in f:
        yield line[:-1] if line.endswith(b"\n") else line


def _jsonl(f: IO[bytes]) -> Iterator[bytes]:
    """Each non-blank line: a JSON string (stored as UTF-8) or ``{"base64": ...}``."""
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
            raise UsageError(
                f'input line {number}: {e} (each line must be a JSON string or {{"base64": "..."}})'
            ) from None


def _length_prefixed(f: IO[bytes]) -> Iterator[bytes]:
    """Records each after its 4-byte little-endian length (``cat --length-prefixed``)."""
    while True:
        prefix = f.read(LENGTH_PREFIX.size)
        if not prefix:
            return
        if len(prefix) < LENGTH_PREFIX.size:
            raise UsageError("input ends inside a 4-byte length prefix")
        (length,) = LENGTH_PREFIX.unpack(prefix)
        payload = f.read(length)
        if len(payload) < length:
            raise UsageError(f"input ends inside a record: {len(payload)} of {length} bytes")
        yield payload


_INPUT_FORMATS: dict[str, Callable[[IO[bytes]], Iterator[bytes]]] = {
    "lines": _lines,
    "jsonl": _jsonl,
    "length-prefixed": _length_prefixed,
}


def register(subparsers: Subparsers) -> None:
    """Add the ``write`` subcommand and its options."""
    p = subparsers.add_parser(
        "write",
        help="write records from standard input into a log",
        description="Write records read from standard input (or --input) into LOG ('-': "
        "standard output). Input formats: lines (each line without its \\n is a record; "
        "a last line without \\n too), jsonl (each non-blank line a JSON string, stored "
        'as UTF-8, or {"base64": "..."}), length-prefixed (4-byte unsigned little-endian '
        "length, then the record: what cat --length-prefixed writes). Without --append "
        "the new log is written to a temporary file beside LOG and renamed over it once "
        "complete: a failed write leaves LOG as it was, and a hard link to LOG keeps the old "
        "log (a symbolic link is followed and its target replaced).",
    )
    add_log(p, "the log to write ('-': standard output)")
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
    add_progress(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the records of the input into LOG."""
    fmt = "length-prefixed" if args.length_prefixed else args.format
    records = _INPUT_FORMATS[fmt]
    if args.log == "-" and (args.append or _appends_to_a_log(sys.stdout)):
        raise UsageError("to append to a log, give its name and --append (not '>>')")
    with _signals.as_exceptions(), contextlib.ExitStack() as stack:  # SIGTERM, SIGHUP:
        # rolled back as Ctrl-C is
        f = sys.stdin.buffer if args.input == "-" else stack.enter_context(open(args.input, "rb"))
        progress = stack.enter_context(Progress(lambda: _input_size(f), args.progress))
        if progress.bar is not None:  # the bar follows the input as it is read
            f = stack.enter_context(io.BufferedReader(Counting(f, progress)))
        try:
            _write_records(args, records(f))
        except OSError as e:  # name the log as typed, also where the OS names no file
            if args.log != "-" and e.filename in (None, os.path.realpath(args.log)):
                e.filename = args.log
            raise
    return EXIT_OK


def _input_size(f: IO[bytes]) -> int | None:
    """The bytes left in the input when it is a regular file, else None (a pipe)."""
    try:
        info = os.fstat(f.fileno())
        return info.st_size - f.tell() if stat.S_ISREG(info.st_mode) else None
    except (OSError, ValueError, io.UnsupportedOperation):
        return None


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
    """Write ``records`` to LOG (or standard output), in mode "a" with --append; a failure
    leaves LOG as it was (see ``_atomic``)."""
    if args.log == "-":
        with Writer(sys.stdout.buffer) as w:
            w.write_many(records)
        sys.stdout.buffer.flush()
    elif _storage.is_url(args.log):
        _atomic.to_url(args, records)
    elif args.append:
        _atomic.append(args.log, records)
    else:
        _atomic.replace(args.log, records)
