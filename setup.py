"""Builds the C extension; everything else is in pyproject.toml."""

import importlib.util
import os
import shutil
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# csrc/core: the plain C library (no Python.h); csrc/py: the CPython binding.
SOURCES = sorted(glob("csrc/core/*.c")) + sorted(glob("csrc/py/*.c"))
HEADERS = sorted(glob("csrc/core/*.h")) + sorted(glob("csrc/py/*.h"))
# csrc/datastore: the EntityProto decoder (plain C), and its binding leveldb_log._datastore.
DS_SOURCES = sorted(glob("csrc/datastore/*.c")) + sorted(glob("csrc/datastore/py/*.c"))
DS_HEADERS = sorted(glob("csrc/datastore/*.h")) + sorted(glob("csrc/datastore/py/*.h"))

if sys.platform == "win32":
    extra_compile_args = ["/O2", "/W3"]
else:
    # A parse site naming a parameter list the stub lacks (LLPY_FORMAT_<name>(...), generated
    # by csrc/docstrings.py) would otherwise compile as a call of an undeclared function.
    extra_compile_args = ["-O2", "-std=c11", "-Wall", "-Wextra"]
    extra_compile_args.append("-Werror=implicit-function-declaration")
    if os.environ.get("LEVELDB_LOG_WERROR"):
        extra_compile_args.append("-Werror")
    sanitize = os.environ.get("LEVELDB_LOG_SANITIZE")
    if sanitize:  # e.g. "address,undefined": a sanitized debug build
        extra_compile_args += [f"-fsanitize={sanitize}", "-fno-omit-frame-pointer", "-O1", "-g"]

# The C docstrings and parameter lists come from the stubs: csrc/docstrings.py writes a header
# of macros from each stub into the build directory before compiling (leveldb_log._core:
# LLPY_DOC_*, and LLPY_KWLIST_*, LLPY_FORMAT_*, LLPY_SIG_*, LLPY_OUT_* for the parsers).
DOCSTRINGS = {
    "leveldb_log._core": ("python/leveldb_log/_core.pyi", "LLPY", "llpy_docs.h"),
    "leveldb_log._datastore": ("python/leveldb_log/_datastore.pyi", "LLDS", "llds_docs.h"),
}


def write_docstring_headers(extensions: list[Extension], folder: str) -> None:
    """Writes each extension's docstrings header into folder, on its include path."""
    spec = importlib.util.spec_from_file_location("docstrings", "csrc/docstrings.py")
    assert spec is not None and spec.loader is not None
    docstrings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(docstrings)
    for ext in extensions:
        stub, prefix, name = DOCSTRINGS[ext.name]
        try:
            docstrings.write_header(stub, prefix, os.path.join(folder, name))
        except ValueError as e:
            raise SystemExit(f"error: the docstrings of {ext.name}: {e}") from None
        ext.include_dirs.append(folder)


NEEDS = (
    "leveldb-log builds a C extension and needs a C compiler and the Python headers: "
    "install them (Debian/Ubuntu: apt-get install gcc python3-dev; Fedora: dnf install gcc "
    "python3-devel; macOS: xcode-select --install; Windows: the Microsoft C++ Build Tools), "
    "or install a built wheel"
)


def compile_in_parallel(compiler) -> None:
    """Makes compiler.compile run its sources on a thread per CPU this process may use (each
    thread runs the compiler as a process): the steps of CCompiler.compile, but for the loop
    over the objects. With one CPU it leaves compile as it is."""
    if hasattr(os, "sched_getaffinity"):
        jobs = len(os.sched_getaffinity(0))
    else:
        jobs = os.cpu_count() or 1
    if jobs < 2:
        return

    def compile(sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                extra_preargs=None, extra_postargs=None, depends=None):  # fmt: skip
        macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs
        )
        cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)

        def one(obj: str) -> None:
            src, ext = build[obj]
            compiler._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, [obj for obj in objects if obj in build]))
        return objects

    compiler.compile = compile


class BuildExt(build_ext):
    """build_ext that writes the docstrings headers first, compiles on every CPU, and says in
    one sentence what is missing when no compiler can run."""

    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "unix":
            cc = self.compiler.compiler_so[0]
            if shutil.which(cc) is None:
                raise SystemExit(f"error: no C compiler ({cc!r} not found). {NEEDS}.")
            headers = sysconfig.get_paths()["include"]
            if not os.path.exists(os.path.join(headers, "Python.h")):
                raise SystemExit(f"error: no Python.h in {headers}. {NEEDS}.")
            compile_in_parallel(self.compiler)
        write_docstring_headers(self.extensions, os.path.join(self.build_temp, "docstrings"))
        try:
            super().build_extensions()
        except Exception as e:  # MSVC missing raises a platform error here
            if type(e).__name__ in {"DistutilsPlatformError", "PlatformError"}:
                raise SystemExit(f"error: {e}. {NEEDS}.") from None
            raise


# A sanitized build links the sanitizers' runtime into both extensions.
extra_link_args = (
    [f"-fsanitize={os.environ['LEVELDB_LOG_SANITIZE']}"]
    if os.environ.get("LEVELDB_LOG_SANITIZE") and sys.platform != "win32"
    else []
)

setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=[
        Extension(
            "leveldb_log._core",
            sources=SOURCES,
            depends=[*HEADERS, "python/leveldb_log/_core.pyi", "csrc/docstrings.py"],
            include_dirs=["csrc/core", "csrc/py"],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        ),
        Extension(
            "leveldb_log._datastore",
            sources=DS_SOURCES,
            depends=[*DS_HEADERS, "python/leveldb_log/_datastore.pyi", "csrc/docstrings.py"],
            include_dirs=["csrc/datastore", "csrc/datastore/py"],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        ),
    ],
)
