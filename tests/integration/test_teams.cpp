// SPDX-License-Identifier: BSL-1.0
// Teams (OpenSHMEM 1.6 §9.4): the predefined teams, split_strided, split_2d, translate_pe,
// get_config, team_ptr, team_sync and destroy, with random splits whose membership, numbering
// and synchronization are checked against what the arguments say.
#include "spmd.hpp"

#include <algorithm>
#include <set>

using spmd::Gen;

namespace {

// World PEs of a strided split of the world.
std::vector<int> strided(int start, int stride, int size) {
    std::vector<int> v;
    for (int k = 0; k < size; ++k) v.push_back(start + k * stride);
    return v;
}

// Checks a team that should hold exactly the world PEs `pes`, in that order, then syncs on it
// and checks the sync: every member writes its stamp into the next member's slot before the
// sync and reads its own slot after it.
void check_team(shmem_team_t team, const std::vector<int>& pes, long* slots) {
    const auto it = std::find(pes.begin(), pes.end(), spmd::me());
    if (it == pes.end()) {
        REQUIRE(team == SHMEM_TEAM_INVALID);
        REQUIRE(shmem_team_my_pe(team) == -1);
        REQUIRE(shmem_team_n_pes(team) == -1);
        return;
    }
    REQUIRE(team != SHMEM_TEAM_INVALID);
    const int n = static_cast<int>(pes.size()), me = static_cast<int>(it - pes.begin());
    REQUIRE(shmem_team_n_pes(team) == n);
    REQUIRE(shmem_team_my_pe(team) == me);
    for (int i = 0; i < n; ++i) {
        REQUIRE(shmem_team_translate_pe(team, i, SHMEM_TEAM_WORLD) == pes[static_cast<std::size_t>(i)]);
        REQUIRE(shmem_team_translate_pe(SHMEM_TEAM_WORLD, pes[static_cast<std::size_t>(i)], team) == i);
        REQUIRE(shmem_team_ptr(team, slots, i) == shmem_ptr(slots, pes[static_cast<std::size_t>(i)]));
    }
    for (int pe = 0; pe < spmd::npes(); ++pe)
        if (std::find(pes.begin(), pes.end(), pe) == pes.end())
            REQUIRE(shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, team) == -1);
    REQUIRE(shmem_team_translate_pe(team, n, SHMEM_TEAM_WORLD) == -1);
    REQUIRE(shmem_team_translate_pe(team, -1, SHMEM_TEAM_WORLD) == -1);
    for (int round = 1; round <= 3; ++round) {
        const long stamp = spmd::me() * 1000 + round;
        shmem_long_p(slots, stamp, pes[static_cast<std::size_t>((me + 1) % n)]);
        shmem_quiet();
        REQUIRE(shmem_team_sync(team) == 0);
        REQUIRE(shmem_long_atomic_fetch(slots, spmd::me()) == pes[static_cast<std::size_t>((me + n - 1) % n)] * 1000 + round);
        REQUIRE(shmem_team_sync(team) == 0); // nobody writes the next round before all have read
    }
}

TEST_CASE("predefined teams: world, shared, invalid", "[teams]") {
    REQUIRE(shmem_team_my_pe(SHMEM_TEAM_WORLD) == spmd::me());
    REQUIRE(shmem_team_n_pes(SHMEM_TEAM_WORLD) == spmd::npes());
    std::vector<int> local;
    for (int pe = 0; pe < spmd::npes(); ++pe)
        if (spmd::same_node(pe)) local.push_back(pe);
    REQUIRE(shmem_team_n_pes(SHMEM_TEAM_SHARED) == static_cast<int>(local.size()));
    long* slots = static_cast<long*>(shmem_calloc(1, sizeof(long)));
    for (std::size_t i = 0; i < local.size(); ++i) {
        REQUIRE(shmem_team_translate_pe(SHMEM_TEAM_SHARED, static_cast<int>(i), SHMEM_TEAM_WORLD) == local[i]);
        REQUIRE(shmem_team_ptr(SHMEM_TEAM_SHARED, slots, static_cast<int>(i)) != nullptr);
    }
    REQUIRE(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1);
    REQUIRE(shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1);
    REQUIRE(shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD) == -1);
    REQUIRE(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID) == -1);
    shmem_team_config_t cfg{-7};
    REQUIRE(shmem_team_get_config(SHMEM_TEAM_INVALID, SHMEM_TEAM_NUM_CONTEXTS, &cfg) != 0);
    shmem_team_destroy(SHMEM_TEAM_INVALID); // does nothing
    check_team(SHMEM_TEAM_WORLD, strided(0, 1, spmd::npes()), slots);
    shmem_barrier_all();
    shmem_free(slots);
}

