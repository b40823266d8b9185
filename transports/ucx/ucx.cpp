// SPDX-License-Identifier: BSL-1.0
// The UCX transport: UCP RMA and atomics on one worker per PE, and one more
// per context that asks for its own (Transport::open_domain).
//
// Every UCP call on a worker is made under that worker's mutex (workers are
// created UCS_THREAD_MODE_SERIALIZED), by application threads and by the
// progress thread. The progress thread exists because transports without RDMA (tcp,
// UCX's emulated atomics) need the target's CPU to carry out incoming
// operations: it sleeps on the worker's event fd and progresses the worker
// when something arrives.
//
// Batches: over tcp every UCP put or get is a message of its own (a system call
// on each side, and a reply for a get), so the default context's small
// non-blocking puts and gets to one PE are gathered into one active message
// each, which the target's CPU carries out and answers (an acknowledgement, or
// the gets' data). The same worker's large non-blocking puts are posted by
// the progress thread once the application computes (kDeferFrom). The
// contexts' workers are in a UCP context of their own, without active
// messages (see lane_ctx_): their batches go through the default worker, and
// the answers find the context's counts by the lane named in the header.
#include "transports/transport.hpp"

#include "transports/batch.hpp"
#include "transports/blob.hpp"

#include "bootstrap/bootstrap.hpp"
#include "core/log.hpp"
#include "core/tsan.hpp"
#include "core/wait.hpp"

#include <ucp/api/ucp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <poll.h>
#include <sys/eventfd.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace vkshmem::net {
namespace {

constexpr int kSegments = 3;

struct Remote {
    std::uint64_t base = 0;
    std::uint64_t size = 0;
};

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Error ucx_error(const char* what, ucs_status_t s) {
    return Error{fmt::format("UCX {}: {}", what, ucs_status_string(s))};
}

// UCX's transport resources ("tcp/eth0 posix/memory ..."): the lines
// "resource N : md M dev D flags -- tl/device" of ucp_context_print_info.
std::string resources(ucp_context_h ctx) {
    char* text = nullptr;
    std::size_t len = 0;
    FILE* f = open_memstream(&text, &len);
    if (!f) return " ?";
    ucp_context_print_info(ctx, f);
    std::fclose(f);
    std::string out;
    for (const char* line = text; line && *line;) {
        const char* end = std::strchr(line, '\n');
        const std::string l(line, end ? end : line + std::strlen(line));
        if (l.find("resource") != std::string::npos)
            if (auto at = l.find("-- "); at != std::string::npos) out += " " + l.substr(at + 3);
        line = end ? end + 1 : nullptr;
    }
    std::free(text);
    return out.empty() ? " none" : out;
}

// Whether every resource UCX may use carries out atomics with the target's CPU (software atomics
// over tcp, CPU atomics on shared memory): then batches may carry atomics, which the target's CPU
// carries out, without breaking their atomicity with UCX's own. A NIC's atomics are not atomic
// with respect to the CPU's.
bool cpu_atomics_only(const std::string& res) {
    static constexpr const char* kCpu[] = {"tcp", "self", "posix", "sysv", "cma", "knem", "xpmem"};
    bool any = false;
    for (std::size_t at = 0; (at = res.find_first_not_of(' ', at)) != std::string::npos;) {
        const std::size_t end = std::min(res.find(' ', at), res.size());
        const std::string tl = res.substr(at, std::min(res.find('/', at), end) - at);
        if (std::none_of(std::begin(kCpu), std::end(kCpu), [&](const char* c) { return tl == c; })) return false;
        any = true;
        at = end;
    }
    return any;
}

// The progress thread's first look again at an application thread that is still posting
// non-blocking operations (progress_loop), in ns.
constexpr std::int64_t kPostingNapFirst = 10'000;

// Batches (see the top and transports/batch.hpp): the active message ids.
enum : unsigned { kAmPuts = 1, kAmGets, kAmAck, kAmData };
// Where the default worker batches, its non-blocking puts and gets from this size on are posted
// later, by the progress thread once the application computes (or at the next quiet, fence, other
// operation or wait): over tcp a put's bytes go into the socket inside ucp_put_nbx, so a put
// posted at once costs its caller nearly all of its transfer time, and a get's request goes out
// inside ucp_get_nbx (16 x 64 KiB of get_nbi spent 170-300 us posting).
constexpr std::size_t kDeferFrom = 16384;

// A batch's, an answer's or an acknowledgement's bytes until UCP has sent them; `counted`: `lane`
// counts the answer it waits for in pending (a batch), else `lane` is the worker's that sends it.
// `token`, the message's header: the lane that asks (a batch), echoed by the answer.
struct Outgoing {
    struct Lane* lane;
    std::vector<unsigned char> data;
    bool counted;
    std::uint64_t token = 0;
};

// One UCP worker with its endpoints and the peers' keys unpacked on them: the
// PE's default, the one peers connect to, or a context's own (open_domain),
// whose operations neither wait for nor hold up those of the other workers.
struct Lane final : Domain {
    std::mutex mu;                // held for every UCP call on this worker (UCS_THREAD_MODE_SERIALIZED)
    std::atomic<int> waiting{0};  // threads waiting for mu (lock()): the progress thread yields it to them
    // When an application thread last progressed the worker (in a wait): the progress thread stands
    // back while they do.
    std::atomic<std::int64_t> app_ns{0};
    // Application threads inside wait() on this worker, which progress it themselves.
    std::atomic<int> waiters{0};
    ucp_worker_h worker = nullptr;
    int efd = -1;
    std::vector<ucp_ep_h> eps;
    std::vector<std::array<ucp_rkey_h, kSegments>> rkeys;
    // Non-blocking requests whose callbacks have not run yet, and what the first failed one said
    // (both under mu: callbacks run inside ucp_worker_progress, which is called under it).
    std::atomic<std::size_t> pending{0};
    std::string error;
    // A non-blocking operation was posted since the last flush: UCP may hold (part of) one that
    // it completed locally at once, to be sent as the worker is progressed.
    std::atomic<bool> posted{false};
    // The progress thread's: how long it sleeps before it looks again at an application thread
    // that is posting non-blocking operations (progress_loop).
    std::int64_t posting_nap = kPostingNapFirst;
    // Batches gathered for each PE, not sent yet, and whether any is (under mu); batches sent
    // whose answers have not come (also counted in pending).
    std::vector<batch::Gathered> batches;
    bool batching = false; // this lane batches (with VKSHMEM_NBI_BATCH)
    bool defers = false;   // and defers large puts (the default lane)
    // A context's lane: operations went out on its own endpoints since its last flush (under mu).
    // Its batches go through the default worker, which nothing orders with those endpoints
    // (Ucx::settle).
    bool direct = false;
    // The first failure of a batch's send (a context's batch fails in the default worker's
    // callback, which does not hold this lane's mutex); UCS_OK while none.
    std::atomic<int> batch_error{UCS_OK};
    // Large non-blocking puts and gets not posted yet (kDeferFrom; under mu), in the order of their
    // calls.
    struct Deferred {
        bool is_put;
        std::size_t pe;
        std::uint64_t remote;
        ucp_rkey_h key;
        void* buf;
        std::size_t n;
    };
    std::vector<Deferred> deferred;
    bool batched = false;
    std::atomic<std::size_t> unanswered{0};
    // Answers to peers' batches, sent after the progress call whose callbacks made them (under mu).
    struct Answer {
        ucp_ep_h ep;
        unsigned id;
        Outgoing* out;
    };
    std::vector<Answer> answers;
    class Ucx* owner = nullptr;
};

// What a peer handed over at connect(): enough to open another worker's endpoints to it.
struct PeerInfo {
    std::vector<std::uint8_t> address;
    std::array<std::vector<std::uint8_t>, kSegments> rkey;
};

// The state of a non-blocking AMO that must outlive its post: the operand, and a place for the
// old value UCP sends back where the caller wants none (a set is a swap).
struct AmoBox {
    Lane* lane;
    std::uint64_t operand;
    std::uint64_t reply;
};

void note_failure(Lane& l, ucs_status_t s) {
    if (s != UCS_OK && l.error.empty()) l.error = ucs_status_string(s);
}
// Completion callbacks of non-blocking posts (run under the lane's mutex, by a progress call).
void on_rma_done(void* req, ucs_status_t s, void* user) {
    Lane& l = *static_cast<Lane*>(user);
    note_failure(l, s);
    l.pending.fetch_sub(1, std::memory_order_relaxed);
    ucp_request_free(req);
}
// A batch answered, or one whose send failed (no answer will come). Released: a context's thread
// that sees the count drop (acquire) holds no mutex in common with the default worker's callbacks,
// and reads the gets' bytes next.
void answered(Lane& l) {
    l.unanswered.fetch_sub(1, std::memory_order_release);
    l.pending.fetch_sub(1, std::memory_order_release);
}
void batch_failed(Lane& l, ucs_status_t s) {
    int none = UCS_OK;
    l.batch_error.compare_exchange_strong(none, s, std::memory_order_relaxed);
    answered(l);
}
void on_am_sent(void* req, ucs_status_t s, void* user) {
    auto* out = static_cast<Outgoing*>(user);
    if (s != UCS_OK) {
        if (out->counted) batch_failed(*out->lane, s);
        else note_failure(*out->lane, s);
    }
    ucp_request_free(req);
    delete out;
}
void on_amo_done(void* req, ucs_status_t s, void* user) {
    auto* box = static_cast<AmoBox*>(user);
    note_failure(*box->lane, s);
    box->lane->pending.fetch_sub(1, std::memory_order_relaxed);
    ucp_request_free(req);
    delete box;
}

class Ucx final : public Transport {
public:
    Ucx(int me, int n, std::size_t batch_max, NbiDefer defer)
        : me_(me), n_(n), batch_max_(batch::max_op(batch_max)), defer_(defer != NbiDefer::Off),
          remote_(static_cast<std::size_t>(n)), peers_(static_cast<std::size_t>(n)) {
        caps_.amo_widths = (1u << 4) | (1u << 8);
        main_.eps.resize(static_cast<std::size_t>(n));
        main_.rkeys.resize(static_cast<std::size_t>(n));
    }
    ~Ucx() override;

