"""Optional dependencies (dask, ray, pyarrow, fsspec, pandas), imported where they are used:
they come with extras, and type checkers need neither them nor their stubs."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["optional"]


def optional(name: str, extra: str) -> Any:
    """The module ``name``, or ImportError naming the extra that brings it.

    Arguments
      name: an absolute module name (``"dask.bag"``, ``"ray.data"``).
      extra: the package's extra, as ``pip install 'leveldb-log[EXTRA]'`` takes it.
    """
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(
            f"leveldb_log.{extra} needs {name.split('.')[0]}: pip install 'leveldb-log[{extra}]'"
        ) from e
