"""read_logs(..., decode=True) on a real local Ray: a WAL written by RocksDB 9 (rocksdict)
as one row per operation, which replayed gives what the database holds; and records that
are no write batch."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import BLOCK_SIZE, CorruptionError, CorruptionWarning

pytestmark = pytest.mark.slow

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'leveldb-log[ray]')")
pa = pytest.importorskip("pyarrow")

from leveldb_log.ray import read_logs  # noqa: E402

FAMILIES = ["default", "one"]


def rocksdb_database(path: Path) -> tuple[Path, list[dict[bytes, bytes]]]:
    """A RocksDB database with two column families and every kind of write the decoder
    names (puts, deletes, a range delete, multi-operation batches, values over a block);
    a copy of it taken while open (so its WAL is all there); and what each family holds."""
    rd = pytest.importorskip("rocksdict", reason="rocksdict (RocksDB 9.x) has no wheel here")

    def options() -> Any:
        o = rd.Options(raw_mode=True)
        o.create_if_missing(True)
        o.set_write_buffer_size(256 << 20)  # no flush: the WAL keeps everything
        o.set_disable_auto_compactions(True)
        return o

    db = rd.Rdict(str(path), options())
    one = db.create_column_family("one", options())
    for i in range(300):
        db.put(b"k%04d" % i, b"v%d" % i * (i % 7 + 1))
        if i % 3 == 0:
            one.put(b"o%04d" % i, b"w" * (i * 301 % 70000))
    for i in range(0, 300, 5):
        db.delete(b"k%04d" % i)
    db.delete_range(b"k0100", b"k0150")
    batch = rd.WriteBatch(raw_mode=True)
    batch.put(b"batched", b"1", db.get_column_family_handle("default"))
    batch.delete(b"o0003", db.get_column_family_handle("one"))
    batch.put(b"o-new", b"2", db.get_column_family_handle("one"))
    db.write(batch)
    copy = path.with_name(path.name + "-copy")
    shutil.copytree(path, copy)
    contents = [dict(db.items()), dict(one.items())]
    one.close()
    db.close()
    return copy, contents


def replay(rows: list[dict[str, Any]]) -> list[dict[bytes, bytes]]:
    """Apply the decoded operations in sequence order to empty column families."""
    state: list[dict[bytes, bytes]] = [{} for _ in FAMILIES]
    for row in sorted(rows, key=lambda r: r["sequence"]):
        family = state[row["cf"]]
        if row["op"] == "Put":
            family[row["key"]] = row["value"]
        elif row["op"] == "Delete":
            family.pop(row["key"], None)
        elif row["op"] == "DeleteRange":
            for key in [k for k in family if row["key"] <= k < row["value"]]:
                del family[key]
        else:
            raise AssertionError(f"an operation this workload never made: {row}")
    return state


def test_a_rocksdb_wal_decodes_to_what_the_database_holds(ray_local: Any, tmp_path: Path) -> None:
    copy, contents = rocksdb_database(tmp_path / "db")
    (wal,) = sorted(copy.glob("*.log"))
    # framed as LevelDB's (no recycling), detected so, and decoded as RocksDB's batches
    ds = read_logs(str(wal), decode=True, blocksize=BLOCK_SIZE)
    assert ds.schema().base_schema.names == [
        "path",
        "offset",
        "sequence",
        "op",
        "cf",
        "key",
        "value",
    ]
    rows = ds.take_all()
    assert sorted(r["sequence"] for r in rows) == list(range(1, len(rows) + 1))
    assert {r["path"] for r in rows} == {str(wal)}
    assert replay(rows) == contents
    # the rows are the engine-neutral decoding of the Reader's records, in log order
    from leveldb_log._wal_rows import decode_batch

    with leveldb_log.Reader(wal, dialect="rocksdb") as reader:
        whole = [
            decode_batch(pa.record_batch(b), "rocksdb", str(wal)) for b in reader.iter_batches()
        ]
    assert sorted(rows, key=lambda r: r["sequence"]) == pa.Table.from_batches(whole).to_pylist()
    named = read_logs(str(wal), decode=True, dialect="rocksdb").take_all()
    assert sorted(named, key=lambda r: r["sequence"]) == sorted(rows, key=lambda r: r["sequence"])


def test_a_record_that_is_no_write_batch(ray_local: Any, tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    good = leveldb_log.leveldb.encode_write_batch(7, [leveldb_log.leveldb.Put(b"k", b"v")])
    with leveldb_log.Writer(log) as w:
        w.write_many([good, b"not a batch", good])
    rows = read_logs(str(log), decode=True, dialect="leveldb").take_all()
    assert [(r["offset"], r["sequence"], r["key"], r["cf"]) for r in rows] == [
        (0, 7, b"k", None),
        (0 + 7 + len(good) + 7 + len(b"not a batch"), 7, b"k", None),
    ]
    auto = read_logs(str(log), decode=True).take_all()  # LevelDB's batches as RocksDB's
    assert [(r["offset"], r["key"], r["cf"]) for r in auto] == [
        (r["offset"], r["key"], 0) for r in rows
    ]
    with pytest.raises(CorruptionError) as raised:
        read_logs(str(log), decode=True, recovery="absolute").materialize()
    last = str(raised.value).splitlines()[-1]  # the file named once, then the record
    assert f": {log}: the record at offset {7 + len(good)} is no write batch: " in last
    assert last.count(str(log)) == 1


def test_a_read_task_warns_of_a_record_that_is_no_write_batch(tmp_path: Path) -> None:
    from leveldb_log._files._listing import ListOptions
    from leveldb_log._files._read import ReadSpec
    from leveldb_log._ray_io import LogDatasource

    log = tmp_path / "w.log"
    with leveldb_log.Writer(log) as w:
        for _ in range(3000):
            w.write(b"not a batch")
    spec = ReadSpec("leveldb", rows="decode")
    (task,) = LogDatasource([str(log)], spec, ListOptions("ray"), None).get_read_tasks(1)
    with pytest.warns(CorruptionWarning) as caught:
        tables = list(task())
    assert sum(t.num_rows for t in tables) == 0
    (one,) = caught  # one summary for the file, never one per record
    assert "3000 record(s) are no write batch, left out (the first: offset 0:" in str(one.message)


def test_a_pebble_wal_decodes_in_its_own_dialect(ray_local: Any, tmp_path: Path) -> None:
    from leveldb_log import pebble

    log = tmp_path / "000012.log"
    with leveldb_log.Writer(log, dialect="pebble") as w:
        w.write(pebble.encode_write_batch(10, [pebble.Set(b"a", b"1"), pebble.LogData(b"note")]))
        w.write(pebble.encode_write_batch(11, [pebble.RangeDelete(b"a", b"c")]))
    rows = read_logs(str(log), decode=True).take_all()  # detected by its end-of-log trailer
    assert [(r["sequence"], r["op"], r["cf"], r["key"], r["value"]) for r in rows] == [
        (10, "Set", None, b"a", b"1"),
        (None, "LogData", None, None, b"note"),
        (11, "RangeDelete", None, b"a", b"c"),
    ]
