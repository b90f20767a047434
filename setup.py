"""Builds the C extension; everything else is in pyproject.toml."""

import os
import sys

from setuptools import Extension, setup

SOURCES = [
    "csrc/crc32c.c",
    "csrc/log_format.c",
    "csrc/log_writer.c",
    "csrc/log_reader.c",
    "csrc/py_module.c",
]

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
            depends=[
                "csrc/log_format.h",
                "csrc/crc32c.h",
                "csrc/log_writer.h",
                "csrc/log_reader.h",
            ],
            include_dirs=["csrc"],
            extra_compile_args=extra_compile_args,
            extra_link_args=[f"-fsanitize={os.environ['LEVELDB_LOG_SANITIZE']}"]
            if os.environ.get("LEVELDB_LOG_SANITIZE") and sys.platform != "win32"
            else [],
        )
    ]
)
