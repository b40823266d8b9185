#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Runs vkshmem's checks on a machine with a GPU in one go.
#
#   scripts/gpu-check.sh pack   here: build, then copy the binaries into .gpu/
#   scripts/gpu-check.sh run [SECTION...]
#                               there (repository root, .gpu/ and .gl/ carried):
#                               sections tests (the demo, the integration and
#                               shader tests at 1-4 PEs), am (the same with
#                               peers' device heaps through active messages,
#                               at 2-3 PEs), heat2d, perf (the
#                               shader and device-heap figures, with --diag
#                               rows, vk-submit-probe and vk-copy-probe), hostperf (vkshmem-perf), collperf
#                               (its collective tests at 4 PEs), devcoll
#                               (vkshmem-coll-perf: device collectives and
#                               queue-ordered operations at 1, 2 and 4 PEs),
#                               cg (examples/cg, 4096^2 at 1-4 PEs), compile
#                               (first compiles of the HLSL test kernels at
#                               1 and 2 PEs), multigpu (with two GPUs or
#                               more: the cross-GPU figures at 2 PEs, one
#                               per GPU); default: all
#                               GPU_CHECK_PROGRAMS="spmd_rma shader_amo ..."
#                               limits tests and am to those programs,
#                               GPU_CHECK_PES="1 2" tests and cg to those PE
#                               counts; GPU_CHECK_OUT=DIR keeps the logs there
#
# The GPU machine has Open MPI, PMIx and fmt but no Vulkan loader: .gl/ holds
# Debian's libvulkan1 package, unpacked there before anything runs.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}

