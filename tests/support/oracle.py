"""The damage oracle: which records a damage cannot have touched, so that any reader must
still return them."""

from __future__ import annotations

from support.records import B, Layout


def touched_blocks(touched: list[tuple[int, int | None]]) -> tuple[set, int | None]:
    """Blocks a damage touched: a set, and the first block of an open-ended range."""
    blocks, from_block = set(), None
    for lo, hi in touched:
        if hi is None:
            fb = lo // B
            from_block = fb if from_block is None else min(from_block, fb)
        else:
            blocks.update(range(lo // B, (hi - 1) // B + 1))
    return blocks, from_block


def untouched_records(lay: Layout, touched: list[tuple[int, int | None]]) -> list[int]:
    """Indices of the records none of whose blocks the damage touched."""
    blocks, from_block = touched_blocks(touched)
    out = []
    for i, (off, end) in enumerate(zip(lay.offsets, lay.ends, strict=True)):
        span = range(off // B, (end - 1) // B + 1)
        if any(b in blocks for b in span):
            continue
        if from_block is not None and span[-1] >= from_block:
            continue
        out.append(i)
    return out
