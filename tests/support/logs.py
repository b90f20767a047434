"""Logs as Hypothesis draws them: clean, damaged, and ranges to read of them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from support.damage import damage, soup_bytes, soup_ops
from support.records import B, H, encode_sizes, make_records, physical_headers, size_lists


class Log(bytes):
    """A log's bytes with a short repr telling how they were made (for failure reports)."""

    how: str = ""

    def __repr__(self) -> str:
        return f"<log of {len(self)} bytes: {self.how}>"


def as_log(data: bytes, how: str) -> Log:
    log = Log(data)
    log.how = how
    return log


@st.composite
def clean_logs(draw: Any, max_total: int = 4 * B) -> Any:
    sizes = draw(size_lists(max_total=max_total))
    salt = draw(st.integers(0, 9))
    records = make_records(sizes, salt)
    return as_log(encode_sizes(sizes, salt), f"records {sizes} salt {salt}"), records


@st.composite
def damaged_logs(draw: Any) -> Log:
    """A clean log with flips, zeroed ranges, rewritten headers, truncation or inserted
    junk, or a hand-made stream of physical records of any type, good or bad checksum."""
    if draw(st.integers(0, 2)) == 0:
        ops = draw(soup_ops)
        return as_log(soup_bytes(ops), f"soup {ops}")
    clean, _ = draw(clean_logs())
    damaged, done, _ = damage(draw, clean)
    return as_log(damaged, f"{clean.how}, damage {done}")


def interesting_offsets(data: bytes) -> list[int]:
    """Block boundaries +-1 and header positions +-1 (those of a clean log's layout)."""
    n = len(data)
    out = set()
    for k in range(n // B + 2):
        out.update((k * B - 1, k * B, k * B + 1, k * B - H, k * B - H + 1))
    for h in physical_headers(data):
        out.update((h - 1, h, h + 1))
    return sorted(x for x in out if 0 <= x <= n + 1)


def offsets_strategy(data: bytes) -> Any:
    return st.integers(0, len(data) + 2) | st.sampled_from(interesting_offsets(data))


def draw_range(draw: Any, data: bytes) -> tuple:
    a = draw(offsets_strategy(data))
    if draw(st.integers(0, 3)) == 0:
        return a, None
    b = draw(offsets_strategy(data) | st.integers(a, a + 2 * B))
    return (a, b) if a <= b else (b, a)
