// SPDX-License-Identifier: BSL-1.0
// Routes other than Direct, and the diagnostics of bad arguments. Nothing here
// is on the hot path of a mapped peer.
#include "rma/rma.hpp"

#include "core/config.hpp"
#include "core/log.hpp"
#include "memory/symmetric.hpp"
#include "rma/am.hpp"
#include "transports/transport.hpp"
#include "vulkan/device.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

namespace vkshmem::rma::detail {
namespace {
const char* space_name(int s) { return s >= 0 && s < kSpaceCount ? kSpaceNames[s] : "?"; }

// The Vulkan memory behind (pe, space) when the device can reach it.
const DeviceMemory* device_side(const Target& t, int pe) {
    if (!g_subsystems.device) return nullptr;
    return g_subsystems.memory->device_memory(pe, static_cast<Space>(t.space));
}

[[noreturn]] void unreachable(const Target& t, int pe, const char* call) {
    // Node-local peers always have a route (mapped, device copy or active
    // message); what remains is another node.
    if (!g_subsystems.network)
        fatal(call, "PE {}'s {} cannot be reached from PE {}: that PE runs on another node, and no network "
                    "transport runs (VKSHMEM_NETWORK={})",
              pe, space_name(t.space), g_state.my_pe, g_subsystems.config ? to_text(g_subsystems.config->VKSHMEM_NETWORK) : "?");
    fatal(call, "PE {}'s {} cannot be reached from PE {}: that PE runs on another node, and {} could not "
                "register that memory there (a GPU's device heap is not reachable over the network in this "
                "version; use the host heap)",
          pe, space_name(t.space), g_state.my_pe, g_subsystems.network->name());
}

// Route Network (transports/transport.hpp). A local buffer the CPU cannot
// map (a GPU's device heap) goes through a bounce buffer.
// nbi: may return before the transfer completes (a buffer the CPU maps; the bounce buffer of one
// it cannot is copied through at once).
void transfer_net(bool to_peer, const Target& t, void* buf, std::size_t n, int pe, const char* call, bool nbi);
std::uint64_t amo_net(const Target& t, AmoOp op, std::size_t width, std::uint64_t operand, std::uint64_t cond,
                      int pe, const char* call, bool fetch);

// A blocking non-fetching AMO over the network returns once posted (the specification lets it
// return before it executes; quiet completes it). The PEs it went to are marked here, per domain,
// until that domain's next quiet: a later blocking get or fetching AMO on that domain to a
// marked PE quiets the domain first, so that it reads what the AMO left. Transports do not order
// the two on their own (UCX may send atomics and gets on different lanes; libfabric's atomics sent
// as messages are carried out by the target's CPU, its reads by the provider).
struct AmoMarks {
    net::Domain* domain;
    std::vector<std::uint8_t> pes;
};
std::mutex g_marks_mu;
std::vector<AmoMarks> g_marks;          // (a few: the default domain and the contexts')
std::atomic<std::size_t> g_marked{0};   // g_marks.size(), read without the lock

void mark_amo(net::Domain* d, int pe) {
    std::lock_guard lk(g_marks_mu);
    auto it = std::find_if(g_marks.begin(), g_marks.end(), [d](const AmoMarks& m) { return m.domain == d; });
    if (it == g_marks.end()) {
        g_marks.push_back({d, std::vector<std::uint8_t>(static_cast<std::size_t>(g_state.n_pes), 0)});
        it = std::prev(g_marks.end());
        g_marked.store(g_marks.size(), std::memory_order_relaxed);
    }
    it->pes[static_cast<std::size_t>(pe)] = 1;
}

// Drops d's marks; with pe >= 0, only if pe is marked. Returns whether they were dropped.
bool clear_marks(net::Domain* d, int pe) {
    if (g_marked.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard lk(g_marks_mu);
    auto it = std::find_if(g_marks.begin(), g_marks.end(), [d](const AmoMarks& m) { return m.domain == d; });
    if (it == g_marks.end() || (pe >= 0 && !it->pes[static_cast<std::size_t>(pe)])) return false;
    g_marks.erase(it);
    g_marked.store(g_marks.size(), std::memory_order_relaxed);
    return true;
}

// Before a blocking read of pe: completes this thread's domain's AMOs if one went to pe.
void settle_amos(int pe, const char* call) {
    if (!clear_marks(t_domain, pe)) return;
    if (auto r = g_subsystems.network->quiet_on(t_domain); !r) fatal(call, "{}", r.error().message);
}
} // namespace

} // namespace vkshmem::rma::detail

namespace vkshmem::rma {
Subsystems g_subsystems;
thread_local net::Domain* t_domain = nullptr;

void quiet(const char* call) { quiet_on(nullptr, call); }

namespace {
// defer_amo's list, one for every thread and context of this PE. g_deferred_mu is held while the
// list is carried out too, and g_deferred_left counts what is posted and not yet done, so that a
// quiet that finds another thread carrying out its AMOs waits until their old values are in.
struct DeferredAmo {
    detail::Target t;
    detail::AmoOp op;
    std::size_t width;
    std::uint64_t operand, cond;
    void* fetch;
    int pe;
    const char* call;
};
std::mutex g_deferred_mu;
std::vector<DeferredAmo> g_deferred;
std::atomic<std::size_t> g_deferred_left{0};
// Past this many the poster carries them out itself (each is a device atomic or a message).
constexpr std::size_t kDeferredMax = 4096;
thread_local bool t_starting = false; // in start_queued or run_deferred: neither enters itself

void complete_queued(const char* call) {
    am::flush_queue(); // (the application's puts and gets queued for owners' proxies)
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (g_subsystems.device)
        if (auto r = g_subsystems.device->quiet(); !r) fatal(call, "{}", r.error().message);
}

// The deferred AMOs, after the puts and copies posted before them are complete. Not on the proxy
// thread (its quiets complete its shaders' puts): it would hold up its inbox behind the lock while
// an application thread's deferred AMO waits on some proxy.
void run_deferred(const char* call) {
    if (t_starting || g_deferred_left.load(std::memory_order_acquire) == 0 || am::on_proxy_thread()) return;
    std::lock_guard lk(g_deferred_mu);
    std::vector<DeferredAmo> list;
    list.swap(g_deferred);
    if (list.empty()) return;
    t_starting = true;
    complete_queued(call);
    for (const DeferredAmo& d : list) {
        const std::uint64_t old = detail::amo_slow(d.t, d.op, d.width, d.operand, d.cond, d.pe, d.call,
                                                          d.fetch != nullptr);
        if (!d.fetch) continue;
        if (detail::unmapped(d.fetch))
            put(static_cast<std::uint8_t*>(d.fetch), reinterpret_cast<const std::uint8_t*>(&old), d.width,
                g_state.my_pe, d.call); // (the low `width` bytes: little-endian)
        else
            std::memcpy(d.fetch, &old, d.width);
    }
    t_starting = false;
    g_deferred_left.fetch_sub(list.size(), std::memory_order_release);
}

// A full fence and the completion of the non-blocking device copies, which are one batch for every
// context (their order is the device's), so a context's quiet and fence complete all of them, and
// of the deferred AMOs; then `network` (its quiet or fence of one domain), where a network runs.
template <class Network> void complete_then(const char* call, Network network) {
    complete_queued(call);
    run_deferred(call);
    if (g_subsystems.network)
        if (auto r = network(*g_subsystems.network); !r) fatal(call, "{}", r.error().message);
}
} // namespace

void quiet_on(net::Domain* d, const char* call) {
    detail::clear_marks(d, -1); // (before: an AMO posted during the quiet keeps its mark)
    complete_then(call, [d](net::Transport& net) { return net.quiet_on(d); });
}

void fence_on(net::Domain* d, const char* call) {
    complete_then(call, [d](net::Transport& net) { return net.fence_on(d); });
}

void start_queued() {
    if (t_starting || am::on_proxy_thread()) return;
    constexpr const char* kCall = "a wait (starting this PE's non-blocking operations)";
    t_starting = true;
    am::flush_queue();
    if (g_subsystems.device)
        if (auto r = g_subsystems.device->start_nbi(); !r) fatal(kCall, "{}", r.error().message);
    t_starting = false;
    run_deferred(kCall);
}

net::Domain* open_domain() { return g_subsystems.network ? g_subsystems.network->open_domain() : nullptr; }

void close_domain(net::Domain* d) {
    detail::clear_marks(d, -1); // (the transport's close completes what is in flight)
    if (d && g_subsystems.network) g_subsystems.network->close_domain(d);
}
} // namespace vkshmem::rma

namespace vkshmem::rma::detail {
void bad_target(const void* addr, std::size_t len, int pe, const char* call) {
    if (!g_state.initialized) fatal(call, "called before shmem_init (or after shmem_finalize)");
    if (static_cast<unsigned>(pe) >= static_cast<unsigned>(g_state.n_pes))
        fatal(call, "PE {} is out of range: the job has {} PEs (0..{})", pe, g_state.n_pes, g_state.n_pes - 1);
    int s = space_of(addr);
    if (s < 0)
        fatal(call, "address {} is not symmetric: it is in neither heap nor the program's static data; allocate "
                    "it with shmem_malloc or make it a global variable",
              addr);
    const SpaceView& v = g_state.space[s];
    fatal(call, "{} bytes at {} run past the end of the {} ({} bytes from {:#x})", len, addr, space_name(s), v.size,
          v.lo);
}

void misaligned(const void* addr, std::size_t align, const char* call) {
    fatal(call, "address {} is not aligned to {} bytes, as an atomic operation of this width requires", addr, align);
}

void bad_cmp(int cmp, const char* call) {
    fatal(call, "comparison {} is not one of SHMEM_CMP_EQ, NE, GT, GE, LT, LE (0..5)", cmp);
}

namespace {
// A local buffer (put source, get destination) inside this PE's own device
// heap that the CPU cannot map: its Vulkan memory and offset, else null.
const DeviceMemory* unmapped_local(const void* p, std::size_t* off) {
    if (!g_state.local_unmapped) return nullptr;
    const int s = space_of(p);
    if (s < 0 || g_state.space[s].route[g_state.my_pe] != Route::None) return nullptr;
    *off = reinterpret_cast<std::uintptr_t>(p) - g_state.space[s].lo;
    return g_subsystems.memory->device_memory(g_state.my_pe, static_cast<Space>(s));
}
// The offset of [p, p + n) in this PE's host heap, when it lies there.
std::optional<std::uint64_t> own_host_heap(const void* p, std::size_t n) {
    if (space_of(p) != kHostHeap) return std::nullopt;
    const std::uint64_t off = reinterpret_cast<std::uintptr_t>(p) - g_state.space[kHostHeap].lo;
    if (n > g_state.space[kHostHeap].size - off) return std::nullopt;
    return off;
}

// A local buffer inside this PE's host heap, large enough that a direct DMA
// copy beats staging: the host heap's Vulkan memory and the offset.
const DeviceMemory* host_heap_side(const void* p, std::size_t n, std::size_t* off) {
    if (n < (64u << 10)) return nullptr;
    const auto o = own_host_heap(p, n);
    const DeviceMemory* h = o ? g_subsystems.memory->device_memory(g_state.my_pe, kHostHeap) : nullptr;
    if (!h || !h->buffer) return nullptr;
    *off = *o;
    return h;
}

// Route Proxy (rma/am.hpp). The owner reads a put's bytes from, and writes
// a get's bytes to, this PE's host heap: straight from the caller's buffer
// when it lies there, else through the staging area, a piece at a time.

// `buf` is a put's source (to_peer) or a get's destination.
void transfer_am(bool to_peer, const Target& t, void* buf, std::size_t n, int pe, const char* call, bool nbi) {
    std::size_t buf_off = 0;
    const DeviceMemory* buf_mem = unmapped_local(buf, &buf_off);
    if (nbi && !buf_mem &&
        (to_peer ? am::queue_put(pe, t.space, t.offset, buf, n, own_host_heap(buf, n))
                 : am::queue_get(pe, t.space, t.offset, buf, n, own_host_heap(buf, n))))
        return;
    am::Sender s;
    s.send_queue(); // (their bytes may be in the staging area, which this transfer may take)
    if (!buf_mem)
        if (auto off = own_host_heap(buf, n)) {
            if (to_peer) s.put(pe, t.space, t.offset, *off, n);
            else s.get(pe, t.space, t.offset, *off, n);
            return;
        }
    VulkanDevice* dev = g_subsystems.device;
    for (std::size_t done = 0; done < n;) {
        const std::size_t c = std::min(n - done, kAmStagingBytes);
        char* local = static_cast<char*>(buf) + done;
        Result<void> r;
        if (to_peer) {
            if (buf_mem) r = dev->read(s.staging(), *buf_mem, buf_off + done, c);
            else std::memcpy(s.staging(), local, c);
            if (r) s.put(pe, t.space, t.offset + done, s.staging_offset(), c);
        } else {
            s.get(pe, t.space, t.offset + done, s.staging_offset(), c);
            if (buf_mem) r = dev->write(*buf_mem, buf_off + done, s.staging(), c);
            else std::memcpy(local, s.staging(), c);
        }
        if (!r) fatal(call, "{}", r.error().message);
        done += c;
    }
}
} // namespace

void put_slow(const Target& t, const void* src, std::size_t n, int pe, const char* call, bool nbi) {
    if (t.route == Route::Proxy) return transfer_am(true, t, const_cast<void*>(src), n, pe, call, nbi);
    if (t.route == Route::Network) return transfer_net(true, t, const_cast<void*>(src), n, pe, call, nbi);
    VulkanDevice* dev = g_subsystems.device;
    std::size_t src_off = 0;
    if (const DeviceMemory* src_mem = unmapped_local(src, &src_off)) {
        if (const DeviceMemory* m = device_side(t, pe)) {
            // Device heap to device heap: one copy on the device.
            auto r = nbi ? dev->copy_nbi(*m, t.offset, *src_mem, src_off, n) : dev->copy(*m, t.offset, *src_mem, src_off, n);
            if (!r) fatal(call, "{}", r.error().message);
            return;
        }
        if (t.route == Route::None) unreachable(t, pe, call);
        if (auto r = dev->read(t.ptr, *src_mem, src_off, n); !r) fatal(call, "{}", r.error().message);
        return;
    }
    if (t.route == Route::Direct) {
        std::memcpy(t.ptr, src, n);
        return;
    }
    if (t.route == Route::BarWrite && n <= g_state.bar_put_max) {
        // Small puts into a GPU's device heap: CPU stores through the BAR
        // mapping, no queue submission (DESIGN §1).
        std::memcpy(t.ptr, src, n);
        return;
    }
    const DeviceMemory* m = device_side(t, pe);
    if (!m) unreachable(t, pe, call);
    std::size_t host_off = 0;
    if (const DeviceMemory* h = host_heap_side(src, n, &host_off)) {
        // From the host heap, which the device already reaches: one DMA copy,
        // no staging.
        auto r = nbi ? dev->copy_nbi(*m, t.offset, *h, host_off, n) : dev->copy(*m, t.offset, *h, host_off, n);
        if (!r) fatal(call, "{}", r.error().message);
        return;
    }
    // nbi: staged at once and batched with the other non-blocking copies (one submission for a
    // stream of small puts), complete at the next quiet.
    auto r = nbi ? dev->write_nbi(*m, t.offset, src, n) : dev->write(*m, t.offset, src, n);
    if (!r) fatal(call, "{}", r.error().message);
}

void get_slow(void* dst, const Target& t, std::size_t n, int pe, const char* call, bool nbi) {
    if (t.route == Route::Proxy) return transfer_am(false, t, dst, n, pe, call, nbi);
    if (t.route == Route::Network) return transfer_net(false, t, dst, n, pe, call, nbi);
    VulkanDevice* dev = g_subsystems.device;
    std::size_t dst_off = 0;
    // nbi: into the batch of non-blocking copies, complete at the next quiet (as put_nbi's).
    if (const DeviceMemory* dst_mem = unmapped_local(dst, &dst_off)) {
        if (const DeviceMemory* m = device_side(t, pe)) {
            auto r = nbi ? dev->copy_nbi(*dst_mem, dst_off, *m, t.offset, n)
                         : dev->copy(*dst_mem, dst_off, *m, t.offset, n);
            if (!r) fatal(call, "{}", r.error().message);
            return;
        }
        if (t.route != Route::Direct) unreachable(t, pe, call);
        auto r = nbi ? dev->write_nbi(*dst_mem, dst_off, t.ptr, n) : dev->write(*dst_mem, dst_off, t.ptr, n);
        if (!r) fatal(call, "{}", r.error().message);
        return;
    }
    if (t.route == Route::Direct) {
        std::memcpy(dst, t.ptr, n);
        return;
    }
    if (t.route == Route::BarWrite && n <= g_state.bar_get_max) {
        // Reads through the BAR are uncached (each load a PCIe round trip),
        // but a few of them still cost less than a copy submission.
        std::memcpy(dst, t.ptr, n);
        return;
    }
    const DeviceMemory* m = device_side(t, pe);
    if (!m) unreachable(t, pe, call);
    std::size_t host_off = 0;
    if (const DeviceMemory* h = host_heap_side(dst, n, &host_off)) {
        auto r = nbi ? dev->copy_nbi(*h, host_off, *m, t.offset, n, true) : dev->copy(*h, host_off, *m, t.offset, n);
        if (!r) fatal(call, "{}", r.error().message);
        return;
    }
    auto r = nbi ? dev->read_nbi(dst, *m, t.offset, n) : dev->read(dst, *m, t.offset, n);
    if (!r) fatal(call, "{}", r.error().message);
}

std::uint64_t amo_slow(const Target& t, AmoOp op, std::size_t width, std::uint64_t operand, std::uint64_t cond,
                       int pe, const char* call, bool fetch) {
    if (t.route == Route::Network) return amo_net(t, op, width, operand, cond, pe, call, fetch);
    if (t.route == Route::Proxy) {
        if (width != 4 && width != 8)
            fatal(call, "a {}-byte atomic on another PE's device heap: only 4- and 8-byte atomics reach it", width);
        am::Sender s;
        return s.amo(pe, t.space, t.offset, static_cast<unsigned>(op), static_cast<unsigned>(width), operand, cond);
    }
    // CPU atomics through a GPU's BAR are not atomic with respect to the
    // device or other PEs: the device executes the operation.
    const DeviceMemory* m = device_side(t, pe);
    if (!m || !m->address) unreachable(t, pe, call);
    if (width != 4 && width != 8)
        fatal(call, "a {}-byte atomic on a device heap: only 4- and 8-byte atomics run on the device", width);
    auto r = g_subsystems.device->atomic(m->address + t.offset, t.space == kDeviceHeap ? pe : -1, t.offset,
                                         static_cast<unsigned>(op), static_cast<unsigned>(width), operand, cond);
    if (!r && r.error().vk_result == VK_ERROR_DEVICE_LOST && g_subsystems.memory->device_has_peer())
        // Seen on one H100 with private device heaps: the atomic's sweeper waited behind
        // another PE's running kernel, which does not carry it out, until the driver gave up
        // (shaders/README.md, "Limits").
        fatal(call, "{} (this GPU is shared with another PE, whose running kernel may have held it from the device "
                    "atomic: with VKSHMEM_SHARE_DEVICE_HEAPS=0 no kernel carries out another PE's, nor an HLSL "
                    "kernel those of PEs whose heaps have no bindings in it (VKSHMEM_HLSL_HEAPS); run one PE per "
                    "GPU there)",
              r.error().message);
    if (!r) fatal(call, "{}", r.error().message);
    return r.value();
}

namespace {
static_assert(static_cast<int>(net::AmoOp::Xor) == static_cast<int>(AmoOp::Xor) &&
                  static_cast<int>(net::AmoOp::CompareSwap) == static_cast<int>(AmoOp::CompareSwap),
              "the transport's AMO codes are the API's");

void transfer_net(bool to_peer, const Target& t, void* buf, std::size_t n, int pe, const char* call, bool nbi) {
    net::Transport& net = *g_subsystems.network;
    std::size_t off = 0;
    const DeviceMemory* mem = unmapped_local(buf, &off);
    std::vector<char> bounce(mem ? n : 0);
    Result<void> r;
    if (mem && to_peer) r = g_subsystems.device->read(bounce.data(), *mem, off, n);
    void* local = mem ? bounce.data() : buf;
    const net::Post how{t_domain, nbi && !mem};
    if (!to_peer && !how.nbi) settle_amos(pe, call);
    if (r)
        r = to_peer ? net.put_on(how, pe, t.space, t.offset, local, n) : net.get_on(how, pe, t.space, t.offset, local, n);
    if (r && mem && !to_peer) r = g_subsystems.device->write(*mem, off, bounce.data(), n);
    if (!r) fatal(call, "{}", r.error().message);
}

std::uint64_t amo_net(const Target& t, AmoOp op, std::size_t width, std::uint64_t operand, std::uint64_t cond,
                      int pe, const char* call, bool fetch) {
    net::Transport& net = *g_subsystems.network;
    // The API's AMOs are 4 and 8 bytes wide, which every transport does.
    if (!(net.caps().amo_widths & (1u << width)))
        fatal(call, "a {}-byte atomic over {}: only 4- and 8-byte atomics cross the network", width, net.name());
    std::uint64_t old = 0; // the low `width` bytes (little-endian)
    const bool reads = net::returns_old(static_cast<net::AmoOp>(op), fetch);
    if (reads) settle_amos(pe, call);
    auto r = net.amo_on({t_domain, !reads, !reads}, pe, t.space, t.offset, static_cast<net::AmoOp>(op),
                        static_cast<unsigned>(width), operand, cond, reads ? &old : nullptr);
    if (!r) fatal(call, "{}", r.error().message);
    if (!reads) mark_amo(t_domain, pe);
    return old;
}
} // namespace

void defer_amo(const Target& t, AmoOp op, std::size_t width, std::uint64_t operand, std::uint64_t cond, void* fetch,
               int pe, const char* call) {
    std::unique_lock lk(g_deferred_mu);
    g_deferred.push_back({t, op, width, operand, cond, fetch, pe, call});
    g_deferred_left.fetch_add(1, std::memory_order_release);
    if (g_deferred.size() < kDeferredMax) return;
    lk.unlock();
    run_deferred(call);
}

void amo_nbi_net(const Target& t, AmoOp op, std::size_t width, std::uint64_t operand, std::uint64_t cond, void* fetch,
                 int pe, const char* call) {
    net::Transport& net = *g_subsystems.network;
    if (!(net.caps().amo_widths & (1u << width)))
        fatal(call, "a {}-byte atomic over {}: only 4- and 8-byte atomics cross the network", width, net.name());
    auto r = net.amo_on({t_domain, true}, pe, t.space, t.offset, static_cast<net::AmoOp>(op),
                        static_cast<unsigned>(width), operand, cond, fetch);
    if (!r) fatal(call, "{}", r.error().message);
}

} // namespace vkshmem::rma::detail
