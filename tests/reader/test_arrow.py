"""Arrow in and out of the binding (csrc/py/reader_arrow.c, csrc/py/writer_arrow.c).

Export: Reader.iter_batches() and Reader.__arrow_c_stream__ give exactly the records,
reports and errors of record-by-record iteration (differential, against tests/support/model.py and
list(Reader(...)), over damaged logs in every recovery mode and random ranges and batch
limits); pyarrow, polars and DuckDB consume them. The C structs are also read and made with
ctypes alone (tests/support/arrow_abi.py), so that the ABI itself is checked without pyarrow
(and under the sanitized build). Import, write_many over Arrow data, is
tests/writer/test_write_many_arrow.py.
"""

from __future__ import annotations

import ctypes
import gc
import io
import itertools
import os
import warnings
from typing import Any, NamedTuple

import leveldb_log
import pytest
from hypothesis import given
from hypothesis import strategies as st
from leveldb_log import _testing
from support import model
from support.arrow_abi import ArrowArray, ArrowArrayStream, ArrowSchema, capsule_struct, schema_of
from support.leaks import assert_no_leak
from support.logs import clean_logs, damaged_logs, draw_range
from support.profiles import scaled
from support.reading import MODES, Outcome, assert_reader_contract, assert_same, c_read, model_read
from support.records import B, make_records
from support.warned import READS_DAMAGE

# The C types of the columns' buffers, by Arrow format: offset (uint64, int64) and the ends
# of data (large_binary, binary).
OFFSET_CTYPE = {"L": ctypes.c_uint64, "l": ctypes.c_int64}
ENDS_CTYPE = {"Z": ctypes.c_int64, "z": ctypes.c_int32}
# iter_batches' offset_type and data_type, and the Arrow formats they export.
TYPE_FORMATS = {
    ("uint64", "large_binary"): ("L", "Z"),
    ("uint64", "binary"): ("L", "z"),
    ("int64", "large_binary"): ("l", "Z"),
    ("int64", "binary"): ("l", "z"),
}


def columns_of(a: Any, formats: tuple[str, str] = ("L", "Z")) -> tuple[list[int], list[bytes]]:
    """The (offsets, records) of an exported struct array, read from its buffers as the
    columns' Arrow formats say."""
    assert (a.n_buffers, a.n_children, a.null_count, a.offset) == (1, 2, 0, 0)
    off, dat = a.children[0].contents, a.children[1].contents
    n = a.length
    assert off.length == dat.length == n and (off.n_buffers, dat.n_buffers) == (2, 3)
    offset_ctype, ends_ctype = OFFSET_CTYPE[formats[0]], ENDS_CTYPE[formats[1]]
    offsets = list((offset_ctype * n).from_address(off.buffers[1])) if n else []
    ends = list((ends_ctype * (n + 1)).from_address(dat.buffers[1]))
    assert ends[0] == 0 and dat.buffers[2]
    data = ctypes.string_at(dat.buffers[2], ends[-1]) if ends[-1] else b""
    return offsets, [data[ends[i] : ends[i + 1]] for i in range(n)]


def stream_batches(
    reader: Any, requested: Any = None
) -> tuple[list[tuple[list[int], list[bytes]]], str | None]:
    """Reads a Reader's C stream (uint64 and large_binary: the default, or what `requested`
    asks that it ignores) by hand: its batches, and get_last_error if it failed."""
    capsule = reader.__arrow_c_stream__(requested)
    stream = capsule_struct(capsule, b"arrow_array_stream", ArrowArrayStream)
    schema = ArrowSchema()
    assert stream.get_schema(ctypes.byref(stream), ctypes.byref(schema)) == 0
    assert schema_of(schema) == ("+s", "", [("L", "offset", []), ("Z", "data", [])])
    schema.release(ctypes.byref(schema))
    assert not schema.release
    out = []
    while True:
        array = ArrowArray()
        if stream.get_next(ctypes.byref(stream), ctypes.byref(array)) != 0:
            return out, stream.get_last_error(ctypes.byref(stream)).decode()
        if not array.release:
            return out, None
        out.append(columns_of(array))
        array.release(ctypes.byref(array))
        assert not array.release


def encode(records: list[bytes]) -> bytes:
    out = io.BytesIO()
    with leveldb_log.Writer(out) as w:
        w.write_many(records)
    return out.getvalue()


RECORDS = [b"", b"a", b"hello" * 20, bytes(range(256)) * 200, b"z" * 32761, b"tail"]
CLEAN = encode(RECORDS)


# ---------------------------------------------------------------------------
# batches against record-by-record iteration and the model
# ---------------------------------------------------------------------------


