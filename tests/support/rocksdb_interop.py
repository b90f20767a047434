"""What the tests against real RocksDB share: tests/interop/test_rocksdb9_interop.py (RocksDB 9.x,
the copy inside rocksdict's wheel) and tests/interop/test_rocksdb78_interop.py (Debian's 7.8).

Our side of them: WALs read with ``Reader(dialect="rocksdb")`` and their WriteBatches
decoded with ``leveldb_log.rocksdb``, batches encoded here by hand (independently of
``leveldb_log.rocksdb``) and written with ``Writer(dialect="rocksdb")``; the workloads both
RocksDB versions are given; what RocksDB leaves (the corruptions its LOG reports, its
MANIFEST); and the damage done to a WAL whose recovery both sides are compared on.
"""

from __future__ import annotations

import dataclasses
import pathlib
import random
import re
import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import leveldb_log

from support.wire import varint, varstring

# ---------------------------------------------------------------------------
# our side: reading, decoding, encoding
# ---------------------------------------------------------------------------

B = leveldb_log.BLOCK_SIZE

# An operation as the tests write it (and compare it, after normalising what decoders
# and ldb say): ("put", cf, key, value), ("delete", cf, key), ("single_delete", cf, key),
# ("merge", cf, key, value), ("delete_range", cf, begin, end), ("entity", cf, key),
# ("log_data", blob).
Op = tuple[Any, ...]
Batch = tuple[Op, ...]


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
    """(sequence, count) of a WriteBatch, read here without the decoder (struct.error for a
    record shorter than that header)."""
    sequence, count = struct.unpack_from("<QI", record)
    return sequence, count


def normalise_op(op: object) -> Op:
    """A decoded operation of leveldb_log.rocksdb as the tuple the tests write."""
    from leveldb_log import rocksdb

    if isinstance(op, rocksdb.LogData):
        return ("log_data", op.data)
    if isinstance(op, rocksdb.DeleteRange):
        return ("delete_range", op.cf, op.start, op.end)
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


def decode_wal_asserting_headers(records: Sequence[bytes]) -> list[tuple[int, Batch]]:
    """(sequence, operations) of every WriteBatch, through leveldb_log.rocksdb, asserting that
    the decoder's sequence and count are those of the header read by hand."""
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
            out += b"\x03" + varstring(fields[0])
            continue
        cf, *strings = fields
        plain, with_cf = _TAGS[kind]
        out += bytes([with_cf]) + varint(cf) if cf else bytes([plain])
        for s in strings:
            out += varstring(s)
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


def current_wal(db: pathlib.Path) -> pathlib.Path:
    """The WAL a closed database replays first: the one with the highest number."""
    return wal_files(db)[-1]


def write_our_wal_asserting_the_encoder(
    log: pathlib.Path, first: int, batches: Sequence[Batch], **options: Any
) -> None:
    """Our WAL at `log`: the batches numbered from `first`, encoded by hand, asserting that
    leveldb_log.rocksdb.encode_write_batch encodes each the same."""
    from leveldb_log.rocksdb import encode_write_batch

    with leveldb_log.Writer(log, dialect="rocksdb", **options) as w:
        sequence = first
        for ops in batches:
            record = encode_batch(sequence, ops)
            assert encode_write_batch(sequence, as_operations(ops)) == record
            w.write(record)
            sequence += counted(ops)


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
# what RocksDB leaves: the corruptions its LOG reports, its MANIFEST
# ---------------------------------------------------------------------------

CF_NAMES = ("default", "one", "two")


def rocksdb_reports(db: pathlib.Path, wal: str) -> list[tuple[int, str]]:
    """(bytes dropped, reason) for each corruption RocksDB's recovery logged about `wal` in
    the database's LOG ("<path>/NNNNNN.log: dropping N bytes; Corruption: REASON")."""
    found = re.findall(
        re.escape(wal) + r": dropping (\d+) bytes; Corruption: (.*)",
        (db / "LOG").read_text(errors="replace"),
    )
    return [(int(size), reason.strip()) for size, reason in found]


def manifest_edits_asserting_both_dialects_agree(db: pathlib.Path) -> list[Any]:
    """The VersionEdits of the database's MANIFEST, asserting that both dialects (a MANIFEST
    uses LevelDB's record types only) read the same, with nothing reported."""
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


def replay_manifest_asserting_file_metadata(
    edits: Sequence[Any],
) -> tuple[dict[int, str], dict[int, int]]:
    """Column family names by id, and live table files (number -> size) after the edits,
    asserting that each new file has the tag, key range and times RocksDB writes."""
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


# ---------------------------------------------------------------------------
# damage: a WAL damaged, and what each side keeps and reports
# ---------------------------------------------------------------------------

Outcome = tuple[dict[bytes, bytes] | str, list[tuple[int, str]]]

DAMAGES = ["checksum", "torn_record", "torn_header", "torn_between"]


def damage_workload() -> list[Batch]:
    """60 single puts of 3,000 bytes (about 10 a block) and a last one of 3 blocks."""
    rng = random.Random(50)
    written: list[Batch] = [(("put", 0, b"key-%03d" % i, rng.randbytes(3000)),) for i in range(60)]
    written.append((("put", 0, b"last", rng.randbytes(3 * B)),))
    return written


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


def damage_wal_asserting_its_layout(
    log: pathlib.Path, damage: str, written: Sequence[Batch]
) -> None:
    """Flip a payload byte of record 20, or cut the file in or before the last record, after
    asserting that records 20 and the last are where record_offsets says."""
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


def our_outcome_asserting_headers(log: pathlib.Path, recovery: str) -> Outcome:
    """The contents our reader's records make in `recovery` mode (or "fails"), and its
    reports as (bytes dropped, reason); decode_wal_asserting_headers decodes the records."""
    try:
        read = read_wal(log, recovery=recovery)
    except leveldb_log.CorruptionError:
        return "fails", []
    contents = expected_contents(ops for _, ops in decode_wal_asserting_headers(read.records))
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
