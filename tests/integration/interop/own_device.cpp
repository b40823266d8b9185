// SPDX-License-Identifier: BSL-1.0
// vkshmemx_use_vk_device: the application creates the Vulkan device, hands it
// to vkshmem before shmem_init, and destroys it after shmem_finalize.
//   oshrun -np N spmd_interop_own_device
// Checks that the runtime uses the application's handles, that host puts and
// gets reach both heaps, that a shader dispatched through the runtime on the
// application's device puts into the right neighbour's device heap, and that
// the device still works after shmem_finalize (the runtime did not destroy it).
#include <shmem.h>
#include <shmemx.h>
#include <vkshmem/vulkan.h>

#include "ring_put_comp_spv.h"

#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

int failures = 0;
#define EXPECT(cond, ...)                                                                                     \
    do {                                                                                                      \
        if (!(cond)) {                                                                                        \
            std::fprintf(stderr, "interop: PE %d: %s:%d: %s: ", shmem_my_pe(), __FILE__, __LINE__, #cond);   \
            std::fprintf(stderr, __VA_ARGS__);                                                                \
            std::fprintf(stderr, "\n");                                                                       \
            ++failures;                                                                                       \
        }                                                                                                     \
    } while (0)

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "interop: %s\n", what);
    std::exit(1);
}

struct Own {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    std::uint32_t family = 0;
};

// The application's device: the first Vulkan 1.2 device with a compute
// queue, with what vkshmem asks for.
Own make_device() {
    Own o;
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    if (vkCreateInstance(&ici, nullptr, &o.instance) != VK_SUCCESS) die("vkCreateInstance failed");
    std::uint32_t n = 0;
    vkEnumeratePhysicalDevices(o.instance, &n, nullptr);
    std::vector<VkPhysicalDevice> pds(n);
    vkEnumeratePhysicalDevices(o.instance, &n, pds.data());
    for (VkPhysicalDevice pd : pds) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(pd, &p);
        if (p.apiVersion < VK_API_VERSION_1_2) continue;
        std::uint32_t nq = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
        std::vector<VkQueueFamilyProperties> qf(nq);
        vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf.data());
        for (std::uint32_t f = 0; f < nq && !o.physical; ++f)
            if (qf[f].queueFlags & VK_QUEUE_COMPUTE_BIT) o.physical = pd, o.family = f;
        if (o.physical) break;
    }
    if (!o.physical) die("no Vulkan 1.2 device with a compute queue");
    std::uint32_t n_ext = 0;
    const char* const* ext = vkshmemx_required_device_extensions(&n_ext);
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.bufferDeviceAddress = VK_TRUE;
    f12.shaderBufferInt64Atomics = VK_TRUE;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f12;
    f2.features.shaderInt64 = VK_TRUE;
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = o.family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = n_ext;
    dci.ppEnabledExtensionNames = ext;
    if (vkCreateDevice(o.physical, &dci, nullptr, &o.device) != VK_SUCCESS) die("vkCreateDevice failed");
    vkGetDeviceQueue(o.device, o.family, 0, &o.queue);
    return o;
}

} // namespace

int main() {
    Own own = make_device();
    if (vkshmemx_use_vk_device(own.instance, own.physical, own.device, own.queue, own.family) != 0)
        die("vkshmemx_use_vk_device failed");
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes(), right = (me + 1) % npes, left = (me + npes - 1) % npes;
    std::uint32_t family = ~0u;
    EXPECT(vkshmemx_vk_device() == own.device, "the runtime uses another VkDevice");
    EXPECT(vkshmemx_vk_instance() == own.instance, "the runtime uses another VkInstance");
    EXPECT(vkshmemx_vk_physical_device() == own.physical, "the runtime uses another VkPhysicalDevice");
    EXPECT(vkshmemx_vk_queue(&family) == own.queue && family == own.family, "the runtime uses another queue");
    EXPECT(vkshmemx_use_vk_device(own.instance, own.physical, own.device, own.queue, own.family) != 0,
           "vkshmemx_use_vk_device after shmem_init must fail");

    // Fresh random data per PE and round, from one seed that PE 0 draws and sends to all, so each
    // PE can compute what its left neighbour sent.
    auto* seed = static_cast<std::uint64_t*>(shmem_malloc(sizeof(std::uint64_t)));
    if (!seed) die("allocation failed");
    if (me == 0) {
        const std::uint64_t s = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
        for (int pe = 0; pe < npes; ++pe) shmem_uint64_p(seed, s, pe);
    }
    shmem_barrier_all();
    const std::size_t n = 3 * 4096 + 5;
    auto data = [&](int pe, int round) {
        std::mt19937_64 rng(*seed ^ (static_cast<std::uint64_t>(pe) << 40) ^ static_cast<std::uint64_t>(round));
        std::vector<unsigned char> v(n);
        for (auto& b : v) b = static_cast<unsigned char>(rng());
        return v;
    };
    auto* host = static_cast<unsigned char*>(shmem_malloc(n));
    auto* dev = static_cast<unsigned char*>(shmemx_device_malloc(n));
    auto* dsrc = static_cast<unsigned char*>(shmemx_device_malloc(n));
    if (!host || !dev || !dsrc) die("allocation failed");
    const std::vector<unsigned char> poison(n, 0xee);
    std::vector<unsigned char> got(n);

    // Host puts into both heaps of the right neighbour.
    std::memcpy(host, poison.data(), n);
    shmem_putmem(dev, poison.data(), n, me);
    shmem_barrier_all();
    const std::vector<unsigned char> mine = data(me, 0), from_left = data(left, 0);
    shmem_putmem(host, mine.data(), n, right);
    shmem_putmem(dev, mine.data(), n, right);
    shmem_barrier_all();
    EXPECT(std::memcmp(host, from_left.data(), n) == 0, "host heap: the left neighbour's put is not intact");
    shmem_getmem(got.data(), dev, n, me);
    EXPECT(std::memcmp(got.data(), from_left.data(), n) == 0, "device heap: the left neighbour's put is not intact");

    // A shader on the application's device puts dsrc into the right neighbour's dev.
    const std::vector<unsigned char> mine1 = data(me, 1), from_left1 = data(left, 1);
    shmem_putmem(dsrc, mine1.data(), n, me);
    shmem_putmem(dev, poison.data(), n, me);
    shmem_barrier_all();
    vkshmemx_kernel* k = vkshmemx_kernel_create(ring_put_comp_spv, sizeof ring_put_comp_spv, 40);
    if (!k) die("vkshmemx_kernel_create failed");
    struct {
        std::uint64_t state, dst, src, bytes;
        std::int32_t pe;
        std::uint32_t pad;
    } push{vkshmemx_device_state(), vkshmemx_device_address(dev), vkshmemx_device_address(dsrc), n, right, 0};
    EXPECT(vkshmemx_dispatch(k, 1, 1, 1, &push, sizeof push) == 0, "the dispatch failed");
    vkshmemx_kernel_destroy(k);
    shmem_barrier_all();
    shmem_getmem(got.data(), dev, n, me);
    EXPECT(std::memcmp(got.data(), from_left1.data(), n) == 0, "the left neighbour's shader put is not intact");

    shmem_free(dsrc);
    shmem_free(dev);
    shmem_free(host);
    shmem_free(seed);
    shmem_finalize();

    // The device is still the application's and still works.
    EXPECT(vkDeviceWaitIdle(own.device) == VK_SUCCESS, "the device no longer works after shmem_finalize");
    vkDestroyDevice(own.device, nullptr);
    vkDestroyInstance(own.instance, nullptr);
    if (failures) std::fprintf(stderr, "interop: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
