"""Crash states, in the manner of ALICE (OSDI'14): record the file-system calls a workload
makes (shim.c, preloaded), then build every state a crash can leave on Linux by replaying
them.

The persistence model (a journaling file system such as ext4 or XFS, pessimistic about data):

- A call that returned is in the page cache: a crash after it leaves any of the states below;
  each *prefix* of the calls is one (what killing the process leaves).
- Data (write, truncate, open with O_TRUNC) reaches the disk in any order until an fsync of
  that file: after the last fsync of a file, *any subset* of its later data calls may have
  persisted, and the *last* of those written may be torn at any 512-byte sector boundary of
  the file, the rest of it either missing or zeros (the size persisted without the data).
- Names (create, rename, unlink) persist in the order they were made (the journal), each
  once any fsync after it completes (one journal commit covers every file); before that, any
  prefix of them may have persisted.
- A truncate (ftruncate, O_TRUNC) frees blocks in a journal transaction; data written after
  it goes to blocks the file owns only from a later one, so it never persists without the
  truncate (over the old bytes). The block holding a cut point, overwritten in place, is
  the exception this model leaves out.

Enumerating every subset of the data calls after a sync is exponential: up to ``limit``
calls, all of them; beyond, the in-order prefixes, each call left out alone, each call alone
and ``samples`` random subsets drawn from a generator seeded with the crash point (the same
states on every run), each with two of its torn variants, drawn the same way.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOG = "log"  # the log's name in the directory the workload writes
SECTOR = 512
SYNCS = ("sync", "syncdir")
NAMES = ("create", "rename", "unlink")  # calls that change names, not data
DATA = ("write", "trunc")

# Record i has SIZES[i % len(SIZES)] bytes after its tag: empty, small, fragmented over two
# and three blocks, one that ends 6 bytes short of a block (the trailer case).
SIZES = (10, 200, 40_000, 5, 33_000, 1_000, 0, 32_750, 70_000, 300)
_PATTERN = bytes(range(251)) * 400


def payload(i: int) -> bytes:
    """Record i of every scenario: its number as a tag, then a pattern (distinct records)."""
    n = SIZES[i % len(SIZES)]
    return b"%d:" % i + _PATTERN[i % 251 : i % 251 + n]


@dataclasses.dataclass(frozen=True)
class Op:
    """One recorded call that changes what a crash can leave."""

    kind: str  # create, trunc, write, sync, syncdir, rename, unlink, chmod
    ino: int = 0
    name: str = ""
    to: str = ""
    offset: int = 0
    data: bytes = b""


@dataclasses.dataclass
class Trace:
    ops: list[Op]
    done_before: list[int]  # [k]: how many steps had returned before ops[k] (k = len too)
    unsupported: list[str]


def build_shim(into: Path) -> Path:
    """Compile shim.c into a shared library in ``into`` (warnings are errors)."""
    out = into / "crash_shim.so"
    cmd = ["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror"]
    subprocess.run([*cmd, "-o", str(out), str(HERE / "shim.c"), "-ldl"], check=True)
    return out


def record(
    shim: Path, directory: Path, steps: Sequence[Sequence[object]], strace: Path | None = None
) -> Trace:
    """Run the workload's ``steps`` on ``directory`` under the shim (and under strace, into
    the file ``strace``, if given); the parsed trace."""
    trace = directory.parent / "trace"
    args = [str(HERE / "workload.py"), str(directory), str(trace), json.dumps(steps)]
    return record_command(shim, directory, trace, args, strace)


def record_command(
    shim: Path, directory: Path, trace: Path, args: list[str], strace: Path | None = None
) -> Trace:
    """Run Python with ``args`` under the shim, recording calls on ``directory`` into
    ``trace``; the parsed trace."""
    trace.write_bytes(b"")
    env = dict(os.environ, LD_PRELOAD=str(shim), LLOG_CRASH_TRACE=str(trace))
    env["LLOG_CRASH_DIR"] = str(directory)
    cmd = [sys.executable, *args]
    if strace is not None:  # every call with a descriptor or a name, descriptors as paths
        cmd = ["strace", "-f", "-qq", "-y", "-s", "0", "-e", "trace=%file,%desc"]
        cmd += ["-e", "signal=none", "-o", str(strace), sys.executable, *args]
    subprocess.run(cmd, env=env, check=True, cwd=directory.parent)
    return parse(trace.read_text())


# What strace may show on the directory's files besides the calls the shim records: reads,
# metadata lookups and descriptor bookkeeping, none of which changes what a crash leaves.
READ_ONLY_CALLS = {
    "read", "pread64", "readv", "lseek", "fstat", "newfstatat", "statx", "stat", "lstat",
    "fstatfs", "statfs", "fcntl", "ioctl", "close", "getdents64", "readlink", "readlinkat",
    "access", "faccessat", "faccessat2", "fadvise64", "flock", "dup", "dup2", "dup3",
}  # fmt: skip
RECORDED_CALLS = {
    "write": "write", "pwrite64": "write", "writev": "write", "ftruncate": "trunc",
    "fsync": "sync", "fdatasync": "sync", "rename": "rename", "renameat": "rename",
    "renameat2": "rename", "unlink": "unlink", "unlinkat": "unlink", "chmod": "chmod",
    "fchmodat": "chmod", "openat": "open", "open": "open", "creat": "open",
}  # fmt: skip


def strace_summary(text: str, directory: Path) -> tuple[dict[str, int], set[str]]:
    """From strace's output: how many successful calls of each kind the shim records touched
    ``directory`` (opens: those that create or truncate), and the names of any other calls
    that touched it."""
    counts: dict[str, int] = {}
    others = set()
    for line in text.splitlines():
        if str(directory) not in line or "(" not in line:
            continue
        call = line.split("(", 1)[0].split()[-1]
        returned = re.match(r" *(-?\d+)", line.rsplit(")", 1)[-1].split("=", 1)[-1])
        if call in READ_ONLY_CALLS or returned is None or int(returned[1]) < 0:
            continue
        result = returned[1]
        kind = RECORDED_CALLS.get(call)
        if kind is None:
            others.add(call)
        elif kind == "write" and int(result) == 0:
            continue
        elif kind != "open" or "O_CREAT" in line or "O_TRUNC" in line:
            key = "otrunc" if kind == "open" and "O_TRUNC" in line else kind
            counts[key] = counts.get(key, 0) + 1
    return counts, others


def trace_summary(trace: Trace) -> dict[str, int]:
    """The same counts from the shim's trace (an O_TRUNC open of a new file is a create)."""
    counts: dict[str, int] = {}
    for op in trace.ops:
        kind = "sync" if op.kind == "syncdir" else op.kind
        kind = "otrunc" if kind == "trunc" and op.name == "open" else kind
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def parse(text: str) -> Trace:
    trace = Trace([], [], [])
    done = 0
    for line in text.splitlines():
        kind, *args = line.split(" ")
        if kind == "mark":
            done = int(args[0]) + 1
        elif kind == "unsupported":
            trace.unsupported.append(line)
        else:
            trace.done_before.append(done)
            trace.ops.append(_op(kind, args))
    trace.done_before.append(done)
    return trace


