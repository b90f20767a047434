"""Durable writes (docs/api.md, "Durability"): write(..., sync=True) and write_many(...,
sync=True) with group commit, sync(), and the sync policy of a Writer (sync=,
bytes_per_sync=, preallocate=, the directory of a new log).

The group-commit protocol is driven deterministically: the leader of a flush calls the
writer's ``before_sync`` hook (leveldb_log._testing) without the writer's lock, where a test
holds it until the threads it wants are queued (``_testing.sync_waiters`` counts them). Nothing here
depends on timing: waits poll for a state and only give up after a generous deadline, as a
guard against a hang. The threads run in a child interpreter (assert_passes_in_a_child), so that a
deadlock fails its test instead of hanging the run.
"""

from __future__ import annotations

import errno
import io
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest
from leveldb_log import HEADER_SIZE, Reader, Writer, _testing
from support.child import assert_passes_in_a_child

LINUX = sys.platform.startswith("linux")


def wait_for(cond, what: str, deadline: float = 15.0) -> None:
    """Polls cond() until it holds; a guard against a hang, not a timing assertion."""
    end = time.monotonic() + deadline
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.001)


class Gate:
    """A before_sync hook that holds the first ``hold`` flushes until opened (optionally
    raising in the first)."""

    def __init__(self, raise_first: BaseException | None = None, hold: int = 1) -> None:
        self.opened = threading.Event()
        self.calls = 0
        self.hold = hold
        self.raise_first = raise_first
        self.events: list[tuple[str, int]] = []
        self.lock = threading.Lock()

    def __call__(self) -> None:
        with self.lock:
            self.calls += 1
            n = self.calls
            self.events.append(("flush", n))
        if n <= self.hold:
            assert self.opened.wait(15), "the gate was never opened"
        if n == 1:
            if self.raise_first is not None:
                raise self.raise_first


def start(target, *args) -> tuple[threading.Thread, dict]:
    """A thread running target(*args); its result or exception lands in the dict."""
    out: dict = {}

    def run() -> None:
        try:
            out["result"] = target(*args)
        except BaseException as e:
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    return t, out


def rec(i: int) -> bytes:
    return b"record-%03d-" % i + bytes([i % 251]) * 90


def read_all(path) -> list[bytes]:
    return list(Reader(path, recovery="absolute"))


# ---------------------------------------------------------------------------
# one thread
# ---------------------------------------------------------------------------


def test_write_sync_is_on_disk_when_it_returns(tmp_path):
    p = tmp_path / "a.log"
    with Writer(p) as w:
        w.write(b"plain")  # buffered
        assert os.path.getsize(p) == 0
        off = w.write(b"durable", sync=True)
        assert off == HEADER_SIZE + 5
        # Both records reached the file (the plain one before it), and one flush ran.
        assert os.path.getsize(p) == off + HEADER_SIZE + 7
        assert _testing.sync_flushes(w) == 1
        w.write(b"later")  # plain again: stays buffered
        assert os.path.getsize(p) == off + HEADER_SIZE + 7
        w.sync()
        assert _testing.sync_flushes(w) == 2
        w.sync()  # nothing new since the last flush: no second fdatasync
        assert _testing.sync_flushes(w) == 2
    assert read_all(p) == [b"plain", b"durable", b"later"]


def test_write_many_sync_is_one_flush(tmp_path):
    p = tmp_path / "a.log"
    with Writer(p) as w:
        assert w.write_many([rec(i) for i in range(50)], sync=True) == 50
        assert _testing.sync_flushes(w) == 1
        assert os.path.getsize(p) == w.position
        assert w.write_many([], sync=True) == 0
        assert _testing.sync_flushes(w) == 1
    assert read_all(p) == [rec(i) for i in range(50)]


def test_sync_default_of_the_writer(tmp_path):
    p = tmp_path / "a.log"
    with Writer(p, sync=True) as w:
        w.write(b"a")
        assert _testing.sync_flushes(w) == 1 and os.path.getsize(p) == w.position
        w.write(b"b", sync=False)  # opted out: buffered, no flush
        assert _testing.sync_flushes(w) == 1 and os.path.getsize(p) < w.position
        w.write_many([b"c", b"d"])
        assert _testing.sync_flushes(w) == 2 and os.path.getsize(p) == w.position
        w.write(b"e", sync=None)  # None: the writer's default
        assert _testing.sync_flushes(w) == 3
    assert read_all(p) == [b"a", b"b", b"c", b"d", b"e"]


