"""A typed use of the public API: checked by `mypy --strict` in the test suite."""

from __future__ import annotations

import io

import leveldb_log
from leveldb_log import Corruption, CorruptionError, Reader, Writer


def roundtrip(records: list[bytes]) -> list[tuple[int, bytes]]:
    buf = io.BytesIO()
    with Writer(buf, buffering=0) as w:
        offsets = [w.write(r) for r in records]
        assert w.write_many([bytearray(b"x"), memoryview(b"y")]) == 2
        w.flush()
        end: int = w.position
    assert end == len(buf.getvalue())
    seen: list[Corruption] = []
    out: list[tuple[int, bytes]] = []
    with Reader(buf.getvalue(), recovery="skip", on_corruption=seen.append) as r:
        for record in r:
            where = r.last_record_offset
            assert where is not None
            out.append((where, record))
    assert [o for o, _ in out[: len(offsets)]] == offsets
    assert r.dropped_bytes == sum(c.size for c in seen)
    return out


def checksum(data: bytes) -> int:
    crc = leveldb_log.crc32c(data)
    return leveldb_log.unmask_crc(leveldb_log.mask_crc(crc))


def strict(data: bytes) -> int:
    try:
        return sum(1 for _ in Reader(data, recovery="absolute"))
    except CorruptionError as e:
        return -e.size


if __name__ == "__main__":
    print(roundtrip([b"a", b"b" * 40000]), checksum(b"123456789"), strict(b""))
    print(leveldb_log.RecordType.FULL, leveldb_log.BLOCK_SIZE)
