#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# scripts/soak.sh [OPS] [PEs...]
#
# The soak test at length: spmd_soak with OPS operations in all (default 1,000,000, split over the
# PEs) at each PE count (default 2 3 4), over shared memory, UCX tcp and libfabric tcp. Every run
# checks each operation against its PE's model (tests/integration/soak.c); a mismatch ends it with
# the seed to replay it (SOAK_SEED=<seed>). Builds first (scripts/build.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VKSHMEM_BUILD_DIR:-$root/build}
ops=${1:-1000000}
shift || true
pes=("$@")
((${#pes[@]})) || pes=(2 3 4)
bash "$root/scripts/build.sh" spmd_soak oshrun >/dev/null
export LP_NUM_THREADS=${LP_NUM_THREADS:-1}
for n in "${pes[@]}"; do
    for t in shm ucx ofi; do
        case $t in
            shm) env=() ;;
            ucx) env=(VKSHMEM_FORCE_NETWORK=1 UCX_TLS=tcp) ;;
            ofi) env=(VKSHMEM_FORCE_NETWORK=1 VKSHMEM_NETWORK=ofi VKSHMEM_OFI_PROVIDER=tcp) ;;
        esac
        printf '%-4s %d PEs: ' "$t" "$n"
        start=$(date +%s)
        env "${env[@]}" "$build/bin/oshrun" -np "$n" "$build/bin/spmd_soak" $((ops / n)) | tr -d '\n'
        echo " ($(($(date +%s) - start)) s)"
    done
done
