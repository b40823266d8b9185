#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# bench/nbi.sh — non-blocking transfers over TCP: vkshmem over UCX and over libfabric beside Open
# MPI's OSHMEM over UCX, in one run.
#
# Runs vkshmem-perf --test overlap --test nbirate --test ctxrate at 2 PEs in three configurations, one run of
# each per round (in this order) for N rounds, and prints the median of every row per
# configuration side by side:
#   vkshmem UCX tcp   build/bin/oshrun, VKSHMEM_FORCE_NETWORK=1 VKSHMEM_NETWORK=ucx UCX_TLS=tcp
#   vkshmem OFI tcp   build/bin/oshrun, VKSHMEM_FORCE_NETWORK=1 VKSHMEM_NETWORK=ofi
#                     VKSHMEM_OFI_PROVIDER=tcp
#   OSHMEM UCX tcp    the same source built with /usr/bin/oshcc, spml ucx, UCX_TLS=tcp, and the
#                     64 KiB TCP segments that vkshmem's UCX transport sets for itself, so that
#                     both UCX columns run the same UCX configuration
# overlap: how much of 16 x 64 KiB get_nbi / put_nbi proceeds behind a computation (1 = all of
# it, 0 = none: the transfers wait for shmem_quiet), with the times it comes from; nbirate:
# 8-byte put_nbi and get_nbi per second (64 per quiet), blocking get for reference, and the
# get_nbi / get ratio; ctxrate: the same 8-byte put_nbi stream from 1 and 2 threads of PE 0, each on
# a private context. tools/perf/vkshmem-perf.c says how each is measured.
# Run bench/nbi.sh --help for the options; --record writes bench/results/<date>-<host>-nbi.md.

set -u
set -o pipefail

prog=nbi.sh
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

oshmem_only=0
run_timeout=300
perf_args=(--csv --test overlap --test nbirate --test ctxrate)

usage() {
    cat <<'EOF'
Usage: bench/nbi.sh [options]

Runs vkshmem-perf --test overlap --test nbirate --test ctxrate at 2 PEs under vkshmem over UCX tcp,
vkshmem over libfabric tcp (both VKSHMEM_FORCE_NETWORK=1) and Open MPI's OSHMEM over
UCX tcp, one run of each per round, and prints the median of every row per
configuration side by side.

Options:
  --record            also write bench/results/<date>-<host>-nbi.md (machine,
                      commands, table, raw CSVs)
  --iters-scale F     passed to vkshmem-perf
  --oshmem-only       run only the OSHMEM configuration (checks this script and
                      OSHMEM's figures without a vkshmem build)
EOF
    common_usage
}

# The options only this script has (lib.sh's parse_command_line calls it).
own_option() {
    shifted=1
    case "$1" in
        --oshmem-only) oshmem_only=1 ;;
        --iters-scale) (($# >= 2)) || die "$1 needs a value"; perf_args+=("$1" "$2"); shifted=2 ;;
        --iters-scale=*) perf_args+=("$1") ;;
        *) shifted=0 ;;
    esac
}
parse_command_line "$@"

describe_machine
fi_version=$(fi_info --version 2>/dev/null | awk '/^libfabric:/ {print $2; exit}')

make_tmp nbi

# ---- The configurations -----------------------------------------------------------------
# Parallel arrays: a column title, a file stem, and the command as one string of show_cmd words
# (the arrays of arrays bash lacks), run through eval.
oshmem_bin="$tmp/vkshmem-perf-oshmem"
ours=("$build_dir/bin/oshrun" -np 2 "$build_dir/bin/vkshmem-perf" "${perf_args[@]}")
titles=("vkshmem UCX tcp" "vkshmem OFI tcp" "OSHMEM UCX tcp")
stems=(vkshmem-ucx vkshmem-ofi oshmem-ucx)
cmds=("$(show_cmd env VKSHMEM_FORCE_NETWORK=1 VKSHMEM_NETWORK=ucx UCX_TLS=tcp "${ours[@]}")"
      "$(show_cmd env VKSHMEM_FORCE_NETWORK=1 VKSHMEM_NETWORK=ofi VKSHMEM_OFI_PROVIDER=tcp "${ours[@]}")"
      "$(show_cmd "$oshmem_run" "${oshmem_opts[@]}" -x UCX_TLS=tcp -x UCX_TCP_TX_SEG_SIZE=64k \
                  -x UCX_TCP_RX_SEG_SIZE=64k -np 2 "$oshmem_bin" "${perf_args[@]}")")
ok=(1 1 1)
reason=("" "" "")

echo "Machine: $machine_line"
echo "Open MPI: ${ompi_version:-not found}${ucx_version:+, UCX $ucx_version}${fi_version:+, libfabric $fi_version}"
echo

build_oshmem_perf "$repo/tools/perf/vkshmem-perf.c" "$oshmem_bin" "$tmp/oshmem-build.log"
if ((oshmem_only)); then
    ok[0]=0 ok[1]=0
    reason[0]="skipped (--oshmem-only)" reason[1]="skipped (--oshmem-only)"
