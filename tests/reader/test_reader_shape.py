"""The Reader's API shape: its name, to_arrow(), the closed-object rule, the hint a bytes
source gets when it is not a log, and a followed file that shrinks or is replaced."""

from __future__ import annotations

import io
import os
import pickle
import sys
import warnings
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import CorruptionWarning, Reader, Writer, _testing

RECORDS = [b"alpha", b"b" * 40_000, b"", b"gamma"]
TEXT = b"# A README\n\nSome notes, not a log at all.\n"  # less than a block: a torn tail


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "named.log"
    with Writer(path) as w:
        w.write_many(RECORDS)
    return path


# ---- name -----------------------------------------------------------------------------------


def test_name_is_the_path_as_given_or_the_files_name_or_none(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(log.parent)
    assert Reader("named.log").name == "named.log"  # as given, not made absolute
    assert Reader(log).name == str(log)  # os.fspath of a PathLike
    with open(log, "rb") as f:
        assert Reader(f).name == str(log)
    fd = os.open(log, os.O_RDONLY)
    with open(fd, "rb") as f:  # a file object whose name is a descriptor
        assert Reader(f).name is None
    assert Reader(io.BytesIO(log.read_bytes())).name is None
    assert Reader(log.read_bytes()).name is None
    assert Reader(memoryview(log.read_bytes())).name is None


def test_a_bytes_pathlike_gives_a_str_name(log: Path) -> None:
    class BytesPath:
        def __fspath__(self) -> bytes:
            return os.fsencode(log)

    assert Reader(BytesPath()).name == str(log)


def test_name_stays_readable_once_closed(log: Path) -> None:
    r = Reader(log)
    r.close()
    assert r.name == str(log)


# ---- to_arrow -------------------------------------------------------------------------------


def test_to_arrow_is_the_table_pyarrow_makes_of_the_reader(log: Path) -> None:
    pa = pytest.importorskip("pyarrow")  # the sanitized build has none
    table = Reader(log).to_arrow()
    assert table.equals(pa.table(Reader(log)))
    assert table.column("data").to_pylist() == RECORDS
    assert table.schema.field("offset").type == pa.uint64()


def test_to_arrow_takes_iter_batches_column_types(log: Path) -> None:
    pa = pytest.importorskip("pyarrow")  # the sanitized build has none
    table = Reader(log).to_arrow(offset_type="int64", data_type="binary")
    assert table.schema.types == [pa.int64(), pa.binary()]
    assert table.column("data").to_pylist() == RECORDS
    with pytest.raises(ValueError, match="offset_type"):
        Reader(log).to_arrow(offset_type="int32")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="data_type"):
        Reader(log).to_arrow(data_type=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Reader(log).to_arrow("int64")  # type: ignore[misc]  # keyword-only


def test_to_arrow_reads_the_rest_and_advances_the_reader(log: Path) -> None:
    pytest.importorskip("pyarrow")
    r = Reader(log)
    assert next(r) == RECORDS[0]
    assert r.to_arrow().column("data").to_pylist() == RECORDS[1:]
    assert list(r) == []
    with pytest.raises(ValueError, match="already exported"):
        r.to_arrow()  # read to its end through Arrow: a new Reader reads it again


def test_to_arrow_without_pyarrow_names_the_extra(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow then fails
    r = Reader(log)
    with pytest.raises(ImportError, match=r"pip install 'leveldb-log\[arrow\]'"):
        r.to_arrow()
    assert next(r) == RECORDS[0]  # nothing was read


# ---- the closed-object rule -----------------------------------------------------------------


def test_a_closed_readers_position_raises_like_a_closed_writers(log: Path) -> None:
    r = Reader(log)
    next(r)
    r.close()
    with pytest.raises(ValueError, match="I/O operation on closed Reader"):
        r.position  # noqa: B018
    w = Writer(log.parent / "w.log")
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.position  # noqa: B018


def test_a_closed_reader_keeps_its_options_and_results(log: Path) -> None:
    r = Reader(log, recovery="point_in_time", verify_checksums=False, start=0, end=10**6)
    next(r)
    r.close()
    r.close()  # idempotent
    readable = {
        "closed": True,
        "name": str(log),
        "recovery": "point_in_time",
        "verify_checksums": False,
        "start": 0,
        "end": 10**6,
        "dialect": "leveldb",
        "log_number": None,
        "recycled": False,
        "compression": None,
        "timestamp_sizes": {},
        "predecessor": None,
        "last_record_offset": 0,
        "dropped_bytes": 0,
    }
    assert {name: getattr(r, name) for name in readable} == readable
    assert "closed" in repr(r)


CALLS_NEEDING_THE_FILE: dict[str, Any] = {
    "next": next,
    "iter": iter,
    "with": lambda r: r.__enter__(),
    "iter_batches": lambda r: r.iter_batches(),
    "to_arrow": lambda r: r.to_arrow(),
    "__arrow_c_stream__": lambda r: r.__arrow_c_stream__(),
    "pa.table": lambda r: pytest.importorskip("pyarrow").table(r),
    "pickle": pickle.dumps,
}


@pytest.mark.parametrize("call", CALLS_NEEDING_THE_FILE.values(), ids=CALLS_NEEDING_THE_FILE)
def test_every_call_needing_the_file_raises_on_a_closed_reader(log: Path, call: Any) -> None:
    r = Reader(log)
    r.close()
    with pytest.raises(ValueError, match="I/O operation on closed Reader"):
        call(r)


# ---- bytes are the log itself ---------------------------------------------------------------


def test_not_a_log_warning_on_bytes_says_how_to_open_a_file() -> None:
    with pytest.warns(CorruptionWarning, match="not a log") as got:
        assert list(Reader(TEXT)) == []
    (message,) = [str(w.message) for w in got]
    assert "bytes-like source is read as the log itself" in message
    assert "str or os.PathLike" in message


def test_not_a_log_warning_on_a_path_has_no_bytes_hint(tmp_path: Path) -> None:
    path = tmp_path / "README"
    path.write_bytes(TEXT)
    with pytest.warns(CorruptionWarning, match="not a log") as got:
        assert list(Reader(path)) == []
    assert all("bytes-like" not in str(w.message) for w in got)


# ---- a followed file that shrinks or is replaced --------------------------------------------


def follow_to_end(r: Reader) -> list[bytes]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to say while the file is the same
        return list(r)


def test_a_followed_log_that_shrinks_below_the_position_warns_once(log: Path) -> None:
    r = Reader(log)
    assert follow_to_end(r) == RECORDS
    position = r.position
    os.truncate(log, 100)
    with pytest.warns(RuntimeWarning, match=f"shrank to 100 bytes, below .* {position}"):
        assert list(r) == []
    assert follow_to_end(r) == []  # once


def test_a_followed_log_that_is_replaced_warns_once(log: Path) -> None:
    r = Reader(log)
    assert follow_to_end(r) == RECORDS
    new = log.parent / "new.log"
    with Writer(new) as w:
        w.write_many([*RECORDS, b"more"])  # larger: no shrink, another file
    os.replace(new, log)
    with pytest.warns(RuntimeWarning, match="was replaced: another file is at that path"):
        assert list(r) == []
    assert follow_to_end(r) == []  # once
    assert list(Reader(log)) == [*RECORDS, b"more"]


def test_a_followed_log_that_grows_or_loses_only_a_torn_tail_says_nothing(log: Path) -> None:
    r = Reader(log)
    assert follow_to_end(r) == RECORDS
    with Writer(log, "a") as w:
        w.write(b"appended")
    assert follow_to_end(r) == [b"appended"]
    size = log.stat().st_size
    with open(log, "ab") as f:
        f.write(b"\x01\x02\x03")  # a torn header ...
    assert follow_to_end(r) == []
    os.truncate(log, size)  # ... cut back: the file is still past the position
    assert follow_to_end(r) == []


def test_a_changed_directory_is_no_replaced_file(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(log.parent)
    r = Reader("named.log")
    monkeypatch.chdir(log.parents[1])
    assert follow_to_end(r) == RECORDS
    assert follow_to_end(r) == []


def test_a_read_from_past_the_end_is_no_shrunk_file(log: Path) -> None:
    r = Reader(log, start=1 << 20)
    assert follow_to_end(r) == []
    assert follow_to_end(r) == []


def test_the_warning_can_be_an_error_and_the_reader_stays_usable(log: Path) -> None:
    r = Reader(log)
    assert follow_to_end(r) == RECORDS
    os.truncate(log, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="shrank"):
            next(r)
    assert list(r) == []
    assert leveldb_log.Reader(log).position == 0


# ---- test hooks live off the type -----------------------------------------------------------


def test_the_reader_type_carries_no_test_hooks(log: Path) -> None:
    assert [name for name in dir(Reader) if "blocks" in name or "test" in name] == []
    r = Reader(log)
    assert list(r) == RECORDS
    assert _testing.blocks_in_place(r) >= _testing.blocks_bounced(r) >= 0
    with pytest.raises(TypeError, match="takes a Reader"):
        _testing.blocks_in_place(log.read_bytes())
    with pytest.raises(AttributeError, match="no hook"):
        _testing.blocks_nowhere  # noqa: B018


def test_a_reader_never_initialized_raises_instead_of_crashing() -> None:
    r = Reader.__new__(Reader)  # __init__ skipped (a subclass may forget to call it)
    for call in (next, iter, lambda r: r.position, lambda r: r.iter_batches()):
        with pytest.raises(ValueError, match="not initialized"):
            call(r)
    assert r.name is None
    assert "uninitialized" in repr(r)
