"""Arguments and offsets: ranges past the end of a file read nothing for every offset below
2**64, flags are bools, bytes paths work, every opener (Reader, scan, stats, splits) takes
every kind of source, splits refuses what workers cannot seek in, a
Writer refuses a file object it cannot write, a spent Reader refuses another Arrow export,
and a Writer and a Reader count a file object's offsets from the same place."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import pathlib
from collections.abc import Callable, Iterator
from typing import Any

import leveldb_log
import pytest
from leveldb_log import Corruption, Reader, Writer, stats
from support import model
from support.cli import run_cli_asserting_no_traceback

RECORDS = [b"one", b"two" * 20_000, b"three"]
PAST_THE_END = [
    "size",
    "size + 1",
    "2**31",
    "2**62",
    "2**63 - 1",
    "2**63",
    "2**64 - 2**16",
    "2**64 - 1",
]


@pytest.fixture
def log_path(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "a.log"
    path.write_bytes(model.encode(RECORDS)[0])
    return path


@pytest.fixture
def open_source(log_path: pathlib.Path) -> Iterator[Callable[[str], Any]]:
    """A function giving the log as a source of the kind named; the files it opens are
    closed when the test ends (a Reader leaves a file object it was given open)."""
    with contextlib.ExitStack() as opened:

        def source(kind: str) -> Any:
            if kind == "path":
                return log_path
            if kind == "file object after a prefix":
                f = io.BytesIO(b"prefix" + log_path.read_bytes())
                f.seek(6)
                return f
            if kind == "file object refusing far offsets":
                return FarOffsetsRefused(log_path.read_bytes())
            buffering = {"file object": -1, "unbuffered file object": 0}[kind]
            return opened.enter_context(open(log_path, "rb", buffering=buffering))

        yield source


class FarOffsetsRefused(io.BytesIO):
    """A file whose reads fail with EINVAL beyond the largest file it could hold (tmpfs
    refuses them so, where a disk's file system reads nothing)."""

    def readinto(self, buffer: Any) -> int:
        if self.tell() >= 2**62:
            raise OSError(errno.EINVAL, "Invalid argument")
        return super().readinto(buffer)


SOURCES = [
    "path",
    "file object",
    "file object after a prefix",
    "unbuffered file object",
    "file object refusing far offsets",
]


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("start", PAST_THE_END)
def test_a_start_past_the_end_reads_nothing(
    log_path: pathlib.Path, open_source: Callable[[str], Any], kind: str, start: str
) -> None:
    value = eval(start, {"size": log_path.stat().st_size})
    source = open_source(kind)
    with Reader(source, start=value) as r:
        assert list(r) == []
        assert r.dropped_bytes == 0


@pytest.mark.parametrize("kind", SOURCES)
def test_an_end_past_the_end_reads_everything(open_source: Callable[[str], Any], kind: str) -> None:
    with Reader(open_source(kind), end=2**64 - 1) as r:
        assert list(r) == RECORDS


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("name", ["start", "end"])
@pytest.mark.parametrize("value", [2**64, 2**64 + 1, 10**30])
def test_an_offset_of_2_to_the_64_or_more_is_a_value_error_naming_it(
    open_source: Callable[[str], Any], kind: str, name: str, value: int
) -> None:
    with pytest.raises(ValueError, match=f"{name} is too large"):
        Reader(open_source(kind), **{name: value})


# ---- flags are bools -------------------------------------------------------------------


def _reader(**kw: Any) -> object:
    return Reader(b"", **kw)


def _writer(**kw: Any) -> object:
    return Writer(io.BytesIO(), **kw)


def _scan(**kw: Any) -> object:
    return leveldb_log.scan(b"", **kw)


def _stats(**kw: Any) -> object:
    return stats(b"", **kw)


@pytest.mark.parametrize(
    ("call", "flag", "extra"),
    [
        (_reader, "verify_checksums", {}),
        (_writer, "closefd", {}),
        (_writer, "recycle", {"dialect": "rocksdb"}),
        (_writer, "sync_offsets", {"dialect": "pebble"}),
        (_scan, "verify_checksums", {}),
        (_scan, "payloads", {}),
        (_stats, "verify_checksums", {}),
    ],
)
@pytest.mark.parametrize("value", ["no", 0, 1, None, 1.0])
def test_a_flag_that_is_not_a_bool_is_a_type_error_naming_it(
    call: Callable[..., object], flag: str, extra: dict[str, Any], value: object
) -> None:
    with pytest.raises(TypeError, match=f"{flag} must be True or False"):
        call(**{flag: value}, **extra)


def test_verify_checksums_false_still_turns_checks_off() -> None:
    log, offsets = model.encode([b"a" * 100])
    damaged = bytearray(log)
    damaged[offsets[0] + 50] ^= 1
    heard: list[Corruption] = []
    assert list(Reader(bytes(damaged), verify_checksums=False, on_corruption=heard.append)) == [
        bytes(damaged[7:107])
    ]
    assert heard == []


# ---- bytes paths -----------------------------------------------------------------------


class BytesPath:
    def __init__(self, path: bytes) -> None:
        self.path = path

    def __fspath__(self) -> bytes:
        return self.path


def test_a_writer_takes_a_bytes_path_like(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "b.log"
    target = BytesPath(os.fsencode(path))  # bytes themselves are refused (tests/writer)
    with Writer(target) as w:
        w.write(b"first")
    with Writer(target, "a") as w:
        w.write(b"second")
    assert list(Reader(path)) == [b"first", b"second"]
    assert list(Reader(BytesPath(os.fsencode(path)))) == [b"first", b"second"]


def test_a_rocksdb_writer_takes_its_log_number_from_a_bytes_path(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "000042.log"
    with Writer(BytesPath(os.fsencode(path)), dialect="rocksdb", recycle=True) as w:
        w.write(b"x")
    assert [r.log_number for r in leveldb_log.scan(path, dialect="rocksdb")] == [42]


# ---- every opener takes every kind of source --------------------------------------------

OPENERS: dict[str, Callable[[Any], Any]] = {
    "Reader": lambda source: list(Reader(source)),
    "scan": lambda source: list(leveldb_log.scan(source)),
    "stats": stats,
    "splits": lambda source: leveldb_log.splits(source, n=2),
}
KINDS: dict[str, Callable[[pathlib.Path], Any]] = {
    "str": str,
    "Path": lambda path: path,
    "PathLike[bytes]": lambda path: BytesPath(os.fsencode(path)),
    "file:// URL": lambda path: path.as_uri(),
    "bytes": lambda path: path.read_bytes(),
    "bytearray": lambda path: bytearray(path.read_bytes()),
    "memoryview": lambda path: memoryview(path.read_bytes()),
    "file object": lambda path: open(path, "rb"),
    "BytesIO": lambda path: io.BytesIO(path.read_bytes()),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("opener", OPENERS)
def test_every_opener_takes_every_kind_of_source(
    log_path: pathlib.Path, opener: str, kind: str
) -> None:
    source = KINDS[kind](log_path)
    try:
        assert OPENERS[opener](source) == OPENERS[opener](log_path.read_bytes())
    finally:
        if hasattr(source, "close"):
            source.close()


# ---- splits ----------------------------------------------------------------------------


def test_splits_refuses_a_directory(tmp_path: pathlib.Path) -> None:
    with pytest.raises(IsADirectoryError, match="not a directory"):
        leveldb_log.splits(tmp_path, n=2)
    result = run_cli_asserting_no_traceback("split", "-n", "2", tmp_path)
    assert result.returncode == 2 and result.stdout == b""
    assert b"not a directory" in result.stderr


def test_splits_refuses_a_fifo(tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="seek"):
        leveldb_log.splits(fifo, n=2)
    result = run_cli_asserting_no_traceback("split", "-n", "2", fifo)
    assert result.returncode == 2 and result.stdout == b""
    assert b"seek" in result.stderr


def test_splits_refuses_a_file_object_that_cannot_seek() -> None:
    r, w = os.pipe()
    os.write(w, b"x" * 100)  # (a pipe holds that much without a reader)
    os.close(w)
    with open(r, "rb") as pipe, pytest.raises(ValueError, match="cannot seek"):
        leveldb_log.splits(pipe, n=2)


# ---- a Writer over a file object -------------------------------------------------------


@pytest.mark.parametrize("buffering", [0, -1])
def test_a_file_object_open_for_reading_is_a_type_error_at_once(
    log_path: pathlib.Path, buffering: int
) -> None:
    before = log_path.read_bytes()
    with open(log_path, "rb", buffering=buffering) as f, pytest.raises(TypeError, match="writable"):
        Writer(f)
    assert log_path.read_bytes() == before


def test_a_file_object_opened_to_append_to_a_log_is_refused(log_path: pathlib.Path) -> None:
    before = log_path.read_bytes()
    with open(log_path, "ab") as f, pytest.raises(ValueError, match="Writer\\(path, 'a'\\)"):
        Writer(f)
    assert log_path.read_bytes() == before
    empty = log_path.with_name("empty.log")
    with open(empty, "ab") as f, Writer(f) as w:  # nothing there yet: a log from offset 0
        w.write(b"fine")
    assert list(Reader(empty)) == [b"fine"]


@pytest.mark.parametrize("prefix", [1, 100, 32767, 32768, 40_000])
def test_a_round_trip_through_one_file_object_after_a_prefix_reads_back_clean(
    tmp_path: pathlib.Path, prefix: int
) -> None:
    records = [b"r%d " % i + b"." * (i * 997 % 5000) for i in range(60)]
    with open(tmp_path / "p.log", "w+b") as f:
        f.write(b"H" * prefix)
        with Writer(f) as w:
            offsets = [w.write(r) for r in records]
            assert w.position == len(model.encode(records)[0])
        f.seek(prefix)
        heard: list[Corruption] = []
        r = Reader(f, recovery="absolute", on_corruption=heard.append)
        got = []
        for record in r:
            got.append((r.last_record_offset, record))
        assert heard == []
        assert got == list(zip(offsets, records, strict=True))
    # The same bytes: the log after the prefix is the log a path would hold.
    assert (tmp_path / "p.log").read_bytes() == b"H" * prefix + model.encode(records)[0]


# ---- Arrow exports of a spent Reader ---------------------------------------------------


def test_a_spent_reader_refuses_another_arrow_export(log_path: pathlib.Path) -> None:
    pa = pytest.importorskip("pyarrow")
    r = Reader(log_path)
    assert pa.table(r).column("data").to_pylist() == RECORDS
    with pytest.raises(ValueError, match="already exported"):
        pa.table(r)


def test_a_partly_read_reader_exports_the_rest(log_path: pathlib.Path) -> None:
    pa = pytest.importorskip("pyarrow")
    r = Reader(log_path)
    assert next(r) == b"one"
    assert pa.table(r).column("data").to_pylist() == RECORDS[1:]
    with pytest.raises(ValueError, match="already exported"):
        pa.table(r)


def test_a_stream_left_before_its_end_is_no_spent_reader(log_path: pathlib.Path) -> None:
    pa = pytest.importorskip("pyarrow")
    r = Reader(log_path)
    stream = pa.RecordBatchReader.from_stream(r)
    del stream  # released unread, as a consumer reading only the schema does
    assert pa.table(r).column("data").to_pylist() == RECORDS


def test_duckdb_refuses_a_second_query_of_a_spent_reader(log_path: pathlib.Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    r = Reader(log_path)  # noqa: F841 (DuckDB finds it by its name)
    assert duckdb.sql("select count(*) from r").fetchall() == [(3,)]
    with pytest.raises(duckdb.Error, match="already exported"):
        duckdb.sql("select count(*) from r").fetchall()
