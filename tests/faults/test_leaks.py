"""Leak checks: thousands of open / write / iterate / close cycles, error paths included.

Each scenario runs a warm-up, then many more cycles, and checks (support.leaks) that neither
the allocations Python tracks (tracemalloc: Python objects and PyMem buffers such as the
writer's buffer) nor malloc's (the C core's reader state and record buffer, the reader's
aligned block) nor the mappings grow. One object leaked per cycle would be thousands of them.
"""

from __future__ import annotations

import errno
import io
import os
import pickle
from collections.abc import Callable
from pathlib import Path

import leveldb_log
import pytest
from support.leaks import assert_no_leak

B = leveldb_log.BLOCK_SIZE
BIG = bytes(range(256)) * 400  # 102400 bytes: four fragments, encoded without the GIL
RECORDS = [b"", b"small", BIG, b"x" * 32761]


def _encode(records: list[bytes]) -> bytes:
    out = io.BytesIO()
    with leveldb_log.Writer(out) as w:
        w.write_many(records)
    return out.getvalue()


CLEAN = _encode(RECORDS)
CORRUPT = bytearray(CLEAN)
CORRUPT[B + 100] ^= 0xFF  # a checksum mismatch in the second block
CORRUPT = bytes(CORRUPT)
TORN = CLEAN[:-5]


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    path = tmp_path / "log"
    path.write_bytes(CLEAN)
    return path


def test_no_leak_writing_and_reading_a_path(tmp_path: Path) -> None:
    path = tmp_path / "cycle.log"

    def cycle() -> None:
        with leveldb_log.Writer(path, buffering=0) as w:
            w.write_many(RECORDS)
            w.flush()
            w.position  # noqa: B018
        with leveldb_log.Writer(path, "a") as w:
            w.write(b"appended")
        with leveldb_log.Reader(path) as r:
            assert sum(1 for _ in r) == len(RECORDS) + 1
            r.position  # noqa: B018

    assert_no_leak(cycle, 2000, also_ignoring=__file__)


def test_no_leak_writing_and_reading_file_objects_and_buffers() -> None:
    def cycle() -> None:
        out = io.BytesIO()
        w = leveldb_log.Writer(out, buffering=-1)
        for rec in RECORDS:
            w.write(rec)
        w.close()
        data = out.getvalue()
        assert len(list(leveldb_log.Reader(io.BytesIO(data)))) == len(RECORDS)
        assert len(list(leveldb_log.Reader(memoryview(data)))) == len(RECORDS)
        assert len(list(leveldb_log.Reader(bytearray(data), start=B, end=2 * B))) == 0
        r = leveldb_log.Reader(data)
        next(r)  # abandoned in the middle, never closed
        del r

    assert_no_leak(cycle, 3000, also_ignoring=__file__)


def test_no_leak_appending_to_torn_logs(tmp_path: Path) -> None:
    path = tmp_path / "torn.log"

    def cycle() -> None:
        path.write_bytes(TORN + bytes(100))
        with leveldb_log.Writer(path, "a") as w:
            w.write(b"after")

    assert_no_leak(cycle, 2000, also_ignoring=__file__)


def _raises(exc: type[BaseException], fn: Callable[[], object]) -> None:
    try:
        fn()
    except exc:
        return
    raise AssertionError(f"{fn} did not raise {exc.__name__}")


