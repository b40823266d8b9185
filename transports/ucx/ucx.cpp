// SPDX-License-Identifier: BSL-1.0
// The UCX transport: UCP RMA and atomics on one worker per PE.
//
// Every UCP call is made under one mutex (the worker is created
// UCS_THREAD_MODE_SERIALIZED), by application threads and by the progress
// thread. The progress thread exists because transports without RDMA (tcp,
// UCX's emulated atomics) need the target's CPU to carry out incoming
// operations: it sleeps on the worker's event fd and progresses the worker
// when something arrives.
#include "transports/transport.hpp"

#include "transports/blob.hpp"

#include "bootstrap/bootstrap.hpp"
#include "core/log.hpp"
#include "core/tsan.hpp"
#include "core/wait.hpp"

#include <ucp/api/ucp.h>

#include <array>
#include <chrono>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <poll.h>
#include <sys/eventfd.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace vkshmem::net {
namespace {

constexpr int kSegments = 3;

struct Remote {
    std::uint64_t base = 0;
    std::uint64_t size = 0;
    ucp_rkey_h rkey = nullptr;
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

class Ucx final : public Transport {
public:
    Ucx(int me, int n) : me_(me), n_(n), eps_(static_cast<std::size_t>(n)), remote_(static_cast<std::size_t>(n)) {
        caps_.amo_widths = (1u << 4) | (1u << 8);
    }
    ~Ucx() override;

    Result<void> init();
    const char* name() const override { return "ucx"; }
    const Caps& caps() const override { return caps_; }
    Result<void> register_segment(int space, void* addr, std::size_t size) override;
    Result<void> connect(Bootstrap& boot, const std::vector<bool>& peers) override;
    bool reach(int pe, int space) const override {
        return eps_[static_cast<std::size_t>(pe)] && remote_[static_cast<std::size_t>(pe)][space].rkey;
    }
    Result<void> put(int pe, int space, std::uint64_t offset, const void* src, std::size_t n) override {
        return rma(true, pe, space, offset, const_cast<void*>(src), n);
    }
    Result<void> get(int pe, int space, std::uint64_t offset, void* dst, std::size_t n) override {
        return rma(false, pe, space, offset, dst, n);
    }
    Result<std::uint64_t> amo(int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                              std::uint64_t operand, std::uint64_t cond, bool fetch) override;
    Result<void> fence() override;
    Result<void> quiet() override;
    void progress() override {
        app_progress_ns_.store(now_ns(), std::memory_order_relaxed);
        std::unique_lock lk(mu_, std::try_to_lock);
        if (lk.owns_lock()) progress_worker();
    }
    void nap(long ns) override;
    std::string describe() const override { return desc_; }

private:
    // Waits (progressing the worker) for an operation UCP did not complete at once.
    Result<void> complete(ucs_status_ptr_t req, const char* what);
    Result<void> rma(bool is_put, int pe, int space, std::uint64_t offset, void* buf, std::size_t n);
    Result<const Remote*> remote(int pe, int space, std::uint64_t offset, std::size_t n, const char* what);
    void progress_loop();
    // ucp_worker_progress, which carries out the operations of remote PEs (core/tsan.hpp).
    unsigned progress_worker() {
        [[maybe_unused]] ForPeers peers;
        return ucp_worker_progress(worker_);
    }
    void stop_progress();

