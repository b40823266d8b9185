#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# bench/network.sh — vkshmem over its network transport against the raw transport, in one run.
#
# UCX: ucx_perftest over 127.0.0.1 (server and client on this machine), then vkshmem-perf at 2 PEs
# with VKSHMEM_FORCE_NETWORK=1, both with the same UCX_TLS (default tcp), alternating for N
# rounds; prints the median of each row and the ratio vkshmem / raw (times) or raw / vkshmem
# (bandwidth), so < 1 is better for vkshmem and 1.2 means 20% worse.
# libfabric (--transport ofi): the same with ofi-raw-perf (tools/perf: fi_write and
# fi_fetch_atomic loops, one operation in flight, delivery completion) against vkshmem with
# VKSHMEM_NETWORK=ofi, both on provider OFI_PROVIDER (default tcp, i.e. tcp;ofi_rxm).
#
#   bench/network.sh [--transport ucx|ofi] [--rounds N] [--record] [--build-dir DIR]
#
# --record writes bench/results/<date>-<host>-network-<transport>-<setting>.md and, beside it, PNG
# bar charts of its latency and bandwidth rows (bench/plot.sh, needs gnuplot).
#
# What is compared (UCX; libfabric: the raw side is ofi-raw-perf's put 8, fadd and bw 1 MiB):
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
transport=ucx
while [[ $# -gt 0 ]]; do
    case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --record) record=1; shift ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --transport) transport=$2; shift 2 ;;
    *) echo "usage: bench/network.sh [--transport ucx|ofi] [--rounds N] [--record] [--build-dir DIR]" >&2; exit 2 ;;
    esac
done
export UCX_TLS=${UCX_TLS:-tcp}
# vkshmem's UCX transport sets TCP segments of 64 KiB unless these are set; the raw side gets the
# same, so both run the same UCX configuration.
export UCX_TCP_TX_SEG_SIZE=${UCX_TCP_TX_SEG_SIZE:-64k} UCX_TCP_RX_SEG_SIZE=${UCX_TCP_RX_SEG_SIZE:-64k}
export OFI_PROVIDER=${OFI_PROVIDER:-tcp}
if [[ $transport == ofi ]]; then
    export VKSHMEM_NETWORK=ofi VKSHMEM_OFI_PROVIDER=$OFI_PROVIDER
    setting="VKSHMEM_OFI_PROVIDER=$OFI_PROVIDER"
    raw_name="raw libfabric"
else
    export VKSHMEM_NETWORK=ucx
    setting="UCX_TLS=$UCX_TLS UCX_TCP_TX_SEG_SIZE=$UCX_TCP_TX_SEG_SIZE UCX_TCP_RX_SEG_SIZE=$UCX_TCP_RX_SEG_SIZE"
    raw_name="raw UCX"
fi
[[ $transport == ofi ]] || command -v ucx_perftest >/dev/null || { echo "bench/network.sh: ucx_perftest missing (scripts/setup.sh installs ucx-utils)" >&2; exit 1; }
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

# ofi_raw TEST SIZE ITERS: ofi-raw-perf's figure (us per operation, or MB/s).
ofi_raw() {
    local d
    d=$(mktemp -d -p "$out")
    timeout 120 "$build_dir/bin/ofi-raw-perf" "$OFI_PROVIDER" 1 "$d" "$1" "$2" "$3" >/dev/null 2>&1 &
    timeout 120 "$build_dir/bin/ofi-raw-perf" "$OFI_PROVIDER" 0 "$d" "$1" "$2" "$3" | awk '{print $3}'
    wait
}

for r in $(seq "$rounds"); do
    echo "round $r of $rounds" >&2
    if [[ $transport == ofi ]]; then
        echo "put8,$(ofi_raw put 8 20000)" >>"$out/raw.csv"
        echo "fadd,$(ofi_raw fadd 8 20000)" >>"$out/raw.csv"
        echo "bw1m,$(ofi_raw bw 1048576 2000)" >>"$out/raw.csv"
    else
        echo "put8,$(awk '{print 2 * $1}' <<<"$(raw ucp_put_lat 8 20000)")" >>"$out/raw.csv"
        echo "fadd,$(raw ucp_fadd 8 20000)" >>"$out/raw.csv"
        echo "bw1m,$(raw ucp_put_bw 1048576 2000 -O 1)" >>"$out/raw.csv"
        echo "bw1m_window,$(raw ucp_put_bw 1048576 2000)" >>"$out/raw.csv"
    fi
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
    echo "| measurement ($setting, 2 PEs) | vkshmem | $raw_name | ratio |"
    echo "|---|---|---|---|"
    if [[ $transport == ofi ]]; then
        row put8 "8 B put + quiet (raw: fi_write, delivery complete)" us time
        row fadd "long fetch-add (raw: fi_fetch_atomic FI_SUM)" us time
        row bw1m "1 MiB put bandwidth (raw: fi_write, one in flight)" MB/s bw
    else
        row put8 "8 B put + quiet (raw: 2 x ucp_put_lat)" us time
        row fadd "long fetch-add (raw: ucp_fadd)" us time
        row bw1m "1 MiB put bandwidth (raw: ucp_put_bw -O 1)" MB/s bw
        echo "| 1 MiB put bandwidth, raw with unlimited puts in flight | | $(awk -F, '$1=="bw1m_window" {print $2}' "$out/raw.csv" | median) MB/s | |"
    fi
)
echo "$table"
if ((record)); then
    if [[ $transport == ofi ]]; then
        f="$repo/bench/results/$(date +%F)-$(hostname)-network-ofi-${OFI_PROVIDER//[;,]/-}.md"
        what="libfabric $(fi_info --version | awk '/libfabric:/ {print $2}'), provider $OFI_PROVIDER"
    else
        f="$repo/bench/results/$(date +%F)-$(hostname)-network-ucx-${UCX_TLS//,/-}.md"
        what="$(ucx_info -v | head -1 | sed 's/^# //') (UCX_TLS=$UCX_TLS)"
    fi
    {
        echo "# vkshmem over $transport against $raw_name ($(date +%F), $(hostname))"
        echo
        echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
        echo "$what. Both sides on this machine; medians of $rounds alternating rounds."
        echo "Command: \`bench/network.sh --transport $transport --rounds $rounds --record\`."
        echo
        echo "$table"
        echo
        echo "Raw rounds: $(tr '\n' ' ' <"$out/raw.csv")"
        echo
        echo "vkshmem rounds: $(tr '\n' ' ' <"$out/vk.csv")"
    } >"$f"
    echo "recorded in $f"
    # PNG charts of the table beside it; without gnuplot plot.sh says so and the run goes on.
    "$repo/bench/plot.sh" "$f" | while IFS= read -r png; do echo "plotted in $png"; done
fi
