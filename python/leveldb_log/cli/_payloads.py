"""``dump --decode`` for RocksDB's and Pebble's payloads: a record as text or as JSON.

Text follows LevelDB's output (cli/dump.py): a ``---`` line with the offset, then one line
per operation (``put 'key' 'value'``, ``del 'key'``, with ``cf=N`` after the name for a
column family other than 0) or per VersionEdit field. JSON gives the same facts, one
object per record; fields left at their defaults are left out.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from leveldb_log import pebble, rocksdb
from leveldb_log.leveldb import InternalKey

__all__ = ["decoder"]

Render = Callable[[bytes], str]

# The name of each operation, in text and JSON alike (LevelDB's "del" in text for Delete).
_NAMES: dict[type, str] = {
    rocksdb.Put: "put",
    rocksdb.Delete: "delete",
    rocksdb.SingleDelete: "single_delete",
    rocksdb.Merge: "merge",
    rocksdb.DeleteRange: "delete_range",
    rocksdb.BlobIndex: "blob_index",
    rocksdb.WideColumnEntity: "put_entity",
    rocksdb.TimedPut: "timed_put",
    rocksdb.LogData: "log_data",
    rocksdb.BeginPrepare: "begin_prepare",
    rocksdb.BeginPersistedPrepare: "begin_persisted_prepare",
    rocksdb.BeginUnprepare: "begin_unprepare",
    rocksdb.EndPrepare: "end_prepare",
    rocksdb.Commit: "commit",
    rocksdb.CommitWithTimestamp: "commit_with_timestamp",
    rocksdb.Rollback: "rollback",
    rocksdb.Noop: "noop",
    pebble.Set: "set",
    pebble.Delete: "delete",
    pebble.SingleDelete: "single_delete",
    pebble.Merge: "merge",
    pebble.LogData: "log_data",
    pebble.RangeDelete: "range_delete",
    pebble.RangeKeySet: "range_key_set",
    pebble.RangeKeyUnset: "range_key_unset",
    pebble.RangeKeyDelete: "range_key_delete",
    pebble.DeleteSized: "delete_sized",
    pebble.Excise: "excise",
    pebble.IngestSST: "ingest_sst",
    pebble.IngestSSTWithBlobs: "ingest_sst_with_blobs",
    pebble.Other: "other",
}


def decoder(
    payloads: str, kind: str, fmt: str, render: Render, json_bytes: Callable[[bytes], Any]
) -> Callable[[int, bytes], str]:
    """The function printing one record of a ``kind`` log ("wal" or "manifest") whose
    payloads are ``payloads``' ("rocksdb" or "pebble"), as ``fmt`` says ("json" or a text
    format, whose bytes ``render`` shows). It raises ValueError for a payload that does
    not decode. Pebble's MANIFEST shares RocksDB's VersionEdit tags and is decoded so."""
    as_json = _Json(json_bytes)
    if kind == "wal" and payloads == "pebble":

        def pebble_batch(offset: int, payload: bytes) -> str:
            """The record at ``offset``, decoded; ValueError if it does not decode."""
            batch = pebble.decode_write_batch(payload)
            if fmt == "json":
                return json.dumps(as_json.batch(offset, batch.sequence, batch.ops, batch.count))
            head = f"--- offset {offset}; sequence {batch.sequence}; count {batch.count}"
            return "\n".join([head] + [_op_text(op, render) for op in batch.ops])

        return pebble_batch
    if kind == "wal":

        def write_batch(offset: int, payload: bytes) -> str:
            """The record at ``offset``, decoded; ValueError if it does not decode."""
            batch = rocksdb.decode_write_batch(payload)
            if fmt == "json":
                return json.dumps(as_json.batch(offset, batch.sequence, batch.ops, batch.count))
            head = f"--- offset {offset}; sequence {batch.sequence}"
            return "\n".join([head] + [_op_text(op, render) for op in batch.ops])

        return write_batch

    def version_edit(offset: int, payload: bytes) -> str:
        """The record at ``offset``, decoded; ValueError if it does not decode."""
        edit = rocksdb.decode_version_edit(payload)
        if fmt == "json":
            return json.dumps({"offset": offset, **as_json.value(edit)})
        return _edit_text(offset, edit, render)

    return version_edit


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------


def _value_text(value: object, render: Render) -> str:
    """A field's value: bytes quoted, an internal key as leveldbutil shows it, else str."""
    if isinstance(value, bytes):
        return f"'{render(value)}'"
    if isinstance(value, InternalKey):
        return f"'{render(value.user_key)}' @ {value.sequence} : {value.value_type}"
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return " ".join(f"{tag}:{_value_text(raw, render)}" for tag, raw in value)
    return str(value)


