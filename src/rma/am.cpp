// SPDX-License-Identifier: BSL-1.0
#include "rma/am.hpp"

#include "core/log.hpp"
#include "core/wait.hpp"
#include "memory/symmetric.hpp"
#include "rma/rma.hpp"
#include "transports/transport.hpp"
#include "vulkan/device.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <deque>
#include <linux/futex.h>
#include <type_traits>
#include <sys/syscall.h>
#include <unistd.h>

namespace vkshmem::am {
namespace {

InternalArea* area(int pe) { return reinterpret_cast<InternalArea*>(g_state.space[kHostHeap].peer[pe]); }

template <class T> std::atomic_ref<T> ref(T& v) { return std::atomic_ref<T>(v); }

// The futex words live in memory several processes map, so the shared (not
// the _PRIVATE) operations.
void futex_wait(std::uint32_t* word, std::uint32_t seen, int us) {
    timespec ts{us / 1000000, (us % 1000000) * 1000L};
    syscall(SYS_futex, word, FUTEX_WAIT, seen, &ts, nullptr, 0);
}
void futex_wake(std::uint32_t* word) { syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0); }

thread_local Inbox* tls_server = nullptr;
std::mutex g_app_channel; // channel 0: the application's threads, one at a time
std::uint32_t g_seq[kAmChannels];

constexpr const char* kCall = "active message (proxy)";

// queue_put's and queue_get's queues, one per channel: the application threads' under
// g_app_channel (g_queued says whether it holds any, for quiets that need not take the lock), the
// proxy thread's its own. A channel's staging area holds the bytes that are not in the host heap
// (kQueueData), then the list. A queue holds puts or gets (`gets`); a get staged has a readback.
struct Queue {
    struct Readback {
        void* dst;
        std::size_t at, n;
    };
    std::vector<AmPiece> list;
    std::vector<Readback> readbacks;
    int pe = -1, space = -1;
    bool gets = false;
    std::size_t staged = 0, bytes = 0;
    std::uint64_t count = 0; // puts and gets queued so far
};
Queue g_queue[kAmChannels];
std::atomic<bool> g_queued{false};
constexpr std::size_t kQueueData = kAmStagingBytes / 4 * 3;
constexpr std::size_t kQueueMax = (kAmStagingBytes - kQueueData) / sizeof(AmPiece);

// The proxy thread's lists out (post_queue), oldest first, all to one PE. Each lies in a buffer of
// its own in the channel's staging area: the list's usual place, or a part of the data area below
// it, which no staged bytes use while a list is out (queue waits for the lists first).
struct Posted {
    std::uint32_t seq;
    int pe, buffer;
};
std::deque<Posted> g_posted;
constexpr std::size_t kListBytes = kAmStagingBytes - kQueueData;
constexpr std::size_t list_buffer(int b) { return b == 0 ? kQueueData : static_cast<std::size_t>(b - 1) * kListBytes; }
static_assert(list_buffer(kPostedLists - 1) + kListBytes <= kQueueData, "posted lists fit in the data area");
// Whether reply channel `done` says message `seq` was answered (answers come in order).
bool answered_by(std::uint32_t done, std::uint32_t seq) { return static_cast<std::int32_t>(done - seq) >= 0; }

// The network transport when `pe`'s host heap is reached through it (a PE on
// another node, or VKSHMEM_FORCE_NETWORK=1): then the inbox, the reply channel
// and a message's data are read and written with the transport's operations
// on the same offsets of that host heap, where the InternalArea sits.
net::Transport* net_to(int pe) {
    return g_state.space[kHostHeap].route[pe] == Route::Network ? rma::g_subsystems.network : nullptr;
}
template <class T> T ok(Result<T> r) {
    if (!r) fatal(kCall, "{}", r.error().message);
    if constexpr (!std::is_void_v<T>) return *r;
}
constexpr std::uint64_t kInboxAt = offsetof(InternalArea, inbox);
constexpr std::uint64_t slot_at(std::uint64_t ticket) {
    return kInboxAt + offsetof(AmInbox, slots) + ticket % kAmSlots * sizeof(AmSlot);
}
constexpr std::uint64_t channel_at(int channel) {
    return offsetof(InternalArea, channel) + static_cast<std::uint64_t>(channel) * sizeof(AmChannel);
}
} // namespace

