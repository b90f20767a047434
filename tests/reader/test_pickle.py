"""Pickling and forking (docs/api.md, "Pickling and fork"): a Reader over a path pickles as
what reopens it where it stood, with its options and counters, and resumes exactly there;
every other Reader and every Writer refuses with TypeError; readers keep working in a forked
child, even when a thread of the parent held the reader's lock at the fork.

The differential property at the end pickles a reader after any record or report of a
damaged log, in any recovery mode and range, and checks that the copy continues exactly as
the original does.
"""

from __future__ import annotations

import copy
import io
import mmap
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from leveldb_log import BLOCK_SIZE, Corruption, CorruptionError, Reader, Writer, crc32c
from support import model
from support.damage import damage, soup_bytes, soup_ops
from support.records import make_records, size_lists
from support.warned import READS_DAMAGE

B = BLOCK_SIZE

pytestmark = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")

#: Record sizes that put records in one block, across two, across several, empty, and
#: ending right at or near block ends.
SIZES = [10, 40_000, 50, 0, 20, 70_000, 5, 32_761 - 7 - 20, 3, 100_000, 1, 7, 8]
RECORDS = [bytes([i % 251]) * n for i, n in enumerate(SIZES)]


class Recorder:
    """An on_corruption callback that keeps what it is given, and pickles with it.

    ``events`` is shared with the test, which appends the records it reads, so the list
    is the reader's whole observable history in order. ``hook`` runs after each report
    (it is not pickled).
    """

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.hook: Any = None

    def __call__(self, c: Corruption) -> None:
        self.events.append(("corruption", c.offset, c.size, c.reason))
        if self.hook is not None:
            self.hook()

    def __getstate__(self) -> dict[str, Any]:
        return {"events": list(self.events), "hook": None}


def write_log(path: pathlib.Path, records: list[bytes] = RECORDS) -> list[int]:
    with Writer(path) as w:
        return [w.write(r) for r in records]


def clone(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj))


def rest(reader: Reader) -> list[tuple[int | None, bytes]]:
    """The records a reader yields from here on, with their offsets."""
    return [(reader.last_record_offset, rec) for rec in reader]


@pytest.fixture
def log(tmp_path: pathlib.Path) -> tuple[pathlib.Path, list[int]]:
    path = tmp_path / "sizes.log"
    return path, write_log(path)


# ---------------------------------------------------------------------------
# resuming where the reader stood
# ---------------------------------------------------------------------------


def test_a_reader_pickled_before_reading_yields_the_whole_log(log: Any) -> None:
    path, offsets = log
    copied = clone(Reader(path))
    assert copied.last_record_offset is None and copied.dropped_bytes == 0
    assert rest(copied) == list(zip(offsets, RECORDS, strict=True))


@pytest.mark.parametrize("done", range(1, len(RECORDS)))
def test_a_reader_pickled_mid_way_resumes_with_the_next_record(log: Any, done: int) -> None:
    path, offsets = log
    original = Reader(path)
    for _ in range(done):
        next(original)
    copied = clone(original)
    assert copied.last_record_offset == original.last_record_offset == offsets[done - 1]
    expected = list(zip(offsets[done:], RECORDS[done:], strict=True))
    assert rest(copied) == expected
    assert rest(original) == expected


def test_a_copy_reports_the_position_it_resumes_from(log: Any) -> None:
    path, offsets = log
    original = Reader(path)
    for done in range(1, 4):
        next(original)
        assert clone(original).position == original.position == offsets[done]


def test_a_copy_of_a_copy_resumes_where_the_original_stood(log: Any) -> None:
    path, offsets = log
    original = Reader(path)
    next(original)
    twice = clone(clone(original))  # e.g. a reader handed on by a worker, unread
    assert rest(twice) == list(zip(offsets[1:], RECORDS[1:], strict=True))


@pytest.mark.parametrize("start", [1, 5, 17, B - 1, B + 1, 2 * B + 100])
def test_a_range_reader_pickled_before_reading_keeps_its_start(log: Any, start: int) -> None:
    path, offsets = log
    expected = [(o, r) for o, r in zip(offsets, RECORDS, strict=True) if o >= start]
    assert rest(Reader(path, start=start)) == expected
    copied = clone(Reader(path, start=start))
    assert copied.position == start
    assert rest(copied) == expected


def test_every_pickle_protocol_round_trips(log: Any) -> None:
    path, offsets = log
    original = Reader(path)
    next(original)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        copied = pickle.loads(pickle.dumps(original, protocol=protocol))
        assert rest(copied) == list(zip(offsets[1:], RECORDS[1:], strict=True)), protocol


