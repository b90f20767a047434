"""Interoperability with real LevelDB (the copy bundled in plyvel's wheel).

LevelDB -> us: databases written with plyvel; their write-ahead log (NNNNNN.log) and
MANIFEST are read with Reader and decoded with leveldb_log.leveldb, and must hold exactly
the writes made, in order, with consecutive sequence numbers.

Us -> LevelDB: WriteBatch records written with Writer into a closed database's current
log, which LevelDB replays when it opens the database (with paranoid_checks, so any
corruption it sees fails the open).

What LevelDB does with its files (1.22, as bundled): a new database gets MANIFEST-000002
naming log 000003.log. Writes go to the log, one WriteBatch per record, flushed to the OS
after each write, so the log can be read while the database is open. Closing does not
flush the memtable: with a large write_buffer_size, the log keeps every write. Opening
replays every log numbered at or above the MANIFEST's log number, writes what it replayed
to a table file, and starts a new MANIFEST and a new, empty log.
"""

from __future__ import annotations

import os
import pathlib
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass

import leveldb_log
import pytest
from leveldb_log.leveldb import (
    Delete,
    Operation,
    Put,
    VersionEdit,
    WriteBatch,
    decode_version_edit,
    decode_write_batch,
    encode_write_batch,
)
from support import database_folders
from support.warned import READS_DAMAGE

plyvel = pytest.importorskip("plyvel")

B = leveldb_log.BLOCK_SIZE
BIG_MEMTABLE = 256 << 20  # the memtable is never flushed during a test


def open_db(path: pathlib.Path, **options: object) -> plyvel.DB:
    return plyvel.DB(str(path), create_if_missing=True, write_buffer_size=BIG_MEMTABLE, **options)


# ---------------------------------------------------------------------------
# reading a database directory: the recipe of the README
# ---------------------------------------------------------------------------


def manifest_path(db: pathlib.Path) -> pathlib.Path:
    return db / (db / "CURRENT").read_text().strip()


def manifest_edits(db: pathlib.Path) -> list[VersionEdit]:
    with leveldb_log.Reader(manifest_path(db), recovery="absolute") as r:
        return [decode_version_edit(record) for record in r]


@dataclass
class DbState:
    log_number: int
    last_sequence: int  # in the MANIFEST
    next_file_number: int
    live_files: dict[int, int]  # table number -> size, after replaying every edit


def db_state(db: pathlib.Path) -> DbState:
    state = DbState(0, 0, 0, {})
    for edit in manifest_edits(db):
        state.log_number = edit.log_number if edit.log_number is not None else state.log_number
        if edit.last_sequence is not None:
            state.last_sequence = edit.last_sequence
        if edit.next_file_number is not None:
            state.next_file_number = edit.next_file_number
        for deleted in edit.deleted_files:
            del state.live_files[deleted.number]
        for f in edit.new_files:
            state.live_files[f.number] = f.file_size
    return state


def wal_path(db: pathlib.Path) -> pathlib.Path:
    return db / f"{db_state(db).log_number:06d}.log"


def wal_batches(path: pathlib.Path) -> list[WriteBatch]:
    with leveldb_log.Reader(path, recovery="absolute") as r:
        return [decode_write_batch(record) for record in r]


def last_sequence(db: pathlib.Path) -> int:
    """The database's last sequence: the MANIFEST's, or the last one used in the log."""
    last = db_state(db).last_sequence
    for batch in wal_batches(wal_path(db)):
        last = max(last, batch.sequence + batch.count - 1)
    return last


def table_files(db: pathlib.Path) -> dict[int, int]:
    return {
        int(name.split(".")[0]): (db / name).stat().st_size
        for name in os.listdir(db)
        if name.endswith((".ldb", ".sst"))
    }


# ---------------------------------------------------------------------------
# a random workload
# ---------------------------------------------------------------------------

VALUE_SIZES = [0, 1, 100, 1000, B - 20, B, 2 * B + 5, 3 * B + 1234, 5 * B]


def value(rng: random.Random, size: int) -> bytes:
    return rng.randbytes(size)


