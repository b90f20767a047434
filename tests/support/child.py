"""A test body run in a child interpreter, so that a crash or a deadlock fails the test
(and not the whole run)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest


def assert_passes_in_a_child(module: str, body: str, *args: Any, timeout: int = 20) -> None:
    """Asserts that <module>.<body>(*args) passes in a child interpreter (module: the name of
    a test file already imported, as its __name__ gives it): it returns within the timeout,
    with exit status 0.

    The thread tests share one native object between threads; a crash or a
    deadlock there must fail the test, not kill or hang the whole run.
    """
    paths = [
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # tests/, for support
        os.path.dirname(os.path.abspath(sys.modules[module].__file__ or "")),  # the module's
    ]
    code = (
        "import faulthandler, sys\n"
        "faulthandler.enable()\n"
        f"faulthandler.dump_traceback_later({timeout - 5}, exit=True)\n"
        f"sys.path[:0] = {paths!r}\n"
        f"import {module}\n"
        f"{module}.{body}(*{args!r})\n"
        "print('CHILD-OK')\n"
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as e:  # pragma: no cover - reported
        pytest.fail(f"{body}{args} hung (deadlock?): {e.stderr!s:.3000}")
    assert proc.returncode == 0 and "CHILD-OK" in proc.stdout, (
        f"{body}{args} failed in the child: returncode {proc.returncode} "
        f"(negative: killed by that signal; 1 with 'Timeout': deadlock)\n"
        f"{proc.stderr[-4000:]}"
    )
