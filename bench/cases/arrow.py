"""Arrow cases: 100 B records read from memory as Arrow batches (Reader.iter_batches), 1 MiB
records read from a warm file as Arrow batches, and 100 B records written from an Arrow array
(Writer.write_many over a pyarrow array, taken through the Arrow C data interface).
Baselines: the `for rec in Reader` loop and `crc32c` over the same log bytes alone (reading);
`write_many` over a list of bytes (writing). The write case needs pyarrow (the `test` extra),
and is left out without it."""

from __future__ import annotations

import io
from typing import Any

import leveldb_log

from bench.data import Data
from bench.harness import Case, Config, Contender, KiB, size_name

try:
    import pyarrow
except ImportError:  # pragma: no cover - pyarrow is in the test extra
    pyarrow = None

SIZE = 100


def batches(log: bytes | str) -> None:
    """for batch in Reader(log).iter_batches(): the records as Arrow columns."""
    for _batch in leveldb_log.Reader(log).iter_batches():
        pass


def loop(log: bytes | str) -> None:
    """for rec in Reader(log)."""
    for _rec in leveldb_log.Reader(log):
        pass


def crc_alone(log: bytes) -> None:
    """leveldb_log.crc32c(log): the checksum of the same bytes, and nothing else."""
    leveldb_log.crc32c(log)


def arrow_read_case(data: Data, cfg: Config) -> Case:
    """Read 100 B records from memory as Arrow batches, against the loop and crc32c."""
    max_n = max(1, cfg.max_bytes // SIZE)
    probe = max(1, (256 * KiB) // SIZE)

    def src(n: int) -> bytes:
        return data.log(SIZE, n)

    small = src(1000)  # the contenders do the same work
    got = [(len(b), b.nbytes) for b in leveldb_log.Reader(small).iter_batches(max_records=300)]
    assert got == [(300, 34800)] * 3 + [(100, 11600)], got
    cs = [
        Contender("Reader.iter_batches()", "ours_arrow", src, batches, max_n, probe),
        Contender("for rec in Reader", "loop", src, loop, max_n, probe),
        Contender("crc32c(log) alone", "crc", src, crc_alone, max_n, probe),
    ]
    key = f"read/{size_name(SIZE)}/arrow"
    return Case(key, "read", SIZE, "memory, Arrow batches", cs, ["ours_arrow"], [])


def arrow_long_read_case(data: Data, cfg: Config) -> Case:
    """Read 1 MiB records from a warm page-cache file as Arrow batches, against the loop:
    what long records cost in batches (assembled in place, columns in huge pages)."""
    size = 1 << 20
    max_n = max(1, cfg.max_bytes // size)

    def src(n: int) -> str:
        return str(data.file("log", size, n))

    cs = [
        Contender("Reader(path).iter_batches()", "ours_arrow", src, batches, max_n, 1),
        Contender("for rec in Reader(path)", "loop", src, loop, max_n, 1),
    ]
    return Case(
        f"read/{size_name(size)}/arrow", "read", size, "file, Arrow batches", cs, ["ours_arrow"], []
    )


def write_many_of(state: tuple[Any, io.BytesIO]) -> None:
    """Writer(BytesIO).write_many(records): a pyarrow array, or a list of bytes."""
    records, sink = state
    sink.seek(0)
    with leveldb_log.Writer(sink) as w:
        w.write_many(records)


def arrow_write_case(data: Data, cfg: Config) -> Case | None:
    """Write 100 B records to memory from an Arrow array, against write_many over a list."""
    if pyarrow is None:
        return None
    max_n = max(1, cfg.max_bytes // SIZE)
    probe = max(1, (256 * KiB) // SIZE)

    def src_list(n: int) -> tuple[Any, io.BytesIO]:
        return data.records(SIZE, n)[:n], io.BytesIO()

    def src_arrow(n: int) -> tuple[Any, io.BytesIO]:
        return pyarrow.array(data.records(SIZE, n)[:n], pyarrow.binary()), io.BytesIO()

    cs = [
        Contender(
            "write_many(pyarrow binary array)", "ours_arrow", src_arrow, write_many_of, max_n, probe
        ),
        Contender("write_many(list of bytes)", "list", src_list, write_many_of, max_n, probe),
    ]
    key = f"write/{size_name(SIZE)}/arrow"
    return Case(key, "write", SIZE, "memory, from Arrow", cs, ["ours_arrow"], [])
