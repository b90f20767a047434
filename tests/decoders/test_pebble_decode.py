"""Pebble's batches (leveldb_log.pebble): golden bytes built by hand from docs/rocksdb.md for
every kind, round trips through encode_write_batch, and a CorruptionError (never another
exception) for every malformed payload."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from leveldb_log import CorruptionError
from leveldb_log.pebble import (
    MAX_KIND,
    Delete,
    DeleteSized,
    Excise,
    IngestSST,
    IngestSSTWithBlobs,
    LogData,
    Merge,
    Operation,
    Other,
    RangeDelete,
    RangeKeyDelete,
    RangeKeySet,
    RangeKeyUnset,
    Set,
    SingleDelete,
    WriteBatch,
    decode_write_batch,
    encode_write_batch,
)
from support.wire import varint
from support.wire import varstring as vs


def header(sequence: int, count: int) -> bytes:
    return struct.pack("<QI", sequence, count)


GOLDEN: list[tuple[str, bytes, Operation]] = [
    ("0 delete", b"\x00" + vs(b"k"), Delete(b"k")),
    ("1 set", b"\x01" + vs(b"k") + vs(b"v"), Set(b"k", b"v")),
    ("2 merge", b"\x02" + vs(b"k") + vs(b"+"), Merge(b"k", b"+")),
    ("3 log data", b"\x03" + vs(b"note"), LogData(b"note")),
    ("7 single delete", b"\x07" + vs(b"k"), SingleDelete(b"k")),
    ("15 range delete", b"\x0f" + vs(b"a") + vs(b"m"), RangeDelete(b"a", b"m")),
    ("19 range key delete", b"\x13" + vs(b"a") + vs(b"z"), RangeKeyDelete(b"a", b"z")),
    ("20 range key unset", b"\x14" + vs(b"a") + vs(b"\x01z@5"), RangeKeyUnset(b"a", b"\x01z@5")),
    ("21 range key set", b"\x15" + vs(b"a") + vs(b"\x01z@5v"), RangeKeySet(b"a", b"\x01z@5v")),
    ("22 ingest sst", b"\x16" + vs(varint(300)), IngestSST(300)),
    ("23 delete sized", b"\x17" + vs(b"k") + vs(varint(2**40)), DeleteSized(b"k", 2**40)),
    ("24 excise", b"\x18" + vs(b"a") + vs(b"b"), Excise(b"a", b"b")),
    (
        "26 ingest sst with blobs",
        b"\x1a" + vs(varint(7)) + vs(varint(2) + varint(11) + varint(200)),
        IngestSSTWithBlobs(7, (11, 200)),
    ),
    ("17 separator: key only", b"\x11" + vs(b"sep"), Other(17, b"sep")),
    ("18 set with delete: key only", b"\x12" + vs(b"k"), Other(18, b"k")),
    ("30 the largest kind: key only", b"\x1e" + vs(b"k"), Other(30, b"k")),
]


@pytest.mark.parametrize(("entry", "decoded"), [g[1:] for g in GOLDEN], ids=[g[0] for g in GOLDEN])
def test_every_kind_decodes_and_encodes_byte_for_byte(entry: bytes, decoded: Operation) -> None:
    counted = 0 if isinstance(decoded, LogData) else 1
    payload = header(77, counted) + entry
    assert decode_write_batch(payload) == WriteBatch(77, (decoded,), counted)
    assert encode_write_batch(77, [decoded]) == payload


@pytest.mark.parametrize("kind", [4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 16, 25, 27, 28, 29])
def test_other_kinds_up_to_30_are_a_key_alone(kind: int) -> None:
    payload = header(1, 2) + bytes([kind]) + vs(b"k") + b"\x01" + vs(b"a") + vs(b"b")
    assert decode_write_batch(payload).ops == (Other(kind, b"k"), Set(b"a", b"b"))


@pytest.mark.parametrize("kind", [31, 32, 0x7F, 0xFF])
def test_kinds_above_30_are_invalid(kind: int) -> None:
    payload = header(1, 1) + b"\x00" + vs(b"k") + bytes([kind]) + vs(b"k")
    with pytest.raises(CorruptionError) as info:
        decode_write_batch(payload)
    assert info.value.reason == f"invalid key kind {kind:#x}"
    assert info.value.offset == 15 and isinstance(info.value, ValueError)


def test_the_count_is_kept_as_the_header_says() -> None:
    payload = header(5, 99) + b"\x01" + vs(b"k") + vs(b"v")
    assert decode_write_batch(payload) == WriteBatch(5, (Set(b"k", b"v"),), 99)
    assert encode_write_batch(5, [Set(b"k", b"v")], count=99) == payload


def test_log_data_is_not_counted() -> None:
    entries = [LogData(b"a"), Set(b"k", b"v"), LogData(b"b"), IngestSST(1)]
    assert decode_write_batch(encode_write_batch(0, entries)).count == 2


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (b"\x17" + vs(b"k") + vs(b""), "size is not a valid varint"),
        (b"\x17" + vs(b"k") + vs(varint(5) + b"x"), "size: 1 bytes after the varint"),
        (b"\x16" + vs(b"\xff" * 11), "table number is not a valid varint"),
        (b"\x1a" + vs(varint(1)) + vs(varint(3) + varint(1)), "blob ids are not valid varints"),
        (b"\x1a" + vs(varint(1)) + vs(varint(1) + varint(1) + b"\x00"), "do not fill"),
        (b"\x01" + vs(b"k"), "truncated value length"),
        (b"\x01" + varint(3) + b"k", "key of 3 bytes runs past the end (1 left)"),
    ],
)
def test_malformed_entries(entry: bytes, reason: str) -> None:
    with pytest.raises(CorruptionError) as info:
        decode_write_batch(header(1, 1) + entry)
    assert reason in info.value.reason
    assert 12 <= info.value.offset <= 12 + len(entry)


def test_short_header() -> None:
    with pytest.raises(CorruptionError, match="12-byte header"):
        decode_write_batch(b"\x00" * 11)


def test_encode_refuses_bad_entries() -> None:
    with pytest.raises(TypeError, match=r"leveldb_log\.pebble operation"):
        encode_write_batch(1, [b"raw"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="key must be bytes-like"):
        encode_write_batch(1, [Set("k", b"v")])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind 31"):
        encode_write_batch(1, [Other(31, b"k")])
    with pytest.raises(ValueError, match="table number"):
        encode_write_batch(1, [IngestSST(-1)])
    with pytest.raises(ValueError, match="sequence"):
        encode_write_batch(2**56, [])
    with pytest.raises(ValueError, match="count"):
        encode_write_batch(1, [], count=2**32)


keys = st.binary(max_size=30)
numbers = st.integers(0, 2**64 - 1)
ENTRIES = st.one_of(
    st.builds(Set, keys, keys),
    st.builds(Delete, keys),
    st.builds(SingleDelete, keys),
    st.builds(Merge, keys, keys),
    st.builds(LogData, keys),
    st.builds(RangeDelete, keys, keys),
    st.builds(RangeKeySet, keys, keys),
    st.builds(RangeKeyUnset, keys, keys),
    st.builds(RangeKeyDelete, keys, keys),
    st.builds(DeleteSized, keys, numbers),
    st.builds(Excise, keys, keys),
    st.builds(IngestSST, numbers),
    st.builds(IngestSSTWithBlobs, numbers, st.lists(numbers, max_size=5).map(tuple)),
    st.builds(Other, st.sampled_from([4, 5, 6, 8, 17, 18, 25, 27, MAX_KIND]), keys),
)


@given(st.integers(0, 2**56 - 1), st.lists(ENTRIES, max_size=20))
def test_decode_inverts_encode(sequence: int, entries: list[Operation]) -> None:
    batch = decode_write_batch(encode_write_batch(sequence, entries))
    assert batch.sequence == sequence and batch.ops == tuple(entries)
    assert batch.count == sum(not isinstance(e, LogData) for e in entries)


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_corruption(data: bytes) -> None:
    try:
        decode_write_batch(data)
    except CorruptionError as e:
        assert 0 <= e.offset <= len(data)


@settings(max_examples=300)
@given(st.lists(ENTRIES, min_size=1, max_size=8), st.data())
def test_damaged_batches_decode_or_raise_corruption(
    entries: list[Operation], data: st.DataObject
) -> None:
    payload = bytearray(encode_write_batch(1, entries))
    cut = data.draw(st.integers(12, len(payload)))
    index = data.draw(st.integers(0, len(payload) - 1))
    payload[index] = data.draw(st.integers(0, 255))
    try:
        decode_write_batch(bytes(payload[:cut]))
    except CorruptionError as e:
        assert 0 <= e.offset <= cut