def test_copy_and_deepcopy_give_independent_readers_at_the_same_position(log: Any) -> None:
    path, offsets = log
    original = Reader(path)
    next(original)
    shallow, deep = copy.copy(original), copy.deepcopy(original)
    assert shallow is not original and deep is not original
    expected = list(zip(offsets[1:], RECORDS[1:], strict=True))
    assert rest(shallow) == expected
    assert rest(deep) == expected
    assert rest(original) == expected  # the copies did not move the original


def test_a_reader_pickled_at_the_end_follows_records_appended_later(log: Any) -> None:
    path, _ = log
    original = Reader(path)
    assert len(list(original)) == len(RECORDS)
    copied = clone(original)
    assert list(copied) == []
    with Writer(path, "a") as w:
        more = [w.write(b"after %d" % i * 9000) for i in range(5)]
    expected = [(off, b"after %d" % i * 9000) for i, off in enumerate(more)]
    assert rest(copied) == expected
    assert rest(original) == expected


# Where the writer of record 9 (100000 bytes, four fragments) died: inside its header,
# inside its FIRST fragment, at the block boundary after it, inside its LAST fragment.
TORN_CUTS = {"header": 3, "first fragment": 100, "block boundary": None, "last fragment": -50}


@pytest.mark.parametrize("where", TORN_CUTS)
def test_a_reader_pickled_at_a_torn_tail_reads_the_record_once_completed(
    tmp_path: pathlib.Path, where: str
) -> None:
    data, offsets = model.encode(RECORDS)
    shift = TORN_CUTS[where]
    if shift is None:
        cut = (offsets[9] // B + 1) * B
    else:
        cut = (offsets[9] if shift > 0 else offsets[10]) + shift
    path = tmp_path / "torn.log"
    path.write_bytes(data[:cut])
    original = Reader(path)
    assert rest(original) == list(zip(offsets[:9], RECORDS[:9], strict=True))
    assert original.dropped_bytes == 0
    assert original.position == offsets[9]  # the incomplete record is not consumed
    copied = clone(original)
    with open(path, "ab") as f:  # the writer comes back and finishes the record
        f.write(data[cut:])
    expected = list(zip(offsets[9:], RECORDS[9:], strict=True))
    assert rest(copied) == expected
    assert rest(original) == expected


def test_a_range_reader_pickled_mid_way_stops_at_its_end(log: Any) -> None:
    path, offsets = log
    start, end = offsets[2] - 1, offsets[9] + 1  # cuts inside records, not on blocks
    original = Reader(path, start=start, end=end)
    assert next(original) == RECORDS[2]
    copied = clone(original)
    assert copied.end == end
    expected = list(zip(offsets[3:10], RECORDS[3:10], strict=True))
    assert rest(copied) == expected
    assert rest(original) == expected


def test_options_survive_pickling(log: Any) -> None:
    path, offsets = log
    recorder = Recorder()
    original = Reader(
        path,
        recovery="point_in_time",
        verify_checksums=False,
        end=offsets[5],
        on_corruption=recorder,
    )
    next(original)
    copied, copied_recorder = clone((original, recorder))
    assert copied.recovery == "point_in_time"
    assert copied.verify_checksums is False
    assert copied.end == offsets[5]
    assert copied.closed is False
    assert isinstance(copied_recorder, Recorder) and copied_recorder is not recorder


def test_verify_checksums_false_survives_pickling(tmp_path: pathlib.Path) -> None:
    data, offsets = model.encode([b"a" * 100, b"b" * 100, b"c" * 100])
    bad = bytearray(data)
    bad[offsets[2] + 7] ^= 0xFF  # wrong checksum, right length
    path = tmp_path / "bad_crc.log"
    path.write_bytes(bad)
    original = Reader(path, verify_checksums=False)
    next(original)
    copied = clone(original)
    assert list(copied) == [b"b" * 100, bytes(bad[offsets[2] + 7 : offsets[2] + 107])]


def corrupt_log(tmp_path: pathlib.Path) -> tuple[pathlib.Path, list[int]]:
    """RECORDS with a flipped payload byte in record 2 and in record 9 (multi-block)."""
    data, offsets = model.encode(RECORDS)
    bad = bytearray(data)
    bad[offsets[2] + 10] ^= 1
    bad[offsets[9] + B] ^= 1
    path = tmp_path / "corrupt.log"
    path.write_bytes(bad)
    return path, offsets


def test_a_reader_pickled_after_a_corruption_keeps_dropped_bytes_and_reports(
    tmp_path: pathlib.Path,
) -> None:
    path, offsets = corrupt_log(tmp_path)
    whole = Recorder()
    expected = rest(Reader(path, on_corruption=whole))
    first_after = next(i for i, (off, _) in enumerate(expected) if off > offsets[2])
    recorder = Recorder()
    original = Reader(path, on_corruption=recorder)
    for _ in range(first_after + 1):
        next(original)
    assert recorder.events and original.dropped_bytes > 0
    copied, copied_recorder = clone((original, recorder))
    assert copied.dropped_bytes == original.dropped_bytes
    assert copied.last_record_offset == original.last_record_offset
    assert rest(copied) == expected[first_after + 1 :]
    assert copied_recorder.events == whole.events  # each later report once, none again
    assert copied.dropped_bytes == sum(size for _, _, size, _ in whole.events)


@READS_DAMAGE
@pytest.mark.parametrize(
    ("recovery", "error"),
    [
        ("skip", None),
        ("tolerate_tail", CorruptionError),
        ("point_in_time", None),
        ("absolute", CorruptionError),
    ],
)
def test_the_recovery_mode_applies_after_unpickling(
    tmp_path: pathlib.Path, recovery: str, error: type[Exception] | None
) -> None:
    path, offsets = corrupt_log(tmp_path)
    original = Reader(path, recovery=recovery)
    next(original)  # record 0, before the damage
    copied = clone(original)
    got: list[bytes] = []
    if error is None:
        got = list(copied)
    else:
        with pytest.raises(error) as info:
            for rec in copied:
                got.append(rec)
        assert info.value.offset == offsets[2]
    assert got[0] == RECORDS[1]
    if recovery == "point_in_time":
        assert got == [RECORDS[1]]
    if recovery == "skip":
        assert got[-1] == RECORDS[-1]


@READS_DAMAGE
@pytest.mark.parametrize("recovery", ["tolerate_tail", "point_in_time", "absolute"])
def test_a_reader_finished_by_a_corruption_stays_finished_when_pickled(
    tmp_path: pathlib.Path, recovery: str
) -> None:
    path, _ = corrupt_log(tmp_path)
    original = Reader(path, recovery=recovery)
    try:
        list(original)
    except CorruptionError:
        pass
    copied = clone(original)
    assert copied.dropped_bytes == original.dropped_bytes > 0
    assert list(copied) == []
    assert list(copied) == []


def test_a_pickled_reader_resumes_in_another_process(log: Any) -> None:
    path, offsets = log
    original = Reader(path, end=offsets[8])
    for _ in range(3):
        next(original)
    program = (
        "import pickle, sys\n"
        "r = pickle.load(sys.stdin.buffer)\n"
        "out = [r.last_record_offset, r.dropped_bytes]\n"
        "out += [(r.last_record_offset, rec) for rec in r]\n"
        "pickle.dump(out, sys.stdout.buffer)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        input=pickle.dumps(original),
        capture_output=True,
        check=True,
        timeout=60,
    )
    last, dropped, *records = pickle.loads(result.stdout)
    assert (last, dropped) == (offsets[2], 0)
    assert records == list(zip(offsets[3:8], RECORDS[3:8], strict=True))


def test_unpickling_a_reader_whose_file_is_gone_raises_file_not_found(log: Any) -> None:
    path, _ = log
    blob = pickle.dumps(Reader(path))
    path.unlink()
    with pytest.raises(FileNotFoundError):
        pickle.loads(blob)


# ---------------------------------------------------------------------------
# what refuses pickling
# ---------------------------------------------------------------------------

SOURCES = {
    "bytes": lambda path, f: path.read_bytes(),
    "bytearray": lambda path, f: bytearray(path.read_bytes()),
    "memoryview": lambda path, f: memoryview(path.read_bytes()),
    "mmap": lambda path, f: mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ),
    "BytesIO": lambda path, f: io.BytesIO(path.read_bytes()),
    "open file": lambda path, f: f,
}


