"""Every state a crash can leave, checked (issue 25, item 3; the method is tests/crash/crashfs.py).

Each scenario of SCENARIOS runs once in a child process under the LD_PRELOAD shim
(tests/crash/shim.c), which records every create, truncate, write, fsync, rename and unlink in
the log's directory. From that trace come the crash states: each prefix of the calls, any
subset of the data written since the last fsync, the last write torn at each 512-byte
boundary (the rest missing, or zeros). In each state:

- every record acknowledged by a completed ``sync()`` reads back, first, in order;
- no record appears that was never written, none twice, the new ones in write order;
- ``Writer(path, "a")`` appends cleanly: everything readable before still reads, then the new
  record; where no write was left out, the result reads in "absolute" mode;
- ``leveldb-log write`` leaves the old log or the new one, byte for byte, never a mix (the
  new one once it has returned);
- ``leveldb-log write --append`` leaves, once the next ``write`` has put back what a crash
  interrupted (leveldb_log/cli/_undo.py), the old records or the
  old plus all the new ones (all of them once it has returned).

Mode "a" refuses two kinds of crash state on purpose (see ``known_refusal``), where no
checksum tells a crash's leftovers from a file that is no log (docs/format.md,
"Appending"): a file holding nothing but the start of its first record, and, after a power
loss, a hole followed only by a torn write. Those are counted and printed.

A scenario is a row: what the directory holds before, the steps (``open``, ``write`` i,
``write_sync`` i, ``flush``, ``sync``, ``close``; ``cli`` "replace"/"append" first count),
and which check applies. ``ACKNOWLEDGES`` says which steps make the records written so far
durable. ``write_sync`` is ``write(..., sync=True)`` (group commit): every record written
before it returns is durable. Another new step goes there and into tests/crash/workload.py.
"""

from __future__ import annotations

import collections
import dataclasses
import io
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import leveldb_log
import pytest
from crashfs import (
    LOG,
    Counts,
    State,
    Trace,
    build_shim,
    crash_states,
    payload,
    record,
    record_command,
    replay,
    strace_summary,
    trace_summary,
)
from leveldb_log.cli import _atomic, _undo
from leveldb_log.cli import main as cli_main

OLD = range(100, 105)  # the records of a log that exists before a scenario
NEW_RECORD = b"appended after the crash"
# Steps after which every record written so far is durable. "write_sync" is write(...,
# sync=True), the group commit: it returns once its record, and so every one before it, is.
ACKNOWLEDGES = {"sync", "write_sync"}
WRITES = ("write", "write_sync")

Step = tuple[object, ...]


def parse_steps(script: str) -> tuple[Step, ...]:
    """ "open w -1; write 0 1; sync" -> (("open", "w", -1), ("write", 0), ("write", 1),
    ("sync",)). Steps: open MODE BUFFERING; write I...; write_sync I...; flush; sync; close;
    cli replace|append FIRST COUNT (records FIRST.. through ``leveldb-log write``)."""
    steps: list[Step] = []
    for part in script.split(";"):
        kind, *args = part.split()
        if kind in WRITES:
            steps += [(kind, int(a)) for a in args]
        elif kind == "open":
            steps.append(("open", args[0], int(args[1])))
        elif kind == "cli":
            steps.append(("cli", args[0], int(args[1]), int(args[2])))
        else:
            steps.append((kind, *args))
    return tuple(steps)


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    before: str  # "none", "log" (OLD, complete), "torn" (OLD, the last record cut short)
    script: str  # see parse_steps
    check: str  # "writer", "replace", "append"
    # The run must check at least this many distinct states: about 60 % of what it checks,
    # since how the writer splits its write calls depends on where its buffers lie.
    min_states: int

    @property
    def steps(self) -> tuple[Step, ...]:
        return parse_steps(self.script)


