"""The temporary files of ``leveldb-log write``: named to be recognised, and cleaned up.

A replacing ``write`` puts its records in a hidden file beside the target,
``.NAME.leveldb-log.HOST.PID.XXXXXXXX.tmp``, then renames it over the target. Every way a
command can fail removes that file, except SIGKILL (or a power cut): then the name says
which target it was for and which process made it, so the next ``write`` to that target
removes it, once that process is gone, and says so on standard error. Files of a process
still running, or of another machine (a shared folder), are left alone; so are files of
any other name. The check needs POSIX (``os.kill(pid, 0)``); elsewhere nothing is removed.

Errors name the user's path, never one of these files: the user never asked for them.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator

from leveldb_log.cli._common import err, shown

__all__ = ["naming", "prefix", "remove_for"]

_TAG = "leveldb-log"


def _host() -> str:
    """This machine's name, as a file name allows it."""
    return socket.gethostname().replace(os.sep, "_") or "localhost"


def prefix(target: str) -> str:
    """The start of the name of a temporary file for ``target`` made by this process."""
    return f"{_common_prefix(target)}{_host()}.{os.getpid()}."


def _common_prefix(target: str) -> str:
    return f".{os.path.basename(target)}.{_TAG}."


def _maker(name: str, target: str) -> tuple[str, int] | None:
    """(host, process id) of a temporary file's name for ``target``, None for other names."""
    start = _common_prefix(target)
    if not name.startswith(start) or not name.endswith(".tmp"):
        return None
    parts = name[len(start) :].rsplit(".", 3)  # HOST.PID.XXXXXXXX.tmp; a host may hold dots
    if len(parts) != 4 or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1])


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (PermissionError: it exists, under another user)
        return True
    return True


def remove_for(target: str, shown_as: str | None = None) -> None:
    """Remove the temporary files that dead processes of this machine left for ``target``
    (named ``shown_as``, the log as typed, in what is printed)."""
    if os.name != "posix":
        return
    directory = os.path.dirname(target) or "."
    try:
        names = os.listdir(directory)
    except OSError:
        return  # the write itself reports a folder it cannot use
    host = _host()
    for name in names:
        maker = _maker(name, target)
        if maker is None or maker[0] != host or maker[1] == os.getpid() or _running(maker[1]):
            continue
        leftover = os.path.join(directory, name)
        try:
            os.unlink(leftover)
        except FileNotFoundError:
            continue  # another command removed it first
        typed = target if shown_as is None else shown_as
        err(
            f"removed '{shown(os.path.join(os.path.dirname(typed), name))}', left by an "
            f"earlier write to '{shown(typed)}' that was killed "
            f"before it finished (process {maker[1]})"
        )


@contextlib.contextmanager
def naming(target: str, tmp: str | None = None, shown_as: str | None = None) -> Iterator[None]:
    """An OSError about ``tmp`` (or, with no ``tmp``, any temporary file of ``target``) is
    raised naming ``target`` instead (``shown_as``, the log as typed, when given)."""
    try:
        yield
    except OSError as e:
        name = e.filename if isinstance(e.filename, str) else None
        ours = name is not None and (
            name == tmp
            or (tmp is None and os.path.basename(name).startswith(_common_prefix(target)))
        )
        if ours:
            e.filename = target if shown_as is None else shown_as
        raise
