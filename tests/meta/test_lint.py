"""Lint and typing are part of the test suite: ruff on all Python, mypy --strict on the
stubs and on a typed usage example, and pytest's warning filters (any warning a test does not
expect is an error)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

pytestmark = [pytest.mark.slow, pytest.mark.meta]

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_finds_nothing_in_package_tests_and_examples() -> None:
    # csrc holds the docstrings generator setup.py runs
    paths = ("python", "tests", "examples", "bench", "csrc", "setup.py")
    result = run(sys.executable, "-m", "ruff", "check", *paths)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = run(
        sys.executable, "-m", "ruff", "format", "--check", "python", "examples", "csrc", "setup.py"
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_passes_on_stubs_and_typed_usage(tmp_path: Path) -> None:
    # Check the installed package (what users get), from outside the source tree;
    # mypy takes a package (-p) and files in separate runs.
    for target in (["-p", "leveldb_log"], [str(ROOT / "examples" / "typed_usage.py")]):
        result = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path), *target],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_only_the_binding_includes_python_h() -> None:
    sources = [p for p in (ROOT / "csrc").rglob("*") if p.suffix in {".c", ".h"}]
    including = {p.parent.name for p in sources if "#include <Python.h>" in p.read_text()}
    assert including == {"py"}
    assert any(p.parent.name == "core" for p in sources)


def test_ruff_is_installed_with_the_test_extra() -> None:
    assert shutil.which("ruff") or run(sys.executable, "-m", "ruff", "--version").returncode == 0


def test_c_sources_follow_the_committed_clang_format() -> None:
    # .ci/run installs clang-format; a missing one fails here rather than skipping.
    sources = sorted(
        str(p.relative_to(ROOT))
        for folder in (
            "csrc/core",
            "csrc/py",
            "tests/c",
            "tests/crash",
            "csrc/datastore",
            "csrc/datastore/py",
            "tests/fuzz",
            "bench",
            "bench/callgrind",
        )
        for p in (ROOT / folder).glob("*")
        if p.suffix in {".c", ".h"}
    )
    assert "csrc/core/log_reader.c" in sources
    result = run("clang-format", "--dry-run", "-Werror", *sources)
    assert result.returncode == 0, result.stdout + result.stderr


def filterwarnings_problems(pyproject: str) -> list[str]:
    """What is wrong with the pytest warning filters in the text of a pyproject.toml: the
    first must be "error" (every warning a test does not expect fails it; a later entry wins
    over an earlier one, so ignores still apply), and every other an "ignore:" with a comment
    line above it saying why the warning is not ours to fix."""
    entries = tomllib.loads(pyproject)["tool"]["pytest"]["ini_options"]["filterwarnings"]
    problems = [] if entries[:1] == ["error"] else [f"the first entry is not 'error': {entries}"]
    problems += [f"not an ignore: {e!r}" for e in entries[1:] if not e.startswith("ignore:")]
    lines = pyproject.split("\nfilterwarnings = [\n", 1)[1].split("\n]", 1)[0].splitlines()
    commented = False
    for line in (line.strip() for line in lines):
        if line.startswith("#"):
            commented = True
            continue
        on_line = tomllib.loads(f"entries = [{line}]")["entries"]
        if len(on_line) != 1:
            problems.append(f"not one entry a line: {line}")
        elif not commented:
            problems.append(f"no comment above {on_line[0]!r}")
        commented = False
    return problems


def test_every_warning_a_test_does_not_expect_is_an_error() -> None:
    assert filterwarnings_problems((ROOT / "pyproject.toml").read_text(encoding="utf-8")) == []


FILTERS = """
[tool.pytest.ini_options]
filterwarnings = [
%s
]
"""


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ('    "ignore:x:UserWarning",', "the first entry is not 'error'"),
        ('    # why\n    "ignore:x:UserWarning",\n    # why\n    "error",', "not 'error'"),
        ('    # why\n    "error",\n    # why\n    "default:x:UserWarning",', "not an ignore"),
        ('    # why\n    "error",\n    "ignore:x:UserWarning",', "no comment above"),
        ('    "error",\n    # why\n    "ignore:x:UserWarning",', "no comment above 'error'"),
        ('    # why\n    "error", "ignore:x:UserWarning",', "not one entry a line"),
    ],
)
def test_the_warning_filter_check_finds_what_is_wrong(entries: str, problem: str) -> None:
    """The check above fails on each way the list can go wrong."""
    problems = filterwarnings_problems(FILTERS % entries)
    assert any(problem in p for p in problems), problems
    good = '    # why\n    "error",\n    # why\n    "ignore:x:UserWarning",'
    assert filterwarnings_problems(FILTERS % good) == []
