// SPDX-License-Identifier: BSL-1.0
// One Vulkan device per PE, and the memory operations the symmetric heaps
// need: import of host memory (host heap), exportable DEVICE_LOCAL memory
// (device heap), OPAQUE_FD export/import between node-local PEs, and copies
// for the device-heap paths where the CPU must not read (DESIGN §1).
#pragma once

#include "core/fair_mutex.hpp"
#include "core/result.hpp"

#include <vulkan/vulkan.h>

#include <atomic>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace vkshmem {

// What vkshmem-info shows about a device, and why a device was or was not usable.
struct DeviceReport {
    std::string name;
    std::string type; // cpu, integrated, discrete, virtual, other
    std::string driver;
    VkDriverId driver_id = static_cast<VkDriverId>(0);
    std::uint32_t api_version = 0;
    std::uint8_t uuid[VK_UUID_SIZE] = {};
    bool ext_memory_fd = false, ext_memory_host = false, ext_dma_buf = false, ext_map_placed = false;
    bool buffer_device_address = false, shader_int64 = false, atomic_int64 = false;
    std::uint64_t max_storage_buffer_range = 0;
    std::uint64_t host_import_alignment = 0;
    bool device_local_host_visible = false; // a DEVICE_LOCAL|HOST_VISIBLE type (resizable BAR or unified)
    std::uint64_t device_local_bytes = 0;
    std::string unusable_reason; // empty when vkshmem can use it
};

// Lists every physical device with its capabilities. Creates and destroys its
// own instance. `error` gets why enumeration failed (no loader, no ICD).
std::vector<DeviceReport> enumerate_devices(std::string* error);

// Records into `cmd` a barrier that makes what `stage` wrote through `access` visible to host
// reads once the submission is complete (transfer.cpp).
void barrier_for_host_reads(VkCommandBuffer cmd, VkPipelineStageFlags stage, VkAccessFlags access);

struct DeviceMemory {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE; // spans the whole allocation (copies, device address)
    std::uint64_t address = 0;        // buffer device address of byte 0
    void* mapped = nullptr;
    std::size_t size = 0;
    std::uint32_t type_index = 0;
    bool host_visible = false, host_coherent = false, host_cached = false, device_local = false;
    bool dedicated = false; // allocated for `buffer` alone (the driver asked for it)
};

// An application's own Vulkan objects for the runtime to use (vkshmemx_use_vk_device).
struct AdoptedDevice {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    std::uint32_t family = 0;
};

class VulkanDevice {
public:
    ~VulkanDevice();
    // selector: "" (local_rank modulo count), an index, or a name substring.
    static Result<std::unique_ptr<VulkanDevice>> create(const std::string& selector, int local_rank);
    // Uses the application's device, which it keeps owning (it must have the
    // extensions of vkshmemx_required_device_extensions() and the features
    // vkshmem/vulkan.h lists).
    static Result<std::unique_ptr<VulkanDevice>> adopt(const AdoptedDevice& a);

    const DeviceReport& report() const { return report_; }
    int index() const { return index_; }
    bool is_cpu() const { return props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; }
    VkInstance instance() const { return instance_; }
    VkPhysicalDevice physical() const { return phys_; }
    VkDevice device() const { return device_; }
    VkQueue queue() const { return queue_; }
    // Whether the runtime's copies and atomics have queues of their own.
    // Without them, one the proxy needs while a shader runs waits for that shader.
    bool separate_copy_queue() const { return copy_queue_ != queue_ && amo_queue_ != queue_; }
    // Serializes submissions to queue(): its own lock where the runtime's copies and atomics have
    // queues of their own. vkQueueSubmit may block until the GPU has worked through earlier
    // commands (measured on an H100, a command buffer of thousands of recorded dispatches), and
    // those may wait for a copy the proxy makes: the copies must not wait for that lock.
    FairMutex& queue_mutex() { return separate_copy_queue() ? queue_mu_ : copy_mu_; }

    // Mapped, host-coherent memory with a device address. HostReads: what the
    // CPU reads back (the device state block, the ring, the staging buffer).
    // ShaderReads: DEVICE_LOCAL|HOST_VISIBLE, what the host writes for running
    // shaders to read (see vkshmem_ring_layout); an error without such a type.
    enum class MappedUse { HostReads, ShaderReads };
    Result<DeviceMemory> allocate_mapped(std::size_t size, MappedUse use);
    std::uint32_t queue_family() const { return queue_family_; }

