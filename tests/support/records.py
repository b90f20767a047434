"""Records, their sizes and the model's layout of them: what the property tests write."""

from __future__ import annotations

import dataclasses
import functools
import random
from typing import Any

from hypothesis import strategies as st

from support import model

B = model.BLOCK_SIZE
H = model.HEADER_SIZE

EDGE_SIZES = [
    0,
    1,
    2,
    6,
    7,
    8,
    100,
    *range(32754, 32769),
    2 * 32761,
    2 * 32761 + 1,
    65529,
    65536,
    3 * 32761,
    98304,
    100_000,
]

#: User record sizes: empty, tiny, every size around one block's payload room
#: (32761) and a block (32768), and records spanning one to several blocks.
record_sizes = st.one_of(
    st.integers(0, 80), st.sampled_from(EDGE_SIZES), st.integers(0, 3 * B + 100)
)


def size_lists(min_size: int = 0, max_size: int = 8, max_total: int = 4 * B) -> Any:
    """Lists of record sizes whose total stays under max_total (fast to encode)."""

    def cap(sizes: list[int]) -> list[int]:
        out, total = [], 0
        for s in sizes:
            s = s if total + s <= max_total else s % (max_total - total + 1)
            out.append(s)
            total += s
        return out

    return st.lists(record_sizes, min_size=min_size, max_size=max_size).map(cap)


def payload(n: int, seed: int = 0) -> bytes:
    """n deterministic pseudo-random bytes."""
    return random.Random(seed * 1_000_003 + n).randbytes(n)


def make_records(sizes: list[int], salt: int = 0) -> list[bytes]:
    return [payload(n, salt * 1000 + i) for i, n in enumerate(sizes)]


@functools.lru_cache(maxsize=64)
def _encode_cached(sizes: tuple[int, ...], salt: int) -> bytes:
    return model.encode(make_records(list(sizes), salt))[0]


def encode_sizes(sizes: list[int], salt: int = 0) -> bytes:
    """model.encode(make_records(sizes, salt)) (cached: shrinking repeats sizes a lot)."""
    return _encode_cached(tuple(sizes), salt)


@dataclasses.dataclass
class Layout:
    data: bytes
    offsets: list[int]  # first header of each record
    ends: list[int]  # one past its last byte
    tells: list[int]  # log length after each record (== ends)


def layout(records: list[bytes], start: int = 0) -> Layout:
    """The model's encoding of records appended at `start`, record by record."""
    chunks, offsets, ends = [], [], []
    pos = start
    for rec in records:
        chunk, (off,) = model.encode([rec], start=pos)
        chunks.append(chunk)
        offsets.append(off)
        pos += len(chunk)
        ends.append(pos)
    return Layout(b"".join(chunks), offsets, ends, list(ends))


def filler_sizes(length: int, target_in_block: int) -> list[int]:
    """Sizes of one or two records that, appended to a log of `length` bytes, make it end
    where offset % B == target_in_block (0 or 7..B-1)."""
    s = length if B - length % B >= H else length + B - length % B
    e = s - s % B + target_in_block
    while e < s + H:
        e += B
    lo, hi = 0, e - s
    while lo < hi:  # the end grows with the size, by 1 or by 8 (a new fragment)
        mid = (lo + hi) // 2
        if record_end(length, mid) < e:
            lo = mid + 1
        else:
            hi = mid
    if record_end(length, lo) == e:
        return [lo]
    # e % B == 7 after a fragmented record: no empty LAST exists, so fill up the
    # block, then write a record from the block's start
    first = filler_sizes(length, 0)
    return [*first, target_in_block - H]


def record_end(start: int, n: int) -> int:
    """Where a record of n bytes written at `start` ends (the writer's arithmetic)."""
    pos, left, first = start, n, True
    while first or left > 0:
        space = B - pos % B
        if space < H:
            pos += space
            space = B
        k = min(left, space - H)
        pos += H + k
        left -= k
        first = False
    return pos


def physical_headers(data: bytes) -> list[int]:
    """Offsets of the physical headers of a clean log."""
    out, p = [], 0
    while p + H <= len(data):
        if B - p % B < H:
            p += B - p % B
            continue
        out.append(p)
        p += H + (data[p + 4] | data[p + 5] << 8)
    return out


def records_of(sizes: list[int], tag: bytes = b"") -> list[bytes]:
    """Distinct, recognisable payloads of the given sizes."""
    out = []
    for i, n in enumerate(sizes):
        head = tag + b"%05d:" % i
        body = bytes((i * 7 + j) % 251 for j in range(min(n, 251)))
        data = (head + body * (n // max(len(body), 1) + 1))[:n] if n else b""
        out.append(data)
    return out


MIXED_SIZES = [0, 1, 10, 100, 1000, 31000, 7, 40000, 5, 100000, 2, 32761, 32754, 300, 0]
