"""One judgement of a file for every reading subcommand (docs/recovery.md, "One verdict").

A file is a log, a log ending in preallocated space (zeros), a log with a torn tail, a
damaged log, or not a log; ``verify``, ``stats``, ``dump`` and ``cat`` all say which the
Reader says. Two parts of it are the Reader's and scan's alone, and shared here:

- The Reader warns (`CorruptionWarning`) of a file that ends in bytes no writer of the
  format leaves, likely no log at all, even with ``on_corruption`` (LevelDB's reader ends
  such a log silently, so no corruption is reported). The subcommands print that warning
  on standard error and exit 1, as ``verify`` does.
- Zero fill in the final, short block is preallocated space, not a torn tail: the Reader
  stops before it as it stops before a torn record, and scan's map tells the two apart.
"""

from __future__ import annotations

import contextlib
import os
import stat
import warnings
from collections.abc import Callable, Iterator

from leveldb_log import _storage
from leveldb_log._core import BLOCK_SIZE
from leveldb_log._errors import Corruption, CorruptionWarning
from leveldb_log._scan import scan
from leveldb_log.cli._common import err, shown

__all__ = ["ends_in_zero_fill", "not_a_log_line", "reader_warnings"]


def not_a_log_line(name: str, c: Corruption) -> str:
    """The line that tells of the Reader's warning for ``name``."""
    return (
        f"{shown(name)}: not a log? it ends in bytes no writer of this format leaves "
        f"(offset {c.offset}, {c.size} bytes)"
    )


@contextlib.contextmanager
def reader_warnings(name: str, report: Callable[[str], object] = err) -> Iterator[list[Corruption]]:
    """Within the block, the Reader's warnings about the file ``name`` are passed to
    ``report`` (standard error by default) rather than shown by :mod:`warnings`; the list
    yielded holds their corruptions once the block ends. Other warnings show as usual."""
    heard: list[Corruption] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CorruptionWarning)
        try:
            yield heard
        finally:
            for w in caught:
                c = w.message.corruption if isinstance(w.message, CorruptionWarning) else None
                if c is None:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)
                    continue
                heard.append(c)
                report(not_a_log_line(name, c))


def ends_in_zero_fill(log: str) -> bool:
    """Does the file at ``log`` end in zero fill (preallocated space)? scan's map of its
    final block says so; False for what is no regular local file."""
    if log == "-" or _storage.is_url(log):
        return False
    size = os.stat(log).st_size
    if not stat.S_ISREG(os.stat(log).st_mode) or size == 0:
        return False
    with open(log, "rb") as f:
        f.seek((size - 1) // BLOCK_SIZE * BLOCK_SIZE)
        regions = list(scan(f))
    return bool(regions) and regions[-1].kind == "zero"
