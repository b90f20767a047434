"""Property tests of leveldb_log.datastore: random entities of every value type through
encode_entity, export folders and read_export, and against google-cloud-ndb's independent
legacy codec (tests/support/ndb_values.py)."""

from __future__ import annotations

import datetime
import struct
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from leveldb_log import datastore as ds
from support.datastore_build import write_export
from support.profiles import differential, scaled

UTC = datetime.timezone.utc
INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
NAMES = st.text(min_size=1, max_size=12)

# Strings over 32 KiB, so that records span blocks.
LONG_TEXT = st.builds(lambda c, n: c * n, st.characters(codec="utf-8"), st.integers(33_000, 40_000))
TEXT = st.one_of(st.text(max_size=40), LONG_TEXT)
WHEN = st.datetimes(
    min_value=datetime.datetime(1, 1, 2),
    max_value=datetime.datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, datetime.timezone(datetime.timedelta(hours=-5))]),
)
KEY_ID = st.one_of(st.integers(1, (1 << 63) - 1), st.text(min_size=1, max_size=10))
PATH = st.lists(st.tuples(st.text(min_size=1, max_size=8), KEY_ID), min_size=1, max_size=3)
KEYS = st.builds(
    lambda path, app, ns, db: ds.Key(path, app=app, namespace=ns, database=db),
    PATH,
    st.sampled_from(["dev~demo", "s~p", "e~q", "b~r", "plain"]),
    st.sampled_from(["", "ns1"]),
    st.sampled_from(["", "db2"]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    INT64,
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
    st.binary(max_size=40),
    WHEN,
    st.builds(ds.GeoPoint, st.floats(-90, 90), st.floats(-180, 180)),
    KEYS,
)
USERS = st.builds(
    ds.User,
    st.emails(),
    st.text(max_size=5),
    st.none() | st.text(max_size=5),
    st.none() | st.text(max_size=5),
)


def values(depth: int, users: bool) -> st.SearchStrategy[Any]:
    """A value: a scalar, or (depth > 0) a map or an embedded entity of values one level
    less deep, or an array of such values (no arrays in arrays)."""
    scalar = st.one_of(SCALARS, USERS) if users else SCALARS
    if depth == 0:
        return scalar
    inner = values(depth - 1, users)
    maps = st.dictionaries(NAMES, inner, max_size=4)
    embedded = st.builds(lambda p, k: ds.Entity(p, key=k), maps, KEYS)
    item = st.one_of(scalar, maps, embedded)
    return st.one_of(scalar, maps, embedded, st.lists(item, max_size=4))


def entities(users: bool = True) -> st.SearchStrategy[ds.Entity]:
    return st.builds(
        lambda p, k: ds.Entity(p, key=k), st.dictionaries(NAMES, values(3, users), max_size=6), KEYS
    )


def canon(v: Any) -> Any:
    """v with its exact types made comparable: floats by their bits, datetimes by their
    instant and offset, every value tagged with its type."""
    t = type(v).__name__
    if isinstance(v, float):
        return (t, struct.pack("<d", v))
    if isinstance(v, datetime.datetime):
        return (t, v.timestamp(), v.microsecond, v.utcoffset())
    if isinstance(v, ds.Entity):
        return (t, v.key, {k: canon(x) for k, x in v.items()})
    if isinstance(v, dict):
        return (t, {k: canon(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return (t, [canon(x) for x in v])
    return (t, v)


def expected(v: Any) -> Any:
    """What reading gives back for a value written: datetimes in UTC."""
    if isinstance(v, datetime.datetime):
        return v.astimezone(UTC)
    if isinstance(v, ds.Entity):
        return ds.Entity({k: expected(x) for k, x in v.items()}, key=v.key)
    if isinstance(v, dict):
        return {k: expected(x) for k, x in v.items()}
    if isinstance(v, list):
        return [expected(x) for x in v]
    return v


def ndb() -> Any:
    """ndb_values.ndb_decode (google-cloud-ndb is in the test extra; a wheel's test run
    may lack it)."""
    pytest.importorskip("google.cloud.ndb")
    from support.ndb_values import ndb_decode

    return ndb_decode


@scaled(0.5)
@given(st.lists(st.lists(entities(), max_size=4), min_size=1, max_size=3))
def test_entities_round_trip_through_an_export_folder(files: list[list[ds.Entity]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        write_export(Path(tmp) / "e", [("", files)])
        got = list(ds.read_export(Path(tmp) / "e"))
    want = [expected(e) for f in files for e in f]
    assert [canon(e) for e in got] == [canon(e) for e in want]
    for g, w in zip(got, want, strict=True):
        assert g.key == w.key


@given(entities())
def test_decode_inverts_encode(e: ds.Entity) -> None:
    assert canon(ds.decode_entity(ds.encode_entity(e))) == canon(expected(e))


@differential()
@given(entities(users=False))
def test_ndb_s_codec_reads_what_we_write_as_we_do(e: ds.Entity) -> None:
    # ndb's legacy codec skips UserValue groups: users are left out here.
    ndb_decode = ndb()
    record = ds.encode_entity(e)
    assert canon(ndb_decode(record)) == canon(ds.decode_entity(record)) == canon(expected(e))


@given(st.binary(max_size=300))
def test_random_bytes_decode_or_raise_value_error(data: bytes) -> None:
    try:
        ds.decode_entity(data)
    except ValueError:
        pass


@given(entities(users=False), st.data())
def test_damaged_records_decode_or_raise_value_error(e: ds.Entity, data: st.DataObject) -> None:
    record = bytearray(ds.encode_entity(e))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(record) - 1))
        record[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(record)))
    try:
        ds.decode_entity(bytes(record[:cut]))
    except ValueError:
        pass