def test_sync_write_of_arrow_data(tmp_path):
    pa = pytest.importorskip("pyarrow")
    p = tmp_path / "a.log"
    with Writer(p) as w:
        assert w.write_many(pa.array([b"x", b"yy"]), sync=True) == 2
        assert _testing.sync_flushes(w) == 1 and os.path.getsize(p) == w.position
    assert read_all(p) == [b"x", b"yy"]


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"sync": 1}, TypeError),
        ({"sync": "yes"}, TypeError),
        ({"bytes_per_sync": True}, TypeError),
        ({"bytes_per_sync": -1}, ValueError),
        ({"bytes_per_sync": 1.5}, TypeError),
        ({"preallocate": -5}, ValueError),
        ({"preallocate": "1M"}, TypeError),
        ({"lock": 1}, TypeError),
    ],
)
def test_bad_policy_arguments_change_nothing(tmp_path, kwargs, exc):
    p = tmp_path / "a.log"
    p.write_bytes(b"keep me")
    with pytest.raises(exc):
        Writer(p, "w", **kwargs)
    assert p.read_bytes() == b"keep me"


def test_bad_write_arguments(tmp_path):
    with Writer(tmp_path / "a.log") as w:
        with pytest.raises(TypeError, match="sync must be a bool"):
            w.write(b"x", sync=1)
        with pytest.raises(TypeError):
            w.write(b"x", durable=True)
        with pytest.raises(TypeError):
            w.write()
        with pytest.raises(TypeError):
            w.write_many([b"x"], True)
        assert w.position == 0


def test_policy_for_file_objects_is_refused():
    for kw in ({"bytes_per_sync": 4096}, {"preallocate": 1 << 20}):
        with pytest.raises(ValueError, match="apply to a path"):
            Writer(io.BytesIO(), **kw)


def test_sync_write_to_a_file_object_without_descriptor():
    buf = io.BytesIO()
    with Writer(buf) as w:
        with pytest.raises(io.UnsupportedOperation):
            w.write(b"x", sync=True)
        # The record was handed to the object; only its durability could not be had.
        w.flush()
        assert buf.getvalue()[HEADER_SIZE:] == b"x"


def test_sync_write_through_a_file_object(tmp_path):
    p = tmp_path / "a.log"
    with open(p, "wb") as f, Writer(f) as w:
        w.write(b"x", sync=True)
        assert _testing.sync_flushes(w) == 1 and os.path.getsize(p) == w.position


def test_closed_writer_refuses_sync_writes(tmp_path):
    w = Writer(tmp_path / "a.log")
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.write(b"x", sync=True)
    with pytest.raises(ValueError, match="closed"):
        w.sync()


# ---------------------------------------------------------------------------
# group commit, driven by the before_sync hook (in a child interpreter)
# ---------------------------------------------------------------------------


def _body_group_shares_one_flush(path: str, n: int) -> None:
    w = Writer(path)
    gate = Gate()
    _testing.before_sync(w, gate)
    done: list[int] = []
    w.write(rec(0))  # a plain record, buffered: the leader's flush covers it too
    leader, lout = start(lambda: w.write(rec(1), sync=True))
    wait_for(lambda: gate.calls == 1, "the leader reached its flush")
    waiters = []
    for i in range(n):
        waiters.append(start(lambda i=i: (w.write(rec(2 + i), sync=True), done.append(i))))
        wait_for(lambda i=i: _testing.sync_waiters(w) == 2 + i, f"waiter {i} queued")
    # Every waiter's record was written after the leader's flush began: none is done.
    assert done == []
    gate.opened.set()
    leader.join()
    assert "error" not in lout, lout
    for t, out in waiters:
        t.join()
        assert "error" not in out, out
    assert sorted(done) == list(range(n))
    # The leader's flush (the first of a new log, with its directory's: it runs alone),
    # then one flush for all the waiters: no waiter was acknowledged by the flush that
    # began before its record was written.
    assert _testing.sync_flushes(w) == 2
    assert gate.calls == 2
    assert _testing.sync_waiters(w) == 0
    w.close()
    got = read_all(path)
    assert got[:2] == [rec(0), rec(1)] and sorted(got[2:]) == [rec(2 + i) for i in range(n)]


@pytest.mark.parametrize("n", [1, 7])
def test_group_commit_shares_one_flush(tmp_path, n):
    assert_passes_in_a_child(
        "test_durable", "_body_group_shares_one_flush", str(tmp_path / "a.log"), n
    )


