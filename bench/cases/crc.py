"""CRC-32C cases: leveldb_log.crc32c against crc32c.crc32c and google_crc32c.value /
.extend, one call per buffer in a Python for loop, at 64 B, 4 KiB, 32 KiB, 1 MiB and
16 MiB.

Every implementation the CPU can run (leveldb_log.crc32c_implementations) is measured in
a child process of its own, started with LEVELDB_LOG_CRC32C=<name> (the only way to pick
one), which measures it against the two packages in the same interleaved rounds and
prints its samples as JSON: ``python -m bench.cases.crc`` is that child.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import leveldb_log

from bench.baselines import ROOT, crc32c_pkg, google_crc32c
from bench.harness import Case, Config, Contender, KiB, MiB, measure, size_name

CRC_SIZES = (64, 4 * KiB, 32 * KiB, MiB, 16 * MiB)
ENV = "LEVELDB_LOG_CRC32C"


def _calls(fn: Callable[[bytes], object], buf: bytes) -> Callable[[range], None]:
    """run(range(n)): fn(buf) n times."""

    def run(rng: range) -> None:
        for _ in rng:
            fn(buf)

    return run


def crc_case(size: int, path: str) -> Case:
    """One buffer of size bytes; ours (whichever implementation is loaded) and the packages."""
    buf = random.Random(size).randbytes(size)
    probe = max(1, (256 * KiB) // size)
    cap = 10**9
    ours = _calls(leveldb_log.crc32c, buf)
    cs = [Contender("leveldb_log.crc32c", "ours", range, ours, cap, probe)]
    if crc32c_pkg is not None:
        pkg = _calls(crc32c_pkg.crc32c, buf)
        cs.append(Contender("crc32c.crc32c", "package", range, pkg, cap, probe))
    if google_crc32c is not None:
        value, extend = google_crc32c.value, google_crc32c.extend

        def run_extend(rng: range) -> None:
            for _ in rng:
                extend(0, buf)

        g_value = _calls(value, buf)
        cs.append(Contender("google_crc32c.value", "package", range, g_value, cap, probe))
        cs.append(Contender("google_crc32c.extend", "package", range, run_extend, cap, probe))
    key = f"crc32c/{size_name(size)}/{path}"
    return Case(key, "crc32c", size, "buffer", cs, ["ours"], ["package"], crc32c_path=path)


def check_values(sizes: tuple[int, ...]) -> None:
    """The loaded implementation and the packages agree on every buffer measured."""
    for size in sizes:
        b = random.Random(size).randbytes(size)
        want = leveldb_log.crc32c(b)
        assert crc32c_pkg is None or crc32c_pkg.crc32c(b) == want, "crc32c disagrees"
        assert google_crc32c is None or google_crc32c.value(b) == want, "google-crc32c disagrees"


def _contender_doc(c: Contender) -> dict[str, Any]:
    """What the parent needs of a measured contender."""
    return {"name": c.name, "role": c.role, "n": c.n, "passes": c.passes, "samples": c.samples}


def child_main(argv: list[str] | None = None) -> int:
    """Measure the implementation LEVELDB_LOG_CRC32C names; print the samples as JSON."""
    ap = argparse.ArgumentParser(description="one CRC-32C implementation (run by bench)")
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--clock", default="cpu")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    path = leveldb_log.crc32c_implementation
    if os.environ.get(ENV) != path:  # the numbers must come from the path asked for
        print(f"{ENV}={os.environ.get(ENV)!r} but {path!r} is loaded", file=sys.stderr)
        return 2
    check_values(CRC_SIZES)
    cfg = Config(args.seconds, args.rounds, 0, 0, args.clock)
    cases = []
    for size in CRC_SIZES:
        case = crc_case(size, path)
        measure(case, cfg, not args.quiet)
        cases.append({"size": size, "contenders": [_contender_doc(c) for c in case.contenders]})
    json.dump({"path": path, "cases": cases}, sys.stdout)
    return 0


def child_docs(
    module: str, paths: list[str], args: list[str], progress: bool
) -> list[dict[str, Any]]:
    """Runs ``python -m module args`` once for each CRC-32C path, forced through ENV, from
    the repository root (where ``-m bench...`` imports this package); each child's JSON
    document, in the order of paths."""
    docs = []
    for path in paths:
        cmd = [sys.executable, "-m", module, *args, *([] if progress else ["--quiet"])]
        env = dict(os.environ, **{ENV: path})
        out = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"the {module} child for {path!r} failed ({out.returncode})")
        docs.append(json.loads(out.stdout))
    return docs


def child_args(cfg: Config) -> list[str]:
    """A child's measuring options, as the parent was given them."""
    return ["--rounds", str(cfg.rounds), "--seconds", repr(cfg.seconds), "--clock", cfg.clock]


def contenders_of(case: dict[str, Any]) -> list[Contender]:
    """A case's contenders as a child measured them, with their samples."""
    return [
        Contender(c["name"], c["role"], n=c["n"], passes=c["passes"], samples=c["samples"])
        for c in case["contenders"]
    ]


def _from_doc(doc: dict[str, Any]) -> list[Case]:
    """The cases a child measured, with their samples (setup and run stay in the child)."""
    path = doc["path"]
    return [
        Case(
            f"crc32c/{size_name(case['size'])}/{path}",
            "crc32c",
            case["size"],
            "buffer",
            contenders_of(case),
            ["ours"],
            ["package"],
            crc32c_path=path,
        )
        for case in doc["cases"]
    ]


def crc_cases(cfg: Config, progress: bool) -> list[Case]:
    """Every usable implementation, each in its own child process, in the order of
    leveldb_log.crc32c_implementations (slowest to fastest)."""
    paths = list(leveldb_log.crc32c_implementations)
    docs = child_docs("bench.cases.crc", paths, child_args(cfg), progress)
    return [case for doc in docs for case in _from_doc(doc)]


if __name__ == "__main__":
    sys.exit(child_main())
