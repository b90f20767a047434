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

    Spark hands a Python data source none of the session's settings, so those a read
    follows are taken here, as they stand when this is called: ``spark.sql.files.*``'s
    ``maxPartitionBytes``, ``openCostInBytes``, ``ignoreCorruptFiles`` and
    ``ignoreMissingFiles`` become the defaults of the options of the same names (an option
    given to a read still wins); ``spark.sql.sources.partitionColumnTypeInference.enabled``,
    ``spark.sql.session.timeZone`` (for ``modifiedBefore`` / ``modifiedAfter``) and
    ``spark.sql.python.filterPushdown.enabled`` (which reader plans the read) are followed
    too. Register again after changing them.

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
    for option in SESSION_FLAGS:
        settings[option] = str(spark.conf.get(f"spark.sql.files.{option}", "false"))
    for name, default in SESSION_SETTINGS.items():
        settings[name] = str(spark.conf.get(name, default))
    for source in with_session_options(settings):
        spark.dataSource.register(source)


#: The read options whose defaults come from the session's ``spark.sql.files.*`` settings.
SESSION_OPTIONS = ("maxPartitionBytes", "openCostInBytes")

#: The read options whose defaults are the session's ``spark.sql.files.*`` flags.
SESSION_FLAGS = ("ignoreCorruptFiles", "ignoreMissingFiles")

#: Other settings a read follows, by their own names, with Spark's defaults.
SESSION_SETTINGS = {
    "spark.sql.sources.partitionColumnTypeInference.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.python.filterPushdown.enabled": "false",
}

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
