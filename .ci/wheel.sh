#!/usr/bin/env bash
# Builds what users install, and tests that rather than the source tree:
#
#   1. copies the source tree (the files git would commit) to a temporary directory;
#   2. `python -m build` there: an sdist, then a wheel built *from the sdist*, so a file
#      missing from the sdist breaks the build or the tests;
#   3. installs the wheel with its test extra into a fresh virtual environment;
#   4. runs the test suite from a temporary copy of tests/, outside any source tree, so
#      `import leveldb_log` can only find the installed wheel.
#
# usage: .ci/wheel.sh [--no-test] [--out DIR]
#   --out DIR   keep the sdist and the wheel in DIR (default: thrown away)
#   --no-test   stop once both are built (tests/test_wheel.py does this when CI is not
#               set, then checks what they hold)
# environment: PYTHON (default python3) builds and runs everything; extra pytest
# arguments go in WHEEL_PYTEST_ARGS.
#
# Tests of the source tree rather than of the installed package are left out (the main
# suite runs them): a test file that reaches outside tests/ into the checkout (it mentions
# ROOT or `parent.parent`: lint and typing of the tree, the C core, fuzzers and sanitizers
# built from csrc/, the instruction budget, this script's own test). The cibuildwheel
# test-command in pyproject.toml leaves out the same files; tests/test_wheel.py checks that.
set -euo pipefail

src="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
out=""
no_test=0
while [ $# -gt 0 ]; do
    case "$1" in
        --no-test) no_test=1 ;;
        --out) out="$2"; shift ;;
        *) echo "usage: $0 [--no-test] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done

work="$(mktemp -d "${TMPDIR:-/tmp}/leveldb-log-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT
out="${out:-$work/dist}"
mkdir -p "$out"
step() { printf '\n== %s\n' "$*"; }

step "copy the source tree (tracked and untracked, not ignored files) to $work/src"
"$python" - "$src" "$work/src" <<'PY'
import os, shutil, subprocess, sys
src, dst = sys.argv[1:]
try:
    listed = subprocess.run(
        ["git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True,
    ).stdout.decode().split("\0")
except (OSError, subprocess.CalledProcessError):  # not a git checkout: take everything
    listed = [os.path.relpath(os.path.join(d, f), src)
              for d, _, files in os.walk(src) for f in files]
for rel in filter(None, listed):
    if os.path.isfile(os.path.join(src, rel)) and not rel.startswith((".git/", ".venv/")):
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(os.path.join(src, rel), os.path.join(dst, rel))
PY

step "install build into a tools environment"
"$python" -m venv "$work/tools"
"$work/tools/bin/python" -m pip install --quiet --disable-pip-version-check build

step "build the sdist, then the wheel from the sdist"
"$work/tools/bin/python" -m build --outdir "$out" "$work/src"
wheel="$(ls "$out"/leveldb_log-*.whl)"
sdist="$(ls "$out"/leveldb_log-*.tar.gz)"
echo "built $sdist and $wheel"
[ "$no_test" = 1 ] && exit 0

step "install the wheel with the test extra into a fresh environment"
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel[test]"

step "run the test suite from a copy of tests/ outside the source tree"
mkdir -p "$work/run"
cp -R "$work/src/tests" "$work/src/pyproject.toml" "$work/run/"  # pytest settings only
rm -rf "$work/run/tests/c/build" "$work/run/tests/__pycache__"
cd "$work/run"
"$work/venv/bin/python" - "$work/venv" <<'PY'
import os, sys
import leveldb_log, leveldb_log._core
venv = os.path.realpath(sys.argv[1])
for mod in (leveldb_log, leveldb_log._core):
    where = os.path.realpath(mod.__file__)
    assert where.startswith(venv + os.sep), f"{mod.__name__} imported from {where}"
print("leveldb_log", leveldb_log.__version__, "from", os.path.dirname(leveldb_log.__file__))
PY
ignore=()
for f in tests/test_*.py; do
    if grep -qE '\bROOT\b|parent\.parent' "$f"; then ignore+=("--ignore=$f"); fi
done
echo "left out (tests of the source tree): ${ignore[*]#--ignore=}"
# shellcheck disable=SC2086 # WHEEL_PYTEST_ARGS is a list of arguments
"$work/venv/bin/python" -m pytest -p no:cacheprovider tests "${ignore[@]}" ${WHEEL_PYTEST_ARGS:-}
