"""The two data source classes Spark instantiates, on the driver and in every executor. Each
hands its work to the module that owns it: batch reads (_read), batch writes (_write),
streaming reads (_stream_read), streaming writes (_stream_write), exports (_export)."""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType


class LogDataSource(DataSource):
    """``format("leveldb_log")``: LevelDB logs (and RocksDB's and Pebble's) as rows."""

    @classmethod
    def name(cls) -> str:
        return "leveldb_log"

    def schema(self) -> StructType:
        from leveldb_log.spark._options import read_schema

        return read_schema(self.options)

    def reader(self, schema: StructType) -> DataSourceReader:
        from leveldb_log.spark._read import LogReader

        return LogReader(self.options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from leveldb_log.spark._write import LogWriter

        return LogWriter(self.options, schema, overwrite)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from leveldb_log.spark._stream_read import LogStreamReader

        return LogStreamReader(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from leveldb_log.spark._stream_write import LogStreamWriter

        return LogStreamWriter(self.options, schema, overwrite)


class ExportDataSource(DataSource):
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
