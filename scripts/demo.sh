#!/usr/bin/env bash
# README command 1: build vkshmem and run the demo (examples/ring) at 4 PEs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VKSHMEM_BUILD_DIR:-$root/build}
bash "$root/scripts/build.sh" ring oshrun vkshmem-info
# lavapipe starts one worker thread per core for every PE's device: one is enough here.
export LP_NUM_THREADS=${LP_NUM_THREADS:-1}
"$build/bin/vkshmem-info" -d
exec "$build/bin/oshrun" -np 4 "$build/bin/ring"
