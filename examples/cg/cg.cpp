// SPDX-License-Identifier: BSL-1.0
// cg: conjugate gradients for the 2D Poisson problem -Laplace(u) = 1 on the unit square, zero
// Dirichlet boundary, 5-point Laplacian on an nx x ny interior grid, in double precision. The
// grid's rows are split into bands across PEs; every vector lives in the device heap. Two solvers
// run the same iteration from x = 0, one after the other:
//
//   GPU-resident  one command buffer per PE, recorded once with K iterations and submitted back to
//                 back, with one fence at the end. Per iteration the halo kernel puts the band's
//                 edge rows into the neighbours (shmem_putmem_signal_wg in the shader), the queue
//                 waits for the neighbours' rows (vkshmemx_cmd_signal_wait_until), and each dot
//                 product is a recorded reduction (vkshmemx_cmd_double_sum_reduce) that the scalar
//                 kernel turns into alpha or beta in device memory: the CPU does nothing per
//                 iteration.
//   host-driven   the same vector kernels, each a vkshmemx_dispatch (submit and wait); halos by host
//                 shmem_putmem and shmem_barrier_all; dot products by host shmem_double_sum_reduce;
//                 alpha and beta computed by the host and passed to the kernels in a host-heap block.
//
// PE 0 checks both against CG on the whole grid on its CPU, prints the iteration rates, and writes
// the solution and the residual histories as PNGs.
//
//   oshrun -np 4 cg [--nx 64] [--ny 48] [--iters 200] [--reps 3] [--png-solution cg_solution.png]
//                   [--png-residual cg_residual.png] [--profile]
#include <shmem.h>
#include <shmemx.h>
#include <vkshmem/vulkan.h>

#include "cg_apply_comp_spv.h"
#include "cg_direction_comp_spv.h"
#include "cg_fold_comp_spv.h"
#include "cg_halo_comp_spv.h"
#include "cg_scalar_comp_spv.h"
#include "cg_update_comp_spv.h"
#include "plot.hpp"
#include "reference.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace {

using cg_ref::Problem;

constexpr std::uint32_t kWg = 64; // cg.glsl's CG_WG
// Workgroups of a vector kernel at most (each invocation takes more points beyond): enough to
// fill a GPU, and folded (kWg to one) into at most 240 sums, which the recorded reduction moves in
// one chunk of half its scratch area up to 4 PEs (252 doubles per member at 4) and the scalar
// kernel adds up in 4 steps.
constexpr std::uint32_t kMaxGroups = 240 * kWg;
constexpr int kItersPerBuffer = 10; // K: iterations recorded in the GPU-resident command buffer

// cg.glsl's push constants, field for field.
struct Push {
    std::uint64_t state, x, r, p, ap, parts, folded, red, scal, hist, sig;
    std::uint32_t nx, rows, rows_up, per_inv, nparts, nfold, mode;
    std::int32_t up, down;
};
static_assert(sizeof(Push) <= 128, "Vulkan guarantees 128 bytes of push constants");

// cg.glsl's Scalars.
struct Scalars {
    double rr, alpha, beta, cx, cy;
    std::uint64_t iter, hist_len;
};

int g_me = 0;

[[noreturn]] void die(const char* fmt, ...) {
    std::va_list ap;
    va_start(ap, fmt);
    std::fprintf(stderr, "cg: PE %d: ", g_me);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    va_end(ap);
    shmem_global_exit(1);
    std::abort(); // not reached
}

// ---- This PE's share and its symmetric data --------------------------------------------------------

struct Band {
    std::uint32_t first, rows;
};
// Rows split as evenly as they go: the first ny % npes PEs take one more.
Band band_of(int pe, int npes, std::uint32_t ny) {
    const std::uint32_t q = ny / std::uint32_t(npes), extra = ny % std::uint32_t(npes), k = std::uint32_t(pe);
    return {k * q + std::min(k, extra), q + (k < extra ? 1u : 0u)};
}

struct Layout {
    std::uint32_t nx, rows, max_rows, per_inv, nparts, nfold;
    int up, down; // neighbouring PEs, -1 at the grid's edge
    std::uint32_t rows_up; // the band of the PE above (where our first row goes in its p)
};

