// SPDX-License-Identifier: BSL-1.0
#include "runtime/runtime.hpp"

#include "coll/coll.hpp"
#include "core/log.hpp"
#include "core/version.hpp"
#include "core/wait.hpp"
#include "rma/rma.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <optional>
#include <sched.h>
#include <unistd.h>

extern char** environ;

namespace vkshmem {

Runtime* g_runtime = nullptr;

namespace {
std::optional<AdoptedDevice> g_adopted; // set before init by vkshmemx_use_vk_device
}

void Runtime::use_device(const AdoptedDevice& a) { g_adopted = a; }

namespace {
bool g_atexit_registered = false;
// Kept apart from g_runtime so that an init that fails half-way can still end
// the whole job through the launcher.
Bootstrap* g_abort_boot = nullptr;

void on_abort(int status, const char* msg) {
    if (g_abort_boot) g_abort_boot->abort(status, msg);
}

bool g_finalize_at_exit = false; // Runtime::finalize_at_exit, until the next finalize

// A PE that returns from main (or calls exit) without shmem_finalize would
// leave its peers waiting: end the whole job instead. A program that began with
// start_pes is finalized here, as the specification has it (the atexit handler
// comes after the launcher connection's own, so it runs before that closes).
void exit_without_finalize() {
    if (!g_runtime) return;
    std::fflush(nullptr);
    if (g_finalize_at_exit) return Runtime::finalize();
    fatal("exit", "PE {} exited without calling shmem_finalize; ending the job", g_state.my_pe);
}

std::vector<std::string> environ_names() {
    std::vector<std::string> names;
    for (char** e = environ; e && *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        names.emplace_back(*e, eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e));
    }
    return names;
}
} // namespace

Result<void> Runtime::init(int requested) {
    if (g_runtime) return {};
    auto* rt = new Runtime;
    g_runtime = rt;
    auto r = rt->start(requested);
    if (!r) {
        g_state.net_progress = nullptr;
        g_state.net_nap = nullptr;
        g_state.start_queued = nullptr;
        rma::g_subsystems = {};
        g_runtime = nullptr;
        // The bootstrap stays alive so that the caller can still end the job.
        return r;
    }
    return {};
}

namespace {
// The environment is the same on every PE, so are its errors.
std::string config_error(Config& cfg) {
    if (auto err = load_config(cfg, [](const char* n) -> const char* { return std::getenv(n); }))
        return fmt::format("{}: {}", err->variable, err->message);
    // VKSHMEM_DEBUG's values are the log levels, in the same order.
    static_assert(static_cast<int>(DebugLevel::Error) == static_cast<int>(LogLevel::Error) &&
                  static_cast<int>(DebugLevel::Trace) == static_cast<int>(LogLevel::Trace));
    set_log_level(static_cast<LogLevel>(cfg.VKSHMEM_DEBUG));
    return {};
}
} // namespace

