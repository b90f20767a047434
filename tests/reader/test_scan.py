"""leveldb_log.scan (every physical record, damaged ones included) and leveldb_log.splits.

The central properties: the regions scan() yields tile the file exactly, and joining its
records by docs/format.md's rules gives what Reader returns, on clean and on damaged logs.
"""

from __future__ import annotations

import gc
import io
import itertools
import os
import pathlib
import warnings
from collections.abc import Iterable

import leveldb_log
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from leveldb_log import PhysicalRecord, scan, splits
from support import model
from support.damage import damage, soup_bytes, soup_ops
from support.profiles import scaled
from support.records import make_records, size_lists
from support.warned import READS_DAMAGE

B = leveldb_log.BLOCK_SIZE
H = leveldb_log.HEADER_SIZE


def regions(source: object, **kw: bool) -> list[PhysicalRecord]:
    return list(scan(source, **kw))  # type: ignore[arg-type]


def assert_tiles(found: list[PhysicalRecord], length: int) -> None:
    """Each region starts where the previous ended; together they cover [0, length)."""
    position = 0
    for r in found:
        assert r.offset == position, (r, position)
        assert r.size > 0 or (r.kind == "record" and r.size == H), r
        position = r.end
    assert position == length


def join(found: Iterable[PhysicalRecord], length: int) -> list[model.Event]:
    """The reader's events, from scan's regions and the model's fragment assembler."""
    asm = model._Assembler()
    found = list(found)
    for i, r in enumerate(found):
        if r.kind == "record" and r.checksum_ok is not False:
            assert r.type is not None and r.payload is not None
            asm.physical(r.offset, r.type, r.payload)
        elif r.kind == "record":  # bad checksum: dropped with the rest of its block
            after = found[i + 1] if i + 1 < len(found) else None
            rest = after.size if after and after.reason == model.CHECKSUM_MISMATCH else 0
            size = r.size + rest
            asm.bad_physical(model.Corruption(r.offset, size, model.CHECKSUM_MISMATCH))
        elif r.kind == "garbage" and r.reason == model.BAD_RECORD_LENGTH:
            asm.bad_physical(model.Corruption(r.offset, r.size, model.BAD_RECORD_LENGTH))
        elif r.kind == "zero":
            asm.bad_physical(None)
        elif r.kind == "truncated":
            reason = model.TRUNCATED_PAYLOAD if r.type is not None else model.TRUNCATED_HEADER
            asm.truncated_at_end(r.offset, length, reason)
            return asm.events
    asm.clean_end(length)
    return asm.events


def reader_view(data: bytes, **kw: bool) -> tuple[list[tuple[int, bytes]], list[tuple]]:
    seen: list[leveldb_log.Corruption] = []
    out = []
    with leveldb_log.Reader(data, on_corruption=seen.append, **kw) as r:
        for record in r:
            out.append((r.last_record_offset, record))
    return out, [tuple(c) for c in seen]


def events_view(events: list[model.Event]) -> tuple[list[tuple[int, bytes]], list[tuple]]:
    records = [(e.offset, e.data) for e in events if isinstance(e, model.Record)]
    damage = [(e.offset, e.size, e.reason) for e in events if isinstance(e, model.Corruption)]
    return records, damage


# ---------------------------------------------------------------------------
# golden layouts
# ---------------------------------------------------------------------------


def test_format_md_worked_example() -> None:
    data, _ = model.encode([b"a" * 1000, b"b" * 97270, b"c" * 8000])
    found = regions(data)
    summary = [(r.offset, r.kind, r.type, r.length) for r in found]
    assert summary == [
        (0, "record", 1, 1000),
        (1007, "record", 2, 31754),
        (32768, "record", 3, 32761),
        (65536, "record", 4, 32755),
        (98298, "trailer", None, 6),
        (98304, "record", 1, 8000),
    ]
    assert all(r.checksum_ok for r in found if r.kind == "record")
    assert all(r.payload is None for r in found)
    assert_tiles(found, 106311)


def test_payloads_are_kept_on_request() -> None:
    data, _ = model.encode([b"foo", b"", b"x" * 40000])
    found = regions(data, payloads=True)
    assert [r.payload for r in found][:2] == [b"foo", b""]
    assert b"".join(r.payload or b"" for r in found[2:]) == b"x" * 40000


def test_empty_log_has_no_regions() -> None:
    assert regions(b"") == []


def test_zero_fill_is_one_zero_region_to_the_end_of_its_block() -> None:
    data, _ = model.encode([b"abc"])
    found = regions(data + bytes(B - len(data)) + model.encode_physical(1, b"next"))
    assert [(r.offset, r.kind, r.size) for r in found] == [
        (0, "record", 10),
        (10, "zero", B - 10),
        (B, "record", 11),
    ]


