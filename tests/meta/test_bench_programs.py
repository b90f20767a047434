"""The benchmarks keep working: the C programs of bench/ that measure the machine rather
than the code build cleanly with warnings as errors and run (their figures are in
bench/README.md), and the Python suite (`python -m bench`) runs every case end to end on a
little data. Figures are not judged: no timing is asserted anywhere in the tests."""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import leveldb_log
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.meta]

ROOT = Path(__file__).resolve().parents[2]


def build_and_run(source: str, tmp_path: Path) -> str:
    """Builds bench/<source> with warnings as errors, runs it, and returns what it printed."""
    gcc = shutil.which("gcc")
    assert gcc, f"gcc is needed to build bench/{source}"
    exe = tmp_path / Path(source).stem
    cmd = [gcc, "-O2", "-Wall", "-Wextra", "-Werror", f"bench/{source}", "-o", str(exe)]
    subprocess.run(cmd, cwd=ROOT, check=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the benchmark is Linux's")
def test_the_fresh_pages_benchmark_builds_cleanly_and_runs(tmp_path: Path) -> None:
    out = build_and_run("fresh_pages.c", tmp_path)
    rows = re.findall(r"^(.+?) +[\d.]+ ms per 32 MiB, ([\d.]+) ns a byte$", out, re.M)
    assert len(rows) == 4 and all(float(ns) > 0 for _, ns in rows), out


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="rep movsb is x86's")
def test_the_copy_window_benchmark_builds_cleanly_and_runs(tmp_path: Path) -> None:
    out = build_and_run("copy_window.c", tmp_path)
    rows = re.findall(r"^ *(\d+): +([\d.]+) +([\d.]+)$", out, re.M)
    distances = [int(d) for d, _, _ in rows]
    assert distances[:41] == list(range(41)) and distances[-1] == 4095, out
    assert all(float(a) > 0 and float(b) > 0 for _, a, b in rows), out


#: What one smoke run must show: a case of each kind, and the targets of the issues.
SMOKE_OPS = {"crc32c", "write", "read"}
SMOKE_CASES = {
    "read/100 B/arrow",
    "write/100 B/arrow",
    "read/1 MiB/arrow",
    "read/entities/datastore",
}


def test_the_bench_suite_runs_every_case_on_a_little_data(tmp_path: Path) -> None:
    out_json = tmp_path / "bench.json"
    cmd = [sys.executable, "-m", "bench", "--smoke", "--quiet", "--json", str(out_json)]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    first = run.stdout.splitlines()[0]
    assert first.startswith("CPU: "), first  # the CPU before anything is measured
    chosen = leveldb_log.crc32c_implementation
    assert f"crc32c_implementation = '{chosen}'" in run.stdout
    doc = json.loads(out_json.read_text())
    assert doc["config"]["rounds"] == 1 and doc["config"]["max_bytes"] == 2 << 20
    keys = {c["key"] for c in doc["cases"]}
    assert {c["op"] for c in doc["cases"]} == SMOKE_OPS and SMOKE_CASES <= keys, keys
    # every path this CPU runs, against the packages, at every size
    paths = {c["crc32c_path"] for c in doc["cases"] if c["op"] == "crc32c"}
    assert paths == set(leveldb_log.crc32c_implementations), paths
    assert all(c["ours_vs_faster_package"] > 0 for c in doc["cases"] if c["op"] == "crc32c")
    assert len(doc["peak_memory"]) >= 8, doc["peak_memory"]
    statuses = {t["target"]: t["status"] for t in doc["targets"]}
    assert set(statuses.values()) <= {"PASS", "MISS", "info", "n/a"}, statuses
    judged = [t for t, st in statuses.items() if st in ("PASS", "MISS")]
    assert any("Reader(path) vs readinto" in t for t in judged), statuses
    assert any("write_many(Arrow array)" in t for t in judged), statuses
    assert sum("vs ndb codec + values" in t for t in judged) == 2, statuses
    # issue 37: batches from a file at each size, on the chosen path and the forced ones
    for size in ("100 B", "4 KiB", "1 MiB"):
        assert f"read/{size}/arrow-file/{chosen}" in keys, keys
    assert sum("from a warm file, iter_batches vs" in t for t in judged) == 5, statuses
    assert any("for loop vs io.BytesIO line iteration" in t for t in judged), statuses


def test_the_durable_bench_runs_every_contender_at_every_thread_count(tmp_path: Path) -> None:
    out_json = tmp_path / "durable.json"
    cmd = [sys.executable, "-m", "bench", "--smoke", "--quiet", "--only", "durable"]
    run = subprocess.run(
        [*cmd, "--json", str(out_json)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.startswith("CPU: ")
    assert "file system: " in run.stdout and "fdatasync: " in run.stdout
    row = json.loads(out_json.read_text())["durable"]
    assert {"ours", "floor", "sqlite3"} <= set(row["contenders"])
    assert set(row["rates"]) == {f"{c}/{n}" for c in row["contenders"] for n in (1, 8, 64)}
    assert all(rate > 0 for rate in row["rates"].values()), row["rates"]
    assert len(row["targets"]) == 4 and row["latency_us"]["fdatasync"] > 0
    # Every one of ours's calls waited for an fdatasync that covered it: at least one record
    # a flush, and one thread's calls never share one.
    grouped = row["records_per_fdatasync"]
    assert set(grouped) == {"ours/1", "ours/8", "ours/64"}
    assert grouped["ours/1"] == 1.0 and all(g >= 1.0 for g in grouped.values()), grouped


def test_the_group_commit_loop_runs_and_counts_records_per_flush(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "bench.group_commit", "--threads", "1,3", "--seconds", "0.05"]
    run = subprocess.run(
        [*cmd, "--rounds", "1", "--dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.startswith("CPU: ") and "fdatasync" in run.stdout
    rows = re.findall(r"^ +(\d+) +([\d,]+) +([\d,]+) +([\d.]+)$", run.stdout, re.M)
    assert [int(n) for n, *_ in rows] == [1, 3], run.stdout
    # One thread's calls never share a flush; three threads' share one or more a flush.
    assert float(rows[0][3]) == 1.0 and float(rows[1][3]) >= 1.0, run.stdout
