"""Writer.write_many over Arrow data (csrc/py/writer_arrow.c): it writes the bytes
write_many over a list writes, takes strings, slices, views and streams, refuses nulls before
writing anything, names a type it does not take, and releases what it was given; streams made
by hand with ctypes check the C stream interface without pyarrow."""

from __future__ import annotations

import ctypes
import io
import itertools
from typing import Any

import leveldb_log
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import model
from support.arrow_abi import ArrowArray, ArrowArrayStream, ArrowSchema
from support.profiles import scaled
from support.records import B, make_records


def model_bytes(records: list[bytes]) -> bytes:
    """The log the reference model writes for these records."""
    return model.encode(records)[0]


RECORDS = [b"", b"a", b"hello" * 20, bytes(range(256)) * 200, b"z" * 32761, b"tail"]
CLEAN = model_bytes(RECORDS)


def written(data: Any) -> tuple[bytes, int]:
    out = io.BytesIO()
    w = leveldb_log.Writer(out)
    n = w.write_many(data)
    w.flush()
    return out.getvalue(), n


@scaled(0.3)
@given(
    sizes=st.lists(st.integers(0, 3 * B) | st.integers(0, 200), max_size=20),
    chunks=st.lists(st.integers(0, 20), max_size=3),
    kind=st.sampled_from(["binary", "large_binary", "binary_view"]),
)
def test_write_many_of_an_arrow_array_writes_what_a_list_does(
    sizes: list[int], chunks: list[int], kind: str
) -> None:
    pa = pytest.importorskip("pyarrow")
    records = make_records(sizes)
    expected = model_bytes(records)
    array = pa.array(records, getattr(pa, kind)())
    assert written(array) == (expected, len(records))
    cuts = sorted({0, len(records), *(min(c, len(records)) for c in chunks)})
    pieces = [array[a:b] for a, b in itertools.pairwise(cuts)] or [array]
    assert written(pa.chunked_array(pieces, array.type)) == (expected, len(records))


def test_write_many_takes_strings_slices_and_empty_arrays() -> None:
    pa = pytest.importorskip("pyarrow")
    texts = ["héllo", "", "x" * 40000, "ünï"]
    encoded = [t.encode() for t in texts]
    for typ in (pa.string(), pa.large_string(), pa.string_view()):
        assert written(pa.array(texts, typ)) == (model_bytes(encoded), 4)
        assert written(pa.array(texts, typ)[1:3]) == (model_bytes(encoded[1:3]), 2)
        assert written(pa.array([], typ)) == (b"", 0)
    nulls_elsewhere = pa.array([b"a", None, b"b", b"c"])[2:]  # a slice past its null
    assert written(nulls_elsewhere) == (model_bytes([b"b", b"c"]), 2)


def test_write_many_refuses_nulls_before_writing_anything() -> None:
    pa = pytest.importorskip("pyarrow")
    chunked = pa.chunked_array([pa.array([b"a", b"b"]), pa.array([b"c", None])])
    for data in (pa.array([b"a", None]), chunked, pa.array([None], pa.large_string())):
        out = io.BytesIO()
        with leveldb_log.Writer(out) as w:
            w.write(b"before")
            with pytest.raises(ValueError, match=r"nulls: value \d+ .*nothing was written"):
                w.write_many(data)
            assert w.position == len(model_bytes([b"before"]))
        assert list(leveldb_log.Reader(out.getvalue())) == [b"before"]


def test_write_many_names_a_type_it_does_not_take() -> None:
    pa = pytest.importorskip("pyarrow")
    w = leveldb_log.Writer(io.BytesIO())
    for data, name in (
        (pa.array([1, 2]), "int64"),
        (pa.array([b"a"]).dictionary_encode(), "dictionary"),
        (pa.table({"data": [b"a"]}), "struct"),
        (pa.array([[b"a"]]), "list"),
        (pa.array([b"ab"], pa.binary(2)), "format 'w:2'"),
    ):
        with pytest.raises(TypeError, match=f"not .*{name}"):
            w.write_many(data)
    assert w.position == 0


def test_write_many_from_polars_and_duckdb() -> None:
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    assert written(pl.Series(RECORDS)) == (CLEAN, len(RECORDS))
    assert written(pl.Series(["a", "bc"])) == (model_bytes([b"a", b"bc"]), 2)
    rel = duckdb.sql("SELECT 'rec' || i::VARCHAR AS s FROM range(5) t(i) ORDER BY i")
    assert written(rel.to_arrow_table()["s"]) == (model_bytes([b"rec%d" % i for i in range(5)]), 5)


