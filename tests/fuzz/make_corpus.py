"""Writes the seed corpus of the libFuzzer harnesses into tests/fuzz/corpus/<harness>/.

Run from anywhere: ``python tests/fuzz/make_corpus.py [OUT_DIR]`` (default: the corpus folder
beside this file). The output is deterministic and committed; rerun after changing an input
format below (tests/meta/test_fuzz.py checks the committed files are what this script writes).
Seeds come from the golden vectors (tests/golden/vectors.txt) and from small logs made with the
reference model (tests/support/model.py), clean and damaged, so the fuzzers start from inputs that
reach deep into the reader.

Input formats (see each harness's header comment):
- reader: 8 option bytes (flags, start:3, end:3, growth seed), then the log; the flags choose
  the dialect and the recovery mode too (seeds written in RocksDB's and Pebble's dialects come
  from the small encoder below, written from docs/rocksdb.md);
- roundtrip: flags, prefix end:2, first-list count, writer start:8, seed, then 2 bytes a record;
- crc32c: one byte (split point and alignment), then the data;
- append: how many records to append, their size seed, then the log; or (bit 7 of the first
  byte) a crash: a seed, where to cut, zero fill, then record sizes;
- datastore: one EntityProto record, as leveldb_log.datastore.encode_entity writes it
  (entities made here, of every value type).
"""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from support import model  # noqa: E402

B = model.BLOCK_SIZE


def golden() -> tuple[list[bytes], list[bytes]]:
    """(CRC inputs, physical records) of the golden vectors."""
    crc_inputs, records = [], []
    for line in (HERE.parent / "golden" / "vectors.txt").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split(" ")
        unhex = lambda h: b"" if h == "-" else bytes.fromhex(h)  # noqa: E731
        if fields[0] == "crc":
            crc_inputs.append(unhex(fields[1]))
        elif fields[0] == "record":
            records.append(unhex(fields[3]))
    return crc_inputs, records


def reader_input(log: bytes, flags: int = 0, start: int = 0, end: int = 0, seed: int = 0) -> bytes:
    """A reader seed: the harness takes start and end modulo (len(log) + 2 blocks)."""
    return (
        bytes([flags])
        + start.to_bytes(3, "little")
        + end.to_bytes(3, "little")
        + bytes([seed])
        + log
    )


def records(sizes: list[int], salt: int = 0) -> list[bytes]:
    rng = random.Random(salt)
    return [rng.randbytes(n) for n in sizes]


