"""RocksDB's WriteBatch and VersionEdit payloads (leveldb_log.rocksdb): golden bytes built by
hand from docs/rocksdb.md for every tag, round trips through encode_write_batch, and a
CorruptionError (never another exception) for every kind of malformed payload."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from leveldb_log import CorruptionError
from leveldb_log.rocksdb import (
    COUNTED,
    MAX_SEQUENCE,
    BeginPersistedPrepare,
    BeginPrepare,
    BeginUnprepare,
    BlobFileAddition,
    BlobFileGarbage,
    BlobIndex,
    Commit,
    CommitWithTimestamp,
    CompactPointer,
    Delete,
    DeletedFile,
    DeleteRange,
    EndPrepare,
    InternalKey,
    LogData,
    Merge,
    NewFile,
    Noop,
    Operation,
    Put,
    Rollback,
    SingleDelete,
    TimedPut,
    VersionEdit,
    WalAddition,
    WalDeletion,
    WideColumnEntity,
    WriteBatch,
    decode_version_edit,
    decode_write_batch,
    encode_write_batch,
)
from support.wire import varint
from support.wire import varstring as vs

# ---------------------------------------------------------------------------
# encoding helpers, written from the format description (not from the module)
# ---------------------------------------------------------------------------


def header(sequence: int, count: int) -> bytes:
    return struct.pack("<QI", sequence, count)


def ikey(user_key: bytes, sequence: int, value_type: int = 1) -> bytes:
    return user_key + struct.pack("<Q", sequence << 8 | value_type)


def raised(decode: Callable[[bytes], object], payload: bytes) -> Exception | None:
    """The exception decoding `payload` raised, or None if it decoded."""
    try:
        decode(payload)
    except Exception as e:
        return e
    return None


# ---------------------------------------------------------------------------
# WriteBatch: every tag, golden bytes
# ---------------------------------------------------------------------------

# (entry bytes, the operation) for every tag of the WriteBatch, in tag order.
GOLDEN_ENTRIES: list[tuple[str, bytes, Operation]] = [
    ("0x00 delete", b"\x00" + vs(b"k"), Delete(b"k")),
    ("0x01 put", b"\x01" + vs(b"k") + vs(b"v"), Put(b"k", b"v")),
    ("0x02 merge", b"\x02" + vs(b"k") + vs(b"+1"), Merge(b"k", b"+1")),
    ("0x03 log data", b"\x03" + vs(b"blob"), LogData(b"blob")),
    ("0x04 cf delete", b"\x04\x07" + vs(b"k"), Delete(b"k", cf=7)),
    ("0x05 cf put", b"\x05\x80\x01" + vs(b"k") + vs(b""), Put(b"k", b"", cf=128)),
    ("0x06 cf merge", b"\x06\x02" + vs(b"k") + vs(b"m"), Merge(b"k", b"m", cf=2)),
    ("0x07 single delete", b"\x07" + vs(b"k"), SingleDelete(b"k")),
    ("0x08 cf single delete", b"\x08\x03" + vs(b"k"), SingleDelete(b"k", cf=3)),
    ("0x09 begin prepare", b"\x09", BeginPrepare()),
    ("0x0a end prepare", b"\x0a" + vs(b"xid1"), EndPrepare(b"xid1")),
    ("0x0b commit", b"\x0b" + vs(b"xid1"), Commit(b"xid1")),
    ("0x0c rollback", b"\x0c" + vs(b"xid2"), Rollback(b"xid2")),
    ("0x0d noop", b"\x0d", Noop()),
    ("0x0e cf range delete", b"\x0e\x04" + vs(b"a") + vs(b"z"), DeleteRange(b"a", b"z", cf=4)),
    ("0x0f range delete", b"\x0f" + vs(b"a") + vs(b"m"), DeleteRange(b"a", b"m")),
    ("0x10 cf blob index", b"\x10\x05" + vs(b"k") + vs(b"\x01bi"), BlobIndex(b"k", b"\x01bi", 5)),
    ("0x11 blob index", b"\x11" + vs(b"k") + vs(b"\x00\x01"), BlobIndex(b"k", b"\x00\x01")),
    ("0x12 begin persisted prepare", b"\x12", BeginPersistedPrepare()),
    ("0x13 begin unprepare", b"\x13", BeginUnprepare()),
    (
        "0x15 commit with timestamp",
        b"\x15" + vs(b"\x00" * 8) + vs(b"x"),
        CommitWithTimestamp(b"\x00" * 8, b"x"),
    ),
    ("0x16 entity", b"\x16" + vs(b"k") + vs(b"\x00\x01"), WideColumnEntity(b"k", b"\x00\x01")),
    ("0x17 cf entity", b"\x17\x09" + vs(b"k") + vs(b"E"), WideColumnEntity(b"k", b"E", cf=9)),
    (
        "0x18 timed put",
        b"\x18" + vs(b"k") + vs(b"val" + struct.pack("<Q", 1_700_000_000)),
        TimedPut(b"k", b"val", 1_700_000_000),
    ),
    (
        "0x19 cf timed put",
        b"\x19\x01" + vs(b"k") + vs(struct.pack("<Q", 2**64 - 1)),
        TimedPut(b"k", b"", 2**64 - 1, cf=1),
    ),
]


@pytest.mark.parametrize(
    ("entry", "op"), [g[1:] for g in GOLDEN_ENTRIES], ids=[g[0] for g in GOLDEN_ENTRIES]
)
def test_every_tag_decodes_and_encodes_byte_for_byte(entry: bytes, op: Operation) -> None:
    counted = int(isinstance(op, COUNTED))
    payload = header(42, counted) + entry
    assert decode_write_batch(payload) == WriteBatch(42, (op,))
    assert encode_write_batch(42, [op]) == payload


def test_the_golden_table_covers_every_tag_but_0x14() -> None:
    tags = sorted(entry[0] for _, entry, _ in GOLDEN_ENTRIES)
    assert tags == [t for t in range(0x1A) if t != 0x14]


def test_a_whole_transaction_counts_only_data_operations() -> None:
    ops = [
        BeginPrepare(),
        Put(b"a", b"1", cf=2),
        DeleteRange(b"b", b"c"),
        LogData(b"note"),
        EndPrepare(b"tx"),
        Commit(b"tx"),
    ]
    payload = encode_write_batch(100, ops)
    assert payload[8:12] == struct.pack("<I", 2)
    batch = decode_write_batch(payload)
    assert batch.ops == tuple(ops) and batch.count == 2
    assert list(batch.numbered()) == [(100, ops[1]), (101, ops[2])]


def test_column_family_variants_only_when_cf_is_not_zero() -> None:
    assert encode_write_batch(1, [Put(b"k", b"v", cf=0)])[12] == 0x01
    assert encode_write_batch(1, [Put(b"k", b"v", cf=1)])[12:14] == b"\x05\x01"
    assert encode_write_batch(1, [Delete(b"k", cf=300)])[12:15] == b"\x04\xac\x02"


def test_operations_of_the_same_shape_are_not_equal() -> None:
    assert Put(b"k", b"v") != Merge(b"k", b"v")
    assert BlobIndex(b"k", b"v") != WideColumnEntity(b"k", b"v")
    assert BeginPrepare() != Noop()


def test_decoder_accepts_any_bytes_like() -> None:
    payload = encode_write_batch(3, [Put(b"k", b"v")])
    for wrap in (bytes, bytearray, memoryview):
        assert decode_write_batch(wrap(payload)).ops == (Put(b"k", b"v"),)


# ---------------------------------------------------------------------------
# WriteBatch: malformed payloads
# ---------------------------------------------------------------------------


def test_wrong_count_is_rocksdbs_corruption() -> None:
    payload = header(1, 2) + b"\x01" + vs(b"k") + vs(b"v") + b"\x03" + vs(b"log")
    e = raised(decode_write_batch, payload)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.reason == "WriteBatch has wrong count"
    assert (e.offset, e.size) == (8, 4)
    assert "says 2" in str(e) and "1 counted" in str(e)


def test_short_header() -> None:
    e = raised(decode_write_batch, b"\x01" * 11)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.offset == 0 and "12-byte header" in str(e)


@pytest.mark.parametrize("tag", [0x14, 0x1A, 0x7F, 0xFF])
def test_unknown_tags_name_the_tag_and_its_offset(tag: int) -> None:
    payload = header(1, 1) + b"\x01" + vs(b"k") + vs(b"v") + bytes([tag]) + vs(b"k")
    e = raised(decode_write_batch, payload)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.reason == f"unknown WriteBatch tag {tag}"
    assert e.offset == 17 and e.size == len(payload) - 17
    assert str(e) == f"WriteBatch: unknown WriteBatch tag {tag} at byte 17"


def test_a_key_running_past_the_end() -> None:
    payload = header(1, 1) + b"\x01" + varint(5) + b"abc"
    e = raised(decode_write_batch, payload)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.offset == 13 and "key of 5 bytes runs past the end (3 left)" in e.reason


def test_a_timed_put_without_its_write_time() -> None:
    payload = header(1, 1) + b"\x18" + vs(b"k") + vs(b"1234567")
    e = raised(decode_write_batch, payload)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.offset == 12 and "no write time" in e.reason


def test_an_overlong_column_family_varint() -> None:
    payload = header(1, 1) + b"\x05" + b"\xff" * 5 + b"\x0f" + vs(b"k") + vs(b"v")
    e = raised(decode_write_batch, payload)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.offset == 13 and "column family" in e.reason


def test_every_truncation_raises_corruption_or_decodes() -> None:
    ops = [op for _, _, op in GOLDEN_ENTRIES]
    payload = encode_write_batch(9, ops)
    for cut in range(len(payload)):
        try:
            batch = decode_write_batch(payload[:cut])
        except CorruptionError:
            continue
        assert batch.count == sum(isinstance(op, COUNTED) for op in ops)  # only uncounted cut


# ---------------------------------------------------------------------------
# WriteBatch: encoding errors
# ---------------------------------------------------------------------------


def test_encode_refuses_what_is_not_an_operation() -> None:
    with pytest.raises(TypeError, match=r"leveldb_log\.rocksdb operation"):
        encode_write_batch(1, [("put", b"k", b"v")])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="key must be bytes-like"):
        encode_write_batch(1, [Put("k", b"v")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="key must be bytes-like"):
        encode_write_batch(1, [Delete(3)])  # type: ignore[arg-type]


def test_encode_refuses_out_of_range_numbers() -> None:
    with pytest.raises(ValueError, match="column family"):
        encode_write_batch(1, [Put(b"k", b"v", cf=2**32)])
    with pytest.raises(ValueError, match="column family"):
        encode_write_batch(1, [Put(b"k", b"v", cf=-1)])
    with pytest.raises(ValueError, match="write_time"):
        encode_write_batch(1, [TimedPut(b"k", b"v", 2**64)])
    with pytest.raises(ValueError, match="sequence"):
        encode_write_batch(MAX_SEQUENCE, [Put(b"a", b""), Put(b"b", b"")])
    with pytest.raises(ValueError, match="sequence"):
        encode_write_batch(-1, [])
    assert encode_write_batch(MAX_SEQUENCE, [Put(b"a", b""), LogData(b"")])[:8] == struct.pack(
        "<Q", MAX_SEQUENCE
    )


# ---------------------------------------------------------------------------
# WriteBatch: properties
# ---------------------------------------------------------------------------

keys = st.binary(max_size=40)
cfs = st.one_of(st.just(0), st.integers(0, 2**32 - 1))
OPERATIONS = st.one_of(
    st.builds(Put, keys, keys, cfs),
    st.builds(Delete, keys, cfs),
    st.builds(SingleDelete, keys, cfs),
    st.builds(Merge, keys, keys, cfs),
    st.builds(DeleteRange, keys, keys, cfs),
    st.builds(BlobIndex, keys, keys, cfs),
    st.builds(WideColumnEntity, keys, keys, cfs),
    st.builds(TimedPut, keys, keys, st.integers(0, 2**64 - 1), cfs),
    st.builds(LogData, keys),
    st.builds(BeginPrepare),
    st.builds(BeginPersistedPrepare),
    st.builds(BeginUnprepare),
    st.builds(EndPrepare, keys),
    st.builds(Commit, keys),
    st.builds(CommitWithTimestamp, keys, keys),
    st.builds(Rollback, keys),
    st.builds(Noop),
)


@given(st.integers(0, MAX_SEQUENCE - 100), st.lists(OPERATIONS, max_size=30))
def test_decode_inverts_encode(sequence: int, ops: list[Operation]) -> None:
    assert decode_write_batch(encode_write_batch(sequence, ops)) == WriteBatch(sequence, tuple(ops))


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_corruption(data: bytes) -> None:
    try:
        decode_write_batch(data)
    except CorruptionError as e:
        assert 0 <= e.offset <= len(data) and e.size >= 0


@settings(max_examples=300)
@given(st.lists(OPERATIONS, max_size=8), st.data())
def test_damaged_batches_decode_or_raise_corruption(
    ops: list[Operation], data: st.DataObject
) -> None:
    payload = bytearray(encode_write_batch(1, ops))
    index = data.draw(st.integers(0, len(payload) - 1))
    payload[index] = data.draw(st.integers(0, 255))
    try:
        decode_write_batch(bytes(payload))
    except CorruptionError as e:
        assert 0 <= e.offset <= len(payload)


# ---------------------------------------------------------------------------
# VersionEdit: every tag, golden bytes
# ---------------------------------------------------------------------------

SMALL, LARGE = ikey(b"a", 5), ikey(b"z", 9, 0)
K_SMALL, K_LARGE = InternalKey(b"a", 5, 1), InternalKey(b"z", 9, 0)


def test_leveldbs_tags() -> None:
    payload = (
        varint(1) + vs(b"leveldb.BytewiseComparator")
        + varint(2) + varint(12)
        + varint(9) + varint(11)
        + varint(3) + varint(300)
        + varint(4) + varint(2**40)
        + varint(5) + varint(3) + vs(SMALL)
        + varint(6) + varint(2) + varint(77)
        + varint(7) + varint(1) + varint(8) + varint(1000) + vs(SMALL) + vs(LARGE)
    )  # fmt: skip
    assert decode_version_edit(payload) == VersionEdit(
        comparator="leveldb.BytewiseComparator",
        log_number=12,
        prev_log_number=11,
        next_file_number=300,
        last_sequence=2**40,
        compact_pointers=(CompactPointer(3, K_SMALL),),
        deleted_files=(DeletedFile(2, 77),),
        new_files=(NewFile(1, 8, 1000, K_SMALL, K_LARGE, tag=7),),
    )


def test_rocksdbs_scalar_and_column_family_tags() -> None:
    payload = (
        varint(10) + varint(6)
        + varint(200) + varint(3)
        + varint(201) + vs(b"cf_three")
        + varint(203) + varint(3)
        + varint(300) + varint(2)
        + varint(8193) + vs(b"7d5d3f4e-uuid")
        + varint(8198) + vs(b"\x00\x00\x01")
        + varint(8201) + vs(b"\x01")
        + varint(8203) + vs(varint(4096))
    )  # fmt: skip
    edit = decode_version_edit(payload)
    assert edit == VersionEdit(
        min_log_number_to_keep=6,
        column_family=3,
        column_family_add="cf_three",
        max_column_family=3,
        remaining_entries=2,
        db_id="7d5d3f4e-uuid",
        full_history_ts_low=b"\x00\x00\x01",
        persist_user_defined_timestamps=True,
        last_compacted_manifest_file_size=4096,
    )
    assert edit.in_atomic_group and not VersionEdit().in_atomic_group
    assert decode_version_edit(varint(202)).column_family_drop


def test_new_file_forms_100_and_102() -> None:
    form100 = varint(100) + varint(0) + varint(5) + varint(10) + vs(SMALL) + vs(LARGE)
    form100 += varint(5) + varint(9)
    form102 = varint(102) + varint(6) + varint(7) + varint(2) + varint(20) + vs(SMALL)
    form102 += vs(LARGE) + varint(1) + varint(2)
    edit = decode_version_edit(form100 + form102)
    assert edit.new_files == (
        NewFile(0, 5, 10, K_SMALL, K_LARGE, 5, 9, tag=100),
        NewFile(6, 7, 20, K_SMALL, K_LARGE, 1, 2, path_id=2, tag=102),
    )


def new_file4(custom: bytes) -> bytes:
    return (
        varint(103) + varint(2) + varint(31) + varint(4096) + vs(SMALL) + vs(LARGE)
        + varint(5) + varint(9) + custom + varint(1)
    )  # fmt: skip


def test_new_file4_with_every_custom_field() -> None:
    unique = struct.pack("<QQ", 1, 2)
    custom = (
        varint(2) + vs(b"\x01")
        + varint(3) + vs(struct.pack("<Q", 17))
        + varint(4) + vs(varint(12))
        + varint(5) + vs(varint(1_600_000_000))
        + varint(6) + vs(varint(1_600_000_001))
        + varint(7) + vs(b"\xde\xad")
        + varint(8) + vs(b"crc32c")
        + varint(9) + vs(b"\x04")
        + varint(10) + vs(b"t0")
        + varint(11) + vs(b"t9")
        + varint(12) + vs(unique)
        + varint(13) + vs(varint(3))
        + varint(14) + vs(varint(500))
        + varint(15) + vs(varint(128))
        + varint(16) + vs(b"\x00")
        + varint(17) + vs(b"meta")
        + varint(65) + vs(b"\x03")
        + varint(18) + vs(b"future, ignorable")
    )  # fmt: skip
    edit = decode_version_edit(new_file4(custom))
    assert edit.min_log_number_to_keep == 17
    assert edit.new_files == (
        NewFile(
            2, 31, 4096, K_SMALL, K_LARGE, 5, 9,
            path_id=3,
            need_compaction=True,
            oldest_blob_file_number=12,
            oldest_ancester_time=1_600_000_000,
            file_creation_time=1_600_000_001,
            file_checksum=b"\xde\xad",
            file_checksum_func_name=b"crc32c",
            temperature=4,
            min_timestamp=b"t0",
            max_timestamp=b"t9",
            unique_id=unique,
            epoch_number=3,
            compensated_range_deletion_size=500,
            tail_size=128,
            user_defined_timestamps_persisted=False,
            file_open_metadata=b"meta",
            ignored=((18, b"future, ignorable"),),
        ),
    )  # fmt: skip


def test_new_file4_minimal_has_defaults() -> None:
    (f,) = decode_version_edit(new_file4(b"")).new_files
    assert f == NewFile(2, 31, 4096, K_SMALL, K_LARGE, 5, 9)
    assert f.tag == 103 and f.path_id == 0 and not f.need_compaction


@pytest.mark.parametrize(
    ("custom", "reason"),
    [
        (varint(66) + vs(b"x"), "new-file4 custom field not supported (tag 66)"),
        (varint(100) + vs(b""), "new-file4 custom field not supported (tag 100)"),
        (varint(65) + vs(b"\x04"), "path_id wrong value 4"),
        (varint(65) + vs(b"\x01\x02"), "path_id field wrong size (2 bytes)"),
        (varint(2) + vs(b""), "need_compaction field wrong size (0 bytes)"),
        (varint(3) + vs(b"\x01" * 7), "deleted log number malformatted"),
        (varint(5) + vs(b"\x80"), "invalid oldest ancester time"),
        (varint(12) + vs(b"\x00" * 8), "invalid unique id of 8 bytes"),
        (varint(9) + vs(b""), "temperature field wrong size (0 bytes)"),
    ],
)
def test_new_file4_custom_field_errors(custom: bytes, reason: str) -> None:
    e = raised(decode_version_edit, new_file4(custom))
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.reason == reason
    assert 0 < e.offset < len(new_file4(custom))


def test_blob_file_tags_and_their_deprecated_twins() -> None:
    addition = varint(40) + varint(3) + varint(999) + vs(b"crc32c") + vs(b"\x01\x02\x03\x04")
    addition += varint(5) + vs(b"ignored custom") + varint(0)
    garbage = varint(40) + varint(1) + varint(333) + varint(0)
    for tags in ((400, 401), (8194, 8195)):
        edit = decode_version_edit(varint(tags[0]) + addition + varint(tags[1]) + garbage)
        assert edit.blob_file_additions == (
            BlobFileAddition(40, 3, 999, b"crc32c", b"\x01\x02\x03\x04", ((5, b"ignored custom"),)),
        )
        assert edit.blob_file_garbages == (BlobFileGarbage(40, 1, 333),)


def test_blob_file_forward_incompatible_custom_field() -> None:
    payload = varint(401) + varint(1) + varint(1) + varint(1) + varint(0x41) + vs(b"x") + varint(0)
    e = raised(decode_version_edit, payload)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert "forward incompatible custom field 65" in e.reason and e.offset == 5


def test_wal_tags() -> None:
    inline_add = varint(8196) + varint(7) + varint(2) + varint(4096) + varint(1)
    inline_del = varint(8197) + varint(5)
    add2 = varint(8199) + vs(varint(8) + varint(1))
    add2_sized = varint(8199) + vs(varint(9) + varint(2) + varint(100) + varint(1))
    del2 = varint(8200) + vs(varint(6))
    edit = decode_version_edit(inline_add + inline_del + add2 + add2_sized + del2)
    assert edit.wal_additions == (WalAddition(7, 4096), WalAddition(8), WalAddition(9, 100))
    assert edit.wal_deletions == (WalDeletion(5), WalDeletion(6))


def test_wal_addition2_unknown_inner_tag() -> None:
    payload = varint(2) + varint(1) + varint(8199) + vs(varint(8) + varint(3) + varint(1))
    e = raised(decode_version_edit, payload)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.reason == "WalAddition: unknown tag 3" and e.offset == 6


def test_subcompaction_progress_is_kept_raw() -> None:
    edit = decode_version_edit(varint(8202) + vs(b"\x01\x02nested"))
    assert edit.subcompaction_progress == (b"\x01\x02nested",)


# ---------------------------------------------------------------------------
# VersionEdit: unknown tags and malformed payloads
# ---------------------------------------------------------------------------


def test_unknown_safe_ignore_tags_are_skipped_with_their_length() -> None:
    payload = varint(2) + varint(4) + varint(0x2000 | 77) + vs(b"\x09" * 10) + varint(4) + varint(8)
    edit = decode_version_edit(payload)
    assert (edit.log_number, edit.last_sequence) == (4, 8)
    assert edit.ignored == ((0x2000 | 77, b"\x09" * 10),)


@pytest.mark.parametrize("tag", [8, 11, 99, 101, 104, 204, 301, 402, 0x1FFF])
def test_unknown_tags_without_the_mask(tag: int) -> None:
    payload = varint(2) + varint(4) + varint(tag) + varint(1)
    e = raised(decode_version_edit, payload)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.reason == f"unknown tag {tag}" and e.offset == 2


def test_a_tag_cut_short_is_an_invalid_tag() -> None:
    e = raised(decode_version_edit, varint(2) + varint(4) + b"\x80")
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert e.reason == "invalid tag" and e.offset == 2


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (varint(8198) + vs(b""), "empty full history ts low"),
        (varint(8201) + vs(b"\x01\x01"), "persist user-defined timestamps of 2 bytes, not 1"),
        (varint(5) + varint(1) + vs(b"short"), "compact pointer key of 5 bytes is shorter"),
        (varint(2) + b"\xff" * 10 + b"\x01", "log number (varint64) longer than 10 bytes"),
        (varint(203) + varint(2**32), "max column family (varint32) overflows 32 bits"),
        (varint(8200) + vs(b""), "truncated WAL number (varint64)"),
    ],
)
def test_malformed_fields(payload: bytes, reason: str) -> None:
    e = raised(decode_version_edit, payload)
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert reason in e.reason


def big_edit() -> bytes:
    return (
        varint(8193) + vs(b"id") + varint(1) + vs(b"cmp") + varint(2) + varint(3)
        + varint(6) + varint(1) + varint(2) + new_file4(varint(5) + vs(varint(1)))
        + varint(400) + varint(1) + varint(2) + varint(3) + vs(b"m") + vs(b"v") + varint(0)
        + varint(8199) + vs(varint(8) + varint(2) + varint(5) + varint(1))
        + varint(300) + varint(1) + varint(0x2000 | 99) + vs(b"skip")
    )  # fmt: skip


def test_every_truncation_of_an_edit_raises_corruption_or_decodes() -> None:
    payload = big_edit()
    decode_version_edit(payload)
    for cut in range(len(payload)):
        try:
            decode_version_edit(payload[:cut])
        except CorruptionError as e:
            assert 0 <= e.offset <= cut


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_corruption_edits(data: bytes) -> None:
    try:
        decode_version_edit(data)
    except CorruptionError as e:
        assert 0 <= e.offset <= len(data)


@settings(max_examples=300)
@given(st.data())
def test_damaged_edits_decode_or_raise_corruption(data: st.DataObject) -> None:
    payload = bytearray(big_edit())
    for _ in range(data.draw(st.integers(1, 3))):
        payload[data.draw(st.integers(0, len(payload) - 1))] = data.draw(st.integers(0, 255))
    try:
        decode_version_edit(bytes(payload))
    except CorruptionError as e:
        assert 0 <= e.offset <= len(payload)