Sender::Sender() : channel_(tls_server ? 1 : 0), serving_(tls_server) {
    if (!serving_) lock_ = std::unique_lock(g_app_channel);
}

char* Sender::staging() const {
    return g_state.space[kHostHeap].peer[g_state.my_pe] + staging_offset();
}
std::uint64_t Sender::staging_offset() const {
    return kAmStagingAt + static_cast<std::uint64_t>(channel_) * kAmStagingBytes;
}

void Sender::send(int pe, AmSlot& m, bool wait) {
    // The application's queued puts or gets go first: they came before this message.
    const auto op = static_cast<AmOp>(m.op);
    if (op != AmOp::PutList && op != AmOp::GetList && !g_queue[channel_].list.empty()) send_queue();
    // The lists out first: their answers come to the same reply channel, and another PE may answer
    // this message before they are.
    if (wait && channel_ == 1 && !g_posted.empty()) list_done(g_posted.back().seq, true);
    AmChannel& reply = area(g_state.my_pe)->channel[channel_];
    m.from = g_state.my_pe;
    m.channel = static_cast<std::uint8_t>(channel_);
    m.seq = ++g_seq[channel_];
    // Serving our own inbox while we wait: a peer's proxy may be waiting on
    // ours just as we wait on it.
    auto serve_own = [this] {
        if (serving_) serving_->serve();
    };
    auto answered = [&] {
        if (ref(reply.done).load(std::memory_order_acquire) == m.seq) return true;
        serve_own();
        return false;
    };
    if (net::Transport* net = net_to(pe)) {
        // The same steps through the network; no doorbell rings, so the
        // peer's proxy finds the message when it next looks (every 100 µs
        // while idle, proxy.cpp).
        const std::uint64_t t = ok(net->amo(pe, kHostHeap, kInboxAt + offsetof(AmInbox, tail), net::AmoOp::Add, 8, 1,
                                            0, true));
        const std::uint64_t at = slot_at(t), free_state = t / kAmSlots * 2;
        // The state word is read and written with the transport's atomics,
        // as the owner's proxy reads and writes it with the CPU's.
        wait_for_proxy([&] {
            if (ok(net->amo(pe, kHostHeap, at, net::AmoOp::Fetch, 8, 0, 0, true)) == free_state) return true;
            serve_own();
            return false;
        });
        ok(net->put(pe, kHostHeap, at + sizeof m.state, reinterpret_cast<const char*>(&m) + sizeof m.state,
                    sizeof m - sizeof m.state));
        // The message before its state (a fence orders them; nothing need complete before the
        // next step), and the state from free_state to free_state + 1 by a non-fetching add,
        // which does not wait for a reply: the answer says it arrived.
        ok(net->fence());
        ok(net->amo(pe, kHostHeap, at, net::AmoOp::Add, 8, 1, 0, false));
        wait_for_proxy(answered);
        return;
    }
    AmInbox& in = area(pe)->inbox;
    const std::uint64_t t = ref(in.tail).fetch_add(1, std::memory_order_relaxed);
    AmSlot& slot = in.slots[t % kAmSlots];
    const std::uint64_t free_state = t / kAmSlots * 2;
    wait_for_proxy([&] {
        if (ref(slot.state).load(std::memory_order_acquire) == free_state) return true;
        serve_own();
        return false;
    });
    std::memcpy(reinterpret_cast<char*>(&slot) + sizeof slot.state, reinterpret_cast<const char*>(&m) + sizeof m.state,
                sizeof m - sizeof m.state);
    ref(slot.state).store(free_state + 1, std::memory_order_release);
    // Pairs with the sleeper's store of `sleeping` and recheck (Inbox::sleep).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (ref(in.sleeping).load(std::memory_order_relaxed)) {
        ref(in.doorbell).fetch_add(1, std::memory_order_release);
        futex_wake(&in.doorbell);
    }
    if (wait) wait_for_proxy(answered);
}

