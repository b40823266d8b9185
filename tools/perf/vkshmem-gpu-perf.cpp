// SPDX-License-Identifier: BSL-1.0
// vkshmem-gpu-perf: the device-heap and shader figures, each next to the raw
// Vulkan operation it should approach, measured in the same run.
//
//   oshrun -np 2 vkshmem-gpu-perf [--mib N] [--rtt N] [--diag]  (PE 0 measures, PE 1 is the target)
//   --rtt N: round trips in one dispatch (100; lavapipe's loop cap allows about 10)
//   VKSHMEM_FORCE_PROXY=1 ...  makes the first row the shader -> proxy -> peer round trip
//   --diag adds rows that locate where a shader put loses time
//   --compile FILE.spv...  instead: how long the driver takes to create a
//     pipeline of each SPIR-V kernel (vkshmemx_kernel_create, PE 0; for the
//     first compile, switch off the driver's disk cache, e.g.
//     __GL_SHADER_DISK_CACHE=0 on NVIDIA, MESA_SHADER_CACHE_DISABLE=true)
//
// Rows: compute-shader device-to-device copy (raw) vs shader put into the
// peer's device heap (GLSL and HLSL); vkCmdCopyBuffer host->device (raw) vs host put from
// the host heap into the peer's device heap; 8-byte host put into the
// peer's device heap; shader -> proxy -> peer put round trip.
#include <shmem.h>
#include <shmemx.h>
#include <vkshmem/vulkan.h>

#include "copy64_comp_spv.h"
#include "copy_hlsl_hlsl_spv.h"
#include "copy_peer_comp_spv.h"
#include "copy_comp_spv.h"
#include "proxy_rtt_comp_spv.h"
#include "put_comp_spv.h"
#include "put_hlsl_hlsl_spv.h"
#include "put_long_p_comp_spv.h"
#include "put_setup_comp_spv.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void die(const char* what) {
    std::fprintf(stderr, "vkshmem-gpu-perf: %s\n", what);
    shmem_global_exit(1);
}

// The best time of `reps` calls of f, after calling it for 0.1 s: the GPU raises its clocks only
// after some work, and the first row of a fresh process measured the raw compute copy at 714-788
// GB/s against 1478 a few rows later (H200, 2 PEs), which doubled every ratio to it.
template <class F> double best_of(int reps, F f) {
    for (const double t0 = now(); now() - t0 < 0.1;) f();
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const double t0 = now();
        f();
        best = std::min(best, now() - t0);
    }
    return best;
}

