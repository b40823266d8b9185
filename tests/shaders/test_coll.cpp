// SPDX-License-Identifier: BSL-1.0
// Device-side teams and collectives (shaders/vkshmem_coll.glsl), one workgroup per PE, all PEs'
// kernels at once: barrier/sync rounds on SHMEM_TEAM_WORLD and a split team (thread and _wg
// forms, team queries), back-to-back broadcastmem/collectmem/fcollectmem/alltoallmem with
// changing teams, roots, sizes and alignments (thread and _wg forms), typed data collectives of
// every element size, and every reduction operation on every element kind of the reduction core
// (int, uint, long, ulong, float, double; thread and _wg forms, in place too, more elements than
// one pass of the team's scratch area holds). Every typed routine is compile-checked
// (gen_all_calls.py); at run time one type per element size or kind keeps the kernels small. Exact checks with fresh random data and poisoned
// destinations, on the host heap and the device heap; run directly and through the proxy.
#include "shader_test.hpp"
#include "shader_coll_kernels.hpp"
#include "coll_test.hpp"

#include <string>
#include <vector>

namespace {

using namespace coll_test;

TEST_CASE("device barrier and sync rounds on SHMEM_TEAM_WORLD and a split team", "[sync]") {
    if (skip_here()) return;
    const auto kp = warm("coll_sync_0");
    const Teams teams;
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        if (s == Space::Host && on_gpu() && (force_proxy() || on_several_gpus())) {
            // The proxy's host writes, and another GPU's, reach a host heap behind this GPU's
            // cache: a running shader need not see them (shaders/README.md), and these rounds read
            // them in the kernel.
            report("skipped the host heap: written by the proxy or another GPU while this GPU's shader runs");
            continue;
        }
        for (std::uint32_t mode = 0; mode < 6; ++mode) run_sync_rounds(*kp, s, teams, mode, 5);
    }
}

TEST_CASE("broadcastmem, collectmem, fcollectmem, alltoallmem back to back", "[mem]") {
    if (skip_here()) return;
    const Teams teams;
    for (bool wg : {false, true}) {
        const auto kp = warm(wg ? "coll_mem_1" : "coll_mem_0");
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s) << (wg ? ", _wg forms" : ", thread forms"));
            std::vector<XferSpec> specs;
            for (int rep = 0; rep < 3; ++rep)
                for (Op op : {kBroadcast, kCollect, kFcollect, kAlltoall})
                    specs.push_back(random_spec(op, 1, rep == 2 ? 9000 : 700, teams, wg));
            std::shuffle(specs.begin(), specs.end(), spmd::shared_rng());
            run_xfers(*kp, s, teams, specs);
        }
    }
}

TEST_CASE("typed broadcast, collect, fcollect, alltoall", "[typed]") {
    if (skip_here()) return;
    const Teams teams;
    // coll.glsl's TYPED kernels: the element size of each operation's type, and its form.
    static const std::size_t kElem[2][4] = {{sizeof(short), sizeof(int), sizeof(long), sizeof(float)},
                                            {sizeof(char), sizeof(double), sizeof(std::uint64_t), sizeof(std::int16_t)}};
    static const bool kWg[2][4] = {{false, true, false, true}, {true, false, true, false}};
    for (int c = 0; c < 2; ++c)
        for (Op op : {kBroadcast, kCollect, kFcollect, kAlltoall}) {
            const auto kp = warm("coll_typed_" + std::to_string(4 * c + op)); // one operation each
            for (Space s : kSpaces) {
                INFO("space: " << spmd::name(s) << ", kernel " << 4 * c + op);
                std::vector<XferSpec> specs;
                for (int rep = 0; rep < 3; ++rep)
                    specs.push_back(random_spec(op, kElem[c][op], 300, teams, kWg[c][op]));
                run_xfers(*kp, s, teams, specs);
            }
        }
}

// ---- Reductions ------------------------------------------------------------------------------------
// The tables of coll.glsl (RED_BIT, RED_ALL): one type per element kind of the reduction core.
constexpr TypeInfo kRedBit[] = {
    {"uint", 4, false, false}, {"ulong", 8, false, false}, {"int32", 4, true, false}, {"int64", 8, true, false}};
constexpr TypeInfo kRedAll[] = {
    {"int", 4, true, false},   {"uint", 4, false, false}, {"long", 8, true, false},
    {"ulong", 8, false, false}, {"float", 4, true, true},  {"double", 8, true, true},
};

TEST_CASE("every reduction of every type", "[reduce]") {
    if (skip_here()) return;
    const Teams teams;
    for (int op = 0; op < 7; ++op) {
        const bool bitwise = op <= kXor;
        const TypeInfo* types = bitwise ? kRedBit : kRedAll;
        const std::size_t ntypes = bitwise ? std::size(kRedBit) : std::size(kRedAll);
        // coll.glsl: a kernel per operation and kind
        std::vector<std::unique_ptr<Kernel>> kinds;
        for (std::size_t t = 0; t < ntypes; ++t)
            kinds.push_back(warm("coll_red_" + std::to_string(bitwise ? 4 * op + static_cast<int>(t)
                                                                      : 12 + 6 * (op - 3) + static_cast<int>(t))));
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s) << ", " << kRedName[op] << "_reduce");
            std::vector<RedSpec> ones;
            for (int rep = 0; rep < 2; ++rep)
                for (std::size_t t = 0; t < ntypes; ++t) {
                    // Now and then more elements than one pass of the scratch area takes (16 KiB
                    // over the members). The form is the kernel's (coll.glsl).
                    const std::size_t most = spmd::shared_range(0, 4) == 0 ? reduce_most_multipass() : 200;
                    ones.push_back({t, spmd::shared_range(1, most), static_cast<int>(spmd::shared_range(0, 1)),
                                    ((op + static_cast<int>(t)) & 1) == 1, spmd::shared_range(0, 3) == 0});
                }
            for (std::size_t t = 0; t < ntypes; ++t) {
                std::vector<RedSpec> mine;
                for (const RedSpec& o : ones)
                    if (o.type == t) mine.push_back(o);
                run_reductions(*kinds[t], s, teams, static_cast<RedOp>(op), types, mine);
            }
        }
    }
}

} // namespace
