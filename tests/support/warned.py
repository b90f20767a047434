"""Warnings some tests cause on purpose, each named once with its reason: pyproject.toml turns
every other warning into an error. A test that checks a warning expects it with pytest.warns;
these marks are for tests that check something else."""

from __future__ import annotations

import pytest

#: The test reads damaged logs, or bytes that are no log, without on_corruption, and checks what
#: is read, not how the damage is reported: the reader warns (CorruptionWarning), as documented,
#: for some of its inputs or all of them.
READS_DAMAGE = pytest.mark.filterwarnings("ignore::leveldb_log.CorruptionWarning")
