"""The libFuzzer harnesses of tests/fuzz/, run for a bounded time under ASan + UBSan.

Each harness is built and run by ``.ci/fuzz.sh`` (which installs clang if missing), starting
from the committed seed corpus: 45 s per harness in CI (env CI set), 10 s otherwise, or
LEVELDB_LOG_FUZZ_SECONDS. A crash, a sanitizer report or a broken invariant fails the test and
leaves the input in tests/fuzz/build/artifacts/.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FUZZ = ROOT / "tests" / "fuzz"
HARNESSES = {"reader": 45, "roundtrip": 45, "crc32c": 20, "tail": 30}  # seconds in CI


def seconds(harness: str) -> int:
    if os.environ.get("LEVELDB_LOG_FUZZ_SECONDS"):
        return int(os.environ["LEVELDB_LOG_FUZZ_SECONDS"])
    return HARNESSES[harness] if os.environ.get("CI") else max(5, HARNESSES[harness] // 4)


@pytest.mark.parametrize("harness", list(HARNESSES))
def test_fuzzer_finds_no_crash_or_broken_invariant(harness: str) -> None:
    secs = seconds(harness)
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "fuzz.sh"), str(secs), harness],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=secs + 600,  # building, and installing clang the first time
    )
    log = FUZZ / "build" / f"{harness}.log"
    detail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}\n{detail}"
    # It really fuzzed: the seeds were run and many more inputs after them.
    runs = re.search(r"stat::number_of_executed_units: (\d+)", proc.stdout)
    assert runs is not None, proc.stdout
    assert int(runs.group(1)) > 20 * secs, proc.stdout


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
