"""``leveldb-log dump``: every record with its offset, or decoded as its engine's records.

``--decode`` decodes each payload as the dialect's engine writes it: a WriteBatch (LevelDB,
RocksDB) or a Pebble batch in a WAL, a VersionEdit in a MANIFEST. With ``--dialect auto``
the payloads of a log framed as LevelDB's are decoded as RocksDB's, whose records are a
superset of LevelDB's (a RocksDB MANIFEST, or a RocksDB WAL without recycling, is framed
exactly like LevelDB's); ``--leveldb`` (``--dialect leveldb --decode``) keeps LevelDB's
stricter decoders and output.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from leveldb_log._public import module_dir
from leveldb_log.cli import _database, _datastore
from leveldb_log.cli._common import (
    EXIT_CORRUPT,
    EXIT_OK,
    Damage,
    UsageError,
    add_log,
    add_reading_options,
    log_size,
    open_reader,
    records,
    shown,
)
from leveldb_log.cli._dialect import add_dialect
from leveldb_log.cli._progress import Progress, add_progress
from leveldb_log.cli._verdict import reader_warnings
from leveldb_log.leveldb import (
    Delete,
    InternalKey,
    VersionEdit,
    WriteBatch,
    decode_version_edit,
    decode_write_batch,
)

if TYPE_CHECKING:
    from leveldb_log.cli._common import Subparsers

__all__ = ["register", "run"]
__dir__ = module_dir(globals())


def register(subparsers: Subparsers) -> None:
    """Add the ``dump`` subcommand and its options."""
    p = subparsers.add_parser(
        "dump",
        help="print every record with its offset",
        description=(
            "Print every record, one per line: offset, length and the payload (text: "
            "printable ASCII as is, other bytes as \\xNN, a backslash as \\\\). With "
            "--decode, decode each record as the dialect's engine does: a WriteBatch "
            "(NNNNNN.log; a batch for Pebble) or a VersionEdit (MANIFEST-NNNNNN); with "
            "--dialect auto, a log framed as LevelDB's is decoded as RocksDB's, a superset. "
            "--leveldb is --dialect leveldb --decode. Corruptions go to standard error. A "
            "database folder (one holding CURRENT): its write-ahead logs, in log-number "
            "order, each after a line '==> LOG <==' (JSON: a \"log\" member in each object)."
        ),
    )
    add_log(p)
    p.add_argument(
        "--format",
        choices=("text", "hex", "base64", "json"),
        default="text",
        help="how payloads are shown (default: text); json: one JSON object per line, "
        'payloads as strings when UTF-8, else {"base64": ...}',
    )
    p.add_argument("--decode", action="store_true", help="decode WriteBatch / VersionEdit payloads")
    p.add_argument(
        "--leveldb",
        action="store_true",
        help="--dialect leveldb --decode: LevelDB's WriteBatch / VersionEdit",
    )
    p.add_argument(
        "--kind",
        choices=("wal", "manifest", "export", "auto"),
        default="auto",
        help="with --decode: what the log holds (default: auto, from the file name: "
        "MANIFEST-* a MANIFEST, *.log a WAL; a folder, *.overall_export_metadata, "
        "*.export_metadata or output-N a Firestore/Datastore export, printed as one JSON "
        "object per entity)",
    )
    add_reading_options(p)
    add_dialect(p)
    _database.add_manifest(p)
    add_progress(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the records of LOG; exit status 1 if any corruption or undecodable payload."""
    if args.leveldb:
        if args.dialect not in ("auto", "leveldb"):
            raise UsageError(f"--leveldb means --dialect leveldb, not {args.dialect}")
        args.dialect, args.decode = "leveldb", True
    if args.decode and _datastore.is_export(args):
        return _datastore.dump(args)
    logs = _database.logs(args)
    if logs is None:
        return _log(args, None)
    return max([EXIT_OK, *(_log(each, each.log) for each in _database.each(args, logs))])


