#!/usr/bin/env bash
# bench/network.sh — vkshmem over its network transport against the raw transport, in one run.
#
# UCX: ucx_perftest over 127.0.0.1 (server and client on this machine), then vkshmem-perf at 2 PEs
# with VKSHMEM_FORCE_NETWORK=1, both with the same UCX_TLS (default tcp), alternating for N
# rounds; prints the median of each row and the ratio vkshmem / raw (times) or raw / vkshmem
# (bandwidth), so < 1 is better for vkshmem and 1.2 means 20% worse.
#
#   bench/network.sh [--rounds N] [--record] [--build-dir DIR]
#
# What is compared:
#   8 B put + quiet   vkshmem: shmem_putmem + shmem_quiet (a round trip: the flush waits for the
#                     target's acknowledgement); raw: twice ucx_perftest's ucp_put_lat (a
#                     ping-pong of puts, reported one way)
#   fetch-add         shmem_long_atomic_fetch_add; raw: ucp_fadd latency
#   1 MiB put         64 blocking shmem_putmem then shmem_quiet; raw: ucp_put_bw with one put in
#                     flight (-O 1: a blocking put's semantics) and, for reference, unlimited
set -u
set -o pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=3
record=0
build_dir="$repo/build"
while [[ $# -gt 0 ]]; do
    case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --record) record=1; shift ;;
    --build-dir) build_dir=$2; shift 2 ;;
    *) echo "usage: bench/network.sh [--rounds N] [--record] [--build-dir DIR]" >&2; exit 2 ;;
    esac
done
export UCX_TLS=${UCX_TLS:-tcp}
command -v ucx_perftest >/dev/null || { echo "bench/network.sh: ucx_perftest missing (scripts/setup.sh installs ucx-utils)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
port=$((20000 + RANDOM % 10000))

# raw TEST SIZE ITERS [extra options]: ucx_perftest's "average" latency (us) or bandwidth (MB/s).
raw() {
    local test=$1 size=$2 iters=$3; shift 3
    port=$((port + 1))
    timeout 120 ucx_perftest -p $port "$@" >/dev/null 2>&1 &
    local server=$!
    sleep 0.5
    local line
    line=$(timeout 120 ucx_perftest 127.0.0.1 -p $port -t "$test" -s "$size" -n "$iters" "$@" 2>&1 | grep '^Final:')
    wait $server 2>/dev/null
    # Final: iters 50%ile average overall avg_MB/s overall_MB/s avg_msg/s overall_msg/s
    case "$test" in
    *_bw) awk '{printf "%.1f\n", $6 * 1.048576}' <<<"$line" ;; # MiB/s -> MB/s (1e6)
    *) awk '{print $4}' <<<"$line" ;;
    esac
}

for r in $(seq "$rounds"); do
    echo "round $r of $rounds" >&2
    echo "put8,$(awk '{print 2 * $1}' <<<"$(raw ucp_put_lat 8 20000)")" >>"$out/raw.csv"
    echo "fadd,$(raw ucp_fadd 8 20000)" >>"$out/raw.csv"
    echo "bw1m,$(raw ucp_put_bw 1048576 2000 -O 1)" >>"$out/raw.csv"
    echo "bw1m_window,$(raw ucp_put_bw 1048576 2000)" >>"$out/raw.csv"
    VKSHMEM_FORCE_NETWORK=1 timeout 300 "$build_dir/bin/oshrun" -np 2 "$build_dir/bin/vkshmem-perf" --csv \
        --test put --test amo --test bw --max-size 1M 2>/dev/null |
        awk -F, '$1=="put_lat" && $2==8 {print "put8," $3} $1=="amo_fadd_lat" {print "fadd," $3}
                 $1=="put_bw" && $2==1048576 {print "bw1m," $3}' >>"$out/vk.csv"
done

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
row() { # key label unit kind(time|bw)
    local v r
    v=$(awk -F, -v k="$1" '$1==k {print $2}' "$out/vk.csv" | median)
    r=$(awk -F, -v k="$1" '$1==k {print $2}' "$out/raw.csv" | median)
    local ratio
    if [[ $4 == time ]]; then ratio=$(awk -v a="$v" -v b="$r" 'BEGIN {printf "%.2f", a / b}')
    else ratio=$(awk -v a="$v" -v b="$r" 'BEGIN {printf "%.2f", b / a}'); fi
    printf '| %s | %s %s | %s %s | %s |\n' "$2" "$v" "$3" "$r" "$3" "$ratio"
}
table=$(
    echo "| measurement (UCX_TLS=$UCX_TLS, 2 PEs) | vkshmem | raw UCX | ratio |"
    echo "|---|---|---|---|"
    row put8 "8 B put + quiet (raw: 2 x ucp_put_lat)" us time
    row fadd "long fetch-add (raw: ucp_fadd)" us time
    row bw1m "1 MiB put bandwidth (raw: ucp_put_bw -O 1)" MB/s bw
    echo "| 1 MiB put bandwidth, raw with unlimited puts in flight | | $(awk -F, '$1=="bw1m_window" {print $2}' "$out/raw.csv" | median) MB/s | |"
)
echo "$table"
if ((record)); then
    f="$repo/bench/results/$(date +%F)-$(hostname)-network-ucx-${UCX_TLS//,/-}.md"
    {
        echo "# vkshmem over UCX against raw UCX ($(date +%F), $(hostname))"
        echo
        echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
        echo "$(ucx_info -v | head -1 | sed 's/^# //'). Both sides on this machine over 127.0.0.1 (UCX_TLS=$UCX_TLS);"
        echo "medians of $rounds alternating rounds. Command: \`bench/network.sh --rounds $rounds --record\`."
        echo
        echo "$table"
        echo
        echo "Raw rounds: $(tr '\n' ' ' <"$out/raw.csv")"
        echo
        echo "vkshmem rounds: $(tr '\n' ' ' <"$out/vk.csv")"
    } >"$f"
    echo "recorded in $f"
fi
