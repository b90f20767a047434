"""The C core on the CPUs the wheels ship for but CI does not run natively.

``.ci/cross.sh`` builds the C unit tests and the programs of tests/cross/ for AArch64 and
s390x and runs them under QEMU user mode: the unit tests on each AArch64 CRC-32C path and on
big-endian s390x, the path the core picks on several CPU models, and one log written and read
on every byte order. The script installs QEMU and the cross compilers when missing (apt-get,
as CI's root) and builds in a temporary directory of its own (here, under this test's
tmp_path), so parallel runs never share files.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.meta]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "cross.sh"
# About a minute and a half of CPU time, two jobs at a time; far longer on a busy machine.
TIMEOUT = 1800  # seconds
TAIL = 40  # lines


def shown(output: str) -> str:
    """Every failure the script reported (with the output it quoted), then its last lines."""
    lines = output.splitlines()
    failures = [line for line in lines if line.startswith(("FAIL", "      |"))]
    return "\n".join([*failures, "--- last lines:", *lines[-TAIL:]])


def test_the_c_core_passes_on_aarch64_and_s390x_under_qemu(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        ["bash", str(SCRIPT)],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: a timeout ends the QEMU runs too
    )
    try:
        output, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        pytest.fail(f"{SCRIPT.name} took longer than {TIMEOUT} s:\n{shown(output)}")
    print(output)  # the table of what ran, for pytest -s or -rP
    assert proc.returncode == 0, (
        f"{SCRIPT.name} failed (exit status {proc.returncode}):\n{shown(output)}"
    )
