"""Tests of leveldb_log.Writer's modes (docs/api.md, "Writer"; docs/format.md, "Appending"):
"w" and "x" on new and existing paths, and "a": resuming block alignment, cutting a torn tail
or zero fill back to the last complete record, keeping damage and starting a fresh block,
refusing a file that holds no valid record.

Expected bytes come from the reference model (tests/support/model.py).
"""

from __future__ import annotations

import os
import re

import pytest
from leveldb_log import BLOCK_SIZE, HEADER_SIZE, CorruptionError, Reader, Writer
from support import model
from support.files import read_file, write_raw
from support.records import MIXED_SIZES, records_of

# ---------------------------------------------------------------------------
# Writer: modes
# ---------------------------------------------------------------------------


def test_writer_mode_w_creates_and_produces_model_bytes_and_offsets(tmp_path):
    p = tmp_path / "w.log"
    recs = records_of(MIXED_SIZES)
    with Writer(p) as w:
        offsets = [w.write(r) for r in recs]
    expected, expected_offsets = model.encode(recs)
    assert offsets == expected_offsets
    assert read_file(p) == expected


def test_writer_mode_w_truncates_existing_file(tmp_path):
    p = tmp_path / "w.log"
    write_raw(p, b"\xff" * 100000)
    with Writer(str(p), "w") as w:
        assert w.position == 0
        assert w.write(b"fresh") == 0
    assert read_file(p) == model.encode([b"fresh"])[0]


def test_writer_mode_x_refuses_existing_path_and_leaves_it_alone(tmp_path):
    p = tmp_path / "x.log"
    original = model.encode([b"keep me"])[0]
    write_raw(p, original)
    with pytest.raises(FileExistsError):
        Writer(p, "x")
    assert read_file(p) == original


def test_writer_mode_x_creates_missing_path(tmp_path):
    p = tmp_path / "x.log"
    with Writer(p, "x") as w:
        w.write(b"new")
    assert list(Reader(p)) == [b"new"]


def test_writer_mode_a_creates_missing_path(tmp_path):
    p = tmp_path / "a.log"
    with Writer(p, "a") as w:
        assert w.position == 0
        assert w.write(b"first") == 0
    assert read_file(p) == model.encode([b"first"])[0]


def _append(p, new):
    """Appends `new` with mode "a" to the log at p: where the Writer started, the offsets
    write() returned, the file's bytes after, and what an "absolute" read of it yields."""
    with Writer(p, "a") as w:
        start = w.position
        offsets = [w.write(r) for r in new]
    return start, offsets, read_file(p), list(Reader(p, recovery="absolute"))


@pytest.mark.parametrize(
    "old_sizes",
    [
        [10],
        [32768 - 7 - 3],  # log ends 3 bytes before the block end (trailer zone)
        [32768 - 7 - 7],  # exactly 7 bytes left in the block
        [32768 - 7],  # log ends on a block boundary
        [5000, 70000, 12],  # a fragmented record then a small one
        [100000],  # ends with a fragmented record
    ],
)
def test_writer_mode_a_appends_resuming_block_alignment(tmp_path, old_sizes):
    p = tmp_path / "a.log"
    old = records_of(old_sizes, b"old")
    new = records_of([0, 3, 40000, 17], b"new")
    old_bytes, _ = model.encode(old)
    with Writer(p) as w:
        w.write_many(old)
    assert os.path.getsize(p) == len(old_bytes)
    new_bytes, new_offsets = model.encode(new, start=len(old_bytes))
    # every complete old record comes back, then the new ones, even in "absolute" mode
    assert _append(p, new) == (len(old_bytes), new_offsets, old_bytes + new_bytes, old + new)


def _torn_tail(kind, start):
    if kind == "truncated header":
        return model.encode([b"h" * 50], start=start)[0][:4]
    if kind == "truncated header (1 byte)":
        return model.encode([b"h" * 50], start=start)[0][:1]
    if kind == "truncated payload":
        return model.encode([b"p" * 500], start=start)[0][:300]
    if kind == "FIRST without LAST":
        return model.encode([b"f" * 100000], start=start)[0][:70000]
    if kind == "FIRST+MIDDLE without LAST (ends on block edge)":
        enc = model.encode([b"f" * 200000], start=start)[0]
        cut = (BLOCK_SIZE - start % BLOCK_SIZE) + 2 * BLOCK_SIZE
        return enc[:cut]
    if kind == "zero fill 100 KB":
        return bytes(100 * 1024)
    if kind == "zero fill, whole blocks":
        return bytes((BLOCK_SIZE - start % BLOCK_SIZE) + 2 * BLOCK_SIZE)
    if kind == "torn payload then zero fill":
        return model.encode([b"p" * 500], start=start)[0][:300] + bytes(50000)
    raise AssertionError(kind)


TORN_KINDS = [
    "truncated header",
    "truncated header (1 byte)",
    "truncated payload",
    "FIRST without LAST",
    "FIRST+MIDDLE without LAST (ends on block edge)",
    "zero fill 100 KB",
    "zero fill, whole blocks",
]


# Torn tails that hold no valid physical record: alone in a file, they are no log.
NO_VALID_RECORD = {"truncated header", "truncated header (1 byte)", "truncated payload"}


def _open_to_append(p):
    """Opens the log at p with mode "a": the CorruptionError that refused it (None if it
    opened), and whether the file is byte for byte as it was."""
    before = read_file(p)
    try:
        Writer(p, "a").close()
        error = None
    except CorruptionError as e:
        error = e
    return error, read_file(p) == before