@pytest.mark.parametrize("kind", SOURCES)
def test_a_reader_over_a_buffer_or_file_object_refuses_pickling(log: Any, kind: str) -> None:
    path, _ = log
    with open(path, "rb") as f:
        source = SOURCES[kind](path, f)
        reader = Reader(source)
        assert next(reader) == RECORDS[0]
        with pytest.raises(TypeError, match="cannot pickle"):
            pickle.dumps(reader)
        with pytest.raises(TypeError, match="cannot pickle"):
            copy.copy(reader)
        assert next(reader) == RECORDS[1]  # the failed attempt left it usable
        reader.close()


def test_a_closed_reader_refuses_pickling(log: Any) -> None:
    path, _ = log
    reader = Reader(path)
    reader.close()
    with pytest.raises(TypeError, match="closed"):
        pickle.dumps(reader)


def test_a_writer_over_a_path_refuses_pickling(tmp_path: pathlib.Path) -> None:
    with Writer(tmp_path / "w.log") as w:
        w.write(b"x")
        with pytest.raises(TypeError):
            pickle.dumps(w)
        with pytest.raises(TypeError):
            copy.copy(w)
        w.write(b"y")
    assert list(Reader(tmp_path / "w.log")) == [b"x", b"y"]


@pytest.mark.parametrize("kind", ["BytesIO", "open file"])
def test_a_writer_over_a_file_object_refuses_pickling(tmp_path: pathlib.Path, kind: str) -> None:
    target = io.BytesIO() if kind == "BytesIO" else open(tmp_path / "f.log", "wb")
    with Writer(target, closefd=True) as w:
        w.write(b"x")
        with pytest.raises(TypeError):
            pickle.dumps(w)


