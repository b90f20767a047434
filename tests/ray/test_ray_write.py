"""leveldb_log.ray.write_logs on a real local Ray: byte-exact logs, their size, the column,
dialects and compression, save modes, and no visible log after a failed write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import Reader

pytestmark = pytest.mark.slow

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'leveldb-log[ray]')")
pa = pytest.importorskip("pyarrow")

from leveldb_log.ray import read_logs, write_logs  # noqa: E402

RECORDS = [b"", b"a", b"\x00" * 40000, *(bytes([i % 251]) * (i * 37 % 3000) for i in range(300))]


def records_of(path: str | Path, **options: Any) -> list[bytes]:
    with Reader(path, recovery="absolute", **options) as r:
        return list(r)


def visible(folder: Path) -> list[str]:
    """What a reader of the folder sees: names that do not start with . or _."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith((".", "_")))


def dataset(records: list[Any], kind: Any = None, blocks: int = 1, **columns: Any) -> Any:
    """A dataset of one column, data, in so many blocks (Arrow tables of equal rows)."""
    kind = kind or pa.binary()
    step = -(-len(records) // blocks)
    tables = []
    for i in range(0, len(records), step):
        part = {"data": pa.array(records[i : i + step], kind)}
        part.update({k: pa.array(v[i : i + step]) for k, v in columns.items()})
        tables.append(pa.table(part))
    return ray.data.from_arrow(tables)


def test_a_log_holds_the_records_byte_for_byte(ray_local: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    logs = write_logs(dataset(RECORDS), out)
    assert len(logs) == 1
    assert visible(out) == [os.path.basename(logs[0])]
    assert not (out / "_temporary").exists()
    expected = tmp_path / "expected.log"
    with leveldb_log.Writer(expected) as w:
        w.write_many(RECORDS)
    assert Path(logs[0]).read_bytes() == expected.read_bytes()
    back = sorted(r["data"] for r in read_logs(str(out)).take_all())
    assert back == sorted(RECORDS)


def test_logs_gather_many_blocks_each_never_one_per_block(ray_local: Any, tmp_path: Path) -> None:
    records = [bytes([i % 256]) * 1000 for i in range(2000)]  # about 2 MB
    ds = dataset(records, blocks=40)
    logs = write_logs(ds, tmp_path / "out", log_size=512 << 10)
    assert 1 < len(logs) < 40
    sizes = sorted(os.path.getsize(p) for p in logs)
    assert all(size >= 512 << 10 for size in sizes[1:])  # all but the last bundle's
    assert sorted(r for p in logs for r in records_of(p)) == sorted(records)


def test_string_columns_are_written_as_utf8_and_others_are_left_out(
    ray_local: Any, tmp_path: Path
) -> None:
    texts = ["ascii", "", "h\u00e9llo", "\u65e5\u672c"]
    ds = dataset([b"x"] * 4, text=texts, n=[1, 2, 3, 4])
    logs = write_logs(ds, tmp_path / "out", column="text")
    assert [r for p in logs for r in records_of(p)] == [t.encode() for t in texts]
    large = dataset(texts, kind=pa.large_string())
    logs = write_logs(large, tmp_path / "large")
    assert [r for p in logs for r in records_of(p)] == [t.encode() for t in texts]


def test_a_wrong_column_fails_the_write_and_leaves_nothing(ray_local: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(Exception, match="has no column 'payload'") as missing:
        write_logs(dataset([b"a"]), out, column="payload")
    assert isinstance(missing.value, ValueError)
    with pytest.raises(Exception, match="must be binary or string") as wrong:
        write_logs(ray.data.from_items([{"data": 1}]), out)
    assert isinstance(wrong.value, TypeError)
    assert os.listdir(out) == []


def test_the_options_are_checked_before_anything_runs(ray_local: Any, tmp_path: Path) -> None:
    ds = dataset([b"a"])
    with pytest.raises(ValueError, match="mode must be one of"):
        write_logs(ds, tmp_path / "o", mode="upsert")
    with pytest.raises(ValueError, match="log_size must be at least 1"):
        write_logs(ds, tmp_path / "o", log_size=0)
    with pytest.raises(ValueError):
        write_logs(ds, tmp_path / "o", dialect="sqlite")
    with pytest.raises(ValueError):
        write_logs(ds, tmp_path / "o", compression="zstd")  # zstd needs the rocksdb dialect
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("options", "read_as"),
    [
        ({"dialect": "rocksdb"}, "rocksdb"),
        ({"dialect": "rocksdb", "compression": "zstd"}, "rocksdb"),
        ({"dialect": "pebble", "sync": True}, "pebble"),
        ({"sync": True}, "leveldb"),
    ],
)
def test_dialects_compression_and_sync(
    ray_local: Any, tmp_path: Path, options: dict[str, Any], read_as: str
) -> None:
    if options.get("compression") == "zstd":
        pytest.importorskip("leveldb_log._zstd")
    logs = write_logs(dataset(RECORDS), tmp_path / "out", **options)
    assert [r for p in logs for r in records_of(p, dialect=read_as)] == RECORDS
    auto = read_logs(str(tmp_path / "out"))  # the dialect detected from each log
    assert sorted(r["data"] for r in auto.take_all()) == sorted(RECORDS)


# The empty dataset comes from a function filter, for which Ray suggests an expression.
@pytest.mark.filterwarnings("ignore:Use 'expr' instead of 'fn':UserWarning")
def test_save_modes(ray_local: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = write_logs(dataset([b"one"]), out)
    second = write_logs(dataset([b"two"]), out, mode="append")
    assert visible(out) == sorted(os.path.basename(p) for p in first + second)
    before = {p: Path(p).read_bytes() for p in first + second}
    with pytest.raises(FileExistsError):
        write_logs(dataset([b"three"]), out, mode="error")
    assert write_logs(dataset([b"three"]), out, mode="ignore") == []
    assert {p: Path(p).read_bytes() for p in first + second} == before
    assert visible(out) == sorted(os.path.basename(p) for p in first + second)
    (out / "_kept").write_bytes(b"hidden files are not the folder's data")
    third = write_logs(dataset([b"three"]), out, mode="overwrite")
    assert visible(out) == [os.path.basename(third[0])]
    assert records_of(third[0]) == [b"three"]
    assert (out / "_kept").exists()
    assert write_logs(ray.data.from_items([{"data": b"x"}]).filter(lambda r: False), out) == []
    # Ray's SaveMode values name the same modes (CREATE is ERROR)
    for refusing in (ray.data.SaveMode.ERROR, ray.data.SaveMode.CREATE):
        with pytest.raises(FileExistsError):
            write_logs(dataset([b"four"]), out, mode=refusing)
    assert write_logs(dataset([b"four"]), out, mode=ray.data.SaveMode.IGNORE) == []
    fourth = write_logs(dataset([b"four"]), out, mode=ray.data.SaveMode.APPEND)
    assert visible(out) == sorted(os.path.basename(p) for p in third + fourth)


def test_a_failing_task_leaves_no_visible_log(ray_local: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    old = write_logs(dataset([b"old"]), out)
    before = {name: (out / name).read_bytes() for name in visible(out)}
    # many small blocks, one of them with a null: its task fails after others wrote
    records: list[bytes | None] = [b"r" * 100] * 400
    records[350] = None
    ds = dataset(records, blocks=8)
    for mode in ("append", "overwrite"):
        with pytest.raises(Exception, match="column 'data' has a null at row"):
            write_logs(ds, out, mode=mode, log_size=8 << 10)
        assert {name: (out / name).read_bytes() for name in visible(out)} == before
        assert not (out / "_temporary").exists()
    assert records_of(old[0]) == [b"old"]


def test_concurrency_and_remote_args_are_taken(ray_local: Any, tmp_path: Path) -> None:
    logs = write_logs(
        dataset(RECORDS, blocks=4),
        tmp_path / "out",
        log_size=1,
        concurrency=1,
        ray_remote_args={"num_cpus": 1},
    )
    assert sorted(r for p in logs for r in records_of(p)) == sorted(RECORDS)


class _Context:
    """What Ray hands a Datasink's write: the task's index."""

    def __init__(self, task_idx: int) -> None:
        self.task_idx = task_idx


class _Result:
    """What Ray hands on_write_complete: each task's return."""

    def __init__(self, write_returns: list[Any]) -> None:
        self.write_returns = write_returns


def sink(folder: Path, **options: Any) -> Any:
    """write_logs' Datasink, started, for driving its tasks here, in this process."""
    from leveldb_log._ray_io import LogDatasink

    fields = {
        "column": "data",
        "writer_options": {"dialect": "leveldb", "compression": None},
        "sync": False,
        "mode": "append",
        "log_size": 1 << 20,
        "storage_options": None,
    }
    made = LogDatasink(str(folder), **{**fields, **options})
    made.on_write_start()
    return made


def test_a_task_writes_under_temporary_and_the_commit_renames(tmp_path: Path) -> None:
    out = tmp_path / "out"
    logs = sink(out)
    one = logs.write([pa.table({"data": [b"a", b"b"]})], _Context(0))
    two = logs.write([pa.table({"data": [b"c"]})], _Context(1))
    assert one is not None and two is not None
    assert one[0].startswith(f"{out}/_temporary/{logs.job}/00000-")
    assert visible(out) == []  # nothing a reader sees yet
    assert logs.write([pa.table({"data": pa.array([], pa.binary())})], _Context(2)) is None
    logs.on_write_complete(_Result([two, one, None]))
    placed = logs.written
    assert placed == [f"{out}/part-00000-{logs.job}.log", f"{out}/part-00001-{logs.job}.log"]
    assert [records_of(p) for p in placed] == [[b"a", b"b"], [b"c"]]
    assert sorted(os.listdir(out)) == [os.path.basename(p) for p in placed]  # staging gone


def test_a_failed_commit_takes_its_renames_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    old = write_logs_by_hand(out / "old.log", [b"old"])
    logs = sink(out, mode="overwrite")
    one = logs.write([pa.table({"data": [b"a"]})], _Context(0))
    two = logs.write([pa.table({"data": [b"b"]})], _Context(1))
    assert one is not None and two is not None
    os.unlink(two[0])  # the second rename will fail
    with pytest.raises(FileNotFoundError):
        logs.on_write_complete(_Result([one, two]))
    assert visible(out) == ["old.log"]  # the first log taken back, the old one kept
    assert records_of(old) == [b"old"]
    assert not (out / "_temporary").exists()


def write_logs_by_hand(path: Path, records: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with leveldb_log.Writer(path) as w:
        w.write_many(records)
    return path


def test_a_ray_that_cannot_gather_rows_by_bytes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ray.data import Datasink

    monkeypatch.delattr(Datasink, "min_bytes_per_write")
    with pytest.raises(ImportError, match="min_bytes_per_write"):
        write_logs(None, tmp_path / "out")
    assert not (tmp_path / "out").exists()