    int me_, n_;
    Caps caps_;
    std::mutex mu_;
    ucp_context_h ctx_ = nullptr;
    ucp_worker_h worker_ = nullptr;
    std::vector<ucp_ep_h> eps_;
    std::array<ucp_mem_h, kSegments> memh_{};
    std::array<void*, kSegments> seg_addr_{};
    std::array<std::size_t, kSegments> seg_size_{};
    std::vector<std::array<Remote, kSegments>> remote_;
    std::thread progress_;
    std::atomic<bool> stop_{false};
    // When an application thread last progressed the worker (in a wait):
    // the progress thread stands back while they do.
    std::atomic<std::int64_t> app_progress_ns_{0};
    int efd_ = -1;
    int wake_ = -1;
    // Test hook (VKSHMEM_TEST_UCX_SLOW_PROGRESS_US): the progress thread pauses this long after
    // each event it progresses, as a slow (sanitized, loaded) machine does.
    unsigned slow_progress_us_ = 0;
    // Threads waiting for mu_ (lock()): the progress thread yields it to them.
    std::atomic<int> waiting_{0};
    std::unique_lock<std::mutex> acquire() {
        waiting_.fetch_add(1, std::memory_order_relaxed);
        std::unique_lock lk(mu_);
        waiting_.fetch_sub(1, std::memory_order_relaxed);
        return lk;
    }
    // mu_, held for UCP calls. Any of them may carry out remote PEs' operations (a send also
    // answers the gets queued behind it): core/tsan.hpp.
    struct Locked {
        std::unique_lock<std::mutex> lk;
        ForPeers peers{};
    };
    Locked lock() { return Locked{acquire()}; }
    Bootstrap* boot_ = nullptr;
    std::string desc_;
};

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
    p.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP;
    s = ucp_init(&p, cfg, &ctx_);
    ucp_config_release(cfg);
    if (s != UCS_OK) return ucx_error("ucp_init", s);
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    s = ucp_worker_create(ctx_, &wp, &worker_);
    if (s != UCS_OK) return ucx_error("ucp_worker_create", s);
    s = ucp_worker_get_efd(worker_, &efd_);
    if (s != UCS_OK) return ucx_error("ucp_worker_get_efd", s);
    wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_ < 0) return Error{fmt::format("eventfd: {}", std::strerror(errno))};
    const char* tls = std::getenv("UCX_TLS");
    desc_ = fmt::format("UCX {}, UCX_TLS={}, resources:{}", ucp_get_version_string(), tls ? tls : "all",
                        resources(ctx_));
    return {};
}

Result<void> Ucx::register_segment(int space, void* addr, std::size_t size) {
    if (!addr || !size) return {};
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = addr;
    mp.length = size;
    auto lk = lock();
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
        auto lk = lock();
        ucp_address_t* addr = nullptr;
        std::size_t len = 0;
        ucs_status_t s = ucp_worker_get_address(worker_, &addr, &len);
        if (s != UCS_OK) return ucx_error("ucp_worker_get_address", s);
        w.bytes(addr, len);
        ucp_worker_release_address(worker_, addr);
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

    auto lk = lock();
    for (int pe = 0; pe < n_; ++pe) {
        if (!peers[static_cast<std::size_t>(pe)] || pe == me_) continue;
        Reader rd = blobs.of(pe);
        std::size_t alen = 0;
        const std::uint8_t* addr = rd.bytes(&alen);
        if (!addr) return Error{fmt::format("PE {}'s UCX address is malformed", pe)};
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep.address = reinterpret_cast<const ucp_address_t*>(addr);
        ucs_status_t s = ucp_ep_create(worker_, &ep, &eps_[static_cast<std::size_t>(pe)]);
        if (s != UCS_OK) return ucx_error(fmt::format("connecting to PE {}", pe).c_str(), s);
        for (int sp = 0; sp < kSegments; ++sp) {
            Remote& r = remote_[static_cast<std::size_t>(pe)][sp];
            r.base = rd.value<std::uint64_t>();
            r.size = rd.value<std::uint64_t>();
            std::size_t rk_len = 0;
            const std::uint8_t* rk = rd.bytes(&rk_len);
            if (!rk) return Error{fmt::format("PE {}'s UCX keys are malformed", pe)};
            if (!rk_len) continue;
            s = ucp_ep_rkey_unpack(eps_[static_cast<std::size_t>(pe)], rk, &r.rkey);
            if (s != UCS_OK) return ucx_error(fmt::format("unpacking PE {}'s memory key", pe).c_str(), s);
        }
    }
    progress_ = std::thread([this] { progress_loop(); });
    return {};
}

void Ucx::progress_loop() {
    // Incoming operations over transports without RDMA need this PE's CPU.
    // While an application thread waits it progresses the worker itself (a
    // wake-up of this thread would add its latency to every operation), so
    // this thread sleeps; otherwise it sleeps on the worker's event fd.
    constexpr std::int64_t kStandBack = 1'000'000; // ns
    precise_timers();
    pollfd fds[2] = {{efd_, POLLIN, 0}, {wake_, POLLIN, 0}};
    while (!stop_.load(std::memory_order_acquire)) {
        const std::int64_t since = now_ns() - app_progress_ns_.load(std::memory_order_relaxed);
        if (since < kStandBack) {
            timespec ts{0, static_cast<long>(kStandBack - since)};
            nanosleep(&ts, nullptr);
            continue;
        }
        ucs_status_t armed = UCS_OK;
        bool yielded = false;
        {
            std::lock_guard lk(mu_);
            // At most 64 calls per hold: a stream of incoming operations must not keep the
            // worker from the others for good.
            int calls = 0;
            while (progress_worker() != 0) {
                if (slow_progress_us_) usleep(slow_progress_us_);
                if (++calls == 64) {
                    yielded = true;
                    break;
                }
                // Another thread wants the worker for an operation of its own: let it have it
                // now (it progresses the worker while it waits). Holding on while work keeps
                // arriving would starve it: peers polling this PE's inbox can keep the worker
                // busy while the proxy thread waits to send the answer they poll for.
                if (waiting_.load(std::memory_order_relaxed)) {
                    yielded = true;
                    break;
                }
            }
            if (!yielded) armed = ucp_worker_arm(worker_);
        }
        if (yielded) {
            sched_yield(); // to the thread that asked for the worker
            continue;
        }
        if (armed == UCS_ERR_BUSY) continue; // more arrived meanwhile
        poll(fds, 2, 100);
        if (fds[1].revents & POLLIN) {
            std::uint64_t v;
            [[maybe_unused]] ssize_t r = read(wake_, &v, sizeof v);
        }
    }
}

