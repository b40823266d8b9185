// SPDX-License-Identifier: BSL-1.0
// The CPU proxy (DESIGN §6): one thread per PE that executes what this PE's
// shaders cannot do themselves (targets their device cannot address), from
// the ring in the device state block's allocation (shaders/vkshmem_abi.h),
// and the active messages of node-local peers for memory only this PE
// reaches (rma/am.hpp).
#pragma once

#include "core/config.hpp"
#include "core/result.hpp"
#include "rma/am.hpp"
#include "vulkan/device.hpp"
#include "vulkan/kernel.hpp"

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

namespace vkshmem {

class SymmetricMemory;

class Proxy {
public:
    // Builds the device state block, the peer table and the ring, and starts
    // the thread. Collective-free: every PE builds its own.
    static Result<std::unique_ptr<Proxy>> create(const Config& cfg, VulkanDevice& dev, SymmetricMemory& mem);
    ~Proxy();
    // The bytes of the state block of a job of `n_pes` PEs (SymmetricMemory keeps it in the host heap).
    static std::size_t block_bytes(int n_pes) { return layout(n_pes).total; }

    // The accessors through which shaders come to reach this block (the state's address, the
    // queue-ordered operations' block, a team's record, the descriptor set) note that they may:
    // until then no shader can publish a request, and the idle thread need not look for one.
    std::uint64_t state_address() {
        shaders_may_run();
        return mirror_.mapped ? mirror_.address : block_.address;
    }
    // The state block of the queue-ordered operations (vkshmemx_cmd_*): the same but for its
    // error fields, which the thread watches and reports (ending the job), as no call returns them.
    std::uint64_t cmd_state_address() {
        shaders_may_run();
        return cmd_block_.address;
    }
    // What a device-side error code (VKSHMEM_ERR_*) means, for messages.
    static const char* device_error_text(std::uint32_t code);
    // While a dispatch runs the thread polls (on a CPU device with naps of an
    // eighth of the quiet so far, 20 us to 1 ms); the start of one wakes it at once.
    void dispatch_begin();
    // After a dispatch: waits until every request its shaders published has
    // been served (false after `timeout_ms`), then lets the thread rest.
    bool dispatch_end(int timeout_ms);
    // The first device-side error since the last call (and clears it): code and info.
    std::pair<std::uint32_t, std::uint32_t> take_error();
    std::uint64_t served() const { return served_.load(std::memory_order_relaxed); }
    // The device library's record of team slot `slot` (vkshmem_team_layout): written when a team
    // is made (members: world PEs in team order; sync and scratch: this PE's device addresses),
    // cleared when it is destroyed. team_address is 0 for a slot without a live team.
    void publish_team(int slot, int me, const std::vector<int>& members, std::uint64_t sync, std::uint64_t scratch,
                      std::uint32_t scratch_bytes);
    void retire_team(int slot);
    std::uint64_t team_address(int slot);
    // The HLSL device library's descriptor set over this block and the heaps.
    const ShaderDescriptors* descriptors() {
        shaders_may_run();
        return descriptors_.get();
    }

private:
    Proxy(VulkanDevice& dev, SymmetricMemory& mem) : dev_(dev), mem_(mem), inbox_(dev, mem) {}
    void run();
    // The first time: from now on the idle thread looks at the ring every millisecond (kernels
    // the application submits itself announce nothing); it is woken to begin at once.
    void shaders_may_run() {
        if (!shaders_.load(std::memory_order_relaxed) && !shaders_.exchange(true, std::memory_order_acq_rel))
            inbox_.wake();
    }
    bool serve_one();
    // The application's batch of non-blocking device copies (VulkanDevice::start_nbi), once it
    // has not grown for kStartNbiAfter, so that its copies run while the application computes
    // rather than at its next quiet, fence or wait. True while a batch is open and still young.
    bool start_nbi_batch();
    static constexpr std::chrono::microseconds kStartNbiAfter{20};
    static constexpr long kNbiLookNs = 10'000; // how often the idle thread looks at an open batch
    static constexpr std::chrono::milliseconds kNbiLinger{1};
    std::chrono::steady_clock::time_point nbi_seen_{};     // when start_nbi_batch last found a batch open
    std::chrono::steady_clock::time_point nbi_grown_at_{}; // when it last found nbi_grown() changed
    std::uint64_t nbi_grown_ = 0;
    // Completes the puts served since the last call (posted non-blocking) and publishes their
    // tickets as completed.
    void settle();
    // Publishes tickets up to `upto` as completed (the answers of a get or AMO at `slot` first).
    void complete(std::uint32_t upto, std::uint32_t op, std::size_t slot, std::size_t bytes);
    void check_cmd_error();
    // nbi: a put may still be in flight when it returns (until settle()).
    void execute(const void* request, char* payload, bool nbi = false);
    // Posts a put of `n` payload bytes to `target` on `pe` as a device copy from the ring, where
    // only device copies reach it, or where it is a long run of a bulk put into a host heap this
    // GPU has imported; false otherwise.
    bool put_by_copy(int pe, char* target, char* payload, std::size_t n);
    // The host address of the symmetric object at device address `addr` of this PE.
    char* host_address(std::uint64_t addr, const char* call) const;

