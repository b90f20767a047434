"""Database folders copied while their database is open (tests/interop): what
``database_logs`` lists, the records of those logs read with ``dialect="auto"``, and what
``cat`` and ``verify`` say of the folder. Every check is strict: no corruption, no warning
(pytest turns one into an error), nothing on standard error."""

from __future__ import annotations

import pathlib
import re
import struct

import leveldb_log

from support.cli import run_cli_asserting_no_traceback


def wal_names(folder: pathlib.Path) -> list[str]:
    """The folder's write-ahead logs, found here by their names alone (NNNNNN.log)."""
    logs = [p for p in folder.iterdir() if re.fullmatch(r"[0-9]+\.log", p.name)]
    return [str(p) for p in sorted(logs, key=lambda p: int(p.stem))]


def logs_listed(folder: pathlib.Path) -> list[str]:
    """database_logs(folder), asserted to be exactly its WALs, at least one."""
    found = leveldb_log.database_logs(folder)
    assert found == wal_names(folder) and found, sorted(p.name for p in folder.iterdir())
    return found


def _refuse(c: leveldb_log.Corruption) -> None:
    raise AssertionError(f"a corruption in a log of a database copied while open: {c}")


def read_logs(logs: list[str], dialect: str) -> list[bytes]:
    """Every record of the logs, in order, read with dialect="auto", which must tell
    ``dialect``; any corruption fails."""
    records: list[bytes] = []
    for log in logs:
        with leveldb_log.Reader(log, dialect="auto", on_corruption=_refuse) as r:
            assert r.dialect == dialect, log
            records += list(r)
    return records


def assert_cli_agrees(folder: pathlib.Path, records: list[bytes], logs: int) -> None:
    """``cat --length-prefixed`` of the folder gives exactly the records, ``verify`` says it
    is OK; neither writes to standard error (no warning about tables, LOG or CURRENT)."""
    cat = run_cli_asserting_no_traceback("cat", "--length-prefixed", folder)
    assert (cat.returncode, cat.stderr) == (0, b"")
    assert _length_prefixed(cat.stdout) == records
    verify = run_cli_asserting_no_traceback("verify", folder)
    assert (verify.returncode, verify.stderr) == (0, b"")
    assert verify.stdout.decode().splitlines()[-1] == f"{folder}: OK: {logs} logs"


def _length_prefixed(data: bytes) -> list[bytes]:
    out, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<I", data, at)
        out.append(data[at + 4 : at + 4 + n])
        at += 4 + n
    return out