# Records: see crashfs.SIZES (0 to 70,000 bytes: fragmented over up to three blocks).
# buffering -1 is the default buffer (large records then go out in writev calls), 0 none.
SCENARIOS = (
    Scenario(
        "w_new_buffered",
        "none",
        "open w -1; write 0 1 2; sync; write 3 4 5; flush; write 6 7; sync; write 8 9; close",
        "writer",
        650,
    ),
    Scenario(
        "w_over_log_unbuffered",
        "log",
        "open w 0; write 0 1 2 3; sync; write 4 5; close",
        "writer",
        600,
    ),
    Scenario(
        "a_on_torn_log_unbuffered",
        "torn",
        "open a 0; write 0 1; sync; write 2 3 4; sync; write 5; close",
        "writer",
        500,
    ),
    Scenario(
        "a_on_log_buffered",
        "log",
        "open a -1; write 0 1 2 3; flush; write 4; sync; write 5 6; close",
        "writer",
        250,
    ),
    Scenario(
        "a_new_unbuffered", "none", "open a 0; write 7 8; sync; write 9; close", "writer", 450
    ),
    Scenario(
        "a_on_log_write_sync",
        "log",
        "open a -1; write_sync 0 1; write 2; write_sync 3; write 4 5; close",
        "writer",
        180,
    ),
    Scenario(
        "w_new_write_sync_unbuffered",
        "none",
        "open w 0; write_sync 0; write 1 2; write_sync 3 4; write 5; close",
        "writer",
        280,
    ),
    Scenario("cli_write_new", "none", "cli replace 0 6", "replace", 180),
    Scenario("cli_write_over_log", "log", "cli replace 0 6", "replace", 180),
    Scenario("cli_append_to_torn_log", "torn", "cli append 0 6", "append", 330),
    Scenario("cli_append_to_log", "log", "cli append 5 4", "append", 240),
    Scenario("cli_append_new", "none", "cli append 0 3", "append", 100),
)


def old_log(before: str) -> bytes | None:
    """The log the directory holds before the scenario (durable), or None for no log."""
    if before == "none":
        return None
    buf = io.BytesIO()
    with leveldb_log.Writer(buf) as w:
        w.write_many(payload(i) for i in OLD)
    data = buf.getvalue()
    # "torn": the last record (a FIRST fragment in block 1, a LAST in block 2) cut inside
    # its LAST fragment.
    return data[:-100] if before == "torn" else data


def read(data: bytes, recovery: str = "skip") -> list[bytes]:
    return list(leveldb_log.Reader(data, recovery=recovery, on_corruption=lambda c: None))


@dataclasses.dataclass
class Expect:
    """What every state of one scenario is checked against."""

    scenario: Scenario
    old: bytes | None  # the log before
    new: bytes | None  # the log after the whole workload
    trace: Trace

    def acknowledged(self, steps_done: int) -> list[bytes]:
        """The records a crash must not lose once ``steps_done`` steps have returned."""
        durable = read(self.old) if self.old is not None and self.mode() == "a" else []
        written, acked = [], list(durable)
        for kind, *args in self.scenario.steps[:steps_done]:
            if kind in WRITES:
                written.append(payload(int(str(args[0]))))
            if kind in ACKNOWLEDGES:
                acked = durable + written
        return acked

    def mode(self) -> str:
        opens = [s for s in self.scenario.steps if s[0] == "open"]
        return str(opens[0][1]) if opens else ""

    def new_records(self) -> list[bytes]:
        out = []
        for kind, *args in self.scenario.steps:
            if kind in WRITES:
                out.append(payload(int(str(args[0]))))
            elif kind == "cli":
                first, count = int(str(args[1])), int(str(args[2]))
                out += [payload(i) for i in range(first, first + count)]
        return out


def problems_in(state: State, expect: Expect, scratch: Path) -> list[str]:
    """What is wrong with one crash state (nothing: [])."""
    log = dict(state.files).get(LOG)
    records = [] if log is None else read(log)
    news = expect.new_records()
    out = []
    if expect.scenario.check == "writer":
        acked = expect.acknowledged(state.steps_done)
        if records[: len(acked)] != acked:
            out.append(f"{len(acked)} records acknowledged, the first {len(records)} read differ")
    if len(set(records)) != len(records) or set(records) - {*map(payload, OLD), *news}:
        out.append("a record that was never written, or one twice")
    fresh = [r for r in records if r in news]
    if fresh != [r for r in news if r in fresh]:
        out.append("the new records out of order")
    returned = state.steps_done == len(expect.scenario.steps)  # the command acknowledged
    if expect.scenario.check == "replace":
        if log not in ([expect.new] if returned else [expect.old, expect.new]):
            out.append(f"neither the old log nor the new one: {len(records)} records")
    if expect.scenario.check == "append":
        old = [] if expect.old is None else read(expect.old)
        after = read_after_roll_back(state, scratch)
        if after not in ([old + news] if returned else [old, old + news]):
            out.append(f"the old log plus {len(after) - len(old)} of {len(news)} new records")
    if log is not None:
        out += reopen_problems(state, log, records, scratch)
    return out