class BatchSeen(NamedTuple):
    """One batch of iter_batches: len(batch), its records and offsets (read with ctypes),
    batch.nbytes, and the Reader's last_record_offset once it was returned."""

    length: int
    records: list[bytes]
    offsets: list[int | None]
    nbytes: int
    last_record_offset: int | None


class BatchesEnd(NamedTuple):
    """How iter_batches ended: the (offset, size, reason) of the CorruptionError it raised
    (None if none) and of the last report; then what iter_batches and iteration gave after."""

    raised: tuple[int, int, str] | None
    last_report: tuple[int, int, str] | None
    after_end: tuple[list[Any], list[bytes]]


def batch_read(
    source: Any,
    max_records: int,
    max_bytes: int,
    types: tuple[str, str] = ("uint64", "large_binary"),
    **kw: Any,
) -> tuple[Outcome, list[BatchSeen], BatchesEnd]:
    """As support.reading.c_read, through iter_batches (read with ctypes: no pyarrow) with
    the column types `types` (offset_type, data_type); also each batch as seen, and how the
    batches ended. Every batch's schema is checked against the types."""
    seen: list[Any] = []
    batches: list[BatchSeen] = []
    error = raised = None
    formats = TYPE_FORMATS[types]
    with leveldb_log.Reader(source, on_corruption=seen.append, **kw) as r:
        it = r.iter_batches(
            max_records=max_records, max_bytes=max_bytes, offset_type=types[0], data_type=types[1]
        )
        while True:
            try:
                batch = next(it)
            except StopIteration:
                break
            except leveldb_log.CorruptionError as e:
                error = (
                    "truncated" if isinstance(e, leveldb_log.TruncatedRecordError) else "corruption"
                )
                raised = (e.offset, e.size, e.reason)
                break
            schema, capsule = batch.__arrow_c_array__()
            assert schema_of(capsule_struct(schema, b"arrow_schema", ArrowSchema)) == (
                "+s",
                "",
                [(formats[0], "offset", []), (formats[1], "data", [])],
            )
            offs, recs = columns_of(capsule_struct(capsule, b"arrow_array", ArrowArray), formats)
            batches.append(BatchSeen(len(batch), recs, offs, batch.nbytes, r.last_record_offset))
        dropped = r.dropped_bytes
        after_end = (list(r.iter_batches()), list(r))
    records = [rec for b in batches for rec in b.records]
    offsets = [o for b in batches for o in b.offsets]
    outcome = Outcome(records, offsets, [tuple(c) for c in seen], error, dropped)
    return outcome, batches, BatchesEnd(raised, tuple(seen[-1]) if seen else None, after_end)


def expected_batches(
    read: Outcome, max_records: int, max_bytes: int, row_bytes: int = 16
) -> list[BatchSeen]:
    """The batches the records of `read` must come in: each batch takes records until it holds
    max_records or its nbytes (each record's length plus row_bytes: 16, or 12 for a binary
    column) reach max_bytes; only the last may end short of both. Each batch's
    last_record_offset is its last record's offset."""
    out: list[BatchSeen] = []
    recs: list[bytes] = []
    offs: list[int | None] = []
    nbytes = 0
    for rec, off in zip(read.records, read.offsets, strict=True):
        recs.append(rec)
        offs.append(off)
        nbytes += len(rec) + row_bytes
        if len(recs) == max_records or nbytes >= max_bytes:
            out.append(BatchSeen(len(recs), recs, offs, nbytes, off))
            recs, offs, nbytes = [], [], 0
    if recs:
        out.append(BatchSeen(len(recs), recs, offs, nbytes, offs[-1]))
    return out


LIMITS = st.tuples(st.integers(1, 40) | st.just(65536), st.integers(1, 3 * B) | st.just(64 << 20))


@READS_DAMAGE
@scaled(0.5)
@given(log=damaged_logs(), limits=LIMITS, data=st.data())
def test_batches_of_damaged_logs_match_the_model_and_iteration_in_every_mode_and_range(
    log: bytes, limits: tuple[int, int], data: Any
) -> None:
    recovery = data.draw(st.sampled_from(MODES))
    start, end = draw_range(data.draw, log)
    kw = {"recovery": recovery, "start": start, "end": end}
    got, batches, ending = batch_read(log, *limits, **kw)
    assert batches == expected_batches(got, *limits)
    assert ending.raised in (None, ending.last_report) and ending.after_end == ([], [])
    assert_same(got, model_read(log, **kw), (recovery, start, end, limits))
    expected = c_read(log, **kw)
    assert_reader_contract(expected)
    assert_same(got, expected, (recovery, start, end, limits))


