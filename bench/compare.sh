#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# bench/compare.sh — vkshmem against Open MPI's OSHMEM, same benchmark source.
#
# Builds tools/perf/vkshmem-perf.c with Open MPI's /usr/bin/oshcc, then runs
# both implementations at 2 PEs, alternating (vkshmem, OSHMEM, vkshmem, ...)
# for N rounds, and prints the median of each row with a ratio column.
# Ratio < 1 means vkshmem is better, for every row (ours / OSHMEM for times,
# OSHMEM / ours for bandwidths). Run bench/compare.sh --help for the options.

set -u
set -o pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)

rounds=3
record=0
keep=0
build_dir="$repo/build"
run_timeout=600
perf_args=()
oshmem_cc=/usr/bin/oshcc
oshmem_run=/usr/bin/oshrun
program=vkshmem-perf
np=2
record_name=host-heap

usage() {
    cat <<'EOF'
Usage: bench/compare.sh [options] [-- benchmark options]

Runs vkshmem-perf at 2 PEs (or --np) under vkshmem (build/bin/oshrun) and under Open MPI's
OSHMEM (/usr/bin/oshrun), alternating the two for N rounds, and prints the
median of every row plus a ratio where < 1 always means vkshmem is better:
  times (us):       ratio = vkshmem / OSHMEM
  bandwidth (MB/s): ratio = OSHMEM / vkshmem

Options:
  --np N              PEs, default 2 (the point-to-point tests use PEs 0 and 1;
                      the collective ones all PEs: --np 4 -- --test bcast ...)
  --name SUFFIX       the --record file is <date>-<host>-SUFFIX.md (default host-heap)
  --rounds N          rounds of (vkshmem, OSHMEM) runs, default 3
  --record            also write bench/results/<date>-<host>-host-heap.md
                      (machine, commands, table, raw CSVs) and, beside it, a PNG
                      chart per test (bench/plot.sh, needs gnuplot)
  --build-dir DIR     vkshmem build tree (default: build); needs bin/oshrun and
                      bin/vkshmem-perf (cmake --build build --target oshrun vkshmem-perf)
  --timeout S         limit for one benchmark run, default 600 s
  --keep              keep the temporary directory with the raw files
  --iters-scale F, --max-size BYTES, --test T
                      passed to vkshmem-perf (also anything after --)
  -h, --help          this message
EOF
}

die() {
    echo "compare.sh: error: $*" >&2
    exit 2
}