    Result<void> init();
    const char* name() const override { return "ucx"; }
    const Caps& caps() const override { return caps_; }
    Result<void> register_segment(int space, void* addr, std::size_t size) override;
    Result<void> connect(Bootstrap& boot, const std::vector<bool>& peers) override;
    bool reach(int pe, int space) const override {
        return main_.eps[static_cast<std::size_t>(pe)] && main_.rkeys[static_cast<std::size_t>(pe)][space];
    }
    Result<void> put(int pe, int space, std::uint64_t offset, const void* src, std::size_t n) override {
        return rma({}, true, pe, space, offset, const_cast<void*>(src), n);
    }
    Result<void> get(int pe, int space, std::uint64_t offset, void* dst, std::size_t n) override {
        return rma({}, false, pe, space, offset, dst, n);
    }
    Result<std::uint64_t> amo(int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                              std::uint64_t operand, std::uint64_t cond, bool fetch) override {
        std::uint64_t old = 0; // the low `width` bytes (little-endian)
        if (auto r = amo_on({}, pe, space, offset, op, width, operand, cond, returns_old(op, fetch) ? &old : nullptr); !r)
            return r.error();
        return old;
    }
    Result<void> fence() override { return fence_on(nullptr); }
    Result<void> quiet() override { return quiet_on(nullptr); }
    Result<void> put_on(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                        std::size_t n) override {
        return rma(how, true, pe, space, offset, const_cast<void*>(src), n);
    }
    Result<void> get_on(const Post& how, int pe, int space, std::uint64_t offset, void* dst, std::size_t n) override {
        return rma(how, false, pe, space, offset, dst, n);
    }
    Result<void> amo_on(const Post& how, int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                        std::uint64_t operand, std::uint64_t cond, void* fetch) override;
    Result<void> put_signal_on(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                               std::size_t n, int sig_space, std::uint64_t sig_offset, AmoOp op,
                               std::uint64_t signal) override;
    Domain* open_domain() override;
    void close_domain(Domain* d) override;
    Result<void> fence_on(Domain* d) override;
    Result<void> quiet_on(Domain* d) override;
    void progress() override {
        main_.app_ns.store(now_ns(), std::memory_order_relaxed);
        std::unique_lock lk(main_.mu, std::try_to_lock);
        if (!lk.owns_lock()) return;
        send_batches(main_); // a PE that waits sends what it gathered
        progress_worker(main_);
    }
    void nap(long ns) override;
    std::string describe() const override { return desc_; }

private:
    Lane& lane(Domain* d) { return d ? *static_cast<Lane*>(d) : main_; }
    Result<void> make_worker(Lane& l);
    // Opens l's endpoints to every peer the default lane reaches, and unpacks their keys on them.
    Result<void> connect_lane(Lane& l);
    // Closes l's endpoints (flushing what is in flight) and its keys; 5 s at most.
    void close_lane(Lane& l);
    // Progresses l until done() holds (checked under its mutex): a short spin, then sleeps on the
    // worker's events.
    template <class Done> void wait(Lane& l, Done&& done);
    // The first failure of l's non-blocking operations and batches since the last call, if any.
    Result<void> take_error(Lane& l) {
        auto lk = lock(l);
        const int b = l.batch_error.exchange(UCS_OK, std::memory_order_relaxed);
        if (b != UCS_OK && l.error.empty()) l.error = ucs_status_string(static_cast<ucs_status_t>(b));
        if (l.error.empty()) return {};
        return Error{fmt::format("UCX: a non-blocking operation failed: {}", std::exchange(l.error, {}))};
    }
    // Waits for an operation UCP did not complete at once.
    Result<void> complete(Lane& l, ucs_status_ptr_t req, const char* what);
    // A context's lane before a batched operation (`to_batch`) or one of its own endpoints: its
    // batches go through the default worker's endpoints, and nothing orders those with its own.
    // So before a batch follows operations of its own endpoints, these are flushed (done at their
    // targets), and before such an operation follows batches, these are answered (carried out):
    // the context's operations keep the order they would have on one endpoint. A round trip,
    // once per change. settled() (under l's mutex) says whether the operation may go at once, and
    // notes one of l's own endpoints; settle() (not under it) does what is needed first.
    bool settled(Lane& l, bool to_batch) const {
        if (!via_default(l)) return true;
        if (to_batch) return !l.direct;
        l.direct = true;
        return !l.batched && l.unanswered.load(std::memory_order_relaxed) == 0;
    }
    Result<void> settle(Lane& l, bool to_batch);
    // Gathers into l's batch for pe (add(batch), under l's mutex, a context's lane settled first),
    // and has it sent later (progress_loop).
    template <class Add> Result<void> gather(Lane& l, int pe, Add&& add) {
        l.app_ns.store(now_ns(), std::memory_order_relaxed); // the application is here (progress_loop)
        auto lk = lock(l);
        if (!settled(l, true)) {
            lk.lk.unlock();
            if (auto st = settle(l, true); !st) return st;
            lk.lk.lock();
        }
        add(l.batches[static_cast<std::size_t>(pe)]);
        l.batched = true;
        if (!l.posted.exchange(true, std::memory_order_relaxed)) wake_progress();
        return {};
    }
    // The default lane's batches and operations share endpoints, which keep their order.
    bool via_default(const Lane& l) const { return &l != &main_ && l.batching; }
    Result<void> rma(const Post& how, bool is_put, int pe, int space, std::uint64_t offset, void* buf, std::size_t n);
    Result<const Remote*> remote(Lane& l, int pe, int space, std::uint64_t offset, std::size_t n, const char* what);
    void progress_loop();
    // ucp_worker_progress, which carries out the operations of remote PEs (core/tsan.hpp), then
    // sends the answers its callbacks made. Under l's mutex.
    unsigned progress_worker(Lane& l) {
        [[maybe_unused]] ForPeers peers;
        const unsigned n = ucp_worker_progress(l.worker);
        for (const Lane::Answer& a : std::exchange(l.answers, {})) am_send(l, a.ep, a.id, a.out, false);
        return n;
    }
    // Batches (under l's mutex): gathers a small non-blocking put or get for pe; sends pe's
    // batches, or every PE's (and then posts the deferred puts and gets too: kDeferFrom).
    void batch(Lane& l, bool is_put, int pe, int space, std::uint64_t offset, void* buf, std::size_t n);
    void send_batch(Lane& l, int pe);
    void send_batches(Lane& l) {
        if (!l.deferred.empty()) post_deferred(l);
        if (!l.batched) return;
        for (int pe = 0; pe < n_; ++pe) send_batch(l, pe);
        l.batched = false;
    }
    // Posts l's deferred puts and gets (under its mutex).
    void post_deferred(Lane& l);
    // Sends out on worker w's endpoint ep (under w's mutex).
    void am_send(Lane& w, ucp_ep_h ep, unsigned id, Outgoing* out, bool reply);
    Result<void> setup_batches(Lane& l);
    // Active message callbacks (arg: the lane whose worker received it).
    static ucs_status_t on_puts(void* arg, const void* header, std::size_t header_len, void* data, std::size_t len,
                                const ucp_am_recv_param_t* param);
    static ucs_status_t on_gets(void* arg, const void* header, std::size_t header_len, void* data, std::size_t len,
                                const ucp_am_recv_param_t* param);
    static ucs_status_t on_ack(void* arg, const void* header, std::size_t header_len, void* data, std::size_t len,
                               const ucp_am_recv_param_t* param);
    static ucs_status_t on_data(void* arg, const void* header, std::size_t header_len, void* data, std::size_t len,
                                const ucp_am_recv_param_t* param);
    batch::Segments segments() const { return {seg_addr_.data(), seg_size_.data(), kSegments, "UCX"}; }
    void stop_progress();
    void wake_progress() {
        const std::uint64_t one = 1;
        [[maybe_unused]] ssize_t r = write(wake_, &one, sizeof one);
    }