    // Makes [ptr, ptr+size) (page aligned, e.g. a memfd mapping) Vulkan memory.
    Result<DeviceMemory> import_host(void* ptr, std::size_t size);
    // DEVICE_LOCAL memory for a device heap, exportable as OPAQUE_FD when
    // asked; mapped when a HOST_VISIBLE device-local type is allowed for it.
    Result<DeviceMemory> allocate_device_heap(std::size_t size, bool exportable);
    // Whether exportable device-local memory can also be host-visible. Not on
    // NVIDIA (driver 580): a buffer over OPAQUE_FD memory excludes the BAR
    // type, so a device heap is either shared between PEs or BAR-mapped.
    bool exportable_is_mappable(std::size_t size);
    // A new fd for `m`, for one peer (importing consumes it).
    Result<int> export_fd(const DeviceMemory& m);
    // Imports a peer's allocation of the same device; takes ownership of fd.
    Result<DeviceMemory> import_fd(int fd, std::size_t size, std::uint32_t type_index);
    void release(DeviceMemory& m);

    // Host memory <-> device memory through a host-visible staging buffer, in
    // chunks; for memory the CPU must not read or cannot map (transfer.cpp).
    Result<void> write(const DeviceMemory& dst, std::size_t dst_off, const void* src, std::size_t n);
    Result<void> read(void* dst, const DeviceMemory& src, std::size_t src_off, std::size_t n);
    // Copies n bytes between two allocations of this device (a peer's imported
    // heap included), or two non-overlapping ranges of one.
    Result<void> copy(const DeviceMemory& dst, std::size_t dst_off, const DeviceMemory& src, std::size_t src_off,
                      std::size_t n);
    // The non-blocking forms of write and copy (shmem_put_nbi into a device heap): each is recorded
    // into one batch of copies that goes to the device at the next quiet() or blocking transfer, or
    // when the staging buffer is full, so a stream of small puts costs one submission. write_nbi
    // takes its bytes into the staging buffer at once; copy_nbi reads its source when the batch
    // runs, so that must stay unchanged until quiet().
    Result<void> write_nbi(const DeviceMemory& dst, std::size_t dst_off, const void* src, std::size_t n);
    // `host_reads`: the CPU reads dst (a host heap) after quiet(): the batch ends with a barrier for it.
    Result<void> copy_nbi(const DeviceMemory& dst, std::size_t dst_off, const DeviceMemory& src, std::size_t src_off,
                          std::size_t n, bool host_reads = false);
    // The non-blocking form of read (shmem_get_nbi from a device heap into memory the device does
    // not reach): the batch copies the bytes into the staging buffer, and the CPU copies them on
    // into dst once it is done (at the next quiet() or blocking transfer); dst holds them only then.
    Result<void> read_nbi(void* dst, const DeviceMemory& src, std::size_t src_off, std::size_t n);
    // Submits the open batch and waits for it: every non-blocking copy is then complete.
    Result<void> quiet();
    // Submits the open batch without waiting for it (a PE that waits for a peer, which may be
    // waiting for these copies); the next quiet() waits for it.
    Result<void> start_nbi();
    // The open batch's starter (the proxy thread, which calls start_nbi() once the batch has not
    // grown for a while, so that its copies run while the application computes): `wake` is
    // called when a batch takes its first copy. nbi_open(): a batch is open and not submitted;
    // nbi_grown() counts the copies batches have taken (it changes while the open one grows).
    void set_nbi_starter(std::function<void()> wake) {
        std::lock_guard lk(copy_mu_);
        nbi_starter_ = std::move(wake);
    }
    bool nbi_open() const { return nbi_open_.load(std::memory_order_acquire); }
    std::uint64_t nbi_grown() const { return nbi_grown_.load(std::memory_order_relaxed); }

    // The copies between one pair of buffers not yet recorded into a command buffer: consecutive
    // ones become one vkCmdCopyBuffer with many regions (one command per small copy cost the H100
    // about 2 us of device time each: a proxied shader put of 4 KiB pieces ran at 2 GB/s).
    struct CopyRegions {
        VkBuffer src = VK_NULL_HANDLE, dst = VK_NULL_HANDLE;
        std::vector<VkBufferCopy> regions;
        // Records what is pending first where `region` cannot join it (other buffers, an
        // overlap, 256 regions), with a barrier after an overlap so that the later copy lands last.
        void add(VkCommandBuffer cmd, VkBuffer from, VkBuffer to, const VkBufferCopy& region);
        void record(VkCommandBuffer cmd);
        // The last copy pending between these buffers, if any.
        const VkBufferCopy* last(VkBuffer from, VkBuffer to) const {
            return from == src && to == dst && !regions.empty() ? &regions.back() : nullptr;
        }
    };
private:
    // A queue of the runtime's, with a command buffer and a fence.
    struct Submitter {
        std::uint32_t family = 0;
        VkQueue queue = VK_NULL_HANDLE;
        VkCommandPool pool = VK_NULL_HANDLE;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        VkFence fence = VK_NULL_HANDLE;
    };

public:
    // A private pipeline of copy batches for one thread (the proxy's puts, stream.cpp): copies are
    // recorded into the open batch; submit() sends it without waiting, and up to kDepth batches
    // run at once, completing in order. The sources must stay unchanged until their batch is done.
    class CopyStream {
    public:
        static constexpr int kDepth = 8;
        ~CopyStream();
        // `host_reads`: the CPU reads dst (a host heap): the batch ends with a barrier for it.
        void add(const DeviceMemory& dst, std::size_t dst_off, const DeviceMemory& src, std::size_t src_off,
                 std::size_t n, bool host_reads = false);
        // Bytes recorded into the open batch.
        std::size_t open_bytes() const { return open_bytes_; }
        // Submits the open batch (first waiting for the oldest while kDepth run); returns its
        // number, counted from 1 (0: nothing was open).
        Result<std::uint64_t> submit();
        // The number of the last batch complete (with `wait`: of the last submitted).
        Result<std::uint64_t> done(bool wait);