def test_bad_length_makes_the_rest_of_the_block_garbage() -> None:
    good = model.encode_physical(1, b"ok")
    bad = bytearray(model.encode_physical(1, b"zz"))
    bad[4:6] = (40000).to_bytes(2, "little")
    data = good + bytes(bad) + bytes(B - len(good) - len(bad)) + good
    found = regions(data)
    assert [(r.offset, r.kind, r.type, r.size, r.reason) for r in found] == [
        (0, "record", 1, 9, None),
        (9, "garbage", 1, B - 9, "bad record length"),
        (B, "record", 1, 9, None),
    ]


def test_bad_checksum_is_a_record_then_garbage_to_the_end_of_the_block() -> None:
    data = bytearray(model.encode([b"a" * 100, b"b" * 100, b"c" * 40000])[0])
    data[H + 100 + H] ^= 1  # first payload byte of the second record
    found = regions(bytes(data))
    assert [(r.offset, r.kind, r.checksum_ok, r.size, r.reason) for r in found[:4]] == [
        (0, "record", True, 107, None),
        (107, "record", False, 107, None),
        (214, "garbage", None, B - 214, "checksum mismatch"),
        (B, "record", True, H + 40000 - (B - 214 - H), None),
    ]
    # Without checksums the damage is invisible, as for Reader(verify_checksums=False).
    unchecked = regions(bytes(data), verify_checksums=False)
    assert [r.kind for r in unchecked] == ["record"] * 4
    assert {r.checksum_ok for r in unchecked} == {None}


def test_torn_tails_are_truncated_regions() -> None:
    data, _ = model.encode([b"a" * 10, b"b" * 50])
    header_cut = regions(data[: 17 + 3])
    assert [(r.offset, r.kind, r.type, r.size) for r in header_cut][1:] == [
        (17, "truncated", None, 3)
    ]
    payload_cut = regions(data[: 17 + H + 20])
    assert [(r.offset, r.kind, r.type, r.size) for r in payload_cut][1:] == [
        (17, "truncated", 1, H + 20)
    ]


def test_a_full_final_block_has_a_trailer_not_a_torn_tail() -> None:
    data, _ = model.encode([b"x" * (B - H - 3)])
    data += bytes(B - len(data))
    assert [r.kind for r in regions(data)] == ["record", "trailer"]


def test_unknown_types_are_records_with_their_type() -> None:
    data = model.encode_physical(1, b"a") + model.encode_physical(77, b"odd")
    found = regions(data)
    assert [(r.kind, r.type, r.checksum_ok) for r in found] == [
        ("record", 1, True),
        ("record", 77, True),
    ]


# ---------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------


