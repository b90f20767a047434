"""Write cases: records of one size written to memory or to a page-cache file.

Memory: a reused io.BytesIO (seek(0) each pass). File: a warm page-cache file on /tmp
overwritten in place each pass; plus Writer(path), which creates (truncates) the file,
against os.write to a truncated file. Contenders: ours (write loop and write_many), the
model, tfrecord (with and without its tf.train.Example), raw writes of the same bytes.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import leveldb_log

from bench.baselines import model, tf_writer, tfrecord_framing
from bench.data import Data, chunks
from bench.harness import Case, Config, Contender, KiB, size_name

WRITER_BUFFER: int = getattr(leveldb_log._core, "DEFAULT_BUFFER_SIZE", 64 * KiB)

Sink = io.BytesIO | Path  # a contender's own target: a BytesIO, or a file it overwrites
State = tuple[Sequence[Any], Sink]  # records (or raw chunks) and the target


def rewind(sink: Sink) -> Any:
    """The target of one pass: the BytesIO rewound, or the file opened at offset 0."""
    if isinstance(sink, io.BytesIO):
        sink.seek(0)
        return contextlib.nullcontext(sink)
    return open(sink, "r+b", buffering=0)


def ours(state: State) -> None:
    """Writer(target) with w.write(r) in a for loop."""
    recs, sink = state
    with rewind(sink) as f, leveldb_log.Writer(f) as w:
        for r in recs:
            w.write(r)


def ours_many(state: State) -> None:
    """Writer(target).write_many(records)."""
    recs, sink = state
    with rewind(sink) as f, leveldb_log.Writer(f) as w:
        w.write_many(recs)


def ours_new(state: State) -> None:
    """Writer(path), which creates/truncates the file, with a write loop."""
    recs, path = state
    assert isinstance(path, Path)
    with leveldb_log.Writer(path) as w:
        for r in recs:
            w.write(r)


def by_model(state: State) -> None:
    """model.encode(records), then one write."""
    recs, sink = state
    with rewind(sink) as f:
        f.write(model.encode(recs)[0])


def tf_example(state: State) -> None:
    """TFRecordWriter.write of a tf.train.Example per record, into the same target."""
    recs, sink = state
    w = tf_writer.TFRecordWriter(os.devnull)
    w.file.close()
    # It only opens paths, truncating them: give it the same target as the others
    # (buffered, as it opens files).
    w.file = sink if isinstance(sink, io.BytesIO) else open(sink, "r+b")
    w.file.seek(0)
    for r in recs:
        w.write({"data": (r, "byte")})
    if not isinstance(sink, io.BytesIO):
        w.close()


def tf_framing(state: State) -> None:
    """tfrecord's framing alone (no tf.train.Example), into the same target."""
    recs, sink = state
    if isinstance(sink, io.BytesIO):
        sink.seek(0)
        tfrecord_framing(sink, recs)
    else:
        with open(sink, "r+b") as f:  # buffered, as TFRecordWriter opens files
            tfrecord_framing(f, recs)


def raw(state: State) -> None:
    """The encoded log's chunks written to the BytesIO, or os.write to the file in place."""
    parts, sink = state
    if isinstance(sink, io.BytesIO):
        sink.seek(0)
        for p in parts:
            sink.write(p)
        return
    fd = os.open(sink, os.O_WRONLY)
    try:
        for p in parts:
            os.write(fd, p)
    finally:
        os.close(fd)


def raw_new(state: State) -> None:
    """os.write of the encoded log's chunks to a file opened O_TRUNC."""
    parts, path = state
    assert isinstance(path, Path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for p in parts:
            os.write(fd, p)
    finally:
        os.close(fd)


class _Setups:
    """setup(n) functions: (records or raw chunks, the contender's own target)."""

    def __init__(self, data: Data, size: int, target: str) -> None:
        """For records of size bytes written to target ("memory" or "file")."""
        self.data, self.size, self.target = data, size, target
        self.raw_chunk = max(size + 7, WRITER_BUFFER)

    def sink(self, role: str, what: Callable[[int], Sequence[Any]] | None = None) -> Any:
        """setup(n) -> (what(n), or n records; a BytesIO or this role's file)."""

        def setup(n: int) -> State:
            items = what(n) if what else self.data.records(self.size, n)
            if self.target == "memory":
                return items, io.BytesIO()
            path = self.data.scratch(self.data.tmp / f"write-{self.size}-{role}")
            path.touch()
            return items, path

        return setup

    def raw_chunks(self, n: int) -> list[memoryview]:
        """The log of n records in chunks of one record or the writer's buffer."""
        return chunks(self.data.log(self.size, n), self.raw_chunk)


def _contenders(s: _Setups, max_n: int, probe: int) -> list[Contender]:
    """Ours, the model, tfrecord and raw writes, in the order they take turns."""
    where = "BytesIO" if s.target == "memory" else "file object"
    cs = [
        Contender(f"Writer({where}).write loop", "ours", s.sink("ours"), ours, max_n, probe),
        Contender(
            f"Writer({where}).write_many", "ours_many", s.sink("many"), ours_many, max_n, probe
        ),
        Contender("model.encode", "model", s.sink("model"), by_model, max_n, max(1, probe // 16)),
    ]
    if tf_writer is not None:
        tf, tff = s.sink("tf"), s.sink("tff")
        cs.append(Contender("TFRecordWriter.write", "tfrecord", tf, tf_example, max_n, probe))
        cs.append(Contender("tfrecord framing", "tfrecord_framing", tff, tf_framing, max_n, probe))
    raw_name = "BytesIO.write" if s.target == "memory" else "os.write"
    chunk = size_name(s.raw_chunk)
    raw_setup = s.sink("raw", s.raw_chunks)
    cs.append(Contender(f"raw {raw_name} ({chunk} chunks)", "raw", raw_setup, raw, max_n, probe))
    return cs


def _new_file_contenders(s: _Setups, max_n: int, probe: int) -> list[Contender]:
    """Writer(path), which truncates, and os.write to a truncated file."""
    chunk = size_name(s.raw_chunk)
    rawnew = s.sink("rawnew", s.raw_chunks)
    return [
        Contender(
            "Writer(path) new file, write loop", "ours_new", s.sink("new"), ours_new, max_n, probe
        ),
        Contender(
            f"raw os.write to a new file ({chunk} chunks)", "raw_new", rawnew, raw_new, max_n, probe
        ),
    ]


def write_case(size: int, target: str, data: Data, cfg: Config) -> Case:
    """The case "write records of size bytes -> target" ("memory" or "file")."""
    max_n = max(1, cfg.max_bytes // size)
    probe = max(1, (256 * KiB) // size)
    s = _Setups(data, size, target)
    cs = _contenders(s, max_n, probe)
    ours_roles = ["ours", "ours_many"]
    if target == "file":
        ours_roles.append("ours_new")
        cs += _new_file_contenders(s, max_n, probe)
    bases = ["model", "tfrecord", "tfrecord_framing", "raw"]
    key = f"write/{size_name(size)}/{target}"
    return Case(key, "write", size, target, cs, ours_roles, bases)