    private:
        friend class VulkanDevice;
        explicit CopyStream(VulkanDevice& dev) : dev_(dev) {}
        struct Slot {
            Submitter sub;         // on the runtime's copy queue
            std::uint64_t seq = 0; // in flight while > done_
        };
        Result<void> retire(Slot& s, bool wait);
        VulkanDevice& dev_;
        Slot slots_[kDepth];
        int open_ = -1; // the slot being recorded
        std::size_t open_bytes_ = 0;
        bool open_host_reads_ = false;
        std::uint64_t submitted_ = 0, done_ = 0;
        CopyRegions regions_;
    };
    Result<std::unique_ptr<CopyStream>> copy_stream();

    // One atomic on device memory at `address` (a buffer device address;
    // `target_off` in the device heap of `target_pe`, or target_pe -1 where
    // it is in none), posted in this PE's AMO mailbox and carried out by the
    // sweeper kernel or by a waiting kernel of the device library on this
    // GPU, whichever comes first (amo.cpp, shaders/vkshmem_mailbox.glsl). op
    // is api::detail::AmoOp's value; width 4 or 8. Returns the old value.
    Result<std::uint64_t> atomic(std::uint64_t address, int target_pe, std::uint64_t target_off, unsigned op,
                                 unsigned width, std::uint64_t operand, std::uint64_t cond);
    // Where this PE's mailbox is, for the device library (request 0: none):
    // the vkshmem_mailbox_entry of this PE's own kernels, and for the HLSL
    // library the request that holds the claim word, and the reply.
    struct AmoMailbox {
        std::uint64_t request = 0, claim = 0, reply = 0; // device addresses
        VkBuffer claimed_buffer = VK_NULL_HANDLE, reply_buffer = VK_NULL_HANDLE;
        std::size_t claimed_offset = 0, reply_offset = 0;
    };
    AmoMailbox amo_mailbox();
    // Makes the mailbox one that the other PEs on this GPU reach, so that
    // their kernels carry out its atomics too: a copy of the request at
    // `offset` of `heap` (exported device memory, which the host writes by
    // copies), whose `taken` is the claim word; the reply at `reply_offset`
    // of host memory `reply_mem`, mapped here at `reply_host`. Before the
    // first amo_mailbox() or atomic().
    void share_amo_mailbox(const DeviceMemory& heap, std::size_t offset, const DeviceMemory& reply_mem,
                           std::size_t reply_offset, void* reply_host);

