"""Interoperability with real RocksDB 9.x: the copy inside rocksdict's wheel.

RocksDB -> us: databases written by RocksDB; their write-ahead logs (NNNNNN.log), plain
and recycled, are read with ``Reader(dialect="rocksdb")`` and their WriteBatches decoded
with ``leveldb_log.rocksdb``; they must hold exactly the writes made, in order, with
consecutive sequence numbers, and nothing may be reported. MANIFESTs after flushes and
compactions decode, and list the live table files.

Us -> RocksDB: WALs written with ``Writer(dialect="rocksdb")`` (plain, recycled,
compressed) in place of a closed database's current WAL are replayed when RocksDB opens
the database; the keys are then visible. Damaged WALs: our reader keeps and reports, in
each recovery mode, what RocksDB's recovery does.

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

The helpers both RocksDB versions' tests use are in tests/support/rocksdb_interop.py; RocksDB 7.8
(Debian's) is tested in tests/interop/test_rocksdb78_interop.py.
"""

from __future__ import annotations

import pathlib
import shutil
from typing import Any

import pytest
from support import database_folders
from support import rocksdb_interop as interop

BIG_MEMTABLE = 256 << 20  # no flush unless the test asks for one


# ---------------------------------------------------------------------------
# RocksDB 9.x through rocksdict
# ---------------------------------------------------------------------------


def rocksdict_module() -> Any:
    return pytest.importorskip(
        "rocksdict", reason="rocksdict (RocksDB 9.x) has no wheel for this platform"
    )


class RocksDict:
    """A rocksdict database with the column families CF_NAMES (ids 0, 1, 2)."""

    def __init__(
        self,
        path: pathlib.Path,
        *,
        recycle: bool = False,
        mode: str = "point_in_time",
        wal_ttl: int = 0,
    ) -> None:
        rd = rocksdict_module()
        self.rd = rd
        self.path = path
        options = self.options()
        options.create_if_missing(True)
        options.set_wal_recovery_mode(getattr(rd.DBRecoveryMode, mode)())
        if recycle:
            options.set_recycle_log_file_num(2)
        if wal_ttl:  # obsolete WALs are moved to archive/ and kept that long
            options.set_wal_ttl_seconds(wal_ttl)
        existing = rd.Rdict.list_cf(str(path)) if (path / "CURRENT").exists() else ["default"]
        families = {name: self.options() for name in existing if name != "default"}
        self.db = rd.Rdict(str(path), options, column_families=families)
        for name in interop.CF_NAMES[1:]:
            if name not in existing:  # created in order: ids 1, 2
                self.db.create_column_family(name, self.options())
        self.cfs = [self.db] + [self.db.get_column_family(name) for name in interop.CF_NAMES[1:]]

    def options(self) -> Any:
        options = self.rd.Options(raw_mode=True)
        options.set_write_buffer_size(BIG_MEMTABLE)
        options.set_disable_auto_compactions(True)
        return options

    def apply(self, batch: interop.Batch) -> None:
        """One write: a single put, delete or range delete as itself, else a WriteBatch."""
        if len(batch) == 1 and batch[0][0] in ("put", "delete", "delete_range"):
            kind, cf, *args = batch[0]
            getattr(self.cfs[cf], kind)(*args)
            return
        wb = self.rd.WriteBatch(raw_mode=True)
        for kind, cf, *args in batch:
            handle = self.db.get_column_family_handle(interop.CF_NAMES[cf])
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
    written = list(interop.workload(seed=1, n=1500, cfs=3))
    db = RocksDict(tmp_path / "db")
    half = len(written) // 2
    for batch in written[:half]:
        db.apply(batch)
    (log,) = interop.wal_files(tmp_path / "db")
    read = interop.read_wal(log)
    assert read.reports == []
    assert read.compression is None and read.log_number == int(log.stem)
    interop.assert_batches(
        interop.decode_wal_asserting_headers(read.records), written[:half], first=1
    )
    for batch in written[half:]:
        db.apply(batch)
    shutil.copytree(tmp_path / "db", tmp_path / "copy")  # the open database, as it is
    contents = [db.contents(cf) for cf in range(3)]
    db.close()
    read = interop.read_wal(tmp_path / "copy" / log.name)
    assert read.reports == []
    interop.assert_batches(interop.decode_wal_asserting_headers(read.records), written, first=1)
    assert (
        tmp_path / "copy" / log.name
    ).stat().st_size > 40 * interop.B  # values of up to 1 MiB: FIRST/MIDDLE/LAST used
    for cf in range(3):
        assert contents[cf] == interop.expected_contents(written, cf)
    # The copy is a database RocksDB opens, replaying the WAL we read.
    copy = RocksDict(tmp_path / "copy")
    assert [copy.contents(cf) for cf in range(3)] == contents
    copy.close()


