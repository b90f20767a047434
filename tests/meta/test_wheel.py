"""Distribution: what `pip install` gets.

`.ci/wheel.sh` copies the source tree, builds an sdist and, from that sdist, a wheel. The
tests below check what the two hold. `.ci/run` builds them once, installs that wheel and runs
the behaviour tests against it; it passes the folder here in LEVELDB_LOG_DIST (with the build's
output in `build.log`), so the build is checked, not repeated. Without it, the fixture builds.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.meta]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "wheel.sh"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sdist and wheel of LEVELDB_LOG_DIST, or of one run of .ci/wheel.sh."""
    given = os.environ.get("LEVELDB_LOG_DIST")
    if given:
        out = Path(given)
        log = (out / "build.log").read_text(encoding="utf-8", errors="replace")
        result = subprocess.CompletedProcess(["(built by .ci/run)"], 0, log, "")
    else:
        out = tmp_path_factory.mktemp("dist")
        result = subprocess.run(
            ["bash", str(SCRIPT), "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=1800,
            env={**os.environ, "PYTHON": sys.executable},
        )
    sdists = list(out.glob("leveldb_log-*.tar.gz"))
    wheels = list(out.glob("leveldb_log-*.whl"))
    return {"result": result, "sdists": sdists, "wheels": wheels}


def tail(result: subprocess.CompletedProcess[str], lines: int = 60) -> str:
    """The ends of stdout and of stderr, each on its own (pip's warnings fill stderr)."""
    out = result.stdout.splitlines()[-lines:]
    err = result.stderr.splitlines()[-lines // 3 :]
    return "\n".join(["-- stdout:", *out, "-- stderr:", *err])


def sdist_names(built: dict[str, Any]) -> set[str]:
    (sdist,) = built["sdists"]
    with tarfile.open(sdist) as tar:
        # leveldb_log-0.1.0/csrc/core/crc32c.c -> csrc/core/crc32c.c
        return {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}


def tracked(pattern: str) -> set[str]:
    """The files of the tree that pattern matches, build products left out (bytecode that
    the tests' imports write beside the sources, a local build's objects)."""
    return {
        p.relative_to(ROOT).as_posix()
        for p in ROOT.glob(pattern)
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.suffix not in {".pyc", ".so", ".pyd", ".o"}
    }


def test_the_script_builds_an_sdist_and_a_wheel_from_it(built: dict[str, Any]) -> None:
    result = built["result"]
    assert result.returncode == 0, tail(result)
    assert len(built["sdists"]) == 1 and len(built["wheels"]) == 1, tail(result)
    # `python -m build` without --sdist/--wheel builds the wheel from the sdist it made
    assert "Building wheel from sdist" in result.stdout + result.stderr, tail(result)


def test_the_sdist_holds_every_file_the_build_and_the_tests_need(built: dict[str, Any]) -> None:
    needed = (
        tracked("csrc/**/*")
        | tracked("python/leveldb_log/**/*.py")
        | tracked("python/leveldb_log/**/*.pyi")
        | tracked("tests/**/*.py")
        | tracked("tests/golden/*")
        | {"README.md", "pyproject.toml", "setup.py", "python/leveldb_log/py.typed", "PKG-INFO"}
    )
    assert {
        "csrc/core/log_reader.c",
        "tests/golden/vectors.txt",
        "python/leveldb_log/_core.pyi",
    } <= (needed)
    missing = needed - sdist_names(built)
    assert not missing, f"missing from the sdist (MANIFEST.in): {sorted(missing)}"
    assert "python/leveldb_log/cli/__init__.py" in needed  # subpackages too


def test_the_sdist_holds_no_build_products(built: dict[str, Any]) -> None:
    junk = {
        n
        for n in sdist_names(built)
        if n.endswith((".so", ".pyd", ".o", ".pyc"))
        or any(part in n.split("/") for part in ("__pycache__", ".hypothesis", "build"))
    }
    assert not junk


def test_the_wheel_holds_the_extension_the_stubs_and_py_typed(built: dict[str, Any]) -> None:
    (wheel,) = built["wheels"]
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    package = {n for n in names if n.startswith("leveldb_log/")}
    assert any(re.fullmatch(r"leveldb_log/_core\..*(so|pyd)", n) for n in package), package
    package_dir = ROOT / "python"
    expected = {
        p.relative_to(package_dir).as_posix()
        for p in (package_dir / "leveldb_log").rglob("*")
        if (p.suffix in {".py", ".pyi"} or p.name == "py.typed") and p.is_file()
    }
    assert "leveldb_log/cli/__init__.py" in expected
    assert expected <= package, sorted(expected - package)
    assert not {n for n in names if n.startswith(("tests/", "csrc/"))}


def source_tree_tests() -> set[str]:
    """What an installed wheel's test run leaves out, as paths under tests/: tests/meta/, and
    the behaviour tests that read the checkout (they mention ROOT or `parent.parent`: the C
    core's tests, the docs' examples and pages)."""
    tests = ROOT / "tests"
    return {"meta"} | {
        p.relative_to(tests).as_posix()
        for p in tests.rglob("test_*.py")
        if p.parent.name != "meta"
        and re.search(r"\bROOT\b|parent\.parent", p.read_text(encoding="utf-8"))
    }


def test_the_license_ships_in_the_sdist_and_the_wheel(built: dict[str, Any]) -> None:
    assert "LICENSE" in sdist_names(built)
    (wheel,) = built["wheels"]
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = z.read(metadata).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert "License-Expression: BSD-3-Clause" in meta.splitlines()
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")


def test_the_build_warns_of_no_deprecated_metadata(built: dict[str, Any]) -> None:
    output = built["result"].stdout + built["result"].stderr
    assert "Building wheel from sdist" in output, tail(built["result"])
    assert "DeprecationWarning" not in output, tail(built["result"])


def test_a_build_without_a_c_compiler_fails_with_one_clear_sentence(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "CC": "/nonexistent/cc"},
    )
    assert result.returncode != 0
    assert "error: no C compiler ('/nonexistent/cc' not found)" in result.stdout + result.stderr
    assert "apt-get install gcc python3-dev" in result.stdout + result.stderr
    assert not list(tmp_path.glob("*.whl"))


def test_cibuildwheel_tests_leave_out_exactly_the_tests_of_the_source_tree() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    commands = re.findall(r"python -m pytest[^\"\n]*", text[text.index("[tool.cibuildwheel]") :])
    whole = [c for c in commands if "--ignore=" in c]
    subsets = [c for c in commands if "--ignore=" not in c]
    assert len(whole) == 2 and len(subsets) == 2, commands  # with and without 3.14t
    skipped = source_tree_tests()
    assert {"meta", "core/test_c_core.py", "docs/test_docs.py"} <= skipped
    for command in whole:
        assert set(re.findall(r"--ignore=tests/(\S+)", command)) == skipped
    for command in subsets:  # macOS and Windows: named files, none of the source tree's
        named = set(re.findall(r"tests/((?:\w+/)*test_\w+\.py)", command))
        assert named and not named & skipped
        assert all((ROOT / "tests" / name).is_file() for name in named)
