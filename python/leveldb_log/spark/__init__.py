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

from leveldb_log._public import module_dir

__all__ = ["register"]
__dir__ = module_dir(globals())


def register(spark: Any) -> None:
    """Register the data sources ``leveldb_log`` and ``datastore_export`` with ``spark``.

    Spark hands a Python data source none of the session's settings, so the two that cut
    reads into partitions, ``spark.sql.files.maxPartitionBytes`` and
    ``spark.sql.files.openCostInBytes``, are taken here, as they stand when this is called,
    and become the sources' defaults for the options ``maxPartitionBytes`` and
    ``openCostInBytes`` (an option given to a read still wins). Register again after
    changing them.

    Arguments
      spark: a ``pyspark.sql.SparkSession``. Registering twice is harmless.

    Raises
      ImportError: pyspark (or pyarrow) is missing: ``pip install 'leveldb-log[spark]'``.
      ValueError: one of the two settings is no byte size Spark would take.
    """
    try:
        from leveldb_log.spark._source import with_session_options
    except ImportError as e:
        raise ImportError(
            f"leveldb_log.spark needs pyspark and pyarrow ({e.name} is missing): "
            "pip install 'leveldb-log[spark]'"
        ) from e
    settings = {
        option: str(byte_size(spark.conf.get(f"spark.sql.files.{option}"), option))
        for option in SESSION_OPTIONS
    }
    for source in with_session_options(settings):
        spark.dataSource.register(source)


#: The read options whose defaults come from the session's ``spark.sql.files.*`` settings.
SESSION_OPTIONS = ("maxPartitionBytes", "openCostInBytes")

#: The units of Spark's byte sizes ("128MB", "4m", "134217728b"; a bare number is bytes).
_UNITS = {"": 0, "b": 0, "k": 10, "kb": 10, "m": 20, "mb": 20, "g": 30, "gb": 30, "t": 40}
_UNITS |= {"tb": 40, "p": 50, "pb": 50}


def byte_size(text: str, name: str) -> int:
    """A byte size as Spark writes one in its settings, in bytes."""
    value = text.strip().lower()
    digits = len(value) - len(value.lstrip("0123456789"))
    unit = value[digits:].strip()
    if digits == 0 or unit not in _UNITS:
        raise ValueError(f"spark.sql.files.{name} is no byte size: {text!r}")
    return int(value[:digits]) << _UNITS[unit]
