"""Before anything is timed: the contenders do the same work (same bytes, same records)."""

from __future__ import annotations

import io
import random

import leveldb_log

from bench.baselines import model, tf_reader, tfrecord_bytes, tfrecord_framing
from bench.cases.crc import CRC_SIZES, check_values
from bench.data import RECORD_SIZES, Data


def _tfrecord_round_trip(data: Data, recs: list[bytes]) -> None:
    """tfrecord's reader reads our framing back, and tfrecord_bytes makes the same bytes."""
    path = data.tmp / "sanity.tfrecord"
    with open(path, "wb") as f:
        tfrecord_framing(f, recs)
    got = [bytes(r) for r in tf_reader.tfrecord_iterator(str(path))]
    assert got == recs, "tfrecord framing does not read back"
    assert path.read_bytes() == tfrecord_bytes(recs)
    path.unlink()


def sanity(data: Data) -> None:
    """Writer and model encode the same bytes; Reader, model and tfrecord read them back;
    the CRC-32C packages agree with ours."""
    mixed = [b"", b"x" * 100, random.Random(1).randbytes(70_000), b"y" * 32_761]
    for size in (*RECORD_SIZES, 0):
        recs = data.records(size, 3) if size else mixed
        buf = io.BytesIO()
        with leveldb_log.Writer(buf) as w:
            w.write_many(recs)
        assert buf.getvalue() == model.encode(recs)[0], "Writer and model disagree"
        assert list(leveldb_log.Reader(buf.getvalue())) == recs
        assert model.read(buf.getvalue()).payloads == recs
        if tf_reader is not None:
            _tfrecord_round_trip(data, recs)
    data.forget()
    check_values(CRC_SIZES)
