// SPDX-License-Identifier: BSL-1.0
// The libfabric transport: one RDM endpoint per PE with RMA and atomics, which
// peers address, and one more per context (shmem_ctx_create) that initiates
// its operations only.
//
// Lanes: an endpoint, its completion queue, and the mutex every call on the
// two is made under, by application threads and by the progress thread. The
// PE's endpoint is the main lane; a context's lane is a libfabric domain of
// its own (address vector, queue, endpoint), so threads on different contexts
// do not wait for each other. Every domain is opened FI_THREAD_DOMAIN: one
// opened FI_THREAD_SAFE made tcp;ofi_rxm (libfabric 1.17) twice as slow on
// streams of non-blocking operations. Where the provider needs local buffers
// registered (FI_MR_LOCAL) a context's lane shares the main lane's endpoint
// and keeps only its own counts. Operations are posted with
// FI_DELIVERY_COMPLETE, each with its own context, and the caller waits for
// that context's completion (completions need not come in the order
// operations were posted). Providers with manual progress (tcp;ofi_rxm, shm)
// need this PE's CPU to serve what other PEs ask of it, so a progress thread
// polls while no application thread does.
//
// Registration: every mode a provider may ask for is handled — keys chosen
// by the provider or by us (FI_MR_PROV_KEY), remote addresses as virtual
// addresses or offsets (FI_MR_VIRT_ADDR), memory regions bound to the
// endpoint (FI_MR_ENDPOINT), and local registration (FI_MR_LOCAL: buffers
// outside the registered segments pass through a registered bounce buffer).
//
// Atomics: native where the provider has every operation the API needs in 4
// and 8 bytes (fi_query_atomic); otherwise, or with VKSHMEM_OFI_ATOMICS=messages,
// each atomic is a message that the target PE's CPU carries out on its own
// memory and answers, so all of them are atomic with each other and with the
// target's own CPU atomics.
//
// Batches (transports/batch.hpp): small non-blocking puts and gets to one PE
// travel as one message each, which the target's CPU carries out and answers,
// where the provider has messages and needs no local registration
// (VKSHMEM_NBI_BATCH). A context's lane gathers under its own mutex and sends
// through the main lane's endpoint, where the answers come, naming the lane.
#include "transports/transport.hpp"

#include "bootstrap/bootstrap.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "core/tsan.hpp"
#include "core/wait.hpp"
#include "transports/batch.hpp"
#include "transports/blob.hpp"
#include "transports/cpu_amo.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vkshmem::net {
namespace {

constexpr int kSegments = 3;
constexpr std::size_t kBounceBytes = 1 << 20;
constexpr int kRecvs = 64;
// Where the main lane batches, its non-blocking puts and gets from this size on are posted later:
// by the progress thread once the application computes, or at the next quiet, other operation or
// wait (whoever progresses the lane first). Over tcp;ofi_rxm fi_write sends the bytes inside the
// call: 16 x 64 KiB of put_nbi spent 286 of their 305 us posting, and none of it overlapped a
// computation; each fi_read sends its request inside the call (16 x 64 KiB of get_nbi: 73 of 270 us).
constexpr std::size_t kDeferFrom = 16384;

struct Remote {
    std::uint64_t base = 0; // what remote addresses start from (base address or 0)
    std::uint64_t size = 0;
    std::uint64_t key = 0;
    bool ok = false;
};

Error fi_error(const std::string& what, long rc) {
    return Error{fmt::format("libfabric {}: {}", what, fi_strerror(static_cast<int>(rc < 0 ? -rc : rc)))};
}

// A context's completion domain, or the PE's default: the endpoint its operations are posted
// on and the queue their completions come to (its own, or the main lane's), with the mutex for
// both; its non-blocking operations still in flight, and what the first failed one said (both
// under that mutex); its atomics sent as messages (which go through the main lane, where
// their answers come) not yet answered, under the main lane's mutex. quiet_on() waits for
// the lane's operations alone.
struct Op;

// A put's signal (put_signal_nbi with native atomics): the atomic posted once the put completes
// (FI_DELIVERY_COMPLETE: its bytes are in the target's memory), so the signal never passes the data
// and the caller does not wait for it.
struct Signal {
    bool on = false;
    int pe = 0;
    std::uint64_t at = 0, key = 0;
    fi_op op = FI_SUM;
    std::uint64_t value = 0;
};

struct Lane final : Domain {
    fid_ep* ep = nullptr;
    fid_cq* cq = nullptr;
    std::mutex* mu = &own_mu;
    std::mutex own_mu;
    bool own = false; // dom, av, ep and cq are this lane's
    fid_domain* dom = nullptr;
    fid_av* av = nullptr;
    std::vector<fi_addr_t> addrs; // each PE's address in av (own lanes)
    std::size_t pending = 0;
    std::string error;
    std::uint64_t unanswered = 0;
    // Batches (under mu): what is gathered for each PE, and whether any is. A context's are sent
    // through the main lane and counted in unanswered, the main lane's in pending.
    std::vector<batch::Gathered> batches;
    bool batched = false;
    // Large non-blocking puts and gets not posted yet (kDeferFrom; the main lane's, under mu), in
    // the order of their calls.
    struct Deferred {
        bool is_put;
        int pe;
        char* buf;
        std::size_t n;
        void* desc;
        std::uint64_t at, key;
        Signal signal; // to post once the put completes
    };
    std::deque<Deferred> deferred;
    // Signals whose puts completed while the provider had no room for them (under mu), counted in
    // pending; posted at the lane's next progress.
    std::deque<Op*> signals;
    // The main lane's deferred transfers not yet complete (under mu): they move only while someone
    // progresses the lane, so the progress thread does.
    std::size_t large = 0;
};

// One posted operation: its context, and what its completion said. A non-blocking one
// (`nbi` set) lives on the heap until its completion, with the operands its atomic reads.
struct Op {
    fi_context2 ctx{}; // first: the completion's op_context points here
    bool done = false;
    std::string error;
    Lane* nbi = nullptr;
    std::uint64_t operand = 0, cond = 0;
    // A message this PE sends with fi_send (too large to inject): its bytes, and the lane that
    // counts the answer to it (a batch), if any.
    std::vector<unsigned char> msg;
    bool send = false;
    bool large = false; // a deferred transfer: counted in its lane's `large` until its completion
    Lane* counted = nullptr;
    Signal signal; // a put's, posted at its completion
};

// An atomic as a message (the fallback) and its answer.
struct AmoMsg {
    std::uint8_t kind; // kRequest, kAnswer
    std::uint8_t op;   // AmoOp
    std::uint8_t width;
    std::uint8_t space;
    std::uint32_t from; // the requesting PE
    std::uint64_t id;   // the requester's number for it
    std::uint64_t offset;
    std::uint64_t operand;
    std::uint64_t cond;
    std::uint64_t result; // the old value (answers)
};
static_assert(sizeof(AmoMsg) == 48);
// A batch, or an answer to one: this header, then the records (transports/batch.hpp).
struct BatchHead {
    std::uint8_t kind; // kPuts, kGets, kAck, kData
    std::uint8_t pad[3];
    std::uint32_t from;
    std::uint64_t bytes; // of the records
    std::uint64_t lane;  // the asking context's lane (0: the main lane), echoed by the answer
};
static_assert(sizeof(BatchHead) == 24);
constexpr std::uint8_t kRequest = 1, kAnswer = 2, kPuts = 3, kGets = 4, kAck = 5, kData = 6;
// A message waiting for the provider to take it (answers and batches).
struct Outbound {
    int to;
    std::vector<unsigned char> bytes;
    Lane* counted; // the lane that counts its answer (a batch), if any
};

class Ofi final : public Transport {
public:
    Ofi(int me, int n) : me_(me), n_(n), remote_(static_cast<std::size_t>(n)), addrs_(static_cast<std::size_t>(n)) {
        caps_.amo_widths = (1u << 4) | (1u << 8);
        main_.batches.resize(static_cast<std::size_t>(n));
    }
    ~Ofi() override;

