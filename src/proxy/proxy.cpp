// SPDX-License-Identifier: BSL-1.0
#include "proxy/proxy.hpp"

#include "core/log.hpp"
#include "core/state.hpp"
#include "core/tsan.hpp"
#include "core/wait.hpp"
#include "memory/symmetric.hpp"
#include "rma/rma.hpp"

#include "vkshmem_abi.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fmt/format.h>

#include <vector>

namespace vkshmem {
namespace {
using namespace abi;

template <class T> std::atomic_ref<T> at(char* base, std::size_t off) {
    return std::atomic_ref<T>(*reinterpret_cast<T*>(base + off));
}
std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) & ~(a - 1); }
// A batch of streamed puts goes to the device once it holds this much (or nothing more is
// published): each submission costs the proxy tens of microseconds of driver time (an H100: the
// proxy was busy for all of a proxied bulk put at 256 KiB per batch), and a few batches in
// flight keep the copy engines busy while slots stay free (the ring holds 8 MiB).
constexpr std::size_t kStreamBatch = 1 << 20;
// A run of a bulk put into a host heap this GPU has imported goes to the copy stream from this
// size on, and while the stream is busy from one full piece on; smaller runs are CPU copies.
constexpr std::size_t kStreamHostFrom = 8 * VKSHMEM_RING_PAYLOAD_BYTES;
// The puts queued for owners' proxies (am::queue_put: the runs of bulk puts into another GPU's
// device heap) go as one list, which the owner copies in one submission, once its copies would keep
// a copy engine busy for about kListCopyNs (or it holds kListBatch bytes), or once a bulk
// transfer's runs stopped coming for kListIdle. Long enough that a list's submission (tens of
// microseconds of the owner's driver time) hides behind the copies of the lists before it, short
// enough that several are out at once. An H200 copies a region from host memory in about 2.7 us
// plus its bytes at 48 GB/s (vk-copy-probe); at the PutLists' rate the list was best at 1 MiB in
// 64 KiB pieces and at 2 MiB in 256 KiB pieces (2026-12-02-h200-proxied-put-lists-posted.md).
constexpr std::size_t kListBatch = 2 << 20;
constexpr std::size_t kListCopyNs = 64'000;
constexpr auto kListIdle = std::chrono::microseconds(5);
bool list_full() {
    const std::size_t bytes = am::queued_bytes();
    return bytes >= kListBatch || 2'700 * am::queued_pieces() + bytes / 48 >= kListCopyNs;
}

// VKSHMEM_DEVICE_WAIT_POLLS=0. lavapipe ends every loop after 65,535 iterations, so a wait there
// has 60,000 polls with a long back-off (about 100 ms). A GPU's polls are short, and a host write
// that a GPU's cache already holds reaches a polling shader only about 13 ms later (NVIDIA, DESIGN
// §1): a million polls is far above that and below the time a driver lets a kernel run.
std::int64_t default_wait_polls(const VulkanDevice& dev) {
    return dev.report().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? 60000 : 1000000;
}

// The proxy's nap on a CPU device while a dispatch runs and nothing came for `idle`: an eighth of
// that, from g_state.proxy_nap_ns (20 us) to 1 ms, so a request waits at most an eighth longer than
// the quiet before it. The shaders share the proxy's CPUs: waking every 20 us through a lavapipe
// compile of minutes took 40 % of a CPU from it; a shader's wait there lasts about 100 ms.
long cpu_device_nap_ns(std::chrono::steady_clock::duration idle) {
    const long ns = static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(idle).count() / 8);
    return std::clamp(ns, g_state.proxy_nap_ns, 1'000'000L);
}
} // namespace

Proxy::Layout Proxy::layout(int n) {
    Layout L{};
    L.state = 0;
    L.peers = align_up(sizeof(vkshmem_state_layout), 64);
    L.ring = align_up(L.peers + sizeof(vkshmem_peer_layout) * static_cast<std::size_t>(n), 64);
    L.requests = align_up(L.ring + sizeof(vkshmem_ring_layout), 64);
    L.payload = align_up(L.requests + sizeof(vkshmem_request_layout) * VKSHMEM_RING_SLOTS, 256);
    L.hlsl_map = L.payload + std::size_t(VKSHMEM_RING_SLOTS) * VKSHMEM_RING_PAYLOAD_BYTES;
    L.mailboxes = align_up(L.hlsl_map + sizeof(std::uint32_t) * 2 * static_cast<std::size_t>(n), 16);
    L.teams = align_up(L.mailboxes + sizeof(vkshmem_mailbox_entry) * static_cast<std::size_t>(n), 64);
    L.team_stride = sizeof(vkshmem_team_layout) + align_up(sizeof(std::int32_t) * static_cast<std::size_t>(n), 64);
    L.total = L.teams + L.team_stride * kMaxTeams;
    return L;
}

