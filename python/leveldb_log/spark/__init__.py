"""LevelDB logs and Firestore/Datastore exports as Spark data sources.

``register(spark)`` registers two Python data sources with a SparkSession:

- ``leveldb_log``: ``spark.read``, ``spark.readStream``, ``df.write`` and ``df.writeStream``
  with ``.format("leveldb_log")``: one row per record (``offset``, ``data``, and ``path`` on
  request), or one row per operation of a LevelDB, RocksDB or Pebble WAL (``decode``);
- ``datastore_export``: ``spark.read.format("datastore_export").load(folder)``, one row per
  entity of an export.

pyspark is imported only here, when ``register`` is called: ``import leveldb_log`` never needs
it. Needs the extra ``leveldb-log[spark]`` and a Java runtime. See docs/spark.md.
"""

from __future__ import annotations

from typing import Any

__all__ = ["register"]


def register(spark: Any) -> None:
    """Register the data sources ``leveldb_log`` and ``datastore_export`` with ``spark``.

    Arguments
      spark: a ``pyspark.sql.SparkSession``. Registering twice is harmless.

    Raises
      ImportError: pyspark (or pyarrow) is missing: ``pip install 'leveldb-log[spark]'``.
    """
    try:
        from leveldb_log.spark._source import ExportDataSource, LogDataSource
    except ImportError as e:
        raise ImportError(
            f"leveldb_log.spark needs pyspark and pyarrow ({e.name} is missing): "
            "pip install 'leveldb-log[spark]'"
        ) from e
    spark.dataSource.register(LogDataSource)
    spark.dataSource.register(ExportDataSource)
