"""The Ray Data classes behind leveldb_log.ray: a Datasource and a Datasink.

They subclass Ray's, so this module imports Ray; leveldb_log.ray imports it only when
read_logs or write_logs is called. Each class only hands its work to leveldb_log.ray.
"""

from __future__ import annotations

from typing import Any

import ray.data
from ray.data.datasource import Datasink, Datasource

from leveldb_log import ray as _ray
from leveldb_log.dask import _Part


class LogDatasource(Datasource):
    """The ranges of read_logs: one read task each."""

    def __init__(self, parts: list[_Part], plan: Any) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._parts = parts
        self._plan = plan
        self._sizes = [_ray._range_size(part) for part in parts]  # asked for more than once

    def get_name(self) -> str:
        return "LevelDBLog"

    def estimate_inmemory_data_size(self) -> int:
        """About the bytes of log: a record's 7-byte header becomes its 16 bytes of offsets."""
        return sum(self._sizes)

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: int | None = None,
        data_context: ray.data.DataContext | None = None,
    ) -> list[Any]:
        """One task per range, whatever parallelism asks: the ranges are the plan."""
        return _ray._read_tasks(self._parts, self._sizes, self._plan, per_task_row_limit)


class LogDatasink(Datasink[Any]):
    """The logs of write_logs: one per write task, renamed into place on completion."""

    def __init__(self, plan: Any) -> None:
        self._plan = plan
        self.written: list[str] = []

    def get_name(self) -> str:
        return "LevelDBLog"

    @property
    def min_bytes_per_write(self) -> int:
        """Ray gathers about this many bytes of rows for each write task: one log each."""
        size: int = self._plan.log_size
        return size

    def write(self, blocks: Any, ctx: Any) -> Any:
        return _ray._write_task(self._plan, blocks, ctx.task_idx)

    def on_write_complete(self, write_result: Any) -> None:
        done = [w for w in write_result.write_returns if w is not None]
        self.written = _ray._commit(self._plan, done)

    def on_write_failed(self, error: Exception) -> None:
        _ray._abort(self._plan)
