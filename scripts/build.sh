#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Installs what is missing (scripts/setup.sh), then configures and builds
# vkshmem into build/ (override with VKSHMEM_BUILD_DIR). Warnings are errors.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VKSHMEM_BUILD_DIR:-$root/build}
bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKSHMEM_WERROR=ON >/dev/null
ninja -C "$build" -j"$(nproc)" "$@"
