"""Filters on offset and path pushed to format("leveldb_log"): fewer partitions, the same
rows as Spark filtering everything; and reads that work with pushdown off as well."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log._core import BLOCK_SIZE

pytestmark = pytest.mark.slow

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
NAMES = ["000001.log", "000002.log"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pushdown")
    for n, name in enumerate(NAMES):
        with leveldb_log.Writer(folder / name, "w") as w:
            for i in range(300 * (n + 1)):
                w.write(b"%d:%d;" % (n, i) * 60)
    return folder


def everything(folder: Path) -> list[tuple[int, bytes, str]]:
    rows = []
    for name in NAMES:
        with leveldb_log.Reader(folder / name) as reader:
            rows += [(reader.last_record_offset, r, str(folder / name)) for r in reader]
    return rows


@pytest.fixture
def pushdown(spark: Any) -> Iterator[Any]:
    """The session with filter pushdown on (register() reads the setting), as it was
    afterwards."""
    before = spark.conf.get(PUSHDOWN)
    spark.conf.set(PUSHDOWN, "true")
    leveldb_log.spark.register(spark)
    try:
        yield spark
    finally:
        spark.conf.set(PUSHDOWN, before)
        leveldb_log.spark.register(spark)


def by_block(spark: Any, folder: Path, **options: str) -> Any:
    reader = spark.read.format("leveldb_log").option("includePath", "true")
    return reader.options(maxPartitionBytes=str(BLOCK_SIZE), **options).load(str(folder))


def rows(df: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in df.collect()]


def blocks(folder: Path, name: str) -> int:
    return -(-(folder / name).stat().st_size // BLOCK_SIZE)


OFFSET_FILTERS = [
    ("offset >= 40000", lambda o: o >= 40000),
    ("offset > 40000", lambda o: o > 40000),
    ("offset < 70000", lambda o: o < 70000),
    ("offset <= 70000", lambda o: o <= 70000),
    ("offset between 33000 and 70000", lambda o: 33000 <= o <= 70000),
    ("offset >= 0 and offset < 1", lambda o: o < 1),
]


@pytest.mark.parametrize(("where", "keep"), OFFSET_FILTERS, ids=[w for w, _ in OFFSET_FILTERS])
def test_offset_filters_become_byte_ranges(
    pushdown: Any, logs: Path, where: str, keep: Any
) -> None:
    df = by_block(pushdown, logs).where(where)
    expected = [r for r in everything(logs) if keep(r[0])]
    assert expected
    assert rows(df) == expected
    assert df.rdd.getNumPartitions() < sum(blocks(logs, n) for n in NAMES)


def test_an_offset_equal_to_a_record_reads_one_block_per_file(pushdown: Any, logs: Path) -> None:
    offset = next(r[0] for r in everything(logs) if r[0] > 2 * BLOCK_SIZE)
    df = by_block(pushdown, logs).where(f"offset = {offset}")
    assert rows(df) == [r for r in everything(logs) if r[0] == offset]
    assert df.rdd.getNumPartitions() == 2


def test_path_filters_choose_files(pushdown: Any, logs: Path) -> None:
    second = str(logs / NAMES[1])
    for where in [
        f"path = '{second}'",
        "path like '%2.log'",
        f"path in ('{second}', 'x')",
        f"not path = '{logs / NAMES[0]}'",
    ]:
        df = by_block(pushdown, logs).where(where)
        assert rows(df) == [r for r in everything(logs) if r[2] == second], where
        assert df.rdd.getNumPartitions() == blocks(logs, NAMES[1]), where


def test_filters_it_cannot_honour_are_left_to_spark(pushdown: Any, logs: Path) -> None:
    df = by_block(pushdown, logs).where("offset % 2 = 0 and length(data) > 500")
    expected = [r for r in everything(logs) if r[0] % 2 == 0 and len(r[1]) > 500]
    assert rows(df) == expected
    in_list = by_block(pushdown, logs).where("offset in (0, 40000)")
    assert rows(in_list) == [r for r in everything(logs) if r[0] == 0]


def test_offset_filters_on_corruption_reports_are_left_to_spark(
    pushdown: Any, tmp_path: Path
) -> None:
    path = tmp_path / "bad.log"
    with leveldb_log.Writer(path, "w") as w:
        for i in range(200):
            w.write(b"%d" % i * 500)
    raw = bytearray(path.read_bytes())
    raw[10] ^= 1  # the first record: its report begins at offset 0
    raw[BLOCK_SIZE + 100] ^= 1
    path.write_bytes(bytes(raw))
    reports = rows(
        pushdown.read.format("leveldb_log").option("corruptions", "true").load(str(path))
    )
    assert len(reports) >= 2
    later = pushdown.read.format("leveldb_log").option("corruptions", "true").load(str(path))
    spark_reports = rows(later.where("offset > 0"))
    assert spark_reports == [r for r in reports if r[1] > 0]


def test_without_pushdown_the_same_query_reads_everything(spark: Any, logs: Path) -> None:
    assert spark.conf.get(PUSHDOWN) == "false"  # Spark's default
    df = by_block(spark, logs).where(f"offset >= 40000 and path = '{logs / NAMES[1]}'")
    expected = [r for r in everything(logs) if r[0] >= 40000 and r[2] == str(logs / NAMES[1])]
    assert rows(df) == expected
    assert df.rdd.getNumPartitions() == sum(blocks(logs, n) for n in NAMES)
