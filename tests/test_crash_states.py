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
- ``leveldb-log write`` leaves the old log or the new one, byte for byte, never a mix;
- ``leveldb-log write --append`` leaves the old records, or the old plus all the new ones.

A scenario is a row: what the directory holds before, the steps (``open``, ``write`` i,
``flush``, ``sync``, ``close``; ``cli`` "replace"/"append" first count), and which check
applies. ``ACKNOWLEDGES`` says which steps make the records written so far durable: a step
that syncs (``write(..., sync=True)``, say) is added there and in tests/crash/workload.py.
"""

from __future__ import annotations

import dataclasses
import io
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import leveldb_log
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "crash"))
from crashfs import LOG, Counts, State, Trace, build_shim, crash_states, payload, record

B = leveldb_log.BLOCK_SIZE
OLD = range(100, 105)  # the records of a log that exists before a scenario
NEW_RECORD = b"appended after the crash"
ACKNOWLEDGES = {"sync"}  # steps after which every record written so far is durable

Step = tuple[object, ...]


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    before: str  # "none", "log" (OLD, complete), "torn" (OLD, the last record cut short)
    steps: tuple[Step, ...]
    check: str  # "writer", "replace", "append"
    min_states: int  # the run must check at least this many distinct states


def writes(*indices: int) -> tuple[Step, ...]:
    return tuple(("write", i) for i in indices)


SCENARIOS = (
    Scenario(
        "w_new_buffered",
        "none",
        (("open", "w", -1), *writes(0, 1, 2), ("sync",), *writes(3, 4, 5), ("flush",))
        + (*writes(6, 7), ("sync",), *writes(8, 9), ("close",)),
        "writer",
        0,
    ),
    Scenario(
        "w_over_log_unbuffered",
        "log",
        (("open", "w", 0), *writes(0, 1, 2, 3), ("sync",), *writes(4, 5), ("close",)),
        "writer",
        0,
    ),
    Scenario(
        "a_on_torn_log",
        "torn",
        (("open", "a", 0), *writes(0, 1), ("sync",), *writes(2, 3, 4), ("sync",))
        + (
            *writes(
                5,
            ),
            ("close",),
        ),
        "writer",
        0,
    ),
    Scenario(
        "a_on_log_buffered",
        "log",
        (
            ("open", "a", -1),
            *writes(0, 1, 2, 3),
            ("flush",),
            *writes(
                4,
            ),
            ("sync",),
        )
        + (*writes(5, 6), ("close",)),
        "writer",
        0,
    ),
    Scenario("cli_write_new", "none", (("cli", "replace", 0, 6),), "replace", 0),
    Scenario("cli_write_over_log", "log", (("cli", "replace", 0, 6),), "replace", 0),
    Scenario("cli_append_to_torn_log", "torn", (("cli", "append", 0, 6),), "append", 0),
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
            if kind == "write":
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
            if kind == "write":
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
    if expect.scenario.check == "replace" and log not in (expect.old, expect.new):
        out.append(f"neither the old log nor the new one: {len(records)} records")
    if expect.scenario.check == "append":
        old = [] if expect.old is None else read(expect.old)
        if records not in (old, old + news):
            out.append(f"the old log plus {len(records) - len(old)} of {len(news)} new records")
    if log is not None:
        out += reopen_problems(log, records, state.ordered, scratch)
    return out


def reopen_problems(log: bytes, records: list[bytes], ordered: bool, scratch: Path) -> list[str]:
    """Mode "a" on the state, one record, close: all that read before, then it."""
    path = scratch / "state.log"
    path.write_bytes(log)
    try:
        with leveldb_log.Writer(path, "a") as w:
            w.write(NEW_RECORD)
    except leveldb_log.CorruptionError as e:
        return [f'"a" refused: {e}']
    after = path.read_bytes()
    got = read(after)
    if got != [*records, NEW_RECORD]:
        kept = sum(1 for r in records if r in got)
        return [f'"a": {len(records)} records before, {kept} of them after, {len(got)} in all']
    if ordered:
        try:
            read(after, "absolute")
        except leveldb_log.CorruptionError as e:
            return [f'"a" left damage behind after a crash that left no hole: {e}']
    return []


def directory_now(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def run_scenario(
    scenario: Scenario, shim: Path, tmp: Path, on_state: Callable[[State], list[str]] | None = None
) -> tuple[Counts, list[tuple[State, list[str]]], float]:
    """Record the scenario, then check each of its crash states: (counts, failures, seconds)."""
    began = time.monotonic()
    directory = (tmp / "dir").resolve()
    directory.mkdir()
    old = old_log(scenario.before)
    if old is not None:
        (directory / LOG).write_bytes(old)
    initial = {p.name: (p.stat().st_ino, p.read_bytes()) for p in directory.iterdir()}
    trace = record(shim, directory, scenario.steps)
    assert trace.unsupported == []
    assert trace.done_before[-1] == len(scenario.steps)  # every step returned
    final = directory_now(directory)
    expect = Expect(scenario, old, final.get(LOG), trace)
    counts = Counts()
    failures = []
    for state in crash_states(initial, trace, counts):
        problems = reopen_free = problems_in(state, expect, tmp)
        del reopen_free
        if problems:
            failures.append((state, problems))
    return counts, failures, time.monotonic() - began


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shim(tmp_path_factory.mktemp("shim"))


def describe(failures: Sequence[tuple[State, list[str]]]) -> str:
    return "\n".join(f"{s.how} (steps done {s.steps_done}): {p}" for s, p in failures[:10])


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_every_crash_state_keeps_what_was_promised(
    scenario: Scenario, shim: Path, tmp_path: Path
) -> None:
    counts, failures, seconds = run_scenario(scenario, shim, tmp_path)
    print(
        f"{scenario.name}: {counts.distinct} distinct crash states checked "
        f"({counts.generated} built; {counts.sampled_points} crash points sampled) "
        f"in {seconds:.1f} s"
    )
    assert counts.distinct >= scenario.min_states
    assert not failures, f"{len(failures)} states fail:\n{describe(failures)}"
