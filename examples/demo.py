"""Write a sample log, damage a copy the way crashes and bad disks do, and read both back.

Run: python examples/demo.py [DIRECTORY]   (default: a temporary directory)
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time

import leveldb_log


def make_records(n: int) -> list[bytes]:
    """Deterministic records: mostly small events, some spanning several blocks."""
    records = []
    for i in range(n):
        size = 100 if i % 97 else 100_000 + i  # every 97th record is ~100 KB
        seed = hashlib.sha256(i.to_bytes(4, "little")).digest()
        records.append((seed * (size // 32 + 1))[:size])
    return records


def main(directory: str) -> int:
    path = os.path.join(directory, "sample.log")
    records = make_records(20_000)

    t0 = time.perf_counter()
    with leveldb_log.Writer(path) as w:
        w.write_many(records)
    t1 = time.perf_counter()
    size = os.path.getsize(path)
    print(
        f"wrote {len(records)} records ({sum(map(len, records))} payload bytes) "
        f"to {path}: {size} bytes in {t1 - t0:.3f} s"
    )

    t0 = time.perf_counter()
    with leveldb_log.Reader(path, recovery="absolute") as r:
        back = list(r)
    t1 = time.perf_counter()
    assert back == records, "round trip failed"
    print(
        f"read them back intact in {t1 - t0:.3f} s (CRC-32C: {leveldb_log.crc32c_implementation})"
    )

    # Damage a copy: one flipped bit mid-file, and a record torn at the end.
    data = bytearray(open(path, "rb").read())
    data[size // 2] ^= 0x10
    damaged = bytes(data[:-50])
    found = []
    survivors = list(leveldb_log.Reader(damaged, on_corruption=found.append))
    print(
        f"damaged copy: {len(survivors)} of {len(records)} records recovered, "
        f"{len(found)} corruption(s) reported:"
    )
    for c in found:
        print(f"  offset {c.offset}: {c.reason} ({c.size} bytes dropped)")
    known = set(records)
    assert all(rec in known for rec in survivors)
    try:
        list(leveldb_log.Reader(damaged, recovery="absolute"))
    except leveldb_log.CorruptionError as e:
        print(f"absolute mode refuses it: {type(e).__name__}: {e}")

    # Appending after a crash: the torn tail is cut back first.
    with open(path, "r+b") as f:
        f.truncate(size - 50)
    with leveldb_log.Writer(path, "a") as w:
        w.write(b"written after the crash")
    after = list(leveldb_log.Reader(path, recovery="absolute"))
    print(
        f"appended after a torn tail: {len(after)} records read back in absolute mode, "
        f"last = {after[-1]!r}"
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit(main(sys.argv[1]))
    with tempfile.TemporaryDirectory() as tmp:
        sys.exit(main(tmp))