@scaled(0.3)
@given(clean=clean_logs(), limits=LIMITS)
def test_batches_of_a_file_object_match_iteration(clean: Any, limits: tuple[int, int]) -> None:
    log, records = clean
    got, batches, ending = batch_read(io.BytesIO(log), *limits)
    assert batches == expected_batches(got, *limits)
    assert ending.raised in (None, ending.last_report) and ending.after_end == ([], [])
    assert got.records == records and got.error is None
    expected = c_read(io.BytesIO(log))
    assert_reader_contract(expected)
    assert_same(got, expected)


@READS_DAMAGE
@scaled(0.3)
@given(log=damaged_logs(), data=st.data())
def test_the_stream_read_by_hand_matches_iteration(log: bytes, data: Any) -> None:
    recovery = data.draw(st.sampled_from(MODES))
    seen: list[Any] = []
    batches, error = stream_batches(
        leveldb_log.Reader(log, recovery=recovery, on_corruption=seen.append)
    )
    expected = c_read(log, recovery=recovery)
    assert_reader_contract(expected)
    assert [r for _, recs in batches for r in recs] == expected.records
    assert [o for offs, _ in batches for o in offs] == expected.offsets
    assert [tuple(c) for c in seen] == expected.corruptions
    if expected.error is None:
        assert error is None
    else:
        name = "TruncatedRecordError" if expected.error == "truncated" else "CorruptionError"
        assert error is not None and error.startswith(name + ": ")


@READS_DAMAGE
@scaled(0.3)
@given(log=damaged_logs(), limits=LIMITS, types=st.sampled_from(list(TYPE_FORMATS)), data=st.data())
def test_batches_in_each_column_type_hold_what_the_default_types_hold(
    log: bytes, limits: tuple[int, int], types: tuple[str, str], data: Any
) -> None:
    """offset_type and data_type change the exported types only: the records, offsets,
    reports and errors are those of the default uint64 and large_binary, and a batch ends
    where its nbytes (12 bytes a record besides its payload in a binary column) say."""
    recovery = data.draw(st.sampled_from(MODES))
    start, end = draw_range(data.draw, log)
    kw = {"recovery": recovery, "start": start, "end": end}
    got, batches, ending = batch_read(log, *limits, types, **kw)
    default, _, default_ending = batch_read(log, *limits, **kw)
    assert got == default and ending == default_ending
    assert batches == expected_batches(got, *limits, 12 if types[1] == "binary" else 16)


def test_offset_type_and_data_type_are_checked() -> None:
    r = leveldb_log.Reader(CLEAN)
    for kw, words in (
        ({"offset_type": "uint32"}, 'offset_type must be "uint64" or "int64"'),
        ({"offset_type": "UINT64"}, 'offset_type must be "uint64" or "int64"'),
        ({"data_type": "string"}, 'data_type must be "large_binary" or "binary"'),
        ({"data_type": ""}, 'data_type must be "large_binary" or "binary"'),
    ):
        with pytest.raises(ValueError, match=words):
            r.iter_batches(**kw)
    for kw, words in (
        ({"offset_type": b"int64"}, "offset_type must be a str, not bytes"),
        ({"data_type": None}, "data_type must be a str, not NoneType"),
    ):
        with pytest.raises(TypeError, match=words):
            r.iter_batches(**kw)
    with pytest.raises(TypeError):
        r.iter_batches(65536, 4194304, "int64")  # keyword-only
    assert list(r) == RECORDS  # nothing was read


def test_buffers_lent_between_batches_of_different_types_read_right() -> None:
    """A binary batch's ends are narrowed in its buffer: a batch of other types that gets
    that buffer back (the module keeps a released batch's buffers) fills it afresh."""
    records = [bytes([i % 251]) * (1 + i % 300) for i in range(2000)]
    log = encode(records)
    for types in itertools.chain(list(TYPE_FORMATS) * 2, reversed(list(TYPE_FORMATS))):
        got, batches, _ = batch_read(log, 300, 1 << 20, types)
        assert got.records == records and len(batches) == 7, types


