"""WriteBatch and VersionEdit payloads (leveldb_log.leveldb): golden bytes built by hand,
round trips, and a helpful CorruptionError (a ValueError) for every kind of malformed
payload, at the offset in the payload where decoding failed."""

from __future__ import annotations

import re
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from leveldb_log import CorruptionError, rocksdb
from leveldb_log.leveldb import (
    MAX_SEQUENCE,
    NUM_LEVELS,
    CompactPointer,
    Delete,
    DeletedFile,
    InternalKey,
    NewFile,
    Put,
    ValueType,
    VersionEdit,
    WriteBatch,
    decode_version_edit,
    decode_write_batch,
    encode_version_edit,
    encode_write_batch,
)


def header(sequence: int, count: int) -> bytes:
    return struct.pack("<QI", sequence, count)


def ikey(user_key: bytes, sequence: int, value_type: int = 1) -> bytes:
    return user_key + struct.pack("<Q", sequence << 8 | value_type)


# ---------------------------------------------------------------------------
# golden bytes
# ---------------------------------------------------------------------------

# What LevelDB 1.22 wrote for db.put(b"k0", b"") as the first write of a new database.
GOLDEN_PUT = bytes.fromhex("01000000000000000100000001026b3000")
# A batch of sequence 7: put a=1, delete b, put c=<130 x 'x'> (a two-byte varint length).
GOLDEN_BATCH = (
    bytes.fromhex("070000000000000003000000")
    + bytes.fromhex("0101610131")
    + bytes.fromhex("000162")
    + bytes.fromhex("0101638201")
    + b"x" * 130
)


def test_golden_put_decodes_to_sequence_one_and_an_empty_value() -> None:
    batch = decode_write_batch(GOLDEN_PUT)
    assert batch == WriteBatch(1, (Put(b"k0", b""),))
    assert batch.count == 1
    assert encode_write_batch(1, [Put(b"k0", b"")]) == GOLDEN_PUT


def test_golden_batch_with_delete_and_two_byte_varint_length() -> None:
    batch = decode_write_batch(GOLDEN_BATCH)
    assert batch.sequence == 7
    assert batch.ops == (Put(b"a", b"1"), Delete(b"b"), Put(b"c", b"x" * 130))
    assert list(batch.numbered()) == [(7, batch.ops[0]), (8, batch.ops[1]), (9, batch.ops[2])]
    assert encode_write_batch(7, batch.ops) == GOLDEN_BATCH


def test_empty_batch_is_just_the_header() -> None:
    assert encode_write_batch(5, []) == header(5, 0)
    assert decode_write_batch(header(5, 0)) == WriteBatch(5, ())


def test_decoders_accept_any_bytes_like() -> None:
    for wrap in (bytes, bytearray, memoryview):
        assert decode_write_batch(wrap(GOLDEN_PUT)).ops == (Put(b"k0", b""),)
        assert decode_version_edit(wrap(b"\x02\x06")).log_number == 6


# The two records of a MANIFEST written by LevelDB 1.22 after reopening a database whose log
# became table 5 (keys a@7 .. k4@5, 4927 bytes).
GOLDEN_COMPARATOR = b"\x01\x1aleveldb.BytewiseComparator"
GOLDEN_EDIT = (
    b"\x02\x06"  # log number 6
    b"\x09\x00"  # prev log number 0
    b"\x03\x07"  # next file number 7
    b"\x04\x09"  # last sequence 9
    b"\x07\x00\x05\xbf\x26"  # new file: level 0, number 5, size 4927 (0x3f | 0x26 << 7)
    + b"\x09"
    + ikey(b"a", 7)
    + b"\x0a"
    + ikey(b"k4", 5)
)