case "$mode" in
pack)
    set -e
    build=${VKSHMEM_BUILD_DIR:-$root/build}
    # The HLSL test kernels with the library's own settings (tests/shaders/CMakeLists.txt builds
    # them smaller for lavapipe), and the test kernels' GPU variant optimized as the lavapipe one
    # is; the next configure of the tree goes back to the tree's settings.
    bash "$root/scripts/setup.sh"
    cmake -S "$root" -B "$build" -G Ninja -DVKSHMEM_TEST_HLSL_SETTINGS= -DVKSHMEM_TEST_GPU_KERNELS_OPT=ON >/dev/null
    trap 'cmake -S "$root" -B "$build" -UVKSHMEM_TEST_HLSL_SETTINGS -UVKSHMEM_TEST_GPU_KERNELS_OPT >/dev/null' EXIT
    bash "$root/scripts/build.sh"
    rm -rf "$root/.gpu"
    mkdir -p "$root/.gpu/bin" "$root/.gpu/lib"
    cp -a "$build"/lib/libvkshmem.so* "$root/.gpu/lib/"
    cp "$build"/bin/oshrun "$build"/bin/vkshmem-info "$build"/bin/vkshmem-perf "$build"/bin/vkshmem-gpu-perf \
        "$build"/bin/vkshmem-coll-perf "$build"/bin/vk-submit-probe "$build"/bin/vk-copy-probe \
        "$build"/bin/ring "$build"/bin/heat2d \
        "$build"/bin/cg "$root/.gpu/bin/"
    for t in "$build"/bin/spmd_* "$build"/bin/shader_*; do [ -x "$t" ] && cp "$t" "$root/.gpu/bin/"; done
    mkdir -p "$root/.gpu/spv"
    cp "$build"/tests/shaders/shader_hlsl_spv/*.spv "$root/.gpu/spv/"
    strip "$root"/.gpu/bin/* "$root"/.gpu/lib/libvkshmem.so.*.*.* 2>/dev/null || true
    du -sh "$root/.gpu"
    ;;
run)
    shift
    for f in "$root"/.gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    # The NVIDIA ICD is in one of these places depending on how the driver came.
    for icd in /usr/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
        if [ -f "$icd" ] && [ -z "${VK_DRIVER_FILES:-}" ]; then export VK_DRIVER_FILES=$icd; fi
    done
    echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"
    export LD_LIBRARY_PATH=$root/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # As CTest gives the shader tests: a first compile of an HLSL test kernel takes up to a minute.
    export SPMD_TEST_TIMEOUT=${SPMD_TEST_TIMEOUT:-600}
    bin=$root/.gpu/bin
    out=${GPU_CHECK_OUT:-$(mktemp -d)}
    mkdir -p "$out"
    echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
    grep -m1 "model name" /proc/cpuinfo; nproc
    echo "== vkshmem-info"
    # (Not `tee /dev/stderr`: where stderr is a file, tee reopens it and truncates it.)
    "$bin/vkshmem-info" -d >"$out/devices.txt" 2>&1
    cat "$out/devices.txt"
    if grep -q "^  none" "$out/devices.txt"; then
        echo "no Vulkan device: the loader says"; VK_LOADER_DEBUG=all "$bin/vkshmem-info" -d 2>&1 | tail -40
        exit 1
    fi
    fails=0
    # check PROGRAM LABEL NP [VAR=value...]: one run under a 300 s limit, its log's tail on failure.
    check() {
        local t=$1 label=$2 np=$3 log
        shift 3
        log=$out/$(basename "$t").${label// /_}.log
        local start=$SECONDS
        if env "$@" timeout 300 "$bin/oshrun" -np "$np" -x LD_LIBRARY_PATH "$t" >"$log" 2>&1; then
            echo "PASS $(basename "$t") $label ($((SECONDS - start)) s)"
            grep -h "^\[shaders" "$log" | sed 's/^/    /'
        else
            echo "FAIL $(basename "$t") $label ($((SECONDS - start)) s)"; tail -20 "$log"; fails=$((fails + 1))
        fi
    }
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    gpus=${gpus:-0}
    sections=" ${*:-tests am heat2d perf hostperf collperf devcoll cg compile multigpu} "
    want() { [[ $sections == *" $1 "* ]]; }
    programs() {
        local t
        for t in "$bin"/spmd_* "$bin"/shader_*; do
            [ -x "$t" ] || continue
            [ -z "${GPU_CHECK_PROGRAMS:-}" ] || [[ " $GPU_CHECK_PROGRAMS " == *" $(basename "$t") "* ]] || continue
            echo "$t"
        done
    }
    if want tests; then
        echo "== demo at 4 PEs"
        SHMEM_INFO=1 VKSHMEM_DEBUG=info timeout 120 "$bin/oshrun" -np 4 -x LD_LIBRARY_PATH "$bin/ring" 2>&1 |
            grep -v "^  " || fails=$((fails + 1))
        for t in $(programs); do
            for np in ${GPU_CHECK_PES:-1 2 3 4}; do
                check "$t" "direct np=$np" "$np"
                case $(basename "$t") in shader_*) check "$t" "proxy np=$np" "$np" VKSHMEM_FORCE_PROXY=1 ;; esac
            done
        done
    fi
    if want am; then
        echo "== peers' device heaps through active messages (VKSHMEM_SHARE_DEVICE_HEAPS=0: each PE's"
        echo "   heap is private and BAR-mapped, as for PEs on different GPUs)"
        for t in $(programs); do
            for np in 2 3; do check "$t" "active messages np=$np" "$np" VKSHMEM_SHARE_DEVICE_HEAPS=0; done
        done
        echo "== vkshmem-perf at 2 PEs (device heap, active messages)"
        VKSHMEM_SHARE_DEVICE_HEAPS=0 timeout 300 "$bin/oshrun" -np 2 -x LD_LIBRARY_PATH "$bin/vkshmem-perf" \
            --iters-scale 0.2 --device-heap || fails=$((fails + 1))
    fi
    if want heat2d; then
        echo "== heat2d at 4 PEs"
        timeout 300 "$bin/oshrun" -np 4 -x LD_LIBRARY_PATH "$bin/heat2d" --nx 1024 --ny 1024 --steps 200 \
            --png "$out/heat2d.png" || fails=$((fails + 1))
    fi
    if want perf; then
        echo "== vkshmem-gpu-perf at 2 PEs (one GPU: the device heap is shared, no BAR mapping)"
        VKSHMEM_DEVICE_HEAP_SIZE=1G timeout 300 "$bin/oshrun" -np 2 -x LD_LIBRARY_PATH "$bin/vkshmem-gpu-perf" \
            --mib 256 --diag || fails=$((fails + 1))
        echo "== vkshmem-gpu-perf at 2 PEs through the proxy (VKSHMEM_FORCE_PROXY=1)"
        VKSHMEM_FORCE_PROXY=1 VKSHMEM_DEVICE_HEAP_SIZE=1G timeout 300 "$bin/oshrun" -np 2 -x LD_LIBRARY_PATH \
            "$bin/vkshmem-gpu-perf" --mib 16 || fails=$((fails + 1))
        echo "== vkshmem-gpu-perf at 1 PE (alone on the GPU: BAR-mapped device heap)"
        VKSHMEM_DEVICE_HEAP_SIZE=1G timeout 300 "$bin/oshrun" -np 1 -x LD_LIBRARY_PATH "$bin/vkshmem-gpu-perf" \
            --mib 256 || fails=$((fails + 1))
        echo "== vk-submit-probe (raw Vulkan: the ways to put 8 bytes into device memory the CPU cannot map)"
        timeout 120 "$bin/vk-submit-probe" || fails=$((fails + 1))
        echo "== vk-copy-probe (raw Vulkan: what the copy engine pays per region, 16 MiB in regions of 4 KiB-16 MiB)"
        timeout 120 "$bin/vk-copy-probe" || fails=$((fails + 1))
    fi
    if want hostperf; then
        echo "== vkshmem-perf at 2 PEs (host heap)"
        timeout 300 "$bin/oshrun" -np 2 -x LD_LIBRARY_PATH "$bin/vkshmem-perf" --iters-scale 0.5 || fails=$((fails + 1))
        echo "== vkshmem-perf at 2 PEs (device heap)"
        timeout 300 "$bin/oshrun" -np 2 -x LD_LIBRARY_PATH "$bin/vkshmem-perf" --iters-scale 0.2 --device-heap ||
            fails=$((fails + 1))
    fi
    if want collperf; then
        echo "== vkshmem-perf's collectives at 4 PEs (host heap)"
        timeout 300 "$bin/oshrun" -np 4 -x LD_LIBRARY_PATH "$bin/vkshmem-perf" --iters-scale 0.5 --test barrier \
            --test bcast --test reduce --test fcollect --test alltoall || fails=$((fails + 1))
    fi
    if want devcoll; then
        # In-kernel collectives need every PE's kernel running at once: at 1 PE here (PEs that
        # share a GPU are time-sliced), the queue-ordered ones at every count.
        echo "== vkshmem-coll-perf at 1 PE"
        VKSHMEM_DEVICE_HEAP_SIZE=1G timeout 300 "$bin/oshrun" -np 1 -x LD_LIBRARY_PATH "$bin/vkshmem-coll-perf" \
            --mib 16 --probe || fails=$((fails + 1))
        for np in 2 4; do
            echo "== vkshmem-coll-perf at $np PEs on $gpus GPU(s), PEs by rank in turn (queue-ordered operations only)"
            VKSHMEM_DEVICE_HEAP_SIZE=1G timeout 300 "$bin/oshrun" -np $np -x LD_LIBRARY_PATH \
                "$bin/vkshmem-coll-perf" --mib 16 --no-kernel || fails=$((fails + 1))
        done
    fi
    if want cg; then
        for np in ${GPU_CHECK_PES:-1 2 3 4}; do
            echo "== examples/cg, 4096 x 4096, at $np PE(s)"
            VKSHMEM_DEVICE_HEAP_SIZE=2G timeout 300 "$bin/oshrun" -np $np -x LD_LIBRARY_PATH "$bin/cg" --nx 4096 \
                --ny 4096 --iters 200 --png-solution "$out/cg_solution.png" --png-residual "$out/cg_residual.png" --profile ||
                fails=$((fails + 1))
        done
    fi
    if want multigpu; then
        # PEs take the GPUs in turn by node-local rank: at 2 PEs each has a GPU of its own, and the
        # other PE's device heap is reached through its owner (active messages, the proxy).
        if [ "$gpus" -lt 2 ]; then
            echo "== multigpu: $gpus GPU(s), skipped"
        else
            echo "== vkshmem-coll-perf at 2 PEs on $gpus GPUs, one per GPU (in-kernel collectives across GPUs)"
            VKSHMEM_DEVICE_HEAP_SIZE=1G timeout 300 "$bin/oshrun" -np 2 -x LD_LIBRARY_PATH "$bin/vkshmem-coll-perf" \
                --mib 16 --rounds 20 || fails=$((fails + 1))
            echo "== vkshmem-gpu-perf at 2 PEs, one per GPU (shader puts and atomics into the other GPU's heaps)"
            VKSHMEM_DEVICE_HEAP_SIZE=1G timeout 300 "$bin/oshrun" -np 2 -x LD_LIBRARY_PATH "$bin/vkshmem-gpu-perf" \
                --mib 64 || fails=$((fails + 1))
            echo "== vkshmem-perf at 2 PEs, one per GPU (host puts and atomics into the other GPU's device heap)"
            timeout 300 "$bin/oshrun" -np 2 -x LD_LIBRARY_PATH "$bin/vkshmem-perf" --iters-scale 0.2 --device-heap ||
                fails=$((fails + 1))
        fi
    fi
    if want compile; then
        # (NVIDIA's disk cache off, so that every one is a first compile)
        for np in 1 2; do
            echo "== first compiles of the HLSL test kernels at $np PE(s) (vkshmem-gpu-perf --compile)"
            __GL_SHADER_DISK_CACHE=0 timeout 600 "$bin/oshrun" -np $np -x LD_LIBRARY_PATH -x __GL_SHADER_DISK_CACHE \
                "$bin/vkshmem-gpu-perf" --compile "$root"/.gpu/spv/hlsl_ops_amo_*.spv \
                "$root"/.gpu/spv/hlsl_ops_{sig,wait}_0.spv || fails=$((fails + 1))
        done
    fi
    echo "== $fails failures"
    exit $((fails > 0))
    ;;
*)
    echo "usage: scripts/gpu-check.sh pack | run [tests] [am] [heat2d] [perf] [hostperf] [collperf] [devcoll] [cg]" \
        "[compile] [multigpu]" >&2
    exit 2
    ;;
esac
