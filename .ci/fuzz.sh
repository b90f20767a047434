#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz/ with clang under ASan + UBSan
# and runs each for a bounded time, starting from the committed seed corpus.
#
#   bash .ci/fuzz.sh [--build-only] [--runs N] [SECONDS] [HARNESS ...]
#
# SECONDS per harness (default 60), or --runs N inputs per harness (a budget that does
# not depend on the machine's speed); HARNESS among reader, roundtrip, crc32c, append,
# datastore (default: all). Exit status 0 when no harness crashed or broke an invariant.
# A failing input is saved as tests/fuzz/build/artifacts/<harness>-crash-*;
# rerun it with tests/fuzz/build/fuzz_<harness> <that file>.
# Installs clang and its runtime (Debian: clang, libclang-rt-14-dev) if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
if [ "${1:-}" = "--build-only" ]; then
    build_only=1
    shift
fi
budget=()
if [ "${1:-}" = "--runs" ]; then
    budget=(-runs="$2")
    shift 2
else
    budget=(-max_total_time="${1:-60}")
    [ $# -gt 0 ] && shift
fi
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(reader roundtrip crc32c append datastore)

out=tests/fuzz/build
mkdir -p "$out/artifacts"

# A toolchain that links libFuzzer: clang plus its compiler-rt.
# The probe has a folder of its own: several runs of this script may build at once.
can_fuzz() {
    command -v clang >/dev/null 2>&1 || return 1
    local probe
    probe=$(mktemp -d "$out/probe.XXXXXX")
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
        >"$probe/probe.c"
    clang -fsanitize=fuzzer,address,undefined "$probe/probe.c" -o "$probe/probe" >/dev/null 2>&1
    local status=$?
    rm -rf "$probe"
    return $status
}
if ! can_fuzz; then
    echo "fuzz.sh: installing clang and libFuzzer" >&2
    # Several runs of this script may start at once (pytest-xdist): one installs.
    flock "${TMPDIR:-/tmp}/leveldb-log-apt.lock" sh -c 'apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        clang libclang-rt-14-dev >/dev/null'
    can_fuzz || { echo "fuzz.sh: clang cannot build a libFuzzer target" >&2; exit 1; }
fi

core=(csrc/core/*.c csrc/datastore/*.c)
flags=(-g -O1 -std=c11 -Wall -Wextra -Werror -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Icsrc/core
       -Icsrc/datastore)
for h in "${harnesses[@]}"; do
    clang "${flags[@]}" "tests/fuzz/fuzz_$h.c" "${core[@]}" -o "$out/fuzz_$h"
done
[ $build_only = 1 ] && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for h in "${harnesses[@]}"; do
    # New inputs go to a scratch corpus; the committed seeds stay as they are.
    mkdir -p "$out/corpus-$h"
    echo "fuzz.sh: $h, ${budget[*]}"
    if ! "$out/fuzz_$h" "${budget[@]}" -timeout=25 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$out/artifacts/$h-" \
        "$out/corpus-$h" "tests/fuzz/corpus/$h" >"$out/$h.log" 2>&1; then
        failed+=("$h")
        # What the harness and the sanitizers said, without libFuzzer's progress lines.
        grep -vE '^(INFO:|stat::|#[0-9]|[[:space:]]+#[0-9]|MS:|NOTE:|[[:space:]]+Combine|Base64:|0x|\\)' \
            "$out/$h.log" | head -n 40 >&2 || true
        echo "fuzz.sh: $h FAILED; full log in $out/$h.log" >&2
    fi
    grep -E "^stat::number_of_executed_units|^Done" "$out/$h.log" || true
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz.sh: failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz.sh: no crash in ${harnesses[*]}"