void Ucx::stop_progress() {
    if (!progress_.joinable()) return;
    stop_.store(true, std::memory_order_release);
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t r = write(wake_, &one, sizeof one);
    progress_.join();
}

Ucx::~Ucx() {
    if (worker_) {
        // Close every endpoint, flushing what is in flight, while the progress
        // thread still serves the peers doing the same; then wait for all of
        // them before this PE stops answering.
        std::vector<ucs_status_ptr_t> closing;
        {
            auto lk = lock();
            for (auto& per_pe : remote_)
                for (Remote& r : per_pe)
                    if (r.rkey) ucp_rkey_destroy(r.rkey);
            ucp_request_param_t prm{};
            for (ucp_ep_h ep : eps_) {
                if (!ep) continue;
                ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &prm);
                if (UCS_PTR_IS_PTR(req)) closing.push_back(req);
            }
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        for (ucs_status_ptr_t req : closing) {
            for (;;) {
                auto lk = lock();
                progress_worker();
                if (ucp_request_check_status(req) != UCS_INPROGRESS ||
                    std::chrono::steady_clock::now() > deadline)
                    break;
            }
            ucp_request_free(req);
        }
        if (boot_) (void)boot_->barrier();
    }
    stop_progress();
    for (ucp_mem_h& m : memh_)
        if (m) ucp_mem_unmap(ctx_, m);
    if (worker_) ucp_worker_destroy(worker_);
    if (ctx_) ucp_cleanup(ctx_);
    if (wake_ >= 0) close(wake_);
}

void Ucx::nap(long ns) {
    precise_timers();
    app_progress_ns_.store(now_ns(), std::memory_order_relaxed);
    bool armed = false;
    {
        std::unique_lock lk(mu_, std::try_to_lock);
        if (lk.owns_lock()) {
            if (progress_worker() != 0) return; // something arrived: the caller looks again
            armed = ucp_worker_arm(worker_) == UCS_OK;
            if (!armed) return; // events pending (UCS_ERR_BUSY)
        }
    }
    if (!armed) return timer_nap(ns); // another thread is progressing the worker
    timespec ts{0, ns};
    pollfd pf{efd_, POLLIN, 0};
    if (ppoll(&pf, 1, &ts, nullptr) > 0) progress();
}

Result<void> Ucx::complete(ucs_status_ptr_t req, const char* what) {
    if (req == nullptr) return {};
    if (UCS_PTR_IS_ERR(req)) return ucx_error(what, UCS_PTR_STATUS(req));
    ucs_status_t s;
    for (std::int64_t spins = 0;; ++spins) {
        app_progress_ns_.store(now_ns(), std::memory_order_relaxed);
        bool armed = false;
        {
            auto lk = lock();
            progress_worker();
            s = ucp_request_check_status(req);
            if (s != UCS_INPROGRESS) {
                ucp_request_free(req);
                break;
            }
            // Past a short spin, sleep on the worker's events (what completes the request wakes
            // it at once) rather than yield: while other programs hold the CPUs a yield costs a
            // time slice per round trip (a contended atomic took 7x as long, bench notes in
            // transports/ucx/README.md). Not armed (UCS_ERR_BUSY): more to progress right away.
            if (spins > 64) armed = ucp_worker_arm(worker_) == UCS_OK;
        }
        if (armed) {
            pollfd pf{efd_, POLLIN, 0};
            poll(&pf, 1, 1); // 1 ms: also a completion that no event announces is seen soon
        }
    }
    if (s != UCS_OK) return ucx_error(what, s);
    return {};
}

