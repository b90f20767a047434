"""A database folder's logs: database_files (leveldb_log._database, names only) and the public
database_logs (paths and URLs). The folders of real LevelDB, RocksDB and Pebble databases
are in tests/interop; here, their names as each engine's filename code writes them."""

from __future__ import annotations

import os
import pathlib
import random

import leveldb_log
import pytest
from leveldb_log._database import database_files

LEVELDB = ["000003.log", "000005.ldb", "CURRENT", "LOCK", "LOG", "LOG.old", "MANIFEST-000002"]
ROCKSDB = [
    "000004.log",
    "000009.log",
    "000012.log",
    "000008.sst",
    "000010.blob",
    "CURRENT",
    "IDENTITY",
    "LOCK",
    "LOG",
    "LOG.old.1733740800000000",
    "MANIFEST-000005",
    "MANIFEST-000011",
    "OPTIONS-000007",
    "OPTIONS-000013.dbtmp",
    "000014.dbtmp",
]
PEBBLE = [
    "000002.log",
    "000002-001.log",
    "000002-002.log",
    "000006.log",
    "000004.sst",
    "CURRENT",
    "CURRENT.000003.dbtmp",
    "LOCK",
    "MANIFEST-000001",
    "OPTIONS-000003",
    "temporary.000007.dbtmp",
    "marker.format-version.000011.016",
]


@pytest.mark.parametrize(
    ("names", "logs"),
    [
        (LEVELDB, ["000003.log"]),
        (ROCKSDB, ["000004.log", "000009.log", "000012.log"]),
        (PEBBLE, ["000002.log", "000002-001.log", "000002-002.log", "000006.log"]),
    ],
)
def test_only_the_write_ahead_logs_are_listed_in_number_order(
    names: list[str], logs: list[str]
) -> None:
    for seed in range(3):  # whatever order the folder lists them in
        shuffled = random.Random(seed).sample(names, len(names))
        assert database_files(shuffled) == logs


def test_log_numbers_sort_numerically_not_by_name() -> None:
    names = ["CURRENT", "999999.log", "1000000.log", "000010.log", "9.log"]
    assert database_files(names) == ["9.log", "000010.log", "999999.log", "1000000.log"]


@pytest.mark.parametrize(
    "name",
    [
        "LOG",
        "LOG.old",
        "x.log",
        "000001.log.dbtmp",
        "12a.log",
        "000003.LOG",
        "-000003.log",
        "000003-.log",
        "\uff11.log",  # a fullwidth digit is no digit of a log's name
        "000003.ldb",
        "000003.sst",
    ],
)
def test_no_other_name_is_a_log(name: str) -> None:
    assert database_files(["CURRENT", name]) == []


def test_a_folder_without_current_is_no_database() -> None:
    assert database_files(["000003.log", "MANIFEST-000002", "LOCK"]) is None
    assert database_files([]) is None


def test_the_live_manifest_comes_first_with_manifest() -> None:
    current = b"MANIFEST-000011\n"
    assert database_files(ROCKSDB, manifest=True, current=current) == [
        "MANIFEST-000011",
        "000004.log",
        "000009.log",
        "000012.log",
    ]
    assert database_files(ROCKSDB, current=current) == database_files(ROCKSDB)


def test_pebble_s_manifest_marker_names_the_live_manifest() -> None:
    names = [
        "000002.log",
        "MANIFEST-000001",
        "MANIFEST-000009",
        "marker.manifest.000002.MANIFEST-000001",
        "marker.manifest.000010.MANIFEST-000009",
    ]
    assert database_files(names) == ["000002.log"]
    assert database_files(names, manifest=True) == ["MANIFEST-000009", "000002.log"]


@pytest.mark.parametrize(
    ("current", "match"),
    [
        (None, "needs current"),
        (b"", "does not end with a newline"),
        (b"MANIFEST-000011", "does not end with a newline"),
        (b"000004.log\n", "names no MANIFEST"),
        (b"MANIFEST-000011\n\n", "names no MANIFEST"),
        (b"../MANIFEST-000011\n", "names no MANIFEST"),
        (b"MANIFEST-000099\n", "CURRENT names MANIFEST-000099, which is not in the folder"),
    ],
)
def test_a_bad_current_is_refused_naming_the_problem(current: bytes | None, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        database_files(ROCKSDB, manifest=True, current=current)


def _database(folder: pathlib.Path, names: list[str]) -> pathlib.Path:
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"MANIFEST-000002\n" if name == "CURRENT" else b"")
    return folder


def test_database_logs_gives_full_paths(tmp_path: pathlib.Path) -> None:
    db = _database(tmp_path / "db", LEVELDB)
    (db / "archive").mkdir()  # RocksDB's obsolete logs: a folder, never listed
    (db / "archive" / "000001.log").write_bytes(b"")
    assert leveldb_log.database_logs(db) == [str(db / "000003.log")]
    assert leveldb_log.database_logs(str(db), manifest=True) == [
        os.path.join(str(db), "MANIFEST-000002"),
        os.path.join(str(db), "000003.log"),
    ]


def test_database_logs_refuses_what_is_no_database_folder(tmp_path: pathlib.Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "000003.log").write_bytes(b"")
    with pytest.raises(ValueError, match=r"not a database: no CURRENT in .*plain"):
        leveldb_log.database_logs(plain)
    with pytest.raises(FileNotFoundError):
        leveldb_log.database_logs(tmp_path / "missing")
    with pytest.raises(NotADirectoryError):
        leveldb_log.database_logs(plain / "000003.log")
    with pytest.raises(ValueError, match="storage_options applies to URLs"):
        leveldb_log.database_logs(plain, storage_options={})


def test_database_logs_reads_current_only_for_the_manifest(tmp_path: pathlib.Path) -> None:
    db = _database(tmp_path / "db", LEVELDB)
    (db / "CURRENT").write_bytes(b"garbage")
    assert leveldb_log.database_logs(db) == [str(db / "000003.log")]
    with pytest.raises(ValueError, match="CURRENT does not end with a newline"):
        leveldb_log.database_logs(db, manifest=True)


def test_database_logs_of_a_url(tmp_path: pathlib.Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    for name in LEVELDB:
        fs.pipe(f"/dbtest/{name}", b"MANIFEST-000002\n" if name == "CURRENT" else b"")
    fs.pipe("/dbtest/archive/000001.log", b"")
    try:
        assert leveldb_log.database_logs("memory://dbtest", manifest=True) == [
            "memory://dbtest/MANIFEST-000002",
            "memory://dbtest/000003.log",
        ]
        with pytest.raises(NotADirectoryError):
            leveldb_log.database_logs("memory://dbtest/CURRENT")
        with pytest.raises(FileNotFoundError):
            leveldb_log.database_logs("memory://nothing-here")
        fs.rm("/dbtest/CURRENT")
        with pytest.raises(ValueError, match="not a database: no CURRENT in 'memory://dbtest'"):
            leveldb_log.database_logs("memory://dbtest")
    finally:
        fs.rm("/dbtest", recursive=True)
    local = _database(tmp_path / "db", LEVELDB)
    assert leveldb_log.database_logs(local.as_uri()) == [str(local / "000003.log")]