    int me_, n_;
    std::size_t batch_max_;    // the largest put or get that batches take (0: none)
    bool defer_;               // the default lane defers large ones (kDeferFrom; VKSHMEM_NBI_DEFER)
    bool cpu_atomics_ = false; // batches carry atomics and signals too (cpu_atomics_only)
    Caps caps_;
    ucp_context_h ctx_ = nullptr;
    // The contexts' lanes' workers, where the default one batches: a UCP context without active
    // messages. Workers of contexts in the default one's (with them) crashed UCX 1.13's tcp
    // transport (a segfault in uct_tcp_iface_progress on both PEs, in 1 of 2 conformance runs at 2
    // PEs, also with no handler set); in a context of their own they never did (16 runs).
    ucp_context_h lane_ctx_ = nullptr;
    Lane main_;
    std::array<ucp_mem_h, kSegments> memh_{};
    std::array<void*, kSegments> seg_addr_{};
    std::array<std::size_t, kSegments> seg_size_{};
    std::vector<std::array<Remote, kSegments>> remote_;
    std::vector<PeerInfo> peers_;
    // The contexts' lanes, which the progress thread serves too. It holds lanes_mu_ shared while it
    // uses their event fds; close_domain takes it exclusively (closing_ asks the thread to let go).
    std::shared_mutex lanes_mu_;
    std::vector<Lane*> lanes_;
    std::atomic<int> closing_{0};
    std::thread progress_;
    std::atomic<bool> stop_{false};
    int wake_ = -1;
    // Test hook (VKSHMEM_TEST_UCX_SLOW_PROGRESS_US): the progress thread pauses this long after
    // each event it progresses, as a slow (sanitized, loaded) machine does.
    unsigned slow_progress_us_ = 0;
    // A lane's mutex, held for UCP calls. Any of them may carry out remote PEs' operations (a send
    // also answers the gets queued behind it): core/tsan.hpp.
    struct Locked {
        std::unique_lock<std::mutex> lk;
        ForPeers peers{};
    };
    static Locked lock(Lane& l) { return Locked{hold(l)}; }
    static std::unique_lock<std::mutex> hold(Lane& l) {
        l.waiting.fetch_add(1, std::memory_order_relaxed);
        std::unique_lock lk(l.mu);
        l.waiting.fetch_sub(1, std::memory_order_relaxed);
        return lk;
    }
    Bootstrap* boot_ = nullptr;
    std::string desc_;
};

Result<void> Ucx::make_worker(Lane& l) {
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    ucs_status_t s = ucp_worker_create(&l == &main_ || !batch_max_ ? ctx_ : lane_ctx_, &wp, &l.worker);
    if (s != UCS_OK) return ucx_error("ucp_worker_create", s);
    s = ucp_worker_get_efd(l.worker, &l.efd);
    if (s != UCS_OK) return ucx_error("ucp_worker_get_efd", s);
    return setup_batches(l);
}

Result<void> Ucx::setup_batches(Lane& l) {
    l.owner = this;
    if (batch_max_ == 0) return {};
    l.batching = true;
    // A context's lane has no active messages (lane_ctx_): its batches go through the default
    // worker, where their answers come too.
    if (&l != &main_) return {};
    l.defers = defer_;
    // Peers' batches come to the default worker, and so do the answers to its own.
    const std::pair<unsigned, ucp_am_recv_callback_t> handlers[] = {
        {kAmAck, on_ack}, {kAmData, on_data}, {kAmPuts, on_puts}, {kAmGets, on_gets}};
    for (const auto& [id, cb] : handlers) {
        ucp_am_handler_param_t h{};
        h.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
        h.id = id;
        h.cb = cb;
        h.arg = &l;
        const ucs_status_t s = ucp_worker_set_am_recv_handler(l.worker, &h);
        if (s != UCS_OK) return ucx_error("ucp_worker_set_am_recv_handler", s);
    }
    return {};
}

Result<void> Ucx::init() {
    if (const char* slow = std::getenv("VKSHMEM_TEST_UCX_SLOW_PROGRESS_US"))
        slow_progress_us_ = static_cast<unsigned>(std::strtoul(slow, nullptr, 10));
    ucp_config_t* cfg = nullptr;
    ucs_status_t s = ucp_config_read(nullptr, nullptr, &cfg);
    if (s != UCS_OK) return ucx_error("reading its configuration (UCX_* variables)", s);
    // TCP segments of 64 KiB instead of 8 KiB: a blocking 1 MiB put then moves at 2.7-3.4 GB/s
    // instead of 1.6-1.8 on the test VM (ucx_perftest gains as much with the same setting:
    // bench/network.sh gives it the same). UCX takes the tcp transport's field names here; the
    // user's UCX_TCP_*_SEG_SIZE win.
    for (const char* field : {"TX_SEG_SIZE", "RX_SEG_SIZE"})
        if (!std::getenv(fmt::format("UCX_TCP_{}", field).c_str())) ucp_config_modify(cfg, field, "64k");
    ucp_params_t p{};
    p.field_mask = UCP_PARAM_FIELD_FEATURES;
    p.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP |
                 (batch_max_ ? UCP_FEATURE_AM : 0);
    s = ucp_init(&p, cfg, &ctx_);
    if (s == UCS_OK && batch_max_) {
        p.features &= ~static_cast<std::uint64_t>(UCP_FEATURE_AM);
        if (const ucs_status_t ls = ucp_init(&p, cfg, &lane_ctx_); ls != UCS_OK) {
            VKSHMEM_DEBUG("UCX: contexts share the default worker: ucp_init: {}", ucs_status_string(ls));
            lane_ctx_ = nullptr;
        }
    }
    ucp_config_release(cfg);
    if (s != UCS_OK) return ucx_error("ucp_init", s);
    if (auto r = make_worker(main_); !r) return r;
    wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_ < 0) return Error{fmt::format("eventfd: {}", std::strerror(errno))};
    const char* tls = std::getenv("UCX_TLS");
    const std::string res = resources(ctx_);
    cpu_atomics_ = batch_max_ && cpu_atomics_only(res);
    desc_ = fmt::format("UCX {}, UCX_TLS={}, resources:{}, {}{}", ucp_get_version_string(), tls ? tls : "all", res,
                        batch_max_ ? fmt::format("non-blocking puts and gets up to {} bytes in batches{}", batch_max_,
                                                 defer_ ? ", from 16 KiB posted by the progress thread" : "")
                                   : std::string("no batches"),
                        cpu_atomics_ ? "; batches carry non-blocking atomics and signals too" : "");
    return {};
}