# ---------------------------------------------------------------------------
# fork
# ---------------------------------------------------------------------------

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")


def in_child(work: Any, meanwhile: Any = None, timeout: int = 30) -> tuple[Any, Any]:
    """Runs work() in a forked child, and meanwhile() in the parent; returns both results.

    The child sends its result (or its error) through a pipe; an alarm kills a child that
    deadlocks, so the test fails instead of hanging."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 0
        try:
            signal.alarm(timeout)
            os.close(read_fd)
            try:
                payload = pickle.dumps(("ok", work()))
            except BaseException as e:  # everything goes to the parent
                payload = pickle.dumps(("error", repr(e)))
            with os.fdopen(write_fd, "wb") as out:
                out.write(payload)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write_fd)
    try:
        parent_result = meanwhile() if meanwhile is not None else None
    finally:
        with os.fdopen(read_fd, "rb") as inp:
            payload = inp.read()
        _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status:#x}"
    kind, child_result = pickle.loads(payload)
    assert kind == "ok", child_result
    return child_result, parent_result


@needs_fork
def test_a_child_and_its_parent_both_read_a_reader_made_before_fork(log: Any) -> None:
    path, offsets = log
    shared = Reader(path)
    for _ in range(2):
        next(shared)
    # Both go on from record 2 at the same time, through the same descriptor.
    child_got, parent_got = in_child(lambda: rest(shared), lambda: rest(shared))
    expected = list(zip(offsets[2:], RECORDS[2:], strict=True))
    assert child_got == expected
    assert parent_got == expected


class StallingFile(io.RawIOBase):
    """A seekable binary file whose first readinto() on the thread that called stall()
    waits for go_on: the Reader reading it holds its lock all that time."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)
        self._stalling_thread: int | None = None
        self.stalled = threading.Event()
        self.go_on = threading.Event()

    def stall(self) -> None:
        self._stalling_thread = threading.get_ident()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._data.seek(offset, whence)

    def tell(self) -> int:
        return self._data.tell()

    def readinto(self, buffer: Any) -> int:
        if threading.get_ident() == self._stalling_thread:
            self._stalling_thread = None
            self.stalled.set()
            self.go_on.wait(30)
        return self._data.readinto(buffer)


@needs_fork
def test_a_reader_locked_by_a_parent_thread_at_fork_works_in_the_child(log: Any) -> None:
    # on_corruption cannot hold the lock (the reader lets go of it around the callback),
    # a file object's readinto() can: next() holds the lock while it fills a block.
    path, offsets = log
    source = StallingFile(path.read_bytes())
    shared = Reader(source)
    thread_got: list[Any] = []

    def stalled_reading() -> None:
        source.stall()
        thread_got.extend(rest(shared))

    thread = threading.Thread(target=stalled_reading)
    thread.start()
    try:
        assert source.stalled.wait(30)  # the thread is inside next(), holding the lock

        def child() -> Any:
            got = rest(shared)
            shared.close()  # takes the lock once more
            return got, shared.closed

        (child_got, child_closed), _ = in_child(child)
    finally:
        source.go_on.set()
        thread.join(30)
    expected = list(zip(offsets, RECORDS, strict=True))
    assert child_got == expected and child_closed
    assert thread_got == expected  # the parent's reader is untouched by the child


# ---------------------------------------------------------------------------
# property: a pickled copy continues exactly as the original
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tmp_path_factory.mktemp("pickle_property") / "log"


