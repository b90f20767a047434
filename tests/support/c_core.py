"""The C unit tests of tests/c: which sources make each program."""

from __future__ import annotations

import os

C_TESTS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "c")
C_SHARED_SOURCES = ("harness.c", "ref_crc32c.c")


def c_test_sources(program: str) -> list[str]:
    """The tests/c sources of one C test program (the caller adds csrc/core's).

    ``test_crc32c`` is test_crc32c.c with the shared harness and reference CRC-32C;
    ``test_core`` is every other .c file of tests/c: main.c, the harness and one file per
    suite (tests/c/harness.h says how a suite is added).
    """
    if program == "test_crc32c":
        names = ["test_crc32c.c", *C_SHARED_SOURCES]
    elif program == "test_core":
        names = sorted(n for n in os.listdir(C_TESTS_DIR) if n.endswith(".c"))
        names.remove("test_crc32c.c")
    else:
        raise ValueError(f"no C test program {program!r}")
    return [os.path.join(C_TESTS_DIR, name) for name in names]
