"""docs/spark.md's cluster recipe, run as the page writes it, on a standalone cluster on
127.0.0.1 (a master and a worker started with ``spark-class``).

The recipe's blocks are the page's blocks marked ``<!-- not executed: the cluster recipe,
... -->`` (tests/docs/test_docs.py leaves them out and counts them): the shell blocks run
under bash in one folder, with this test's Python first on PATH (the reader's environment of
Setup), and the python block is the script they submit. Only the two values a reader fills in
are replaced: the path of leveldb-log (the wheel that CI built, which .ci/run names in
LEVELDB_LOG_DIST, else this checkout) and the master's URL.

The daemons run in an environment where no Python can import leveldb_log (no virtual
environment on PATH, no PYTHONPATH), so the read works only if the packed environment reaches
the executors; the job reports where its task's Python and leveldb_log came from.
"""

from __future__ import annotations

import ast
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import leveldb_log
import pyarrow.parquet as pq
import pytest
from docs.test_docs import ROOT, fenced_blocks
from support.engines import spark_missing
from support.spark_cluster import TIMEOUT, standalone_cluster

pytestmark = pytest.mark.slow

MARK = "<!-- not executed: the cluster recipe, which tests/spark/test_recipe.py runs -->"
PACKAGE = "/path/to/leveldb-log"  # the page's stand-in for a checkout or a wheel
MASTER = "spark://HOST:7077"  # the page's stand-in for the master's URL


def recipe() -> list[tuple[str, str]]:
    """The marked blocks of docs/spark.md, in order: (language, body)."""
    text = (ROOT / "docs" / "spark.md").read_text(encoding="utf-8")
    blocks = []
    for lang, _, body, before in fenced_blocks(text):
        between = [line.strip() for line in before if line.strip()]
        if between and between[-1] == MARK:
            blocks.append((lang, "\n".join(body) + "\n"))
    return blocks


def replace_once(text: str, old: str, new: str) -> str:
    """text with its one occurrence of old replaced by new."""
    assert text.count(old) == 1, f"{old!r} is not in the recipe exactly once:\n{text}"
    return text.replace(old, new)


def package() -> str:
    """What the recipe installs as leveldb-log: the wheel of LEVELDB_LOG_DIST (CI's build), or
    this checkout."""
    dist = os.environ.get("LEVELDB_LOG_DIST")
    if not dist:
        return str(ROOT)
    (wheel,) = Path(dist).glob("leveldb_log-*.whl")
    return str(wheel)


def without_leveldb_log(env: dict[str, str]) -> dict[str, str]:
    """env without the ways this test's Python finds leveldb_log: its virtual environment's
    bin/ on PATH, VIRTUAL_ENV, PYTHONPATH, and the PYSPARK_* interpreters."""
    own = os.path.dirname(sys.executable)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != own]
    drop = {"VIRTUAL_ENV", "PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"}
    return {**{k: v for k, v in env.items() if k not in drop}, "PATH": os.pathsep.join(path)}


def imports_leveldb_log(python: str, env: dict[str, str]) -> bool:
    """Whether `python -c "import leveldb_log"` succeeds in env."""
    run = subprocess.run([python, "-c", "import leveldb_log"], env=env, capture_output=True)
    return run.returncode == 0


def bash(script: str, cwd: Path, env: dict[str, str]) -> str:
    """Runs script under bash (stopping at the first failing command): its standard output.

    Standard error (Spark's log) is kept apart: written to the same pipe, its lines land in the
    middle of a printed line that has not reached its newline yet.
    """
    run = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + script],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=TIMEOUT * 2,
        check=False,
    )
    output = run.stdout.decode(errors="replace")
    errors = run.stderr.decode(errors="replace")
    assert run.returncode == 0, f"exit {run.returncode}:\n{script}\n{output}\n{errors[-6000:]}"
    return output


def write_logs(folder: Path) -> list[tuple[str, int, bytes]]:
    """Three logs in folder, records across blocks; their (path, offset, data) rows."""
    folder.mkdir()
    rows = []
    for n in (1, 2, 3):
        path = folder / f"00000{n}.log"
        with leveldb_log.Writer(path) as w:
            w.write_many(b"log %d record %d. " % (n, i) * (1 + i % 300) for i in range(600))
        with leveldb_log.Reader(path) as r:
            rows += [(str(path), r.last_record_offset, record) for record in r]
    return rows


def test_the_cluster_recipe_of_docs_spark_md_runs_as_written(tmp_path: Path) -> None:
    reason = spark_missing()
    if reason is not None:
        pytest.skip(reason)
    blocks = recipe()
    assert [lang for lang, _ in blocks] == ["sh", "python", "sh"]
    (_, pack), (_, script), (_, submit) = blocks
    name = re.match(r"# (\w+\.py): ", script)
    assert name, script.splitlines()[0]
    # The user's shell: the Python of Setup (this one) first on PATH.
    user = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep}
    user["PATH"] += os.environ.get("PATH", "")
    user["SPARK_LOCAL_IP"] = "127.0.0.1"
    bare = without_leveldb_log(dict(os.environ))
    folder = (tmp_path / "submit").resolve()
    folder.mkdir()
    cluster_folder = (tmp_path / "cluster").resolve()
    cluster_folder.mkdir()
    with (
        standalone_cluster(cluster_folder, bare, workers=1, cores=2) as cluster,
        concurrent.futures.ThreadPoolExecutor(1) as pool,
    ):
        master = pool.submit(cluster.ready)  # the JVMs start while the environment is made
        # No Python the daemons could start imports leveldb_log: not python3 from their PATH,
        # nor the interpreter that virtual environments (the packed one too) link to.
        python3 = shutil.which("python3", path=bare["PATH"])
        for python in {python3, getattr(sys, "_base_executable", sys.executable)} - {None}:
            assert python is not None
            assert not imports_leveldb_log(python, bare), python
        rows = write_logs(folder / "logs")
        (folder / name.group(1)).write_text(script, encoding="utf-8")
        bash(replace_once(pack, PACKAGE, package()), folder, user)
        output = bash(replace_once(submit, MASTER, master.result()), folder, user)
    table = pq.read_table(folder / "table").to_pylist()
    assert sorted((r["path"], r["offset"], r["data"]) for r in table) == sorted(rows)
    assert re.search(rf"^{len(rows)} records$", output, re.MULTILINE), output[-6000:]
    origin = re.search(r"^\('.*'\)$", output, re.MULTILINE)
    assert origin, output[-6000:]
    executable, module = ast.literal_eval(origin.group(0))
    # An executor's folder is work1/<application>/<executor id>; the archive is unpacked there.
    executor = re.escape(str(cluster_folder / "work1")) + r"/app-[\d-]+/\d+"
    assert re.fullmatch(executor + "/environment/bin/python", executable), executable
    environment = str(Path(executable).parents[1])
    assert module.startswith(environment + "/lib/"), module
    # pytest keeps the folders of the last runs: not these 500 MB of environments.
    shutil.rmtree(folder / "environment")
    shutil.rmtree(cluster_folder / "work1")
    (folder / "environment.tar.gz").unlink()
