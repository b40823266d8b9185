// SPDX-License-Identifier: BSL-1.0
// Helpers for the shader tests: kernels, work records, dispatches (also ones expected to fail,
// with their message captured) and the type tables as the device library has them.
//
// Every test kernel takes the same push constants (`Push`, mirrored in common.glsl) and reads
// its work from an array of `Rec` in this PE's host heap, written here before the dispatch.
#pragma once

#include "spmd.hpp"

#include <vkshmem/vulkan.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace shader_test {

// One extension structure of this PE's physical device's properties (sType `type`).
template <class T> T device_properties(VkStructureType type) {
    T ext{};
    ext.sType = type;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &ext;
    vkGetPhysicalDeviceProperties2(vkshmemx_vk_physical_device(), &p2);
    ext.pNext = nullptr;
    return ext;
}

// Whether this PE's device is lavapipe, for which the runtime specializes the device library
// (src/vulkan/kernel.cpp), as the test kernels' lavapipe variant has it built in.
inline bool lavapipe() {
    static const bool yes =
        device_properties<VkPhysicalDeviceDriverProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES)
            .driverID == VK_DRIVER_ID_MESA_LLVMPIPE;
    return yes;
}

// Whether the device library counts loop iterations here: only where the runtime specialises
// pipelines for lavapipe, whose loops stop silently after 65,535 iterations (shaders/README.md).
inline bool loop_budget_applies() { return lavapipe(); }

// Mirrors `Rec` in common.glsl (std430: 64 bytes).
struct Rec {
    std::uint32_t op = 0;
    std::uint32_t type = 0;
    std::int32_t pe = 0;
    std::uint32_t flags = 0;
    std::uint64_t dst = 0;
    std::uint64_t src = 0;
    std::uint64_t n = 0;
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::uint64_t c = 0;
};
static_assert(sizeof(Rec) == 64);

// Mirrors the push constant block of common.glsl.
struct Push {
    std::uint64_t state = 0;
    std::uint64_t recs = 0;
    std::uint64_t arg0 = 0;
    std::uint64_t arg1 = 0;
    std::uint32_t count = 0;
    std::uint32_t mode = 0;
};
static_assert(sizeof(Push) == 40);

// The device address of a symmetric object of this PE (never 0 for heap objects).
inline std::uint64_t dev(const void* sym) {
    const std::uint64_t a = vkshmemx_device_address(sym);
    REQUIRE(a != 0);
    return a;
}

inline bool force_proxy() {
    const char* e = std::getenv("VKSHMEM_FORCE_PROXY");
    return e && *e && std::strcmp(e, "0") != 0;
}

// VKSHMEM_SHARE_DEVICE_HEAPS=0: peers' device heaps are reached through their proxies only.
inline bool device_heaps_unshared() {
    const char* e = std::getenv("VKSHMEM_SHARE_DEVICE_HEAPS");
    return e && std::strcmp(e, "0") == 0;
}

// Whether this PE's Vulkan device is a GPU (not a CPU driver such as lavapipe).
inline bool on_gpu() {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(vkshmemx_vk_physical_device(), &props);
    return props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
}

// Each PE's Vulkan device: its node and device UUID, hashed. Collective the first time: call it
// from every PE.
inline const std::vector<std::uint64_t>& device_of() {
    static const std::vector<std::uint64_t> all = [] {
        const auto id = device_properties<VkPhysicalDeviceIDProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES);
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        std::uint64_t h = 1469598103934665603ull; // FNV-1a of host name and UUID
        for (const char* c = host; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
        for (unsigned char c : id.deviceUUID) h = (h ^ c) * 1099511628211ull;
        return spmd::gather(h);
    }();
    return all;
}
inline bool same_device(int pe) {
    return device_of()[static_cast<std::size_t>(pe)] == device_of()[static_cast<std::size_t>(spmd::me())];
}

// Whether this PE is on a GPU and other PEs on other GPUs: then shaders' AMOs on host heaps go
// through the proxy (shaders/README.md, "Atomics on a host heap across GPUs"). Collective the
// first time.
inline bool on_several_gpus() {
    bool other = false;
    for (int pe = 0; pe < spmd::npes(); ++pe) other = other || !same_device(pe);
    return other && on_gpu();
}

// Whether every PE p may make atomics on the device heap of PE (p + shift) % n, from a kernel
// that waits for them, where the two share a GPU: `served(p, t)` says whether such atomics are
// carried out while p's kernel runs (on a GPU only a waiting kernel does that: shaders/README.md,
// "Limits"; PEs on different GPUs or CPU devices always are). Collective the first time.
template <class Served> bool shift_served(int shift, Served served) {
    const int n = spmd::npes();
    const std::vector<std::uint64_t>& dev_of = device_of();
    if (!on_gpu()) return true;
    for (int pe = 0; pe < n; ++pe) {
        const int t = (pe + shift) % n;
        if (t != pe && dev_of[static_cast<std::size_t>(t)] == dev_of[static_cast<std::size_t>(pe)] && !served(pe, t))
            return false;
    }
    return true;
}

