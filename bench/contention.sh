#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# bench/contention.sh — barrier latency when the PEs share the CPUs with other programs.
#
# Runs `vkshmem-perf --test barrier` at 2, 3 and 4 PEs beside 0, 1 and 2 busy processes (shell
# loops that never yield, standing for another job on the node), ROUNDS times each, and prints the
# median barrier_all latency of every cell. On a 2-core machine 2 PEs + 2 busy processes, and 3-4
# PEs with any, make more runnable threads than cores: what a waiting PE does then (spin, yield,
# sleep) decides whether a barrier costs microseconds or a scheduler time slice.
#
#   bench/contention.sh [--build-dir DIR] [--rounds N] [--np "2 3 4"] [--busy "0 1 2"]
set -u
set -o pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$repo/build"
rounds=3
nps="2 3 4"
busies="0 1 2"
while (($#)); do
    case "$1" in
        --build-dir) build_dir=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --np) nps=$2; shift 2 ;;
        --busy) busies=$2; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "contention.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
perf="$build_dir/bin/vkshmem-perf"
oshrun="$build_dir/bin/oshrun"
[[ -x "$perf" && -x "$oshrun" ]] || { echo "contention.sh: no $perf or $oshrun (build them first)" >&2; exit 2; }

busy_pids=()
stop_busy() {
    ((${#busy_pids[@]})) && kill "${busy_pids[@]}" 2>/dev/null
    wait "${busy_pids[@]}" 2>/dev/null
    busy_pids=()
}
trap stop_busy EXIT

median() { sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]; else print "-"}'; }

echo "# barrier_all latency (us, median of $rounds), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '| busy processes |'; for np in $nps; do printf ' %s PEs |' "$np"; done; echo
printf '|---|'; for _ in $nps; do printf -- '---:|'; done; echo
for busy in $busies; do
    printf '| %s |' "$busy"
    for np in $nps; do
        values=()
        for ((r = 0; r < rounds; r++)); do
            for ((b = 0; b < busy; b++)); do
                (while :; do :; done) &
                busy_pids+=($!)
            done
            v=$(timeout 300 "$oshrun" -np "$np" "$perf" --test barrier --csv --iters-scale 0.1 </dev/null 2>/dev/null |
                awk -F, '$1 == "barrier_lat" {print $3}')
            stop_busy
            values+=("${v:-}")
        done
        printf ' %s |' "$(printf '%s\n' "${values[@]}" | grep . | median)"
    done
    echo
done
