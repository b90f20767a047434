"""The two data source classes Spark instantiates, on the driver and in every executor. Each
hands its work to the module that owns it: batch reads (_read), batch writes (_write),
streaming reads (_stream_read), streaming writes (_stream_write), exports (_export)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pyspark.sql.datasource import (
    CaseInsensitiveDict,
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType


class _SessionDefaults(DataSource):
    """A data source whose options default to the session's settings that register() took
    (Spark tells a Python source none of them)."""

    session_options: ClassVar[Mapping[str, str]] = {}

    def __init__(self, options: dict[str, str]) -> None:
        merged = CaseInsensitiveDict(self.session_options)
        merged.update(options)
        super().__init__(merged)


def with_session_options(
    settings: Mapping[str, str],
) -> tuple[type[DataSource], type[DataSource]]:
    """The two data sources, their options defaulting to ``settings``: classes made here
    travel to Spark's Python workers by value (cloudpickle), settings included."""
    return tuple(  # type: ignore[return-value]
        type(base.__name__, (base,), {"session_options": dict(settings), "__module__": __name__})
        for base in (LogDataSource, ExportDataSource)
    )


class LogDataSource(_SessionDefaults):
    """``format("leveldb_log")``: LevelDB logs (and RocksDB's and Pebble's) as rows."""

    @classmethod
    def name(cls) -> str:
        return "leveldb_log"

    def schema(self) -> StructType:
        from leveldb_log.spark._read import source_schema

        return source_schema(self.options)

    def reader(self, schema: StructType) -> DataSourceReader:
        from leveldb_log.spark._options import PUSHDOWN, flag
        from leveldb_log.spark._read import FilteringLogReader, LogReader

        # Spark refuses a reader with pushFilters unless the session enables filter
        # pushdown for Python sources: register() read that setting.
        pushing = flag(self.options, PUSHDOWN, False)
        return (FilteringLogReader if pushing else LogReader)(self.options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from leveldb_log.spark._write import LogWriter

        return LogWriter(self.options, schema, overwrite)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from leveldb_log.spark._stream_read import LogStreamReader

        return LogStreamReader(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from leveldb_log.spark._stream_write import LogStreamWriter

        return LogStreamWriter(self.options, schema, overwrite)


class ExportDataSource(_SessionDefaults):
    """``format("datastore_export")``: the entities of a Firestore/Datastore export as rows."""

    @classmethod
    def name(cls) -> str:
        return "datastore_export"

    def schema(self) -> StructType:
        from leveldb_log.spark._export import export_schema

        return export_schema(self.options)

    def reader(self, schema: StructType) -> DataSourceReader:
        from leveldb_log.spark._export import ExportReader

        return ExportReader(self.options, schema)
