"""Instruction-count budget of the C core, measured with callgrind.

Builds guard.c with the C core (gcc, fixed flags), runs each phase of its fixed workload
under ``valgrind --tool=callgrind`` and compares the instructions executed (Ir) with the
budget committed in budget.json. Fails when a phase needs more than budget * (1 + slack).

    python bench/callgrind/check.py            # check (exit 1 when over budget)
    python bench/callgrind/check.py --update   # measure and rewrite budget.json
    python bench/callgrind/check.py --repeat 2 # also check that counts are deterministic

Phases (see guard.c): ``encode`` and ``decode`` use the portable CRC-32C so that the
counts are the same on every x86-64 machine, CI's included; ``encode-hw`` and
``decode-hw`` use the fastest instruction-based CRC-32C that the CPU seen by valgrind offers
(valgrind has no AVX-512) and are checked only where that is the implementation the budget
was measured with (budget.json names it).

Instruction counts, unlike times, do not depend on the machine's load, so they can be
checked on a shared, noisy box and in CI. They do depend on the compiler: the budget
records the gcc version it was measured with, and a different one is reported.

Exit status: 0 within budget, 1 over budget (or a phase failed), 2 when gcc or valgrind
is missing or the build fails.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CSRC = ROOT / "csrc" / "core"
BUDGET = HERE / "budget.json"
SOURCES = sorted(p.name for p in CSRC.glob("*.c"))
# Fixed flags: the counts are only comparable between builds made the same way.
# -DNDEBUG as Python builds extensions; no -march, so the same code on every x86-64 CPU.
CFLAGS = ["-O2", "-DNDEBUG", "-std=c11", "-fno-tree-loop-distribute-patterns"]
PHASES = ["encode", "decode", "encode-hw", "decode-hw", "encode-runs-hw", "decode-runs-hw"]
NO_HARDWARE = 3  # guard.c's exit status when the CPU has no hardware CRC-32C
DEFAULT_SLACK = 0.03


class Failure(Exception):
    """A problem that makes the check fail (exit 1), as opposed to a missing tool (exit 2)."""


class MissingTool(Exception):
    pass


def tool_version(*cmd: str) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).splitlines()[0].strip() if out.returncode == 0 else "?"


def build(workdir: Path) -> Path:
    gcc = shutil.which("gcc")
    if gcc is None:
        raise MissingTool("gcc not found: install a C compiler (apt-get install gcc libc6-dev)")
    exe = workdir / "guard"
    cmd = [gcc, *CFLAGS, "-I", str(CSRC), str(HERE / "guard.c")]
    cmd += [str(CSRC / name) for name in SOURCES]
    cmd += ["-o", str(exe)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise MissingTool("building guard.c failed:\n" + result.stdout + result.stderr)
    return exe


def verify(exe: Path) -> list[str]:
    """Runs the full round trip natively (portable, then hardware CRC where available)."""
    lines = []
    for mode in ("verify", "verify-hw"):
        result = subprocess.run([str(exe), mode], capture_output=True, text=True, check=False)
        if mode.endswith("-hw") and result.returncode == NO_HARDWARE:
            continue
        if result.returncode != 0:
            raise Failure(f"guard {mode} failed ({result.returncode}): {result.stderr.strip()}")
        lines.append(result.stdout.strip())
    return lines


def parse_callgrind(path: Path) -> tuple[int, dict[str, int]]:
    """Total Ir and exclusive Ir per function of a callgrind output file."""
    total = None
    names: dict[str, str] = {}
    per_fn: dict[str, int] = {}
    current = "?"
    skip_next_cost = False  # the cost line after calls= is the call's inclusive cost
    name_re = re.compile(r"^\((\d+)\)(?: (.*))?$")

    def resolve(spec: str) -> str:
        m = name_re.match(spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), spec)

    with path.open() as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                if skip_next_cost:
                    skip_next_cost = False
                    continue
                parts = line.split()
                if len(parts) > 1:
                    per_fn[current] = per_fn.get(current, 0) + int(parts[1])
                continue
            key, _, value = line.partition("=")
            if key == "fn":
                current = resolve(value)
            elif key in ("cfn", "cfi", "cfl", "fi", "fe", "fl", "ob", "cob"):
                if key == "cfn":
                    resolve(value)
            elif key == "calls":
                skip_next_cost = True
            elif line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split(":", 1)[1].split()[0])
    if total is None:
        total = sum(per_fn.values())
    return total, per_fn


def measure(
    exe: Path, phase: str, workdir: Path, run: int
) -> tuple[int, dict[str, int], str] | None:
    """Ir of one phase, Ir per function and the CRC-32C implementation it ran, or None when
    the phase needs hardware this machine lacks."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise MissingTool("valgrind not found: install it (apt-get install valgrind)")
    out = workdir / f"callgrind.{phase}.{run}"
    fn = "phase_" + phase.removesuffix("-hw").replace("-", "_")
    cmd = [
        valgrind,
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        f"--toggle-collect={fn}",
        str(exe),
        phase,
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if phase.endswith("-hw") and result.returncode == NO_HARDWARE:
        return None
    if result.returncode != 0:
        raise Failure(f"guard {phase} under valgrind failed:\n{result.stdout}{result.stderr}")
    m = re.search(r"crc (\S+)", result.stdout)
    return (*parse_callgrind(out), m.group(1) if m else "?")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite budget.json")
    ap.add_argument("--slack", type=float, help=f"with --update (default {DEFAULT_SLACK})")
    ap.add_argument("--repeat", type=int, default=1, help="runs per phase; must agree")
    ap.add_argument("--top", type=int, default=6, help="functions shown per phase")
    ap.add_argument("--keep", type=Path, help="keep the callgrind files in this directory")
    return ap.parse_args(argv)


class Measured(NamedTuple):
    """Ir per phase, the CRC-32C implementation each ran, and Ir per function."""

    counts: dict[str, int]
    impls: dict[str, str]
    profiles: dict[str, dict[str, int]]


def measure_all(args: argparse.Namespace) -> Measured:
    """Builds guard.c, checks it natively, then counts every phase under callgrind."""
    result = Measured({}, {}, {})
    with tempfile.TemporaryDirectory(prefix="llog-callgrind-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        exe = build(workdir)
        for line in verify(exe):
            print(line)
        for phase in PHASES:
            counts = []
            for run in range(max(1, args.repeat)):
                got = measure(exe, phase, workdir, run)
                if got is None:  # no hardware CRC-32C here
                    break
                counts.append(got[0])
                result.profiles[phase], result.impls[phase] = got[1], got[2]
            if counts and len(set(counts)) != 1:
                raise Failure(f"{phase}: counts differ between runs: {counts}")
            if counts:
                result.counts[phase] = counts[0]
    return result


def updated(
    budget: dict[str, Any], m: Measured, slack: float, compiler: str, valgrind: str
) -> dict[str, Any]:
    """The budget file's new contents (the hardware budgets this machine cannot measure
    are kept)."""
    new = {**budget.get("budgets", {}), **m.counts}
    new_impls = {**budget.get("implementations", {}), **m.impls}
    return {
        "about": (
            "Instructions (callgrind Ir) executed by each phase of bench/callgrind/guard.c; "
            "checked by bench/callgrind/check.py, which fails above budget * (1 + slack). "
            "Rewrite with: python bench/callgrind/check.py --update"
        ),
        "slack": slack,
        "compiler": compiler,
        "valgrind": valgrind,
        "cflags": CFLAGS,
        "budgets": {p: new[p] for p in PHASES if p in new},
        "implementations": {p: new_impls[p] for p in PHASES if p in new_impls},
    }


def judge(phase: str, m: Measured, budget: dict[str, Any], slack: float) -> bool:
    """Prints one phase's line; False when it is over budget (or has none)."""
    budgets, budget_impls = budget.get("budgets", {}), budget.get("implementations", {})
    want = budgets.get(phase)
    if phase not in m.counts:
        print(
            f"{phase:<10} {'-':>13} {want or '-':>13} {'':>13} {'':>9}  SKIP "
            "(no hardware CRC-32C here)"
        )
        return True
    got = m.counts[phase]
    if phase.endswith("-hw") and budget_impls.get(phase) not in (None, m.impls[phase]):
        # The hardware path is the fastest the CPU seen by valgrind offers (valgrind has
        # no AVX-512): a budget for another implementation says nothing here.
        print(
            f"{phase:<10} {got:>13,} {want or '-':>13} {'':>13} {'':>9}  SKIP (budget is "
            f"for {budget_impls[phase]}, this machine runs {m.impls[phase]})"
        )
        return True
    if want is None:
        print(f"{phase:<10} {got:>13,} {'-':>13} {'':>13} {'':>9}  FAIL (no budget: --update)")
        return False
    limit = int(want * (1 + slack))
    status = "ok" if got <= limit else "FAIL (over budget)"
    if got < want * (1 - 2 * slack):
        status += " (well under: --update to lock the gain in)"
    print(f"{phase:<10} {got:>13,} {want:>13,} {limit:>13,} {got / want - 1:>+9.2%}  {status}")
    return got <= limit


def show_profiles(m: Measured, top: int) -> None:
    if m.impls:
        print("CRC-32C under valgrind: " + ", ".join(f"{p} {i}" for p, i in m.impls.items()))
    for phase, fns in m.profiles.items() if top > 0 else ():
        total = sum(fns.values()) or 1
        best = sorted(fns.items(), key=lambda kv: -kv[1])[:top]
        print(f"  {phase}: " + ", ".join(f"{name} {ir / total:.0%}" for name, ir in best))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    budget = json.loads(BUDGET.read_text()) if BUDGET.exists() else {}
    slack = args.slack if args.slack is not None else budget.get("slack", DEFAULT_SLACK)
    compiler = tool_version("gcc", "--version")
    valgrind = tool_version("valgrind", "--version")
    try:
        m = measure_all(args)
    except MissingTool as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print(f"compiler: {compiler}; {valgrind}; flags: {' '.join(CFLAGS)}")
    if budget.get("compiler") not in (None, compiler):
        print(f"note: the budget was measured with {budget['compiler']}")
    if args.update:
        budget = updated(budget, m, slack, compiler, valgrind)
        BUDGET.write_text(json.dumps(budget, indent=2) + "\n")
        print(f"wrote {BUDGET}")
    print(
        f"{'phase':<10} {'measured Ir':>13} {'budget':>13} {'limit':>13} {'vs budget':>9}  status"
    )
    ok = all([judge(phase, m, budget, slack) for phase in PHASES])
    show_profiles(m, args.top)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
