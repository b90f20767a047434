"""Interoperability with real RocksDB: 9.x (the copy inside rocksdict's wheel) and 7.8 (Debian).

RocksDB -> us: databases written by RocksDB; their write-ahead logs (NNNNNN.log), plain,
recycled and zstd-compressed, are read with ``Reader(dialect="rocksdb")`` and their
WriteBatches decoded with ``leveldb_log.rocksdb``; they must hold exactly the writes made,
in order, with consecutive sequence numbers, and nothing may be reported. MANIFESTs after
flushes and compactions decode, and list the live table files.

Us -> RocksDB: WALs written with ``Writer(dialect="rocksdb")`` (plain, recycled,
compressed) in place of a closed database's current WAL are replayed when RocksDB opens
the database; the keys are then visible.

Debian's ``ldb dump_wal --print_value`` and ``leveldb-log dump --dialect rocksdb --decode``
agree on the operations of the same WALs.

What RocksDB does with its files, as observed (details in docs/rocksdb.md):
- RocksDB hands each write to the OS at once (no ``manual_wal_flush``), so a WAL can be
  read, or the database directory copied, while the database is open.
- rocksdict's ``close()`` flushes the default column family's memtable; RocksDB itself
  does not flush on close. A WAL stays on disk while a column family still needs it, so
  the tests read the WAL of an open database or of a copy of its directory.
- With ``recycle_log_file_num`` every WAL is written with the recyclable record types
  5-8, even a brand-new file; a recycled file is an obsolete WAL renamed, whose old
  records (with the old log number) follow the new ones until the WAL is closed, when
  RocksDB truncates it to the bytes it wrote.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import random
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import leveldb_log
import pytest

B = leveldb_log.BLOCK_SIZE
HERE = pathlib.Path(__file__).resolve().parent
BIG_MEMTABLE = 256 << 20  # no flush unless the test asks for one

# An operation as the tests write it (and compare it, after normalising what decoders
# and ldb say): ("put", cf, key, value), ("delete", cf, key), ("single_delete", cf, key),
# ("merge", cf, key, value), ("delete_range", cf, begin, end), ("entity", cf, key),
# ("log_data", blob).
Op = tuple[Any, ...]
Batch = tuple[Op, ...]


# ---------------------------------------------------------------------------
# our side: reading, decoding, encoding
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Read:
    """Everything a Reader said about one file."""

    records: list[bytes]
    reports: list[Any]  # leveldb_log.Corruption(offset, size, reason)
    compression: str | None
    log_number: int | None


def read_wal(path: pathlib.Path, **options: Any) -> Read:
    reports: list[Any] = []
    with leveldb_log.Reader(
        path,
        dialect="rocksdb",
        on_corruption=reports.append,
        **options,
    ) as r:
        records = [bytes(record) for record in r]
        return Read(records, reports, r.compression, r.log_number)


def batch_header(record: bytes) -> tuple[int, int]:
    """(sequence, count) of a WriteBatch, read here without the decoder."""
    assert len(record) >= 12, record
    sequence, count = struct.unpack_from("<QI", record)
    return sequence, count


def normalise_op(op: object) -> Op:
    """A decoded operation of leveldb_log.rocksdb as the tuple the tests write."""
    from leveldb_log import rocksdb

    if isinstance(op, rocksdb.LogData):
        return ("log_data", op.blob)
    if isinstance(op, rocksdb.DeleteRange):
        return ("delete_range", op.cf, op.begin, op.end)
    if isinstance(op, rocksdb.WideColumnEntity):
        return ("entity", op.cf, op.key)
    if isinstance(op, (rocksdb.Put, rocksdb.Merge)):
        return (type(op).__name__.lower(), op.cf, op.key, op.value)
    if isinstance(op, rocksdb.Delete):
        return ("delete", op.cf, op.key)
    if isinstance(op, rocksdb.SingleDelete):
        return ("single_delete", op.cf, op.key)
    raise AssertionError(f"an operation the tests never write: {op!r}")


def as_operations(ops: Batch) -> list[object]:
    """The tests' tuples as leveldb_log.rocksdb operations (for its encoder)."""
    from leveldb_log import rocksdb

    out: list[object] = []
    for kind, *fields in ops:
        if kind == "log_data":
            out.append(rocksdb.LogData(fields[0]))
        elif kind == "delete_range":
            out.append(rocksdb.DeleteRange(fields[1], fields[2], cf=fields[0]))
        else:
            cls = {
                "put": rocksdb.Put,
                "merge": rocksdb.Merge,
                "delete": rocksdb.Delete,
                "single_delete": rocksdb.SingleDelete,
            }[kind]
            out.append(cls(*fields[1:], cf=fields[0]))
    return out


def decode_wal(records: Sequence[bytes]) -> list[tuple[int, Batch]]:
    """(sequence, operations) of every WriteBatch, through leveldb_log.rocksdb."""
    from leveldb_log.rocksdb import decode_write_batch

    out = []
    for record in records:
        batch = decode_write_batch(record)
        assert (batch.sequence, batch.count) == batch_header(record)
        out.append((batch.sequence, tuple(normalise_op(op) for op in batch.ops)))
    return out


def counted(batch: Batch) -> int:
    return sum(1 for op in batch if op[0] != "log_data")


