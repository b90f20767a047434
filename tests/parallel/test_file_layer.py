"""The file layer under Spark, Ray and Dask (leveldb_log._files), without an engine: database
folders listed as their WALs in every convention, Dask's listing held to dask.bag.read_text's,
ranges from the listing's sizes as splits() cuts them, one damage summary per file, a report
row for a file that is no log, and publishing that stages, replaces and takes back."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import BLOCK_SIZE
from leveldb_log._files._listing import CONVENTIONS, ListOptions, list_files
from leveldb_log._files._plan import Range, plan
from leveldb_log._files._publish import Folder, write_staged

pa = pytest.importorskip("pyarrow")

from leveldb_log._files._read import NOT_A_LOG, FileDamage, ReadSpec, read_ranges  # noqa: E402


def write_log(path: Path, records: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with leveldb_log.Writer(path) as w:
        w.write_many(records)
    return path


def database(folder: Path) -> Path:
    """A database folder as LevelDB leaves one: two WALs, a table, its MANIFEST, CURRENT,
    LOG and LOCK."""
    write_log(folder / "000010.log", [b"ten"])
    write_log(folder / "000009.log", [b"nine"])
    write_log(folder / "MANIFEST-000008", [b"edit"])
    (folder / "000007.ldb").write_bytes(b"\x00table" * 100)
    (folder / "CURRENT").write_bytes(b"MANIFEST-000008\n")
    (folder / "LOG").write_bytes(b"2026/11/01-10:00:00 Recovering log #9\n")
    (folder / "LOCK").write_bytes(b"")
    return folder


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_a_database_folder_is_its_wals_in_every_convention(tmp_path: Path, convention: str) -> None:
    db = database(tmp_path / "db")
    listed = list_files([str(db)], ListOptions(convention))
    assert [os.path.basename(e.path) for e in listed] == ["000009.log", "000010.log"]
    with_manifest = list_files([str(db)], ListOptions(convention, manifest=True))
    assert [os.path.basename(e.path) for e in with_manifest] == [
        "MANIFEST-000008",  # first: a database recovers its MANIFEST, then its WALs
        "000009.log",
        "000010.log",
    ]


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_a_relative_path_is_listed_absolute_for_tasks_in_other_folders(
    tmp_path: Path, convention: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_log(tmp_path / "logs" / "000001.log", [b"one"])
    monkeypatch.chdir(tmp_path)
    named = "logs/*" if convention == "dask" else "logs"  # dask.bag.read_text takes no folder
    listed = list_files([named], ListOptions(convention))
    assert [e.path for e in listed] == [str(tmp_path / "logs" / "000001.log")]


def test_a_database_read_gives_its_wal_records_and_no_warning(tmp_path: Path) -> None:
    import warnings

    db = database(tmp_path / "db")
    ranges = plan(list_files([str(db)], ListOptions("ray")), BLOCK_SIZE)
    damaged: list[FileDamage] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batches = list(read_ranges(ranges, ReadSpec(), damaged.append))
    assert [d for b in batches for d in b.column("data").to_pylist()] == [b"nine", b"ten"]
    assert damaged == []


def test_dask_lists_what_dask_bag_read_text_lists(tmp_path: Path) -> None:
    db = pytest.importorskip("dask.bag")
    for name in ("a.log", "b.log", ".c.log", "_d.log", "sub/e.log"):
        write_log(tmp_path / name, [b"x"])
    for paths in (str(tmp_path / "*.log"), [str(tmp_path / "b.log"), str(tmp_path / "a.log")]):
        lines = db.read_text(paths, include_path=True, errors="replace").pluck(1).compute()
        theirs = list(dict.fromkeys(lines))  # each file once, in its order
        ours = [
            e.path
            for e in list_files([paths] if isinstance(paths, str) else paths, ListOptions("dask"))
        ]
        assert ours == theirs


def test_ranges_are_the_ones_splits_gives_from_the_listings_sizes(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a.log", [b"r" * 1000] * 300)
    (entry,) = list_files([str(log)], ListOptions("spark"))
    assert entry.size == log.stat().st_size
    got = [(r.start, r.end) for r in plan([entry], 2 * BLOCK_SIZE)]
    assert got == leveldb_log.splits(log, size=2 * BLOCK_SIZE)
    assert [(r.start, r.end) for r in plan([entry], 2 * BLOCK_SIZE, "point_in_time")] == [
        (0, entry.size)
    ]


def test_a_file_that_is_no_log_has_a_report_row_and_one_summary(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_bytes(b"these are notes, not a log\n" * 3)
    piece = [Range(str(text), 0, None)]
    heard: list[FileDamage] = []
    (rows,) = list(read_ranges(piece, ReadSpec(rows="corruptions"), heard.append))
    assert rows.column("reason").to_pylist()[-1] == NOT_A_LOG
    assert rows.column("path").to_pylist()[-1] == str(text)
    damaged: list[FileDamage] = []
    assert list(read_ranges(piece, ReadSpec(), damaged.append)) == []
    assert len(heard) == len(damaged) == 1  # one summary of the file, whatever the rows
    assert "not a log?" in (damaged[0].summary() or "")


def test_records_that_are_no_write_batch_are_summed_up_once(tmp_path: Path) -> None:
    log = write_log(tmp_path / "000001.log", [b"no batch"] * 3000)
    damaged: list[FileDamage] = []
    spec = ReadSpec("leveldb", rows="decode")
    batches = list(
        read_ranges(plan(list_files([str(log)], ListOptions()), None), spec, damaged.append)
    )
    assert sum(b.num_rows for b in batches) == 0
    (one,) = damaged
    assert one.not_batches == 3000 and one.records == 3000
    assert "3000 record(s) are no write batch" in (one.summary() or "")


def test_the_report_has_one_shape_in_every_engine() -> None:
    from leveldb_log._files._read import report_schema
    from leveldb_log.dask import FileCorruption

    assert (
        report_schema().names
        == list(FileCorruption._fields)
        == [
            "path",
            "offset",
            "size",
            "reason",
        ]
    )
    pytest.importorskip("pyspark")
    from leveldb_log.spark._options import read_schema

    assert read_schema({"corruptions": "true"}).fieldNames() == report_schema("int64").names


def column(values: list[Any]) -> Any:
    return pa.array(values, pa.binary())


def test_publishing_replaces_files_keeps_folders_and_takes_back_a_failure(
    tmp_path: Path,
) -> None:
    folder = Folder(str(tmp_path))
    (tmp_path / "old.log").write_bytes(b"old")
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").write_bytes(b"kept")
    staged = []
    for i, records in enumerate([[b"a"], [b"b", b"c"]]):
        path = str(tmp_path / f".stage-{i}")
        assert write_staged(
            folder, path, [column(records)], leveldb_log.Writer, sync=True, column="data"
        ) == len(records)
        staged.append((path, f"part-{i}.log"))
    placed = folder.publish(staged, replace=True, sync=True, hidden=lambda n: n[0] in "._")
    assert placed == [str(tmp_path / "part-0.log"), str(tmp_path / "part-1.log")]
    assert sorted(os.listdir(tmp_path)) == [".hidden", "part-0.log", "part-1.log", "sub"]
    path = str(tmp_path / ".stage-x")
    write_staged(folder, path, [column([b"x"])], leveldb_log.Writer, sync=False, column="data")
    with pytest.raises(FileExistsError, match=r"part-0\.log"):
        folder.publish([(path, "part-0.log")], replace=False, sync=False, hidden=lambda n: False)
    with pytest.raises(FileNotFoundError):
        folder.publish(
            [(path, "new.log"), (path + "-gone", "newer.log")],
            replace=False,
            sync=False,
            hidden=lambda n: False,
        )
    assert not (tmp_path / "new.log").exists()  # the first rename taken back


def test_a_null_names_its_column_and_row_and_leaves_no_file(tmp_path: Path) -> None:
    folder = Folder(str(tmp_path))
    path = str(tmp_path / ".staged")
    values = [column([b"a", b"b"]), column([b"c", None])]
    with pytest.raises(ValueError, match="column 'payload' has a null at row 3 of the partition"):
        write_staged(folder, path, values, leveldb_log.Writer, sync=False, column="payload")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("refusal", "raised"),
    [(errno.EINVAL, False), (errno.EOPNOTSUPP, False), (errno.EIO, True)],
    ids=["EINVAL", "EOPNOTSUPP", "EIO"],
)
def test_a_folder_sync_refused_by_the_file_system_is_no_error_and_a_failed_one_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: int, raised: bool
) -> None:
    from leveldb_log._files import _publish

    def fsync(fd: int) -> None:
        raise OSError(refusal, os.strerror(refusal))

    monkeypatch.setattr(_publish.os, "fsync", fsync)
    if raised:
        with pytest.raises(OSError) as e:
            _publish.sync_folder(str(tmp_path))
        assert e.value.errno == refusal
    else:
        _publish.sync_folder(str(tmp_path))


def test_a_name_glob_is_read_as_hadoop_reads_it_and_a_malformed_one_is_refused(
    tmp_path: Path,
) -> None:
    # The same globs against Spark's own text source: tests/spark/test_layouts.py.
    for name in ("a.log", "b.txt", "c.ldb", "x*.log", "a,b"):
        write_log(tmp_path / name, [b"r"])
    for pattern, kept in [
        ("*.{log,txt}", {"a.log", "b.txt", "x*.log"}),
        ("{a,{b,c}}.*", {"a.log", "b.txt", "c.ldb"}),
        ("[!a-b]*", {"c.ldb", "x*.log"}),
        ("[^a-b]*", {"c.ldb", "x*.log"}),
        ("x\\*.log", {"x*.log"}),
        ("a,b", {"a,b"}),
        ("?.l?g", {"a.log"}),
    ]:
        found = list_files([str(tmp_path)], ListOptions(name_glob=pattern))
        assert {Path(e.path).name for e in found} == kept, pattern
    for pattern, problem in [
        ("{a,b", "leaves a { group open"),
        ("[ab", "leaves a \\[ class open"),
        ("a\\", "ends with a lone backslash"),
        ("\\z.txt", "escapes punctuation only"),
    ]:
        with pytest.raises(ValueError, match=problem):
            list_files([str(tmp_path)], ListOptions(name_glob=pattern))
