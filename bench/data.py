"""The data the cases work on: records, encoded logs and warm page-cache files, made once
(before timing) and shared by the contenders of a case."""

from __future__ import annotations

import io
import random
from pathlib import Path

import leveldb_log

from bench.baselines import tfrecord_bytes
from bench.harness import KiB, MiB

RECORD_SIZES = (100, 4 * KiB, MiB)  # of the write and read cases


class Data:
    """Records, encoded logs and files, made once and shared by the contenders."""

    def __init__(self, tmp: Path) -> None:
        """Files go to tmp (a directory on /tmp, so in the page cache)."""
        self.tmp = tmp
        self._records: dict[int, list[bytes]] = {}
        self._logs: dict[tuple[int, int], bytes] = {}
        self._files: dict[tuple[str, int, int], Path] = {}
        self._scratch: set[Path] = set()

    def records(self, size: int, n: int) -> list[bytes]:
        """n distinct random records of size bytes (the same ones every time)."""
        have = self._records.get(size)
        if have is None or len(have) < n:
            blob = random.Random(size).randbytes(size * n)
            have = [blob[i : i + size] for i in range(0, size * n, size)]
            self._records[size] = have
        return have[:n]

    def log(self, size: int, n: int) -> bytes:
        """Those records written as a log by leveldb_log.Writer."""
        key = (size, n)
        if key not in self._logs:
            buf = io.BytesIO()
            with leveldb_log.Writer(buf) as w:
                w.write_many(self.records(size, n))
            self._logs[key] = buf.getvalue()
        return self._logs[key]

    def file(self, kind: str, size: int, n: int) -> Path:
        """A warm page-cache file holding n records: kind "log" (ours) or "tfrecord"."""
        key = (kind, size, n)
        if key not in self._files:
            path = self.tmp / f"{kind}-{size}-{n}"
            if kind == "log":
                path.write_bytes(self.log(size, n))
            else:
                path.write_bytes(tfrecord_bytes(self.records(size, n)))
            with open(path, "rb") as f:  # warm the page cache
                while f.read(MiB):
                    pass
            self._files[key] = path
        return self._files[key]

    def scratch(self, path: Path) -> Path:
        """A file a contender writes, removed by forget()."""
        self._scratch.add(path)
        return path

    def forget(self, keep_records: bool = False) -> None:
        """Remove the files and drop the logs (and the records, unless keep_records)."""
        for path in [*self._files.values(), *self._scratch]:
            path.unlink(missing_ok=True)
        self._files.clear()
        self._scratch.clear()
        self._logs.clear()
        if not keep_records:
            self._records.clear()


def chunks(data: bytes, size: int) -> list[memoryview]:
    """data cut into views of size bytes (the last one shorter)."""
    view = memoryview(data)
    return [view[i : i + size] for i in range(0, len(data), size)]
