// SPDX-License-Identifier: BSL-1.0
#include "bootstrap/bootstrap.hpp"
#include "memory/fd_exchange.hpp"
#include "memory/shared_segment.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <unistd.h>

using namespace vkshmem;

TEST_CASE("a peer with the job secret gets the fds; one without gets nothing") {
    auto secret = random_bytes(16);
    auto seg = SharedSegment::create("unit-heap", 1 << 16);
    REQUIRE(seg.ok());
    std::strcpy(seg->base(), "hello from the server");

    FdServer server;
    REQUIRE(server.listen(secret, 0).ok());
    server.start(
        1,
        [&](int) {
            FdBundle b;
            b.fds[0] = dup(seg->fd());
            return b;
        },
        10);

    auto wrong = secret;
    wrong[0] ^= 1;
    auto refused = fetch_fds(server.name(), wrong, 1, 5);
    CHECK_FALSE(refused.ok());

    auto got = fetch_fds(server.name(), secret, 1, 5);
    REQUIRE(got.ok());
    CHECK(got->fds[0] >= 0);
    CHECK(got->fds[1] == -1);
    auto mapped = SharedSegment::map_peer(got->fds[0], 1 << 16);
    REQUIRE(mapped.ok());
    CHECK(std::strcmp(mapped->base(), "hello from the server") == 0);
    REQUIRE(server.join().ok());
}

TEST_CASE("a server nobody asks times out with a message") {
    FdServer server;
    REQUIRE(server.listen(random_bytes(16), 0).ok());
    server.start(1, [](int) { return FdBundle{}; }, 1);
    auto r = server.join();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("VKSHMEM_INIT_TIMEOUT") != std::string::npos);
}
