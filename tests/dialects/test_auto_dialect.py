"""Reader(dialect="auto"): the C reader tells the dialect from block 0 and then reads exactly
as a Reader made with the dialect detection names (the log number given, or the file
name's), whatever the source (buffer, path, seekable or streamed file object), the range, the
recovery mode and the damage; growing logs, pickling and the options' checks."""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import _core
from support import dialect_cases, model_dialects
from support.reading import MODES, Outcome, assert_same, c_read

B = leveldb_log.BLOCK_SIZE
RECORDS = [b"", b"x" * 10, b"y" * 40000, b"z" * 100, b"w" * 70000, b"v" * 5]
NAME_NUMBER = 7  # the paths below are named 000007.log


def written(**kw: Any) -> bytes:
    buf = io.BytesIO()
    with leveldb_log.Writer(buf, **kw) as w:
        w.write_many(RECORDS)
    return buf.getvalue()


def flipped(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0x10
    return bytes(out)


def _rocksdb_with_metadata(recycle: bool) -> bytes:
    """A RocksDB WAL that opens with a predecessor record and a timestamp-size record."""
    chunk = model_dialects.encode_chunk
    number = NAME_NUMBER if recycle else None
    head = chunk(131 if recycle else 130, model_dialects.predecessor_payload(6, 900, 41), number)
    head += chunk(11 if recycle else 10, model_dialects.udt_payload([(1, 8)]), number)
    body, _ = model_dialects.encode_rocksdb(
        RECORDS, log_number=NAME_NUMBER, recycle=recycle, start=len(head)
    )
    return head + body


def _logs() -> dict[str, bytes]:
    leveldb = written()
    recyclable = written(dialect="rocksdb", recycle=True, log_number=NAME_NUMBER)
    pebble = written(dialect="pebble", log_number=NAME_NUMBER)
    walsync, _ = model_dialects.encode_pebble(
        RECORDS, log_number=NAME_NUMBER, synced_offsets=[0] * len(RECORDS), trailer=True
    )
    logs = {
        "leveldb": leveldb,
        "rocksdb-legacy": written(dialect="rocksdb"),
        "rocksdb-recyclable": recyclable,
        "rocksdb-metadata": _rocksdb_with_metadata(recycle=False),
        "rocksdb-recyclable-metadata": _rocksdb_with_metadata(recycle=True),
        "pebble": pebble,
        "pebble-walsync-trailer": walsync,
        "empty": b"",
        "zeros": bytes(100),
        "torn-first-record": recyclable[:9],
        "leveldb-first-record-damaged": flipped(leveldb, 8),
        "recyclable-first-record-damaged": flipped(recyclable, 12),
        "recyclable-damaged-mid-block": flipped(recyclable, 40),
        "recyclable-damaged-in-block-2": flipped(recyclable, 2 * B + 30),
        "pebble-cut-short": pebble[: B + 5000],
        "recyclable-short-damaged": flipped(recyclable[:200], 12),
    }
    for name in sorted(p.name for p in dialect_cases.GOLDEN_DIR.glob("*.log")):
        logs[f"golden-{name}"] = (dialect_cases.GOLDEN_DIR / name).read_bytes()
    return logs


LOGS = _logs()
RANGES = [(0, None), (10, 2 * B + 5), (B + 100, None), (2 * B, 3 * B), (3 * B, 3 * B)]


class Stream(io.RawIOBase):
    """A file object that cannot seek: a pipe, as a Reader sees one."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        return self._data.readinto(b)


def told(data: bytes, log_number: int | None) -> str:
    """What detection names for this block 0 (LevelDB's when it tells nothing)."""
    dialect, _ = _core._detect_dialect(data[:B], log_number)
    return "leveldb" if dialect is None else dialect


def attrs(r: leveldb_log.Reader) -> tuple:
    return (
        r.dialect,
        r.log_number,
        r.recycled,
        r.compression,
        r.timestamp_sizes,
        r.predecessor,
        r.position,
    )


def read(source: Any, **kw: Any) -> Outcome:
    return c_read(source, attrs_of=attrs, **kw)


def assert_same_read(auto: Outcome, named: Outcome, context: Any) -> None:
    assert_same(auto, named, context)
    assert auto.attrs == named.attrs, context


def sources(kind: str, data: bytes, tmp_path: Path) -> Any:
    if kind == "bytes":
        return data
    if kind == "path":
        path = tmp_path / f"{NAME_NUMBER:06d}.log"
        path.write_bytes(data)
        return path
    if kind == "file":
        return io.BytesIO(data)
    return Stream(data)


@pytest.mark.parametrize("name", sorted(LOGS))
@pytest.mark.parametrize("kind", ["bytes", "path", "file", "stream"])
def test_auto_reads_as_the_dialect_block_zero_tells(name: str, kind: str, tmp_path: Path) -> None:
    data = LOGS[name]
    named_number = NAME_NUMBER if kind == "path" else None
    for log_number in (None, NAME_NUMBER, NAME_NUMBER + 2):
        dialect = told(data, log_number if log_number is not None else named_number)
        named_kw = {"log_number": log_number} if dialect != "leveldb" else {}
        for mode in MODES:
            for start, end in RANGES:
                kw = {"recovery": mode, "start": start, "end": end}
                context = (name, kind, log_number, mode, start, end, dialect)
                auto = read(
                    sources(kind, data, tmp_path), dialect="auto", log_number=log_number, **kw
                )
                named = read(sources(kind, data, tmp_path), dialect=dialect, **named_kw, **kw)
                assert_same_read(auto, named, context)


@pytest.mark.parametrize("name", ["rocksdb-recyclable", "pebble", "leveldb-first-record-damaged"])
def test_auto_without_checksums_and_as_arrow_batches(name: str) -> None:
    data = LOGS[name]
    dialect = told(data, None)
    for verify in (True, False):
        auto = read(data, dialect="auto", verify_checksums=verify)
        named = read(data, dialect=dialect, verify_checksums=verify)
        assert_same_read(auto, named, (name, verify))
    pa = pytest.importorskip("pyarrow")
    table = pa.table(leveldb_log.Reader(data, dialect="auto", on_corruption=lambda c: None))
    named = read(data, dialect=dialect)
    assert table.column("data").to_pylist() == named.records
    assert table.column("offset").to_pylist() == named.offsets


def test_the_dialect_is_known_once_the_reader_is_made(tmp_path: Path) -> None:
    path = tmp_path / "000007.log"
    path.write_bytes(LOGS["rocksdb-recyclable"])
    with leveldb_log.Reader(path, dialect="auto") as r:
        assert r.dialect == "rocksdb" and r.log_number == NAME_NUMBER
    walsync = LOGS["pebble-walsync-trailer"]
    with leveldb_log.Reader(Stream(walsync), dialect="auto", start=5 * B) as r:
        assert r.dialect == "pebble" and list(r) == []
    with leveldb_log.Reader(LOGS["pebble"], dialect="auto") as r:  # recyclable chunks only
        assert r.dialect == "rocksdb" and list(r) == RECORDS
    with leveldb_log.Reader(LOGS["leveldb"], dialect="auto", log_number=3) as r:
        assert r.dialect == "leveldb" and r.log_number is None  # LevelDB's carry none
        assert list(r) == RECORDS
    r = leveldb_log.Reader(walsync, dialect="auto")
    r.close()
    assert r.dialect == "pebble"  # a closed reader still says


def test_a_log_empty_at_first_is_told_once_it_has_a_record(tmp_path: Path) -> None:
    path = tmp_path / "000007.log"
    data = LOGS["rocksdb-recyclable"]
    for partial in (b"", data[:5]):  # empty, then a first header still being written
        path.write_bytes(partial)
        with leveldb_log.Reader(path, dialect="auto") as r:
            assert list(r) == [] and r.dialect == "leveldb"
            path.write_bytes(data)
            assert list(r) == RECORDS
            assert r.dialect == "rocksdb" and r.recycled and r.log_number == NAME_NUMBER


def test_a_range_past_block_zero_waits_for_block_zero_to_tell(tmp_path: Path) -> None:
    path = tmp_path / "000007.log"
    data = LOGS["pebble-walsync-trailer"]
    path.write_bytes(b"")
    splits = leveldb_log.splits(data, n=3)
    readers = [leveldb_log.Reader(path, dialect="auto", start=s, end=e) for s, e in splits]
    assert [list(r) for r in readers] == [[], [], []]
    path.write_bytes(data)
    got = [rec for r in readers for rec in r]
    assert got == RECORDS and {r.dialect for r in readers} == {"pebble"}
    for r in readers:
        r.close()


def test_a_told_dialect_never_changes(tmp_path: Path) -> None:
    """Block 0 that holds an intact LevelDB record tells for good, even if recyclable
    records follow (they are then damage, as a LevelDB reader says)."""
    path = tmp_path / "000007.log"
    leveldb = written()[:24]  # "" and b"x" * 10: whole records
    path.write_bytes(leveldb)
    with leveldb_log.Reader(path, dialect="auto", on_corruption=lambda c: None) as r:
        assert list(r) == RECORDS[:2] and r.dialect == "leveldb"
        path.write_bytes(leveldb + LOGS["rocksdb-recyclable"])
        with pytest.warns(leveldb_log.CorruptionWarning, match="not a log"):
            list(r)  # as any LevelDB reader: damage, and a tail no LevelDB writer leaves
        assert r.dialect == "leveldb"


def test_pickling_keeps_the_told_dialect_or_tells_it_again(tmp_path: Path) -> None:
    path = tmp_path / "000007.log"
    path.write_bytes(LOGS["pebble-walsync-trailer"])
    r = leveldb_log.Reader(path, dialect="auto")
    first = next(r)
    copy = pickle.loads(pickle.dumps(r))
    assert copy.dialect == "pebble" and [first, *copy] == RECORDS
    assert pickle.loads(pickle.dumps(r)).__reduce__()[1][1]["dialect"] == "pebble"
    r.close()
    copy.close()
    path.write_bytes(b"")
    with leveldb_log.Reader(path, dialect="auto") as empty:
        options = empty.__reduce__()[1][1]
        assert options["dialect"] == "auto"  # not told yet: the copy tells it
        path.write_bytes(LOGS["pebble-walsync-trailer"])
        with pickle.loads(pickle.dumps(empty)) as copy:
            assert list(copy) == RECORDS and copy.dialect == "pebble"


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"dialect": "Auto"}, ValueError, "'leveldb', 'rocksdb', 'pebble' or 'auto', not 'Auto'"),
        ({"dialect": "automatic"}, ValueError, "or 'auto', not 'automatic'"),
        ({"dialect": "auto", "log_number": -1}, ValueError, "log_number"),
        ({"dialect": "auto", "start": 5, "end": 2}, ValueError, "end"),
        ({"dialect": b"auto"}, TypeError, "dialect must be a str"),
    ],
)
def test_invalid_auto_options_raise_clear_errors(kw: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        leveldb_log.Reader(b"", **kw)


def test_auto_is_for_readers_only(tmp_path: Path) -> None:
    target = tmp_path / "out.log"
    with pytest.raises(ValueError, match="'leveldb', 'rocksdb' or 'pebble', not 'auto'"):
        leveldb_log.Writer(target, dialect="auto")  # type: ignore[arg-type]
    assert not target.exists()
    with pytest.raises(ValueError, match="not 'auto'"):
        leveldb_log.stats(b"", dialect="auto")  # type: ignore[arg-type]


def test_a_read_error_of_block_zero_raises_from_the_constructor() -> None:
    class Failing(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            raise OSError(5, "boom")

    for end in (None, 0):  # block 0 is read whatever the range, an empty one too
        with pytest.raises(OSError, match="boom"):
            leveldb_log.Reader(Failing(), dialect="auto", end=end)


def test_a_compressed_wal_is_told_as_rocksdb() -> None:
    if not _zstd_available():
        pytest.skip("no zstd binding (the extra leveldb-log[rocksdb])")
    data = written(dialect="rocksdb", recycle=True, log_number=9, compression="zstd")
    with leveldb_log.Reader(data, dialect="auto") as r:
        assert r.dialect == "rocksdb" and list(r) == RECORDS and r.compression == "zstd"


def _zstd_available() -> bool:
    try:
        leveldb_log._zstd.require()
    except ImportError:
        return False
    return True


def test_detection_uses_the_name_s_log_number(tmp_path: Path) -> None:
    """A recyclable chunk of the number after the file name's is Pebble's trailer: told by
    the number the reader holds records to (the name's), which detection alone lacks."""
    chunk = model_dialects.encode_chunk(5, b"", NAME_NUMBER + 1)
    assert leveldb_log.detect_dialect(chunk) == "rocksdb"  # no number: just recyclable
    path = tmp_path / f"{NAME_NUMBER:06d}.log"
    path.write_bytes(chunk)
    with leveldb_log.Reader(path, dialect="auto") as r:
        assert r.dialect == "pebble" and list(r) == [] and r.log_number == NAME_NUMBER
    with leveldb_log.Reader(chunk, dialect="auto") as r:  # a buffer has no name
        assert r.dialect == "rocksdb"
    with leveldb_log.Reader(chunk, dialect="auto", log_number=NAME_NUMBER) as r:
        assert r.dialect == "pebble"
