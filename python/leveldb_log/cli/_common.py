"""What several subcommands share: exit statuses, messages, LOG arguments and reading.

A subcommand module owns its parser and its run function; the options and helpers that
more than one of them uses live here, so that they read and fail alike. This module is the
bottom of the CLI's helpers: ``_leftovers`` (temporary files a killed command left) and
``_atomic`` (spooling, all-or-nothing writes) use it, and it imports neither.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import struct
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from leveldb_log import _storage
from leveldb_log._core import RECOVERY_MODES, Reader
from leveldb_log._errors import Corruption, CorruptionError

if TYPE_CHECKING:
    from leveldb_log._dialects import Dialect

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

PROG = "leveldb-log"
EXIT_OK = 0
EXIT_CORRUPT = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 1  # what Python itself exits with on EPIPE

#: ``cat --length-prefixed`` and ``write --length-prefixed``: 4-byte little-endian length.
LENGTH_PREFIX = struct.Struct("<I")


class UsageError(Exception):
    """Something the user asked for cannot be done: reported briefly, exit status 2."""


def err(message: str) -> None:
    """Print ``message`` on standard error after the program's name."""
    print(f"{PROG}: {message}", file=sys.stderr)


def shown(name: str | os.PathLike[str] | bytes) -> str:
    """A file name as every message prints it: as typed, with each byte that is not UTF-8
    written ``\\xNN`` and each unprintable character escaped as Python escapes it, so that
    no name can send raw bytes or an escape sequence to a terminal."""
    raw = os.fsencode(name)
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def describe(c: Corruption) -> str:
    """One line for a corruption the reader reported."""
    return f"corruption at offset {c.offset}: {c.reason} ({c.size} bytes dropped)"


# ---------------------------------------------------------------------------
# Arguments
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


def parse_storage_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` of ``--storage-option``: VALUE as JSON when it parses (``true``,
    ``5``, ``{"endpoint_url": "..."}``), else as the string it is."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"not KEY=VALUE: {text!r}")
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        parsed = value
    return key.strip(), parsed


def log_argument(text: str) -> str:
    """The LOG argument: a URL of the local file system (``file://``) becomes its path, so
    that every subcommand treats it as the path it is; any other text is kept."""
    if not _storage.is_url(text):
        return text
    try:
        path = _storage.local_path(text)
    except _storage.FsspecMissingError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    except (ImportError, ValueError) as e:  # a protocol fsspec does not know, or lacks
        raise argparse.ArgumentTypeError(f"{text}: {e}") from None
    return text if path is None else path


def add_log(
    p: argparse.ArgumentParser, what: str = "the log to read ('-': standard input)"
) -> None:
    """The LOG positional argument, which may be a URL, and ``--storage-option``."""
    p.add_argument(
        "log",
        metavar="LOG",
        type=log_argument,
        help=f"{what}; or a URL such as s3://bucket/key.log (needs fsspec)",
    )
    p.add_argument(
        "--storage-option",
        dest="storage_option",
        action="append",
        type=parse_storage_option,
        default=[],
        metavar="KEY=VALUE",
        help="for a LOG given as a URL: an option of its file system (fsspec), such as "
        "anon=true or endpoint_url=http://127.0.0.1:9000; VALUE is read as JSON when it "
        "parses, else as a string; repeatable",
    )


def add_no_verify_checksums(p: argparse.ArgumentParser) -> None:
    """``--no-verify-checksums``, stored as ``verify_checksums``."""
    p.add_argument(
        "--no-verify-checksums",
        dest="verify_checksums",
        action="store_false",
        help="do not check CRCs",
    )


def add_reading_options(p: argparse.ArgumentParser) -> None:
    """The options of the subcommands that read records: recovery, checksums, range."""
    p.add_argument(
        "--recovery",
        choices=RECOVERY_MODES,
        default="skip",
        help="what a corruption does (default: skip, LevelDB's: report it and go on)",
    )
    add_no_verify_checksums(p)
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


# ---------------------------------------------------------------------------
# Reading a LOG argument
# ---------------------------------------------------------------------------


def storage_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``--storage-option`` pairs as a dict (the last of a key wins); None for none.

    Raises
      UsageError: options given for a LOG that is no URL.
    """
    pairs: list[tuple[str, Any]] = getattr(args, "storage_option", [])
    if not pairs:
        return None
    if not _storage.is_url(args.log):
        raise UsageError(
            f"--storage-option applies to a LOG on a store given as a URL (such as "
            f"s3://bucket/key.log), not '{shown(args.log)}'"
        )
    return dict(pairs)


@contextlib.contextmanager
def fsspec_needed() -> Iterator[None]:
    """A URL without fsspec installed is a usage error (exit status 2), not a traceback."""
    try:
        yield
    except _storage.FsspecMissingError as e:
        raise UsageError(str(e)) from None


def source(path: str, options: dict[str, Any] | None = None) -> str | io.BufferedReader:
    """The LOG argument as a source: the path; for a URL, the binary file it opens (a
    local one's path); or standard input for ``-``."""
    if path == "-":
        return cast(io.BufferedReader, sys.stdin.buffer)
    if _storage.is_url(path):
        with fsspec_needed():
            opened = _storage.open_url(path, "rb", options)
        return opened if isinstance(opened, str) else cast(io.BufferedReader, opened)
    return path


def open_reader(
    args: argparse.Namespace, on_corruption: Callable[[Corruption], object], dialect: Dialect
) -> Reader:
    """A Reader over LOG with the reading options of ``args``, in ``dialect`` (the one
    `_dialect.resolve` gives for ``--dialect``)."""
    if args.end is not None and args.end < args.start:
        raise UsageError(f"--end {args.end} is before --start {args.start}")
    options = storage_options(args)
    url = _storage.is_url(args.log)
    with fsspec_needed():
        return Reader(
            args.log if url else source(args.log),
            recovery=args.recovery,
            verify_checksums=args.verify_checksums,
            start=args.start,
            end=args.end,
            on_corruption=on_corruption,
            storage_options=options if url else None,
            dialect=dialect,
        )


def log_size(args: argparse.Namespace) -> int | None:
    """The length of LOG: None for standard input; a URL's from its store."""
    if args.log == "-":
        return None
    if _storage.is_url(args.log):
        return _storage.size(args.log, storage_options(args))
    return os.stat(args.log).st_size


@dataclass
class Damage:
    """Corruptions seen while reading, reported as they come."""

    report: Callable[[str], object]
    found: list[Corruption] = field(default_factory=list)

    def __call__(self, c: Corruption) -> None:
        """The reader's ``on_corruption``: keep ``c`` and report it."""
        self.found.append(c)
        self.report(describe(c))


def records(reader: Reader, name: str) -> Iterator[tuple[int, bytes]]:
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