    VulkanDevice& dev_;
    SymmetricMemory& mem_;
    DeviceMemory block_;
    // Where block_ begins in its buffer: in the host heap's (block_ is then a view of it, which
    // node-local peers' devices copy from) or 0 in an allocation of its own (block_owned_).
    std::size_t block_at_ = 0;
    bool block_owned_ = true;
    // completed (offset 0), the shaders' head and answer flags (VKSHMEM_RING_HEAD_AT, _BUSY_AT) and
    // the answers (from kAnswersAt) where shaders see host writes at once; ans_ null when the
    // device has no such memory.
    static constexpr std::size_t kAnswersAt = 8192;
    DeviceMemory answers_;
    DeviceMemory cmd_block_;
    DeviceMemory teams_local_; // the team records again, device-local (state.teams_local)
    DeviceMemory mirror_;      // the state, peer table and ring layout again, device-local
    DeviceMemory head_;        // the same for the HLSL library (offsets as in block_), then the heap map
    char* teams_base_ = nullptr;
    char* cmd_base_ = nullptr;
    char* ans_ = nullptr;
    char* base_ = nullptr; // mapped block_
    struct Layout {
        std::size_t state, peers, ring, requests, payload, hlsl_map, mailboxes, teams, team_stride, total;
    } at_{};
    static Layout layout(int n_pes);
    std::uint32_t next_ = 0; // next ticket to serve
    // Served puts whose completion settle() publishes: the tickets below deferred_, if deferring.
    bool deferring_ = false;
    std::uint32_t deferred_ = 0;
    // Puts that only device copies deliver go to stream_ in batches that run while the thread
    // serves on (flights_: a batch and the tickets it completes, oldest first). Another deferred
    // put (CPU stores, the network: unstreamed_) makes completion wait for everything (settle()).
    std::unique_ptr<VulkanDevice::CopyStream> stream_;
    struct Flight {
        std::uint64_t batch;
        std::uint32_t upto;
    };
    std::deque<Flight> flights_;
    bool unstreamed_ = false;
    // Puts queued for owners' proxies (am::queue_put) go as lists that complete independently
    // (lists_: a list's number and the tickets it completes, oldest first) while they are the only
    // puts deferred: listing().
    bool listed_ = false;
    std::deque<Flight> lists_;
    bool listing() const {
        return listed_ && !unstreamed_ && !(stream_ && (stream_->open_bytes() || !flights_.empty()));
    }
    // Posts the queued list (am::post_queue); completes the tickets of the lists answered (with
    // `wait`: waits for the oldest first).
    void post_list();
    void land_list(bool wait);
    // The bytes queued for owners' proxies when flush() last looked, and since when (kListIdle).
    std::size_t queued_seen_ = 0;
    std::chrono::steady_clock::time_point queued_since_{};
    // Submits the stream's open batch, whose tickets complete when it is done.
    void launch();
    // Completes the tickets of the batches done (with `wait`: of all).
    void land(bool wait);
    // Nothing more published for now: the puts deferred go to the device.
    void flush();
    std::uint32_t completed_ = 0; // the tickets last published as completed
    std::atomic<bool> stop_{false};
    std::atomic<int> active_{0};
    std::atomic<bool> shaders_{false}; // shaders_may_run() was called
    std::atomic<std::uint64_t> served_{0};
    // For the debug report of a dispatch (dispatch_end): when it began, the
    // count then, and when the thread last served a request.
    std::chrono::steady_clock::time_point begin_{};
    std::atomic<std::int64_t> last_served_ns_{0}; // steady_clock, since its epoch
    std::uint64_t served_at_begin_ = 0;
    // Batches of puts settled, and the time spent waiting for them (the debug report's).
    // Also the runs of tickets served and the time spent serving them (debug level only).
    // And the batches of the copy stream launched, and the time their submission took; and the
    // lists posted to owners' proxies.
    std::atomic<std::uint64_t> settles_{0}, settle_ns_{0}, runs_{0}, busy_ns_{0}, launches_{0}, launch_ns_{0},
        lists_posted_{0};
    std::uint64_t settles_at_begin_ = 0, settle_ns_at_begin_ = 0, runs_at_begin_ = 0, busy_ns_at_begin_ = 0,
                  launches_at_begin_ = 0, launch_ns_at_begin_ = 0, lists_posted_at_begin_ = 0;
    am::Inbox inbox_; // also where the idle thread sleeps (dispatch_begin wakes it)
    std::thread thread_;
    std::unique_ptr<ShaderDescriptors> descriptors_;
};

} // namespace vkshmem