Result<void> Ucx::register_segment(int space, void* addr, std::size_t size) {
    if (!addr || !size) return {};
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = addr;
    mp.length = size;
    auto lk = lock(main_);
    const ucs_status_t s = ucp_mem_map(ctx_, &mp, &memh_[space]);
    if (s != UCS_OK) return ucx_error("ucp_mem_map", s);
    seg_addr_[space] = addr;
    seg_size_[space] = size;
    return {};
}

Result<void> Ucx::connect(Bootstrap& boot, const std::vector<bool>& peers) {
    boot_ = &boot;
    // This PE's blob: worker address, then per segment base, size and packed rkey.
    Writer w;
    {
        auto lk = lock(main_);
        ucp_address_t* addr = nullptr;
        std::size_t len = 0;
        ucs_status_t s = ucp_worker_get_address(main_.worker, &addr, &len);
        if (s != UCS_OK) return ucx_error("ucp_worker_get_address", s);
        w.bytes(addr, len);
        ucp_worker_release_address(main_.worker, addr);
        for (int sp = 0; sp < kSegments; ++sp) {
            w.value<std::uint64_t>(reinterpret_cast<std::uintptr_t>(seg_addr_[sp]));
            w.value<std::uint64_t>(seg_size_[sp]);
            void* rk = nullptr;
            std::size_t rk_len = 0;
            if (memh_[sp]) {
                s = ucp_rkey_pack(ctx_, memh_[sp], &rk, &rk_len);
                if (s != UCS_OK) return ucx_error("ucp_rkey_pack", s);
            }
            w.bytes(rk, rk_len);
            if (rk) ucp_rkey_buffer_release(rk);
        }
    }
    Blobs blobs;
    if (auto r = blobs.gather(boot, n_, std::move(w.out)); !r) return r;

    for (int pe = 0; pe < n_; ++pe) {
        if (!peers[static_cast<std::size_t>(pe)] || pe == me_) continue;
        Reader rd = blobs.of(pe);
        PeerInfo& info = peers_[static_cast<std::size_t>(pe)];
        std::size_t alen = 0;
        const std::uint8_t* addr = rd.bytes(&alen);
        if (!addr || !alen) return Error{fmt::format("PE {}'s UCX address is malformed", pe)};
        info.address.assign(addr, addr + alen);
        for (int sp = 0; sp < kSegments; ++sp) {
            Remote& r = remote_[static_cast<std::size_t>(pe)][sp];
            r.base = rd.value<std::uint64_t>();
            r.size = rd.value<std::uint64_t>();
            std::size_t rk_len = 0;
            const std::uint8_t* rk = rd.bytes(&rk_len);
            if (!rk && rk_len) return Error{fmt::format("PE {}'s UCX keys are malformed", pe)};
            if (rk_len) info.rkey[sp].assign(rk, rk + rk_len);
        }
    }
    if (auto r = connect_lane(main_); !r) return r;
    progress_ = std::thread([this] { progress_loop(); });
    return {};
}

Result<void> Ucx::connect_lane(Lane& l) {
    l.eps.assign(static_cast<std::size_t>(n_), nullptr);
    l.rkeys.assign(static_cast<std::size_t>(n_), {});
    l.batches.assign(static_cast<std::size_t>(n_), {});
    auto lk = lock(l);
    for (int pe = 0; pe < n_; ++pe) {
        const PeerInfo& info = peers_[static_cast<std::size_t>(pe)];
        if (info.address.empty()) continue;
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep.address = reinterpret_cast<const ucp_address_t*>(info.address.data());
        ucp_ep_h& e = l.eps[static_cast<std::size_t>(pe)];
        ucs_status_t s = ucp_ep_create(l.worker, &ep, &e);
        if (s != UCS_OK) return ucx_error(fmt::format("connecting to PE {}", pe).c_str(), s);
        for (int sp = 0; sp < kSegments; ++sp) {
            if (info.rkey[sp].empty()) continue;
            s = ucp_ep_rkey_unpack(e, info.rkey[sp].data(), &l.rkeys[static_cast<std::size_t>(pe)][sp]);
            if (s != UCS_OK) return ucx_error(fmt::format("unpacking PE {}'s memory key", pe).c_str(), s);
        }
    }
    return {};
}