def _body_one_flush_at_a_time(path: str) -> None:
    with open(path, "wb"):
        pass  # an existing file: no directory to sync
    w = Writer(path, "a")
    gate = Gate()
    _testing.before_sync(w, gate)
    first, fout = start(lambda: w.write(rec(0), sync=True))
    wait_for(lambda: gate.calls == 1, "the first flush began")
    # Written after the first flush began: not covered by it. They queue instead of starting
    # a flush beside it, and the next flush covers both.
    second, sout = start(lambda: w.write(rec(1), sync=True))
    third, tout = start(lambda: w.write(rec(2), sync=True))
    wait_for(lambda: _testing.sync_waiters(w) == 3, "the other two threads queued")
    assert gate.calls == 1 and _testing.sync_flushes(w) == 0
    gate.opened.set()
    for t, out in ((first, fout), (second, sout), (third, tout)):
        t.join()
        assert "error" not in out, out
    assert _testing.sync_flushes(w) == 2 and gate.calls == 2  # one of the two led one for both
    assert _testing.sync_waiters(w) == 0
    w.close()
    got = read_all(path)
    assert got[0] == rec(0) and sorted(got[1:]) == [rec(1), rec(2)]


def test_group_commit_runs_one_flush_at_a_time_for_all_queued(tmp_path):
    assert_passes_in_a_child("test_durable", "_body_one_flush_at_a_time", str(tmp_path / "a.log"))


def _body_leader_raises(path: str) -> None:
    w = Writer(path)
    gate = Gate(raise_first=RuntimeError("leader fails"))
    _testing.before_sync(w, gate)
    leader, lout = start(lambda: w.write(rec(0), sync=True))
    wait_for(lambda: gate.calls == 1, "the leader reached its flush")
    waiters = [start(lambda i=i: w.write(rec(1 + i), sync=True)) for i in range(3)]
    wait_for(lambda: _testing.sync_waiters(w) == 4, "three waiters queued")
    gate.opened.set()
    leader.join()
    assert isinstance(lout.get("error"), RuntimeError), lout
    for t, out in waiters:
        t.join()
        assert "error" not in out, out  # one of them led a new flush for all
    assert _testing.sync_flushes(w) == 1  # the failed one never synced
    # The leader's failure is no failure of the file: later syncs work.
    w.write(rec(9), sync=True)
    assert _testing.sync_flushes(w) == 2
    w.close()
    got = read_all(path)
    assert got[0] == rec(0) and sorted(got[1:4]) == [rec(1), rec(2), rec(3)]
    assert got[4] == rec(9)


def test_group_commit_leader_raises(tmp_path):
    assert_passes_in_a_child("test_durable", "_body_leader_raises", str(tmp_path / "a.log"))


class PipeFileno(io.RawIOBase):
    """A file object writing to a real file, whose fileno() is a pipe's: fdatasync on it
    fails (EINVAL) as a failing disk's would."""

    def __init__(self, path: str) -> None:
        self.f = open(path, "wb", buffering=0)
        self.r, self.w = os.pipe()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        return self.f.write(b)

    def fileno(self) -> int:
        return self.r


def _body_failed_fdatasync_fails_everyone(path: str) -> None:
    target = PipeFileno(path)
    w = Writer(target)  # a file object: no directory to sync
    gate = Gate()
    _testing.before_sync(w, gate)
    leader, lout = start(lambda: w.write(rec(0), sync=True))
    wait_for(lambda: gate.calls == 1, "the leader reached its flush")
    waiters = [start(lambda i=i: w.write(rec(1 + i), sync=True)) for i in range(3)]
    wait_for(lambda: _testing.sync_waiters(w) == 4, "three waiters queued behind the flush")
    assert gate.calls == 1
    gate.opened.set()
    leader.join()
    assert isinstance(lout.get("error"), OSError) and lout["error"].errno == errno.EINVAL
    for t, out in waiters:
        t.join()
        e = out.get("error")
        # Queued behind the failed fdatasync, each learns of it: none leads another.
        assert isinstance(e, OSError) and e.errno == errno.EINVAL, out
        assert "no later sync can tell" in str(e), out
    assert gate.calls == 1
    # Once an fdatasync failed, no later sync can prove anything: they all fail.
    for call in (w.sync, lambda: w.write(b"x", sync=True)):
        try:
            call()
        except OSError as e:
            assert e.errno == errno.EINVAL and "no later sync" in str(e)
        else:
            raise AssertionError("a sync after a failed fdatasync succeeded")
    assert _testing.sync_flushes(w) == 0
    # Plain writes still work, and every record was handed to the file.
    w.write(b"plain")
    w.close()
    got = read_all(path)
    assert got[0] == rec(0) and sorted(got[1:4]) == [rec(1), rec(2), rec(3)]
    assert got[4:] == [b"x", b"plain"]


