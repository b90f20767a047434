"""Builds the golden Pebble logs in tests/golden/pebble/ byte by byte from the chunk format
of docs/rocksdb.md (section "Pebble's chunks and trailer"), with the outcome each must have
in every recovery mode.

Run from the repository root: ``python tests/golden/make_pebble.py``.  It rewrites the
``*.log`` files and ``expected.json`` (both checked in).  Nothing here uses the model or the
package: the CRC, the chunk headers and the expected outcomes are written out by hand, so
the files check the model (tests/dialects/test_model_dialects.py) and the C reader (tests/
test_dialects.py) independently.

The outcomes are this package's reading of Pebble logs, not Pebble's: docs/rocksdb.md says
the reader does not do Pebble's read-ahead (a later walSync chunk that decides whether an
invalid chunk is corruption or the end of the log) nor its zeroed-chunk rule.  It reads the
chunks with LevelDB's rules and texts (zero fill skips the rest of its block silently; a bad
checksum, a chunk straddling its block or an unknown type is a corruption reported per
recovery mode), ends the log at Close's trailer (a chunk of log number + 1 at a record
start, in every mode), and treats any other log number as an older log's data, as RocksDB's
dialect does.  Several files were made to tell Pebble's rules apart (their names say what
Pebble would do); each case's comment says what Pebble does and what we do.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import struct

HERE = pathlib.Path(__file__).resolve().parent / "pebble"
BLOCK = 32768
MODES = ("skip", "tolerate_tail", "point_in_time", "absolute")


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def chunk(kind: int, payload: bytes, log: int | None = None, synced: int | None = None) -> bytes:
    """kind 1-4 legacy (7 B), 5-8 recyclable (11 B: + log), 9-12 walSync (19 B: + synced)."""
    tail = bytes([kind])
    if log is not None:
        tail += struct.pack("<I", log)
    if synced is not None:
        tail += struct.pack("<Q", synced)
    return struct.pack("<IH", masked(tail + payload), len(payload)) + tail + payload


def trailer(log: int) -> bytes:
    return struct.pack("<IHB", 0, 0, 5) + struct.pack("<I", log + 1)


def fill(data: bytes, n: int) -> bytes:
    """n bytes of a repeating pattern."""
    return (data * (n // len(data) + 1))[:n]


def rec(data: bytes) -> dict:
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def outcome(before: list[bytes], damage: tuple | None, after: list[bytes]) -> dict:
    """Every mode's outcome for a log whose records `before` precede one corruption (offset,
    size, reason) and `after` follow it: skip reports it and reads on; point_in_time
    reports it and stops; tolerate_tail and absolute report it and raise."""
    out = {}
    for mode in MODES:
        if damage is None:
            records = [rec(r) for r in before + after]
            out[mode] = {"records": records, "corruptions": [], "error": None}
        else:
            out[mode] = {
                "records": [rec(r) for r in before + (after if mode == "skip" else [])],
                "corruptions": [list(damage)],
                "error": None if mode in ("skip", "point_in_time") else "corruption",
            }
    return out


def clean(records: list[bytes]) -> dict:
    """Every mode's outcome for a log read without a report."""
    return outcome(records, None, [])


