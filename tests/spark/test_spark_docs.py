"""docs/spark.md's examples run and print what the page shows (tests/docs/test_docs.py's
rules; the page starts Spark, so it runs here, with the engine tests)."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs.test_docs import ROOT, check_page
from support.engines import spark_missing

pytestmark = pytest.mark.slow


def test_every_example_of_docs_spark_md_runs_and_prints_what_it_shows(tmp_path: Path) -> None:
    reason = spark_missing()
    if reason is not None:
        pytest.skip(reason)
    check_page(ROOT / "docs" / "spark.md", tmp_path)
