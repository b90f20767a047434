"""Hypothesis profiles and the helpers shared by the property tests.

Profiles (environment variable HYPOTHESIS_PROFILE): ``default`` (about 100
examples), ``ci`` (400, prints reproduction blobs) and ``expensive`` (2000).
Without the variable, every test takes ``default``, except the differential tests
(``differential()``), which take ``ci`` when CI is set.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import random
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import leveldb_log
import model

settings.register_profile("default", max_examples=100, deadline=None)
settings.register_profile(
    "ci",
    max_examples=400,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "expensive",
    max_examples=2000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# A profile named in HYPOTHESIS_PROFILE applies to every test. Otherwise every test takes
# "default", but the differential tests (the C core against the model, decorated with
# differential()) take "ci" in CI (which sets CI=true): they are where more examples find most.
NAMED_PROFILE = os.environ.get("HYPOTHESIS_PROFILE")
settings.load_profile(NAMED_PROFILE or "default")
DIFFERENTIAL_PROFILE = NAMED_PROFILE or ("ci" if os.environ.get("CI") else "default")

B = model.BLOCK_SIZE
H = model.HEADER_SIZE
MODES = model.RECOVERY_MODES


def _share(base: settings, fraction: float) -> settings:
    """base with a fraction of its examples (at least 10)."""
    return settings(base, max_examples=max(10, int(base.max_examples * fraction)))


def scaled(fraction: float) -> settings:
    """Settings with a fraction of the active profile's examples (for costly tests)."""
    return _share(settings.default, fraction)


def differential(fraction: float = 1.0) -> settings:
    """Settings of a differential test: the differential profile (above), or a fraction of
    its examples for a costly test."""
    return _share(settings.get_profile(DIFFERENTIAL_PROFILE), fraction)


# ---------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# damage
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# hand-made physical record streams (structural damage with valid checksums)
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# reading: the C reader and the model, in comparable form
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Outcome:
    records: list[bytes]
    offsets: list[int | None]
    corruptions: list[tuple[int, int, str]]
    error: str | None  # None, "corruption" or "truncated"
    dropped_bytes: int


def c_read(source: Any, **kw: Any) -> Outcome:
    """Reads with leveldb_log.Reader, collecting everything observable."""
    seen: list[Any] = []
    records: list[bytes] = []
    offsets: list[int | None] = []
    error = None
    with leveldb_log.Reader(source, on_corruption=seen.append, **kw) as r:
        it = iter(r)
        while True:
            try:
                rec = next(it)
            except StopIteration:
                break
            except leveldb_log.CorruptionError as e:
                assert isinstance(e, ValueError) and isinstance(e, leveldb_log.LogError)
                error = (
                    "truncated" if isinstance(e, leveldb_log.TruncatedRecordError) else "corruption"
                )
                # the exception carries the last report
                assert seen and (e.offset, e.size, e.reason) == tuple(seen[-1])
                break
            assert isinstance(rec, bytes)
            records.append(rec)
            offsets.append(r.last_record_offset)
        dropped = r.dropped_bytes
        assert list(r) == []  # finished for good after an error or the end
    for c in seen:
        assert isinstance(c, leveldb_log.Corruption)
    return Outcome(records, offsets, [tuple(c) for c in seen], error, dropped)


_real_read_events = model.read_events
_events_cache: dict = {}


def _cached_read_events(data: bytes, verify_checksums: bool = True) -> list:
    key = (bytes(data), bool(verify_checksums))
    events = _events_cache.get(key)
    if events is None:
        if len(_events_cache) > 8:
            _events_cache.clear()
        events = _events_cache[key] = _real_read_events(data, verify_checksums)
    return events


def model_read(data: bytes, **kw: Any) -> Outcome:
    """model.read(data, **kw) (its event list cached: many ranges of one log are read)."""
    with mock.patch.object(model, "read_events", _cached_read_events):
        res = model.read(data, **kw)
    return Outcome(
        [r.data for r in res.records],
        [r.offset for r in res.records],
        [(c.offset, c.size, c.reason) for c in res.corruptions],
        res.error,
        res.dropped_bytes,
    )