def workload(seed: int, n_writes: int) -> Iterator[tuple[Operation, ...]]:
    """Batches: single puts and deletes (as db.put / db.delete make) and multi-op batches."""
    rng = random.Random(seed)
    for i in range(n_writes):
        key = b"key-%05d" % rng.randrange(n_writes)
        choice = rng.random()
        if choice < 0.6:
            size = rng.choice(VALUE_SIZES) if rng.random() < 0.05 else rng.randrange(50)
            yield (Put(key, value(rng, size)),)
        elif choice < 0.8:
            yield (Delete(key),)
        else:
            ops: list[Operation] = []
            for j in range(rng.randrange(1, 20)):
                k = b"batch-%05d-%02d" % (i, j)
                ops.append(
                    Delete(k) if rng.random() < 0.2 else Put(k, value(rng, rng.randrange(300)))
                )
            yield tuple(ops)


def apply(db: plyvel.DB, batch: tuple[Operation, ...]) -> None:
    if len(batch) == 1 and isinstance(batch[0], Put):
        db.put(batch[0].key, batch[0].value)
    elif len(batch) == 1:
        db.delete(batch[0].key)
    else:
        with db.write_batch() as wb:
            for op in batch:
                if isinstance(op, Put):
                    wb.put(op.key, op.value)
                else:
                    wb.delete(op.key)


def expected_contents(batches: list[tuple[Operation, ...]]) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    for batch in batches:
        for op in batch:
            if isinstance(op, Put):
                out[op.key] = op.value
            else:
                out.pop(op.key, None)
    return out


def assert_batches(
    found: list[WriteBatch], written: list[tuple[Operation, ...]], first: int
) -> None:
    """Every batch present, in order, numbered consecutively from `first`."""
    assert [b.ops for b in found] == written
    sequence = first
    for batch in found:
        assert batch.sequence == sequence
        sequence += batch.count


# ---------------------------------------------------------------------------
# LevelDB -> us
# ---------------------------------------------------------------------------


def test_wal_of_leveldb_holds_every_write_in_order(tmp_path: pathlib.Path) -> None:
    written = list(workload(seed=1, n_writes=3000))
    db = open_db(tmp_path)
    half = len(written) // 2
    for batch in written[:half]:
        apply(db, batch)
    # While the database is open: LevelDB hands each record to the OS as it writes it.
    log = wal_path(tmp_path)
    assert log.name == "000003.log"
    reader = leveldb_log.Reader(log, recovery="absolute")
    first_half = [decode_write_batch(r) for r in reader]
    assert_batches(first_half, written[:half], first=1)
    for batch in written[half:]:
        apply(db, batch)
    # The same reader follows the growing log.
    second_half = [decode_write_batch(r) for r in reader]
    reader.close()
    assert_batches(first_half + second_half, written, first=1)
    db.close()
    # Closing leaves the log as it was: every write is still there, and nothing else.
    found = wal_batches(log)
    assert_batches(found, written, first=1)
    assert os.path.getsize(log) > 8 * B  # values of several blocks: FIRST/MIDDLE/LAST used
    assert any(sum(len(op.value) for op in b.ops if isinstance(op, Put)) > 3 * B for b in found)
    # And LevelDB agrees with the decoded batches about the contents.
    db = open_db(tmp_path)
    assert dict(db.iterator()) == expected_contents(written)
    db.close()


def test_manifest_of_leveldb_decodes_and_lists_the_live_tables(tmp_path: pathlib.Path) -> None:
    # Several sessions: each reopening turns the previous log into a table; then a manual
    # compaction merges them (deleted files, new files and compact pointers in the MANIFEST).
    rng = random.Random(2)
    for session in range(4):
        db = open_db(tmp_path)
        for i in range(500):
            db.put(b"k%04d" % rng.randrange(2000), b"v%d-%d" % (session, i))
        db.delete(b"k0000")
        db.close()
    db = open_db(tmp_path)
    # The range is named: plyvel passes empty keys for bounds left out, and a compaction of
    # the range ["", ""] merges nothing. The merge would then be up to LevelDB's own
    # background compaction of the four level-0 tables, which close() may stop before it
    # begins. compact_range over every key returns once the merge is in the MANIFEST.
    db.compact_range(start=b"k0000", stop=b"k1999")
    db.close()

    edits = manifest_edits(tmp_path)
    assert edits[0].comparator == "leveldb.BytewiseComparator"
    assert any(edit.deleted_files for edit in edits)
    assert any(edit.compact_pointers for edit in edits)
    assert any(f.level > 0 for edit in edits for f in edit.new_files)
    for edit in edits:
        for f in edit.new_files:
            assert f.smallest.user_key <= f.largest.user_key
            assert f.smallest.value_type in (0, 1) and f.largest.value_type in (0, 1)
    state = db_state(tmp_path)
    assert state.live_files == table_files(tmp_path)
    assert (tmp_path / f"{state.log_number:06d}.log").exists()
    assert state.next_file_number > max(state.live_files)
    # 4 sessions of 501 single-operation writes; reopening and compacting use no sequence.
    assert state.last_sequence == 4 * 501


