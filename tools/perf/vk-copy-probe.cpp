// SPDX-License-Identifier: BSL-1.0
// vk-copy-probe: what a copy engine pays per region of vkCmdCopyBuffer.
//
// Why: the proxy carries a shader's bulk puts as copies from its ring (host memory) into the target
// heap, one region per run of consecutive pieces. Where the workgroups' shares are small, the runs
// are short (16 KiB at 16 MiB over 1024 workgroups), and the proxied rate is a fraction of a plain
// host -> device copy. This program times one command buffer of T bytes in regions of S bytes on
// the device's transfer queue, with raw Vulkan only (no libvkshmem):
//   h2d        host-visible source -> device-local destination, sources contiguous (as the ring's
//              slots), destinations in a shuffled order (as the workgroups' shares land)
//   d2d        the same between two device-local buffers
//   staged     one h2d copy of all T bytes into a device-local buffer, a barrier, then the d2d
//              regions from there (the ring mirrored on the device first)
//   h2d xQ     the h2d regions split over Q command buffers on Q queues of the family
// Each row is the best of PROBE_REPS submissions (default 5), each waited for by polling its fence.
// Every row's destination is read back and checked against what its regions put there (PASS/FAIL).
//
//   vk-copy-probe             PROBE_DEVICE=<index> (default 0), PROBE_MIB=<T in MiB> (default 16)
// Exit status 0 when every check passed.
#include <vulkan/vulkan.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void check(const char* call, VkResult r) {
    if (r == VK_SUCCESS) return;
    std::fprintf(stderr, "vk-copy-probe: %s failed: VkResult %d\n", call, static_cast<int>(r));
    std::exit(1);
}

std::uint64_t env_u64(const char* name, std::uint64_t def, std::uint64_t lo = 1) {
    const char* v = std::getenv(name);
    if (!v || !*v) return def;
    char* end = nullptr;
    const unsigned long long x = std::strtoull(v, &end, 10);
    if (*end || x < lo || x > (1u << 20)) {
        std::fprintf(stderr, "vk-copy-probe: %s=%s is not an integer from %llu to 2^20\n", name, v,
                     static_cast<unsigned long long>(lo));
        std::exit(2);
    }
    return x;
}

struct Buffer {
    VkBuffer buf = VK_NULL_HANDLE;
    VkDeviceMemory mem = VK_NULL_HANDLE;
    void* map = nullptr;
};

class Probe {
public:
    void setup();
    int run();

private:
    VkInstance inst_ = VK_NULL_HANDLE;
    VkPhysicalDevice pd_ = VK_NULL_HANDLE;
    VkDevice dev_ = VK_NULL_HANDLE;
    VkPhysicalDeviceMemoryProperties mp_{};
    std::uint32_t family_ = 0, queues_ = 1;
    std::vector<VkQueue> q_;
    std::vector<VkCommandPool> pool_;
    std::vector<VkCommandBuffer> cb_;
    std::vector<VkFence> fence_;
    VkDeviceSize total_ = 0;
    std::uint32_t reps_ = 5;
    Buffer host_, readback_, dst_, src_dev_;

    Buffer make(VkDeviceSize size, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid, bool map);
    void begin(VkCommandBuffer cb) const;
    // Submits cb_[0..n) on queues 0..n and polls their fences; returns microseconds.
    double submit_wait(std::uint32_t n) const;
    bool verify(const std::vector<VkBufferCopy>& regions);
};

Buffer Probe::make(VkDeviceSize size, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid, bool map) {
    Buffer b;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    check("vkCreateBuffer", vkCreateBuffer(dev_, &bi, nullptr, &b.buf));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev_, b.buf, &req);
    std::uint32_t type = UINT32_MAX;
    for (int pass = 0; pass < 2 && type == UINT32_MAX; ++pass)
        for (std::uint32_t i = 0; i < mp_.memoryTypeCount; ++i) {
            const VkMemoryPropertyFlags f = mp_.memoryTypes[i].propertyFlags;
            if ((req.memoryTypeBits >> i & 1) && (f & want) == want && (pass == 1 || !(f & avoid))) {
                type = i;
                break;
            }
        }
    if (type == UINT32_MAX) {
        std::fprintf(stderr, "vk-copy-probe: no memory type with flags %#x\n", want);
        std::exit(1);
    }
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    check("vkAllocateMemory", vkAllocateMemory(dev_, &ai, nullptr, &b.mem));
    check("vkBindBufferMemory", vkBindBufferMemory(dev_, b.buf, b.mem, 0));
    if (map) check("vkMapMemory", vkMapMemory(dev_, b.mem, 0, VK_WHOLE_SIZE, 0, &b.map));
    return b;
}

