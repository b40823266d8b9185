#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# cpu_contention.sh <bin dir> <ucx|ofi> <PEs> <limit s>
#
# Liveness of the network transports while another program holds the CPU: every PE of the job
# and one process that never yields share CPU 0 (taskset), and spmd_amo's contention cases (every
# PE hammers counters on one PE: each atomic a round trip that needs the target's CPU) run over
# the transport forced onto tcp. The job must pass within <limit> seconds.
#
# What it guards: a thread that waits for a network operation must sleep on something that ends
# when the answer comes (the UCX worker's event fd, a short precise nap), not sched_yield. A
# yield beside a busy process hands it the core for a whole time slice, once per round trip, on
# the waiting side and on the serving side: at 3 PEs this run took 35 s over UCX and 46 s over
# libfabric that way, against 5 s and 10 s now (test VM, 2 cores). The limit sits between.
set -uo pipefail
bin=$(cd "$1" && pwd)
transport=$2
pes=$3
limit=$4

case "$transport" in
    ucx) env=(UCX_TLS=tcp) ;;
    ofi) env=(VKSHMEM_NETWORK=ofi VKSHMEM_OFI_PROVIDER=tcp) ;;
    *) echo "cpu_contention: transport must be ucx or ofi, not '$transport'" >&2; exit 2 ;;
esac
command -v taskset >/dev/null || { echo "cpu_contention: taskset missing (util-linux)" >&2; exit 2; }

taskset -c 0 bash -c 'while :; do :; done' &
busy=$!
trap 'kill "$busy" 2>/dev/null' EXIT

start=$(date +%s%3N)
env "${env[@]}" VKSHMEM_FORCE_NETWORK=1 LP_NUM_THREADS=1 SPMD_EXPECT_NPES="$pes" SPMD_TEST_TIMEOUT="$limit" \
    taskset -c 0 timeout $((limit + 30)) "$bin/oshrun" -np "$pes" "$bin/spmd_amo" "contention*"
rc=$?
took=$(($(date +%s%3N) - start))
echo "cpu_contention: $transport, $pes PEs beside a busy process on one CPU: exit status $rc after ${took} ms" \
    "(limit ${limit} s)"
exit $rc
