#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Runs a command that must fail in a controlled way, and checks what it leaves behind.
#
# usage: expect_failure.sh [-t SECONDS] [-n COUNT] [-p PROGRAM] <expected-regex> <expected-exit> -- <command...>
#
#   expected-regex  extended regex (grep -E) that the combined stdout+stderr must match
#   expected-exit   "nonzero", or an exact exit status (e.g. 0 for "fails politely and goes on")
#   -t SECONDS      the command must end within this time (default 30); it is killed after that
#   -n COUNT        the regex must match exactly COUNT lines (e.g. a message printed once, not per PE)
#   -p PROGRAM      absolute path of the program whose processes must be gone afterwards
#                   (default: the last argument of the command that is an executable file given by
#                   absolute path, i.e. the test program); without one, no process check is made
#
# Checks, all reported before the verdict: the exit status, the time, the output, no process of
# the program left running, no new entry in /dev/shm. Run such tests serially (other jobs
# creating files in /dev/shm at the same time would be blamed on this one).
set -u

usage() {
    sed -n '2,16p' "$0" >&2
    exit 2
}

timeout_s=30
count=""
pattern=""
while getopts "t:n:p:" opt; do
    case $opt in
    t) timeout_s=$OPTARG ;;
    n) count=$OPTARG ;;
    p) pattern=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 4 ] || usage
regex=$1
expected_exit=$2
shift 2
[ "$1" = "--" ] || usage
shift

if [ -z "$pattern" ]; then
    for arg in "$@"; do
        case $arg in /*) if [ -f "$arg" ] && [ -x "$arg" ]; then pattern=$arg; fi ;; esac
    done
fi
case $pattern in
/*) ;;
"") echo "expect_failure: no program given by absolute path; skipping the leftover-process check" ;;
*) echo "expect_failure: -p needs an absolute path, got '$pattern'" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/expect_failure.XXXXXX")
trap 'rm -rf "$work"' EXIT
ls -A /dev/shm | sort >"$work/shm.before"

start=$(date +%s%N)
timeout -k 5 "$timeout_s" "$@" >"$work/out" 2>&1
rc=$?
end=$(date +%s%N)
elapsed_ms=$(((end - start) / 1000000))

echo "---- output of: $* ----"
cat "$work/out"
echo "---- exit status $rc after ${elapsed_ms} ms ----"

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# timeout(1) answers 124 (or 137 after -k), but the program may end with 137 itself (a SIGKILLed
# PE): only a run that lasted the whole time counts as timed out.
if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ $elapsed_ms -ge $((timeout_s * 1000)) ]; then
    fail "the command did not end within ${timeout_s} s (killed by timeout)"
elif [ "$expected_exit" = "nonzero" ]; then
    [ $rc -ne 0 ] || fail "expected a non-zero exit status, got 0"
elif [ $rc -ne "$expected_exit" ]; then
    fail "expected exit status $expected_exit, got $rc"
fi

if ! grep -Eq -- "$regex" "$work/out"; then
    fail "the output does not match /$regex/"
elif [ -n "$count" ]; then
    matches=$(grep -Ec -- "$regex" "$work/out")
    [ "$matches" -eq "$count" ] || fail "/$regex/ matched $matches lines, expected exactly $count"
fi

# Processes of the program may take a moment to be reaped after the launcher returns. pgrep -f
# also matches this script (its arguments name the program): leave out our own pid.
left=""
if [ -n "$pattern" ]; then
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        pgrep -f -- "$pattern" >"$work/pids" 2>/dev/null
        left=$(grep -vx -- "$$" "$work/pids" | tr '\n' ' ')
        [ -z "$left" ] && break
        sleep 0.3
    done
fi
if [ -n "$left" ]; then
    fail "processes left running: $left"
    # shellcheck disable=SC2086
    ps -o pid,ppid,stat,etime,cmd -p "$(echo $left | tr ' ' ',')" 2>/dev/null
    # Clean up only what is certainly ours: processes running exactly the test program.
    for pid in $left; do
        if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$pattern")" ]; then
            kill -KILL "$pid" 2>/dev/null
        fi
    done
fi

ls -A /dev/shm | sort >"$work/shm.after"
new_shm=$(comm -13 "$work/shm.before" "$work/shm.after" | tr '\n' ' ')
[ -z "$new_shm" ] || fail "left in /dev/shm: $new_shm"

if [ $failures -ne 0 ]; then
    echo "expect_failure: $failures check(s) failed"
    exit 1
fi
echo "expect_failure: ok (exit $rc, ${elapsed_ms} ms, output matches /$regex/)"
exit 0