void Ucx::progress_loop() {
    // Incoming operations over transports without RDMA need this PE's CPU, and so do the
    // replies to its own non-blocking operations (a get's data): this thread sleeps on the
    // workers' event fds and progresses a worker when something arrives. While an application
    // thread waits on a worker it progresses it itself (a wake-up of this thread would add its
    // latency to every operation), so this thread leaves that worker alone for a while.
    constexpr std::int64_t kStandBack = 1'000'000; // ns
    constexpr std::int64_t kStepIn = 20'000;
    constexpr std::int64_t kWaiterNap = 2'000'000, kPostingNapMax = 160'000;
    precise_timers();
    std::vector<pollfd> fds;
    while (!stop_.load(std::memory_order_acquire)) {
        if (closing_.load(std::memory_order_acquire)) {
            sched_yield(); // a context's lane is closing: let close_domain have lanes_mu_
            continue;
        }
        std::shared_lock lanes(lanes_mu_);
        fds.assign(1, pollfd{wake_, POLLIN, 0});
        bool again = false;
        std::int64_t sleep_ns = 100'000'000;
        auto serve = [&](Lane& l) {
            // Non-blocking operations in flight move only when someone progresses the worker
            // (over tcp a get's data, the rest of a large put), also while the application
            // computes: then this thread does not stand back.
            // A thread waiting on the worker progresses it as fast as it can: two would only pass
            // its lock back and forth (16 x 64 KiB of get_nbi + quiet over tcp: 730 us, 420 us
            // for a PE without this thread).
            // With operations in flight it steps in once the application has left the library
            // for kStepIn (it computes): while the application posts, polling beside it would
            // only slow its posts (8-byte put_nbi over tcp: 8.2 us each against 5.8 without).
            const bool busy = l.pending.load(std::memory_order_relaxed) != 0 || l.posted.load(std::memory_order_relaxed);
            const std::int64_t since = now_ns() - l.app_ns.load(std::memory_order_relaxed);
            const std::int64_t hold_off = busy ? kStepIn : kStandBack;
            // How soon it looks again: a waiter progresses the worker until it leaves (kWaiterNap;
            // the last one to leave with operations in flight wakes this thread): with a look
            // every 200 us, while PE 0 timed blocking 8-byte gets over tcp (2 PEs on 2 CPUs), each
            // look preempted a PE: 0.18 context switches per get on PE 0 against 0.10, and
            // 11.4-12.1 us per get against 10.9-11.6. An application that posts operations one after another
            // is looked at after kStepIn, then twice as long each time it is still posting, up to
            // kPostingNapMax. Each look is a wake-up of this thread, which on a machine whose cores
            // the PEs fill preempts one of them: one every 10 us cost 8-byte put_nbi over tcp a
            // quarter of its rate.
            if (l.waiters.load(std::memory_order_relaxed) > 0) {
                sleep_ns = std::min(sleep_ns, kWaiterNap);
                return;
            }
            if (since < hold_off) {
                const std::int64_t least = busy ? l.posting_nap : 100'000;
                if (busy) l.posting_nap = std::min(l.posting_nap * 2, kPostingNapMax);
                sleep_ns = std::min(sleep_ns, std::max<std::int64_t>(hold_off - since, least));
                return;
            }
            l.posting_nap = kPostingNapFirst;
            // An application thread that holds the worker is using it: this thread does not queue
            // for it (blocking on the mutex made every unlock of the posting thread a futex wake,
            // a system call per 8-byte put_nbi), but looks again shortly.
            std::unique_lock lk(l.mu, std::try_to_lock);
            if (!lk.owns_lock()) {
                sleep_ns = std::min<std::int64_t>(sleep_ns, 10'000);
                return;
            }
            send_batches(l); // the application computes (or waits elsewhere): what it gathered goes
            ucs_status_t armed = UCS_OK;
            bool yielded = false;
            // At most 64 calls per hold: a stream of incoming operations must not keep the
            // worker from the others for good.
            int calls = 0;
            while (progress_worker(l) != 0) {
                if (slow_progress_us_) usleep(slow_progress_us_);
                // Another thread wants the worker for an operation of its own: let it have it
                // now (it progresses the worker while it waits). Holding on while work keeps
                // arriving would starve it: peers polling this PE's inbox can keep the worker
                // busy while the proxy thread waits to send the answer they poll for.
                if (++calls == 64 || l.waiting.load(std::memory_order_relaxed)) {
                    yielded = true;
                    break;
                }
            }
            if (!yielded && !busy) armed = ucp_worker_arm(l.worker);
            lk.unlock();
            // More arrived meanwhile, or this PE's own non-blocking operations are in flight:
            // they move as fast as the worker is progressed (a get over tcp as each segment of
            // its data is read), so this thread polls rather than waits for an event per segment.
            if (yielded || busy || armed == UCS_ERR_BUSY) again = true;
            else fds.push_back(pollfd{l.efd, POLLIN, 0});
        };
        serve(main_);
        for (Lane* l : lanes_) serve(*l);
        if (again) {
            lanes.unlock();
            sched_yield(); // to the thread that asked for a worker
            continue;
        }
        timespec ts{sleep_ns / 1'000'000'000, sleep_ns % 1'000'000'000};
        ppoll(fds.data(), fds.size(), &ts, nullptr);
        if (fds[0].revents & POLLIN) {
            std::uint64_t v;
            [[maybe_unused]] ssize_t r = read(wake_, &v, sizeof v);
        }
    }
}

void Ucx::stop_progress() {
    if (!progress_.joinable()) return;
    stop_.store(true, std::memory_order_release);
    wake_progress();
    progress_.join();
}

void Ucx::close_lane(Lane& l) {
    std::vector<ucs_status_ptr_t> closing;
    {
        auto lk = lock(l);
        send_batches(l); // (a quiet came first where the program called one)
        for (auto& per_pe : l.rkeys)
            for (ucp_rkey_h& k : per_pe)
                if (k) ucp_rkey_destroy(std::exchange(k, nullptr));
        ucp_request_param_t prm{};
        for (ucp_ep_h& ep : l.eps) {
            if (!ep) continue;
            ucs_status_ptr_t req = ucp_ep_close_nbx(std::exchange(ep, nullptr), &prm);
            if (UCS_PTR_IS_PTR(req)) closing.push_back(req);
        }
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (ucs_status_ptr_t req : closing) {
        for (;;) {
            auto lk = lock(l);
            progress_worker(l);
            if (ucp_request_check_status(req) != UCS_INPROGRESS || std::chrono::steady_clock::now() > deadline) break;
        }
        ucp_request_free(req);
    }
}

Ucx::~Ucx() {
    // Contexts destroy their lanes first; any left (a context never destroyed) go now.
    for (Lane* l : std::vector<Lane*>(lanes_)) close_domain(l);
    if (main_.worker) {
        // Close every endpoint, flushing what is in flight, while the progress thread still
        // serves the peers doing the same; then wait for all of them before this PE stops
        // answering.
        close_lane(main_);
        if (boot_) (void)boot_->barrier();
    }
    stop_progress();
    for (ucp_mem_h& m : memh_)
        if (m) ucp_mem_unmap(ctx_, m);
    if (main_.worker) ucp_worker_destroy(main_.worker);
    if (ctx_) ucp_cleanup(ctx_);
    if (lane_ctx_) ucp_cleanup(lane_ctx_);
    if (wake_ >= 0) close(wake_);
}

Domain* Ucx::open_domain() {
    // A worker of its own, with endpoints to every peer's default worker: the context's
    // operations complete (flush) and wait on it alone. Where that fails the context shares
    // the default lane, which is correct, only not independent.
    if (batch_max_ && !lane_ctx_) return nullptr; // (see lane_ctx_)
    auto l = std::make_unique<Lane>();
    auto r = make_worker(*l);
    if (r) r = connect_lane(*l);
    if (!r) {
        VKSHMEM_DEBUG("UCX: a context shares the default worker: {}", r.error().message);
        if (l->worker) {
            close_lane(*l);
            ucp_worker_destroy(l->worker);
        }
        return nullptr;
    }
    closing_.fetch_add(1, std::memory_order_acq_rel);
    wake_progress();
    {
        std::unique_lock lk(lanes_mu_);
        lanes_.push_back(l.get());
    }
    closing_.fetch_sub(1, std::memory_order_acq_rel);
    return l.release();
}

void Ucx::close_domain(Domain* d) {
    if (!d) return;
    auto* l = static_cast<Lane*>(d);
    if (auto r = quiet_on(l); !r) VKSHMEM_WARN("closing a context: {}", r.error().message);
    closing_.fetch_add(1, std::memory_order_acq_rel);
    wake_progress();
    {
        std::unique_lock lk(lanes_mu_);
        std::erase(lanes_, l);
    }
    closing_.fetch_sub(1, std::memory_order_acq_rel);
    close_lane(*l);
    ucp_worker_destroy(l->worker);
    delete l;
}

void Ucx::nap(long ns) {
    precise_timers();
    main_.app_ns.store(now_ns(), std::memory_order_relaxed);
    bool armed = false;
    {
        std::unique_lock lk(main_.mu, std::try_to_lock);
        if (lk.owns_lock()) {
            send_batches(main_);
            if (progress_worker(main_) != 0) return; // something arrived: the caller looks again
            armed = ucp_worker_arm(main_.worker) == UCS_OK;
            if (!armed) return; // events pending (UCS_ERR_BUSY)
        }
    }
    if (!armed) return timer_nap(ns); // another thread is progressing the worker
    timespec ts{0, ns};
    pollfd pf{main_.efd, POLLIN, 0};
    if (ppoll(&pf, 1, &ts, nullptr) > 0) progress();
}

template <class Done> void Ucx::wait(Lane& l, Done&& done) {
    // How long to spin before sleeping on the worker's events: a round trip over tcp on one host
    // takes 10-20 us, and a PE that sleeps for each one gets both PEs scheduled on one core (the
    // 8-byte get took 11 or 35-65 us from run to run at 2 PEs on 2 cores; spinning this long
    // keeps it at the low end). None where this node's PEs outnumber the CPUs (core/wait.hpp).
    // While the worker keeps making progress (completions of a quiet's many operations arrive one
    // after another) the spin goes on 50 us past the last of it: sleeping between them cost a
    // wake-up per completion (8-byte put_nbi, 64 per quiet over tcp: PE 0's poll and the context
    // switches it caused were a tenth of its time).
    const std::int64_t spin_ns = g_state.spin_before_yield > 0 ? 50'000 : 0;
    std::int64_t spin_until = now_ns() + spin_ns;
    l.waiters.fetch_add(1, std::memory_order_relaxed);
    struct Leave {
        Ucx& t;
        Lane& l;
        ~Leave() {
            // The progress thread sleeps long while a thread waits: what is still in flight needs it.
            const bool last = l.waiters.fetch_sub(1, std::memory_order_relaxed) == 1;
            if (last && l.pending.load(std::memory_order_relaxed) != 0) t.wake_progress();
        }
    } leave{*this, l};
    for (std::int64_t spins = 0;; ++spins) {
        const std::int64_t t = now_ns();
        l.app_ns.store(t, std::memory_order_relaxed);
        bool armed = false, via = false, via_armed = false;
        {
            auto lk = lock(l);
            if (progress_worker(l) != 0 && spin_ns) spin_until = t + spin_ns;
            // A context's batches are answered on the default worker: this thread progresses it
            // too (unless another thread does), and sleeps on its events as well.
            via = via_default(l) && l.unanswered.load(std::memory_order_relaxed) != 0;
            if (via) {
                // (the application progresses the default worker here: progress_loop stands back)
                main_.app_ns.store(t, std::memory_order_relaxed);
                std::unique_lock m(main_.mu, std::try_to_lock);
                if (m.owns_lock()) {
                    if (progress_worker(main_) != 0 && spin_ns) spin_until = t + spin_ns;
                    if (spins > 64 && t > spin_until) via_armed = ucp_worker_arm(main_.worker) == UCS_OK;
                }
            }
            if (done()) return;
            // Past a short spin, sleep on the worker's events (what completes the request wakes
            // it at once) rather than yield: while other programs hold the CPUs a yield costs a
            // time slice per round trip (a contended atomic took 7x as long, bench notes in
            // transports/ucx/README.md). Not armed (UCS_ERR_BUSY): more to progress right away.
            if (spins > 64 && t > spin_until && (!via || via_armed)) armed = ucp_worker_arm(l.worker) == UCS_OK;
        }
        if (armed) {
            pollfd pf[2] = {{l.efd, POLLIN, 0}, {main_.efd, POLLIN, 0}};
            poll(pf, via_armed ? 2 : 1, 1); // 1 ms: also a completion that no event announces is seen soon
        } else if (via && !via_armed && spins > 64 && t > spin_until) {
            sched_yield(); // another thread progresses the default worker
        }
    }
}

Result<void> Ucx::complete(Lane& l, ucs_status_ptr_t req, const char* what) {
    if (req == nullptr) return {};
    if (UCS_PTR_IS_ERR(req)) return ucx_error(what, UCS_PTR_STATUS(req));
    ucs_status_t s = UCS_INPROGRESS;
    wait(l, [&] {
        s = ucp_request_check_status(req);
        if (s == UCS_INPROGRESS) return false;
        ucp_request_free(req);
        return true;
    });
    if (s != UCS_OK) return ucx_error(what, s);
    return {};
}

Result<void> Ucx::settle(Lane& l, bool to_batch) {
    ucs_status_ptr_t req = nullptr;
    {
        auto lk = lock(l);
        if (settled(l, to_batch)) return {};
        if (to_batch) {
            ucp_request_param_t prm{};
            req = ucp_worker_flush_nbx(l.worker, &prm);
            l.direct = false;
        } else {
            send_batches(l);
        }
    }
    if (to_batch) return complete(l, req, "flush");
    wait(l, [&] { return l.unanswered.load(std::memory_order_acquire) == 0; });
    return {};
}

Result<const Remote*> Ucx::remote(Lane& l, int pe, int space, std::uint64_t offset, std::size_t n, const char* what) {
    const Remote& r = remote_[static_cast<std::size_t>(pe)][space];
    if (!l.eps[static_cast<std::size_t>(pe)] || !l.rkeys[static_cast<std::size_t>(pe)][space])
        return Error{fmt::format("UCX {}: PE {}'s segment {} was not registered with UCX", what, pe, space)};
    if (offset > r.size || n > r.size - offset)
        return Error{fmt::format("UCX {}: {} bytes at offset {:#x} run past PE {}'s segment ({} bytes)", what, n,
                                 offset, pe, r.size)};
    return &r;
}

Result<void> Ucx::rma(const Post& how, bool is_put, int pe, int space, std::uint64_t offset, void* buf,
                      std::size_t n) {
    const char* what = is_put ? "put" : "get";
    Lane& l = lane(how.domain);
    auto r = remote(l, pe, space, offset, n, what);
    if (!r) return r.error();
    ucp_request_param_t prm{};
    if (how.nbi) {
        prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        prm.cb.send = on_rma_done;
        prm.user_data = &l;
    }
    const auto p = static_cast<std::size_t>(pe);
    ucp_ep_h ep = l.eps[p];
    ucp_rkey_h key = l.rkeys[p][space];
    ucs_status_ptr_t req;
    if (how.nbi) l.app_ns.store(now_ns(), std::memory_order_relaxed); // the application is here (progress_loop)
    const bool batched =
        how.nbi && l.batching && n != 0 && (n <= batch_max_ || (n >= kDeferFrom && l.defers));
    {
        auto lk = lock(l);
        if (!settled(l, batched)) { // (rarely: a context's change between batches and its own endpoints)
            lk.lk.unlock();
            if (auto st = settle(l, batched); !st) return st;
            lk.lk.lock();
        }
        if (batched) {
            if (n <= batch_max_) batch(l, is_put, pe, space, offset, buf, n);
            else l.deferred.push_back({is_put, p, (*r)->base + offset, key, buf, n});
            if (!l.posted.exchange(true, std::memory_order_relaxed)) wake_progress();
            return {};
        }
        // What was gathered for pe goes first (an operation of its own does not pass it).
        send_batch(l, pe);
        if (!l.deferred.empty()) post_deferred(l);
        req = is_put ? ucp_put_nbx(ep, buf, n, (*r)->base + offset, key, &prm)
                     : ucp_get_nbx(ep, buf, n, (*r)->base + offset, key, &prm);
        if (how.nbi) {
            if (UCS_PTR_IS_ERR(req)) return ucx_error(what, UCS_PTR_STATUS(req));
            // The first since the last flush wakes the progress thread, which may sleep on the
            // worker's events while nothing arrives to move what UCP holds.
            if (!l.posted.exchange(true, std::memory_order_relaxed)) wake_progress();
            if (UCS_PTR_IS_PTR(req)) l.pending.fetch_add(1, std::memory_order_relaxed); // its callback counts it done
            return {};
        }
    }
    return complete(l, req, what);
}

Result<void> Ucx::amo_on(const Post& how, int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                         std::uint64_t operand, std::uint64_t cond, void* fetch) {
    Lane& l = lane(how.domain);
    auto r = remote(l, pe, space, offset, width, "atomic");
    if (!r) return r.error();
    if (width != 4 && width != 8) return Error{fmt::format("UCX atomic: {}-byte operands are not native", width)};
    // Where batches carry atomics, a non-blocking one goes into the target's batch: among the
    // gets where it returns the old value, else among the puts. Only the default lane's: a
    // context's lane settles at each change between its batches and its own endpoints (a round
    // trip), which a mix with blocking atomics would cost at every other one. Not the blocking
    // non-fetching ones either (posted `prompt`, not waited for): in a mix with fetching ones
    // (add, fetch_add, add, ...) each batch of one or two costs an answer of its own, a message
    // that a UCP atomic without a reply does not (the contention cases of spmd_amo with UCX's
    // progress slowed took 3x as long).
    if (how.nbi && !how.prompt && &l == &main_ && l.batching && cpu_atomics_ && (fetch || !returns_old(op, false))) {
        return gather(l, pe, [&](batch::Gathered& g) {
            if (!g.fits_amo(fetch)) send_batch(l, pe);
            g.add_amo(space, offset, op, width, operand, cond, fetch);
        });
    }
    ucp_atomic_op_t uop = UCP_ATOMIC_OP_ADD;
    bool reply = fetch != nullptr;
    switch (op) {
    case AmoOp::Fetch: uop = UCP_ATOMIC_OP_ADD, operand = 0, reply = true; break;
    case AmoOp::Set: uop = UCP_ATOMIC_OP_SWAP, reply = true; break; // SWAP always replies
    case AmoOp::Swap: uop = UCP_ATOMIC_OP_SWAP, reply = true; break;
    case AmoOp::CompareSwap: uop = UCP_ATOMIC_OP_CSWAP, reply = true; break;
    case AmoOp::Add: uop = UCP_ATOMIC_OP_ADD; break;
    case AmoOp::And: uop = UCP_ATOMIC_OP_AND; break;
    case AmoOp::Or: uop = UCP_ATOMIC_OP_OR; break;
    case AmoOp::Xor: uop = UCP_ATOMIC_OP_XOR; break;
    }
    AmoBox on_stack{&l, 0, 0};
    AmoBox* box = how.nbi ? new AmoBox{&l, 0, 0} : &on_stack;
    // Operands in their width (the low bytes: little-endian); for CSWAP the operand is the
    // comparand, and the reply buffer holds the new value going out and the old one coming back.
    const std::uint64_t value = op == AmoOp::CompareSwap ? cond : operand;
    std::memcpy(&box->operand, &value, width);
    void* reply_buf = !reply ? nullptr : fetch ? fetch : &box->reply;
    if (op == AmoOp::CompareSwap) std::memcpy(reply_buf, &operand, width);
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
    prm.datatype = ucp_dt_make_contig(width);
    if (reply_buf) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        prm.reply_buffer = reply_buf;
    }
    if (how.nbi) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        prm.cb.send = on_amo_done;
        prm.user_data = box;
    }
    const auto p = static_cast<std::size_t>(pe);
    ucs_status_ptr_t req;
    if (how.nbi) l.app_ns.store(now_ns(), std::memory_order_relaxed); // the application is here (progress_loop)
    {
        auto lk = lock(l);
        if (!settled(l, false)) {
            lk.lk.unlock();
            if (auto st = settle(l, false); !st) {
                if (how.nbi) delete box;
                return st;
            }
            lk.lk.lock();
        }
        send_batch(l, pe);
        if (!l.deferred.empty()) post_deferred(l);
        req = ucp_atomic_op_nbx(l.eps[p], uop, &box->operand, 1, (*r)->base + offset, l.rkeys[p][space], &prm);
        if (how.nbi) {
            if (UCS_PTR_IS_PTR(req)) {
                l.pending.fetch_add(1, std::memory_order_relaxed); // its callback counts it done and frees the box
                return {};
            }
            delete box;
            if (UCS_PTR_IS_ERR(req)) return ucx_error("atomic", UCS_PTR_STATUS(req));
            return {};
        }
    }
    return complete(l, req, "atomic");
}

