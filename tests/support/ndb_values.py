"""The values of a record as google-cloud-ndb's legacy EntityProto codec reads it
(google.cloud.ndb._legacy_entity_pb, pure Python), turned into leveldb_log.datastore's
value types by rules written here, independently of the C decoder: the other side of the
datastore cross-checks. (That codec only decodes; it writes no EntityProto.)"""

from __future__ import annotations

import datetime
from typing import Any

from google.cloud.ndb import _legacy_entity_pb as pb
from leveldb_log.datastore import Entity, GeoPoint, Key, RawValue

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
TEXT = {1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 15, 17}  # the string meanings shown as text
BYTES = {14, 16, 22}  # BLOB, BYTESTRING, compressed
PLAIN = {0, 18}  # none, INDEX_VALUE


def _s(x: bytes | str) -> str:
    """A string field: bytes when set, the default "" when not."""
    return x.decode("utf-8") if isinstance(x, bytes) else x


def _text_or_bytes(b: bytes) -> tuple[Any, bool]:
    try:
        return b.decode("utf-8"), True
    except UnicodeDecodeError:
        return b, False


def _string(meaning: int, b: bytes, depth: int) -> Any:
    if meaning in BYTES:
        return b
    if meaning == 19:
        return _entity(b, depth + 1, top=False)
    v, ok = _text_or_bytes(b)
    if meaning in PLAIN or (ok and meaning in TEXT):
        return v
    return RawValue(meaning, v)


def _int(meaning: int, i: int) -> Any:
    if meaning == 7:
        try:
            return EPOCH + datetime.timedelta(microseconds=i)
        except OverflowError:
            return RawValue(7, i)
    return i if meaning in PLAIN | {13} else RawValue(meaning, i)


def _reference(rv: Any) -> Key:
    path = tuple(
        (_s(e.type()), _s(e.name()) if e.has_name() else e.id() if e.has_id() else None)
        for e in rv.pathelement_list()
    )
    return Key(path, app=_s(rv.app()), namespace=_s(rv.name_space()), database=_s(rv.database_id()))


def _value(p: Any, depth: int) -> Any:
    m, v = p.meaning(), p.value()
    if m == 24:
        return []
    if v.has_stringvalue():
        return _string(m, v.stringvalue(), depth)
    if v.has_int64value():
        return _int(m, v.int64value())
    if v.has_booleanvalue():
        out: Any = bool(v.booleanvalue())
    elif v.has_doublevalue():
        out = v.doublevalue()
    elif v.has_pointvalue():
        out = GeoPoint(v.pointvalue().x(), v.pointvalue().y())
        return out if m in PLAIN | {9} else RawValue(m, out)
    elif v.has_referencevalue():
        out = _reference(v.referencevalue())
    else:
        out = None
    return out if m in PLAIN else RawValue(m, out)


def _key(ref: Any) -> Key:
    path = tuple(
        (_s(e.type), _s(e.name) if e.has_name() else e.id if e.has_id() else None)
        for e in ref.path.element_list()
    )
    return Key(path, app=_s(ref.app), namespace=_s(ref.name_space), database=_s(ref.database_id))


def _entity(record: bytes, depth: int, top: bool) -> Any:
    e = pb.EntityProto()
    e.MergePartialFromString(record)
    props: dict[str, Any] = {}
    for p in e.property_list():
        name, value = _s(p.name()), _value(p, depth)
        if p.multiple():
            props.setdefault(name, []).append(value)
        else:
            props[name] = value
    key = _key(e.key())
    if top or key.path:
        return Entity(props, key=key)
    return props


def ndb_decode(record: bytes) -> Entity:
    """The record read by ndb's codec, as leveldb_log.datastore's values."""
    out: Entity = _entity(record, 0, top=True)
    return out
