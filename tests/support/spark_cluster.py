"""A standalone Spark cluster on 127.0.0.1 for the cluster tests (tests/spark/test_cluster.py,
tests/spark/test_recipe.py): a master and its workers started with ``spark-class``, so that
the executors are processes of their own, as on a real cluster.

Every port is 0, so each JVM binds one the kernel hands it, and the master's URL and status
page are read from its log: ports picked here and bound later could be taken in between (by
the other daemons, or by tests running beside these).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

import pytest

from support.engines import SPARK_TEST_JVM_OPTS

TIMEOUT = 240  # s: JVMs start slowly on a loaded 2-core machine

T = TypeVar("T")


def spark_home() -> Path:
    """The installed pyspark's folder: a Spark distribution, with its bin and jars."""
    import pyspark

    return Path(pyspark.__file__).parent


def daemon_env(folder: Path, base: Mapping[str, str]) -> dict[str, str]:
    """base, plus what the daemons need: Spark's home, loopback, their folders under folder,
    and no daemonizing (so that terminating a process stops its JVM)."""
    env = dict(base)
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(folder / "logs"),
        SPARK_WORKER_DIR=str(folder / "work"),
        SPARK_NO_DAEMONIZE="1",
    )
    env.setdefault("SPARK_DAEMON_JAVA_OPTS", SPARK_TEST_JVM_OPTS)  # the master's and workers'
    return env


def start(args: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``spark-class ARGS``, its output to log, in a session of its own."""
    spark_class = str(spark_home() / "bin" / "spark-class")
    with log.open("wb") as out:
        return subprocess.Popen(
            [spark_class, *args],
            env=dict(env),
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


def wait_for(condition: Callable[[], T], what: str, logs: list[Path]) -> T:
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


class Cluster:
    """A master and `workers` workers of `cores` cores each, on 127.0.0.1: their logs in
    folder/master.out and folder/worker<i>.out, their executors' folders in folder/work<i>.

    The master starts at once; ready() starts the workers, once the master is up, and waits
    for them, so that a test can do its own preparation while the JVMs start.
    """

    def __init__(self, folder: Path, env: Mapping[str, str], workers: int, cores: int) -> None:
        self.folder, self.workers, self.cores = folder, workers, cores
        self.env = daemon_env(folder, env)
        self.logs = [folder / "master.out"]
        self.logs += [folder / f"worker{i}.out" for i in range(1, workers + 1)]
        self.procs = [self.daemon("master.Master", self.logs[0], "--port", "0")]

    def daemon(self, name: str, log: Path, *args: str) -> subprocess.Popen[bytes]:
        """Starts org.apache.spark.deploy.NAME on loopback, its web UI on a free port."""
        daemon = ["--host", "127.0.0.1", "--webui-port", "0"]
        return start([f"org.apache.spark.deploy.{name}", *args, *daemon], self.env, log)

    def ready(self) -> str:
        """The master's URL, once every worker has registered with it."""
        logs = self.logs
        master = wait_for(
            lambda: logged(logs[0], r"Starting Spark master at (spark://\S+)"), "master up", logs
        )
        ui = wait_for(
            lambda: logged(logs[0], r"MasterWebUI.*started at (http://\S+)"), "master UI", logs
        )
        for i in range(1, self.workers + 1):
            args = ["--cores", str(self.cores), "--memory", "1g"]
            args += ["--work-dir", str(self.folder / f"work{i}")]
            self.procs.append(self.daemon("worker.Worker", logs[i], master, *args))
        wait_for(lambda: alive_workers(ui) == self.workers, "workers registered", logs)
        return master

    def stop(self) -> None:
        """Stops every daemon (and so its executors)."""
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def standalone_cluster(
    folder: Path, env: Mapping[str, str], workers: int = 2, cores: int = 1
) -> Iterator[Cluster]:
    """A Cluster (its master starting), stopped on leaving."""
    cluster = Cluster(folder, env, workers, cores)
    try:
        yield cluster
    finally:
        cluster.stop()
