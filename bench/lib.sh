# SPDX-License-Identifier: BSL-1.0
# bench/lib.sh — what bench/compare.sh and bench/nbi.sh share; sourced, not run.
#
# The sourcing script sets `prog` (its name, for messages) first. The variables set here are
# read by those scripts.
# shellcheck shell=bash disable=SC2034,SC2154

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$bench_dir/.." && pwd)

# The options these scripts share, with their defaults (a script may change a default after
# sourcing this, before common_option reads the command line).
rounds=3
record=0
keep=0
build_dir="$repo/build"
run_timeout=600

oshmem_cc=/usr/bin/oshcc
oshmem_run=/usr/bin/oshrun
# Open MPI's OSHMEM as these benchmarks launch it (UCX_TLS and -np are the caller's): --mca osc
# ^rdma avoids its crash in shmem_finalize; spml ucx keeps it on UCX (whose transports UCX_TLS then
# picks); --bind-to none places PEs as vkshmem's oshrun does (it adds --bind-to none), so that the
# two launches place PEs alike.
oshmem_opts=(--allow-run-as-root --oversubscribe --mca osc '^rdma' --mca spml ucx
             -x UCX_WARN_UNUSED_ENV_VARS=n --bind-to none)

# awk_human: an awk function, human(bytes), for the size column of the tables ("-" for 0).
awk_human='
    function human(b) {
        if (b == 0) return "-"
        if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
        if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
        return b " B"
    }'

die() {
    echo "$prog: error: $*" >&2
    exit 2
}

# parse_command_line ARG...: takes the shared options itself (common_option) and hands each other
# one to the script's own_option, which works as common_option does; then checks the values.
parse_command_line() {
    while (($#)); do
        common_option "$@"
        ((shifted)) || own_option "$@"
        ((shifted)) || die "unknown option '$1' (try --help)"
        shift "$shifted"
    done
    check_common_options
}

# common_option ARG...: when $1 is a shared option (--rounds N, --record, --keep, --build-dir DIR,
# --timeout S; N, DIR and S also as --opt=VALUE; -h or --help: the script's usage, then exit),
# takes it and sets `shifted` to the number of words it used; otherwise sets `shifted` to 0.
common_option() {
    shifted=1
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --record) record=1 ;;
        --keep) keep=1 ;;
        --rounds=*) rounds=${1#*=} ;;
        --build-dir=*) build_dir=${1#*=} ;;
        --timeout=*) run_timeout=${1#*=} ;;
        --rounds|--build-dir|--timeout)
            (($# >= 2)) || die "$1 needs a value"
            shifted=2
            case "$1" in
                --rounds) rounds=$2 ;;
                --build-dir) build_dir=$2 ;;
                *) run_timeout=$2 ;;
            esac ;;
        *) shifted=0 ;;
    esac
}

# common_usage: the --help lines of the shared options (after the script's own).
common_usage() {
    cat <<EOF
  --rounds N          rounds, default $rounds (each runs every side once)
  --build-dir DIR     vkshmem build tree (default: build); needs bin/oshrun and
                      bin/vkshmem-perf (cmake --build build --target oshrun vkshmem-perf)
  --timeout S         limit for one benchmark run, default $run_timeout s
  --keep              keep the temporary directory with the raw files
  -h, --help          this message
EOF
}

