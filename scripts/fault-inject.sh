#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# scripts/fault-inject.sh [RUNS] [shm|ucx|ofi...]
#
# The fault-injection test at length: RUNS (default 100) kills of a random PE at a random moment of
# mixed traffic, at 2-4 PEs, per transport (default all three): every job must end non-zero within
# 10 s and leave no process and nothing in /dev/shm (tests/integration/fault_inject.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VKSHMEM_BUILD_DIR:-$root/build}
runs=${1:-100}
shift || true
transports=("$@")
((${#transports[@]})) || transports=(shm ucx ofi)
bash "$root/scripts/build.sh" spmd_soak oshrun >/dev/null
for t in "${transports[@]}"; do
    "$root/tests/integration/fault_inject.sh" "$build/bin" "$t" "$runs" | tail -n 1
    echo "fault-inject: $t: $runs runs passed"
done
