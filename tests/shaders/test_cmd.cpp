// SPDX-License-Identifier: BSL-1.0
// Queue-ordered operations (vkshmemx_cmd_*): one command buffer per PE, recorded once and
// submitted three times with fresh data, that dispatches the application's kernel (this round's
// data from a seed the host writes), communicates (barrier, putmem, putmem_signal, getmem,
// signal_wait_until), synchronizes, runs the collectives (fcollect and alltoall on
// SHMEM_TEAM_WORLD, broadcast, an int sum and a team sync on a split team, float max and double
// sum on the world), quiets and dispatches again (reading what arrived). Exact checks against a
// host model, on the host heap and the device heap; run directly and through the proxy.
// On GPUs with private device heaps (VKSHMEM_SHARE_DEVICE_HEAPS=0) shared by several PEs, the
// signal word stays in the host heap: an atomic on another PE's private heap of this GPU waits
// for that PE's kernel or sweeper, which do not run while this PE's kernel waits for an answer
// queued behind the atomic (shaders/README.md, "Limits").
#include "shader_test.hpp"
#include "shader_cmd_kernels.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

namespace {

using namespace shader_test;
using spmd::Space;

constexpr Space kSpaces[] = {Space::Host, Space::Device};

// cmd.glsl's gen_word, for PE `pe`.
std::uint32_t gen_word(std::uint32_t seed, int pe, std::uint32_t salt, std::uint32_t i) {
    std::uint32_t h = seed ^ (static_cast<std::uint32_t>(pe) * 0x9e3779b9u) ^ (i * 0x85ebca6bu) ^ (salt * 0xc2b2ae35u);
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}
std::vector<std::uint32_t> words(std::uint32_t seed, int pe, std::uint32_t salt, std::size_t n) {
    std::vector<std::uint32_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = gen_word(seed, pe, salt, static_cast<std::uint32_t>(i));
    return v;
}
double fraction(std::uint32_t w) { return static_cast<double>(static_cast<int>(w % 2001u) - 1000) / 64.0; }

// A command buffer of the runtime's queue family, its pool and a fence.
class CommandBuffer {
public:
    CommandBuffer() {
        std::uint32_t family = 0;
        REQUIRE(vkshmemx_vk_queue(&family) != VK_NULL_HANDLE);
        VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pci.queueFamilyIndex = family;
        REQUIRE(vkCreateCommandPool(vkshmemx_vk_device(), &pci, nullptr, &pool_) == VK_SUCCESS);
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = pool_;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        REQUIRE(vkAllocateCommandBuffers(vkshmemx_vk_device(), &ai, &cb_) == VK_SUCCESS);
        VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        REQUIRE(vkCreateFence(vkshmemx_vk_device(), &fci, nullptr, &fence_) == VK_SUCCESS);
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        REQUIRE(vkBeginCommandBuffer(cb_, &bi) == VK_SUCCESS);
    }
    ~CommandBuffer() {
        vkDestroyFence(vkshmemx_vk_device(), fence_, nullptr);
        vkDestroyCommandPool(vkshmemx_vk_device(), pool_, nullptr);
    }
    VkCommandBuffer get() const { return cb_; }
    void end() { REQUIRE(vkEndCommandBuffer(cb_) == VK_SUCCESS); }
    // Submits and waits (the recording itself never waited).
    void run() {
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb_;
        REQUIRE(vkshmemx_queue_submit(1, &si, fence_) == VK_SUCCESS);
        REQUIRE(vkWaitForFences(vkshmemx_vk_device(), 1, &fence_, VK_TRUE, UINT64_MAX) == VK_SUCCESS);
        vkResetFences(vkshmemx_vk_device(), 1, &fence_);
    }

private:
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cb_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
};

TEST_CASE("a command buffer that dispatches, communicates, synchronizes and dispatches again", "[cmd]") {
    const int n = spmd::npes(), me = spmd::me();
    const Kernel gen(kernel_spv("cmd_gen_0")), mix(kernel_spv("cmd_mix_0"));
    // The split team: PEs 1 .. n-1 (PE 0 alone at 1 PE).
    const int first = n > 1 ? 1 : 0;
    shmem_team_t split = SHMEM_TEAM_INVALID;
    REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, first, 1, n - first, nullptr, 0, &split) == 0);
    const bool member = me >= first;
    std::vector<int> members;
    for (int pe = first; pe < n; ++pe) members.push_back(pe);
    // (The same answer on every PE, which allocate the signal word alike: both are gathered.)
    const auto& devs = device_of();
    const auto gpus = spmd::gather(on_gpu() ? 1 : 0);
    const bool gpu_shared = std::set<std::uint64_t>(devs.begin(), devs.end()).size() < devs.size();
    const bool private_shared = device_heaps_unshared() && gpu_shared &&
                                std::find(gpus.begin(), gpus.end(), 1u) != gpus.end();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        const std::size_t N = spmd::shared_range(1, 3000), M = spmd::shared_range(1, 700);
        const std::size_t B = std::max<std::size_t>(N / static_cast<std::size_t>(n), 1); // alltoall block (words)
        const int root = static_cast<int>(spmd::shared_range(0, members.size() - 1));
        spmd::SymArray<std::uint32_t> mine(s, N + B * n), recv(s, N), recv2(s, N), got(s, N), all(s, N * n),
            a2a(s, B * n), bc(s, N), ivals(s, M), isum(s, M), out(s, N + M);
        spmd::SymArray<float> fvals(s, M), fmax(s, M);
        spmd::SymArray<double> dvals(s, M), dsum(s, M);
        spmd::SymArray<std::uint64_t> sig(private_shared ? Space::Host : s, 1);
        spmd::SymArray<std::uint32_t> seed(Space::Host, 1);
        Records recs(1);
        // The application's kernels' records: GEN then MIX (one record each, in their own arrays).
        Records gen_rec(1), mix_rec(1);
        gen_rec[0] = Rec{0, 0, 0, 0, dev(mine.get()), dev(ivals.get()), 0, dev(fvals.get()), dev(dvals.get()),
                         dev(seed.get())};
        mix_rec[0] = Rec{0, 0, 0, 0, dev(out.get()), dev(recv.get()), 0, dev(got.get()), dev(isum.get()), 0};
        Push gp, mp;
        gp.state = mp.state = vkshmemx_device_state();
        gp.recs = gen_rec.address();
        gp.count = static_cast<std::uint32_t>(N + B * n);
        gp.mode = static_cast<std::uint32_t>(M);
        mp.recs = mix_rec.address();
        mp.count = static_cast<std::uint32_t>(N);
        mp.mode = member ? static_cast<std::uint32_t>(M) : 0;
        const auto groups = [](std::size_t k) { return static_cast<std::uint32_t>((k + 63) / 64); };

        CommandBuffer cb;
        VkCommandBuffer c = cb.get();
        REQUIRE(vkshmemx_kernel_record(c, gen.handle(), groups(std::max(N + B * n, M)), 1, 1,
                                       &gp, sizeof gp) == 0);
        vkshmemx_cmd_barrier_all(c);
        vkshmemx_cmd_putmem(c, recv.get(), mine.get(), N * 4, spmd::right());
        vkshmemx_cmd_putmem_signal(c, recv2.get(), mine.get(), N * 4, sig.get(), 1, SHMEM_SIGNAL_ADD, spmd::right());
        vkshmemx_cmd_getmem(c, got.get(), mine.get(), N * 4, spmd::left());
        vkshmemx_cmd_signal_wait_until(c, sig.get(), SHMEM_CMP_GE, 1);
        vkshmemx_cmd_barrier_all(c);
        vkshmemx_cmd_fcollectmem(c, SHMEM_TEAM_WORLD, all.get(), mine.get(), N * 4);
        vkshmemx_cmd_alltoallmem(c, SHMEM_TEAM_WORLD, a2a.get(), mine.get() + N, B * 4);
        vkshmemx_cmd_float_max_reduce(c, SHMEM_TEAM_WORLD, fmax.get(), fvals.get(), M);
        vkshmemx_cmd_double_sum_reduce(c, SHMEM_TEAM_WORLD, dsum.get(), dvals.get(), M);
        if (member) {
            vkshmemx_cmd_broadcastmem(c, split, bc.get(), mine.get(), N * 4, root);
            vkshmemx_cmd_int_sum_reduce(c, split, reinterpret_cast<int*>(isum.get()),
                                        reinterpret_cast<const int*>(ivals.get()), M);
            vkshmemx_cmd_team_sync(c, split);
        }
        vkshmemx_cmd_quiet(c);
        REQUIRE(vkshmemx_kernel_record(c, mix.handle(), groups(std::max(N, M)), 1, 1, &mp,
                                       sizeof mp) == 0);
        cb.end();

        for (int round = 0; round < 3; ++round) {
            INFO("round " << round << " of the same command buffer, " << N << " words, " << M << " values at " << n
                          << " PEs");
            const auto key = static_cast<std::uint32_t>(spmd::shared_key());
            seed.store(0, key);
            sig.store(0, 0);
            out.poison();
            recv.poison();
            shmem_barrier_all();
            const auto t0 = std::chrono::steady_clock::now();
            cb.run();
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            shmem_barrier_all();
            const auto from_left = words(key, spmd::left(), 0, N);
            SPMD_REQUIRE_OK(spmd::diff_sym(recv.get(), from_left.data(), N * 4));
            SPMD_REQUIRE_OK(spmd::diff_sym(recv2.get(), from_left.data(), N * 4));
            SPMD_REQUIRE_OK(spmd::diff_sym(got.get(), from_left.data(), N * 4));
            CHECK(sig.load(0) == 1);
            std::vector<std::uint32_t> expect_out(N);
            for (std::size_t i = 0; i < N; ++i) expect_out[i] = from_left[i] + 3u * from_left[i];
            SPMD_REQUIRE_OK(spmd::diff_sym(out.get(), expect_out.data(), N * 4));
            std::vector<std::uint32_t> expect_all, expect_a2a;
            for (int pe = 0; pe < n; ++pe) {
                const auto w = words(key, pe, 0, N + B * n);
                expect_all.insert(expect_all.end(), w.begin(), w.begin() + static_cast<std::ptrdiff_t>(N));
                const auto* blk = w.data() + N + B * static_cast<std::size_t>(me);
                expect_a2a.insert(expect_a2a.end(), blk, blk + B);
            }
            SPMD_REQUIRE_OK(spmd::diff_sym(all.get(), expect_all.data(), expect_all.size() * 4));
            SPMD_REQUIRE_OK(spmd::diff_sym(a2a.get(), expect_a2a.data(), expect_a2a.size() * 4));
            std::vector<float> expect_fmax(M, -1e30f);
            std::vector<double> expect_dsum(M, 0.0);
            for (int pe = 0; pe < n; ++pe) {
                const auto f = words(key, pe, 2, M), d = words(key, pe, 3, M);
                for (std::size_t i = 0; i < M; ++i) {
                    expect_fmax[i] = std::max(expect_fmax[i], static_cast<float>(fraction(f[i])));
                    expect_dsum[i] += fraction(d[i]);
                }
            }
            SPMD_REQUIRE_OK(spmd::diff_sym(fmax.get(), expect_fmax.data(), M * 4));
            SPMD_REQUIRE_OK(spmd::diff_sym(dsum.get(), expect_dsum.data(), M * 8));
            if (member) {
                const auto w = words(key, members[static_cast<std::size_t>(root)], 0, N);
                SPMD_REQUIRE_OK(spmd::diff_sym(bc.get(), w.data(), N * 4));
                std::vector<std::uint32_t> expect_isum(M, 0), twice(M);
                for (int pe : members) {
                    const auto v = words(key, pe, 1, M);
                    for (std::size_t i = 0; i < M; ++i) expect_isum[i] += v[i];
                }
                SPMD_REQUIRE_OK(spmd::diff_sym(isum.get(), expect_isum.data(), M * 4));
                for (std::size_t i = 0; i < M; ++i) twice[i] = 2u * expect_isum[i];
                SPMD_REQUIRE_OK(spmd::diff_sym(out.get() + N, twice.data(), M * 4));
            }
            report("%s: one replay of the recorded buffer (2 dispatches, 16 recorded operations) at %d PEs: %.2f ms",
                   spmd::name(s), n, ms);
        }
    }
    shmem_team_destroy(split);
}

} // namespace
