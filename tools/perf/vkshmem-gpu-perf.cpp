// vkshmem-gpu-perf: the device-heap and shader figures, each next to the raw
// Vulkan operation it should approach, measured in the same run.
//
//   oshrun -np 2 vkshmem-gpu-perf [--mib N]          (PE 0 measures, PE 1 is the target)
//   VKSHMEM_FORCE_PROXY=1 ...  makes the last row the shader -> proxy -> peer round trip
//
// Rows: compute-shader device-to-device copy (raw) vs shader put into the
// peer's device heap; vkCmdCopyBuffer host->device (raw) vs host put from
// the host heap into the peer's device heap; 8-byte host put into the
// peer's device heap; shader -> proxy -> peer put round trip.
#include <shmem.h>
#include <shmemx.h>
#include <vkshmem/vulkan.h>

#include "copy_comp_spv.h"
#include "proxy_rtt_comp_spv.h"
#include "put_comp_spv.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void die(const char* what) {
    std::fprintf(stderr, "vkshmem-gpu-perf: %s\n", what);
    shmem_global_exit(1);
}

// Raw vkCmdCopyBuffer from host-visible memory into device-local memory on
// the runtime's device: the ceiling for a host put into a device heap.
double raw_host_to_device_gbps(std::size_t bytes, int reps) {
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
    make(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, hb, hm);
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
    VkBufferCopy region{0, 0, bytes};
    vkCmdCopyBuffer(cmd, hb, db, 1, &region);
    vkEndCommandBuffer(cmd);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    vkCreateFence(dev, &fci, nullptr, &fence);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    double best = 1e30;
    for (int r = 0; r < reps + 1; ++r) {
        double t0 = now();
        vkQueueSubmit(q, 1, &si, fence);
        vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX);
        vkResetFences(dev, 1, &fence);
        if (r) best = std::min(best, now() - t0); // the first one warms up
    }
    vkDestroyFence(dev, fence, nullptr);
    vkDestroyCommandPool(dev, pool, nullptr);
    vkDestroyBuffer(dev, hb, nullptr);
    vkDestroyBuffer(dev, db, nullptr);
    vkFreeMemory(dev, hm, nullptr);
    vkFreeMemory(dev, dm, nullptr);
    return double(bytes) / best / 1e9;
}

template <class Push> double time_dispatch(vkshmemx_kernel* k, std::uint32_t groups, const Push& push, int reps) {
    double best = 1e30;
    for (int r = 0; r < reps + 1; ++r) {
        double t0 = now();
        if (vkshmemx_dispatch(k, groups, 1, 1, &push, sizeof push) != 0) die("dispatch failed");
        if (r) best = std::min(best, now() - t0);
    }
    return best;
}

} // namespace

