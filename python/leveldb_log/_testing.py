"""Test hooks, kept off the public types: the counters and fault injectors the test suite reads.

Each hook is a private function of the C extension named `_test_<name>`; this module hands it out
as `_testing.<name>`, so production objects carry no test attributes. Not part of the API.
"""

from __future__ import annotations

from typing import Any

from leveldb_log import _core


def __getattr__(name: str) -> Any:
    try:
        return getattr(_core, "_test_" + name)
    except AttributeError:
        raise AttributeError(f"leveldb_log._testing has no hook {name!r}") from None
