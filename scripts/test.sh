#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# README command 2: build everything and run every test (unit, integration at
# 1-4 PEs, error and fault tests), plus the generated-bindings check and the
# tree's checks (tools/lint: layers, licence lines; also ctest's lint.* tests).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VKSHMEM_BUILD_DIR:-$root/build}
bash "$root/scripts/build.sh"
"$root/tools/gen/regen-check"
python3 "$root/tools/lint/layers.py"
python3 "$root/tools/lint/spdx.py"
export LP_NUM_THREADS=${LP_NUM_THREADS:-1}
cd "$build"
ctest --output-on-failure --timeout 300 -j"${VKSHMEM_TEST_JOBS:-1}" "$@"
