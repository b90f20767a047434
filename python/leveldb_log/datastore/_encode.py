"""encode_entity: an entity as one serialized EntityProto, laid out as the Firebase emulator
lays out its records (field order, ``raw_property`` for values, ``property`` for empty
arrays, ``multiple`` always written), so that tests and users can build exports.
"""

from __future__ import annotations

import datetime
import struct
from collections.abc import Mapping
from typing import Any

from leveldb_log.datastore._values import (
    INT64_MAX,
    INT64_MIN,
    Entity,
    GeoPoint,
    Key,
    RawValue,
    User,
)

__all__ = ["encode_entity"]

# Property.Meaning values the encoder writes (docs/datastore.md has the table).
GD_WHEN, GEORSS_POINT, BLOB, ENTITY_PROTO, EMPTY_LIST = 7, 9, 14, 19, 24
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_DOUBLE = struct.Struct("<d")


def _varint(out: bytearray, v: int) -> None:
    v &= (1 << 64) - 1  # negative int64 as its two's complement, ten bytes
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def _tag(out: bytearray, field: int, wire: int) -> None:
    _varint(out, field << 3 | wire)


def _bytes(out: bytearray, field: int, data: bytes) -> None:
    _tag(out, field, 2)
    _varint(out, len(data))
    out += data


def _int(out: bytearray, field: int, v: int) -> None:
    _tag(out, field, 0)
    _varint(out, v)


def _double(out: bytearray, field: int, v: float) -> None:
    _tag(out, field, 1)
    out += _DOUBLE.pack(v)


def _text(s: str) -> bytes:
    return s.encode("utf-8")


def _path(out: bytearray, key: Key, group: int, kind: int) -> None:
    """The path elements as groups: Path's (group 1: kind 2, id 3, name 4) or
    ReferenceValue's (group 14: kind 15, id 16, name 17)."""
    for k, id_or_name in key.path:
        _tag(out, group, 3)
        _bytes(out, kind, _text(k))
        if isinstance(id_or_name, int):
            _int(out, kind + 1, id_or_name)
        elif isinstance(id_or_name, str):
            _bytes(out, kind + 2, _text(id_or_name))
        _tag(out, group, 4)


def _reference(key: Key | None) -> bytes:
    """A Reference message (an entity's key); app and path empty for no key."""
    out = bytearray()
    _bytes(out, 13, _text(key.app) if key else b"")
    path = bytearray()
    if key is not None:
        _path(path, key, 1, 2)
    _bytes(out, 14, bytes(path))
    if key is not None and key.namespace:
        _bytes(out, 20, _text(key.namespace))
    if key is not None and key.database:
        _bytes(out, 23, _text(key.database))
    return bytes(out)


def _reference_value(out: bytearray, key: Key) -> None:
    """A key as a value: the ReferenceValue group (12)."""
    _tag(out, 12, 3)
    _bytes(out, 13, _text(key.app))
    _path(out, key, 14, 15)
    if key.namespace:
        _bytes(out, 20, _text(key.namespace))
    if key.database:
        _bytes(out, 23, _text(key.database))
    _tag(out, 12, 4)


def _user(out: bytearray, user: User) -> None:
    _tag(out, 8, 3)
    _bytes(out, 9, _text(user.email))
    _bytes(out, 10, _text(user.auth_domain))
    if user.nickname is not None:
        _bytes(out, 11, _text(user.nickname))
    _int(out, 18, 0)  # gaiaid: required by the schema, unused since 2012
    for field, text in (
        (19, user.user_id),
        (21, user.federated_identity),
        (22, user.federated_provider),
    ):
        if text is not None:
            _bytes(out, field, _text(text))
    _tag(out, 8, 4)


def _micros(when: datetime.datetime) -> int:
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(f"a datetime must carry its UTC offset (tz-aware), not {when!r}")
    delta = when - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


