"""Entry point of `python -m leveldb_log` and the `leveldb-log` console script."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from leveldb_log.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
