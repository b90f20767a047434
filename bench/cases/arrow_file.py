"""Arrow batches from a warm page-cache file, at 100 B, 4 KiB and 1 MiB records, on the
chosen CRC-32C path and with the path forced to what a CPU with AVX2 and one with SSE4.2
(and PCLMULQDQ) would choose (issue 37). Contenders, interleaved in one process:
`for batch in Reader(path).iter_batches()`, `for rec in Reader(path)`, `crc32c` over the
same log bytes alone (in memory), `io.BytesIO` line iteration over lines of the same size
(100 B: one new `bytes` a record, from memory, the floor of the loop), and `readinto` of
the file into one reused buffer (of a record, at least the reader's 128 KiB chunk): the
kernel's copy alone, which every reader of a file pays.

Each path runs in a child process of its own started with LEVELDB_LOG_CRC32C=<path>, as
the CRC cases do: ``python -m bench.cases.arrow_file`` is that child, printing its samples
as JSON.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import leveldb_log

from bench.cases.crc import ENV, child_args, child_docs, contenders_of
from bench.cases.read import raw_readinto
from bench.data import Data
from bench.harness import Case, Config, Contender, KiB, MiB, measure, size_name

SIZES = (100, 4 * KiB, MiB)
#: The paths a CPU with AVX2 and VPCLMULQDQ, and one with SSE4.2 and PCLMULQDQ, choose.
FORCED = ("avx2+vpclmulqdq+crc32", "sse4.2+pclmul")
CHUNK = 128 * KiB  # what Reader(path) reads at a time (LLPY_READ_CHUNK)


def batches(path: str) -> None:
    """for batch in Reader(path).iter_batches(): each batch dropped as it comes."""
    for _batch in leveldb_log.Reader(path).iter_batches():
        pass


def loop(path: str) -> None:
    """for rec in Reader(path)."""
    for _rec in leveldb_log.Reader(path):
        pass


def crc_alone(log: bytes) -> None:
    """leveldb_log.crc32c(log): the checksum of the same log bytes, and nothing else."""
    leveldb_log.crc32c(log)


def lines(bio: io.BytesIO) -> None:
    """for line in BytesIO: one new bytes a line, from memory."""
    bio.seek(0)
    for _line in bio:
        pass


def arrow_file_case(size: int, data: Data, cfg: Config, crc_path: str) -> Case:
    """The case for one record size on the loaded CRC-32C path."""
    max_n = max(1, cfg.max_bytes // size)
    probe = max(1, (256 * KiB) // size)

    def src(n: int) -> str:
        return str(data.file("log", size, n))

    def line_src(n: int) -> io.BytesIO:
        return io.BytesIO((b"x" * (size - 1) + b"\n") * n)

    def raw_src(n: int) -> tuple[Path, bytearray]:
        return data.file("log", size, n), bytearray(max(size, CHUNK))

    cs = [
        Contender("Reader(path).iter_batches()", "ours_arrow", src, batches, max_n, probe),
        Contender("for rec in Reader(path)", "loop", src, loop, max_n, probe),
        Contender("crc32c(log) alone", "crc", lambda n: data.log(size, n), crc_alone, max_n, probe),
    ]
    if size == 100:
        cs.append(Contender("for line in io.BytesIO", "lines", line_src, lines, max_n, probe))
    chunk = size_name(max(size, CHUNK))
    cs.append(Contender(f"readinto ({chunk})", "raw", raw_src, raw_readinto, max_n, probe))
    return _case(size, crc_path, cs)


def _case(size: int, crc_path: str, cs: list[Contender]) -> Case:
    key = f"read/{size_name(size)}/arrow-file/{crc_path}"
    return Case(
        key,
        "read",
        size,
        "file, Arrow batches",
        cs,
        ["ours_arrow", "loop"],
        ["crc", "loop", "lines", "raw"],
        crc32c_path=crc_path,
    )


def child_main(argv: list[str] | None = None) -> int:
    """Measure every size on the path LEVELDB_LOG_CRC32C names; print samples as JSON."""
    ap = argparse.ArgumentParser(description="Arrow batches from a file (run by bench)")
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--max-bytes", type=int, required=True)
    ap.add_argument("--clock", default="cpu")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    path = leveldb_log.crc32c_implementation
    if os.environ.get(ENV) != path:  # the numbers must come from the path asked for
        print(f"{ENV}={os.environ.get(ENV)!r} but {path!r} is loaded", file=sys.stderr)
        return 2
    cfg = Config(args.seconds, args.rounds, args.max_bytes, 0, args.clock)
    tmp = Path(
        tempfile.mkdtemp(prefix="llog-bench-", dir="/tmp" if os.path.isdir("/tmp") else None)
    )
    data = Data(tmp)
    out = []
    try:
        for size in SIZES:
            case = arrow_file_case(size, data, cfg, path)
            measure(case, cfg, not args.quiet)
            docs = [
                {"name": c.name, "role": c.role, "n": c.n, "passes": c.passes, "samples": c.samples}
                for c in case.contenders
            ]
            out.append({"size": size, "contenders": docs})
            data.forget()
    finally:
        data.forget()
        shutil.rmtree(tmp, ignore_errors=True)
    json.dump({"path": path, "cases": out}, sys.stdout)
    return 0


def arrow_file_paths() -> list[str]:
    """The chosen path, then each of FORCED this CPU runs (once each)."""
    paths = [leveldb_log.crc32c_implementation]
    usable = leveldb_log.crc32c_implementations
    return paths + [p for p in FORCED if p in usable and p not in paths]


def arrow_file_cases(cfg: Config, progress: bool) -> list[Case]:
    """Every size on each path of arrow_file_paths(), each path in a child process."""
    args = [*child_args(cfg), "--max-bytes", str(cfg.max_bytes)]
    docs = child_docs("bench.cases.arrow_file", arrow_file_paths(), args, progress)
    return [
        _case(case["size"], doc["path"], contenders_of(case))
        for doc in docs
        for case in doc["cases"]
    ]


if __name__ == "__main__":
    sys.exit(child_main())
