// SPDX-License-Identifier: BSL-1.0
// The runtime: owns the subsystems in dependency order (teardown is the
// reverse) and holds what the API needs beyond the data path's FastState.
#pragma once

#include "bootstrap/bootstrap.hpp"
#include "coll/team.hpp"
#include "core/config.hpp"
#include "memory/symmetric.hpp"
#include "proxy/proxy.hpp"
#include "vulkan/cmd.hpp"
#include "transports/transport.hpp"
#include "vulkan/device.hpp"

#include <atomic>
#include <memory>
#include <mutex>

namespace vkshmem {

class Runtime {
public:
    // Collective. On failure prints the cause and returns it (shmem_init ends
    // the job; shmem_init_thread returns nonzero).
    static Result<void> init(int requested_thread_level);
    // Collective: quiet, barrier, release everything.
    static void finalize();
    // This initialization ends with the program (start_pes, OpenSHMEM 1.0-1.3): returning from
    // main or exit() finalizes it, collectively, instead of ending the job as an error.
    static void finalize_at_exit();
    // The application's own Vulkan device for the next init (vkshmemx_use_vk_device).
    static void use_device(const AdoptedDevice& a);

    const Config& config() const { return cfg_; }
    Bootstrap& bootstrap() { return *boot_; }
    VulkanDevice* device() { return device_.get(); }
    SymmetricMemory& memory() { return *memory_; }
    Proxy* proxy() { return proxy_.get(); } // null without a Vulkan device
    net::Transport* network() { return net_.get(); } // null when no PE is reached over a network
    coll::Teams& teams() { return *teams_; }
    // The pipelines of the queue-ordered operations, made at the first one (needs a device).
    CmdKernels& cmd_kernels();
    int thread_level() const { return thread_level_; }
    const std::string& no_device_reason() const { return no_device_reason_; }

    // quiet, then a sync of SHMEM_TEAM_WORLD (coll/); `call` names the routine for messages.
    void barrier_all(const char* call = "shmem_barrier_all");
    // Completes this PE's puts and AMOs (shmem_quiet).
    void quiet();
    // Collective allocation with the spec's closing barrier; `call` names the
    // routine for messages.
    void* allocate(Space s, std::size_t size, std::size_t align, const char* call);
    void* reallocate(void* p, std::size_t size, const char* call);
    void release(void* p, const char* call);
    [[noreturn]] void global_exit(int status);

    // The device library's view of a team with a slot (Proxy::publish_team): made visible to
    // shaders when the team is made; on destroy, after its last sync, hidden and its sync
    // counter zeroed for the slot's next team. Nothing without a Vulkan device.
    void publish_device_team(const coll::Team& t);
    void retire_device_team(int slot);

    // Serializes what is not thread-safe by nature (allocation, device copies).
    std::mutex& mutex() { return mu_; }

private:
    Runtime() = default;
    Result<void> start(int requested);
    // memcpy within one space of this PE, by the device where the CPU cannot map it.
    void copy_within(Space s, void* dst, const void* src, std::size_t n, const char* call);
    void print_info() const;
    // Starts the network transport where some PE needs it (VKSHMEM_NETWORK).
    Result<void> start_network();
    // VKSHMEM_BARRIER_ALGORITHM, VKSHMEM_BCAST_ALGORITHM, VKSHMEM_REDUCE_ALGORITHM.
    coll::Algorithms collective_algorithms() const;
    // The transport VKSHMEM_NETWORK asks for (auto: UCX, else libfabric).
    Result<std::unique_ptr<net::Transport>> make_transport() const;

    Config cfg_;
    std::unique_ptr<Bootstrap> boot_;
    std::unique_ptr<VulkanDevice> device_;
    std::unique_ptr<SymmetricMemory> memory_;
    std::unique_ptr<Proxy> proxy_;
    std::unique_ptr<CmdKernels> cmd_;
    std::unique_ptr<net::Transport> net_;
    std::unique_ptr<coll::Teams> teams_;
    std::string net_reason_; // why that transport (or none)
    int thread_level_ = 0;
    std::string no_device_reason_;
    std::mutex mu_;
};

// The one runtime of this process; null before shmem_init and after finalize.
extern Runtime* g_runtime;

} // namespace vkshmem