def assert_batches(found: list[tuple[int, Batch]], written: Sequence[Batch], first: int) -> None:
    """Every batch present, in order, numbered consecutively from `first`."""
    assert [ops for _, ops in found] == list(written)
    sequence = first
    for batch_sequence, ops in found:
        assert batch_sequence == sequence
        sequence += counted(ops)


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _varstring(data: bytes) -> bytes:
    return _varint(len(data)) + data


# (tag without column family, tag with one): docs/rocksdb.md, WriteBatch tags
_TAGS = {
    "put": (0x01, 0x05),
    "delete": (0x00, 0x04),
    "single_delete": (0x07, 0x08),
    "merge": (0x02, 0x06),
    "delete_range": (0x0F, 0x0E),
}


def encode_batch(sequence: int, ops: Batch) -> bytes:
    """A RocksDB WriteBatch, encoded here by hand (independent of leveldb_log.rocksdb)."""
    out = bytearray(struct.pack("<QI", sequence, counted(ops)))
    for kind, *fields in ops:
        if kind == "log_data":
            out += b"\x03" + _varstring(fields[0])
            continue
        cf, *strings = fields
        plain, with_cf = _TAGS[kind]
        out += bytes([with_cf]) + _varint(cf) if cf else bytes([plain])
        for s in strings:
            out += _varstring(s)
    return bytes(out)


def expected_contents(batches: Iterable[Batch], cf: int = 0) -> dict[bytes, bytes]:
    """The contents of column family `cf` after the batches (merges concatenate)."""
    out: dict[bytes, bytes] = {}
    for batch in batches:
        for kind, *fields in batch:
            if kind == "log_data" or fields[0] != cf:
                continue
            if kind == "put":
                out[fields[1]] = fields[2]
            elif kind == "merge":
                out[fields[1]] = out.get(fields[1], b"") + fields[2]
            elif kind in ("delete", "single_delete"):
                out.pop(fields[1], None)
            elif kind == "delete_range":
                for key in [k for k in out if fields[1] <= k < fields[2]]:
                    del out[key]
    return out


def wal_files(db: pathlib.Path) -> list[pathlib.Path]:
    return sorted(db.glob("*.log"), key=lambda p: int(p.stem))


def run_cli(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "leveldb_log", *args], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# ---------------------------------------------------------------------------
# workloads
# ---------------------------------------------------------------------------

LARGE_SIZES = [B - 20, B, B + 1, 3 * B + 1234, (1 << 20) + 17]


