"""Where the tests' data is: tests/ and its golden files."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
GOLDEN = TESTS / "golden"
