"""The dialects' hand-built cases, which the model (tests/dialects/test_model_dialects.py) and
the C reader (tests/dialects/test_dialects.py) are both held to: the golden Pebble logs of
tests/golden/pebble/ with their expected reads, and one hand-built log per row of the
recovery table of docs/rocksdb.md (section 6.2)."""

from __future__ import annotations

import json
import struct

from support import model, paths

B = model.BLOCK_SIZE
GOLDEN_DIR = paths.GOLDEN / "pebble"
GOLDEN = json.loads((GOLDEN_DIR / "expected.json").read_text())


def chunk(rtype: int, payload: bytes, log: int | None = None) -> bytes:
    """A physical record built by hand (the CRC from the model's crc32c)."""
    tail = bytes([rtype]) + (b"" if log is None else struct.pack("<I", log))
    crc = model.mask_crc(model.crc32c(tail + payload))
    return struct.pack("<IH", crc, len(payload)) + tail + payload


def bad_crc(rec: bytes) -> bytes:
    out = bytearray(rec)
    out[0] ^= 0x40
    return bytes(out)


def expect(
    skip: tuple, tolerate_tail: tuple, point_in_time: tuple, absolute: tuple
) -> dict[str, tuple]:
    """Each mode's (records, [(offset, size, reason)], error)."""
    return {
        "skip": skip,
        "tolerate_tail": tolerate_tail,
        "point_in_time": point_in_time,
        "absolute": absolute,
    }


def _table_cases() -> dict[str, tuple[bytes, int | None, dict[str, tuple]]]:
    cases: dict[str, tuple[bytes, int | None, dict[str, tuple]]] = {}
    fill = b"f" * (B - 8 - 7)  # after a legacy FULL "a" (8 bytes): a FIRST filling block 0
    rfill = b"g" * (B - 12 - 11)  # the same after a recyclable FULL "a" (12 bytes)

    # bad CRC mid-file, non-recycled: "checksum mismatch", the rest of the block dropped
    data = chunk(1, b"a") + bad_crc(chunk(1, b"b")) + chunk(1, b"lost")
    data += bytes(B - len(data)) + chunk(1, b"c")
    crc = (8, B - 8, "checksum mismatch")
    cases["bad_crc_legacy"] = (
        data,
        None,
        expect(
            ([b"a", b"c"], [crc], None),
            ([b"a"], [crc], "corruption"),
            ([b"a"], [crc], None),
            ([b"a"], [crc], "corruption"),
        ),
    )

    # bad CRC in a recycled file: tolerate_tail ends silently, the others as above
    data = chunk(5, b"a", 9) + bad_crc(chunk(5, b"b", 9)) + chunk(5, b"lost", 9)
    data += bytes(B - len(data)) + chunk(5, b"c", 9)
    crc = (12, B - 12, "checksum mismatch")
    cases["bad_crc_recycled"] = (
        data,
        9,
        expect(
            ([b"a", b"c"], [crc], None),
            ([b"a"], [], None),
            ([b"a"], [crc], None),
            ([b"a"], [crc], "corruption"),
        ),
    )

    # truncated body at EOF: "truncated record body" in point_in_time and absolute
    data = chunk(1, b"a") + chunk(1, b"b" * 100)[:50]
    torn = (8, 50, "truncated record body")
    cases["truncated_body_at_eof"] = (
        data,
        None,
        expect(
            ([b"a"], [], None),
            ([b"a"], [], None),
            ([b"a"], [torn], None),
            ([b"a"], [torn], "truncated"),
        ),
    )

    # a short header at EOF: "truncated header"
    data = chunk(1, b"a") + chunk(1, b"b")[:4]
    torn = (8, 4, "truncated header")
    cases["truncated_header_at_eof"] = (
        data,
        None,
        expect(
            ([b"a"], [], None),
            ([b"a"], [], None),
            ([b"a"], [torn], None),
            ([b"a"], [torn], "truncated"),
        ),
    )

    # EOF inside a fragmented record
    data = chunk(1, b"a") + chunk(2, fill) + chunk(3, b"m" * 10)
    torn = (8, len(fill) + 10, "error reading trailing data due to encountering EOF")
    cases["eof_inside_record"] = (
        data,
        None,
        expect(
            ([b"a"], [], None),
            ([b"a"], [], None),
            ([b"a"], [torn], None),
            ([b"a"], [torn], "truncated"),
        ),
    )

    # old log number between records (a recycled file's old data, then a record of ours)
    data = chunk(5, b"a", 9) + chunk(5, b"old-1", 8) + chunk(5, b"old-2", 8)
    data += chunk(5, b"d", 9)
    cases["old_between_records"] = (
        data,
        9,
        expect(
            ([b"a", b"d"], [], None),
            ([b"a"], [], None),
            ([b"a"], [], None),
            ([b"a"], [], None),
        ),
    )

    # old log number inside a fragmented record
    data = chunk(5, b"a", 9) + chunk(6, rfill, 9) + chunk(8, b"old", 8)
    data += chunk(5, b"d", 9)
    size = len(rfill)
    middle = (12, size, "error in middle of record")
    old = (12, size, "error reading trailing data due to encountering old record")
    cases["old_inside_record"] = (
        data,
        9,
        expect(
            ([b"a", b"d"], [middle], None),
            ([b"a"], [], None),
            ([b"a"], [old], None),
            ([b"a"], [old], "corruption"),  # a corruption, not a torn tail
        ),
    )

    # preallocated zeros: the rest of the block skipped silently, in every mode
    data = chunk(1, b"a") + bytes(100)
    data += bytes(B - len(data)) + chunk(1, b"c") + bytes(300)
    silent = ([b"a", b"c"], [], None)
    cases["preallocated_zeros"] = (data, None, expect(silent, silent, silent, silent))

    # an unknown type without 0x80: "unknown record type 12"
    data = chunk(1, b"a") + chunk(12, b"zz") + chunk(1, b"c")
    unknown = (8, 2, "unknown record type 12")
    cases["unknown_type"] = (
        data,
        None,
        expect(
            ([b"a", b"c"], [unknown], None),
            ([b"a"], [unknown], "corruption"),
            ([b"a"], [unknown], None),
            ([b"a"], [unknown], "corruption"),
        ),
    )

    # an unknown type with 0x80 set: skipped silently (also dropping an open record)
    data = chunk(1, b"a") + chunk(0xC8, b"zz") + chunk(2, b"p") + chunk(0x81, b"")
    data += chunk(4, b"q") + chunk(1, b"c")
    missing = (32, 1, "missing start of fragmented record(2)")
    cases["ignorable_type"] = (
        data,
        None,
        expect(
            ([b"a", b"c"], [missing], None),
            ([b"a"], [missing], "corruption"),
            ([b"a"], [missing], None),
            ([b"a"], [missing], "corruption"),
        ),
    )
    return cases


TABLE_CASES = _table_cases()
