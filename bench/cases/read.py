"""Read cases: a log of records of one size read from memory (bytes) or from a warm
page-cache file. Contenders: ours (a for loop over Reader), the model, tfrecord's reader
and the raw floor (bytes slices from memory, readinto from the file)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import leveldb_log

from bench.baselines import model, tf_reader
from bench.data import Data
from bench.harness import Case, Config, Contender, KiB, size_name

BLOCK = leveldb_log.BLOCK_SIZE


def ours(source: Any) -> None:
    """for rec in Reader(source)."""
    for _rec in leveldb_log.Reader(source):
        pass


def tf_loop(path: Path) -> None:
    """for rec in tfrecord_iterator(path)."""
    for _rec in tf_reader.tfrecord_iterator(str(path)):
        pass


def model_bytes(log: bytes) -> None:
    """model.read of the log in memory."""
    model.read(log)


def model_file(path: str) -> None:
    """Read the file, then model.read."""
    with open(path, "rb") as f:
        model.read(f.read())


def raw_slices(state: tuple[bytes, int]) -> None:
    """log[i:i+step] in a for loop: one new bytes per record."""
    log, step = state
    for i in range(0, len(log), step):
        _rec = log[i : i + step]


def raw_readinto(state: tuple[Path, bytearray]) -> None:
    """readinto a preallocated buffer from the file opened unbuffered."""
    path, buf = state
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(view):
            pass


@dataclass
class _Sources:
    """How each contender of one target gets its data and what it runs."""

    src: Callable[[int], Any]  # ours and the model
    model: Callable[[Any], None]
    tf_src: Callable[[int], Path]
    tf_name: str
    raw_src: Callable[[int], Any]
    raw: Callable[[Any], None]
    raw_name: str


def _memory(data: Data, size: int, max_n: int, probe: int) -> list[Contender]:
    """Contenders reading from a bytes object (tfrecord: from a warm file)."""

    def src(n: int) -> bytes:
        return data.log(size, n)

    def raw_src(n: int) -> tuple[bytes, int]:
        log = data.log(size, n)
        return log, -(-len(log) // n)

    def tf_src(n: int) -> Path:
        return data.file("tfrecord", size, n)

    tf_name = "tfrecord_iterator (warm file: it reads paths only)"
    way = _Sources(src, model_bytes, tf_src, tf_name, raw_src, raw_slices, "raw bytes slices")
    return _contenders(way, max_n, probe)


def _file(data: Data, size: int, max_n: int, probe: int) -> list[Contender]:
    """Contenders reading a warm page-cache file."""
    raw_chunk = max(size, BLOCK)

    def src(n: int) -> str:
        return str(data.file("log", size, n))

    def raw_src(n: int) -> tuple[Path, bytearray]:
        return data.file("log", size, n), bytearray(raw_chunk)

    def tf_src(n: int) -> Path:
        return data.file("tfrecord", size, n)

    raw_name = f"raw readinto ({size_name(raw_chunk)} chunks)"
    way = _Sources(src, model_file, tf_src, "tfrecord_iterator", raw_src, raw_readinto, raw_name)
    return _contenders(way, max_n, probe)


def _contenders(w: _Sources, max_n: int, probe: int) -> list[Contender]:
    """Ours, the model, tfrecord (if installed) and raw, in the order they take turns."""
    cs = [
        Contender("for rec in Reader", "ours", w.src, ours, max_n, probe),
        Contender("model.read", "model", w.src, w.model, max_n, max(1, probe // 16)),
    ]
    if tf_reader is not None:
        cs.append(Contender(w.tf_name, "tfrecord", w.tf_src, tf_loop, max_n, probe))
    cs.append(Contender(w.raw_name, "raw", w.raw_src, w.raw, max_n, probe))
    return cs


def read_case(size: int, target: str, data: Data, cfg: Config) -> Case:
    """The case "read records of size bytes <- target" ("memory" or "file")."""
    max_n = max(1, cfg.max_bytes // size)
    probe = max(1, (256 * KiB) // size)
    make = _memory if target == "memory" else _file
    cs = make(data, size, max_n, probe)
    key = f"read/{size_name(size)}/{target}"
    return Case(key, "read", size, target, cs, ["ours"], ["model", "tfrecord", "raw"])