void Sender::transfer(AmOp op, int pe, int space, std::uint64_t offset, std::uint64_t local, std::size_t n) {
    AmSlot m{};
    m.op = static_cast<std::uint8_t>(op);
    m.space = static_cast<std::uint8_t>(space);
    m.offset = offset;
    m.bytes = n;
    m.local = local;
    send(pe, m);
}

void Sender::send_queue() {
    Queue& q = g_queue[channel_];
    // The lists out first (and so the list's own buffer is free).
    if (channel_ == 1 && !g_posted.empty()) list_done(g_posted.back().seq, true);
    if (q.list.empty()) return;
    std::memcpy(staging() + kQueueData, q.list.data(), q.list.size() * sizeof(AmPiece));
    AmSlot m{};
    m.op = static_cast<std::uint8_t>(q.gets ? AmOp::GetList : AmOp::PutList);
    m.space = static_cast<std::uint8_t>(q.space);
    m.bytes = q.list.size() * sizeof(AmPiece);
    m.local = staging_offset() + kQueueData;
    const int pe = q.pe;
    q.list.clear();
    q.staged = q.bytes = 0;
    if (channel_ == 0) g_queued.store(false, std::memory_order_relaxed);
    send(pe, m);
    // The gets' bytes that came to the staging area, on to their destinations.
    for (const Queue::Readback& b : q.readbacks) std::memcpy(b.dst, staging() + b.at, b.n);
    q.readbacks.clear();
}

std::optional<std::uint32_t> Sender::post_queue() {
    Queue& q = g_queue[channel_];
    if (channel_ != 1 || q.list.empty() || q.gets || q.staged || (!g_posted.empty() && g_posted.back().pe != q.pe)) {
        send_queue();
        return std::nullopt;
    }
    if (g_posted.size() == kPostedLists) list_done(g_posted.front().seq, true);
    int buffer = 0;
    while (std::any_of(g_posted.begin(), g_posted.end(), [&](const Posted& p) { return p.buffer == buffer; })) ++buffer;
    std::memcpy(staging() + list_buffer(buffer), q.list.data(), q.list.size() * sizeof(AmPiece));
    AmSlot m{};
    m.op = static_cast<std::uint8_t>(AmOp::PutList);
    m.space = static_cast<std::uint8_t>(q.space);
    m.bytes = q.list.size() * sizeof(AmPiece);
    m.local = staging_offset() + list_buffer(buffer);
    const int pe = q.pe;
    q.list.clear();
    q.staged = q.bytes = 0;
    send(pe, m, false);
    g_posted.push_back({m.seq, pe, buffer});
    return m.seq;
}

bool Sender::list_done(std::uint32_t seq, bool wait) {
    auto answered = [&] {
        const std::uint32_t d = ref(area(g_state.my_pe)->channel[channel_].done).load(std::memory_order_acquire);
        while (!g_posted.empty() && answered_by(d, g_posted.front().seq)) g_posted.pop_front();
        return answered_by(d, seq);
    };
    if (answered()) {
        cross_process_acquire();
        return true;
    }
    if (!wait) return false;
    wait_for_proxy([&] {
        if (answered()) return true;
        if (serving_) serving_->serve();
        return false;
    });
    return true;
}

