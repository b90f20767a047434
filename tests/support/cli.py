"""The command line, run as users run it."""

from __future__ import annotations

import os
import subprocess
import sys


def run_cli(
    *args: str | os.PathLike[str], input: bytes = b"", cwd: os.PathLike[str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``python -m leveldb_log ARGS`` with ``input`` on standard input (checks nothing)."""
    result = subprocess.run(
        [sys.executable, "-m", "leveldb_log", *map(str, args)],
        input=input,
        capture_output=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    return result


def run_cli_asserting_no_traceback(
    *args: str | os.PathLike[str], input: bytes = b"", cwd: os.PathLike[str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """run_cli(*args), asserting that it printed no traceback, whatever its exit status: a
    command that fails says why in a sentence. Returns what run_cli returns."""
    result = run_cli(*args, input=input, cwd=cwd)
    assert b"Traceback" not in result.stderr, result.stderr.decode()
    return result