    Result<void> init(const std::string& provider, OfiAtomics atomics, std::size_t batch_max, NbiDefer defer);
    const char* name() const override { return "ofi"; }
    const Caps& caps() const override { return caps_; }
    Result<void> register_segment(int space, void* addr, std::size_t size) override;
    Result<void> connect(Bootstrap& boot, const std::vector<bool>& peers) override;
    bool reach(int pe, int space) const override { return remote_[static_cast<std::size_t>(pe)][space].ok; }
    Result<void> put(int pe, int space, std::uint64_t offset, const void* src, std::size_t n) override {
        return rma({}, true, pe, space, offset, static_cast<char*>(const_cast<void*>(src)), n);
    }
    Result<void> get(int pe, int space, std::uint64_t offset, void* dst, std::size_t n) override {
        return rma({}, false, pe, space, offset, static_cast<char*>(dst), n);
    }
    Result<std::uint64_t> amo(int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                              std::uint64_t operand, std::uint64_t cond, bool fetch) override;
    Result<void> fence() override { return quiet(); } // quiet is cheap: posted operations are awaited anyway
    Result<void> quiet() override { return quiet_on(nullptr); }
    Result<void> put_on(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                        std::size_t n) override {
        return rma(how, true, pe, space, offset, static_cast<char*>(const_cast<void*>(src)), n);
    }
    Result<void> get_on(const Post& how, int pe, int space, std::uint64_t offset, void* dst, std::size_t n) override {
        return rma(how, false, pe, space, offset, static_cast<char*>(dst), n);
    }
    Result<void> amo_on(const Post& how, int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                        std::uint64_t operand, std::uint64_t cond, void* fetch) override;
    Result<void> put_signal_on(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                               std::size_t n, int sig_space, std::uint64_t sig_offset, AmoOp op,
                               std::uint64_t signal) override;
    Domain* open_domain() override;
    void close_domain(Domain* d) override;
    // Ordering by completion: posted operations complete in any order (FI_ORDER_NONE).
    Result<void> fence_on(Domain* d) override { return quiet_on(d); }
    Result<void> quiet_on(Domain* d) override;
    void progress() override { (void)progress_main(nullptr); }
    void nap(long ns) override;
    std::string describe() const override { return desc_; }

private:
    // A PE's wait: the main lane's batches sent and the lane progressed, unless another thread
    // holds it (false); with `sleep`, also whether the wait may now sleep on the queue's fd.
    bool progress_main(bool* sleep) {
        app_active_.store(true, std::memory_order_relaxed);
        send_lanes_batches();
        std::unique_lock lk(mu_, std::try_to_lock);
        if (!lk.owns_lock()) return false;
        send_batches(main_); // a PE that waits sends what it gathered
        progress_locked(main_);
        if (sleep) *sleep = may_sleep();
        return true;
    }
    // Where the completion queue has a wait object (wait_fd_): whether a wait may sleep on it now
    // (fi_trywait, under the main lane's mutex: nothing is pending), and the sleep of at most ns.
    bool may_sleep() {
        fid* f = &cq_->fid;
        return fi_trywait(fabric_, &f, 1) == FI_SUCCESS;
    }
    void sleep_on_cq(long ns) {
        pollfd pf{wait_fd_, POLLIN, 0};
        const timespec ts{0, ns};
        (void)ppoll(&pf, 1, &ts, nullptr);
    }
    Result<const Remote*> remote(int pe, int space, std::uint64_t offset, std::size_t n, const char* what);
    // Posts one operation on lane l (f(endpoint, context) returns a libfabric code), retrying
    // while the provider is busy; a non-blocking one (op->nbi) is counted in its lane, and its
    // completion deletes it (a failed post leaves it to the caller).
    template <class F> Result<void> post(Lane& l, Op* op, F&& f, const char* what);
    // Posts one operation on lane l and waits (progressing) for its completion.
    template <class F> Result<void> run(Lane& l, F&& f, const char* what);
    // Progresses lane l until done() holds (checked under its mutex); a context's lane
    // progresses the main lane too where that is free, to serve peers meanwhile.
    template <class D> void wait_until(Lane& l, D&& done);
    Result<void> rma(const Post& how, bool is_put, int pe, int space, std::uint64_t offset, char* buf, std::size_t n);
    Result<void> native_amo(const Post& how, const Remote& r, int pe, std::uint64_t offset, AmoOp op, unsigned width,
                            std::uint64_t operand, std::uint64_t cond, void* fetch);
    Result<void> chained_put_signal(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                                   std::size_t n, int sig_space, std::uint64_t sig_offset, AmoOp op,
                                   std::uint64_t signal);
    Result<void> message_amo(const Post& how, int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                             std::uint64_t operand, std::uint64_t cond, void* fetch);
    Lane& lane(Domain* d) { return d ? *static_cast<Lane*>(d) : main_; }
    fi_addr_t addr(const Lane& l, int pe) const {
        return (l.own ? l.addrs : addrs_)[static_cast<std::size_t>(pe)];
    }
    // A completion (or its error) for the operation whose context is `ctx`.
    void finished(fi_context2* ctx, std::string error);
    // The memory descriptor of a local buffer inside a registered segment (null otherwise).
    void* local_desc(const void* p, std::size_t n) const;
    void progress_locked(Lane& l);
    void close_lane(Lane& l);
    void serve(const AmoMsg& m);
    // Batches: what arrived (under mu_); sending l's batches to pe, or to every PE (under l's
    // mutex; a context's lane takes mu_ too, always after its own); the messages queued (under
    // mu_); one answer counted (under mu_).
    void serve_batch(const unsigned char* msg);
    // A PE that waits sends what its contexts' lanes gathered too (a context's atomic may be what
    // a peer waits for), where no other thread holds them; the progress thread does not while the
    // application is in the library.
    void send_lanes_batches() {
        std::unique_lock lk(lanes_mu_, std::try_to_lock);
        if (!lk.owns_lock()) return;
        for (Lane* l : lanes_) {
            std::unique_lock ll(*l->mu, std::try_to_lock);
            if (ll.owns_lock()) send_batches(*l);
        }
    }
    void send_batch(Lane& l, int pe);
    void send_batches(Lane& l);
    void send_queued();
    // Posts l's deferred puts and gets, in order, until the provider has no room (under l's mutex).
    void post_deferred(Lane& l);
    // The signal of a put that completed (op, counted in l's pending): posted on l, or queued in
    // l.signals while the provider has no room; post_signals posts those (both under l's mutex).
    void post_signal(Lane& l, Op* op);
    void post_signals(Lane& l);
    // An application thread deferred a large transfer: wakes the progress thread from a sleep the
    // first time since its last look.
    void posted() {
        app_active_.store(true, std::memory_order_relaxed);
        if (posted_.load(std::memory_order_relaxed) || posted_.exchange(true, std::memory_order_relaxed)) return;
        const std::uint64_t one = 1;
        [[maybe_unused]] ssize_t r = write(wake_, &one, sizeof one);
    }
    void answered(Lane& l) {
        if (&l == &main_) --main_.pending;
        else --l.unanswered;
    }
    Result<void> post_recv(int i);
    void progress_loop();

