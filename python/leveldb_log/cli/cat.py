"""``leveldb-log cat``: the raw payloads, delimited or length-prefixed."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from leveldb_log._public import module_dir
from leveldb_log.cli import _database
from leveldb_log.cli._common import (
    EXIT_CORRUPT,
    EXIT_OK,
    LENGTH_PREFIX,
    Damage,
    UsageError,
    add_log,
    add_reading_options,
    log_size,
    open_reader,
    records,
)
from leveldb_log.cli._dialect import add_dialect
from leveldb_log.cli._progress import Progress, add_progress
from leveldb_log.cli._verdict import reader_warnings

if TYPE_CHECKING:
    from leveldb_log.cli._common import Subparsers

__all__ = ["register", "run"]
__dir__ = module_dir(globals())

_DELIMITERS = {"newline": b"\n", "nul": b"\0", "none": b""}


def register(subparsers: Subparsers) -> None:
    """Add the ``cat`` subcommand and its options."""
    p = subparsers.add_parser(
        "cat",
        help="write raw payloads to standard output",
        description="Write each record's payload to standard output, followed by a delimiter "
        "(default: a newline) or preceded by its length. A database folder (one holding "
        "CURRENT): its write-ahead logs, in log-number order.",
    )
    add_log(p)
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
    add_reading_options(p)
    add_dialect(p)
    _database.add_manifest(p)
    add_progress(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the payloads of LOG (or of each log of a database folder) to standard output;
    exit status 1 if any corruption."""
    logs = _database.logs(args)
    if logs is None:
        return _log(args)
    return max([EXIT_OK, *(_log(each) for each in _database.each(args, logs))])


def _log(args: argparse.Namespace) -> int:
    """Write the payloads of one log; exit status 1 if any corruption."""
    progress = Progress(lambda: log_size(args), args.progress, prints_records=True)
    damage = Damage(progress.err)
    out = sys.stdout.buffer
    delimiter = _DELIMITERS[args.delimiter]
    with (
        progress,
        reader_warnings(args.log, progress.err) as not_a_log,
        open_reader(args, damage, args.dialect) as reader,
    ):
        for _, payload in records(reader, args.log):
            if progress.bar is not None:
                progress.to(reader.position)
            if args.length_prefixed:
                if len(payload) > 0xFFFFFFFF:
                    raise UsageError("record too long for a 4-byte length prefix")
                out.write(LENGTH_PREFIX.pack(len(payload)))
                out.write(payload)
            else:
                out.write(payload)
                out.write(delimiter)
    return EXIT_CORRUPT if damage.found or not_a_log else EXIT_OK