def workload(
    seed: int, n: int, cfs: int = 1, merges: bool = False, single_deletes: bool = False
) -> Iterator[Batch]:
    """Batches of puts, deletes, range deletes (and merges, single deletes) over `cfs`."""
    rng = random.Random(seed)
    large = iter(LARGE_SIZES)
    for i in range(n):
        cf = rng.randrange(cfs)
        key = b"key-%04d" % rng.randrange(n)
        choice = rng.random()
        if i % (n // len(LARGE_SIZES) + 1) == 7:
            size = next(large, 100)
            yield (("put", cf, key, rng.randbytes(size)),)
        elif choice < 0.5:
            yield (("put", cf, key, rng.randbytes(rng.randrange(60))),)
        elif choice < 0.6:
            yield (("delete", cf, key),)
        elif choice < 0.65:
            end = b"key-%04d" % (int(key[4:]) + rng.randrange(1, 20))
            yield (("delete_range", cf, key, end),)
        elif merges and choice < 0.72:
            yield (("merge", cf, key, b"+%d" % i),)
        elif single_deletes and choice < 0.75:
            fresh = b"single-%05d" % i  # SingleDelete wants one Put before it, no more
            yield (("put", cf, fresh, b"once"),)
            yield (("single_delete", cf, fresh),)
        else:
            ops: list[Op] = []
            for j in range(rng.randrange(1, 12)):
                k = b"batch-%04d-%02d" % (i, j)
                c = rng.randrange(cfs)
                r = rng.random()
                if r < 0.2:
                    ops.append(("delete", c, k))
                elif merges and r < 0.3:
                    ops.append(("merge", c, k, b"m"))
                else:
                    ops.append(("put", c, k, rng.randbytes(rng.randrange(200))))
            yield tuple(ops)


# ---------------------------------------------------------------------------
# RocksDB 9.x through rocksdict
# ---------------------------------------------------------------------------


def rocksdict_module() -> Any:
    return pytest.importorskip(
        "rocksdict", reason="rocksdict (RocksDB 9.x) has no wheel for this platform"
    )


CF_NAMES = ("default", "one", "two")


class RocksDict:
    """A rocksdict database with the column families CF_NAMES (ids 0, 1, 2)."""

    def __init__(
        self, path: pathlib.Path, *, recycle: bool = False, mode: str = "point_in_time"
    ) -> None:
        rd = rocksdict_module()
        self.rd = rd
        self.path = path
        options = self.options()
        options.create_if_missing(True)
        options.set_wal_recovery_mode(getattr(rd.DBRecoveryMode, mode)())
        if recycle:
            options.set_recycle_log_file_num(2)
        existing = rd.Rdict.list_cf(str(path)) if (path / "CURRENT").exists() else ["default"]
        families = {name: self.options() for name in existing if name != "default"}
        self.db = rd.Rdict(str(path), options, column_families=families)
        for name in CF_NAMES[1:]:
            if name not in existing:  # created in order: ids 1, 2
                self.db.create_column_family(name, self.options())
        self.cfs = [self.db] + [self.db.get_column_family(name) for name in CF_NAMES[1:]]

    def options(self) -> Any:
        options = self.rd.Options(raw_mode=True)
        options.set_write_buffer_size(BIG_MEMTABLE)
        options.set_disable_auto_compactions(True)
        return options

    def apply(self, batch: Batch) -> None:
        """One write: a single put, delete or range delete as itself, else a WriteBatch."""
        if len(batch) == 1 and batch[0][0] in ("put", "delete", "delete_range"):
            kind, cf, *args = batch[0]
            getattr(self.cfs[cf], kind)(*args)
            return
        wb = self.rd.WriteBatch(raw_mode=True)
        for kind, cf, *args in batch:
            handle = self.db.get_column_family_handle(CF_NAMES[cf])
            getattr(wb, kind)(*args, handle)
        self.db.write(wb)

    def contents(self, cf: int) -> dict[bytes, bytes]:
        return dict(self.cfs[cf].items())

    def flush_all(self) -> None:
        for cf in self.cfs:
            cf.flush()

    def close(self) -> None:
        """Close (rocksdict's close flushes each column family's memtable)."""
        for cf in reversed(self.cfs):
            cf.close()


def test_plain_wal_of_rocksdb_9_holds_every_write_in_order(tmp_path: pathlib.Path) -> None:
    written = list(workload(seed=1, n=1500, cfs=3))
    db = RocksDict(tmp_path / "db")
    half = len(written) // 2
    for batch in written[:half]:
        db.apply(batch)
    (log,) = wal_files(tmp_path / "db")
    read = read_wal(log)
    assert read.reports == []
    assert read.compression is None and read.log_number == int(log.stem)
    assert_batches(decode_wal(read.records), written[:half], first=1)
    for batch in written[half:]:
        db.apply(batch)
    shutil.copytree(tmp_path / "db", tmp_path / "copy")  # the open database, as it is
    contents = [db.contents(cf) for cf in range(3)]
    db.close()
    read = read_wal(tmp_path / "copy" / log.name)
    assert read.reports == []
    assert_batches(decode_wal(read.records), written, first=1)
    assert (
        tmp_path / "copy" / log.name
    ).stat().st_size > 40 * B  # values of up to 1 MiB: FIRST/MIDDLE/LAST used
    for cf in range(3):
        assert contents[cf] == expected_contents(written, cf)
    # The copy is a database RocksDB opens, replaying the WAL we read.
    copy = RocksDict(tmp_path / "copy")
    assert [copy.contents(cf) for cf in range(3)] == contents
    copy.close()


def test_rocksdb_9_wide_column_entity_is_one_operation(tmp_path: pathlib.Path) -> None:
    db = RocksDict(tmp_path)
    db.cfs[1].put_entity(b"entity", [b"a", b"b"], [b"1", b"22"])
    db.apply((("put", 0, b"after", b"x"),))
    (log,) = wal_files(tmp_path)
    read = read_wal(log)
    db.close()
    assert read.reports == []
    assert decode_wal(read.records) == [
        (1, (("entity", 1, b"entity"),)),
        (2, (("put", 0, b"after", b"x"),)),
    ]


def recycled_database(
    path: pathlib.Path, rounds: list[list[Batch]], mode: str = "point_in_time"
) -> list[pathlib.Path]:
    """Rounds of writes with recycling on, each ended by a flush of every column family.

    Returns a copy of the open database taken before each flush: from the third round on,
    its WAL is an earlier WAL's file reused, with that log's records after the new ones.
    """
    db = RocksDict(path, recycle=True, mode=mode)
    copies = []
    for i, batches in enumerate(rounds):
        for batch in batches:
            db.apply(batch)
        copies.append(path.with_name(f"{path.name}-{i}"))
        shutil.copytree(path, copies[-1])
        db.flush_all()
    db.close()
    return copies


def uniform_round(r: int, n: int) -> list[Batch]:
    """n puts of equal size: recycled records line up with the old records they overwrite."""
    return [(("put", 0, b"r%d-%05d" % (r, i), b"v" * 50),) for i in range(n)]


@pytest.mark.parametrize("mode", ["point_in_time", "skip_any_corrupted_record"])
def test_recycled_wal_of_rocksdb_9_ends_at_the_old_records(
    tmp_path: pathlib.Path, mode: str
) -> None:
    # RocksDB recycles WALs only in these two modes (it turns recycling off in the others).
    rounds = [uniform_round(r, n) for r, n in enumerate([1000, 800, 400, 100])]
    copies = recycled_database(tmp_path / "db", rounds, mode)
    first = 1
    for r, copy in enumerate(copies):
        log = current_wal(copy)
        data = log.read_bytes()
        assert data[6] == 5  # recyclable FULL, even in a brand-new file
        assert int.from_bytes(data[7:11], "little") == int(log.stem)
        reused = r >= 2  # the file of round r-2's WAL, longer than what round r wrote
        assert reused == (data.count(b"r%d-" % (r - 2)) > 0)
        for recovery in ("point_in_time", "skip", "absolute", "tolerate_tail"):
            read = read_wal(log, recovery=recovery)
            assert read.reports == [], (r, recovery)
            assert read.log_number == int(log.stem)
            assert_batches(decode_wal(read.records), rounds[r], first=first)
        RocksDict(copy, recycle=True, mode=mode).close()  # RocksDB finds nothing wrong either
        assert rocksdb_reports(copy, log.name) == []
        first += len(rounds[r])
    # Closing flushed into a new WAL, a reused file in which RocksDB wrote nothing: it
    # still holds an older log's records from offset 0, none of them this log's.
    log = current_wal(tmp_path / "db")
    data = log.read_bytes()
    assert data[6] == 5 and int.from_bytes(data[7:11], "little") < int(log.stem)
    for recovery in ("point_in_time", "skip"):
        read = read_wal(log, recovery=recovery)
        assert (read.records, read.reports) == ([], [])


def rocksdb_reports(db: pathlib.Path, wal: str) -> list[tuple[int, str]]:
    """(bytes dropped, reason) for each corruption RocksDB's recovery logged about `wal` in
    the database's LOG ("<path>/NNNNNN.log: dropping N bytes; Corruption: REASON")."""
    found = re.findall(
        re.escape(wal) + r": dropping (\d+) bytes; Corruption: (.*)",
        (db / "LOG").read_text(errors="replace"),
    )
    return [(int(size), reason.strip()) for size, reason in found]


@pytest.mark.parametrize(
    ("mode", "recovery"),
    [("point_in_time", "point_in_time"), ("skip_any_corrupted_record", "skip")],
)
def test_recycled_wal_of_rocksdb_9_with_mixed_records(
    tmp_path: pathlib.Path, mode: str, recovery: str
) -> None:
    # Records of other sizes than the old ones: the old data after the new records starts
    # mid-record, and RocksDB's own recovery reports it ("bad record length"; then the end
    # in point-in-time mode, the old records skipped in skip-any mode). Our reader must
    # keep the same records and report the same.
    rounds = [list(workload(seed=10 + r, n=n, cfs=3)) for r, n in enumerate([600, 500, 150])]
    copies = recycled_database(tmp_path / "db", rounds, mode)
    first = 1 + sum(counted(b) for b in rounds[0] + rounds[1])
    log = current_wal(copies[2])
    read = read_wal(log, recovery=recovery)
    assert_batches(decode_wal(read.records), rounds[2], first=first)
    copy = RocksDict(copies[2], recycle=True, mode=mode)
    try:
        for cf in range(3):
            assert copy.contents(cf) == expected_contents(rounds[0] + rounds[1] + rounds[2], cf)
    finally:
        copy.close()
    theirs = rocksdb_reports(copies[2], log.name)
    assert [reason for _, reason in theirs] == ["bad record length"]
    assert [(c.size, c.reason) for c in read.reports] == theirs


def manifest_edits(db: pathlib.Path) -> list[Any]:
    """The VersionEdits of the database's MANIFEST, read in both dialects (a MANIFEST uses
    LevelDB's record types only) with nothing reported."""
    from leveldb_log.rocksdb import decode_version_edit

    manifest = db / (db / "CURRENT").read_text().strip()
    found = []
    for dialect in ("leveldb", "rocksdb"):
        reports: list[object] = []
        with leveldb_log.Reader(
            manifest, dialect=dialect, recovery="absolute", on_corruption=reports.append
        ) as r:
            found.append([decode_version_edit(record) for record in r])
        assert reports == []
    assert found[0] == found[1]
    return found[0]


def replay_manifest(edits: Sequence[Any]) -> tuple[dict[int, str], dict[int, int]]:
    """Column family names by id, and live table files (number -> size) after the edits."""
    live: dict[int, int] = {}
    families = {0: "default"}
    for edit in edits:
        if edit.column_family_add is not None:
            families[edit.column_family] = edit.column_family_add
        for deleted in edit.deleted_files:
            del live[deleted.number]
        for f in edit.new_files:
            live[f.number] = f.file_size
            assert f.tag == 103 and f.smallest.user_key <= f.largest.user_key
            assert f.oldest_ancester_time is not None and f.file_creation_time is not None
    return families, live


def table_files(db: pathlib.Path) -> dict[int, int]:
    return {int(p.stem): p.stat().st_size for p in db.glob("*.sst")}


def test_manifest_of_rocksdb_9_after_flushes_and_compactions(tmp_path: pathlib.Path) -> None:
    db = RocksDict(tmp_path)
    for session in range(4):
        for batch in workload(seed=20 + session, n=300, cfs=3):
            db.apply(batch)
        db.flush_all()
    for cf in db.cfs:
        cf.compact_range(None, None)
    db.close()
    edits = manifest_edits(tmp_path)
    families, live = replay_manifest(edits)
    assert families == dict(enumerate(CF_NAMES))
    assert live == table_files(tmp_path)
    assert any(edit.deleted_files for edit in edits)  # the compactions
    assert all(f.epoch_number for edit in edits for f in edit.new_files)  # 9.x: custom field 13
    assert any(edit.min_log_number_to_keep for edit in edits)  # tag 10
    assert [e.comparator for e in edits if e.comparator] == ["leveldb.BytewiseComparator"] * 3
    assert sum(e.db_id is not None for e in edits) == 1


def current_wal(db: pathlib.Path) -> pathlib.Path:
    """The WAL a closed database replays first: the one with the highest number."""
    return wal_files(db)[-1]


def write_our_wal(log: pathlib.Path, first: int, batches: Sequence[Batch], **options: Any) -> None:
    """Our WAL at `log`: the batches numbered from `first`, encoded by hand and checked
    against leveldb_log.rocksdb.encode_write_batch."""
    from leveldb_log.rocksdb import encode_write_batch

    with leveldb_log.Writer(log, dialect="rocksdb", **options) as w:
        sequence = first
        for ops in batches:
            record = encode_batch(sequence, ops)
            assert encode_write_batch(sequence, as_operations(ops)) == record
            w.write(record)
            sequence += counted(ops)


@pytest.mark.parametrize("compression", [None, "zstd"])
@pytest.mark.parametrize("recycle", [False, True], ids=["plain", "recycled"])
def test_rocksdb_9_replays_a_wal_we_wrote_in_place_of_its_own(
    tmp_path: pathlib.Path, recycle: bool, compression: str | None
) -> None:
    theirs = list(workload(seed=30, n=300, cfs=3))
    db = RocksDict(tmp_path, recycle=recycle)
    for batch in theirs:
        db.apply(batch)
    first = db.db.latest_sequence_number() + 1
    db.close()  # every memtable flushed: the current WAL holds nothing RocksDB needs
    assert first == 1 + sum(counted(b) for b in theirs)
    log = current_wal(tmp_path)
    ours = list(workload(seed=31, n=1500, cfs=3))
    write_our_wal(log, first, ours, recycle=recycle, compression=compression)
    data = log.read_bytes()
    if compression:  # RocksDB reads a compressed WAL whatever its own wal_compression
        assert data[4:11] == b"\x04\x00\x09\x07\x00\x00\x00"
        data = data[11:]
    if recycle:
        assert data[6] == 5 and int.from_bytes(data[7:11], "little") == int(log.stem)
    db = RocksDict(tmp_path, recycle=recycle)
    try:
        for cf in range(3):
            assert db.contents(cf) == expected_contents(theirs + ours, cf)
        assert db.db.latest_sequence_number() == first - 1 + sum(counted(b) for b in ours)
    finally:
        db.close()


def test_rocksdb_9_refuses_our_wal_damaged_mid_file_in_absolute_mode(
    tmp_path: pathlib.Path,
) -> None:
    # The control experiment: RocksDB really reads and checks what we write.
    db = RocksDict(tmp_path)
    db.apply((("put", 0, b"theirs", b"1"),))
    db.close()
    log = current_wal(tmp_path)
    write_our_wal(log, 2, [(("put", 1, b"k%d" % i, b"v" * 100),) for i in range(3)])
    data = bytearray(log.read_bytes())
    data[len(data) // 2] ^= 0x40
    log.write_bytes(bytes(data))
    rd = rocksdict_module()
    options = rd.Options(raw_mode=True)
    options.set_wal_recovery_mode(rd.DBRecoveryMode.absolute_consistency())
    families = {name: rd.Options(raw_mode=True) for name in CF_NAMES[1:]}
    with pytest.raises(Exception, match=r"(?i)corrupt|checksum"):
        rd.Rdict(str(tmp_path), options, column_families=families)


# ---------------------------------------------------------------------------
# RocksDB 7.8 from Debian: librocksdb-dev (the C++ driver), rocksdb-tools (ldb)
# ---------------------------------------------------------------------------

DEBIAN_PACKAGES = ("g++", "librocksdb-dev", "rocksdb-tools")


def _debian_rocksdb_missing() -> bool:
    return not (
        shutil.which("g++") and shutil.which("ldb") and os.path.exists("/usr/include/rocksdb/db.h")
    )


def _install_debian_rocksdb() -> str | None:
    """Install the packages with apt-get (as root); the reason they cannot be, else None."""
    if not _debian_rocksdb_missing():
        return None
    if not shutil.which("apt-get") or os.geteuid() != 0:
        return "RocksDB 7.8 needs apt-get, as root, to install " + " ".join(DEBIAN_PACKAGES)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "--no-install-recommends", *DEBIAN_PACKAGES]
    proc = subprocess.run(install, env=env, capture_output=True, text=True)
    if proc.returncode != 0:  # package lists missing or stale: update them, then retry
        subprocess.run(["apt-get", "update"], env=env, capture_output=True)
        proc = subprocess.run(install, env=env, capture_output=True, text=True)
    if _debian_rocksdb_missing():
        return "apt-get could not install " + " ".join(DEBIAN_PACKAGES) + ": " + proc.stderr[-300:]
    return None


@pytest.fixture(scope="session")
def rocksdb_wal(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """tests/interop/rocksdb_wal.cc built against Debian's librocksdb (7.8)."""
    reason = _install_debian_rocksdb()
    if reason:
        pytest.skip(reason)
    program = tmp_path_factory.mktemp("interop") / "rocksdb_wal"
    source = HERE / "interop" / "rocksdb_wal.cc"
    proc = subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-o",
            str(program),
            str(source),
            "-lrocksdb",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return program


def _hex_op(op: Op) -> str:
    kind, *fields = op
    letter = {
        "put": "P",
        "delete": "D",
        "single_delete": "S",
        "merge": "M",
        "delete_range": "R",
        "log_data": "L",
    }[kind]
    if kind == "log_data":
        return f"L,{fields[0].hex()}"
    return ",".join([letter, str(fields[0]), *(f.hex() for f in fields[1:])])


def rocksdb_7_write(
    program: pathlib.Path, db: pathlib.Path, batches: Sequence[Batch], *flags: str
) -> None:
    """A database written by RocksDB 7.8 with the column families CF_NAMES, left unflushed."""
    lines = "".join(" ".join(_hex_op(op) for op in batch) + "\n" for batch in batches)
    cfs = [arg for name in CF_NAMES[1:] for arg in ("--cf", name)]
    proc = subprocess.run(
        [str(program), "write", str(db), *flags, *cfs], input=lines, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def rocksdb_7_read(
    program: pathlib.Path, db: pathlib.Path, mode: str = "absolute"
) -> tuple[list[dict[bytes, bytes]], int]:
    """Open with RocksDB 7.8 (replaying the WALs): each column family's contents, last sequence."""
    proc = subprocess.run(
        [str(program), "read", str(db), "--mode", mode], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    contents: list[dict[bytes, bytes]] = [{} for _ in CF_NAMES]
    *entries, last = proc.stdout.splitlines()
    for line in entries:
        cf, key, value = line.split("\t")
        contents[int(cf)][bytes.fromhex(key)] = bytes.fromhex(value)
    assert last.startswith("sequence ")
    return contents, int(last.split()[1])


_LDB_KINDS = {
    "PUT": "put",
    "DELETE": "delete",
    "SINGLE_DELETE": "single_delete",
    "MERGE": "merge",
    "DELETE_RANGE": "delete_range",
}
_LDB_OP = re.compile(r"([A-Z_]+)\((\d+)\) : 0x([0-9A-F]*)(?: : 0x([0-9A-F]*)| 0x([0-9A-F]*))?")


def ldb_dump_wal(path: pathlib.Path) -> list[tuple[int, Batch]]:
    """(sequence, operations) per batch as `ldb dump_wal --print_value` prints them.

    Its lines are "sequence,count,byte size,offset,OPS" with OPS such as
    "PUT(cf) : 0xKEY : 0xVALUE", "DELETE(cf) : 0xKEY", "DELETE_RANGE(cf) : 0xBEGIN 0xEND";
    it leaves out LogData blobs.
    """
    proc = subprocess.run(
        ["ldb", "dump_wal", f"--walfile={path}", "--print_value"], capture_output=True, text=True
    )
    failed = proc.returncode != 0 or "Failed" in proc.stdout
    assert not failed, f"ldb dump_wal {path.name}: {proc.stderr.strip()} {proc.stdout[-200:]}"
    out = []
    for line in proc.stdout.splitlines():
        sequence, count, _size, _offset, text = line.split(",", 4)
        ops = []
        for m in _LDB_OP.finditer(text):
            kind, cf = _LDB_KINDS[m[1]], int(m[2])
            strings = [bytes.fromhex(s) for s in (m[3], m[4], m[5]) if s is not None]
            ops.append((kind, cf, *strings))
        assert len(ops) == int(count), line[:200]
        out.append((int(sequence), tuple(ops)))
    return out


_DUMP_KINDS = {
    "put": "put",
    "del": "delete",
    "single_delete": "single_delete",
    "merge": "merge",
    "delete_range": "delete_range",
    "put_entity": "entity",
}
_DUMP_OP = re.compile(r"  (\w+)(?: cf=(\d+))?((?: '[0-9a-f]*')*)$")


def our_dump(path: pathlib.Path) -> list[tuple[int, Batch]]:
    """(sequence, operations) per batch as `leveldb-log dump --dialect rocksdb --decode
    --format hex` prints them ("--- offset N; sequence S", then lines such as
    "  put cf=1 'KEY' 'VALUE'"), without LogData, as ldb_dump_wal returns them."""
    out: list[tuple[int, Batch]] = []
    ops: list[Op] = []
    text = run_cli("dump", "--dialect", "rocksdb", "--decode", "--format", "hex", str(path))
    for line in text.splitlines():
        if line.startswith("--- "):
            if out:
                out[-1] = (out[-1][0], tuple(ops))
            out.append((int(line.rsplit("sequence ", 1)[1].split(";")[0]), ()))
            ops = []
            continue
        m = _DUMP_OP.match(line)
        assert m, line[:200]
        if m[1] == "log_data":
            continue
        strings = [bytes.fromhex(s) for s in re.findall(r"'([0-9a-f]*)'", m[3])]
        kind = _DUMP_KINDS[m[1]]
        ops.append((kind, int(m[2] or 0), *(strings[:1] if kind == "entity" else strings)))
    if out:
        out[-1] = (out[-1][0], tuple(ops))
    return out


def as_ldb_prints(batches: Sequence[Batch], first: int) -> list[tuple[int, Batch]]:
    """What ldb_dump_wal returns for these batches: sequences, and no LogData."""
    out = []
    for batch in batches:
        out.append((first, tuple(op for op in batch if op[0] != "log_data")))
        first += counted(batch)
    return out


def debian_workload(seed: int, n: int) -> list[Batch]:
    """Column families, merges, single deletes, range deletes, large values, LogData."""
    batches = list(workload(seed, n, cfs=3, merges=True, single_deletes=True))
    batches[5] = batches[5] + (("log_data", b"a blob of LogData"),)
    return batches


@pytest.mark.parametrize(
    "flags",
    [(), ("--zstd",), ("--recycle",), ("--zstd", "--recycle")],
    ids=["plain", "zstd", "recycled", "zstd-recycled"],
)
def test_wal_of_rocksdb_7_8_holds_every_write(
    tmp_path: pathlib.Path, rocksdb_wal: pathlib.Path, flags: tuple[str, ...]
) -> None:
    written = debian_workload(seed=40, n=800)
    rocksdb_7_write(rocksdb_wal, tmp_path, written, *flags)
    (log,) = wal_files(tmp_path)
    data = log.read_bytes()
    if "--zstd" in flags:  # the SetCompression record: 7-byte header, fixed32 7 (zstd)
        assert data[4:11] == b"\x04\x00\x09\x07\x00\x00\x00"
    first_type = data[17 if "--zstd" in flags else 6]
    assert first_type in ((5, 6) if "--recycle" in flags else (1, 2))  # FULL or FIRST
    ldb = ldb_dump_wal(log)
    assert ldb == as_ldb_prints(written, first=1)
    read = read_wal(log)
    assert read.reports == []
    assert read.compression == ("zstd" if "--zstd" in flags else None)
    assert_batches(decode_wal(read.records), written, first=1)
    assert our_dump(log) == ldb  # our CLI prints what ldb prints
    contents, last = rocksdb_7_read(rocksdb_wal, tmp_path)
    assert last == sum(counted(b) for b in written)
    for cf in range(3):
        assert contents[cf] == expected_contents(written, cf)


@pytest.mark.parametrize("compression", [None, "zstd"])
@pytest.mark.parametrize("recycle", [False, True], ids=["plain", "recycled"])
def test_rocksdb_7_8_replays_a_wal_we_wrote(
    tmp_path: pathlib.Path, rocksdb_wal: pathlib.Path, compression: str | None, recycle: bool
) -> None:
    theirs = debian_workload(seed=41, n=200)
    rocksdb_7_write(rocksdb_wal, tmp_path, theirs)
    _, last = rocksdb_7_read(rocksdb_wal, tmp_path)  # their WAL becomes tables
    log = current_wal(tmp_path)
    assert log.stat().st_size == 0
    ours = debian_workload(seed=42, n=800)
    write_our_wal(log, last + 1, ours, compression=compression, recycle=recycle)
    ldb = ldb_dump_wal(log)
    assert ldb == as_ldb_prints(ours, first=last + 1)
    contents, new_last = rocksdb_7_read(rocksdb_wal, tmp_path)
    assert new_last == last + sum(counted(b) for b in ours)
    for cf in range(3):
        assert contents[cf] == expected_contents(theirs + ours, cf)
    families, live = replay_manifest(manifest_edits(tmp_path))
    assert families == dict(enumerate(CF_NAMES)) and live == table_files(tmp_path)


# ---------------------------------------------------------------------------
# damage: our reader's recovery modes against RocksDB 7.8's
# ---------------------------------------------------------------------------

MODES = {
    "skip": "skip",
    "tolerate_tail": "tolerate",
    "point_in_time": "pit",
    "absolute": "absolute",
}


def record_offsets(records: Sequence[bytes], header: int) -> list[int]:
    """Where RocksDB's writer puts each record's first header in a WAL of these records
    (and nothing else): fragments fill blocks, a block's tail shorter than a header is
    padded."""
    offsets, pos = [], 0
    for record in records:
        if B - pos % B < header:
            pos += B - pos % B
        offsets.append(pos)
        left = len(record)
        while True:
            if B - pos % B < header:
                pos += B - pos % B
            fragment = min(left, B - pos % B - header)
            pos += header + fragment
            left -= fragment
            if left == 0:
                break
    return offsets


Outcome = tuple[dict[bytes, bytes] | str, list[tuple[int, str]]]


def damage_workload() -> list[Batch]:
    """60 single puts of 3,000 bytes (about 10 a block) and a last one of 3 blocks."""
    rng = random.Random(50)
    written: list[Batch] = [(("put", 0, b"key-%03d" % i, rng.randbytes(3000)),) for i in range(60)]
    written.append((("put", 0, b"last", rng.randbytes(3 * B)),))
    return written


DAMAGES = ["checksum", "torn_record", "torn_header", "torn_between"]


def damage_wal(log: pathlib.Path, damage: str, written: Sequence[Batch]) -> None:
    """Flip a payload byte of record 20, or cut the file in or before the last record."""
    data = bytearray(log.read_bytes())
    header = 11 if data[6] == 5 else 7
    offsets = record_offsets([encode_batch(i + 1, ops) for i, ops in enumerate(written)], header)
    # record 20 is whole (FULL) and the last one begins (FIRST) where they were put
    assert (data[offsets[20] + 6], data[offsets[-1] + 6]) == ((5, 6) if header == 11 else (1, 2))
    assert int.from_bytes(data[offsets[20] + 4 : offsets[20] + 6], "little") == len(
        encode_batch(21, written[20])
    )
    if damage == "checksum":  # a payload byte of record 20, in the WAL's second block
        data[offsets[20] + 30] ^= 0x10
    elif damage == "torn_record":  # the file ends inside the last record's second fragment
        del data[offsets[-1] + B + 100 :]
    elif damage == "torn_header":  # ... or inside the header of the last record
        del data[offsets[-1] + 3 :]
    elif damage == "torn_between":  # ... or after its first fragment (at a block's start)
        del data[offsets[-1] + B - offsets[-1] % B :]
    log.write_bytes(bytes(data))


def our_outcome(log: pathlib.Path, recovery: str) -> Outcome:
    """The contents our reader's records make in `recovery` mode (or "fails"), and its
    reports as (bytes dropped, reason)."""
    try:
        read = read_wal(log, recovery=recovery)
    except leveldb_log.CorruptionError:
        return "fails", []
    contents = expected_contents(ops for _, ops in decode_wal(read.records))
    return contents, [(c.size, c.reason) for c in read.reports]


def assert_same_outcome(
    ours: str, found: Outcome, recovered: Outcome, complete: dict[bytes, bytes]
) -> None:
    """Our reader keeps what RocksDB recovers, and reports what RocksDB logs."""
    assert found[0] == recovered[0], (
        ours,
        _summary(found[0], complete),
        _summary(recovered[0], complete),
    )
    logged = recovered[1]
    if ours == "point_in_time":
        # RocksDB's reader reads on to the next intact record before the recovery stops,
        # logging what it drops on the way; ours stops at the first.
        logged = logged[:1]
    assert found[1] == logged, ours


def _summary(outcome: dict[bytes, bytes] | str, complete: dict[bytes, bytes]) -> str:
    if isinstance(outcome, str):
        return outcome
    missing = sorted(set(complete) - set(outcome))
    return f"{len(outcome)} keys, missing {missing[:3]}...{missing[-2:]} ({len(missing)})"


def rocksdb_7_outcome(program: pathlib.Path, db: pathlib.Path, mode: str) -> Outcome:
    """What RocksDB 7.8 recovers in `mode` (on a copy), or "fails"; and what it logged."""
    copy = db.with_name(f"{db.name}-{mode}")
    shutil.copytree(db, copy)
    proc = subprocess.run(
        [str(program), "read", str(copy), "--mode", mode], capture_output=True, text=True
    )
    if proc.returncode != 0:
        assert "Corruption" in proc.stderr, proc.stderr
        return "fails", []
    contents = {
        bytes.fromhex(key): bytes.fromhex(value)
        for cf, key, value in (line.split("\t") for line in proc.stdout.splitlines()[:-1])
        if cf == "0"
    }
    # 7.8's text for EOF inside a fragmented record; 9.x adds " due to encountering EOF"
    logged = [
        (
            size,
            reason + " due to encountering EOF"
            if reason == "error reading trailing data"
            else reason,
        )
        for size, reason in rocksdb_reports(copy, "000004.log")
    ]
    return contents, logged


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("recycle", [False, True], ids=["plain", "recycled"])
def test_recovery_modes_keep_and_report_what_rocksdb_7_8_does(
    tmp_path: pathlib.Path, rocksdb_wal: pathlib.Path, damage: str, recycle: bool
) -> None:
    db = tmp_path / "db"
    written = damage_workload()
    rocksdb_7_write(rocksdb_wal, db, written, *(["--recycle"] if recycle else []))
    log = db / "000004.log"
    assert log.read_bytes()[6] == (5 if recycle else 1)
    damage_wal(log, damage, written)
    for ours, theirs in MODES.items():
        recovered = rocksdb_7_outcome(rocksdb_wal, db, theirs)
        assert_same_outcome(ours, our_outcome(log, ours), recovered, expected_contents(written))


RD_MODES = {
    "skip": "skip_any_corrupted_record",
    "tolerate_tail": "tolerate_corrupted_tail_records",
    "point_in_time": "point_in_time",
    "absolute": "absolute_consistency",
}


def rocksdb_9_outcome(db: pathlib.Path, mode: str, recycle: bool) -> Outcome:
    """What RocksDB 9.x recovers in `mode` (on a copy), or "fails"; and what it logged."""
    copy = db.with_name(f"{db.name}-{mode}")
    shutil.copytree(db, copy)
    try:
        reopened = RocksDict(copy, recycle=recycle, mode=mode)
    except Exception as e:  # rocksdict raises Exception with RocksDB's status text
        assert "Corruption" in str(e), e
        return "fails", []
    try:
        contents = reopened.contents(0)
    finally:
        reopened.close()
    return contents, rocksdb_reports(copy, "000004.log")


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("recycle", [False, True], ids=["plain", "recycled"])
def test_recovery_modes_keep_and_report_what_rocksdb_9_does(
    tmp_path: pathlib.Path, damage: str, recycle: bool
) -> None:
    written = damage_workload()
    db = RocksDict(tmp_path / "live", recycle=recycle, mode="skip_any_corrupted_record")
    for batch in written:
        db.apply(batch)
    shutil.copytree(tmp_path / "live", tmp_path / "db")  # the WAL as the open database has it
    db.close()
    log = tmp_path / "db" / "000004.log"
    assert log.read_bytes()[6] == (5 if recycle else 1)
    damage_wal(log, damage, written)
    for ours, theirs in RD_MODES.items():
        recovered = rocksdb_9_outcome(tmp_path / "db", theirs, recycle)
        assert_same_outcome(ours, our_outcome(log, ours), recovered, expected_contents(written))
