"""format("leveldb_log") with decode=true: a WAL as one row per operation, checked against
real engines (RocksDB 9 through rocksdict, LevelDB through plyvel) and a Pebble WAL."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import pebble
from support import rocksdb_interop as interop

pytestmark = pytest.mark.slow

COLUMNS = ["path", "offset", "sequence", "op", "cf", "key", "value"]


def decoded(spark: Any, path: Path | str, **options: str) -> list[tuple[Any, ...]]:
    df = spark.read.format("leveldb_log").option("decode", "true").options(**options)
    frame = df.load(str(path))
    assert frame.columns == COLUMNS
    return [tuple(r) for r in frame.collect()]


def replay(rows: list[tuple[Any, ...]], cf: int) -> dict[bytes, bytes]:
    """A column family's contents after the decoded operations, as the engine applies them."""
    out: dict[bytes, bytes] = {}
    for _, _, _, op, family, key, value in rows:
        if (family or 0) != cf:
            continue
        if op in ("Put", "Set"):
            out[key] = value
        elif op in ("Delete", "SingleDelete"):
            out.pop(key, None)
        elif op == "DeleteRange":
            for k in [k for k in out if key <= k < value]:
                del out[k]
    return out


def rocksdb_rows(written: list[interop.Batch]) -> list[tuple[Any, ...]]:
    """(sequence, op, cf, key, value) of the written operations, numbered from 1."""
    names = {"put": "Put", "delete": "Delete", "delete_range": "DeleteRange"}
    flat = [op for batch in written for op in batch]
    return [
        (seq, names[kind], cf, fields[0], fields[1] if len(fields) > 1 else None)
        for seq, (kind, cf, *fields) in enumerate(flat, start=1)
    ]


def test_a_rocksdb_wal_written_by_rocksdb_is_what_the_engine_holds(
    spark: Any, tmp_path: Path
) -> None:
    rd = pytest.importorskip("rocksdict", reason="rocksdict has no wheel for this platform")
    options = rd.Options(raw_mode=True)
    options.create_if_missing(True)
    options.set_write_buffer_size(256 << 20)  # no flush: every write stays in the WAL
    db = rd.Rdict(str(tmp_path / "db"), options)
    cfs = [db] + [db.create_column_family(n, rd.Options(raw_mode=True)) for n in ("one", "two")]
    written = list(interop.workload(seed=3, n=300, cfs=3))
    for batch in written:
        wb = rd.WriteBatch(raw_mode=True)
        for kind, cf, *args in batch:
            getattr(wb, kind)(*args, db.get_column_family_handle(interop.CF_NAMES[cf]))
        db.write(wb)
    shutil.copytree(tmp_path / "db", tmp_path / "copy")  # the open database, as it is
    held = [dict(cf.items()) for cf in cfs]
    db.close()
    (log,) = interop.wal_files(tmp_path / "copy")
    rows = decoded(spark, log, maxPartitionBytes=str(1 << 16))
    assert [r[2:] for r in rows] == rocksdb_rows(written)
    assert {r[0] for r in rows} == {str(log)}
    for cf in range(3):
        assert replay(rows, cf) == held[cf]


def test_a_leveldb_wal_written_by_leveldb_is_what_the_engine_holds(
    spark: Any, tmp_path: Path
) -> None:
    plyvel = pytest.importorskip("plyvel", reason="plyvel has no wheel for this platform")
    db = plyvel.DB(str(tmp_path / "db"), create_if_missing=True, write_buffer_size=256 << 20)
    for i in range(200):
        db.put(b"k%03d" % (i % 50), b"v%d" % i * (i % 9))
        if i % 7 == 0:
            db.delete(b"k%03d" % (i % 13))
    with db.write_batch() as wb:
        wb.put(b"batch-a", b"1")
        wb.delete(b"k001")
    shutil.copytree(tmp_path / "db", tmp_path / "copy")
    held = dict(db.iterator())
    db.close()
    (log,) = sorted((tmp_path / "copy").glob("*.log"))
    rows = decoded(spark, tmp_path / "copy", pathGlobFilter="*.log")
    assert [r[2] for r in rows] == list(range(1, len(rows) + 1))
    # Told from its framing alone a LevelDB WAL could be RocksDB's: its batches are read
    # as RocksDB's (a subset), in column family 0; dialect=leveldb says there is none.
    assert {r[3] for r in rows} == {"Put", "Delete"} and {r[4] for r in rows} == {0}
    assert replay(rows, 0) == held
    leveldb = decoded(spark, log, dialect="leveldb")
    assert leveldb == [(*r[:4], None, *r[5:]) for r in rows]
    offsets = [r[1] for r in rows]
    assert offsets == sorted(offsets) and rows[-1][5:] == (b"k001", None)
    with leveldb_log.Reader(log) as reader:
        assert len(list(reader)) == len(set(offsets))


