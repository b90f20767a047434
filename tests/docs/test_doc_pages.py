"""The documentation's pages hold together: every relative link and anchor in docs/*.md and
README.md resolves, every Python block parses (even one marked not executed), and the API
reference names every public name. No network is needed. tests/docs/test_docs.py runs the
examples themselves.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import leveldb_log
import leveldb_log.leveldb
import pytest

ROOT = Path(__file__).resolve().parents[2]

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
    assert {
        "index.md",
        "api.md",
        "recovery.md",
        "parallel.md",
        "leveldb.md",
        "spark.md",
        "ray.md",
    } <= names


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