@pytest.mark.skipif(not LINUX, reason="fdatasync on a pipe fails with EINVAL on Linux")
def test_failed_fdatasync_fails_every_waiter_and_later_syncs(tmp_path):
    assert_passes_in_a_child(
        "test_durable", "_body_failed_fdatasync_fails_everyone", str(tmp_path / "a.log")
    )


class CountingFile(io.FileIO):
    """A real file whose write() calls are counted, and fail with ENOSPC while ``fail``
    is set, as a full disk's would."""

    def __init__(self, path: str) -> None:
        super().__init__(path, "wb")
        self.writes = 0
        self.fail = False

    def write(self, b) -> int:
        if self.fail:
            raise OSError(errno.ENOSPC, "no space left (injected)")
        self.writes += 1
        return super().write(b)


def _hold_a_flush_with_two_queued(w: Writer, target: CountingFile) -> tuple[Gate, list, int]:
    """rec(0) written durably by a leader held in its flush, rec(1) and rec(2) by two
    threads queued behind it; and the target's write() calls when the flush began."""
    gate = Gate()
    _testing.before_sync(w, gate)
    calls = [start(lambda: w.write(rec(0), sync=True))]
    wait_for(lambda: gate.calls == 1, "the leader reached its flush")
    writes = target.writes
    calls += [start(lambda i=i: w.write(rec(i), sync=True)) for i in (1, 2)]
    wait_for(lambda: _testing.sync_waiters(w) == 3, "two threads queued behind the flush")
    return gate, calls, writes


def _body_queued_records_handed_over_by_the_next_leader(path: str) -> None:
    target = CountingFile(path)
    w = Writer(target)
    gate, calls, writes = _hold_a_flush_with_two_queued(w, target)
    # The queued calls left their records in the writer's buffer: the file has rec(0) only.
    assert read_all(path) == [rec(0)] and target.writes == writes
    gate.opened.set()
    for t, out in calls:
        t.join()
        assert "error" not in out, out
    # The next leader handed both records over in one write, and synced once for both.
    assert target.writes == writes + 1 and _testing.sync_flushes(w) == 2
    got = read_all(path)
    assert got[0] == rec(0) and sorted(got[1:]) == [rec(1), rec(2)]
    assert w.position == os.path.getsize(path)
    w.close()


def test_queued_records_are_handed_over_in_one_write_by_the_next_leader(tmp_path):
    assert_passes_in_a_child(
        "test_durable",
        "_body_queued_records_handed_over_by_the_next_leader",
        str(tmp_path / "a.log"),
    )


def _body_failed_hand_over_drops_queued_records(path: str, by: str) -> None:
    target = CountingFile(path)
    w = Writer(target)
    gate, calls, _ = _hold_a_flush_with_two_queued(w, target)
    target.fail = True
    if by == "plain write":
        # A plain record must not sit behind queued ones (it would fall with them): its
        # write() hands them over first, and raises when that fails.
        try:
            w.write(b"plain")
        except OSError as e:
            assert e.errno == errno.ENOSPC
        else:
            raise AssertionError("the plain write after a failed hand-over succeeded")
    gate.opened.set()
    (t0, out0), *queued = calls
    t0.join()
    assert "error" not in out0, out0  # the held leader's record was handed over before
    for t, out in queued:
        t.join()
        e = out.get("error")
        # Their records were never handed over: each call raises the error, and its
        # record is dropped, so that a retry cannot write it twice.
        assert isinstance(e, OSError) and e.errno == errno.ENOSPC, out
    assert _testing.sync_waiters(w) == 0
    target.fail = False
    w.write(rec(3), sync=True)  # the writer goes on where the log ends
    w.close()
    assert read_all(path) == [rec(0), rec(3)]


@pytest.mark.parametrize("by", ["next leader", "plain write"])
def test_failed_hand_over_drops_the_queued_records_and_fails_their_calls(tmp_path, by):
    assert_passes_in_a_child(
        "test_durable", "_body_failed_hand_over_drops_queued_records", str(tmp_path / "a.log"), by
    )


