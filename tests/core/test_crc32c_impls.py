"""Every CRC-32C implementation compiled from csrc/core/crc32c*.c, checked by the C test
tests/c/test_crc32c.c (built with the harness and reference CRC of tests/c): all lengths
0..4096 at all alignments 0..63, long inputs, the golden vectors and chaining across
implementations, in an optimised build and in an AddressSanitizer +
UndefinedBehaviorSanitizer build (reads past the input fail it).

A missing C compiler fails these tests: they are the only check of the instruction-based
paths, which the Python tests reach only through the one the CPU picks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.c_core import c_test_sources

ROOT = Path(__file__).resolve().parents[2]
# crc32c.c and the paths it lists (crc32c_x86.c, crc32c_arm.c), from ROOT.
CRC_SOURCES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "csrc" / "core").glob("crc32c*.c"))
WARNINGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"]
BUILDS = {
    "optimised": ["-O2"],
    "asan-ubsan": ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"],
}


def compile_c(sources: list[str], flags: list[str], out: Path) -> None:
    compiler = shutil.which("gcc")
    assert compiler, "gcc is needed to build the C tests"
    cmd = [compiler, *WARNINGS, *flags, "-I", str(ROOT / "csrc" / "core"), *sources, "-o", str(out)]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr


@pytest.mark.parametrize("build", sorted(BUILDS))
def test_every_crc32c_implementation_matches_the_reference(build: str, tmp_path: Path) -> None:
    exe = tmp_path / "test_crc32c"
    compile_c([*c_test_sources("test_crc32c"), *CRC_SOURCES], BUILDS[build], exe)
    result = subprocess.run(
        [str(exe), str(ROOT / "tests" / "golden" / "vectors.txt")],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    output = result.stdout + result.stderr
    last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    summary = re.fullmatch(r"(\d+) passed, (\d+) failed", last)
    assert summary, output
    assert int(summary[1]) > 0 and summary[2] == "0", output
    assert result.returncode == 0, output


def test_crc_benchmark_builds_cleanly_and_runs(tmp_path: Path) -> None:
    exe = tmp_path / "crc_speed"
    compile_c(["bench/crc_speed.c", *CRC_SOURCES], ["-O2"], exe)
    result = subprocess.run(
        [str(exe), "--quick"], capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "portable" in result.stdout


def _crc_in_subprocess(name: str, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LEVELDB_LOG_CRC32C": name}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )


CRC_PROGRAM = """
import random, leveldb_log
rng = random.Random(7)
data = bytes(rng.getrandbits(8) for _ in range(70000))
out = [leveldb_log.crc32c_implementation]
for start in range(0, 64, 5):
    for length in (0, 1, 7, 63, 64, 200, 4095, 4096, 4097, 33000, 69000 - start):
        out.append(leveldb_log.crc32c(memoryview(data)[start:start + length], start))
print(out)
"""


def test_every_crc32c_implementation_can_be_forced_and_agrees_with_the_model() -> None:
    import random

    import leveldb_log
    from support import model  # tests/ is on sys.path (pytest's rootdir insertion)

    rng = random.Random(7)
    data = bytes(rng.getrandbits(8) for _ in range(70000))
    expected = []
    for start in range(0, 64, 5):
        for length in (0, 1, 7, 63, 64, 200, 4095, 4096, 4097, 33000, 69000 - start):
            expected.append(model.crc32c(data[start : start + length], start))
    assert len(leveldb_log.crc32c_implementations) >= 2  # at least portable and one more
    assert "portable" in leveldb_log.crc32c_implementations
    for name in leveldb_log.crc32c_implementations:
        result = _crc_in_subprocess(name, CRC_PROGRAM)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == repr([name, *expected]), name


def test_an_unusable_crc32c_name_warns_and_keeps_the_fastest() -> None:
    import leveldb_log

    code = "import leveldb_log; print(leveldb_log.crc32c_implementation)"
    result = _crc_in_subprocess("no-such-implementation", code)
    assert result.returncode == 0, result.stderr
    assert "RuntimeWarning" in result.stderr and "no-such-implementation" in result.stderr
    assert result.stdout.strip() == leveldb_log.crc32c_implementations[-1]
