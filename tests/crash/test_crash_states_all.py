"""The crash states of tests/crash/test_crash_states.py, enumerated further (issue 25, item 3).

The behaviour tier checks every subset of up to 10 unsynced writes. Here: its scenarios and
longer ones (12 and 24 writes between syncs, a 100-byte buffer that makes a write call per
fragment), every subset of up to 12 unsynced writes and 3,000 deterministic samples beyond,
each run also under strace, which must see no call on the log's directory that the shim
does not record, and as many of each kind as it recorded.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_crash_states import (
    LOG,
    SCENARIOS,
    Scenario,
    assert_strace_agrees,
    build_shim,
    check_crash_states,
    describe,
    record_scenario,
)

pytestmark = pytest.mark.slow

LONGER = (
    Scenario(
        "w_new_unbuffered_long",
        "none",
        # twelve small records between syncs (4,096 subsets), then large ones
        "open w 0; write 0 1 3 5 6 9 10 11 13 15 16 19; sync; write 2 4 8 12; close",
        "writer",
        8000,
    ),
    Scenario(
        "a_on_torn_log_small_buffer",
        "torn",
        "open a 100; write 0 1 2 3 4; sync; write 5 6 7 8 9; close",
        "writer",
        1600,
    ),
    Scenario(
        "a_on_log_unbuffered_no_sync",
        "log",
        "open a 0; write " + " ".join(map(str, range(24))) + "; close",
        "writer",
        3800,
    ),
    Scenario("cli_write_over_torn_log", "torn", "cli replace 0 12", "replace", 650),
    Scenario("cli_append_to_torn_log_long", "torn", "cli append 0 16", "append", 1500),
)


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shim(tmp_path_factory.mktemp("shim"))


@pytest.mark.parametrize("scenario", SCENARIOS + LONGER, ids=lambda s: s.name)
def test_every_crash_state_enumerated_further(
    scenario: Scenario, shim: Path, tmp_path: Path
) -> None:
    # CI installs strace (.ci/run); a missing one fails here rather than skipping.
    assert shutil.which("strace"), "strace is needed to cross-check the shim"
    rec = record_scenario(scenario, shim, tmp_path, strace=tmp_path / "strace")
    assert_strace_agrees((tmp_path / "strace").read_text(), (tmp_path / "dir").resolve(), rec.trace)
    shape = (rec.trace.unsupported, rec.trace.done_before[-1], set(rec.final), rec.replayed)
    assert shape == ([], len(scenario.steps), {LOG}, rec.final)  # as in test_crash_states
    counts, failures = check_crash_states(scenario, rec, limit=12, samples=3000)
    assert counts.distinct >= scenario.min_states
    assert not failures, f"{len(failures)} states fail:\n{describe(failures)}"
