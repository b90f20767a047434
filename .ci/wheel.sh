#!/usr/bin/env bash
# Builds what users install, from what git would commit:
#
#   1. copies the source tree (the files git would commit) to a temporary directory;
#   2. `python -m build` there: an sdist, then a wheel built *from the sdist*, so a file
#      missing from the sdist breaks the build.
#
# usage: .ci/wheel.sh [--out DIR]
#   --out DIR   keep the sdist and the wheel in DIR (default: thrown away)
# environment: PYTHON (default python3) builds.
#
# .ci/run installs the wheel with its test extra and runs the behaviour tests against it;
# tests/meta/test_wheel.py checks what the sdist and the wheel hold.
set -euo pipefail

src="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="$2"; shift ;;
        *) echo "usage: $0 [--out DIR]" >&2; exit 2 ;;
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