// Raw vkCmdCopyBuffer into device-local memory on the runtime's device, from
// host-visible memory (from_host: the ceiling for a host put into a device
// heap) or from other device-local memory (the driver's device copy, one of the
// two a shader put is measured against).
double raw_copy_gbps(std::size_t bytes, int reps, bool from_host, bool cached = false, std::size_t piece = 0) {
    VkDevice dev = vkshmemx_vk_device();
    VkPhysicalDevice pd = vkshmemx_vk_physical_device();
    std::uint32_t family = 0;
    VkQueue q = vkshmemx_vk_queue(&family);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    auto make = [&](VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid, VkBuffer& b, VkDeviceMemory& m) {
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = bytes;
        bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        if (vkCreateBuffer(dev, &bci, nullptr, &b) != VK_SUCCESS) die("vkCreateBuffer");
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(dev, b, &req);
        int type = -1;
        for (int pass = 0; pass < 2 && type < 0; ++pass)
            for (std::uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
                auto fl = mp.memoryTypes[i].propertyFlags;
                if ((req.memoryTypeBits & (1u << i)) && (fl & want) == want && (pass || !(fl & avoid))) {
                    type = static_cast<int>(i);
                    break;
                }
            }
        if (type < 0) die("no memory type for the raw copy");
        VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        ai.allocationSize = req.size;
        ai.memoryTypeIndex = static_cast<std::uint32_t>(type);
        if (vkAllocateMemory(dev, &ai, nullptr, &m) != VK_SUCCESS) die("vkAllocateMemory");
        vkBindBufferMemory(dev, b, m, 0);
    };
    VkBuffer hb, db;
    VkDeviceMemory hm, dm;
    if (from_host)
        make(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                 (cached ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : 0),
             VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, hb, hm);
    else
        make(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, hb, hm);
    make(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, db, dm);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.queueFamilyIndex = family;
    VkCommandPool pool;
    vkCreateCommandPool(dev, &pci, nullptr, &pool);
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cmd;
    vkAllocateCommandBuffers(dev, &cai, &cmd);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cmd, &bi);
    // piece: as many regions of that size (the proxy's batches of shader puts)
    std::vector<VkBufferCopy> regions;
    for (std::size_t at = 0; at < bytes; at += piece ? piece : bytes)
        regions.push_back({at, at, std::min(bytes - at, piece ? piece : bytes)});
    vkCmdCopyBuffer(cmd, hb, db, static_cast<std::uint32_t>(regions.size()), regions.data());
    vkEndCommandBuffer(cmd);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    vkCreateFence(dev, &fci, nullptr, &fence);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    // Polled, as the library waits for its copies and dispatches: a blocking wait would add an
    // interrupt's wake-up to the raw figure and flatter the library's against it.
    auto once = [&] {
        vkQueueSubmit(q, 1, &si, fence);
        while (vkGetFenceStatus(dev, fence) == VK_NOT_READY) {
        }
        vkResetFences(dev, 1, &fence);
    };
    const double best = best_of(reps, once);
    vkDestroyFence(dev, fence, nullptr);
    vkDestroyCommandPool(dev, pool, nullptr);
    vkDestroyBuffer(dev, hb, nullptr);
    vkDestroyBuffer(dev, db, nullptr);
    vkFreeMemory(dev, hm, nullptr);
    vkFreeMemory(dev, dm, nullptr);
    return double(bytes) / best / 1e9;
}

template <class Push> double time_dispatch(vkshmemx_kernel* k, std::uint32_t groups, const Push& push, int reps) {
    auto once = [&] {
        if (vkshmemx_dispatch(k, groups, 1, 1, &push, sizeof push) != 0) die("dispatch failed");
    };
    return best_of(reps, once);
}

struct CopyPush {
    std::uint64_t dst, src;
    std::uint32_t n, pad;
};
struct PutPush {
    std::uint64_t state, dst, src, bytes;
    std::int32_t pe;
    std::uint32_t pad;
};

vkshmemx_kernel* kernel(const std::uint32_t* spv, std::size_t bytes, std::uint32_t push) {
    vkshmemx_kernel* k = vkshmemx_kernel_create(spv, bytes, push);
    if (!k) die("kernel creation failed");
    return k;
}

void row_gbps(const char* what, double gbps, double of) {
    if (of > 0) std::printf("%-58s %9.1f GB/s %10.0f %%\n", what, gbps, 100.0 * gbps / of);
    else std::printf("%-58s %9.1f GB/s %11s\n", what, gbps, "");
}

