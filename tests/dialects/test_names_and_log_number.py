"""The dialect and recovery names come from the core's lists (log_format.h), exported by
the binding and used by every Python check; scan() and stats() take log_number as the
Reader does (docs/api.md)."""

from __future__ import annotations

import io
import typing
from typing import Any

import leveldb_log
import pytest
from leveldb_log import _core, _dialects, scan

RECORDS = [b"a" * 10, b"b" * 40000, b"c"]


def pebble_log(log_number: int) -> bytes:
    buf = io.BytesIO()
    with leveldb_log.Writer(buf, dialect="pebble", log_number=log_number) as w:
        w.write_many(RECORDS)
    return buf.getvalue()


def test_the_dialect_names_are_the_cores_and_the_literal_spells_them_alike() -> None:
    assert _core._DIALECTS == ("leveldb", "rocksdb", "pebble")
    assert _dialects.DIALECTS is _core._DIALECTS
    assert leveldb_log.DIALECTS == _core._DIALECTS
    assert typing.get_args(_dialects.Dialect) == _core._DIALECTS


@pytest.mark.parametrize(
    ("call", "kw"),
    [
        ("reader", {"dialect": "lmdb"}),
        ("scan", {"dialect": "lmdb"}),
        ("stats", {"dialect": "lmdb"}),
        ("reader", {"recovery": "lmdb"}),
    ],
)
def test_every_check_of_a_name_lists_the_cores_names(call: str, kw: dict[str, Any]) -> None:
    names = _core._DIALECTS if "dialect" in kw else _core.RECOVERY_MODES
    if call == "reader" and "dialect" in kw:
        names += ("auto",)  # a Reader tells the dialect from the log too
    listed = ", ".join(f"'{n}'" for n in names[:-1]) + f" or '{names[-1]}'"
    with pytest.raises(ValueError) as info:
        if call == "reader":
            leveldb_log.Reader(b"", **kw)
        elif call == "scan":
            scan(b"", **kw)
        else:
            leveldb_log.stats(b"", **kw)
    assert listed in str(info.value) and "'lmdb'" in str(info.value)


def test_scan_takes_the_log_number_pebbles_trailer_is_told_by() -> None:
    log = pebble_log(7)
    # Told the log is number 6, the first header (number 7) is that log's trailer.
    told = list(scan(log, dialect="pebble", log_number=6))
    assert {r.kind for r in told} == {"end"} and told[0].offset == 0
    assert told[-1].end == len(log)
    # Untold, or told the right number, the records are the log's own, up to the
    # trailer Close wrote at the end.
    for kw in ({}, {"log_number": 7}):
        regions = list(scan(log, dialect="pebble", **kw))
        assert {r.kind for r in regions[:-1]} <= {"record", "trailer"}
        assert regions[-1].kind == "end" and regions[-1].end == len(log)
        assert {r.log_number for r in regions if r.kind == "record"} == {7}


def test_stats_takes_the_log_number_as_the_reader_does() -> None:
    log = pebble_log(7)
    for number in (None, 7, 6, 3):
        with leveldb_log.Reader(log, dialect="pebble", log_number=number) as r:
            expected = list(r)
        s = leveldb_log.stats(log, dialect="pebble", log_number=number)
        assert s.records == len(expected)
        assert s.record_bytes == sum(map(len, expected))
    assert leveldb_log.stats(log, dialect="pebble", log_number=7).records == len(RECORDS)
    assert leveldb_log.stats(log, dialect="pebble", log_number=6).records == 0


@pytest.mark.parametrize(
    ("kw", "error", "text"),
    [
        ({"log_number": 3}, ValueError, "log_number needs dialect"),
        ({"dialect": "rocksdb", "log_number": -1}, ValueError, "log_number"),
        ({"dialect": "rocksdb", "log_number": "3"}, TypeError, "log_number"),
    ],
)
def test_scan_and_stats_refuse_a_bad_log_number_at_the_call(
    kw: dict[str, Any], error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):
        scan(b"", **kw)
    with pytest.raises(error, match=text):
        leveldb_log.stats(b"", **kw)
    with pytest.raises(error, match=text):
        leveldb_log.Reader(b"", **kw)
