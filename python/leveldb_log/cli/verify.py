"""``leveldb-log verify``: every corruption with its offset, then a summary."""

from __future__ import annotations

import argparse
import os
import stat
from typing import TYPE_CHECKING

from leveldb_log import _storage
from leveldb_log._core import _append_point
from leveldb_log._errors import Corruption, CorruptionError
from leveldb_log._public import module_dir
from leveldb_log._stats import torn_tail_bytes
from leveldb_log.cli import _database, _datastore
from leveldb_log.cli._common import (
    EXIT_CORRUPT,
    EXIT_OK,
    Damage,
    add_log,
    add_reading_options,
    log_size,
    open_reader,
    records,
    shown,
)
from leveldb_log.cli._dialect import add_dialect
from leveldb_log.cli._progress import Progress, add_progress
from leveldb_log.cli._verdict import ends_in_zero_fill, reader_warnings

if TYPE_CHECKING:
    from leveldb_log._detect import Dialect
    from leveldb_log.cli._common import Subparsers

__all__ = ["register", "run"]
__dir__ = module_dir(globals())


def register(subparsers: Subparsers) -> None:
    """Add the ``verify`` subcommand and its options."""
    p = subparsers.add_parser(
        "verify",
        help="report every corruption; exit 1 if any",
        description="Read the whole log and report every corruption with its offset, size "
        "and LevelDB's reason, then a summary. Exit status 1 if the log is corrupt. For a "
        "Firestore/Datastore export (a folder or a metadata file): every log of it, the "
        "overall metadata and each output file, one summary line each, then the export's; "
        "a database folder (one holding CURRENT): each of its write-ahead logs so, then the "
        "database's (--manifest: its live MANIFEST too). "
        "A progress bar appears on standard error for logs of 16 MiB and more when it is a "
        "terminal and tqdm is installed (pip install 'leveldb-log[progress]').",
    )
    add_log(p)
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing; exit status only")
    add_progress(p)
    add_reading_options(p)
    add_dialect(p)
    _database.add_manifest(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Read LOG through, reporting damage; exit status 1 if it is corrupt. An export
    folder or metadata file: each of its logs so, then one line for the export."""
    if _datastore.is_export(args) and not _datastore.is_one_file(args.log):
        return _several(args, _datastore.logs(args))
    logs = _database.logs(args)
    return _log(args) if logs is None else _several(args, logs)


def _several(args: argparse.Namespace, logs: list[str]) -> int:
    """Verify every log of the export or database LOG, then say what holds for all of
    them; exit status 1 if any is corrupt."""
    corrupt = [each.log for each in _database.each(args, logs) if _log(each)]
    if not args.quiet:
        if corrupt:
            print(f"{shown(args.log)}: CORRUPT: {len(corrupt)} of {len(logs)} logs")
        else:
            print(f"{shown(args.log)}: OK: {len(logs)} logs")
    return EXIT_CORRUPT if corrupt else EXIT_OK


def _log(args: argparse.Namespace) -> int:
    """Read one log through, reporting damage; exit status 1 if it is corrupt."""
    size = log_size(args)
    progress = Progress(lambda: size, args.progress)
    damage = Damage(progress.write if not args.quiet else (lambda line: None))
    count = 0
    try:
        with (
            reader_warnings(args.log, lambda line: None) as heard,
            open_reader(args, damage, args.dialect) as reader,
        ):
            for _ in records(reader, args.log):
                count += 1
                if progress.bar is not None:
                    progress.to(reader.position)
            progress.to(reader.position)
            position = reader.position
            dialect = reader.dialect  # --dialect auto: the one block 0 told
    finally:
        progress.close()
    seen = len(damage.found)
    not_a_log = _check_the_end(args, damage, dialect)
    if len(damage.found) == seen and not not_a_log:  # where that check could not look
        for c in heard:  # the Reader's warning: a tail no writer leaves
            damage(c)
    if args.quiet:
        return EXIT_CORRUPT if damage.found or not_a_log else EXIT_OK
    if not_a_log:
        print(f"{shown(args.log)}: NOT A LOG: {not_a_log}")
        return EXIT_CORRUPT
    if len(damage.found) == seen:  # (a tail no writer leaves was reported instead)
        _note_torn_tail(args, damage, size, position)
    return _summary(args.log, damage, count)


def _check_the_end(args: argparse.Namespace, damage: Damage, dialect: Dialect) -> str | None:
    """What a reader passes over silently at the end of a file: a torn tail that no writer
    of this format leaves (an unknown type, a length that cannot fit its block...), and a
    "torn tail" followed by intact records (damage such as a flipped length bit), are
    reported as damage; a file with no valid record at all is no log (the reason is
    returned). The rule is mode "a"'s (docs/format.md, "Appending"); it needs a file."""
    if args.log == "-" or _storage.is_url(args.log) or args.start or args.end is not None:
        return None
    if not stat.S_ISREG(os.stat(args.log).st_mode) or os.stat(args.log).st_size == 0:
        return None
    try:
        found = _append_point(args.log, dialect=dialect)[3]
    except CorruptionError as e:
        if getattr(e, "no_log", False):  # set by _append_point: no valid record at all
            return e.reason
        damage(Corruption(e.offset, e.size, f"implausible torn tail: {e.reason}"))
        return None
    if found is not None:
        damaged_at, intact_at = found
        damage(
            Corruption(
                damaged_at,
                intact_at - damaged_at,
                f"damage before intact records: what follows offset {damaged_at} is no "
                f"torn tail, since a valid record lies at offset {intact_at}",
            )
        )
    return None


def _note_torn_tail(
    args: argparse.Namespace, damage: Damage, size: int | None, position: int | None
) -> None:
    """Say where a torn tail begins, if the read stopped before the end of the file."""
    # The reader stops before a torn tail; other modes may have stopped earlier (at damage).
    finished = args.recovery == "skip" or not damage.found
    if not finished or args.end is not None or size is None or position is None:
        return
    if position >= size:
        return
    torn = torn_tail_bytes(size, position, ends_in_zero_fill(args.log))
    if torn == 0:  # (stats counts it as zero fill, too)
        print("note: the log ends in zero fill (preallocated space)")
    else:
        print(f"note: the log ends in a torn tail at offset {position} ({torn} bytes)")


def _summary(log: str, damage: Damage, count: int) -> int:
    """Print the last line, OK or CORRUPT; return the exit status."""
    if damage.found:
        dropped = sum(c.size for c in damage.found)
        print(
            f"{shown(log)}: CORRUPT: {len(damage.found)} corruption(s), {dropped} bytes dropped, "
            f"{count} records read"
        )
        return EXIT_CORRUPT
    print(f"{shown(log)}: OK: {count} records")
    return EXIT_OK
