"""Big records and bounded memory.

- A record larger than 4 GiB (offsets and lengths past 32 bits) is written to a file and read
  back whole: its length, its CRC-32C and bytes at chosen offsets match, and so does the record
  after it.
- Reading a log many times larger than its largest record holds about one block plus that
  record in memory; writing one holds about its buffer plus the record being written. Each is
  measured as the peak resident size (VmHWM) of a child process, against a child that only
  imports the package.
"""

from __future__ import annotations

import random
import subprocess
import sys
import sysconfig
from pathlib import Path

import leveldb_log
import pytest
from support.records import record_end

B = leveldb_log.BLOCK_SIZE
MIB = 1 << 20


def test_record_larger_than_4_gib_round_trips_through_a_file(tmp_path: Path) -> None:
    size = 4 * 1024**3 + 12345
    chunk = random.Random(1).randbytes(MIB)
    big = bytearray(size)  # 4 GiB once: no other copy is ever made on this side
    for i in range(0, size, MIB):
        big[i : i + MIB] = chunk[: size - i]
        big[i : i + 8] = (i // MIB).to_bytes(8, "little")  # each MiB differs from the others
    probes = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, size - 2, size - 1]
    probes += random.Random(2).sample(range(size), 20)
    expected = {p: big[p] for p in probes}
    crc = leveldb_log.crc32c(big)

    path = tmp_path / "big.log"
    with leveldb_log.Writer(path) as w:
        assert w.write(big) == 0
        after_offset = w.write(b"the record after")
    del big
    assert after_offset == record_end(0, size)
    assert path.stat().st_size == record_end(after_offset, len(b"the record after"))

    with leveldb_log.Reader(path, recovery="absolute") as r:
        rec = next(r)
        assert r.last_record_offset == 0
        assert len(rec) == size
        assert all(rec[p] == v for p, v in expected.items())
        assert leveldb_log.crc32c(rec) == crc
        del rec
        assert next(r) == b"the record after"
        assert r.last_record_offset == after_offset
        assert next(r, None) is None
    path.unlink()  # 4 GiB, in memory where the temporary files are (tests/support/scratch.py)


FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
VMHWM = "next(int(s.split()[1]) for s in open('/proc/self/status') if s.startswith('VmHWM:'))"


def peak_rss_kib(code: str, *args: str) -> tuple[int, str]:
    """Runs code in a fresh interpreter; returns its VmHWM (KiB) and what it printed."""
    code += f"\nprint({VMHWM})\n"
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[-1]), " ".join(out[:-1])


BASELINE = "import sys, random, leveldb_log"
LARGEST = 2 * MIB
LOG_RECORDS = """
import random
def records():
    r = random.Random(9)
    for i in range(700):
        n = 2 * 1024 * 1024 if i % 100 == 50 else r.randrange(0, 200_000)
        yield r.randbytes(n)
"""


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rss") / "log"
    ns: dict = {}
    exec(LOG_RECORDS, ns)
    with leveldb_log.Writer(path) as w:
        w.write_many(ns["records"]())
    assert path.stat().st_size > 30 * LARGEST
    return path


@pytest.mark.parametrize("source", ["path", "file object"])
def test_reading_holds_about_one_block_plus_the_largest_record(big_log: Path, source: str) -> None:
    opener = "sys.argv[1]" if source == "path" else "open(sys.argv[1], 'rb')"
    read = (
        f"\nn = total = 0\nfor rec in leveldb_log.Reader({opener}):\n"
        "    n += 1\n    total += len(rec)\nprint(n, total)"
    )
    # the block, the record being joined, the bytes returned (and, briefly, the one before it)
    bound = B + 3 * LARGEST + MIB
    if FREE_THREADED:
        # mimalloc keeps the pages of freed objects (and refuses PYTHONMALLOC=malloc), so the
        # child first makes bytes of the records' lengths in the same order, and reading may
        # then raise its peak by only what the reader holds besides the bytes it returns.
        sizes = [str(len(rec)) for rec in leveldb_log.Reader(big_log)]
        warm_up = "\nfor rec in (b'x' * int(n) for n in sys.argv[2:]):\n    pass\ndel rec\n"
        peak, out = peak_rss_kib(
            BASELINE + warm_up + f"print({VMHWM})" + read, str(big_log), *sizes
        )
        base, out = int(out.split()[0]), out.split(maxsplit=1)[1]
        bound -= 2 * LARGEST
    else:
        base, _ = peak_rss_kib(BASELINE)
        peak, out = peak_rss_kib(BASELINE + read, str(big_log))
    assert out.split()[0] == "700"
    grown = (peak - base) * 1024
    assert grown <= bound, f"reading grew the process by {grown} bytes (bound {bound})"
    assert grown < big_log.stat().st_size / 8


def test_writing_holds_about_its_buffer_plus_the_record(tmp_path: Path) -> None:
    base, _ = peak_rss_kib(BASELINE + LOG_RECORDS + "\nsum(1 for _ in records())")
    peak, _ = peak_rss_kib(
        BASELINE + LOG_RECORDS + "\nwith leveldb_log.Writer(sys.argv[1]) as w:\n"
        "    w.write_many(records())",
        str(tmp_path / "log"),
    )
    grown = (peak - base) * 1024
    bound = 64 * 1024 + LARGEST + MIB  # the default buffer, a record, slack
    assert grown <= bound, f"writing grew the process by {grown} bytes (bound {bound})"
    assert (tmp_path / "log").stat().st_size > 30 * LARGEST