def test_rocksdb_9_wide_column_entity_is_one_operation(tmp_path: pathlib.Path) -> None:
    db = RocksDict(tmp_path)
    db.cfs[1].put_entity(b"entity", [b"a", b"b"], [b"1", b"22"])
    db.apply((("put", 0, b"after", b"x"),))
    (log,) = interop.wal_files(tmp_path)
    read = interop.read_wal(log)
    db.close()
    assert read.reports == []
    assert interop.decode_wal_asserting_headers(read.records) == [
        (1, (("entity", 1, b"entity"),)),
        (2, (("put", 0, b"after", b"x"),)),
    ]


def recycled_database(
    path: pathlib.Path, rounds: list[list[interop.Batch]], mode: str = "point_in_time"
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


def uniform_round(r: int, n: int) -> list[interop.Batch]:
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
        log = interop.current_wal(copy)
        data = log.read_bytes()
        assert data[6] == 5  # recyclable FULL, even in a brand-new file
        assert int.from_bytes(data[7:11], "little") == int(log.stem)
        reused = r >= 2  # the file of round r-2's WAL, longer than what round r wrote
        assert reused == (data.count(b"r%d-" % (r - 2)) > 0)
        for recovery in ("point_in_time", "skip", "absolute", "tolerate_tail"):
            read = interop.read_wal(log, recovery=recovery)
            assert read.reports == [], (r, recovery)
            assert read.log_number == int(log.stem)
            interop.assert_batches(
                interop.decode_wal_asserting_headers(read.records), rounds[r], first=first
            )
        RocksDict(copy, recycle=True, mode=mode).close()  # RocksDB finds nothing wrong either
        assert interop.rocksdb_reports(copy, log.name) == []
        first += len(rounds[r])
    # Closing flushed into a new WAL, a reused file in which RocksDB wrote nothing: it
    # still holds an older log's records from offset 0, none of them this log's.
    log = interop.current_wal(tmp_path / "db")
    data = log.read_bytes()
    assert data[6] == 5 and int.from_bytes(data[7:11], "little") < int(log.stem)
    for recovery in ("point_in_time", "skip"):
        read = interop.read_wal(log, recovery=recovery)
        assert (read.records, read.reports) == ([], [])


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
    rounds = [
        list(interop.workload(seed=10 + r, n=n, cfs=3)) for r, n in enumerate([600, 500, 150])
    ]
    copies = recycled_database(tmp_path / "db", rounds, mode)
    first = 1 + sum(interop.counted(b) for b in rounds[0] + rounds[1])
    log = interop.current_wal(copies[2])
    read = interop.read_wal(log, recovery=recovery)
    interop.assert_batches(
        interop.decode_wal_asserting_headers(read.records), rounds[2], first=first
    )
    copy = RocksDict(copies[2], recycle=True, mode=mode)
    try:
        for cf in range(3):
            assert copy.contents(cf) == interop.expected_contents(
                rounds[0] + rounds[1] + rounds[2], cf
            )
    finally:
        copy.close()
    theirs = interop.rocksdb_reports(copies[2], log.name)
    assert [reason for _, reason in theirs] == ["bad record length"]
    assert [(c.size, c.reason) for c in read.reports] == theirs


def test_manifest_of_rocksdb_9_after_flushes_and_compactions(tmp_path: pathlib.Path) -> None:
    db = RocksDict(tmp_path)
    for session in range(4):
        for batch in interop.workload(seed=20 + session, n=300, cfs=3):
            db.apply(batch)
        db.flush_all()
    for cf in db.cfs:
        cf.compact_range(None, None)
    db.close()
    edits = interop.manifest_edits_asserting_both_dialects_agree(tmp_path)
    families, live = interop.replay_manifest_asserting_file_metadata(edits)
    assert families == dict(enumerate(interop.CF_NAMES))
    assert live == interop.table_files(tmp_path)
    assert any(edit.deleted_files for edit in edits)  # the compactions
    assert all(f.epoch_number for edit in edits for f in edit.new_files)  # 9.x: custom field 13
    assert any(edit.min_log_number_to_keep for edit in edits)  # tag 10
    assert [e.comparator for e in edits if e.comparator] == ["leveldb.BytewiseComparator"] * 3
    assert sum(e.db_id is not None for e in edits) == 1


@pytest.mark.parametrize("compression", [None, "zstd"])
@pytest.mark.parametrize("recycle", [False, True], ids=["plain", "recycled"])
def test_rocksdb_9_replays_a_wal_we_wrote_in_place_of_its_own(
    tmp_path: pathlib.Path, recycle: bool, compression: str | None
) -> None:
    theirs = list(interop.workload(seed=30, n=300, cfs=3))
    db = RocksDict(tmp_path, recycle=recycle)
    for batch in theirs:
        db.apply(batch)
    first = db.db.latest_sequence_number() + 1
    db.close()  # every memtable flushed: the current WAL holds nothing RocksDB needs
    assert first == 1 + sum(interop.counted(b) for b in theirs)
    log = interop.current_wal(tmp_path)
    ours = list(interop.workload(seed=31, n=1500, cfs=3))
    interop.write_our_wal_asserting_the_encoder(
        log, first, ours, recycle=recycle, compression=compression
    )
    data = log.read_bytes()
    if compression:  # RocksDB reads a compressed WAL whatever its own wal_compression
        assert data[4:11] == b"\x04\x00\x09\x07\x00\x00\x00"
        data = data[11:]
    if recycle:
        assert data[6] == 5 and int.from_bytes(data[7:11], "little") == int(log.stem)
    db = RocksDict(tmp_path, recycle=recycle)
    try:
        for cf in range(3):
            assert db.contents(cf) == interop.expected_contents(theirs + ours, cf)
        assert db.db.latest_sequence_number() == first - 1 + sum(interop.counted(b) for b in ours)
    finally:
        db.close()


def test_rocksdb_9_refuses_our_wal_damaged_mid_file_in_absolute_mode(
    tmp_path: pathlib.Path,
) -> None:
    # The control experiment: RocksDB really reads and checks what we write.
    db = RocksDict(tmp_path)
    db.apply((("put", 0, b"theirs", b"1"),))
    db.close()
    log = interop.current_wal(tmp_path)
    interop.write_our_wal_asserting_the_encoder(
        log, 2, [(("put", 1, b"k%d" % i, b"v" * 100),) for i in range(3)]
    )
    data = bytearray(log.read_bytes())
    data[len(data) // 2] ^= 0x40
    log.write_bytes(bytes(data))
    rd = rocksdict_module()
    options = rd.Options(raw_mode=True)
    options.set_wal_recovery_mode(rd.DBRecoveryMode.absolute_consistency())
    families = {name: rd.Options(raw_mode=True) for name in interop.CF_NAMES[1:]}
    with pytest.raises(Exception, match=r"(?i)corrupt|checksum"):
        rd.Rdict(str(tmp_path), options, column_families=families)


# ---------------------------------------------------------------------------
# damage: our reader's recovery modes against RocksDB 9.x's
# ---------------------------------------------------------------------------

RD_MODES = {
    "skip": "skip_any_corrupted_record",
    "tolerate_tail": "tolerate_corrupted_tail_records",
    "point_in_time": "point_in_time",
    "absolute": "absolute_consistency",
}


def rocksdb_9_outcome(db: pathlib.Path, mode: str, recycle: bool) -> interop.Outcome:
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
    return contents, interop.rocksdb_reports(copy, "000004.log")


@pytest.mark.parametrize("damage", interop.DAMAGES)
@pytest.mark.parametrize("recycle", [False, True], ids=["plain", "recycled"])
def test_recovery_modes_keep_and_report_what_rocksdb_9_does(
    tmp_path: pathlib.Path, damage: str, recycle: bool
) -> None:
    written = interop.damage_workload()
    db = RocksDict(tmp_path / "live", recycle=recycle, mode="skip_any_corrupted_record")
    for batch in written:
        db.apply(batch)
    shutil.copytree(tmp_path / "live", tmp_path / "db")  # the WAL as the open database has it
    db.close()
    log = tmp_path / "db" / "000004.log"
    assert log.read_bytes()[6] == (5 if recycle else 1)
    interop.damage_wal_asserting_its_layout(log, damage, written)
    for ours, theirs in RD_MODES.items():
        recovered = rocksdb_9_outcome(tmp_path / "db", theirs, recycle)
        interop.assert_same_outcome(
            ours,
            interop.our_outcome_asserting_headers(log, ours),
            recovered,
            interop.expected_contents(written),
        )


# ---------------------------------------------------------------------------
# a database folder, copied while RocksDB 9.x has it open: read as its logs
# ---------------------------------------------------------------------------


def test_a_rocksdb_9_folder_copied_while_open_is_read_as_its_logs(tmp_path: pathlib.Path) -> None:
    """Tables, an archive/ of obsolete WALs, OPTIONS, IDENTITY: only the live WAL is read."""
    written = list(interop.workload(seed=11, n=400, cfs=3))
    db = RocksDict(tmp_path / "db", wal_ttl=3600)
    for batch in written[:200]:
        db.apply(batch)
    db.close()  # rocksdict flushes each column family: tables, the WAL archived
    db = RocksDict(tmp_path / "db", wal_ttl=3600)
    for batch in written[200:]:
        db.apply(batch)
    shutil.copytree(tmp_path / "db", tmp_path / "copy")  # open, the last writes in its WAL
    db.close()
    copy = tmp_path / "copy"
    names = {p.name for p in copy.iterdir()}
    assert any(n.endswith(".sst") for n in names) and (copy / "archive").is_dir()
    assert {"CURRENT", "IDENTITY", "LOCK", "LOG"} <= names
    assert any(n.startswith("OPTIONS-") for n in names)
    logs = database_folders.logs_listed(copy)
    records = database_folders.read_logs(logs, "leveldb")  # no recycling: LevelDB's framing
    first = 1 + sum(interop.counted(b) for b in written[:200])
    interop.assert_batches(interop.decode_wal_asserting_headers(records), written[200:], first)
    database_folders.assert_cli_agrees(copy, records, len(logs))


def test_a_recycling_rocksdb_9_folder_copied_while_open_is_read_as_its_logs(
    tmp_path: pathlib.Path,
) -> None:
    written = list(interop.workload(seed=12, n=300, cfs=3))
    db = RocksDict(tmp_path / "db", recycle=True)
    for batch in written:
        db.apply(batch)
    shutil.copytree(tmp_path / "db", tmp_path / "copy")
    db.close()
    logs = database_folders.logs_listed(tmp_path / "copy")
    records = database_folders.read_logs(logs, "rocksdb")
    with open(logs[-1], "rb") as f:
        assert f.read(7)[6] in (5, 6)  # recyclable FULL or FIRST: told as RocksDB's
    interop.assert_batches(interop.decode_wal_asserting_headers(records), written, first=1)
    database_folders.assert_cli_agrees(tmp_path / "copy", records, len(logs))