    int me_, n_;
    Caps caps_;
    std::mutex mu_; // the main lane's
    fi_info* info_ = nullptr;
    fid_fabric* fabric_ = nullptr;
    fid_domain* domain_ = nullptr;
    fid_av* av_ = nullptr;
    fid_cq* cq_ = nullptr;
    fid_ep* ep_ = nullptr;
    Lane main_;
    bool virt_addr_ = false, prov_key_ = false, mr_local_ = false, mr_endpoint_ = false;
    std::array<fid_mr*, kSegments> mr_{};
    std::array<void*, kSegments> seg_addr_{};
    std::array<std::size_t, kSegments> seg_size_{};
    std::vector<std::array<Remote, kSegments>> remote_;
    std::vector<fi_addr_t> addrs_;
    std::vector<std::vector<std::uint8_t>> names_; // every PE's endpoint name, for the contexts' lanes
    // FI_MR_LOCAL: the bounce buffer, its registration, and who uses it.
    std::vector<unsigned char> bounce_;
    fid_mr* bounce_mr_ = nullptr;
    fid_mr* recv_mr_ = nullptr; // FI_MR_LOCAL: the receive buffers' registration
    std::mutex bounce_mu_;
    std::string last_error_; // of what has no waiter (answers, receives)
    // Atomics as messages.
    bool messages_ = false;
    std::vector<unsigned char> recv_; // kRecvs receive buffers of recv_bytes_
    std::size_t recv_bytes_ = sizeof(AmoMsg);
    std::array<fi_context2, kRecvs> recv_ctx_{};
    std::uint64_t next_id_ = 0;
    struct Answer {
        Lane* lane; // whose request
        void* to;   // where the old value goes (fetching requests)
        unsigned width;
    };
    std::unordered_map<std::uint64_t, Answer> waiting_; // requests sent, answers not yet in
    std::deque<Outbound> to_send_; // messages the provider has not taken yet
    // Batches: the largest operation they take (0: none).
    std::size_t batch_max_ = 0;
    // Where the main lane batches: whether it defers large operations (kDeferFrom), and so has
    // the progress thread carry them while the application computes (VKSHMEM_NBI_DEFER; decided
    // at connect() where auto).
    NbiDefer defer_ = NbiDefer::Off;
    bool defers_ = false;
    // The contexts' own lanes, which the progress thread progresses too.
    std::mutex lanes_mu_;
    std::vector<Lane*> lanes_;
    std::thread progress_;
    std::atomic<bool> stop_{false};
    // Set by application threads whenever they progress; the progress thread
    // clears it and stands back while it finds it set again (a flag, not a
    // time stamp: a clock read per poll cost 5% of a put's round trip).
    std::atomic<bool> app_active_{false};
    // A large transfer was deferred since the progress thread last looked; the eventfd that wakes
    // it then.
    std::atomic<bool> posted_{false};
    int wake_ = -1;
    int wait_fd_ = -1; // the main completion queue's wait object, where it has one (init)
    // Threads waiting on the main lane without a wait object (wait_until): one leads and keeps
    // progressing the queue, the others (followers) sleep until it took completions or left.
    // Two threads that both polled the one queue, each with a private context whose batches'
    // answers come there, kept PE 1, which answers them, off 2 CPUs.
    std::atomic<bool> main_lead_{false};
    std::atomic<int> followers_{0};
    std::uint64_t main_reaped_ = 0; // completions the main lane took (under follow_mu_)
    std::mutex follow_mu_;           // after mu_ where both are held
    std::condition_variable follow_cv_;
    Bootstrap* boot_ = nullptr;
    std::string desc_;
};

Result<void> Ofi::init(const std::string& provider, OfiAtomics atomics, std::size_t batch_max, NbiDefer defer) {
    defer_ = defer;
    // With this set, ofi_rxm progresses data from a thread of its own, which a domain opened
    // FI_THREAD_DOMAIN (every call under its lane's mutex) does not allow: a PE died
    // of a segmentation fault in that thread (tcp;ofi_rxm, libfabric 1.17). The progress thread
    // here does that work. Unset before libfabric's providers read it (at the first fi_getinfo).
    if (const char* v = std::getenv("FI_OFI_RXM_DATA_AUTO_PROGRESS"); v && parse_bool(v).value_or(false)) {
        VKSHMEM_WARN_ONCE("FI_OFI_RXM_DATA_AUTO_PROGRESS={} ignored: ofi_rxm's own progress thread needs a "
                          "thread-safe domain, and vkshmem's libfabric transport progresses the provider itself",
                          v);
        unsetenv("FI_OFI_RXM_DATA_AUTO_PROGRESS");
    }
    fi_info* hints = fi_allocinfo();
    if (!hints) return Error{"fi_allocinfo: out of memory"};
    hints->caps = FI_RMA | FI_ATOMIC | FI_MSG;
    hints->ep_attr->type = FI_EP_RDM;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    if (!provider.empty()) hints->fabric_attr->prov_name = strdup(provider.c_str());
    int rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info_);
    if (rc != 0 && atomics != OfiAtomics::Native) { // a provider without atomics: they go as messages
        hints->caps = FI_RMA | FI_MSG;
        rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info_);
    }
    fi_freeinfo(hints);
    if (rc != 0)
        return fi_error(fmt::format("fi_getinfo (provider {}, RDM endpoints with RMA and delivery completion)",
                                    provider.empty() ? "any: set VKSHMEM_OFI_PROVIDER or FI_PROVIDER" : provider),
                        rc);
    const unsigned mr = static_cast<unsigned>(info_->domain_attr->mr_mode);
    virt_addr_ = mr & FI_MR_VIRT_ADDR;
    prov_key_ = mr & FI_MR_PROV_KEY;
    mr_local_ = mr & FI_MR_LOCAL;
    mr_endpoint_ = mr & FI_MR_ENDPOINT;
    wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_ < 0) return Error{fmt::format("eventfd: {}", std::strerror(errno))};
    if ((rc = fi_fabric(info_->fabric_attr, &fabric_, nullptr))) return fi_error("fi_fabric", rc);
    if ((rc = fi_domain(fabric_, info_, &domain_, nullptr))) return fi_error("fi_domain", rc);
    fi_av_attr av{};
    av.type = FI_AV_TABLE;
    if ((rc = fi_av_open(domain_, &av, &av_, nullptr))) return fi_error("fi_av_open", rc);
    fi_cq_attr cq{};
    cq.format = FI_CQ_FORMAT_CONTEXT;
    cq.wait_obj = FI_WAIT_NONE;
    // Where this node's PEs outnumber its CPUs (no spin before yielding, core/wait.hpp), over
    // tcp: a completion queue with a wait object, whose fd turns readable when any of the
    // provider's sockets does (ofi_rxm adds its core queue's, which holds the endpoints'), so a
    // waiting PE sleeps until a peer's request or its own completion arrives (nap, wait_until).
    // With 3 PEs on one CPU, spmd_amo's contention cases ran 22-27% faster than with timer naps.
    // Not where each PE has a CPU: there the provider's progress with a wait object (epoll)
    // made a blocking 8-byte put and get 10-25% slower at 2 PEs on 2 CPUs, although they
    // rarely sleep (bench/results/2026-12-02-vm-ofi-cq-wait-fd.md).
    const bool tcp = std::strstr(info_->fabric_attr->prov_name, "tcp") != nullptr;
    if (tcp && g_state.spin_before_yield == 0) {
        cq.wait_obj = FI_WAIT_FD;
        if (fi_cq_open(domain_, &cq, &cq_, nullptr) == 0 && fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) != 0) {
            fi_close(&cq_->fid);
            cq_ = nullptr;
        }
        if (!cq_) wait_fd_ = -1;
        cq.wait_obj = FI_WAIT_NONE;
    }
    if (!cq_ && (rc = fi_cq_open(domain_, &cq, &cq_, nullptr))) return fi_error("fi_cq_open", rc);
    if ((rc = fi_endpoint(domain_, info_, &ep_, nullptr))) return fi_error("fi_endpoint", rc);
    if ((rc = fi_ep_bind(ep_, &av_->fid, 0))) return fi_error("fi_ep_bind (address vector)", rc);
    if ((rc = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV)))
        return fi_error("fi_ep_bind (completion queue)", rc);
    if ((rc = fi_enable(ep_))) return fi_error("fi_enable", rc);
    main_.ep = ep_;
    main_.cq = cq_;
    main_.mu = &mu_;

    // Native atomics only if the provider has all of them in both widths.
    bool native = info_->caps & FI_ATOMIC;
    for (fi_datatype dt : {FI_UINT32, FI_UINT64}) {
        fi_atomic_attr a{};
        for (fi_op op : {FI_SUM, FI_BAND, FI_BOR, FI_BXOR, FI_ATOMIC_WRITE})
            native = native && fi_query_atomic(domain_, dt, op, &a, 0) == 0;
        for (fi_op op : {FI_SUM, FI_BAND, FI_BOR, FI_BXOR, FI_ATOMIC_WRITE, FI_ATOMIC_READ})
            native = native && fi_query_atomic(domain_, dt, op, &a, FI_FETCH_ATOMIC) == 0;
        native = native && fi_query_atomic(domain_, dt, FI_CSWAP, &a, FI_COMPARE_ATOMIC) == 0;
    }
    if (atomics == OfiAtomics::Native && !native)
        return Error{fmt::format("VKSHMEM_OFI_ATOMICS=native, but provider {} lacks some 4- or 8-byte atomic "
                                 "operation: use auto",
                                 info_->fabric_attr->prov_name)};
    // shm's native atomics left garbage in counters and answered a swap with
    // 0 (libfabric 1.17, tests/transport): auto sends them as messages there.
    // Not over tcp, although there the provider's atomics are software of its own: messages
    // made 8-byte shmem_atomic_add 2.4x faster at 2 PEs (13-14 us against 31-34), but a flag set
    // by shmem_atomic_set before the setter computed arrived after 0.6-1.3 ms on average (up to
    // 19 ms) on 2 CPUs, against 50-60 us native.
    const bool shm = std::strcmp(info_->fabric_attr->prov_name, "shm") == 0;
    messages_ = !native || atomics == OfiAtomics::Messages || (atomics == OfiAtomics::Auto && shm);
    // Batches where messages need no registered source (sends from the batch's own buffer).
    batch_max_ = (info_->caps & FI_MSG) && !mr_local_ && info_->tx_attr->inject_size >= sizeof(AmoMsg)
                     ? batch::max_op(batch_max)
                     : 0;
    if (messages_ || batch_max_) {
        if (!(info_->caps & FI_MSG) || info_->tx_attr->inject_size < sizeof(AmoMsg))
            return Error{fmt::format("provider {} has neither every atomic nor messages of {} bytes to carry them",
                                     info_->fabric_attr->prov_name, sizeof(AmoMsg))};
        recv_bytes_ = batch_max_ ? sizeof(BatchHead) + batch::kBytes : sizeof(AmoMsg);
        recv_.assign(kRecvs * recv_bytes_, 0);
        if (mr_local_ && (rc = fi_mr_reg(domain_, recv_.data(), recv_.size(), FI_RECV, 0, kSegments + 2, 0,
                                          &recv_mr_, nullptr)))
            return fi_error("fi_mr_reg (receive buffers)", rc);
        if (recv_mr_ && mr_endpoint_ && ((rc = fi_mr_bind(recv_mr_, &ep_->fid, 0)) || (rc = fi_mr_enable(recv_mr_))))
            return fi_error("binding the receive buffers' registration", rc);
        for (int i = 0; i < kRecvs; ++i)
            if (auto r = post_recv(i); !r) return r;
    }
    if (mr_local_) {
        bounce_.resize(kBounceBytes);
        if ((rc = fi_mr_reg(domain_, bounce_.data(), bounce_.size(), FI_READ | FI_WRITE, 0, kSegments + 1, 0,
                            &bounce_mr_, nullptr)))
            return fi_error("fi_mr_reg (bounce buffer)", rc);
        if (mr_endpoint_) {
            if ((rc = fi_mr_bind(bounce_mr_, &ep_->fid, 0)) || (rc = fi_mr_enable(bounce_mr_)))
                return fi_error("binding the bounce buffer's registration", rc);
        }
    }
    desc_ = fmt::format("libfabric {}.{}, provider {} on {}, memory registration{}{}{}{}, atomics {}, progress {}, "
                        "contexts on {}, {}{}",
                        FI_MAJOR(fi_version()), FI_MINOR(fi_version()), info_->fabric_attr->prov_name,
                        info_->domain_attr->name, virt_addr_ ? " virtual-address" : " offset",
                        prov_key_ ? " provider-key" : "", mr_local_ ? " local" : "", mr_endpoint_ ? " endpoint" : "",
                        messages_ ? "as messages to the target's CPU" : "native",
                        info_->domain_attr->data_progress == FI_PROGRESS_AUTO ? "auto" : "manual",
                        !mr_local_ ? "domains of their own" : "the PE's endpoint",
                        batch_max_ ? fmt::format("non-blocking puts and gets up to {} bytes in batches{}", batch_max_,
                                                 defer == NbiDefer::On ? ", from 16 KiB posted by the progress thread"
                                                 : defer == NbiDefer::Auto
                                                     ? ", from 16 KiB posted by the progress thread where the node "
                                                       "has 2 CPUs per PE"
                                                     : "")
                                   : std::string("no batches"),
                        batch_max_ && messages_ ? "; batches carry atomics and signals too" : "");
    return {};
}