// Device-side waits for another PE's running shader need the PEs' shaders to run at the same
// time: on a CPU device (lavapipe, one process and one worker thread per PE) when there are at
// least as many CPUs as PEs; on GPUs when no two PEs share one, since a GPU's driver time-slices
// the kernels of separate processes (measured on an H200): there, as on an oversubscribed CPU, the
// wait outlasts its bound. Returns why a test that needs it cannot run here, or null. Collective.
inline const char* why_not_concurrent() {
    (void)device_of();
    if (spmd::npes() == 1) return nullptr;
    if (on_gpu()) {
        std::vector<std::uint64_t> d = device_of();
        std::sort(d.begin(), d.end());
        if (std::adjacent_find(d.begin(), d.end()) != d.end()) return "PEs that share a GPU do not run their shaders at once";
        return nullptr;
    }
    if (sysconf(_SC_NPROCESSORS_ONLN) < spmd::npes()) return "more PEs than CPUs: their shaders do not run at once";
    return nullptr;
}

// Whether a shader of this PE addresses `pe`'s objects in space `s` directly (vkshmem_ptr is not
// 0): not through the proxy, and the memory mapped on this device. The host heap of a PE on
// another GPU goes through the proxy too (shaders/README.md, "Routes"). Collective the first time.
inline bool shader_reaches(spmd::Space s, int pe) {
    (void)device_of(); // collective the first time: not behind a condition
    if (force_proxy()) return false;
    if (pe == spmd::me()) return true;
    if (!spmd::same_node(pe)) return false;
    if (s == spmd::Space::Host) return same_device(pe) || !on_gpu();
    return !device_heaps_unshared() && same_device(pe);
}

// One embedded test kernel (the <target>_kernels.hpp of each test program lists them): for any
// device, and for lavapipe (tests/shaders/CMakeLists.txt).
struct KernelSpv {
    const char* name;
    const std::uint32_t* words;
    std::size_t bytes;
    const std::uint32_t* cpu_words;
    std::size_t cpu_bytes;
};

// A compute pipeline of one test kernel (lavapipe compiles it at its first dispatch).
class Kernel {
public:
    explicit Kernel(const KernelSpv& spv) {
        k_ = lavapipe() ? vkshmemx_kernel_create(spv.cpu_words, spv.cpu_bytes, sizeof(Push))
                        : vkshmemx_kernel_create(spv.words, spv.bytes, sizeof(Push));
        REQUIRE(k_ != nullptr);
    }
    ~Kernel() { vkshmemx_kernel_destroy(k_); }
    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;

    vkshmemx_kernel* handle() const { return k_; }
    // vkshmemx_dispatch of `groups` workgroups; 0 on success.
    int run(std::uint32_t groups, Push p) const {
        p.state = vkshmemx_device_state();
        return vkshmemx_dispatch(k_, groups, 1, 1, &p, sizeof p);
    }

    // A dispatch that is expected to fail: its return value and what it printed on stderr.
    struct Outcome {
        int rc;
        std::string text;
        double ms;
    };
    Outcome run_capturing(std::uint32_t groups, Push p) const {
        std::fflush(stderr);
        std::FILE* tmp = std::tmpfile();
        REQUIRE(tmp != nullptr);
        const int saved = dup(STDERR_FILENO);
        dup2(fileno(tmp), STDERR_FILENO);
        const auto t0 = std::chrono::steady_clock::now();
        const int rc = run(groups, p);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        std::string text;
        std::rewind(tmp);
        char buf[512];
        std::size_t got;
        while ((got = std::fread(buf, 1, sizeof buf, tmp)) > 0) text.append(buf, got);
        std::fclose(tmp);
        return {rc, text, ms};
    }

private:
    vkshmemx_kernel* k_ = nullptr;
};

// A host call into a running kernel, by pairs of PEs (0, 1), (2, 3), ...: the even PE dispatches
// `k` (one workgroup, push constants `p`) and the odd one, 20 ms later, calls `act(its partner)`.
// Collective. Returns the even PE's dispatch time in ms and (in `took_us`) the odd PE's call in
// us; 0 and -1 elsewhere.
template <class Act> double host_call_during_dispatch(const Kernel& k, const Push& p, Act act, double& took_us) {
    const int n = spmd::npes(), me = spmd::me();
    spmd::SymArray<double> took(spmd::Space::Host, 1);
    took.store(0, -1);
    shmem_barrier_all();
    double ms = 0;
    if (me % 2 == 0 && me + 1 < n) {
        const Kernel::Outcome o = k.run_capturing(1, p);
        INFO("vkshmemx_dispatch printed: " << o.text);
        CHECK(o.rc == 0);
        ms = o.ms;
    } else if (me % 2 == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const auto t0 = std::chrono::steady_clock::now();
        act(me - 1);
        shmem_double_p(took.get(), std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count(),
                       me - 1);
    }
    shmem_barrier_all();
    took_us = took.load(0);
    return ms;
}

