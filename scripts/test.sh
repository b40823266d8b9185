#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# README command 2: build everything and run every test (unit, integration at
# 1-4 PEs, error and fault tests), plus the generated-bindings check and the
# tree's checks (tools/lint: layers, licence lines; also ctest's lint.* tests);
# then the same suite without the shader and multi-node tests (and two programs' slowest network
# runs), built with AddressSanitizer and UndefinedBehaviorSanitizer (about 9 more minutes and its
# 4-minute build on 2 cores; VKSHMEM_TEST_SANITIZE=0 leaves it out, and so does giving ctest
# options).
#
#   scripts/test.sh [ctest options]                      the whole suite, in build/
#   scripts/test.sh --sanitize address|thread [ctest options]
#       builds a sanitizer tree (build-address/ or build-thread/: ASan and UBSan, or TSan;
#       no shader tests) and runs its tests with the options in scripts/sanitizers/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

sanitize=
if [[ "${1:-}" == --sanitize ]]; then
    sanitize=${2:-}
    shift 2 || true
    case "$sanitize" in
        address|thread) ;;
        *) echo "scripts/test.sh: --sanitize takes address (ASan + UBSan) or thread (TSan), not '$sanitize'" >&2
           exit 2 ;;
    esac
fi

export LP_NUM_THREADS=${LP_NUM_THREADS:-1}
if [[ -z "$sanitize" ]]; then
    build=${VKSHMEM_BUILD_DIR:-$root/build}
    bash "$root/scripts/build.sh"
    "$root/tools/gen/regen-check"
    python3 "$root/tools/lint/layers.py"
    python3 "$root/tools/lint/spdx.py"
    # One test per CPU: each declares its PEs (PROCESSORS), so a program of several PEs has the
    # machine to itself on 2 CPUs and single processes (unit tests, first compiles of shaders)
    # run side by side.
    (cd "$build" && ctest --output-on-failure --timeout 300 -j"${VKSHMEM_TEST_JOBS:-$(nproc)}" "$@")
    if [[ $# -eq 0 && "${VKSHMEM_TEST_SANITIZE:-1}" != 0 ]]; then
        echo "scripts/test.sh: the suite again under AddressSanitizer and UndefinedBehaviorSanitizer"
        VKSHMEM_BUILD_DIR= exec bash "$0" --sanitize address
    fi
    exit 0
fi

build=${VKSHMEM_BUILD_DIR:-$root/build-$sanitize}
# The instrumented tests run two at a time: each PE waits on others more than it computes.
export VKSHMEM_TEST_JOBS=${VKSHMEM_TEST_JOBS:-2}
bash "$root/scripts/setup.sh"
# Warnings are not errors here: GCC warns differently on instrumented code.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKSHMEM_SANITIZE="$sanitize" \
      -DVKSHMEM_SHADER_TESTS=OFF -DVKSHMEM_MAN_PAGES=OFF >/dev/null
ninja -C "$build" -j"$(nproc)"
supp=$root/scripts/sanitizers
# The Vulkan drivers stay loaded until exit (scripts/sanitizers/README.md says why).
icds=$(sed -n 's/.*"library_path": *"\([^"]*\)".*/\1/p' /usr/share/vulkan/icd.d/*.json 2>/dev/null |
       while read -r lib; do [ -e "$lib" ] && printf '%s:' "$lib"; done)
export LD_PRELOAD=${icds%:}${LD_PRELOAD:+:$LD_PRELOAD}
# Every PE inherits these through oshrun.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:verify_asan_link_order=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$supp/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1}
# UCX's memory hooks (libucm, loaded with the library) call ThreadSanitizer's interceptors from
# threads that are exiting, which crashes: ThreadSanitizer runs need them off.
[[ "$sanitize" != thread ]] || export UCX_MEM_MMAP_HOOK_MODE=${UCX_MEM_MMAP_HOOK_MODE:-none}
cd "$build"
# Not the lint (the plain run has it), the install test (it builds unsanitized consumers) nor the
# multi-node runs (the integration programs again over UCX and libfabric tcp, which this suite runs
# with the network forced; the plain run has them). Nor spmd_amo's and spmd_nbi's runs with device
# heaps reached through active messages over the network (the plain run has them; the other
# programs' such runs keep that path here): instrumented, they took 490 of this suite's 2035 s on
# the 2-CPU VM (spmd_amo.ofi_tcp_device_am.np3 alone 123 s).
exec ctest --output-on-failure --timeout 300 -j"${VKSHMEM_TEST_JOBS:-1}" -LE 'lint|install|multinode' \
    -E '^spmd_(amo|nbi)\.(ucx|ofi)_tcp_device_am' "$@"
