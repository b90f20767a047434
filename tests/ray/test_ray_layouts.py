"""A path means to read_logs what it means to Ray's own ray.data.read_text: each layout is
written twice, as logs and as text files of the same names and record counts, and both
readers must read the same files, give the same partition columns, and count the same rows
per partition; with the options Ray's file readers take."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.layouts import write_layout

pytestmark = pytest.mark.slow

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'leveldb-log[ray]')")

from leveldb_log.ray import read_logs  # noqa: E402

LAYOUTS: dict[str, dict[str, int]] = {
    "nested": {"a.log": 2, "sub/b.log": 3, "sub/deeper/c.log": 1},
    "hidden": {"a.log": 2, "_b.log": 1, ".c.log": 1, "sub/_d.log": 2, "_tmp/e.log": 1},
    "hive": {"date=2026-11-01/a.log": 2, "date=2026-11-02/h=1/b.log": 3, "x.txt": 1},
}


def shape(rows: list[dict[str, Any]], root: Path) -> tuple[Any, ...]:
    """Files read (relative to their folder), the extra columns, and rows per file."""
    extra = sorted({k for r in rows for k in r} - {"offset", "data", "text", "path"})
    per_file = Counter(
        (os.path.relpath(r["path"], root).split(os.sep, 1)[1], tuple(r.get(k) for k in extra))
        for r in rows
    )
    return extra, sorted(per_file.items())


def both(root: Path, **options: Any) -> tuple[Any, Any]:
    logs, text = root / "logs", root / "text"
    ours = read_logs(str(logs), include_paths=True, **options).take_all()
    theirs = ray.data.read_text(str(text), include_paths=True, **options).take_all()
    return shape(ours, root), shape(theirs, root)


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_a_layout_reads_as_read_text_reads_it(ray_local: Any, tmp_path: Path, name: str) -> None:
    write_layout(tmp_path, LAYOUTS[name])
    ours, theirs = both(tmp_path)
    assert ours == theirs


def test_partitioning_filters_and_extensions_agree_with_read_text(
    ray_local: Any, tmp_path: Path
) -> None:
    from ray.data.datasource import Partitioning, PathPartitionFilter

    write_layout(tmp_path, LAYOUTS["hive"])
    hive = Partitioning("hive")
    only_first = PathPartitionFilter.of(lambda d: d.get("date") == "2026-11-01", style="hive")
    for options in [
        {"partitioning": hive},
        {"partitioning": hive, "partition_filter": only_first},
        {"file_extensions": ["log"]},
    ]:
        ours, theirs = both(tmp_path, **options)
        assert ours == theirs, options


def test_missing_paths_and_an_empty_folder_behave_as_read_text(
    ray_local: Any, tmp_path: Path
) -> None:
    logs, text = write_layout(tmp_path, LAYOUTS["nested"])
    ours = read_logs([str(logs), str(tmp_path / "nope")], ignore_missing_paths=True)
    theirs = ray.data.read_text([str(text), str(tmp_path / "nope")], ignore_missing_paths=True)
    assert ours.count() == theirs.count() == 6
    (tmp_path / "empty").mkdir()
    outcomes = []
    for read in (read_logs, ray.data.read_text):
        try:
            outcomes.append(("rows", read(str(tmp_path / "empty")).count()))
        except Exception as e:  # the two must fail alike
            outcomes.append(("error", type(e).__name__))
    assert outcomes[0] == outcomes[1]
