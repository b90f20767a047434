"""Distribution: what `pip install` gets, and the documentation beside it.

`.ci/wheel.sh` copies the source tree, builds an sdist and, from that sdist, a wheel. With
CI set it also installs the wheel into a fresh environment and runs the test suite there
(minutes); without, it stops once both are built (seconds). Either way the tests below
check what the sdist and the wheel hold.

The documentation checks need no network: every relative link and anchor in docs/*.md and
README.md resolves, every Python block parses (even one marked not executed), and the API
reference names every public name. tests/test_docs.py runs the examples themselves.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import leveldb_log
import leveldb_log.leveldb
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".ci" / "wheel.sh"
FULL = bool(os.environ.get("CI"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Runs .ci/wheel.sh once: in full with CI set, else up to the built wheel."""
    out = tmp_path_factory.mktemp("dist")
    command = ["bash", str(SCRIPT), "--out", str(out)] + ([] if FULL else ["--no-test"])
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=3600,
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
    return {p.relative_to(ROOT).as_posix() for p in ROOT.glob(pattern) if p.is_file()}


def test_the_script_builds_an_sdist_and_a_wheel_from_it(built: dict[str, Any]) -> None:
    result = built["result"]
    assert result.returncode == 0, tail(result)
    assert len(built["sdists"]) == 1 and len(built["wheels"]) == 1, tail(result)
    # `python -m build` without --sdist/--wheel builds the wheel from the sdist it made
    assert "Building wheel from sdist" in result.stdout + result.stderr, tail(result)
    if FULL:  # the installed wheel passed the test suite, run outside the source tree
        summary = result.stdout.strip().splitlines()[-1]
        assert " passed" in summary and " failed" not in summary, tail(result)
        assert re.search(r"leveldb_log \S+ from .*/venv/", result.stdout), tail(result)


def test_the_sdist_holds_every_file_the_build_and_the_tests_need(built: dict[str, Any]) -> None:
    needed = (
        tracked("csrc/**/*")
        | tracked("python/leveldb_log/**/*.py")
        | tracked("python/leveldb_log/**/*.pyi")
        | tracked("tests/*.py")
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
    """Test files that reach outside tests/ into the checkout (.ci/wheel.sh's rule)."""
    return {
        p.name
        for p in (ROOT / "tests").glob("test_*.py")
        if re.search(r"\bROOT\b|parent\.parent", p.read_text(encoding="utf-8"))
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
    assert {"test_lint.py", "test_c_core.py", "test_wheel.py"} <= skipped
    for command in whole:
        assert set(re.findall(r"--ignore=tests/(\S+)", command)) == skipped
    for command in subsets:  # macOS and Windows: named files, none of the source tree's
        named = set(re.findall(r"tests/(test_\w+\.py)", command))
        assert named and not named & skipped
        assert all((ROOT / "tests" / name).is_file() for name in named)


# ---------------------------------------------------------------------------
# documentation
# ---------------------------------------------------------------------------

DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [*DOCS, ROOT / "README.md"]
FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*([^)\s]+)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.MULTILINE)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def prose(text: str) -> Iterator[str]:
    """The lines of a Markdown page outside fenced code blocks, without inline code."""
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            yield re.sub(r"`[^`]*`", "``", line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        if fenced:
            continue
        found.update(HTML_ANCHOR.findall(line))
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2))
            name, n = base, 0
            while name in found:  # GitHub numbers repeated headings: name, name-1, ...
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def links(page: Path) -> list[str]:
    lines = list(prose(page.read_text(encoding="utf-8")))
    text = "\n".join(lines)
    return LINK.findall(text) + IMAGE.findall(text) + REFERENCE.findall(text)


def test_the_user_guide_exists_with_its_pages() -> None:
    names = {p.name for p in DOCS}
    assert {"index.md", "api.md", "recovery.md", "parallel.md", "leveldb.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ... (not checked)
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no such anchor in {where.name}")
        elif not str(where).startswith(str(ROOT)):
            broken.append(f"{target}: outside the repository")
    assert not broken, broken


def test_the_link_checker_sees_links_and_anchors(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "# Quick start: `Reader` & more\n## Quick start: `Reader` & more\n"
        "[a](other.md#x) [b](#quick-start-reader--more-1) ![i](img.png)\n"
        "```\n[not](a-link.md)\n```\n[r]: ref.md\n",
        encoding="utf-8",
    )
    assert links(page) == ["other.md#x", "#quick-start-reader--more-1", "img.png", "ref.md"]
    assert anchors(page) == {"quick-start-reader--more", "quick-start-reader--more-1"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_python_block_in_the_docs_parses(page: Path) -> None:
    blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M)
    for block in blocks:
        ast.parse(block, filename=page.name)


def test_the_api_reference_names_every_public_name() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    public = set(leveldb_log.__all__) | {"splits"} | set(leveldb_log.leveldb.__all__)
    missing = {name for name in public if f"`{name}" not in text}
    assert not missing, sorted(missing)