def assert_same(got: Outcome, expected: Outcome, context: Any = "") -> None:
    assert got.offsets == expected.offsets, context
    assert got.records == expected.records, context
    assert got.corruptions == expected.corruptions, context
    assert got.error == expected.error, context
    assert got.dropped_bytes == expected.dropped_bytes, context


# ---------------------------------------------------------------------------
# threads
# ---------------------------------------------------------------------------


@contextmanager
def fast_switching() -> Iterator[None]:
    """Threads switch every 10 microseconds, so that they really interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def run_threads(target: Callable[[int], Any], n: int, *, fast: bool = False) -> list[Any]:
    """Runs target(tid) in n threads started together (switching fast if asked) and returns
    their results by tid; re-raises the first exception."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def body(tid: int) -> None:
        try:
            barrier.wait()
            results[tid] = target(tid)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    with fast_switching() if fast else contextlib.nullcontext():
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return results


# ---------------------------------------------------------------------------
# C unit tests (tests/c)
# ---------------------------------------------------------------------------

C_TESTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "c")
C_SHARED_SOURCES = ("harness.c", "ref_crc32c.c")


def c_test_sources(program: str) -> list[str]:
    """The tests/c sources of one C test program (the caller adds csrc/core's).

    ``test_crc32c`` is test_crc32c.c with the shared harness and reference CRC-32C;
    ``test_core`` is every other .c file of tests/c: main.c, the harness and one file per
    suite (tests/c/harness.h says how a suite is added).
    """
    if program == "test_crc32c":
        names = ["test_crc32c.c", *C_SHARED_SOURCES]
    elif program == "test_core":
        names = sorted(n for n in os.listdir(C_TESTS_DIR) if n.endswith(".c"))
        names.remove("test_crc32c.c")
    else:
        raise ValueError(f"no C test program {program!r}")
    return [os.path.join(C_TESTS_DIR, name) for name in names]


# ---------------------------------------------------------------------------
# records and files of the Writer and Reader tests (test_writer.py, test_reader.py)
# ---------------------------------------------------------------------------


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


def write_raw(path: Any, data: bytes) -> None:
    """Writes data as the whole content of the file at path."""
    with open(path, "wb") as f:
        f.write(data)


def read_file(path: Any) -> bytes:
    """The whole content of the file at path."""
    with open(path, "rb") as f:
        return f.read()


def run_isolated(module: str, body: str, *args: Any, timeout: int = 20) -> None:
    """Runs <module>.<body>(*args) in a child interpreter (module: a test file of tests/).

    The thread tests share one native object between threads; a crash or a
    deadlock there must fail the test, not kill or hang the whole run.
    """
    code = (
        "import faulthandler, sys\n"
        "faulthandler.enable()\n"
        f"faulthandler.dump_traceback_later({timeout - 5}, exit=True)\n"
        f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
        f"import {module}\n"
        f"{module}.{body}(*{args!r})\n"
        "print('CHILD-OK')\n"
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:  # pragma: no cover - reported
        pytest.fail(f"{body}{args} hung (deadlock?): {e.stderr!s:.3000}")
    assert proc.returncode == 0 and "CHILD-OK" in proc.stdout, (
        f"{body}{args} failed in the child: returncode {proc.returncode} "
        f"(negative: killed by that signal; 1 with 'Timeout': deadlock)\n"
        f"{proc.stderr[-4000:]}"
    )


def run_cli(
    *args: str | os.PathLike[str], input: bytes = b"", cwd: os.PathLike[str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``python -m leveldb_log ARGS`` with ``input`` on standard input; never a traceback."""
    result = subprocess.run(
        [sys.executable, "-m", "leveldb_log", *map(str, args)],
        input=input,
        capture_output=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    assert b"Traceback" not in result.stderr, result.stderr.decode()
    return result
