// SPDX-License-Identifier: BSL-1.0
// A C++ program built against an installed vkshmem: the C++ API (vkshmem.hpp: session,
// symmetric arrays) and the generic overloads of shmem.h. Every PE contributes fresh random
// values to a sum reduction and a collect; both are checked exactly. Prints "hello_cxx: PE n ok".
#include <shmem.h>
#include <vkshmem/vkshmem.hpp>

#include <cstdint>
#include <cstdio>
#include <random>

int main() {
    vkshmem::session s;
    const int me = shmem_my_pe(), n = shmem_n_pes();
    constexpr std::size_t kN = 64;
    vkshmem::symmetric_array<long> mine(kN), sum(kN), all(kN * static_cast<std::size_t>(n));
    // One seed for the job (PE 0's, broadcast), so every PE can compute what every PE contributes.
    vkshmem::symmetric_array<long> drawn(1), seed(1);
    drawn.data()[0] = static_cast<long>(std::random_device{}() & 0x7fffffff);
    shmem_broadcast(SHMEM_TEAM_WORLD, seed.data(), drawn.data(), 1, 0);
    auto value = [&](int pe, std::size_t i) { return (seed.data()[0] + 7919 * pe) * 31 + static_cast<long>(i); };
    for (std::size_t i = 0; i < kN; ++i) mine.data()[i] = value(me, i), sum.data()[i] = -1;
    shmem_sum_reduce(SHMEM_TEAM_WORLD, sum.data(), mine.data(), kN);
    shmem_fcollect(SHMEM_TEAM_WORLD, all.data(), mine.data(), kN);
    int bad = 0;
    for (std::size_t i = 0; i < kN; ++i) {
        long want = 0;
        for (int p = 0; p < n; ++p) {
            want += value(p, i);
            bad += all.data()[static_cast<std::size_t>(p) * kN + i] != value(p, i);
        }
        bad += sum.data()[i] != want;
    }
    if (bad) {
        std::fprintf(stderr, "hello_cxx: PE %d: %d wrong\n", me, bad);
        shmem_global_exit(1);
    }
    std::printf("hello_cxx: PE %d ok\n", me);
    return 0;
}
