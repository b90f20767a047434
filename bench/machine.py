"""What the numbers were measured on: CPU model and the flags that matter to CRC-32C,
the chosen CRC-32C path, Python, package versions, load."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import leveldb_log

from bench.baselines import ROOT, crc32c_pkg, google_crc32c

# The CPU features the CRC-32C paths use, by architecture (as /proc/cpuinfo names them).
FLAGS = {
    "x86": ("sse4_2", "pclmulqdq", "avx2", "avx512f", "avx512vl", "vpclmulqdq"),
    "arm": ("crc32", "pmull"),
}
MODEL_KEYS = ("model name", "Model", "Hardware", "cpu model")


def _arch() -> str:
    """ "x86", "arm" or the machine name as platform gives it."""
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64", "i386", "i686"):
        return "x86"
    if machine in ("aarch64", "arm64") or machine.startswith("arm"):
        return "arm"
    return machine


def cpu() -> tuple[str, dict[str, bool] | None]:
    """The CPU model and, where /proc/cpuinfo says, which of the flags that matter it has."""
    model, flags = "", None
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        key, _, value = (part.strip() for part in line.partition(":"))
        if key in MODEL_KEYS and not model:
            model = value
        elif key in ("flags", "Features") and flags is None:
            have = set(value.split())
            flags = {f: f in have for f in FLAGS.get(_arch(), ())}
    return model or platform.processor() or platform.machine(), flags


def version_of(dist: str) -> str | None:
    """The installed version of a distribution, or None."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def loadavg() -> tuple[float, float, float]:
    """The 1, 5 and 15 minute load averages (zeros where the OS has none)."""
    return os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)


def git_describe() -> str | None:
    """`git describe --always --dirty` of the checkout, or None."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    return out.stdout.strip() or None


def packages() -> dict[str, Any]:
    """Versions of the baseline packages, and which code the CRC packages run."""
    return {
        "crc32c": version_of("crc32c"),
        "crc32c.hardware_based": getattr(crc32c_pkg, "hardware_based", None),
        "google-crc32c": version_of("google-crc32c"),
        "google_crc32c.implementation": getattr(google_crc32c, "implementation", None),
        "tfrecord": version_of("tfrecord"),
        "protobuf": version_of("protobuf"),
    }


def machine_info() -> dict[str, Any]:
    """Everything the header of a run shows (and the JSON file keeps)."""
    model, flags = cpu()
    built = os.path.getmtime(leveldb_log._core.__file__)
    return {
        "cpu": model,
        "cpu_flags": flags,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "python_impl": platform.python_implementation(),
        "platform": platform.platform(),
        "leveldb_log": getattr(leveldb_log, "__version__", "?"),
        "crc32c_implementation": leveldb_log.crc32c_implementation,
        "crc32c_implementations": list(leveldb_log.crc32c_implementations),
        "packages": packages(),
        "loadavg_start": loadavg(),
        "extension_built": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(built)),
        "git": git_describe(),
    }
