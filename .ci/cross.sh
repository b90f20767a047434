#!/usr/bin/env bash
# Tests the C core on the CPUs the wheels ship for but CI does not run natively, under
# QEMU user mode: AArch64 (each CRC-32C path) and s390x (big-endian).
#
#   bash .ci/cross.sh [SOURCE_ROOT]
#
# SOURCE_ROOT (default: this checkout) is the tree built and tested, so that a copy of it
# with a planted bug can be checked with this script. Installs QEMU and the cross compilers
# (Debian: qemu-user, gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, gcc-s390x-linux-gnu,
# libc6-dev-s390x-cross) when missing. Exit status 0 when every check passed.
#
# - AArch64: the C unit tests (tests/c) once per CRC-32C path, each time as the path the
#   core picks by itself: QEMU's CPU models all offer CRC32 and PMULL, so
#   tests/cross/hwcap_mask.c hides them from AT_HWCAP (LLOG_CROSS_HIDE) for the other two.
#   test_core runs its reduced input set (LLOG_TEST_REDUCED, tests/c/harness.h: every code
#   path, fewer inputs) on each path (CROSS_FULL=1: the full set). test_crc32c runs once, on
#   -cpu max, over every input it has: it runs every usable path itself, so the CRC-32C code
#   that differs by CPU sees all its lengths, splits and alignments.
#   tests/cross/cross_detect.c on several -cpu models and hidden features: the path picked
#   must be the one AT_HWCAP calls for, and the one the table below names.
# - s390x: test_core, on its reduced input set (CROSS_FULL=1: the full one), and test_crc32c
#   (the portable path: it has no instruction paths). The full set's extra inputs take no
#   code path the reduced set misses; it runs natively (tests/core) and on AArch64 above.
# - Byte order: tests/cross/log_roundtrip.c writes the same log natively, on s390x and on
#   AArch64; the logs must be equal byte for byte, and every build reads every log back to
#   exactly the records written.
#
# Programs are linked statically with the C tests' flags, into a fresh temporary directory
# (CROSS_KEEP=1 keeps it). Up to CROSS_JOBS builds or QEMU runs go at once (default: the
# number of CPUs), at nice 10.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
src=$(cd "${1:-$here}" && pwd)
max_jobs=${CROSS_JOBS:-$(nproc 2>/dev/null || echo 2)}
# The input set of test_core (see above).
core_set=reduced
[ -z "${CROSS_FULL:-}" ] || core_set=full

# -cpu model, features hidden ("-": none), and the CRC-32C path the core must pick there.
detections=(
    "max          -            armv8-crc+pmull"
    "cortex-a35   -            armv8-crc+pmull"
    "cortex-a53   -            armv8-crc+pmull"
    "cortex-a57   -            armv8-crc+pmull"
    "cortex-a72   -            armv8-crc+pmull"
    "cortex-a76   -            armv8-crc+pmull"
    "neoverse-n1  -            armv8-crc+pmull"
    "a64fx        -            armv8-crc+pmull"
    "max          pmull        armv8-crc"
    "cortex-a53   pmull        armv8-crc"
    "max          crc32        portable"
    "a64fx        crc32,pmull  portable"
)

need=()
command -v "${CC:-gcc}" >/dev/null 2>&1 || need+=(gcc libc6-dev)
{ command -v qemu-aarch64 && command -v qemu-s390x; } >/dev/null 2>&1 || need+=(qemu-user)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/lib/libc.a ] || need+=(libc6-dev-arm64-cross)
command -v s390x-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-s390x-linux-gnu)
[ -e /usr/s390x-linux-gnu/lib/libc.a ] || need+=(libc6-dev-s390x-cross)
if [ ${#need[@]} -gt 0 ]; then
    echo "cross.sh: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${need[@]}" >/dev/null
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/llog-cross.XXXXXX")
if [ -n "${CROSS_KEEP:-}" ]; then
    trap 'echo "cross.sh: kept $work"' EXIT
else
    trap 'rm -rf "$work"' EXIT
fi
echo "cross.sh: sources $src, builds in $work, $max_jobs at a time, native: $(uname -m)"
echo "cross.sh: $(qemu-aarch64 --version | head -n 1)"

# job NAME COMMAND...: runs COMMAND in the background once fewer than max_jobs run, its
# output to $work/NAME.out, its exit status and seconds taken to $work/NAME.rc.
job() {
    local name=$1
    shift
    while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do
        wait -n || true
    done
    (
        rc=0 began=$SECONDS
        "$@" >"$work/$name.out" 2>&1 </dev/null || rc=$?
        echo "$rc $((SECONDS - began))" >"$work/$name.rc"
    ) &
}

on_native() { nice -n 10 "$@"; }
on_s390x() { nice -n 10 qemu-s390x "$@"; }
# on_aarch64 CPU HIDDEN PROGRAM ARGS...: HIDDEN ("-": none) goes to hwcap_mask.c.
on_aarch64() {
    local cpu=$1 hide=${2#-}
    shift 2
    LLOG_CROSS_HIDE=$hide nice -n 10 qemu-aarch64 -cpu "$cpu" "$@"
}
# on ARCH PROGRAM ARGS...: natively, or under QEMU (AArch64: -cpu max, nothing hidden).
on() {
    local arch=$1
    shift
    case $arch in
    native) on_native "$@" ;;
    s390x) on_s390x "$@" ;;
    aarch64) on_aarch64 max - "$@" ;;
    esac
}

