"""Benchmarks of leveldb_log against the obvious alternatives, as ratios.

    python bench/run.py [--quick] [--markdown] [--json PATH] [--only crc,write,read,memory]

This machine (and CI's) is shared and noisy, so every figure that matters is a ratio
against a baseline measured in the same process, interleaved with it: the contenders of
one case run round-robin (the order rotates every round), each measurement lasting about
--seconds, for a warm-up round that is thrown away and then --rounds rounds. A ratio is
the median of the per-round ratios; a rate is the median of the per-round rates.

Cases:

- crc32c: leveldb_log.crc32c against crc32c.crc32c and google_crc32c.value / .extend
  (the ``bench`` extra) on 64 B, 4 KiB, 32 KiB and 1 MiB buffers.
- write / read of 100 B, 4 KiB and 1 MiB records, to/from memory (io.BytesIO target,
  bytes source) and a page-cache file on /tmp, against the pure-Python model
  (tests/model.py), the tfrecord package, and raw I/O of the same bytes.
- peak memory (peak RSS) of reading a log much larger than its largest record, in a
  subprocess, against a subprocess that only imports the package.

Time is the process's CPU time by default (--clock wall for elapsed time), so waiting for a
CPU while other processes run is not counted.

See bench/README.md for what each row means.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.metadata
import importlib.util
import io
import json
import os
import platform
import random
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import leveldb_log

ROOT = Path(__file__).resolve().parent.parent
KiB = 1024
MiB = 1024 * 1024
BLOCK = leveldb_log.BLOCK_SIZE
WRITER_BUFFER = getattr(leveldb_log._core, "DEFAULT_BUFFER_SIZE", 64 * KiB)


def load_model() -> Any:
    spec = importlib.util.spec_from_file_location("llog_model", ROOT / "tests" / "model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


model = load_model()


def optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


crc32c_pkg = optional("crc32c")
google_crc32c = optional("google_crc32c")
tf_writer = optional("tfrecord.writer")
tf_reader = optional("tfrecord.reader")


# ---------------------------------------------------------------------------
# machine
# ---------------------------------------------------------------------------

FLAGS = ("sse4_2", "pclmulqdq", "avx2", "avx512f", "vpclmulqdq")


def version_of(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine_info() -> dict[str, Any]:
    cpu, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and cpu in ("", platform.machine()):
                cpu = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cpu_flags": {f: f in flags for f in FLAGS},
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "python_impl": platform.python_implementation(),
        "platform": platform.platform(),
        "leveldb_log": getattr(leveldb_log, "__version__", "?"),
        "crc32c_implementation": leveldb_log.crc32c_implementation,
        "packages": {
            "crc32c": version_of("crc32c"),
            "crc32c.hardware_based": getattr(crc32c_pkg, "hardware_based", None),
            "google-crc32c": version_of("google-crc32c"),
            "google_crc32c.implementation": getattr(google_crc32c, "implementation", None),
            "tfrecord": version_of("tfrecord"),
            "protobuf": version_of("protobuf"),
        },
        "loadavg_start": loadavg(),
        "extension_built": time.strftime(
            "%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(leveldb_log._core.__file__))
        ),
        "git": git_describe(),
    }


def loadavg() -> tuple[float, float, float]:
    return os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)


def git_describe() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    return out.stdout.strip() or None


# ---------------------------------------------------------------------------
# harness
# ---------------------------------------------------------------------------


@dataclass
class Contender:
    """One way of doing a case's work: setup(n) prepares n records' worth, run() does it."""

    name: str
    role: str  # ours / ours_many / model / tfrecord / tfrecord_framing / raw / package
    setup: Callable[[int], Any]
    run: Callable[[Any], object]
    max_n: int
    probe_n: int = 1
    # filled in by measure()
    n: int = 0
    passes: int = 1
    samples: list[float] = field(default_factory=list)  # seconds per pass, measured rounds


@dataclass
class Case:
    key: str
    op: str  # crc32c / write / read
    size: int
    target: str  # memory / file / buffer
    contenders: list[Contender]
    ours: list[str]  # roles whose ratios are reported
    bases: list[str]  # roles they are compared with


@dataclass
class Config:
    seconds: float
    rounds: int
    max_bytes: int
    peak_log_bytes: int


# The clock of every measurement: CPU time of this process (user + system) by default, so
# that time spent waiting for a CPU while other processes run is not counted; or wall time.
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["cpu"]


def timed(c: Contender, state: Any, passes: int) -> float:
    gc.collect()
    gc.disable()
    try:
        t0 = clock()
        for _ in range(passes):
            c.run(state)
        return (clock() - t0) / passes
    finally:
        gc.enable()


def measure(case: Case, cfg: Config, progress: bool) -> None:
    started = time.perf_counter()
    states = []
    for c in case.contenders:
        # Calibrate: time a small probe, then pick a record count (capped by the data
        # budget) and a number of passes so that one measurement takes about cfg.seconds.
        n = max(1, min(c.probe_n, c.max_n))
        state = c.setup(n)
        per_record = min(timed(c, state, 1) for _ in range(2)) / n
        want = max(1, int(cfg.seconds / max(per_record, 1e-12)))
        if want > n:
            c.n = min(want, c.max_n)
            state = None  # let the probe's data go before making the full set
            state = c.setup(c.n)
        else:
            c.n = n
        c.passes = max(1, round(cfg.seconds / (per_record * c.n)))
        states.append(state)
    k = len(case.contenders)
    for r in range(cfg.rounds + 1):  # round 0 is the warm-up
        for i in range(k):
            j = (i + r) % k
            c = case.contenders[j]
            t = timed(c, states[j], c.passes)
            if r > 0:
                c.samples.append(t)
    if progress:
        took = time.perf_counter() - started
        print(f"  {case.key}: {took:.1f} s", file=sys.stderr, flush=True)


def rates(c: Contender) -> list[float]:
    return [c.n / t for t in c.samples]


def summary(c: Contender, size: int) -> dict[str, Any]:
    med = statistics.median(c.samples)
    return {
        "name": c.name,
        "role": c.role,
        "records_per_pass": c.n,
        "passes": c.passes,
        "seconds_per_pass": c.samples,
        "median_seconds": med,
        "records_per_s": c.n / med,
        "mb_per_s": c.n * size / med / 1e6,
        "spread": (max(c.samples) - min(c.samples)) / med,
    }


def ratio(a: Contender, b: Contender) -> float:
    """Median over rounds of rate(a) / rate(b)."""
    return statistics.median(x / y for x, y in zip(rates(a), rates(b), strict=True))


def by_role(case: Case, role: str) -> Contender | None:
    return next((c for c in case.contenders if c.role == role), None)


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------


class Data:
    """Records, encoded logs and files, made once and shared by the contenders."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self._records: dict[int, list[bytes]] = {}
        self._logs: dict[tuple[int, int], bytes] = {}
        self._files: dict[tuple[str, int, int], Path] = {}
        self._scratch: set[Path] = set()

    def records(self, size: int, n: int) -> list[bytes]:
        have = self._records.get(size)
        if have is None or len(have) < n:
            blob = random.Random(size).randbytes(size * n)
            have = [blob[i : i + size] for i in range(0, size * n, size)]
            self._records[size] = have
        return have[:n]

    def log(self, size: int, n: int) -> bytes:
        key = (size, n)
        if key not in self._logs:
            buf = io.BytesIO()
            with leveldb_log.Writer(buf) as w:
                w.write_many(self.records(size, n))
            self._logs[key] = buf.getvalue()
        return self._logs[key]

    def file(self, kind: str, size: int, n: int) -> Path:
        """A warm page-cache file holding n records: kind "log" (ours) or "tfrecord"."""
        key = (kind, size, n)
        if key not in self._files:
            path = self.tmp / f"{kind}-{size}-{n}"
            if kind == "log":
                path.write_bytes(self.log(size, n))
            else:
                path.write_bytes(tfrecord_bytes(self.records(size, n)))
            with open(path, "rb") as f:  # warm the page cache
                while f.read(MiB):
                    pass
            self._files[key] = path
        return self._files[key]

    def scratch(self, path: Path) -> Path:
        """A file a contender writes, removed by forget()."""
        self._scratch.add(path)
        return path

    def forget(self, keep_records: bool = False) -> None:
        for path in [*self._files.values(), *self._scratch]:
            path.unlink(missing_ok=True)
        self._files.clear()
        self._scratch.clear()
        self._logs.clear()
        if not keep_records:
            self._records.clear()