// --compile: the time of vkshmemx_kernel_create for each SPIR-V file.
int compile_times(const std::vector<std::string>& files) {
    shmem_init();
    if (!vkshmemx_device_state()) die("needs a Vulkan device");
    if (shmem_my_pe() == 0) {
        for (const std::string& f : files) {
            std::ifstream in(f, std::ios::binary);
            const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (!in.good() && !in.eof()) die("cannot read a SPIR-V file");
            if (bytes.empty() || bytes.size() % 4) die("not a SPIR-V file");
            std::vector<std::uint32_t> words(bytes.size() / 4);
            std::memcpy(words.data(), bytes.data(), bytes.size());
            const auto t0 = std::chrono::steady_clock::now();
            vkshmemx_kernel* k = vkshmemx_kernel_create(words.data(), bytes.size(), 128);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (!k) die("kernel creation failed");
            std::printf("%-58s %9.2f s\n", f.c_str(), s);
            std::fflush(stdout);
            vkshmemx_kernel_destroy(k);
        }
    }
    shmem_finalize();
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::size_t mib = 64;
    bool diag = false;
    unsigned rtt_count = 100;
    std::vector<std::string> compile;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--mib" && i + 1 < argc) mib = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--diag") diag = true;
        else if (a == "--rtt" && i + 1 < argc) rtt_count = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--compile") {
            compile.assign(argv + i + 1, argv + argc);
            break;
        } else die("usage: vkshmem-gpu-perf [--mib N] [--rtt N] [--diag] | --compile FILE.spv...");
    }
    if (!compile.empty()) return compile_times(compile);
    const std::size_t bytes = mib << 20;
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes(), peer = npes > 1 ? 1 : 0;
    if (!vkshmemx_device_state()) die("needs a Vulkan device");
    auto* dsrc = static_cast<char*>(shmem_malloc_with_hints(bytes, SHMEMX_MALLOC_DEVICE));
    auto* ddst = static_cast<char*>(shmem_malloc_with_hints(bytes, SHMEMX_MALLOC_DEVICE));
    auto* hsrc = static_cast<char*>(shmem_malloc(bytes));
    auto* flag = static_cast<int*>(shmem_malloc_with_hints(64, SHMEMX_MALLOC_DEVICE));
    if (!dsrc || !ddst || !hsrc || !flag)
        die("allocation failed: raise VKSHMEM_DEVICE_HEAP_SIZE / SHMEM_SYMMETRIC_SIZE");
    std::memset(hsrc, 0x5a, bytes);
    shmem_barrier_all();
    if (me == 0) {
        const int reps = 5;
        const char* proxy = std::getenv("VKSHMEM_FORCE_PROXY");
        const bool forced = proxy && std::strcmp(proxy, "0") != 0;
        std::printf("vkshmem-gpu-perf: %d PEs, PE 0 -> PE %d, %zu MiB, best of %d%s\n", npes, peer, mib, reps,
                    forced ? ", VKSHMEM_FORCE_PROXY=1" : "");
        std::printf("%-58s %12s %12s\n", "operation", "value", "of raw");
        std::fflush(stdout);

        // The round trip first: it does not depend on the bulk rows below.
        auto* rtt = kernel(proxy_rtt_comp_spv, sizeof proxy_rtt_comp_spv, 24);
        struct {
            std::uint64_t state, dst;
            std::uint32_t count;
            std::int32_t pe;
        } rp{vkshmemx_device_state(), vkshmemx_device_address(flag), 0, peer};
        const double t_empty = time_dispatch(rtt, 1, rp, reps);
        rp.count = rtt_count;
        const double t_rtt = (time_dispatch(rtt, 1, rp, reps) - t_empty) / rp.count;
        std::printf("%-58s %9.3f us\n",
                    forced ? "shader put + quiet through the proxy (round trip)"
                           : "shader put + quiet, direct (VKSHMEM_FORCE_PROXY=1: proxy)",
                    t_rtt * 1e6);
        vkshmemx_kernel_destroy(rtt);

        const CopyPush cp{vkshmemx_device_address(ddst), vkshmemx_device_address(dsrc),
                          static_cast<std::uint32_t>(bytes / 16), 0};
        auto* copy = kernel(copy_comp_spv, sizeof copy_comp_spv, 24);
        const double copy_gbps = bytes / time_dispatch(copy, 1024, cp, reps) / 1e9;
        vkshmemx_kernel_destroy(copy);
        row_gbps("compute-shader copy, device heap -> device heap (raw)", copy_gbps, 0);
        const double d2d_gbps = raw_copy_gbps(bytes, reps, false);
        row_gbps("vkCmdCopyBuffer device-local -> device-local (raw)", d2d_gbps, 0);
        const PutPush pp{vkshmemx_device_state(), vkshmemx_device_address(ddst), vkshmemx_device_address(dsrc), bytes,
                         peer, 0};
        auto* put = kernel(put_comp_spv, sizeof put_comp_spv, 40);
        const double put_gbps = bytes / time_dispatch(put, 1024, pp, reps) / 1e9;
        row_gbps("shader putmem_wg into the peer's device heap", put_gbps, copy_gbps);
        row_gbps("  the same, of vkCmdCopyBuffer device -> device", put_gbps, d2d_gbps);
        {
            // The HLSL library's putmem_wg (its descriptor set instead of device addresses).
            auto* hput = kernel(put_hlsl_hlsl_spv, sizeof put_hlsl_hlsl_spv, 40);
            PutPush hp = pp;
            hp.pad = 1024;
            const double hlsl_gbps = bytes / time_dispatch(hput, 1024, hp, reps) / 1e9;
            row_gbps("HLSL shader putmem_wg into the peer's device heap", hlsl_gbps, copy_gbps);
            if (diag) {
                hp.bytes = 0;
                for (std::uint32_t g : {1u, 132u, 1024u, 4096u}) {
                    hp.pad = g;
                    std::printf("  diag: %4u workgroups: HLSL setup, empty putmem_wg, quiet %9.1f us\n", g,
                                time_dispatch(hput, g, hp, reps) * 1e6);
                }
            }
            vkshmemx_kernel_destroy(hput);
        }
        // What a proxied put's first leg costs: the shader's stores into host memory (the ring's
        // payload slots are host memory), here into this PE's own host heap.
        const PutPush ph{vkshmemx_device_state(), vkshmemx_device_address(hsrc), vkshmemx_device_address(dsrc),
                         bytes, me, 0};
        row_gbps("shader putmem_wg into this PE's host heap (GPU -> host)", bytes / time_dispatch(put, 1024, ph, reps) / 1e9,
                 0);
        std::fflush(stdout);

        if (diag) {
            // Where a shader put loses time: plain 8-byte copies (the
            // library's unit), and one shmem_long_p per word (its per-call
            // route and translation without its copy loop).
            const CopyPush c8{cp.dst, cp.src, static_cast<std::uint32_t>(bytes / 8), 0};
            auto* k = kernel(copy64_comp_spv, sizeof copy64_comp_spv, 24);
            row_gbps("  diag: compute copy, 8-byte units", bytes / time_dispatch(k, 1024, c8, reps) / 1e9, copy_gbps);
            vkshmemx_kernel_destroy(k);
            k = kernel(put_long_p_comp_spv, sizeof put_long_p_comp_spv, 40);
            row_gbps("  diag: shmem_long_p per 8 bytes", bytes / time_dispatch(k, 1024, pp, reps) / 1e9, copy_gbps);
            vkshmemx_kernel_destroy(k);
            // HLSL's ways to copy within this PE's device heap (copy_hlsl.hlsl), of the raw copy.
            struct HlslCopyPush {
                std::uint64_t dst, src;
                std::uint32_t n16, mode, groups, pad;
            };
            k = kernel(copy_hlsl_hlsl_spv, sizeof copy_hlsl_hlsl_spv, sizeof(HlslCopyPush));
            for (std::uint32_t g : {1u, 132u, 1024u, 4096u}) {
                const HlslCopyPush none{cp.dst, cp.src, 0, 0, g, 0};
                std::printf("  diag: %4u workgroups: HLSL vkshmem_init, no mailbox code %9.1f us\n", g,
                            time_dispatch(k, g, none, reps) * 1e6);
            }
            for (std::uint32_t mode : {0u, 1u, 2u}) {
                const HlslCopyPush hp{cp.dst, cp.src, cp.n, mode, 1024, 0};
                static const char* what[] = {"  diag: HLSL copy, uint Load/Store (the library's unit)",
                                             "  diag: HLSL copy, Load4/Store4",
                                             "  diag: HLSL copy, uint4 structured buffers"};
                row_gbps(what[mode], bytes / time_dispatch(k, 1024, hp, reps) / 1e9, copy_gbps);
            }
            vkshmemx_kernel_destroy(k);
            // A dispatch of the library's setup alone, then with an empty putmem_wg and a quiet.
            k = kernel(put_setup_comp_spv, sizeof put_setup_comp_spv, 40);
            for (std::uint32_t g : {1024u, 4096u})
                for (std::uint32_t what : {0u, 1u}) {
                    PutPush e = pp;
                    e.pad = what;
                    std::printf("  diag: %u workgroups: %-33s %9.1f us\n", g,
                                what ? "setup, empty putmem_wg, quiet" : "vkshmem_init alone",
                                time_dispatch(k, g, e, reps) * 1e6);
                }
            vkshmemx_kernel_destroy(k);
            // The same copy as the raw row, into the peer's heap (imported memory where the peer
            // is another process): what the destination itself allows a put.
            if (peer != me && !forced) {
                k = kernel(copy_peer_comp_spv, sizeof copy_peer_comp_spv, 40);
                for (std::uint32_t what : {0u, 1u}) {
                    PutPush e = pp;
                    e.pad = what;
                    row_gbps(what ? "  diag: the same copy in a share per workgroup"
                                  : "  diag: compute copy into the peer's device heap",
                             bytes / time_dispatch(k, 1024, e, reps) / 1e9, copy_gbps);
                }
                vkshmemx_kernel_destroy(k);
            }
            // The rows above use 1024 workgroups: whether a cost per workgroup (the library's
            // setup, its quiet) or the number in flight is what a put loses.
            k = kernel(copy_comp_spv, sizeof copy_comp_spv, 24);
            for (std::uint32_t g : {128u, 256u, 512u, 2048u, 4096u}) {
                char what[64];
                std::snprintf(what, sizeof what, "  diag: %u workgroups: compute copy", g);
                const double c = bytes / time_dispatch(k, g, cp, reps) / 1e9;
                row_gbps(what, c, copy_gbps);
                std::snprintf(what, sizeof what, "  diag: %u workgroups: putmem_wg, of that copy", g);
                row_gbps(what, bytes / time_dispatch(put, g, pp, reps) / 1e9, c);
            }
            vkshmemx_kernel_destroy(k);
            std::fflush(stdout);
        }
        vkshmemx_kernel_destroy(put);

        const double raw_h2d = raw_copy_gbps(bytes, reps, true);
        auto hput = [&] {
            shmem_putmem(ddst, hsrc, bytes, peer);
            shmem_quiet();
        };
        const double t_hput = best_of(reps, hput);
        const int small = 2000;
        long v = 0;
        double t0 = now();
        for (int i = 0; i < small; ++i) {
            shmem_putmem(flag, &v, 8, peer);
            shmem_quiet();
        }
        const double t_small = (now() - t0) / small;
        // 8-byte put_nbi, 64 to a quiet: batched into one device copy submission where the
        // peer's device heap is reached by copies.
        const int window = 64, rounds = 200;
        t0 = now();
        for (int r = 0; r < rounds; ++r) {
            for (int i = 0; i < window; ++i) shmem_putmem_nbi(reinterpret_cast<char*>(ddst) + 8 * i, &v, 8, peer);
            shmem_quiet();
        }
        const double t_nbi = (now() - t0) / (rounds * window);
        row_gbps("vkCmdCopyBuffer host-visible -> device-local (raw)", raw_h2d, 0);
        if (diag) {
            row_gbps("  diag: the same from host-cached memory", raw_copy_gbps(bytes, reps, true, true), raw_h2d);
            row_gbps("  diag: the same in 32 KiB regions", raw_copy_gbps(bytes, reps, true, true, 32 << 10), raw_h2d);
            row_gbps("  diag: 1 MiB from host-cached memory", raw_copy_gbps(1 << 20, reps, true, true), raw_h2d);
            row_gbps("  diag: 1 MiB in 32 KiB regions", raw_copy_gbps(1 << 20, reps, true, true, 32 << 10), raw_h2d);
        }
        row_gbps("host putmem, host heap -> peer's device heap", bytes / t_hput / 1e9, raw_h2d);
        std::printf("%-58s %9.3f us\n", "8-byte host put + quiet into the peer's device heap", t_small * 1e6);
        std::printf("%-58s %9.3f us\n", "8-byte host put_nbi into it, 64 per quiet (per put)", t_nbi * 1e6);
    }
    shmem_barrier_all();
    shmem_free(flag);
    shmem_free(hsrc);
    shmem_free(ddst);
    shmem_free(dsrc);
    shmem_finalize();
    return 0;
}