bool Sender::queue(bool get, int pe, int space, std::uint64_t offset, void* buf, std::size_t n,
                   std::optional<std::uint64_t> in_heap) {
    Queue& q = g_queue[channel_];
    const std::size_t staged = in_heap ? 0 : (n + 15) / 16 * 16;
    if (channel_ == 1 && (staged || get) && !g_posted.empty()) list_done(g_posted.back().seq, true);
    if (!q.list.empty() && (get != q.gets || pe != q.pe || space != q.space || q.list.size() == kQueueMax ||
                            q.staged + staged > kQueueData))
        send_queue();
    // A put or get that continues the last one on both sides joins it, staged bytes right after
    // the last one's for that: where the owner copies, its copy engine pays microseconds per
    // piece; where it stores or loads through a BAR, per access.
    AmPiece* last = q.list.empty() ? nullptr : &q.list.back();
    const bool continues = last && last->offset + last->bytes == offset;
    std::uint64_t local = 0;
    if (in_heap) {
        local = *in_heap;
    } else {
        std::size_t at = q.staged;
        if (continues && last->local >= staging_offset() && last->local < staging_offset() + kQueueData)
            at = last->local + last->bytes - staging_offset(); // (<= q.staged)
        local = staging_offset() + at;
        if (get) q.readbacks.push_back({buf, at, n});
        else std::memcpy(staging() + at, buf, n);
        q.staged = (at + n + 15) / 16 * 16;
    }
    q.pe = pe;
    q.space = space;
    q.gets = get;
    if (continues && last->local + last->bytes == local) last->bytes += n;
    else q.list.push_back({offset, local, n});
    q.bytes += n;
    ++q.count;
    if (channel_ == 0) g_queued.store(true, std::memory_order_release);
    return true;
}

bool queue_put(int pe, int space, std::uint64_t offset, const void* src, std::size_t n,
               std::optional<std::uint64_t> in_heap) {
    if ((!in_heap && n > kQueueData) || net_to(pe) || !g_state.space[kHostHeap].peer[pe]) return false;
    Sender s; // (channel 0 under its lock)
    return s.queue(false, pe, space, offset, const_cast<void*>(src), n, in_heap);
}

bool queue_get(int pe, int space, std::uint64_t offset, void* dst, std::size_t n,
               std::optional<std::uint64_t> in_heap) {
    if ((!in_heap && n > kQueueData) || net_to(pe) || !g_state.space[kHostHeap].peer[pe]) return false;
    Sender s;
    return s.queue(true, pe, space, offset, dst, n, in_heap);
}

void flush_queue() {
    if (!tls_server && !g_queued.load(std::memory_order_acquire)) return;
    Sender s;
    s.send_queue();
}

std::size_t queued_bytes() { return g_queue[1].bytes; }
std::size_t queued_pieces() { return g_queue[1].list.size(); }
std::uint64_t queued_count() { return g_queue[1].count; }

std::optional<std::uint32_t> post_queue() {
    if (!tls_server) return std::nullopt;
    Sender s;
    return s.post_queue();
}

bool list_done(std::uint32_t seq, bool wait) {
    Sender s;
    return s.list_done(seq, wait);
}

bool on_proxy_thread() { return tls_server != nullptr; }

std::uint64_t Sender::amo(int pe, int space, std::uint64_t offset, unsigned op, unsigned width, std::uint64_t operand,
                          std::uint64_t cond) {
    AmSlot m{};
    m.op = static_cast<std::uint8_t>(AmOp::Amo);
    m.space = static_cast<std::uint8_t>(space);
    m.offset = offset;
    m.width = static_cast<std::uint8_t>(width);
    m.amo_op = static_cast<std::uint8_t>(op);
    m.operand = operand;
    m.cond = cond;
    send(pe, m);
    return ref(area(g_state.my_pe)->channel[channel_].value).load(std::memory_order_relaxed);
}

void Inbox::bind_thread() { tls_server = this; }

bool Inbox::serve() {
    AmInbox& in = area(g_state.my_pe)->inbox;
    bool any = answer_lists(false);
    for (;;) {
        AmSlot& slot = in.slots[next_ % kAmSlots];
        const std::uint64_t round = next_ / kAmSlots;
        if (ref(slot.state).load(std::memory_order_acquire) != round * 2 + 1) return any;
        AmSlot m;
        std::memcpy(&m, &slot, sizeof m);
        ref(slot.state).store((round + 1) * 2, std::memory_order_release); // free for the next round
        ++next_;
        any = true;
        cross_process_acquire(); // the sender's data and what it did before sending
        // Anything but a list of puts is carried out after the lists whose copies run, and answered
        // after them: it may read what they write, and answers on one channel come in order.
        if (static_cast<AmOp>(m.op) != AmOp::PutList) answer_lists(true);
        std::uint64_t value;
        const DebugTimer timer;
        list_batch_ = 0;
        {
            [[maybe_unused]] ForPeers peers; // the sender's accesses; released before the answer
            value = execute(m);
        }
        // (A diagnostic: a message that took long to carry out, and what it was.)
        if (const double ms = timer.over(std::chrono::milliseconds(100)))
            VKSHMEM_DEBUG("active message from PE {} (op {}, space {}, offset {:#x}, {} bytes) took {:.1f} ms", m.from,
                          m.op, m.space, m.offset, m.bytes, ms);
        VKSHMEM_TRACE("active message from PE {}: op {}, space {}, offset {:#x}, {} bytes", m.from, m.op, m.space,
                      m.offset, m.bytes);
        if (list_batch_) pending_.push_back({m.from, m.channel, m.seq, list_batch_});
        else answer(m.from, m.channel, m.seq, value);
    }
}