def _log(args: argparse.Namespace, named: str | None) -> int:
    """Print the records of one log, after a line naming it when ``named`` (a database's
    log: in JSON, each object names it instead); exit status 1 if any corruption or
    undecodable payload."""
    progress = Progress(lambda: log_size(args), args.progress, prints_records=True)
    damage = Damage(progress.err)
    undecodable = 0
    out = sys.stdout
    if named is not None and args.format != "json":
        out.write(f"==> {shown(named)} <==\n")
    with (
        progress,
        reader_warnings(args.log, progress.err) as not_a_log,
        open_reader(args, damage, args.dialect) as reader,
    ):
        format_record = _formatter(args, reader.dialect, named if args.format == "json" else None)
        for offset, payload in records(reader, args.log):
            try:
                out.write(format_record(offset, payload) + "\n")
            except ValueError as e:
                undecodable += 1
                progress.err(f"record at offset {offset}: {e}")
            if progress.bar is not None:
                progress.to(reader.position)
    return EXIT_CORRUPT if damage.found or undecodable or not_a_log else EXIT_OK


def _formatter(
    args: argparse.Namespace, dialect: str, log: str | None = None
) -> Callable[[int, bytes], str]:
    """What prints one record: plain, or decoded for the dialect and the kind of log; with
    ``log``, a JSON object of each record names the log first."""
    inner = _record_formatter(args, dialect)
    if log is None:
        return inner
    member = '{"log": ' + json.dumps(log) + ", "
    return lambda offset, payload: member + inner(offset, payload)[1:]


def _record_formatter(args: argparse.Namespace, dialect: str) -> Callable[[int, bytes], str]:
    """What prints one record: plain, or decoded for the dialect and the kind of log."""
    fmt = args.format
    if not args.decode:
        return lambda offset, payload: _format_plain(offset, payload, fmt)
    kind = _kind(args)
    if dialect == "leveldb" and args.dialect == "leveldb":
        return lambda offset, payload: _format_leveldb(offset, payload, kind, fmt)
    # RocksDB's and Pebble's decoders are a third of the command line's start: only here.
    from leveldb_log.cli._payloads import decoder

    payloads = "pebble" if dialect == "pebble" else "rocksdb"
    render = escape if fmt == "json" else _quoted(fmt)  # (json renders no bytes as text)
    return decoder(payloads, kind, fmt, render, json_bytes)


def _kind(args: argparse.Namespace) -> str:
    """``wal`` or ``manifest``: from --kind, else from the file's name."""
    if args.kind != "auto":
        return str(args.kind)
    name = os.path.basename(args.log)
    if name.startswith("MANIFEST"):
        return "manifest"
    if name.endswith(".log"):
        return "wal"
    name = shown(args.log)
    raise UsageError(f"cannot tell whether '{name}' is a WAL or a MANIFEST: give --kind")


# ---------------------------------------------------------------------------
# Bytes as text
# ---------------------------------------------------------------------------


def _escape_table(quote: str) -> list[str]:
    """The text of each byte value: itself if printable, else \\xNN (also for ``quote``)."""
    table = []
    for b in range(256):
        c = chr(b)
        if c == "\\":
            table.append("\\\\")
        elif 0x20 <= b < 0x7F and c != quote:
            table.append(c)
        else:
            table.append(f"\\x{b:02x}")
    return table


_ESCAPES = {"": _escape_table(""), "'": _escape_table("'")}
_NEEDS_ESCAPING = {
    "": re.compile(rb"[^\x20-\x5b\x5d-\x7e]"),
    "'": re.compile(rb"[^\x20-\x26\x28-\x5b\x5d-\x7e]"),
}


def escape(data: bytes, quote: str = "") -> str:
    """Bytes as text: printable ASCII as is, a backslash doubled, others (and quote) as \\xNN."""
    if not _NEEDS_ESCAPING[quote].search(data):
        return data.decode("ascii")
    table = _ESCAPES[quote]
    return "".join([table[b] for b in data])


