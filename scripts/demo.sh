#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# README command 1: build vkshmem and run the demos at 4 PEs: examples/ring
# (host RMA and atomics on both heaps) and examples/heat2d (a compute shader
# per PE, halos put from the shader; writes heat2d.png).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VKSHMEM_BUILD_DIR:-$root/build}
bash "$root/scripts/build.sh" ring heat2d oshrun vkshmem-info
# lavapipe starts one worker thread per core for every PE's device: one is enough here.
export LP_NUM_THREADS=${LP_NUM_THREADS:-1}
"$build/bin/vkshmem-info" -d
"$build/bin/oshrun" -np 4 "$build/bin/ring"
exec "$build/bin/oshrun" -np 4 "$build/bin/heat2d" --png "$root/heat2d.png"
