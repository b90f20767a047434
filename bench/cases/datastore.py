"""Firestore/Datastore exports: read_export of small entities (5 properties: a name, an int,
a float, a bool and a timestamp; about 120 B a record) from an output file, as Entity
objects and as an Arrow table. Baseline: google-cloud-ndb's pure-Python legacy codec
(``google.cloud.ndb._legacy_entity_pb``, the `test` extra) over the same records of the same
file, plus building the same Python values (key path, properties by meaning). Left out
without google-cloud-ndb; the Arrow contender without pyarrow."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import leveldb_log
from leveldb_log import datastore as ds

from bench.data import Data
from bench.harness import Case, Config, Contender

try:
    from google.cloud.ndb import _legacy_entity_pb
except ImportError:  # pragma: no cover - google-cloud-ndb is in the test extra
    _legacy_entity_pb = None
try:
    import pyarrow
except ImportError:  # pragma: no cover - pyarrow is in the test extra
    pyarrow = None

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
MOST = 100_000  # entities in the largest file (the target's count)
SIZE = 120  # about the bytes of one record, for the tables' MB/s


def entities(n: int) -> list[ds.Entity]:
    """n small entities of 5 properties each."""
    start = datetime.datetime(2024, 1, 1, tzinfo=UTC)
    return [
        ds.Entity(
            {
                "name": f"user{i}",
                "age": i % 90,
                "score": i * 0.5,
                "active": i % 2 == 0,
                "created": start + datetime.timedelta(seconds=i),
            },
            key=ds.Key([("users", f"u{i}")], app="dev~bench"),
        )
        for i in range(n)
    ]


def ndb_values(record: bytes) -> tuple[tuple[str, tuple[Any, ...]], dict[str, Any]]:
    """The baseline: ndb's codec parses the record; the key and the values are built from
    it as the C decoder builds them (timestamps by GD_WHEN, text as str)."""
    e = _legacy_entity_pb.EntityProto()
    e.MergePartialFromString(record)
    key = e.key()
    path = tuple(
        (el.type, el.name.decode() if el.has_name() else el.id) for el in key.path.element_list()
    )
    props: dict[str, Any] = {}
    for p in e.property_list():
        v, meaning = p.value(), p.meaning()
        if v.has_stringvalue():
            x: Any = v.stringvalue().decode()
        elif v.has_int64value():
            x = v.int64value()
            if meaning == 7:
                x = EPOCH + datetime.timedelta(microseconds=x)
        elif v.has_booleanvalue():
            x = bool(v.booleanvalue())
        elif v.has_doublevalue():
            x = v.doublevalue()
        else:
            x = None
        props[p.name().decode()] = x
    return (key.app.decode(), path), props


def read_ndb(path: str) -> None:
    """for record in Reader(path): ndb's codec and the values."""
    for record in leveldb_log.Reader(path):
        ndb_values(record)


def read_ours(path: str) -> None:
    """for entity in read_export(path)."""
    for _entity in ds.read_export(path):
        pass


def read_arrow(path: str) -> None:
    """read_export(path).to_arrow()."""
    ds.read_export(path).to_arrow()


def datastore_case(data: Data, cfg: Config) -> Case | None:
    """read_export of small entities, as entities and as Arrow, against ndb's codec."""
    if _legacy_entity_pb is None:
        return None
    most = max(1000, min(MOST, cfg.max_bytes // SIZE))
    files: dict[int, str] = {}

    def src(n: int) -> str:
        if n not in files:
            path = Path(data.tmp) / f"datastore-{n}" / "output-0"
            path.parent.mkdir(exist_ok=True)
            with leveldb_log.Writer(str(path)) as w:
                w.write_many([ds.encode_entity(e) for e in entities(n)])
            files[n] = str(path)
        return files[n]

    few = src(50)  # the contenders do the same work
    ours = [((e.key.app, e.key.path), dict(e)) for e in ds.read_export(few)]
    assert ours == [ndb_values(r) for r in leveldb_log.Reader(few)]
    cs = [
        Contender("for e in read_export(file)", "ours", src, read_ours, most, most),
        Contender("ndb codec + values", "ndb", src, read_ndb, most, 1000),
    ]
    if pyarrow is not None:
        table = ds.read_export(few).to_arrow()
        assert table.column("age").to_pylist() == [v["age"] for _, v in ours]
        cs.insert(
            1, Contender("read_export(file).to_arrow()", "ours_arrow", src, read_arrow, most, most)
        )
    return Case(
        "read/entities/datastore",
        "read",
        SIZE,
        "datastore export",
        cs,
        ["ours", "ours_arrow"],
        ["ndb"],
    )
