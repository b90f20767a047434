"""format("leveldb_log") over URLs: S3 through s3fs against moto's server on 127.0.0.1,
reached by the executors with the query's storageOptions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from support.s3 import moto_s3

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, Any]]:
    """A moto S3 server on 127.0.0.1 with a bucket "logs"; yields the storage options."""
    with moto_s3() as options:
        yield options


@pytest.fixture(scope="module")
def uploaded(s3: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three logs (and a hidden one) under s3://logs/wal/, and their local copies."""
    folder = tmp_path_factory.mktemp("s3")
    copies = {}
    for name, n in [("000002.log", 300), ("000001.log", 2000), ("_tmp.log", 5), ("000003.log", 1)]:
        records = [b"%s %d " % (name.encode(), i) * (i % 40) for i in range(n)]
        with leveldb_log.Writer(folder / name, "w") as w:
            w.write_many(records)
        with leveldb_log.Writer(f"s3://logs/wal/{name}", "w", storage_options=s3) as w:
            w.write_many(records)
        copies[name] = folder / name
    return copies


def expected(copies: dict[str, Path], names: list[str]) -> list[tuple[int, bytes, str]]:
    rows = []
    for name in names:
        with leveldb_log.Reader(copies[name]) as reader:
            rows += [(reader.last_record_offset, r, f"s3://logs/wal/{name}") for r in reader]
    return rows


def test_a_folder_and_a_glob_on_s3(spark: Any, s3: dict[str, Any], uploaded: Any) -> None:
    reader = (
        spark.read.format("leveldb_log")
        .option("storageOptions", json.dumps(s3))
        .option("includePath", "true")
        .option("maxPartitionBytes", "32768")
    )
    names = ["000001.log", "000002.log", "000003.log"]
    assert [tuple(r) for r in reader.load("s3://logs/wal").collect()] == expected(uploaded, names)
    glob = reader.load("s3://logs/wal/00000[23].log")
    assert [tuple(r) for r in glob.collect()] == expected(uploaded, names[1:])
