"""Batch reads of ``format("datastore_export")``: the entities of a Firestore/Datastore
export, one row per entity, with the columns and types ``Export.to_arrow()`` gives.

The schema is the export's: found on the driver by one pass over its entities (as Spark's
JSON source infers one), unless the query gives one (``.schema(...)``). Each column's type
is what leveldb_log.datastore's Arrow conversion makes of every value the property takes
in the export; a column of mixed types is JSON text, marked so in its field's metadata, so
that every task writes JSON for it, whatever values its own entities hold. Tasks read
output files (or byte ranges of them) with ``Export.read_file``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from leveldb_log._files._plan import Range, pack
from leveldb_log._splits import splits
from leveldb_log.datastore import _arrow
from leveldb_log.datastore._export import Export
from leveldb_log.datastore._values import Entity
from leveldb_log.spark import _options

__all__ = ["ExportReader", "export_schema", "property_types"]

#: A field's metadata that says its column is JSON text (as Export.to_arrow() marks it).
JSON = {"leveldb_log.datastore": "json"}
KEY, KIND = "__key__", "__kind__"


def _export(options: Mapping[str, str]) -> Export:
    """The export the options name: ``path``, ``kinds``, ``namespaces``, ``storageOptions``."""
    paths = _options.paths(options)
    if len(paths) != 1:
        raise ValueError(f"datastore_export reads one export (a folder or file), not {paths}")
    return Export(
        paths[0],
        kinds=_names(options, "kinds"),
        namespaces=_names(options, "namespaces"),
        storage_options=_options.storage_options(options),
    )


def _names(options: Mapping[str, str], name: str) -> list[str] | None:
    """A list option: names separated by commas, or a JSON array of strings."""
    value = _options.text(options, name)
    if value is None:
        return None
    if value.lstrip().startswith("["):
        parsed = json.loads(value)
        if not isinstance(parsed, list) or not all(isinstance(v, str) for v in parsed):
            raise ValueError(f"option {name} must be a JSON array of strings, not {value!r}")
        return parsed
    return [v.strip() for v in value.split(",")]


def property_types(entities: Iterator[Entity]) -> dict[str, set[type]]:
    """Each property name (in order of first appearance) and the types of its non-null
    values; ``object`` is added where ints too large for a double meet floats, which the
    Arrow conversion then writes as JSON, as it would for the whole export."""
    types: dict[str, set[type]] = {}
    inexact: set[str] = set()
    for entity in entities:
        for name, value in entity.items():
            types.setdefault(name, set()).add(type(value))
            if type(value) is int and not -_arrow._EXACT <= value <= _arrow._EXACT:
                inexact.add(name)
    for name, found in types.items():
        found.discard(type(None))
        if name in inexact and found >= {int, float}:
            found.add(object)
    return types


def export_schema(options: Mapping[str, str]) -> StructType:
    """The rows of ``format("datastore_export")``: ``__key__`` (the key struct), ``__kind__``
    (the key's kind), then one column per property, typed as Export.to_arrow() types it."""
    fields = [
        StructField(KEY, from_arrow_type(_arrow._key_type(pa))),
        StructField(KIND, StringType()),
    ]
    for name, types in property_types(iter(_export(options))).items():
        array, field = _arrow._column(pa, name, [], types)
        if pa.types.is_null(array.type):  # never set: no type to give it
            fields.append(StructField(name, StringType()))
        elif field.metadata:
            fields.append(StructField(name, StringType(), metadata=JSON))
        else:
            fields.append(StructField(name, from_arrow_type(array.type)))
    return StructType(fields)


class ExportPartition(InputPartition):
    """Byte ranges of output files of an export, read by one task."""

    def __init__(self, export: Export, pieces: list[Range]) -> None:
        super().__init__(tuple(pieces))
        self.export, self.pieces = export, tuple(pieces)


class ExportReader(DataSourceReader):
    """Plans and reads ``spark.read.format("datastore_export")``."""

    def __init__(self, options: Mapping[str, str], schema: StructType) -> None:
        self.options = dict(options)
        self.schema = schema
        self.layout = _options.layout(options)

    def partitions(self) -> list[ExportPartition]:
        """The output files in ranges of about ``maxPartitionBytes``, packed as Spark packs
        small files (``openCostInBytes``)."""
        export = _export(self.options)
        storage = _options.storage_options(self.options)
        size = self.layout.partition_bytes
        pieces = [
            Range(path, start, end)
            for path in export.files
            for start, end in splits(path, size=size, storage_options=storage)
        ]
        groups = pack(pieces, size, self.layout.open_cost)
        return [ExportPartition(export, group) for group in groups]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Each piece's entities as an Arrow batch in the schema's types."""
        if not isinstance(partition, ExportPartition):
            return  # Spark's stand-in when there is no partition: an export without files
        for piece in partition.pieces:
            entities = list(partition.export.read_file(piece.path, piece.start, piece.end))
            if entities:
                yield entity_batch(entities, self.schema)


def entity_batch(entities: list[Entity], schema: StructType) -> pa.RecordBatch:
    """Entities as a RecordBatch of ``schema``, each column made by the package's Arrow
    conversion and cast to the type Spark expects for it."""
    target = to_arrow_schema(schema, timezone="UTC")
    arrays = []
    for field in schema.fields:
        if field.name == KEY:
            array = _arrow._keys(pa, _arrow._flatten([e.key for e in entities]))
        elif field.name == KIND:
            array = pa.array([e.key.kind if e.key else None for e in entities], pa.string())
        else:
            values = [e.get(field.name) for e in entities]
            json_text = field.metadata.get("leveldb_log.datastore") == "json"
            types: set[type] = {object} if json_text else {type(v) for v in values}
            types.discard(type(None))
            array, _ = _arrow._column(pa, field.name, values, types)
        arrays.append(array.cast(target.field(field.name).type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)
