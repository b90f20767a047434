"""One read through a standalone Spark cluster on 127.0.0.1: a master and two workers
started with ``spark-class``, so that the executors are processes of their own, as on a real
cluster. The driver runs in a child process (a process has one SparkContext, and this one's
is the local session of the other tests). Checked: the rows are the Reader's, the
corruption reports come back as rows, and the damage a task met is in its executor's log.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log._core import BLOCK_SIZE
from support.engines import spark_missing

pytestmark = pytest.mark.slow

TIMEOUT = 240  # s: JVMs start slowly on a loaded 2-core machine


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def cluster_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        SPARK_LOG_DIR=str(tmp / "logs"),
        SPARK_WORKER_DIR=str(tmp / "work"),
        SPARK_NO_DAEMONIZE="1",
    )
    return env


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    spark_class = str(spark_home() / "bin" / "spark-class")
    with log.open("wb") as out:
        return subprocess.Popen(
            [spark_class, *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def alive_workers(ui: str) -> int:
    """The master's count of live workers, 0 while its status page does not answer in JSON."""
    try:
        with urllib.request.urlopen(f"{ui}/json/", timeout=5) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


def wait_for(condition: Any, what: str, logs: list[Path]) -> Any:
    """condition()'s first true value, polled until TIMEOUT; the logs' tails on failure."""
    deadline = time.monotonic() + TIMEOUT
    while not (found := condition()):
        if time.monotonic() > deadline:
            text = "\n".join(p.read_text(errors="replace")[-3000:] for p in logs if p.exists())
            pytest.fail(f"{what} within {TIMEOUT} s; logs:\n{text}")
        time.sleep(0.5)
    return found


def logged(log: Path, pattern: str) -> str | None:
    """The first group of pattern's first match in log, None before it appears."""
    match = re.search(pattern, log.read_text(errors="replace")) if log.exists() else None
    return match.group(1) if match else None


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A master and two one-core workers on 127.0.0.1: (master URL, workers' folder).

    Every port is 0, so each JVM binds one the kernel hands it, and the master's URL and
    status page are read from its log: ports picked here and bound later could be taken
    in between (by the other daemons, or by tests running beside this one).
    """
    reason = spark_missing()
    if reason is not None:
        pytest.skip(reason)
    env = cluster_env(tmp_path)
    logs = [tmp_path / "master.out", tmp_path / "worker1.out", tmp_path / "worker2.out"]
    daemon = ["--host", "127.0.0.1", "--webui-port", "0"]
    procs = [start(["org.apache.spark.deploy.master.Master", *daemon, "--port", "0"], env, logs[0])]
    try:
        master = wait_for(
            lambda: logged(logs[0], r"Starting Spark master at (spark://\S+)"), "master up", logs
        )
        ui = wait_for(
            lambda: logged(logs[0], r"MasterWebUI.*started at (http://\S+)"), "master UI", logs
        )
        for i in (1, 2):
            worker = ["--cores", "1", "--memory", "1g", "--work-dir", str(tmp_path / f"work{i}")]
            procs.append(
                start(
                    ["org.apache.spark.deploy.worker.Worker", master, *daemon, *worker],
                    env,
                    logs[i],
                )
            )
        wait_for(lambda: alive_workers(ui) == 2, "two workers registered", logs)
        yield master, tmp_path
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


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
