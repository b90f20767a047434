"""Tests of the pure-Python reference model (tests/support/model.py) against docs/format.md and
docs/api.md."""

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import model
from support.model import (
    BLOCK_SIZE,
    FIRST,
    FULL,
    HEADER_SIZE,
    LAST,
    MIDDLE,
    ZERO,
    Corruption,
    Record,
    TornTail,
    crc32c,
    encode,
    encode_physical,
    mask_crc,
    read,
    read_events,
    unmask_crc,
)
from support.paths import GOLDEN

VECTORS_PATH = str(GOLDEN / "vectors.txt")

SLOW = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def unhex(field):
    return b"" if field == "-" else bytes.fromhex(field)


def load_vectors():
    vectors = {"crc": [], "mask": [], "record": []}
    with open(VECTORS_PATH, encoding="ascii") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split(" ")
            kind = fields[0]
            if kind == "crc":
                assert len(fields) == 3, line
                vectors["crc"].append((unhex(fields[1]), int(fields[2], 16)))
            elif kind == "mask":
                assert len(fields) == 3, line
                vectors["mask"].append((int(fields[1], 16), int(fields[2], 16)))
            elif kind == "record":
                assert len(fields) == 4, line
                vectors["record"].append((int(fields[1]), unhex(fields[2]), unhex(fields[3])))
            else:
                raise AssertionError(f"unknown vector line: {line!r}")
    return vectors


VECTORS = load_vectors()


def payload(n, seed=0):
    """n deterministic pseudo-random bytes."""
    return random.Random(seed * 1000003 + n).randbytes(n)


def header(rtype, length, crc=0):
    return crc.to_bytes(4, "little") + length.to_bytes(2, "little") + bytes([rtype])


def pad_to_block(data, fill=b"\x00"):
    """Pad data with `fill` up to the next block boundary."""
    return data + fill * ((-len(data)) % BLOCK_SIZE)


def records_of(data, **kw):
    return [(r.offset, r.data) for r in read(data, **kw).records]