Result<void> Ofi::post_recv(int i) {
    iovec iov{recv_.data() + static_cast<std::size_t>(i) * recv_bytes_, recv_bytes_};
    fi_msg msg{};
    void* desc = recv_mr_ ? fi_mr_desc(recv_mr_) : nullptr;
    msg.msg_iov = &iov;
    msg.desc = &desc;
    msg.iov_count = 1;
    msg.addr = FI_ADDR_UNSPEC;
    msg.context = &recv_ctx_[static_cast<std::size_t>(i)];
    const ssize_t rc = fi_recvmsg(ep_, &msg, 0);
    if (rc) return fi_error("fi_recvmsg", rc);
    return {};
}

Result<void> Ofi::register_segment(int space, void* addr, std::size_t size) {
    if (!addr || !size) return {};
    std::lock_guard lk(mu_);
    int rc = fi_mr_reg(domain_, addr, size, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE, 0,
                       static_cast<std::uint64_t>(space) + 1, 0, &mr_[space], nullptr);
    if (rc) return fi_error("fi_mr_reg", rc);
    if (mr_endpoint_ && ((rc = fi_mr_bind(mr_[space], &ep_->fid, 0)) || (rc = fi_mr_enable(mr_[space]))))
        return fi_error("binding a memory registration to the endpoint", rc);
    seg_addr_[space] = addr;
    seg_size_[space] = size;
    return {};
}

Result<void> Ofi::connect(Bootstrap& boot, const std::vector<bool>& peers) {
    boot_ = &boot;
    Writer w;
    {
        std::lock_guard lk(mu_);
        std::array<char, 256> name{};
        std::size_t len = name.size();
        if (int rc = fi_getname(&ep_->fid, name.data(), &len)) return fi_error("fi_getname", rc);
        w.bytes(name.data(), len);
        for (int sp = 0; sp < kSegments; ++sp) {
            w.value<std::uint64_t>(mr_[sp] ? 1 : 0);
            w.value<std::uint64_t>(virt_addr_ ? reinterpret_cast<std::uintptr_t>(seg_addr_[sp]) : 0);
            w.value<std::uint64_t>(seg_size_[sp]);
            w.value<std::uint64_t>(mr_[sp] ? fi_mr_key(mr_[sp]) : 0);
        }
    }
    Blobs blobs;
    if (auto r = blobs.gather(boot, n_, std::move(w.out)); !r) return r;
    // Every PE's address goes into the table (index = PE), so a message's
    // sender is its PE number; only `peers` are reached through it.
    std::lock_guard lk(mu_);
    for (int pe = 0; pe < n_; ++pe) {
        Reader rd = blobs.of(pe);
        std::size_t len = 0;
        const std::uint8_t* name = rd.bytes(&len);
        if (!name || !len) return Error{fmt::format("PE {}'s libfabric address is malformed", pe)};
        fi_addr_t a = FI_ADDR_NOTAVAIL;
        if (fi_av_insert(av_, name, 1, &a, 0, nullptr) != 1)
            return Error{fmt::format("libfabric fi_av_insert: PE {}'s address was refused", pe)};
        addrs_[static_cast<std::size_t>(pe)] = a;
        names_.emplace_back(name, name + len);
        for (int sp = 0; sp < kSegments; ++sp) {
            Remote& r = remote_[static_cast<std::size_t>(pe)][sp];
            const bool has = rd.value<std::uint64_t>() != 0;
            r.base = rd.value<std::uint64_t>();
            r.size = rd.value<std::uint64_t>();
            r.key = rd.value<std::uint64_t>();
            r.ok = has && pe != me_ && peers[static_cast<std::size_t>(pe)];
        }
    }
    // Deferred transfers move while the progress thread carries them, beside the computation:
    // over tcp that keeps a CPU busy, so (auto) only where the node has a CPU to spare for it.
    // With 2 PEs on 2 CPUs, 16 x 64 KiB of put_nbi behind a computation as long took 1030 us
    // deferred against 600 us posted in the call; on 16 CPUs, 330 against 570 us.
    cpu_set_t cpus;
    const int usable = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    defers_ = batch_max_ && (defer_ == NbiDefer::On ||
                             (defer_ == NbiDefer::Auto && usable >= 2 * static_cast<int>(boot.local_peers().size())));
    progress_ = std::thread([this] { progress_loop(); });
    return {};
}

void Ofi::progress_loop() {
    // Stands back while an application thread is in the library (its waits progress, its posts
    // must not queue for the lane's mutex behind this thread); otherwise polls. The providers here
    // have no wait object that covers every incoming operation: the thread naps 50 us between
    // polls, and stands back 1 ms once it saw the application. With large transfers deferred or
    // in flight (`busy`; where the main lane defers) it steps in once the application has been
    // away for 20 us (it computes: a deferred transfer is posted, a get's data and the
    // completions move, only when the lane is progressed), and then polls, yielding between
    // polls, until they are done; while the application keeps posting it looks again after 20,
    // 40 ... up to 160 us (each look is a wake-up, which preempts a PE where the PEs fill the
    // cores), and a deferral wakes it from a longer sleep (posted()). The contexts' lanes it
    // progresses only when free, never waiting for one.
    constexpr std::int64_t kStandBack = 1'000'000, kStepIn = 20'000, kPostingNapMax = 160'000, kNap = 50'000;
    precise_timers();
    std::int64_t posting_nap = kStepIn;
    bool busy = false;
    while (!stop_.load(std::memory_order_acquire)) {
        std::int64_t sleep_ns = kNap;
        busy = posted_.exchange(false, std::memory_order_relaxed) || busy;
        if (app_active_.exchange(false, std::memory_order_relaxed)) {
            sleep_ns = busy ? posting_nap : kStandBack;
            if (busy) posting_nap = std::min(posting_nap * 2, kPostingNapMax);
        } else {
            {
                std::unique_lock lk(mu_, std::try_to_lock);
                if (lk.owns_lock()) {
                    posting_nap = kStepIn;
                    send_batches(main_); // the application computes: what it gathered goes
                    progress_locked(main_); // (and what it deferred)
                    busy = main_.large != 0;
                } else { // an application thread holds it: it is in the library
                    sleep_ns = posting_nap;
                    posting_nap = std::min(posting_nap * 2, kPostingNapMax);
                }
            }
            {
                std::lock_guard lk(lanes_mu_);
                for (Lane* l : lanes_) {
                    std::unique_lock ll(*l->mu, std::try_to_lock);
                    if (!ll.owns_lock()) continue;
                    send_batches(*l);
                    if (l->pending != 0) progress_locked(*l);
                }
            }
            if (busy && sleep_ns == kNap) {
                sched_yield();
                continue;
            }
        }
        pollfd pf{wake_, POLLIN, 0};
        const timespec ts{0, static_cast<long>(sleep_ns)};
        if (ppoll(&pf, 1, &ts, nullptr) > 0) {
            std::uint64_t v;
            [[maybe_unused]] ssize_t r = read(wake_, &v, sizeof v);
        }
    }
}

void Ofi::post_deferred(Lane& l) {
    [[maybe_unused]] ForPeers peers; // posting may progress the provider (core/tsan.hpp)
    while (!l.deferred.empty()) {
        const Lane::Deferred& d = l.deferred.front();
        auto* op = new Op;
        op->nbi = &l;
        op->large = true;
        op->signal = d.signal;
        const ssize_t rc = d.is_put ? fi_write(l.ep, d.buf, d.n, d.desc, addr(l, d.pe), d.at, d.key, &op->ctx)
                                    : fi_read(l.ep, d.buf, d.n, d.desc, addr(l, d.pe), d.at, d.key, &op->ctx);
        if (rc == -FI_EAGAIN) { // the next progress call of the lane posts the rest
            delete op;
            return;
        }
        if (rc != 0) { // (counted since it was deferred; quiet reports it)
            delete op;
            --l.pending;
            --l.large;
            if (l.error.empty())
                l.error = fmt::format("{}: {}", d.is_put ? "put (fi_write)" : "get (fi_read)",
                                      fi_strerror(static_cast<int>(-rc)));
        }
        l.deferred.pop_front();
    }
}