// Symmetric objects: every PE allocates the same sizes (those of the largest band).
struct Data {
    double *x, *r, *p, *ap, *parts, *folded, *red, *hist; // device heap
    Scalars* scal;                               // device heap: the GPU-resident solver's scalars
    std::uint64_t* sig;                          // device heap: [0] row from above, [1] from below
    double* parts_h;                             // host heap: the host-driven solver's partials
    Scalars* scal_h;                             // host heap: its alpha and beta, for the kernels
    double* coll_h;                              // host heap: [0] source, [1] result of a reduction
};

template <class T> T* alloc(std::size_t count, bool device) {
    const std::size_t bytes = count * sizeof(T);
    void* p = device ? shmem_malloc_with_hints(bytes, SHMEMX_MALLOC_DEVICE) : shmem_malloc(bytes);
    if (!p)
        die("cannot allocate %zu bytes in the %s heap (a larger grid needs a larger %s)", bytes,
            device ? "device" : "host", device ? "VKSHMEM_DEVICE_HEAP_SIZE" : "SHMEM_SYMMETRIC_SIZE");
    return static_cast<T*>(p);
}

Data allocate(const Layout& L, int iters) {
    const std::size_t band = std::size_t(L.max_rows) * L.nx;
    return Data{alloc<double>(band, true),
                alloc<double>(band, true),
                alloc<double>(band + 2 * std::size_t(L.nx), true),
                alloc<double>(band, true),
                alloc<double>(L.nparts, true),
                alloc<double>(L.nfold, true),
                alloc<double>(L.nfold, true),
                alloc<double>(std::size_t(iters) + 1, true),
                alloc<Scalars>(1, true),
                alloc<std::uint64_t>(2, true),
                alloc<double>(L.nparts, false),
                alloc<Scalars>(1, false),
                alloc<double>(2, false)};
}

void release(Data& d) {
    for (void* p : {static_cast<void*>(d.x), static_cast<void*>(d.r), static_cast<void*>(d.p),
                    static_cast<void*>(d.ap), static_cast<void*>(d.parts), static_cast<void*>(d.folded),
                    static_cast<void*>(d.red),
                    static_cast<void*>(d.hist), static_cast<void*>(d.scal), static_cast<void*>(d.sig),
                    static_cast<void*>(d.parts_h), static_cast<void*>(d.scal_h), static_cast<void*>(d.coll_h)})
        shmem_free(p);
}

// The starting point of both solvers: x = 0, r = p = f = 1, zero halo rows (the boundary at the
// grid's top and bottom), iteration 0, signals clear. Device memory is written through shmem_putmem
// to this PE (the CPU may not be able to address it). The barrier keeps every PE from putting into
// a neighbour's halo before that neighbour has cleared it here.
void reset(const Data& d, const Layout& L, const Problem& pb, int iters) {
    const int me = shmem_my_pe();
    const std::size_t n = std::size_t(L.rows) * L.nx;
    const std::vector<double> zeros(n, 0.0), ones(n, 1.0);
    std::vector<double> p(n + 2 * std::size_t(L.nx), 0.0);
    std::fill(p.begin() + L.nx, p.begin() + static_cast<long>(L.nx + n), 1.0);
    shmem_putmem(d.x, zeros.data(), n * sizeof(double), me);
    shmem_putmem(d.r, ones.data(), n * sizeof(double), me);
    shmem_putmem(d.p, p.data(), p.size() * sizeof(double), me);
    // rr = f.f over the whole grid, the same on every PE without communication.
    const double rr = double(pb.nx) * double(pb.ny), r0 = std::sqrt(rr);
    const Scalars s{rr, 0.0, 0.0, pb.cx, pb.cy, 0, std::uint64_t(iters) + 1};
    shmem_putmem(d.scal, &s, sizeof s, me);
    *d.scal_h = s;
    shmem_putmem(d.hist, &r0, sizeof r0, me);
    const std::uint64_t clear[2] = {0, 0};
    shmem_putmem(d.sig, clear, sizeof clear, me);
    shmem_barrier_all();
}

// The x of every PE, on PE 0 (whole grid, row-major).
std::vector<double> gather_x(const Data& d, const Problem& pb) {
    const int npes = shmem_n_pes();
    std::vector<double> x(std::size_t(pb.nx) * pb.ny);
    for (int pe = 0; pe < npes; ++pe) {
        const Band b = band_of(pe, npes, pb.ny);
        shmem_getmem(x.data() + std::size_t(b.first) * pb.nx, d.x, std::size_t(b.rows) * pb.nx * sizeof(double), pe);
    }
    return x;
}

