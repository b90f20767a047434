"""What a Writer hands the kernel for a path: its buffer, and large records straight from
the caller's memory.

A record too large for the Writer's buffer goes to the file in writev calls, each fragment's
payload from where the caller keeps it. Where the kernel would copy a payload slowly (on AMD
Zen 3, about 20 times slower when its place in the file lies 1 to 31 bytes past it modulo
4096), the call ends before it, or the payload is first copied through a bounce buffer; a
buffer whose bytes would be copied slowly is moved 64 bytes on before it is written. The
file must be byte for byte what the model encodes, at any alignment of the caller's memory
and whichever copies count as slow (a test-only window: 31 is the real one, 4095 makes
every one slow but those at distance 0, 0 none).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import leveldb_log
import pytest
from hypothesis import given
from hypothesis import strategies as st
from leveldb_log import _testing
from support import model
from support.profiles import scaled
from support.records import payload

B = leveldb_log.BLOCK_SIZE
FRAG = B - leveldb_log.HEADER_SIZE
BIG = leveldb_log._core.DEFAULT_BUFFER_SIZE // 2  # from this size on: writev
WRITEV = sys.platform != "win32"
SLOW_COPY_MAX = 31  # the real window (csrc/py/llpy_io.h)


@contextlib.contextmanager
def slow_copies(window: int) -> Iterator[None]:
    """Writers made inside count payloads 1 to `window` bytes before their place as slow."""
    old = leveldb_log._core._slow_copy_window(window)
    try:
        yield
    finally:
        leveldb_log._core._slow_copy_window(old)


def write(path: Path, records: list[memoryview], window: int) -> int:
    """Writes the records with a Writer made under `window`; the payloads it bounced."""
    with slow_copies(window):
        w = leveldb_log.Writer(path)
    with w:
        for r in records:
            w.write(r)
        bounced: int = _testing.writer_bounced(w)
    return bounced


def views(sizes: list[int], shift: int) -> list[memoryview]:
    """Records as views into one buffer, each starting `shift` bytes after the last ends."""
    buf = bytearray()
    spans = []
    for i, n in enumerate(sizes):
        buf += bytes(shift)
        spans.append((len(buf), n))
        buf += payload(n, i)
    whole = memoryview(bytes(buf))
    return [whole[at : at + n] for at, n in spans]


sizes = st.lists(
    st.one_of(st.integers(0, 300), st.integers(BIG, 3 * B), st.integers(8 * B, 40 * B)),
    min_size=1,
    max_size=6,
)


@scaled(0.3)
@given(
    sizes=sizes,
    shift=st.integers(0, 4096),
    window=st.sampled_from([0, SLOW_COPY_MAX, 4095]) | st.integers(0, 4095),
)
def test_files_equal_the_model_whatever_counts_as_slow(tmp_path_factory, sizes, shift, window):
    path = tmp_path_factory.mktemp("writev") / "log"
    records = views(sizes, shift)
    write(path, records, window)
    assert path.read_bytes() == model.encode([bytes(r) for r in records])[0]


@pytest.mark.skipif(not WRITEV, reason="writev exists on POSIX systems")
@pytest.mark.parametrize("window", [0, SLOW_COPY_MAX, 4095])
def test_payloads_the_kernel_would_copy_slowly_are_bounced(tmp_path, window):
    """Ten records of 40 blocks: with every payload slow, each fragment is written alone
    from the bounce buffer; with none, none is; with the real window, a few at most."""
    records = views([40 * FRAG - 5] * 10, 3)
    path = tmp_path / "log"
    bounced = write(path, records, window)
    assert path.read_bytes() == model.encode([bytes(r) for r in records])[0]
    fragments = 10 * 40
    if window == 0:
        assert bounced == 0
    elif window == 4095:
        assert bounced >= fragments * 9 // 10  # (all but those at distance 0)
    else:
        assert bounced <= fragments // 4


@pytest.mark.parametrize("window", [0, 4095])
def test_buffers_the_kernel_would_copy_slowly_are_moved_first(tmp_path, window):
    """5000 records of 100 B fill the 64 KiB buffer about eight times: with every copy
    slow, each flush moves the buffer first; with none, none does.

    A copy at distance 0 is fast under any window, and where the buffer lies is the
    allocator's: so the records are appended to a log of 1007 bytes, which makes the
    flushes start at offsets that differ modulo 4096 (seen as the file grows), and the
    buffer can be at distance 0 from one of them at most."""
    path = tmp_path / "log"
    with leveldb_log.Writer(path) as w:
        w.write(bytes(1000))
    records = views([100] * 5000, 0)
    with slow_copies(window):
        w = leveldb_log.Writer(path, "a")
    starts = []
    with w:
        for r in records:
            size = path.stat().st_size
            w.write(r)
            if path.stat().st_size != size:
                starts.append(size)
        bounced: int = _testing.writer_bounced(w)
    assert path.read_bytes() == model.encode([bytes(1000)] + [bytes(r) for r in records])[0]
    assert len({at % 4096 for at in starts}) == len(starts) >= 8
    assert (bounced >= len(starts) - 1) if window else (bounced == 0)