Result<void> Runtime::start(int requested) {
    auto boot = make_bootstrap();
    if (!boot) return boot.error();
    boot_ = std::move(*boot);
    set_log_pe(boot_->rank());
    g_abort_boot = boot_.get();
    set_abort_hook(on_abort);
    if (std::string err = config_error(cfg_); !err.empty()) {
        // PE 0 says it and ends the job; the others wait to be ended with it
        // rather than repeat the same line (and leave if that never comes).
        if (boot_->rank() != 0) {
            sleep(10);
            _exit(1);
        }
        return make_error(err);
    }
    g_state.my_pe = boot_->rank();
    g_state.n_pes = boot_->size();
    g_state.checks = cfg_.VKSHMEM_ERROR_CHECKS;
    g_state.bar_put_max = cfg_.VKSHMEM_BAR_PUT_MAX;
    g_state.bar_get_max = cfg_.VKSHMEM_BAR_GET_MAX;
    g_state.spin_before_yield = cfg_.VKSHMEM_SPIN_BEFORE_YIELD;
    if (g_state.spin_before_yield < 0) {
        cpu_set_t cpus;
        const int usable = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
        const bool oversubscribed = static_cast<int>(boot_->local_peers().size()) > usable;
        g_state.spin_before_yield = oversubscribed ? 0 : 2000;
    }

    if (boot_->rank() == 0)
        for (const auto& u : unknown_variables(environ_names()))
            VKSHMEM_WARN("unknown variable {} (did you mean {}?); `vkshmem-info -e` lists them all", u.name,
                         u.suggestion);

    if (g_adopted) {
        auto dev = VulkanDevice::adopt(*g_adopted);
        if (!dev) return make_error(dev.error().message); // the application's device or nothing
        device_ = std::move(*dev);
    } else if (cfg_.VKSHMEM_DEVICE != "none") {
        auto dev = VulkanDevice::create(cfg_.VKSHMEM_DEVICE, boot_->local_rank());
        if (dev) {
            device_ = std::move(*dev);
        } else if (!cfg_.VKSHMEM_DEVICE.empty()) {
            return make_error(dev.error().message); // asked for a device by name: do not run without it
        } else {
            no_device_reason_ = dev.error().message;
            VKSHMEM_WARN_ONCE("no usable Vulkan device ({}); running host-only: both heaps are host memory",
                              no_device_reason_);
        }
    } else {
        no_device_reason_ = "VKSHMEM_DEVICE=none";
    }

    // 20 us: short against a shader's bounded wait on lavapipe (~100 ms), long
    // enough that a waiting proxy costs the spinning shaders little CPU.
    if (device_ && device_->is_cpu()) g_state.proxy_nap_ns = 20000;

    // The proxy's state block is in every PE's host heap, with a device or without, so that the
    // heaps' offsets stay the same on every PE.
    auto mem = SymmetricMemory::create(cfg_, *boot_, device_.get(), Proxy::block_bytes(boot_->size()));
    if (!mem) return mem.error();
    memory_ = std::move(*mem);
    rma::g_subsystems = {&cfg_, memory_.get(), device_.get(), nullptr};
    g_state.start_queued = rma::start_queued;
    if (auto r = start_network(); !r) return r.error();
    std::vector<int> shared;
    for (int pe : boot_->local_peers())
        if (g_state.space[kHostHeap].peer[pe]) shared.push_back(pe); // shmem_ptr reaches it
    teams_ = std::make_unique<coll::Teams>(shared, collective_algorithms());
    if (device_) {
        auto proxy = Proxy::create(cfg_, *device_, *memory_);
        if (!proxy) return proxy.error();
        proxy_ = std::move(*proxy);
        publish_device_team(teams_->world());
        publish_device_team(teams_->shared());
    }
    thread_level_ = requested < 0 ? 0 : (requested > 3 ? 3 : requested);
    g_state.initialized = true;
    if (!g_atexit_registered) {
        std::atexit(exit_without_finalize);
        g_atexit_registered = true;
    }
    if (auto b = boot_->barrier(); !b) return b.error();
    if (boot_->rank() == 0) {
        if (cfg_.SHMEM_VERSION) std::printf("vkshmem %s (git %s), OpenSHMEM 1.6\n", version(), revision());
        if (cfg_.SHMEM_INFO) print_info();
    }
    return {};
}

void Runtime::print_info() const {
    std::string s = fmt::format("vkshmem {} (git {}), OpenSHMEM 1.6, {} PEs, bootstrap {}\n", version(), revision(),
                                g_state.n_pes, boot_->kind());
    if (device_)
        s += fmt::format("Vulkan device: {} ({}), {}\n", device_->report().name, device_->report().type,
                         device_->report().driver);
    else
        s += fmt::format("Vulkan device: none ({})\n", no_device_reason_);
    for (int sp = 0; sp < kSpaceCount; ++sp)
        s += fmt::format("{}: {} bytes, {}\n", kSpaceNames[sp], memory_->heap_size(static_cast<Space>(sp)),
                         memory_->description(static_cast<Space>(sp)));
    s += fmt::format("Network: {}\n", net_reason_);
    s += "Environment:\n" + env_reference(false, &cfg_);
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
}

Result<std::unique_ptr<net::Transport>> Runtime::make_transport() const {
    const Network want = cfg_.VKSHMEM_NETWORK;
    auto ofi = [&] {
        return net::make_ofi(g_state.my_pe, g_state.n_pes, cfg_.VKSHMEM_OFI_PROVIDER, cfg_.VKSHMEM_OFI_ATOMICS,
                             cfg_.VKSHMEM_NBI_BATCH, cfg_.VKSHMEM_NBI_DEFER);
    };
    if (want == Network::Ofi) {
        auto t = ofi();
        if (!t) return Error{fmt::format("VKSHMEM_NETWORK=ofi: {}", t.error().message)};
        return t;
    }
    auto u = net::make_ucx(g_state.my_pe, g_state.n_pes, cfg_.VKSHMEM_NBI_BATCH, cfg_.VKSHMEM_NBI_DEFER);
    if (u || want == Network::Ucx) {
        if (!u) return Error{fmt::format("VKSHMEM_NETWORK=ucx: {}", u.error().message)};
        return u;
    }
    auto t = ofi(); // auto: libfabric where UCX cannot start
    if (!t) return Error{fmt::format("UCX: {}; libfabric: {}", u.error().message, t.error().message)};
    return t;
}

