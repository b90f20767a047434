"""Ray for the tests of leveldb_log.ray: one local instance per test process, on loopback.

The instance is small (2 CPUs, a small object store, no dashboard) and offline (no usage
statistics, no token to write in the home folder). It starts when a test first asks for the
``ray_local`` fixture and stops at the end of the process; a test that needs its own
cluster (test_ray_cluster.py) stops it, and the next test that asks starts it again. The
tests skip, saying why, only where Ray cannot be installed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from support.engines import ray_missing

#: Set before Ray starts: its processes read them. Ray takes a Linux machine for a cluster
#: node and listens on every interface; told it is not one, it listens on 127.0.0.1 only.
RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_DEDUP_LOGS": "0",
    "RAY_enable_metrics_collection": "0",
}
# Ray reads some of them when it is imported, so they are set before anything imports it.
os.environ.update(RAY_ENV)


def quiet_data_context() -> None:
    """No progress bars in the tests' output."""
    import ray.data

    ray.data.DataContext.get_current().enable_progress_bars = False


def start_local() -> None:
    """A local Ray instance for this process, unless one is running."""
    import ray

    if not ray.is_initialized():
        ray.init(
            address="local",  # never another test's cluster (see ray_cluster)
            num_cpus=2,
            include_dashboard=False,
            object_store_memory=200 << 20,
            configure_logging=False,
        )
    quiet_data_context()


@pytest.fixture(scope="session")
def _ray_session() -> Iterator[None]:
    """Stops whatever Ray instance this process left running, at its end."""
    reason = ray_missing()
    if reason is not None:
        pytest.skip(reason)
    yield
    import ray

    ray.shutdown()


@pytest.fixture
def ray_local(_ray_session: None) -> Any:
    """The process's local Ray instance (started on first use): the ``ray`` module."""
    import ray

    start_local()
    return ray


@pytest.fixture
def ray_cluster(_ray_session: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A local Ray cluster of two nodes, as separate raylets with their own workers: a head
    with 1 CPU and a node with 1 CPU and the custom resource ``other_node``, so that a task
    asking for it runs there. The process's local instance is stopped first (a driver
    joins one cluster at a time); the next test that wants it starts it again.

    The head writes its address where a bare ``ray.init()`` on this machine looks for a
    cluster to join (``ray_current_cluster`` in Ray's temporary folder). So that the tests and
    examples running beside it in other processes start their own instance, as they would
    on a machine with no cluster, the cluster gets a temporary folder of its own. It is
    short: Ray's socket paths must fit in 107 bytes."""
    import ray
    from ray.cluster_utils import Cluster

    ray.shutdown()
    own = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    monkeypatch.setenv("RAY_TMPDIR", own)
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False},
    )
    try:
        cluster.add_node(num_cpus=1, resources={"other_node": 1})
        cluster.wait_for_nodes()
        cluster.connect()
        quiet_data_context()
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(own, ignore_errors=True)