def test_no_leak_on_bad_arguments_and_closed_objects(tmp_path: Path, log_path: Path) -> None:
    missing = tmp_path / "missing" / "log"

    def cycle() -> None:
        _raises(TypeError, lambda: leveldb_log.Writer(12345))
        _raises(ValueError, lambda: leveldb_log.Writer(log_path, "q"))
        _raises(ValueError, lambda: leveldb_log.Writer(log_path, buffering=-5))
        _raises(FileNotFoundError, lambda: leveldb_log.Writer(missing))
        _raises(FileExistsError, lambda: leveldb_log.Writer(log_path, "x"))
        _raises(TypeError, lambda: leveldb_log.Reader(12345))
        _raises(ValueError, lambda: leveldb_log.Reader(CLEAN, recovery="bogus"))
        _raises(ValueError, lambda: leveldb_log.Reader(CLEAN, start=-1))
        _raises(TypeError, lambda: leveldb_log.Reader(CLEAN, on_corruption=5))
        _raises(FileNotFoundError, lambda: leveldb_log.Reader(missing))
        w = leveldb_log.Writer(io.BytesIO())
        _raises(TypeError, lambda: w.write(12345))
        _raises(TypeError, lambda: w.write_many([b"ok", "not bytes"]))
        _raises(ZeroDivisionError, lambda: w.write_many(1 // 0 for _ in range(1)))
        _raises(TypeError, lambda: pickle.dumps(w))
        w.close()
        _raises(ValueError, lambda: w.write(b"x"))
        _raises(ValueError, w.flush)
        r = leveldb_log.Reader(log_path)
        _raises(TypeError, lambda: pickle.dumps(leveldb_log.Reader(CLEAN)))
        r.close()
        _raises(ValueError, lambda: next(r))
        _raises(ValueError, lambda: leveldb_log.crc32c(b"x", 1 << 40))

    assert_no_leak(cycle, 2000, also_ignoring=__file__)


class Boom(Exception):
    pass


def test_no_leak_on_corruption_in_every_recovery_mode() -> None:
    def raising_callback(c: object) -> None:
        raise Boom(c)

    def cycle() -> None:
        seen: list[object] = []
        assert len(list(leveldb_log.Reader(CORRUPT, on_corruption=seen.append))) < len(RECORDS)
        assert seen
        _raises(
            leveldb_log.CorruptionError,
            lambda: list(leveldb_log.Reader(CORRUPT, recovery="absolute")),
        )
        _raises(
            leveldb_log.CorruptionError,
            lambda: list(leveldb_log.Reader(CORRUPT, recovery="tolerate_tail")),
        )
        with pytest.warns(leveldb_log.CorruptionWarning, match="reading stopped"):
            list(leveldb_log.Reader(CORRUPT, recovery="point_in_time"))
        _raises(
            leveldb_log.TruncatedRecordError,
            lambda: list(leveldb_log.Reader(TORN, recovery="absolute")),
        )
        _raises(Boom, lambda: list(leveldb_log.Reader(CORRUPT, on_corruption=raising_callback)))
        r = leveldb_log.Reader(CORRUPT, on_corruption=lambda c: r.close())  # closes itself
        list(r)

    assert_no_leak(cycle, 3000, also_ignoring=__file__)


class FailingIO(io.RawIOBase):
    """Writes, reads or tells fail with OSError, as chosen."""

    def __init__(self, data: bytes = b"", fail: str = "write") -> None:
        super().__init__()
        self.buf = io.BytesIO(data)
        self.fail = fail

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self.fail != "seek"

    def tell(self) -> int:
        if self.fail == "tell":
            raise OSError(errno.EIO, "tell failed")
        return self.buf.tell()

    def seek(self, pos: int, whence: int = 0) -> int:
        return self.buf.seek(pos, whence)

    def write(self, b: bytes) -> int:  # type: ignore[override]
        if self.fail == "write":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self.buf.write(b)

    def readinto(self, b: memoryview) -> int:  # type: ignore[override]
        if self.fail == "read" and self.buf.tell() > B:
            raise OSError(errno.EIO, "read failed")
        return self.buf.readinto(b)


def test_no_leak_when_file_objects_raise() -> None:
    def cycle() -> None:
        w = leveldb_log.Writer(FailingIO(fail="write"), buffering=0)
        _raises(OSError, lambda: w.write(BIG))
        _raises(OSError, lambda: w.write(b"small"))
        w.close()  # nothing kept back from writes that raised
        w = leveldb_log.Writer(FailingIO(fail="write"))  # buffered: write() returns
        w.write(b"small")
        _raises(OSError, w.close)  # and close() fails to write the kept record
        w = leveldb_log.Writer(FailingIO(fail="tell"))  # cannot tell: starts at 0
        w.write(b"ok")
        w.close()
        r = leveldb_log.Reader(FailingIO(CLEAN, fail="read"))
        _raises(OSError, lambda: list(r))
        _raises(OSError, lambda: list(r))  # the same reader fails again
        r.close()
        assert len(list(leveldb_log.Reader(FailingIO(CLEAN, fail="seek")))) == len(RECORDS)

    assert_no_leak(cycle, 2000, also_ignoring=__file__)