    // Waits for a fence: polled a while on GPUs, then blocking (transfer.cpp says why).
    VkResult wait_fence(VkFence fence);

private:
    VulkanDevice() = default;
    Result<void> ensure_amo_pipeline();
    Result<void> make_submitter(Submitter& s);
    // Fills props_ and mem_props_ for phys_; returns its queue families.
    std::vector<VkQueueFamilyProperties> load_properties();
    // What create and adopt share once the device and its queues are known.
    Result<void> finish_setup();
    // copy_: begin_copy() waits for what it still runs and begins its command
    // buffer; submit_copy_cmd() ends and submits it; settle_copy() waits for
    // it (an atomic's posting copy is left running until the next use).
    // (Each of these begins by submitting and waiting for an open batch of non-blocking copies.)
    void begin_copy();
    Result<void> submit_copy_cmd();
    // The batch of non-blocking copies (copy_mu_ held): opens copy_'s command buffer for it, or
    // submits it (copy_pending_ then waits for it as for any submission).
    void open_batch();
    Result<void> flush_batch();
    // Submits the open batch, if any, and waits for every submission of copy_.
    Result<void> drain();
    Result<void> settle_copy();
    Result<void> submit_copy(VkBuffer dst, std::size_t dst_off, VkBuffer src, std::size_t src_off, std::size_t n);
    Result<void> ensure_staging();
    // (copy_mu_ held) Records into the open batch a copy of n bytes between the staging buffer and
    // `heap` at heap_off (into it: `into`), and returns where in the staging buffer they go.
    Result<std::size_t> stage_nbi(VkBuffer heap, std::size_t heap_off, std::size_t n, bool into);
    Result<void> finish_memory(DeviceMemory& m, bool map);
    // The whole-allocation buffer is made before the memory, so that the
    // allocation can be dedicated to it where the driver asks.
    struct BufferPlan {
        VkBuffer buffer = VK_NULL_HANDLE;
        std::uint32_t type_bits = 0;
        std::size_t size = 0;
        bool dedicated = false;
    };
    Result<BufferPlan> plan_buffer(std::size_t size, VkExternalMemoryHandleTypeFlagBits handle);
    Result<void> bind_plan(DeviceMemory& m, BufferPlan& plan);
    // Allocates (chain: export or import info) and binds plan's buffer.
    Result<DeviceMemory> allocate_for(BufferPlan& plan, std::uint32_t type, void* chain);

    bool owned_ = true; // false for an adopted device: the application destroys it
    VkInstance instance_ = VK_NULL_HANDLE;
    VkPhysicalDevice phys_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;      // the application's dispatches
    VkQueue copy_queue_ = VK_NULL_HANDLE; // the runtime's copies (== queue_ with one queue)
    std::vector<VkQueue> stream_queues_;  // copy_queue_, then the copy family's other queues
    VkQueue amo_queue_ = VK_NULL_HANDLE;  // the runtime's one-invocation atomics
    std::uint32_t queue_family_ = 0, copy_family_ = 0, amo_family_ = 0;
    std::vector<std::uint32_t> families_; // every family with a queue of ours (buffer sharing)
    int index_ = -1;
    VkPhysicalDeviceProperties props_{};
    VkPhysicalDeviceMemoryProperties mem_props_{};
    DeviceReport report_;
    PFN_vkGetMemoryFdKHR get_memory_fd_ = nullptr;
    PFN_vkGetMemoryHostPointerPropertiesEXT get_host_ptr_props_ = nullptr;

    FairMutex copy_mu_; // copy_ and amo_ (one staging buffer, one mailbox); fair: see fair_mutex.hpp
    FairMutex queue_mu_; // queue_, where copies and atomics have queues of their own
    Submitter copy_, amo_;
    DeviceMemory staging_;
    VkShaderModule amo_module_ = VK_NULL_HANDLE;
    VkPipelineLayout amo_layout_ = VK_NULL_HANDLE;
    VkPipeline amo_pipeline_ = VK_NULL_HANDLE;
    DeviceMemory amo_mailbox_; // the request (and the reply, unless shared), written by the CPU
    struct {
        VkBuffer buffer = VK_NULL_HANDLE; // the request's copy for the other PEs (none: null)
        std::size_t offset = 0;
        std::uint64_t address = 0;
        VkBuffer reply_buffer = VK_NULL_HANDLE; // the reply in host memory
        std::size_t reply_offset = 0;
        std::uint64_t reply_address = 0;
        void* reply_host = nullptr;
    } amo_shared_;
    AmoMailbox amo_at_;
    void* amo_reply_host_ = nullptr;
    bool copy_pending_ = false; // copy_'s submission not yet waited for
    bool batch_open_ = false;   // copy_'s command buffer records non-blocking copies
    std::size_t batch_staged_ = 0; // bytes of the staging buffer the open batch uses
    CopyRegions batch_; // the open batch's copies not yet recorded
    bool batch_host_reads_ = false; // the CPU reads what the open batch writes (read_nbi, host_reads)
    // read_nbi's bytes at staging offset `at`, for dst once copy_'s submission is done (settle_copy).
    struct Readback {
        void* dst;
        std::size_t at, n;
    };
    std::vector<Readback> readbacks_;
    std::atomic<bool> nbi_pending_{false}; // non-blocking copies not yet waited for by quiet()
    std::atomic<bool> nbi_open_{false};        // nbi_open
    std::atomic<std::uint64_t> nbi_grown_{0};  // nbi_grown
    std::function<void()> nbi_starter_;        // set_nbi_starter
    void nbi_grew();
    std::uint32_t amo_seq_ = 0;     // the last atomic posted
    bool sweeper_pending_ = false;  // amo_'s submission has not finished
};

const char* vk_result_name(VkResult r);

} // namespace vkshmem