def json_bytes(data: bytes) -> Any:
    """A JSON value for bytes: the string if they are UTF-8, else ``{"base64": ...}``."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


_RENDERERS: dict[str, Callable[[bytes], str]] = {
    "text": escape,
    "hex": lambda b: b.hex(),
    "base64": lambda b: base64.b64encode(b).decode("ascii"),
}


def _quoted(fmt: str) -> Callable[[bytes], str]:
    """The renderer for bytes shown between single quotes (``--leveldb``)."""
    return (lambda b: escape(b, "'")) if fmt == "text" else _RENDERERS[fmt]


def _format_plain(offset: int, payload: bytes, fmt: str) -> str:
    """One record as a line: offset, length and payload (or a JSON object)."""
    if fmt == "json":
        return json.dumps({"offset": offset, "length": len(payload), "data": json_bytes(payload)})
    return f"{offset}\t{len(payload)}\t{_RENDERERS[fmt](payload)}"


# ---------------------------------------------------------------------------
# --leveldb: WriteBatch and VersionEdit
# ---------------------------------------------------------------------------


def _format_leveldb(offset: int, payload: bytes, kind: str, fmt: str) -> str:
    """One decoded record; raises ValueError if the payload does not decode."""
    if kind == "wal":
        batch = decode_write_batch(payload)
        if fmt == "json":
            return json.dumps(_batch_json(offset, batch))
        return _batch_text(offset, batch, _quoted(fmt))
    edit = decode_version_edit(payload)
    if fmt == "json":
        return json.dumps(_edit_json(offset, edit))
    return _edit_text(offset, edit, _quoted(fmt))


def _key_text(key: InternalKey, render: Callable[[bytes], str]) -> str:
    """An internal key as leveldbutil shows it: 'user key' @ sequence : type."""
    return f"'{render(key.user_key)}' @ {key.sequence} : {key.value_type}"


def _batch_text(offset: int, batch: WriteBatch, render: Callable[[bytes], str]) -> str:
    """A WriteBatch as lines: its sequence, then one put or del per operation."""
    lines = [f"--- offset {offset}; sequence {batch.sequence}"]
    for op in batch.ops:
        if isinstance(op, Delete):
            lines.append(f"  del '{render(op.key)}'")
        else:
            lines.append(f"  put '{render(op.key)}' '{render(op.value)}'")
    return "\n".join(lines)


def _edit_text(offset: int, edit: VersionEdit, render: Callable[[bytes], str]) -> str:
    """A VersionEdit as lines, one per field present, as leveldbutil prints it."""
    lines = [f"--- offset {offset}; VersionEdit {{"]
    for label, value in (
        ("Comparator", edit.comparator),
        ("LogNumber", edit.log_number),
        ("PrevLogNumber", edit.prev_log_number),
        ("NextFile", edit.next_file_number),
        ("LastSeq", edit.last_sequence),
    ):
        if value is not None:
            lines.append(f"  {label}: {value}")
    for p in edit.compact_pointers:
        lines.append(f"  CompactPointer: {p.level} {_key_text(p.key, render)}")
    lines += [f"  RemoveFile: {d.level} {d.number}" for d in edit.deleted_files]
    for f in edit.new_files:
        keys = f"{_key_text(f.smallest, render)} .. {_key_text(f.largest, render)}"
        lines.append(f"  AddFile: {f.level} {f.number} {f.file_size} {keys}")
    lines.append("}")
    return "\n".join(lines)


def _key_json(key: InternalKey) -> dict[str, Any]:
    """An internal key as a JSON object."""
    return {
        "user_key": json_bytes(key.user_key),
        "sequence": key.sequence,
        "value_type": key.value_type,
    }


def _batch_json(offset: int, batch: WriteBatch) -> dict[str, Any]:
    """A WriteBatch as a JSON object."""
    ops: list[dict[str, Any]] = []
    for op in batch.ops:
        if isinstance(op, Delete):
            ops.append({"op": "delete", "key": json_bytes(op.key)})
        else:
            ops.append({"op": "put", "key": json_bytes(op.key), "value": json_bytes(op.value)})
    return {"offset": offset, "sequence": batch.sequence, "count": batch.count, "ops": ops}


def _edit_json(offset: int, edit: VersionEdit) -> dict[str, Any]:
    """A VersionEdit as a JSON object: the fields present only."""
    out: dict[str, Any] = {"offset": offset}
    for name in (
        "comparator",
        "log_number",
        "prev_log_number",
        "next_file_number",
        "last_sequence",
    ):
        if getattr(edit, name) is not None:
            out[name] = getattr(edit, name)
    if edit.compact_pointers:
        out["compact_pointers"] = [
            {"level": p.level, "key": _key_json(p.key)} for p in edit.compact_pointers
        ]
    if edit.deleted_files:
        out["deleted_files"] = [{"level": d.level, "number": d.number} for d in edit.deleted_files]
    if edit.new_files:
        out["new_files"] = [
            {
                "level": f.level,
                "number": f.number,
                "file_size": f.file_size,
                "smallest": _key_json(f.smallest),
                "largest": _key_json(f.largest),
            }
            for f in edit.new_files
        ]
    return out