def reader_seeds() -> dict[str, bytes]:
    seeds: dict[str, bytes] = {}
    _, physical = golden()
    for i, rec in enumerate(physical):
        seeds[f"golden-record-{i:02d}"] = reader_input(rec)
    seeds["golden-records-together"] = reader_input(b"".join(physical))

    small, _ = model.encode([b"foo", b"", b"bar", b"x" * 100])
    seeds["small"] = reader_input(small)
    seeds["small-no-checksums"] = reader_input(small, flags=1)
    seeds["small-sequential-range"] = reader_input(small, flags=2 | 4, start=3, end=20)

    # docs/format.md's worked example: FULL, FIRST/MIDDLE/LAST over three blocks, a trailer.
    worked, offsets = model.encode(records([1000, 97270, 8000], salt=1))
    assert offsets == [0, 1007, 98304] and len(worked) == 106311
    seeds["worked-example"] = reader_input(worked)
    seeds["worked-example-from-middle-block"] = reader_input(worked, start=40000)

    edge, _ = model.encode(records([32754, 32755, 32761, 32762, 0, 6, 7], salt=2))
    seeds["block-edges"] = reader_input(edge)
    many, _ = model.encode(records([i % 50 for i in range(900)], salt=3))
    seeds["many-small"] = reader_input(many, start=B + 5)

    damaged = bytearray(worked)
    damaged[33000] ^= 0x40  # a bad checksum in the MIDDLE-only block
    seeds["damaged-crc-middle"] = reader_input(bytes(damaged))
    seeds["torn-mid-record"] = reader_input(worked[:50000])
    seeds["torn-header"] = reader_input(small[:12])
    zero_tail = small + bytes(100)
    seeds["zero-filled-tail"] = reader_input(zero_tail)
    # A record whose next block begins with an empty MIDDLE, then its LAST: read in place,
    # the LAST's payload lies past the empty one's header and is moved to the record.
    empty_middle = (
        model.encode_physical(model.FIRST, b"f" * (B - 7))
        + model.encode_physical(model.MIDDLE, b"")
        + model.encode_physical(model.LAST, b"last" * 20)
    )
    seeds["in-place-empty-middle-then-last"] = reader_input(empty_middle)
    orphan = (
        model.encode_physical(model.MIDDLE, b"orphan")
        + model.encode_physical(model.LAST, b"end")
        + model.encode_physical(9, b"unknown")
        + small
    )
    seeds["orphans-and-unknown-type"] = reader_input(orphan)
    partial = model.encode_physical(model.FIRST, b"open") + small
    seeds["partial-record"] = reader_input(partial)
    # Regression: a reader that starts in a block not yet written, then follows the log as it
    # grows, must report an orphan fragment at that block's start as a read of the whole log
    # does ("missing start of fragmented record"); it used to skip it silently.
    block0 = model.encode_physical(model.FULL, bytes(B - model.HEADER_SIZE))
    orphan = block0 + model.encode_physical(model.LAST, b"orphan")
    seeds["regression-follow-from-unwritten-block"] = reader_input(orphan, start=B)
    # Regression: a range ending in block 0 reads on into block 1 to finish a record it
    # began; short FULL records there drop it, and those checked ahead after the first were
    # returned although they begin past the range's end.
    head = model.encode_physical(model.FULL, b"a")
    unfinished = head + model.encode_physical(model.FIRST, bytes(B - len(head) - 7))
    short = b"".join(model.encode_physical(model.FULL, bytes([i]) * (1 + i)) for i in range(4))
    seeds["regression-range-read-on-past-its-end"] = reader_input(unfinished + short, 4, 0, 9)
    bad_len = bytearray(edge)
    bad_len[4:6] = (0xFFFF).to_bytes(2, "little")
    seeds["bad-length"] = reader_input(bytes(bad_len))
    seeds.update(dialect_seeds())
    return seeds


# The reader harness's flag bits (tests/fuzz/fuzz_reader.c).
ROCKSDB, PEBBLE, ROCKSDB_NUMBERED, GIVEN_NUMBER = 1 << 3, 2 << 3, 3 << 3, 1 << 7
MODES = {"skip": 0, "tolerate_tail": 1 << 5, "point_in_time": 2 << 5, "absolute": 3 << 5}


def dialect_physical(
    rtype: int, payload: bytes, log_number: int | None = None, synced: int | None = None
) -> bytes:
    """One physical record with a 7-, 11- (log number) or 19-byte (and synced offset) header."""
    extra = b"" if log_number is None else log_number.to_bytes(4, "little")
    if synced is not None:
        extra += synced.to_bytes(8, "little")
    crc = model.mask_crc(model.crc32c(bytes([rtype]) + extra + payload))
    head = crc.to_bytes(4, "little") + len(payload).to_bytes(2, "little") + bytes([rtype])
    return head + extra + payload


