"""read_logs and write_logs on a local Ray cluster of two nodes (ray.cluster_utils.Cluster):
the tasks run in another node's workers, as on a real cluster, and find the package and the
files there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import BLOCK_SIZE

pytestmark = pytest.mark.slow

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'leveldb-log[ray]')")

from leveldb_log.ray import read_logs, write_logs  # noqa: E402


def a_bare_init_elsewhere_joins() -> str | None:
    """The cluster that a bare ``ray.init()`` in another process of this machine would join
    (None: it starts its own instance): the tests and examples that run beside a cluster
    test (other xdist workers) must not join it."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_TMPDIR", "RAY_ADDRESS")}
    asks = (
        "from ray._private.services import get_ray_address_from_environment as found\n"
        "print(found(None, None))"
    )
    out = subprocess.run(
        [sys.executable, "-c", asks], env=env, capture_output=True, text=True, check=True
    )
    answer = out.stdout.strip()
    return None if answer == "None" else answer


# read_logs passes ray_remote_args on to Ray's read_datasource, which deprecates it for
# named remote parameters: the library's to follow, not this test's.
@pytest.mark.filterwarnings("ignore:`ray_remote_args` is deprecated")
def test_reading_and_writing_on_the_other_node(ray_cluster: Any, tmp_path: Path) -> None:
    assert a_bare_init_elsewhere_joins() is None
    records = [b"%05d" % i * (i % 300 + 1) for i in range(3000)]
    with leveldb_log.Writer(tmp_path / "in.log") as w:
        w.write_many(records)
    other = {"resources": {"other_node": 1}}

    def node_of_task(batch: dict[str, Any]) -> dict[str, Any]:
        """The batch with the node that ran the task (a closure: sent by value)."""
        node = ray.get_runtime_context().get_node_id()
        return {**batch, "node": [node] * len(batch["data"])}

    ds = read_logs(str(tmp_path / "in.log"), blocksize=BLOCK_SIZE, ray_remote_args=other)
    rows = ds.map_batches(node_of_task, **other).take_all()
    assert sorted(r["data"] for r in rows) == sorted(records)
    (worker,) = [n for n in ray_cluster.worker_nodes]
    assert {r["node"] for r in rows} == {worker.node_id}
    logs = write_logs(ds, tmp_path / "out", log_size=64 << 10, ray_remote_args=other)
    assert len(logs) > 1
    back = []
    for log in logs:
        with leveldb_log.Reader(log, recovery="absolute") as r:
            back += list(r)
    assert sorted(back) == sorted(records)
    assert not (tmp_path / "out" / "_temporary").exists()