def read_after_roll_back(state: State, scratch: Path) -> list[bytes]:
    """The records of the log once the next ``write`` has put back an interrupted append."""
    if not any(name == f".{LOG}.append-undo" for name, _ in state.files):
        log = dict(state.files).get(LOG)
        return [] if log is None else read(log)
    directory = scratch / "rolled_back"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    for name, content in state.files:
        (directory / name).write_bytes(content)
    _undo.roll_back_interrupted(str(directory / LOG))
    return read((directory / LOG).read_bytes()) if (directory / LOG).exists() else []


def reopen_problems(state: State, log: bytes, records: list[bytes], scratch: Path) -> list[str]:
    """Mode "a" on the state, one record, close: all that read before, then it."""
    path = scratch / "state.log"
    path.unlink(missing_ok=True)  # (truncating a file on ext4 flushes it: slow)
    path.write_bytes(log)
    try:
        with leveldb_log.Writer(path, "a") as w:
            w.write(NEW_RECORD)
    except leveldb_log.CorruptionError as e:
        if path.read_bytes() != log:
            return [f'"a" refused and changed the file: {e}']
        why = known_refusal(state, records, e)
        if why is None:
            return [f'"a" refused: {e}']
        state_counts[f"refused ({why})"] += 1
        return []
    after = path.read_bytes()
    got = read(after)
    if got != [*records, NEW_RECORD]:
        kept = sum(1 for r in records if r in got)
        return [f'"a": {len(records)} records before, {kept} of them after, {len(got)} in all']
    if state.ordered:
        try:
            read(after, "absolute")
        except leveldb_log.CorruptionError as e:
            return [f'"a" left damage behind after a crash that left no hole: {e}']
    return []


# Mode "a" refuses (CorruptionError, the file left as it was) on purpose where no checksum
# tells a crash's leftovers from data that is no log (docs/format.md, "Appending"): a file in
# which no record is whole yet (a first record torn before its first fragment was whole),
# and, after a power loss, a hole (a lost write) followed only by a torn later write. Returns
# which, or None.
def known_refusal(state: State, records: list[bytes], error: Exception) -> str | None:
    if not records:
        return "no valid record yet"
    offset = getattr(error, "offset", None)
    if not state.ordered and offset is not None and not valid_record_after(state, offset):
        return "a hole, then only a torn write"
    return None


def valid_record_after(state: State, offset: int) -> bool:
    """Whether the state's log holds a checksum-valid record after ``offset``."""
    log = dict(state.files).get(LOG, b"")
    return any(
        r.kind == "record" and r.checksum_ok and r.offset > offset for r in leveldb_log.scan(log)
    )


state_counts: collections.Counter[str] = collections.Counter()


def directory_now(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@dataclasses.dataclass
class Recording:
    """A scenario as the shim recorded it: the directory before (name -> (inode, bytes)),
    the old log, the trace, the directory after, the directory rebuilt by replaying every
    operation of the trace, and when the recording began."""

    initial: dict[str, tuple[int, bytes]]
    old: bytes | None
    trace: Trace
    final: dict[str, bytes]
    replayed: dict[str, bytes]
    began: float


def record_scenario(
    scenario: Scenario, shim: Path, tmp: Path, strace: Path | None = None
) -> Recording:
    """Runs the scenario under the shim (and, given ``strace``, under strace into that file)."""
    began = time.monotonic()
    directory = (tmp / "dir").resolve()
    directory.mkdir()
    old = old_log(scenario.before)
    if old is not None:
        (directory / LOG).write_bytes(old)
    initial = {p.name: (p.stat().st_ino, p.read_bytes()) for p in directory.iterdir()}
    trace = record(shim, directory, scenario.steps, strace)
    final = directory_now(directory)
    replayed = dict(replay(initial, trace.ops, range(len(trace.ops)), None))
    return Recording(initial, old, trace, final, replayed, began)


def check_crash_states(
    scenario: Scenario, rec: Recording, *, limit: int = 10, samples: int = 300
) -> tuple[Counts, list[tuple[State, list[str]]]]:
    """Checks each crash state of the recording and prints how many it checked: (counts,
    the states that fail with their problems). ``limit`` and ``samples``: see
    crashfs.crash_states."""
    expect = Expect(scenario, rec.old, rec.final.get(LOG), rec.trace)
    counts = Counts()
    state_counts.clear()
    failures = []
    # The checks write each state to a file (fsyncs included): in memory where there is one.
    memory = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=memory) as scratch:
        for state in crash_states(rec.initial, rec.trace, counts, limit, samples):
            problems = problems_in(state, expect, Path(scratch))
            if problems:
                failures.append((state, problems))
    print(
        f"{scenario.name}: {counts.distinct} distinct crash states checked "
        f"({counts.generated} built; {counts.sampled_points} crash points sampled; "
        f"{dict(state_counts)}) in {time.monotonic() - rec.began:.1f} s"
    )
    return counts, failures