def dialect_encode(
    recs: list[bytes],
    base: int,
    log_number: int | None = None,
    synced: int | None = None,
    start: bytes = b"",
    chunk: int = 0,
) -> bytes:
    """Records as fragments of types base..base+3 (FULL, FIRST, MIDDLE, LAST) after `start`,
    a block's rest zero-filled when shorter than the header; with `chunk`, a record is cut
    into chunks of that size first, each then cut at block ends (RocksDB's compressed WALs)."""
    size = 7 + (0 if log_number is None else 4) + (0 if synced is None else 8)
    log = bytearray(start)
    for rec in recs:
        pieces = [rec[i : i + chunk] for i in range(0, len(rec), chunk)] if chunk else [rec]
        pieces = pieces or [b""]
        first, rest = True, sum(map(len, pieces))
        for piece in pieces:
            while True:
                room = B - len(log) % B
                if room < size:
                    log += bytes(room)
                    room = B
                n = min(len(piece), room - size)
                rest -= n
                rtype = base + (0 if first and rest == 0 else 1 if first else 2 if rest else 3)
                log += dialect_physical(rtype, piece[:n], log_number, synced)
                piece, first = piece[n:], False
                if not piece:
                    break
    return bytes(log)


def dialect_seeds() -> dict[str, bytes]:
    """Reader seeds in RocksDB's and Pebble's dialects, clean and damaged."""
    seeds: dict[str, bytes] = {}
    sizes = records([100, 0, 40000, 32757, 5, 70000, 300], salt=4)
    recycled = dialect_encode(sizes, 5, log_number=7)
    seeds["rocksdb-recycled"] = reader_input(recycled, flags=ROCKSDB)
    seeds["rocksdb-recycled-range"] = reader_input(recycled, flags=ROCKSDB, start=B + 9)
    # A recycled file: log 10 written over log 4's records of the same sizes, and of others.
    old = dialect_encode(records([30] * 6, salt=5), 5, log_number=4)
    new = dialect_encode(records([30] * 2, salt=6), 5, log_number=10)
    mixed = dialect_encode(records([3000], salt=7), 5, log_number=10)
    old_big = dialect_encode(records([2000] * 40, salt=8), 5, log_number=4)
    for mode, bits in MODES.items():
        seeds[f"rocksdb-old-records-{mode}"] = reader_input(
            new + old[len(new) :], flags=ROCKSDB | bits
        )
        seeds[f"rocksdb-mixed-{mode}"] = reader_input(
            mixed + old_big[len(mixed) :], flags=ROCKSDB | bits
        )
        damaged = bytearray(recycled)
        damaged[B + 100] ^= 1
        seeds[f"rocksdb-damaged-{mode}"] = reader_input(bytes(damaged), flags=ROCKSDB | bits)
        seeds[f"rocksdb-torn-{mode}"] = reader_input(recycled[: 2 * B + 50], flags=ROCKSDB | bits)
        seeds[f"pebble-old-records-{mode}"] = reader_input(
            new + old[len(new) :], flags=PEBBLE | bits
        )
    seeds["rocksdb-old-log-number-given"] = reader_input(
        new + old[len(new) :], flags=ROCKSDB_NUMBERED, seed=4
    )
    # Metadata: predecessor, timestamp sizes, an unknown type with 0x80, data; then legacy
    # records followed by a recyclable one (damage).
    meta = (
        dialect_physical(131, bytes(range(24)), log_number=7)
        + dialect_physical(11, (3).to_bytes(4, "little") + (8).to_bytes(2, "little"), 7)
        + dialect_physical(5, b"batch", 7)
        + dialect_physical(0x85, b"from the future")
        + dialect_physical(10, (3).to_bytes(4, "little") + bytes(2))
        + dialect_physical(130, bytes(23))
        + dialect_physical(5, b"more", 7)
    )
    seeds["rocksdb-metadata"] = reader_input(meta, flags=ROCKSDB)
    legacy = dialect_encode(records([10, 50000], salt=9), 1)
    seeds["rocksdb-legacy-then-recyclable"] = reader_input(
        legacy + dialect_physical(5, b"late", 7) + dialect_physical(1, b"ok"), flags=ROCKSDB
    )
    # A compressed WAL's layout: the compression record, then chunked records.
    compressed = dialect_encode(
        records([100000, 20], salt=10),
        1,
        start=dialect_physical(9, (7).to_bytes(4, "little")),
        chunk=B - 7,
    )
    seeds["rocksdb-compressed-chunks"] = reader_input(compressed, flags=ROCKSDB)
    seeds["rocksdb-compressed-range"] = reader_input(compressed, flags=ROCKSDB, start=B + 20)
    # Pebble: recyclable chunks, walSync chunks (with synced offsets), the trailer.
    pebble = dialect_encode(sizes, 5, log_number=3)
    trailer = dialect_physical(5, b"", 4)
    trailer = bytes(4) + trailer[4:]  # checksum 0
    seeds["pebble-recyclable-trailer"] = reader_input(pebble + trailer + old[:200], flags=PEBBLE)
    synced = dialect_encode(sizes, 9, log_number=3, synced=12345)
    seeds["pebble-walsync"] = reader_input(synced + trailer, flags=PEBBLE)
    seeds["pebble-walsync-range"] = reader_input(
        synced, flags=PEBBLE | GIVEN_NUMBER, start=B + 1, seed=3
    )
    seeds["pebble-torn"] = reader_input(synced[: B + 30], flags=PEBBLE | MODES["point_in_time"])
    return seeds


