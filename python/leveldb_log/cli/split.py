"""``leveldb-log split``: byte ranges, cut at block boundaries, for parallel readers."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from leveldb_log._public import module_dir
from leveldb_log._splits import splits
from leveldb_log.cli._common import (
    EXIT_OK,
    UsageError,
    add_log,
    parse_size,
    source,
    storage_options,
)

if TYPE_CHECKING:
    from leveldb_log.cli._common import Subparsers

__all__ = ["register", "run"]
__dir__ = module_dir(globals())


def _positive_int(text: str) -> int:
    """An argument type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _positive_size(text: str) -> int:
    """An argument type: a byte count of at least 1."""
    value = parse_size(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte: {text!r}")
    return value


def register(subparsers: Subparsers) -> None:
    """Add the ``split`` subcommand and its options."""
    p = subparsers.add_parser(
        "split",
        help="byte ranges that split the log across workers",
        description="Print byte ranges covering the log, one 'START END' per line, cut at "
        "block boundaries. Reading each range with Reader(start=START, end=END) returns "
        "every record exactly once.",
    )
    add_log(p, "the log to split (a file, or '-' if standard input is one)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("-n", type=_positive_int, metavar="N", help="at most N ranges")
    how.add_argument(
        "--size",
        type=_positive_size,
        metavar="BYTES",
        help="ranges of about BYTES each (whole 32 KiB blocks; suffixes k, M, G)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the ranges, one ``START END`` per line."""
    log = source(args.log, storage_options(args))
    if args.log == "-" and not sys.stdin.buffer.seekable():
        raise UsageError("split needs a file (standard input is not seekable)")
    for start, end in splits(log, n=args.n, size=args.size):
        print(start, end)
    return EXIT_OK