// Where the lane batches, a small non-blocking put with signal goes into pe's batch, the signal
// as a record behind the data (transports/batch.hpp): one message, no fence. Else the put, a
// fence (which waits until the batches before it are carried out: a round trip) and the atomic.
// Not a blocking one: its data would wait for the target's CPU, and a later blocking put of the
// same bytes that takes a one-sided path (shared memory) could land first.
Result<void> Ucx::put_signal_on(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                                std::size_t n, int sig_space, std::uint64_t sig_offset, AmoOp op,
                                std::uint64_t signal) {
    Lane& l = lane(how.domain);
    if (!how.nbi || !l.batching || !cpu_atomics_ || n == 0 || n > batch_max_)
        return Transport::put_signal_on(how, pe, space, offset, src, n, sig_space, sig_offset, op, signal);
    if (auto r = remote(l, pe, space, offset, n, "put"); !r) return r.error();
    if (auto r = remote(l, pe, sig_space, sig_offset, 8, "signal"); !r) return r.error();
    return gather(l, pe, [&](batch::Gathered& g) {
        if (!g.fits_signal(n)) send_batch(l, pe);
        g.put_signal(space, offset, src, n, sig_space, sig_offset, op, signal);
    });
}

Result<void> Ucx::fence_on(Domain* d) {
    Lane& l = lane(d);
    {
        // Batches are active messages, which UCP's fence does not order: operations after the
        // fence wait until every batch before it is carried out (acknowledged).
        auto lk = lock(l);
        send_batches(l);
    }
    if (l.unanswered.load(std::memory_order_relaxed) != 0)
        wait(l, [&] { return l.unanswered.load(std::memory_order_acquire) == 0; });
    {
        auto lk = lock(l);
        const ucs_status_t s = ucp_worker_fence(l.worker);
        if (s != UCS_OK) return ucx_error("ucp_worker_fence", s);
    }
    return take_error(l);
}

