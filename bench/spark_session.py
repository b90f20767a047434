"""The SparkSession the Spark cases share: local, on loopback, no UI, leveldb_log registered."""

from __future__ import annotations

import os
import sys
from typing import Any


def spark_session(app: str, **settings: str) -> Any:
    """A ``local[2]`` SparkSession named ``app``, with ``settings`` (Spark configuration)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers need leveldb_log
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import leveldb_log.spark
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.python.worker.reuse", "true")
    )
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    leveldb_log.spark.register(spark)
    return spark
