"""Damaged logs: properties of the reader under injected damage, and one explicit test per
row of docs/format.md's reading tables, per silent end-of-file case and per recovery mode."""

from __future__ import annotations

import io
from typing import Any, NamedTuple

import leveldb_log
import pytest
from hypothesis import given
from hypothesis import strategies as st
from leveldb_log import Corruption, CorruptionError, LogError, TruncatedRecordError
from support import model
from support.damage import damage, soup_bytes, soup_ops
from support.oracle import untouched_records
from support.profiles import differential
from support.reading import MODES, assert_reader_contract, assert_same, c_read, model_read
from support.records import B, H, encode_sizes, layout, make_records, payload, size_lists
from support.warned import READS_DAMAGE

DETECTABLE = ("flip", "flip_header", "zero", "overwrite")  # no forged checksums


def is_subsequence(got: list[Any], written: list[Any]) -> bool:
    it = iter(written)
    return all(any(g == w for w in it) for g in got)


@st.composite
def written_logs(draw: Any, max_total: int = 4 * B) -> Any:
    sizes = draw(size_lists(min_size=1, max_total=max_total))
    salt = draw(st.integers(0, 9))
    records = make_records(sizes, salt)
    lay = layout(records)
    assert lay.data == encode_sizes(sizes, salt)
    return records, lay


# ---------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------


@READS_DAMAGE
@differential()
@given(written=written_logs(), data=st.data())
def test_damage_in_place_never_yields_a_record_that_was_not_written(written, data):
    """Flipped bytes, zeroed or overwritten ranges: in every recovery mode, what comes back
    is an in-order subsequence of the (offset, record) pairs written, and equals the model."""
    records, lay = written
    damaged, done, _ = damage(data.draw, lay.data, kinds=DETECTABLE)
    pairs = list(zip(lay.offsets, records, strict=True))
    for recovery in MODES:
        out = c_read(damaged, recovery=recovery)
        assert_reader_contract(out)
        got = list(zip(out.offsets, out.records, strict=True))
        assert is_subsequence(got, pairs), (recovery, done)
        assert_same(out, model_read(damaged, recovery=recovery), (recovery, done))


@READS_DAMAGE
@differential()
@given(written=written_logs(), data=st.data())
def test_skip_mode_yields_every_record_in_blocks_the_damage_did_not_touch(written, data):
    records, lay = written
    kinds = (*DETECTABLE, "rewrite_header")
    damaged, done, touched = damage(data.draw, lay.data, kinds=kinds)
    out = c_read(damaged)
    assert_reader_contract(out)
    got = set(zip(out.offsets, out.records, strict=True))
    for i in untouched_records(lay, touched):
        assert (lay.offsets[i], records[i]) in got, (i, done)
    assert_same(out, model_read(damaged), done)


