// SPDX-License-Identifier: BSL-1.0
// Bootstrap: who am I, who else is there, and a way to exchange small blobs
// before any symmetric memory exists. PMIx under a launcher; a singleton when
// started without one.
#pragma once

#include "core/result.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vkshmem {

class Bootstrap {
public:
    virtual ~Bootstrap() = default;
    int rank() const { return rank_; }
    int size() const { return size_; }
    // Global ranks of the PEs on this node, ascending, including this PE.
    const std::vector<int>& local_peers() const { return local_peers_; }
    int local_rank() const;
    // 16 random bytes shared by every PE of the job and nobody else.
    const std::vector<std::uint8_t>& job_secret() const { return secret_; }
    const char* kind() const { return kind_; }

    // Every PE contributes `len` bytes; `out` receives size()*len bytes in rank order.
    virtual Result<void> allgather(const void* in, std::size_t len, void* out) = 0;
    virtual Result<void> barrier() = 0;
    // Ends every process of the job with `status`. Does not return.
    [[noreturn]] virtual void abort(int status, const char* msg) = 0;

protected:
    int rank_ = 0;
    int size_ = 1;
    std::vector<int> local_peers_{0};
    std::vector<std::uint8_t> secret_;
    const char* kind_ = "";
};

// PMIx if a launcher started us, else a singleton. A launcher that is not
// PMIx-capable gets an error naming the fix.
Result<std::unique_ptr<Bootstrap>> make_bootstrap();

std::vector<std::uint8_t> random_bytes(std::size_t n);

} // namespace vkshmem