void Ofi::progress_locked(Lane& l) {
    // The provider's progress carries out remote PEs' operations, and serve() their atomics
    // (which come to the main lane only).
    [[maybe_unused]] ForPeers peers; // core/tsan.hpp
    std::array<fi_cq_entry, 16> done;
    if (!l.signals.empty()) post_signals(l);
    if (!l.deferred.empty()) post_deferred(l);
    // Bounded: under a stream of incoming atomics the queue may never drain, and the caller
    // holds the lane's mutex, which the other threads need to post and complete their own
    // operations (the proxy thread its answers to the PEs that keep sending). What is left
    // waits for the next call.
    for (int rounds = 0; rounds < 64; ++rounds) {
        const ssize_t got = fi_cq_read(l.cq, done.data(), done.size());
        if (got == -FI_EAVAIL) {
            fi_cq_err_entry e{};
            if (fi_cq_readerr(l.cq, &e, 0) <= 0) break;
            std::string why = fi_cq_strerror(l.cq, e.prov_errno, e.err_data, nullptr, 0) + std::string(" (") +
                              fi_strerror(e.err) + ")";
            auto* ctx = static_cast<fi_context2*>(e.op_context);
            if (ctx && (ctx < recv_ctx_.data() || ctx >= recv_ctx_.data() + kRecvs)) {
                finished(ctx, std::move(why));
            } else if (&l == &main_) {
                last_error_ = std::move(why);
            }
            continue;
        }
        if (got <= 0) break;
        if (&l == &main_ && followers_.load(std::memory_order_relaxed) > 0) {
            // (the completions are carried out below, under mu_, before a follower can look)
            std::lock_guard fl(follow_mu_);
            ++main_reaped_;
            follow_cv_.notify_all();
        }
        // A short read drained the queue: another fi_cq_read would only run
        // the provider's progress again (on tcp;ofi_rxm a poll and a read of
        // its wake-up socket), which cost 15% of a put's round trip.
        const bool drained = got < static_cast<ssize_t>(done.size());
        for (ssize_t i = 0; i < got; ++i) {
            auto* ctx = static_cast<fi_context2*>(done[static_cast<std::size_t>(i)].op_context);
            if (!ctx) continue;
            if (ctx < recv_ctx_.data() || ctx >= recv_ctx_.data() + kRecvs) {
                finished(ctx, {});
                continue;
            }
            const int slot = static_cast<int>(ctx - recv_ctx_.data());
            // Carried out before the buffer is posted again (serving only queues answers).
            const unsigned char* msg = recv_.data() + static_cast<std::size_t>(slot) * recv_bytes_;
            if (msg[0] == kRequest || msg[0] == kAnswer) {
                AmoMsg m;
                std::memcpy(&m, msg, sizeof m);
                serve(m);
            } else {
                serve_batch(msg);
            }
            if (auto r = post_recv(slot); !r) last_error_ = r.error().message;
        }
        if (drained) break;
    }
    if (&l == &main_) send_queued();
}

void Ofi::send_queued() {
    while (!to_send_.empty()) {
        Outbound& m = to_send_.front();
        const fi_addr_t to = addrs_[static_cast<std::size_t>(m.to)];
        ssize_t rc = 0;
        if (m.bytes.size() <= info_->tx_attr->inject_size) {
            rc = fi_inject(ep_, m.bytes.data(), m.bytes.size(), to);
        } else { // the operation owns the bytes until its completion (finished())
            auto* op = new Op;
            op->send = true;
            op->counted = m.counted;
            op->msg = std::move(m.bytes);
            rc = fi_send(ep_, op->msg.data(), op->msg.size(), nullptr, to, &op->ctx);
            if (rc != 0) {
                m.bytes = std::move(op->msg);
                delete op;
            }
        }
        if (rc == -FI_EAGAIN) break;
        if (rc) {
            last_error_ = fi_strerror(static_cast<int>(-rc));
            if (m.counted) answered(*m.counted); // no answer will come
        }
        to_send_.pop_front();
    }
}

void Ofi::send_batch(Lane& l, int pe) {
    batch::Gathered& g = l.batches[static_cast<std::size_t>(pe)];
    if (g.empty()) return;
    std::unique_lock<std::mutex> via; // a context's own lane sends through the main lane
    if (l.mu != &mu_) via = std::unique_lock(mu_);
    const std::uint64_t token = &l == &main_ ? 0 : reinterpret_cast<std::uintptr_t>(&l);
    for (std::uint8_t kind : {kPuts, kGets}) {
        std::vector<unsigned char>& recs = kind == kPuts ? g.puts : g.gets;
        if (recs.empty()) continue;
        const BatchHead head{kind, {}, static_cast<std::uint32_t>(me_), recs.size(), token};
        std::vector<unsigned char> bytes(sizeof head + recs.size());
        std::memcpy(bytes.data(), &head, sizeof head);
        std::memcpy(bytes.data() + sizeof head, recs.data(), recs.size());
        recs.clear();
        if (&l == &main_) ++main_.pending; // until its answer comes (serve_batch)
        else ++l.unanswered;
        to_send_.push_back(Outbound{pe, std::move(bytes), &l});
    }
    g.answer = 0;
    send_queued();
}

void Ofi::send_batches(Lane& l) {
    if (!l.batched) return;
    for (int pe = 0; pe < n_; ++pe) send_batch(l, pe);
    l.batched = false;
}

void Ofi::serve_batch(const unsigned char* msg) {
    BatchHead head;
    std::memcpy(&head, msg, sizeof head);
    const unsigned char* recs = msg + sizeof head;
    const std::size_t len = std::min<std::uint64_t>(head.bytes, recv_bytes_ - sizeof head);
    if (head.from >= static_cast<unsigned>(n_)) return;
    const batch::Segments seg{seg_addr_.data(), seg_size_.data(), kSegments, "libfabric"};
    switch (head.kind) {
    case kPuts: {
        if (!batch::carry_out_puts(recs, len, seg)) last_error_ = "a peer's batched put lies outside this PE's segment";
        const BatchHead ack{kAck, {}, static_cast<std::uint32_t>(me_), 0, head.lane};
        std::vector<unsigned char> bytes(sizeof ack);
        std::memcpy(bytes.data(), &ack, sizeof ack);
        to_send_.push_back(Outbound{static_cast<int>(head.from), std::move(bytes), nullptr});
        break;
    }
    case kGets: {
        std::vector<unsigned char> bytes(sizeof(BatchHead));
        if (!batch::answer_gets(recs, len, bytes, seg))
            last_error_ = "a peer's batched get lies outside this PE's segment";
        const BatchHead data{kData, {}, static_cast<std::uint32_t>(me_), bytes.size() - sizeof(BatchHead), head.lane};
        std::memcpy(bytes.data(), &data, sizeof data);
        to_send_.push_back(Outbound{static_cast<int>(head.from), std::move(bytes), nullptr});
        break;
    }
    // The asking lane is this PE's own (the main one, or a context's, which waits in its quiet
    // for every answer, so it outlives them).
    case kData: batch::take_answer(recs, len); [[fallthrough]];
    case kAck: answered(head.lane ? *reinterpret_cast<Lane*>(static_cast<std::uintptr_t>(head.lane)) : main_); break;
    default: last_error_ = fmt::format("a message of unknown kind {} from PE {}", head.kind, head.from);
    }
}

void Ofi::finished(fi_context2* ctx, std::string error) {
    Op* op = reinterpret_cast<Op*>(ctx);
    if (op->send) {
        if (!error.empty()) {
            last_error_ = std::move(error);
            if (op->counted) answered(*op->counted); // no answer will come
        }
        delete op;
        return;
    }
    if (!op->nbi) {
        op->error = std::move(error);
        op->done = true;
        return;
    }
    Lane& l = *op->nbi;
    if (op->signal.on && error.empty()) { // its data is in place: now the signal (counted from here)
        auto* sig = new Op;
        sig->nbi = &l;
        sig->signal = op->signal;
        sig->operand = op->signal.value;
        ++l.pending;
        if (l.signals.empty()) post_signal(l, sig);
        else l.signals.push_back(sig);
    }
    if (!error.empty() && l.error.empty()) l.error = std::move(error);
    --l.pending;
    if (op->large) --l.large;
    delete op;
}

void Ofi::post_signal(Lane& l, Op* op) {
    const Signal& s = op->signal;
    op->signal.on = false; // its own completion posts nothing
    const ssize_t rc =
        fi_atomic(l.ep, &op->operand, 1, nullptr, addr(l, s.pe), s.at, s.key, FI_UINT64, s.op, &op->ctx);
    if (rc == -FI_EAGAIN) {
        op->signal.on = true;
        l.signals.push_back(op);
        return;
    }
    if (rc != 0) {
        if (l.error.empty()) l.error = fi_error("put with signal: the signal (fi_atomic)", rc).message;
        --l.pending;
        delete op;
    }
}