def roundtrip_input(
    sizes: list[int], n_first: int, target: int, any_start: int, flags: int = 0, seed: int = 0
) -> bytes:
    def spec(n: int) -> int:
        if n < 256:
            return n
        if B - 7 - 7 <= n <= B - 7 - 7 + 15:
            return 1 << 14 | (n - (B - 14))
        if n % 8 == 0 and n // 8 < 1 << 14:
            return 2 << 14 | n // 8
        assert n < 1 << 14, n
        return 3 << 14 | n

    out = bytes([flags]) + target.to_bytes(2, "little") + bytes([n_first])
    out += any_start.to_bytes(8, "little") + bytes([seed])
    return out + b"".join(spec(n).to_bytes(2, "little") for n in sizes)


def roundtrip_seeds() -> dict[str, bytes]:
    return {
        "empty-records": roundtrip_input([0, 0, 0], 1, 0, 0),
        "small": roundtrip_input([3, 0, 3, 100], 2, 100, 12345),
        "block-room": roundtrip_input([32754, 32761, 32762, 32768], 2, 32767, 32761),
        "multi-block": roundtrip_input([1000, 97272, 8000], 1, 7, (1 << 32) - 3, flags=2),
        "exactly-7-left": roundtrip_input([32754, 0, 5], 1, 32761, 32762, seed=9),
        "trailer-start": roundtrip_input([200, 16000, 16000], 1, 32766, 32763, flags=1),
    }