elif [[ ! -x "$build_dir/bin/oshrun" || ! -x "$build_dir/bin/vkshmem-perf" ]]; then
    ok[0]=0 ok[1]=0
    reason[0]="skipped, not built: $build_dir/bin/oshrun or $build_dir/bin/vkshmem-perf is missing"
    reason[1]=${reason[0]}
    echo "nbi.sh: vkshmem runs SKIPPED: ${reason[0]}" >&2
fi

# ---- The rounds ---------------------------------------------------------------------------
for ((r = 1; r <= rounds; r++)); do
    for c in "${!titles[@]}"; do
        ((ok[c])) || continue
        echo "round $r/$rounds: ${titles[c]} ..." >&2
        run_failure=""
        if ! eval "run_one \"\${titles[c]}\" \"\$tmp/\${stems[c]}-\$r\" ${cmds[c]}"; then
            ok[c]=0
            reason[c]="round $r: $run_failure"
        fi
    done
done

# ---- The table ----------------------------------------------------------------------------
# One median file per configuration that ran every round; rows in first-seen order over all.
medians=()
for c in "${!titles[@]}"; do
    files=()
    if ((ok[c])); then
        for ((r = 1; r <= rounds; r++)); do files+=("$tmp/${stems[c]}-$r.csv"); done
    fi
    median_of "${files[@]}" >"$tmp/${stems[c]}-median.csv"
    medians+=("$tmp/${stems[c]}-median.csv")
done
header=$(printf ' %s |' "${titles[@]}")
awk -F, -v header="$header" -v ncols="${#titles[@]}" "$awk_human"'
    BEGIN { for (i = 1; i < ARGC; i++) col_of[ARGV[i]] = i }  # a skipped configuration has an empty file
    {
        col = col_of[FILENAME]
        key = $1 "," $2
        if (!(key in unit)) { order[++nkeys] = key; unit[key] = $4 }
        val[col, key] = $3
    }
    function fmt(x, u) {
        if (x == "") return "n/a"
        return (u == "ratio") ? sprintf("%.2f", x) : sprintf("%.3f", x)
    }
    END {
        print "| test | size | unit |" header
        line = "|---|---:|---|"
        for (c = 1; c <= ncols; c++) line = line "---:|"
        print line
        for (k = 1; k <= nkeys; k++) {
            key = order[k]; split(key, p, ",")
            line = "| " p[1] " | " human(p[2] + 0) " | " unit[key] " |"
            for (c = 1; c <= ncols; c++) line = line " " fmt((c, key) in val ? val[c, key] : "", unit[key]) " |"
            print line
        }
    }' "${medians[@]}" >"$tmp/table.md"

legend="Median of $rounds round(s) per row, 2 PEs, PE 0 -> PE 1, both PEs on this machine over TCP.
overlap_*: 1 = the 16 x 64 KiB transfers proceed entirely behind the computation, 0 = not at all
(_transfer, _compute, _total: the medians in us it comes from). nbirate_*: 8-byte operations in
Mops/s (64 nbi operations per quiet; nbirate_get: blocking), _time in us per operation,
nbirate_get_nbi_over_get = get_nbi rate / blocking get rate. ctxrate_N_thread(s): Mops/s of
8-byte put_nbi from N threads of PE 0 together, each on a private context (64 per ctx_quiet);
ctxrate_2_over_1 = their ratio."

echo
echo "$legend"
echo
cat "$tmp/table.md"
echo
for c in "${!titles[@]}"; do
    if ((ok[c])); then status[c]="ok"
    elif [[ ${reason[c]} == skipped* ]]; then status[c]=${reason[c]}
    else status[c]="FAILED: ${reason[c]}"; fi
    printf '%-16s %s\n' "${titles[c]}:" "${status[c]}"
done

# ---- Record -----------------------------------------------------------------------------------
if ((record)); then
    mkdir -p "$repo/bench/results"
    record_file="$repo/bench/results/$(date +%Y-%m-%d)-$host-nbi.md"
    {
        echo "# Non-blocking transfers over TCP: vkshmem (UCX, libfabric) and Open MPI OSHMEM (UCX), 2 PEs"
        echo
        echo "- Date: $(date '+%Y-%m-%d %H:%M:%S %Z')"
        echo "- Machine: $machine_line"
        echo "- Open MPI: ${ompi_version:-unknown}${ucx_version:+; UCX $ucx_version}${fi_version:+; libfabric $fi_version}"
        echo "- vkshmem: $(git -C "$repo" describe --always --dirty 2>/dev/null || echo "unknown revision"), build tree $build_dir"
        echo "- Environment: $(env_line)"
        echo "- Rounds: $rounds, each running the configurations in the order of the table's columns"
        for c in "${!titles[@]}"; do echo "- ${titles[c]}: ${status[c]}"; done
        echo
        echo "Commands (from $repo):"
        echo
        echo '```'
        show_cmd "${oshmem_build[@]}"
        printf '%s\n' "${cmds[@]}"
        echo '```'
        echo
        record_tail "$legend" "${stems[@]}"
    } >"$record_file"
    echo "Recorded: ${record_file#"$repo"/}"
fi

failed=0
for c in "${!titles[@]}"; do
    ((ok[c])) || [[ ${reason[c]} == "skipped (--oshmem-only)" ]] || failed=1
done
exit "$failed"