def test_golden_version_edits() -> None:
    assert decode_version_edit(GOLDEN_COMPARATOR) == VersionEdit(
        comparator="leveldb.BytewiseComparator"
    )
    edit = decode_version_edit(GOLDEN_EDIT)
    assert edit == VersionEdit(
        log_number=6,
        prev_log_number=0,
        next_file_number=7,
        last_sequence=9,
        new_files=(NewFile(0, 5, 4927, InternalKey(b"a", 7, 1), InternalKey(b"k4", 5, 1)),),
    )
    # LevelDB's field order, so re-encoding gives the same bytes.
    assert encode_version_edit(edit) == GOLDEN_EDIT
    assert encode_version_edit(decode_version_edit(GOLDEN_COMPARATOR)) == GOLDEN_COMPARATOR


def test_golden_compact_pointer_and_deleted_file() -> None:
    payload = (
        b"\x05\x01\x09"
        + ikey(b"x", 3)  # compact pointer: level 1, key x@3 : value
        + b"\x06\x02\xac\x02"  # deleted file: level 2, number 300
        + b"\x06\x00\x01"  # deleted file: level 0, number 1
    )
    edit = decode_version_edit(payload)
    assert edit.compact_pointers == (CompactPointer(1, InternalKey(b"x", 3, ValueType.VALUE)),)
    assert edit.deleted_files == (DeletedFile(2, 300), DeletedFile(0, 1))
    assert edit.log_number is None and edit.new_files == ()
    assert encode_version_edit(edit) == payload


def test_a_repeated_scalar_tag_keeps_the_last_value_as_leveldb_does() -> None:
    assert decode_version_edit(b"\x02\x01\x02\x05").log_number == 5


def test_internal_key_split_and_joined() -> None:
    raw = ikey(b"user", 0x0102030405, 0)
    key = InternalKey.decode(raw)
    assert key == InternalKey(b"user", 0x0102030405, ValueType.DELETION)
    assert key.encode() == raw
    assert InternalKey.decode(ikey(b"", MAX_SEQUENCE, 0xFF)).sequence == MAX_SEQUENCE


# ---------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------

keys = st.binary(max_size=40) | st.binary(min_size=120, max_size=300)
operations = st.lists(
    st.builds(Put, keys, st.binary(max_size=200)) | st.builds(Delete, keys), max_size=20
)


@given(operations, st.integers(0, MAX_SEQUENCE))
def test_write_batch_round_trip(ops: list[Put | Delete], sequence: int) -> None:
    sequence = min(sequence, MAX_SEQUENCE - max(len(ops) - 1, 0))
    payload = encode_write_batch(sequence, ops)
    batch = decode_write_batch(payload)
    assert batch == WriteBatch(sequence, tuple(ops))
    assert encode_write_batch(batch.sequence, batch.ops) == payload


@given(operations.filter(bool), st.data())
def test_every_strict_prefix_of_a_batch_is_refused(
    ops: list[Put | Delete], data: st.DataObject
) -> None:
    payload = encode_write_batch(1, ops)
    cut = data.draw(st.integers(0, len(payload) - 1))
    with pytest.raises(CorruptionError, match=r"^WriteBatch: ") as e:
        decode_write_batch(payload[:cut])
    assert 0 <= e.value.offset <= cut and e.value.size == cut - e.value.offset


u64 = st.integers(0, 2**64 - 1) | st.integers(0, 300)
levels = st.integers(0, NUM_LEVELS - 1)
internal_keys = st.builds(
    InternalKey, st.binary(max_size=30), st.integers(0, MAX_SEQUENCE), st.integers(0, 255)
)
edits = st.builds(
    VersionEdit,
    comparator=st.none() | st.text(max_size=40),
    log_number=st.none() | u64,
    prev_log_number=st.none() | u64,
    next_file_number=st.none() | u64,
    last_sequence=st.none() | u64,
    compact_pointers=st.lists(st.builds(CompactPointer, levels, internal_keys), max_size=3).map(
        tuple
    ),
    deleted_files=st.lists(st.builds(DeletedFile, levels, u64), max_size=3).map(tuple),
    new_files=st.lists(
        st.builds(NewFile, levels, u64, u64, internal_keys, internal_keys), max_size=3
    ).map(tuple),
)