# ---------------------------------------------------------------------------
# us -> LevelDB
# ---------------------------------------------------------------------------


def closed_db_with_writes(path: pathlib.Path, batches: list[tuple[Operation, ...]]) -> None:
    db = open_db(path)
    for batch in batches:
        apply(db, batch)
    db.close()


def our_batches(seed: int, n: int, first_sequence: int) -> list[tuple[int, tuple[Operation, ...]]]:
    out = []
    sequence = first_sequence
    for ops in workload(seed, n):
        out.append((sequence, ops))
        sequence += len(ops)
    return out


def reopen_and_read(path: pathlib.Path) -> dict[bytes, bytes]:
    db = plyvel.DB(str(path), paranoid_checks=True)
    try:
        return dict(db.iterator())
    finally:
        db.close()


def test_leveldb_replays_a_log_we_wrote_in_place_of_its_own(tmp_path: pathlib.Path) -> None:
    theirs = list(workload(seed=3, n_writes=300))
    closed_db_with_writes(tmp_path, theirs)
    plyvel.DB(str(tmp_path)).close()  # their log becomes a table; the new log is empty
    log = wal_path(tmp_path)
    assert log.stat().st_size == 0
    first = last_sequence(tmp_path) + 1
    assert first == 1 + sum(len(b) for b in theirs)

    ours = our_batches(seed=4, n=2000, first_sequence=first)
    with leveldb_log.Writer(log) as w:  # mode "w": replace the log
        for sequence, ops in ours:
            w.write(encode_write_batch(sequence, ops))
    assert reopen_and_read(tmp_path) == expected_contents(theirs + [ops for _, ops in ours])


def test_leveldb_replays_batches_we_append_to_its_log(tmp_path: pathlib.Path) -> None:
    theirs = list(workload(seed=5, n_writes=500))
    closed_db_with_writes(tmp_path, theirs)
    log = wal_path(tmp_path)
    first = last_sequence(tmp_path) + 1
    ours = our_batches(seed=6, n=500, first_sequence=first)
    # Several appending sessions, each resuming block alignment from the file's length.
    for chunk in (ours[:100], ours[100:101], ours[101:]):
        with leveldb_log.Writer(log, "a") as w:
            for sequence, ops in chunk:
                w.write(encode_write_batch(sequence, ops))
    assert_batches(wal_batches(log), theirs + [ops for _, ops in ours], first=1)
    assert reopen_and_read(tmp_path) == expected_contents(theirs + [ops for _, ops in ours])


def test_our_batches_win_over_older_values_because_sequences_continue(
    tmp_path: pathlib.Path,
) -> None:
    closed_db_with_writes(tmp_path, [(Put(b"a", b"old"),), (Put(b"b", b"old"),)])
    plyvel.DB(str(tmp_path)).close()  # the old values are now in a table
    first = last_sequence(tmp_path) + 1
    assert first == 3
    with leveldb_log.Writer(wal_path(tmp_path), "a") as w:
        w.write(encode_write_batch(first, [Put(b"a", b"new"), Delete(b"b")]))
    assert reopen_and_read(tmp_path) == {b"a": b"new"}


@pytest.mark.parametrize("cut", ["header", "payload", "fragment"])
def test_leveldb_opens_a_log_we_wrote_with_a_torn_tail(tmp_path: pathlib.Path, cut: str) -> None:
    closed_db_with_writes(tmp_path, [(Put(b"theirs", b"1"),)])
    log = wal_path(tmp_path)
    first = last_sequence(tmp_path) + 1
    ours = our_batches(seed=7, n=200, first_sequence=first)
    last_value = b"L" * (3 * B if cut == "fragment" else 100)
    ours.append((ours[-1][0] + len(ours[-1][1]), (Put(b"torn", last_value),)))
    with leveldb_log.Writer(log, "a") as w:
        offsets = [w.write(encode_write_batch(seq, ops)) for seq, ops in ours]
    size = log.stat().st_size
    torn_at = {"header": offsets[-1] + 3, "payload": size - 10, "fragment": offsets[-1] + B}[cut]
    os.truncate(log, torn_at)

    complete = [(Put(b"theirs", b"1"),)] + [ops for _, ops in ours[:-1]]
    assert reopen_and_read(tmp_path) == expected_contents(complete)