Result<std::unique_ptr<Proxy>> Proxy::create(const Config& cfg, VulkanDevice& dev, SymmetricMemory& mem) {
    std::unique_ptr<Proxy> p(new Proxy(dev, mem));
    const int n = g_state.n_pes;
    p->at_ = layout(n);
    const Layout& L = p->at_;
    // The block in the runtime's part of the host heap, where node-local peers map it and their
    // devices copy from it (their proxies take shaders' bulk puts straight from the ring: am::queue_put);
    // in an allocation of its own where this device has not imported the host heap.
    const DeviceMemory* heap = mem.shader_memory(g_state.my_pe, kHostHeap);
    if (heap && heap->buffer && heap->address && mem.proxy_offset() &&
        mem.proxy_offset() + L.total <= g_state.space[kHostHeap].size) {
        p->block_ = *heap;
        p->block_at_ = mem.proxy_offset();
        p->block_owned_ = false;
        p->block_.address += p->block_at_;
        p->block_.mapped = reinterpret_cast<char*>(g_state.space[kHostHeap].lo) + p->block_at_; // a memfd: zero
        p->block_.size = L.total;
    } else {
        auto block = dev.allocate_mapped(L.total, VulkanDevice::MappedUse::HostReads);
        if (!block) return make_error(fmt::format("device state block: {}", block.error().message));
        p->block_ = *block;
        std::memset(p->block_.mapped, 0, L.total);
    }
    p->base_ = static_cast<char*>(p->block_.mapped);
    const std::uint64_t a = p->block_.address;

    auto* st = reinterpret_cast<vkshmem_state_layout*>(p->base_ + L.state);
    st->magic = VKSHMEM_ABI_MAGIC;
    st->version = VKSHMEM_ABI_VERSION;
    st->my_pe = g_state.my_pe;
    st->n_pes = n;
    st->host_base = mem.device_address(g_state.my_pe, kHostHeap);
    st->host_size = st->host_base ? g_state.space[kHostHeap].size : 0;
    st->device_base = mem.device_address(g_state.my_pe, kDeviceHeap);
    st->device_size = st->device_base ? g_state.space[kDeviceHeap].size : 0;
    st->peers = a + L.peers;
    st->ring = a + L.ring;
    const bool host_amo_proxy = cfg.VKSHMEM_HOST_AMO_ROUTE == HostAmoRoute::Proxy ||
                                (cfg.VKSHMEM_HOST_AMO_ROUTE == HostAmoRoute::Auto && mem.node_has_other_gpus());
    st->flags = (cfg.VKSHMEM_FORCE_PROXY ? VKSHMEM_FLAG_FORCE_PROXY : 0) |
                (host_amo_proxy ? VKSHMEM_FLAG_HOST_AMO_PROXY : 0);
    st->wait_polls = static_cast<std::uint32_t>(std::clamp<std::int64_t>(
        cfg.VKSHMEM_DEVICE_WAIT_POLLS > 0 ? cfg.VKSHMEM_DEVICE_WAIT_POLLS : default_wait_polls(dev), 1, UINT32_MAX));
    auto* peers = reinterpret_cast<vkshmem_peer_layout*>(p->base_ + L.peers);
    // A host heap of a PE on another GPU goes through the proxy (SymmetricMemory::on_other_gpu).
    for (int pe = 0; pe < n; ++pe) {
        peers[pe].host_base = mem.on_other_gpu(pe) ? 0 : mem.device_address(pe, kHostHeap);
        peers[pe].device_base = mem.device_address(pe, kDeviceHeap);
    }
    auto* ring = reinterpret_cast<vkshmem_ring_layout*>(p->base_ + L.ring);
    ring->slots = VKSHMEM_RING_SLOTS;
    ring->payload_bytes = VKSHMEM_RING_PAYLOAD_BYTES;
    ring->requests = a + L.requests;
    ring->payload = a + L.payload;
    // The AMO mailboxes this device's kernels carry out: this PE's, then
    // those of the PEs that share its GPU and their mailboxes.
    const VulkanDevice::AmoMailbox own = dev.amo_mailbox();
    if (own.request) {
        auto* mb = reinterpret_cast<vkshmem_mailbox_entry*>(p->base_ + L.mailboxes);
        std::uint32_t k = 0;
        mb[k++] = {own.request, own.claim, own.reply, g_state.my_pe, 0};
        for (int pe = 0; pe < n && mem.mailboxes_shared(); ++pe) {
            const std::uint64_t req = mem.mailbox_request(pe), reply = mem.mailbox_reply(pe);
            if (pe == g_state.my_pe || !req || !reply) continue;
            mb[k++] = {req, req + offsetof(vkshmem_mailbox_layout, taken), reply, pe, 0};
        }
        ring->mailboxes = a + L.mailboxes;
        ring->n_mailboxes = k;
    }
    // completed and the answers again where a running shader sees host
    // writes at once (vkshmem_ring_layout); without such memory, shaders read
    // them above.
    static_assert(VKSHMEM_RING_BUSY_AT + 4 * VKSHMEM_RING_SLOTS <= VKSHMEM_RING_MAILBOXES_AT &&
                  VKSHMEM_RING_MAILBOXES_AT < kAnswersAt);
    const std::size_t answers_bytes = kAnswersAt + std::size_t(VKSHMEM_RING_SLOTS) * VKSHMEM_RING_PAYLOAD_BYTES;
    if (auto ans = dev.allocate_mapped(answers_bytes, VulkanDevice::MappedUse::ShaderReads)) {
        p->answers_ = *ans;
        p->ans_ = static_cast<char*>(p->answers_.mapped);
        std::memset(p->ans_, 0, answers_bytes);
        ring->completed_at = p->answers_.address;
        ring->answers = p->answers_.address + kAnswersAt;
        // The mailbox entries again in device memory: every waiting subgroup reads them at each
        // poll, which in host memory is a read across the bus per poll.
        const std::size_t mb_bytes = sizeof(vkshmem_mailbox_entry) * ring->n_mailboxes;
        if (ring->n_mailboxes && VKSHMEM_RING_MAILBOXES_AT + mb_bytes <= kAnswersAt) {
            std::memcpy(p->ans_ + VKSHMEM_RING_MAILBOXES_AT, p->base_ + L.mailboxes, mb_bytes);
            ring->local_mailboxes = 1;
        }
    } else {
        VKSHMEM_DEBUG("proxy: answers in host memory: {}", ans.error().message);
    }
    // The HLSL library reaches this block and the heaps through descriptors.
    // A device heap's bindings reach the shared AMO mailbox after it too.
    std::vector<ShaderDescriptors::Heap> heaps(2 * static_cast<std::size_t>(n));
    for (int pe = 0; pe < n; ++pe)
        for (Space s : {kHostHeap, kDeviceHeap})
            if (const DeviceMemory* m = mem.shader_memory(pe, s); m && !(s == kHostHeap && mem.on_other_gpu(pe))) {
                const std::size_t tail = s == kDeviceHeap && mem.mailbox_request(pe) ? mem.mailbox_tail() : 0;
                heaps[static_cast<std::size_t>(pe * 2 + (s == kHostHeap ? 0 : 1))] = {m->buffer,
                                                                                      mem.heap_size(s) + tail};
            }
    const ShaderDescriptors::Heap answers{p->ans_ ? p->answers_.buffer : VK_NULL_HANDLE, answers_bytes};
    const ShaderDescriptors::Heap mailbox{own.claimed_buffer, sizeof(vkshmem_mailbox_layout), own.claimed_offset};
    const ShaderDescriptors::Heap reply{own.reply_buffer, sizeof(vkshmem_mailbox_reply), own.reply_offset};
    // The head of this block again, with the heap map after it, where the HLSL library's setup and
    // route lookups read it without crossing the bus (filled below, once the head is complete):
    // on an H200 the setup of 1024 workgroups took 0.17-0.23 ms reading it from host memory, 0.05 ms
    // from this copy. The GLSL library reads mirror_ instead.
    const std::size_t map_bytes = sizeof(std::uint32_t) * 2 * static_cast<std::size_t>(n);
    if (auto h = dev.allocate_mapped(L.requests + map_bytes, VulkanDevice::MappedUse::ShaderReads)) p->head_ = *h;
    else VKSHMEM_DEBUG("proxy: the HLSL library reads the state block in host memory: {}", h.error().message);
    const ShaderDescriptors::Heap head{p->head_.buffer, L.requests + map_bytes};
    auto descriptors = ShaderDescriptors::create(dev, {p->block_.buffer, L.total, p->block_at_}, answers, mailbox,
                                                 reply, head, heaps, g_state.my_pe);
    if (!descriptors) return make_error(fmt::format("HLSL descriptor set: {}", descriptors.error().message));
    p->descriptors_ = std::move(*descriptors);
    st->self = a;
    st->hlsl_seg_shift = p->descriptors_->seg_shift();
    st->hlsl_map = static_cast<std::uint32_t>(L.hlsl_map);
    st->teams = a + L.teams;
    st->team_stride = static_cast<std::uint32_t>(L.team_stride);
    st->n_teams = kMaxTeams;
    std::memcpy(p->base_ + L.hlsl_map, p->descriptors_->map().data(), map_bytes);
    // The team records again where a GPU reads them without crossing the bus (the state block is
    // host memory, which the proxy reads): the GLSL library's collectives read and update them
    // there. Without such memory, shaders use the state block's.
    if (auto t = dev.allocate_mapped(L.team_stride * kMaxTeams, VulkanDevice::MappedUse::ShaderReads)) {
        p->teams_local_ = *t;
        p->teams_base_ = static_cast<char*>(p->teams_local_.mapped);
        std::memset(p->teams_base_, 0, L.team_stride * kMaxTeams);
        st->teams_local = p->teams_local_.address;
    }
    // The recorded operations' own copy of the state block: their errors, which no dispatch call
    // reports, are the thread's to report (check_cmd_error).
    auto cmd = dev.allocate_mapped(256, VulkanDevice::MappedUse::HostReads);
    if (!cmd) return make_error(fmt::format("the queue-ordered operations' state block: {}", cmd.error().message));
    p->cmd_block_ = *cmd;
    p->cmd_base_ = static_cast<char*>(p->cmd_block_.mapped);
    std::memset(p->cmd_base_, 0, 256);
    std::memcpy(p->cmd_base_, st, sizeof *st);
    reinterpret_cast<vkshmem_state_layout*>(p->cmd_base_)->self = p->cmd_block_.address;
    // The read-only head of the block (state, peer table, ring layout) again in device-local
    // memory, which vkshmemx_device_state() then gives: every workgroup's vkshmem_init and every
    // route lookup read it, which in host memory is a read across the bus in each workgroup. Its
    // `self` still names the host block, where shaders record errors. The recorded operations'
    // block reads the table and the layout there too.
    if (p->ans_) {
        if (auto m = dev.allocate_mapped(L.requests, VulkanDevice::MappedUse::ShaderReads)) {
            p->mirror_ = *m;
            char* mb = static_cast<char*>(p->mirror_.mapped);
            std::memcpy(mb, p->base_, L.requests);
            for (char* b : {mb + L.state, p->cmd_base_}) {
                auto* s = reinterpret_cast<vkshmem_state_layout*>(b);
                s->peers = p->mirror_.address + L.peers;
                s->ring = p->mirror_.address + L.ring;
            }
        } else {
            VKSHMEM_DEBUG("proxy: the state block only in host memory: {}", m.error().message);
        }
    }
    if (p->head_.mapped) {
        char* hb = static_cast<char*>(p->head_.mapped);
        std::memcpy(hb, p->base_, L.requests);
        std::memcpy(hb + L.requests, p->base_ + L.hlsl_map, map_bytes);
        reinterpret_cast<vkshmem_state_layout*>(hb + L.state)->hlsl_map = static_cast<std::uint32_t>(L.requests);
    }
    if (auto stream = dev.copy_stream()) p->stream_ = std::move(*stream);
    else VKSHMEM_DEBUG("proxy: puts by device copy wait for each batch: {}", stream.error().message);
    std::atomic_thread_fence(std::memory_order_release);
    p->thread_ = std::thread([raw = p.get()] { raw->run(); });
    // (Not on a CPU driver: its copies run on the CPUs the application computes on, and looking at
    // the batch every 10 us took time from 3 PEs on 2 CPUs: spmd_nbi over device copies at 3 PEs
    // ran 1.08-1.16 s instead of 0.84-0.97.)
    if (!dev.is_cpu()) dev.set_nbi_starter([raw = p.get()] { raw->inbox_.wake(); });
    return p;
}