def _op_text(op: object, render: Render) -> str:
    """One operation as a line: its name, ``cf=N`` if not 0, then its fields (bytes as
    they are, other values as ``name=value``)."""
    name = _NAMES[type(op)]
    parts = ["  " + ("del" if name == "delete" else name)]
    for field in dataclasses.fields(op):  # type: ignore[arg-type]
        value = getattr(op, field.name)
        if field.name == "cf":
            if value:
                parts.insert(1, f"cf={value}")
        elif isinstance(value, bytes):
            parts.append(_value_text(value, render))
        else:
            parts.append(f"{field.name}={value}")
    return " ".join(parts)


# VersionEdit scalar fields and their labels (LevelDB's labels for LevelDB's fields).
_EDIT_LABELS = (
    ("comparator", "Comparator"),
    ("db_id", "DbId"),
    ("log_number", "LogNumber"),
    ("prev_log_number", "PrevLogNumber"),
    ("next_file_number", "NextFile"),
    ("last_sequence", "LastSeq"),
    ("min_log_number_to_keep", "MinLogNumberToKeep"),
    ("max_column_family", "MaxColumnFamily"),
    ("column_family", "ColumnFamily"),
    ("column_family_add", "ColumnFamilyAdd"),
    ("column_family_drop", "ColumnFamilyDrop"),
    ("remaining_entries", "AtomicGroupRemaining"),
    ("full_history_ts_low", "FullHistoryTsLow"),
    ("persist_user_defined_timestamps", "PersistUserDefinedTimestamps"),
    ("last_compacted_manifest_file_size", "LastCompactedManifestFileSize"),
)
_EDIT_LISTS = (
    ("compact_pointers", "CompactCursor"),
    ("deleted_files", "RemoveFile"),
    ("blob_file_additions", "BlobFileAddition"),
    ("blob_file_garbages", "BlobFileGarbage"),
    ("wal_additions", "WalAddition"),
    ("wal_deletions", "WalDeletion"),
)


def _new_file_text(f: rocksdb.NewFile, render: Render) -> str:
    """An added table file: LevelDB's AddFile line, then the fields RocksDB adds."""
    keys = f"{_value_text(f.smallest, render)} .. {_value_text(f.largest, render)}"
    line = f"  AddFile: {f.level} {f.number} {f.file_size} {keys}"
    for field in dataclasses.fields(f)[5:]:
        value = getattr(f, field.name)
        if value != field.default:
            line += f" {field.name}={_value_text(value, render)}"
    return line


def _edit_text(offset: int, edit: rocksdb.VersionEdit, render: Render) -> str:
    """A VersionEdit as lines, one per field present."""
    lines = [f"--- offset {offset}; VersionEdit {{"]
    defaults = rocksdb.VersionEdit()
    for name, label in _EDIT_LABELS:
        value = getattr(edit, name)
        if value != getattr(defaults, name):
            shown = render(value) if isinstance(value, bytes) else value
            lines.append(f"  {label}: {shown}")
    for name, label in _EDIT_LISTS:
        for item in getattr(edit, name):
            fields = (getattr(item, f.name) for f in dataclasses.fields(item))
            values = " ".join(_value_text(v, render) for v in fields if v not in ((), None))
            lines.append(f"  {label}: {values}")
    lines += [_new_file_text(f, render) for f in edit.new_files]
    lines += [f"  SubcompactionProgress: '{render(p)}'" for p in edit.subcompaction_progress]
    lines += [f"  Ignored: {tag} '{render(raw)}'" for tag, raw in edit.ignored]
    lines.append("}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------

# The items of a VersionEdit's lists but new_files: rows whose every field is shown.
_ROWS = (
    rocksdb.CompactPointer,
    rocksdb.DeletedFile,
    rocksdb.BlobFileAddition,
    rocksdb.BlobFileGarbage,
    rocksdb.WalAddition,
    rocksdb.WalDeletion,
)


@dataclasses.dataclass
class _Json:
    """Decoded values as JSON values, bytes shown by ``json_bytes``."""

    json_bytes: Callable[[bytes], Any]

    def value(self, value: object) -> Any:
        """Bytes, internal keys, dataclasses (fields not at their default, except in the
        items of a VersionEdit's lists, which show every field) and tuples, as JSON values."""
        if isinstance(value, bytes):
            return self.json_bytes(value)
        if isinstance(value, InternalKey):
            return {
                "user_key": self.json_bytes(value.user_key),
                "sequence": value.sequence,
                "value_type": value.value_type,
            }
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            every = isinstance(value, _ROWS)
            return {
                f.name: self.value(getattr(value, f.name))
                for f in dataclasses.fields(value)
                if every or getattr(value, f.name) != f.default
            }
        if isinstance(value, tuple):
            return [self.value(v) for v in value]
        return value

    def batch(self, offset: int, sequence: int, ops: tuple[Any, ...], count: int) -> Any:
        """A batch: offset, sequence, count, and its operations (each with ``op``)."""
        out = [{"op": _NAMES[type(op)], **self.value(op)} for op in ops]
        return {"offset": offset, "sequence": sequence, "count": count, "ops": out}