int main(int argc, char** argv) {
    std::size_t mib = 64;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--mib") mib = std::strtoul(argv[++i], nullptr, 10);
    const std::size_t bytes = mib << 20;
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes(), peer = npes > 1 ? 1 : 0;
    if (!vkshmemx_device_state()) die("needs a Vulkan device");
    auto* dsrc = static_cast<char*>(shmem_malloc_with_hints(bytes, SHMEMX_MALLOC_DEVICE));
    auto* ddst = static_cast<char*>(shmem_malloc_with_hints(bytes, SHMEMX_MALLOC_DEVICE));
    auto* hsrc = static_cast<char*>(shmem_malloc(bytes));
    auto* flag = static_cast<int*>(shmem_malloc_with_hints(64, SHMEMX_MALLOC_DEVICE));
    if (!dsrc || !ddst || !hsrc || !flag) die("allocation failed: raise VKSHMEM_DEVICE_HEAP_SIZE / SHMEM_SYMMETRIC_SIZE");
    std::memset(hsrc, 0x5a, bytes);
    shmem_barrier_all();
    if (me == 0) {
        const int reps = 5;
        auto* copy = vkshmemx_kernel_create(copy_comp_spv, sizeof copy_comp_spv, 24);
        auto* put = vkshmemx_kernel_create(put_comp_spv, sizeof put_comp_spv, 40);
        auto* rtt = vkshmemx_kernel_create(proxy_rtt_comp_spv, sizeof proxy_rtt_comp_spv, 24);
        if (!copy || !put || !rtt) die("kernel creation failed");
        struct {
            std::uint64_t dst, src;
            std::uint32_t n16, pad;
        } cp{vkshmemx_device_address(ddst), vkshmemx_device_address(dsrc), static_cast<std::uint32_t>(bytes / 16), 0};
        const double t_copy = time_dispatch(copy, 1024, cp, reps);
        struct {
            std::uint64_t state, dst, src, bytes;
            std::int32_t pe;
            std::uint32_t pad;
        } pp{vkshmemx_device_state(), vkshmemx_device_address(ddst), vkshmemx_device_address(dsrc), bytes, peer, 0};
        const double t_put = time_dispatch(put, 1024, pp, reps);

        const double raw_h2d = raw_host_to_device_gbps(bytes, reps);
        double t_hput = 1e30;
        for (int r = 0; r < reps + 1; ++r) {
            double t0 = now();
            shmem_putmem(ddst, hsrc, bytes, peer);
            shmem_quiet();
            if (r) t_hput = std::min(t_hput, now() - t0);
        }
        const int small = 2000;
        long v = 0;
        double t0 = now();
        for (int i = 0; i < small; ++i) {
            shmem_putmem(flag, &v, 8, peer);
            shmem_quiet();
        }
        const double t_small = (now() - t0) / small;

        struct {
            std::uint64_t state, dst;
            std::uint32_t count;
            std::int32_t pe;
        } rp{vkshmemx_device_state(), vkshmemx_device_address(flag), 0, peer};
        const double t_empty = time_dispatch(rtt, 1, rp, reps);
        rp.count = 100;
        const double t_rtt = (time_dispatch(rtt, 1, rp, reps) - t_empty) / rp.count;

        std::printf("vkshmem-gpu-perf: %d PEs, PE 0 -> PE %d, %zu MiB, best of %d\n", npes, peer, mib, reps);
        std::printf("%-58s %12s %12s\n", "operation", "value", "of raw");
        std::printf("%-58s %9.1f GB/s %11s\n", "compute-shader copy, device heap -> device heap (raw)",
                    bytes / t_copy / 1e9, "");
        std::printf("%-58s %9.1f GB/s %10.0f %%\n", "shader putmem_wg into the peer's device heap",
                    bytes / t_put / 1e9, 100.0 * t_copy / t_put);
        std::printf("%-58s %9.1f GB/s %11s\n", "vkCmdCopyBuffer host-visible -> device-local (raw)", raw_h2d, "");
        std::printf("%-58s %9.1f GB/s %10.0f %%\n", "host putmem, host heap -> peer's device heap",
                    bytes / t_hput / 1e9, 100.0 * (bytes / t_hput / 1e9) / raw_h2d);
        std::printf("%-58s %9.3f us\n", "8-byte host put + quiet into the peer's device heap", t_small * 1e6);
        const char* proxy = std::getenv("VKSHMEM_FORCE_PROXY");
        const bool forced = proxy && std::strcmp(proxy, "0") != 0;
        std::printf("%-58s %9.3f us\n",
                    forced ? "shader put + quiet through the proxy (round trip)"
                           : "shader put + quiet, direct (VKSHMEM_FORCE_PROXY=1: proxy)",
                    t_rtt * 1e6);
        vkshmemx_kernel_destroy(copy);
        vkshmemx_kernel_destroy(put);
        vkshmemx_kernel_destroy(rtt);
    }
    shmem_barrier_all();
    shmem_free(flag);
    shmem_free(hsrc);
    shmem_free(ddst);
    shmem_free(dsrc);
    shmem_finalize();
    return 0;
}
