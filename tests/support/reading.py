"""Reading: the C reader and the model, in comparable form."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any
from unittest import mock

import leveldb_log

from support import model

MODES = model.RECOVERY_MODES


@dataclasses.dataclass
class Outcome:
    records: list[bytes]
    offsets: list[int | None]
    corruptions: list[tuple[int, int, str]]
    error: str | None  # None, "corruption" or "truncated"
    dropped_bytes: int
    # What only a real Reader shows (c_read fills them, assert_reader_contract checks them):
    # the exception that ended the read, the reports as on_corruption got them, what
    # iterating once more gave, and what the caller asked to see of the Reader at the end.
    exception: BaseException | None = dataclasses.field(default=None, compare=False)
    reports: list[Any] = dataclasses.field(default_factory=list, compare=False)
    after_end: list[Any] = dataclasses.field(default_factory=list, compare=False)
    attrs: Any = dataclasses.field(default=None, compare=False)


def c_read(source: Any, attrs_of: Callable[[Any], Any] | None = None, **kw: Any) -> Outcome:
    """Reads with leveldb_log.Reader, collecting everything observable; checks nothing
    (assert_reader_contract does). A CorruptionError ends the read and is kept; attrs_of(r),
    when given, is taken once the records are read."""
    seen: list[Any] = []
    records: list[bytes] = []
    offsets: list[int | None] = []
    exception = None
    with leveldb_log.Reader(source, on_corruption=seen.append, **kw) as r:
        it = iter(r)
        while True:
            try:
                rec = next(it)
            except StopIteration:
                break
            except leveldb_log.CorruptionError as e:
                exception = e
                break
            records.append(rec)
            offsets.append(r.last_record_offset)
        dropped = r.dropped_bytes
        attrs = attrs_of(r) if attrs_of is not None else None
        after_end = list(r)
    error = None
    if exception is not None:
        truncated = isinstance(exception, leveldb_log.TruncatedRecordError)
        error = "truncated" if truncated else "corruption"
    corruptions = [tuple(c) for c in seen]
    return Outcome(records, offsets, corruptions, error, dropped, exception, seen, after_end, attrs)


def assert_reader_contract(got: Outcome) -> None:
    """What every read of c_read must show, whatever the log: records are bytes, reports are
    Corruption objects, a CorruptionError is a ValueError and a LogError and carries the last
    report, and a Reader that stopped (at the end or at an error) stays finished."""
    assert all(isinstance(rec, bytes) for rec in got.records)
    assert all(isinstance(c, leveldb_log.Corruption) for c in got.reports)
    e = got.exception
    if e is not None:
        assert isinstance(e, ValueError) and isinstance(e, leveldb_log.LogError)
        # the exception carries the last report
        assert got.reports and (e.offset, e.size, e.reason) == tuple(got.reports[-1])
    assert got.after_end == []  # finished for good after an error or the end


_real_read_events = model.read_events
_events_cache: dict = {}


def _cached_read_events(data: bytes, verify_checksums: bool = True) -> list:
    key = (bytes(data), bool(verify_checksums))
    events = _events_cache.get(key)
    if events is None:
        if len(_events_cache) > 8:
            _events_cache.clear()
        events = _events_cache[key] = _real_read_events(data, verify_checksums)
    return events


def model_read(data: bytes, **kw: Any) -> Outcome:
    """model.read(data, **kw) (its event list cached: many ranges of one log are read)."""
    with mock.patch.object(model, "read_events", _cached_read_events):
        res = model.read(data, **kw)
    return Outcome(
        [r.data for r in res.records],
        [r.offset for r in res.records],
        [(c.offset, c.size, c.reason) for c in res.corruptions],
        res.error,
        res.dropped_bytes,
    )


def assert_same(got: Outcome, expected: Outcome, context: Any = "") -> None:
    """Asserts that two reads saw the same records, offsets, reports, error and drops."""
    assert got.offsets == expected.offsets, context
    assert got.records == expected.records, context
    assert got.corruptions == expected.corruptions, context
    assert got.error == expected.error, context
    assert got.dropped_bytes == expected.dropped_bytes, context
