"""Progress bars on standard error for the commands that may run long: ``dump``, ``cat``,
``verify``, ``stats`` and ``write``.

``--progress`` asks for a bar; ``--no-progress`` forbids one; by default (``auto``) a bar
appears when standard error is a terminal and the input is at least `THRESHOLD` bytes (or of
unknown length, and then only once the run has lasted a moment), so that pipes, logs and
short runs stay clean; for ``dump`` and ``cat``, only when their output is not on that
terminal too, where the bar would break into the records. Bars are drawn by tqdm, the extra
``leveldb-log[progress]``: ``--progress`` without it is a usage error naming the extra,
``auto`` without it shows none.
"""

from __future__ import annotations

import argparse
import importlib
import io
import sys
from collections.abc import Callable
from typing import IO, Any

from leveldb_log.cli._common import PROG, UsageError, err

__all__ = ["THRESHOLD", "Counting", "Progress", "add_progress"]

#: In ``auto`` mode, inputs of at least this many bytes get a bar.
THRESHOLD = 16 << 20

#: In ``auto`` mode, a bar of unknown total shows only after this many seconds.
_UNKNOWN_TOTAL_DELAY = 1.0

_NEEDS_TQDM = "--progress needs tqdm: pip install 'leveldb-log[progress]'"


def add_progress(p: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress``, stored as ``progress``: always, never, or auto."""
    bar = p.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        dest="progress",
        action="store_const",
        const="always",
        default="auto",
        help="always show a progress bar on standard error (needs tqdm: pip install "
        "'leveldb-log[progress]'); by default one shows when standard error is a terminal "
        "and the input is 16 MiB or more",
    )
    bar.add_argument(
        "--no-progress",
        dest="progress",
        action="store_const",
        const="never",
        help="never show a progress bar",
    )


class Progress:
    """A tqdm bar over bytes on standard error, or nothing."""

    def __init__(
        self, size: Callable[[], int | None], mode: str, prints_records: bool = False
    ) -> None:
        """A bar for ``size()`` bytes (None: unknown; asked only if a bar may show) if
        ``mode`` ("always", "auto", "never") wants one; ``prints_records``: the command
        writes its records on standard output. UsageError for "always" without tqdm."""
        self.bar: Any = None
        self.done = 0
        if mode == "never" or (mode == "auto" and not _terminal(sys.stderr)):
            return
        if mode == "auto" and prints_records and _terminal(sys.stdout):
            return
        total = size()
        if mode == "auto" and total is not None and total < THRESHOLD:
            return
        try:
            tqdm: Any = importlib.import_module("tqdm").tqdm
        except ImportError:
            if mode == "always":
                raise UsageError(_NEEDS_TQDM) from None
            return
        delay = _UNKNOWN_TOTAL_DELAY if mode == "auto" and total is None else 0
        self.bar = tqdm(
            total=total,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            file=sys.stderr,
            leave=False,
            delay=delay,
        )

    def to(self, position: int | None) -> None:
        """Move the bar on to ``position`` (never back)."""
        if self.bar is not None and position is not None and position > self.done:
            self.bar.update(position - self.done)
            self.done = position

    def add(self, count: int) -> None:
        """Move the bar on by ``count`` bytes."""
        if self.bar is not None:
            self.to(self.done + count)

    def err(self, message: str) -> None:
        """Print ``message`` on standard error as `err` does, above the bar if there is one."""
        if self.bar is not None:
            self.bar.write(f"{PROG}: {message}", file=sys.stderr)
        else:
            err(message)

    def write(self, line: str) -> None:
        """Print ``line`` on standard output, above the bar if there is one."""
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
        else:
            print(line)

    def close(self) -> None:
        """Take the bar away."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Counting(io.RawIOBase):
    """A binary file read through, moving ``progress`` on by what is read; it seeks as the
    file does, so readers that read a file twice (stats) move the bar twice."""

    def __init__(self, f: IO[bytes], progress: Progress) -> None:
        super().__init__()
        self._f, self._progress = f, progress

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._f.seekable()

    def readinto(self, buffer: Any) -> int:
        n = self._f.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            self._progress.add(n)
        return n or 0

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()