def _op(kind: str, args: list[str]) -> Op:
    if kind == "write":
        return Op(kind, int(args[0]), offset=int(args[1]), data=bytes.fromhex(args[2]))
    if kind == "trunc":  # name "open": by open(O_TRUNC), else by ftruncate
        return Op(kind, int(args[0]), name=" ".join(args[2:]), offset=int(args[1]))
    if kind in ("create", "sync"):
        return Op(kind, int(args[0]), name=" ".join(args[1:]))
    if kind == "rename":
        return Op(kind, name=args[0], to=args[1])
    if kind in ("unlink", "chmod"):
        return Op(kind, name=args[0])
    assert kind == "syncdir" and not args, kind
    return Op(kind)


Files = tuple[tuple[str, bytes], ...]  # (name, content), sorted: a state of the directory


@dataclasses.dataclass(frozen=True)
class Tear:
    """The write ops[index] persisted only up to file offset ``at`` (then zeros, or not)."""

    index: int
    at: int
    zeros: bool


def replay(
    initial: dict[str, tuple[int, bytes]], ops: list[Op], chosen: Sequence[int], tear: Tear | None
) -> Files:
    """The directory after the calls ``chosen`` (indices into ``ops``, applied in order)."""
    names = {name: ino for name, (ino, _) in initial.items()}
    data = {ino: bytearray(content) for ino, content in initial.values()}
    for i in sorted(chosen):
        op = ops[i]
        if op.kind == "create":
            names[op.name] = op.ino
            data[op.ino] = bytearray()
        elif op.kind == "rename":
            names[op.to] = names.pop(op.name)
        elif op.kind == "unlink":
            del names[op.name]
        elif op.kind == "trunc":
            f = data.setdefault(op.ino, bytearray())
            del f[op.offset :]
            f.extend(bytes(op.offset - len(f)))
        elif op.kind == "write":
            f = data.setdefault(op.ino, bytearray())
            chunk = op.data
            if tear is not None and tear.index == i:
                kept = chunk[: tear.at - op.offset]
                chunk = kept + bytes(len(chunk) - len(kept)) if tear.zeros else kept
            f.extend(bytes(max(0, op.offset - len(f))))
            f[op.offset : op.offset + len(chunk)] = chunk
    return tuple(sorted((name, bytes(data[ino])) for name, ino in names.items()))


@dataclasses.dataclass(frozen=True)
class State:
    files: Files
    steps_done: int  # steps that had returned: what they acknowledged must be there
    ordered: bool  # the calls that persisted are a prefix of those made (no hole)
    how: str  # how to build it again: crash point, calls kept, tear