def tfrecord_framing(f: Any, records: Sequence[bytes]) -> None:
    """TFRecordWriter.write without the tf.train.Example serialization: its own framing
    code (length, masked CRC of the length, data, masked CRC of the data)."""
    masked_crc = tf_writer.TFRecordWriter.masked_crc
    pack = struct.pack
    for r in records:
        length = pack("<Q", len(r))
        f.write(length)
        f.write(masked_crc(length))
        f.write(r)
        f.write(masked_crc(r))


def tfrecord_bytes(records: Sequence[bytes]) -> bytes:
    """The same bytes as tfrecord_framing, made quickly (for preparing files to read)."""
    mask, crc, pack = leveldb_log.mask_crc, leveldb_log.crc32c, struct.pack
    out = bytearray()
    for r in records:
        length = pack("<Q", len(r))
        out += length + pack("<I", mask(crc(length))) + r + pack("<I", mask(crc(r)))
    return bytes(out)


def chunks(data: bytes, size: int) -> list[memoryview]:
    view = memoryview(data)
    return [view[i : i + size] for i in range(0, len(data), size)]


# ---------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------

CRC_SIZES = (64, 4 * KiB, 32 * KiB, MiB)
RECORD_SIZES = (100, 4 * KiB, MiB)


def size_name(size: int) -> str:
    if size >= MiB:
        return f"{size // MiB} MiB"
    if size >= KiB:
        return f"{size // KiB} KiB"
    return f"{size} B"


