"""Interoperability with real RocksDB 7.8: Debian's librocksdb-dev (through the C++ driver
tests/interop/rocksdb_wal.cc) and rocksdb-tools (ldb), installed with apt-get when missing.

RocksDB -> us: WALs written by RocksDB 7.8, plain, recycled and zstd-compressed, are read
with ``Reader(dialect="rocksdb")`` and their WriteBatches decoded with
``leveldb_log.rocksdb``; they must hold exactly the writes made, in order, with
consecutive sequence numbers, and nothing may be reported.

Us -> RocksDB: WALs written with ``Writer(dialect="rocksdb")`` (plain, recycled,
compressed) in place of a closed database's current WAL are replayed when RocksDB opens
the database; the keys are then visible, and the MANIFEST lists the live table files.

Debian's ``ldb dump_wal --print_value`` and ``leveldb-log dump --dialect rocksdb --decode``
agree on the operations of the same WALs. Damaged WALs: our reader keeps and reports, in
each recovery mode, what RocksDB 7.8's recovery does.

The helpers both RocksDB versions' tests use are in tests/support/rocksdb_interop.py; RocksDB 9.x
(inside rocksdict's wheel) is tested in tests/interop/test_rocksdb9_interop.py.
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

import pytest
from support import database_folders
from support import rocksdb_interop as interop

HERE = pathlib.Path(__file__).resolve().parent


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
    # pytest-xdist's workers each run this fixture: one installs while the others wait.
    with open(os.path.join(tempfile.gettempdir(), "leveldb-log-apt.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _debian_rocksdb_missing():
            return None
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
    source = HERE / "rocksdb_wal.cc"
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


def _hex_op(op: interop.Op) -> str:
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
    program: pathlib.Path, db: pathlib.Path, batches: Sequence[interop.Batch], *flags: str
) -> None:
    """A database written by RocksDB 7.8 with the column families CF_NAMES, left unflushed."""
    lines = "".join(" ".join(_hex_op(op) for op in batch) + "\n" for batch in batches)
    cfs = [arg for name in interop.CF_NAMES[1:] for arg in ("--cf", name)]
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
    contents: list[dict[bytes, bytes]] = [{} for _ in interop.CF_NAMES]
    *entries, last = proc.stdout.splitlines()
    for line in entries:
        cf, key, value = line.split("\t")
        contents[int(cf)][bytes.fromhex(key)] = bytes.fromhex(value)
    assert last.startswith("sequence ")
    return contents, int(last.split()[1])


# ---------------------------------------------------------------------------
# ldb dump_wal and our CLI's dump of the same WAL
# ---------------------------------------------------------------------------


def run_cli(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "leveldb_log", *args], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


_LDB_KINDS = {
    "PUT": "put",
    "DELETE": "delete",
    "SINGLE_DELETE": "single_delete",
    "MERGE": "merge",
    "DELETE_RANGE": "delete_range",
}

_LDB_OP = re.compile(r"([A-Z_]+)\((\d+)\) : 0x([0-9A-F]*)(?: : 0x([0-9A-F]*)| 0x([0-9A-F]*))?")


def ldb_dump_wal(path: pathlib.Path) -> list[tuple[int, interop.Batch]]:
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


def our_dump(path: pathlib.Path) -> list[tuple[int, interop.Batch]]:
    """(sequence, operations) per batch as `leveldb-log dump --dialect rocksdb --decode
    --format hex` prints them ("--- offset N; sequence S", then lines such as
    "  put cf=1 'KEY' 'VALUE'"), without LogData, as ldb_dump_wal returns them."""
    out: list[tuple[int, interop.Batch]] = []
    ops: list[interop.Op] = []
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


def as_ldb_prints(batches: Sequence[interop.Batch], first: int) -> list[tuple[int, interop.Batch]]:
    """What ldb_dump_wal returns for these batches: sequences, and no LogData."""
    out = []
    for batch in batches:
        out.append((first, tuple(op for op in batch if op[0] != "log_data")))
        first += interop.counted(batch)
    return out


# ---------------------------------------------------------------------------
# writes both ways
# ---------------------------------------------------------------------------


def debian_workload(seed: int, n: int) -> list[interop.Batch]:
    """Column families, merges, single deletes, range deletes, large values, LogData."""
    batches = list(interop.workload(seed, n, cfs=3, merges=True, single_deletes=True))
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
    (log,) = interop.wal_files(tmp_path)
    data = log.read_bytes()
    if "--zstd" in flags:  # the SetCompression record: 7-byte header, fixed32 7 (zstd)
        assert data[4:11] == b"\x04\x00\x09\x07\x00\x00\x00"
    first_type = data[17 if "--zstd" in flags else 6]
    assert first_type in ((5, 6) if "--recycle" in flags else (1, 2))  # FULL or FIRST
    ldb = ldb_dump_wal(log)
    assert ldb == as_ldb_prints(written, first=1)
    read = interop.read_wal(log)
    assert read.reports == []
    assert read.compression == ("zstd" if "--zstd" in flags else None)
    interop.assert_batches(interop.decode_wal_asserting_headers(read.records), written, first=1)
    assert our_dump(log) == ldb  # our CLI prints what ldb prints
    contents, last = rocksdb_7_read(rocksdb_wal, tmp_path)
    assert last == sum(interop.counted(b) for b in written)
    for cf in range(3):
        assert contents[cf] == interop.expected_contents(written, cf)


@pytest.mark.parametrize("compression", [None, "zstd"])
@pytest.mark.parametrize("recycle", [False, True], ids=["plain", "recycled"])
def test_rocksdb_7_8_replays_a_wal_we_wrote(
    tmp_path: pathlib.Path, rocksdb_wal: pathlib.Path, compression: str | None, recycle: bool
) -> None:
    theirs = debian_workload(seed=41, n=200)
    rocksdb_7_write(rocksdb_wal, tmp_path, theirs)
    _, last = rocksdb_7_read(rocksdb_wal, tmp_path)  # their WAL becomes tables
    log = interop.current_wal(tmp_path)
    assert log.stat().st_size == 0
    ours = debian_workload(seed=42, n=800)
    interop.write_our_wal_asserting_the_encoder(
        log, last + 1, ours, compression=compression, recycle=recycle
    )
    ldb = ldb_dump_wal(log)
    assert ldb == as_ldb_prints(ours, first=last + 1)
    contents, new_last = rocksdb_7_read(rocksdb_wal, tmp_path)
    assert new_last == last + sum(interop.counted(b) for b in ours)
    for cf in range(3):
        assert contents[cf] == interop.expected_contents(theirs + ours, cf)
    families, live = interop.replay_manifest_asserting_file_metadata(
        interop.manifest_edits_asserting_both_dialects_agree(tmp_path)
    )
    assert families == dict(enumerate(interop.CF_NAMES)) and live == interop.table_files(tmp_path)


# ---------------------------------------------------------------------------
# damage: our reader's recovery modes against RocksDB 7.8's
# ---------------------------------------------------------------------------

MODES = {
    "skip": "skip",
    "tolerate_tail": "tolerate",
    "point_in_time": "pit",
    "absolute": "absolute",
}


def rocksdb_7_outcome(program: pathlib.Path, db: pathlib.Path, mode: str) -> interop.Outcome:
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
        for size, reason in interop.rocksdb_reports(copy, "000004.log")
    ]
    return contents, logged


@pytest.mark.parametrize("damage", interop.DAMAGES)
@pytest.mark.parametrize("recycle", [False, True], ids=["plain", "recycled"])
def test_recovery_modes_keep_and_report_what_rocksdb_7_8_does(
    tmp_path: pathlib.Path, rocksdb_wal: pathlib.Path, damage: str, recycle: bool
) -> None:
    db = tmp_path / "db"
    written = interop.damage_workload()
    rocksdb_7_write(rocksdb_wal, db, written, *(["--recycle"] if recycle else []))
    log = db / "000004.log"
    assert log.read_bytes()[6] == (5 if recycle else 1)
    interop.damage_wal_asserting_its_layout(log, damage, written)
    for ours, theirs in MODES.items():
        recovered = rocksdb_7_outcome(rocksdb_wal, db, theirs)
        interop.assert_same_outcome(
            ours,
            interop.our_outcome_asserting_headers(log, ours),
            recovered,
            interop.expected_contents(written),
        )


# ---------------------------------------------------------------------------
# a database folder, copied while RocksDB 7.8 has it open: read as its logs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("flags", [(), ("--recycle",)], ids=["plain", "recycled"])
def test_a_rocksdb_7_8_folder_copied_while_open_is_read_as_its_logs(
    tmp_path: pathlib.Path, rocksdb_wal: pathlib.Path, flags: tuple[str, ...]
) -> None:
    written = debian_workload(seed=42, n=300)
    copy = tmp_path / "copy"
    rocksdb_7_write(rocksdb_wal, tmp_path / "db", written, *flags, "--copy-to", str(copy))
    assert {"CURRENT", "IDENTITY", "LOCK", "LOG"} <= set(os.listdir(copy))
    logs = database_folders.logs_listed(copy)
    # a WAL without recycling is framed as LevelDB's, exactly: told so
    records = database_folders.read_logs(logs, "rocksdb" if flags else "leveldb")
    interop.assert_batches(interop.decode_wal_asserting_headers(records), written, first=1)
    database_folders.assert_cli_agrees(copy, records, len(logs))
