"""The Writer's API shape (docs/api.md, "Writer"): the options it was given read back as
read-only properties, also once closed; the closed-object rule it shares with the Reader and
io; bytes refused as a path; write_many's messages and its exact ``.written`` after a fault.
"""

from __future__ import annotations

import errno
import io
import os
import pathlib
import resource
from typing import Any

import pytest
from leveldb_log import Reader, Writer
from leveldb_log._core import DEFAULT_BUFFER_SIZE
from support.records import records_of

# ---- options, readable ---------------------------------------------------------------

OPTIONS = ("dialect", "log_number", "compression", "recycle", "sync_offsets", "sync_default")
OPTIONS += ("buffering", "bytes_per_sync", "preallocate", "mode")

CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "defaults": (
        {},
        {
            "dialect": "leveldb",
            "log_number": None,
            "compression": None,
            "recycle": False,
            "sync_offsets": False,
            "sync_default": False,
            "buffering": DEFAULT_BUFFER_SIZE,
            "bytes_per_sync": 0,
            "preallocate": 0,
            "mode": "w",
        },
    ),
    "rocksdb recyclable, durable, unbuffered": (
        {"dialect": "rocksdb", "recycle": True, "log_number": 7, "sync": True, "buffering": 0},
        {
            "dialect": "rocksdb",
            "log_number": 7,
            "recycle": True,
            "sync_offsets": False,
            "sync_default": True,
            "buffering": 0,
        },
    ),
    "pebble with walSync chunks": (
        {"dialect": "pebble", "log_number": 9, "sync_offsets": True, "buffering": 1000},
        {"dialect": "pebble", "log_number": 9, "recycle": True, "sync_offsets": True},
    ),
    "a path's policies": (
        {"mode": "x", "bytes_per_sync": 1 << 20, "preallocate": 1 << 22},
        {"mode": "x", "bytes_per_sync": 1 << 20, "preallocate": 1 << 22},
    ),
    "buffering=-1 is the default size": ({"buffering": -1}, {"buffering": DEFAULT_BUFFER_SIZE}),
}


@pytest.mark.parametrize("case", CASES)
def test_the_options_read_back_before_and_after_close(tmp_path: pathlib.Path, case: str) -> None:
    given, expected = CASES[case]
    w = Writer(tmp_path / "options.log", **given)
    before = {name: getattr(w, name) for name in OPTIONS}
    assert {name: before[name] for name in expected} == expected
    w.close()
    assert {name: getattr(w, name) for name in OPTIONS} == before


def test_the_log_number_of_a_file_named_like_a_wal_reads_back(tmp_path: pathlib.Path) -> None:
    with Writer(tmp_path / "000042.log", dialect="pebble") as w:
        assert (w.log_number, w.recycle) == (42, True)


def test_compression_reads_back() -> None:
    pytest.importorskip("zstandard", reason="compression='zstd' needs a zstd binding")
    with Writer(io.BytesIO(), dialect="rocksdb", compression="zstd") as w:
        assert w.compression == "zstd"


@pytest.mark.parametrize("name", OPTIONS)
def test_the_options_are_read_only(name: str) -> None:
    with Writer(io.BytesIO()) as w:
        with pytest.raises(AttributeError):
            setattr(w, name, getattr(w, name))


# ---- closed ------------------------------------------------------------------------------

CALLS = {
    "write": lambda w: w.write(b"x"),
    "write_many": lambda w: w.write_many([b"x"]),
    "flush": lambda w: w.flush(),
    "sync": lambda w: w.sync(),
    "with": lambda w: w.__enter__(),
    "position": lambda w: w.position,
}


@pytest.mark.parametrize("call", CALLS)
def test_a_closed_writer_refuses_io_as_a_closed_file_does(
    tmp_path: pathlib.Path, call: str
) -> None:
    path = tmp_path / "closed.log"
    w = Writer(path)
    w.close()
    with pytest.raises(ValueError, match=r"^I/O operation on closed Writer$"):
        CALLS[call](w)
    w.close()  # idempotent
    assert w.closed and w.name == path and w.mode == "w"


# ---- bytes are no path ---------------------------------------------------------------