void Inbox::answer(int from, int channel, std::uint32_t seq, std::uint64_t value) {
    // A full fence: stores into a BAR mapping sit in write-combining
    // buffers, which the release store of the reply does not drain; the
    // sender's next step may be a device copy that reads them.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (net::Transport* net = net_to(from)) {
        // The value, then (ordered after it) what says it is there: `done` goes from seq - 1 to seq
        // (a channel's messages to a PE over the network are answered one at a time), so a
        // non-fetching add, which needs no reply, sets it.
        ok(net->put(from, kHostHeap, channel_at(channel) + offsetof(AmChannel, value), &value, sizeof value));
        ok(net->fence());
        ok(net->amo(from, kHostHeap, channel_at(channel) + offsetof(AmChannel, done), net::AmoOp::Add, 4, 1, 0, false));
    } else {
        AmChannel& reply = area(from)->channel[channel];
        ref(reply.value).store(value, std::memory_order_relaxed);
        ref(reply.done).store(seq, std::memory_order_release);
    }
}

bool Inbox::answer_lists(bool wait) {
    if (pending_.empty()) return false;
    auto done = stream_->done(wait);
    if (!done) fatal(kCall, "{}", done.error().message);
    bool any = false;
    for (; !pending_.empty() && pending_.front().batch <= *done; pending_.pop_front()) {
        const Pending& p = pending_.front();
        answer(p.from, p.channel, p.seq, 0);
        any = true;
    }
    return any;
}

std::uint64_t Inbox::execute(const AmSlot& m) {
    // The sender checked its arguments; a message that is still out of bounds
    // here is corrupt, not a user error to diagnose.
    const auto op = static_cast<AmOp>(m.op);
    // (A list's puts or gets are checked one by one: list.)
    const bool is_list = op == AmOp::PutList || op == AmOp::GetList;
    const std::uint64_t len = op == AmOp::Amo ? m.width : is_list ? 0 : m.bytes;
    if (static_cast<unsigned>(m.from) >= static_cast<unsigned>(g_state.n_pes) || m.space >= kSpaceCount ||
        m.channel >= kAmChannels || m.offset > g_state.space[m.space].size ||
        len > g_state.space[m.space].size - m.offset ||
        (!g_state.space[kHostHeap].peer[m.from] && !net_to(m.from)) ||
        (op != AmOp::Amo && (m.local > g_state.space[kHostHeap].size ||
                             m.bytes > g_state.space[kHostHeap].size - m.local)) ||
        (is_list && (net_to(m.from) || m.bytes % sizeof(AmPiece) != 0 || m.local % 8 != 0)))
        fatal(kCall, "malformed message from PE {} (op {}, space {}, offset {:#x}, {} bytes)", m.from, m.op, m.space,
              m.offset, len);
    auto* mine = reinterpret_cast<unsigned char*>(g_state.space[m.space].lo + m.offset);
    const int me = g_state.my_pe;
    if (net::Transport* net = net_to(m.from); net && op != AmOp::Amo) {
        // The sender's bytes come and go through the network, a piece at a
        // time through this inbox's own buffer.
        bounce_.resize(kAmStagingBytes);
        for (std::uint64_t done = 0; done < m.bytes;) {
            const std::size_t c = std::min<std::uint64_t>(m.bytes - done, bounce_.size());
            if (op == AmOp::Put) {
                ok(net->get(m.from, kHostHeap, m.local + done, bounce_.data(), c));
                rma::put(mine + done, bounce_.data(), c, me, kCall);
            } else {
                rma::get(bounce_.data(), mine + done, c, me, kCall);
                ok(net->put(m.from, kHostHeap, m.local + done, bounce_.data(), c));
            }
            done += c;
        }
        if (op == AmOp::Get) ok(net->fence()); // the data before the reply
        return 0;
    }
    auto* theirs = reinterpret_cast<unsigned char*>(g_state.space[kHostHeap].peer[m.from] + m.local);
    switch (op) {
    case AmOp::Put:
        if (!device_copy(m)) rma::put(mine, theirs, m.bytes, me, kCall);
        return 0;
    case AmOp::Get:
        if (!device_copy(m)) rma::get(theirs, mine, m.bytes, me, kCall);
        return 0;
    case AmOp::PutList:
    case AmOp::GetList: list_batch_ = list(m); return 0;
    case AmOp::Amo: {
        using rma::detail::AmoOp;
        const auto aop = static_cast<AmoOp>(m.amo_op);
        if (m.width == 4)
            return rma::detail::amo(reinterpret_cast<std::uint32_t*>(mine), aop, static_cast<std::uint32_t>(m.operand),
                                    static_cast<std::uint32_t>(m.cond), me, kCall);
        if (m.width == 8)
            return rma::detail::amo(reinterpret_cast<std::uint64_t*>(mine), aop, m.operand, m.cond, me, kCall);
        break;
    }
    }
    fatal(kCall, "unknown message from PE {} (op {}, width {})", m.from, m.op, m.width);
}