def requested_schema(fields: list[tuple[str, str]], nullable: bool = True) -> Any:
    """An "arrow_schema" capsule of struct<fields> (name, format), made with ctypes; the
    capsule has no destructor, so it and its structs are kept in _KEEP."""
    kids = [ArrowSchema() for _ in fields]
    for kid, (name, fmt) in zip(kids, fields, strict=True):
        kid.format, kid.name, kid.flags = fmt.encode(), name.encode(), 2 if nullable else 0
        kid.release = type(kid.release)(lambda s: None)
    ptrs = (ctypes.POINTER(ArrowSchema) * len(kids))(*[ctypes.pointer(k) for k in kids])
    top = ArrowSchema()
    top.format, top.name, top.n_children = b"+s", b"", len(kids)
    top.children = ctypes.cast(ptrs, type(top.children))
    top.release = type(top.release)(lambda s: None)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = new(ctypes.addressof(top), b"arrow_schema", None)
    _KEEP.append((capsule, top, ptrs, kids))
    return capsule


_KEEP: list[Any] = []


@pytest.mark.parametrize(
    ("fields", "formats"),
    [
        ([("offset", "L"), ("data", "Z")], ("L", "Z")),
        ([("offset", "l"), ("data", "z")], ("l", "z")),
        ([("offset", "L"), ("data", "z")], ("L", "z")),
        ([("offset", "l"), ("data", "Z")], ("l", "Z")),
        ([("offset", "l"), ("payload", "z")], ("L", "Z")),  # another name: ignored
        ([("data", "z"), ("offset", "l")], ("L", "Z")),  # another order: ignored
        ([("offset", "l"), ("data", "u")], ("L", "Z")),  # string: not exported, ignored
        ([("offset", "i"), ("data", "z")], ("L", "Z")),
        ([("offset", "l")], ("L", "Z")),
    ],
)
def test_the_stream_takes_a_requested_schema_of_the_types_it_exports(
    fields: list[tuple[str, str]], formats: tuple[str, str]
) -> None:
    capsule = leveldb_log.Reader(CLEAN).__arrow_c_stream__(requested_schema(fields))
    stream = capsule_struct(capsule, b"arrow_array_stream", ArrowArrayStream)
    schema = ArrowSchema()
    assert stream.get_schema(ctypes.byref(stream), ctypes.byref(schema)) == 0
    assert schema_of(schema) == ("+s", "", [(formats[0], "offset", []), (formats[1], "data", [])])
    schema.release(ctypes.byref(schema))
    array = ArrowArray()
    assert stream.get_next(ctypes.byref(stream), ctypes.byref(array)) == 0
    assert columns_of(array, formats)[1] == RECORDS
    array.release(ctypes.byref(array))


def test_the_stream_ignores_a_request_that_is_not_a_schema_capsule() -> None:
    for request in (None, "offset: int64", 3):
        _, error = stream_batches(leveldb_log.Reader(CLEAN), request)
        assert error is None


def test_an_error_comes_after_a_batch_of_the_records_before_it() -> None:
    torn = CLEAN[:-3]
    it = leveldb_log.Reader(torn, recovery="absolute").iter_batches()
    first = next(it)
    assert len(first) == len(RECORDS) - 1
    with pytest.raises(leveldb_log.TruncatedRecordError):
        next(it)
    assert list(it) == []


def test_on_corruption_raising_surfaces_from_next_and_through_the_stream() -> None:
    damaged = bytearray(CLEAN)
    damaged[B + 100] ^= 1

    def boom(c: Any) -> None:
        raise KeyError("from the callback")

    it = leveldb_log.Reader(bytes(damaged), on_corruption=boom).iter_batches()
    assert len(next(it)) >= 1
    with pytest.raises(KeyError, match="from the callback"):
        next(it)
    batches, error = stream_batches(leveldb_log.Reader(bytes(damaged), on_corruption=boom))
    assert error == "KeyError: 'from the callback'"
    assert len(batches) == 1


def test_without_on_corruption_the_batches_warn_as_iteration_does() -> None:
    damaged = bytearray(CLEAN)
    damaged[B + 100] ^= 1
    with warnings.catch_warnings(record=True) as by_batch:
        warnings.simplefilter("always")
        n = sum(len(b) for b in leveldb_log.Reader(bytes(damaged)).iter_batches())
    with warnings.catch_warnings(record=True) as by_record:
        warnings.simplefilter("always")
        assert n == len(list(leveldb_log.Reader(bytes(damaged))))
    assert by_batch and {type(w.message) for w in by_batch} == {leveldb_log.CorruptionWarning}
    assert [str(w.message) for w in by_batch] == [str(w.message) for w in by_record]


def test_batches_follow_a_growing_log(tmp_path: Any) -> None:
    path = tmp_path / "grow.log"
    with leveldb_log.Writer(path) as w:
        w.write_many(RECORDS[:3])
    with leveldb_log.Reader(path) as r:
        it = r.iter_batches(max_records=2)
        assert [len(b) for b in it] == [2, 1]
        with leveldb_log.Writer(path, "a") as w:
            w.write_many(RECORDS[3:])
        got = [rec for b in it for rec in columns_of(array_of(b))[1]]
        assert got == RECORDS[3:]
        assert r.position == len(path.read_bytes())


