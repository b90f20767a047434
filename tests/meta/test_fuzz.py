"""The libFuzzer harnesses of tests/fuzz/, run for a fixed number of inputs under ASan + UBSan.

Each harness is built and run by ``.ci/fuzz.sh`` (which installs clang if missing), starting
from the committed seed corpus, for the number of inputs below (about 10-30 s each on the
2-core CI machine), or LEVELDB_LOG_FUZZ_RUNS each. A budget of inputs rather than seconds
does as much work on a slow or busy machine as on a fast one. A crash, a sanitizer report or
a broken invariant fails the test and leaves the input in tests/fuzz/build/artifacts/.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.meta]

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "fuzz"
# append's inputs are logs of up to 100 KiB, each decided on in three dialects and searched at
# every offset of the part cut: about 75 a second alone, against thousands for the others.
HARNESSES = {
    "reader": 30_000,
    "roundtrip": 3_000,
    "crc32c": 150_000,
    "append": 1_500,
    "datastore": 250_000,
}


def runs(harness: str) -> int:
    return int(os.environ.get("LEVELDB_LOG_FUZZ_RUNS") or HARNESSES[harness])


@pytest.mark.parametrize("harness", list(HARNESSES))
def test_fuzzer_finds_no_crash_or_broken_invariant(harness: str) -> None:
    budget = runs(harness)
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "fuzz.sh"), "--runs", str(budget), harness],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,  # building, installing clang the first time, and a slow machine
    )
    log = FUZZ / "build" / f"{harness}.log"
    detail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}\n{detail}"
    # It really fuzzed: the whole budget of inputs ran.
    done = re.search(r"stat::number_of_executed_units: (\d+)", proc.stdout)
    assert done is not None, proc.stdout
    assert int(done.group(1)) >= budget, proc.stdout


def test_committed_seed_corpus_is_what_make_corpus_writes(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(FUZZ / "make_corpus.py"), str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for harness in HARNESSES:
        made = {p.name: p.read_bytes() for p in (tmp_path / harness).iterdir()}
        committed = {p.name: p.read_bytes() for p in (FUZZ / "corpus" / harness).iterdir()}
        assert sorted(committed) == sorted(made), harness
        changed = [name for name in made if made[name] != committed[name]]
        assert changed == [], f"{harness}: rerun tests/fuzz/make_corpus.py"