void Proxy::dispatch_begin() {
    begin_ = std::chrono::steady_clock::now();
    served_at_begin_ = served_.load(std::memory_order_relaxed);
    settles_at_begin_ = settles_.load(std::memory_order_relaxed);
    settle_ns_at_begin_ = settle_ns_.load(std::memory_order_relaxed);
    busy_ns_at_begin_ = busy_ns_.load(std::memory_order_relaxed);
    runs_at_begin_ = runs_.load(std::memory_order_relaxed);
    launches_at_begin_ = launches_.load(std::memory_order_relaxed);
    launch_ns_at_begin_ = launch_ns_.load(std::memory_order_relaxed);
    lists_posted_at_begin_ = lists_posted_.load(std::memory_order_relaxed);
    active_.fetch_add(1, std::memory_order_seq_cst);
    inbox_.wake();
}

bool Proxy::dispatch_end(int timeout_ms) {
    // The shaders are done: what they published is in the ring, and their
    // dispatch is complete only once the proxy has carried it out.
    const auto head = ans_ ? at<std::uint32_t>(ans_, VKSHMEM_RING_HEAD_AT)
                           : at<std::uint32_t>(base_, at_.ring + offsetof(vkshmem_ring_layout, head));
    const auto completed = at<std::uint32_t>(base_, at_.ring + offsetof(vkshmem_ring_layout, completed));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    bool ok = true;
    while (static_cast<std::int32_t>(head.load(std::memory_order_acquire) -
                                     completed.load(std::memory_order_acquire)) > 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ok = false;
            break;
        }
        proxy_pause();
    }
    active_.fetch_sub(1, std::memory_order_acq_rel);
    if (log_enabled(LogLevel::Debug)) {
        using namespace std::chrono;
        const auto ns = [](steady_clock::time_point t) {
            return duration_cast<nanoseconds>(t.time_since_epoch()).count();
        };
        const std::uint64_t n = served_.load(std::memory_order_relaxed) - served_at_begin_;
        VKSHMEM_DEBUG("proxy: a dispatch of {:.3f} ms: head {}, completed {}; {} requests in {} runs served{} (busy "
                      "{:.3f} ms); {} batches of puts settled in {:.3f} ms; {} batches of copies launched in {:.3f} ms; "
                      "{} lists posted",
                      (ns(steady_clock::now()) - ns(begin_)) / 1e6, head.load(std::memory_order_relaxed),
                      completed.load(std::memory_order_relaxed), n,
                      runs_.load(std::memory_order_relaxed) - runs_at_begin_,
                      n ? fmt::format(", the last {:.3f} ms after its start",
                                      (last_served_ns_.load(std::memory_order_relaxed) - ns(begin_)) / 1e6)
                        : std::string(),
                      (busy_ns_.load(std::memory_order_relaxed) - busy_ns_at_begin_) / 1e6,
                      settles_.load(std::memory_order_relaxed) - settles_at_begin_,
                      (settle_ns_.load(std::memory_order_relaxed) - settle_ns_at_begin_) / 1e6,
                      launches_.load(std::memory_order_relaxed) - launches_at_begin_,
                      (launch_ns_.load(std::memory_order_relaxed) - launch_ns_at_begin_) / 1e6,
                      lists_posted_.load(std::memory_order_relaxed) - lists_posted_at_begin_);
    }
    return ok;
}