def append_seeds() -> dict[str, bytes]:
    """Logs ending the ways a crash, preallocation or damage leaves them."""
    worked, _ = model.encode(records([1000, 97270, 8000], salt=1))
    small, _ = model.encode([b"foo", b"", b"bar", b"x" * 100])
    zeros_end, _ = model.encode([b"payload ending in zeros" + bytes(40)])
    damaged = bytearray(worked)
    damaged[33000] ^= 0x40  # a bad checksum in a MIDDLE-only block
    # A length past the end of the file, with intact records after it: damage, not a tail.
    past_end, _ = model.encode(records([20, 20, 20, 20], salt=2))
    past_end = bytearray(past_end)
    past_end[27 + 5] ^= 0x10
    logs = {
        "empty": b"",
        "clean": worked,
        "torn-mid-fragment": worked[:50000],
        "torn-header": small[:12],
        "torn-after-whole-fragments": worked[: 2 * B],
        "zero-fill-in-block": small + bytes(100),
        "zero-fill-past-block": small + bytes(2 * B),
        "torn-then-zeros": worked[:500] + bytes(B - 500),
        "torn-fragment-then-zeros": worked[:B] + bytes(1000),
        "damage-in-the-middle": bytes(damaged),
        "no-complete-record": worked[1007:40000],
        "payload-ends-in-zeros": zeros_end,
        "garbage": bytes(range(256)) * 40,
        "length-past-the-end-before-records": bytes(past_end),
        # Other dialects (decided on in theirs too): a recycled file, a closed Pebble log.
        "recycled-old-records": dialect_encode(records([30] * 2, salt=6), 5, log_number=10)
        + dialect_encode(records([30] * 6, salt=5), 5, log_number=4)[82:],
        "pebble-trailer": dialect_encode(records([100, 40000], salt=11), 5, log_number=3)
        + bytes(4)
        + dialect_physical(5, b"", 4)[4:],
    }
    seeds = {name: bytes([i % 3, i]) + log for i, (name, log) in enumerate(logs.items())}
    # Crashes: a log the writer made (sizes in units of 401 bytes), cut, then zero fill.
    crashes = {
        "crash-mid-record": (7, 5000, 0, [3, 200, 90]),
        "crash-then-zeros": (9, 40000, 3, [250, 250, 1]),
        "crash-in-first-record": (1, 100, 0, [100, 2]),
        "crash-at-a-record-end": (4, 1212, 40, [1, 1, 1, 255]),
    }
    for name, (seed, cut, zeros, sizes) in crashes.items():
        spec = bytes([0x80, seed]) + cut.to_bytes(2, "little") + bytes([zeros])
        seeds[name] = spec + bytes(sizes)
    return seeds


def crc_seeds() -> dict[str, bytes]:
    inputs, _ = golden()
    seeds = {f"golden-crc-{i:02d}": bytes([i * 37 % 256]) + data for i, data in enumerate(inputs)}
    seeds["long"] = bytes([5]) + bytes(range(256)) * 20
    return seeds


def datastore_seeds() -> dict[str, bytes]:
    """Records of entities of every value type, nested, and some cut short."""
    import datetime

    from leveldb_log import datastore as ds

    utc = datetime.timezone.utc
    key = ds.Key([("users", "alice"), ("posts", 7)], app="dev~seed", namespace="ns")
    values = {
        "none": None,
        "bool": True,
        "int": -5,
        "float": 2.5,
        "text": "héllo",
        "bytes": b"\x00\xff",
        "when": datetime.datetime(1843, 5, 1, tzinfo=utc),
        "where": ds.GeoPoint(1.5, -2.5),
        "ref": key,
        "user": ds.User("a@b.c", "gmail.com", "nick", "42"),
        "map": {"a": {"b": {"c": [1, "x"]}}},
        "embedded": ds.Entity({"x": 1}, key=ds.Key([("k", "v")], app="s~p")),
        "array": [1, "two", None, {"m": 3}],
        "empty": [],
        "raw": ds.RawValue(99, 1),
    }
    seeds = {
        "every-value": ds.encode_entity(ds.Entity(values, key=key)),
        "no-properties": ds.encode_entity(ds.Entity({}, key=ds.Key([("k", 1)], app="dev~x"))),
        "long-text": ds.encode_entity(ds.Entity({"t": "y" * 3000}, key=key)),
    }
    seeds["cut"] = seeds["every-value"][: len(seeds["every-value"]) // 2]
    return seeds


def write(out: Path, harness: str, seeds: dict[str, bytes]) -> None:
    folder = out / harness
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for name, data in seeds.items():
        (folder / name).write_bytes(data)
    digest = hashlib.sha256(b"".join(seeds[k] for k in sorted(seeds))).hexdigest()[:16]
    print(f"{harness}: {len(seeds)} seeds, {sum(map(len, seeds.values()))} bytes, {digest}")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "corpus"
    write(out, "reader", reader_seeds())
    write(out, "roundtrip", roundtrip_seeds())
    write(out, "crc32c", crc_seeds())
    write(out, "append", append_seeds())
    write(out, "datastore", datastore_seeds())


if __name__ == "__main__":
    main()