def test_a_pebble_wal_decodes_with_its_kinds(spark: Any, tmp_path: Path) -> None:
    log = tmp_path / "000004.log"
    batches = [
        pebble.WriteBatch(10, (pebble.Set(b"a", b"1"), pebble.Delete(b"b"))),
        pebble.WriteBatch(12, (pebble.LogData(b"note"), pebble.RangeDelete(b"c", b"f"))),
        pebble.WriteBatch(13, (pebble.Merge(b"a", b"2"),)),
    ]
    with leveldb_log.Writer(log, "w", dialect="pebble") as w:
        for batch in batches:
            w.write(pebble.encode_write_batch(batch.sequence, batch.ops))
    rows = decoded(spark, log)
    with leveldb_log.Reader(log, dialect="pebble") as reader:
        offsets = [reader.last_record_offset for _ in reader]
    assert [r[1:] for r in rows] == [
        (offsets[0], 10, "Set", None, b"a", b"1"),
        (offsets[0], 11, "Delete", None, b"b", None),
        (offsets[1], None, "LogData", None, None, b"note"),
        (offsets[1], 12, "RangeDelete", None, b"c", b"f"),
        (offsets[2], 13, "Merge", None, b"a", b"2"),
    ]


def test_records_that_are_no_write_batch(spark: Any) -> None:
    # The golden Pebble logs hold records that are not batches (the chunk format's tests)
    golden = Path(__file__).parents[1] / "golden" / "pebble" / "clean_recyclable.log"
    assert decoded(spark, golden) == []  # left out, and logged, by default
    with pytest.raises(Exception, match=r"clean_recyclable\.log: the record at offset 0 is no"):
        decoded(spark, golden, mode="FAILFAST")


def test_decode_batch_takes_the_readers_own_batches_and_reports_malformed_records(
    tmp_path: Path,
) -> None:
    import pyarrow as pa
    from leveldb_log._wal_rows import ROW_SCHEMA, decode_batch
    from leveldb_log.leveldb import Put, encode_write_batch

    log = tmp_path / "000001.log"
    with leveldb_log.Writer(log, "w") as w:
        w.write(encode_write_batch(5, [Put(b"k", b"v")]))
        w.write(b"not a batch")
    with leveldb_log.Reader(log) as reader:
        (batch,) = [pa.record_batch(b) for b in reader.iter_batches()]
    assert batch.schema.field("offset").type == pa.uint64()  # the Reader's own types
    seen: list[tuple[int, str]] = []
    rows = decode_batch(batch, "leveldb", "x.log", lambda o, e: seen.append((o, e.reason)))
    assert rows.schema == ROW_SCHEMA
    assert rows.to_pylist() == [
        {
            "path": "x.log",
            "offset": 0,
            "sequence": 5,
            "op": "Put",
            "cf": None,
            "key": b"k",
            "value": b"v",
        }
    ]
    reason = "11 bytes is shorter than the 12-byte header (sequence, count)"
    assert seen == [(batch["offset"][1].as_py(), reason)]
    with pytest.raises(leveldb_log.CorruptionError, match=r"x\.log: the record at offset"):
        decode_batch(batch, "leveldb", "x.log")
    with pytest.raises(ValueError, match="dialect must be one of leveldb, rocksdb, pebble"):
        decode_batch(batch, "sqlite", "x.log")