// The largest of every PE's value (the slowest PE's time is the solver's).
double max_over_pes(const Data& d, double v) {
    d.coll_h[0] = v;
    if (shmem_double_max_reduce(SHMEM_TEAM_WORLD, &d.coll_h[1], &d.coll_h[0], 1) != 0)
        die("shmem_double_max_reduce failed");
    return d.coll_h[1];
}

// ---- The kernels ----------------------------------------------------------------------------------

struct Kernels {
    vkshmemx_kernel *halo, *apply, *update, *direction, *fold, *scalar;
};

Kernels create_kernels() {
    const auto make = [](const std::uint32_t* spv, std::size_t bytes, const char* name) {
        vkshmemx_kernel* k = vkshmemx_kernel_create(spv, bytes, sizeof(Push));
        if (!k) die("vkshmemx_kernel_create failed for %s", name);
        return k;
    };
    return {make(cg_halo_comp_spv, sizeof cg_halo_comp_spv, "cg_halo.comp"),
            make(cg_apply_comp_spv, sizeof cg_apply_comp_spv, "cg_apply.comp"),
            make(cg_update_comp_spv, sizeof cg_update_comp_spv, "cg_update.comp"),
            make(cg_direction_comp_spv, sizeof cg_direction_comp_spv, "cg_direction.comp"),
            make(cg_fold_comp_spv, sizeof cg_fold_comp_spv, "cg_fold.comp"),
            make(cg_scalar_comp_spv, sizeof cg_scalar_comp_spv, "cg_scalar.comp")};
}

void destroy_kernels(Kernels& k) {
    for (vkshmemx_kernel* p : {k.halo, k.apply, k.update, k.direction, k.fold, k.scalar}) vkshmemx_kernel_destroy(p);
}

// Push constants for either solver: the GPU-resident one keeps its scalars and partials in the
// device heap and resets the halo signals; the host-driven one uses host-heap blocks the CPU reads
// and writes between dispatches.
Push make_push(const Data& d, const Layout& L, bool resident) {
    const auto addr = [](const void* p) {
        const std::uint64_t a = vkshmemx_device_address(p);
        if (!a) die("vkshmemx_device_address(%p) returned 0", p);
        return a;
    };
    Push p{};
    p.state = vkshmemx_device_state();
    p.x = addr(d.x), p.r = addr(d.r), p.p = addr(d.p), p.ap = addr(d.ap);
    p.parts = addr(resident ? d.parts : d.parts_h);
    p.folded = addr(d.folded);
    p.red = addr(d.red);
    p.scal = addr(resident ? d.scal : d.scal_h);
    p.hist = addr(d.hist);
    p.sig = resident ? addr(d.sig) : 0;
    p.nx = L.nx, p.rows = L.rows, p.rows_up = L.rows_up;
    p.per_inv = L.per_inv, p.nparts = L.nparts, p.nfold = L.nfold;
    p.up = L.up, p.down = L.down;
    return p;
}

// ---- The GPU-resident solver ------------------------------------------------------------------------

// Command buffers of the runtime's queue family, submitted with vkshmemx_queue_submit (which
// orders them with the runtime's own submissions).
class Queue {
public:
    Queue() {
        std::uint32_t family = 0;
        if (vkshmemx_vk_queue(&family) == VK_NULL_HANDLE) die("vkshmemx_vk_queue: this PE has no Vulkan queue");
        VkCommandPoolCreateInfo pci{};
        pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
        pci.queueFamilyIndex = family;
        check(vkCreateCommandPool(dev(), &pci, nullptr, &pool_), "vkCreateCommandPool");
        VkFenceCreateInfo fci{};
        fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
        check(vkCreateFence(dev(), &fci, nullptr, &fence_), "vkCreateFence");
    }
    ~Queue() {
        vkDestroyFence(dev(), fence_, nullptr);
        vkDestroyCommandPool(dev(), pool_, nullptr); // frees its command buffers
    }
    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;

    // A command buffer holding `iters` iterations, each recorded by body(cb). Simultaneous use:
    // the same buffer is submitted again while its previous submission is still pending.
    template <class F> VkCommandBuffer record(int iters, F&& body) {
        VkCommandBufferAllocateInfo ai{};
        ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
        ai.commandPool = pool_;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        VkCommandBuffer cb = VK_NULL_HANDLE;
        check(vkAllocateCommandBuffers(dev(), &ai, &cb), "vkAllocateCommandBuffers");
        VkCommandBufferBeginInfo bi{};
        bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
        check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
        for (int i = 0; i < iters; ++i) body(cb);
        check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
        return cb;
    }