def test_batches_of_long_records_read_in_place_from_a_path(tmp_path: Any) -> None:
    sizes = [300000, 5, 300000, 100000, 0, 1 << 20, 300001] * 2
    records = make_records(sizes, 3)
    path = tmp_path / "big.log"
    with leveldb_log.Writer(path) as w:
        w.write_many(records)
    got, batches, ending = batch_read(path, 3, 500000)
    assert batches == expected_batches(got, 3, 500000)
    assert ending.raised in (None, ending.last_report) and ending.after_end == ([], [])
    assert got.records == records
    expected = c_read(path)
    assert_reader_contract(expected)
    assert_same(got, expected)
    with leveldb_log.Reader(path) as r:
        assert sum(len(b) for b in r.iter_batches()) == len(records)
        assert _testing.blocks_in_place(r) > 0  # assembled straight from the file (reader_fill.c)


def array_of(batch: Any) -> Any:
    _, capsule = batch.__arrow_c_array__()
    array_of.keep = capsule  # type: ignore[attr-defined]  # alive while read
    return capsule_struct(capsule, b"arrow_array", ArrowArray)


# A fragmented record is assembled straight in the batch being filled
# (llpy_records_redirect, csrc/py/reader_records.c). What is still being assembled
# when the batch is handed out, or when a callback lets others use the
# reader, moves out of it first.

LONG = make_records([300000, 7, 250000, 9], 11)


def b_records(batch: Any) -> list[bytes]:
    """A batch's records (read with ctypes: no pyarrow)."""
    return columns_of(array_of(batch))[1]


def rest_of(r: Any, via: str) -> list[bytes]:
    """What a reader returns from here on: by batches, or record by record."""
    if via == "batches":
        return [rec for b in r.iter_batches() for rec in b_records(b)]
    return list(r)


@pytest.mark.parametrize("via", ["batches", "records"])
@pytest.mark.parametrize("cut", [B + 10, 3 * B, 5 * B + 100, 9 * B + 7])
def test_a_long_record_cut_by_the_end_of_a_growing_log_goes_on_either_way(
    tmp_path: Any, cut: int, via: str
) -> None:
    whole = encode(LONG)
    path = tmp_path / "grow.log"
    path.write_bytes(whole[:cut])
    with leveldb_log.Reader(path) as r:
        assert rest_of(r, "batches") == []  # the long record is open
        with open(path, "ab") as f:
            f.write(whole[cut:])
        assert rest_of(r, via) == LONG


def full_block(rtype: int, payload: bytes) -> bytes:
    """A physical record that fills a block: its payload must be B - 7 bytes."""
    if len(payload) != B - 7:
        raise ValueError(f"a {len(payload)}-byte payload does not fill a block")
    return model.encode_physical(rtype, payload)


@pytest.mark.parametrize("source", ["bytes", "path"])
def test_a_callback_that_reads_on_gets_the_record_open_in_the_batch(
    tmp_path: Any, source: str
) -> None:
    p = make_records([B - 7] * 4 + [1000, 500], 5)
    log = (
        full_block(model.FIRST, p[0])
        + full_block(model.MIDDLE, p[1])
        # a new record begins before the first ends: a corruption is reported
        # while the new one is being assembled
        + full_block(model.FIRST, p[2])
        + full_block(model.MIDDLE, p[3])
        + model.encode_physical(model.LAST, p[4])
        + model.encode_physical(model.FULL, p[5])
    )
    path = tmp_path / "open.log"
    path.write_bytes(log)
    taken: list[tuple[int, bytes]] = []

    def read_on(c: Any) -> None:
        taken.append((0, b""))  # where the callback ran
        rec = next(reader)
        taken[-1] = (reader.last_record_offset, rec)

    with leveldb_log.Reader(log if source == "bytes" else path, on_corruption=read_on) as reader:
        offs, recs = [], []
        for b in reader.iter_batches():
            o, r = columns_of(array_of(b))
            offs += o
            recs += r
    assert taken == [(2 * B, p[2] + p[3] + p[4])]
    assert (offs, recs) == ([4 * B + 7 + 1000], [p[5]])


