"""Reading: the C reader and the model, in comparable form."""

from __future__ import annotations

import dataclasses
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


def c_read(source: Any, **kw: Any) -> Outcome:
    """Reads with leveldb_log.Reader, collecting everything observable."""
    seen: list[Any] = []
    records: list[bytes] = []
    offsets: list[int | None] = []
    error = None
    with leveldb_log.Reader(source, on_corruption=seen.append, **kw) as r:
        it = iter(r)
        while True:
            try:
                rec = next(it)
            except StopIteration:
                break
            except leveldb_log.CorruptionError as e:
                assert isinstance(e, ValueError) and isinstance(e, leveldb_log.LogError)
                error = (
                    "truncated" if isinstance(e, leveldb_log.TruncatedRecordError) else "corruption"
                )
                # the exception carries the last report
                assert seen and (e.offset, e.size, e.reason) == tuple(seen[-1])
                break
            assert isinstance(rec, bytes)
            records.append(rec)
            offsets.append(r.last_record_offset)
        dropped = r.dropped_bytes
        assert list(r) == []  # finished for good after an error or the end
    for c in seen:
        assert isinstance(c, leveldb_log.Corruption)
    return Outcome(records, offsets, [tuple(c) for c in seen], error, dropped)


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
    assert got.offsets == expected.offsets, context
    assert got.records == expected.records, context
    assert got.corruptions == expected.corruptions, context
    assert got.error == expected.error, context
    assert got.dropped_bytes == expected.dropped_bytes, context