def test_append_mode_cuts_a_torn_tail_so_leveldb_sees_every_batch(
    tmp_path: pathlib.Path,
) -> None:
    closed_db_with_writes(tmp_path, [(Put(b"theirs", b"1"),)])
    log = wal_path(tmp_path)
    first = last_sequence(tmp_path) + 1
    with leveldb_log.Writer(log, "a") as w:
        w.write(encode_write_batch(first, [Put(b"complete", b"yes")]))
        torn = w.write(encode_write_batch(first + 1, [Put(b"torn", b"x" * 50_000)]))
    os.truncate(log, torn + B)  # the crash: the record's second fragment is missing
    # Appending after the torn record would otherwise make it mid-log damage.
    with leveldb_log.Writer(log, "a") as w:
        w.write(encode_write_batch(first + 1, [Put(b"after", b"crash")]))
    assert reopen_and_read(tmp_path) == {b"theirs": b"1", b"complete": b"yes", b"after": b"crash"}


@READS_DAMAGE
def test_leveldb_refuses_our_log_with_paranoid_checks_when_it_is_damaged_mid_file(
    tmp_path: pathlib.Path,
) -> None:
    # The control experiment: LevelDB really checks what we write.
    closed_db_with_writes(tmp_path, [(Put(b"theirs", b"1"),)])
    log = wal_path(tmp_path)
    first = last_sequence(tmp_path) + 1
    with leveldb_log.Writer(log, "a") as w:
        offsets = [
            w.write(encode_write_batch(first + i, [Put(b"k%d" % i, b"v")])) for i in range(3)
        ]
    data = bytearray(log.read_bytes())
    data[offsets[1] + leveldb_log.HEADER_SIZE + 1] ^= 0x40
    log.write_bytes(bytes(data))
    with pytest.raises(plyvel.CorruptionError):
        plyvel.DB(str(tmp_path), paranoid_checks=True)
    # Without paranoid checks LevelDB drops the rest of the block, as Reader does.
    with leveldb_log.Reader(log) as r:
        kept = [decode_write_batch(rec) for rec in r]
    db = plyvel.DB(str(tmp_path))
    try:
        assert len(kept) == 2
        assert dict(db.iterator()) == {b"theirs": b"1", b"k0": b"v"}
    finally:
        db.close()


# ---------------------------------------------------------------------------
# a database folder, copied while the database is open: read as its logs
# ---------------------------------------------------------------------------


def test_a_leveldb_folder_copied_while_open_is_read_as_its_logs(tmp_path: pathlib.Path) -> None:
    written = list(workload(seed=7, n_writes=600))
    db = open_db(tmp_path / "db")
    for batch in written[:300]:
        apply(db, batch)
    db.compact_range()  # the memtable into a table file, and a new log
    for batch in written[300:]:
        apply(db, batch)
    shutil.copytree(tmp_path / "db", tmp_path / "copy")  # open, the last writes in its log
    db.close()
    copy = tmp_path / "copy"
    assert table_files(copy) and (copy / "LOG").exists() and (copy / "LOCK").exists()
    logs = database_folders.logs_listed(copy)
    records = database_folders.read_logs(logs, "leveldb")
    assert [decode_write_batch(r).ops for r in records] == written[300:]
    database_folders.assert_cli_agrees(copy, records, len(logs))
    manifest, *rest = leveldb_log.database_logs(copy, manifest=True)
    assert rest == logs and manifest == str(manifest_path(copy))
    with leveldb_log.Reader(manifest, dialect="auto", recovery="absolute") as r:
        edits = [decode_version_edit(record) for record in r]
    assert r.dialect == "leveldb" and edits[0].comparator == "leveldb.BytewiseComparator"
    log_numbers = [e.log_number for e in edits if e.log_number is not None]
    assert f"{log_numbers[-1]:06d}.log" == os.path.basename(logs[-1])