void Ofi::post_signals(Lane& l) {
    while (!l.signals.empty()) {
        Op* op = l.signals.front();
        l.signals.pop_front();
        post_signal(l, op);
        if (!l.signals.empty() && l.signals.back() == op) return; // still no room (it went back last)
    }
}

void Ofi::serve(const AmoMsg& m) {
    if (m.kind == kAnswer) {
        if (auto it = waiting_.find(m.id); it != waiting_.end()) {
            const Answer& a = it->second;
            if (a.to && a.width == 4) *static_cast<std::uint32_t*>(a.to) = static_cast<std::uint32_t>(m.result);
            else if (a.to) *static_cast<std::uint64_t*>(a.to) = m.result;
            --a.lane->unanswered;
            waiting_.erase(it);
        }
        return;
    }
    AmoMsg a = m;
    a.kind = kAnswer; // to m.from
    const auto op = static_cast<AmoOp>(m.op);
    if (m.space < kSegments && seg_addr_[m.space] && (m.width == 4 || m.width == 8) &&
        m.offset + m.width <= seg_size_[m.space] && m.offset % m.width == 0 && m.from < static_cast<unsigned>(n_)) {
        void* p = static_cast<char*>(seg_addr_[m.space]) + m.offset;
        a.result = cpu_amo(p, op, m.width, m.operand, m.cond);
    } else {
        last_error_ = fmt::format("PE {} asked for a {}-byte atomic at offset {:#x} of segment {}, outside it",
                                  m.from, m.width, m.offset, m.space);
    }
    if (m.from < static_cast<unsigned>(n_)) {
        std::vector<unsigned char> bytes(sizeof a);
        std::memcpy(bytes.data(), &a, sizeof a);
        to_send_.push_back(Outbound{static_cast<int>(m.from), std::move(bytes), nullptr});
    }
}