Proxy::~Proxy() {
    dev_.set_nbi_starter({});
    stop_.store(true, std::memory_order_release);
    inbox_.wake();
    if (thread_.joinable()) thread_.join();
    stream_.reset();
    descriptors_.reset();
    if (block_owned_) dev_.release(block_);
    if (cmd_base_) dev_.release(cmd_block_);
    if (teams_base_) dev_.release(teams_local_);
    if (ans_) dev_.release(answers_);
    if (mirror_.mapped) dev_.release(mirror_);
    if (head_.mapped) dev_.release(head_);
}

void Proxy::publish_team(int slot, int me, const std::vector<int>& members, std::uint64_t sync, std::uint64_t scratch,
                         std::uint32_t scratch_bytes) {
    const std::size_t off = static_cast<std::size_t>(slot) * at_.team_stride;
    // The state block's record (the handle, and the HLSL library's), then the device-local copy.
    for (auto [base, address] : {std::pair{base_ + at_.teams, block_.address + at_.teams},
                                 std::pair{teams_base_, teams_local_.address}}) {
        if (!base) continue;
        char* rec = base + off;
        auto* t = reinterpret_cast<vkshmem_team_layout*>(rec);
        std::memcpy(rec + sizeof(vkshmem_team_layout), members.data(), sizeof(std::int32_t) * members.size());
        t->size = static_cast<std::int32_t>(members.size());
        t->me = me;
        t->slot = slot;
        t->sync = sync;
        t->scratch = scratch;
        t->scratch_bytes = scratch_bytes;
        t->busy = 0;
        t->reserved0 = 0;
        t->reserved1 = 0;
        t->pes = address + off + sizeof(vkshmem_team_layout);
        std::atomic_ref<std::uint32_t>(t->live).store(VKSHMEM_TEAM_LIVE, std::memory_order_release);
    }
}

