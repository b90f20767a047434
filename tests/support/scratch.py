"""Where the tests' temporary files go: a memory file system (/dev/shm) when the user named
no TMPDIR and it has room, else the system's temporary folder.

The writer, crash and append tests fsync thousands of small logs. On a disk each fsync waits
for the device, so those tests spend most of their time waiting, not running (bench/README.md,
"CI time", has the figures); on tmpfs an fsync returns at once, and what the tests check (the
bytes, and which calls were made, as the crash shim records them) is the same. The process
that imports this first (pytest's, before it starts its workers) sets TMPDIR, so the workers,
``tmp_path`` and every program a test starts use the same folder.
"""

from __future__ import annotations

import os
import tempfile

MEMORY = "/dev/shm"
#: Room the memory file system must have: the largest test writes a 4 GiB record to a file
#: while the record is also in memory.
NEEDED = 12 << 30


def _memory_folder() -> str | None:
    """A private folder on /dev/shm when it is a writable tmpfs with NEEDED bytes free."""
    try:
        with open("/proc/self/mounts") as mounts:
            kinds = {f[1]: f[2] for f in (line.split() for line in mounts) if len(f) > 2}
        if kinds.get(MEMORY) != "tmpfs" or not os.access(MEMORY, os.W_OK):
            return None
        room = os.statvfs(MEMORY)
        if room.f_bavail * room.f_frsize < NEEDED:
            return None
        folder = os.path.join(MEMORY, f"leveldb-log-tests-{os.getuid()}")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        return folder if os.stat(folder).st_uid == os.getuid() else None
    except OSError:
        return None


def use_memory_for_temporary_files() -> None:
    """Points TMPDIR (and tempfile's cached folder) at the memory folder, unless TMPDIR is
    set already (by the user, or by the pytest process that started this worker)."""
    if os.environ.get("TMPDIR"):
        return
    folder = _memory_folder()
    if folder is not None:
        os.environ["TMPDIR"] = folder
        tempfile.tempdir = None  # computed again from TMPDIR on the next use
