#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# fault_inject.sh <bin dir> <shm|ucx|ofi> <runs> [PEs]
#
# Kills one PE with SIGKILL at a random moment of mixed traffic (spmd_soak --forever: puts, gets,
# signals and atomics on both heaps, barriers and reductions) and checks what a user needs from a
# dying job, <runs> times over the given transport (shm: node-local; ucx, ofi: forced over tcp):
#   - the job (oshrun) ends with a non-zero status within 10 s of the kill;
#   - no process of the job is left;
#   - nothing new is left in /dev/shm.
# PEs: 2, 3 or 4 (default: random per run). Prints one line per run and exits 1 at the first
# failure, naming the run's PEs, victim and delay so it can be replayed. scripts/fault-inject.sh
# runs hundreds.
set -uo pipefail
bin=$(cd "$1" && pwd)
transport=$2
runs=$3
fixed_pes=${4:-}

case "$transport" in
    shm) env=() ;;
    ucx) env=(VKSHMEM_FORCE_NETWORK=1 UCX_TLS=tcp) ;;
    ofi) env=(VKSHMEM_FORCE_NETWORK=1 VKSHMEM_NETWORK=ofi VKSHMEM_OFI_PROVIDER=tcp) ;;
    *) echo "fault_inject: transport must be shm, ucx or ofi, not '$transport'" >&2; exit 2 ;;
esac
export LP_NUM_THREADS=${LP_NUM_THREADS:-1}

now_ms() { date +%s%3N; }
shm_list() { ls -1 /dev/shm 2>/dev/null | sort; }

for ((run = 1; run <= runs; ++run)); do
    pes=${fixed_pes:-$((2 + RANDOM % 3))}
    before=$(shm_list)
    log=$(mktemp "${TMPDIR:-/tmp}/vkshmem-fault.XXXXXX")
    # Its own session, so that whatever is left can be found (and cleaned up) by session id.
    env "${env[@]}" setsid "$bin/oshrun" -np "$pes" "$bin/spmd_soak" --forever >"$log" 2>&1 &
    job=$!

    # Wait for every PE to run, then for the traffic to be under way.
    pids=()
    for ((i = 0; i < 200; ++i)); do
        mapfile -t pids < <(pgrep -s "$job" -x spmd_soak)
        ((${#pids[@]} == pes)) && break
        sleep 0.05
    done
    if ((${#pids[@]} != pes)); then
        echo "fault_inject: run $run ($transport, $pes PEs): only ${#pids[@]} of $pes PEs started" >&2
        cat "$log" >&2
        pkill -9 -s "$job" 2>/dev/null
        rm -f "$log"
        exit 1
    fi
    delay_ms=$((300 + RANDOM % 1500))
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    victim=${pids[RANDOM % pes]}
    killed_at=$(now_ms)
    kill -9 "$victim" 2>/dev/null

    # The job must end by itself within 10 s.
    while kill -0 "$job" 2>/dev/null && (($(now_ms) - killed_at < 10000)); do sleep 0.05; done
    took=$(($(now_ms) - killed_at))
    what="run $run: $transport, $pes PEs, PE process $victim killed after ${delay_ms} ms of traffic"
    if kill -0 "$job" 2>/dev/null; then
        echo "fault_inject: FAIL: $what: the job still runs ${took} ms later" >&2
        pkill -9 -s "$job" 2>/dev/null
        wait "$job" 2>/dev/null
        tail -n 20 "$log" >&2
        rm -f "$log"
        exit 1
    fi
    wait "$job"
    rc=$?
    # The launcher may exit before its last children are gone: they have what is left of the
    # 10 s to go too.
    while [[ -n "$(pgrep -s "$job")" ]] && (($(now_ms) - killed_at < 10000)); do sleep 0.05; done
    left=$(pgrep -s "$job" | while read -r p; do ps -o pid=,stat=,comm= -p "$p"; done | tr -s ' \n' ' ')
    gone=$(($(now_ms) - killed_at))
    # Only what no live process holds: tests running beside this one make and use their own
    # (libfabric's shm provider names its regions pid:...), and remove them when they end.
    new_shm=$(comm -13 <(echo "$before") <(shm_list) | while read -r f; do
        [[ -e /dev/shm/$f ]] && ! fuser -s "/dev/shm/$f" 2>/dev/null && echo "$f"
    done | tr '\n' ' ')
    if ((rc == 0)) || [[ -n "$left" || -n "$new_shm" ]]; then
        echo "fault_inject: FAIL: $what: exit status $rc, after ${took} ms; processes left: ${left:-none};" \
             "new in /dev/shm: ${new_shm:-nothing}" >&2
        tail -n 20 "$log" >&2
        pkill -9 -s "$job" 2>/dev/null
        rm -f "$log"
        exit 1
    fi
    echo "fault_inject: $what: the job ended with status $rc after ${took} ms, its last process after ${gone} ms; nothing left"
    rm -f "$log"
done
