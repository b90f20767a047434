"""Memory checks beyond the normal build: the extension under ASan + UBSan, and valgrind.

- ``.ci/sanitized.sh`` builds the extension with AddressSanitizer and UBSan into a venv of its
  own and runs Python tests against it: in CI (env CI set) or with
  LEVELDB_LOG_SANITIZED_TESTS=1, the tests that drive the C code hardest (its default list);
  otherwise a quick subset, so this check always runs.
- valgrind's memcheck (which also catches reads of uninitialized memory) runs the C core's unit
  tests, built without sanitizers, on their reduced input set (LLOG_TEST_REDUCED=1: the same code
  paths with fewer inputs, see tests/c/harness.h; the full matrix runs at -O2 in
  tests/core/test_c_core.py), and replays the fuzzers' seed corpus (tests/fuzz/replay.c calls the
  harnesses without libFuzzer, invariants included); any error or leak fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.c_core import c_test_sources

pytestmark = [pytest.mark.slow, pytest.mark.meta]

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc" / "core"
CORE = sorted(str(p) for p in CSRC.glob("*.c"))
VECTORS = str(ROOT / "tests" / "golden" / "vectors.txt")
FLAGS = ["-g", "-O1", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{CSRC}"]
# The faults, the threads, and the group commit's protocol (its threads, waits and drops).
QUICK_SUBSET = [
    "tests/faults/test_faults.py",
    "tests/faults/test_threads_stress.py",
    "tests/writer/test_durable.py",
]


def full_run() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("LEVELDB_LOG_SANITIZED_TESTS"))


def test_python_tests_pass_against_the_extension_built_with_asan_and_ubsan() -> None:
    args = [] if full_run() else QUICK_SUBSET
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "sanitized.sh"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
        timeout=1800,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert "(ASan+UBSan)" in out and " passed" in out, out[-3000:]
    assert "failed" not in out.splitlines()[-1], out[-3000:]


def valgrind(*cmd: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is needed (Debian: apt-get install valgrind)")
    return subprocess.run(
        [
            "valgrind",
            "-q",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            *cmd,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=1200,
    )


def compile_c(out: Path, *sources: str) -> Path:
    proc = subprocess.run(
        ["gcc", *FLAGS, *sources, *CORE, "-o", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize(("name", "args"), [("test_core", [VECTORS]), ("test_crc32c", [VECTORS])])
def test_c_unit_tests_have_no_memcheck_errors_or_leaks(
    tmp_path: Path, name: str, args: list[str]
) -> None:
    binary = compile_c(tmp_path / name, *c_test_sources(name))
    proc = valgrind(str(binary), *args, env={"LLOG_TEST_REDUCED": "1"})
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-6000:])
    assert "reduced input set" in proc.stdout, proc.stdout[:3000]
    assert " 0 failed" in proc.stdout, proc.stdout[-3000:]


@pytest.mark.parametrize("harness", ["reader", "roundtrip", "crc32c", "append", "datastore"])
def test_fuzz_seed_corpus_replays_clean_under_valgrind_memcheck(
    tmp_path: Path, harness: str
) -> None:
    fuzz = ROOT / "tests" / "fuzz"
    # the datastore harness takes csrc/datastore's decoder too
    decoder = sorted(str(p) for p in (ROOT / "csrc" / "datastore").glob("*.c"))
    extra = [*decoder, f"-I{ROOT / 'csrc' / 'datastore'}"] if harness == "datastore" else []
    binary = compile_c(
        tmp_path / f"replay_{harness}",
        str(fuzz / "replay.c"),
        str(fuzz / f"fuzz_{harness}.c"),
        *extra,
    )
    proc = valgrind(str(binary), str(fuzz / "corpus" / harness))
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-6000:])
    count = len(list((fuzz / "corpus" / harness).iterdir()))
    assert f"replayed {count} inputs" in proc.stdout
