"""A path means to format("leveldb_log") what it means to Spark's own text source: each
layout is written twice, as logs and as text files of the same names and record counts, and
both sources must read the same files, give the same partition columns with the same types,
and count the same rows per partition."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import leveldb_log
import pytest
from support.layouts import write_layout

pytestmark = pytest.mark.slow

#: Layouts: file (relative to the folder read) -> records.
LAYOUTS: dict[str, dict[str, int]] = {
    "flat": {"000001.log": 2, "000002.log": 3},
    "hive dates": {"date=2026-11-01/000001.log": 2, "date=2026-11-02/000002.log": 3},
    "plain subfolder": {"a.log": 2, "sub/b.log": 4},
    "partitions and a top file": {"x.log": 1, "k=1/a.log": 2, "k=2/b.log": 3},
    "typed columns": {
        "i=1/l=10000000000/d=1.5/s=abc/a.log": 2,
        "i=2/l=3/d=2/s=__HIVE_DEFAULT_PARTITION__/b.log": 3,
    },
    "timestamps and nested files": {
        "t=2026-11-01 10%3A00%3A00/a.log": 2,
        "t=2026-11-02 11%3A30%3A00/sub/b.log": 3,
    },
    "hidden names": {"k=1/a.log": 2, "k=1/_b.log": 5, "k=2/.c.log": 7, "_tmp/d.log": 1},
}


def shape(df: Any, root: Path, path_column: str, uri: bool) -> tuple[Any, ...]:
    """What a read gave: the files (relative to root), the partition columns with their
    types, and the rows per partition, from one collect (the data are tiny). ``uri``:
    the path column holds URIs (input_file_name() escapes them)."""
    own = {"offset", "data", "path", "value", "file"}
    columns = [(f.name, f.dataType.simpleString()) for f in df.schema.fields if f.name not in own]
    names = [name for name, _ in columns]
    rows = df.select(path_column, *names).collect()
    files = set()
    for row in rows:
        path = unquote(row[0].removeprefix("file:")) if uri else row[0]
        files.add(os.path.relpath(path, root).split(os.sep, 1)[1])
    counts = Counter(tuple(map(str, row[1:])) for row in rows)
    return files, columns, sorted(counts.items())


def both(spark: Any, root: Path, sub: str = "", **options: str) -> tuple[Any, Any]:
    from pyspark.sql import functions as F

    logs, text = root / "logs", root / "text"
    ours = spark.read.format("leveldb_log").option("includePath", "true").options(**options)
    theirs = spark.read.options(**options)
    for key in ("basePath",):
        if key in options:
            theirs = theirs.option(key, options[key].replace(str(logs), str(text)))
    mine = ours.load(str(logs / sub))
    text_df = theirs.text(str(text / sub)).withColumn("file", F.input_file_name())
    return shape(mine, root, "path", False), shape(text_df, root, "file", True)


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_a_layout_reads_as_spark_reads_it_as_text(spark: Any, tmp_path: Path, name: str) -> None:
    write_layout(tmp_path, LAYOUTS[name])
    ours, theirs = both(spark, tmp_path)
    assert ours == theirs


def test_options_that_change_the_listing_agree_with_text(spark: Any, tmp_path: Path) -> None:
    logs, _ = write_layout(tmp_path, {**LAYOUTS["hive dates"], "sub/c.log": 1, "z.txt": 2})
    for sub, options in [
        ("date=2026-11-01", {}),
        ("date=2026-11-01", {"basePath": str(logs)}),
        ("", {"recursiveFileLookup": "true"}),
        ("", {"pathGlobFilter": "*.log", "recursiveFileLookup": "true"}),
        # Hadoop's globs: alternatives (nested), negated classes both ways, an escape
        ("", {"pathGlobFilter": "{000001,z}.{log,txt}", "recursiveFileLookup": "true"}),
        ("", {"pathGlobFilter": "0000[!1]*", "recursiveFileLookup": "true"}),
        ("", {"pathGlobFilter": "{c,0000{0,1}[^1]}.log", "recursiveFileLookup": "true"}),
        ("", {"pathGlobFilter": "z\\.txt", "recursiveFileLookup": "true"}),
    ]:
        ours, theirs = both(spark, tmp_path, sub, **options)
        assert ours == theirs, (sub, options)


def test_modified_before_and_after_agree_with_text(spark: Any, tmp_path: Path) -> None:
    write_layout(tmp_path, {"old.log": 1, "new.log": 2})
    for kind in ("logs", "text"):
        os.utime(tmp_path / kind / "old.log", (1_700_000_000, 1_700_000_000))  # 2023-11-14
        os.utime(tmp_path / kind / "new.log", (1_800_000_000, 1_800_000_000))  # 2027-01-15
    for option in ("modifiedBefore", "modifiedAfter"):
        ours, theirs = both(spark, tmp_path, **{option: "2025-01-01T00:00:00"})
        assert ours == theirs
        assert len(ours[0]) == 1


#: Folder values whose types Spark infers in every way it can: int, long, decimal (an integer
#: too long for a long, up to 38 digits), double (Java's syntax), timestamp, date, string.
RAW_VALUES = [
    *("0", "-7", "+5", "007", "2147483647", "2147483648", "-9223372036854775808"),
    *("9223372036854775808", "-99999999999999999999", "1" * 38, "1" * 39, "1e5", "1E+3"),
    *("1.5", "-.5", "5.", "1.5d", "2f", "1e400", "NaN", "Infinity", "-Infinity", "0x10"),
    *("2026-11-01", "2026-02-30", "2026-13-01", "2026-1-5", "+2026-11-01", "20261101"),
    *("2026-11-01 10:00:00", "2026-11-01 10:00:00.1", "2026-11-01 10:00:00.12"),
    *("2026-11-01 10:00:00.123", "2026-11-01 10:00:00.1234", "2026-11-01 10:00:00.000000"),
    *("2026-11-01 10:00:00.123456", "2026-11-01 10:00:00.1234567", "1.0e5", "1e-2", "-0"),
    *("2026-11-01 10:00", "2026-11-01 9:05:00", "2026-11-01T10:00:00", "2026-11-01 25:00:00"),
    *("2026-11-01Z", "2026-11-01 10:00:00Z", " 1", "1 ", "true", "abc", "%", "a b"),
]


#: Pairs of values in one column (a folder each): the type both widen to.
RAW_PAIRS = [
    *(("1", "2147483648"), ("1", "99999999999999999999"), ("2147483648", "1e5")),
    *(("1e5", "99999999999999999999"), ("1e5", "1.5"), ("1", "1.5"), ("1e5", "1" * 38)),
    *(("2026-11-01", "2026-11-01 10:00:00"), ("1", "2026-11-01"), ("1e5", "2026-11-01")),
    *((None, "1e5"), (None, "2026-11-01"), ("1", "abc"), ("1.5", "2026-11-01 10:00:00")),
]


def typed_columns(spark: Any, root: Path, rows: list[list[str | None]]) -> dict[str, Any]:
    """Each row's values as the folders c0=.../c1=.../a.log (None: Hive's null), read by
    our source and by Spark's text source: by source, each column's (type, values), NaN as
    a string so that it equals itself."""
    from leveldb_log._files._layout import escape
    from leveldb_log._files._listing import HIVE_NULL

    layout = {}
    for values in rows:
        names = (HIVE_NULL if raw is None else escape(raw) for raw in values)
        layout["/".join(f"c{i}={name}" for i, name in enumerate(names)) + "/a.log"] = 1
    write_layout(root, layout)
    got = {}
    for kind, source in [("logs", "leveldb_log"), ("text", "text")]:
        df = spark.read.format(source).load(str(root / kind))
        collected = df.collect()
        got[kind] = [
            (
                df.schema[f"c{i}"].dataType.simpleString(),
                sorted(
                    (v is not None, str(v) if v != v else v)
                    for v in (row[f"c{i}"] for row in collected)
                ),
            )
            for i in range(len(rows[0]))
        ]
    return got


def differences(cases: Sequence[object], got: Mapping[str, Any]) -> str:
    """A line for each case whose column our source types otherwise than Spark's text source
    (empty if none)."""
    return "\n".join(
        f"{case!r}: ours {ours}, Spark's {theirs}"
        for case, ours, theirs in zip(cases, got["logs"], got["text"], strict=True)
        if ours != theirs
    )


def test_each_value_is_typed_as_spark_types_it(spark: Any, tmp_path: Path) -> None:
    # One file under a folder per value: each column is typed from its one value.
    got = typed_columns(spark, tmp_path, [list(RAW_VALUES)])
    assert not (differ := differences(RAW_VALUES, got)), differ


def test_a_column_of_two_kinds_widens_as_spark_widens_it(spark: Any, tmp_path: Path) -> None:
    firsts, seconds = zip(*RAW_PAIRS, strict=True)
    got = typed_columns(spark, tmp_path, [list(firsts), list(seconds)])
    assert not (differ := differences(RAW_PAIRS, got)), differ


def test_type_inference_off_gives_strings_as_text_does(spark: Any, tmp_path: Path) -> None:
    write_layout(tmp_path, LAYOUTS["typed columns"])
    setting = "spark.sql.sources.partitionColumnTypeInference.enabled"
    spark.conf.set(setting, "false")
    try:
        leveldb_log.spark.register(spark)
        ours, theirs = both(spark, tmp_path)
    finally:
        spark.conf.unset(setting)
        leveldb_log.spark.register(spark)
    assert ours == theirs
    assert {kind for _, kind in ours[1]} == {"string"}


def test_filters_on_partition_columns_prune_files(spark: Any, tmp_path: Path) -> None:
    from leveldb_log.spark._read import FilteringLogReader
    from pyspark.sql.datasource import EqualTo, GreaterThan

    logs, _ = write_layout(tmp_path, {f"k={i}/000001.log": i for i in range(1, 5)})
    reader = FilteringLogReader({"path": str(logs)}, None)
    assert reader.pushFilters([EqualTo(("k",), 3), GreaterThan(("k",), 1)]) != []
    files = {piece.path for part in reader.partitions() for piece in part.pieces}
    assert files == {str(logs / "k=3" / "000001.log")}
    df = spark.read.format("leveldb_log").load(str(logs))
    assert df.where("k = 3").count() == 3


def test_a_served_schema_works_and_one_that_is_not_fails_at_planning(
    spark: Any, tmp_path: Path
) -> None:
    logs, _ = write_layout(tmp_path, LAYOUTS["hive dates"])
    df = spark.read.format("leveldb_log").schema("data binary, offset long, date date")
    got = sorted((r.date.isoformat(), r.data) for r in df.load(str(logs)).collect())
    assert got[0] == ("2026-11-01", b"date=2026-11-01/000001.log:0") and len(got) == 5
    nullable = spark.read.format("leveldb_log").schema("offset long, data binary")
    assert nullable.load(str(logs)).count() == 5
    for schema, column in [("offset long, nope int", "nope"), ("offset int", "offset")]:
        with pytest.raises(Exception, match=f"column '{column}'"):
            spark.read.format("leveldb_log").schema(schema).load(str(logs)).collect()


def test_a_file_gone_before_its_task_fails_or_is_ignored(spark: Any, tmp_path: Path) -> None:
    from leveldb_log.spark._read import LogReader

    logs, _ = write_layout(tmp_path, LAYOUTS["flat"])
    for ignore in ("false", "true"):
        reader = LogReader({"path": str(logs), "ignoreMissingFiles": ignore}, None)
        (partition,) = reader.partitions()
        (logs / "000001.log").rename(tmp_path / "aside.log")
        try:
            if ignore == "true":
                rows = sum(b.num_rows for b in reader.read(partition))
                assert rows == 3
            else:
                with pytest.raises(FileNotFoundError):
                    list(reader.read(partition))
        finally:
            (tmp_path / "aside.log").rename(logs / "000001.log")


def test_the_session_settings_for_missing_and_corrupt_files_are_followed(
    spark: Any, tmp_path: Path
) -> None:
    logs, _ = write_layout(tmp_path, LAYOUTS["flat"])
    data = bytearray((logs / "000002.log").read_bytes())
    data[10] ^= 0xFF
    (logs / "000002.log").write_bytes(bytes(data))
    df = spark.read.format("leveldb_log").option("mode", "FAILFAST")
    with pytest.raises(Exception, match=r"000002\.log"):
        df.load(str(logs)).count()
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    try:
        leveldb_log.spark.register(spark)
        got = spark.read.format("leveldb_log").option("mode", "FAILFAST").load(str(logs))
        assert got.count() == 2
    finally:
        spark.conf.unset("spark.sql.files.ignoreCorruptFiles")
        leveldb_log.spark.register(spark)