TEST_CASE("split_strided: random start, stride and size; nested splits; destroy", "[teams]") {
    const int n = spmd::npes();
    long* slots = static_cast<long*>(shmem_calloc(1, sizeof(long)));
    for (int round = 0; round < 12; ++round) {
        const int start = static_cast<int>(spmd::shared_range(0, static_cast<std::uint64_t>(n - 1)));
        const int room = n - 1 - start;
        const int stride = room ? static_cast<int>(spmd::shared_range(1, static_cast<std::uint64_t>(room))) : 1;
        const int size = static_cast<int>(spmd::shared_range(1, static_cast<std::uint64_t>(room / stride + 1)));
        INFO("start " << start << ", stride " << stride << ", size " << size);
        shmem_team_config_t cfg{static_cast<int>(spmd::shared_range(0, 5))};
        shmem_team_t team;
        REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, &cfg, SHMEM_TEAM_NUM_CONTEXTS, &team) == 0);
        const auto pes = strided(start, stride, size);
        check_team(team, pes, slots);
        if (team != SHMEM_TEAM_INVALID) {
            shmem_team_config_t got{-1};
            REQUIRE(shmem_team_get_config(team, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0);
            REQUIRE(got.num_contexts == cfg.num_contexts);
            // A split of the split: its members from the end backwards (a negative stride).
            shmem_team_t inner;
            const int m = static_cast<int>(pes.size());
            REQUIRE(shmem_team_split_strided(team, m - 1, -1, m, nullptr, 0, &inner) == 0);
            std::vector<int> back(pes.rbegin(), pes.rend());
            check_team(inner, back, slots);
            shmem_team_destroy(inner);
        }
        shmem_team_destroy(team);
        shmem_barrier_all();
    }
    shmem_free(slots);
}

TEST_CASE("split_2d: rows and columns of the grid", "[teams]") {
    const int n = spmd::npes(), me = spmd::me();
    long* slots = static_cast<long*>(shmem_calloc(1, sizeof(long)));
    for (int xrange = 1; xrange <= n + 1; ++xrange) {
        INFO("xrange " << xrange);
        shmem_team_t x, y;
        REQUIRE(shmem_team_split_2d(SHMEM_TEAM_WORLD, xrange, nullptr, 0, &x, nullptr, 0, &y) == 0);
        const int w = std::min(xrange, n);
        const int row = me / w, col = me % w;
        std::vector<int> rowpes, colpes;
        for (int pe = row * w; pe < std::min(n, (row + 1) * w); ++pe) rowpes.push_back(pe);
        for (int pe = col; pe < n; pe += w) colpes.push_back(pe);
        // check_team syncs on the team: rows first on every PE, then columns.
        check_team(x, rowpes, slots);
        shmem_barrier_all();
        check_team(y, colpes, slots);
        shmem_team_destroy(x);
        shmem_team_destroy(y);
    }
    shmem_barrier_all();
    shmem_free(slots);
}

TEST_CASE("team slots: running out fails on every PE alike, and destroying frees them", "[teams]") {
    // Teams of one PE each (this PE's own): every split takes a slot on every PE.
    std::vector<shmem_team_t> made;
    int failed_at = -1;
    for (int i = 0; i < 70; ++i) {
        shmem_team_t t;
        const int r = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, spmd::npes(), nullptr, 0, &t);
        if (r != 0) {
            REQUIRE(t == SHMEM_TEAM_INVALID);
            failed_at = i;
            break;
        }
        made.push_back(t);
    }
    REQUIRE(failed_at == 62); // 64 slots, two taken by SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED
    // Every PE failed at the same split.
    for (auto v : spmd::gather(static_cast<std::uint64_t>(failed_at))) REQUIRE(v == 62u);
    for (auto t : made) shmem_team_destroy(t);
    shmem_team_t again;
    REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, spmd::npes(), nullptr, 0, &again) == 0);
    REQUIRE(shmem_team_n_pes(again) == spmd::npes());
    REQUIRE(shmem_team_sync(again) == 0);
    shmem_team_destroy(again);
}

TEST_CASE("bad split arguments fail on every PE without a team", "[teams]") {
    shmem_team_t t = SHMEM_TEAM_WORLD;
    REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 0, nullptr, 0, &t) != 0);
    REQUIRE(t == SHMEM_TEAM_INVALID);
    REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, spmd::npes() + 1, nullptr, 0, &t) != 0);
    REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, spmd::npes(), 1, 1, nullptr, 0, &t) != 0);
    REQUIRE(shmem_team_split_2d(SHMEM_TEAM_WORLD, 0, nullptr, 0, &t, nullptr, 0, &t) != 0);
    shmem_barrier_all();
}

} // namespace