void Proxy::retire_team(int slot) {
    const std::size_t off = static_cast<std::size_t>(slot) * at_.team_stride;
    for (char* base : {base_ + at_.teams, teams_base_})
        if (base)
            std::atomic_ref<std::uint32_t>(reinterpret_cast<vkshmem_team_layout*>(base + off)->live)
                .store(0, std::memory_order_release);
}

std::uint64_t Proxy::team_address(int slot) {
    shaders_may_run();
    if (slot < 0 || slot >= kMaxTeams) return 0;
    const std::size_t off = at_.teams + static_cast<std::size_t>(slot) * at_.team_stride;
    auto* t = reinterpret_cast<vkshmem_team_layout*>(base_ + off);
    return std::atomic_ref<std::uint32_t>(t->live).load(std::memory_order_acquire) == VKSHMEM_TEAM_LIVE
               ? block_.address + off
               : 0;
}

const char* Proxy::device_error_text(std::uint32_t code) {
    switch (code) {
    case VKSHMEM_ERR_WAIT_TIMEOUT: return "a device-side wait exceeded its bound (VKSHMEM_DEVICE_WAIT_POLLS)";
    case VKSHMEM_ERR_BAD_PE: return "a shader named a PE that does not exist";
    case VKSHMEM_ERR_NOT_SYMMETRIC: return "a shader passed an address in neither symmetric heap";
    case VKSHMEM_ERR_PROXY_TIMEOUT: return "the proxy did not answer a shader within its bound";
    case VKSHMEM_ERR_TOO_LARGE: return "one shader operation was larger than the device library takes";
    case VKSHMEM_ERR_WG_SIZE:
        return "a workgroup (_wg) routine ran in a shader that declares its workgroup size after including "
               "vkshmem.glsl: put layout(local_size_x = ...) in; before the #include";
    case VKSHMEM_ERR_BAD_TEAM:
        return "a shader passed a team handle that is no live team of this PE (use SHMEM_TEAM_WORLD, "
               "SHMEM_TEAM_SHARED or vkshmemx_team_device(team) of a team this PE belongs to)";
    case VKSHMEM_ERR_COLL_BUSY:
        return "two invocations or workgroups of this PE ran collectives on one team at the same time: one "
               "invocation (or one workgroup, for _wg forms) per PE and team may (shaders/README.md)";
    case VKSHMEM_ERR_BAD_ROOT: return "a shader's broadcast named a root outside the team";
    default: return "unknown device-side error";
    }
}

void Proxy::check_cmd_error() {
    // The recorded operations' errors always; the main block's (kernels the application recorded
    // with vkshmemx_kernel_record or its own pipelines) while no vkshmemx_dispatch runs, which
    // takes its own before it ends (the second look at active_ keeps a dispatch that began
    // meanwhile from losing its error here).
    for (char* base : {cmd_base_, base_}) {
        auto* st = reinterpret_cast<vkshmem_state_layout*>(base + (base == base_ ? at_.state : 0));
        if (base == base_ && active_.load(std::memory_order_acquire) > 0) continue;
        const std::uint32_t code = std::atomic_ref<std::uint32_t>(st->error).load(std::memory_order_acquire);
        if (!code || (base == base_ && active_.load(std::memory_order_acquire) > 0)) continue;
        const std::uint32_t info = std::atomic_ref<std::uint32_t>(st->error_info).load(std::memory_order_acquire);
        fatal(base == cmd_base_ ? "vkshmemx_cmd_*" : "a recorded kernel",
              "a device-side operation outside vkshmemx_dispatch failed: {} (code {}, detail {})",
              device_error_text(code), code, info);
    }
}

std::pair<std::uint32_t, std::uint32_t> Proxy::take_error() {
    const std::size_t e = at_.state + offsetof(vkshmem_state_layout, error);
    const std::size_t i = at_.state + offsetof(vkshmem_state_layout, error_info);
    std::uint32_t code = at<std::uint32_t>(base_, e).load(std::memory_order_acquire);
    std::uint32_t info = at<std::uint32_t>(base_, i).load(std::memory_order_acquire);
    if (code) {
        at<std::uint32_t>(base_, i).store(0, std::memory_order_relaxed);
        at<std::uint32_t>(base_, e).store(0, std::memory_order_release);
    }
    return {code, info};
}

