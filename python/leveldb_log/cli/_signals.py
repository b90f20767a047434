"""SIGTERM and SIGHUP end ``leveldb-log write`` the way Ctrl-C does: as an exception.

Their default action kills the process wherever it is, halfway through a log; raised as
`Terminated` instead, they unwind through the same ``except BaseException`` rollbacks as
``KeyboardInterrupt`` (``_atomic``), and the command exits with 128 + the signal's number,
as a shell reports a process the signal killed. Only the first signal is raised: one that
follows while the rollback runs is held back, so that the rollback is never cut short.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["Terminated", "as_exceptions"]

#: The signals turned into `Terminated` (SIGHUP does not exist on Windows).
SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s)


class Terminated(BaseException):
    """A signal asked the command to stop; ``signum`` is the signal's number.

    A BaseException, like KeyboardInterrupt, so that no ``except Exception`` swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    def __str__(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}"


@contextlib.contextmanager
def as_exceptions() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise `Terminated` (the first one only).

    Python runs signal handlers in the main thread alone: elsewhere nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = False

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise Terminated(signum)

    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
