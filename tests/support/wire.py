"""Varints and length-prefixed strings, as LevelDB's, RocksDB's and protocol buffers' encoders
write them, built by hand for the tests' expected bytes."""

from __future__ import annotations


def varint(n: int) -> bytes:
    """n (>= 0) in base 128, low group first, the high bit set on all but the last byte."""
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def varstring(data: bytes) -> bytes:
    """data after its length as a varint."""
    return varint(len(data)) + data