# check_common_options: after the command line; also makes build_dir absolute.
check_common_options() {
    [[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
    [[ "$run_timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer"
    [[ "$build_dir" == /* ]] || build_dir="$PWD/$build_dir"
}

# make_tmp NAME: a fresh directory in $tmp, removed when the script exits (kept, and named on
# stderr, with --keep).
make_tmp() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/vkshmem-$1.XXXXXX") || die "mktemp failed"
    if ((keep)); then
        trap 'echo "$prog: raw files kept in $tmp" >&2' EXIT
    else
        trap 'rm -rf "$tmp"' EXIT
    fi
}

# describe_machine: sets host, machine_line, ompi_version and ucx_version.
describe_machine() {
    local cpu_model logical_cpus physical_cores os_name kernel
    cpu_model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)
    [[ -n "$cpu_model" ]] || cpu_model="unknown CPU"
    logical_cpus=$(nproc 2>/dev/null || echo "?")
    physical_cores=$(awk -F': *' '/^physical id/ {p=$2} /^core id/ {c[p "/" $2]=1}
                     END {n=0; for (k in c) n++; if (n) print n}' /proc/cpuinfo 2>/dev/null)
    [[ -n "$physical_cores" ]] || physical_cores="$logical_cpus"
    host=$(hostname 2>/dev/null || uname -n)
    # shellcheck disable=SC1091
    os_name=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") )
    kernel=$(uname -r)
    ompi_version=$("$oshmem_run" --version 2>/dev/null | head -n 1)
    ucx_version=$(ucx_info -v 2>/dev/null | awk '/Version/ {print $NF; exit}')
    machine_line="$cpu_model, $physical_cores cores / $logical_cpus logical CPUs ($host; ${os_name:-unknown OS}, Linux $kernel)"
}

# show_cmd WORD...: the command as one line to copy, quoting only the words that need it.
show_cmd() {
    local w out=()
    for w in "$@"; do
        if [[ "$w" =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then out+=("$w"); else out+=("$(printf '%q' "$w")"); fi
    done
    echo "${out[*]}"
}

# build_oshmem_perf SOURCE BINARY LOG: builds the benchmark with Open MPI's oshcc (the command is
# left in oshmem_build for the record); dies with the compiler's output when that fails.
build_oshmem_perf() {
    [[ -x "$oshmem_cc" ]] || die "$oshmem_cc not found: install Open MPI's OSHMEM (openmpi-bin, libopenmpi-dev)"
    [[ -x "$oshmem_run" ]] || die "$oshmem_run not found: install Open MPI (openmpi-bin)"
    oshmem_build=("$oshmem_cc" -std=c11 -O2 -Wall -Wextra -pthread -o "$2" "$1")
    if ! "${oshmem_build[@]}" >"$3" 2>&1; then
        cat "$3" >&2
        die "building $(basename "$1") with $oshmem_cc failed"
    fi
}

# run_one LABEL STEM COMMAND...: runs one benchmark, stdout to STEM.csv, stderr to STEM.err.
# Succeeds when the command exits 0 and printed at least one CSV row; otherwise says why on
# stderr, with the last lines of the output, and leaves the reason in run_failure.
run_one() {
    local label=$1 stem=$2
    shift 2
    local rc=0
    timeout --kill-after=10 "$run_timeout" "$@" </dev/null >"$stem.csv" 2>"$stem.err" || rc=$?
    local rows
    rows=$(grep -c '^[a-z_]*,[0-9]*,' "$stem.csv" 2>/dev/null) || rows=0
    if ((rc != 0 || rows == 0)); then
        local why="exit status $rc"
        ((rc == 124 || rc == 137)) && why="timed out after ${run_timeout}s"
        ((rc == 0)) && why="no CSV rows on stdout"
        echo "$prog: $label run FAILED ($why); last lines of its output:" >&2
        tail -n 15 "$stem.err" "$stem.csv" 2>/dev/null | sed 's/^/    /' >&2
        run_failure="$why"
        return 1
    fi
    return 0
}

# median_of FILES... -> "test,size,median,unit,count" per row, in first-seen order.
median_of() {
    (($#)) || return 0
    awk -F, '
        /^test,/ || NF < 4 { next }
        {
            key = $1 "," $2
            if (!(key in count)) { order[++nkeys] = key; unit[key] = $4 }
            count[key]++
            vals[key, count[key]] = $3 + 0
        }
        END {
            for (k = 1; k <= nkeys; k++) {
                key = order[k]; n = count[key]
                for (i = 1; i <= n; i++) v[i] = vals[key, i]
                for (i = 2; i <= n; i++) {          # insertion sort, n is small
                    x = v[i]; j = i - 1
                    while (j >= 1 && v[j] > x) { v[j + 1] = v[j]; j-- }
                    v[j + 1] = x
                }
                m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
                printf "%s,%.6g,%s,%d\n", key, m, unit[key], n
            }
        }' "$@"
}

# env_line: the variables that steer the libraries (SHMEM_, VKSHMEM_, SMA_, LP_, UCX_, FI_,
# OMPI_MCA_) as set in this shell, for the record.
env_line() {
    local set_vars
    set_vars=$(compgen -e | grep -E '^(SHMEM_|VKSHMEM_|SMA_|LP_|UCX_|FI_|OMPI_MCA_)' |
               while IFS= read -r v; do printf '%s=%s ' "$v" "${!v}"; done)
    echo "${set_vars:-(no SHMEM_, VKSHMEM_, SMA_, LP_, UCX_, FI_ or OMPI_MCA_ variables set)}"
}

# record_tail LEGEND NAME...: the end of a record: LEGEND, the table ($tmp/table.md), then
# "## Raw CSV" with $tmp/NAME-ROUND.csv for every round and name that has one.
record_tail() {
    local r name
    echo "$1"
    shift
    echo
    cat "$tmp/table.md"
    echo
    echo "## Raw CSV"
    for ((r = 1; r <= rounds; r++)); do
        for name in "$@"; do
            [[ -s "$tmp/$name-$r.csv" ]] || continue
            echo
            echo "### $name, round $r"
            echo
            echo '```csv'
            cat "$tmp/$name-$r.csv"
            echo '```'
        done
    done
}