    // Submits the buffers back to back, a fence on the last only, and waits for it.
    void run(const std::vector<VkCommandBuffer>& seq) {
        for (std::size_t i = 0; i < seq.size(); ++i) {
            VkSubmitInfo si{};
            si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
            si.commandBufferCount = 1;
            si.pCommandBuffers = &seq[i];
            check(vkshmemx_queue_submit(1, &si, i + 1 == seq.size() ? fence_ : VK_NULL_HANDLE),
                  "vkshmemx_queue_submit");
        }
        // A device-side failure ends the job from the proxy thread; this bound only catches a hang.
        constexpr std::uint64_t kTimeoutNs = 600'000'000'000ull;
        const VkResult r = vkWaitForFences(dev(), 1, &fence_, VK_TRUE, kTimeoutNs);
        if (r == VK_TIMEOUT) die("the GPU-resident solve did not finish within 600 s");
        check(r, "vkWaitForFences");
        check(vkResetFences(dev(), 1, &fence_), "vkResetFences");
    }

private:
    static VkDevice dev() { return vkshmemx_vk_device(); }
    static void check(VkResult r, const char* what) {
        if (r != VK_SUCCESS) die("%s failed (VkResult %d)", what, static_cast<int>(r));
    }
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
};

void record_kernel(VkCommandBuffer cb, vkshmemx_kernel* k, std::uint32_t groups, const Push& push, const char* name) {
    if (vkshmemx_kernel_record(cb, k, groups, 1, 1, &push, sizeof push) != 0)
        die("vkshmemx_kernel_record(%s) failed", name);
}

// One iteration, in queue order. The halo signals are reset by the apply kernel; the next
// iteration's puts cannot overtake that, since every PE puts only after the two reductions, which
// no PE leaves before every PE has run its apply kernel.
// With `mark` (--profile), mark(cb) is recorded after each of the kSteps steps.
constexpr int kSteps = 11;
const char* const kStepNames[kSteps] = {"halo puts (kernel)", "halo waits (recorded)", "apply",  "fold",
                                        "p.Ap sum (recorded)", "scalar alpha",        "update", "fold",
                                        "r.r sum (recorded)",  "scalar beta",         "direction"};
template <class Mark>
void record_iteration(VkCommandBuffer cb, const Kernels& k, const Data& d, const Layout& L, const Push& base,
                      Mark&& mark) {
    Push alpha = base, beta = base;
    alpha.mode = 0;
    beta.mode = 1;
    record_kernel(cb, k.halo, 2, base, "halo");
    mark(cb);
    if (L.up >= 0) vkshmemx_cmd_signal_wait_until(cb, &d.sig[0], SHMEM_CMP_GE, 1);
    if (L.down >= 0) vkshmemx_cmd_signal_wait_until(cb, &d.sig[1], SHMEM_CMP_GE, 1);
    mark(cb);
    record_kernel(cb, k.apply, L.nparts, base, "apply");
    mark(cb);
    record_kernel(cb, k.fold, L.nfold, base, "fold");
    mark(cb);
    vkshmemx_cmd_double_sum_reduce(cb, SHMEM_TEAM_WORLD, d.red, d.folded, L.nfold);
    mark(cb);
    record_kernel(cb, k.scalar, 1, alpha, "scalar (alpha)");
    mark(cb);
    record_kernel(cb, k.update, L.nparts, base, "update");
    mark(cb);
    record_kernel(cb, k.fold, L.nfold, base, "fold");
    mark(cb);
    vkshmemx_cmd_double_sum_reduce(cb, SHMEM_TEAM_WORLD, d.red, d.folded, L.nfold);
    mark(cb);
    record_kernel(cb, k.scalar, 1, beta, "scalar (beta)");
    mark(cb);
    record_kernel(cb, k.direction, L.nparts, base, "direction");
    mark(cb);
}
void record_iteration(VkCommandBuffer cb, const Kernels& k, const Data& d, const Layout& L, const Push& base) {
    record_iteration(cb, k, d, L, base, [](VkCommandBuffer) {});
}

struct Timed {
    double seconds;      // the iteration loop only, slowest PE
    double rr;           // final r.r
    std::uint64_t iters; // iterations the solver counted
    std::vector<double> hist, x; // x on PE 0 only
};