passed=0
failed=0
# verdict OK LINE [OUTPUT_FILE]: prints the line, and the output's tail on failure.
verdict() {
    if [ "$1" = 1 ]; then
        passed=$((passed + 1))
        echo "ok    $2"
    else
        failed=$((failed + 1))
        echo "FAIL  $2"
        [ -z "${3:-}" ] || tail -n 15 "$3" | sed 's/^/      | /'
    fi
}
status_of() { cut -d' ' -f1 "$work/$1.rc" 2>/dev/null || echo 99; }
seconds_of() { cut -d' ' -f2 "$work/$1.rc" 2>/dev/null || echo "?"; }

# ---- builds ------------------------------------------------------------------------------

core=("$src"/csrc/core/*.c)
test_core=()
for f in "$src"/tests/c/*.c; do
    [ "${f##*/}" = test_crc32c.c ] || test_core+=("$f")
done
test_crc32c=("$src"/tests/c/test_crc32c.c "$src"/tests/c/harness.c "$src"/tests/c/ref_crc32c.c)
mask=("$src"/tests/cross/hwcap_mask.c -Wl,--wrap=getauxval)
cross=$src/tests/cross

# build ARCH PROGRAM COMPILER SOURCES...: $work/ARCH-PROGRAM, with the C tests' flags.
build() {
    local arch=$1 program=$2 cc=$3
    shift 3
    job "build-$arch-$program" nice -n 10 "$cc" -std=c11 -Wall -Wextra -Werror -O2 \
        -I"$src/csrc/core" "$@" -o "$work/$arch-$program"
}
a64=aarch64-linux-gnu-gcc
z=s390x-linux-gnu-gcc
build aarch64 test_core "$a64" -static "${test_core[@]}" "${core[@]}" "${mask[@]}"
build s390x test_core "$z" -static "${test_core[@]}" "${core[@]}"
build aarch64 test_crc32c "$a64" -static "${test_crc32c[@]}" "${core[@]}"
build s390x test_crc32c "$z" -static "${test_crc32c[@]}" "${core[@]}"
build aarch64 cross_detect "$a64" -static "$cross/cross_detect.c" "${core[@]}" "${mask[@]}"
build aarch64 log_roundtrip "$a64" -static "$cross/log_roundtrip.c" "${core[@]}"
build s390x log_roundtrip "$z" -static "$cross/log_roundtrip.c" "${core[@]}"
build native log_roundtrip "${CC:-gcc}" "$cross/log_roundtrip.c" "${core[@]}"
wait
echo
echo "== builds (-std=c11 -Wall -Wextra -Werror -O2, static under QEMU)"
for out in "$work"/build-*.out; do
    name=$(basename "$out" .out)
    verdict "$([ "$(status_of "$name")" = 0 ] && echo 1)" "${name#build-}" "$out"
done
if [ "$failed" -gt 0 ]; then
    echo "cross.sh: $failed build(s) failed"
    exit 1
fi

# ---- runs --------------------------------------------------------------------------------

arches=(native s390x aarch64)
for arch in "${arches[@]}"; do
    job "write-$arch" on "$arch" "$work/$arch-log_roundtrip" write "$work/$arch.log"
done
wait

vectors=$src/tests/golden/vectors.txt
# Features hidden, the path the core then picks, and test_core's input set there.
paths=("- armv8-crc+pmull $core_set"
       "pmull armv8-crc $core_set"
       "crc32 portable $core_set")
