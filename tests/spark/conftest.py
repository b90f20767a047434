"""One SparkSession per test process (``local[2]``), with the data sources registered.

Spark's Python workers run the interpreter named by PYSPARK_PYTHON (else ``python3`` from
PATH), so it is set to this one, which has leveldb_log installed. The tests skip, saying why,
only where Spark cannot run: no pyspark (the wheel's own platforms) or no Java runtime.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from support.engines import SPARK_TEST_JVM_OPTS, spark_missing

# Every driver JVM the tests start (this process's, and those of the programs they run, which
# inherit the environment) takes the tests' JVM options; spark-submit reads them from here.
os.environ.setdefault("SPARK_SUBMIT_OPTS", SPARK_TEST_JVM_OPTS)


def new_session(master: str = "local[2]", app: str = "leveldb-log-tests") -> Any:
    """A SparkSession on loopback, without the web UI, its data sources registered."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import leveldb_log.spark
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    leveldb_log.spark.register(session)
    return session


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The test process's SparkSession (``local[2]``)."""
    reason = spark_missing()
    if reason is not None:
        pytest.skip(reason)
    session = new_session()
    yield session
    session.stop()
