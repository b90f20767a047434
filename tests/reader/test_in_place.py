"""Long records read from files in place.

Reading a path, the extension reads the blocks that carry on with a fragmented record
straight into the bytes object it will return (one preadv: each block's header aside, its
payload where the record goes on), guessing from the last such record how many blocks are
MIDDLE fragments. Whatever the guess and whatever the blocks really hold (the record ends
sooner or later, damage, zero fill, a torn tail), the reader must make exactly what the
model makes of the same bytes. These tests steer the guess with records of repeated, growing
and shrinking sizes, and by reading a log of one record of a chosen size first (a reader's
first guess is the last record any reader assembled).
"""

from __future__ import annotations

import contextlib
import pathlib
import sys
from collections.abc import Iterator
from typing import Any

import leveldb_log
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import model
from support.damage import damage
from support.profiles import scaled
from support.reading import MODES, assert_reader_contract, assert_same, c_read, model_read
from support.records import B, H, payload
from support.threads import run_threads
from support.warned import READS_DAMAGE

FRAG = B - H  # payload of a block-filling fragment
IN_PLACE = sys.platform.startswith(("linux", "freebsd"))  # preadv
LLPY_SLOW_COPY_MAX = 31  # the window of slow copies (csrc/py/llpy_io.h)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tmp_path_factory.mktemp("in_place")


long_sizes = st.one_of(
    st.integers(FRAG + 1, 6 * B),
    st.integers(1, 8).flatmap(lambda k: st.integers(k * FRAG - 3, k * FRAG + 3)),
)
any_sizes = st.one_of(long_sizes, st.integers(0, 300), st.integers(300, FRAG + 10))


@st.composite
def size_runs(draw: Any) -> list[int]:
    """Sizes in runs: the same long size repeated (the guess holds), then others."""
    sizes: list[int] = []
    while len(sizes) < 12 and sum(sizes) < 24 * B:
        n = draw(long_sizes if draw(st.booleans()) else any_sizes)
        sizes += [n] * draw(st.integers(1, 4))
        if draw(st.integers(0, 3)) == 0:
            break
    return sizes


def prime(workdir: pathlib.Path, size: int) -> list[bytes]:
    """Makes `size` the length of the last record any reader assembled, by reading a log of
    one record payload(size, 7); returns what that read gave."""
    path = workdir / "prime.log"
    with leveldb_log.Writer(path) as w:
        w.write(payload(size, 7))
    with leveldb_log.Reader(path) as r:
        return list(r)


def write_file(workdir: pathlib.Path, data: bytes) -> pathlib.Path:
    path = workdir / "log"
    path.write_bytes(data)
    return path


@contextlib.contextmanager
def slow_copies(window: int) -> Iterator[None]:
    """Payloads whose place lies 1 to `window` bytes past their source modulo the page
    count as copies the kernel makes slowly: they come through the block buffer (31 is
    the real window, 4095 makes every one but those at distance 0, 0 none)."""
    old = leveldb_log._core._slow_copy_window(window)
    try:
        yield
    finally:
        leveldb_log._core._slow_copy_window(old)


windows = st.sampled_from([LLPY_SLOW_COPY_MAX, 4095]) | st.integers(0, 4095)


@scaled(0.5)
@given(
    sizes=size_runs(),
    guess=st.sampled_from([2 * B, 5 * B, 20 * B]) | long_sizes,
    salt=st.integers(0, 9),
)
def test_clean_logs_of_long_records_read_whole(workdir, sizes, guess, salt):
    records = [payload(n, salt * 100 + i) for i, n in enumerate(sizes)]
    data = model.encode(records)[0]
    path = write_file(workdir, data)
    assert prime(workdir, guess) == [payload(guess, 7)]
    with leveldb_log.Reader(path) as r:
        got = list(r)
        assert r.dropped_bytes == 0
    assert [len(x) for x in got] == sizes
    assert got == records


@READS_DAMAGE
@scaled(0.6)
@given(
    sizes=size_runs(),
    guess=st.sampled_from([2 * B, 5 * B, 20 * B]) | long_sizes,
    recovery=st.sampled_from(MODES),
    verify=st.booleans(),
    window=windows,
    data=st.data(),
)
def test_damaged_logs_of_long_records_match_model(
    workdir, sizes, guess, recovery, verify, window, data
):
    clean, _ = model.encode([payload(n, i) for i, n in enumerate(sizes)])
    damaged, done, _ = damage(data.draw, clean)
    path = write_file(workdir, damaged)
    kw: dict[str, Any] = dict(recovery=recovery, verify_checksums=verify)
    if data.draw(st.integers(0, 3)) == 0:
        kw["start"] = data.draw(st.integers(0, len(damaged)))
    assert prime(workdir, guess) == [payload(guess, 7)]
    with slow_copies(window):
        got = c_read(str(path), **kw)
        assert_reader_contract(got)
    assert_same(got, model_read(damaged, **kw), (done, kw, window))


@scaled(0.3)
@given(sizes=size_runs(), data=st.data())
def test_a_log_cut_inside_a_long_record_and_grown_back(workdir, sizes, data):
    """Following a log: the reader stops inside a long record (blocks read in place then
    cut short), the rest is appended, and it goes on from there."""
    records = [payload(n, i) for i, n in enumerate(sizes)]
    full, _ = model.encode(records)
    cut = data.draw(st.integers(0, len(full)))
    path = write_file(workdir, full[:cut])
    got = []
    with leveldb_log.Reader(path, recovery="skip") as r:
        got += list(r)
        with open(path, "ab") as f:
            f.write(full[cut:])
        got += list(r)
        assert r.dropped_bytes == 0
    assert got == records


