// SPDX-License-Identifier: BSL-1.0
#include "core/state.hpp"
#include "memory/shared_segment.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <unistd.h>
#include <vector>

using namespace vkshmem;

static int static_probe[1000];

TEST_CASE("space_of finds the space of an address and nothing outside") {
    std::vector<char> host(4096), dev(8192);
    g_state.space[kHostHeap] = {reinterpret_cast<std::uintptr_t>(host.data()), host.size(), nullptr, nullptr};
    g_state.space[kDeviceHeap] = {reinterpret_cast<std::uintptr_t>(dev.data()), dev.size(), nullptr, nullptr};
    g_state.space[kStaticData] = {};
    CHECK(space_of(host.data()) == kHostHeap);
    CHECK(space_of(host.data() + 4095) == kHostHeap);
    CHECK(space_of(host.data() + 4096) != kHostHeap);
    CHECK(space_of(dev.data() + 100) == kDeviceHeap);
    CHECK(space_of(dev.data() - 1) != kDeviceHeap);
    int local = 0;
    CHECK(space_of(&local) == -1);
    CHECK(space_of(nullptr) == -1);
    g_state.space[kHostHeap] = {};
    g_state.space[kDeviceHeap] = {};
}

TEST_CASE("the executable's data range holds its globals and not its stack") {
    ExeDataRange r = find_exe_data_range();
    REQUIRE(r.size > 0);
    REQUIRE(reinterpret_cast<std::uintptr_t>(r.lo) % page_size() == 0);
    REQUIRE(r.size % page_size() == 0);
    auto in = [&](const void* p) { return p >= r.lo && p < r.lo + r.size; };
    CHECK(in(&static_probe[0]));
    CHECK(in(&static_probe[999]));
    int local = 0;
    CHECK_FALSE(in(&local));
}

TEST_CASE("remapping the data segment keeps its contents and shares it") {
    static_probe[3] = 12345;
    ExeDataRange r = find_exe_data_range();
    auto seg = SharedSegment::remap_in_place(r, "unit-static");
    REQUIRE(seg.ok());
    CHECK(static_probe[3] == 12345);
    // A second mapping of the same memfd sees the globals' bytes: that is
    // what a peer PE maps.
    int fd = dup(seg->fd());
    auto peer = SharedSegment::map_peer(fd, r.size);
    REQUIRE(peer.ok());
    auto off = reinterpret_cast<char*>(&static_probe[3]) - r.lo;
    int seen = 0;
    std::memcpy(&seen, peer->base() + off, sizeof seen);
    CHECK(seen == 12345);
    static_probe[3] = 777;
    std::memcpy(&seen, peer->base() + off, sizeof seen);
    CHECK(seen == 777);
}