def history(path: pathlib.Path, checkpoint: int, in_callbacks: bool, **kw: Any) -> Any:
    """Reads path, pickling the reader right after its `checkpoint`-th event (a record
    returned or, if in_callbacks, a report made), or once finished if it has fewer events.

    Returns what the original and the copy each observed: their histories (the copy's
    Recorder carries the original's up to the checkpoint, then what the copy read), how
    reading ended (a CorruptionError raised, or None), dropped bytes, last record offset.
    A copy of a finished reader ends without an error (the original raised it already).
    """
    recorder = Recorder()
    reader = Reader(path, on_corruption=recorder, **kw)
    blobs: list[bytes] = []

    def maybe_checkpoint() -> None:
        if len(recorder.events) == checkpoint and not blobs:
            blobs.append(pickle.dumps((reader, recorder)))

    if in_callbacks:
        recorder.hook = maybe_checkpoint
    maybe_checkpoint()
    error = drain(reader, recorder, maybe_checkpoint)
    original = (recorder.events, error, reader.dropped_bytes, reader.last_record_offset)
    if not blobs:  # finished before the checkpoint: what raised will not raise again
        blobs.append(pickle.dumps((reader, recorder)))
        original = (recorder.events, None, reader.dropped_bytes, reader.last_record_offset)
    copied, copied_recorder = pickle.loads(blobs[0])
    copied_error = drain(copied, copied_recorder, lambda: None)
    return original, (
        copied_recorder.events,
        copied_error,
        copied.dropped_bytes,
        copied.last_record_offset,
    )


def drain(reader: Reader, recorder: Recorder, after_record: Any) -> Any:
    """Reads to the end, appending records to the history; the error that ended it."""
    try:
        for rec in reader:
            recorder.events.append(("record", reader.last_record_offset, rec))
            after_record()
    except CorruptionError as e:
        return (type(e).__name__, e.offset, e.size, e.reason)
    return None


class LogBytes(bytes):
    """A log's bytes, shown by size and checksum (a failing example stays readable)."""

    def __repr__(self) -> str:
        return f"<log of {len(self)} bytes, crc32c {crc32c(self):#010x}>"


@st.composite
def damaged_logs(draw: Any) -> LogBytes:
    """A log written from random record sizes, then damaged; or a soup of physical records."""
    if draw(st.booleans()):
        return LogBytes(soup_bytes(draw(soup_ops)))
    clean, _ = model.encode(make_records(draw(size_lists(min_size=1))))
    return LogBytes(damage(draw, clean)[0])


@READS_DAMAGE
@given(
    damaged_logs(),
    st.sampled_from(model.RECOVERY_MODES),
    st.booleans(),
    st.integers(0, 12),
    st.booleans(),
    st.data(),
)
def test_a_pickled_copy_continues_exactly_as_the_original(
    scratch: pathlib.Path,
    log_bytes: bytes,
    recovery: str,
    verify_checksums: bool,
    checkpoint: int,
    cut: bool,
    data: st.DataObject,
) -> None:
    scratch.write_bytes(log_bytes)
    kw: dict[str, Any] = {"recovery": recovery, "verify_checksums": verify_checksums}
    if cut:
        start = data.draw(st.integers(0, len(log_bytes)), label="start")
        kw["start"] = start
        kw["end"] = data.draw(st.integers(start, len(log_bytes) + 1), label="end")
    # Between events only: inside on_corruption a reader refuses to pickle (what
    # follows the report is still queued), see the test below.
    original, copied = history(scratch, checkpoint, in_callbacks=False, **kw)
    assert copied == original


@READS_DAMAGE
def test_pickling_inside_on_corruption_is_refused_and_reading_goes_on(
    tmp_path: pathlib.Path,
) -> None:
    # FIRST without its end, then two FULL records: the report of the dropped FIRST and
    # the FULL that revealed it come out of one step of the reader.
    data = (
        model.encode_physical(model.FIRST, b"x" * 100)
        + model.encode_physical(model.FULL, b"y" * 10)
        + model.encode_physical(model.FULL, b"zzz")
    )
    path = tmp_path / "log"
    path.write_bytes(data)
    refusals: list[str] = []

    def on_corruption(c: Any) -> None:
        with pytest.raises(TypeError, match="on_corruption") as info:
            pickle.dumps(reader)
        refusals.append(str(info.value))

    reader = Reader(path, on_corruption=on_corruption)
    assert list(reader) == [b"y" * 10, b"zzz"]
    assert len(refusals) == 1
    # Between records it pickles again, and the copy goes on from there.
    reader = Reader(path)
    assert next(reader) == b"y" * 10
    assert list(pickle.loads(pickle.dumps(reader))) == [b"zzz"]