# long: one branch per value type, each a few lines; split, the order of the checks (bool
# before int, Entity and Mapping after the scalars) would be harder to see.
def _value(value: Any, name: str, depth: int) -> tuple[int, bytes]:
    """(meaning, PropertyValue bytes) of one value."""
    out = bytearray()
    meaning = 0
    if value is None:
        pass
    elif isinstance(value, bool):
        _int(out, 2, int(value))
    elif isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError(f"property {name!r}: {value} does not fit in 64 bits")
        _int(out, 1, value)
    elif isinstance(value, float):
        _double(out, 4, value)
    elif isinstance(value, str):
        _bytes(out, 3, _text(value))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        meaning = BLOB
        _bytes(out, 3, bytes(value))
    elif isinstance(value, datetime.datetime):
        meaning = GD_WHEN
        _int(out, 1, _micros(value))
    elif isinstance(value, GeoPoint):
        meaning = GEORSS_POINT
        _tag(out, 5, 3)
        _double(out, 6, float(value.latitude))
        _double(out, 7, float(value.longitude))
        _tag(out, 5, 4)
    elif isinstance(value, Key):
        _reference_value(out, value)
    elif isinstance(value, User):
        _user(out, value)
    elif isinstance(value, RawValue):
        inner, data = _value(value.value, name, depth)
        if inner == EMPTY_LIST:
            raise TypeError(f"property {name!r}: a RawValue cannot hold a list")
        return int(value.meaning), data
    elif isinstance(value, Mapping):
        meaning = ENTITY_PROTO
        key = value.key if isinstance(value, Entity) else None
        _bytes(out, 3, _entity(value, key, depth + 1))
    else:
        raise TypeError(f"property {name!r}: cannot store a {type(value).__name__}")
    return meaning, bytes(out)


def _property(out: bytearray, name: str, value: Any, depth: int) -> None:
    """One property: a list as one repeated property a value (or EMPTY_LIST)."""
    if isinstance(value, list):
        if not value:
            prop = bytearray()
            _int(prop, 1, EMPTY_LIST)
            _bytes(prop, 3, _text(name))
            _int(prop, 4, 0)
            _bytes(prop, 5, b"")
            _bytes(out, 14, bytes(prop))
        for item in value:
            if isinstance(item, list):
                raise TypeError(f"property {name!r}: an array cannot hold an array")
            _one(out, name, item, True, depth)
    else:
        _one(out, name, value, False, depth)


def _one(out: bytearray, name: str, value: Any, multiple: bool, depth: int) -> None:
    meaning, data = _value(value, name, depth)
    prop = bytearray()
    if meaning:
        _int(prop, 1, meaning)
    _bytes(prop, 3, _text(name))
    _int(prop, 4, int(multiple))
    _bytes(prop, 5, data)
    _bytes(out, 15, bytes(prop))


def _entity(properties: Mapping[str, Any], key: Key | None, depth: int) -> bytes:
    if depth > 64:
        raise ValueError("entities nest more than 64 deep")
    out = bytearray()
    _bytes(out, 13, _reference(key))
    for name, value in properties.items():
        if not isinstance(name, str):
            raise TypeError(f"a property name is a str, not {name!r}")
        _property(out, name, value, depth)
    group = bytearray()
    if key is not None and key.path:
        root = Key(key.path[:1], app=key.app)
        _path(group, root, 1, 2)
    _bytes(out, 16, bytes(group))
    return bytes(out)


def encode_entity(entity: Mapping[str, Any], key: Key | None = None) -> bytes:
    """One entity as a serialized EntityProto, as an export's output file holds it.

    Arguments
      entity: an Entity, or any mapping of property name to value (see docs/datastore.md
        for the types: None, bool, int, float, str, bytes, aware datetime, GeoPoint, Key,
        User, RawValue, mappings and lists).
      key: the entity's key; by default ``entity.key``.

    Returns
      The record, bytes.

    Raises
      TypeError: a value of a type an export cannot hold, or no key.
      ValueError: an int out of 64 bits, a naive datetime, a key with an empty path.
    """
    if key is None:
        key = entity.key if isinstance(entity, Entity) else None
    if not isinstance(key, Key):
        raise TypeError("an entity needs a Key: give key= or an Entity with one")
    if not key.path:
        raise ValueError("an entity's key needs a path")
    if not isinstance(entity, Mapping):
        raise TypeError(f"an entity is a mapping, not {type(entity).__name__}")
    return _entity(entity, key, 0)