def build() -> dict:
    cases: dict = {}
    big = fill(b"pebble-record ", 40000)

    # A. recyclable chunks (Pebble's LogWriter without sync offsets), then Close's trailer
    a = chunk(5, b"alpha", 7)  # 0..16
    a += chunk(6, big[:32741], 7)  # 16..32768: FIRST fills block 0
    a += chunk(8, big[32741:], 7)  # 32768..40038: LAST
    a += trailer(7)
    cases["clean_recyclable"] = (a, 7, clean([b"alpha", big]))

    # B. walSync chunks (19-byte headers) carrying synced offsets, then the trailer
    b = chunk(9, b"alpha", 7, 0)  # 0..24
    b += chunk(10, big[:32725], 7, 24)  # 24..32768 (each chunk: what was synced before it)
    b += chunk(12, big[32725:], 7, 24)  # 32768..40062
    b += trailer(7)
    cases["clean_walsync"] = (b, 7, clean([b"alpha", big]))

    # C. fewer than 11 bytes left in a block, zeroed: skipped to the next block
    c = chunk(5, fill(b"c", 32747), 7) + bytes(10) + chunk(5, b"next", 7)
    assert len(c) == BLOCK + 15
    cases["zeroed_tail_under_11"] = (c, 7, clean([fill(b"c", 32747), b"next"]))

    # D. 11-18 bytes left, all zero: skipped too
    d = chunk(5, fill(b"d", 32742), 7) + bytes(15) + chunk(5, b"next", 7)
    assert len(d) == BLOCK + 15
    cases["zeroed_tail_11_to_18_zero"] = (d, 7, clean([fill(b"d", 32742), b"next"]))

    # E. 11-18 bytes left, a zeroed header but a non-zero byte after it. Pebble: a zeroed
    # chunk, and with no later walSync chunk to confirm it, the end of the log. We: a zero
    # header (type 0, length 0) is zero fill, the rest of the block skipped silently
    e = chunk(5, fill(b"e", 32742), 7) + bytes(14) + b"\x01" + chunk(5, b"after", 7)
    cases["zeroed_tail_11_to_18_junk"] = (e, 7, clean([fill(b"e", 32742), b"after"]))

    # F. a zeroed header with >= 19 bytes left, then (block 1) a walSync chunk whose synced
    # offset (32768) is beyond it. Pebble: confirmed corruption. We: zero fill, skipped
    f = chunk(9, b"first", 7, 0)  # 0..24
    f += bytes(BLOCK - len(f))
    f += chunk(9, b"second", 7, BLOCK)
    cases["zeroed_confirmed_by_walsync"] = (f, 7, clean([b"first", b"second"]))

    # G. the same, but the later walSync chunk only promises offset 24 (not beyond the
    # zeroed chunk). Pebble: the end of the log. We: zero fill, skipped, as in F
    g = chunk(9, b"first", 7, 0) + bytes(BLOCK - 24) + chunk(9, b"second", 7, 24)
    cases["zeroed_not_confirmed"] = (g, 7, clean([b"first", b"second"]))

    # H. log 8 written over log 7's file: log 7's chunks follow (a number that is neither
    # ours nor ours + 1), between records. Pebble: an invalid chunk, unconfirmed: the end.
    # We: older data; skip mode skips both old chunks, the other modes end the log at the
    # first; nothing is reported either way
    h = chunk(5, b"new-1", 8) + chunk(5, b"new-2", 8)  # 0..32
    h += chunk(5, b"old-3", 7) + chunk(5, b"old-4", 7)
    cases["recycled_old_data"] = (h, 8, clean([b"new-1", b"new-2"]))

    # I. the trailer (log number + 1 at a record start) ends the log cleanly in every mode
    # (Pebble and we), whatever follows
    i = chunk(5, b"a", 7) + trailer(7) + chunk(5, b"stale", 6) + chunk(5, b"ours?", 7)
    cases["trailer_then_old_data"] = (i, 7, clean([b"a"]))

    # J. log number + 1 inside a fragmented record is not a trailer. Pebble: an invalid
    # chunk. We: older data inside a record, as in RocksDB's dialect: skip reports the open
    # record as "error in middle of record" and reads on (nothing follows); tolerate_tail
    # ends silently; point_in_time and absolute report "error reading trailing data due to
    # encountering old record" (absolute raises CorruptionError). Both sizes: the payload
    # of the open FIRST, BLOCK - 12 - 11 bytes
    j = chunk(5, b"a", 7)  # 0..12
    j += chunk(6, fill(b"j", BLOCK - 12 - 11), 7)  # 12..32768
    j += chunk(8, b"tail", 8)
    open_size = BLOCK - 12 - 11
    old = (12, open_size, "error reading trailing data due to encountering old record")
    cases["next_number_inside_record"] = (
        j,
        7,
        {
            "skip": {
                "records": [rec(b"a")],
                "corruptions": [[12, open_size, "error in middle of record"]],
                "error": None,
            },
            "tolerate_tail": {"records": [rec(b"a")], "corruptions": [], "error": None},
            "point_in_time": {"records": [rec(b"a")], "corruptions": [list(old)], "error": None},
            "absolute": {
                "records": [rec(b"a")],
                "corruptions": [list(old)],
                "error": "corruption",
            },
        },
    )

    # K. legacy chunks (Pebble's plain record.Writer, as for the MANIFEST): no log number
    k = chunk(1, b"edit-1") + chunk(2, fill(b"k", BLOCK - 13 - 7)) + chunk(4, b"end")
    cases["legacy_chunks"] = (k, None, clean([b"edit-1", fill(b"k", BLOCK - 20) + b"end"]))

    # L. a bad checksum in block 0, then a walSync chunk in block 1 (Pebble: confirmed
    # corruption). We: a corruption whatever follows; the rest of block 0 is dropped
    bad = bytearray(chunk(9, b"first", 7, 0))
    bad[-1] ^= 0x01
    l_ = bytes(bad) + chunk(9, b"lost", 7, 0)  # 0..24, 24..47
    l_ += bytes(BLOCK - len(l_)) + chunk(9, b"third", 7, BLOCK)
    cases["checksum_confirmed_by_walsync"] = (
        l_,
        7,
        outcome([], (0, BLOCK, "checksum mismatch"), [b"third"]),
    )

    # M. the same bad checksum with no walSync chunk after it (Pebble: the end of the log).
    # We: a corruption; the rest of the (last, short) block is dropped with it, so "second"
    # is lost in every mode
    bad = bytearray(chunk(5, b"first", 7))
    bad[-1] ^= 0x01
    m = bytes(bad) + chunk(5, b"second", 7)
    cases["checksum_not_confirmed"] = (m, 7, outcome([], (0, len(m), "checksum mismatch"), []))
    return cases


def main() -> None:
    HERE.mkdir(parents=True, exist_ok=True)
    expected = {}
    for name, (data, log_number, modes) in build().items():
        (HERE / f"{name}.log").write_bytes(data)
        expected[name] = {"log_number": log_number, "size": len(data), "modes": modes}
    text = json.dumps(expected, indent=1, sort_keys=True) + "\n"
    (HERE / "expected.json").write_text(text)


if __name__ == "__main__":
    main()