coll::Algorithms Runtime::collective_algorithms() const {
    using coll::Algorithm;
    coll::Algorithms a;
    a.barrier = cfg_.VKSHMEM_BARRIER_ALGORITHM == BarrierAlgorithm::Linear ? Algorithm::Linear : Algorithm::Tree;
    a.bcast = cfg_.VKSHMEM_BCAST_ALGORITHM == BcastAlgorithm::Linear ? Algorithm::Linear : Algorithm::Tree;
    switch (cfg_.VKSHMEM_REDUCE_ALGORITHM) {
    case ReduceAlgorithm::Auto: a.reduce = Algorithm::Auto; break;
    case ReduceAlgorithm::Linear: a.reduce = Algorithm::Linear; break;
    case ReduceAlgorithm::Tree: a.reduce = Algorithm::Tree; break;
    }
    return a;
}

Result<void> Runtime::start_network() {
    const int n = g_state.n_pes, me = g_state.my_pe;
    const Network want = cfg_.VKSHMEM_NETWORK;
    std::vector<bool> remote(static_cast<std::size_t>(n), cfg_.VKSHMEM_FORCE_NETWORK);
    const auto& local = boot_->local_peers();
    int off_node = 0;
    for (int pe = 0; pe < n; ++pe) {
        const bool here = std::find(local.begin(), local.end(), pe) != local.end();
        if (!here) remote[static_cast<std::size_t>(pe)] = true, ++off_node;
    }
    remote[static_cast<std::size_t>(me)] = false;
    const bool needed = std::find(remote.begin(), remote.end(), true) != remote.end();
    if (!needed || want == Network::None) {
        net_reason_ = !needed ? "none: every PE is on this node" : "none: VKSHMEM_NETWORK=none";
        return {}; // PEs off this node then stay unreachable, reported at first access
    }
    auto t = make_transport();
    if (!t)
        return make_error(fmt::format("{} PEs are on other nodes{}, and no network transport can run: {}", off_node,
                                      cfg_.VKSHMEM_FORCE_NETWORK ? " (or VKSHMEM_FORCE_NETWORK=1)" : "",
                                      t.error().message));
    net_ = std::move(*t);
    rma::g_subsystems.network = net_.get();
    // Every space this PE's CPU addresses as ordinary memory; a GPU's device
    // heap is not (its owner's proxy serves it).
    for (int s = 0; s < kSpaceCount; ++s) {
        const SpaceView& v = g_state.space[s];
        if (!v.size || v.route[me] != Route::Direct) continue;
        if (auto r = net_->register_segment(s, reinterpret_cast<void*>(v.lo), v.size); !r)
            return make_error(fmt::format("registering the {} with {}: {}", kSpaceNames[s], net_->name(),
                                          r.error().message));
    }
    if (auto r = net_->connect(*boot_, remote); !r) return r.error();
    for (int pe = 0; pe < n; ++pe) {
        if (!remote[static_cast<std::size_t>(pe)]) continue;
        for (int s = 0; s < kSpaceCount; ++s)
            if (net_->reach(pe, s)) memory_->set_route(pe, static_cast<Space>(s), Route::Network);
        // A device heap the transport could not register (a GPU's) is reached
        // through its owner's proxy, by active messages over the network.
        if (!net_->reach(pe, kDeviceHeap) && net_->reach(pe, kHostHeap) && g_state.space[kDeviceHeap].size)
            memory_->set_route(pe, kDeviceHeap, Route::Proxy);
    }
    g_state.net_progress = [] { g_runtime->network()->progress(); };
    g_state.net_nap = [](long ns) { g_runtime->network()->nap(ns); };
    net_reason_ = fmt::format("{}: {}; {} of {} PEs reached through it{}", net_->name(), net_->describe(),
                              std::count(remote.begin(), remote.end(), true), n,
                              cfg_.VKSHMEM_FORCE_NETWORK ? " (VKSHMEM_FORCE_NETWORK=1)" : "");
    return {};
}

void Runtime::quiet() { rma::quiet(); }

CmdKernels& Runtime::cmd_kernels() {
    std::lock_guard lk(mu_);
    if (!cmd_) cmd_ = std::make_unique<CmdKernels>(*device_, memory_->device_has_peer());
    return *cmd_;
}

void Runtime::publish_device_team(const coll::Team& t) {
    if (!proxy_ || t.slot < 0) return;
    std::vector<int> members(static_cast<std::size_t>(t.size()));
    for (int i = 0; i < t.size(); ++i) members[static_cast<std::size_t>(i)] = t.world(i);
    const Space s = memory_->coll_space();
    const std::uint64_t block = memory_->device_address(g_state.my_pe, s) + memory_->coll_offset(t.slot);
    proxy_->publish_team(t.slot, t.me, members, block, block + kDeviceCollCounterBytes,
                         static_cast<std::uint32_t>(kDeviceCollSlotBytes - kDeviceCollCounterBytes));
}