@pytest.mark.parametrize("bad_block", range(1, 9))
@pytest.mark.parametrize("via", ["batches", "records"])
def test_damage_inside_a_run_read_in_place_then_a_raising_callback(
    tmp_path: Any, bad_block: int, via: str
) -> None:
    records = make_records([400000] * 3 + [20], 9)  # hints: long records in place
    log = bytearray(encode(records))
    log[bad_block * B + 100] ^= 1  # a MIDDLE fragment of the first record
    path = tmp_path / "run.log"
    path.write_bytes(bytes(log))

    def read(first: str) -> tuple[list[bytes], list[Any], int]:
        seen: list[Any] = []

        def once(c: Any) -> None:
            seen.append(tuple(c))
            if len(seen) == 1:
                raise KeyError("stop here")

        with leveldb_log.Reader(path, on_corruption=once) as r:
            got: list[bytes] = []
            with pytest.raises(KeyError):  # raised after the records before it
                if first == "records":
                    for rec in r:
                        got.append(rec)
                else:
                    for b in r.iter_batches():
                        got += b_records(b)
            got += rest_of(r, via)
            return got, seen, _testing.blocks_in_place(r)

    got, seen, in_place = read("batches")
    assert (got, seen) == read("records")[:2]
    assert got == records[1:] and len(seen) >= 1
    assert in_place > 0


@pytest.mark.parametrize("sizes", [[100_000] * 100, [3] * 300_000])
def test_columns_past_the_mapped_size_grow_and_read_right(tmp_path: Any, sizes: list[int]) -> None:
    """Column buffers of 4 MiB and more are mappings of their own (csrc/py/pages.c): from
    malloc's memory into one, then grown by mremap, their bytes kept."""
    records = make_records(sizes, 4)
    path = tmp_path / "large.log"
    path.write_bytes(encode(records))
    for source in (path.read_bytes(), path):
        with leveldb_log.Reader(source) as r:
            batches = list(r.iter_batches(max_records=1 << 20, max_bytes=1 << 30))
        assert len(batches) == 1
        assert columns_of(array_of(batches[0]))[1] == records


def test_kept_columns_grow_for_larger_batches(tmp_path: Any) -> None:
    """A released batch's columns (mapped, csrc/py/pages.c) serve the next batch, which may
    grow them past their size: batches of 2 to 16 MiB of 1 MiB records, in turn."""
    records = make_records([1 << 20] * 40, 6)
    path = tmp_path / "long.log"
    path.write_bytes(encode(records))
    for mib in (2, 4, 8, 16, 4):
        with leveldb_log.Reader(path) as r:
            got = [rec for b in r.iter_batches(max_bytes=mib << 20) for rec in b_records(b)]
        assert got == records, mib