Result<const Remote*> Ucx::remote(int pe, int space, std::uint64_t offset, std::size_t n, const char* what) {
    const Remote& r = remote_[static_cast<std::size_t>(pe)][space];
    if (!eps_[static_cast<std::size_t>(pe)] || !r.rkey)
        return Error{fmt::format("UCX {}: PE {}'s segment {} was not registered with UCX", what, pe, space)};
    if (offset > r.size || n > r.size - offset)
        return Error{fmt::format("UCX {}: {} bytes at offset {:#x} run past PE {}'s segment ({} bytes)", what, n,
                                 offset, pe, r.size)};
    return &r;
}

Result<void> Ucx::rma(bool is_put, int pe, int space, std::uint64_t offset, void* buf, std::size_t n) {
    const char* what = is_put ? "put" : "get";
    auto r = remote(pe, space, offset, n, what);
    if (!r) return r.error();
    ucp_request_param_t prm{};
    ucp_ep_h ep = eps_[static_cast<std::size_t>(pe)];
    ucs_status_ptr_t req;
    {
        auto lk = lock();
        req = is_put ? ucp_put_nbx(ep, buf, n, (*r)->base + offset, (*r)->rkey, &prm)
                     : ucp_get_nbx(ep, buf, n, (*r)->base + offset, (*r)->rkey, &prm);
    }
    return complete(req, what);
}

Result<std::uint64_t> Ucx::amo(int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                               std::uint64_t operand, std::uint64_t cond, bool fetch) {
    auto r = remote(pe, space, offset, width, "atomic");
    if (!r) return r.error();
    if (width != 4 && width != 8) return Error{fmt::format("UCX atomic: {}-byte operands are not native", width)};
    ucp_atomic_op_t uop = UCP_ATOMIC_OP_ADD;
    switch (op) {
    case AmoOp::Fetch: uop = UCP_ATOMIC_OP_ADD, operand = 0, fetch = true; break;
    case AmoOp::Set: uop = UCP_ATOMIC_OP_SWAP, fetch = true; break; // SWAP always replies
    case AmoOp::Swap: uop = UCP_ATOMIC_OP_SWAP, fetch = true; break;
    case AmoOp::CompareSwap: uop = UCP_ATOMIC_OP_CSWAP, fetch = true; break;
    case AmoOp::Add: uop = UCP_ATOMIC_OP_ADD; break;
    case AmoOp::And: uop = UCP_ATOMIC_OP_AND; break;
    case AmoOp::Or: uop = UCP_ATOMIC_OP_OR; break;
    case AmoOp::Xor: uop = UCP_ATOMIC_OP_XOR; break;
    }
    // Operands in their width; for CSWAP the buffer is the comparand and the
    // reply buffer holds the new value going out and the old one coming back.
    std::uint32_t op32 = static_cast<std::uint32_t>(op == AmoOp::CompareSwap ? cond : operand);
    std::uint64_t op64 = op == AmoOp::CompareSwap ? cond : operand;
    std::uint32_t reply32 = static_cast<std::uint32_t>(operand);
    std::uint64_t reply64 = operand;
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
    prm.datatype = ucp_dt_make_contig(width);
    if (fetch) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        prm.reply_buffer = width == 4 ? static_cast<void*>(&reply32) : static_cast<void*>(&reply64);
    }
    const void* buf = width == 4 ? static_cast<const void*>(&op32) : static_cast<const void*>(&op64);
    ucs_status_ptr_t req;
    {
        auto lk = lock();
        req = ucp_atomic_op_nbx(eps_[static_cast<std::size_t>(pe)], uop, buf, 1, (*r)->base + offset, (*r)->rkey,
                                &prm);
    }
    if (auto c = complete(req, "atomic"); !c) return c.error();
    if (!fetch) return std::uint64_t{0};
    return width == 4 ? std::uint64_t{reply32} : reply64;
}

Result<void> Ucx::fence() {
    auto lk = lock();
    const ucs_status_t s = ucp_worker_fence(worker_);
    if (s != UCS_OK) return ucx_error("ucp_worker_fence", s);
    return {};
}

Result<void> Ucx::quiet() {
    ucp_request_param_t prm{};
    ucs_status_ptr_t req;
    {
        auto lk = lock();
        req = ucp_worker_flush_nbx(worker_, &prm);
    }
    return complete(req, "flush");
}

} // namespace

Result<std::unique_ptr<Transport>> make_ucx(int my_pe, int n_pes) {
    auto t = std::make_unique<Ucx>(my_pe, n_pes);
    if (auto r = t->init(); !r) return r.error();
    return std::unique_ptr<Transport>(std::move(t));
}

} // namespace vkshmem::net