def valid_log_of_length(n):
    """A clean log of exactly n bytes (n % BLOCK_SIZE must be 0 or >= 7)."""
    rest = n % BLOCK_SIZE
    if 0 < rest < HEADER_SIZE:
        raise ValueError(f"no clean log is {n} bytes long")
    sizes = [BLOCK_SIZE - HEADER_SIZE] * (n // BLOCK_SIZE)
    if rest:
        sizes.append(rest - HEADER_SIZE)
    data, _ = encode([payload(s, i) for i, s in enumerate(sizes)])
    return data


# ---------------------------------------------------------------------------
# golden vectors file
# ---------------------------------------------------------------------------


def test_vectors_file_has_every_kind_and_the_required_entries():
    crcs = dict(VECTORS["crc"])
    assert crcs[b"123456789"] == 0xE3069283
    assert crcs[b""] == 0
    assert crcs[bytes(32)] == 0x8A9136AA
    assert len(VECTORS["mask"]) >= 3
    masks = dict(VECTORS["mask"])
    assert 0 in masks and 0xFFFFFFFF in masks
    assert (FULL, b"foo", bytes.fromhex("dd5fb37a030001666f6f")) in VECTORS["record"]


def test_vectors_file_lines_are_simple_lowercase_fields():
    with open(VECTORS_PATH, encoding="ascii") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            assert line == line.strip() and "  " not in line and "\t" not in line
            assert line == line.lower()
            assert len(line) < 4096


# ---------------------------------------------------------------------------
# CRC-32C
# ---------------------------------------------------------------------------


def test_crc32c_check_value():
    assert crc32c(b"123456789") == 0xE3069283


def test_crc32c_rfc3720_vectors():
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C
    pdu = bytes.fromhex(
        "01c00000000000000000000000000000"
        "14000000000004000000001400000018"
        "28000000000000000200000000000000"
    )
    assert crc32c(pdu) == 0xD9963A56
    assert crc32c(b"") == 0


@pytest.mark.parametrize("data,expected", VECTORS["crc"])
def test_crc32c_vector_whole(data, expected):
    assert crc32c(data) == expected
    assert model.crc32c_bitwise(data) == expected


@pytest.mark.parametrize("data,expected", VECTORS["crc"])
def test_crc32c_vector_continued_at_every_split_point(data, expected):
    for cut in range(len(data) + 1):
        assert crc32c(data[cut:], crc32c(data[:cut])) == expected


@pytest.mark.parametrize("chunk", [1, 3, 7, 8, 16])
@pytest.mark.parametrize("data,expected", VECTORS["crc"])
def test_crc32c_vector_in_chunks(data, expected, chunk):
    value = 0
    for i in range(0, len(data), chunk):
        value = crc32c(data[i : i + chunk], value)
    assert value == expected


@given(st.binary(max_size=300), st.binary(max_size=300))
def test_crc32c_table_matches_bitwise_definition_and_continues(a, b):
    assert model.crc32c_table(a) == model.crc32c_bitwise(a)
    assert model.crc32c_table(a + b) == model.crc32c_table(b, model.crc32c_table(a))
    assert crc32c(a) == model.crc32c_bitwise(a)
    assert crc32c(a + b) == crc32c(b, crc32c(a))
    assert crc32c(a + b) == model.crc32c_bitwise(b, model.crc32c_bitwise(a))


@given(st.binary(max_size=5000), st.integers(0, 2**32 - 1))
def test_crc32c_is_the_table_whichever_code_computes_it(data, value):
    # crc32c() takes google-crc32c's C code when it is installed: held to the table here.
    assert crc32c(data, value) == model.crc32c_table(data, value)


def test_crc32c_accepts_bytes_like():
    assert crc32c(bytearray(b"123456789")) == 0xE3069283
    assert crc32c(memoryview(b"123456789")) == 0xE3069283


# ---------------------------------------------------------------------------
# mask / unmask
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("crc,masked", VECTORS["mask"])
def test_mask_vectors(crc, masked):
    assert mask_crc(crc) == masked
    assert unmask_crc(masked) == crc


@given(st.integers(0, 2**32 - 1))
def test_mask_and_unmask_are_inverses(c):
    assert unmask_crc(mask_crc(c)) == c
    assert mask_crc(unmask_crc(c)) == c
    assert 0 <= mask_crc(c) < 2**32


@given(st.integers(0, 2**32 - 1))
def test_mask_follows_the_format_md_formula(c):
    assert mask_crc(c) == (((c >> 15) | (c << 17)) + 0xA282EAD8) % 2**32


# ---------------------------------------------------------------------------
# physical records
# ---------------------------------------------------------------------------


def test_format_md_reference_records():
    assert encode_physical(FULL, b"foo").hex() == "dd5fb37a030001666f6f"
    assert encode_physical(FULL, b"").hex() == "052b2843000001"
    assert encode_physical(FIRST, b"").hex() == "6451d0e9000002"
    assert encode_physical(LAST, b"bar").hex() == "059e8137030004626172"


@pytest.mark.parametrize("rtype,data,expected", VECTORS["record"])
def test_record_vectors(rtype, data, expected):
    assert encode_physical(rtype, data) == expected


@pytest.mark.parametrize("rtype,data,expected", VECTORS["record"])
def test_record_vector_header_fields(rtype, data, expected):
    assert unmask_crc(int.from_bytes(expected[0:4], "little")) == crc32c(bytes([rtype]) + data)
    assert int.from_bytes(expected[4:6], "little") == len(data)
    assert expected[6] == rtype
    assert expected[7:] == data


def test_encode_physical_rejects_payload_over_65535_bytes():
    with pytest.raises(ValueError):
        encode_physical(FULL, bytes(65536))


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------


def test_single_small_record_is_one_full_record():
    data, offsets = encode([b"foo"])
    assert data == encode_physical(FULL, b"foo")
    assert offsets == [0]


def test_empty_record_is_a_full_record_of_length_zero():
    data, offsets = encode([b""])
    assert data == encode_physical(FULL, b"")
    assert offsets == [0]


def test_no_records_encode_to_nothing():
    assert encode([]) == (b"", [])
    assert encode([], start=12345) == (b"", [])


def test_worked_example_layout():
    a, b, c = payload(1000, 1), payload(97270, 2), payload(8000, 3)
    data, offsets = encode([a, b, c])
    assert len(data) == 106311
    assert offsets == [0, 1007, 98304]
    assert data[0:1007] == encode_physical(FULL, a)
    assert data[1007:32768] == encode_physical(FIRST, b[:31754])
    assert data[32768:65536] == encode_physical(MIDDLE, b[31754 : 31754 + 32761])
    assert data[65536:98298] == encode_physical(LAST, b[31754 + 32761 :])
    assert len(b[31754 + 32761 :]) == 32755
    assert data[98298:98304] == bytes(6)
    assert data[98304:] == encode_physical(FULL, c)
    assert read_events(data) == [Record(0, a), Record(1007, b), Record(98304, c)]


def test_seven_bytes_left_non_empty_record_gets_empty_first():
    filler = payload(BLOCK_SIZE - 2 * HEADER_SIZE)  # ends 7 bytes before the block end
    data, offsets = encode([filler, b"xyz"])
    assert offsets == [0, BLOCK_SIZE - 7]
    assert data[BLOCK_SIZE - 7 : BLOCK_SIZE] == encode_physical(FIRST, b"")
    assert data[BLOCK_SIZE:] == encode_physical(LAST, b"xyz")
    assert read_events(data) == [Record(0, filler), Record(BLOCK_SIZE - 7, b"xyz")]


def test_seven_bytes_left_empty_record_is_full_of_length_zero():
    filler = payload(BLOCK_SIZE - 2 * HEADER_SIZE)
    data, offsets = encode([filler, b"", b"next"])
    assert offsets == [0, BLOCK_SIZE - 7, BLOCK_SIZE]
    assert data[BLOCK_SIZE - 7 : BLOCK_SIZE] == encode_physical(FULL, b"")
    assert data[BLOCK_SIZE:] == encode_physical(FULL, b"next")
    assert read_events(data) == [
        Record(0, filler),
        Record(BLOCK_SIZE - 7, b""),
        Record(BLOCK_SIZE, b"next"),
    ]


def test_seven_bytes_left_large_record_continues_with_middle_and_last():
    filler = payload(BLOCK_SIZE - 2 * HEADER_SIZE)
    big = payload(BLOCK_SIZE + 100)
    data, offsets = encode([filler, big])
    assert offsets == [0, BLOCK_SIZE - 7]
    assert data[BLOCK_SIZE - 7 : BLOCK_SIZE] == encode_physical(FIRST, b"")
    assert data[BLOCK_SIZE : 2 * BLOCK_SIZE] == encode_physical(MIDDLE, big[: BLOCK_SIZE - 7])
    assert data[2 * BLOCK_SIZE :] == encode_physical(LAST, big[BLOCK_SIZE - 7 :])


@pytest.mark.parametrize("left", [1, 2, 3, 4, 5, 6])
def test_fewer_than_seven_bytes_left_become_a_zero_trailer(left):
    filler = payload(BLOCK_SIZE - HEADER_SIZE - left)
    data, offsets = encode([filler, b"abc"])
    assert offsets == [0, BLOCK_SIZE]
    assert data[BLOCK_SIZE - left : BLOCK_SIZE] == bytes(left)
    assert data[BLOCK_SIZE:] == encode_physical(FULL, b"abc")
    assert read_events(data) == [Record(0, filler), Record(BLOCK_SIZE, b"abc")]


def test_record_ending_exactly_at_block_end_needs_no_trailer():
    filler = payload(BLOCK_SIZE - HEADER_SIZE)
    data, offsets = encode([filler, b"abc"])
    assert offsets == [0, BLOCK_SIZE]
    assert data[:BLOCK_SIZE] == encode_physical(FULL, filler)


def test_trailer_is_not_written_until_the_next_record():
    data, _ = encode([payload(BLOCK_SIZE - HEADER_SIZE - 3)])
    assert len(data) == BLOCK_SIZE - 3


def test_record_of_32754_bytes_fills_block_but_seven_bytes():
    data, _ = encode([payload(32754)])
    assert len(data) == BLOCK_SIZE - 7


def test_record_of_32762_bytes_is_first_plus_last_of_one_byte():
    rec = payload(32762)
    data, _ = encode([rec])
    assert data == encode_physical(FIRST, rec[:32761]) + encode_physical(LAST, rec[32761:])


def test_resume_at_start_inside_trailer_zone():
    data, offsets = encode([b"abc"], start=BLOCK_SIZE - 3)
    assert data == bytes(3) + encode_physical(FULL, b"abc")
    assert offsets == [BLOCK_SIZE]


def test_resume_with_exactly_seven_bytes_left():
    data, offsets = encode([b"abc"], start=3 * BLOCK_SIZE - 7)
    assert data == encode_physical(FIRST, b"") + encode_physical(LAST, b"abc")
    assert offsets == [3 * BLOCK_SIZE - 7]


def test_resume_at_block_boundary():
    data, offsets = encode([b"abc", b"de"], start=2 * BLOCK_SIZE)
    assert data == encode_physical(FULL, b"abc") + encode_physical(FULL, b"de")
    assert offsets == [2 * BLOCK_SIZE, 2 * BLOCK_SIZE + 10]


def test_resume_mid_block_fragments_by_space_left():
    start = BLOCK_SIZE + 100
    rec = payload(BLOCK_SIZE)
    data, offsets = encode([rec], start=start)
    first_len = BLOCK_SIZE - 100 - HEADER_SIZE
    assert offsets == [start]
    assert data == encode_physical(FIRST, rec[:first_len]) + encode_physical(LAST, rec[first_len:])


# Sizes around the block-size edges, and some larger ones.
INTERESTING_SIZES = [
    0,
    1,
    2,
    6,
    7,
    8,
    100,
    1000,
    *list(range(32754, 32769)),
    32769,
    32775,
    65522,
    65529,
    65536,
    65537,
    100000,
]

record_sizes = st.one_of(st.sampled_from(INTERESTING_SIZES), st.integers(0, 70000))
record_lists = st.lists(record_sizes, max_size=5)


@SLOW
@given(record_lists, record_lists, st.integers(0, 1000))
def test_encode_with_start_equals_tail_of_encoding_everything(prefix_sizes, sizes, seed):
    prefix = [payload(n, seed + i) for i, n in enumerate(prefix_sizes)]
    recs = [payload(n, seed + 100 + i) for i, n in enumerate(sizes)]
    prefix_bytes, prefix_offsets = encode(prefix)
    tail, offsets = encode(recs, start=len(prefix_bytes))
    whole, whole_offsets = encode(prefix + recs)
    assert prefix_bytes + tail == whole
    assert prefix_offsets + offsets == whole_offsets


@SLOW
@given(record_lists, record_lists, st.integers(0, 1000))
def test_round_trip_after_a_prefix_log(prefix_sizes, sizes, seed):
    prefix = [payload(n, seed + i) for i, n in enumerate(prefix_sizes)]
    recs = [payload(n, seed + 100 + i) for i, n in enumerate(sizes)]
    prefix_bytes, prefix_offsets = encode(prefix)
    tail, offsets = encode(recs, start=len(prefix_bytes))
    log = prefix_bytes + tail
    expected = [Record(o, d) for o, d in zip(prefix_offsets, prefix, strict=False)] + [
        Record(o, d) for o, d in zip(offsets, recs, strict=False)
    ]
    assert read_events(log) == expected
    assert read_events(log, verify_checksums=False) == expected
    for mode in model.RECOVERY_MODES:
        result = read(log, recovery=mode)
        assert result.records == expected
        assert result.corruptions == [] and result.error is None and result.dropped_bytes == 0


valid_lengths = st.integers(0, 4 * BLOCK_SIZE).filter(
    lambda n: n % BLOCK_SIZE == 0 or n % BLOCK_SIZE >= HEADER_SIZE
)


@SLOW
@given(valid_lengths, record_lists, st.integers(0, 1000))
def test_round_trip_resuming_at_any_valid_log_length(start, sizes, seed):
    prefix = valid_log_of_length(start)
    assert len(prefix) == start
    prefix_records = read_events(prefix)
    recs = [payload(n, seed + i) for i, n in enumerate(sizes)]
    tail, offsets = encode(recs, start=start)
    assert all(start <= o for o in offsets)
    assert offsets == sorted(offsets)
    events = read_events(prefix + tail)
    assert events == prefix_records + [Record(o, d) for o, d in zip(offsets, recs, strict=False)]


@SLOW
@given(record_lists, st.integers(0, 1000))
def test_encoded_physical_records_respect_block_rules(sizes, seed):
    """Walk the headers: none starts in the last 6 bytes of a block or crosses a block."""
    recs = [payload(n, seed + i) for i, n in enumerate(sizes)]
    data, offsets = encode(recs)
    p = 0
    firsts = []
    while p < len(data):
        left = BLOCK_SIZE - p % BLOCK_SIZE
        if left < HEADER_SIZE:
            assert data[p : p + left] == bytes(left)
            p += left
            continue
        length = int.from_bytes(data[p + 4 : p + 6], "little")
        rtype = data[p + 6]
        assert HEADER_SIZE + length <= left
        # fragments are as large as the block allows
        if rtype in (FIRST, MIDDLE):
            assert HEADER_SIZE + length == left
        if rtype in (FULL, FIRST):
            firsts.append(p)
        p += HEADER_SIZE + length
    assert p == len(data)
    assert firsts == offsets


# ---------------------------------------------------------------------------
# reading: clean and silently skipped data
# ---------------------------------------------------------------------------


def test_empty_file_has_no_events():
    assert read_events(b"") == []


def test_trailer_content_is_not_checked():
    filler = payload(BLOCK_SIZE - HEADER_SIZE - 6)
    data = encode_physical(FULL, filler) + b"\xff" * 6 + encode_physical(FULL, b"abc")
    assert read_events(data) == [Record(0, filler), Record(BLOCK_SIZE, b"abc")]


def test_zero_header_skips_rest_of_block_silently():
    data = encode_physical(FULL, b"abc") + bytes(100)
    data = pad_to_block(data) + bytes(BLOCK_SIZE)  # two blocks of preallocated zeros
    data += encode_physical(FULL, b"after")
    assert read_events(data) == [Record(0, b"abc"), Record(2 * BLOCK_SIZE, b"after")]


def test_zero_header_skip_ignores_garbage_after_it_in_the_block():
    data = encode_physical(FULL, b"abc") + header(ZERO, 0) + b"\x13" * 200
    data = pad_to_block(data, b"\x77") + encode_physical(FULL, b"z")
    assert read_events(data) == [Record(0, b"abc"), Record(BLOCK_SIZE, b"z")]


def test_zeros_at_end_of_short_final_block_are_silent():
    data = encode_physical(FULL, b"abc") + bytes(100)
    assert read_events(data) == [Record(0, b"abc")]
    assert read(data, recovery="absolute").error is None


def test_old_writer_empty_first_before_full_is_not_reported():
    data = encode_physical(FIRST, b"") + encode_physical(FULL, b"x")
    assert read_events(data) == [Record(7, b"x")]


def test_old_writer_empty_first_before_first_is_not_reported():
    data = (
        encode_physical(FIRST, b"") + encode_physical(FIRST, b"ab") + encode_physical(LAST, b"cd")
    )
    assert read_events(data) == [Record(7, b"abcd")]


def test_verify_checksums_false_returns_damaged_payload():
    data = bytearray(encode_physical(FULL, b"abc"))
    data[8] ^= 0x01
    assert read_events(bytes(data), verify_checksums=False) == [Record(0, b"acc")]


# ---------------------------------------------------------------------------
# reading: one test per corruption reason
# ---------------------------------------------------------------------------


def three_records_filling_block_zero_then_one():
    """A@0, B@17 (10 bytes each), C filling block 0 exactly, D@32768 (5 bytes)."""
    a, b = b"A" * 10, b"B" * 10
    c = payload(BLOCK_SIZE - 34 - HEADER_SIZE)
    d = b"D" * 5
    data, _ = encode([a, b, c, d])
    return bytearray(data), (a, b, c, d)


def test_three_records_filling_block_zero_then_one_lay_out_as_said():
    data, records = three_records_filling_block_zero_then_one()
    assert encode(list(records)) == (bytes(data), [0, 17, 34, BLOCK_SIZE])


def test_checksum_mismatch_drops_rest_of_full_block():
    data, (a, _b, _c, d) = three_records_filling_block_zero_then_one()
    data[17 + 7 + 3] ^= 0x40  # a payload byte of B
    assert read_events(bytes(data)) == [
        Record(0, a),
        Corruption(17, BLOCK_SIZE - 17, "checksum mismatch"),
        Record(BLOCK_SIZE, d),
    ]


def test_checksum_mismatch_in_crc_field_itself():
    data, (_a, _b, _c, _d) = three_records_filling_block_zero_then_one()
    data[17] ^= 0x01
    assert read_events(bytes(data))[1] == Corruption(17, BLOCK_SIZE - 17, "checksum mismatch")


def test_checksum_mismatch_in_short_final_block_counts_to_end_of_data():
    data = bytearray(encode([b"A" * 10, b"B" * 10, b"C" * 10])[0])
    assert len(data) == 51
    data[17 + 7] ^= 0x01
    assert read_events(bytes(data)) == [
        Record(0, b"A" * 10),
        Corruption(17, 51 - 17, "checksum mismatch"),
    ]


def test_checksum_mismatch_in_last_block_is_corruption_not_torn_tail():
    data = bytearray(encode([b"A" * 10])[0])
    data[9] ^= 0x01
    result = read(bytes(data), recovery="absolute")
    assert result.corruptions == [Corruption(0, 17, "checksum mismatch")]
    assert result.error == "corruption"


def test_bad_record_length_drops_rest_of_full_block():
    data, (a, _b, _c, d) = three_records_filling_block_zero_then_one()
    data[17 + 4 : 17 + 6] = (0xFFFF).to_bytes(2, "little")
    expected = [
        Record(0, a),
        Corruption(17, BLOCK_SIZE - 17, "bad record length"),
        Record(BLOCK_SIZE, d),
    ]
    assert read_events(bytes(data)) == expected
    assert read_events(bytes(data), verify_checksums=False) == expected


def test_bad_record_length_in_last_block_of_block_multiple_file():
    data, (a, _b, _c, _d) = three_records_filling_block_zero_then_one()
    data = data[:BLOCK_SIZE]  # file length is exactly one block: no short final block
    data[17 + 4 : 17 + 6] = (0xFFFF).to_bytes(2, "little")
    result = read(bytes(data), recovery="absolute")
    assert result.records == [Record(0, a)]
    assert result.corruptions == [Corruption(17, BLOCK_SIZE - 17, "bad record length")]
    assert result.error == "corruption"


def test_partial_record_without_end_before_full():
    data = encode_physical(FIRST, b"abc") + encode_physical(FULL, b"x")
    assert read_events(data) == [Corruption(0, 3, "partial record without end"), Record(10, b"x")]


def test_partial_record_without_end_before_first():
    data = (
        encode_physical(FIRST, b"abc")
        + encode_physical(MIDDLE, b"de")
        + encode_physical(FIRST, b"xy")
        + encode_physical(LAST, b"z")
    )
    assert read_events(data) == [Corruption(0, 5, "partial record without end"), Record(19, b"xyz")]


def test_missing_start_for_middle():
    data = encode_physical(MIDDLE, b"abcd") + encode_physical(FULL, b"ok")
    assert read_events(data) == [
        Corruption(0, 4, "missing start of fragmented record"),
        Record(11, b"ok"),
    ]


def test_missing_start_for_last():
    data = encode_physical(FULL, b"ok") + encode_physical(LAST, b"xy")
    assert read_events(data) == [
        Record(0, b"ok"),
        Corruption(9, 2, "missing start of fragmented record"),
    ]


def test_missing_start_after_a_checksum_error_dropped_the_first():
    rec = payload(BLOCK_SIZE + 10)
    data = bytearray(encode([rec])[0])
    data[100] ^= 0x01
    assert read_events(bytes(data)) == [
        Corruption(0, BLOCK_SIZE, "checksum mismatch"),
        Corruption(BLOCK_SIZE, 17, "missing start of fragmented record"),
    ]


@pytest.mark.parametrize("rtype", [5, 6, 9, 127, 128, 255])
def test_unknown_record_type_without_open_record(rtype):
    data = encode_physical(rtype, b"hello") + encode_physical(FULL, b"ok")
    assert read_events(data) == [
        Corruption(0, 5, f"unknown record type {rtype}"),
        Record(12, b"ok"),
    ]


def test_unknown_record_type_inside_open_record_counts_both():
    data = (
        encode_physical(FIRST, b"abc") + encode_physical(9, b"wxyz") + encode_physical(LAST, b"zz")
    )
    assert read_events(data) == [
        Corruption(0, 7, "unknown record type 9"),
        Corruption(21, 2, "missing start of fragmented record"),
    ]


def test_zero_type_with_payload_is_unknown_record_type_0():
    data = encode_physical(ZERO, b"\x00\x00") + encode_physical(FULL, b"ok")
    assert read_events(data) == [Corruption(0, 2, "unknown record type 0"), Record(9, b"ok")]


def test_error_in_middle_of_record_after_checksum_mismatch():
    data = bytearray(
        encode_physical(FIRST, b"abc")
        + encode_physical(MIDDLE, b"def")
        + encode_physical(LAST, b"gh")
    )
    data[10 + 7] ^= 0x01  # MIDDLE's payload
    assert read_events(bytes(data)) == [
        Corruption(10, len(data) - 10, "checksum mismatch"),
        Corruption(0, 3, "error in middle of record"),
    ]


def test_error_in_middle_of_record_after_bad_length_in_full_block():
    data = bytearray(pad_to_block(encode_physical(FIRST, b"abc") + header(MIDDLE, 60000)))
    data += encode([b"ok"], start=len(data))[0]
    assert read_events(bytes(data)) == [
        Corruption(10, BLOCK_SIZE - 10, "bad record length"),
        Corruption(0, 3, "error in middle of record"),
        Record(BLOCK_SIZE, b"ok"),
    ]


def test_error_in_middle_of_record_after_zero_skip_has_no_report_of_its_own():
    data = encode_physical(FIRST, b"abc") + header(ZERO, 0)
    data = pad_to_block(data) + encode_physical(FULL, b"ok")
    assert read_events(data) == [
        Corruption(0, 3, "error in middle of record"),
        Record(BLOCK_SIZE, b"ok"),
    ]


def test_error_in_middle_of_record_is_reported_for_empty_open_record():
    data = bytearray(encode_physical(FIRST, b"") + encode_physical(LAST, b"xy"))
    data[7 + 7] ^= 0x01
    assert read_events(bytes(data)) == [
        Corruption(7, 9, "checksum mismatch"),
        Corruption(0, 0, "error in middle of record"),
    ]


# ---------------------------------------------------------------------------
# reading: the torn tail
# ---------------------------------------------------------------------------


def test_truncated_header_at_end_of_file():
    data = encode_physical(FULL, b"a") + b"\x01\x02\x03"
    assert read_events(data) == [Record(0, b"a"), TornTail(8, 3, "truncated header at end of file")]


def test_truncated_header_with_open_record_starts_at_the_open_record():
    data = encode_physical(FIRST, b"abc") + encode_physical(MIDDLE, b"d") + b"\x00" * 5
    assert read_events(data) == [TornTail(0, 23, "truncated header at end of file")]


def test_truncated_payload_at_end_of_file():
    data = encode_physical(FULL, b"a") + encode_physical(FULL, b"abcdef")[:10]
    assert read_events(data) == [
        Record(0, b"a"),
        TornTail(8, 10, "truncated payload at end of file"),
    ]


def test_truncated_payload_with_open_record_starts_at_the_open_record():
    rec = payload(2 * BLOCK_SIZE)
    data = encode([b"x", rec])[0][: BLOCK_SIZE + 17]
    assert read_events(data) == [
        Record(0, b"x"),
        TornTail(8, BLOCK_SIZE + 17 - 8, "truncated payload at end of file"),
    ]


def test_fragmented_record_open_at_end_of_file_after_first():
    rec = payload(40000)
    data = encode([rec])[0][:BLOCK_SIZE]
    assert read_events(data) == [TornTail(0, BLOCK_SIZE, "fragmented record open at end of file")]


def test_fragmented_record_open_at_end_of_file_after_middle_in_short_block():
    data = (
        encode_physical(FULL, b"ok") + encode_physical(FIRST, b"ab") + encode_physical(MIDDLE, b"c")
    )
    assert read_events(data) == [
        Record(0, b"ok"),
        TornTail(9, 17, "fragmented record open at end of file"),
    ]


def test_length_past_end_of_short_block_with_valid_crc_is_still_torn_tail():
    data = encode_physical(FULL, b"ok") + header(FULL, 100) + b"abc"
    assert read_events(data) == [
        Record(0, b"ok"),
        TornTail(9, 10, "truncated payload at end of file"),
    ]


@pytest.mark.parametrize("left", [1, 2, 3, 4, 5, 6])
def test_short_tail_in_full_size_block_is_trailer_not_torn(left):
    data = encode_physical(FULL, payload(BLOCK_SIZE - HEADER_SIZE - left)) + b"\x05" * left
    assert len(data) == BLOCK_SIZE
    events = read_events(data)
    assert len(events) == 1 and isinstance(events[0], Record)


# ---------------------------------------------------------------------------
# read(): start / end
# ---------------------------------------------------------------------------


def small_log():
    recs = [b"r0", payload(BLOCK_SIZE + 5), b"r2", b"", payload(50)]
    data, offsets = encode(recs)
    return data, list(zip(offsets, recs, strict=False))


def test_start_and_end_keep_records_whose_first_header_is_in_range():
    data, pairs = small_log()
    offs = [o for o, _ in pairs]
    assert records_of(data) == pairs
    assert records_of(data, start=1) == pairs[1:]
    assert records_of(data, start=offs[1]) == pairs[1:]
    assert records_of(data, start=offs[1] + 1) == pairs[2:]
    assert records_of(data, end=offs[1]) == pairs[:1]
    assert records_of(data, end=offs[1] + 1) == pairs[:2]  # read to its end past `end`
    assert records_of(data, start=offs[2], end=offs[4]) == pairs[2:4]
    assert records_of(data, start=len(data)) == []


@SLOW
@given(record_lists, st.lists(st.integers(0, 250000), max_size=4), st.integers(0, 1000))
def test_splitting_a_clean_log_returns_every_record_once(sizes, cuts, seed):
    recs = [payload(n, seed + i) for i, n in enumerate(sizes)]
    data, offsets = encode(recs)
    bounds = [0, *sorted(c for c in cuts if c < len(data)), None]
    got = []
    for lo, hi in itertools.pairwise(bounds):
        result = read(data, start=lo, end=hi, recovery="absolute")
        assert result.corruptions == [] and result.error is None
        got += [(r.offset, r.data) for r in result.records]
    assert got == list(zip(offsets, recs, strict=False))


def test_start_and_end_filter_corruptions_by_offset():
    data = (
        encode_physical(MIDDLE, b"aa") + encode_physical(FULL, b"x") + encode_physical(LAST, b"bbb")
    )
    c1 = Corruption(0, 2, "missing start of fragmented record")
    c2 = Corruption(17, 3, "missing start of fragmented record")
    assert read(data).corruptions == [c1, c2]
    assert read(data, start=1).corruptions == [c2]
    assert read(data, end=17).corruptions == [c1]
    assert read(data, start=1, end=17).corruptions == []
    assert read(data, start=1, end=17).records == [Record(9, b"x")]


def test_open_record_before_start_is_not_reported_in_a_later_range():
    rec = payload(40000)
    data = encode([b"x", rec])[0][: BLOCK_SIZE + 20]
    assert read(data, start=9, recovery="absolute").error is None  # tail begins at 8
    assert read(data, start=8, recovery="absolute").error == "truncated"


# ---------------------------------------------------------------------------
# read(): recovery modes
# ---------------------------------------------------------------------------


def mixed_log():
    """R1, C1 (orphan MIDDLE), R2, C2 (unknown type 7), R3, then a truncated header."""
    data = encode_physical(FULL, b"r1")  # 0..9
    data += encode_physical(MIDDLE, b"orphan")  # 9..22
    data += encode_physical(FULL, b"r2")  # 22..31
    data += encode_physical(7, b"seven!!")  # 31..45
    data += encode_physical(FULL, b"r3")  # 45..54
    data += b"\x01\x02\x03\x04"  # 54..58 truncated header
    r1, r2, r3 = Record(0, b"r1"), Record(22, b"r2"), Record(45, b"r3")
    c1 = Corruption(9, 6, "missing start of fragmented record")
    c2 = Corruption(31, 7, "unknown record type 7")
    tail = TornTail(54, 4, "truncated header at end of file")
    return data, (r1, r2, r3, c1, c2, tail)


def test_the_mixed_log_reads_as_records_and_corruptions_in_order():
    data, (r1, r2, r3, c1, c2, tail) = mixed_log()
    assert read_events(data) == [r1, c1, r2, c2, r3, tail]


def test_recovery_skip_reports_all_corruptions_and_keeps_going():
    data, (r1, r2, r3, c1, c2, _tail) = mixed_log()
    result = read(data, recovery="skip")
    assert result.records == [r1, r2, r3]
    assert result.corruptions == [c1, c2]
    assert result.error is None
    assert result.dropped_bytes == 13


def test_recovery_tolerate_tail_raises_at_first_corruption():
    data, (r1, _r2, _r3, c1, _c2, _tail) = mixed_log()
    result = read(data, recovery="tolerate_tail")
    assert result.records == [r1]
    assert result.corruptions == [c1]
    assert result.error == "corruption"
    assert result.dropped_bytes == 6


def test_recovery_point_in_time_stops_cleanly_at_first_corruption():
    data, (r1, _r2, _r3, c1, _c2, _tail) = mixed_log()
    result = read(data, recovery="point_in_time")
    assert result.records == [r1]
    assert result.corruptions == [c1]
    assert result.error is None
    assert result.dropped_bytes == 6


def test_recovery_absolute_raises_at_first_corruption():
    data, (r1, _r2, _r3, c1, _c2, _tail) = mixed_log()
    result = read(data, recovery="absolute")
    assert result.records == [r1]
    assert result.corruptions == [c1]
    assert result.error == "corruption"


def test_recovery_modes_after_start_see_the_later_corruption_first():
    data, (_r1, r2, _r3, _c1, c2, _tail) = mixed_log()
    result = read(data, recovery="tolerate_tail", start=10)
    assert result.records == [r2]
    assert result.corruptions == [c2]
    assert result.error == "corruption"


@pytest.mark.parametrize("mode", ["skip", "tolerate_tail", "point_in_time"])
def test_torn_tail_is_silent_except_in_absolute(mode):
    data, (_r1, _r2, r3, _c1, _c2, _tail) = mixed_log()
    result = read(data, recovery=mode, start=40)
    assert result.records == [r3]
    assert result.corruptions == []
    assert result.error is None
    assert result.dropped_bytes == 0


def test_recovery_absolute_reports_torn_tail_as_truncated():
    data, (_r1, _r2, r3, _c1, _c2, tail) = mixed_log()
    result = read(data, recovery="absolute", start=40)
    assert result.records == [r3]
    assert result.corruptions == [tail]
    assert result.error == "truncated"
    assert result.dropped_bytes == 4


@pytest.mark.parametrize("mode", ["skip", "tolerate_tail", "point_in_time", "absolute"])
def test_recovery_modes_on_a_clean_log(mode):
    data, pairs = small_log()
    result = read(data, recovery=mode)
    assert [(r.offset, r.data) for r in result.records] == pairs
    assert result.corruptions == [] and result.error is None and result.dropped_bytes == 0


def test_unknown_recovery_mode_is_rejected():
    with pytest.raises(ValueError):
        read(b"", recovery="bogus")


# ---------------------------------------------------------------------------
# damaged logs: general properties
# ---------------------------------------------------------------------------


@SLOW
@given(
    st.lists(st.sampled_from([0, 1, 5, 100, 32754, 32761, 32762, 40000]), min_size=1, max_size=5),
    st.integers(0, 1000),
    st.data(),
)
def test_damaged_log_returns_only_written_records_at_their_offsets(sizes, seed, data):
    recs = [payload(n, seed + i) for i, n in enumerate(sizes)]
    log, offsets = encode(recs)
    written = set(zip(offsets, recs, strict=False))
    damaged = bytearray(log)
    pos = data.draw(st.integers(0, len(log) - 1))
    damaged[pos] ^= data.draw(st.integers(1, 255))
    cut = data.draw(st.integers(0, len(log)))
    damaged = bytes(damaged[:cut])
    events = read_events(damaged)
    got = [(e.offset, e.data) for e in events if isinstance(e, Record)]
    assert set(got) <= written
    assert got == sorted(got)
    torn = [e for e in events if isinstance(e, TornTail)]
    assert len(torn) <= 1 and (not torn or events[-1] is torn[0])
    for e in events:
        if not isinstance(e, Record):
            assert 0 <= e.offset < len(damaged) and 0 <= e.size <= len(damaged) - e.offset