@dataclasses.dataclass
class Counts:
    generated: int = 0  # states built (before removing duplicates)
    distinct: int = 0
    sampled_points: int = 0  # crash points whose subsets were sampled, not enumerated


def _durability(ops: list[Op], k: int) -> tuple[list[int], list[int], list[int]]:
    """Before crash point k: (calls durable, data calls not yet synced, name calls not yet
    committed, in order)."""
    durable, data, names = [], [], []
    for i in range(k):
        op = ops[i]
        later = ops[i + 1 : k]
        if op.kind in DATA and any(o.kind == "sync" and o.ino == op.ino for o in later):
            durable.append(i)
        elif op.kind in NAMES and any(o.kind in SYNCS for o in later):
            durable.append(i)
        elif op.kind in DATA:
            data.append(i)
        elif op.kind in NAMES:
            names.append(i)
    return durable, data, names


def _subsets(volatile: list[int], limit: int, samples: int, seed: str) -> list[tuple[int, ...]]:
    n = len(volatile)
    if n <= limit:
        return [c for r in range(n + 1) for c in itertools.combinations(volatile, r)]
    picks = {tuple(volatile[:j]) for j in range(n + 1)}
    picks |= {tuple(v for v in volatile if v != left) for left in volatile}
    picks |= {(v,) for v in volatile}
    rng = random.Random(seed)
    picks |= {tuple(v for v in volatile if rng.random() < 0.5) for _ in range(samples)}
    return sorted(picks)


def _after_truncates(ops: list[Op], subset: Sequence[int], volatile: list[int]) -> bool:
    """Whether no write in ``subset`` comes after a truncate of its file left out of it."""
    left_out = [i for i in volatile if ops[i].kind == "trunc" and i not in subset]
    return not any(
        ops[i].kind == "write" and ops[i].ino == ops[t].ino and i > t
        for i in subset
        for t in left_out
    )


def _tears(ops: list[Op], chosen: Sequence[int], volatile: set[int]) -> Iterator[Tear]:
    """The last write chosen (if not yet synced) cut at each sector boundary inside it."""
    writes = [i for i in chosen if ops[i].kind == "write" and i in volatile]
    if not writes:
        return
    op = ops[max(writes)]
    first = (op.offset // SECTOR + 1) * SECTOR
    for at in range(first, op.offset + len(op.data), SECTOR):
        yield Tear(max(writes), at, False)
        yield Tear(max(writes), at, True)


def _plans(
    trace: Trace, limit: int, samples: int, counts: Counts
) -> Iterator[tuple[int, list[int], set[int], bool]]:
    """(crash point, calls persisted, calls that were volatile, sampled) for every state."""
    ops = trace.ops
    for k in range(len(ops) + 1):  # each prefix
        durable, data, names = _durability(ops, k)
        yield k, [i for i in range(k) if ops[i].kind not in SYNCS], set(data), False
    ends = [k for k, op in enumerate(ops) if op.kind in SYNCS] + [len(ops)]
    for k in ends:  # every state before k is one of these, with fewer calls
        durable, data, names = _durability(ops, k)
        sampled = len(data) > limit
        counts.sampled_points += sampled
        for subset in _subsets(data, limit, samples, f"{k}"):
            if not _after_truncates(ops, subset, data):
                continue
            for m in range(len(names) + 1):
                yield k, sorted([*durable, *subset, *names[:m]]), set(data), sampled


def crash_states(
    initial: dict[str, tuple[int, bytes]],
    trace: Trace,
    counts: Counts,
    limit: int = 10,
    samples: int = 300,
) -> Iterator[State]:
    """Every distinct crash state of ``trace`` from the directory ``initial`` (name: (inode,
    content)), each once; ``counts`` says how many were built and how many were distinct."""
    seen: set[tuple[Files, int, bool]] = set()
    ops = trace.ops
    for k, chosen, volatile, sampled in _plans(trace, limit, samples, counts):
        last = max(chosen, default=-1)
        skipped = [i for i in range(last + 1) if i not in chosen and ops[i].kind not in SYNCS]
        ordered = not [i for i in skipped if ops[i].kind != "chmod"]
        tears = list(_tears(ops, chosen, volatile))
        if sampled and len(tears) > 2:  # a sampled subset: two of its tears, drawn
            tears = random.Random(f"{k}:{chosen}").sample(tears, 2)
        for tear in [None, *tears]:
            counts.generated += 1
            files = replay(initial, ops, chosen, tear)
            key = (files, trace.done_before[k], ordered)
            if key in seen:
                continue
            seen.add(key)
            counts.distinct += 1
            how = f"crash point {k}, calls {_ranges(chosen)}, tear {tear}"
            yield State(files, trace.done_before[k], ordered, how)


def _ranges(indices: Sequence[int]) -> str:
    """[0, 1, 2, 5] as "0-2,5"."""
    out = []
    for _, group in itertools.groupby(enumerate(indices), lambda p: p[1] - p[0]):
        run = [i for _, i in group]
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else f"{run[0]}")
    return ",".join(out) or "none"
