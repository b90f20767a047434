"""The Ray Data classes behind leveldb_log.ray: a Datasource and a Datasink.

They subclass Ray's, so this module imports Ray; leveldb_log.ray imports it only when
read_logs or write_logs is called. Each class only hands its work to leveldb_log.ray.
"""

from __future__ import annotations

from typing import Any

import ray.data
from ray.data.datasource import Datasource

from leveldb_log import ray as _ray
from leveldb_log.dask import _Part


class LogDatasource(Datasource):
    """The ranges of read_logs: one read task each."""

    def __init__(self, parts: list[_Part], plan: Any) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._parts = parts
        self._plan = plan

    def get_name(self) -> str:
        return "LevelDBLog"

    def estimate_inmemory_data_size(self) -> int:
        """About the bytes of log: a record's 7-byte header becomes its 16 bytes of offsets."""
        return sum(_ray._range_size(part) for part in self._parts)

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: int | None = None,
        data_context: ray.data.DataContext | None = None,
    ) -> list[Any]:
        """One task per range, whatever parallelism asks: the ranges are the plan."""
        return _ray._read_tasks(self._parts, self._plan, per_task_row_limit)
