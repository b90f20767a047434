"""The zstd binding behind RocksDB's compressed WALs (docs/rocksdb.md, "Compressed WALs").

RocksDB writes each record of a compressed WAL as one zstd frame with a content checksum.
Any of three well-kept bindings will do, tried in this order: the standard library's
``compression.zstd`` (Python 3.14), ``backports.zstd`` and ``zstandard``. They are optional:
``pip install 'leveldb-log[rocksdb]'`` installs one. Without any, reading or writing a
compressed WAL raises `ZstdMissingError`, which names the extra.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["ZstdMissingError", "compress", "decompressor", "require"]

EXTRA = "leveldb-log[rocksdb]"


class ZstdMissingError(ImportError):
    """No zstd binding is installed: compressed RocksDB WALs need the ``rocksdb`` extra.

    Raised (an `ImportError`) when a `Reader` meets a WAL's compression record, or a
    `Writer` is asked for ``compression="zstd"``, with none of ``compression.zstd``,
    ``backports.zstd`` or ``zstandard`` importable. Its message names the extra to install.
    """


class Decompressor(Protocol):
    """One frame's streaming decompressor: what each binding's object offers."""

    @property
    def eof(self) -> bool: ...  # the frame has ended

    def decompress(self, data: bytes | memoryview, /) -> bytes: ...


def _standard(mod: Any) -> tuple[Callable[[], Decompressor], Callable[[bytes], bytes]]:
    """The functions of ``compression.zstd`` or its backport."""
    options = {mod.CompressionParameter.checksum_flag: 1}

    def compress(data: bytes) -> bytes:
        return bytes(mod.compress(data, options=options))

    return mod.ZstdDecompressor, compress


def _load() -> tuple[Callable[[], Decompressor], Callable[[bytes], bytes]]:
    for name in ("compression.zstd", "backports.zstd"):
        try:
            return _standard(importlib.import_module(name))
        except ImportError:
            continue
    try:
        zstandard = importlib.import_module("zstandard")
    except ImportError:
        raise ZstdMissingError(
            "this WAL is zstd-compressed: reading or writing it needs a zstd binding; "
            f"install it with: pip install '{EXTRA}'"
        ) from None
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    return (
        lambda: zstandard.ZstdDecompressor().decompressobj(),
        compressor.compress,
    )


_backend: tuple[Callable[[], Decompressor], Callable[[bytes], bytes]] | None = None


def require() -> None:
    """Load a zstd binding, or raise `ZstdMissingError` naming the extra to install."""
    global _backend
    if _backend is None:
        _backend = _load()


def decompressor() -> Decompressor:
    """A new decompressor, for one record's frame."""
    require()
    assert _backend is not None
    return _backend[0]()


def compress(data: bytes) -> bytes:
    """``data`` as one zstd frame with a content checksum, as RocksDB writes a record."""
    require()
    assert _backend is not None
    return _backend[1](data)
