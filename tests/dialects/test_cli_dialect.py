"""``--dialect`` on the reading subcommands, ``dump --decode`` / ``--kind`` / ``--leveldb``,
and the first-block detection behind ``--dialect auto`` (leveldb_log._detect), on logs built
byte by byte from docs/rocksdb.md."""

from __future__ import annotations

import inspect
import io
import json
import pathlib
import struct

import leveldb_log
import pytest
from leveldb_log import pebble, rocksdb, stats
from leveldb_log._detect import detect_dialect
from leveldb_log.cli import _payloads
from leveldb_log.cli.dump import escape, json_bytes
from support.cli import run_cli_asserting_no_traceback

run = run_cli_asserting_no_traceback
B = leveldb_log.BLOCK_SIZE


def _reader_has_dialects() -> bool:
    try:
        leveldb_log.Reader(b"", dialect="rocksdb")  # type: ignore[call-arg]
    except TypeError:
        return False
    return True


# Tests that need the core's dialects (Reader(dialect=...)); they run once it has them.
needs_dialects = pytest.mark.skipif(
    not _reader_has_dialects(), reason="Reader(dialect=...) not in this build's core yet"
)


def chunk(
    kind: int, payload: bytes, log_number: int | None = None, synced: int | None = None
) -> bytes:
    """A physical record: 7-byte header, + log number (11), + synced offset (19)."""
    extra = b"" if log_number is None else struct.pack("<I", log_number)
    extra += b"" if synced is None else struct.pack("<Q", synced)
    body = bytes([kind]) + extra + payload
    crc = leveldb_log.mask_crc(leveldb_log.crc32c(body))
    return struct.pack("<IH", crc, len(payload)) + body


def trailer(log_number: int) -> bytes:
    """Pebble's EOF trailer: recyclable FULL header, CRC 0, length 0."""
    return struct.pack("<IHBI", 0, 0, 5, log_number)


def leveldb_log_bytes(records: list[bytes]) -> bytes:
    buf = io.BytesIO()
    with leveldb_log.Writer(buf) as w:
        w.write_many(records)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# detect_dialect
# ---------------------------------------------------------------------------

COMPRESSION = chunk(9, struct.pack("<I", 7))
UDT = chunk(10, struct.pack("<IH", 1, 8))
PREDECESSOR = chunk(130, struct.pack("<QQQ", 6, 1000, 42))


@pytest.mark.parametrize(
    ("first_block", "dialect"),
    [
        (b"", "leveldb"),
        (leveldb_log_bytes([b"a", b"b" * 100]), "leveldb"),
        (COMPRESSION + chunk(1, b"zstd frame"), "rocksdb"),
        (COMPRESSION + chunk(5, b"zstd frame", 12), "rocksdb"),
        (chunk(1, b"batch") + UDT + chunk(1, b"batch"), "rocksdb"),
        (chunk(11, struct.pack("<IH", 1, 8), 4) + chunk(5, b"x", 4), "rocksdb"),
        (PREDECESSOR + chunk(1, b"batch"), "rocksdb"),
        (chunk(131, struct.pack("<QQQ", 6, 1000, 42), 7) + chunk(5, b"x", 7), "rocksdb"),
        (chunk(5, b"recycled", 7) + chunk(6, b"first", 7), "rocksdb"),
        (chunk(5, b"batch", 7) + trailer(8), "pebble"),
        (trailer(1), "pebble"),
        (chunk(5, b"batch", 7) + trailer(9), "rocksdb"),  # not log number + 1: no trailer
        (chunk(9, b"batch", 7, 0) + chunk(10, b"first", 7, 30), "pebble"),
        (chunk(12, b"last", 3, 0), "pebble"),
        (chunk(9, b"\x07\x00\x00\x00\x00"), "leveldb"),  # type 9 with 5 bytes: not RocksDB's
        (chunk(1, b"x") + COMPRESSION, "leveldb"),  # type 9 after offset 0: not RocksDB's
        (chunk(9, b"batch", 7, 0) + UDT, "leveldb"),  # signs of both: ambiguous
        (chunk(5, b"x", 7)[:-1] + b"y", "leveldb"),  # the first chunk's CRC fails
        (chunk(1, b"x" * (B - 7)) + UDT, "leveldb"),  # the UDT record is in block 2
    ],
)
def test_detect_dialect(first_block: bytes, dialect: str) -> None:
    assert detect_dialect(first_block) == dialect


def test_detect_dialect_takes_any_bytes_like() -> None:
    data = COMPRESSION + chunk(1, b"x")
    for wrap in (bytes, bytearray, memoryview):
        assert detect_dialect(wrap(data)) == "rocksdb"


