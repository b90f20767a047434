"""Writes the seed corpus of the libFuzzer harnesses into tests/fuzz/corpus/<harness>/.

Run from anywhere: ``python tests/fuzz/make_corpus.py [OUT_DIR]`` (default: the corpus folder
beside this file). The output is deterministic and committed; rerun after changing an input
format below (tests/test_fuzz.py checks the committed files are what this script writes).
Seeds come from the golden vectors (tests/golden/vectors.txt) and from small logs made with the
reference model (tests/model.py), clean and damaged, so the fuzzers start from inputs that
reach deep into the reader.

Input formats (see each harness's header comment):
- reader: 8 option bytes (flags, start:3, end:3, growth seed), then the log;
- roundtrip: flags, prefix end:2, first-list count, writer start:8, seed, then 2 bytes a record;
- crc32c: one byte (split point and alignment), then the data;
- tail: how many records to append, their size seed, then the log; or (bit 7 of the first
  byte) a crash: a seed, where to cut, zero fill, then record sizes.
"""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import model  # noqa: E402

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
    bad_len = bytearray(edge)
    bad_len[4:6] = (0xFFFF).to_bytes(2, "little")
    seeds["bad-length"] = reader_input(bytes(bad_len))
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


def tail_seeds() -> dict[str, bytes]:
    """Logs ending the ways a crash, preallocation or damage leaves them."""
    worked, _ = model.encode(records([1000, 97270, 8000], salt=1))
    small, _ = model.encode([b"foo", b"", b"bar", b"x" * 100])
    zeros_end, _ = model.encode([b"payload ending in zeros" + bytes(40)])
    damaged = bytearray(worked)
    damaged[33000] ^= 0x40  # a bad checksum in a MIDDLE-only block
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
    write(out, "tail", tail_seeds())


if __name__ == "__main__":
    main()