std::pair<const DeviceMemory*, const DeviceMemory*> Inbox::copy_ends(int space, int from, bool put,
                                                                      std::uint64_t bytes) const {
    // What the CPU cannot map, or should not touch through a BAR, moves by
    // device copy, straight to or from the sender's host heap; BAR accesses
    // up to VKSHMEM_BAR_PUT_MAX / VKSHMEM_BAR_GET_MAX stay CPU stores and
    // loads, which cost less than a copy submission (~50 µs on an H100).
    const Route route = g_state.space[space].route[g_state.my_pe];
    if (route == Route::Direct) return {};
    if (route == Route::BarWrite && bytes <= (put ? g_state.bar_put_max : g_state.bar_get_max)) return {};
    const DeviceMemory* target = mem_.device_memory(g_state.my_pe, static_cast<Space>(space));
    const DeviceMemory* host = mem_.shader_memory(from, kHostHeap);
    if (!target || !target->buffer || !host) return {};
    return {target, host};
}

bool Inbox::device_copy(const AmSlot& m) {
    const bool put = static_cast<AmOp>(m.op) == AmOp::Put;
    const auto [target, host] = copy_ends(m.space, m.from, put, m.bytes);
    if (!target) return false;
    auto r = put ? dev_.copy(*target, m.offset, *host, m.local, m.bytes)
                 : dev_.copy(*host, m.local, *target, m.offset, m.bytes);
    if (!r) fatal(kCall, "{}", r.error().message);
    return true;
}

