"""The C core's instruction-count budget (bench/callgrind): callgrind counts the
instructions a fixed encode/decode workload executes and check.py fails when a phase
needs more than its committed budget plus slack. Counts do not depend on the machine's
load, so this holds on a noisy box and in CI. gcc and valgrind are required: a machine
without them fails this test rather than skipping it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.meta]

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "bench" / "callgrind" / "check.py"


def test_gcc_and_valgrind_are_installed() -> None:
    assert shutil.which("gcc"), "gcc is needed to build bench/callgrind/guard.c"
    assert shutil.which("valgrind"), "valgrind is needed (apt-get install valgrind)"


def test_c_core_stays_within_its_instruction_budget() -> None:
    # --repeat 2: each phase runs twice and the counts must agree (determinism).
    result = subprocess.run(
        [sys.executable, str(CHECK), "--repeat", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert result.returncode == 0, (
        result.stdout
        + result.stderr
        + "\nIf the extra instructions are intended, rewrite the budget with: "
        "python bench/callgrind/check.py --update"
    )
