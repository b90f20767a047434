"""A database folder as LOG: ``cat``, ``dump``, ``verify`` and ``stats`` read its write-ahead
logs in log-number order, each in the dialect its first block tells, and never its tables,
LOG or CURRENT (nothing on standard error about them); ``--manifest`` adds the MANIFEST.
Real LevelDB and RocksDB folders are read in tests/interop; these are built here."""

from __future__ import annotations

import json
import pathlib

import leveldb_log
import pytest
from support.cli import run_cli_asserting_no_traceback as run

LEVELDB_RECORDS = [b"leveldb one", b"leveldb two" * 5000]
ROCKSDB_RECORDS = [b"rocksdb one", b"", b"rocksdb three"]
MANIFEST_RECORDS = [b"edit one", b"edit two"]


def make_database(folder: pathlib.Path) -> pathlib.Path:
    """A folder as a database leaves it: two logs, LevelDB's 999999.log and RocksDB's
    recyclable 1000000.log (which sorts first by name, last by number); a MANIFEST,
    CURRENT, a table, LOG, LOCK and an OPTIONS file, none of them a log."""
    folder.mkdir()
    with leveldb_log.Writer(folder / "999999.log") as w:
        w.write_many(LEVELDB_RECORDS)
    with leveldb_log.Writer(folder / "1000000.log", dialect="rocksdb", recycle=True) as w:
        w.write_many(ROCKSDB_RECORDS)
    with leveldb_log.Writer(folder / "MANIFEST-000002") as w:
        w.write_many(MANIFEST_RECORDS)
    (folder / "CURRENT").write_bytes(b"MANIFEST-000002\n")
    (folder / "000004.ldb").write_bytes(b"\x01table bytes, no log" * 3000)
    (folder / "LOG").write_text("2026/12/07-02:00:00.000000 Recovering log #5\n")
    (folder / "LOCK").write_bytes(b"")
    (folder / "OPTIONS-000007").write_text("[Version]\n")
    return folder


@pytest.fixture
def db(tmp_path: pathlib.Path) -> pathlib.Path:
    return make_database(tmp_path / "db")


def test_cat_gives_every_log_s_records_in_log_number_order(db: pathlib.Path) -> None:
    result = run("cat", "--delimiter", "nul", db)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.split(b"\0")[:-1] == LEVELDB_RECORDS + ROCKSDB_RECORDS


def test_cat_with_manifest_reads_the_live_manifest_first(db: pathlib.Path) -> None:
    result = run("cat", "--manifest", "--delimiter", "nul", db)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.split(b"\0")[:-1] == MANIFEST_RECORDS + LEVELDB_RECORDS + ROCKSDB_RECORDS


def test_verify_covers_every_log(db: pathlib.Path) -> None:
    result = run("verify", db)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode().splitlines() == [
        f"{db / '999999.log'}: OK: 2 records",
        f"{db / '1000000.log'}: OK: 3 records",
        f"{db}: OK: 2 logs",
    ]


def test_verify_says_which_log_of_the_folder_is_corrupt(db: pathlib.Path) -> None:
    log = db / "1000000.log"
    data = bytearray(log.read_bytes())
    data[-3] ^= 0xFF  # in the last record (a damaged first one would tell no dialect)
    log.write_bytes(bytes(data))
    result = run("verify", db)
    assert result.returncode == 1 and result.stderr == b""
    lines = result.stdout.decode().splitlines()
    assert lines[0] == f"{db / '999999.log'}: OK: 2 records"
    assert lines[-2].startswith(f"{log}: CORRUPT: 1 corruption(s)")
    assert lines[-1] == f"{db}: CORRUPT: 1 of 2 logs"
    quiet = run("verify", "-q", db)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (1, b"", b"")


def test_dump_names_each_log_before_its_records(db: pathlib.Path) -> None:
    text = run("dump", db)
    assert (text.returncode, text.stderr) == (0, b"")
    lines = text.stdout.decode().splitlines()
    assert lines[0] == f"==> {db / '999999.log'} <=="
    assert lines[3] == f"==> {db / '1000000.log'} <=="
    assert [line.split("\t")[2] for line in lines[4:]] == ["rocksdb one", "", "rocksdb three"]
    as_json = run("dump", "--format", "json", db)
    objects = [json.loads(line) for line in as_json.stdout.decode().splitlines()]
    assert [(o["log"], o["data"]) for o in objects[2:]] == [
        (str(db / "1000000.log"), r.decode()) for r in ROCKSDB_RECORDS
    ]
    assert list(objects[0]) == ["log", "offset", "length", "data"]


def test_stats_gives_each_log_s_figures(db: pathlib.Path) -> None:
    result = run("stats", "--json", db)
    assert (result.returncode, result.stderr) == (0, b"")
    figures = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [(f["log"], f["records"]) for f in figures] == [
        (str(db / "999999.log"), 2),
        (str(db / "1000000.log"), 3),
    ]
    table = run("stats", db).stdout.decode()
    assert table.startswith(f"==> {db / '999999.log'} <==\nfile bytes")


def test_a_folder_without_current_is_refused(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "not-a-db"
    folder.mkdir()
    with leveldb_log.Writer(folder / "000003.log") as w:
        w.write(b"x")
    for command in ("cat", "verify", "dump", "stats"):
        result = run(command, folder)
        assert result.returncode == 2 and result.stdout == b""
        assert b"not a database: no CURRENT in" in result.stderr, command


def test_manifest_needs_a_database_folder(db: pathlib.Path) -> None:
    result = run("cat", "--manifest", db / "999999.log")
    assert result.returncode == 2
    assert b"--manifest applies to a database folder" in result.stderr


def test_a_bad_current_is_refused_with_manifest_only(db: pathlib.Path) -> None:
    (db / "CURRENT").write_bytes(b"MANIFEST-000009\n")
    assert run("cat", db).returncode == 0
    result = run("cat", "--manifest", db)
    assert result.returncode == 2 and result.stdout == b""
    assert b"CURRENT names MANIFEST-000009, which is not in the folder" in result.stderr


def test_dialect_auto_reads_standard_input_in_its_own_dialect(db: pathlib.Path) -> None:
    """A pipe is read by the C reader, which tells the dialect from its first block."""
    log = (db / "1000000.log").read_bytes()
    result = run("cat", "--delimiter", "nul", "-", input=log)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.split(b"\0")[:-1] == ROCKSDB_RECORDS
    named = run("cat", "--delimiter", "nul", "--dialect", "leveldb", "-", input=log)
    assert named.returncode == 1  # a RocksDB log read as LevelDB's is damage