# ---------------------------------------------------------------------------
# --dialect on every reading subcommand
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def leveldb_file(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("dialect") / "000003.log"
    batches = [
        leveldb_log.leveldb.encode_write_batch(1, [leveldb_log.leveldb.Put(b"k1", b"v1")]),
        leveldb_log.leveldb.encode_write_batch(2, [leveldb_log.leveldb.Delete(b"k0")]),
    ]
    path.write_bytes(leveldb_log_bytes([*batches, b"x" * 70000]))
    return path


@pytest.mark.parametrize("command", ["dump", "cat", "verify", "stats"])
def test_every_reading_subcommand_has_dialect(command: str) -> None:
    out = run(command, "--help").stdout.decode()
    assert "--dialect {auto,leveldb,rocksdb,pebble}" in out


@pytest.mark.parametrize("command", ["write", "split"])
def test_write_and_split_have_no_dialect(command: str) -> None:
    # split's ranges are whole blocks, the same in every dialect: an option it would only
    # accept and ignore is not offered.
    assert "--dialect" not in run(command, "--help").stdout.decode()


@pytest.mark.parametrize("args", [("dump",), ("cat",), ("verify",), ("stats",)])
def test_dialect_leveldb_and_auto_read_a_leveldb_log_as_before(
    leveldb_file: pathlib.Path, args: tuple[str, ...]
) -> None:
    default = run(*args, leveldb_file)
    assert default.returncode == 0, default.stderr
    for dialect in ("leveldb", "auto"):
        chosen = run(*args, "--dialect", dialect, leveldb_file)
        assert (chosen.returncode, chosen.stdout) == (0, default.stdout)


def test_an_unknown_dialect_is_a_usage_error(leveldb_file: pathlib.Path) -> None:
    result = run("cat", "--dialect", "sqlite", leveldb_file)
    assert result.returncode == 2 and b"invalid choice: 'sqlite'" in result.stderr


# ---------------------------------------------------------------------------
# dump --decode, --kind, --leveldb
# ---------------------------------------------------------------------------

ROCKSDB_BATCHES = [
    rocksdb.encode_write_batch(
        1, [rocksdb.Put(b"a", b"1"), rocksdb.Put(b"b", b"2", cf=3), rocksdb.Delete(b"c")]
    ),
    rocksdb.encode_write_batch(
        4,
        [
            rocksdb.BeginPrepare(),
            rocksdb.Merge(b"m", b"+1", cf=1),
            rocksdb.TimedPut(b"t", b"\xff", 99),
            rocksdb.EndPrepare(b"tx"),
            rocksdb.Commit(b"tx"),
        ],
    ),
]


@pytest.fixture
def rocksdb_wal(tmp_path: pathlib.Path) -> pathlib.Path:
    """A RocksDB WAL without recycling: legacy chunks, RocksDB's batches."""
    path = tmp_path / "000012.log"
    path.write_bytes(leveldb_log_bytes(ROCKSDB_BATCHES))
    return path


ROCKSDB_TEXT = """\
--- offset 0; sequence 1
  put 'a' '1'
  put cf=3 'b' '2'
  del 'c'
--- offset 33; sequence 4
  begin_prepare
  merge cf=1 'm' '+1'
  timed_put 't' '\\xff' write_time=99
  end_prepare 'tx'
  commit 'tx'
"""


def test_dump_decode_a_rocksdb_wal(rocksdb_wal: pathlib.Path) -> None:
    result = run("dump", "--decode", rocksdb_wal)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode() == ROCKSDB_TEXT
    explicit = run("dump", "--decode", "--dialect", "leveldb", "--kind", "wal", rocksdb_wal)
    assert explicit.returncode == 1  # LevelDB's decoders: tag 5 is not LevelDB's


def test_dump_decode_json(rocksdb_wal: pathlib.Path) -> None:
    result = run("dump", "--decode", "--format", "json", rocksdb_wal)
    first, second = (json.loads(line) for line in result.stdout.decode().splitlines())
    assert first == {
        "offset": 0,
        "sequence": 1,
        "count": 3,
        "ops": [
            {"op": "put", "key": "a", "value": "1"},
            {"op": "put", "key": "b", "value": "2", "cf": 3},
            {"op": "delete", "key": "c"},
        ],
    }
    assert second["count"] == 2
    assert second["ops"][2] == {
        "op": "timed_put",
        "key": "t",
        "value": {"base64": "/w=="},
        "write_time": 99,
    }


def test_leveldb_keeps_leveldbs_decoders(rocksdb_wal: pathlib.Path) -> None:
    result = run("dump", "--leveldb", rocksdb_wal)
    assert result.returncode == 1
    assert b"record at offset 0: WriteBatch: unknown operation tag 5 at byte 17" in result.stderr
    assert run("dump", "--leveldb", "--dialect", "leveldb", rocksdb_wal).returncode == 1
    refused = run("dump", "--leveldb", "--dialect", "rocksdb", rocksdb_wal)
    assert refused.returncode == 2
    assert b"--leveldb means --dialect leveldb, not rocksdb" in refused.stderr


def test_decode_and_leveldb_agree_on_leveldbs_own_records(leveldb_file: pathlib.Path) -> None:
    ours = run("dump", "--decode", "--kind", "wal", "--end", "40", leveldb_file)
    theirs = run("dump", "--leveldb", "--kind", "wal", "--end", "40", leveldb_file)
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout == theirs.stdout != b""


def test_an_undecodable_record_is_reported_and_the_rest_printed(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "000001.log"
    path.write_bytes(leveldb_log_bytes([b"not a batch", ROCKSDB_BATCHES[0]]))
    result = run("dump", "--decode", path)
    assert result.returncode == 1
    assert result.stderr.decode() == (
        "leveldb-log: record at offset 0: WriteBatch: 11 bytes is shorter than the 12-byte "
        "header (sequence, count) at byte 0\n"
    )
    assert result.stdout.decode().startswith("--- offset 18; sequence 1\n  put 'a' '1'\n")


def manifest_record() -> bytes:
    def varint(n: int) -> bytes:
        out = bytearray()
        while n >= 0x80:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        return bytes(out + bytes([n]))

    smallest = b"a" + struct.pack("<Q", 5 << 8 | 1)
    largest = b"z" + struct.pack("<Q", 9 << 8 | 1)
    new_file4 = varint(103) + varint(0) + varint(8) + varint(1234)
    new_file4 += varint(len(smallest)) + smallest + varint(len(largest)) + largest
    new_file4 += varint(5) + varint(9) + varint(13) + b"\x01\x02" + varint(1)
    return (
        varint(1) + b"\x1aleveldb.BytewiseComparator" + varint(2) + varint(12)
        + varint(10) + varint(11) + new_file4 + varint(200) + varint(2)
        + varint(8199) + b"\x02\x0c\x01"
    )  # fmt: skip


MANIFEST_TEXT = """\
--- offset 0; VersionEdit {
  Comparator: leveldb.BytewiseComparator
  LogNumber: 12
  MinLogNumberToKeep: 11
  ColumnFamily: 2
  WalAddition: 12
  AddFile: 0 8 1234 'a' @ 5 : 1 .. 'z' @ 9 : 1 smallest_seqno=5 largest_seqno=9 epoch_number=2
}
"""


def test_dump_decode_a_rocksdb_manifest(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "MANIFEST-000005"
    path.write_bytes(leveldb_log_bytes([manifest_record()]))
    result = run("dump", "--decode", path)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode() == MANIFEST_TEXT
    as_json = json.loads(run("dump", "--decode", "--format", "json", path).stdout)
    assert as_json["new_files"][0]["epoch_number"] == 2
    assert as_json["wal_additions"] == [{"number": 12, "synced_size": None}]
    assert as_json["column_family"] == 2 and "db_id" not in as_json
    leveldb = run("dump", "--leveldb", path)
    assert leveldb.returncode == 1 and b"unknown tag 10" in leveldb.stderr


def test_kind_overrides_the_file_name(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "edits.bin"
    path.write_bytes(leveldb_log_bytes([manifest_record()]))
    refused = run("dump", "--decode", path)
    assert refused.returncode == 2
    assert b"cannot tell whether" in refused.stderr and b"give --kind" in refused.stderr
    assert run("dump", "--decode", "--kind", "manifest", path).stdout.decode() == MANIFEST_TEXT
    as_wal = run("dump", "--decode", "--kind", "wal", path)
    assert as_wal.returncode == 1 and b"WriteBatch" in as_wal.stderr


def test_decode_standard_input(rocksdb_wal: pathlib.Path) -> None:
    result = run("dump", "--decode", "--kind", "wal", "-", input=rocksdb_wal.read_bytes())
    assert (result.returncode, result.stdout.decode()) == (0, ROCKSDB_TEXT)


def test_pebble_batches_render() -> None:
    batch = pebble.encode_write_batch(
        7, [pebble.Set(b"k", b"v"), pebble.DeleteSized(b"d", 12), pebble.IngestSST(3)]
    )
    text = _payloads.decoder("pebble", "wal", "text", lambda b: escape(b, "'"), json_bytes)
    assert text(100, batch) == (
        "--- offset 100; sequence 7; count 3\n"
        "  set 'k' 'v'\n  delete_sized 'd' size=12\n  ingest_sst table_number=3"
    )
    as_json = _payloads.decoder("pebble", "wal", "json", escape, json_bytes)
    assert json.loads(as_json(0, batch))["ops"][1] == {"op": "delete_sized", "key": "d", "size": 12}
    with pytest.raises(ValueError, match="invalid key kind 0x1f"):
        text(0, batch + b"\x1f\x00")


# ---------------------------------------------------------------------------
# Logs only the core's dialects read (skipped until the core has them)
# ---------------------------------------------------------------------------


def recycled_wal(log_number: int, batches: list[bytes]) -> bytes:
    return b"".join(chunk(5, b, log_number) for b in batches)


@needs_dialects
def test_auto_reads_a_recycled_rocksdb_wal(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "000012.log"
    old = recycled_wal(9, [rocksdb.encode_write_batch(50, [rocksdb.Put(b"old", b"")])])
    path.write_bytes(recycled_wal(12, ROCKSDB_BATCHES) + old)
    assert run("dump", "--decode", path).stdout.decode() == ROCKSDB_TEXT.replace(
        "offset 33", "offset 37"
    )
    assert run("cat", "--length-prefixed", path).stdout == b"".join(
        struct.pack("<I", len(b)) + b for b in ROCKSDB_BATCHES
    )
    verify = run("verify", path)
    assert verify.returncode == 0 and verify.stdout.endswith(b": OK: 2 records\n")
    leveldb = run("verify", "--dialect", "leveldb", path)
    assert leveldb.returncode == 1


@needs_dialects
def test_auto_reads_a_pebble_wal(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "000004.log"
    batch = pebble.encode_write_batch(10, [pebble.Set(b"k", b"v"), pebble.RangeDelete(b"a", b"b")])
    path.write_bytes(chunk(9, batch, 4, 0) + chunk(9, batch, 4, 0) + trailer(5))
    result = run("dump", "--decode", path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines()[:3] == [
        "--- offset 0; sequence 10; count 2",
        "  set 'k' 'v'",
        "  range_delete 'a' 'b'",
    ]
    assert run("verify", path).stdout.endswith(b": OK: 2 records\n")


@needs_dialects
def test_stats_reads_in_the_dialect(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "000012.log"
    path.write_bytes(recycled_wal(12, ROCKSDB_BATCHES))
    # `leveldb-log stats` passes --dialect on to stats(), which must take it.
    assert "dialect" in inspect.signature(stats).parameters
    figures = json.loads(run("stats", "--json", path).stdout)
    assert figures["records"] == 2 and figures["header_bytes"] == 22


PEBBLE_BATCHES = [
    pebble.encode_write_batch(10, [pebble.Set(b"k", b"v"), pebble.RangeDelete(b"a", b"b")]),
    pebble.encode_write_batch(12, [pebble.LogData(b"note"), pebble.DeleteSized(b"k", 9)]),
]
PEBBLE_LINES = [
    "sequence 10; count 2",
    "  set 'k' 'v'",
    "  range_delete 'a' 'b'",
    "sequence 12; count 1",
    "  log_data 'note'",
    "  delete_sized 'k' size=9",
]


def _zstd_usable() -> bool:
    try:  # closed at once: it holds the compression-type record it begins with
        with leveldb_log.Writer(io.BytesIO(), dialect="rocksdb", compression="zstd", log_number=1):  # type: ignore[call-arg]
            return True
    except (ImportError, TypeError):
        return False


WRITERS = [
    ({"dialect": "rocksdb"}, "leveldb", ROCKSDB_BATCHES),
    ({"dialect": "rocksdb", "recycle": True}, "rocksdb", ROCKSDB_BATCHES),
    pytest.param(
        {"dialect": "rocksdb", "compression": "zstd"},
        "rocksdb",
        ROCKSDB_BATCHES,
        marks=pytest.mark.skipif(not _zstd_usable(), reason="no zstd binding"),
    ),
    ({"dialect": "pebble"}, "pebble", PEBBLE_BATCHES),
    ({"dialect": "pebble", "sync_offsets": True}, "pebble", PEBBLE_BATCHES),
]


@needs_dialects
@pytest.mark.parametrize(("options", "detected", "batches"), WRITERS)
def test_what_our_writer_writes_is_detected_and_decoded(
    tmp_path: pathlib.Path, options: dict[str, object], detected: str, batches: list[bytes]
) -> None:
    path = tmp_path / "000012.log"
    with leveldb_log.Writer(path, **options) as w:  # type: ignore[arg-type]
        w.write_many(batches)
    assert detect_dialect(path.read_bytes()) == detected
    result = run("dump", "--decode", path)
    assert (result.returncode, result.stderr) == (0, b"")
    if options["dialect"] == "rocksdb":
        text = ROCKSDB_TEXT.splitlines()
        assert [line for line in result.stdout.decode().splitlines() if "---" not in line] == [
            line for line in text if "---" not in line
        ]
    else:
        lines = [line.split("; ", 1)[-1] for line in result.stdout.decode().splitlines()]
        assert lines == PEBBLE_LINES
    assert run("verify", path).stdout.endswith(b": OK: 2 records\n")
