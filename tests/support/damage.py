"""Damage done to clean logs, and hand-made streams of physical records (structural
damage with valid checksums)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from support import model
from support.records import B, H, payload, physical_headers

DAMAGE_KINDS = ("flip", "flip_header", "zero", "overwrite", "rewrite_header", "truncate", "insert")
IN_PLACE = DAMAGE_KINDS[:5]
TYPE_VALUES = st.one_of(st.integers(0, 4), st.sampled_from([0, 5, 6, 8, 9, 10, 127, 128, 255]))


def _pos(draw: Any, data: bytes, headers: list[int], end: int) -> int:
    """A position, often near block boundaries or physical headers."""
    choices = [st.integers(0, max(0, end - 1))]
    if headers:
        choices.append(
            st.sampled_from(headers).flatmap(lambda h: st.integers(max(0, h - 2), h + 8))
        )
    choices.append(
        st.integers(0, max(0, end // B)).flatmap(
            lambda k: st.integers(max(0, k * B - 8), k * B + 8)
        )
    )
    return min(draw(st.one_of(choices)), max(0, end - 1))


def damage(
    draw: Any, data: bytes, kinds: tuple[str, ...] = DAMAGE_KINDS, max_ops: int = 3
) -> tuple[bytes, list[tuple[str, int, int]], list[tuple[int, int | None]]]:
    """Damages a clean log: 0..max_ops in-place damages (at least one damage in all),
    then possibly one truncation or insertion. Returns (damaged bytes, what was done as
    (kind, position, size), touched byte ranges [lo, hi) of the original, hi None meaning
    "to the end": everything after shifted or vanished)."""
    buf = bytearray(data)
    headers = physical_headers(data)
    done: list[tuple[str, int, int]] = []
    touched: list[tuple[int, int | None]] = []
    in_place = [k for k in kinds if k in IN_PLACE]
    last = [k for k in kinds if k not in IN_PLACE]
    n_ops = draw(st.integers(0 if last else 1, max_ops if in_place else 0))
    for _ in range(n_ops if buf else 0):
        kind = draw(st.sampled_from(in_place))
        if kind in ("flip_header", "rewrite_header") and not headers:
            kind = "flip"
        n = len(buf)
        if kind in ("flip", "flip_header"):
            if kind == "flip":
                p = _pos(draw, data, headers, n)
            else:
                p = min(draw(st.sampled_from(headers)) + draw(st.integers(0, H - 1)), n - 1)
            buf[p] ^= draw(st.sampled_from([1, 2, 4, 0x80, 0xFF]) | st.integers(1, 255))
            done.append((kind, p, 1))
            touched.append((p, p + 1))
        elif kind in ("zero", "overwrite"):
            p = _pos(draw, data, headers, n)
            k = min(draw(st.integers(1, 40) | st.integers(1, B + 100)), n - p)
            buf[p : p + k] = bytes(k) if kind == "zero" else payload(k, draw(st.integers(0, 99)))
            done.append((kind, p, k))
            touched.append((p, p + k))
        else:  # rewrite_header: another type and/or length, with a valid checksum
            h = draw(st.sampled_from(headers))
            old_len = buf[h + 4] | buf[h + 5] << 8
            rtype = draw(TYPE_VALUES)
            length = draw(st.just(old_len) | st.integers(0, old_len + 20) | st.integers(0, 0xFFFF))
            body = bytes([rtype]) + bytes(buf[h + H : h + H + length])
            crc = model.mask_crc(model.crc32c(body))
            buf[h : h + H] = (
                crc.to_bytes(4, "little") + length.to_bytes(2, "little") + bytes([rtype])
            )
            done.append((kind, h, rtype << 16 | length))
            touched.append((h, h + H))
    if last and (not done or draw(st.booleans())):
        kind = draw(st.sampled_from(last))
        n = len(buf)
        if kind == "truncate":
            t = min(
                draw(
                    st.integers(0, n)
                    | st.sampled_from([*headers, n])
                    | st.integers(0, n // B).map(lambda k: k * B)
                ),
                n,
            )
            del buf[t:]
            done.append((kind, t, n - t))
            touched.append((t, None))
        else:  # insert zeros or junk
            p = draw(st.integers(0, n) | st.sampled_from([*headers, n]))
            k = draw(st.integers(1, 100))
            junk = bytes(k) if draw(st.booleans()) else payload(k, draw(st.integers(0, 99)))
            buf[p:p] = junk
            done.append((kind, p, k))
            touched.append((p, None))
    return bytes(buf), done, touched


_soup_op = st.one_of(
    # a physical record: type, payload length, checksum right or wrong
    st.tuples(
        st.just("rec"),
        st.sampled_from([1, 2, 2, 3, 4]) | TYPE_VALUES,
        st.integers(0, 40) | st.integers(0, 2000),
        st.integers(0, 9),
    ),
    # a record of this type sized so that `left` bytes stay in its block (0..9): fragment
    # chains over whole blocks, with anything after them
    *[
        st.tuples(
            st.just("fill"),
            st.sampled_from([1, 2, 3, 3, 3, 4, 0, 7]),
            st.integers(0, 9) | st.just(0),
            st.just(0),
        )
    ]
    * 2,
    st.tuples(st.just("zeros"), st.integers(1, 40), st.just(0), st.just(0)),
    st.tuples(st.just("junk"), st.integers(1, 40), st.integers(0, 99), st.just(0)),
)

#: Lists of soup operations; build the bytes with soup_bytes().
soup_ops = st.lists(_soup_op, min_size=1, max_size=12)


def soup_bytes(ops: list[tuple[str, int, int, int]]) -> bytes:
    out = bytearray()
    for i, (kind, a, b, c) in enumerate(ops):
        if kind == "rec":
            rec = bytearray(model.encode_physical(a, payload(b, i)))
            if c == 0:  # a wrong checksum
                rec[0] ^= 0x5A
            out += rec
        elif kind == "fill":
            space = B - len(out) % B
            if space < H + b:
                out += bytes(space)
                space = B
            out += model.encode_physical(a, payload(space - H - b, i))
        elif kind == "zeros":
            out += bytes(a)
        else:
            out += payload(a, b)
    return bytes(out)