void Probe::setup() {
    total_ = env_u64("PROBE_MIB", 16) << 20;
    reps_ = static_cast<std::uint32_t>(env_u64("PROBE_REPS", 5));
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ii{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ii.pApplicationInfo = &app;
    check("vkCreateInstance", vkCreateInstance(&ii, nullptr, &inst_));
    std::uint32_t n = 0;
    vkEnumeratePhysicalDevices(inst_, &n, nullptr);
    std::vector<VkPhysicalDevice> pds(n);
    vkEnumeratePhysicalDevices(inst_, &n, pds.data());
    const std::uint64_t index = env_u64("PROBE_DEVICE", 0, 0);
    if (index >= n) {
        std::fprintf(stderr, "vk-copy-probe: no device %llu (%u found)\n", static_cast<unsigned long long>(index), n);
        std::exit(1);
    }
    pd_ = pds[index];
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd_, &props);
    vkGetPhysicalDeviceMemoryProperties(pd_, &mp_);
    std::uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd_, &nf, nullptr);
    std::vector<VkQueueFamilyProperties> fams(nf);
    vkGetPhysicalDeviceQueueFamilyProperties(pd_, &nf, fams.data());
    // A transfer-only family (a copy engine) where there is one, as the library's copies use.
    family_ = UINT32_MAX;
    for (std::uint32_t f = 0; f < nf; ++f)
        if ((fams[f].queueFlags & VK_QUEUE_TRANSFER_BIT) &&
            !(fams[f].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT))) {
            family_ = f;
            break;
        }
    if (family_ == UINT32_MAX)
        for (std::uint32_t f = 0; f < nf && family_ == UINT32_MAX; ++f)
            if (fams[f].queueFlags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_COMPUTE_BIT)) family_ = f;
    queues_ = std::min<std::uint32_t>(fams[family_].queueCount, 4);
    std::printf("device: %s; family %u (flags %#x), %u queues of %u used; T = %llu MiB\n", props.deviceName, family_,
                fams[family_].queueFlags, queues_, fams[family_].queueCount,
                static_cast<unsigned long long>(total_ >> 20));
    std::vector<float> prio(queues_, 1.0f);
    VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = family_;
    qi.queueCount = queues_;
    qi.pQueuePriorities = prio.data();
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    check("vkCreateDevice", vkCreateDevice(pd_, &di, nullptr, &dev_));
    q_.resize(queues_);
    pool_.resize(queues_);
    cb_.resize(queues_);
    fence_.resize(queues_);
    for (std::uint32_t i = 0; i < queues_; ++i) {
        vkGetDeviceQueue(dev_, family_, i, &q_[i]);
        VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pi.queueFamilyIndex = family_;
        check("vkCreateCommandPool", vkCreateCommandPool(dev_, &pi, nullptr, &pool_[i]));
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = pool_[i];
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        check("vkAllocateCommandBuffers", vkAllocateCommandBuffers(dev_, &ai, &cb_[i]));
        VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        check("vkCreateFence", vkCreateFence(dev_, &fi, nullptr, &fence_[i]));
    }
    const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    host_ = make(total_, hv, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, true);
    readback_ = make(total_, hv | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, true);
    dst_ = make(total_, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, false);
    src_dev_ = make(total_, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, false);
    std::mt19937_64 rng(std::random_device{}());
    auto* w = static_cast<std::uint64_t*>(host_.map);
    for (VkDeviceSize i = 0; i < total_ / 8; ++i) w[i] = rng();
}

void Probe::begin(VkCommandBuffer cb) const {
    vkResetCommandBuffer(cb, 0);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check("vkBeginCommandBuffer", vkBeginCommandBuffer(cb, &bi));
}

