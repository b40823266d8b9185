// SPDX-License-Identifier: BSL-1.0
// Teams and collectives of the HLSL device library (shaders/vkshmem_coll.hlsl), at the reduced
// breadth of the HLSL tests (HLSL kernels compile slowly on lavapipe), with the records, checks and
// host model of the GLSL test (coll_test.hpp): one workgroup per PE, all PEs' kernels at once.
// Barrier and sync rounds on SHMEM_TEAM_WORLD and a split team, thread and _wg forms, and the team
// queries; back-to-back broadcastmem/collectmem/fcollectmem/alltoallmem with changing teams, roots,
// sizes and alignments (thread and _wg forms); typed ones of four element sizes; reductions: sum
// and max of int, uint and float, sum, max and prod of the 64-bit types (uint64_t bit patterns
// here), xor of uint and int32, in both forms, in place too, more elements than one pass of the
// team's scratch area holds. Exact checks with fresh random data and poisoned destinations, on the
// host heap and the device heap. Every typed routine is compile-checked (gen_hlsl_all_calls.py).
#include "shader_test.hpp"
#include "shader_hlsl_coll_kernels.hpp"
#include "coll_test.hpp"

#include <string>
#include <vector>

namespace {

using namespace coll_test;

// hlsl_coll.hlsl's kernels leave out the AMO mailbox serving (VKSHMEM_HLSL_NO_MAILBOX), which
// collectives need wherever a proxy's atomic on a GPU's device heap is a request in its AMO
// mailbox (shaders/README.md): among PEs on different GPUs, and with every operation through the
// proxy (VKSHMEM_FORCE_PROXY=1) on a GPU. There every case runs the kernel's *_MB twin, which
// serves it. The kernel of `variant` ("sync", "mem", "typed" or "red") and chunk; every PE calls
// this first in each case, as on_several_gpus() is collective the first time.
std::string kernel(const char* variant, std::size_t chunk) {
    const bool serve = on_several_gpus() || (on_gpu() && force_proxy());
    return std::string("hlsl_coll_") + variant + (serve ? "_mb_" : "_") + std::to_string(chunk);
}

TEST_CASE("HLSL: barrier and sync rounds on SHMEM_TEAM_WORLD and a split team", "[hlsl][sync]") {
    if (skip_here()) return;
    const Teams teams;
    // hlsl_coll.hlsl: the workgroup forms (even modes) in chunk 0, the thread forms in chunk 1
    for (int chunk = 0; chunk < 2; ++chunk) {
        const auto kp = warm(kernel("sync", static_cast<std::size_t>(chunk)));
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s));
            if (s == Space::Host && on_gpu() && (force_proxy() || on_several_gpus())) {
                // As in test_coll.cpp: the proxy's host writes, and another GPU's, reach a host
                // heap behind this GPU's cache, and these rounds read them in the running kernel.
                report("skipped the host heap: written by the proxy or another GPU while this GPU's shader runs");
                continue;
            }
            for (std::uint32_t mode = static_cast<std::uint32_t>(chunk); mode < 6; mode += 2)
                run_sync_rounds(*kp, s, teams, mode, 3);
        }
    }
}

TEST_CASE("HLSL: broadcastmem, collectmem, fcollectmem, alltoallmem back to back", "[hlsl][mem]") {
    if (skip_here()) return;
    const Teams teams;
    // hlsl_coll.hlsl's MEM kernels: one collective in one form each
    for (Op op : {kBroadcast, kCollect, kFcollect, kAlltoall})
        for (bool wg : {false, true}) {
            const auto kp = warm(kernel("mem", 2 * op + (wg ? 1u : 0u)));
            for (Space s : kSpaces) {
                INFO("space: " << spmd::name(s) << ", shmem_" << kOpName[op] << "mem" << (wg ? "_wg" : ""));
                std::vector<XferSpec> specs;
                for (std::size_t most : {700, 9000}) specs.push_back(random_spec(op, 1, most, teams, wg));
                run_xfers(*kp, s, teams, specs);
            }
        }
}

TEST_CASE("HLSL: typed broadcast, collect, fcollect, alltoall", "[hlsl][typed]") {
    if (skip_here()) return;
    const Teams teams;
    // hlsl_coll.hlsl's TYPED kernels: short_broadcast, int_collect_wg, long_fcollect, float_alltoall_wg
    static const std::size_t kElem[4] = {sizeof(short), sizeof(int), sizeof(long), sizeof(float)};
    static const bool kWg[4] = {false, true, false, true};
    for (Op op : {kBroadcast, kCollect, kFcollect, kAlltoall}) {
        const auto kp = warm(kernel("typed", op));
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s) << ", kernel " << op);
            std::vector<XferSpec> specs;
            for (int rep = 0; rep < 2; ++rep) specs.push_back(random_spec(op, kElem[op], 300, teams, kWg[op]));
            run_xfers(*kp, s, teams, specs);
        }
    }
}

// hlsl_coll.hlsl's RED kernels: one reduction each, a type in one form (each form on every
// operation and on every type but long and int32).
struct RedKernel {
    RedOp op;
    TypeInfo type;
    bool wg;
};
const RedKernel kRedKernels[] = {
    {kSum, {"int", 4, true, false}, false},   {kSum, {"uint", 4, false, false}, true},
    {kSum, {"float", 4, true, true}, false},  {kSum, {"ulong", 8, false, false}, true},
    {kMax, {"int", 4, true, false}, true},    {kMax, {"uint", 4, false, false}, false},
    {kMax, {"float", 4, true, true}, true},   {kMax, {"long", 8, true, false}, false},
    {kXor, {"uint", 4, false, false}, true},  {kXor, {"int32", 4, true, false}, false},
    {kProd, {"long", 8, true, false}, false}, {kProd, {"ulong", 8, false, false}, true},
};

TEST_CASE("HLSL: sum, max, xor and prod reductions of 4- and 8-byte types", "[hlsl][reduce]") {
    if (skip_here()) return;
    const Teams teams;
    for (std::size_t c = 0; c < std::size(kRedKernels); ++c) {
        const RedKernel& rk = kRedKernels[c];
        const auto kp = warm(kernel("red", c));
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s) << ", " << kRedName[rk.op] << "_reduce");
            std::vector<RedSpec> ones;
            for (int rep = 0; rep < 2; ++rep) {
                // Now and then more elements than one pass of the scratch area takes (16 KiB over
                // the members).
                const std::size_t most = spmd::shared_range(0, 2) == 0 ? reduce_most_multipass() : 200;
                ones.push_back({0, spmd::shared_range(1, most), static_cast<int>(spmd::shared_range(0, 1)), rk.wg,
                                spmd::shared_range(0, 3) == 0});
            }
            run_reductions(*kp, s, teams, rk.op, &rk.type, ones);
        }
    }
}

} // namespace
