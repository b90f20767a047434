"""Widths and separators that differ on Windows, checked on every system.

A C ``long`` has 32 bits on Windows: a recyclable header's log number (32 bits, unsigned)
must reach Python whole, and a log number taken from a file name whole (64 bits). A WAL's
file name is found after the last slash or backslash, on every system (csrc/py/reader_dialect.c,
``base_name``), so ``db\\000123.log`` is log 123 wherever the path was written.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Literal

import leveldb_log
import pytest

Dialect = Literal["rocksdb", "pebble"]  # the dialects with log numbers
RECORDS = [b"", b"a" * 10, b"b" * 40000, b"c" * 100]
MASK32 = 2**32 - 1


def written(dialect: Dialect, log_number: int) -> bytes:
    buf = io.BytesIO()
    recycle = dialect == "rocksdb"  # pebble's headers are always recyclable
    with leveldb_log.Writer(buf, dialect=dialect, recycle=recycle, log_number=log_number) as w:
        w.write_many(RECORDS)
    return buf.getvalue()


def header_numbers(source: bytes | str | Path, dialect: Dialect) -> set[int | None]:
    """The log numbers scan() shows in the log's record headers."""
    return {r.log_number for r in leveldb_log.scan(source, dialect=dialect) if r.kind == "record"}


@pytest.mark.parametrize("dialect", ["rocksdb", "pebble"])
@pytest.mark.parametrize("number", [2**31 - 1, 2**31, 2**31 + 5, 2**32 - 1])
def test_scan_shows_every_32_bit_log_number_whole(dialect: Dialect, number: int) -> None:
    """From 2**31 up, a 32-bit long would make these negative (None) or wrong."""
    log = written(dialect, number)
    assert header_numbers(log, dialect) == {number}
    with leveldb_log.Reader(log, dialect=dialect) as r:
        assert list(r) == RECORDS and r.log_number == number


@pytest.mark.parametrize("dialect", ["rocksdb", "pebble"])
def test_a_log_number_past_32_bits_is_stored_as_its_low_32_bits(dialect: Dialect) -> None:
    number = 2**33 + 5
    log = written(dialect, number)
    assert header_numbers(log, dialect) == {number & MASK32} == {5}
    with leveldb_log.Reader(log, dialect=dialect, log_number=number) as r:
        assert list(r) == RECORDS and r.log_number == number


@pytest.mark.parametrize("dialect", ["rocksdb", "pebble"])
def test_a_log_number_past_32_bits_comes_whole_from_the_file_name(
    tmp_path: Path, dialect: Dialect
) -> None:
    number = 2**33 + 5
    path = tmp_path / f"{number}.log"
    with leveldb_log.Writer(path, dialect=dialect, recycle=dialect == "rocksdb") as w:
        w.write_many(RECORDS)
    assert header_numbers(path, dialect) == {number & MASK32}
    with leveldb_log.Reader(path, dialect=dialect) as r:
        assert r.log_number == number  # from the name, before any record
        assert list(r) == RECORDS


def with_backslash(tmp_path: Path, name: str) -> str:
    r"""``<tmp_path>/db\<name>``: a file of that name on POSIX, db\<name> on Windows."""
    if os.sep == "\\":
        (tmp_path / "db").mkdir()
    return str(tmp_path) + os.sep + "db\\" + name


@pytest.mark.parametrize(("name", "number"), [("000123.log", 123), ("000124-002.log", 124)])
def test_the_log_number_is_read_after_a_backslash(tmp_path: Path, name: str, number: int) -> None:
    path = with_backslash(tmp_path, name)
    # a pebble writer needs a log number: it takes it from the name
    with leveldb_log.Writer(path, dialect="pebble") as w:
        w.write_many(RECORDS)
    assert header_numbers(path, "pebble") == {number}
    with leveldb_log.Reader(path, dialect="pebble") as r:
        assert r.log_number == number
        assert list(r) == RECORDS


def test_a_name_that_is_not_a_wals_after_a_backslash_gives_no_number(tmp_path: Path) -> None:
    path = with_backslash(tmp_path, "x000123.log")
    with pytest.raises(ValueError, match="log number"):
        leveldb_log.Writer(path, dialect="pebble")
    assert not os.path.exists(path)
    # a path whose last separator is a slash after a backslash: the slash counts
    if os.sep == "/":
        (tmp_path / "db\\000125.log").mkdir()
        inner = tmp_path / "db\\000125.log" / "000126.log"
        with leveldb_log.Writer(inner, dialect="pebble") as w:
            w.write(b"r")
        with leveldb_log.Reader(inner, dialect="pebble") as r:
            assert r.log_number == 126
