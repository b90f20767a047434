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


def _damage_mid_log(
    report: tuple, resumed: bytes = b"c", tolerate_tail: tuple | None = None
) -> dict[str, tuple]:
    """The modes' reads of "a", a damaged region reported as `report`, then `resumed`: skip
    reads on, point_in_time stops there, absolute (and tolerate_tail, unless given) raise."""
    return expect(
        ([b"a", resumed], [report], None),
        ([b"a"], [report], "corruption") if tolerate_tail is None else tolerate_tail,
        ([b"a"], [report], None),
        ([b"a"], [report], "corruption"),
    )


def _torn_tail(report: tuple) -> dict[str, tuple]:
    """The modes' reads of "a" then a torn tail reported as `report`: skip and tolerate_tail
    end silently, point_in_time reports it, absolute raises "truncated"."""
    return expect(
        ([b"a"], [], None),
        ([b"a"], [], None),
        ([b"a"], [report], None),
        ([b"a"], [report], "truncated"),
    )


def _to_block_end(data: bytes) -> bytes:
    return data + bytes(B - len(data))


def _table_cases() -> dict[str, tuple[bytes, int | None, dict[str, tuple]]]:
    fill = b"f" * (B - 8 - 7)  # after a legacy FULL "a" (8 bytes): a FIRST filling block 0
    rfill = b"g" * (B - 12 - 11)  # the same after a recyclable FULL "a" (12 bytes)
    old_inside = (12, len(rfill), "error reading trailing data due to encountering old record")
    silent = ([b"a", b"c"], [], None)
    rows: list[tuple[str, bytes, int | None, dict[str, tuple]]] = [
        # bad CRC mid-file, non-recycled: "checksum mismatch", the rest of the block dropped
        (
            "bad_crc_legacy",
            _to_block_end(chunk(1, b"a") + bad_crc(chunk(1, b"b")) + chunk(1, b"lost"))
            + chunk(1, b"c"),
            None,
            _damage_mid_log((8, B - 8, "checksum mismatch")),
        ),
        # bad CRC in a recycled file: tolerate_tail ends silently, the others as above
        (
            "bad_crc_recycled",
            _to_block_end(chunk(5, b"a", 9) + bad_crc(chunk(5, b"b", 9)) + chunk(5, b"lost", 9))
            + chunk(5, b"c", 9),
            9,
            _damage_mid_log((12, B - 12, "checksum mismatch"), tolerate_tail=([b"a"], [], None)),
        ),
        # truncated body at EOF: "truncated record body" in point_in_time and absolute
        (
            "truncated_body_at_eof",
            chunk(1, b"a") + chunk(1, b"b" * 100)[:50],
            None,
            _torn_tail((8, 50, "truncated record body")),
        ),
        # a short header at EOF: "truncated header"
        (
            "truncated_header_at_eof",
            chunk(1, b"a") + chunk(1, b"b")[:4],
            None,
            _torn_tail((8, 4, "truncated header")),
        ),
        # EOF inside a fragmented record
        (
            "eof_inside_record",
            chunk(1, b"a") + chunk(2, fill) + chunk(3, b"m" * 10),
            None,
            _torn_tail((8, len(fill) + 10, "error reading trailing data due to encountering EOF")),
        ),
        # old log number between records (a recycled file's old data, then a record of ours)
        (
            "old_between_records",
            chunk(5, b"a", 9) + chunk(5, b"old-1", 8) + chunk(5, b"old-2", 8) + chunk(5, b"d", 9),
            9,
            expect(([b"a", b"d"], [], None), *[([b"a"], [], None) for _ in range(3)]),
        ),
        # old log number inside a fragmented record: skip reports the broken record, the
        # others the old one, which absolute raises as a corruption, not a torn tail
        (
            "old_inside_record",
            chunk(5, b"a", 9) + chunk(6, rfill, 9) + chunk(8, b"old", 8) + chunk(5, b"d", 9),
            9,
            expect(
                ([b"a", b"d"], [(12, len(rfill), "error in middle of record")], None),
                ([b"a"], [], None),
                ([b"a"], [old_inside], None),
                ([b"a"], [old_inside], "corruption"),
            ),
        ),
        # preallocated zeros: the rest of the block skipped silently, in every mode
        (
            "preallocated_zeros",
            _to_block_end(chunk(1, b"a") + bytes(100)) + chunk(1, b"c") + bytes(300),
            None,
            expect(silent, silent, silent, silent),
        ),
        # an unknown type without 0x80: "unknown record type 12"
        (
            "unknown_type",
            chunk(1, b"a") + chunk(12, b"zz") + chunk(1, b"c"),
            None,
            _damage_mid_log((8, 2, "unknown record type 12")),
        ),
        # an unknown type with 0x80 set: skipped silently (also dropping an open record)
        (
            "ignorable_type",
            chunk(1, b"a")
            + chunk(0xC8, b"zz")
            + chunk(2, b"p")
            + chunk(0x81, b"")
            + chunk(4, b"q")
            + chunk(1, b"c"),
            None,
            _damage_mid_log((32, 1, "missing start of fragmented record(2)")),
        ),
    ]
    return {name: (data, log, modes) for name, data, log, modes in rows}


TABLE_CASES = _table_cases()