# with_set SET COMMAND...: COMMAND with the C tests' full or reduced input set.
with_set() {
    local set=$1
    shift
    LLOG_TEST_REDUCED=$([ "$set" = reduced ] && echo 1 || true) "$@"
}
job core-s390x with_set "$core_set" on_s390x "$work/s390x-test_core" "$vectors"
for p in "${paths[@]}"; do
    read -r hide path set <<<"$p"
    job "core-aarch64-$path" with_set "$set" on_aarch64 max "$hide" "$work/aarch64-test_core" \
        "$vectors"
done
job crc-aarch64 on_aarch64 max - "$work/aarch64-test_crc32c" "$vectors"
job crc-s390x on_s390x "$work/s390x-test_crc32c" "$vectors"
for i in "${!detections[@]}"; do
    read -r cpu hide path <<<"${detections[$i]}"
    job "detect-$i" on_aarch64 "$cpu" "$hide" "$work/aarch64-cross_detect"
done
for reader in "${arches[@]}"; do
    for log in "${arches[@]}"; do
        job "read-$reader-$log" on "$reader" "$work/$reader-log_roundtrip" read "$work/$log.log"
    done
done
wait

# ---- verdicts ----------------------------------------------------------------------------

# tests NAME WANT LABEL: a C test program's run passed (status 0, "N passed, 0 failed"
# last) and printed the line WANT, which names the CRC-32C path(s) it ran.
tests() {
    local out=$work/$1.out ok=0 last
    last=$(tail -n 1 "$out")
    if [ "$(status_of "$1")" = 0 ] && [[ $last =~ ^[0-9]+\ passed,\ 0\ failed$ ]] &&
        grep -qxF -- "$2" "$out"; then
        ok=1
    fi
    verdict "$ok" "$(printf '%-62s %-26s %4s s' "$3" "$last" "$(seconds_of "$1")")" "$out"
}
echo
echo "== C unit tests under QEMU (checks counted by the program)"
for p in "${paths[@]}"; do
    read -r hide path set <<<"$p"
    tests "core-aarch64-$path" "    (implementation with hardware allowed: $path)" \
        "aarch64 -cpu max, hidden $hide: test_core ($set set) on $path"
done
all="portable armv8-crc armv8-crc+pmull"
tests crc-aarch64 \
    "implementations: $all; chosen: armv8-crc+pmull (default armv8-crc+pmull)" \
    "aarch64 -cpu max: test_crc32c on each of $all"
tests core-s390x "    (implementation with hardware allowed: portable)" \
    "s390x: test_core ($core_set set) on portable"
tests crc-s390x "implementations: portable; chosen: portable (default portable)" \
    "s390x: test_crc32c on portable"

echo
echo "== the path the core picks (tests/cross/cross_detect.c; expected: the table)"
for i in "${!detections[@]}"; do
    read -r cpu hide path <<<"${detections[$i]}"
    line=$(grep '^hwcap' "$work/detect-$i.out" || true)
    ok=0
    [ "$(status_of "detect-$i")" = 0 ] && [[ $line == *" picked=$path" ]] && ok=1
    verdict "$ok" "$(printf -- '-cpu %-12s hidden %-12s %s (table: %s)' "$cpu" "$hide" \
        "${line:-no output}" "$path")" "$work/detect-$i.out"
done

echo
echo "== one log on every byte order (tests/cross/log_roundtrip.c)"
for arch in "${arches[@]}"; do
    ok=0
    [ "$(status_of "write-$arch")" = 0 ] && ok=1
    verdict "$ok" "$arch writes: $(tail -n 1 "$work/write-$arch.out")" "$work/write-$arch.out"
done
size=$(wc -c <"$work/native.log" 2>/dev/null || echo 0)
for arch in s390x aarch64; do
    ok=0
    cmp -s "$work/native.log" "$work/$arch.log" && ok=1
    verdict "$ok" "$arch's log is the native log, byte for byte ($size bytes)"
    [ "$ok" = 1 ] || cmp "$work/native.log" "$work/$arch.log" 2>&1 | sed 's/^/      | /' || true
done
want=$(grep '^records' "$work/read-native-native.out" || true)
for reader in "${arches[@]}"; do
    for log in "${arches[@]}"; do
        name=read-$reader-$log
        line=$(grep '^records' "$work/$name.out" || true)
        ok=0
        [ "$(status_of "$name")" = 0 ] && [ "$line" = "$want" ] && [ -n "$want" ] && ok=1
        verdict "$ok" "$(printf '%-7s reads the %-7s log: %s' "$reader" "$log" \
            "${line:-no summary}")" "$work/$name.out"
    done
done

echo
echo "cross.sh: $passed passed, $failed failed, in $SECONDS s"
[ "$failed" -eq 0 ]
