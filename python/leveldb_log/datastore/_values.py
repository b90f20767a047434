"""The values an export holds: Entity, Key, GeoPoint, User and RawValue.

The C decoder (``leveldb_log._datastore``) builds these classes; ``_setup`` below hands them
to it once, at import.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from leveldb_log import _datastore

__all__ = ["Entity", "GeoPoint", "Key", "RawValue", "User"]

#: The largest and smallest ids a key and an int value can hold (int64).
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

PathElement = tuple[str, "int | str | None"]


class Key:
    """The key of an entity, or a reference stored as a value.

    Arguments
      path: the (kind, id_or_name) pairs from the root: an id is an int, a name a str;
        None as the last one's id_or_name makes an incomplete key.
      project: the project; ``app`` defaults to it.
      namespace: "" for the default namespace.
      database: "" for the default database.
      app: the app id as stored, with its partition prefix (``s~``, ``e~``, ``dev~``...).

    Attributes
      app, project (the app without its prefix), namespace, database, path, and the last
      element's kind and id_or_name. Keys compare equal when app, namespace, database and
      path do, and hash accordingly.
    """

    __slots__ = ("_app", "_database", "_namespace", "_path")

    def __init__(
        self,
        path: Iterable[PathElement],
        *,
        project: str = "",
        namespace: str = "",
        database: str = "",
        app: str | None = None,
    ) -> None:
        path = tuple(_element(e) for e in path)
        for i, (_, id_or_name) in enumerate(path):
            if id_or_name is None and i != len(path) - 1:
                raise ValueError("only the last path element may lack an id or name")
        app = project if app is None else app
        for name, text in (
            ("project", project),
            ("app", app),
            ("namespace", namespace),
            ("database", database),
        ):
            if not isinstance(text, str):
                raise TypeError(f"{name} must be a str, not {type(text).__name__}")
        self._app, self._namespace, self._path, self._database = app, namespace, path, database

    @property
    def app(self) -> str:
        """The app id as stored: the project with its partition prefix (``s~p``)."""
        return self._app

    @property
    def project(self) -> str:
        """The project: the app id without its partition prefix (``s~``, ``dev~``...)."""
        return self._app.split("~", 1)[1] if "~" in self._app else self._app

    @property
    def namespace(self) -> str:
        """The namespace, "" for the default one."""
        return self._namespace

    @property
    def database(self) -> str:
        """The database id, "" for the default database."""
        return self._database

    @property
    def path(self) -> tuple[PathElement, ...]:
        """The (kind, id_or_name) pairs from the root to this entity."""
        return self._path

    @property
    def kind(self) -> str | None:
        """The last element's kind (None for an empty path)."""
        return self._path[-1][0] if self._path else None

    @property
    def id_or_name(self) -> int | str | None:
        """The last element's id (int) or name (str); None if incomplete or empty."""
        return self._path[-1][1] if self._path else None

    def _fields(self) -> tuple[str, str, str, tuple[PathElement, ...]]:
        return (self._app, self._namespace, self._database, self._path)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Key):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        options = [f"app={self._app!r}"]
        if self._namespace:
            options.append(f"namespace={self._namespace!r}")
        if self._database:
            options.append(f"database={self._database!r}")
        return f"Key({list(self._path)!r}, {', '.join(options)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_make_key, (self._app, self._namespace, self._path, self._database))


def _element(e: Any) -> PathElement:
    """A path element checked: a (kind, id_or_name) pair."""
    if not isinstance(e, tuple) or len(e) != 2:
        raise TypeError(f"a path element is a (kind, id_or_name) tuple, not {e!r}")
    kind, id_or_name = e
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"a kind is a non-empty str, not {kind!r}")
    if isinstance(id_or_name, bool) or not isinstance(id_or_name, (int, str, type(None))):
        raise TypeError(f"an id is an int and a name a str, not {id_or_name!r}")
    if isinstance(id_or_name, int) and not INT64_MIN <= id_or_name <= INT64_MAX:
        raise ValueError(f"an id must fit in 64 bits, not {id_or_name}")
    return (kind, id_or_name)


def _make_key(app: str, namespace: str, path: tuple[PathElement, ...], database: str) -> Key:
    """A Key from decoded parts, unchecked (the C decoder's factory)."""
    key = object.__new__(Key)
    key._app, key._namespace, key._path, key._database = app, namespace, path, database
    return key


class GeoPoint(NamedTuple):
    """A point on the globe, in degrees (meaning GEORSS_POINT)."""

    latitude: float
    longitude: float


class User(NamedTuple):
    """An App Engine user (a UserValue): email, auth domain and the optional fields."""

    email: str
    auth_domain: str
    nickname: str | None = None
    user_id: str | None = None
    federated_identity: str | None = None
    federated_provider: str | None = None


class RawValue(NamedTuple):
    """A value whose meaning this reader does not know, or that does not fit its meaning
    (a timestamp out of datetime's range, TEXT that is not UTF-8): the meaning, and the
    value as its wire type gives it."""

    meaning: int
    value: Any


class Entity(dict[str, Any]):
    """An entity: a dict of property name to value, with its ``key`` (a Key).

    Properties are items, so a property named ``key``, ``items`` or ``get`` is
    ``e["key"]``; ``e.key`` is always the entity's key. Two entities are equal when their
    keys and properties are; an entity equals a plain dict of the same properties.

    Arguments
      properties: a mapping or iterable of (name, value) pairs.
      key: the entity's Key; None for an embedded entity without one.
    """

    __slots__ = ("key",)
    key: Key | None

    def __init__(
        self,
        properties: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
        /,
        *,
        key: Key | None = None,
    ) -> None:
        if key is not None and not isinstance(key, Key):
            raise TypeError(f"key must be a Key or None, not {type(key).__name__}")
        super().__init__(properties)
        self.key = key

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Entity) and self.key != other.key:
            return False
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None

    def __repr__(self) -> str:
        return f"Entity({dict.__repr__(self)}, key={self.key!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (dict(self), self.key))


def _rebuild(properties: dict[str, Any], key: Key | None) -> Entity:
    return Entity(properties, key=key)


_datastore._setup(Entity, Key, GeoPoint, RawValue, User, datetime.timezone.utc)