def test_bytes_are_refused_as_a_path_with_a_hint(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "x.log"
    with pytest.raises(TypeError, match=r"bytes as a path.*str or an os\.PathLike"):
        Writer(os.fsencode(path))
    assert not path.exists()


def test_bytes_are_refused_before_the_options_are_read(tmp_path: pathlib.Path) -> None:
    # A log number is never taken from a bytes name either.
    with pytest.raises(TypeError, match="bytes as a path"):
        Writer(os.fsencode(tmp_path / "000042.log"), dialect="pebble")


# ---- write_many's argument -----------------------------------------------------------


@pytest.mark.parametrize("one", [b"abc", "abc", bytearray(b"abc"), memoryview(b"abc")])
def test_write_many_of_one_record_says_to_pass_an_iterable(one: object) -> None:
    with Writer(io.BytesIO()) as w:
        with pytest.raises(TypeError, match="iterable of records") as raised:
            w.write_many(one)  # type: ignore[arg-type]
        assert type(one).__name__ in str(raised.value) and "write()" in str(raised.value)
        assert raised.value.written == 0  # type: ignore[attr-defined]
        assert w.position == 0


def test_write_many_of_no_iterable_names_the_type() -> None:
    with Writer(io.BytesIO()) as w:
        with pytest.raises(TypeError, match=r"iterable of records.*not int$"):
            w.write_many(5)  # type: ignore[arg-type]


# ---- .written after a fault counts what is in the file -----------------------------------


class FullAfter:
    """A file object over a real file that takes `room` bytes (a short write at the edge),
    then raises ENOSPC; room=None takes everything again."""

    def __init__(self, path: pathlib.Path, room: int | None) -> None:
        self.file = open(path, "wb")  # closed by close()
        self.room = room

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        data = bytes(data)
        if self.room is not None:
            if self.room == 0:
                raise OSError(errno.ENOSPC, "no space left (test)")
            data = data[: self.room]
            self.room -= len(data)
        self.file.write(data)
        self.file.flush()
        return len(data)

    def close(self) -> None:
        self.file.close()


RECORDS = records_of([100, 3000, 7, 40000, 0, 500, 70000, 12, 32761, 900] * 6, b"r")
ROOMS = [0, 1, 7, 106, 5000, 32768, 40000, 70000, 100001, 200000, 400000]


def _records_in(path: pathlib.Path) -> list[bytes]:
    """The records in the file; a record torn by the fault is expected damage."""
    damage: list[object] = []
    with Reader(path, recovery="skip", on_corruption=damage.append) as r:
        return list(r)


@pytest.mark.parametrize("buffering", [-1, 0, 1000, 300_000])
@pytest.mark.parametrize("room", ROOMS)
def test_written_counts_the_records_the_file_holds(
    tmp_path: pathlib.Path, buffering: int, room: int
) -> None:
    path = tmp_path / "full.log"
    sink = FullAfter(path, room)
    w = Writer(sink, buffering=buffering, closefd=True)
    with pytest.raises(OSError) as raised:
        w.write_many(iter(RECORDS))
    written = raised.value.written  # type: ignore[attr-defined]
    assert _records_in(path) == RECORDS[:written]
    # The records that did not reach the file were dropped: they never come later, so
    # RECORDS[written:] is what a retry writes, each record once.
    sink.room = None
    w.write_many(RECORDS[written:])
    w.close()
    assert _records_in(path) == RECORDS


def test_written_counts_the_records_a_path_holds(tmp_path: pathlib.Path) -> None:
    # RLIMIT_FSIZE makes write(2) fail with EFBIG past the limit (Python ignores SIGXFSZ):
    # the descriptor path, the GIL released, and a short write at the edge.
    path = tmp_path / "fsize.log"
    for limit in (50_000, 100_001, 150_000):
        w = Writer(path)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
        try:
            with pytest.raises(OSError) as raised:
                w.write_many(RECORDS)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        written = raised.value.written  # type: ignore[attr-defined]
        assert 0 < written < len(RECORDS)
        w.close()  # hands nothing more over: the rest was dropped
        assert _records_in(path) == RECORDS[:written]


def test_records_of_earlier_calls_stay_buffered_after_a_failed_write_many(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "earlier.log"
    sink = FullAfter(path, 0)
    w = Writer(sink, closefd=True)
    w.write(b"before")  # buffered: write() returned
    with pytest.raises(OSError) as raised:
        w.write_many([b"a", b"b" * 100000])
    assert raised.value.written == 0  # type: ignore[attr-defined]
    sink.room = None
    w.close()
    assert _records_in(path) == [b"before"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_written_is_zero_on_dev_full() -> None:
    w = Writer("/dev/full", lock=False)
    with pytest.raises(OSError) as raised:
        w.write_many([b"x" * 1000] * 200)
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.written == 0  # type: ignore[attr-defined]
    w.close()  # nothing left to hand over: no second error


def test_written_counts_buffered_records_when_the_iterable_fails(tmp_path: pathlib.Path) -> None:
    # No hand-over failed: the records taken stay buffered, and reach the file as a
    # returned write()'s do.
    def records() -> Any:
        yield b"a"
        yield b"b"
        raise KeyError("boom")

    path = tmp_path / "iterable.log"
    with Writer(path) as w:
        with pytest.raises(KeyError) as raised:
            w.write_many(records())
        assert raised.value.written == 2  # type: ignore[attr-defined]
    assert _records_in(path) == [b"a", b"b"]


# ---- no test hooks on the type ---------------------------------------------------------


def test_the_writer_type_carries_no_test_hooks() -> None:
    # They are leveldb_log._testing's (private module functions of _core).
    assert [name for name in dir(Writer) if name.startswith("_") and not name.endswith("__")] == []