Result<void> Ucx::quiet_on(Domain* d) {
    Lane& l = lane(d);
    ucp_request_param_t prm{};
    ucs_status_ptr_t req;
    {
        auto lk = lock(l);
        send_batches(l);
        l.posted.store(false, std::memory_order_relaxed);
        l.direct = false; // (operations posted after the flush set it again)
        req = ucp_worker_flush_nbx(l.worker, &prm);
    }
    if (auto r = complete(l, req, "flush"); !r) return r;
    // The flush completed every operation; their callbacks (which count them and free their
    // state) run in the progress calls that follow, and the batches' answers come.
    wait(l, [&] { return l.pending.load(std::memory_order_acquire) == 0; });
    return take_error(l);
}

void Ucx::batch(Lane& l, bool is_put, int pe, int space, std::uint64_t offset, void* buf, std::size_t n) {
    batch::Gathered& g = l.batches[static_cast<std::size_t>(pe)];
    if (!g.fits(is_put, n)) send_batch(l, pe);
    g.add(is_put, space, offset, buf, n);
    l.batched = true;
}

void Ucx::post_deferred(Lane& l) {
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    prm.cb.send = on_rma_done;
    prm.user_data = &l;
    for (const Lane::Deferred& d : std::exchange(l.deferred, {})) {
        const ucs_status_ptr_t req = d.is_put ? ucp_put_nbx(l.eps[d.pe], d.buf, d.n, d.remote, d.key, &prm)
                                              : ucp_get_nbx(l.eps[d.pe], d.buf, d.n, d.remote, d.key, &prm);
        if (UCS_PTR_IS_ERR(req)) note_failure(l, UCS_PTR_STATUS(req)); // quiet reports it
        else if (UCS_PTR_IS_PTR(req)) l.pending.fetch_add(1, std::memory_order_relaxed);
    }
}

