"""Builds the C extension; everything else is in pyproject.toml."""

import os
import sys
from glob import glob

from setuptools import Extension, setup

# csrc/core: the plain C library (no Python.h); csrc/py: the CPython binding.
SOURCES = sorted(glob("csrc/core/*.c")) + sorted(glob("csrc/py/*.c"))
HEADERS = sorted(glob("csrc/core/*.h")) + sorted(glob("csrc/py/*.h"))

if sys.platform == "win32":
    extra_compile_args = ["/O2", "/W3"]
else:
    extra_compile_args = ["-O2", "-std=c11", "-Wall", "-Wextra"]
    if os.environ.get("LEVELDB_LOG_WERROR"):
        extra_compile_args.append("-Werror")
    sanitize = os.environ.get("LEVELDB_LOG_SANITIZE")
    if sanitize:  # e.g. "address,undefined": a sanitized debug build
        extra_compile_args += [f"-fsanitize={sanitize}", "-fno-omit-frame-pointer", "-O1", "-g"]

setup(
    ext_modules=[
        Extension(
            "leveldb_log._core",
            sources=SOURCES,
            depends=HEADERS,
            include_dirs=["csrc/core", "csrc/py"],
            extra_compile_args=extra_compile_args,
            extra_link_args=[f"-fsanitize={os.environ['LEVELDB_LOG_SANITIZE']}"]
            if os.environ.get("LEVELDB_LOG_SANITIZE") and sys.platform != "win32"
            else [],
        )
    ]
)