while (($#)); do
    case "$1" in
        --rounds) (($# >= 2)) || die "--rounds needs a value"; rounds=$2; shift 2 ;;
        --rounds=*) rounds=${1#*=}; shift ;;
        --record) record=1; shift ;;
        --name) (($# >= 2)) || die "--name needs a value"; record_name=$2; shift 2 ;;
        --np) (($# >= 2)) || die "--np needs a value"; np=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        --build-dir) (($# >= 2)) || die "--build-dir needs a value"; build_dir=$2; shift 2 ;;
        --build-dir=*) build_dir=${1#*=}; shift ;;
        --timeout) (($# >= 2)) || die "--timeout needs a value"; run_timeout=$2; shift 2 ;;
        --timeout=*) run_timeout=${1#*=}; shift ;;
        --iters-scale|--max-size|--test)
            (($# >= 2)) || die "$1 needs a value"; perf_args+=("$1" "$2"); shift 2 ;;
        --iters-scale=*|--max-size=*|--test=*) perf_args+=("$1"); shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; perf_args+=("$@"); break ;;
        *) die "unknown option '$1' (try --help)" ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer"
[[ "$np" =~ ^[1-9][0-9]*$ ]] || die "--np must be a positive integer"
[[ "$run_timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer"
[[ "$build_dir" == /* ]] || build_dir="$PWD/$build_dir"

# ---- The machine -----------------------------------------------------------------
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

# ---- Commands -------------------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vkshmem-compare.XXXXXX") || die "mktemp failed"
if ((keep)); then
    trap 'echo "compare.sh: raw files kept in $tmp" >&2' EXIT
else
    trap 'rm -rf "$tmp"' EXIT
fi

oshmem_bin="$tmp/$program-oshmem"
# OSHMEM: --mca osc ^rdma avoids its crash in shmem_finalize; spml ucx with
# UCX_TLS=self,sm keeps it on UCX shared memory (no TCP probing) and quiet.
# Both launches use --bind-to none (oshrun adds it for vkshmem) so that they
# place PEs alike.
# shellcheck disable=SC2054  # the commas are in UCX_TLS's value
oshmem_cmd=("$oshmem_run" --allow-run-as-root --oversubscribe --mca osc '^rdma'
            --mca spml ucx -x UCX_TLS=self,sm -x UCX_WARN_UNUSED_ENV_VARS=n
            --bind-to none -np "$np" "$oshmem_bin" --csv "${perf_args[@]}")
ours_cmd=("$build_dir/bin/oshrun" -np "$np" "$build_dir/bin/$program" --csv "${perf_args[@]}")

show_cmd() {
    local w out=()
    for w in "$@"; do
        if [[ "$w" =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then out+=("$w"); else out+=("$(printf '%q' "$w")"); fi
    done
    echo "${out[*]}"
}

echo "Machine: $machine_line"
echo "Open MPI: ${ompi_version:-not found}${ucx_version:+, UCX $ucx_version}"
echo

# ---- Build the OSHMEM binary --------------------------------------------------------
[[ -x "$oshmem_cc" ]] || die "$oshmem_cc not found: install Open MPI's OSHMEM (openmpi-bin, libopenmpi-dev)"
[[ -x "$oshmem_run" ]] || die "$oshmem_run not found: install Open MPI (openmpi-bin)"
oshmem_build=("$oshmem_cc" -std=c11 -O2 -Wall -Wextra -o "$oshmem_bin" "$repo/tools/perf/$program.c")
if ! "${oshmem_build[@]}" >"$tmp/oshmem-build.log" 2>&1; then
    cat "$tmp/oshmem-build.log" >&2
    die "building $program with $oshmem_cc failed"
fi

# ---- Is our half runnable? ------------------------------------------------------------
ours_ok=1
ours_reason=""
if [[ ! -x "$build_dir/bin/oshrun" || ! -x "$build_dir/bin/$program" ]]; then
    ours_ok=0
    ours_reason="not built: $build_dir/bin/oshrun or $build_dir/bin/$program is missing (build with: cmake --build $build_dir --target oshrun $program)"
    echo "compare.sh: vkshmem half SKIPPED: $ours_reason" >&2
fi
oshmem_ok=1
oshmem_reason=""

# Runs one benchmark; $1 = label, $2 = output stem, rest = command.
# Succeeds when the command exits 0 and printed at least one CSV row.
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
        echo "compare.sh: $label run FAILED ($why); last lines of its output:" >&2
        tail -n 15 "$stem.err" "$stem.csv" 2>/dev/null | sed 's/^/    /' >&2
        run_failure="$why"
        return 1
    fi
    return 0
}

for ((r = 1; r <= rounds; r++)); do
    if ((ours_ok)); then
        echo "round $r/$rounds: vkshmem ..." >&2
        run_failure=""
        if ! run_one vkshmem "$tmp/vkshmem-$r" "${ours_cmd[@]}"; then
            ours_ok=0
            ours_reason="round $r: $run_failure"
        fi
    fi
    if ((oshmem_ok)); then
        echo "round $r/$rounds: OSHMEM ..." >&2
        run_failure=""
        if ! run_one OSHMEM "$tmp/oshmem-$r" "${oshmem_cmd[@]}"; then
            oshmem_ok=0
            oshmem_reason="round $r: $run_failure"
        fi
    fi
    ((ours_ok || oshmem_ok)) || break
done

# ---- Medians ----------------------------------------------------------------------------
# median_of FILES... -> "test,size,median,unit" per row, in first-seen order.
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

ours_files=()
oshmem_files=()
if ((ours_ok)); then
    for ((r = 1; r <= rounds; r++)); do ours_files+=("$tmp/vkshmem-$r.csv"); done
fi
if ((oshmem_ok)); then
    for ((r = 1; r <= rounds; r++)); do oshmem_files+=("$tmp/oshmem-$r.csv"); done
fi
median_of "${ours_files[@]}" >"$tmp/vkshmem-median.csv"
median_of "${oshmem_files[@]}" >"$tmp/oshmem-median.csv"

# ---- The table ------------------------------------------------------------------------------
# Rows in OSHMEM's order, then rows only vkshmem has; a missing side shows n/a.
awk -F, -v ours_file="$tmp/vkshmem-median.csv" '
    function human(b) {
        if (b == 0) return "-"
        if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
        if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
        return b " B"
    }
    function fmt(x, unit) {
        if (x == "") return "n/a"
        return (unit == "MB/s") ? sprintf("%.0f", x) : sprintf("%.3f", x)
    }
    BEGIN {
        while ((getline line < ours_file) > 0) {
            split(line, f, ",")
            key = f[1] "," f[2]
            ours[key] = f[3]; unit[key] = f[4]
            ours_order[++nours] = key
        }
        print "| test | size | vkshmem | OSHMEM | unit | ratio |"
        print "|---|---:|---:|---:|---|---:|"
    }
    function row(key, o, t, u,    parts, ratio, r) {
        split(key, parts, ",")
        ratio = "n/a"
        if (o != "" && t != "" && o + 0 > 0 && t + 0 > 0) {
            r = (u == "MB/s") ? t / o : o / t
            ratio = sprintf("%.2f", r)
            if (parts[1] in gsum) { gsum[parts[1]] += log(r); gn[parts[1]]++ }
            else { gsum[parts[1]] = log(r); gn[parts[1]] = 1; gorder[++ng] = parts[1] }
        }
        printf "| %s | %s | %s | %s | %s | %s |\n", parts[1], human(parts[2] + 0), fmt(o, u), fmt(t, u), u, ratio
    }
    {
        key = $1 "," $2
        seen[key] = 1
        row(key, (key in ours) ? ours[key] : "", $3, $4)
    }
    END {
        for (i = 1; i <= nours; i++)
            if (!(ours_order[i] in seen)) row(ours_order[i], ours[ours_order[i]], "", unit[ours_order[i]])
        if (ng > 0) {
            print ""
            print "Geometric mean of the ratio per test (< 1: vkshmem better):"
            print ""
            print "| test | rows | geomean ratio |"
            print "|---|---:|---:|"
            for (i = 1; i <= ng; i++)
                printf "| %s | %d | %.2f |\n", gorder[i], gn[gorder[i]], exp(gsum[gorder[i]] / gn[gorder[i]])
        }
    }' "$tmp/oshmem-median.csv" >"$tmp/table.md"

what="$np PEs (point to point: PE 0 -> PE 1; collectives: all PEs, time per call on PE 0)"
legend="Median of $rounds round(s) per row, $what, symmetric buffers from shmem_malloc (host heap).
ratio < 1 means vkshmem is better: times (us) are vkshmem / OSHMEM, bandwidths (MB/s) are OSHMEM / vkshmem."

echo
echo "$legend"
echo
cat "$tmp/table.md"
echo

status_line() {
    if (($1)); then echo "ok"; else echo "FAILED or skipped: $2"; fi
}
ours_status=$(status_line "$ours_ok" "$ours_reason")
oshmem_status=$(status_line "$oshmem_ok" "$oshmem_reason")
echo "vkshmem half: $ours_status"
echo "OSHMEM half:  $oshmem_status"

# ---- Record -----------------------------------------------------------------------------------
if ((record)); then
    mkdir -p "$repo/bench/results"
    record_file="$repo/bench/results/$(date +%Y-%m-%d)-$host-$record_name.md"
    {
        echo "# vkshmem vs Open MPI OSHMEM — host heap, $np PEs"
        echo
        echo "- Date: $(date '+%Y-%m-%d %H:%M:%S %Z')"
        echo "- Machine: $machine_line"
        echo "- Open MPI: ${ompi_version:-unknown}${ucx_version:+; UCX $ucx_version}"
        echo "- vkshmem: $(git -C "$repo" describe --always --dirty 2>/dev/null || echo "unknown revision"), build tree $build_dir"
        env_set=$(compgen -e | grep -E '^(SHMEM_|VKSHMEM_|SMA_|LP_|UCX_|OMPI_MCA_)' | while IFS= read -r v; do printf '%s=%s ' "$v" "${!v}"; done)
        echo "- Environment: ${env_set:-(no SHMEM_, VKSHMEM_, SMA_, LP_, UCX_ or OMPI_MCA_ variables set)}"
        echo "- Rounds: $rounds, alternating vkshmem then OSHMEM; each row is the median over the rounds"
        echo "- vkshmem half: $ours_status"
        echo "- OSHMEM half: $oshmem_status"
        echo
        echo "Commands (from $repo):"
        echo
        echo '```'
        show_cmd "${oshmem_build[@]}"
        show_cmd "${ours_cmd[@]}"
        show_cmd "${oshmem_cmd[@]}"
        echo '```'
        echo
        echo "$legend"
        echo
        cat "$tmp/table.md"
        echo
        echo "## Raw CSV"
        for ((r = 1; r <= rounds; r++)); do
            for impl in vkshmem oshmem; do
                [[ -s "$tmp/$impl-$r.csv" ]] || continue
                echo
                echo "### $impl, round $r"
                echo
                echo '```csv'
                cat "$tmp/$impl-$r.csv"
                echo '```'
            done
        done
    } >"$record_file"
    echo "Recorded: ${record_file#"$repo"/}"
    # PNG charts of the table beside it; without gnuplot plot.sh says so and the run goes on.
    while IFS= read -r png; do
        echo "Plot: ${png#"$repo"/}"
    done < <("$script_dir/plot.sh" "$record_file")
fi

((ours_ok && oshmem_ok)) || exit 1
exit 0
