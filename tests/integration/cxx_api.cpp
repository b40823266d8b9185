// SPDX-License-Identifier: BSL-1.0
// The C++ API (vkshmem/vkshmem.hpp) as a program uses it, without the test harness: a session,
// symmetric arrays in both heaps, teams with their collectives and reductions, and contexts with
// their RMA and atomics, each result checked. Prints "cxx_api: N PEs OK" from PE 0.
#include <vkshmem/vkshmem.hpp>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {
int g_me;

void require(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "cxx_api: PE %d: %s\n", g_me, what);
    std::exit(1); // ends the job: a PE left without shmem_finalize
}
} // namespace

int main() {
    vkshmem::session s(SHMEM_THREAD_MULTIPLE);
    require(s.provided() == SHMEM_THREAD_MULTIPLE, "thread level");
    const int me = g_me = vkshmem::my_pe(), n = vkshmem::n_pes();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    const long salt = static_cast<long>(std::time(nullptr) % 100000);

    for (vkshmem::heap h : {vkshmem::heap::host, vkshmem::heap::device}) {
        vkshmem::symmetric_array<long> a(1000, h);
        require(a.size() == 1000 && a.data() != nullptr, "symmetric_array");
        std::vector<long> mine(1000);
        for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = salt * 7919 + me * 1000 + static_cast<long>(i);
        a.put(mine.data(), mine.size(), right);
        a.p(999, -me, right);
        vkshmem::barrier_all();
        std::vector<long> got(1000);
        a.get(got.data(), got.size(), me); // this PE's copy, also where the CPU cannot map it
        for (std::size_t i = 0; i < 999; ++i) require(got[i] == salt * 7919 + left * 1000 + static_cast<long>(i), "put");
        require(a.g(999, me) == -left, "p/g");
        vkshmem::barrier_all();
        vkshmem::symmetric_array<long> moved = std::move(a); // ownership moves; one free at the end
        require(a.data() == nullptr && moved.size() == 1000, "move");
    }

    {
        vkshmem::team world = vkshmem::team::world();
        vkshmem::symmetric_array<long> src(4), dst(4 * static_cast<std::size_t>(n));
        for (int i = 0; i < 4; ++i) src[static_cast<std::size_t>(i)] = me * 10 + i;
        world.sync();
        world.fcollect(dst.data(), src.data(), 4);
        for (int p = 0; p < n; ++p)
            for (int i = 0; i < 4; ++i) require(dst[static_cast<std::size_t>(p * 4 + i)] == p * 10 + i, "fcollect");
        world.sync();
        world.sum_reduce(dst.data(), src.data(), 4);
        for (int i = 0; i < 4; ++i) require(dst[static_cast<std::size_t>(i)] == 10L * n * (n - 1) / 2 + static_cast<long>(i) * n, "sum_reduce");
        world.sync();
        world.max_reduce(dst.data(), src.data(), 4);
        require(dst[0] == (n - 1) * 10, "max_reduce");

        // The even PEs as a team; its contexts number PEs within it.
        vkshmem::team evens = vkshmem::team::split_strided(world, 0, 2, (n + 1) / 2);
        require(evens.valid() == (me % 2 == 0), "split membership");
        if (evens.valid()) {
            require(evens.my_pe() == me / 2 && evens.n_pes() == (n + 1) / 2, "team numbering");
            require(evens.translate(evens.my_pe(), world) == me, "translate");
            vkshmem::context ctx(evens, SHMEM_CTX_PRIVATE);
            const int next = (evens.my_pe() + 1) % evens.n_pes();
            ctx.atomic_add(&src[0], 1000L, next);
            long old = ctx.atomic_fetch_add(&src[1], 1L, next);
            require(old >= 1, "atomic_fetch_add");
            ctx.put(&src[3], &src[2], 1, next);
            ctx.quiet();
            evens.sync();
            const int prev_world = ((evens.my_pe() + evens.n_pes() - 1) % evens.n_pes()) * 2;
            require(src[0] == me * 10 + 1000, "context atomic_add");
            require(src[1] == me * 10 + 2, "context atomic_fetch_add");
            require(src[3] == prev_world * 10 + 2, "context put");
            require(ctx.g(&src[3], evens.my_pe()) == prev_world * 10 + 2, "context g");
            evens.broadcast(dst.data(), src.data(), 4, 0);
            require(dst[0] == 1000, "team broadcast");
        }
        vkshmem::barrier_all();
    }
    if (me == 0) std::printf("cxx_api: %d PEs OK\n", n);
    return 0;
}