@given(edits)
def test_version_edit_round_trip(edit: VersionEdit) -> None:
    payload = encode_version_edit(edit)
    assert decode_version_edit(payload) == edit
    assert encode_version_edit(decode_version_edit(payload)) == payload


def test_comparator_names_that_are_not_utf8_survive_a_round_trip() -> None:
    payload = b"\x01\x03a\xffb"
    edit = decode_version_edit(payload)
    assert encode_version_edit(edit) == payload


@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_value_error_naming_the_payload(data: bytes) -> None:
    for decode, name in ((decode_write_batch, "WriteBatch"), (decode_version_edit, "VersionEdit")):
        try:
            decode(data)
        except CorruptionError as e:
            assert str(e).startswith(f"{name}: ")
            assert str(e).endswith(f"at byte {e.offset}") and 0 <= e.offset <= len(data)


# ---------------------------------------------------------------------------
# malformed payloads: what is wrong, and where
# ---------------------------------------------------------------------------

H = header(1, 1)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"", "WriteBatch: 0 bytes is shorter than the 12-byte header (sequence, count) at byte 0"),
        (
            H[:11],
            "WriteBatch: 11 bytes is shorter than the 12-byte header (sequence, count) at byte 0",
        ),
        (
            header(1, 3) + b"\x01\x01a\x01b\x00\x01c",
            "WriteBatch: count says 3 operations but 2 found at byte 8",
        ),
        (header(1, 0) + b"\x00\x01c", "WriteBatch: count says 0 operations but 1 found at byte 8"),
        (H + b"\x07\x01a", "WriteBatch: unknown operation tag 7 at byte 12"),
        (H + b"\x01\x01a\x01b" + b"\x02", "WriteBatch: unknown operation tag 2 at byte 17"),
        (H + b"\x01\x80", "WriteBatch: truncated key length (varint32) at byte 13"),
        (H + b"\x01", "WriteBatch: truncated key length (varint32) at byte 13"),
        (H + b"\x01\x01a", "WriteBatch: truncated value length (varint32) at byte 15"),
        (H + b"\x01\x05ab", "WriteBatch: key of 5 bytes runs past the end (2 left) at byte 13"),
        (
            H + b"\x01\x01a\x03b",
            "WriteBatch: value of 3 bytes runs past the end (1 left) at byte 15",
        ),
        (
            H + b"\x00\xff\xff\xff\xff\x1f",
            "WriteBatch: key length (varint32) overflows 32 bits at byte 13",
        ),
        (
            H + b"\x00\xff\xff\xff\xff\xff\x01",
            "WriteBatch: key length (varint32) longer than 5 bytes at byte 13",
        ),
    ],
)
def test_malformed_write_batch(payload: bytes, message: str) -> None:
    with pytest.raises(CorruptionError, match=f"^{re.escape(message)}$") as e:
        decode_write_batch(payload)
    assert_payload_offset(e.value, payload, message)