double Probe::submit_wait(std::uint32_t n) const {
    const auto t0 = Clock::now();
    for (std::uint32_t i = 0; i < n; ++i) {
        VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb_[i];
        check("vkQueueSubmit", vkQueueSubmit(q_[i], 1, &si, fence_[i]));
    }
    for (std::uint32_t i = 0; i < n; ++i) {
        VkResult r;
        while ((r = vkGetFenceStatus(dev_, fence_[i])) == VK_NOT_READY) {
        }
        check("vkGetFenceStatus", r);
    }
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    check("vkResetFences", vkResetFences(dev_, n, fence_.data()));
    return us;
}

// Copies dst_ back and checks every region's bytes against the host source.
bool Probe::verify(const std::vector<VkBufferCopy>& regions) {
    begin(cb_[0]);
    const VkBufferCopy all{0, 0, total_};
    vkCmdCopyBuffer(cb_[0], dst_.buf, readback_.buf, 1, &all);
    vkEndCommandBuffer(cb_[0]);
    submit_wait(1);
    for (const VkBufferCopy& r : regions)
        if (std::memcmp(static_cast<char*>(readback_.map) + r.dstOffset, static_cast<char*>(host_.map) + r.srcOffset,
                        r.size) != 0)
            return false;
    return true;
}

int Probe::run() {
    int failed = 0;
    std::printf("%-8s %9s %8s %11s %9s %11s %s\n", "copy", "region", "regions", "best_us", "GB/s", "us/region",
                "check");
    std::mt19937 rng(12345);
    for (VkDeviceSize s : {VkDeviceSize(4096), VkDeviceSize(8192), VkDeviceSize(16384), VkDeviceSize(65536),
                           VkDeviceSize(262144), VkDeviceSize(1) << 20, total_}) {
        if (s > total_) continue;
        const std::uint32_t n = static_cast<std::uint32_t>(total_ / s);
        std::vector<std::uint32_t> perm(n);
        std::iota(perm.begin(), perm.end(), 0u);
        std::shuffle(perm.begin(), perm.end(), rng);
        std::vector<VkBufferCopy> regions(n);
        for (std::uint32_t i = 0; i < n; ++i) regions[i] = VkBufferCopy{i * s, perm[i] * s, s};
        enum Kind { H2D, D2D, Staged, H2DQ };
        for (Kind k : {H2D, D2D, Staged, H2DQ}) {
            if (k == H2DQ && queues_ < 2) continue;
            const std::uint32_t nq = k == H2DQ ? queues_ : 1;
            if (k == D2D) { // the device-local source holds the host source's bytes
                begin(cb_[0]);
                const VkBufferCopy all{0, 0, total_};
                vkCmdCopyBuffer(cb_[0], host_.buf, src_dev_.buf, 1, &all);
                vkEndCommandBuffer(cb_[0]);
                submit_wait(1);
            }
            double best = 1e30;
            for (std::uint32_t rep = 0; rep < reps_; ++rep) {
                for (std::uint32_t qi = 0; qi < nq; ++qi) {
                    VkCommandBuffer cb = cb_[qi];
                    begin(cb);
                    const std::uint32_t lo = n * qi / nq, hi = n * (qi + 1) / nq;
                    if (k == Staged) {
                        const VkBufferCopy all{0, 0, total_};
                        vkCmdCopyBuffer(cb, host_.buf, src_dev_.buf, 1, &all);
                        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
                        mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
                        mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
                        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                                             &mb, 0, nullptr, 0, nullptr);
                    }
                    const VkBuffer src = k == D2D || k == Staged ? src_dev_.buf : host_.buf;
                    vkCmdCopyBuffer(cb, src, dst_.buf, hi - lo, regions.data() + lo);
                    vkEndCommandBuffer(cb);
                }
                best = std::min(best, submit_wait(nq));
            }
            const bool ok = verify(regions);
            failed += !ok;
            char name[16];
            std::snprintf(name, sizeof name, k == H2D ? "h2d" : k == D2D ? "d2d" : k == Staged ? "staged" : "h2d x%u",
                          nq);
            std::printf("%-8s %9llu %8u %11.1f %9.2f %11.3f %s\n", name, static_cast<unsigned long long>(s), n, best,
                        static_cast<double>(total_) / best / 1e3, best / n, ok ? "PASS" : "FAIL");
            std::fflush(stdout);
        }
    }
    return failed ? 1 : 0;
}

} // namespace

int main() {
    Probe p;
    p.setup();
    return p.run();
}
