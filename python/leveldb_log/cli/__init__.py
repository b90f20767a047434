"""The ``leveldb-log`` command line (also ``python -m leveldb_log``).

Subcommands: ``dump``, ``cat``, ``verify``, ``stats``, ``write``, ``split``; each has
``--help``. A LOG argument of ``-`` means standard input (standard output for ``write``).
Each lives in its own module here, which owns both its parser (``register``) and its code
(``run``); ``_common`` holds what several share.

Exit status: 0 on success; 1 when the log is corrupt (any corruption reported, a recovery
mode that refuses the log, a LevelDB payload that does not decode) or is not a log (the
Reader's warning of a tail no writer leaves, docs/recovery.md "One verdict, every tool"),
or when standard output is closed early (as Python itself does on a broken pipe); 2 on
usage errors and when a file cannot be opened, read or written, or the input of ``write``
is malformed; 130 on Ctrl-C; 128 + the signal's number when SIGTERM or SIGHUP stops
``write`` (rolled back as Ctrl-C).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import leveldb_log
from leveldb_log._errors import CorruptionError
from leveldb_log._public import module_dir
from leveldb_log.cli import cat, dump, split, stats, verify, write
from leveldb_log.cli._common import (
    EXIT_BROKEN_PIPE,
    EXIT_CORRUPT,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    PROG,
    UsageError,
    err,
    shown,
)
from leveldb_log.cli._signals import Terminated

__all__ = ["build_parser", "main"]
__dir__ = module_dir(globals())

#: The subcommands, in the order ``--help`` lists them.
SUBCOMMANDS = (dump, cat, verify, stats, write, split)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Read, check and write LevelDB log files (write-ahead logs, MANIFESTs).",
        epilog="Exit status: 0 success, 1 corrupt log, 2 usage or I/O error.",
    )
    version = f"%(prog)s {leveldb_log.__version__}"
    parser.add_argument("--version", action="version", version=version)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in SUBCOMMANDS:
        command.register(subparsers)
    return parser


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
        err(str(e))
        return EXIT_USAGE
    except OSError as e:
        err(_file_error(e))
        return EXIT_USAGE
    except CorruptionError as e:  # e.g. --append to a file that does not end like a log
        err(str(e))
        return EXIT_CORRUPT
    except ValueError as e:  # e.g. a Writer or Reader refusing an argument
        err(str(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Terminated as e:  # SIGTERM or SIGHUP during write, rolled back
        return 128 + e.signum


def _silence_stdout() -> None:
    """Standard output went away (``dump | head``): as the Python docs advise, point it at
    /dev/null, so that the interpreter's last flush does not fail again on exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _file_error(e: OSError) -> str:
    """The message for a file that cannot be opened, read or written."""
    name = f" '{shown(e.filename)}'" if e.filename is not None else ""
    return f"cannot access{name}: {e.strerror or e}"
