"""Every CRC-32C implementation compiled into csrc/crc32c.c, checked by the C test
tests/c/test_crc32c.c: all lengths 0..4096 at all alignments 0..63, long inputs, the
golden vectors and chaining across implementations, in an optimised build and in an
AddressSanitizer + UndefinedBehaviorSanitizer build (reads past the input fail it).

A missing C compiler fails these tests: they are the only check of the instruction-based
paths, which the Python tests reach only through the one the CPU picks."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WARNINGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"]
BUILDS = {
    "optimised": ["-O2"],
    "asan-ubsan": ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"],
}


def compile_c(sources: list[str], flags: list[str], out: Path) -> None:
    compiler = shutil.which("gcc")
    assert compiler, "gcc is needed to build the C tests"
    cmd = [compiler, *WARNINGS, *flags, "-I", str(ROOT / "csrc"), *sources, "-o", str(out)]
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr


@pytest.mark.parametrize("build", sorted(BUILDS))
def test_every_crc32c_implementation_matches_the_reference(build: str, tmp_path: Path) -> None:
    exe = tmp_path / "test_crc32c"
    compile_c(["tests/c/test_crc32c.c", "csrc/crc32c.c"], BUILDS[build], exe)
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
    compile_c(["bench/crc_speed.c", "csrc/crc32c.c"], ["-O2"], exe)
    result = subprocess.run(
        [str(exe), "--quick"], capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "portable" in result.stdout
