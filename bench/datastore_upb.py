"""The measurement behind leveldb_log._datastore's hand-written C decoder: the same records
decoded by the ``protobuf`` package's upb backend (a schema built here from entity.proto's
published field numbers, proto2 with groups) plus building the same Python values, against
read_export and google-cloud-ndb's pure-Python codec.

    python -m bench.datastore_upb [N]      # N entities of 5 properties (default 100000)

Prints seconds of CPU time (best of 3) for each, and the ratios. bench/README.md has the
figures and the decision they made.
"""

from __future__ import annotations

import datetime
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import leveldb_log
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from leveldb_log import datastore as ds

from bench.cases.datastore import entities, ndb_values
from bench.machine import cpu

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
F = descriptor_pb2.FieldDescriptorProto


def _field(
    m: Any, name: str, number: int, kind: int, label: int = F.LABEL_OPTIONAL, type_name: str = ""
) -> None:
    f = m.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        f.type_name = type_name


def _schema() -> Any:
    """EntityProto's messages as a FileDescriptorProto (UserValue left out)."""
    fd = descriptor_pb2.FileDescriptorProto(
        name="entity_bench.proto", package="eb", syntax="proto2"
    )
    path = fd.message_type.add(name="Path")
    element = path.nested_type.add(name="Element")
    _field(element, "type", 2, F.TYPE_STRING)
    _field(element, "id", 3, F.TYPE_INT64)
    _field(element, "name", 4, F.TYPE_STRING)
    _field(path, "element", 1, F.TYPE_GROUP, F.LABEL_REPEATED, ".eb.Path.Element")
    ref = fd.message_type.add(name="Reference")
    _field(ref, "app", 13, F.TYPE_STRING)
    _field(ref, "name_space", 20, F.TYPE_STRING)
    _field(ref, "path", 14, F.TYPE_MESSAGE, type_name=".eb.Path")
    _field(ref, "database_id", 23, F.TYPE_STRING)
    value = fd.message_type.add(name="PropertyValue")
    point = value.nested_type.add(name="PointValue")
    _field(point, "x", 6, F.TYPE_DOUBLE)
    _field(point, "y", 7, F.TYPE_DOUBLE)
    for name, number, kind in (
        ("int64Value", 1, F.TYPE_INT64),
        ("booleanValue", 2, F.TYPE_BOOL),
        ("stringValue", 3, F.TYPE_BYTES),
        ("doubleValue", 4, F.TYPE_DOUBLE),
    ):
        _field(value, name, number, kind)
    _field(value, "pointvalue", 5, F.TYPE_GROUP, type_name=".eb.PropertyValue.PointValue")
    prop = fd.message_type.add(name="Property")
    _field(prop, "meaning", 1, F.TYPE_INT32)
    _field(prop, "meaning_uri", 2, F.TYPE_STRING)
    _field(prop, "name", 3, F.TYPE_STRING)
    _field(prop, "multiple", 4, F.TYPE_BOOL)
    _field(prop, "value", 5, F.TYPE_MESSAGE, type_name=".eb.PropertyValue")
    entity = fd.message_type.add(name="EntityProto")
    _field(entity, "key", 13, F.TYPE_MESSAGE, type_name=".eb.Reference")
    _field(entity, "property", 14, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".eb.Property")
    _field(entity, "raw_property", 15, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".eb.Property")
    _field(entity, "entity_group", 16, F.TYPE_MESSAGE, type_name=".eb.Path")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("eb.EntityProto"))


def upb_values(cls: Any, record: bytes) -> tuple[tuple[str, tuple[Any, ...]], dict[str, Any]]:
    """The record parsed by upb, and the same values as bench.cases.datastore.ndb_values."""
    e = cls.FromString(record)
    path = tuple((el.type, el.name if el.HasField("name") else el.id) for el in e.key.path.element)
    props: dict[str, Any] = {}
    for p in e.raw_property:
        v = p.value
        if v.HasField("stringValue"):
            x: Any = v.stringValue.decode()
        elif v.HasField("int64Value"):
            x = v.int64Value
            if p.meaning == 7:
                x = EPOCH + datetime.timedelta(microseconds=x)
        elif v.HasField("booleanValue"):
            x = v.booleanValue
        elif v.HasField("doubleValue"):
            x = v.doubleValue
        else:
            x = None
        props[p.name] = x
    return (e.key.app, path), props


def records_of(path: str) -> Any:
    return leveldb_log.Reader(path)


def drain(values: Any) -> None:
    """Every value made, and let go (as a loop over an export does)."""
    for _ in values:
        pass


def best(fn: Any, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    cls = _schema()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "output-0")
        with leveldb_log.Writer(path) as w:
            w.write_many([ds.encode_entity(e) for e in entities(n)])
        records = list(leveldb_log.Reader(path))
        assert [upb_values(cls, r) for r in records[:50]] == [ndb_values(r) for r in records[:50]]
        del records
        rows = {
            "read_export (C)": best(lambda: drain(ds.read_export(path))),
            "read_export().to_arrow() (C)": best(lambda: ds.read_export(path).to_arrow()),
            "upb + values": best(lambda: drain(upb_values(cls, r) for r in records_of(path))),
            "ndb codec + values": best(lambda: drain(ndb_values(r) for r in records_of(path)), 1),
        }
    print(f"CPU: {cpu()[0]}; {n} entities of 5 properties; CPU seconds, best of 3 (ndb: 1)")
    base = rows["ndb codec + values"]
    for name, secs in rows.items():
        print(f"  {name:<30}{secs:8.3f} s  {base / secs:6.1f}x ndb")


if __name__ == "__main__":
    main()
