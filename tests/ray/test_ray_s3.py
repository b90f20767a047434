"""read_logs and write_logs with URLs and storage_options: S3 through s3fs, against moto's
server on 127.0.0.1, which the workers reach as the driver does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.s3 import moto_s3

pytestmark = pytest.mark.slow

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'leveldb-log[ray]')")
pa = pytest.importorskip("pyarrow")

from leveldb_log.ray import read_logs, write_logs  # noqa: E402


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, Any]]:
    """A moto S3 server on 127.0.0.1 with a bucket "logs"; yields the storage options."""
    with moto_s3() as options:
        yield options


def keys(s3: dict[str, Any], prefix: str) -> list[str]:
    import fsspec

    fs = fsspec.filesystem("s3", **s3)
    fs.invalidate_cache()
    return sorted(fs.find(f"logs/{prefix}"))


def test_write_then_read_on_s3(ray_local: Any, s3: dict[str, Any]) -> None:
    records = [b"%d" % i * (i % 500 + 1) for i in range(3000)]
    ds = ray.data.from_arrow(
        [
            pa.table({"data": pa.array(records[i : i + 300], pa.binary())})
            for i in range(0, 3000, 300)
        ]
    )
    logs = write_logs(ds, "s3://logs/out", storage_options=s3, log_size=256 << 10)
    assert len(logs) > 1
    assert all(log.startswith("s3://logs/out/part-") for log in logs)
    assert keys(s3, "out") == sorted(log[len("s3://") :] for log in logs)  # no _temporary left
    back = read_logs("s3://logs/out", storage_options=s3, include_paths=True, blocksize=32768)
    rows = back.take_all()
    assert sorted(r["data"] for r in rows) == sorted(records)
    assert {r["path"] for r in rows} == set(logs)


def test_a_failed_write_to_s3_leaves_no_object(ray_local: Any, s3: dict[str, Any]) -> None:
    data: list[bytes | None] = [b"x" * 100] * 1000
    data[900] = None
    ds = ray.data.from_arrow(
        [pa.table({"data": pa.array(data[i : i + 100], pa.binary())}) for i in range(0, 1000, 100)]
    )
    with pytest.raises(Exception, match=r"column 'data' has a null at row \d+ of the partition"):
        write_logs(ds, "s3://logs/failed", storage_options=s3, log_size=4 << 10)
    assert keys(s3, "failed") == []
