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

TEST_CASE("HLSL: barrier and sync rounds on SHMEM_TEAM_WORLD and a split team", "[hlsl][sync]") {
    if (skip_here()) return;
    const Teams teams;
    // hlsl_coll.hlsl: the workgroup forms (even modes) in chunk 0, the thread forms in chunk 1
    for (int chunk = 0; chunk < 2; ++chunk) {
        const auto kp = warm("hlsl_coll_sync_" + std::to_string(chunk));
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s));
            for (std::uint32_t mode = static_cast<std::uint32_t>(chunk); mode < 6; mode += 2)
                run_sync_rounds(*kp, s, teams, mode, 3);
        }
    }
}

TEST_CASE("HLSL: broadcastmem, collectmem, fcollectmem, alltoallmem back to back", "[hlsl][mem]") {
    if (skip_here()) return;
    const Teams teams;
    for (bool wg : {false, true}) {
        const auto kp = warm(wg ? "hlsl_coll_mem_1" : "hlsl_coll_mem_0");
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s) << (wg ? ", _wg forms" : ", thread forms"));
            std::vector<XferSpec> specs;
            for (int rep = 0; rep < 2; ++rep)
                for (Op op : {kBroadcast, kCollect, kFcollect, kAlltoall})
                    specs.push_back(random_spec(op, 1, rep == 1 ? 9000 : 700, teams, wg));
            std::shuffle(specs.begin(), specs.end(), spmd::shared_rng());
            run_xfers(*kp, s, teams, specs);
        }
    }
}

TEST_CASE("HLSL: typed broadcast, collect, fcollect, alltoall", "[hlsl][typed]") {
    if (skip_here()) return;
    const Teams teams;
    // hlsl_coll.hlsl's TYPED kernel: short_broadcast, int_collect_wg, long_fcollect, float_alltoall_wg
    static const std::size_t kElem[4] = {sizeof(short), sizeof(int), sizeof(long), sizeof(float)};
    static const bool kWg[4] = {false, true, false, true};
    const auto kp = warm("hlsl_coll_typed_0");
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        std::vector<XferSpec> specs;
        for (Op op : {kBroadcast, kCollect, kFcollect, kAlltoall})
            specs.push_back(random_spec(op, kElem[op], 300, teams, kWg[op]));
        std::shuffle(specs.begin(), specs.end(), spmd::shared_rng());
        run_xfers(*kp, s, teams, specs);
    }
}

// hlsl_coll.hlsl's RED kernels: each chunk's operation, and its table of types and forms.
struct RedKernel {
    RedOp op;
    std::vector<TypeInfo> types;
    std::vector<bool> wg;
};
const RedKernel kRedKernels[] = {
    {kSum,
     {{"int", 4, true, false}, {"uint", 4, false, false}, {"float", 4, true, true}, {"ulong", 8, false, false}},
     {false, true, false, true}},
    {kMax,
     {{"int", 4, true, false}, {"uint", 4, false, false}, {"float", 4, true, true}, {"long", 8, true, false}},
     {true, false, true, false}},
    {kXor, {{"uint", 4, false, false}, {"int32", 4, true, false}}, {true, false}},
    {kProd, {{"long", 8, true, false}, {"ulong", 8, false, false}}, {false, true}},
};

TEST_CASE("HLSL: sum, max, xor and prod reductions", "[hlsl][reduce]") {
    if (skip_here()) return;
    const Teams teams;
    for (std::size_t c = 0; c < std::size(kRedKernels); ++c) {
        const RedKernel& rk = kRedKernels[c];
        const auto kp = warm("hlsl_coll_red_" + std::to_string(c));
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s) << ", " << kRedName[rk.op] << "_reduce");
            std::vector<RedSpec> ones;
            for (std::size_t t = 0; t < rk.types.size(); ++t) {
                // Now and then more elements than one pass of the scratch area takes (16 KiB over
                // the members).
                const std::size_t most = spmd::shared_range(0, 2) == 0 ? 3000 : 200;
                ones.push_back({t, spmd::shared_range(1, most), static_cast<int>(spmd::shared_range(0, 1)), rk.wg[t],
                                spmd::shared_range(0, 3) == 0});
            }
            run_reductions(*kp, s, teams, rk.op, rk.types.data(), ones);
        }
    }
}

} // namespace