def assert_payload_offset(e: CorruptionError, payload: bytes, message: str) -> None:
    """The error's offset is the "at byte N" of its message, size the bytes from there to the
    payload's end, and reason the message without its prefix and suffix."""
    offset = int(message.rsplit(" ", 1)[1])
    assert (e.offset, e.size) == (offset, len(payload) - offset)
    assert message == f"{message.split(':')[0]}: {e.reason} at byte {offset}"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"\x2a\x00", "VersionEdit: unknown tag 42 at byte 0"),
        (b"\x02\x06\x08\x01", "VersionEdit: unknown tag 8 at byte 2"),
        (b"\x02\x06\x80\x01", "VersionEdit: unknown tag 128 at byte 2"),
        (b"\x02", "VersionEdit: truncated log number (varint64) at byte 1"),
        (b"\x04\xff\xff", "VersionEdit: truncated last sequence (varint64) at byte 1"),
        (b"\x03" + b"\xff" * 10 + b"\x01", "VersionEdit: next file number (varint64) longer"
         " than 10 bytes at byte 1"),
        (b"\x03" + b"\xff" * 9 + b"\x02", "VersionEdit: next file number (varint64) overflows"
         " 64 bits at byte 1"),
        (b"\x80", "VersionEdit: invalid tag at byte 0"),
        (b"\x01\x05abc", "VersionEdit: comparator name of 5 bytes runs past the end (3 left)"
         " at byte 1"),
        (b"\x06\x07\x01", "VersionEdit: level 7 out of range (LevelDB has 7) at byte 1"),
        (b"\x06\x01", "VersionEdit: truncated file number (varint64) at byte 2"),
        (b"\x05\x01\x03abc", "VersionEdit: compact pointer key of 3 bytes is shorter"
         " than its 8-byte trailer at byte 2"),
        (b"\x07\x00\x05\x10\x09" + ikey(b"a", 1) + b"\x02", "VersionEdit: largest key of 2"
         " bytes runs past the end (0 left) at byte 14"),
        (b"\x07\x00\x05\x10\x00", "VersionEdit: smallest key of 0 bytes is shorter than its"
         " 8-byte trailer at byte 4"),
        (b"\x07\x00\x05", "VersionEdit: truncated file size (varint64) at byte 3"),
    ],
)  # fmt: skip
def test_malformed_version_edit(payload: bytes, message: str) -> None:
    with pytest.raises(CorruptionError, match=f"^{re.escape(message)}$") as e:
        decode_version_edit(payload)
    assert_payload_offset(e.value, payload, message)


def test_internal_key_shorter_than_its_trailer() -> None:
    with pytest.raises(CorruptionError, match="internal key of 7 bytes is shorter than its 8-byte"):
        InternalKey.decode(b"1234567")


# ---------------------------------------------------------------------------
# encoding refuses what LevelDB could not read back
# ---------------------------------------------------------------------------


def test_encoding_refuses_sequences_past_56_bits() -> None:
    assert decode_write_batch(encode_write_batch(MAX_SEQUENCE, [Delete(b"k")])).sequence == (
        MAX_SEQUENCE
    )
    with pytest.raises(ValueError, match="exceeds 2\\*\\*56 - 1"):
        encode_write_batch(MAX_SEQUENCE, [Delete(b"k"), Delete(b"j")])
    with pytest.raises(ValueError, match="exceeds"):
        encode_write_batch(-1, [])
    with pytest.raises(ValueError, match="does not fit in 56 bits"):
        InternalKey(b"k", MAX_SEQUENCE + 1, 1).encode()
    with pytest.raises(ValueError, match="does not fit in a byte"):
        InternalKey(b"k", 1, 256).encode()


def test_encoding_refuses_bad_operations_levels_and_numbers() -> None:
    with pytest.raises(TypeError, match="expected Put or Delete, got tuple"):
        encode_write_batch(1, [(b"k", b"v")])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="level 7 out of range"):
        encode_version_edit(VersionEdit(deleted_files=(DeletedFile(7, 1),)))
    with pytest.raises(ValueError, match="log number -1 does not fit"):
        encode_version_edit(VersionEdit(log_number=-1))
    with pytest.raises(ValueError, match="file number 18446744073709551616 does not fit"):
        encode_version_edit(VersionEdit(deleted_files=(DeletedFile(0, 2**64),)))


def test_values_are_frozen_and_hashable() -> None:
    batch = decode_write_batch(GOLDEN_BATCH)
    edit = decode_version_edit(GOLDEN_EDIT)
    assert len({batch, batch}) == 1 and len({edit, edit}) == 1
    with pytest.raises(AttributeError):
        batch.sequence = 2  # type: ignore[misc]


def test_decoded_values_equal_only_values_of_their_class() -> None:
    # Dataclasses, not named tuples: a Put is no tuple, and the engines share tag 5 and 6.
    assert Put(b"k", b"v") != (b"k", b"v")
    assert DeletedFile(1, 2) != (1, 2)
    assert rocksdb.DeletedFile is DeletedFile and rocksdb.CompactPointer is CompactPointer
    assert rocksdb.InternalKey is InternalKey