void Proxy::run() {
    // Spin while a dispatch runs or work came in lately; otherwise sleep until
    // a peer's message, the next dispatch or a millisecond passes (for work
    // submitted by the application itself), so an idle PE costs next to
    // nothing (tests run 4 PEs on 2 cores).
    inbox_.bind_thread();
    precise_timers(); // its naps and sleeps are 20 us to 1 ms
    // Messages from PEs on other nodes ring no doorbell (they arrive by the
    // network transport): where there may be such — a network runs and this
    // PE's device heap is not one it registers (no CPU mapping) — linger
    // longer and wake more often, so their round trips are not a sleep long.
    const SpaceView& dh = g_state.space[kDeviceHeap];
    const bool remote = rma::g_subsystems.network && dh.size && dh.route[g_state.my_pe] != Route::Direct;
    const auto kLinger = std::chrono::microseconds(remote ? 2000 : 200);
    const int nap_us = remote ? 100 : 1000;
    constexpr int kHostOnlyNapUs = 50'000;
    auto last = std::chrono::steady_clock::now();
    unsigned idle = 0, runs = 0;
    const bool timed = log_enabled(LogLevel::Debug);
    while (!stop_.load(std::memory_order_acquire)) {
        check_cmd_error();
        const auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
        const bool served = serve_one();
        if (!served) flush();
        // Finished batches: between runs only now and then (a fence's status costs the driver's
        // time), always once nothing is published.
        if (!served || ++runs % 16 == 0) land(false);
        if (timed && served)
            busy_ns_.fetch_add(static_cast<std::uint64_t>(
                                   std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - t0)
                                       .count()),
                               std::memory_order_relaxed);
        if (inbox_.serve() || served) {
            idle = 0;
            continue;
        }
        const bool nbi_open = start_nbi_batch();
        if (idle++ == 0) last = std::chrono::steady_clock::now();
        if (active_.load(std::memory_order_acquire) > 0 || !flights_.empty() || !lists_.empty() ||
            inbox_.answering() || std::chrono::steady_clock::now() - last < kLinger) {
            if (idle < 256) cpu_relax();
            else if (g_state.proxy_nap_ns > 0) nap(cpu_device_nap_ns(std::chrono::steady_clock::now() - last));
            else proxy_pause();
        } else if (nbi_open || std::chrono::steady_clock::now() - nbi_seen_ < kNbiLinger) {
            // Looks again at the application's batch in a while, not at every turn of a spin;
            // and for a while after one, as the next often follows (a stream of put_nbi and
            // quiet), whose first copy then need not wake this thread from its sleep.
            nap(kNbiLookNs);
        } else {
            // Before any shader can run (a host-only program) only a peer's message, which
            // rings the doorbell, brings work. A wake-up every millisecond took the core from a
            // spinning PE each time where PEs fill the CPUs (blocking 8-byte gets over UCX tcp,
            // 2 PEs on 2 CPUs, medians of 6 alternated runs: 11.15 us, 11.35 with them).
            inbox_.sleep(nap_us, active_, shaders_, remote ? nap_us : kHostOnlyNapUs);
        }
    }
    settle();
    inbox_.answer_lists(true);
}

bool Proxy::start_nbi_batch() {
    if (dev_.is_cpu() || !dev_.nbi_open()) return false;
    const auto now = std::chrono::steady_clock::now();
    nbi_seen_ = now;
    if (const std::uint64_t grown = dev_.nbi_grown(); grown != nbi_grown_) {
        nbi_grown_ = grown;
        nbi_grown_at_ = now;
        return true;
    }
    if (now - nbi_grown_at_ < kStartNbiAfter) return true;
    if (auto r = dev_.start_nbi(); !r)
        fatal("a non-blocking put or get (started by the proxy thread)", "{}", r.error().message);
    return false;
}

bool Proxy::serve_one() {
    const std::uint32_t first = next_;
    const std::size_t slot = first % VKSHMEM_RING_SLOTS;
    auto request = [&](std::uint32_t t) {
        return base_ + at_.requests + (t % VKSHMEM_RING_SLOTS) * sizeof(vkshmem_request_layout);
    };
    auto published = [&](std::uint32_t t) {
        return at<std::uint32_t>(request(t), offsetof(vkshmem_request_layout, ready)).load(std::memory_order_acquire) ==
               t + 1;
    };
    if (!published(first)) return false;
    cross_process_acquire(); // core/tsan.hpp
    vkshmem_request_layout run;
    std::memcpy(&run, request(first), sizeof run);
    // A bulk transfer of a shader arrives as payload-sized pieces to
    // consecutive addresses of one PE in consecutive tickets: the published
    // part of such a run (its payloads are contiguous while the slots do not
    // wrap) is carried out as one transfer, so a piece does not cost a copy
    // submission of its own where the target is reached by device copies.
    std::uint32_t n = 1;
    if (run.op == VKSHMEM_OP_PUT || run.op == VKSHMEM_OP_GET) {
        vkshmem_request_layout last = run;
        while (slot + n < VKSHMEM_RING_SLOTS && last.bytes == VKSHMEM_RING_PAYLOAD_BYTES &&
               last.op != VKSHMEM_OP_PUT_SIGNAL && published(first + n)) {
            vkshmem_request_layout r;
            std::memcpy(&r, request(first + n), sizeof r);
            const bool same_kind = r.op == run.op || (run.op == VKSHMEM_OP_PUT && r.op == VKSHMEM_OP_PUT_SIGNAL);
            if (!same_kind || r.pe != run.pe || r.target != last.target + last.bytes) break;
            run.bytes += r.bytes;
            if (r.op == VKSHMEM_OP_PUT_SIGNAL) { // the signal ends the run and follows all of its data
                run.op = r.op;
                run.operand = r.operand;
                run.cond = r.cond;
                run.amo_op = r.amo_op;
                run.width = r.width;
            }
            last = r;
            ++n;
        }
    }
    char* payload = base_ + at_.payload + slot * VKSHMEM_RING_PAYLOAD_BYTES;
    // A plain put is posted non-blocking and its tickets complete at the next settle(): the
    // puts of a shader's bulk transfer (pieces of many workgroups, seldom contiguous) then cost
    // one device copy submission per batch, not one each. Anything else first completes the
    // puts before it, which it may depend on (a get or AMO of the same data, a signal, a quiet).
    const bool defer = run.op == VKSHMEM_OP_PUT;
    if (!defer) settle();
    const DebugTimer timer;
    execute(&run, payload, defer);
    // (A diagnostic: a request that held the proxy up for long, and what it was.)
    if (const double ms = timer.over(std::chrono::milliseconds(100)))
        VKSHMEM_DEBUG("proxy: tickets {}..{} (op {}, {} bytes, PE {}) took {:.1f} ms", first, first + n - 1, run.op,
                      run.bytes, run.pe, ms);
    next_ = first + n;
    served_.fetch_add(n, std::memory_order_relaxed);
    runs_.fetch_add(1, std::memory_order_relaxed);
    if (log_enabled(LogLevel::Debug)) // (a clock read per run costs the proxy's rate)
        last_served_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now().time_since_epoch())
                                  .count(),
                              std::memory_order_relaxed);
    VKSHMEM_TRACE("proxy: tickets {}..{}: op {}, {} bytes, PE {}", first, first + n - 1, run.op, run.bytes, run.pe);
    if (defer) {
        deferring_ = true;
        deferred_ = first + n;
        // A full ring waits for these slots: complete them now rather than after the next poll.
        if (listing()) {
            // Lists for an owner's proxy go out without waiting for the owner (list_full), and
            // their answers complete their tickets (land); the ring fills up only with lists out.
            if (list_full()) post_list();
            while (deferred_ - completed_ >= VKSHMEM_RING_SLOTS / 4 * 3 && !lists_.empty()) land_list(true);
            if (deferred_ - completed_ >= VKSHMEM_RING_SLOTS / 2 && lists_.empty()) settle();
        } else if (unstreamed_ || listed_ || !stream_) {
            if (deferred_ - completed_ >= VKSHMEM_RING_SLOTS / 2 || am::queued_bytes() >= kListBatch) settle();
        } else if (stream_->open_bytes() >= kStreamBatch) {
            launch();
        }
        return true;
    }
    complete(first + n, run.op, slot, run.bytes);
    return true;
}

