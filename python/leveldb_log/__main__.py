"""Entry point of ``python -m leveldb_log``; the command line itself is `leveldb_log.cli`."""

from __future__ import annotations

import sys

from leveldb_log.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