Timed solve_resident(const Kernels& k, const Data& d, const Layout& L, const Problem& pb, int iters) {
    const int me = shmem_my_pe();
    const Push push = make_push(d, L, true);
    Queue q;
    const int K = std::min(kItersPerBuffer, iters);
    const VkCommandBuffer main_cb = q.record(K, [&](VkCommandBuffer cb) { record_iteration(cb, k, d, L, push); });
    std::vector<VkCommandBuffer> seq(std::size_t(iters / K), main_cb);
    if (iters % K) seq.push_back(q.record(iters % K, [&](VkCommandBuffer cb) { record_iteration(cb, k, d, L, push); }));

    // Warm-up: one submission of K iterations builds the recorded operations' pipelines too.
    reset(d, L, pb, iters);
    q.run({main_cb});
    reset(d, L, pb, iters);

    const auto t0 = std::chrono::steady_clock::now();
    q.run(seq);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    Timed t{max_over_pes(d, secs), 0.0, 0, std::vector<double>(std::size_t(iters) + 1), {}};
    Scalars s{};
    shmem_getmem(&s, d.scal, sizeof s, me);
    shmem_getmem(t.hist.data(), d.hist, t.hist.size() * sizeof(double), me);
    t.rr = s.rr;
    t.iters = s.iter;
    shmem_barrier_all(); // every PE has seen its fence: its x is final
    if (me == 0) t.x = gather_x(d, pb);
    shmem_barrier_all(); // PE 0 has read every x before the next solver overwrites them
    return t;
}

// --profile: one more command buffer of K iterations with a timestamp after every step, run alone;
// prints this PE's GPU time of each step, averaged over the K iterations.
void profile_resident(const Kernels& k, const Data& d, const Layout& L, const Problem& pb, int iters) {
    const VkPhysicalDevice phys = vkshmemx_vk_physical_device();
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(phys, &props);
    std::uint32_t family = 0, families = 0;
    vkshmemx_vk_queue(&family);
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &families, nullptr);
    std::vector<VkQueueFamilyProperties> fam(families);
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &families, fam.data());
    const std::uint32_t bits = family < families ? fam[family].timestampValidBits : 0;
    if (bits == 0) {
        if (shmem_my_pe() == 0) std::printf("cg: --profile: this queue has no timestamps\n");
        return;
    }
    const int K = std::min(kItersPerBuffer, iters);
    const std::uint32_t count = std::uint32_t(K * kSteps + 1);
    VkQueryPoolCreateInfo qi{};
    qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = count;
    VkQueryPool pool = VK_NULL_HANDLE;
    if (vkCreateQueryPool(vkshmemx_vk_device(), &qi, nullptr, &pool) != VK_SUCCESS) die("vkCreateQueryPool failed");
    const Push push = make_push(d, L, true);
    std::uint32_t next = 0;
    const auto mark = [&](VkCommandBuffer cb) {
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, next++);
    };
    Queue q;
    const VkCommandBuffer cb = q.record(1, [&](VkCommandBuffer c) {
        vkCmdResetQueryPool(c, pool, 0, count);
        mark(c);
        for (int i = 0; i < K; ++i) record_iteration(c, k, d, L, push, mark);
    });
    reset(d, L, pb, iters);
    q.run({cb});
    std::vector<std::uint64_t> t(count);
    if (vkGetQueryPoolResults(vkshmemx_vk_device(), pool, 0, count, count * sizeof(std::uint64_t), t.data(),
                              sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
        die("vkGetQueryPoolResults failed");
    vkDestroyQueryPool(vkshmemx_vk_device(), pool, nullptr);
    const std::uint64_t mask = bits >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits) - 1;
    const double us = props.limits.timestampPeriod / 1e3 / K;
    double total = 0.0;
    std::vector<double> step(kSteps, 0.0);
    for (int i = 0; i < K; ++i)
        for (int s = 0; s < kSteps; ++s) {
            const std::size_t at = std::size_t(i * kSteps + s);
            step[std::size_t(s)] += double((t[at + 1] - t[at]) & mask) * us;
        }
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        std::printf("cg: --profile, PE 0's GPU time per GPU-resident iteration (average of %d):\n", K);
        for (int s = 0; s < kSteps; ++s) {
            std::printf("cg:   %-24s %9.1f us\n", kStepNames[s], step[std::size_t(s)]);
            total += step[std::size_t(s)];
        }
        std::printf("cg:   %-24s %9.1f us\n", "iteration", total);
    }
    shmem_barrier_all();
}