void Runtime::retire_device_team(int slot) {
    if (!proxy_ || slot < 0) return;
    proxy_->retire_team(slot);
    if (auto r = memory_->zero_coll_counters(slot); !r)
        VKSHMEM_WARN("shmem_team_destroy: zeroing the team's device sync counter: {}", r.error().message);
}

void Runtime::barrier_all(const char* call) { coll::barrier(teams_->world(), call); }

void* Runtime::allocate(Space s, std::size_t size, std::size_t align, const char* call) {
    // OpenSHMEM 1.6 §9.3: a request for zero bytes returns NULL (and still synchronizes).
    if (size == 0) {
        barrier_all();
        return nullptr;
    }
    void* p = nullptr;
    {
        std::lock_guard lk(mu_);
        p = memory_->allocate(s, size, align);
    }
    if (!p && size) {
        const auto& a = memory_->allocator(s);
        if (g_state.my_pe != 0) {
        } else if (align > a.max_align()) {
            error(call, "alignment {} exceeds {}, the alignment of the heap's base on every PE", align,
                  a.max_align());
        } else {
            error(call,
                  "cannot allocate {} bytes in the {} heap ({} of {} bytes in use, largest free block {}); raise {}",
                  size, s == kHostHeap ? "host" : "device", a.bytes_in_use(), a.capacity(), a.largest_free(),
                  s == kHostHeap ? "SHMEM_SYMMETRIC_SIZE" : "VKSHMEM_DEVICE_HEAP_SIZE");
        }
    }
    barrier_all();
    return p;
}

void* Runtime::reallocate(void* p, std::size_t size, const char* call) {
    if (!p) return allocate(kHostHeap, size, SymmetricAllocator::kMinAlign, call);
    if (size == 0) {
        release(p, call);
        return nullptr;
    }
    int s = space_of(p);
    auto old = memory_->block_size(p);
    if (!old) {
        // As Open MPI's OSHMEM does (tests-mellanox checks it): NULL, and the object, if any, as it was.
        error(call, "{} is not an address shmem_malloc returned, or was freed already; returning NULL", p);
        barrier_all();
        return nullptr;
    }
    {
        std::lock_guard lk(mu_);
        if (!memory_->resize_in_place(p, size)) {
            void* q = memory_->allocate(static_cast<Space>(s), size, SymmetricAllocator::kMinAlign);
            if (q) {
                copy_within(static_cast<Space>(s), q, p, std::min(*old, size), call);
                memory_->free(p);
            } else if (g_state.my_pe == 0) {
                error(call, "cannot grow a block to {} bytes; raise {}", size,
                      s == kHostHeap ? "SHMEM_SYMMETRIC_SIZE" : "VKSHMEM_DEVICE_HEAP_SIZE");
            }
            p = q;
        }
    }
    barrier_all();
    return p;
}

void Runtime::copy_within(Space s, void* dst, const void* src, std::size_t n, const char* call) {
    if (g_state.space[s].route[g_state.my_pe] != Route::None) {
        std::memcpy(dst, src, n);
        return;
    }
    // A device heap the CPU cannot map: the device moves the bytes.
    const DeviceMemory* m = memory_->device_memory(g_state.my_pe, s);
    auto off = [&](const void* p) { return reinterpret_cast<std::uintptr_t>(p) - g_state.space[s].lo; };
    if (!m) fatal(call, "the {} heap is neither mapped nor device memory", s == kHostHeap ? "host" : "device");
    if (auto r = device_->copy(*m, off(dst), *m, off(src), n); !r) fatal(call, "{}", r.error().message);
}

void Runtime::release(void* p, const char* call) {
    if (!p) return;
    barrier_all(); // nobody may still be writing into it
    std::lock_guard lk(mu_);
    if (!memory_->free(p)) fatal(call, "{} is not an address shmem_malloc returned, or was freed already", p);
}

void Runtime::finalize_at_exit() {
    if (g_runtime) g_finalize_at_exit = true;
}

void Runtime::finalize() {
    Runtime* rt = g_runtime;
    if (!rt) return;
    g_finalize_at_exit = false;
    rt->barrier_all();
    g_state.initialized = false;
    rt->cmd_.reset();
    rt->proxy_.reset();
    g_state.net_progress = nullptr;
    g_state.net_nap = nullptr;
    g_state.start_queued = nullptr;
    rt->teams_.reset();
    rma::g_subsystems = {};
    rt->net_.reset(); // collective: closes every connection
    rt->memory_.reset();
    rt->device_.reset();
    g_runtime = nullptr;
    // The launcher connection goes last: finalize must still be able to abort.
    g_abort_boot = nullptr;
    rt->boot_.reset();
    delete rt;
}

[[noreturn]] void Runtime::global_exit(int status) {
    std::fflush(nullptr);
    boot_->abort(status, "shmem_global_exit");
    _exit(status);
}

} // namespace vkshmem