def assert_strace_agrees(strace: str, directory: Path, trace: Trace) -> None:
    """strace saw no call on the directory the shim does not model, and as many of each
    kind as the shim recorded (an open that may create or truncate, at least as many)."""
    seen, others = strace_summary(strace, directory)
    assert others == set()
    recorded = trace_summary(trace)
    for kind in ("write", "trunc", "sync", "rename", "unlink", "chmod"):
        assert seen.get(kind, 0) == recorded.get(kind, 0), kind
    assert recorded.get("otrunc", 0) <= seen.get("otrunc", 0)
    opens = seen.get("open", 0) + seen.get("otrunc", 0)
    assert recorded.get("create", 0) + recorded.get("otrunc", 0) <= opens


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shim(tmp_path_factory.mktemp("shim"))


def describe(failures: Sequence[tuple[State, list[str]]]) -> str:
    return "\n".join(f"{s.how} (steps done {s.steps_done}): {p}" for s, p in failures[:10])


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_every_crash_state_keeps_what_was_promised(
    scenario: Scenario, shim: Path, tmp_path: Path
) -> None:
    rec = record_scenario(scenario, shim, tmp_path)
    # every step returned, no temporary file nor undo record is left behind, and the
    # trace replayed rebuilds the directory: the recording is whole
    shape = (rec.trace.unsupported, rec.trace.done_before[-1], set(rec.final), rec.replayed)
    assert shape == ([], len(scenario.steps), {LOG}, rec.final)
    counts, failures = check_crash_states(scenario, rec)
    assert counts.distinct >= scenario.min_states
    assert not failures, f"{len(failures)} states fail:\n{describe(failures)}"


# The checks can fail: states that break each promise are caught.


def fake_expect(check: str, script: str, old: bytes | None, new: bytes | None) -> Expect:
    return Expect(Scenario("fake", "none", script, check, 0), old, new, Trace([], [0], []))


def test_the_checks_catch_a_lost_acknowledged_record(tmp_path: Path) -> None:
    expect = fake_expect("writer", "open w 0; write 0 1; sync; write 2", None, None)
    buf = io.BytesIO()
    with leveldb_log.Writer(buf) as w:
        w.write(payload(0))
    lost = State(((LOG, buf.getvalue()),), 4, True, "record 1 lost")
    assert problems_in(lost, expect, tmp_path) == [
        "2 records acknowledged, the first 1 read differ"
    ]
    assert problems_in(dataclasses.replace(lost, steps_done=3), expect, tmp_path) == []


def test_a_write_that_syncs_acknowledges_its_record_and_those_before() -> None:
    expect = fake_expect("writer", "open w 0; write 0; write_sync 1; write 2", None, None)
    assert expect.acknowledged(2) == []
    assert expect.acknowledged(3) == expect.acknowledged(4) == [payload(0), payload(1)]
    assert expect.new_records() == [payload(0), payload(1), payload(2)]


def test_the_checks_catch_a_record_never_written_and_a_mix(tmp_path: Path) -> None:
    old, new = io.BytesIO(), io.BytesIO()
    with leveldb_log.Writer(old) as w:
        w.write_many(payload(i) for i in OLD)
    with leveldb_log.Writer(new) as w:
        w.write_many([payload(0), b"never written"])
    expect = fake_expect("replace", "cli replace 0 1", old.getvalue(), None)
    state = State(((LOG, new.getvalue()),), 1, True, "a stray record")
    assert problems_in(state, expect, tmp_path) == [
        "a record that was never written, or one twice",
        "neither the old log nor the new one: 2 records",
    ]


