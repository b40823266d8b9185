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

prog=compare.sh
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

perf_args=()
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
  bandwidth (MB/s), rates (Mops/s) and unit "ratio" (overlap, nbi gain), where
  more is better:   ratio = OSHMEM / vkshmem

Options:
  --np N              PEs, default 2 (the point-to-point tests use PEs 0 and 1;
                      the collective ones all PEs: --np 4 -- --test bcast ...)
  --name SUFFIX       the --record file is <date>-<host>-SUFFIX.md (default host-heap)
  --record            also write bench/results/<date>-<host>-host-heap.md
                      (machine, commands, table, raw CSVs) and, beside it, a PNG
                      chart per test (bench/plot.sh, needs gnuplot)
  --iters-scale F, --max-size BYTES, --test T
                      passed to vkshmem-perf (also anything after --)
EOF
    common_usage
}

# The options only this script has (lib.sh's parse_command_line calls it).
own_option() {
    shifted=2
    case "$1" in
        --name) (($# >= 2)) || die "--name needs a value"; record_name=$2 ;;
        --np) (($# >= 2)) || die "--np needs a value"; np=$2 ;;
        --iters-scale|--max-size|--test)
            (($# >= 2)) || die "$1 needs a value"; perf_args+=("$1" "$2") ;;
        --iters-scale=*|--max-size=*|--test=*) perf_args+=("$1"); shifted=1 ;;
        --) perf_args+=("${@:2}"); shifted=$# ;;
        *) shifted=0 ;;
    esac
}
parse_command_line "$@"
[[ "$np" =~ ^[1-9][0-9]*$ ]] || die "--np must be a positive integer"

# ---- The machine -----------------------------------------------------------------
describe_machine

# ---- Commands -------------------------------------------------------------------------
make_tmp compare

oshmem_bin="$tmp/$program-oshmem"
# OSHMEM (lib.sh's oshmem_opts) with UCX_TLS=self,sm: UCX shared memory, no TCP probing.
# shellcheck disable=SC2054  # the commas are in UCX_TLS's value
oshmem_cmd=("$oshmem_run" "${oshmem_opts[@]}" -x UCX_TLS=self,sm
            -np "$np" "$oshmem_bin" --csv "${perf_args[@]}")
ours_cmd=("$build_dir/bin/oshrun" -np "$np" "$build_dir/bin/$program" --csv "${perf_args[@]}")

echo "Machine: $machine_line"
echo "Open MPI: ${ompi_version:-not found}${ucx_version:+, UCX $ucx_version}"
echo

# ---- Build the OSHMEM binary --------------------------------------------------------
build_oshmem_perf "$repo/tools/perf/$program.c" "$oshmem_bin" "$tmp/oshmem-build.log"

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
awk -F, -v ours_file="$tmp/vkshmem-median.csv" "$awk_human"'
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
            r = (u == "MB/s" || u == "Mops/s" || u == "ratio") ? t / o : o / t
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
ratio < 1 means vkshmem is better: times (us) are vkshmem / OSHMEM; bandwidths (MB/s), rates (Mops/s) and rows in unit ratio are OSHMEM / vkshmem."

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
        echo "- Environment: $(env_line)"
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
        record_tail "$legend" vkshmem oshmem
    } >"$record_file"
    echo "Recorded: ${record_file#"$repo"/}"
    # PNG charts of the table beside it; without gnuplot plot.sh says so and the run goes on.
    while IFS= read -r png; do
        echo "Plot: ${png#"$repo"/}"
    done < <("$bench_dir/plot.sh" "$record_file")
fi

((ours_ok && oshmem_ok)) || exit 1
exit 0
