"""Builds the C core's unit tests (the test_core program: every tests/c/*.c but
test_crc32c.c, one file per suite, see tests/c/harness.h) and runs them.

Two builds: one plain at -O2 (asserts live: NDEBUG is never defined) on the
full input set, and one with AddressSanitizer and UndefinedBehaviorSanitizer at
-O1 on the reduced set (LLOG_TEST_REDUCED=1, tests/c/harness.h): every line and
branch of csrc/core/ the full set reaches, with fewer lengths, alignments and
cut points, so the sanitizers see every code path at a fifth of the cost. The
CRC-32C paths get every length and alignment under the sanitizers in
tests/core/test_crc32c_impls.py. A missing C compiler is a failure, not a
skip: CI installs gcc.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from support.c_core import c_test_sources

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc" / "core"
VECTORS = ROOT / "tests" / "golden" / "vectors.txt"
CORE_SOURCES = sorted(p.name for p in CSRC.glob("*.c"))

COMMON_FLAGS = ("-std=c11", "-Wall", "-Wextra", "-Werror")
SANITIZED_FLAGS = (
    "-g",
    "-O1",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
)
OPTIMISED_FLAGS = ("-g", "-O2")
SANITIZER_ENV = {
    "LLOG_TEST_REDUCED": "1",
    "ASAN_OPTIONS": "detect_leaks=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$", re.MULTILINE)
RUN_TIMEOUT = 900  # seconds; the sanitized run takes well under a minute


def c_compiler() -> list[str]:
    """$CC if set, else gcc (or cc); fails the test when there is none."""
    from_env = os.environ.get("CC", "").strip()
    if from_env:
        cmd = shlex.split(from_env)
        if shutil.which(cmd[0]) is None:
            pytest.fail(f"the C compiler CC={from_env!r} was not found")
        return cmd
    for name in ("gcc", "cc"):
        path = shutil.which(name)
        if path:
            return [path]
    pytest.fail("no C compiler found: install gcc or set CC")


def build(tmp_path_factory: pytest.TempPathFactory, name: str, flags: tuple[str, ...]) -> Path:
    out = tmp_path_factory.mktemp(name) / "test_core"
    cmd = [
        *c_compiler(),
        *COMMON_FLAGS,
        *flags,
        f"-I{CSRC}",
        *c_test_sources("test_core"),
        *(str(CSRC / source) for source in CORE_SOURCES),
        "-o",
        str(out),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    status = proc.returncode
    output = proc.stdout + proc.stderr
    assert status == 0, f"compiling the C tests failed:\n{shlex.join(cmd)}\n{output}"
    return out


def run(binary: Path, extra_env: dict[str, str]) -> tuple[int, tuple[int, int] | None, str]:
    """Runs the C tests: exit status, the (passed, failed) of their last "N passed, M failed"
    line (None without one), and their output."""
    env = {**os.environ, **extra_env}
    proc = subprocess.run(
        [str(binary), str(VECTORS)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    summaries = SUMMARY.findall(proc.stdout)
    counts = (int(summaries[-1][0]), int(summaries[-1][1])) if summaries else None
    return proc.returncode, counts, proc.stdout + proc.stderr


def test_c_core_with_sanitizers(tmp_path_factory: pytest.TempPathFactory) -> None:
    status, counts, output = run(
        build(tmp_path_factory, "c_core_asan", SANITIZED_FLAGS), SANITIZER_ENV
    )
    assert status == 0, f"C tests failed (exit status {status}):\n{output}"
    assert counts is not None and counts[1] == 0 and counts[0] > 0, output
    assert "reduced input set" in output, output[:3000]


def test_c_core_optimised(tmp_path_factory: pytest.TempPathFactory) -> None:
    status, counts, output = run(build(tmp_path_factory, "c_core_o2", OPTIMISED_FLAGS), {})
    assert status == 0, f"C tests failed (exit status {status}):\n{output}"
    assert counts is not None and counts[1] == 0 and counts[0] > 0, output
    assert "reduced input set" not in output, output[:3000]
