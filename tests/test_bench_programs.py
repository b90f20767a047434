"""The C programs of bench/ that measure the machine rather than the code build cleanly
with warnings as errors and run (their figures are in bench/README.md)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the benchmark is Linux's")
def test_the_fresh_pages_benchmark_builds_cleanly_and_runs(tmp_path: Path) -> None:
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build bench/fresh_pages.c"
    exe = tmp_path / "fresh_pages"
    cmd = [gcc, "-O2", "-Wall", "-Wextra", "-Werror", "bench/fresh_pages.c", "-o", str(exe)]
    subprocess.run(cmd, cwd=ROOT, check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    rows = re.findall(r"^(.+?) +[\d.]+ ms per 32 MiB, ([\d.]+) ns a byte$", out, re.M)
    assert len(rows) == 4 and all(float(ns) > 0 for _, ns in rows), out