def _body_leader_survives_a_failed_hand_over_of_others(path: str) -> None:
    target = CountingFile(path)
    w = Writer(target)
    gate = Gate()
    _testing.before_sync(w, gate)
    leader, lout = start(lambda: w.write(rec(0), sync=True))
    wait_for(lambda: gate.calls == 1, "the leader reached its flush")
    w.write(rec(1))  # plain, buffered: sync() hands it over before it queues
    syncer, sout = start(w.sync)
    wait_for(lambda: _testing.sync_waiters(w) == 2, "sync() queued first")
    queued, qout = start(lambda: w.write(rec(2), sync=True))
    wait_for(lambda: _testing.sync_waiters(w) == 3, "a durable write queued behind it")
    target.fail = True
    gate.opened.set()
    for t in (leader, syncer, queued):
        t.join()
    # sync() leads the next flush: the hand-over of rec(2) fails and drops it, but what
    # sync() waits for was handed over before, so it still syncs and returns.
    assert "error" not in lout and "error" not in sout, (lout, sout)
    e = qout.get("error")
    assert isinstance(e, OSError) and e.errno == errno.ENOSPC and "not written" in str(e), qout
    assert _testing.sync_flushes(w) == 2
    target.fail = False
    w.close()
    assert read_all(path) == [rec(0), rec(1)]


def test_a_leader_whose_records_went_out_survives_a_failed_hand_over_of_others(tmp_path):
    assert_passes_in_a_child(
        "test_durable",
        "_body_leader_survives_a_failed_hand_over_of_others",
        str(tmp_path / "a.log"),
    )


def _body_plain_write_hands_queued_records_over_first(path: str) -> None:
    target = CountingFile(path)
    w = Writer(target, buffering=1 << 16)
    gate, calls, _ = _hold_a_flush_with_two_queued(w, target)
    w.write(b"plain")  # buffered behind nothing: the queued records went out first
    assert read_all(path)[0] == rec(0) and sorted(read_all(path)[1:]) == [rec(1), rec(2)]
    gate.opened.set()
    for t, out in calls:
        t.join()
        assert "error" not in out, out
    w.close()
    got = read_all(path)
    assert got[0] == rec(0) and sorted(got[1:3]) == [rec(1), rec(2)] and got[3] == b"plain"


def test_plain_write_hands_the_queued_records_over_before_its_own(tmp_path):
    assert_passes_in_a_child(
        "test_durable",
        "_body_plain_write_hands_queued_records_over_first",
        str(tmp_path / "a.log"),
    )


def _body_waiter_interrupted(path: str) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    w = Writer(path)
    gate = Gate()
    _testing.before_sync(w, gate)
    leader, lout = start(lambda: w.write(rec(0), sync=True))
    wait_for(lambda: gate.calls == 1, "the leader reached its flush")
    main = threading.get_ident()

    def interrupt_when_queued() -> None:
        wait_for(lambda: _testing.sync_waiters(w) == 2, "the main thread queued")
        # Another waiter queues behind the main thread before it is interrupted.
        other.start()
        wait_for(lambda: _testing.sync_waiters(w) == 3, "the other waiter queued")
        signal.pthread_kill(main, signal.SIGINT)

    other_out: dict = {}

    def other_body() -> None:
        try:
            other_out["result"] = w.write(rec(2), sync=True)
        except BaseException as e:
            other_out["error"] = e

    other = threading.Thread(target=other_body)
    helper = threading.Thread(target=interrupt_when_queued)
    helper.start()
    try:
        w.write(rec(1), sync=True)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the waiter was not interrupted")
    helper.join()
    # It left the queue; the leader and the other waiter are still there.
    assert _testing.sync_waiters(w) == 2
    gate.opened.set()
    leader.join()
    other.join()
    assert "error" not in lout and "error" not in other_out, (lout, other_out)
    assert _testing.sync_waiters(w) == 0
    # The interrupted call's record was written (only its durability was not waited for).
    w.close()
    assert read_all(path) == [rec(0), rec(1), rec(2)]


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill")
def test_group_commit_waiter_interrupted(tmp_path):
    assert_passes_in_a_child("test_durable", "_body_waiter_interrupted", str(tmp_path / "a.log"))


class Interrupted(Exception):
    pass