def test_the_checks_catch_part_of_an_append(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with leveldb_log.Writer(buf) as w:
        w.write_many([*map(payload, OLD), payload(0)])
    expect = fake_expect("append", "cli append 0 2", old_log("log"), None)
    state = State(((LOG, buf.getvalue()),), 0, True, "one of two new records")
    assert problems_in(state, expect, tmp_path) == ["the old log plus 1 of 2 new records"]


# Findings, each kept as the state that showed it.


def cli_append(log: Path, records: list[bytes], tmp: Path) -> int:
    source = tmp / "input"
    source.write_bytes(b"".join(len(r).to_bytes(4, "little") + r for r in records))
    return cli_main(["write", str(log), "--append", "--length-prefixed", "--input", str(source)])


def undo_record(log: Path, records: list[bytes]) -> Path:
    """The undo record ``write --append`` makes durable before it appends ``records`` to
    ``log``: the tail it will cut, saved (and closed once written out)."""
    cut, tail, size = _atomic._save_tail(str(log))
    with tail:
        return Path(_undo.write(str(log), cut, tail, size, records))


def test_an_append_a_crash_cut_short_is_put_back_by_the_next_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Crash state of cli_append_to_torn_log: the undo record durable, then the torn tail
    cut and two of six new records written (a crash point of the append). Before the undo
    record, the log kept the old records plus those two."""
    log = tmp_path / LOG
    old = old_log("torn")
    assert old is not None
    log.write_bytes(old)
    new = [payload(i) for i in range(6)]
    undo = undo_record(log, new)
    with leveldb_log.Writer(log, "a") as w:  # mode "a" cuts the torn record first
        w.write_many([payload(0), payload(1)])
    assert read(log.read_bytes()) == [*map(payload, OLD[:-1]), payload(0), payload(1)]
    assert Path(undo).exists()
    assert cli_append(log, [b"the next append"], tmp_path) == 0
    assert read(log.read_bytes()) == [*map(payload, OLD[:-1]), b"the next append"]
    assert not Path(undo).exists()
    assert "put back as it was before an interrupted 'write --append'" in capsys.readouterr().err


def test_a_torn_undo_record_was_never_durable_and_changes_nothing(tmp_path: Path) -> None:
    log = tmp_path / LOG
    old = old_log("log")
    assert old is not None
    log.write_bytes(old)
    undo = Path(_undo.write(str(log), 100, io.BytesIO(b"x" * 900), 1000, []))
    undo.write_bytes(undo.read_bytes()[:-1])  # the crash tore it: the log was not touched yet
    assert _undo.roll_back_interrupted(str(log)) is None
    assert log.read_bytes() == old
    assert not undo.exists()


def test_the_undo_record_keeps_zero_fill_as_a_length(tmp_path: Path) -> None:
    """A preallocated log's zeros after the cut come back by extending the file."""
    log = tmp_path / LOG
    log.write_bytes(b"log" + bytes(10_000))
    undo = Path(_undo.write(str(log), 1, io.BytesIO(b"og" + bytes(10_000)), 10_003, []))
    assert undo.stat().st_size < 100
    log.write_bytes(b"l" + b"new")
    assert _undo.roll_back_interrupted(str(log)) is not None  # b"new" holds no record
    assert log.read_bytes() == b"log" + bytes(10_000)


def test_records_added_after_an_interrupted_append_are_never_rolled_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A service appended to the log (mode "a") after an append was interrupted: the next
    write leaves its records, drops the undo record and says so."""
    log = tmp_path / LOG
    old = old_log("log")
    assert old is not None
    log.write_bytes(old)
    undo = undo_record(log, [payload(0), payload(1)])
    with leveldb_log.Writer(log, "a") as w:
        w.write_many([payload(0), b"a record of the service"])
    assert cli_append(log, [b"the next append"], tmp_path) == 0
    expected = [*map(payload, OLD), payload(0), b"a record of the service", b"the next append"]
    assert read(log.read_bytes()) == expected
    assert not undo.exists()
    assert "records were added since" in capsys.readouterr().err


def unbuffered_log(records: list[bytes]) -> tuple[bytes, list[int]]:
    buf = io.BytesIO()
    with leveldb_log.Writer(buf, buffering=0) as w:
        offsets = [w.write(r) for r in records]
    return buf.getvalue(), offsets


def test_a_crash_that_lost_a_write_before_one_that_persisted_still_appends(tmp_path: Path) -> None:
    """Crash state of a_on_torn_log_unbuffered and others: records written one write() each,
    no sync between; the write of the second was lost (zeros: the file's size and a later
    block reached the disk), the third's persisted. Mode "a" used to refuse ("zero fill
    followed by more data"); the valid record after the hole shows it is damage, so all is
    kept and the new record starts the next block. The zeros end their block for a reader
    (LevelDB's rule for zero fill), so the third record, still in the file, is not read."""
    data, offsets = unbuffered_log([payload(0), payload(1), payload(3)])
    hole = data[: offsets[1]] + bytes(offsets[2] - offsets[1]) + data[offsets[2] :]
    log = tmp_path / LOG
    log.write_bytes(hole)
    with leveldb_log.Writer(log, "a") as w:
        w.write(NEW_RECORD)
    after = log.read_bytes()
    assert after[: len(hole)] == hole
    assert len(after) == leveldb_log.BLOCK_SIZE + leveldb_log.HEADER_SIZE + len(NEW_RECORD)
    assert read(after) == [payload(0), NEW_RECORD]


def test_a_crash_inside_the_first_record_of_a_new_log_is_refused_unchanged(tmp_path: Path) -> None:
    """Crash state of a_new_unbuffered (with no hole: a killed process leaves it too): the
    first record, 32,752 bytes in one write(), torn after its first 512-byte sector. Nothing
    in it is checksum-valid, so mode "a" cannot tell it from a file that is no log (a small
    binary whose seventh byte is 1 or 2 looks the same) and refuses rather than destroy it:
    "no valid record in a file that is not empty", the file byte for byte as it was."""
    data, _ = unbuffered_log([payload(7)])
    log = tmp_path / LOG
    log.write_bytes(data[:512])
    with pytest.raises(leveldb_log.CorruptionError, match="no valid record"):
        leveldb_log.Writer(log, "a")
    assert log.read_bytes() == data[:512]


# The recording itself.

EVERY_KIND_OF_CALL = """
import os, sys
d = sys.argv[1]
fd = os.open(d + "/a", os.O_CREAT | os.O_RDWR)
os.write(fd, b"hello world")
os.pwrite(fd, b"HELLO", 0)
os.lseek(fd, 20, os.SEEK_SET)
os.writev(fd, [b"after ", b"a gap"])
os.ftruncate(fd, 24)
os.fsync(fd)
os.close(fd)
with open(d + "/b", "ab") as f:  # O_APPEND
    f.write(b"appended")
with open(d + "/b", "ab") as f:
    f.write(b" twice")
os.replace(d + "/b", d + "/c")
with open(d + "/c", "r+b") as f:
    f.truncate(3)
fd = os.open(d + "/a", os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"short")
os.close(fd)
os.unlink(d + "/gone")
"""


def test_the_shim_records_every_call_that_changes_the_directory(shim: Path, tmp_path: Path) -> None:
    directory = (tmp_path / "dir").resolve()
    directory.mkdir()
    (directory / "gone").write_bytes(b"to be removed")
    (tmp_path / "outside").write_bytes(b"")
    initial = {p.name: (p.stat().st_ino, p.read_bytes()) for p in directory.iterdir()}
    trace = record_command(
        shim, directory, tmp_path / "trace", ["-c", EVERY_KIND_OF_CALL, str(directory)]
    )
    assert [op.kind for op in trace.ops] == [
        "create", "write", "write", "write", "trunc", "sync", "create", "write", "write",
        "rename", "trunc", "trunc", "write", "unlink",
    ]  # fmt: skip
    assert trace.ops[3].offset == 20 and trace.ops[3].data == b"after a gap"
    assert trace.ops[8].offset == len(b"appended")
    assert dict(replay(initial, trace.ops, range(len(trace.ops)), None)) == {
        "a": b"short",
        "c": b"app",
    }
    assert directory_now(directory) == {"a": b"short", "c": b"app"}


def test_the_shim_reports_calls_it_cannot_model(shim: Path, tmp_path: Path) -> None:
    directory = (tmp_path / "dir").resolve()
    directory.mkdir()
    code = "import os, sys; fd = os.open(sys.argv[1] + '/f', os.O_CREAT | os.O_RDWR); "
    code += "os.posix_fallocate(fd, 0, 4096); os.pwritev(fd, [b'x'], 0); "
    code += "os.sendfile(fd, os.open(sys.executable, os.O_RDONLY), 0, 10)"
    trace = record_command(shim, directory, tmp_path / "trace", ["-c", code, str(directory)])
    assert trace.unsupported == [
        "unsupported posix_fallocate",
        "unsupported pwritev",
        "unsupported sendfile",
    ]