@pytest.mark.skipif(not IN_PLACE, reason="payloads are read in place where preadv exists")
def test_long_records_are_read_in_place_and_only_a_run_end_is_copied(workdir):
    """The path is taken: of 20 records of 9 blocks each, all blocks after a record's first
    that do not end it are read in place once the guess has been learnt."""
    size = 9 * FRAG - 100  # 8 MIDDLE-or-FIRST-filled blocks and a LAST
    records = [payload(size, i) for i in range(20)]
    path = write_file(workdir, model.encode(records)[0])
    assert prime(workdir, size) == [payload(size, 7)]
    with leveldb_log.Reader(path) as r:
        assert list(r) == records
        # Per record: its FIRST block is shared with the previous record's LAST, and
        # its LAST block is read whole; the 7 or 8 MIDDLE blocks between come in place.
        assert r._blocks_in_place >= 20 * 7
    with leveldb_log.Reader(path.read_bytes()) as r:  # a buffer: nothing to read
        assert list(r) == records
        assert r._blocks_in_place == 0


@pytest.mark.skipif(not IN_PLACE, reason="payloads are read in place where preadv exists")
@pytest.mark.parametrize("window", [0, LLPY_SLOW_COPY_MAX, 4095])
def test_payloads_the_kernel_would_copy_slowly_come_through_the_block_buffer(workdir, window):
    """A payload the kernel would copy slowly into its place (on AMD Zen 3: 1 to 31 bytes
    past its source modulo 4096, about 20 times slower) ends a read in place before it, or,
    first, is read through the block buffer and copied over. Every record stays exact."""
    size = 9 * FRAG - 100
    records = [payload(size, i) for i in range(20)]
    path = write_file(workdir, model.encode(records)[0])
    assert prime(workdir, size) == [payload(size, 7)]
    with slow_copies(window), leveldb_log.Reader(path) as r:
        assert list(r) == records
        assert r.dropped_bytes == 0
        assert r._blocks_in_place >= 20 * 7
        if window == 0:
            assert r._blocks_bounced == 0
        elif window == 4095:  # each alone, through the block buffer, but those at
            # distance 0 (never slow: 1 in 4096 payloads)
            assert r._blocks_bounced >= r._blocks_in_place * 9 // 10
        else:  # the real window: a few at most
            assert r._blocks_bounced <= r._blocks_in_place // 4


def test_the_slow_copy_window_is_checked():
    with pytest.raises(ValueError, match="max must be in"):
        leveldb_log._core._slow_copy_window(4096)
    with pytest.raises(ValueError, match="max must be in"):
        leveldb_log._core._slow_copy_window(-1)
    with pytest.raises(TypeError):
        leveldb_log._core._slow_copy_window("31")
    assert leveldb_log._core._slow_copy_window(LLPY_SLOW_COPY_MAX) == LLPY_SLOW_COPY_MAX


@pytest.mark.parametrize("guess", [2 * FRAG, 6 * FRAG, 40 * FRAG])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_records_ending_exactly_at_a_block_end_while_the_guess_says_more(workdir, k, guess):
    """Records of exactly k blocks each: every block holds one whole-block fragment (FIRST,
    MIDDLE or LAST), so only the type tells a block that goes on with a record from one that
    ends it or starts the next. A longer guess reads past each record's end in place."""
    records = [payload(k * FRAG, i) for i in range(6)] + [b"tail"]
    data = model.encode(records)[0]
    assert len(data) == 6 * k * B + H + 4
    path = write_file(workdir, data)
    assert prime(workdir, guess) == [payload(guess, 7)]
    with leveldb_log.Reader(path) as r:
        assert list(r) == records
        assert r.dropped_bytes == 0
        if IN_PLACE and k == 3:  # (other k: each record's blocks come in a chunk read)
            assert r._blocks_in_place > 0


@pytest.mark.parametrize("source", ["path", "buffer"])
def test_records_longer_and_shorter_than_expected(workdir, source):
    """After two records of about one length the next is built in a bytes object of that
    length: here it outgrows it (and goes on in the scratch buffer), falls short of it (and
    is cut), or matches; a run of sizes that disagree is built in the scratch buffer."""
    sizes = [5 * B, 5 * B, 9 * B + 1, 5 * B, 5 * B, 2 * B + 3, 5 * B, 5 * B - 5, 5 * B]
    sizes += [3 * B, 8 * B, 2 * B, 12 * B, 40_000, 40_000, 40_001, 100, 40_000]
    records = [payload(n, i) for i, n in enumerate(sizes)]
    data = model.encode(records)[0]
    src = str(write_file(workdir, data)) if source == "path" else data
    for guess in (B, 5 * B, 12 * B):
        assert prime(workdir, guess) == [payload(guess, 7)]
        assert prime(workdir, guess) == [payload(guess, 7)]  # two agreeing records: an expectation
        with leveldb_log.Reader(src) as r:
            got = list(r)
        assert [len(x) for x in got] == sizes
        assert got == records


def test_reader_threads_read_long_records_in_place_together(workdir):
    """Several readers of the same file in threads: the GIL is let go for checksums and
    reads and taken back to grow a record's bytes object."""
    sizes = [3 * B, 10 * B, 40_000, 10 * B, 7 * FRAG, 100, 2 * B] * 3
    records = [payload(n, i) for i, n in enumerate(sizes)]
    path = workdir / "threads.log"
    path.write_bytes(model.encode(records)[0])

    def read(i: int) -> list[list[bytes]]:
        out = []
        for _ in range(5):
            with leveldb_log.Reader(path) as r:
                out.append(list(r))
        return out

    for out in run_threads(read, 4):
        assert out == [records] * 5