def _body_waiters_interrupted_at_random(path: str, threads: int, per_thread: int) -> None:
    """A signal whose handler raises lands on the main thread, one of the sync writers, again
    and again: at any point of its wait, also after a flush settled it and before it was
    woken, which is when the waiters settled together are woken one by the other. The
    handler raises only inside the main thread's write() call, so that every exception is
    caught where the test expects it."""
    armed = [False]

    def handler(signum, frame) -> None:
        if armed[0]:
            armed[0] = False
            raise Interrupted

    signal.signal(signal.SIGUSR1, handler)
    w = Writer(path)
    main = threading.get_ident()
    done = threading.Event()

    def writer(t: int) -> None:
        for i in range(per_thread):
            w.write(b"%d:%d" % (t, i), sync=True)

    def interrupter() -> None:
        while not done.is_set():
            signal.pthread_kill(main, signal.SIGUSR1)
            time.sleep(0.0002)

    others = [start(writer, t) for t in range(1, threads)]
    helper = threading.Thread(target=interrupter)
    helper.start()
    acked, interrupted, i = [], 0, -1
    while i + 1 < per_thread or interrupted == 0:  # until the signal did land inside write()
        i += 1
        try:
            armed[0] = True
            w.write(b"0:%d" % i, sync=True)
            armed[0] = False
            acked.append(i)
        except Interrupted:
            interrupted += 1
    done.set()
    helper.join()
    for t, out in others:
        t.join()
        assert "error" not in out, out
    assert _testing.sync_waiters(w) == 0
    w.close()
    got = read_all(path)
    for t in range(1, threads):  # every record once, in its thread's order
        assert [r for r in got if r.startswith(b"%d:" % t)] == [
            b"%d:%d" % (t, i) for i in range(per_thread)
        ]
    # The main thread's: in order, none twice, every acknowledged one there (an interrupted
    # call's record is there unless the signal came before it was encoded).
    mine = [int(r.split(b":")[1]) for r in got if r.startswith(b"0:")]
    assert mine == sorted(set(mine)) and set(acked) <= set(mine)
    assert len(got) == (threads - 1) * per_thread + len(mine) and mine[-1] <= i


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill")
def test_group_commit_waiters_interrupted_at_random(tmp_path):
    assert_passes_in_a_child(
        "test_durable", "_body_waiters_interrupted_at_random", str(tmp_path / "a.log"), 8, 300
    )


class FlakyFile(io.FileIO):
    """A real file whose write() calls fail with ENOSPC at random (one in ``every``),
    before writing anything, as a disk that is nearly full might."""

    def __init__(self, path: str, every: int, seed: int) -> None:
        super().__init__(path, "wb")
        self.random = random.Random(seed)
        self.every = every
        self.lock = threading.Lock()

    def write(self, b) -> int:
        with self.lock:
            fail = self.every and self.random.randrange(self.every) == 0
        if fail:
            raise OSError(errno.ENOSPC, "no space left (injected)")
        return super().write(b)


def _body_hand_over_failures_at_random(path: str, threads: int, per_thread: int) -> None:
    """Threads write durable records, every fourth a plain one, to a file whose writes fail
    at random: queued records then fall with the next leader's failed hand-over, beside the
    calls whose own write fails. Whatever the schedule: every call that returned has its
    record in the log once, every call that raised has none, and each thread's records are
    in its order. Each thread goes on until a queued record was dropped at least once."""
    target = FlakyFile(path, every=20, seed=os.getpid())
    w = Writer(target)
    dropped = threading.Event()

    def writer(t: int) -> tuple[list[bytes], list[bytes]]:
        kept, lost, i = [], [], 0
        while i < per_thread or not dropped.is_set():
            r = b"%d:%d" % (t, i)
            try:
                w.write(r, sync=i % 4 != 3)
                kept.append(r)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
                if "queued for a group commit" in str(e):
                    dropped.set()
                lost.append(r)
            i += 1
        return kept, lost

    calls = [start(writer, t) for t in range(threads)]
    for t, out in calls:
        t.join()
        assert "error" not in out, out
    target.every = 0  # the last plain records go out with close()
    assert _testing.sync_waiters(w) == 0
    w.close()
    got = read_all(path)
    assert len(got) == len(set(got))
    for t, (_, out) in enumerate(calls):
        kept, lost = out["result"]
        assert [r for r in got if r.startswith(b"%d:" % t)] == kept
        assert not set(lost) & set(got)


def test_group_commit_hand_over_failures_at_random(tmp_path):
    assert_passes_in_a_child(
        "test_durable", "_body_hand_over_failures_at_random", str(tmp_path / "a.log"), 8, 200
    )


def _body_close_while_queued(path: str) -> None:
    w = Writer(path)
    gate = Gate()
    _testing.before_sync(w, gate)
    leader, lout = start(lambda: w.write(rec(0), sync=True))
    wait_for(lambda: gate.calls == 1, "the leader reached its flush")
    waiters = [start(lambda i=i: w.write(rec(1 + i), sync=True)) for i in range(3)]
    wait_for(lambda: _testing.sync_waiters(w) == 4, "three waiters queued")
    w.write(b"buffered")  # a plain record, still in the buffer when close() begins
    closer, cout = start(w.close)
    wait_for(lambda: _testing.sync_waiters(w) == 5, "close() waits with them")
    # Closing: the writer takes no more records.
    try:
        w.write(b"too late", sync=True)
    except ValueError as e:
        assert "closed" in str(e)
    else:
        raise AssertionError("a write during close() was taken")
    gate.opened.set()
    closer.join()
    leader.join()
    for t, out in waiters:
        t.join()
        assert "error" not in out, out
    assert "error" not in cout and "error" not in lout, (cout, lout)
    assert w.closed
    assert _testing.sync_flushes(w) == 2  # the leader's, then one for the waiters and close()
    got = read_all(path)
    assert got[0] == rec(0) and sorted(got[1:4]) == [rec(1), rec(2), rec(3)]
    assert got[4] == b"buffered"