@pytest.mark.parametrize("kind", TORN_KINDS)
@pytest.mark.parametrize("old_sizes", [[], [100, 200, 300], [3000] * 20, [50, 70000]])
def test_writer_mode_a_cuts_torn_tail_or_zero_fill_back_to_last_complete_record(
    tmp_path, kind, old_sizes
):
    p = tmp_path / "torn.log"
    old = records_of(old_sizes, b"old")
    old_bytes, _ = model.encode(old)
    write_raw(p, old_bytes + _torn_tail(kind, len(old_bytes)))
    if not old and kind in NO_VALID_RECORD:
        error, unchanged = _open_to_append(p)
        assert unchanged and re.search(r"does not end like a log: .* at offset 0", str(error))
        return
    new = records_of([10, 0, 50000, 20], b"new")
    new_bytes, new_offsets = model.encode(new, start=len(old_bytes))
    # every complete old record comes back, then the new ones, even in "absolute" mode
    assert _append(p, new) == (len(old_bytes), new_offsets, old_bytes + new_bytes, old + new)


@pytest.mark.parametrize("old_sizes", [[], [100, 200, 300], [3000] * 20])
def test_writer_mode_a_cuts_a_record_torn_inside_zero_fill_back(tmp_path, old_sizes):
    # A crash inside preallocated space leaves a torn record followed by zeros,
    # which readers see as a checksum mismatch; "a" recognizes it as a crash
    # (only a torn tail once the zeros are set aside) and cuts it back, so the
    # log reads back cleanly in "absolute" mode.
    p = tmp_path / "torn_in_zeros.log"
    old = records_of(old_sizes, b"old")
    old_bytes, _ = model.encode(old)
    torn = model.encode([b"p" * 500], start=len(old_bytes))[0][:300]
    original = old_bytes + torn + bytes(50000)
    write_raw(p, original)
    assert model.read(original).corruptions  # damage to a reader, as it stands
    if not old:  # a torn record alone (then zeros) holds no valid record: no log
        error, unchanged = _open_to_append(p)
        assert unchanged and re.search(r"does not end like a log: .* at offset 0", str(error))
        return
    new = records_of([10, 0, 50000, 20], b"new")
    with Writer(p, "a") as w:
        offsets = [w.write(r) for r in new]
    assert offsets == model.encode(new, start=len(old_bytes))[1]
    assert read_file(p) == old_bytes + model.encode(new, start=len(old_bytes))[0]
    assert list(Reader(p, recovery="absolute")) == old + new


def test_writer_mode_a_keeps_a_record_whose_payload_ends_in_zeros(tmp_path):
    # Setting trailing zeros aside must never cut into a complete record.
    p = tmp_path / "zeros_in_payload.log"
    old = [b"a" * 10, b"b" + bytes(70000)]
    old_bytes, _ = model.encode(old)
    write_raw(p, old_bytes + model.encode([b"c" * 900], start=len(old_bytes))[0][:200])
    with Writer(p, "a") as w:
        w.write(b"new")
    assert list(Reader(p, recovery="absolute")) == [*old, b"new"]


def test_writer_mode_a_on_file_of_only_zeros_starts_at_zero(tmp_path):
    p = tmp_path / "zeros.log"
    write_raw(p, bytes(100 * 1024))
    with Writer(p, "a") as w:
        assert w.write(b"first") == 0
    assert list(Reader(p, recovery="absolute")) == [b"first"]


def test_writer_mode_a_with_damage_near_tail_starts_new_records_at_block_boundary(tmp_path):
    p = tmp_path / "damaged.log"
    old = records_of([3000] * 40, b"old")  # about 3.7 blocks
    old_bytes, old_offsets = model.encode(old)
    victim = 38  # in the last block, followed by complete records in that block
    damaged = bytearray(old_bytes)
    damaged[old_offsets[victim] + HEADER_SIZE + 10] ^= 0x5A  # flip a payload byte
    damaged += model.encode([b"t" * 500], start=len(damaged))[0][:100]  # torn tail
    write_raw(p, bytes(damaged))
    new = records_of([10, 40000, 0, 7], b"new")
    with Writer(p, "a") as w:
        offsets = [w.write(r) for r in new]
    assert offsets[0] % BLOCK_SIZE == 0
    assert offsets[0] > old_offsets[victim]
    # The damage itself is left untouched.
    data = read_file(p)
    assert data[: len(old_bytes)] == bytes(damaged[: len(old_bytes)])
    reports = []
    got = list(Reader(p, recovery="skip", on_corruption=reports.append))
    assert got == old[:victim] + new
    assert reports and reports[0].offset == old_offsets[victim]
    assert reports[0].reason == "checksum mismatch"
    # The new records never share a block with damage.
    assert all(c.offset // BLOCK_SIZE < offsets[0] // BLOCK_SIZE for c in reports)


def test_writer_mode_a_with_early_damage_and_torn_tail_new_records_read_back(tmp_path):
    p = tmp_path / "damaged.log"
    old = records_of([3000] * 40, b"old")
    old_bytes, old_offsets = model.encode(old)
    victim = 3  # block 0
    damaged = bytearray(old_bytes)
    damaged[old_offsets[victim] + HEADER_SIZE + 10] ^= 0x5A
    damaged += model.encode([b"t" * 500], start=len(damaged))[0][:100]
    write_raw(p, bytes(damaged))
    new = records_of([10, 40000, 0, 7], b"new")
    with Writer(p, "a") as w:
        offsets = [w.write(r) for r in new]
    reports = []
    got = list(Reader(p, recovery="skip", on_corruption=reports.append))
    expected_old = model.read(bytes(damaged)).payloads
    assert got == expected_old + new
    assert reports[0].offset == old_offsets[victim]
    assert all(c.offset // BLOCK_SIZE < offsets[0] // BLOCK_SIZE for c in reports)
