"""write_logs(partition_cols=...): Hive-style key=value folders (escaped as Spark escapes
them), one log per write task and folder, committed as one job, read back by read_logs with
Partitioning("hive"); the save modes over the tree, and the refusals."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'leveldb-log[ray]')")
pa = pytest.importorskip("pyarrow")

from leveldb_log.ray import read_logs, write_logs  # noqa: E402
from ray.data.datasource import Partitioning  # noqa: E402

KEYS = ["x", "a b/c", None]


def dataset(count: int = 12) -> Any:
    """(data, k, n): three values of k (a null, one needing escapes), two of n."""
    table = pa.table(
        {
            "data": pa.array([b"record %d" % i for i in range(count)], pa.binary()),
            "k": pa.array([KEYS[i % 3] for i in range(count)], pa.string()),
            "n": pa.array([i % 2 for i in range(count)], pa.int32()),
        }
    )
    return ray.data.from_arrow(table)


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_partitioned_write_reads_back_with_hive_partitioning(
    ray_local: Any, tmp_path: Path
) -> None:
    written = write_logs(dataset(), tmp_path, partition_cols=["k", "n"])
    names = files(tmp_path)
    assert sorted(written) == [str(tmp_path / n) for n in names]
    assert {n.rsplit("/", 1)[0] for n in names} == {
        f"k={k}/n={n}" for k in ("x", "a b%2Fc", "__HIVE_DEFAULT_PARTITION__") for n in (0, 1)
    }
    back = read_logs(str(tmp_path), partitioning=Partitioning("hive")).take_all()
    expected = [(b"record %d" % i, KEYS[i % 3], str(i % 2)) for i in range(12)]
    got = [(r["data"], r["k"], r["n"]) for r in back]
    null = "__HIVE_DEFAULT_PARTITION__"  # Ray's partition values are the folders' strings
    assert Counter(got) == Counter((d, null if k is None else k, n) for d, k, n in expected)


def test_overwrite_replaces_the_trees_files(ray_local: Any, tmp_path: Path) -> None:
    write_logs(dataset(), tmp_path, partition_cols=["k"])
    (tmp_path / "_notes").write_bytes(b"hidden: kept")
    fresh = ray.data.from_items([{"data": b"new", "k": "y"}])
    written = write_logs(fresh, tmp_path, partition_cols=["k"], mode="overwrite")
    assert len(written) == 1
    assert files(tmp_path) == ["_notes", "k=y/" + Path(written[0]).name]
    write_logs(fresh, tmp_path, partition_cols=["k"])  # append: a second log beside it
    assert len(files(tmp_path)) == 3
    with pytest.raises(FileExistsError):
        write_logs(fresh, tmp_path, partition_cols=["k"], mode="error")
    assert write_logs(fresh, tmp_path, partition_cols=["k"], mode="ignore") == []
    assert len(files(tmp_path)) == 3


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (["k", "nope"], "no partition column 'nope'"),
        (["data"], "partition column 'data' is the column written as records"),
        (["k", "k"], "partition column 'k' is named twice"),
        (["f"], "partition column 'f' is double"),
    ],
)
def test_partition_columns_that_cannot_be_written_are_refused(
    ray_local: Any, tmp_path: Path, columns: list[str], message: str
) -> None:
    ds = ray.data.from_arrow(pa.table({"data": [b"a"], "k": ["x"], "f": [1.5]}))
    with pytest.raises(ValueError, match=message):
        write_logs(ds, tmp_path / "out", partition_cols=columns)
    assert not (tmp_path / "out").exists()


def test_a_tree_the_spark_writer_commits_reads_with_hive_partitioning(
    ray_local: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spark's writer (its task and commit, run here as Spark's driver and task would)."""
    pytest.importorskip("pyspark")
    from leveldb_log.spark import _write
    from pyspark.sql.types import BinaryType, StringType, StructField, StructType

    schema = StructType([StructField("k", StringType()), StructField("data", BinaryType())])
    writer = _write.LogWriter({"path": str(tmp_path), "partitionColumns": "k"}, schema, False)
    monkeypatch.setattr(_write, "task_ids", lambda: (0, 1))
    keys = ["a b/c", None, "a b/c"]
    batch = pa.record_batch(
        [pa.array(keys), pa.array([b"1", b"2", b"3"], pa.binary())], names=["k", "data"]
    )
    writer.commit([writer.write(iter([batch]))])
    assert {p.parent.name for p in tmp_path.rglob("*.log")} == {
        "k=a b%2Fc",
        "k=__HIVE_DEFAULT_PARTITION__",
    }
    back = read_logs(str(tmp_path), partitioning=Partitioning("hive")).take_all()
    assert sorted((r["k"], r["data"]) for r in back) == [
        ("__HIVE_DEFAULT_PARTITION__", b"2"),
        ("a b/c", b"1"),
        ("a b/c", b"3"),
    ]
