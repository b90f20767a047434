"""RocksDB's dialect: 100 B records read from a recycled WAL (11-byte headers with a log
number) against the same records in a LevelDB log; and 1 MiB records read from a
zstd-compressed WAL against decompressing the same frames alone with the zstd binding the
reader uses (leveldb_log._zstd). The compressed case needs a zstd binding (the `rocksdb`
extra, in the test extra too) and is left out without it."""

from __future__ import annotations

import io
import random

import leveldb_log
from leveldb_log import _zstd

from bench.data import Data
from bench.harness import Case, Config, Contender, KiB, MiB, size_name

SMALL = 100
LARGE = MiB


def _recycled(records: list[bytes]) -> bytes:
    buf = io.BytesIO()
    with leveldb_log.Writer(buf, dialect="rocksdb", recycle=True, log_number=7) as w:
        w.write_many(records)
    return buf.getvalue()


def read_rocksdb(log: bytes) -> None:
    """for rec in Reader(log, dialect="rocksdb")."""
    for _rec in leveldb_log.Reader(log, dialect="rocksdb"):
        pass


def read_leveldb(log: bytes) -> None:
    """for rec in Reader(log): the same records in LevelDB's layout."""
    for _rec in leveldb_log.Reader(log):
        pass


def recycled_case(data: Data, cfg: Config) -> Case:
    """100 B records from a recycled RocksDB WAL, against the same in a LevelDB log."""
    max_n = max(1, cfg.max_bytes // SMALL)
    probe = max(1, (256 * KiB) // SMALL)
    cs = [
        Contender(
            "Reader(dialect='rocksdb'), recycled WAL",
            "ours_rocksdb",
            lambda n: _recycled(data.records(SMALL, n)),
            read_rocksdb,
            max_n,
            probe,
        ),
        Contender(
            "Reader(), LevelDB log",
            "leveldb",
            lambda n: data.log(SMALL, n),
            read_leveldb,
            max_n,
            probe,
        ),
    ]
    key = f"read/{size_name(SMALL)}/rocksdb-recycled"
    return Case(key, "read", SMALL, "memory, recycled RocksDB WAL", cs, ["ours_rocksdb"], [])


def _compressible(n: int) -> list[bytes]:
    """n records of 1 MiB that zstd shrinks about threefold (the same every time)."""
    rng = random.Random(LARGE)
    words = [rng.randbytes(rng.randrange(3, 12)) for _ in range(4096)]
    out = []
    for _ in range(n):
        parts: list[bytes] = []
        size = 0
        while size < LARGE:
            w = words[rng.randrange(len(words))]
            parts.append(w)
            size += len(w)
        out.append(b"".join(parts)[:LARGE])
    return out


def _compressed_wal(n: int) -> tuple[bytes, list[bytes]]:
    records = _compressible(n)
    buf = io.BytesIO()
    with leveldb_log.Writer(buf, dialect="rocksdb", compression="zstd") as w:
        w.write_many(records)
    return buf.getvalue(), [_zstd.compress(r) for r in records]


def read_compressed(state: tuple[bytes, list[bytes]]) -> None:
    """for rec in Reader(wal, dialect="rocksdb"): each record's frame decompressed."""
    for _rec in leveldb_log.Reader(state[0], dialect="rocksdb"):
        pass


def decompress_alone(state: tuple[bytes, list[bytes]]) -> None:
    """Each record's zstd frame decompressed with the same binding, and nothing else."""
    for frame in state[1]:
        _zstd.decompressor().decompress(frame)


def compressed_case(data: Data, cfg: Config) -> Case | None:
    """1 MiB records from a zstd WAL, against decompressing their frames alone."""
    del data  # records of its own: compressible ones
    try:
        _zstd.require()
    except _zstd.ZstdMissingError:
        return None
    max_n = max(1, min(cfg.max_bytes // LARGE, 64))
    cs = [
        Contender(
            "Reader(dialect='rocksdb'), zstd WAL",
            "ours_zstd",
            _compressed_wal,
            read_compressed,
            max_n,
            2,
        ),
        Contender(
            "zstd decompress of the frames alone",
            "zstd",
            _compressed_wal,
            decompress_alone,
            max_n,
            2,
        ),
    ]
    key = f"read/{size_name(LARGE)}/rocksdb-zstd"
    return Case(key, "read", LARGE, "memory, zstd RocksDB WAL", cs, ["ours_zstd"], [])