def test_group_commit_close_while_waiters_queued(tmp_path):
    assert_passes_in_a_child("test_durable", "_body_close_while_queued", str(tmp_path / "a.log"))


def _body_close_while_every_flush_fails(path: str) -> None:
    w = Writer(path)
    gate = Gate()

    def hook() -> None:
        gate()
        if gate.calls > 1:
            raise RuntimeError(f"flush {gate.calls} fails")

    _testing.before_sync(w, hook)
    leader, lout = start(lambda: w.write(rec(0), sync=True))
    wait_for(lambda: gate.calls == 1, "the leader reached its flush")
    waiters = [start(lambda i=i: w.write(rec(1 + i), sync=True)) for i in range(3)]
    wait_for(lambda: _testing.sync_waiters(w) == 4, "three waiters queued")
    closer, cout = start(w.close)
    wait_for(lambda: _testing.sync_waiters(w) == 5, "close() waits with them")
    gate.opened.set()
    for t, _ in [(leader, lout), *waiters, (closer, cout)]:
        t.join()
    assert "error" not in lout, lout  # its flush (the first) succeeded
    # Every later flush failed: each waiter led one in turn and got its error, and so did
    # close(), which closed the writer all the same; nobody was left waiting.
    for _, out in [*waiters, (closer, cout)]:
        assert isinstance(out.get("error"), RuntimeError), out
    assert w.closed and _testing.sync_waiters(w) == 0
    assert _testing.sync_flushes(w) == 1
    got = read_all(path)
    assert got[0] == rec(0) and sorted(got[1:]) == [rec(1), rec(2), rec(3)]


def test_group_commit_close_while_every_flush_fails(tmp_path):
    assert_passes_in_a_child(
        "test_durable", "_body_close_while_every_flush_fails", str(tmp_path / "a.log")
    )


def _body_mixed_plain_and_sync(path: str, threads: int, per_thread: int) -> None:
    w = Writer(path)
    errors: list[BaseException] = []

    def body(t: int) -> None:
        try:
            for i in range(per_thread):
                data = b"%d:%d:" % (t, i) + bytes(50 + t)
                sync = (t + i) % 2 == 0
                off = w.write(data, sync=sync)
                if sync:
                    # Durable on return: the file holds the record whole.
                    assert os.path.getsize(path) >= off + HEADER_SIZE + len(data)
        except BaseException as e:
            errors.append(e)

    ts = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    w.close()
    got = read_all(path)
    want = [b"%d:%d:" % (t, i) + bytes(50 + t) for t in range(threads) for i in range(per_thread)]
    assert sorted(got) == sorted(want)
    for t in range(threads):  # each thread's records in its order
        mine = [r for r in got if r.startswith(b"%d:" % t)]
        assert mine == [b"%d:%d:" % (t, i) + bytes(50 + t) for i in range(per_thread)]


def test_group_commit_mixed_with_plain_writes(tmp_path):
    assert_passes_in_a_child(
        "test_durable", "_body_mixed_plain_and_sync", str(tmp_path / "a.log"), 8, 60
    )


def _body_after_fork(path: str) -> None:
    w = Writer(path)
    gate = Gate()
    _testing.before_sync(w, gate)
    leader, lout = start(lambda: w.write(rec(0), sync=True))
    wait_for(lambda: gate.calls == 1, "the leader reached its flush")
    pid = os.fork()
    if pid == 0:  # the child: the parent's leader does not exist here
        code = 1
        try:
            _testing.before_sync(w, None)
            assert _testing.sync_waiters(w) == 0
            w.write(rec(1), sync=True)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    gate.opened.set()
    leader.join()
    assert os.waitstatus_to_exitcode(status) == 0
    assert "error" not in lout


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_group_commit_in_a_forked_child(tmp_path):
    assert_passes_in_a_child("test_durable", "_body_after_fork", str(tmp_path / "a.log"))


# ---------------------------------------------------------------------------
# SIGKILL: what was acknowledged is there
# ---------------------------------------------------------------------------