void Proxy::launch() {
    const bool timed = log_enabled(LogLevel::Debug);
    const auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    auto batch = stream_->submit();
    if (!batch) fatal("shader request (proxy)", "{}", batch.error().message);
    if (!*batch) return;
    flights_.push_back({*batch, deferred_});
    if (timed) {
        launches_.fetch_add(1, std::memory_order_relaxed);
        launch_ns_.fetch_add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                            std::chrono::steady_clock::now() - t0)
                                                            .count()),
                             std::memory_order_relaxed);
    }
}

void Proxy::post_list() {
    if (const auto seq = am::post_queue()) {
        lists_.push_back({*seq, deferred_});
        lists_posted_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    // Sent and answered, after the lists out, which it waited for.
    lists_.clear();
    complete(deferred_, VKSHMEM_OP_PUT, 0, 0);
}

void Proxy::land_list(bool wait) {
    std::uint32_t upto = completed_;
    for (; !lists_.empty() && am::list_done(static_cast<std::uint32_t>(lists_.front().batch), wait); lists_.pop_front()) {
        upto = lists_.front().upto;
        wait = false;
    }
    if (upto != completed_) complete(upto, VKSHMEM_OP_PUT, 0, 0);
    if (lists_.empty() && completed_ == deferred_ && !am::queued_bytes()) deferring_ = listed_ = false;
}

void Proxy::land(bool wait) {
    if (!lists_.empty()) land_list(wait);
    if (flights_.empty()) return;
    auto done = stream_->done(wait);
    if (!done) fatal("shader request (proxy)", "{}", done.error().message);
    std::uint32_t upto = completed_;
    for (; !flights_.empty() && flights_.front().batch <= *done; flights_.pop_front()) upto = flights_.front().upto;
    if (upto == completed_) return;
    complete(upto, VKSHMEM_OP_PUT, 0, 0);
    if (upto == deferred_ && !stream_->open_bytes()) deferring_ = false;
}

void Proxy::flush() {
    if (!deferring_) return;
    // Runs of a bulk transfer queued for an owner's proxy wait a little for more: each list costs
    // the owner a copy submission. (A lone small put goes at once.)
    if (const std::size_t q = am::queued_bytes(); q >= VKSHMEM_RING_PAYLOAD_BYTES && !list_full()) {
        const auto now = std::chrono::steady_clock::now();
        if (q != queued_seen_) {
            queued_seen_ = q;
            queued_since_ = now;
        }
        if (now - queued_since_ < kListIdle) return;
    }
    // Puts of other routes: one batch (a copy submission for those that need one) and a wait.
    if (listing()) {
        if (am::queued_bytes()) post_list();
    } else if (unstreamed_ || listed_ || !stream_) {
        settle();
    } else if (stream_->open_bytes()) {
        launch();
    }
}

void Proxy::settle() {
    if (!deferring_) return;
    deferring_ = false;
    unstreamed_ = listed_ = false;
    lists_.clear(); // (the quiet below waits for them)
    const auto t0 = std::chrono::steady_clock::now();
    if (stream_) {
        launch();
        if (auto done = stream_->done(true); !done) fatal("shader request (proxy)", "{}", done.error().message);
        flights_.clear();
    }
    rma::quiet("shader request (proxy)"); // (and the puts queued for owners' proxies)
    complete(deferred_, VKSHMEM_OP_PUT, 0, 0);
    settles_.fetch_add(1, std::memory_order_relaxed);
    settle_ns_.fetch_add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                        std::chrono::steady_clock::now() - t0)
                                                        .count()),
                         std::memory_order_relaxed);
}

void Proxy::complete(std::uint32_t upto, std::uint32_t op, std::size_t slot, std::size_t bytes) {
    completed_ = upto;
    at<std::uint32_t>(base_, at_.ring + offsetof(vkshmem_ring_layout, completed)).store(upto, std::memory_order_release);
    if (ans_) {
        if (op == VKSHMEM_OP_GET || op == VKSHMEM_OP_AMO)
            std::memcpy(ans_ + kAnswersAt + slot * VKSHMEM_RING_PAYLOAD_BYTES,
                        base_ + at_.payload + slot * VKSHMEM_RING_PAYLOAD_BYTES,
                        op == VKSHMEM_OP_GET ? bytes : sizeof(std::uint64_t));
        // The answers before `completed`: the mapping is write-combined, whose
        // stores a release store does not order; a full fence does.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        at<std::uint32_t>(ans_, 0).store(upto, std::memory_order_release);
        std::atomic_thread_fence(std::memory_order_seq_cst); // and out of the write-combining buffer now
    }
    cross_process_release();
}