void Ucx::send_batch(Lane& l, int pe) {
    batch::Gathered& b = l.batches[static_cast<std::size_t>(pe)];
    if (b.empty()) return;
    // A context's lane sends through the default worker (under its mutex too: always taken
    // after the lane's).
    std::unique_lock<std::mutex> via;
    if (&l != &main_) via = hold(main_);
    for (unsigned id : {kAmPuts, kAmGets}) {
        std::vector<unsigned char>& gathered = id == kAmPuts ? b.puts : b.gets;
        if (gathered.empty()) continue;
        // Counted until its answer comes (on_ack, on_data), which names the lane.
        l.unanswered.fetch_add(1, std::memory_order_relaxed);
        l.pending.fetch_add(1, std::memory_order_relaxed);
        auto* out = new Outgoing{&l, std::exchange(gathered, {}), true, reinterpret_cast<std::uintptr_t>(&l)};
        am_send(main_, main_.eps[static_cast<std::size_t>(pe)], id, out, true);
    }
    b.answer = 0;
}

void Ucx::am_send(Lane& w, ucp_ep_h ep, unsigned id, Outgoing* out, bool reply) {
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    // Eager: the receiver finds the whole message in its callback. A batch asks for an answer on
    // the endpoint it came from (the sending lane's worker).
    prm.flags = static_cast<std::uint32_t>(UCP_AM_SEND_FLAG_EAGER) |
                (reply ? static_cast<std::uint32_t>(UCP_AM_SEND_FLAG_REPLY) : 0u);
    prm.cb.send = on_am_sent;
    prm.user_data = out;
    const ucs_status_ptr_t req =
        ucp_am_send_nbx(ep, id, &out->token, sizeof out->token, out->data.data(), out->data.size(), &prm);
    if (UCS_PTR_IS_PTR(req)) return; // on_am_sent frees it
    if (UCS_PTR_IS_ERR(req)) {
        if (out->counted) batch_failed(*out->lane, UCS_PTR_STATUS(req));
        else note_failure(w, UCS_PTR_STATUS(req));
    }
    delete out;
}

// A message's header: the asking lane's token (Outgoing::token), 0 if none.
std::uint64_t token_of(const void* header, std::size_t len) {
    std::uint64_t token = 0;
    if (len == sizeof token) std::memcpy(&token, header, sizeof token);
    return token;
}

// A peer's batch of puts (on the default worker): carried out in order, then acknowledged.

ucs_status_t Ucx::on_puts(void* arg, const void* header, std::size_t header_len, void* data, std::size_t len,
                          const ucp_am_recv_param_t* param) {
    Lane& l = *static_cast<Lane*>(arg);
    Ucx& t = *l.owner;
    if (!batch::carry_out_puts(static_cast<const unsigned char*>(data), len, t.segments()))
        note_failure(l, UCS_ERR_INVALID_PARAM);
    if (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
        l.answers.push_back({param->reply_ep, kAmAck, new Outgoing{&l, {}, false, token_of(header, header_len)}});
    return UCS_OK;
}

// A peer's batch of gets: answered with the bytes of each, as they are now.
ucs_status_t Ucx::on_gets(void* arg, const void* header, std::size_t header_len, void* data, std::size_t len,
                          const ucp_am_recv_param_t* param) {
    Lane& l = *static_cast<Lane*>(arg);
    Ucx& t = *l.owner;
    auto* out = new Outgoing{&l, {}, false, token_of(header, header_len)};
    if (!batch::answer_gets(static_cast<const unsigned char*>(data), len, out->data, t.segments()))
        note_failure(l, UCS_ERR_INVALID_PARAM);
    if (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) l.answers.push_back({param->reply_ep, kAmData, out});
    else delete out;
    return UCS_OK;
}

// The answers to batches, on the default worker (under its mutex: callbacks run in progress
// calls): counted on the lane that sent the batch, which the header names (a context's lane
// waits in its quiet until they have come, so it outlives them).
Lane& asker(void* arg, const void* header, std::size_t header_len) {
    const std::uint64_t token = token_of(header, header_len);
    return token ? *reinterpret_cast<Lane*>(static_cast<std::uintptr_t>(token)) : *static_cast<Lane*>(arg);
}

ucs_status_t Ucx::on_ack(void* arg, const void* header, std::size_t header_len, void*, std::size_t,
                         const ucp_am_recv_param_t*) {
    answered(asker(arg, header, header_len));
    return UCS_OK;
}

ucs_status_t Ucx::on_data(void* arg, const void* header, std::size_t header_len, void* data, std::size_t len,
                          const ucp_am_recv_param_t*) {
    batch::take_answer(static_cast<const unsigned char*>(data), len);
    answered(asker(arg, header, header_len));
    return UCS_OK;
}

} // namespace

Result<std::unique_ptr<Transport>> make_ucx(int my_pe, int n_pes, std::size_t batch_max, NbiDefer defer) {
    auto t = std::make_unique<Ucx>(my_pe, n_pes, batch_max, defer);
    if (auto r = t->init(); !r) return r.error();
    return std::unique_ptr<Transport>(std::move(t));
}

} // namespace vkshmem::net
