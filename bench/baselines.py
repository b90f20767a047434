"""What leveldb_log is compared with: the pure-Python model (tests/support/model.py) and the
optional packages of the ``bench`` extra (crc32c, google-crc32c, tfrecord).

The model is imported as ``tests.support.model``: the benchmarks run as ``python -m bench`` from
the repository root, which puts the root on sys.path, and tests/ is a namespace package
there (no ``__init__.py``, so pytest's view of tests/ is unchanged).
"""

from __future__ import annotations

import importlib
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import leveldb_log

import tests.support.model as model

__all__ = [
    "ROOT",
    "crc32c_pkg",
    "google_crc32c",
    "missing",
    "model",
    "optional",
    "tf_reader",
    "tf_writer",
    "tfrecord_bytes",
    "tfrecord_framing",
]

ROOT = Path(__file__).resolve().parent.parent

if Path(model.__file__).resolve().parents[2] != ROOT:  # another "tests" came first
    raise ImportError(f"tests.support.model is {model.__file__}, not this checkout's")


def optional(name: str) -> Any:
    """The module, or None when its package is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


crc32c_pkg = optional("crc32c")
google_crc32c = optional("google_crc32c")
tf_writer = optional("tfrecord.writer")
tf_reader = optional("tfrecord.reader")


def missing() -> list[str]:
    """The baseline packages that are not installed (their rows are left out)."""
    have = (("crc32c", crc32c_pkg), ("google-crc32c", google_crc32c), ("tfrecord", tf_reader))
    return [name for name, module in have if module is None]


def tfrecord_framing(f: Any, records: Sequence[bytes]) -> None:
    """TFRecordWriter.write without the tf.train.Example serialization: its own framing
    code (length, masked CRC of the length, data, masked CRC of the data)."""
    masked_crc = tf_writer.TFRecordWriter.masked_crc
    pack = struct.pack
    for r in records:
        length = pack("<Q", len(r))
        f.write(length)
        f.write(masked_crc(length))
        f.write(r)
        f.write(masked_crc(r))


def tfrecord_bytes(records: Sequence[bytes]) -> bytes:
    """The same bytes as tfrecord_framing, made quickly (for preparing files to read)."""
    mask, crc, pack = leveldb_log.mask_crc, leveldb_log.crc32c, struct.pack
    out = bytearray()
    for r in records:
        length = pack("<Q", len(r))
        out += length + pack("<I", mask(crc(length))) + r + pack("<I", mask(crc(r)))
    return bytes(out)
