"""``leveldb-log stats``: the figures of `leveldb_log.stats`, as a table or as JSON."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import stat
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from leveldb_log import LogStats, stats
from leveldb_log._public import module_dir
from leveldb_log.cli import _database, _datastore
from leveldb_log.cli._common import (
    EXIT_CORRUPT,
    EXIT_OK,
    add_log,
    add_no_verify_checksums,
    shown,
    source,
    storage_options,
)
from leveldb_log.cli._dialect import add_dialect, resolve
from leveldb_log.cli._progress import Counting, Progress, add_progress
from leveldb_log.cli._verdict import reader_warnings

if TYPE_CHECKING:
    from leveldb_log.cli._common import Subparsers

__all__ = ["register", "run"]
__dir__ = module_dir(globals())


def register(subparsers: Subparsers) -> None:
    """Add the ``stats`` subcommand and its options."""
    p = subparsers.add_parser(
        "stats",
        help="counts of records, bytes, fragment types, padding and damage",
        description="Walk every physical record once and report record and byte counts, "
        "fragment types, trailer, zero-fill, torn-tail (from the first header of the record "
        "cut short), garbage and dropped bytes (as the reader in skip mode drops them) and a "
        "histogram of record sizes (power-of-two buckets). Exit status 1 if the log is corrupt. "
        "For a Firestore/Datastore export (a folder or a metadata file: entity counts only) or "
        "one of its output-N files: the entities per kind. A database folder (one holding "
        "CURRENT): each of its write-ahead logs, in log-number order, after a line "
        "'==> LOG <==' (JSON: one object a log, naming it).",
    )
    add_log(p)
    p.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    add_no_verify_checksums(p)
    add_dialect(p)
    _database.add_manifest(p)
    add_progress(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the statistics of LOG; exit status 1 if it is corrupt."""
    export = _datastore.is_export(args)
    if export and not _datastore.is_one_file(args.log):
        return _datastore.stats(args)
    logs = _database.logs(args)
    if logs is None:
        return _log(args, export)
    return max([EXIT_OK, *(_log(each, False, each.log) for each in _database.each(args, logs))])


def _log(args: argparse.Namespace, export: bool, named: str | None = None) -> int:
    """Print the statistics of one log (a database's: ``named``, in a line before them, or
    first in the JSON object); exit status 1 if it is corrupt."""
    dialect = resolve(args)
    with reader_warnings(args.log) as not_a_log, _opened(args) as log:
        figures = stats(log, verify_checksums=args.verify_checksums, dialect=dialect)
    kinds, error = None, None
    if export:  # an export's output file: its entities per kind too
        kinds, _, error = _datastore.counts(args)
    if args.json:
        extra = _datastore.count_json(kinds) if kinds is not None else {}
        first = {"log": named} if named is not None else {}
        print(json.dumps({**first, **_json(figures), **extra}))
    else:
        extra_rows = _datastore.count_rows(kinds) if kinds is not None else []
        if named is not None:
            print(f"==> {shown(named)} <==")
        print("\n".join(_text(figures, extra_rows)))
    return EXIT_CORRUPT if figures.corrupt or not_a_log or error else EXIT_OK


@contextlib.contextmanager
def _opened(args: argparse.Namespace) -> Iterator[Any]:
    """LOG as stats() takes it. stats() reads a log twice (its layout, then its records), so
    a path that is no regular file (a FIFO, a device) is opened here, once: stats() copies
    what cannot seek before reading it twice. With a progress bar, the file is read through
    a counter (twice over, for a file that can seek)."""
    log = source(args.log, storage_options(args))
    regular = isinstance(log, str) and stat.S_ISREG(os.stat(log).st_mode)
    size = os.stat(log).st_size if isinstance(log, str) and regular else None
    with contextlib.ExitStack() as stack:
        total = None if size is None else 2 * size
        progress = stack.enter_context(Progress(lambda: total, args.progress))
        if progress.bar is None and (regular or not isinstance(log, str)):
            yield log
            return
        f: IO[bytes] = stack.enter_context(open(log, "rb")) if isinstance(log, str) else log
        yield f if progress.bar is None else Counting(f, progress)


def _json(s: LogStats) -> dict[str, Any]:
    """The statistics as one JSON object."""
    return {
        "file_bytes": s.file_bytes,
        "records": s.records,
        "record_bytes": s.record_bytes,
        "physical_records": s.physical_records,
        "header_bytes": s.header_bytes,
        "fragment_types": dict(s.fragment_types),
        "bad_checksums": s.bad_checksums,
        "trailer_bytes": s.trailer_bytes,
        "zero_bytes": s.zero_bytes,
        "garbage_bytes": s.garbage_bytes,
        "torn_tail_bytes": s.torn_tail_bytes,
        "dropped_bytes": s.dropped_bytes,
        "corruptions": s.corruptions,
        "record_sizes": [{"min": b.low, "max": b.high, "count": b.records} for b in s.record_sizes],
    }


def _text(s: LogStats, extra_rows: list[tuple[str, int]]) -> list[str]:
    """The statistics as a table (with ``extra_rows`` at its end), then a histogram of
    record sizes. The labels' column is as wide as the longest label needs."""
    rows: list[tuple[str, object]] = [
        ("file bytes", s.file_bytes),
        ("records", s.records),
        ("record bytes", s.record_bytes),
        ("physical records", s.physical_records),
    ]
    rows += [(f"  {name}", count) for name, count in s.fragment_types]
    rows += [
        ("header bytes", s.header_bytes),
        ("trailer bytes", s.trailer_bytes),
        ("zero-fill bytes", s.zero_bytes),
        ("torn tail bytes", s.torn_tail_bytes),
        ("bad checksums", s.bad_checksums),
        ("garbage bytes", s.garbage_bytes),
        ("dropped bytes", s.dropped_bytes),
        ("corruptions", s.corruptions),
    ]
    rows += extra_rows
    width = max(18, *(len(label) + 2 for label, _ in rows))
    lines = [f"{label:<{width}}{value:>12}" for label, value in rows]
    if s.record_sizes:
        lines.append("record sizes:")
        most = max(b.records for b in s.record_sizes)
        for b in s.record_sizes:
            bar = "#" * max(1, round(40 * b.records / most))
            lines.append(f"  {b.low:>10} - {b.high:<10}{b.records:>10}  {bar}")
    return lines