std::uint64_t Inbox::list(const AmSlot& m) {
    const int me = g_state.my_pe;
    const bool put = static_cast<AmOp>(m.op) == AmOp::PutList;
    const Space space = static_cast<Space>(m.space);
    const std::uint64_t size = g_state.space[space].size, host_size = g_state.space[kHostHeap].size;
    const auto* list = reinterpret_cast<const AmPiece*>(g_state.space[kHostHeap].peer[m.from] + m.local);
    const std::size_t count = m.bytes / sizeof(AmPiece);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const AmPiece& p = list[i];
        if (p.offset > size || p.bytes > size - p.offset || p.local > host_size || p.bytes > host_size - p.local)
            fatal(kCall, "malformed list from PE {}: {} {} of {} bytes at offset {:#x}, {:#x} in its host heap", m.from,
                  put ? "put" : "get", i, p.bytes, p.offset, p.local);
        total += p.bytes;
    }
    // As for one put or get, for the list as a whole: its copies are one submission (a shader's
    // bulk put arrives as runs of 64 KiB, each of which BAR stores would carry at about 5 GB/s on
    // an H200).
    const auto [target, host] = copy_ends(space, m.from, put, total);
    const bool copies = target != nullptr;
    auto* mine = reinterpret_cast<unsigned char*>(g_state.space[space].lo);
    auto* theirs = reinterpret_cast<unsigned char*>(g_state.space[kHostHeap].peer[m.from]);
    if (copies && !stream_)
        if (auto s = dev_.copy_stream()) stream_ = std::move(*s);
    if (!copies || !stream_) {
        answer_lists(true); // (the answers come in order)
        for (std::size_t i = 0; i < count; ++i) {
            const AmPiece& p = list[i];
            Result<void> r;
            if (!copies && put) rma::put(mine + p.offset, theirs + p.local, p.bytes, me, kCall);
            else if (!copies) rma::get(theirs + p.local, mine + p.offset, p.bytes, me, kCall);
            else if (put) r = dev_.copy_nbi(*target, p.offset, *host, p.local, p.bytes);
            else r = dev_.copy_nbi(*host, p.local, *target, p.offset, p.bytes, true);
            if (!r) fatal(kCall, "{}", r.error().message);
        }
        if (copies)
            if (auto r = dev_.quiet(); !r) fatal(kCall, "{}", r.error().message);
        return 0;
    }
    // Two batches, which go to two queues of the copy family (a copy engine pays microseconds per
    // region, and two side by side move 64 KiB regions about 35 % faster: vk-copy-probe); one where
    // the list's destinations overlap, whose order the two would not keep.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans(count);
    for (std::size_t i = 0; i < count; ++i) spans[i] = {put ? list[i].offset : list[i].local, list[i].bytes};
    std::sort(spans.begin(), spans.end());
    bool overlap = false;
    for (std::size_t i = 1; i < count && !overlap; ++i)
        overlap = spans[i - 1].first + spans[i - 1].second > spans[i].first;
    const std::size_t split = overlap || count < 2 ? count : count / 2;
    std::uint64_t batch = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const AmPiece& p = list[i];
        if (put) stream_->add(*target, p.offset, *host, p.local, p.bytes);
        else stream_->add(*host, p.local, *target, p.offset, p.bytes, true);
        if (i + 1 == split || i + 1 == count) {
            auto r = stream_->submit();
            if (!r) fatal(kCall, "{}", r.error().message);
            batch = *r;
        }
    }
    // A list of puts is answered once its copies are done (answer_lists), while this thread serves
    // on: a sender with the next list out then finds the copy engines busy with it. (The batches
    // of one stream complete in order.)
    if (put && batch) return batch;
    if (auto r = stream_->done(true); !r) fatal(kCall, "{}", r.error().message);
    return 0;
}

void Inbox::sleep(int us, const std::atomic<int>& busy, const std::atomic<bool>& soon, int long_us) {
    AmInbox& in = area(g_state.my_pe)->inbox;
    const std::uint32_t bell = ref(in.doorbell).load(std::memory_order_acquire);
    if (!soon.load(std::memory_order_acquire)) us = long_us;
    ref(in.sleeping).store(1, std::memory_order_seq_cst);
    const bool pending =
        ref(in.slots[next_ % kAmSlots].state).load(std::memory_order_seq_cst) == next_ / kAmSlots * 2 + 1;
    if (!pending && pending_.empty() && busy.load(std::memory_order_seq_cst) == 0) futex_wait(&in.doorbell, bell, us);
    ref(in.sleeping).store(0, std::memory_order_relaxed);
}

void Inbox::wake() {
    AmInbox& in = area(g_state.my_pe)->inbox;
    ref(in.doorbell).fetch_add(1, std::memory_order_release);
    if (ref(in.sleeping).load(std::memory_order_seq_cst)) futex_wake(&in.doorbell);
}

} // namespace vkshmem::am
