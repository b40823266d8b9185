// SPDX-License-Identifier: BSL-1.0
#include "memory/symmetric.hpp"

#include "bootstrap/bootstrap.hpp"
#include "core/log.hpp"
#include "memory/fd_exchange.hpp"
#include "vkshmem_abi.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <fmt/format.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

namespace vkshmem {
namespace {

enum FdSlot { kFdHost = 0, kFdDevice = 1, kFdStatic = 2 };
// kDevVulkan: exported (peers on the same device may import it); kDevPrivate:
// device memory only its owner reaches.
enum DeviceHeapKind : std::uint8_t { kDevNone = 0, kDevMemfd = 1, kDevVulkan = 2, kDevPrivate = 3 };

// What every PE tells every other at init (one allgather).
struct PeerInfo {
    std::uint32_t magic;
    std::int32_t pid;
    std::uint32_t uid;
    std::uint8_t device_kind;
    std::uint8_t device_uuid[16];
    std::uint32_t device_type_index;
    std::uint64_t host_size, device_size, device_alloc_size, static_size;
    char host[64];
    char sock[96];
};
constexpr std::uint32_t kMagic = 0x76'6b'73'01; // "vks" v1
// Peers' data segments up to this size are mapped with every page present (map_peer populate).
constexpr std::size_t kPopulateStaticMax = std::size_t(256) << 20;

// Mesa's CPU driver imports an OPAQUE_FD by lseek(0) + read() of a header,
// and every dup of one exported fd shares one file offset: peers importing at
// the same time read each other's offsets and fail with
// VK_ERROR_INVALID_EXTERNAL_HANDLE. Reopening the memfd gives each peer a file
// description (and offset) of its own. GPU drivers' fds are left alone.
int private_file_offset(int fd, bool cpu_driver) {
    if (!cpu_driver) return fd;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int own = ::open(path, O_RDWR | O_CLOEXEC);
    if (own < 0) return fd;
    ::close(fd);
    return own;
}

std::size_t round_page(std::size_t v) { return (v + page_size() - 1) & ~(page_size() - 1); }

} // namespace

Result<std::unique_ptr<SymmetricMemory>> SymmetricMemory::create(const Config& cfg, Bootstrap& boot,
                                                                  VulkanDevice* dev, std::size_t proxy_bytes) {
    std::unique_ptr<SymmetricMemory> m(new SymmetricMemory);
    m->dev_ = dev;
    m->proxy_bytes_ = round_page(proxy_bytes);
    m->n_pes_ = boot.size();
    m->my_pe_ = boot.rank();
    for (auto& v : m->peer_base_) v.assign(static_cast<std::size_t>(m->n_pes_), nullptr);
    for (auto& v : m->route_) v.assign(static_cast<std::size_t>(m->n_pes_), Route::None);
    // Which node-local PEs use the same device decides how the device heap is
    // allocated, so it is known before anything is.
    struct DeviceId {
        std::uint8_t uuid[VK_UUID_SIZE];
        std::uint8_t present;
    } mine{}, none{};
    if (dev) {
        std::memcpy(mine.uuid, dev->report().uuid, VK_UUID_SIZE);
        mine.present = 1;
    }
    std::vector<DeviceId> ids(static_cast<std::size_t>(m->n_pes_), none);
    if (auto r = boot.allgather(&mine, sizeof mine, ids.data()); !r) return r.error();
    m->other_gpu_pe_.assign(static_cast<std::size_t>(m->n_pes_), false);
    for (int p : boot.local_peers()) {
        const DeviceId& id = ids[static_cast<std::size_t>(p)];
        if (p == m->my_pe_ || !dev || !id.present) continue;
        if (std::memcmp(id.uuid, mine.uuid, VK_UUID_SIZE) == 0) {
            m->device_peer_ = true;
            if (cfg.VKSHMEM_SHARE_DEVICE_HEAPS) m->shares_device_ = true;
        } else if (!dev->is_cpu()) {
            m->other_gpu_pe_[static_cast<std::size_t>(p)] = true;
        }
    }
    if (auto r = m->create_local(cfg, boot); !r) return r.error();
    if (auto r = m->exchange(cfg, boot); !r) return r.error();
    g_state.local_unmapped = false;
    for (int s = 0; s < kSpaceCount; ++s) {
        g_state.space[s].peer = m->peer_base_[s].data();
        g_state.space[s].route = m->route_[s].data();
        if (g_state.space[s].size && m->route_[s][static_cast<std::size_t>(m->my_pe_)] == Route::None)
            g_state.local_unmapped = true;
    }
    return m;
}

namespace {
std::uint64_t physical_mib() {
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(size) >> 20 : 0;
}
} // namespace

Result<void> SymmetricMemory::create_local(const Config& cfg, Bootstrap& boot) {
    (void)boot;
    // Host heap: memfd, imported into Vulkan so shaders reach it by address.
    // The device collectives' area: in the device heap when it is large enough, else in the host
    // heap (internal_area.hpp).
    const std::size_t dev_size = round_page(cfg.VKSHMEM_DEVICE_HEAP_SIZE);
    coll_space_ = dev_size >= kDeviceCollMinHeap ? kDeviceHeap : kHostHeap;
    std::size_t host_size = round_page(std::max<std::uint64_t>(cfg.SHMEM_SYMMETRIC_SIZE, 0) + kInternalReserve +
                                       (coll_space_ == kHostHeap ? kDeviceCollBytes : 0) + proxy_bytes_);
    // The base is aligned as far as shmem_align may ask (every PE alike, so
    // aligned offsets are aligned addresses everywhere).
    std::size_t base_align = std::min<std::size_t>(kMaxHeapAlign, std::bit_ceil(host_size));
    auto h = SharedSegment::create("vkshmem-host-heap", host_size, base_align);
    if (!h) return make_error(fmt::format("host heap of {} bytes (SHMEM_SYMMETRIC_SIZE): {}", host_size,
                                          h.error().message));
    host_ = std::move(h.value());
    desc_[kHostHeap] = "memfd";
    if (dev_) {
        auto vk = dev_->import_host(host_.base(), host_size);
        if (!vk) {
            const int r = vk.error().vk_result;
            std::string hint;
            if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
                hint = fmt::format(": the device cannot take a host heap this large; lower SHMEM_SYMMETRIC_SIZE (now "
                                   "{} bytes; this machine has {} MiB of memory for all its PEs)",
                                   cfg.SHMEM_SYMMETRIC_SIZE, physical_mib());
            return make_error(fmt::format("host heap: {}{}", vk.error().message, hint), r);
        }
        host_vk_ = *vk;
        desc_[kHostHeap] = "memfd imported with VK_EXT_external_memory_host";
    }
    g_state.space[kHostHeap].lo = reinterpret_cast<std::uintptr_t>(host_.base());
    g_state.space[kHostHeap].size = host_size;
    alloc_[kHostHeap] = SymmetricAllocator(host_size, base_align);
    // The runtime's own area comes first, so offsets count from the base.
    if (alloc_[kHostHeap].allocate(kInternalReserve) != std::optional<std::size_t>(0))
        return make_error("the host heap is too small for the runtime's internal area");
    if (coll_space_ == kHostHeap) { // a memfd: already zero
        auto at = alloc_[kHostHeap].allocate(kDeviceCollBytes, kDeviceCollSlotBytes);
        if (!at) return make_error("the host heap is too small for the device collectives' area");
        coll_at_ = *at;
    }
    if (proxy_bytes_) { // (untouched pages of a memfd cost nothing)
        auto at = alloc_[kHostHeap].allocate(proxy_bytes_, 4096);
        if (!at) return make_error("the host heap is too small for the proxy's state block");
        proxy_at_ = *at;
    }

    // Device heap.
    if (dev_size) {
        if (dev_) {
            // Share the heap with the PEs on this GPU when there are any; on
            // drivers where exportable memory cannot be host-visible, a PE
            // alone on its GPU takes a BAR-mapped heap instead, so small host
            // puts stay CPU stores (DESIGN §1).
            const bool exportable =
                dev_->is_cpu() || shares_device_ || dev_->exportable_is_mappable(dev_size);
            // PEs sharing a GPU and its heaps share their AMO mailboxes too: each
            // in the page after its owner's heap (amo.cpp; not for CPU devices,
            // whose heaps take CPU atomics).
            if (shares_device_ && !dev_->is_cpu()) mailbox_tail_ = page_size();
            auto vk = dev_->allocate_device_heap(dev_size + mailbox_tail_, exportable);
            if (!vk) {
                const int r = vk.error().vk_result;
                std::string hint;
                if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
                    hint = fmt::format(": lower VKSHMEM_DEVICE_HEAP_SIZE (now {} bytes, for each PE on this device)",
                                       cfg.VKSHMEM_DEVICE_HEAP_SIZE);
                return make_error(fmt::format("device heap: {}{}", vk.error().message, hint), r);
            }
            device_vk_ = *vk;
            device_exported_ = exportable;
            device_alloc_size_ = device_vk_.size;
            const char* how = exportable ? "OPAQUE_FD-exportable" : "private to this PE";
            if (device_vk_.mapped && cfg.VKSHMEM_DEVICE_ROUTE != DeviceRoute::Copy) {
                g_state.space[kDeviceHeap].lo = reinterpret_cast<std::uintptr_t>(device_vk_.mapped);
                desc_[kDeviceHeap] = fmt::format("DEVICE_LOCAL|HOST_VISIBLE, {}, on {}", how, dev_->report().name);
            } else {
                // No CPU mapping (or VKSHMEM_DEVICE_ROUTE=copy pretends so):
                // reserve an address range so objects still have host
                // addresses; data moves by device copies.
                void* p = mmap(nullptr, dev_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (p == MAP_FAILED) return make_error("reserving the device heap's address range failed");
                g_state.space[kDeviceHeap].lo = reinterpret_cast<std::uintptr_t>(p);
                reserved_ = p;
                desc_[kDeviceHeap] = fmt::format("DEVICE_LOCAL, {}, on {}; the CPU reaches it by device copies",
                                                 how, dev_->report().name);
            }
        } else {
            auto d = SharedSegment::create("vkshmem-device-heap", dev_size);
            if (!d) return make_error(fmt::format("device heap (host-only mode): {}", d.error().message));
            device_memfd_ = std::move(d.value());
            g_state.space[kDeviceHeap].lo = reinterpret_cast<std::uintptr_t>(device_memfd_.base());
            desc_[kDeviceHeap] = "memfd (host-only mode: no Vulkan device)";
        }
        g_state.space[kDeviceHeap].size = dev_size;
        alloc_[kDeviceHeap] = SymmetricAllocator(dev_size);
        if (coll_space_ == kDeviceHeap) {
            auto at = alloc_[kDeviceHeap].allocate(kDeviceCollBytes, kDeviceCollSlotBytes);
            if (at != std::optional<std::size_t>(0))
                return make_error("the device heap is too small for the device collectives' area");
            for (int slot = 0; slot < kMaxTeams; ++slot)
                if (auto r = zero_coll_counters(slot); !r) return r.error();
        }
        if (mailbox_tail_) {
            const abi::vkshmem_mailbox_layout zero{};
            if (auto r = dev_->write(device_vk_, dev_size, &zero, sizeof zero); !r)
                return make_error(fmt::format("the AMO mailbox after the device heap: {}", r.error().message),
                                  r.error().vk_result);
            constexpr std::size_t at = offsetof(InternalArea, amo_reply);
            dev_->share_amo_mailbox(device_vk_, dev_size, host_vk_, at, host_.base() + at);
        }
    } else {
        desc_[kDeviceHeap] = "disabled (VKSHMEM_DEVICE_HEAP_SIZE=0)";
    }

    // The program's globals and statics.
    if (cfg.VKSHMEM_SYMMETRIC_DATA) {
        ExeDataRange r = find_exe_data_range();
        if (r.size) {
            auto s = SharedSegment::remap_in_place(r, "vkshmem-static-data");
            if (!s) return make_error(fmt::format("symmetric static data: {}; set VKSHMEM_SYMMETRIC_DATA=0 to go "
                                                  "without",
                                                  s.error().message));
            static_ = std::move(s.value());
            g_state.space[kStaticData].lo = reinterpret_cast<std::uintptr_t>(r.lo);
            g_state.space[kStaticData].size = r.size;
            desc_[kStaticData] = fmt::format("data segment remapped onto a memfd ({} bytes)", r.size);
        }
    }
    if (desc_[kStaticData].empty()) desc_[kStaticData] = "not symmetric";
    return {};
}

Result<void> SymmetricMemory::exchange(const Config& cfg, Bootstrap& boot) {
    const int timeout = static_cast<int>(std::max<std::int64_t>(cfg.VKSHMEM_INIT_TIMEOUT, 1));
    FdServer server;
    const auto& peers = boot.local_peers();
    if (peers.size() > 1)
        if (auto r = server.listen(boot.job_secret(), my_pe_); !r) return r.error();

    PeerInfo me{};
    me.magic = kMagic;
    me.pid = getpid();
    me.uid = getuid();
    me.device_kind = device_exported_     ? kDevVulkan
                     : device_vk_.memory   ? kDevPrivate
                     : device_memfd_.base() ? kDevMemfd
                                            : kDevNone;
    if (dev_) std::memcpy(me.device_uuid, dev_->report().uuid, 16);
    me.device_type_index = device_vk_.type_index;
    me.host_size = host_.size();
    me.device_size = g_state.space[kDeviceHeap].size;
    me.device_alloc_size = device_alloc_size_;
    me.static_size = g_state.space[kStaticData].size;
    gethostname(me.host, sizeof me.host - 1);
    std::snprintf(me.sock, sizeof me.sock, "%s", server.name().c_str());

    std::vector<PeerInfo> all(static_cast<std::size_t>(n_pes_));
    if (auto r = boot.allgather(&me, sizeof me, all.data()); !r) return r.error();

    for (int p = 0; p < n_pes_; ++p) {
        const PeerInfo& pi = all[static_cast<std::size_t>(p)];
        if (pi.magic != kMagic) return make_error(fmt::format("PE {} runs another vkshmem version", p));
        if (pi.host_size != me.host_size)
            return make_error(fmt::format("PE {} has a {}-byte host heap and this PE {}: set SHMEM_SYMMETRIC_SIZE "
                                          "the same on every PE",
                                          p, pi.host_size, me.host_size));
        if (pi.device_size != me.device_size)
            return make_error(fmt::format("PE {} has a {}-byte device heap and this PE {}: set "
                                          "VKSHMEM_DEVICE_HEAP_SIZE the same on every PE",
                                          p, pi.device_size, me.device_size));
        if (pi.static_size != me.static_size && p == 0 && g_state.space[kStaticData].size) {
            VKSHMEM_WARN("PE 0's data segment is {} bytes and this PE's {}: PEs run different programs, so "
                         "global variables are not symmetric",
                         pi.static_size, me.static_size);
        }
    }
    bool static_symmetric = true;
    for (const auto& pi : all) static_symmetric &= pi.static_size == me.static_size && pi.static_size != 0;

    // PEs on other nodes keep route None here; the network transport, if
    // one runs, reroutes them (Runtime::start_network).

    // Serve our fds to every node-local peer while fetching theirs.
    if (peers.size() > 1) {
        server.start(
            static_cast<int>(peers.size()) - 1,
            [this](int) {
                FdBundle b;
                b.fds[kFdHost] = dup(host_.fd());
                if (device_exported_) {
                    auto fd = dev_->export_fd(device_vk_);
                    if (fd) b.fds[kFdDevice] = private_file_offset(*fd, dev_->is_cpu());
                } else if (device_memfd_.base()) {
                    b.fds[kFdDevice] = dup(device_memfd_.fd());
                }
                if (static_.fd() >= 0) b.fds[kFdStatic] = dup(static_.fd());
                return b;
            },
            timeout);
    }

    peer_host_.resize(static_cast<std::size_t>(n_pes_));
    peer_device_memfd_.resize(static_cast<std::size_t>(n_pes_));
    peer_static_.resize(static_cast<std::size_t>(n_pes_));
    peer_device_vk_.resize(static_cast<std::size_t>(n_pes_));
    peer_host_vk_.resize(static_cast<std::size_t>(n_pes_));
    const bool cpu_device = dev_ && dev_->is_cpu();
    auto device_route = [&](const DeviceMemory& m) {
        if (!m.mapped || cfg.VKSHMEM_DEVICE_ROUTE == DeviceRoute::Copy) return Route::None;
        if (cfg.VKSHMEM_DEVICE_ROUTE == DeviceRoute::Bar) return Route::BarWrite;
        // Host-coherent memory of a CPU driver is ordinary RAM; a GPU's mapped
        // device-local memory is a BAR the CPU may write but must not read.
        return cpu_device || (m.host_cached && m.host_coherent) ? Route::Direct : Route::BarWrite;
    };

    for (int p : peers) {
        const auto up = static_cast<std::size_t>(p);
        const PeerInfo& pi = all[up];
        if (p == my_pe_) {
            peer_base_[kHostHeap][up] = host_.base();
            route_[kHostHeap][up] = Route::Direct;
            if (device_vk_.memory) {
                route_[kDeviceHeap][up] = device_route(device_vk_);
                if (route_[kDeviceHeap][up] != Route::None)
                    peer_base_[kDeviceHeap][up] = static_cast<char*>(device_vk_.mapped);
            } else if (device_memfd_.base()) {
                peer_base_[kDeviceHeap][up] = device_memfd_.base();
                route_[kDeviceHeap][up] = Route::Direct;
            }
            if (static_symmetric) {
                peer_base_[kStaticData][up] = reinterpret_cast<char*>(g_state.space[kStaticData].lo);
                route_[kStaticData][up] = Route::Direct;
            }
            continue;
        }
        auto got = fetch_fds(pi.sock, boot.job_secret(), my_pe_, timeout);
        if (!got) return make_error(fmt::format("getting PE {}'s heaps: {}", p, got.error().message));
        FdBundle b = *got;
        auto host = SharedSegment::map_peer(b.fds[kFdHost], pi.host_size);
        b.fds[kFdHost] = -1;
        if (!host) {
            b.close_all();
            return make_error(fmt::format("PE {}'s host heap: {}", p, host.error().message));
        }
        peer_host_[up] = std::move(host.value());
        peer_base_[kHostHeap][up] = peer_host_[up].base();
        route_[kHostHeap][up] = Route::Direct;
        if (dev_) {
            // Shaders reach the peer's host heap through this PE's device.
            auto vk = dev_->import_host(peer_host_[up].base(), pi.host_size);
            if (vk) peer_host_vk_[up] = *vk;
            else VKSHMEM_WARN("PE {}'s host heap is not reachable from this PE's shaders: {}", p, vk.error().message);
        }

        // A device heap that cannot be mapped here is reached through its
        // owner's proxy: another GPU's, one not exported, or any when sharing
        // is switched off (VKSHMEM_SHARE_DEVICE_HEAPS=0).
        if (pi.device_kind == kDevVulkan || pi.device_kind == kDevPrivate) route_[kDeviceHeap][up] = Route::Proxy;
        if (b.fds[kFdDevice] >= 0) {
            int fd = b.fds[kFdDevice];
            b.fds[kFdDevice] = -1;
            if (pi.device_kind == kDevMemfd) {
                // A host-only PE's device heap is plain shared memory.
                auto d = SharedSegment::map_peer(fd, pi.device_size);
                if (!d) return make_error(fmt::format("PE {}'s device heap: {}", p, d.error().message));
                peer_device_memfd_[up] = std::move(d.value());
                peer_base_[kDeviceHeap][up] = peer_device_memfd_[up].base();
                route_[kDeviceHeap][up] = Route::Direct;
            } else if (pi.device_kind == kDevVulkan && dev_ && cfg.VKSHMEM_SHARE_DEVICE_HEAPS &&
                       std::memcmp(pi.device_uuid, me.device_uuid, 16) == 0) {
                auto d = dev_->import_fd(fd, pi.device_alloc_size, pi.device_type_index);
                if (!d) return make_error(fmt::format("PE {}'s device heap: {}", p, d.error().message));
                peer_device_vk_[up] = *d;
                route_[kDeviceHeap][up] = device_route(*d);
                if (route_[kDeviceHeap][up] != Route::None)
                    peer_base_[kDeviceHeap][up] = static_cast<char*>(d->mapped);
            } else {
                ::close(fd);
            }
        }
        if (b.fds[kFdStatic] >= 0 && static_symmetric) {
            // The owner copied its whole data segment into the memfd (remap_in_place), so its pages
            // exist: mapping them now spares the first remote access to each (a pSync array's first
            // collective, measured 1.9 -> 0.8 us) a page fault, for page-table entries only.
            auto s = SharedSegment::map_peer(b.fds[kFdStatic], pi.static_size, pi.static_size <= kPopulateStaticMax);
            b.fds[kFdStatic] = -1;
            if (!s) return make_error(fmt::format("PE {}'s static data: {}", p, s.error().message));
            peer_static_[up] = std::move(s.value());
            peer_base_[kStaticData][up] = peer_static_[up].base();
            route_[kStaticData][up] = Route::Direct;
        }
        b.close_all();
    }
    if (peers.size() > 1)
        if (auto r = server.join(); !r) return r.error();
    // Every peer holds its own copies now: our fds are no longer needed.
    host_.close_fd();
    device_memfd_.close_fd();
    static_.close_fd();
    if (!static_symmetric) {
        g_state.space[kStaticData].size = 0;
        desc_[kStaticData] = "not symmetric (PEs run different programs)";
    }
    return {};
}

void* SymmetricMemory::allocate(Space s, std::size_t size, std::size_t align) {
    if (s == kStaticData || !g_state.space[s].size) return nullptr;
    auto off = alloc_[s].allocate(size, align);
    if (!off) return nullptr;
    return reinterpret_cast<char*>(g_state.space[s].lo) + *off;
}

Result<void> SymmetricMemory::zero_coll_counters(int slot) {
    const std::size_t off = coll_offset(slot);
    if (coll_space_ == kDeviceHeap && reserved_) { // no CPU mapping: a device copy
        static const char zero[kDeviceCollCounterBytes] = {};
        return dev_->write(device_vk_, off, zero, sizeof zero);
    }
    std::memset(reinterpret_cast<char*>(g_state.space[coll_space_].lo) + off, 0, kDeviceCollCounterBytes);
    return {};
}

namespace {
std::optional<std::pair<Space, std::size_t>> locate(const void* p) {
    int s = space_of(p);
    if (s != kHostHeap && s != kDeviceHeap) return std::nullopt;
    std::size_t off = reinterpret_cast<std::uintptr_t>(p) - g_state.space[s].lo;
    if (s == kHostHeap && off < kInternalReserve) return std::nullopt; // the runtime's, not the user's
    return std::make_pair(static_cast<Space>(s), off);
}
} // namespace

bool SymmetricMemory::free(void* p) {
    auto l = locate(p);
    return l && alloc_[l->first].free(l->second);
}

bool SymmetricMemory::resize_in_place(void* p, std::size_t size) {
    auto l = locate(p);
    return l && alloc_[l->first].resize_in_place(l->second, size);
}

std::optional<std::size_t> SymmetricMemory::block_size(const void* p) const {
    auto l = locate(p);
    if (!l) return std::nullopt;
    return alloc_[l->first].block_size(l->second);
}

std::uint64_t SymmetricMemory::device_address(int pe, Space s) const {
    const auto up = static_cast<std::size_t>(pe);
    if (s == kHostHeap) return pe == my_pe_ ? host_vk_.address : peer_host_vk_[up].address;
    if (s == kDeviceHeap) return pe == my_pe_ ? device_vk_.address : peer_device_vk_[up].address;
    return 0;
}

std::uint64_t SymmetricMemory::mailbox_request(int pe) const {
    if (!mailbox_tail_) return 0;
    const DeviceMemory& m = pe == my_pe_ ? device_vk_ : peer_device_vk_[static_cast<std::size_t>(pe)];
    const std::size_t at = g_state.space[kDeviceHeap].size;
    return m.address && m.size >= at + sizeof(abi::vkshmem_mailbox_layout) ? m.address + at : 0;
}

std::uint64_t SymmetricMemory::mailbox_reply(int pe) const {
    const std::uint64_t host = device_address(pe, kHostHeap);
    return mailbox_tail_ && host ? host + offsetof(InternalArea, amo_reply) : 0;
}

const DeviceMemory* SymmetricMemory::device_memory(int pe, Space s) const {
    const auto up = static_cast<std::size_t>(pe);
    if (s == kDeviceHeap) {
        const DeviceMemory& m = pe == my_pe_ ? device_vk_ : peer_device_vk_[up];
        return m.memory ? &m : nullptr;
    }
    if (s == kHostHeap && pe == my_pe_ && host_vk_.memory) return &host_vk_;
    return nullptr;
}

const DeviceMemory* SymmetricMemory::shader_memory(int pe, Space s) const {
    const auto up = static_cast<std::size_t>(pe);
    const DeviceMemory* m = nullptr;
    if (s == kHostHeap) m = pe == my_pe_ ? &host_vk_ : (up < peer_host_vk_.size() ? &peer_host_vk_[up] : nullptr);
    if (s == kDeviceHeap) m = pe == my_pe_ ? &device_vk_ : (up < peer_device_vk_.size() ? &peer_device_vk_[up] : nullptr);
    return m && m->memory && m->buffer && m->address ? m : nullptr;
}

SymmetricMemory::~SymmetricMemory() {
    for (int s = 0; s < kSpaceCount; ++s) {
        g_state.space[s].peer = nullptr;
        g_state.space[s].route = nullptr;
    }
    if (dev_) {
        for (auto& m : peer_device_vk_) dev_->release(m);
        for (auto& m : peer_host_vk_) dev_->release(m);
        dev_->release(device_vk_);
        dev_->release(host_vk_);
    }
    if (reserved_) munmap(reserved_, g_state.space[kDeviceHeap].size);
    g_state.space[kHostHeap] = {};
    g_state.space[kDeviceHeap] = {};
    // The static data stays mapped (it is the program's own memory) but is no
    // longer symmetric once the peers are gone.
    g_state.space[kStaticData] = {};
}

} // namespace vkshmem
