"""The error a Writer raises when another one holds its log's lock, and the search for the
process holding it (Linux: the lock is listed in the holder's /proc/PID/fdinfo)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from leveldb_log._errors import LogLockedError


def locked_error(name: object, errno: int, device: int, inode: int) -> LogLockedError:
    """LogLockedError for the file named ``name`` (on ``device``, ``inode``)."""
    pid = lock_holder(device, inode) if sys.platform.startswith("linux") else None
    holder = "" if pid is None else f" (process {pid}{', this one' if pid == os.getpid() else ''})"
    exc = LogLockedError(errno, f"the log is locked by another Writer{holder}", name)
    exc.pid = pid
    return exc


def lock_holder(device: int, inode: int, proc: Path = Path("/proc")) -> int | None:
    """A process holding a lock on the file (device, inode), or None when none can be seen.

    An open-file-description lock shows its holder as -1 in /proc/locks; the descriptor's
    fdinfo in each process that has it open lists the lock itself.
    """
    key = f" {os.major(device):02x}:{os.minor(device):02x}:{inode} "
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        fdinfo = proc / pid / "fdinfo"
        try:
            infos = os.listdir(fdinfo)
        except OSError:
            continue  # another user's process, or gone
        for fd in infos:
            try:
                text = (fdinfo / fd).read_text()
            except OSError:
                continue
            if any(line.startswith("lock:") and key in line for line in text.splitlines()):
                return int(pid)
    return None
