"""``--dialect``: which engine's log format the reading subcommands read.

``leveldb``, ``rocksdb`` or ``pebble`` are passed on to the reader (docs/rocksdb.md says
what each reads); ``auto``, the default, picks one from the log's first block where that is
unambiguous, else ``leveldb``. ``dump``, ``cat`` and ``verify`` pass ``auto`` on to
``Reader(dialect="auto")``, which tells it from the block 0 it reads itself (a pipe's too);
``stats``, whose figures come from ``scan``, names the dialect that `resolve` gives.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable

from leveldb_log._core import BLOCK_SIZE
from leveldb_log._detect import Dialect, detect_dialect
from leveldb_log._dialects import DIALECTS

__all__ = ["CHOICES", "add_dialect", "resolve"]

#: The choices of ``--dialect``: the package's dialects, and "auto".
CHOICES = ("auto", *DIALECTS)


def add_dialect(p: argparse.ArgumentParser, note: str = "") -> None:
    """Add ``--dialect`` (stored as ``dialect``, default ``auto``) to a subcommand."""
    p.add_argument(
        "--dialect",
        choices=CHOICES,
        default="auto",
        help="the engine that wrote the log (default: auto, from its first block where "
        "that is unambiguous, else leveldb)" + note,
    )


def _first_block(log: str) -> bytes:
    """Up to 32 KiB from the start of LOG, without consuming anything a reader needs.

    Standard input is peeked at (what its buffer holds); a path that is not a regular file
    (a pipe, a directory) or cannot be opened gives no bytes: the reader reports the rest.
    """
    if log == "-":
        peek: Callable[[int], bytes] | None = getattr(sys.stdin.buffer, "peek", None)
        return peek(BLOCK_SIZE)[:BLOCK_SIZE] if peek is not None else b""
    try:
        if not stat.S_ISREG(os.stat(log).st_mode):
            return b""
        with open(log, "rb") as f:
            return f.read(BLOCK_SIZE)
    except OSError:
        return b""


def resolve(args: argparse.Namespace) -> Dialect:
    """The dialect to read LOG in: ``--dialect``, or for ``auto`` the one detected."""
    if args.dialect != "auto":
        chosen: Dialect = args.dialect
        return chosen
    return detect_dialect(_first_block(args.log))