// ---- The host-driven solver ---------------------------------------------------------------------------

// The sum over all PEs of this PE's partials (added in order here, then across PEs).
double host_sum(const Data& d, const Layout& L) {
    double s = 0.0;
    for (std::uint32_t i = 0; i < L.nparts; ++i) s += d.parts_h[i];
    d.coll_h[0] = s;
    if (shmem_double_sum_reduce(SHMEM_TEAM_WORLD, &d.coll_h[1], &d.coll_h[0], 1) != 0)
        die("shmem_double_sum_reduce failed");
    return d.coll_h[1];
}

void dispatch(vkshmemx_kernel* k, std::uint32_t groups, const Push& push, const char* name) {
    if (vkshmemx_dispatch(k, groups, 1, 1, &push, sizeof push) != 0) die("vkshmemx_dispatch(%s) failed", name);
}

void host_iteration(const Kernels& k, const Data& d, const Layout& L, const Push& push, std::vector<double>& hist) {
    const std::size_t row = std::size_t(L.nx) * sizeof(double);
    if (L.up >= 0) shmem_putmem(d.p + std::size_t(L.rows_up + 1) * L.nx, d.p + L.nx, row, L.up);
    if (L.down >= 0) shmem_putmem(d.p, d.p + std::size_t(L.rows) * L.nx, row, L.down);
    shmem_barrier_all(); // every halo has arrived
    dispatch(k.apply, L.nparts, push, "apply");
    const double pap = host_sum(d, L);
    d.scal_h->alpha = pap > 0.0 ? d.scal_h->rr / pap : 0.0;
    dispatch(k.update, L.nparts, push, "update");
    const double rr = host_sum(d, L);
    d.scal_h->beta = d.scal_h->rr > 0.0 ? rr / d.scal_h->rr : 0.0;
    d.scal_h->rr = rr;
    ++d.scal_h->iter;
    hist.push_back(std::sqrt(rr));
    dispatch(k.direction, L.nparts, push, "direction");
}

Timed solve_host(const Kernels& k, const Data& d, const Layout& L, const Problem& pb, int iters) {
    const int me = shmem_my_pe();
    const Push push = make_push(d, L, false);
    std::vector<double> hist;
    reset(d, L, pb, iters);
    host_iteration(k, d, L, push, hist); // warm-up
    reset(d, L, pb, iters);
    hist.assign(1, std::sqrt(d.scal_h->rr));

    const auto t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < iters; ++it) host_iteration(k, d, L, push, hist);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    Timed t{max_over_pes(d, secs), d.scal_h->rr, d.scal_h->iter, std::move(hist), {}};
    if (me == 0) t.x = gather_x(d, pb);
    shmem_barrier_all();
    return t;
}

// ---- Options, checks, output ------------------------------------------------------------------------

struct Options {
    std::uint32_t nx = 64, ny = 48;
    int iters = 200;
    int reps = 3;
    std::string png_solution = "cg_solution.png", png_residual = "cg_residual.png";
    bool profile = false;
};

const char* const kUsage =
    "usage: cg [--nx N] [--ny N] [--iters N] [--reps N] [--png-solution FILE] [--png-residual FILE] [--profile]\n"
    "  defaults: --nx 64 --ny 48 --iters 200 --reps 3 --png-solution cg_solution.png --png-residual cg_residual.png\n"
    "  --reps: each solver runs this many times, in turn; the rates are the best of them\n"
    "  --profile: also the GPU time of each step of a GPU-resident iteration (timestamp queries)\n";