// This PE's work records, in its host heap (collective, like every symmetric allocation).
class Records {
public:
    explicit Records(std::size_t n) : arr_(spmd::Space::Host, n) {
        for (std::size_t i = 0; i < n; ++i) arr_.get()[i] = Rec{};
    }
    Rec& operator[](std::size_t i) { return arr_.get()[i]; }
    std::uint64_t address() const { return dev(arr_.get()); }
    std::size_t size() const { return arr_.size(); }

private:
    spmd::SymArray<Rec> arr_;
};

// The type tables as the device library's typed routines have them, in the order of the
// X-macros of common.glsl. `size` comes from the C types, not from the generator.
struct TypeInfo {
    const char* name;
    std::size_t size;
    bool is_signed;
    bool is_float;
};
inline constexpr TypeInfo kBulk[] = {
    {"float", sizeof(float), true, true},          {"double", sizeof(double), true, true},
    {"char", sizeof(char), false, false},          {"schar", sizeof(signed char), true, false},
    {"short", sizeof(short), true, false},         {"int", sizeof(int), true, false},
    {"long", sizeof(long), true, false},           {"longlong", sizeof(long long), true, false},
    {"uchar", sizeof(unsigned char), false, false}, {"ushort", sizeof(unsigned short), false, false},
    {"uint", sizeof(unsigned), false, false},      {"ulong", sizeof(unsigned long), false, false},
    {"ulonglong", sizeof(unsigned long long), false, false},
    {"int8", sizeof(std::int8_t), true, false},    {"int16", sizeof(std::int16_t), true, false},
    {"int32", sizeof(std::int32_t), true, false},  {"int64", sizeof(std::int64_t), true, false},
    {"uint8", sizeof(std::uint8_t), false, false}, {"uint16", sizeof(std::uint16_t), false, false},
    {"uint32", sizeof(std::uint32_t), false, false}, {"uint64", sizeof(std::uint64_t), false, false},
    {"size", sizeof(std::size_t), false, false},   {"ptrdiff", sizeof(std::ptrdiff_t), true, false},
};
// p/g and the extended AMO table (the VALUE table).
inline constexpr TypeInfo kValue[] = {
    {"float", 4, true, true},      {"double", 8, true, true},    {"int", 4, true, false},
    {"long", 8, true, false},      {"longlong", 8, true, false}, {"uint", 4, false, false},
    {"ulong", 8, false, false},    {"ulonglong", 8, false, false}, {"int32", 4, true, false},
    {"int64", 8, true, false},     {"uint32", 4, false, false},  {"uint64", 8, false, false},
    {"size", 8, false, false},     {"ptrdiff", 8, true, false},
};
// The standard AMO table (the STD table), also the point-to-point table without short/ushort.
inline constexpr TypeInfo kStd[] = {
    {"int", 4, true, false},    {"long", 8, true, false},   {"longlong", 8, true, false}, {"uint", 4, false, false},
    {"ulong", 8, false, false}, {"ulonglong", 8, false, false}, {"int32", 4, true, false}, {"int64", 8, true, false},
    {"uint32", 4, false, false}, {"uint64", 8, false, false}, {"size", 8, false, false},   {"ptrdiff", 8, true, false},
};
// The bitwise AMO table (the BIT table).
inline constexpr TypeInfo kBit[] = {
    {"uint", 4, false, false},  {"ulong", 8, false, false}, {"ulonglong", 8, false, false}, {"int32", 4, true, false},
    {"int64", 8, true, false},  {"uint32", 4, false, false}, {"uint64", 8, false, false},
};
// Sized routines (the SIZED table): 0 = mem, then 8, 16, 32, 64, 128 bits.
// The test kernels hold one type (or sized form) each: kernel <base>_<variant>_<i> calls the
// routines of type i of its table (common.glsl).
inline constexpr std::size_t kSizedBytes[] = {1, 1, 2, 4, 8, 16};
inline constexpr const char* kSizedName[] = {"mem", "8", "16", "32", "64", "128"};

// The bit pattern of a random value of a table type, in the low `size` bytes: floating values
// are exact binary fractions (never NaN, whose payload a conversion may change).
inline std::uint64_t random_bits(const TypeInfo& t, spmd::Gen& g) {
    if (t.is_float && t.size == 4) {
        const float f = spmd::random_value<float>(g);
        std::uint32_t u;
        std::memcpy(&u, &f, 4);
        return u;
    }
    if (t.is_float) {
        const double d = spmd::random_value<double>(g);
        std::uint64_t u;
        std::memcpy(&u, &d, 8);
        return u;
    }
    const std::uint64_t v = g.next();
    return t.size == 8 ? v : v & ((std::uint64_t{1} << (8 * t.size)) - 1);
}

inline std::uint64_t low_mask(std::size_t bytes) {
    return bytes >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * bytes)) - 1;
}

// Prints a measurement once (PE 0), in the CTest log.
__attribute__((format(printf, 1, 2))) inline void report(const char* fmt, ...) {
    if (spmd::me() != 0) return;
    std::printf("[shaders%s] ", force_proxy() ? ", proxy" : "");
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
    std::fflush(stdout);
}

} // namespace shader_test