_KILLED_WRITER = r"""
import os, sys, threading
from leveldb_log import Writer
path, ack = sys.argv[1], int(sys.argv[2])
w = Writer(path)
def body(t):
    i = 0
    while True:
        data = b"%d:%d:" % (t, i) + b"x" * 90
        w.write(data, sync=True)
        os.write(ack, b"%d:%d\n" % (t, i))  # only once the call returned
        i += 1
ts = [threading.Thread(target=body, args=(t,), daemon=True) for t in range(8)]
for t in ts:
    t.start()
for t in ts:
    t.join()
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("acks", [1, 64, 600])
def test_sigkill_loses_no_acknowledged_record(tmp_path, acks):
    path = tmp_path / "killed.log"
    r, wfd = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(path), str(wfd)], pass_fds=(wfd,)
    )
    os.close(wfd)
    got = b""
    with os.fdopen(r, "rb") as pipe:
        while got.count(b"\n") < acks:
            chunk = pipe.read1(65536)
            assert chunk, f"the writer died: {proc.wait()}"
            got += chunk
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        got += pipe.read()  # acknowledgements written before the kill
    acked = {line for line in got.split(b"\n") if line}
    assert len(acked) >= acks
    records = list(Reader(path))  # the default mode: a torn tail is no error
    present = {r[: r.rindex(b":")] for r in records}
    assert acked <= present, sorted(acked - present)[:5]
    assert len(present) == len(records)  # and nothing twice


# ---------------------------------------------------------------------------
# the sync policy
# ---------------------------------------------------------------------------


def test_bytes_per_sync_starts_write_back_every_n_bytes(tmp_path):
    p = tmp_path / "a.log"
    n = 4096
    with Writer(p, buffering=0, bytes_per_sync=n) as w:
        expected, start = 0, 0
        for i in range(40):
            w.write(bytes([i]) * 1000)
            if w.position - start >= n:  # the rule: a range once n bytes are out
                expected += 1
                start = w.position
            assert _testing.range_syncs(w) == expected
        assert expected >= 8
    assert read_all(p) == [bytes([i]) * 1000 for i in range(40)]


def test_bytes_per_sync_off_by_default(tmp_path):
    with Writer(tmp_path / "a.log", buffering=0) as w:
        for _ in range(100):
            w.write(bytes(1000))
        assert _testing.range_syncs(w) == 0
    with Writer(tmp_path / "b.log", buffering=0, bytes_per_sync=0) as w:
        w.write(bytes(100000))
        w.flush()
        assert _testing.range_syncs(w) == 0


def _allocated(path) -> int:
    return os.stat(path).st_blocks * 512


@pytest.mark.skipif(not LINUX, reason="fallocate(FALLOC_FL_KEEP_SIZE) is Linux's")
def test_preallocate_reserves_space_without_changing_the_size(tmp_path):
    p = tmp_path / "a.log"
    size = 1 << 20
    with Writer(p, preallocate=size) as w:
        w.write(b"x" * 100, sync=True)
        assert os.path.getsize(p) == w.position  # readers see the log's size, no zeros
        if _allocated(p) < size:
            pytest.skip("this file system does not reserve space (fallocate)")
        # Grows ahead as the log does.
        for _ in range(12):
            w.write(bytes(100000))
        w.flush()
        assert os.path.getsize(p) == w.position
        assert _allocated(p) >= w.position + size // 2
    # Closing gives the reserve back.
    assert _allocated(p) < os.path.getsize(p) + size // 2
    assert read_all(p) == [b"x" * 100] + [bytes(100000)] * 12


@pytest.mark.skipif(not LINUX, reason="counts descriptors in /proc/self/fd")
def test_new_log_directory_synced_with_the_first_flush(tmp_path):
    def dir_fds() -> int:
        n = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}") == str(tmp_path):
                    n += 1
            except OSError:
                pass
        return n

    before = dir_fds()
    w = Writer(tmp_path / "new.log")
    assert dir_fds() == before + 1  # kept, to be synced with the log's first flush
    w.write(b"a", sync=True)
    assert dir_fds() == before and _testing.sync_flushes(w) == 1
    w.close()
    # An existing file's name is already in its directory: nothing to keep.
    w = Writer(tmp_path / "new.log", "a")
    assert dir_fds() == before
    w.close()
    # An empty new log: sync() still syncs the directory.
    w = Writer(tmp_path / "empty.log")
    assert dir_fds() == before + 1
    w.sync()
    assert dir_fds() == before and _testing.sync_flushes(w) == 1
    w.close()
    # Never synced: the descriptor goes with close().
    w = Writer(tmp_path / "other.log", "x")
    assert dir_fds() == before + 1
    w.close()
    assert dir_fds() == before