@differential()
@given(written=written_logs(), data=st.data(), as_path=st.booleans())
def test_truncated_log_yields_exactly_the_records_that_end_before_the_cut(
    tmp_path_factory, written, data, as_path
):
    records, lay = written
    n = len(lay.data)
    cut = data.draw(
        st.integers(0, n)
        | st.sampled_from(lay.offsets + lay.ends)
        | st.integers(0, n // B).map(lambda k: k * B)
        | st.sampled_from(lay.ends).flatmap(lambda e: st.integers(e - 7, e + 7))
    )
    cut = max(0, min(cut, n))
    truncated = lay.data[:cut]
    source: Any = truncated
    if as_path:
        source = tmp_path_factory.getbasetemp() / "truncated.log"
        source.write_bytes(truncated)
    complete = [i for i, e in enumerate(lay.ends) if e <= cut]
    for recovery in MODES:
        out = c_read(source, recovery=recovery)
        assert_reader_contract(out)
        assert out.records == [records[i] for i in complete], recovery
        assert out.offsets == [lay.offsets[i] for i in complete], recovery
        if recovery == "absolute":
            # a torn tail unless the cut falls at a record's end (or after its trailer)
            clean = (
                cut == 0
                or cut in lay.ends
                or (cut % B == 0 and any(0 < cut - e < H for e in lay.ends))
            )
            assert out.error == (None if clean else "truncated"), (cut, out.corruptions)
        else:
            assert out.error is None and out.corruptions == [] and out.dropped_bytes == 0
        assert_same(out, model_read(truncated, recovery=recovery), (recovery, cut))


@READS_DAMAGE
@differential()
@given(written=written_logs(), data=st.data())
def test_inserted_garbage_yields_written_records_only_and_all_before_its_block(written, data):
    records, lay = written
    damaged, done, touched = damage(data.draw, lay.data, kinds=("insert",))
    assert [kind for kind, _, _ in done] == ["insert"]
    for recovery in MODES:
        out = c_read(damaged, recovery=recovery)
        assert_reader_contract(out)
        assert is_subsequence(out.records, records), (recovery, done)
        if recovery == "skip":
            before = [records[i] for i in untouched_records(lay, touched)]
            assert out.records[: len(before)] == before, done
        assert_same(out, model_read(damaged, recovery=recovery), (recovery, done))


@READS_DAMAGE
@differential(0.6)
@given(data=st.data(), verify=st.booleans())
def test_reader_equals_model_on_every_kind_of_damaged_input(tmp_path_factory, data, verify):
    if data.draw(st.booleans()):
        ops = data.draw(soup_ops)
        damaged, done = soup_bytes(ops), ops
    else:
        _, lay = data.draw(written_logs())
        damaged, done, _ = damage(data.draw, lay.data)
    path = tmp_path_factory.getbasetemp() / "damaged.log"
    path.write_bytes(damaged)
    for recovery in MODES:
        kw = dict(recovery=recovery, verify_checksums=verify)
        expected = model_read(damaged, **kw)
        got = c_read(damaged, **kw)
        assert_reader_contract(got)
        assert_same(got, expected, (kw, done))
        got = c_read(path, **kw)
        assert_reader_contract(got)
        assert_same(got, expected, (kw, done))


# ---------------------------------------------------------------------------
# explicit cases: helpers
# ---------------------------------------------------------------------------


def phys(rtype: int, data: bytes, good: bool = True) -> bytes:
    rec = bytearray(model.encode_physical(rtype, data))
    if not good:
        rec[0] ^= 0x01
    return bytes(rec)


def read_all(data: Any, **kw: Any) -> tuple[list[tuple[int, bytes]], list[Corruption], int]:
    """Skip-mode (or kw) read: [(offset, record)], reports, dropped_bytes."""
    seen: list[Corruption] = []
    out = []
    with leveldb_log.Reader(data, on_corruption=seen.append, **kw) as r:
        for rec in r:
            out.append((r.last_record_offset, rec))
        dropped = r.dropped_bytes
    return out, seen, dropped


class Skipped(NamedTuple):
    """A skip-mode read: [(offset, record)], the reports, and dropped_bytes."""

    records: list[tuple[int, bytes]]
    reports: list[tuple[int, int, str]]
    dropped: int


def skipping(records: list[tuple[int, bytes]], reports: list[tuple[int, int, str]]) -> Skipped:
    """What a skip-mode read must give: `records`, exactly `reports`, and no byte dropped
    unreported."""
    return Skipped(records, reports, sum(size for _, size, _ in reports))


def skip_reads(data: bytes) -> tuple[Skipped, Skipped]:
    """The Reader's and the model's skip-mode reads of `data`."""
    got, seen, dropped = read_all(data)
    expected = model_read(data)
    return (
        Skipped(got, [tuple(c) for c in seen], dropped),
        Skipped(
            list(zip(expected.offsets, expected.records, strict=True)),
            expected.corruptions,
            sum(size for _, size, _ in expected.corruptions),
        ),
    )


A = payload(100, 1)  # FULL at 0, 107 bytes
BB = payload(200, 2)  # FULL at 107, 207 bytes
C = payload(50, 3)  # FULL at 314
D = payload(30, 4)


def block0_then_block1() -> tuple[bytes, list[int]]:
    """A, BB, C and a filler record in block 0 (filled exactly), D in block 1."""
    filler = payload(B - 371 - H, 5)
    return model.encode([A, BB, C, filler, D])


def test_block0_then_block1_fills_block_zero_exactly_and_puts_d_in_block_one():
    data, offsets = block0_then_block1()
    assert offsets == [0, 107, 314, 371, B] and len(data) == B + H + len(D)


# ---------------------------------------------------------------------------
# docs/format.md's reading tables (and docs/recovery.md's reasons), one row each
# ---------------------------------------------------------------------------


def test_checksum_mismatch_drops_from_its_header_to_the_end_of_the_block():
    data, _ = block0_then_block1()
    damaged = bytearray(data)
    damaged[107 + H + 50] ^= 0x10  # in BB's payload
    got, modelled = skip_reads(bytes(damaged))
    assert got == modelled == skipping([(0, A), (B, D)], [(107, B - 107, "checksum mismatch")])


def test_checksum_mismatch_from_a_damaged_length_field():
    data, _ = block0_then_block1()
    damaged = bytearray(data)
    damaged[107 + 4] = 150  # BB's length 200 -> 150: the checksum no longer matches
    got, modelled = skip_reads(bytes(damaged))
    assert got == modelled == skipping([(0, A), (B, D)], [(107, B - 107, "checksum mismatch")])


def test_checksum_mismatch_in_the_short_last_block_counts_to_the_end_of_the_data():
    data, _ = model.encode([A, BB, C])
    damaged = bytearray(data)
    damaged[107] ^= 0xFF  # BB's stored checksum
    got, modelled = skip_reads(bytes(damaged))
    assert got == modelled == skipping([(0, A)], [(107, len(data) - 107, "checksum mismatch")])


def test_checksum_mismatch_in_the_last_block_is_a_corruption_not_a_torn_tail():
    data, _ = model.encode([A, BB])
    damaged = bytearray(data)
    damaged[-1] ^= 1
    for recovery in ("tolerate_tail", "absolute"):
        with pytest.raises(CorruptionError) as info:
            read_all(bytes(damaged), recovery=recovery)
        assert type(info.value) is CorruptionError
        assert (info.value.offset, info.value.size, info.value.reason) == (
            107,
            len(data) - 107,
            "checksum mismatch",
        )


def test_bad_record_length_drops_the_rest_of_the_block():
    data, _ = block0_then_block1()
    damaged = bytearray(data)
    damaged[107 + 4 : 107 + 6] = (B - 107 - H + 1).to_bytes(2, "little")  # one byte too long
    got, modelled = skip_reads(bytes(damaged))
    assert got == modelled == skipping([(0, A), (B, D)], [(107, B - 107, "bad record length")])
    # the length check comes first: checksums off, the same report
    got, seen, _ = read_all(bytes(damaged), verify_checksums=False)
    assert got == [(0, A), (B, D)]
    assert [tuple(c) for c in seen] == [(107, B - 107, "bad record length")]


def test_bad_record_length_in_the_last_block_of_a_block_multiple_file():
    data, _ = block0_then_block1()
    data = data[:B]  # block 0 only, full length: not a short final block
    damaged = bytearray(data)
    damaged[371 + 4 : 371 + 6] = (0xFFFF).to_bytes(2, "little")
    got, modelled = skip_reads(bytes(damaged))
    assert (
        got
        == modelled
        == skipping([(0, A), (107, BB), (314, C)], [(371, B - 371, "bad record length")])
    )


def test_partial_record_without_end_reports_the_open_fragments():
    data = phys(2, b"0123456789") + phys(3, b"abcde") + phys(1, b"x")
    got, modelled = skip_reads(data)
    assert got == modelled == skipping([(29, b"x")], [(0, 15, "partial record without end")])
    data = phys(2, b"0123456789") + phys(2, b"new") + phys(4, b"!")
    got, modelled = skip_reads(data)
    assert got == modelled == skipping([(17, b"new!")], [(0, 10, "partial record without end")])


def test_empty_first_then_full_is_not_reported():
    data = phys(2, b"") + phys(1, b"x")
    got, modelled = skip_reads(data)
    assert got == modelled == skipping([(7, b"x")], [])
    data = phys(2, b"") + phys(2, b"ab") + phys(4, b"c")
    got, modelled = skip_reads(data)
    assert got == modelled == skipping([(7, b"abc")], [])


def test_missing_start_of_fragmented_record_for_middle_and_last():
    data = phys(3, b"middle part!") + phys(1, b"ok")
    got, modelled = skip_reads(data)
    assert (
        got == modelled == skipping([(19, b"ok")], [(0, 12, "missing start of fragmented record")])
    )
    data = phys(1, b"ok") + phys(4, b"end")
    got, modelled = skip_reads(data)
    assert got == modelled == skipping([(0, b"ok")], [(9, 3, "missing start of fragmented record")])


def test_error_in_middle_of_record_after_a_checksum_mismatch():
    data = phys(2, b"0123456789") + phys(3, b"x" * 20, good=False) + phys(4, b"end")
    got, modelled = skip_reads(data)
    assert (
        got
        == modelled
        == skipping(
            [], [(17, len(data) - 17, "checksum mismatch"), (0, 10, "error in middle of record")]
        )
    )


def test_error_in_middle_of_record_after_a_bad_record_length():
    first = phys(2, b"0123456789")
    bad = bytes(4) + (60000).to_bytes(2, "little") + b"\x03"
    data = first + bad + bytes(B - 24) + phys(1, b"next")
    assert len(data) == B + 11
    got, modelled = skip_reads(data)
    assert (
        got
        == modelled
        == skipping(
            [(B, b"next")],
            [(17, B - 17, "bad record length"), (0, 10, "error in middle of record")],
        )
    )


def test_zero_header_inside_an_open_record_is_error_in_middle_of_record():
    data = phys(2, b"0123456789") + bytes(B - 17) + phys(1, b"next")
    got, modelled = skip_reads(data)
    assert got == modelled == skipping([(B, b"next")], [(0, 10, "error in middle of record")])


def test_zero_header_outside_a_record_skips_the_block_silently():
    # preallocated space: zeros, then garbage the writer never wrote, in the same block
    data = phys(1, b"a") + bytes(100) + payload(B - 108, 9) + phys(1, b"b")
    got, modelled = skip_reads(data)
    assert got == modelled == skipping([(0, b"a"), (B, b"b")], [])
    for recovery in MODES:  # not a corruption in any mode
        assert read_all(data, recovery=recovery)[0] == [(0, b"a"), (B, b"b")]


@pytest.mark.parametrize("rtype", [5, 9, 127, 128, 255])
def test_unknown_record_type_outside_a_record_reports_the_fragment(rtype):
    data = phys(1, b"a") + phys(rtype, b"four") + phys(1, b"b")
    got, modelled = skip_reads(data)
    assert (
        got
        == modelled
        == skipping([(0, b"a"), (19, b"b")], [(8, 4, f"unknown record type {rtype}")])
    )


def test_unknown_record_type_inside_a_record_reports_it_and_the_open_fragments():
    data = phys(2, b"0123456789") + phys(3, b"abcdef") + phys(200, b"four") + phys(1, b"z")
    got, modelled = skip_reads(data)
    assert got == modelled == skipping([(41, b"z")], [(0, 20, "unknown record type 200")])


def test_type_zero_with_a_payload_is_unknown_record_type_0():
    data = phys(0, b"xyz") + phys(1, b"ok")
    got, modelled = skip_reads(data)
    assert got == modelled == skipping([(10, b"ok")], [(0, 3, "unknown record type 0")])


class FailingRaw(io.RawIOBase):
    def __init__(self, data: bytes, fail_at: int, exc: BaseException) -> None:
        self._data, self._pos, self._fail_at, self.exc = data, 0, fail_at, exc

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self._pos >= self._fail_at:
            raise self.exc
        n = min(len(b), self._fail_at - self._pos)
        b[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


def test_read_error_raises_the_original_oserror_after_the_records_before_it():
    data, _ = block0_then_block1()
    exc = OSError(5, "Input/output error")
    source = FailingRaw(data, B, exc)
    seen: list[Corruption] = []
    r = leveldb_log.Reader(source, on_corruption=seen.append)
    assert [next(r), next(r), next(r), next(r)] == [A, BB, C, data[371 + H : B]]
    with pytest.raises(OSError) as info:
        next(r)
    assert info.value is exc
    assert not isinstance(info.value, LogError)
    assert seen == [] and r.dropped_bytes == 0
    r.close()


# ---------------------------------------------------------------------------
# the torn tail: the three silent end-of-file cases
# ---------------------------------------------------------------------------


def torn_cases() -> list[tuple[str, bytes, list[tuple[int, bytes]], tuple[int, int, str]]]:
    clean, _ = model.encode([A, BB])
    end = len(clean)
    long_rec = payload(B, 7)  # FIRST at `end` .. LAST in block 1
    frag, _ = model.encode([long_rec], start=end)
    return [
        (
            "truncated header",
            clean + phys(1, b"next")[:3],
            [(0, A), (107, BB)],
            (end, 3, "truncated header at end of file"),
        ),
        (
            "truncated payload",
            clean + phys(1, b"n" * 100)[:27],
            [(0, A), (107, BB)],
            (end, 27, "truncated payload at end of file"),
        ),
        (
            "fragmented record open at end of file",
            clean + frag[: B - end],
            [(0, A), (107, BB)],
            (end, B - end, "fragmented record open at end of file"),
        ),
        (
            "payload cut short inside an open record",
            clean + frag[: B - end + 20],
            [(0, A), (107, BB)],
            (end, B - end + 20, "truncated payload at end of file"),
        ),
        (
            "header cut short inside an open record",
            clean + frag[: B - end + 5],
            [(0, A), (107, BB)],
            (end, B - end + 5, "truncated header at end of file"),
        ),
    ]


def test_the_torn_cases_long_record_starts_where_the_clean_log_ends():
    clean, _ = model.encode([A, BB])
    _, offsets = model.encode([payload(B, 7)], start=len(clean))
    assert offsets == [len(clean)]


@pytest.mark.parametrize("case", torn_cases(), ids=lambda c: c[0])
def test_torn_tail_is_silent_except_in_absolute_mode(case):
    _, data, records, report = case
    for recovery in ("skip", "tolerate_tail", "point_in_time"):
        got, seen, dropped = read_all(data, recovery=recovery)
        assert (got, seen, dropped) == (records, [], 0), recovery
    seen = []
    got = []
    r = leveldb_log.Reader(data, recovery="absolute", on_corruption=seen.append)
    with pytest.raises(TruncatedRecordError) as info:
        for rec in r:
            got.append((r.last_record_offset, rec))
    assert got == records
    assert (info.value.offset, info.value.size, info.value.reason) == report
    assert [tuple(c) for c in seen] == [report]
    assert r.dropped_bytes == report[1]
    expected = model_read(data, recovery="absolute")
    assert expected.error == "truncated" and expected.corruptions == [report]


def test_trailer_bytes_are_not_checked():
    data = bytearray(model.encode([payload(B - H - 3, 1), b"next"])[0])
    assert data[B - 3 : B] == bytes(3)
    data[B - 3 : B] = b"\xde\xad\xbe"
    got, modelled = skip_reads(bytes(data))
    assert got == modelled == skipping([(0, payload(B - H - 3, 1)), (B, b"next")], [])


def test_zero_fill_at_the_end_is_not_a_torn_tail():
    clean, _ = model.encode([A, BB])
    for fill in (7, 100, B - len(clean), B - len(clean) + B):
        data = clean + bytes(fill)
        for recovery in MODES:
            got, seen, _ = read_all(data, recovery=recovery)
            assert got == [(0, A), (107, BB)] and seen == [], (fill, recovery)


# ---------------------------------------------------------------------------
# recovery modes against a mid-file corruption and against a torn tail
# ---------------------------------------------------------------------------


def mid_file_corruption() -> bytes:
    data, _ = block0_then_block1()
    damaged = bytearray(data)
    damaged[107 + H] ^= 0x01
    return bytes(damaged)


MID = (107, B - 107, "checksum mismatch")


def test_skip_reports_a_mid_file_corruption_and_goes_on():
    got, seen, dropped = read_all(mid_file_corruption(), recovery="skip")
    assert got == [(0, A), (B, D)]
    assert [tuple(c) for c in seen] == [MID] and dropped == MID[1]


@pytest.mark.parametrize("recovery", ["tolerate_tail", "absolute"])
def test_mid_file_corruption_raises_corruption_error_after_the_records_before_it(recovery):
    seen: list[Corruption] = []
    r = leveldb_log.Reader(mid_file_corruption(), recovery=recovery, on_corruption=seen.append)
    assert next(r) == A and r.last_record_offset == 0
    with pytest.raises(CorruptionError) as info:
        next(r)
    e = info.value
    assert type(e) is CorruptionError  # not TruncatedRecordError
    assert isinstance(e, ValueError) and isinstance(e, LogError)
    assert (e.offset, e.size, e.reason) == MID
    assert e.corruption == Corruption(*MID)
    assert [tuple(c) for c in seen] == [MID] and r.dropped_bytes == MID[1]
    assert list(r) == []  # the log ends there
    r.close()


def test_point_in_time_ends_cleanly_before_a_mid_file_corruption():
    got, seen, dropped = read_all(mid_file_corruption(), recovery="point_in_time")
    assert got == [(0, A)]
    assert [tuple(c) for c in seen] == [MID] and dropped == MID[1]


@pytest.mark.parametrize("recovery", MODES)
def test_each_recovery_mode_matches_the_model_on_mid_file_and_tail_damage(recovery):
    torn = torn_cases()[1][1]
    for data in (mid_file_corruption(), torn):
        got = c_read(data, recovery=recovery)
        assert_reader_contract(got)
        assert_same(got, model_read(data, recovery=recovery))


@pytest.mark.parametrize("recovery", ["skip", "tolerate_tail", "point_in_time"])
def test_torn_tail_ends_the_log_silently(recovery):
    _, data, records, _ = torn_cases()[1]
    got, seen, dropped = read_all(data, recovery=recovery)
    assert got == records and seen == [] and dropped == 0


def test_absolute_raises_truncated_record_error_at_a_torn_tail_after_the_records():
    _, data, records, report = torn_cases()[1]
    r = leveldb_log.Reader(data, recovery="absolute")
    assert [next(r), next(r)] == [rec for _, rec in records]
    with pytest.raises(TruncatedRecordError) as info:
        next(r)
    e = info.value
    assert isinstance(e, CorruptionError) and isinstance(e, ValueError)
    assert isinstance(e, LogError)
    assert (e.offset, e.size, e.reason) == report
    assert r.dropped_bytes == report[1]


def test_exception_classes_form_the_documented_hierarchy():
    assert issubclass(CorruptionError, LogError) and issubclass(CorruptionError, ValueError)
    assert issubclass(TruncatedRecordError, CorruptionError)
    assert issubclass(LogError, Exception) and not issubclass(LogError, ValueError)
    e = TruncatedRecordError(5, 6, "truncated header at end of file")
    assert (e.offset, e.size, e.reason) == (5, 6, "truncated header at end of file")