def test_batches_default_to_1_mib_and_the_stream_to_4_mib() -> None:
    """iter_batches() without max_bytes ends a batch at 1 MiB (a loop that drops each one
    refills buffers still in the CPU's caches); the C stream, which a table keeps whole,
    at 4 MiB (huge pages). Both as expected_batches cuts them."""
    records = make_records([1000] * 9000, 7)
    log = encode(records)
    read = Outcome(records, [None] * len(records), [], None, 0)
    with leveldb_log.Reader(log) as r:
        got = [len(b) for b in r.iter_batches()]
    assert got == [b.length for b in expected_batches(read, 65536, 1 << 20)]
    assert got[0] == -(-(1 << 20) // 1016)  # the record that reaches 1 MiB ends it
    streamed, error = stream_batches(leveldb_log.Reader(log))
    assert error is None
    assert [len(recs) for _, recs in streamed] == [
        b.length for b in expected_batches(read, 65536, 4 << 20)
    ]
    assert [rec for _, recs in streamed for rec in recs] == records


def test_limits_and_closed_readers_are_refused() -> None:
    r = leveldb_log.Reader(CLEAN)
    for kw in ({"max_records": 0}, {"max_bytes": 0}, {"max_records": -1}):
        with pytest.raises(ValueError, match="at least 1"):
            r.iter_batches(**kw)
    with pytest.raises(TypeError):
        r.iter_batches(10)  # keyword-only
    it = r.iter_batches()
    r.close()
    with pytest.raises(ValueError, match="closed"):
        next(it)
    with pytest.raises(TypeError):
        leveldb_log._core.Batch()


def test_a_batch_exports_its_schema_and_each_export_owns_its_buffers() -> None:
    batch = next(leveldb_log.Reader(CLEAN).iter_batches())
    capsule = batch.__arrow_c_schema__()
    schema = capsule_struct(capsule, b"arrow_schema", ArrowSchema)
    assert schema_of(schema) == ("+s", "", [("L", "offset", []), ("Z", "data", [])])
    _, first = batch.__arrow_c_array__(requested_schema=None)
    _, second = batch.__arrow_c_array__()
    del batch
    gc.collect()
    a = capsule_struct(first, b"arrow_array", ArrowArray)
    assert columns_of(a)[1] == RECORDS
    a.release(ctypes.byref(a))  # released by its consumer: the capsule then does nothing
    del first
    assert columns_of(capsule_struct(second, b"arrow_array", ArrowArray))[1] == RECORDS


def test_a_child_moved_out_of_a_batch_outlives_its_parent() -> None:
    batch = next(leveldb_log.Reader(CLEAN).iter_batches())
    _, capsule = batch.__arrow_c_array__()
    del batch
    parent = capsule_struct(capsule, b"arrow_array", ArrowArray)
    child = ArrowArray()
    ctypes.pointer(child)[0] = parent.children[1].contents  # moved, as the spec allows
    parent.children[1].contents.release = type(child.release)()
    parent.release(ctypes.byref(parent))
    n = child.length
    ends = list((ctypes.c_int64 * (n + 1)).from_address(child.buffers[1]))
    assert ctypes.string_at(child.buffers[2], ends[-1]) == b"".join(RECORDS)
    child.release(ctypes.byref(child))


def data_address(batch: Any) -> int:
    """Where a batch's data column lies (its large_binary data buffer)."""
    _, capsule = batch.__arrow_c_array__()
    return int(capsule_struct(capsule, b"arrow_array", ArrowArray).children[1].contents.buffers[2])


def test_a_released_batch_lends_its_buffers_to_a_later_one_and_a_held_one_never() -> None:
    """The module keeps one released batch's buffers for the next batch: a batch dropped
    with every export of it is filled again (its data buffer comes back), one still held
    or exported is never written over."""
    records = [bytes([i % 251]) * (50 + i % 40) for i in range(3000)]
    log = encode(records)
    held, exports, got_back = [], [], 0
    it = leveldb_log.Reader(log).iter_batches(max_records=100)
    released: set[int] = set()
    for i, batch in enumerate(it):
        address = data_address(batch)
        got_back += address in released
        if i % 3 == 0:
            held.append(batch)  # the Batch object itself kept
        elif i % 3 == 1:
            _, capsule = batch.__arrow_c_array__()  # only an export kept
            exports.append(capsule)
        else:
            released.add(address)  # dropped whole: its buffers may serve again
        del batch
        gc.collect()
    assert got_back > 0  # the buffers of released batches were used again
    exports += [b.__arrow_c_array__()[1] for b in held]  # (capsules kept while read)
    kept = [columns_of(capsule_struct(c, b"arrow_array", ArrowArray))[1] for c in exports]
    assert sorted(r for batch in kept for r in batch) == sorted(
        r for i, r in enumerate(records) if (i // 100) % 3 != 2
    )


def test_a_for_loop_over_batches_fills_the_same_two_buffers_in_every_pass() -> None:
    """A for loop holds one batch while the next fills: the module keeps both released
    batches' buffers, so later passes take no new memory. (Memory is held between passes,
    so that a new buffer could not be placed where a freed one was.)"""
    records = [bytes([i % 251]) * 1000 for i in range(2000)]
    log = encode(records)

    def one_pass() -> list[int]:
        addresses = []
        for batch in leveldb_log.Reader(log).iter_batches(max_bytes=200_000):
            addresses.append(data_address(batch))
        return addresses

    one_pass()  # (the buffers another test left may be larger)
    first = one_pass()
    held = [bytearray(300_000) for _ in range(8)]
    later = one_pass() + one_pass()
    assert len(first) == 11 and len(set(first)) == 2
    assert set(later) == set(first)
    del held


DAMAGED = bytearray(CLEAN)
DAMAGED[B + 100] ^= 1  # a checksum mismatch in the second block
DAMAGED = bytes(DAMAGED)


def export_every_batch() -> None:
    for b in leveldb_log.Reader(CLEAN).iter_batches(max_records=2):
        b.__arrow_c_array__()
        b.__arrow_c_schema__()


LEAK_CYCLES = {
    "batches": export_every_batch,
    "stream": lambda: stream_batches(leveldb_log.Reader(CLEAN)),
    "stream-error": lambda: stream_batches(leveldb_log.Reader(CLEAN[:-3], recovery="absolute")),
    "stream-unread": lambda: leveldb_log.Reader(CLEAN).__arrow_c_stream__(),
    "damage": lambda: list(leveldb_log.Reader(DAMAGED, on_corruption=id).iter_batches()),
}


@pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="AddressSanitizer's malloc is its own: glibc's count of malloc's blocks misses it",
)
@pytest.mark.parametrize("name", list(LEAK_CYCLES))
def test_batches_and_streams_do_not_leak(name: str) -> None:
    """The C buffers and structs (malloc'ed, counted by glibc, 80 KiB a cycle) and the Python
    objects (tracemalloc) of every batch and stream are freed, exactly once (a double free
    crashes, or fails under the sanitized build)."""
    assert_no_leak(LEAK_CYCLES[name], 3000)


# ---------------------------------------------------------------------------
# consumers: pyarrow, polars, DuckDB
# ---------------------------------------------------------------------------


def test_pyarrow_reads_batches_and_streams() -> None:
    pa = pytest.importorskip("pyarrow")
    table = pa.table(leveldb_log.Reader(CLEAN))
    assert table.schema == pa.schema(
        [pa.field("offset", pa.uint64(), False), pa.field("data", pa.large_binary(), False)]
    )
    assert table["data"].to_pylist() == RECORDS
    r = leveldb_log.Reader(CLEAN)
    offsets = []
    for _ in r:
        offsets.append(r.last_record_offset)
    assert table["offset"].to_pylist() == offsets
    ours = list(leveldb_log.Reader(CLEAN).iter_batches(max_records=4))
    batches = [pa.record_batch(b) for b in ours]
    assert [b.num_rows for b in batches] == [4, 2]
    assert [b.nbytes for b in ours] == [b.nbytes for b in batches]  # counted as pyarrow does
    assert pa.Table.from_batches(batches).equals(table)


def test_pyarrow_raises_what_went_wrong_in_the_stream() -> None:
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(Exception, match="TruncatedRecordError: ") as caught:
        pa.table(leveldb_log.Reader(CLEAN[:-3], recovery="absolute"))
    assert not isinstance(caught.value, leveldb_log.LogError)  # pyarrow's own exception
    reader = pa.RecordBatchReader.from_stream(leveldb_log.Reader(CLEAN[:-3], recovery="absolute"))
    assert reader.read_next_batch().num_rows == len(RECORDS) - 1
    with pytest.raises(Exception, match="TruncatedRecordError"):
        reader.read_next_batch()


@pytest.mark.parametrize("types", list(TYPE_FORMATS))
def test_pyarrow_gets_each_column_type_without_a_cast(types: tuple[str, str]) -> None:
    pa = pytest.importorskip("pyarrow")
    arrow_types = {
        "uint64": pa.uint64(),
        "int64": pa.int64(),
        "large_binary": pa.large_binary(),
        "binary": pa.binary(),
    }
    schema = pa.schema(
        [pa.field("offset", arrow_types[types[0]], False), pa.field("data", arrow_types[types[1]])]
    )
    ours = list(
        leveldb_log.Reader(CLEAN).iter_batches(
            max_records=4, offset_type=types[0], data_type=types[1]
        )
    )
    batches = [pa.record_batch(b) for b in ours]
    assert [b.schema.types for b in batches] == [[schema.field(0).type, schema.field(1).type]] * 2
    assert [b.nbytes for b in ours] == [b.nbytes for b in batches]  # counted as pyarrow does
    expected = pa.table(leveldb_log.Reader(CLEAN))
    assert pa.Table.from_batches(batches)["data"].to_pylist() == RECORDS
    assert pa.Table.from_batches(batches)["offset"].to_pylist() == expected["offset"].to_pylist()
    # asked for through the stream's requested schema (pyarrow fails on any other schema)
    stream = pa.RecordBatchReader.from_stream(leveldb_log.Reader(CLEAN), schema=schema)
    table = stream.read_all()
    assert table.schema.types == schema.types
    assert table["data"].to_pylist() == RECORDS


def test_polars_reads_a_reader() -> None:
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(leveldb_log.Reader(CLEAN))
    assert df.columns == ["offset", "data"]
    assert df["data"].to_list() == RECORDS
    series = pl.from_arrow(leveldb_log.Reader(CLEAN))  # a stream of structs: one Series
    assert series.struct.field("data").to_list() == RECORDS


def test_duckdb_queries_a_reader() -> None:
    duckdb = pytest.importorskip("duckdb")
    reader = leveldb_log.Reader(CLEAN)
    rows = duckdb.sql("SELECT count(*), sum(octet_length(data)) FROM reader").fetchall()
    assert reader.closed is False  # found by name: a replacement scan
    assert rows == [(len(RECORDS), sum(map(len, RECORDS)))]
    rel = duckdb.from_arrow(leveldb_log.Reader(CLEAN))
    assert [bytes(r[0]) for r in rel.order('"offset"').select("data").fetchall()] == RECORDS
