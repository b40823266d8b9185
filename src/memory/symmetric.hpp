// SPDX-License-Identifier: BSL-1.0
// The symmetric memory of one PE: its heaps (host, device), the program's
// static data, every node-local peer's copies of them mapped here, the
// collective allocators, and the route table of the data path.
#pragma once

#include "core/config.hpp"
#include "core/result.hpp"
#include "core/state.hpp"
#include "memory/allocator.hpp"
#include "memory/internal_area.hpp"
#include "memory/shared_segment.hpp"
#include "vulkan/device.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace vkshmem {

class Bootstrap;

class SymmetricMemory {
public:
    // Collective: creates the heaps, exchanges them with node-local peers and
    // fills g_state's space tables. `dev` may be null (host-only mode).
    // `proxy_bytes`: the proxy's state block, kept in the runtime's part of the host heap (the same
    // size on every PE, device or not, so that offsets stay symmetric).
    static Result<std::unique_ptr<SymmetricMemory>> create(const Config& cfg, Bootstrap& boot, VulkanDevice* dev,
                                                           std::size_t proxy_bytes = 0);
    ~SymmetricMemory();

    // Collective allocation in one space; nullptr when it does not fit.
    void* allocate(Space s, std::size_t size, std::size_t align);
    // Frees a block; false when `p` is not the start of a live block.
    bool free(void* p);
    // Resizes in place when possible; nullptr when it must move (the caller
    // then allocates, copies and frees).
    bool resize_in_place(void* p, std::size_t size);
    std::optional<std::size_t> block_size(const void* p) const;
    const SymmetricAllocator& allocator(Space s) const { return alloc_[s]; }

    InternalArea* internal(int pe) const {
        return reinterpret_cast<InternalArea*>(g_state.space[kHostHeap].peer[pe]);
    }
    // Device address of (pe, space)'s base as this PE's shaders see it; 0 when
    // this PE's device cannot reach it directly.
    std::uint64_t device_address(int pe, Space s) const;
    // Whether another PE of this node uses this PE's device.
    bool device_has_peer() const { return device_peer_; }
    // Whether PEs of this node use other GPUs than this PE's: a GPU performs
    // its atomics on host memory in its own cache, so shaders' atomics on
    // host heaps then go through the proxy (VKSHMEM_FLAG_HOST_AMO_PROXY).
    bool node_has_other_gpus() const {
        return std::find(other_gpu_pe_.begin(), other_gpu_pe_.end(), true) != other_gpu_pe_.end();
    }
    // Whether `pe` is a PE of this node on another GPU than this PE's. Its host heap is then
    // reached by this PE's shaders through the proxy: another GPU's sub-word stores and atomics
    // on host memory may stay in that GPU's cache past a device-scope fence (shaders/README.md).
    bool on_other_gpu(int pe) const { return other_gpu_pe_[static_cast<std::size_t>(pe)]; }
    // Whether the AMO mailboxes of the PEs on this GPU are shared: each in the
    // page after its owner's device heap (and its reply in the owner's
    // InternalArea), so that any of their kernels carries out any of them.
    bool mailboxes_shared() const { return mailbox_tail_ != 0; }
    // Bytes after each device heap that hold its PE's shared AMO mailbox (0: none).
    std::size_t mailbox_tail() const { return mailbox_tail_; }
    // Where a PE's shared mailbox is (the request's copy after its device
    // heap, the reply in its host heap), as this PE's device addresses (0
    // when this PE does not reach it).
    std::uint64_t mailbox_request(int pe) const;
    std::uint64_t mailbox_reply(int pe) const;
    // Vulkan memory of (pe, space), for device copies; null if none.
    const DeviceMemory* device_memory(int pe, Space s) const;
    // Vulkan memory of (pe, space) that this PE's shaders reach directly (its
    // own heaps, peers' heaps imported here), with its whole-heap buffer: the
    // HLSL device library binds these as descriptors. Null if none.
    const DeviceMemory* shader_memory(int pe, Space s) const;
    std::size_t heap_size(Space s) const { return g_state.space[s].size; }
    // The device collectives' block of team slot `slot` (memory/internal_area.hpp): its space and
    // offset there (the same on every PE).
    Space coll_space() const { return coll_space_; }
    // Where the proxy's state block is in the host heap (0: none). Node-local peers map it with the
    // heap, and their devices copy from it: an owner's proxy takes a shader's bulk puts from there.
    std::size_t proxy_offset() const { return proxy_at_; }
    std::size_t coll_offset(int slot) const { return coll_at_ + static_cast<std::size_t>(slot) * kDeviceCollSlotBytes; }
    // Zeroes this PE's sync counter of the slot (its block's first kDeviceCollCounterBytes).
    Result<void> zero_coll_counters(int slot);
    // Reroutes (pe, s): the network transport reaches it.
    void set_route(int pe, Space s, Route r) { route_[s][static_cast<std::size_t>(pe)] = r; }
    // "memfd+VK_EXT_external_memory_host", "DEVICE_LOCAL|HOST_VISIBLE OPAQUE_FD" ...
    const std::string& description(Space s) const { return desc_[s]; }

private:
    SymmetricMemory() = default;
    Result<void> create_local(const Config& cfg, Bootstrap& boot);
    Result<void> exchange(const Config& cfg, Bootstrap& boot);

    VulkanDevice* dev_ = nullptr;
    int n_pes_ = 0;
    int my_pe_ = 0;
    SharedSegment host_;
    SharedSegment device_memfd_; // the device heap in host-only mode
    SharedSegment static_;
    DeviceMemory host_vk_;       // host heap imported into Vulkan
    DeviceMemory device_vk_;     // the device heap
    std::vector<SharedSegment> peer_host_, peer_device_memfd_, peer_static_;
    std::vector<DeviceMemory> peer_device_vk_;
    std::vector<DeviceMemory> peer_host_vk_; // peers' host heaps imported into this PE's device
    std::vector<char*> peer_base_[kSpaceCount];
    std::vector<Route> route_[kSpaceCount];
    SymmetricAllocator alloc_[kSpaceCount];
    std::string desc_[kSpaceCount];
    std::size_t device_alloc_size_ = 0;
    bool device_peer_ = false;     // another node-local PE uses the same device
    std::vector<bool> other_gpu_pe_; // the node-local PEs that use another GPU
    bool shares_device_ = false;   // ... and VKSHMEM_SHARE_DEVICE_HEAPS shares heaps with it
    bool device_exported_ = false; // the device heap is shared with those PEs
    std::size_t mailbox_tail_ = 0; // bytes after the device heap for the AMO mailbox
    Space coll_space_ = kHostHeap;  // where the device collectives' area is
    std::size_t coll_at_ = 0;       // and its offset there
    std::size_t proxy_bytes_ = 0, proxy_at_ = 0; // the proxy's state block in the host heap
    void* reserved_ = nullptr; // address range of a device heap the CPU cannot map
};

} // namespace vkshmem