def test_a_reader_still_goes_to_write_many_as_records_and_tables_round_trip() -> None:
    assert written(leveldb_log.Reader(CLEAN)) == (CLEAN, len(RECORDS))
    pa = pytest.importorskip("pyarrow")
    table = pa.table(leveldb_log.Reader(CLEAN))
    assert written(table["data"]) == (CLEAN, len(RECORDS))


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class HandMadeStream:
    """A producer made with ctypes alone: a binary ("z") stream of one chunk of the given
    values (None for a null), then a failure of code 5 with a message, or the end."""

    def __init__(self, values: list[bytes | None], fail: bool) -> None:
        self.fail, self.released = fail, 0
        data = b"".join(v or b"" for v in values)
        ends = [0]
        for v in values:
            ends.append(ends[-1] + len(v or b""))
        self.valid = (ctypes.c_uint8 * 8)()
        for i, v in enumerate(values):
            self.valid[i // 8] |= (v is not None) << (i % 8)
        self.offsets = (ctypes.c_int32 * len(ends))(*ends)
        self.data = ctypes.create_string_buffer(data or b"\0")
        self.buffers = (ctypes.c_void_p * 3)(
            ctypes.addressof(self.valid),
            ctypes.addressof(self.offsets),
            ctypes.addressof(self.data),
        )
        self.length, self.nulls = len(values), values.count(None)
        self.sent = False
        S, A = ArrowArrayStream._fields_, ArrowArray._fields_
        self.message = ctypes.create_string_buffer(b"the producer broke")
        error_type = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(ArrowArrayStream))
        self._error_cb = error_type(lambda s: ctypes.addressof(self.message))
        self.cbs = (
            S[0][1](self._schema),
            S[1][1](self._next),
            ctypes.cast(self._error_cb, S[2][1]),
            S[3][1](self._release),
            A[8][1](self._release_array),
            ArrowSchema._fields_[7][1](self._release_schema),
        )
        self.stream = ArrowArrayStream(*self.cbs[:4], None)

    def _schema(self, s: Any, out: Any) -> int:
        ctypes.pointer(out.contents)[0] = ArrowSchema(
            b"z", b"", None, 2, 0, None, None, self.cbs[5]
        )
        return 0

    def _next(self, s: Any, out: Any) -> int:
        if self.sent:
            out.contents.release = type(out.contents.release)()
            return 5 if self.fail else 0
        self.sent = True
        ctypes.pointer(out.contents)[0] = ArrowArray(
            self.length, self.nulls, 0, 3, 0, self.buffers, None, None, self.cbs[4]
        )
        return 0

    def _release(self, s: Any) -> None:
        self.released += 1
        s.contents.release = type(s.contents.release)()

    def _release_array(self, a: Any) -> None:
        self.released += 10
        a.contents.release = type(a.contents.release)()

    def _release_schema(self, s: Any) -> None:
        s.contents.release = type(s.contents.release)()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return _new_capsule(ctypes.addressof(self.stream), b"arrow_array_stream", None)


def test_a_hand_made_stream_is_written_and_its_chunks_released() -> None:
    stream = HandMadeStream([b"ab", b"", b"cde"], fail=False)
    assert written(stream) == (model_bytes([b"ab", b"", b"cde"]), 3)
    assert stream.released == 10  # the chunk; the stream is its capsule's to release


def test_a_failing_stream_raises_oserror_with_its_message_and_writes_nothing() -> None:
    stream = HandMadeStream([b"ab", b"cde"], fail=True)
    with pytest.raises(OSError, match="the Arrow stream failed: the producer broke"):
        written(stream)
    assert stream.released == 10
    out = io.BytesIO()
    with leveldb_log.Writer(out) as w, pytest.raises(OSError):
        w.write_many(HandMadeStream([b"ab"], fail=True))
    assert out.getvalue() == b""


def test_a_hand_made_null_is_refused_and_the_chunk_released() -> None:
    stream = HandMadeStream([b"ab", None, b"c"], fail=False)
    with pytest.raises(ValueError, match="value 1 of the Arrow data is null"):
        written(stream)
    assert stream.released == 10
