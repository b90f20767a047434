"""The process whose file-system calls tests/crash/test_crash_states.py records (under shim.c).

Usage: workload.py DIRECTORY TRACE STEPS_JSON. Runs the steps (see ``crashfs.Step``) on the
log DIRECTORY/log and appends "mark N" to TRACE once step N has returned, so that the replay
knows which calls each step made and which records a completed step acknowledged.
"""

from __future__ import annotations

import json
import os
import sys

import leveldb_log
from leveldb_log.cli import main as cli_main

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crashfs import LOG, payload


def run(directory: str, trace: str, steps: list[list[object]]) -> None:
    log = os.path.join(directory, LOG)
    marks = os.open(trace, os.O_WRONLY | os.O_APPEND)
    writer = None
    for number, (kind, *args) in enumerate(steps):
        if kind == "open":
            mode, buffering = args
            writer = leveldb_log.Writer(log, str(mode), buffering=int(str(buffering)))
        elif kind == "write":
            assert writer is not None
            writer.write(payload(int(str(args[0]))))
        elif kind == "write_sync":  # write(..., sync=True): the group commit
            assert writer is not None
            writer.write(payload(int(str(args[0]))), sync=True)
        elif kind in ("flush", "sync", "close"):
            getattr(writer, str(kind))()
        elif kind == "cli":
            command, first, count = args
            records = os.path.join(os.path.dirname(trace), f"input-{number}")
            with open(records, "wb") as f:  # outside the directory: not recorded
                for i in range(int(str(first)), int(str(first)) + int(str(count))):
                    record = payload(i)
                    f.write(len(record).to_bytes(4, "little") + record)
            flags = ["--append"] if command == "append" else []
            argv = ["write", log, *flags, "--length-prefixed", "--input", records]
            if cli_main(argv) != 0:
                raise SystemExit(f"step {number}: {argv} failed")
        else:
            raise SystemExit(f"unknown step {kind!r}")
        os.write(marks, b"mark %d\n" % number)


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
