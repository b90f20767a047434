"""Where the tests' data is: tests/, its golden files, and the real exports beside the checkout."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
GOLDEN = TESTS / "golden"
#: Real Firestore/Datastore exports, in ../shared beside the checkout (tests skip without them).
EXPORTS = TESTS.parent.parent / "shared" / "datastore_exports"
