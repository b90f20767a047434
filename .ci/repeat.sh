#!/usr/bin/env bash
# Runs the tests whose course depends on the OS (threads, a writer process that a reader
# follows, killed writers, signals, fork) ROUNDS times, to show that none of them can fail
# by chance. Their assertions are about results only; this is the evidence.
#
#   bash .ci/repeat.sh [--asan] [--cpu N] [--load N] [ROUNDS]
#
#   --asan     against the extension built with ASan + UBSan (.ci/sanitized.sh)
#   --cpu N    pin the tests to CPU N (taskset), so that everything runs on one core
#   --load N   keep CPU N busy with a spinning loop while the tests run
#   ROUNDS     default 30; each round is one pytest process, in one worker (-n 0)
#
# Prints one line per round and, last, "N passed, M failed" counting rounds; exits nonzero
# when any round failed. PYTHON chooses the interpreter of a plain run (default: .venv's).
set -euo pipefail
cd "$(dirname "$0")/.."

asan=0 cpu="" load=""
while [ $# -gt 0 ]; do
    case "$1" in
        --asan) asan=1 ;;
        --cpu) cpu=$2; shift ;;
        --load) load=$2; shift ;;
        -*) echo "usage: $0 [--asan] [--cpu N] [--load N] [ROUNDS]" >&2; exit 2 ;;
        *) break ;;
    esac
    shift
done
rounds=${1:-30}

tests=(tests/faults/test_threads_stress.py tests/reader/test_follow.py tests/crash/test_crash.py
       tests/faults/test_faults.py tests/reader/test_pickle.py tests/cli/test_cli_write_safety.py
       "tests/reader/test_reader.py" "tests/writer/test_writer.py")
select=(-k "not test_reader.py and not test_writer.py or thread or fork or signal or kill")
pin=()
[ -n "$cpu" ] && pin=(taskset -c "$cpu")

spinner=""
if [ -n "$load" ]; then
    taskset -c "$load" sh -c 'while :; do :; done' &
    spinner=$!
fi
trap '[ -n "$spinner" ] && kill "$spinner" 2>/dev/null || true' EXIT

run_round() {
    if [ "$asan" = 1 ]; then
        "${pin[@]}" bash .ci/sanitized.sh -n 0 "${select[@]}" "${tests[@]}"
    else
        "${pin[@]}" "${PYTHON:-.venv/bin/python}" -m pytest -q -p no:cacheprovider -n 0 \
            "${select[@]}" "${tests[@]}"
    fi
}

passed=0 failed=0
for ((i = 1; i <= rounds; i++)); do
    log=$(mktemp)
    if run_round >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "round $i: ok ($(tail -n 1 "$log"))"
    else
        failed=$((failed + 1))
        echo "round $i: FAILED"
        tail -n 40 "$log"
    fi
    rm -f "$log"
done
echo "repeat.sh: asan=$asan cpu=${cpu:-any} load=${load:-none}"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
