#!/usr/bin/env bash
# Builds the extension with AddressSanitizer + UBSan (setup.py honours
# LEVELDB_LOG_SANITIZE) into a venv of its own and runs Python tests on it.
#
#   bash .ci/sanitized.sh [PYTEST ARGS ...]
#
# Without arguments it runs the tests that drive the C code hardest (those of
# the list below that exist; not the model's own tests, which run no C). The
# build is made from a copy of the sources, so the objects of a normal build
# are never reused, and lives in build/sanitized/ (ignored by git). PYTHON
# chooses the interpreter (python3).
#
# CPython itself is not sanitized, so libasan is preloaded; leak detection is
# off (the interpreter keeps memory to the end on purpose); any ASan or UBSan
# report aborts the run. Python's small-object allocator stays on (routing it
# to malloc made the suite ten times slower); every buffer the extension
# allocates is large enough to come from malloc and be checked anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${PYTHON:-python3}
work=$root/build/sanitized

default_tests=(tests/writer/test_writer.py tests/writer/test_writer_modes.py tests/reader/test_reader.py tests/api/test_module.py
               tests/format/test_differential.py tests/format/test_corruption.py
               tests/faults/test_faults.py tests/faults/test_threads_stress.py tests/reader/test_in_place.py
               tests/dialects/test_dialects.py tests/dialects/test_dialect_api.py tests/reader/test_arrow.py
               tests/writer/test_write_many_arrow.py tests/reader/test_reader_shape.py)
if [ $# -eq 0 ]; then
    for t in "${default_tests[@]}"; do
        [ -e "$t" ] && set -- "$@" "$t"
    done
fi

# A clean copy of what the package is built from.
rm -rf "$work/src"
mkdir -p "$work/src"
cp -r setup.py pyproject.toml README.md MANIFEST.in csrc python "$work/src/"
find "$work/src" \( -name '*.so' -o -name '__pycache__' -o -name '*.egg-info' \) -prune \
    -exec rm -rf {} +

venv_py=$work/venv/bin/python
# uv, where .ci/run installed it beside the interpreter, installs in seconds; else pip.
uv=$(dirname "$(command -v "$python")")/uv
if [ -x "$uv" ]; then
    install=("$uv" pip install -q --python "$venv_py")
else
    install=("$venv_py" -m pip install -q --disable-pip-version-check)
fi
if ! "$venv_py" -c 'import pytest, xdist, hypothesis, zstandard, google_crc32c, pyarrow' \
    >/dev/null 2>&1; then
    rm -rf "$work/venv" "$work/stamp"
    "$python" -m venv "$work/venv"
    # zstd: the dialect tests read and write compressed RocksDB WALs; google-crc32c: the
    # model's checksums in C (tests/support/model.py); pyarrow: the Arrow export's tests.
    "${install[@]}" pytest pytest-xdist hypothesis zstandard google-crc32c pyarrow \
        "backports.zstd; python_version < '3.14'"
fi
# Built again only when the sources changed since the last build (.ci/repeat.sh runs this
# script many times over).
stamp="${CC:-gcc} $(cd "$work/src" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum)"
if [ "$(cat "$work/stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -f "$work/stamp"
    LEVELDB_LOG_SANITIZE=address,undefined CC=${CC:-gcc} "$venv_py" -m pip install -q \
        --disable-pip-version-check --force-reinstall --no-deps "$work/src"
    echo "$stamp" >"$work/stamp"
fi

# The module cannot be imported before libasan is preloaded: find it instead.
core_so=$(find "$work/venv" -name '_core*.so' | head -n 1)
symbols=$( [ -n "$core_so" ] && nm -D "$core_so" || true)
if ! grep -q '__asan_report' <<<"$symbols" || ! grep -q '__ubsan_handle' <<<"$symbols"; then
    echo "sanitized.sh: no extension built with ASan and UBSan in $work/venv" >&2
    exit 1
fi

libasan=$(${CC:-gcc} -print-file-name=libasan.so)
echo "sanitized.sh: $core_so (ASan+UBSan), preloading $libasan"
cd "$work"  # import leveldb_log from the venv, never from the source tree
export LD_PRELOAD=$libasan
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-sanitized}  # tests/conftest.py says why
args=()
for a in "$@"; do  # test paths are given relative to the repository
    if [ -e "$root/${a%%::*}" ]; then args+=("$root/$a"); else args+=("$a"); fi
done
"$venv_py" - <<'PY'
import leveldb_log._core as core, sys
assert core.__file__.startswith(sys.prefix), (core.__file__, sys.prefix)
PY
exec "$venv_py" -m pytest -p no:cacheprovider -q --rootdir "$root" "${args[@]}"