def crc_case(size: int, cfg: Config) -> Case:
    buf = random.Random(size).randbytes(size)
    probe = max(1, (256 * KiB) // size)
    cap = 10**9

    def count(n: int) -> range:
        return range(n)

    def calls(fn: Callable[[bytes], object]) -> Callable[[range], None]:
        def run(rng: range) -> None:
            for _ in rng:
                fn(buf)

        return run

    cs = [Contender("leveldb_log.crc32c", "ours", count, calls(leveldb_log.crc32c), cap, probe)]
    if crc32c_pkg is not None:
        cs.append(
            Contender("crc32c.crc32c", "package", count, calls(crc32c_pkg.crc32c), cap, probe)
        )
    if google_crc32c is not None:
        value, extend = google_crc32c.value, google_crc32c.extend

        def run_extend(rng: range) -> None:
            for _ in rng:
                extend(0, buf)

        cs.append(Contender("google_crc32c.value", "package", count, calls(value), cap, probe))
        cs.append(Contender("google_crc32c.extend", "package", count, run_extend, cap, probe))
    return Case(f"crc32c/{size_name(size)}", "crc32c", size, "buffer", cs, ["ours"], ["package"])


def write_case(size: int, target: str, data: Data, cfg: Config) -> Case:
    """Memory: a reused io.BytesIO (seek(0) each pass). File: a warm page-cache file on /tmp
    overwritten in place each pass; plus Writer(path), which creates (truncates) the file,
    against os.write to a truncated file."""
    max_n = max(1, cfg.max_bytes // size)
    probe = max(1, (256 * KiB) // size)
    raw_chunk = max(size + 7, WRITER_BUFFER)

    def with_sink(role: str, what: Callable[[int], Any] | None = None) -> Callable[[int], Any]:
        """setup(n) -> (records or chunks, the contender's own target)."""

        def setup(n: int) -> Any:
            items = what(n) if what else data.records(size, n)
            if target == "memory":
                return items, io.BytesIO()
            path = data.scratch(data.tmp / f"write-{size}-{role}")
            path.touch()
            return items, path

        return setup

    def raw_chunks(n: int) -> list[memoryview]:
        return chunks(data.log(size, n), raw_chunk)

    def rewind(sink: Any) -> Any:
        """The target of one pass: the BytesIO rewound, or the file opened at offset 0."""
        if target == "memory":
            sink.seek(0)
            return contextlib.nullcontext(sink)
        return open(sink, "r+b", buffering=0)

    def ours(state: tuple[list[bytes], Any]) -> None:
        recs, sink = state
        with rewind(sink) as f, leveldb_log.Writer(f) as w:
            for r in recs:
                w.write(r)

    def ours_many(state: tuple[list[bytes], Any]) -> None:
        recs, sink = state
        with rewind(sink) as f, leveldb_log.Writer(f) as w:
            w.write_many(recs)

    def ours_new(state: tuple[list[bytes], Path]) -> None:
        recs, path = state
        with leveldb_log.Writer(path) as w:
            for r in recs:
                w.write(r)

    def mod(state: tuple[list[bytes], Any]) -> None:
        recs, sink = state
        with rewind(sink) as f:
            f.write(model.encode(recs)[0])

    def tf_example(state: tuple[list[bytes], Any]) -> None:
        recs, sink = state
        w = tf_writer.TFRecordWriter(os.devnull)
        w.file.close()
        # It only opens paths, truncating them: give it the same target as the others
        # (buffered, as it opens files).
        w.file = sink if target == "memory" else open(sink, "r+b")
        w.file.seek(0)
        for r in recs:
            w.write({"data": (r, "byte")})
        if target != "memory":
            w.close()

    def tf_framing(state: tuple[list[bytes], Any]) -> None:
        recs, sink = state
        if target == "memory":
            sink.seek(0)
            tfrecord_framing(sink, recs)
        else:
            with open(sink, "r+b") as f:  # buffered, as TFRecordWriter opens files
                tfrecord_framing(f, recs)

    def raw(state: tuple[list[memoryview], Any]) -> None:
        parts, sink = state
        if target == "memory":
            sink.seek(0)
            for p in parts:
                sink.write(p)
            return
        fd = os.open(sink, os.O_WRONLY)
        try:
            for p in parts:
                os.write(fd, p)
        finally:
            os.close(fd)

    def raw_new(state: tuple[list[memoryview], Path]) -> None:
        parts, path = state
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            for p in parts:
                os.write(fd, p)
        finally:
            os.close(fd)

    where = "BytesIO" if target == "memory" else "file object"
    cs = [
        Contender(f"Writer({where}).write loop", "ours", with_sink("ours"), ours, max_n, probe),
        Contender(
            f"Writer({where}).write_many", "ours_many", with_sink("many"), ours_many, max_n, probe
        ),
        Contender("model.encode", "model", with_sink("model"), mod, max_n, max(1, probe // 16)),
    ]
    if tf_writer is not None:
        cs.append(
            Contender("TFRecordWriter.write", "tfrecord", with_sink("tf"), tf_example, max_n, probe)
        )
        cs.append(
            Contender(
                "tfrecord framing", "tfrecord_framing", with_sink("tff"), tf_framing, max_n, probe
            )
        )
    raw_name = "BytesIO.write" if target == "memory" else "os.write"
    cs.append(
        Contender(
            f"raw {raw_name} ({size_name(raw_chunk)} chunks)",
            "raw",
            with_sink("raw", raw_chunks),
            raw,
            max_n,
            probe,
        )
    )
    ours_roles = ["ours", "ours_many"]
    if target == "file":
        ours_roles.append("ours_new")
        cs.append(
            Contender(
                "Writer(path) new file, write loop",
                "ours_new",
                with_sink("new"),
                ours_new,
                max_n,
                probe,
            )
        )
        cs.append(
            Contender(
                f"raw os.write to a new file ({size_name(raw_chunk)} chunks)",
                "raw_new",
                with_sink("rawnew", raw_chunks),
                raw_new,
                max_n,
                probe,
            )
        )
    bases = ["model", "tfrecord", "tfrecord_framing", "raw"]
    key = f"write/{size_name(size)}/{target}"
    return Case(key, "write", size, target, cs, ours_roles, bases)


def read_case(size: int, target: str, data: Data, cfg: Config) -> Case:
    max_n = max(1, cfg.max_bytes // size)
    probe = max(1, (256 * KiB) // size)
    raw_chunk = max(size, BLOCK)

    def loop(source: Any) -> None:
        for _rec in leveldb_log.Reader(source):
            pass

    def tf_loop(path: Path) -> None:
        for _rec in tf_reader.tfrecord_iterator(str(path)):
            pass

    if target == "memory":

        def src(n: int) -> Any:
            return data.log(size, n)

        def mod(log: bytes) -> None:
            model.read(log)

        def tf_src(n: int) -> Any:
            return data.file("tfrecord", size, n)

        def raw_src(n: int) -> Any:
            log = data.log(size, n)
            return log, -(-len(log) // n)

        def raw(state: tuple[bytes, int]) -> None:
            log, step = state
            for i in range(0, len(log), step):
                _rec = log[i : i + step]

        raw_name = "raw bytes slices"
        tf_name = "tfrecord_iterator (warm file: it reads paths only)"
    else:

        def src(n: int) -> Any:
            return str(data.file("log", size, n))

        def mod(path: str) -> None:
            with open(path, "rb") as f:
                model.read(f.read())

        def tf_src(n: int) -> Any:
            return data.file("tfrecord", size, n)

        def raw_src(n: int) -> Any:
            return data.file("log", size, n), bytearray(raw_chunk)

        def raw(state: tuple[Path, bytearray]) -> None:
            path, buf = state
            view = memoryview(buf)
            with open(path, "rb", buffering=0) as f:
                while f.readinto(view):
                    pass

        raw_name = f"raw readinto ({size_name(raw_chunk)} chunks)"
        tf_name = "tfrecord_iterator"

    cs = [
        Contender("for rec in Reader", "ours", src, loop, max_n, probe),
        Contender("model.read", "model", src, mod, max_n, max(1, probe // 16)),
    ]
    if tf_reader is not None:
        cs.append(Contender(tf_name, "tfrecord", tf_src, tf_loop, max_n, probe))
    cs.append(Contender(raw_name, "raw", raw_src, raw, max_n, probe))
    key = f"read/{size_name(size)}/{target}"
    return Case(key, "read", size, target, cs, ["ours"], ["model", "tfrecord", "raw"])


# ---------------------------------------------------------------------------
# peak memory
# ---------------------------------------------------------------------------

PEAK_SCRIPT = r"""
import resource, sys
mode = sys.argv[1]
if mode.startswith("tfrecord"):
    import tfrecord.reader
import leveldb_log
if mode == "path":
    for r in leveldb_log.Reader(sys.argv[2]):
        pass
elif mode == "file":
    with open(sys.argv[2], "rb") as f:
        for r in leveldb_log.Reader(f):
            pass
elif mode == "tfrecord":
    for r in tfrecord.reader.tfrecord_iterator(sys.argv[2]):
        pass
# ru_maxrss survives execve: a child started by a large parent reports the parent's size.
# VmHWM is the peak of this process image alone; ru_maxrss is the fallback.
try:
    with open("/proc/self/status") as f:
        print(next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")))
except (OSError, StopIteration):
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_rss_kib(mode: str, path: str, repeat: int = 3) -> int:
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", PEAK_SCRIPT, mode, path],
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(int(out.stdout.split()[-1]))
    return int(statistics.median(runs))


def peak_memory(data: Data, cfg: Config) -> list[dict[str, Any]]:
    rows = []
    for size in (100, MiB):
        n = max(1, cfg.peak_log_bytes // size)
        path = data.tmp / f"peak-{size}.log"
        with leveldb_log.Writer(path) as w:
            blob = random.Random(7).randbytes(min(size * n, 8 * MiB) + size)
            step = len(blob) - size
            w.write_many(blob[(i * size) % step : (i * size) % step + size] for i in range(n))
        log_size = path.stat().st_size
        base = peak_rss_kib("import", str(path))
        for mode in ("path", "file"):
            rss = peak_rss_kib(mode, str(path))
            rows.append(peak_row(f"Reader({mode})", size, log_size, base, rss))
        if tf_reader is not None:
            tpath = data.tmp / f"peak-{size}.tfrecord"
            frame = tfrecord_bytes([random.Random(8).randbytes(size)])
            per_write = max(1, MiB // len(frame))
            with open(tpath, "wb") as f:
                for i in range(0, n, per_write):
                    f.write(frame * min(per_write, n - i))
            tbase = peak_rss_kib("tfrecord-import", str(tpath))
            rss = peak_rss_kib("tfrecord", str(tpath))
            rows.append(peak_row("tfrecord_iterator", size, tpath.stat().st_size, tbase, rss))
            tpath.unlink()
        path.unlink()
    return rows


def peak_row(name: str, size: int, log_size: int, base: int, rss: int) -> dict[str, Any]:
    delta = max(0, rss - base) * KiB
    return {
        "reader": name,
        "record_size": size,
        "log_bytes": log_size,
        "baseline_peak_rss_kib": base,
        "peak_rss_kib": rss,
        "delta_bytes": delta,
        "delta_per_largest_record": delta / size,
        "delta_per_log": delta / log_size,
    }


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------


def fmt_rate(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"


def fmt_num(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def fmt_x(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}x" if x < 10 else f"{x:.0f}x"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    if markdown:
        out = ["| " + " | ".join(headers) + " |"]
        out.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|")
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cells)
        )

    head = line(headers)
    out = [head, "-" * len(head), *(line(r) for r in rows)]
    return "\n".join(out)


ROLE_LABEL = {
    "ours": "ours",
    "ours_many": "ours (write_many)",
    "model": "x model",
    "tfrecord": "x tfrecord",
    "tfrecord_framing": "x tfrecord framing",
    "raw": "x raw",
}


def case_ratios(case: Case) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for o in case.ours:
        oc = by_role(case, o)
        if oc is None:
            continue
        out[o] = {}
        # Writer(path) truncates: it is compared with raw writes to a truncated file only.
        pairs = {"raw": "raw_new"} if o == "ours_new" else {b: b for b in case.bases}
        for column, b in pairs.items():
            bc = by_role(case, b)
            if bc is not None:
                out[o][column] = ratio(oc, bc)
    return out


@dataclass
class Target:
    what: str
    measured: float | None
    goal: float | None  # None: shown for comparison, not a target
    unit: str  # "x" or "rec/s"

    @property
    def status(self) -> str:
        if self.measured is None:
            return "n/a"
        if self.goal is None:
            return "info"
        return "PASS" if self.measured >= self.goal else "MISS"

    def show(self, v: float | None) -> str:
        if v is None:
            return "-"
        return fmt_x(v) if self.unit == "x" else fmt_rate(v) + " rec/s"


def evaluate_targets(cases: dict[str, Case]) -> list[Target]:
    ts: list[Target] = []

    def median_rate(key: str, role: str) -> float | None:
        c = by_role(cases[key], role) if key in cases else None
        return statistics.median(rates(c)) if c is not None and c.samples else None

    def rat(key: str, role: str, base: str) -> float | None:
        case = cases.get(key)
        oc = by_role(case, role) if case else None
        bc = by_role(case, base) if case else None
        return ratio(oc, bc) if oc and bc else None

    def crc(size: int) -> float | None:
        case = cases.get(f"crc32c/{size_name(size)}")
        return evaluate_crc_ratio(case) if case else None

    for size in CRC_SIZES:
        ts.append(Target(f"crc32c {size_name(size)} vs faster package", crc(size), 1.0, "x"))
    ts.append(Target("crc32c 1 MiB vs faster package", crc(MiB), 1.5, "x"))
    r100 = "read/100 B/memory"
    ts.append(Target("read 100 B from memory, for loop", median_rate(r100, "ours"), 10e6, "rec/s"))
    ts.append(Target("read 100 B from memory vs model", rat(r100, "ours", "model"), 20, "x"))
    ts.append(
        Target("read 100 B from memory vs tfrecord reader", rat(r100, "ours", "tfrecord"), 5, "x")
    )
    w100 = "write/100 B/memory"
    ts.append(
        Target("write 100 B to memory, Writer.write loop", median_rate(w100, "ours"), 5e6, "rec/s")
    )
    ts.append(
        Target("write 100 B to memory, write_many", median_rate(w100, "ours_many"), 10e6, "rec/s")
    )
    ts.append(
        Target(
            "write 1 MiB, Writer(path) vs os.write, new page-cache file",
            rat("write/1 MiB/file", "ours_new", "raw_new"),
            0.8,
            "x",
        )
    )
    # Not a target: into a file object every byte is checksummed (read from memory once
    # more than os.write reads it) and handed over in 64 KiB bytes objects; see
    # bench/README.md ("What limits the file-object row").
    ts.append(
        Target(
            "write 1 MiB, Writer(file object) vs os.write, warm file in place",
            rat("write/1 MiB/file", "ours", "raw"),
            None,
            "x",
        )
    )
    ts.append(
        Target(
            "read 1 MiB, Reader(path) vs readinto, warm page-cache file",
            rat("read/1 MiB/file", "ours", "raw"),
            0.5,
            "x",
        )
    )
    return ts


def report(
    info: dict[str, Any],
    cfg: Config,
    cases: dict[str, Case],
    peaks: list[dict[str, Any]],
    targets: list[Target],
    markdown: bool,
) -> str:
    out = []
    flags = ", ".join(f"{f} {'yes' if v else 'no'}" for f, v in info["cpu_flags"].items())
    pk = info["packages"]
    out.append(
        f"CPU: {info['cpu']} ({info['cpus']} CPUs; {flags})\n"
        f"Python {info['python']} ({info['python_impl']}), {info['platform']}\n"
        f"leveldb_log {info['leveldb_log']} (git {info['git']}, extension built "
        f"{info['extension_built']}), crc32c_implementation = "
        f"{info['crc32c_implementation']!r}\n"
        f"crc32c {pk['crc32c']} (hardware_based={pk['crc32c.hardware_based']}), "
        f"google-crc32c {pk['google-crc32c']} ({pk['google_crc32c.implementation']}), "
        f"tfrecord {pk['tfrecord']}, protobuf {pk['protobuf']}\n"
        f"load average {info['loadavg_start'][0]:.2f} at start, "
        f"{info.get('loadavg_end', (0,))[0]:.2f} at end; "
        f"{cfg.rounds} rounds after a warm-up, ~{cfg.seconds:g} s of {info['clock']} time per "
        f"measurement; run took {info['elapsed_s']:.0f} s"
    )
    if markdown:
        out[0] = "\n".join(line + "  " for line in out[0].splitlines())

    crc = [c for c in cases.values() if c.op == "crc32c"]
    if crc:
        names = [c.name for c in crc[0].contenders]
        rows = []
        for case in crc:
            row = [size_name(case.size)]
            for name in names:
                c = next((x for x in case.contenders if x.name == name), None)
                row.append(f"{statistics.median(rates(c)) * case.size / 1e9:.2f}" if c else "-")
            faster = evaluate_crc_ratio(case)
            row.append(fmt_x(faster))
            spread = max(summary(c, case.size)["spread"] for c in case.contenders)
            row.append(f"{spread:.0%}")
            rows.append(row)
        heads = ["CRC-32C", *(f"{n} GB/s" for n in names), "ours / faster pkg", "spread"]
        out.append(
            "CRC-32C throughput (GB/s) and ratio against the faster package\n"
            + table(heads, rows, markdown)
        )

    rows = []
    for case in cases.values():
        if case.op == "crc32c":
            continue
        ratios = case_ratios(case)
        for o in case.ours:
            oc = by_role(case, o)
            if oc is None:
                continue
            s = summary(oc, case.size)
            what = f"{case.op} {size_name(case.size)} {'<-' if case.op == 'read' else '->'} "
            target = case.target
            if case.op == "write" and target == "file":
                target = "warm file (file object)"
            what += {
                "ours_many": f"{target}, write_many",
                "ours_new": "new file (Writer(path))",
            }.get(o, target)
            row = [what, fmt_rate(s["records_per_s"]), f"{s['mb_per_s']:.0f}"]
            for b in ("model", "tfrecord", "tfrecord_framing", "raw"):
                row.append(fmt_x(ratios[o].get(b)))
            rows.append(row)
    if rows:
        heads = ["ours", "rec/s", "MB/s", "/ model", "/ tfrecord", "/ tfrecord framing", "/ raw"]
        out.append(
            "Records: our rate, and our rate divided by each baseline's "
            "(median of per-round ratios)\n" + table(heads, rows, markdown)
        )

        rows = []
        for case in cases.values():
            if case.op == "crc32c":
                continue
            for c in case.contenders:
                s = summary(c, case.size)
                rows.append(
                    [
                        case.key,
                        c.name,
                        f"{c.n}x{c.passes}",
                        fmt_rate(s["records_per_s"]),
                        f"{s['mb_per_s']:.0f}",
                        f"{s['spread']:.0%}",
                    ]
                )
        heads = ["case", "contender", "records x passes", "rec/s", "MB/s", "spread"]
        out.append(
            "Every contender (median rate; spread = (max - min) / median of the rounds)\n"
            + table(heads, rows, markdown)
        )

    if peaks:
        rows = [
            [
                f"{p['reader']}, {size_name(p['record_size'])} records",
                f"{p['log_bytes'] / MiB:.0f} MiB",
                f"{p['baseline_peak_rss_kib'] / KiB:.1f} MiB",
                f"{p['delta_bytes'] / MiB:.2f} MiB",
                fmt_num(p["delta_per_largest_record"]),
                f"{p['delta_per_log']:.2%}",
            ]
            for p in peaks
        ]
        heads = ["peak memory", "log", "baseline RSS", "extra RSS", "/ largest record", "/ log"]
        out.append(
            "Peak memory reading a log (peak RSS minus that of a process that only imports)\n"
            + table(heads, rows, markdown)
        )

    if targets:
        rows = [
            [
                t.what,
                t.show(t.measured),
                "-" if t.goal is None else ">= " + t.show(t.goal),
                t.status,
            ]
            for t in targets
        ]
        out.append("Targets\n" + table(["target", "measured", "goal", ""], rows, markdown))
    if markdown:  # a title, a blank line, the table
        out = [re.sub(r"^([^|\n][^\n]*)\n\|", r"**\1**\n\n|", part, count=1) for part in out]
    return "\n\n".join(out)


def evaluate_crc_ratio(case: Case) -> float | None:
    oc = by_role(case, "ours")
    pkgs = [c for c in case.contenders if c.role == "package"]
    if oc is None or not pkgs:
        return None
    per_round = zip(rates(oc), *(rates(p) for p in pkgs), strict=True)
    return statistics.median(r[0] / max(r[1:]) for r in per_round)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def sanity(data: Data) -> None:
    """The contenders do the same work: same bytes, same records."""
    mixed = [b"", b"x" * 100, random.Random(1).randbytes(70_000), b"y" * 32_761]
    for size in (*RECORD_SIZES, 0):
        recs = data.records(size, 3) if size else mixed
        buf = io.BytesIO()
        with leveldb_log.Writer(buf) as w:
            w.write_many(recs)
        assert buf.getvalue() == model.encode(recs)[0], "Writer and model disagree"
        assert list(leveldb_log.Reader(buf.getvalue())) == recs
        assert model.read(buf.getvalue()).payloads == recs
        if tf_reader is not None:
            path = data.tmp / "sanity.tfrecord"
            with open(path, "wb") as f:
                tfrecord_framing(f, recs)
            got = [bytes(r) for r in tf_reader.tfrecord_iterator(str(path))]
            assert got == recs, "tfrecord framing does not read back"
            assert path.read_bytes() == tfrecord_bytes(recs)
            path.unlink()
    data.forget()
    for size in CRC_SIZES:
        b = random.Random(size).randbytes(size)
        want = leveldb_log.crc32c(b)
        assert crc32c_pkg is None or crc32c_pkg.crc32c(b) == want
        assert google_crc32c is None or google_crc32c.value(b) == want


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short run (about a minute at most)")
    ap.add_argument("--markdown", action="store_true", help="print markdown tables")
    ap.add_argument("--json", type=Path, metavar="PATH", help="also write every number here")
    ap.add_argument(
        "--only",
        default="crc,write,read,memory",
        help="comma-separated subset of crc,write,read,memory",
    )
    ap.add_argument("--rounds", type=int, help="measured rounds (default 7, quick 3)")
    ap.add_argument("--seconds", type=float, help="per measurement (default 0.1, quick 0.04)")
    ap.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="cpu: process CPU time, robust on a shared box (default); wall: elapsed time",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]

    quick = args.quick
    cfg = Config(
        seconds=args.seconds or (0.04 if quick else 0.1),
        rounds=args.rounds or (3 if quick else 7),
        max_bytes=(32 if quick else 64) * MiB,
        peak_log_bytes=(32 if quick else 256) * MiB,
    )
    only = set(args.only.split(","))
    missing = [
        n
        for n, m in (
            ("crc32c", crc32c_pkg),
            ("google-crc32c", google_crc32c),
            ("tfrecord", tf_reader),
        )
        if m is None
    ]
    if missing:
        print(
            f"note: {', '.join(missing)} not installed (pip install '.[bench]'): "
            "those baselines are left out",
            file=sys.stderr,
        )

    info = machine_info()
    info["clock"] = args.clock
    started = time.perf_counter()
    tmp = Path(
        tempfile.mkdtemp(prefix="llog-bench-", dir="/tmp" if os.path.isdir("/tmp") else None)
    )
    data = Data(tmp)
    cases: dict[str, Case] = {}
    peaks: list[dict[str, Any]] = []
    progress = not args.quiet
    try:
        sanity(data)
        if "crc" in only:
            for size in CRC_SIZES:
                case = crc_case(size, cfg)
                measure(case, cfg, progress)
                cases[case.key] = case
        for size in RECORD_SIZES:  # the records of one size serve its four cases
            for op, make in (("write", write_case), ("read", read_case)):
                if op not in only:
                    continue
                for target in ("memory", "file"):
                    case = make(size, target, data, cfg)
                    measure(case, cfg, progress)
                    cases[case.key] = case
                    data.forget(keep_records=True)
            data.forget()
        order = {"crc32c": 0, "write": 1, "read": 2}
        cases = dict(sorted(cases.items(), key=lambda kv: (order[kv[1].op], kv[1].size)))
        if "memory" in only:
            peaks = peak_memory(data, cfg)
    finally:
        data.forget()
        shutil.rmtree(tmp, ignore_errors=True)
    info["loadavg_end"] = loadavg()
    info["elapsed_s"] = time.perf_counter() - started

    targets = evaluate_targets(cases)
    print(report(info, cfg, cases, peaks, targets, args.markdown))
    if args.json:
        doc = {
            "machine": info,
            "config": vars(cfg) | {"quick": quick},
            "cases": [
                {
                    "key": c.key,
                    "op": c.op,
                    "size": c.size,
                    "target": c.target,
                    "contenders": [summary(x, c.size) for x in c.contenders],
                    "ratios": case_ratios(c) if c.op != "crc32c" else {},
                    "ours_vs_faster_package": evaluate_crc_ratio(c) if c.op == "crc32c" else None,
                }
                for c in cases.values()
            ],
            "peak_memory": peaks,
            "targets": [
                {
                    "target": t.what,
                    "measured": t.measured,
                    "goal": t.goal,
                    "unit": t.unit,
                    "status": t.status,
                }
                for t in targets
            ],
        }
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
