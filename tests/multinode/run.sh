#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Multi-node tests on one machine: three hosts as network namespaces (vkn1..vkn3, 10.77.0.0/24,
# joined by a bridge in a fourth namespace), mpirun starting its daemons in them through an agent
# script. The SPMD programs run with 2 PEs per host over UCX/TCP or libfabric/TCP; then one host's
# PEs are killed mid-run, and the job must end non-zero within 15 s with nothing left behind.
#
#   tests/multinode/run.sh BUILD_DIR [ucx|ofi]
#
# Needs root (network namespaces); exits 77 (skipped) without it. Cleanup always runs, and also
# removes what an interrupted earlier run left.
set -uo pipefail

build=${1:?usage: run.sh BUILD_DIR [ucx|ofi]}
transport=${2:-ucx}
build=$(cd "$build" && pwd)
bin=$build/bin
subnet=10.77.0.0/24
hosts=(vkn1 vkn2 vkn3)
switch=vksw

if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
    echo "multinode: skipped (needs root, ip and unshare)"
    exit 77
fi

work=
cleanup() {
    # Nothing of the test may outlive it: processes in the namespaces, the namespaces, the route.
    for ns in "${hosts[@]}" $switch; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
        ip netns del "$ns" 2>/dev/null
        rm -rf "/etc/netns/$ns"
    done
    ip route del blackhole $subnet 2>/dev/null
    [[ -n $work ]] && rm -rf "$work"
}
cleanup
trap cleanup EXIT
work=$(mktemp -d /tmp/vkshmem-multinode.XXXXXX)
ms() { echo $(($(date +%s%N) / 1000000)); }

# The guard first: the root namespace never routes the test subnet anywhere.
ip route add blackhole $subnet || exit 1
ip netns add $switch && ip netns exec $switch ip link set lo up || exit 1
ip netns exec $switch ip link add br0 type bridge && ip netns exec $switch ip link set br0 up || exit 1
i=0
for ns in "${hosts[@]}"; do
    i=$((i + 1))
    ip netns add "$ns" && ip netns exec "$ns" ip link set lo up || exit 1
    ip link add "veth$i" netns "$ns" type veth peer name "port$i" netns $switch || exit 1
    ip netns exec "$ns" ip link set "veth$i" name eth0
    ip netns exec "$ns" ip addr add "10.77.0.$i/24" dev eth0
    ip netns exec "$ns" ip link set eth0 up
    ip netns exec $switch ip link set "port$i" master br0
    ip netns exec $switch ip link set "port$i" up
    mkdir -p "/etc/netns/$ns" # ip netns exec bind-mounts this over /etc/hosts
    printf '127.0.0.1 localhost\n10.77.0.1 vkn1\n10.77.0.2 vkn2\n10.77.0.3 vkn3\n' > "/etc/netns/$ns/hosts"
done

# mpirun's remote-shell agent: skip its options, enter the host's namespace with its own hostname.
cat > "$work/agent" <<'AGENT'
#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -*) shift;; *) break;; esac; done
host=$1; shift; exec ip netns exec "$host" unshare --uts sh -c "hostname $host; $*"
AGENT
chmod +x "$work/agent"
printf 'vkn1 slots=2\nvkn2 slots=2\nvkn3 slots=2\n' > "$work/hostfile"

# Runs `oshrun -np 6 PROGRAM ARGS` from host vkn1 across the three hosts.
launch() {
    ip netns exec vkn1 unshare --uts sh -c 'hostname vkn1; cd "$0"; exec "$@"' "$work" \
        "$bin/oshrun" --hostfile "$work/hostfile" --map-by node -np 6 \
        --mca plm_rsh_agent "$work/agent" --mca oob_tcp_if_include $subnet --mca btl_tcp_if_include $subnet \
        "$@"
}
export LP_NUM_THREADS=1 VKSHMEM_ERROR_CHECKS=1 SPMD_EXPECT_NPES=6
case $transport in
ucx) export VKSHMEM_NETWORK=ucx UCX_TLS=tcp UCX_NET_DEVICES=eth0; over="UCX/TCP" ;;
ofi) export VKSHMEM_NETWORK=ofi VKSHMEM_OFI_PROVIDER=tcp FI_TCP_IFACE=eth0; over="libfabric/TCP" ;;
*) echo "multinode: unknown transport $transport (ucx or ofi)"; exit 2 ;;
esac

failed=0
for prog in spmd_setup spmd_memory spmd_rma spmd_amo spmd_sync spmd_static_data spmd_signal spmd_teams spmd_coll \
    spmd_ctx spmd_active_set; do
    start=$(ms)
    if launch "$bin/$prog" > "$work/$prog.log" 2>&1; then
        echo "multinode: $prog, 6 PEs on 3 hosts over $over: passed in $(($(ms) - start)) ms"
    else
        echo "multinode: $prog, 6 PEs on 3 hosts over $over: FAILED"
        tail -40 "$work/$prog.log"
        failed=1
    fi
done

# Device heaps without a CPU mapping (VKSHMEM_DEVICE_ROUTE=copy, as a GPU's): the network transport
# cannot register them, so other hosts reach them through their owners' proxies.
for prog in spmd_rma spmd_device_buffers; do
    start=$(ms)
    if VKSHMEM_DEVICE_ROUTE=copy launch "$bin/$prog" > "$work/$prog.am.log" 2>&1; then
        echo "multinode: $prog, device heaps through the owners' proxies over $over: passed in $(($(ms) - start)) ms"
    else
        echo "multinode: $prog, device heaps through the owners' proxies over $over: FAILED"
        tail -40 "$work/$prog.am.log"
        failed=1
    fi
done

# One host's PEs die mid-run: the job ends non-zero within 15 s, and nothing is left behind.
launch "$bin/barrier_loop" > "$work/kill.log" 2>&1 &
job=$!
for _ in $(seq 300); do grep -q "PEs running" "$work/kill.log" && break; sleep 0.1; done
sleep 1
victims=$(for p in $(pgrep -f "$bin/barrier_loop"); do
    [[ $(ip netns identify "$p" 2>/dev/null) == vkn2 ]] && echo "$p"; done)
if [[ -z $victims ]]; then
    echo "multinode: kill test: found no PE on vkn2"
    cat "$work/kill.log"
    failed=1
else
    t0=$(ms)
    kill -9 $victims
    ended=0
    for _ in $(seq 150); do
        if ! kill -0 $job 2>/dev/null; then ended=1; break; fi
        sleep 0.1
    done
    dt=$(($(ms) - t0))
    if ((ended)); then wait $job; rc=$?; else rc=none; fi
    sleep 0.5
    left=$(pgrep -fc "$bin/barrier_loop")
    if ((ended)) && [[ $rc != 0 ]] && ((left == 0)); then
        echo "multinode: kill test ($over): vkn2's 2 PEs killed; the job ended in $dt ms with status $rc, no PE left"
    else
        echo "multinode: kill test FAILED: ended=$ended status=$rc after $dt ms, $left PEs left"
        tail -20 "$work/kill.log"
        failed=1
    fi
fi
exit $failed
