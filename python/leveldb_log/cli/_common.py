"""What several subcommands share: exit statuses, messages, LOG arguments and reading.

A subcommand module owns its parser and its run function; the options and helpers that
more than one of them uses live here, so that they read and fail alike.
"""

from __future__ import annotations

import argparse
import io
import struct
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias, cast

from leveldb_log._core import RECOVERY_MODES, Reader
from leveldb_log._errors import Corruption, CorruptionError

if TYPE_CHECKING:
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


def add_log(
    p: argparse.ArgumentParser, what: str = "the log to read ('-': standard input)"
) -> None:
    """The LOG positional argument."""
    p.add_argument("log", metavar="LOG", help=what)


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


def source(path: str) -> str | io.BufferedReader:
    """The LOG argument as a source: the path, or standard input for ``-``."""
    return cast(io.BufferedReader, sys.stdin.buffer) if path == "-" else path


def open_reader(args: argparse.Namespace, on_corruption: Callable[[Corruption], object]) -> Reader:
    """A Reader over LOG with the reading options of ``args``."""
    if args.end is not None and args.end < args.start:
        raise UsageError(f"--end {args.end} is before --start {args.start}")
    return Reader(
        source(args.log),
        recovery=args.recovery,
        verify_checksums=args.verify_checksums,
        start=args.start,
        end=args.end,
        on_corruption=on_corruption,
    )


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