class Trickle(io.RawIOBase):
    """A file object that returns at most `step` bytes per read and records read sizes."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data = data
        self.pos = 0
        self.step = step
        self.asked: list[int] = []

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        self.asked.append(size)
        n = self.step if size < 0 else min(size, self.step)
        chunk = self.data[self.pos : self.pos + n]
        self.pos += len(chunk)
        return chunk


@pytest.fixture(scope="module")
def sample() -> bytes:
    data, _ = model.encode(make_records([0, 5, 40000, 32761, 7, 100_000, 3], salt=4))
    return data[:-2]  # a torn tail too


def test_every_kind_of_source_gives_the_same_regions(sample: bytes, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "sample.log"
    path.write_bytes(sample)
    expected = regions(sample, payloads=True)
    assert_tiles(expected, len(sample))
    with open(path, "rb") as f:
        from_file = regions(f, payloads=True)
    sources: list[object] = [
        str(path),
        path,
        bytearray(sample),
        memoryview(sample),
        io.BytesIO(sample),
        Trickle(sample, 1000),
    ]
    for source in sources:
        assert regions(source, payloads=True) == expected, type(source)
    assert from_file == expected


def test_a_file_is_read_one_block_at_a_time(sample: bytes) -> None:
    trickle = Trickle(sample, 5000)
    for _ in scan(trickle):
        pass
    assert max(trickle.asked) == B


def test_a_file_object_is_scanned_from_its_position(sample: bytes) -> None:
    f = io.BytesIO(b"JUNK" + sample)
    f.seek(4)
    assert regions(f) == regions(sample)


def test_a_pipe_is_scanned(sample: bytes) -> None:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only writes
        os.close(read_fd)
        with os.fdopen(write_fd, "wb") as w:
            w.write(sample)
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as r:
        assert regions(r) == regions(sample)
    os.waitpid(pid, 0)


def test_a_missing_file_raises_file_not_found(tmp_path: pathlib.Path) -> None:
    with pytest.raises(FileNotFoundError):
        next(scan(tmp_path / "missing.log"))


@pytest.mark.parametrize("read", [0, 1, 2])
def test_the_file_scan_opens_is_closed_however_little_is_read(
    sample: bytes, tmp_path: pathlib.Path, read: int
) -> None:
    """scan(path) opens the file at the call; an iterator dropped before its first region,
    or after some, closes it (no ResourceWarning when it is collected)."""
    path = tmp_path / "a.log"
    path.write_bytes(sample)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        found = scan(path)
        assert list(itertools.islice(found, read)) == regions(sample)[:read]
        del found
        gc.collect()
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []


# ---------------------------------------------------------------------------
# properties: tiling, and joining gives what Reader returns
# ---------------------------------------------------------------------------


@given(size_lists(), st.integers(0, 9))
def test_clean_logs_join_to_what_reader_returns(sizes: list[int], salt: int) -> None:
    records = make_records(sizes, salt)
    data, offsets = model.encode(records)
    found = regions(data, payloads=True)
    assert_tiles(found, len(data))
    assert {r.kind for r in found} <= {"record", "trailer"}
    joined = join(found, len(data))
    assert events_view(joined) == (list(zip(offsets, records, strict=True)), [])
    assert reader_view(data) == events_view(joined)


@READS_DAMAGE
@scaled(0.5)
@given(size_lists(min_size=1), st.data())
def test_damaged_logs_tile_and_join_to_what_reader_returns(
    sizes: list[int], data: st.DataObject
) -> None:
    clean, _ = model.encode(make_records(sizes))
    broken, _, _ = damage(data.draw, clean)
    found = regions(broken, payloads=True)
    for kind in sorted({r.kind for r in found}):
        event(f"region kind {kind}")
    assert_tiles(found, len(broken))
    assert reader_view(broken) == events_view(join(found, len(broken)))


@READS_DAMAGE
@scaled(0.5)
@given(soup_ops, st.booleans())
def test_record_soups_tile_and_join_to_what_reader_returns(ops: list, verify: bool) -> None:
    log = soup_bytes(ops)
    found = regions(log, payloads=True, verify_checksums=verify)
    for kind in sorted({r.kind for r in found}):
        event(f"region kind {kind}")
    assert_tiles(found, len(log))
    expected = reader_view(log, verify_checksums=verify)
    assert expected == events_view(join(found, len(log)))


# ---------------------------------------------------------------------------
# splits
# ---------------------------------------------------------------------------


def test_splits_by_count_and_by_size() -> None:
    log = bytes(10 * B + 5)
    assert splits(log, n=3) == [(0, 3 * B), (3 * B, 7 * B), (7 * B, 10 * B + 5)]
    assert splits(log, size=4 * B) == [(0, 4 * B), (4 * B, 8 * B), (8 * B, 10 * B + 5)]
    assert splits(log, size=1) == [(k * B, min((k + 1) * B, 10 * B + 5)) for k in range(11)]
    assert splits(log, n=100) == splits(log, size=B)  # never an empty range
    assert splits(b"", n=4) == []
    assert splits(b"abc", n=4) == [(0, 3)]


def test_splits_sources(tmp_path: pathlib.Path) -> None:
    log = bytes(3 * B)
    path = tmp_path / "x.log"
    path.write_bytes(log)
    expected = [(0, B), (B, 2 * B), (2 * B, 3 * B)]
    assert splits(path, n=3) == splits(str(path), n=3) == expected
    assert splits(memoryview(log), n=3) == splits(bytearray(log), n=3) == expected
    f = io.BytesIO(b"xx" + log)
    f.seek(2)
    assert splits(f, n=3) == expected
    assert f.tell() == 2


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({}, ValueError),
        ({"n": 2, "size": B}, ValueError),
        ({"n": 0}, ValueError),
        ({"size": -5}, ValueError),
        ({"n": 1.5}, TypeError),
        ({"n": True}, TypeError),
    ],
)
def test_splits_refuses_bad_arguments(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        splits(b"x", **kwargs)


def test_splits_refuses_a_source_without_a_length() -> None:
    with pytest.raises(TypeError, match="seekable"):
        splits(12345, n=2)  # type: ignore[arg-type]


@scaled(0.5)
@given(size_lists(max_size=12), st.integers(1, 6), st.integers(1, 3 * B), st.booleans())
def test_split_ranges_read_every_record_exactly_once(
    sizes: list[int], n: int, size: int, by_count: bool
) -> None:
    records = make_records(sizes)
    data, offsets = model.encode(records)
    ranges = splits(data, n=n) if by_count else splits(data, size=size)
    if data:
        assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert all(a < b for a, b in ranges)
    assert all(b == c for (_, b), (c, _) in itertools.pairwise(ranges))
    assert all(a % B == 0 for a, _ in ranges)
    if by_count:
        assert len(ranges) <= n
    got: list[tuple[int | None, bytes]] = []
    for start, end in ranges:
        with leveldb_log.Reader(data, start=start, end=end) as r:
            got += [(r.last_record_offset, rec) for rec in r]
    assert got == list(zip(offsets, records, strict=True))
