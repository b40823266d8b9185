// SPDX-License-Identifier: BSL-1.0
// Passing heap file descriptors between node-local PEs.
//
// Each PE listens on an abstract-namespace Unix socket (nothing on disk, gone
// when the process dies). A peer that connects must run under the same uid
// (checked with SO_PEERCRED) and present the per-job secret that the launcher
// distributed; only then does it get the fds.
#pragma once

#include "core/result.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace vkshmem {

constexpr int kMaxPassedFds = 4;

struct FdBundle {
    std::array<int, kMaxPassedFds> fds{-1, -1, -1, -1};
    void close_all();
};

class FdServer {
public:
    // Makes one fresh bundle per request (the requesting PE's rank given).
    using Provider = std::function<FdBundle(int requester)>;

    FdServer() = default;
    FdServer(const FdServer&) = delete;
    FdServer& operator=(const FdServer&) = delete;
    ~FdServer();

    // Binds a fresh abstract socket; name() is what peers connect to.
    Result<void> listen(const std::vector<std::uint8_t>& secret, int my_rank);
    const std::string& name() const { return name_; }
    // Serves `expected` authenticated requests on a thread, then stops.
    void start(int expected, Provider provider, int timeout_s);
    // Waits for the serving thread; returns its error if any.
    Result<void> join();

private:
    int sock_ = -1;
    std::string name_;
    std::vector<std::uint8_t> secret_;
    std::thread thread_;
    std::string error_;
};

// Connects to a peer's server and returns the fds it sends.
Result<FdBundle> fetch_fds(const std::string& server_name, const std::vector<std::uint8_t>& secret, int my_rank,
                           int timeout_s);

} // namespace vkshmem