bool Proxy::put_by_copy(int pe, char* target, char* payload, std::size_t n) {
    // A target that only device copies reach (a same-GPU peer's device heap, which no CPU maps;
    // a BAR beyond VKSHMEM_BAR_PUT_MAX): one region of the batch, straight from the ring's
    // payload, which the device reads where the shader wrote it (no CPU copy into staging).
    // A host heap that this GPU has imported takes the long runs of bulk puts the same way
    // (kStreamHostFrom): copied by this thread they set the pace (an H200, 64 MiB into this PE's
    // host heap: the proxy busy for 90-97 % of the dispatch at 6.6 GB/s), where a copy engine runs
    // beside it. Short runs stay CPU copies: at 16 MiB, whose runs are mostly of 1-2 pieces,
    // streaming every piece cost a third of the rate (4.5-6.7 GB/s against 7.7-10).
    // Not on a CPU device, whose copies this CPU would make all the same, nor into the host heap of
    // a PE on another GPU (as for its shaders, which do not reach it directly either).
    const int s = space_of(target);
    if (s < 0 || !block_.buffer) return false;
    const Route route = g_state.space[s].route[pe];
    const DeviceMemory* m = nullptr;
    bool host = false;
    if (route == Route::None || (route == Route::BarWrite && n > g_state.bar_put_max)) {
        m = mem_.device_memory(pe, static_cast<Space>(s));
    } else if (s == kHostHeap && stream_ && !dev_.is_cpu() && !mem_.on_other_gpu(pe) &&
               (n >= kStreamHostFrom ||
                (n >= VKSHMEM_RING_PAYLOAD_BYTES && (stream_->open_bytes() || !flights_.empty())))) {
        m = mem_.shader_memory(pe, kHostHeap);
        host = true;
    }
    if (!m || !m->buffer) return false;
    const std::size_t off = reinterpret_cast<std::uintptr_t>(target) - g_state.space[s].lo;
    const std::size_t from = block_at_ + static_cast<std::size_t>(payload - base_); // in block_'s buffer
    if (listed_) settle(); // (the batches' tickets complete in order, after the lists')
    if (stream_) stream_->add(*m, off, block_, from, n, host);
    else if (auto r = dev_.copy_nbi(*m, off, block_, from, n); !r)
        fatal("shader request (proxy)", "{}", r.error().message);
    return true;
}

char* Proxy::host_address(std::uint64_t addr, const char* call) const {
    for (Space s : {kHostHeap, kDeviceHeap}) {
        const std::uint64_t base = mem_.device_address(g_state.my_pe, s);
        if (base && addr >= base && addr - base < g_state.space[s].size)
            return reinterpret_cast<char*>(g_state.space[s].lo) + (addr - base);
    }
    fatal(call, "a shader passed device address {:#x}, which is in neither heap of PE {}", addr, g_state.my_pe);
}

void Proxy::execute(const void* request, char* payload, bool nbi) {
    vkshmem_request_layout r;
    std::memcpy(&r, request, sizeof r);
    static constexpr const char* call = "shader request (proxy)";
    char* target = host_address(r.target, call);
    switch (r.op) {
    case VKSHMEM_OP_PUT:
    case VKSHMEM_OP_PUT_SIGNAL:
        if (nbi && put_by_copy(r.pe, target, payload, r.bytes)) break;
        // Another route to the same target (a small put by CPU stores into a BAR whose large puts
        // are copies) must not land before the copies served earlier.
        if (stream_ && (stream_->open_bytes() || !flights_.empty())) settle();
        if (nbi) {
            // Queued for an owner's proxy (listed_), or any other route (unstreamed_).
            const std::uint64_t queued = am::queued_count();
            rma::put_nbi(reinterpret_cast<unsigned char*>(target), reinterpret_cast<unsigned char*>(payload), r.bytes,
                         r.pe, call);
            (am::queued_count() != queued ? listed_ : unstreamed_) = true;
        } else
            rma::put(reinterpret_cast<unsigned char*>(target), reinterpret_cast<unsigned char*>(payload), r.bytes,
                     r.pe, call);
        if (r.op == VKSHMEM_OP_PUT_SIGNAL) {
            // put_signal: the data is delivered before the signal.
            std::atomic_thread_fence(std::memory_order_seq_cst);
            auto* sig = reinterpret_cast<std::uint64_t*>(host_address(r.cond, call));
            if (r.amo_op == VKSHMEM_SIGNAL_ADD) rma::atomic_add(sig, r.operand, r.pe, call);
            else rma::atomic_set(sig, r.operand, r.pe, call);
        }
        break;
    case VKSHMEM_OP_GET:
        rma::get(reinterpret_cast<unsigned char*>(payload), reinterpret_cast<unsigned char*>(target), r.bytes, r.pe,
                 call);
        break;
    case VKSHMEM_OP_AMO: {
        using rma::detail::AmoOp;
        const auto op = static_cast<AmoOp>(r.amo_op);
        std::uint64_t old = 0;
        if (r.width == 4) {
            old = rma::detail::amo(reinterpret_cast<std::uint32_t*>(target), op, static_cast<std::uint32_t>(r.operand),
                                   static_cast<std::uint32_t>(r.cond), r.pe, call);
        } else {
            old = rma::detail::amo(reinterpret_cast<std::uint64_t*>(target), op, r.operand, r.cond, r.pe, call);
        }
        std::memcpy(payload, &old, sizeof old);
        break;
    }
    case VKSHMEM_OP_QUIET: break;
    default: fatal(call, "unknown request op {} from a shader", r.op);
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

} // namespace vkshmem