template <class D> void Ofi::wait_until(Lane& l, D&& done) {
    // Past a spin, the pause of core/wait.hpp: a thread that kept yielding while another program
    // holds the CPU would wait a time slice per round trip (tens of ms per atomic). The spin lasts
    // 50 us where this node's PEs do not outnumber the CPUs (a round trip over tcp on one host
    // takes 10-20 us; a PE that pauses for each one gets both PEs scheduled on one core: an 8-byte
    // get took 60 us at 2 PEs on 2 cores), else 64 polls.
    // Where the main queue has a wait object, a wait on the main lane past its spin sleeps on
    // it instead, for up to 1 ms at a time (as UCX's waits sleep on the worker's fd).
    // Without one, only one thread at a time keeps polling the main lane (the lead); the others
    // follow from their first look on: they sleep until it took completions, or left, or 200 us
    // passed.
    Pause pause;
    const std::int64_t spin_until = monotonic_ns() + (g_state.spin_before_yield > 0 ? 50'000 : 0);
    const bool on_fd = wait_fd_ >= 0 && &l == &main_;
    const bool may_follow = !on_fd && l.mu == &mu_;
    struct Lead {
        Ofi& o;
        bool held = false;
        ~Lead() {
            if (!held) return;
            o.main_lead_.store(false, std::memory_order_release);
            if (o.followers_.load(std::memory_order_relaxed) == 0) return;
            std::lock_guard fl(o.follow_mu_);
            o.follow_cv_.notify_one(); // it leads from its next look on
        }
    } lead{*this};
    std::uint64_t seen = 0;
    for (std::int64_t spins = 0;; ++spins) {
        app_active_.store(true, std::memory_order_relaxed);
        const bool spun = spins > 64 && monotonic_ns() > spin_until;
        bool sleep = false;
        {
            std::lock_guard lk(*l.mu);
            progress_locked(l);
            if (done()) return;
            sleep = on_fd && spun && may_sleep();
        }
        if (l.own) progress();
        if (sleep) {
            sleep_on_cq(1'000'000);
            continue;
        }
        if (may_follow && !lead.held && main_lead_.exchange(true, std::memory_order_acquire)) {
            std::unique_lock fl(follow_mu_);
            followers_.fetch_add(1, std::memory_order_relaxed);
            follow_cv_.wait_for(fl, std::chrono::microseconds(200), [&] {
                return main_reaped_ != seen || !main_lead_.load(std::memory_order_relaxed);
            });
            seen = main_reaped_;
            followers_.fetch_sub(1, std::memory_order_relaxed);
            continue;
        }
        lead.held = may_follow;
        if (spun && !on_fd) pause();
    }
}

template <class F> Result<void> Ofi::post(Lane& l, Op* op, F&& f, const char* what) {
    static_assert(offsetof(Op, ctx) == 0);
    Pause busy; // while the provider has no room for it
    for (;;) {
        {
            std::lock_guard lk(*l.mu);
            [[maybe_unused]] ForPeers peers; // posting may progress the provider (core/tsan.hpp)
            const ssize_t rc = f(l.ep, &op->ctx);
            if (rc == 0) {
                if (op->nbi) ++op->nbi->pending;
                return {};
            }
            if (rc != -FI_EAGAIN) return fi_error(what, rc);
            progress_locked(l);
        }
        if (l.own) progress();
        busy();
    }
}

template <class F> Result<void> Ofi::run(Lane& l, F&& f, const char* what) {
    Op op;
    if (auto r = post(l, &op, std::forward<F>(f), what); !r) return r;
    wait_until(l, [&] { return op.done; });
    if (!op.error.empty()) return Error{fmt::format("libfabric {}: {}", what, op.error)};
    return {};
}

Result<const Remote*> Ofi::remote(int pe, int space, std::uint64_t offset, std::size_t n, const char* what) {
    const Remote& r = remote_[static_cast<std::size_t>(pe)][space];
    if (!r.ok) return Error{fmt::format("libfabric {}: PE {}'s segment {} was not registered", what, pe, space)};
    if (offset > r.size || n > r.size - offset)
        return Error{fmt::format("libfabric {}: {} bytes at offset {:#x} run past PE {}'s segment ({} bytes)", what, n,
                                 offset, pe, r.size)};
    return &r;
}

void* Ofi::local_desc(const void* p, std::size_t n) const {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (int sp = 0; sp < kSegments; ++sp) {
        const auto lo = reinterpret_cast<std::uintptr_t>(seg_addr_[sp]);
        if (mr_[sp] && a >= lo && a + n <= lo + seg_size_[sp]) return fi_mr_desc(mr_[sp]);
    }
    return nullptr;
}

Result<void> Ofi::rma(const Post& how, bool is_put, int pe, int space, std::uint64_t offset, char* buf,
                      std::size_t n) {
    const char* what = is_put ? "put (fi_write)" : "get (fi_read)";
    auto rr = remote(pe, space, offset, n, what);
    if (!rr) return rr.error();
    if (n == 0) return {}; // (a zero-byte fi_write never completes on shm)
    const Remote& r = **rr;
    Lane& l = lane(how.domain);
    if (batch_max_) {
        std::lock_guard lk(*l.mu);
        batch::Gathered& g = l.batches[static_cast<std::size_t>(pe)];
        if (how.nbi && n <= batch_max_) {
            if (!g.fits(is_put, n)) send_batch(l, pe);
            g.add(is_put, space, offset, buf, n);
            l.batched = true;
            return {};
        }
        if (how.nbi && n >= kDeferFrom && &l == &main_ && defers_) {
            ++l.pending; // from now until its completion
            ++l.large;
            l.deferred.push_back({is_put, pe, buf, n, local_desc(buf, n), r.base + offset, r.key});
            posted();
            return {};
        }
        send_batch(l, pe); // an operation of its own passes neither what was gathered nor what was deferred
        if (!l.deferred.empty()) post_deferred(l);
    }
    const fi_addr_t to = addr(l, pe);
    auto once = [&](char* b, std::size_t len, void* desc, std::uint64_t off) -> Result<void> {
        return run(
            l,
            [&](fid_ep* ep, void* ctx) {
                return is_put ? fi_write(ep, b, len, desc, to, r.base + off, r.key, ctx)
                              : fi_read(ep, b, len, desc, to, r.base + off, r.key, ctx);
            },
            what);
    };
    // (A lane of its own is in another domain than the segments' registrations, and is one
    // only where the provider does not need local descriptors.)
    void* desc = l.own ? nullptr : local_desc(buf, n);
    if (how.nbi && (!mr_local_ || desc)) {
        // Straight from (into) the caller's buffer, which stays untouched until quiet_on.
        auto* op = new Op;
        op->nbi = &l;
        auto posted = post(
            l, op,
            [&](fid_ep* ep, void* ctx) {
                return is_put ? fi_write(ep, buf, n, desc, to, r.base + offset, r.key, ctx)
                              : fi_read(ep, buf, n, desc, to, r.base + offset, r.key, ctx);
            },
            what);
        if (!posted) delete op;
        return posted;
    }
    if (!mr_local_ || desc) return once(buf, n, desc, offset);
    // FI_MR_LOCAL and a buffer outside the registered segments: through the bounce buffer.
    std::lock_guard b(bounce_mu_);
    for (std::size_t done = 0; done < n;) {
        const std::size_t len = std::min(kBounceBytes, n - done);
        if (is_put) std::memcpy(bounce_.data(), buf + done, len);
        if (auto o = once(reinterpret_cast<char*>(bounce_.data()), len, fi_mr_desc(bounce_mr_), offset + done); !o)
            return o;
        if (!is_put) std::memcpy(buf + done, bounce_.data(), len);
        done += len;
    }
    return {};
}

Result<std::uint64_t> Ofi::amo(int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                               std::uint64_t operand, std::uint64_t cond, bool fetch) {
    std::uint64_t old = 0; // the low `width` bytes (little-endian)
    if (auto r = amo_on({}, pe, space, offset, op, width, operand, cond, returns_old(op, fetch) ? &old : nullptr); !r) return r.error();
    return old;
}

Result<void> Ofi::amo_on(const Post& how, int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                         std::uint64_t operand, std::uint64_t cond, void* fetch) {
    auto r = remote(pe, space, offset, width, "atomic");
    if (!r) return r.error();
    if (width != 4 && width != 8) return Error{fmt::format("libfabric atomic: {}-byte operands are not native", width)};
    // Where atomics are messages to the target's CPU and batches are on, a non-blocking atomic
    // travels in the target's batch (transports/batch.hpp): a message and an answer for many
    // instead of one each. Not a blocking one, nor one posted `prompt`: a batch goes out at the
    // next operation to that PE, quiet, fence or wait, or by the progress thread, which on a
    // machine whose CPUs the PEs keep busy runs milliseconds later; a flag set by
    // shmem_atomic_set before the setter computed took 1.4-2.7 ms on average to arrive at 2 PEs
    // on 2 CPUs.
    if (how.nbi && !how.prompt && batch_max_ && messages_ && (fetch || !returns_old(op, false))) {
        Lane& l = lane(how.domain);
        std::lock_guard lk(*l.mu);
        batch::Gathered& g = l.batches[static_cast<std::size_t>(pe)];
        if (!g.fits_amo(fetch)) send_batch(l, pe);
        g.add_amo(space, offset, op, width, operand, cond, fetch);
        l.batched = true;
        // A peer may wait for it while this PE computes: the progress thread sends it once the
        // application has left the library for 20 us, not 1 ms later.
        posted();
        return {};
    }
    if (batch_max_) {
        Lane& l = lane(how.domain);
        std::lock_guard lk(*l.mu);
        send_batch(l, pe);
        if (!l.deferred.empty()) post_deferred(l);
    }
    // The operations that return the old value are sent as fetching ones, also when the caller
    // does not want it.
    std::uint64_t ignored = 0;
    if (!fetch && (op == AmoOp::Fetch || op == AmoOp::Swap || op == AmoOp::CompareSwap)) {
        if (how.nbi) return Error{"libfabric atomic: a non-blocking fetching atomic needs a place for the old value"};
        fetch = &ignored;
    }
    if (messages_) return message_amo(how, pe, space, offset, op, width, operand, cond, fetch);
    return native_amo(how, **r, pe, offset, op, width, operand, cond, fetch);
}

// Where atomics are messages and batches are on, a small non-blocking put with signal goes into
// the target's batch, the signal behind its data: no quiet (libfabric's fence) between them. Not
// a blocking one: its data would travel as a message, which a later blocking put of the same
// bytes (fi_write) may overtake (spmd_soak over tcp found the older bytes after a quiet).
Result<void> Ofi::put_signal_on(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                                std::size_t n, int sig_space, std::uint64_t sig_offset, AmoOp op,
                                std::uint64_t signal) {
    if (n == 0 || !how.nbi) {
        // A blocking put is in the target's memory when it returns (FI_DELIVERY_COMPLETE): no
        // fence before the signal.
        if (auto r = rma(how, true, pe, space, offset, static_cast<char*>(const_cast<void*>(src)), n); !r) return r;
        return amo_on(how, pe, sig_space, sig_offset, op, 8, signal, 0, nullptr);
    }
    if (!messages_ && !mr_local_)
        return chained_put_signal(how, pe, space, offset, src, n, sig_space, sig_offset, op, signal);
    if (!batch_max_ || !messages_ || n > batch_max_)
        return Transport::put_signal_on(how, pe, space, offset, src, n, sig_space, sig_offset, op, signal);
    if (auto r = remote(pe, space, offset, n, "put"); !r) return r.error();
    if (auto r = remote(pe, sig_space, sig_offset, 8, "signal"); !r) return r.error();
    Lane& l = lane(how.domain);
    std::lock_guard lk(*l.mu);
    batch::Gathered& g = l.batches[static_cast<std::size_t>(pe)];
    if (!g.fits_signal(n)) send_batch(l, pe);
    g.put_signal(space, offset, src, n, sig_space, sig_offset, op, signal);
    l.batched = true;
    posted(); // (as a batched atomic's)
    return {};
}

// With native atomics, a non-blocking put with signal is a non-blocking put whose completion
// posts the signal (finished): nothing waits, and no quiet comes between them. Before, it was the
// put, a quiet and the atomic: one round trip and more each (0.027 Mops/s at 8 bytes over tcp).
Result<void> Ofi::chained_put_signal(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                                     std::size_t n, int sig_space, std::uint64_t sig_offset, AmoOp op,
                                     std::uint64_t signal) {
    auto rr = remote(pe, space, offset, n, "put");
    if (!rr) return rr.error();
    auto rs = remote(pe, sig_space, sig_offset, 8, "signal");
    if (!rs) return rs.error();
    Lane& l = lane(how.domain);
    Signal sig;
    sig.on = true;
    sig.pe = pe;
    sig.at = (*rs)->base + sig_offset;
    sig.key = (*rs)->key;
    sig.op = op == AmoOp::Add ? FI_SUM : FI_ATOMIC_WRITE;
    sig.value = signal;
    char* buf = static_cast<char*>(const_cast<void*>(src));
    const std::uint64_t at = (*rr)->base + offset, key = (*rr)->key;
    if (batch_max_) { // as rma(): large ones wait for the progress thread, and nothing passes them
        std::lock_guard lk(*l.mu);
        if (n >= kDeferFrom && &l == &main_ && defers_) {
            ++l.pending;
            ++l.large;
            l.deferred.push_back({true, pe, buf, n, local_desc(buf, n), at, key, sig});
            posted();
            return {};
        }
        send_batch(l, pe);
        if (!l.deferred.empty()) post_deferred(l);
    }
    const fi_addr_t to = addr(l, pe);
    void* desc = l.own ? nullptr : local_desc(buf, n);
    auto* o = new Op;
    o->nbi = &l;
    o->signal = sig;
    auto posted = post(
        l, o, [&](fid_ep* ep, void* ctx) { return fi_write(ep, buf, n, desc, to, at, key, ctx); }, "put (fi_write)");
    if (!posted) delete o;
    return posted;
}

Result<void> Ofi::native_amo(const Post& how, const Remote& r, int pe, std::uint64_t offset, AmoOp op, unsigned width,
                             std::uint64_t operand, std::uint64_t cond, void* fetch) {
    const fi_datatype dt = width == 4 ? FI_UINT32 : FI_UINT64;
    fi_op fop = FI_SUM;
    switch (op) {
    case AmoOp::Fetch: fop = FI_ATOMIC_READ; break;
    case AmoOp::Set:
    case AmoOp::Swap: fop = FI_ATOMIC_WRITE; break;
    case AmoOp::CompareSwap: fop = FI_CSWAP; break;
    case AmoOp::Add: fop = FI_SUM; break;
    case AmoOp::And: fop = FI_BAND; break;
    case AmoOp::Or: fop = FI_BOR; break;
    case AmoOp::Xor: fop = FI_BXOR; break;
    }
    Lane& l = lane(how.domain);
    const fi_addr_t to = addr(l, pe);
    const std::uint64_t at = r.base + offset;
    if (how.nbi && !mr_local_) {
        // The operands live in the operation until its completion; the old value goes straight
        // to the caller's buffer.
        auto* o = new Op;
        o->nbi = &l;
        std::memcpy(&o->operand, &operand, width);
        std::memcpy(&o->cond, &cond, width);
        auto posted = post(
            l, o,
            [&](fid_ep* ep, void* ctx) -> ssize_t {
                if (op == AmoOp::CompareSwap)
                    return fi_compare_atomic(ep, &o->operand, 1, nullptr, &o->cond, nullptr, fetch, nullptr, to, at,
                                             r.key, dt, fop, ctx);
                if (fetch)
                    return fi_fetch_atomic(ep, &o->operand, 1, nullptr, fetch, nullptr, to, at, r.key, dt, fop, ctx);
                return fi_atomic(ep, &o->operand, 1, nullptr, to, at, r.key, dt, fop, ctx);
            },
            "atomic");
        if (!posted) delete o;
        return posted;
    }
    // Operand, comparand and result in one place; under FI_MR_LOCAL that is
    // the registered bounce buffer.
    struct Bufs {
        std::uint64_t operand, cond, result;
    } stack{};
    std::unique_lock<std::mutex> b;
    Bufs* v = &stack;
    void* desc = nullptr;
    if (mr_local_) {
        b = std::unique_lock(bounce_mu_);
        v = reinterpret_cast<Bufs*>(bounce_.data());
        desc = fi_mr_desc(bounce_mr_);
    }
    v->result = 0;
    if (width == 4) {
        const auto o32 = static_cast<std::uint32_t>(operand), c32 = static_cast<std::uint32_t>(cond);
        std::memcpy(&v->operand, &o32, 4);
        std::memcpy(&v->cond, &c32, 4);
    } else {
        v->operand = operand;
        v->cond = cond;
    }
    auto done = run(
        l,
        [&](fid_ep* ep, void* ctx) -> ssize_t {
            if (op == AmoOp::CompareSwap)
                return fi_compare_atomic(ep, &v->operand, 1, desc, &v->cond, desc, &v->result, desc, to, at, r.key,
                                         dt, fop, ctx);
            if (fetch != nullptr)
                return fi_fetch_atomic(ep, &v->operand, 1, desc, &v->result, desc, to, at, r.key, dt, fop, ctx);
            return fi_atomic(ep, &v->operand, 1, desc, to, at, r.key, dt, fop, ctx);
        },
        "atomic");
    if (!done) return done.error();
    if (fetch) std::memcpy(fetch, &v->result, width);
    return {};
}

Result<void> Ofi::message_amo(const Post& how, int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                              std::uint64_t operand, std::uint64_t cond, void* fetch) {
    // Through the main lane, whose endpoint the answer comes to; counted in the context's.
    Lane& l = lane(how.domain);
    Pause busy; // while the provider has no room for it
    AmoMsg m{kRequest, static_cast<std::uint8_t>(op), static_cast<std::uint8_t>(width),
             static_cast<std::uint8_t>(space), static_cast<std::uint32_t>(me_), 0, offset, operand, cond, 0};
    for (;;) {
        {
            std::lock_guard lk(mu_);
            [[maybe_unused]] ForPeers peers; // posting may progress the provider (core/tsan.hpp)
            m.id = ++next_id_;
            const ssize_t rc = fi_inject(ep_, &m, sizeof m, addrs_[static_cast<std::size_t>(pe)]);
            if (rc == 0) {
                ++l.unanswered;
                waiting_[m.id] = Answer{&l, fetch, width};
                break;
            }
            if (rc != -FI_EAGAIN) return fi_error("atomic (fi_inject)", rc);
            progress_locked(main_);
        }
        busy();
    }
    // Not fetching, or not blocking: quiet waits for its answer.
    if (!fetch || how.nbi) return {};
    wait_until(main_, [&] { return !waiting_.count(m.id); });
    return {};
}

Result<void> Ofi::quiet_on(Domain* d) {
    // Blocking puts, gets and native atomics are complete when they return; what is left are
    // the domain's non-blocking operations and the atomics sent as messages (every domain's:
    // they are one count), complete once answered. With none outstanding it does not progress
    // (see progress_locked).
    Lane& l = lane(d);
    std::string error;
    {
        std::unique_lock lk(*l.mu);
        send_batches(l); // their answers count in pending (a context's: in unanswered)
        if (l.pending != 0) {
            lk.unlock();
            wait_until(l, [&] { return l.pending == 0; });
            lk.lock();
        }
        error = std::exchange(l.error, {});
    }
    std::unique_lock lk(mu_);
    if (l.unanswered != 0) {
        lk.unlock();
        wait_until(main_, [&] { return l.unanswered == 0; });
        lk.lock();
    }
    if (!error.empty()) return Error{fmt::format("libfabric: a non-blocking operation failed: {}", error)};
    if (!last_error_.empty()) return Error{fmt::format("libfabric: {}", std::exchange(last_error_, {}))};
    return {};
}

void Ofi::nap(long ns) {
    // On the completion queue's fd where it has one: a peer's request or an answer ends the nap
    // at once. Else (or while another thread progresses the lane) a timer.
    if (wait_fd_ < 0) return Transport::nap(ns);
    precise_timers();
    bool sleep = false;
    if (!progress_main(&sleep)) return timer_nap(ns);
    if (sleep) sleep_on_cq(ns); // else something is pending: the caller looks again
}

Domain* Ofi::open_domain() {
    auto l = std::make_unique<Lane>();
    l->ep = ep_;
    l->cq = cq_;
    l->mu = &mu_;
    l->batches.resize(static_cast<std::size_t>(n_));
    // A domain of its own only where local buffers need no registration (the segments' are in
    // the PE's domain) and once the peers' addresses are known.
    if (mr_local_ || names_.size() != static_cast<std::size_t>(n_)) return l.release();
    const char* step = "fi_domain";
    int rc = 0;
    {
        std::lock_guard lk(mu_); // the fabric is the main lane's too
        rc = fi_domain(fabric_, info_, &l->dom, nullptr);
    }
    fi_av_attr av{};
    av.type = FI_AV_TABLE;
    if (rc == 0 && (rc = fi_av_open(l->dom, &av, &l->av, nullptr))) step = "fi_av_open";
    l->addrs.assign(static_cast<std::size_t>(n_), FI_ADDR_NOTAVAIL);
    for (int pe = 0; rc == 0 && pe < n_; ++pe) {
        const auto& name = names_[static_cast<std::size_t>(pe)];
        if (fi_av_insert(l->av, name.data(), 1, &l->addrs[static_cast<std::size_t>(pe)], 0, nullptr) != 1) {
            rc = -FI_EINVAL;
            step = "fi_av_insert";
        }
    }
    fi_cq_attr cq{};
    cq.format = FI_CQ_FORMAT_CONTEXT;
    cq.wait_obj = FI_WAIT_NONE;
    fid_cq* q = nullptr;
    fid_ep* e = nullptr;
    if (rc == 0 && (rc = fi_cq_open(l->dom, &cq, &q, nullptr))) step = "fi_cq_open";
    if (rc == 0 && (rc = fi_endpoint(l->dom, info_, &e, nullptr))) step = "fi_endpoint";
    if (rc == 0 && (rc = fi_ep_bind(e, &l->av->fid, 0))) step = "fi_ep_bind (address vector)";
    if (rc == 0 && (rc = fi_ep_bind(e, &q->fid, FI_TRANSMIT | FI_RECV))) step = "fi_ep_bind (completion queue)";
    if (rc == 0 && (rc = fi_enable(e))) step = "fi_enable";
    l->ep = e;
    l->cq = q;
    if (rc != 0) { // correct, only not independent
        VKSHMEM_DEBUG("libfabric: a context shares the PE's endpoint: {}: {}", step, fi_strerror(rc < 0 ? -rc : rc));
        close_lane(*l);
        l->ep = ep_;
        l->cq = cq_;
        return l.release();
    }
    l->mu = &l->own_mu;
    l->own = true;
    std::lock_guard lk(lanes_mu_);
    lanes_.push_back(l.get());
    return l.release();
}

void Ofi::close_domain(Domain* d) {
    if (!d) return;
    auto* l = static_cast<Lane*>(d);
    if (auto r = quiet_on(l); !r) VKSHMEM_WARN("closing a context: {}", r.error().message);
    if (l->own) {
        {
            std::lock_guard lk(lanes_mu_);
            lanes_.erase(std::find(lanes_.begin(), lanes_.end(), l));
        }
        close_lane(*l);
    }
    delete l;
}

void Ofi::close_lane(Lane& l) {
    for (fid* f : {l.ep ? &l.ep->fid : nullptr, l.cq ? &l.cq->fid : nullptr, l.av ? &l.av->fid : nullptr,
                   l.dom ? &l.dom->fid : nullptr})
        if (f) fi_close(f);
    l.ep = nullptr;
    l.cq = nullptr;
    l.av = nullptr;
    l.dom = nullptr;
}

Ofi::~Ofi() {
    for (Lane* l : std::vector<Lane*>(lanes_)) close_domain(l); // contexts still open
    if (ep_ && boot_) {
        // Every PE keeps serving the others until all have finished: once
        // this thread stops progressing, the progress thread takes over.
        (void)quiet();
        (void)boot_->barrier();
    }
    stop_.store(true, std::memory_order_release);
    if (wake_ >= 0) {
        const std::uint64_t one = 1;
        [[maybe_unused]] ssize_t r = write(wake_, &one, sizeof one);
    }
    if (progress_.joinable()) progress_.join();
    if (wake_ >= 0) close(wake_);
    if (ep_) fi_close(&ep_->fid);
    for (fid_mr* m : mr_)
        if (m) fi_close(&m->fid);
    for (fid_mr* m : {bounce_mr_, recv_mr_})
        if (m) fi_close(&m->fid);
    if (cq_) fi_close(&cq_->fid);
    if (av_) fi_close(&av_->fid);
    if (domain_) fi_close(&domain_->fid);
    if (fabric_) fi_close(&fabric_->fid);
    if (info_) fi_freeinfo(info_);
}

} // namespace

Result<std::unique_ptr<Transport>> make_ofi(int my_pe, int n_pes, const std::string& provider, OfiAtomics atomics,
                                            std::size_t batch_max, NbiDefer defer) {
    auto t = std::make_unique<Ofi>(my_pe, n_pes);
    if (auto r = t->init(provider, atomics, batch_max, defer); !r) return r.error();
    return std::unique_ptr<Transport>(std::move(t));
}

} // namespace vkshmem::net
