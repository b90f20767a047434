"""One read through a standalone Spark cluster on 127.0.0.1: a master and two workers
started with ``spark-class``, so that the executors are processes of their own, as on a real
cluster. The driver runs in a child process (a process has one SparkContext, and this one's
is the local session of the other tests). Checked: the rows are the Reader's, the
corruption reports come back as rows, and the damage a task met is in its executor's log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log._core import BLOCK_SIZE
from support.engines import spark_missing
from support.spark_cluster import TIMEOUT, daemon_env, standalone_cluster

pytestmark = pytest.mark.slow


def cluster_env(tmp: Path) -> dict[str, str]:
    """The environment of the daemons and of the driver: the executors' Python workers run
    this interpreter, which has leveldb_log installed."""
    return daemon_env(tmp, {**os.environ, "PYSPARK_PYTHON": sys.executable})


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A master and two one-core workers on 127.0.0.1: (master URL, workers' folder)."""
    reason = spark_missing()
    if reason is not None:
        pytest.skip(reason)
    with standalone_cluster(tmp_path, cluster_env(tmp_path)) as cluster:
        yield cluster.ready(), tmp_path


DRIVER = """
import json, os, sys
from pyspark.sql import SparkSession
import leveldb_log.spark
master, folder, damaged = sys.argv[1:4]
spark = (SparkSession.builder.master(master).appName("leveldb-log-cluster-test")
         .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
         .config("spark.executor.memory", "512m").config("spark.cores.max", "2")
         .getOrCreate())
leveldb_log.spark.register(spark)
reader = spark.read.format("leveldb_log").option("maxPartitionBytes", "32768")
rows = reader.option("includePath", "true").load(folder).collect()
reports = reader.option("corruptions", "true").load(damaged).collect()
json.dump({"rows": [[r.offset, r.data.hex(), r.path] for r in rows],
           "reports": [list(r) for r in reports]}, sys.stdout)
spark.stop()
"""


def test_a_read_through_a_standalone_cluster(cluster: tuple[str, Path], tmp_path: Path) -> None:
    master, root = cluster
    folder = tmp_path / "logs"
    folder.mkdir()
    for n in range(2):
        with leveldb_log.Writer(folder / f"00000{n}.log", "w") as w:
            for i in range(400):
                w.write(b"%d-%d|" % (n, i) * (20 + i % 50))
    expected = []
    for name in sorted(os.listdir(folder)):
        with leveldb_log.Reader(folder / name) as reader:
            expected += [[reader.last_record_offset, r.hex(), str(folder / name)] for r in reader]
    damaged = tmp_path / "damaged.log"
    raw = bytearray((folder / "000001.log").read_bytes())
    raw[BLOCK_SIZE + 30] ^= 0x55
    damaged.write_bytes(bytes(raw))
    found: list[Any] = []
    with leveldb_log.Reader(damaged, on_corruption=found.append) as reader:
        for _ in reader:
            pass
    assert found
    out = subprocess.run(
        [sys.executable, "-c", DRIVER, master, str(folder), str(damaged)],
        env=cluster_env(root),
        capture_output=True,
        timeout=TIMEOUT * 2,
        check=False,
    )
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-5000:]
    result = json.loads(out.stdout)
    assert result["rows"] == expected
    assert sorted(map(tuple, result["reports"])) == sorted(
        (str(damaged), c.offset, c.size, c.reason) for c in found
    )
    # Two executors ran, each a process under its worker; the damage went to a task's log.
    executors = sorted(root.glob("work[12]/app-*/*/stderr"))
    assert len(executors) == 2
    assert f"leveldb_log: {damaged}: " in "".join(p.read_text() for p in executors)
    assert "leveldb_log: " not in out.stderr.decode(errors="replace")