// Options, or an error message (every PE parses the same arguments and reaches the same verdict).
std::string parse(int argc, char** argv, Options& o) {
    const auto number = [](const std::string& opt, const char* s, long lo, long hi, long& out) -> std::string {
        char* end = nullptr;
        const long v = std::strtol(s, &end, 10);
        if (end == s || *end != '\0' || v < lo || v > hi)
            return opt + " needs a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
                   s + "'";
        out = v;
        return {};
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") return "help";
        if (a == "--profile") {
            o.profile = true;
            continue;
        }
        if (i + 1 >= argc) return "missing value after " + a;
        const char* v = argv[++i];
        long n = 0;
        std::string err;
        if (a == "--nx") {
            err = number(a, v, 1, 1 << 14, n);
            o.nx = std::uint32_t(n);
        } else if (a == "--ny") {
            err = number(a, v, 1, 1 << 14, n);
            o.ny = std::uint32_t(n);
        } else if (a == "--iters") {
            err = number(a, v, 1, 1 << 20, n);
            o.iters = int(n);
        } else if (a == "--reps") {
            err = number(a, v, 1, 100, n);
            o.reps = int(n);
        } else if (a == "--png-solution") {
            o.png_solution = v;
        } else if (a == "--png-residual") {
            o.png_residual = v;
        } else {
            return "unknown option " + a;
        }
        if (!err.empty()) return err;
    }
    return {};
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
    double m = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double e = std::fabs(a[i] - b[i]);
        if (std::isnan(e)) return e; // fails every comparison with the tolerance
        m = std::max(m, e);
    }
    return m;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    const std::string err = parse(argc, argv, o);
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    g_me = me;
    const bool too_few_rows = err.empty() && o.ny < std::uint32_t(npes);
    if (!err.empty() || too_few_rows) {
        if (me == 0 && err == "help") std::fputs(kUsage, stdout);
        else if (me == 0 && too_few_rows)
            std::fprintf(stderr,
                         "cg: --ny %u gives fewer rows than the %d PEs: every PE needs at least one row of the grid\n",
                         o.ny, npes);
        else if (me == 0) std::fprintf(stderr, "cg: %s\n%s", err.c_str(), kUsage);
        shmem_finalize();
        return err == "help" ? 0 : 2;
    }

    const Problem pb{o.nx, o.ny, double(o.nx + 1) * (o.nx + 1), double(o.ny + 1) * (o.ny + 1)};
    const Band band = band_of(me, npes, o.ny);
    Layout L{};
    L.nx = o.nx;
    L.rows = band.rows;
    L.max_rows = band_of(0, npes, o.ny).rows;
    const std::uint32_t points = L.max_rows * L.nx; // <= 2^28 by the option limits
    L.per_inv = (points + kWg * kMaxGroups - 1) / (kWg * kMaxGroups);
    L.nparts = (points + kWg * L.per_inv - 1) / (kWg * L.per_inv);
    L.nfold = (L.nparts + kWg - 1) / kWg;
    L.up = me > 0 ? me - 1 : -1;
    L.down = me + 1 < npes ? me + 1 : -1;
    L.rows_up = me > 0 ? band_of(me - 1, npes, o.ny).rows : 0;

    Data d = allocate(L, o.iters);
    Kernels k = create_kernels();
    {
        // Build every pipeline once before the timed loops and before any recorded wait (lavapipe
        // compiles at the first dispatch): the halo kernel's puts land in halos reset() clears.
        const Push push = make_push(d, L, true);
        Push beta = push;
        beta.mode = 1;
        reset(d, L, pb, o.iters);
        dispatch(k.halo, 2, push, "halo");
        for (vkshmemx_kernel* v : {k.apply, k.update, k.direction}) dispatch(v, L.nparts, push, "warm-up");
        dispatch(k.fold, L.nfold, push, "fold");
        dispatch(k.scalar, 1, push, "scalar");
        dispatch(k.scalar, 1, beta, "scalar");
        shmem_barrier_all();
    }
    // The solvers in turn, o.reps times each; the best time of each counts (a GPU's clocks and
    // other processes vary between runs). Every run starts from x = 0, and the last is checked.
    Timed gpu = solve_resident(k, d, L, pb, o.iters);
    Timed host = solve_host(k, d, L, pb, o.iters);
    for (int r = 1; r < o.reps; ++r) {
        const double g = gpu.seconds, h = host.seconds;
        gpu = solve_resident(k, d, L, pb, o.iters);
        host = solve_host(k, d, L, pb, o.iters);
        gpu.seconds = std::min(gpu.seconds, g);
        host.seconds = std::min(host.seconds, h);
    }
    if (o.profile) profile_resident(k, d, L, pb, o.iters);

    int status = 0;
    if (me == 0) {
        const cg_ref::Solve ref = cg_ref::reference(pb, o.iters);
        double xmax = 0.0;
        for (double v : ref.x) xmax = std::max(xmax, std::fabs(v));
        // Both solvers add up the dot products in another order (per workgroup, then across PEs),
        // so their alpha and beta differ from the reference's in the last bits. CG carries such
        // differences into x amplified by at most about the condition number kappa of A (its
        // attainable accuracy is near kappa * eps): 1.8e-13 of max|x| at 48x40, 2.4e-11 at
        // 512x512; measured, far less (below 1e-14 at 48x40). The tolerance is 1e-9 of max|x|, or
        // 10 * kappa * eps of it on grids beyond about 1050x1050: well above rounding, and well
        // below what a lost or stale halo row or a wrong alpha or beta leaves (1e-3 and more).
        const double kappa = cg_ref::condition(pb), eps = std::numeric_limits<double>::epsilon();
        const double tol = std::max(1e-9, 10.0 * kappa * eps) * xmax;
        const double e_gpu = max_abs_diff(gpu.x, ref.x), e_host = max_abs_diff(host.x, ref.x);
        const bool counted = gpu.iters == std::uint64_t(o.iters) && host.iters == std::uint64_t(o.iters);
        const bool ok = counted && e_gpu <= tol && e_host <= tol;
        const double ips_gpu = o.iters / gpu.seconds, ips_host = o.iters / host.seconds;
        const int K = std::min(kItersPerBuffer, o.iters), full = o.iters / K;
        const std::uint32_t fewest = band_of(npes - 1, npes, o.ny).rows;
        std::printf("cg: %ux%u grid, %d PE%s (", o.nx, o.ny, npes, npes == 1 ? "" : "s");
        if (fewest == L.max_rows) std::printf("%u rows each", fewest);
        else std::printf("%u or %u rows each", fewest, L.max_rows);
        std::printf("), %d iterations of CG for -Laplace(u) = 1 on the unit square\n", o.iters);
        std::printf("cg: GPU-resident: %8.1f iterations/s  (%d submission%s of %d recorded iterations%s)\n", ips_gpu,
                    full, full == 1 ? "" : "s", K, o.iters % K ? " and one of the rest" : "");
        std::printf("cg: host-driven:  %8.1f iterations/s  (3 dispatches, 1 barrier, 2 reductions per iteration)\n",
                    ips_host);
        std::printf("cg: GPU-resident / host-driven: %.3gx (best of %d runs each)\n", ips_gpu / ips_host, o.reps);
        std::printf("cg: final ||r||: GPU-resident %.6e, host-driven %.6e, CPU reference %.6e (||f|| = %.6e)\n",
                    std::sqrt(gpu.rr), std::sqrt(host.rr), ref.hist.back(), ref.hist.front());
        std::printf("cg: true ||f - A x||: GPU-resident %.3e, host-driven %.3e, CPU reference %.3e\n",
                    cg_ref::true_residual(pb, gpu.x), cg_ref::true_residual(pb, host.x),
                    cg_ref::true_residual(pb, ref.x));
        if (!counted)
            std::printf("cg: iterations counted: GPU-resident %llu, host-driven %llu (expected %d)\n",
                        static_cast<unsigned long long>(gpu.iters), static_cast<unsigned long long>(host.iters),
                        o.iters);
        std::printf("cg: max |x - x_ref|: GPU-resident %.3e, host-driven %.3e; tolerance %.3e (max|x_ref| %.4e, "
                    "kappa %.3g): %s\n",
                    e_gpu, e_host, tol, xmax, kappa, ok ? "PASS" : "FAIL");
        if (!ok) status = 1;

        cg_plot::Axes axes{};
        const std::vector<cg_plot::Series> series = {{&ref.hist, {170, 170, 170}, 2},
                                                     {&host.hist, {40, 90, 230}, 1},
                                                     {&gpu.hist, {220, 30, 30}, 0}};
        const bool wrote_solution = cg_plot::write_solution(o.png_solution, gpu.x, o.nx, o.ny);
        const bool wrote_residual = cg_plot::write_residuals(o.png_residual, series, &axes);
        if (!wrote_solution) std::fprintf(stderr, "cg: cannot write %s\n", o.png_solution.c_str());
        if (!wrote_residual) std::fprintf(stderr, "cg: cannot write %s\n", o.png_residual.c_str());
        if (wrote_solution && wrote_residual)
            std::printf("cg: wrote %s (the GPU-resident u over [0, %.4g]) and %s (log10 ||r|| from %d to %d against "
                        "iterations 0..%zu, a grid line every decade and every %zu iterations; grey CPU reference, "
                        "blue host-driven, red GPU-resident)\n",
                        o.png_solution.c_str(), xmax, o.png_residual.c_str(), axes.decade_lo, axes.decade_hi,
                        axes.iters, axes.step);
        else
            status = 1;
    }
    destroy_kernels(k);
    release(d);
    shmem_finalize();
    return status;
}
