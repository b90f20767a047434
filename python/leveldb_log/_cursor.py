"""The fields of a payload, read and written: varints, fixed integers, length-prefixed strings.

The LevelDB, RocksDB and Pebble decoders (leveldb.py, rocksdb.py, pebble.py) read their
payloads through one `Cursor`, so that every malformed payload raises the same error: a
`CorruptionError` whose ``offset`` is the byte offset *within the payload* where decoding
failed, ``size`` the bytes from there to the payload's end, ``reason`` what is wrong, and
whose ``str()`` is ``"<what>: <reason> at byte <offset>"``. Integers are little-endian; a
varint holds 7 bits per byte, low bits first, the high bit meaning "more bytes follow".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from leveldb_log._errors import CorruptionError

if TYPE_CHECKING:
    from typing_extensions import Buffer

T = TypeVar("T")

#: A batch's header, in all three engines: fixed64 sequence, fixed32 count.
WRITE_BATCH_HEADER_SIZE = 12
#: Largest sequence number: it shares a fixed64 with the value type byte.
MAX_SEQUENCE = (1 << 56) - 1
U32 = (1 << 32) - 1
U64 = (1 << 64) - 1


class Cursor:
    """Reads fields from a payload left to right; every error names the byte offset."""

    def __init__(self, what: str, data: Buffer) -> None:
        """A cursor at the start of ``data``; ``what`` names the payload in messages."""
        self.what = what
        self.data = bytes(data)
        self.pos = 0

    def at_end(self) -> bool:
        """True once every byte is read."""
        return self.pos >= len(self.data)

    def error(self, message: str, at: int | None = None) -> CorruptionError:
        """A CorruptionError at ``at`` (default: the current position) in the payload."""
        where = self.pos if at is None else at
        return CorruptionError(
            where,
            len(self.data) - where,
            message,
            message=f"{self.what}: {message} at byte {where}",
        )

    def fixed(self, size: int, name: str) -> int:
        """A little-endian unsigned integer of ``size`` bytes."""
        if self.pos + size > len(self.data):
            raise self.error(f"truncated {name}")
        value = int.from_bytes(self.data[self.pos : self.pos + size], "little")
        self.pos += size
        return value

    def byte(self) -> int:
        """One byte (a tag or a kind)."""
        if self.pos >= len(self.data):
            raise self.error("truncated tag")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self, bits: int, name: str = "") -> int:
        """A varint32 or varint64: at most ceil(bits / 7) bytes, value below 2**bits."""
        start = self.pos
        what = f"{name} (varint{bits})" if name else f"varint{bits}"
        max_bytes = (bits + 6) // 7
        result = 0
        for index in range(max_bytes):
            if self.pos >= len(self.data):
                raise self.error(f"truncated {what}", start)
            b = self.data[self.pos]
            self.pos += 1
            result |= (b & 0x7F) << (7 * index)
            if b < 0x80:
                if result >> bits:
                    raise self.error(f"{what} overflows {bits} bits", start)
                return result
        raise self.error(f"{what} longer than {max_bytes} bytes", start)

    def string(self, name: str) -> bytes:
        """A varstring: a varint32 length (``name`` length, in errors) and that many bytes."""
        start = self.pos
        length = self.varint(32, f"{name} length")
        if self.pos + length > len(self.data):
            left = len(self.data) - self.pos
            raise self.error(f"{name} of {length} bytes runs past the end ({left} left)", start)
        value = self.data[self.pos : self.pos + length]
        self.pos += length
        return value

    def batch_header(self) -> tuple[int, int]:
        """A batch's 12-byte header, the same in the three engines: (sequence, count)."""
        if len(self.data) < WRITE_BATCH_HEADER_SIZE:
            raise self.error(
                f"{len(self.data)} bytes is shorter than the {WRITE_BATCH_HEADER_SIZE}-byte "
                "header (sequence, count)",
                0,
            )
        return self.fixed(8, "sequence"), self.fixed(4, "count")

    def inner(self, name: str) -> Cursor:
        """A cursor over the next length-prefixed value, reporting offsets in this payload."""
        raw = self.string(name)
        inner = Cursor(self.what, self.data[: self.pos])
        inner.pos = self.pos - len(raw)
        return inner


def put_varint(value: int, bits: int, name: str) -> bytes:
    """``value`` as a varint of at most ``bits`` bits; ValueError if it does not fit."""
    if not isinstance(value, int) or value < 0 or value >> bits:
        raise ValueError(f"{name} {value!r} does not fit in an unsigned {bits}-bit varint")
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def as_bytes(data: object, name: str) -> bytes:
    """``data`` as bytes if it is bytes-like, else TypeError naming the field."""
    try:
        with memoryview(data) as view:  # type: ignore[arg-type]  # checked here
            return view.tobytes()
    except TypeError:
        raise TypeError(f"{name} must be bytes-like, not {type(data).__name__}") from None


def put_string(data: object, name: str) -> bytes:
    """A varstring: ``data``'s varint32 length, then its bytes."""
    raw = as_bytes(data, name)
    return put_varint(len(raw), 32, f"{name} length") + raw


class Fields:
    """The fields of a tagged record (a VersionEdit) as its tags are decoded, by name.

    A scalar field set twice keeps the last value, as LevelDB and RocksDB do; a list field
    (``add``) keeps every value, in order.
    """

    def __init__(self) -> None:
        """No field set yet."""
        self.scalars: dict[str, Any] = {}
        self.lists: dict[str, list[Any]] = {}

    def set(self, name: str, value: object) -> None:
        """Set the scalar field ``name``."""
        self.scalars[name] = value

    def add(self, name: str, value: object) -> None:
        """Append ``value`` to the list field ``name``."""
        self.lists.setdefault(name, []).append(value)

    def build(self, cls: Callable[..., T]) -> T:
        """``cls`` made of the fields decoded (lists as tuples; the rest keep defaults)."""
        return cls(**self.scalars, **{name: tuple(v) for name, v in self.lists.items()})


#: What a tag's handler does: read the tag's fields at the cursor into Fields.
Handler: TypeAlias = Callable[[Cursor, Fields], None]


def decode_tags(cur: Cursor, handlers: Mapping[int, Handler], ignorable: int = 0) -> Fields:
    """Every tag of the payload and its fields, each read by the tag's handler.

    A tag with no handler is skipped when it has a bit of ``ignorable`` (RocksDB's 0x2000:
    a varint32 length and that many bytes, kept in the list field ``ignored`` as ``(tag,
    value)``); else it is a CorruptionError, "unknown tag N", at the tag's offset.
    """
    fields = Fields()
    while not cur.at_end():
        start = cur.pos
        try:
            tag = cur.varint(32, "tag")
        except CorruptionError:
            raise cur.error("invalid tag", start) from None
        handler = handlers.get(tag)
        if handler is not None:
            handler(cur, fields)
        elif tag & ignorable:
            fields.add("ignored", (tag, cur.string(f"tag {tag} value")))
        else:
            raise cur.error(f"unknown tag {tag}", start)
    return fields
